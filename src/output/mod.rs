//! What a run leaves in its output folder, and the report made from it:
//! - [`schema`]: the messages of the run record (`record.mcap`), one type per topic;
//! - [`timeline`]: the per-window JSONL of every pair's ChannelData (on request);
//! - [`report`]: the report (series, plots, `report.html`, terminal tables), generated from the
//!   record alone.

pub mod record;
pub mod report;
pub mod schema;
pub mod timeline;

pub use timeline::{PairSummary, Timeline};
