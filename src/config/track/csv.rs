//! A track log as CSV: a header naming its columns (found without case; others are ignored,
//! and lines starting with `#`), one sample per line, errors at the file's line.

use super::log::{Builder, Position, TrackLog, Unit};
use crate::config::files::{FileError, Place};
use crate::config::GeoOrigin;

/// Column names accepted for each quantity (compared without case).
const TIME: &[&str] = &["t", "time", "time_s", "timestamp"];
const X: &[&str] = &["x"];
const Y: &[&str] = &["y"];
const LAT: &[&str] = &["lat", "latitude", "lat_deg"];
const LON: &[&str] = &["lon", "longitude", "lon_deg"];
const UP: &[&str] = &["z", "alt", "altitude", "alt_m"];
const DEPTH: &[&str] = &["depth", "depth_m"];
const HEADING: &[&str] = &["heading_deg", "heading"];

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

/// The log in the CSV `bytes` of `file` (named in errors), positions in the frame of `origin`;
/// a gap between samples longer than `max_gap_s` is refused.
pub fn parse(
    bytes: &[u8],
    file: &str,
    origin: &GeoOrigin,
    max_gap_s: f64,
) -> Result<TrackLog, FileError> {
    let mut b = Builder::new(file, Unit::Line, origin, max_gap_s);
    let mut reader = ::csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(::csv::Trim::All)
        .flexible(true)
        .from_reader(bytes);
    let at_line = |e: &::csv::Error| e.position().map_or(Place::Whole, |p| Place::Line(p.line()));
    let header = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => {
            return Err(FileError::new(
                file,
                at_line(&e),
                format!("the header: {e}"),
            ))
        }
    };
    let names: Vec<String> = header.iter().map(str::to_ascii_lowercase).collect();
    let column = |accepted: &[&str]| names.iter().position(|n| accepted.contains(&n.as_str()));
    let found = || {
        format!(
            "the header has {}",
            header.iter().collect::<Vec<_>>().join(", ")
        )
    };
    let Some(time) = column(TIME) else {
        return Err(b.error(
            1,
            format!("no time column (t, time, time_s or timestamp): {}", found()),
        ));
    };
    let horizontal = match (column(X), column(Y), column(LAT), column(LON)) {
        (_, _, Some(lat), Some(lon)) => Horizontal::LatLon(lat, lon),
        (Some(x), Some(y), _, _) => Horizontal::Xy(x, y),
        _ => {
            return Err(b.error(
                1,
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
            return Err(b.error(
                1,
                format!(
                    "no height: a column z (metres up) or depth (metres down): {}",
                    found()
                ),
            ))
        }
    };
    let heading = column(HEADING);
    let mut record = ::csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(FileError::new(file, at_line(&e), e.to_string())),
        }
        let line = record.position().map_or(0, |p| p.line());
        let value = |i: usize| -> Result<f64, FileError> {
            let name = header.get(i).unwrap_or("");
            let text = record.get(i).ok_or_else(|| {
                b.error(line, format!("no column {} ({name}) on this line", i + 1))
            })?;
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(b.error(
                    line,
                    format!("column {} ({name}): not a finite number: {text:?}", i + 1),
                )),
            }
        };
        let t = value(time)?;
        let up = match vertical {
            Vertical::Up(z) => value(z)?,
            Vertical::Depth(d) => -value(d)?,
        };
        let position = match horizontal {
            Horizontal::Xy(x, y) => Position::Enu([value(x)?, value(y)?, up]),
            Horizontal::LatLon(lat, lon) => Position::Geo {
                lat: value(lat)?,
                lon: value(lon)?,
                up,
            },
        };
        let heading_deg = heading.map(value).transpose()?;
        b.push(line, t, position, heading_deg)?;
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::track::log::test_origin;

    fn parsed(text: &str) -> Result<TrackLog, FileError> {
        parse(text.as_bytes(), "track.csv", &test_origin(), 10.0)
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
        assert_eq!(log.places, [3, 4, 5]);
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
    fn bad_logs_are_refused_with_their_line() {
        let cases = [
            ("x,y,z\n0,0,0\n", Place::Line(1), "no time column"),
            ("t,a,z\n0,0,0\n", Place::Line(1), "no position"),
            ("t,x,y\n0,0,0\n", Place::Line(1), "no height"),
            (
                "t,x,y,z\n0,0,0,0\n1,0,zero,0\n",
                Place::Line(3),
                "column 3 (y): not a finite number: \"zero\"",
            ),
            (
                "t,x,y,z\n0,0,0,0\n1,0,NaN,0\n",
                Place::Line(3),
                "not a finite number",
            ),
            (
                "t,x,y,z\n0,0,0,0\n2,0,0,0\n1,0,0,0\n",
                Place::Line(4),
                "time 1 is not after the previous sample's 2 (line 3)",
            ),
            (
                "t,x,y,z\n0,0,0,0\n0,1,0,0\n",
                Place::Line(3),
                "is not after",
            ),
            (
                "t,x,y,z\n0,0,0,0\n30,0,0,0\n",
                Place::Line(3),
                "30.000 s since the previous sample (line 2), more than max_gap_s (10 s)",
            ),
            (
                "t,x,y,z\n0,0,0,0\n1,0\n",
                Place::Line(3),
                "no column 4 (z) on this line",
            ),
            ("t,x,y,z\n0,0,0,0\n", Place::Whole, "1 sample(s)"),
            (
                "t,lat,lon,z\n0,95,0,0\n1,0,0,0\n",
                Place::Line(2),
                "not a position in degrees",
            ),
            ("", Place::Line(1), "no time column"),
        ];
        for (text, line, says) in cases {
            let e = parsed(text).unwrap_err();
            assert_eq!(e.place, line, "{text:?}: {e}");
            assert!(e.message.contains(says), "{text:?}: {e}");
            assert!(e.to_string().starts_with("track.csv"), "{e}");
        }
    }
}
