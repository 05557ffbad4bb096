//! A track log as GPX (through the `gpx` crate): the first track's points, every segment in
//! order, each with its time (required) and elevation (absent: 0 m), errors at the point
//! (counted from 1 across the segments).

use super::log::{Builder, Position, TrackLog, Unit};
use crate::config::files::{FileError, Place};
use crate::config::GeoOrigin;

/// The log in the GPX `bytes` of `file` (named in errors), positions in the frame of `origin`;
/// a gap between points longer than `max_gap_s` is refused.
pub fn parse(
    bytes: &[u8],
    file: &str,
    origin: &GeoOrigin,
    max_gap_s: f64,
) -> Result<TrackLog, FileError> {
    let doc = ::gpx::read(bytes).map_err(|e| {
        FileError::new(
            file,
            Place::Whole,
            format!("not a GPX file that can be read: {e}"),
        )
    })?;
    let Some(track) = doc.tracks.first() else {
        return Err(FileError::new(
            file,
            Place::Whole,
            format!(
                "no track (<trk>) in it ({} waypoints, {} routes)",
                doc.waypoints.len(),
                doc.routes.len()
            ),
        ));
    };
    let mut b = Builder::new(file, Unit::Point, origin, max_gap_s);
    let points = track.segments.iter().flat_map(|s| &s.points);
    for (i, p) in points.enumerate() {
        let n = i as u64 + 1;
        let Some(time) = p.time else {
            return Err(b.error(n, "has no <time>: a track's points need their times"));
        };
        let t = time::OffsetDateTime::from(time).unix_timestamp_nanos() as f64 / 1e9;
        let at = p.point();
        let position = Position::Geo {
            lat: at.y(),
            lon: at.x(),
            up: p.elevation.unwrap_or(0.0),
        };
        b.push(n, t, position, None)?;
    }
    b.finish()
}
