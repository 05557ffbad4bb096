//! What a run leaves in its output folder, the report made from it, and a scenario exported for
//! other tools:
//! - [`schema`]: the messages of the run record (`record.mcap`), one type per topic;
//! - [`record`]: the record file, written and read back;
//! - [`record_policy`]: what the coordinator's windows become in the record, and when (the
//!   [`Recorder`]);
//! - [`record_queue`]: the recorder on a writer thread of its own, behind a bounded queue of
//!   windows, off the lockstep path;
//! - [`scene`]: the record's 3D scene topics for Foxglove-compatible viewers, in the
//!   [`foxglove`] well-known schemas;
//! - [`timeline`]: the per-window JSONL of every pair's ChannelData (on request);
//! - [`summary`]: the run summary (`summary.json`, the record's `/summary`), typed, with its
//!   JSON Schema;
//! - [`report`]: the report (series, plots, `report.html`, terminal tables), generated from the
//!   record alone;
//! - [`emulation`]: what the emulator itself added to a live run's packets, per copy, per
//!   window and over the run, with the spans over its bound;
//! - [`soak`]: the judging of an endurance run (`cosim soak`) from its samples and summary;
//! - [`export`]: the scenario as a Gazebo world (`cosim export-gazebo`);
//! - [`campaign`]: a sweep's runs side by side: their metrics as tables, per point the mean
//!   and 95 % interval over seeds, and the campaign's report (`cosim sweep`).

pub mod campaign;
pub mod emulation;
pub mod export;
pub mod foxglove;
pub mod record;
pub mod record_policy;
pub mod record_queue;
pub mod report;
pub mod scene;
pub mod schema;
pub mod soak;
pub mod summary;
pub mod timeline;

pub use record_policy::{PairSummary, Recorder, RecorderOptions};
pub use summary::RunReport;
pub use timeline::Timeline;
