//! A track's log as read: its samples in the scenario's frame ([`TrackLog`]), interpolated in
//! time ([`TrackLog::at`]), and the [`Builder`] every format's reader hands its samples to,
//! which holds the rules they share. Errors name the file and the line, point or message.

use crate::config::files::{FileError, Place};
use crate::config::geo::LocalFrame;
use crate::config::GeoOrigin;
use crate::wire::ros_pose::compass_deg;

/// Most samples in a track.
pub const MAX_TRACK_SAMPLES: usize = 2_000_000;

/// One sample of a track, in the scenario's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackSample {
    /// Seconds after the log's first sample.
    pub t: f64,
    /// ENU metres.
    pub position: [f64; 3],
    /// Compass heading, degrees: the log's, or the direction of travel to the next sample
    /// (from the last one that moved, where it holds still).
    pub heading_deg: f64,
}

/// A track's log as read.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackLog {
    /// The file it was read from.
    pub file: String,
    pub samples: Vec<TrackSample>,
    /// Per sample: where it is in the file (a line, a point, a message: [`Self::unit`]).
    pub places: Vec<u64>,
    pub unit: Unit,
    /// `lat_lon` or `x_y`: how the file gave positions.
    pub positions: &'static str,
    /// Whether the file gave headings (else they are the direction of travel).
    pub headings: bool,
}

/// Where a track is at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackPoint {
    /// ENU metres.
    pub position: [f64; 3],
    /// Compass heading, degrees in [0, 360).
    pub heading_deg: f64,
    /// Horizontal speed over ground, m/s.
    pub speed_mps: f64,
}

/// What a track log's places count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A CSV file's lines.
    Line,
    /// A GPX file's track points (from 1).
    Point,
    /// An MCAP file's messages on the topic (from 1).
    Message,
}

impl TrackLog {
    /// Where sample `i` is in the file, as an error names it: `b.csv:12`, `b.gpx: point 12`.
    pub fn place(&self, i: usize) -> String {
        let n = self.places.get(i).copied().unwrap_or(0);
        place(self.unit, n).located(&self.file)
    }

    /// Seconds from its first sample to its last.
    pub fn duration_s(&self) -> f64 {
        self.samples.last().map_or(0.0, |s| s.t)
    }

    /// Where the track is `t` seconds after its first sample (clamped to the log), linearly
    /// interpolated (the heading the short way round). `hint` is the segment last used, for a
    /// caller that moves forward in time.
    pub fn at(&self, t: f64, hint: &mut usize) -> TrackPoint {
        let n = self.samples.len();
        let Some(last) = self.samples.last() else {
            return TrackPoint {
                position: [0.0; 3],
                heading_deg: 0.0,
                speed_mps: 0.0,
            };
        };
        let t = t.clamp(0.0, last.t);
        let mut i = (*hint).min(n.saturating_sub(2));
        if !(self.samples[i].t <= t && t <= self.samples[(i + 1).min(n - 1)].t) {
            i = self
                .samples
                .partition_point(|s| s.t <= t)
                .clamp(1, n.max(2) - 1)
                - 1;
        }
        *hint = i;
        let (a, b) = (&self.samples[i], &self.samples[(i + 1).min(n - 1)]);
        let span = b.t - a.t;
        let f = if span > 0.0 { (t - a.t) / span } else { 0.0 };
        let lerp = |k: usize| a.position[k] + f * (b.position[k] - a.position[k]);
        let turn = (b.heading_deg - a.heading_deg + 540.0).rem_euclid(360.0) - 180.0;
        let (dx, dy) = (b.position[0] - a.position[0], b.position[1] - a.position[1]);
        TrackPoint {
            position: [lerp(0), lerp(1), lerp(2)],
            heading_deg: compass_deg(a.heading_deg + f * turn),
            speed_mps: if span > 0.0 { dx.hypot(dy) / span } else { 0.0 },
        }
    }
}

/// Horizontal distance under which a segment counts as holding still, m.
const STILL_M: f64 = 1e-3;

/// Fills the headings of a log without them: each sample's is the direction of travel to the
/// next; a sample that holds still takes the last moving one's (the first moving one's before
/// any moved); the last sample takes the one before.
fn headings_of_travel(samples: &mut [TrackSample]) {
    let n = samples.len();
    let direction = |a: &TrackSample, b: &TrackSample| {
        let (dx, dy) = (b.position[0] - a.position[0], b.position[1] - a.position[1]);
        (dx.hypot(dy) > STILL_M).then(|| compass_deg(dx.atan2(dy).to_degrees()))
    };
    let moving: Vec<Option<f64>> = (0..n.saturating_sub(1))
        .map(|i| direction(&samples[i], &samples[i + 1]))
        .collect();
    let first = moving.iter().flatten().next().copied().unwrap_or(0.0);
    let mut current = first;
    for (i, s) in samples.iter_mut().enumerate() {
        if let Some(Some(h)) = moving.get(i) {
            current = *h;
        }
        s.heading_deg = current;
    }
}

/// The place of sample `n` in a file read by `unit`.
fn place(unit: Unit, n: u64) -> Place {
    match unit {
        Unit::Line => Place::Line(n),
        Unit::Point => Place::Point(n),
        Unit::Message => Place::Message(n),
    }
}

/// A sample's position as a file gives it.
#[derive(Debug, Clone, Copy)]
pub enum Position {
    /// ENU metres in the scenario's frame.
    Enu([f64; 3]),
    /// WGS84 degrees, and metres above the ellipsoid (as `world.origin.alt_m`).
    Geo { lat: f64, lon: f64, up: f64 },
}

/// Gathers a log's samples as a reader finds them and holds the rules they share: finite
/// numbers, positions in degrees that are positions, times that increase with no gap over
/// `max_gap_s`, at most [`MAX_TRACK_SAMPLES`], two at least.
pub struct Builder {
    log: TrackLog,
    frame: LocalFrame,
    max_gap_s: f64,
    first_t: Option<f64>,
    /// The last sample's time (after the first) and place.
    prev: Option<(f64, u64)>,
}

impl Builder {
    /// For the file `file` (named in errors), whose places count `unit`, in the frame of
    /// `origin`.
    pub fn new(file: &str, unit: Unit, origin: &GeoOrigin, max_gap_s: f64) -> Builder {
        Builder {
            log: TrackLog {
                file: file.to_owned(),
                samples: Vec::new(),
                places: Vec::new(),
                unit,
                positions: "x_y",
                headings: false,
            },
            frame: LocalFrame::new(origin),
            max_gap_s,
            first_t: None,
            prev: None,
        }
    }

    /// An error at place `n` of the file.
    pub fn error(&self, n: u64, message: impl Into<String>) -> FileError {
        FileError::new(&self.log.file, place(self.log.unit, n), message)
    }

    /// The sample at place `n`: logged at `t_raw` seconds (any origin), at `position`, heading
    /// `heading_deg` (compass) if the file gives one.
    pub fn push(
        &mut self,
        n: u64,
        t_raw: f64,
        position: Position,
        heading_deg: Option<f64>,
    ) -> Result<(), FileError> {
        if self.log.samples.len() >= MAX_TRACK_SAMPLES {
            return Err(self.error(n, format!("more than {MAX_TRACK_SAMPLES} samples")));
        }
        let numbers = match position {
            Position::Enu(p) => p.to_vec(),
            Position::Geo { lat, lon, up } => vec![lat, lon, up],
        };
        if !(numbers.iter().chain([&t_raw]).chain(heading_deg.as_ref())).all(|v| v.is_finite()) {
            return Err(self.error(n, "a time, position or heading that is not a finite number"));
        }
        let t0 = *self.first_t.get_or_insert(t_raw);
        let t = t_raw - t0;
        let unit = match self.log.unit {
            Unit::Line => "line",
            Unit::Point => "point",
            Unit::Message => "message",
        };
        if let Some((p, at)) = self.prev {
            if t <= p {
                return Err(self.error(
                    n,
                    format!(
                        "time {t_raw} is not after the previous sample's {} ({unit} {at}): a track's time increases",
                        p + t0
                    ),
                ));
            }
            if t - p > self.max_gap_s {
                return Err(self.error(
                    n,
                    format!(
                        "{:.3} s since the previous sample ({unit} {at}), more than max_gap_s ({} s)",
                        t - p,
                        self.max_gap_s
                    ),
                ));
            }
        }
        self.prev = Some((t, n));
        let position = match position {
            Position::Enu(p) => p,
            Position::Geo { lat, lon, up } => {
                if !(-90.0..=90.0).contains(&lat) || !(-180.0..=360.0).contains(&lon) {
                    return Err(self.error(
                        n,
                        format!("latitude {lat}, longitude {lon}: not a position in degrees"),
                    ));
                }
                self.log.positions = "lat_lon";
                let p = self.frame.from_lat_lon_depth(lat, lon, -up);
                [p.x, p.y, p.z]
            }
        };
        self.log.headings |= heading_deg.is_some();
        self.log.samples.push(TrackSample {
            t,
            position,
            heading_deg: heading_deg.map_or(0.0, compass_deg),
        });
        self.log.places.push(n);
        Ok(())
    }

    /// The log: two samples at least; headings of travel where the file gave none.
    pub fn finish(mut self) -> Result<TrackLog, FileError> {
        if self.log.samples.len() < 2 {
            return Err(FileError::new(
                &self.log.file,
                Place::Whole,
                format!(
                    "{} sample(s): a track needs two at least",
                    self.log.samples.len()
                ),
            ));
        }
        if !self.log.headings {
            headings_of_travel(&mut self.log.samples);
        }
        Ok(self.log)
    }
}

/// The pose of `log` at `t` seconds after its first sample: position and heading (degrees).
pub fn pose_at(log: &TrackLog, t: f64) -> ([f64; 3], f64) {
    let p = log.at(t, &mut 0);
    (p.position, p.heading_deg)
}

/// The origin the track tests place their logs by.
#[cfg(test)]
pub(crate) fn test_origin() -> GeoOrigin {
    GeoOrigin {
        lat_deg: 41.5,
        lon_deg: -70.6,
        alt_m: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `(t, x, y, z)` samples, without headings.
    fn log(samples: &[(f64, f64, f64, f64)]) -> Result<TrackLog, FileError> {
        let mut b = Builder::new("track", Unit::Line, &test_origin(), 10.0);
        for (i, &(t, x, y, z)) in samples.iter().enumerate() {
            b.push(i as u64 + 1, t, Position::Enu([x, y, z]), None)?;
        }
        b.finish()
    }

    #[test]
    fn a_track_is_interpolated_in_time_with_headings_of_travel_the_short_way_round() {
        // North 10 m in 10 s, a pause of 2 s, then west 5 m in 1 s.
        let log = log(&[
            (0.0, 0.0, 0.0, -1.0),
            (10.0, 0.0, 10.0, -2.0),
            (12.0, 0.0, 10.0, -2.0),
            (13.0, -5.0, 10.0, -2.0),
        ])
        .unwrap();
        let h: Vec<f64> = log.samples.iter().map(|s| s.heading_deg).collect();
        assert_eq!(
            h,
            [0.0, 0.0, 270.0, 270.0],
            "the pause keeps north, then west"
        );
        let mut hint = 0;
        let p = log.at(2.5, &mut hint);
        assert_eq!(p.position, [0.0, 2.5, -1.25]);
        assert_eq!((p.heading_deg, p.speed_mps), (0.0, 1.0));
        let p = log.at(11.0, &mut hint);
        assert_eq!(p.position, [0.0, 10.0, -2.0]);
        assert_eq!(p.speed_mps, 0.0);
        // Turning from 0° to 270° goes through 315°, not 135°.
        assert_eq!(log.at(11.0, &mut hint).heading_deg, 315.0);
        assert_eq!(log.at(12.5, &mut hint).position, [-2.5, 10.0, -2.0]);
        // Clamped to the log; a hint from later is no harm.
        assert_eq!(log.at(99.0, &mut hint).position, [-5.0, 10.0, -2.0]);
        assert_eq!(log.at(0.0, &mut hint).position, [0.0, 0.0, -1.0]);
        assert_eq!(pose_at(&log, 5.0), ([0.0, 5.0, -1.5], 0.0));
    }
}
