//! A logged track (`motion: {kind: track}`): its settings, and the log read from a CSV file
//! into samples in the scenario's local frame ([`TrackLog`]). A sample's time is seconds after
//! the log's first; its position is converted from latitude and longitude through
//! `world.origin` ([`super::geo`]) or taken as ENU metres. Every problem names the file, and
//! the line where it has one.

use super::geo::LocalFrame;
use super::GeoOrigin;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// Largest track file read, bytes.
pub const MAX_TRACK_BYTES: u64 = 256 << 20;
/// Most samples in a track.
pub const MAX_TRACK_SAMPLES: usize = 2_000_000;

/// Replays a vehicle's logged trajectory (`kind: track`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Track {
    /// The log, a CSV file with a header (relative to the scenario file): a time column (`t`,
    /// `time`, `time_s` or `timestamp`, seconds, increasing), the position as `x` and `y` (ENU
    /// metres) or `lat` and `lon` (degrees, WGS84; also `latitude`, `longitude`), the height
    /// as `z` (metres up; also `alt`, `altitude`; with `lat` and `lon`, above WGS84's ellipsoid
    /// as `world.origin.alt_m` is) or `depth` (metres down), and optionally
    /// `heading_deg` (compass; absent: the direction of travel). Other columns are ignored,
    /// lines starting with `#` too. Required.
    pub file: String,
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
    /// Per sample: its line in the file.
    pub lines: Vec<u64>,
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

impl TrackLog {
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
            heading_deg: (a.heading_deg + f * turn).rem_euclid(360.0),
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
        (dx.hypot(dy) > STILL_M).then(|| dx.atan2(dy).to_degrees().rem_euclid(360.0))
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

/// A track log that cannot be used, with the file and, where it has one, the line.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackError {
    pub file: String,
    pub line: Option<u64>,
    pub message: String,
}

impl std::fmt::Display for TrackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Column names accepted for each quantity (compared without case).
const TIME: &[&str] = &["t", "time", "time_s", "timestamp"];
const X: &[&str] = &["x"];
const Y: &[&str] = &["y"];
const LAT: &[&str] = &["lat", "latitude", "lat_deg"];
const LON: &[&str] = &["lon", "longitude", "lon_deg"];
const UP: &[&str] = &["z", "alt", "altitude", "alt_m"];
const DEPTH: &[&str] = &["depth", "depth_m"];
const HEADING: &[&str] = &["heading_deg", "heading"];

/// Reads the track log at `path`, positions in the frame of `origin`; refuses a gap between
/// samples longer than `max_gap_s`.
pub fn read(path: &Path, origin: &GeoOrigin, max_gap_s: f64) -> Result<TrackLog, TrackError> {
    let file = path.display().to_string();
    let whole = |message: String| TrackError {
        file: file.clone(),
        line: None,
        message,
    };
    let f = std::fs::File::open(path).map_err(|e| whole(format!("cannot open: {e}")))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_TRACK_BYTES + 1), &mut bytes)
        .map_err(|e| whole(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_TRACK_BYTES {
        return Err(whole(format!("larger than {} MiB", MAX_TRACK_BYTES >> 20)));
    }
    parse(&bytes, &file, origin, max_gap_s)
}

/// [`read`] on the file's bytes, `file` naming it in errors.
pub fn parse(
    bytes: &[u8],
    file: &str,
    origin: &GeoOrigin,
    max_gap_s: f64,
) -> Result<TrackLog, TrackError> {
    let err = |line: Option<u64>, message: String| TrackError {
        file: file.to_owned(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| err(e.position().map(|p| p.line()), format!("the header: {e}")))?
        .clone();
    let names: Vec<String> = header.iter().map(str::to_ascii_lowercase).collect();
    let column = |accepted: &[&str]| names.iter().position(|n| accepted.contains(&n.as_str()));
    let found = || {
        format!(
            "the header has {}",
            header.iter().collect::<Vec<_>>().join(", ")
        )
    };
    let Some(time) = column(TIME) else {
        return Err(err(
            Some(1),
            format!("no time column (t, time, time_s or timestamp): {}", found()),
        ));
    };
    let horizontal = match (column(X), column(Y), column(LAT), column(LON)) {
        (_, _, Some(lat), Some(lon)) => Horizontal::LatLon(lat, lon),
        (Some(x), Some(y), _, _) => Horizontal::Xy(x, y),
        _ => {
            return Err(err(
                Some(1),
                format!(
                    "no position: columns x and y (metres) or lat and lon (degrees): {}",
                    found()
                ),
            ))
        }
    };
    let vertical = match (column(UP), column(DEPTH)) {
        (Some(z), _) => Vertical::Up(z),
        (None, Some(d)) => Vertical::Depth(d),
        (None, None) => {
            return Err(err(
                Some(1),
                format!(
                    "no height: a column z (metres up) or depth (metres down): {}",
                    found()
                ),
            ))
        }
    };
    let heading = column(HEADING);
    let frame = LocalFrame::new(origin);
    let mut log = TrackLog {
        file: file.to_owned(),
        samples: Vec::new(),
        lines: Vec::new(),
        positions: match horizontal {
            Horizontal::LatLon(..) => "lat_lon",
            Horizontal::Xy(..) => "x_y",
        },
        headings: heading.is_some(),
    };
    let mut first_t = None;
    let mut prev: Option<(f64, u64)> = None;
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(err(e.position().map(|p| p.line()), e.to_string())),
        }
        let line = record.position().map_or(0, |p| p.line());
        if log.samples.len() >= MAX_TRACK_SAMPLES {
            return Err(err(
                Some(line),
                format!("more than {MAX_TRACK_SAMPLES} samples"),
            ));
        }
        let value = |i: usize| -> Result<f64, TrackError> {
            let text = record.get(i).ok_or_else(|| {
                err(
                    Some(line),
                    format!(
                        "no column {} ({}) on this line",
                        i + 1,
                        header.get(i).unwrap_or("")
                    ),
                )
            })?;
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(err(
                    Some(line),
                    format!(
                        "column {} ({}): not a finite number: {text:?}",
                        i + 1,
                        header.get(i).unwrap_or("")
                    ),
                )),
            }
        };
        let t_raw = value(time)?;
        let t0 = *first_t.get_or_insert(t_raw);
        let t = t_raw - t0;
        if let Some((p, p_line)) = prev {
            if t <= p {
                return Err(err(
                    Some(line),
                    format!(
                        "time {t_raw} is not after the previous sample's {} (line {p_line}): a track's time increases",
                        p + t0
                    ),
                ));
            }
            if t - p > max_gap_s {
                return Err(err(
                    Some(line),
                    format!(
                        "{:.3} s since the previous sample (line {p_line}), more than max_gap_s ({max_gap_s} s)",
                        t - p
                    ),
                ));
            }
        }
        prev = Some((t, line));
        let up = match vertical {
            Vertical::Up(z) => value(z)?,
            Vertical::Depth(d) => -value(d)?,
        };
        let position = match horizontal {
            Horizontal::Xy(x, y) => [value(x)?, value(y)?, up],
            Horizontal::LatLon(lat, lon) => {
                let (la, lo) = (value(lat)?, value(lon)?);
                if !(-90.0..=90.0).contains(&la) || !(-180.0..=360.0).contains(&lo) {
                    return Err(err(
                        Some(line),
                        format!("latitude {la}, longitude {lo}: not a position in degrees"),
                    ));
                }
                let p = frame.from_lat_lon_depth(la, lo, -up);
                [p.x, p.y, p.z]
            }
        };
        let heading_deg = match heading {
            Some(h) => value(h)?.rem_euclid(360.0),
            None => 0.0,
        };
        log.samples.push(TrackSample {
            t,
            position,
            heading_deg,
        });
        log.lines.push(line);
    }
    if log.samples.len() < 2 {
        return Err(err(
            None,
            format!(
                "{} sample(s): a track needs two at least",
                log.samples.len()
            ),
        ));
    }
    if !log.headings {
        headings_of_travel(&mut log.samples);
    }
    Ok(log)
}

/// The pose of `log` at `t` seconds after its first sample: position and heading (degrees).
pub fn pose_at(log: &TrackLog, t: f64) -> ([f64; 3], f64) {
    let p = log.at(t, &mut 0);
    (p.position, p.heading_deg)
}

#[derive(Clone, Copy)]
enum Horizontal {
    Xy(usize, usize),
    LatLon(usize, usize),
}

#[derive(Clone, Copy)]
enum Vertical {
    Up(usize),
    Depth(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> GeoOrigin {
        GeoOrigin {
            lat_deg: 41.5,
            lon_deg: -70.6,
            alt_m: 0.0,
        }
    }

    fn parsed(text: &str) -> Result<TrackLog, TrackError> {
        parse(text.as_bytes(), "track.csv", &origin(), 10.0)
    }

    #[test]
    fn a_log_in_metres_or_degrees_is_read_relative_to_its_first_sample() {
        let log =
            parsed("# a log\ntime,x,y,depth,speed\n100,0,0,5,1\n101,1,0,5,1\n103.5,1,2,6,1\n")
                .unwrap();
        assert_eq!(log.positions, "x_y");
        let t: Vec<f64> = log.samples.iter().map(|s| s.t).collect();
        assert_eq!(t, [0.0, 1.0, 3.5]);
        assert_eq!(log.samples[2].position, [1.0, 2.0, -6.0]);
        assert_eq!(log.lines, [3, 4, 5]);
        assert_eq!(log.duration_s(), 3.5);
        // 0.001° of latitude north of the origin is 111 m north, at the surface.
        let log =
            parsed("lat,lon,z,t,heading_deg\n41.5,-70.6,0,0,90\n41.501,-70.6,0,1,90\n").unwrap();
        let p = log.samples[1].position;
        assert!(
            (p[1] - 111.07).abs() < 0.05 && p[0].abs() < 1e-6 && p[2].abs() < 0.01,
            "{p:?}"
        );
        assert_eq!(log.samples[1].heading_deg, 90.0);
    }

    #[test]
    fn a_track_is_interpolated_in_time_with_headings_of_travel_the_short_way_round() {
        // North 10 m in 10 s, a pause of 2 s, then west 5 m in 1 s.
        let log = parsed("t,x,y,z\n0,0,0,-1\n10,0,10,-2\n12,0,10,-2\n13,-5,10,-2\n").unwrap();
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

    #[test]
    fn bad_logs_are_refused_with_their_line() {
        let cases = [
            ("x,y,z\n0,0,0\n", Some(1), "no time column"),
            ("t,a,z\n0,0,0\n", Some(1), "no position"),
            ("t,x,y\n0,0,0\n", Some(1), "no height"),
            (
                "t,x,y,z\n0,0,0,0\n1,0,zero,0\n",
                Some(3),
                "column 3 (y): not a finite number: \"zero\"",
            ),
            (
                "t,x,y,z\n0,0,0,0\n1,0,NaN,0\n",
                Some(3),
                "not a finite number",
            ),
            (
                "t,x,y,z\n0,0,0,0\n2,0,0,0\n1,0,0,0\n",
                Some(4),
                "time 1 is not after the previous sample's 2 (line 3)",
            ),
            ("t,x,y,z\n0,0,0,0\n0,1,0,0\n", Some(3), "is not after"),
            (
                "t,x,y,z\n0,0,0,0\n30,0,0,0\n",
                Some(3),
                "30.000 s since the previous sample (line 2), more than max_gap_s (10 s)",
            ),
            (
                "t,x,y,z\n0,0,0,0\n1,0\n",
                Some(3),
                "no column 4 (z) on this line",
            ),
            ("t,x,y,z\n0,0,0,0\n", None, "1 sample(s)"),
            (
                "t,lat,lon,z\n0,95,0,0\n1,0,0,0\n",
                Some(2),
                "not a position in degrees",
            ),
            ("", Some(1), "no time column"),
        ];
        for (text, line, says) in cases {
            let e = parsed(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(says), "{text:?}: {e}");
            assert!(e.to_string().starts_with("track.csv:"), "{e}");
        }
    }
}
