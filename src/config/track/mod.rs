//! A logged track (`motion: {kind: track}`): its settings, and the log read into samples in
//! the scenario's local frame ([`TrackLog`]) from a CSV file ([`csv`]), a GPX file ([`gpx`]) or
//! a topic of an MCAP file, as ROS 2 records bags ([`mcap`]). Each reader hands its samples to
//! one [`log::Builder`], which holds the rules they share: a sample's time is seconds after the
//! log's first and increases without a gap over the bound; its position is converted from
//! latitude and longitude through `world.origin` ([`super::geo`]) or taken as ENU metres.
//! Every problem names the file, and the line, point or message where it has one.

pub mod csv;
pub mod gpx;
pub mod log;
pub mod mcap;

pub use log::{pose_at, Position, TrackLog, TrackPoint, TrackSample, Unit, MAX_TRACK_SAMPLES};

use super::files::{FileError, Place};
use super::GeoOrigin;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// Largest track file read, bytes.
pub const MAX_TRACK_BYTES: u64 = 256 << 20;

/// Replays a vehicle's logged trajectory (`kind: track`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Track {
    /// The log, relative to the scenario file, by its extension: `.csv` (a header naming a
    /// time column `t`, `time`, `time_s` or `timestamp` in seconds, the position as `x` and `y`
    /// in ENU metres or `lat` and `lon` in degrees, the height as `z` up or `depth` down in
    /// metres, and optionally `heading_deg`), `.gpx` (the first track's points, with their
    /// times) or `.mcap` (the messages of `topic`: `geometry_msgs/msg/PoseStamped`,
    /// `nav_msgs/msg/Odometry` or `sensor_msgs/msg/NavSatFix`, CDR-encoded as ROS 2 records
    /// them). Required.
    pub file: String,
    /// The topic of an MCAP log whose messages are the track (required for `.mcap`, refused
    /// for the others).
    #[serde(default)]
    pub topic: Option<String>,
    /// Seconds into the log, after its first sample, at which the run starts (≥ 0, before its
    /// last sample). Default 0.
    #[serde(default)]
    pub offset_s: f64,
    /// What the vehicle does after the log's last sample. Default `hold`.
    #[serde(default)]
    pub at_end: TrackEnd,
    /// Longest time between two samples that is interpolated across, s (> 0): a longer gap
    /// in the log is refused. Default 10.
    #[serde(default = "default_max_gap")]
    pub max_gap_s: f64,
    /// The log as read (set when the scenario is loaded).
    #[serde(skip)]
    #[schemars(skip)]
    pub log: Option<Arc<TrackLog>>,
}

fn default_max_gap() -> f64 {
    10.0
}

/// What a track does after its log's last sample.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrackEnd {
    /// Stays at the last sample's pose.
    #[default]
    Hold,
    /// Starts again from `offset_s`.
    Loop,
    /// The run ends with the log: `duration_s` is cut to the log's end (whole windows).
    EndRun,
}

/// Reads the log of `track` at `path` (its format by its extension), positions in the frame
/// of `origin`.
pub fn read(path: &Path, track: &Track, origin: &GeoOrigin) -> Result<TrackLog, FileError> {
    let file = path.display().to_string();
    let whole = |message: String| FileError::new(&file, Place::Whole, message);
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let ext = ext.as_deref().unwrap_or("");
    match (ext, &track.topic) {
        ("csv" | "gpx", Some(_)) => {
            return Err(whole(
                "`topic` is for an MCAP log; a CSV or GPX file is one track".into(),
            ))
        }
        ("mcap", None) => {
            return Err(whole(
                "an MCAP log needs `topic`, the topic whose messages are the track".into(),
            ))
        }
        ("csv" | "gpx" | "mcap", _) => {}
        _ => {
            return Err(whole(format!(
                "a track is a .csv, .gpx or .mcap file (got {:?})",
                path.file_name().unwrap_or_default()
            )))
        }
    }
    let bytes = super::files::read_bounded(path, MAX_TRACK_BYTES).map_err(whole)?;
    match (ext, &track.topic) {
        ("gpx", _) => gpx::parse(&bytes, &file, origin, track.max_gap_s),
        ("mcap", Some(topic)) => mcap::parse(&bytes, &file, topic, origin, track.max_gap_s),
        _ => csv::parse(&bytes, &file, origin, track.max_gap_s),
    }
}
