//! What a run leaves in its output folder, and the report made from it:
//! - [`schema`]: the messages of the run record (`record.mcap`), one type per topic;
//! - [`record`]: the record file, written and read back;
//! - [`recorder`]: what the coordinator's windows become in the record, and when;
//! - [`scene`]: the record's 3D scene topics for Foxglove-compatible viewers, in the
//!   [`foxglove`] well-known schemas;
//! - [`timeline`]: the per-window JSONL of every pair's ChannelData (on request);
//! - [`summary`]: the run summary (`summary.json`, the record's `/summary`), typed, with its
//!   JSON Schema;
//! - [`report`]: the report (series, plots, `report.html`, terminal tables), generated from the
//!   record alone;
//! - [`soak`]: the judging of an endurance run (`cosim soak`) from its samples and summary;
//! - [`gazebo`]: the scenario as a Gazebo world (`cosim export-gazebo`);
//! - [`stages`]: where a run's wall time went, per stage (`summary.json`'s `stages`).

pub mod foxglove;
pub mod gazebo;
pub mod record;
pub mod recorder;
pub mod report;
pub mod scene;
pub mod schema;
pub mod soak;
pub mod stages;
pub mod summary;
pub mod timeline;

pub use recorder::{PairSummary, Recorder, RecorderOptions};
pub use summary::RunReport;
pub use timeline::Timeline;
