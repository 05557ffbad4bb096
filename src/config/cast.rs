//! CTD casts (`world.water.casts`): the sound speed measured down the water at a place, read
//! from a CSV file or a Sea-Bird `.cnv` file into depths and speeds ([`CastProfile`]).
//!
//! A cast gives its depth in metres or its pressure in dbar (converted with the UNESCO 1983
//! formula at the cast's latitude), and the sound speed itself or the temperature (with the
//! salinity, or the water's `salinity_ppt`) for Mackenzie's equation. Only the downcast is kept:
//! the rows down to the deepest, each deeper than the last one kept (a loop of the rosette in
//! the swell, the soak at the surface and the upcast are left out and counted), so a raw cast
//! and a bin-averaged one read alike. Every problem names the file and its line.

use super::files::{read_bounded, FileError, Place};
use super::sea_water::{sound_speed_mackenzie, MAX_PROFILE_SPEED_MPS, MIN_PROFILE_SPEED_MPS};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// Largest cast file read, bytes.
pub const MAX_CAST_BYTES: u64 = 64 << 20;
/// Most rows a cast may have.
pub const MAX_CAST_ROWS: usize = 1_000_000;

/// One cast of `world.water.casts`: its file and where it was taken.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Cast {
    /// The cast, relative to the scenario file, by its extension: `.csv` (a header naming the
    /// depth, `depth_m` or `depth` in metres down, or the pressure, `pressure_dbar` or
    /// `pressure`; and the sound speed, `sound_speed_mps`, `speed_mps` or `sound_speed`, or the
    /// temperature, `temperature_c` or `temperature`, with optionally the salinity,
    /// `salinity_psu`, `salinity_ppt` or `salinity`; lines starting with `#` ignored) or a
    /// Sea-Bird `.cnv` (its `# name` lines: depth `dep…`, pressure `pr…`, sound speed `sv…`,
    /// temperature `t090C`, `t068C`, `tv290C`…, salinity `sal…`; rows holding its `bad_flag`
    /// skipped). Required.
    pub file: String,
    /// Latitude of the cast, degrees north (with `lon_deg`; or give `x` and `y`; a `.cnv`
    /// whose header has `NMEA Latitude` and `NMEA Longitude` needs neither).
    #[serde(default)]
    pub lat_deg: Option<f64>,
    /// Longitude of the cast, degrees east (with `lat_deg`).
    #[serde(default)]
    pub lon_deg: Option<f64>,
    /// East of the origin, metres (with `y`).
    #[serde(default)]
    pub x: Option<f64>,
    /// North of the origin, metres (with `x`).
    #[serde(default)]
    pub y: Option<f64>,
    /// The cast as read (set when the scenario is loaded).
    #[serde(skip)]
    #[schemars(skip)]
    pub read: Option<Arc<CastProfile>>,
    /// Where it was taken in the scenario's frame, metres east and north (set when the
    /// scenario is loaded).
    #[serde(skip)]
    #[schemars(skip)]
    pub at: Option<[f64; 2]>,
}

/// Where a cast's speeds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeedFrom {
    /// A sound-speed column.
    Measured,
    /// Mackenzie's equation from the temperature and a salinity column.
    TemperatureSalinity,
    /// Mackenzie's equation from the temperature and the water's `salinity_ppt`.
    Temperature,
}

/// A cast read: the downcast's depths (m, increasing) and sound speeds (m/s).
#[derive(Debug, Clone, PartialEq)]
pub struct CastProfile {
    /// The file, as named in errors.
    pub file: String,
    pub depth_m: Vec<f64>,
    pub speed_mps: Vec<f64>,
    pub speed_from: SpeedFrom,
    /// Depths converted from pressure.
    pub from_pressure: bool,
    /// The position the file gives (a `.cnv`'s NMEA header), degrees (lat, lon).
    pub position: Option<(f64, f64)>,
    /// Rows left out: Sea-Bird's bad flag, or not deeper than the last row kept.
    pub left_out: usize,
}

/// The depth (m) of pressure `p_dbar` at latitude `lat_deg`: UNESCO 1983 (Fofonoff & Millard,
/// *Algorithms for computation of fundamental properties of seawater*, UNESCO technical papers
/// in marine science 44), the formula Sea-Bird's software applies for salt water.
pub fn depth_from_pressure(p_dbar: f64, lat_deg: f64) -> f64 {
    let x = lat_deg.to_radians().sin().powi(2);
    let g = 9.780318 * (1.0 + (5.2788e-3 + 2.36e-5 * x) * x) + 1.092e-6 * p_dbar;
    ((((-1.82e-15 * p_dbar + 2.279e-10) * p_dbar - 2.2512e-5) * p_dbar + 9.72659) * p_dbar) / g
}

/// What a cast's columns hold, by index.
struct Columns {
    /// Depth (false) or pressure (true), and its column.
    vertical: (bool, usize),
    speed: Option<usize>,
    temperature: Option<usize>,
    salinity: Option<usize>,
}

/// One data row: its line and its numbers.
struct Row {
    line: u64,
    values: Vec<f64>,
}

/// Reads the cast at `path` (its format by its extension). Pressures are converted at
/// `latitude_deg` (the cast's, else its header's, else `fallback_lat_deg`); temperatures
/// without a salinity column use `salinity_ppt`.
pub fn read(
    path: &Path,
    latitude_deg: Option<f64>,
    fallback_lat_deg: f64,
    salinity_ppt: f64,
) -> Result<CastProfile, FileError> {
    let file = path.display().to_string();
    let whole = |message: String| FileError::new(&file, Place::Whole, message);
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let cnv = match ext.as_deref() {
        Some("csv") => false,
        Some("cnv") => true,
        _ => {
            return Err(whole(format!(
                "a cast is a .csv or a Sea-Bird .cnv file (got {:?})",
                path.file_name().unwrap_or_default()
            )))
        }
    };
    let bytes = read_bounded(path, MAX_CAST_BYTES).map_err(whole)?;
    if cnv {
        parse_cnv(&bytes, &file, latitude_deg, fallback_lat_deg, salinity_ppt)
    } else {
        parse_csv(
            &bytes,
            &file,
            latitude_deg.unwrap_or(fallback_lat_deg),
            salinity_ppt,
        )
    }
}

/// Column names accepted in a CSV cast (compared without case).
const DEPTH: &[&str] = &["depth_m", "depth"];
const PRESSURE: &[&str] = &["pressure_dbar", "pressure"];
const SPEED: &[&str] = &["sound_speed_mps", "speed_mps", "sound_speed"];
const TEMPERATURE: &[&str] = &["temperature_c", "temperature"];
const SALINITY: &[&str] = &["salinity_psu", "salinity_ppt", "salinity"];

/// The cast in the CSV `bytes` of `file`; pressures converted at `lat_deg`.
pub fn parse_csv(
    bytes: &[u8],
    file: &str,
    lat_deg: f64,
    salinity_ppt: f64,
) -> Result<CastProfile, FileError> {
    let err = |line: u64, message: String| FileError::new(file, Place::Line(line), message);
    let mut reader = ::csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(::csv::Trim::All)
        .flexible(true)
        .from_reader(bytes);
    let at_line = |e: &::csv::Error| e.position().map_or(Place::Whole, |p| Place::Line(p.line()));
    let header = reader
        .headers()
        .map_err(|e| FileError::new(file, at_line(&e), format!("the header: {e}")))?
        .clone();
    let names: Vec<String> = header.iter().map(str::to_owned).collect();
    let column = |accepted: &[&str]| {
        (names.iter()).position(|n| accepted.contains(&n.to_ascii_lowercase().as_str()))
    };
    let header_line = header.position().map_or(1, |p| p.line());
    let found = || {
        format!(
            "the header has {}",
            header.iter().collect::<Vec<_>>().join(", ")
        )
    };
    let vertical = match (column(DEPTH), column(PRESSURE)) {
        (Some(d), _) => (false, d),
        (None, Some(p)) => (true, p),
        (None, None) => {
            return Err(err(
                header_line,
                format!(
                    "no depth: a column depth_m or depth (metres) or pressure_dbar (dbar): {}",
                    found()
                ),
            ))
        }
    };
    let columns = Columns {
        vertical,
        speed: column(SPEED),
        temperature: column(TEMPERATURE),
        salinity: column(SALINITY),
    };
    if columns.speed.is_none() && columns.temperature.is_none() {
        return Err(err(
            header_line,
            format!(
                "no sound speed: a column sound_speed_mps (m/s) or temperature_c (°C, for \
                 Mackenzie's equation): {}",
                found()
            ),
        ));
    }
    let mut rows = Vec::new();
    let mut record = ::csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(FileError::new(file, at_line(&e), e.to_string())),
        }
        let line = record.position().map_or(0, |p| p.line());
        if rows.len() >= MAX_CAST_ROWS {
            return Err(err(line, format!("more than {MAX_CAST_ROWS} rows")));
        }
        let values = numbers(file, line, record.iter(), &names)?;
        rows.push(Row { line, values });
    }
    build(file, &names, &columns, rows, 0, lat_deg, salinity_ppt, None)
}

/// The numbers of one data row at `line`, each field's error naming its column (1-based)
/// and the column's name in `names`.
fn numbers<'a>(
    file: &str,
    line: u64,
    fields: impl Iterator<Item = &'a str>,
    names: &[String],
) -> Result<Vec<f64>, FileError> {
    fields
        .enumerate()
        .map(|(i, text)| {
            text.parse::<f64>().map_err(|_| {
                FileError::new(
                    file,
                    Place::Line(line),
                    format!(
                        "column {} ({}): not a number: {text:?}",
                        i + 1,
                        names.get(i).map_or("", String::as_str)
                    ),
                )
            })
        })
        .collect()
}

/// The cast in the Sea-Bird `.cnv` `bytes` of `file`: the header down to `*END*` (its `# name
/// N = short: description [unit]` lines, `# bad_flag`, `* NMEA Latitude` and `Longitude`),
/// then one row of numbers per line. Pressures are converted at `lat_deg`, else the header's
/// latitude, else `fallback_lat_deg`.
pub fn parse_cnv(
    bytes: &[u8],
    file: &str,
    lat_deg: Option<f64>,
    fallback_lat_deg: f64,
    salinity_ppt: f64,
) -> Result<CastProfile, FileError> {
    let err = |line: u64, message: String| FileError::new(file, Place::Line(line), message);
    let mut names: Vec<(usize, String, u64)> = Vec::new();
    let mut bad_flag = None;
    let (mut lat, mut lon) = (None, None);
    let mut lines = bytes.split(|&b| b == b'\n').enumerate();
    let mut ended = false;
    for (i, raw) in lines.by_ref() {
        let line = i as u64 + 1;
        let text = std::str::from_utf8(raw)
            .map_err(|e| err(line, format!("not UTF-8 text (byte {})", e.valid_up_to())))?
            .trim_end_matches('\r');
        if text.trim() == "*END*" {
            ended = true;
            break;
        }
        if let Some(rest) = text.strip_prefix("# name ") {
            // "N = short: description [unit]"
            let (index, name) = rest
                .split_once('=')
                .and_then(|(n, v)| Some((n.trim().parse::<usize>().ok()?, v)))
                .ok_or_else(|| {
                    err(
                        line,
                        format!(
                            "a `# name` line that is not `# name N = short: description`: {text:?}"
                        ),
                    )
                })?;
            let short = name.split(':').next().unwrap_or("").trim().to_owned();
            names.push((index, short, line));
        } else if let Some(rest) = text.strip_prefix("# bad_flag") {
            let v = rest.trim_start_matches([' ', '=']).trim();
            bad_flag = Some(
                v.parse::<f64>()
                    .map_err(|_| err(line, format!("bad_flag is not a number: {v:?}")))?,
            );
        } else if let Some(rest) = text.strip_prefix("* NMEA Latitude") {
            lat = Some(nmea_degrees(rest, 'N', 'S').ok_or_else(|| {
                err(
                    line,
                    format!("a latitude that is not `DD MM.MM N|S`: {text:?}"),
                )
            })?);
        } else if let Some(rest) = text.strip_prefix("* NMEA Longitude") {
            lon = Some(nmea_degrees(rest, 'E', 'W').ok_or_else(|| {
                err(
                    line,
                    format!("a longitude that is not `DDD MM.MM E|W`: {text:?}"),
                )
            })?);
        }
    }
    if !ended {
        return Err(FileError::new(
            file,
            Place::Whole,
            "no `*END*` line: a Sea-Bird .cnv file's header ends with one".to_string(),
        ));
    }
    names.sort_by_key(|n| n.0);
    for (k, (index, short, line)) in names.iter().enumerate() {
        if *index != k {
            return Err(err(
                *line,
                format!(
                    "column {short} is numbered {index}; the `# name` lines must count 0, 1, 2, …"
                ),
            ));
        }
    }
    let shorts: Vec<String> = names.into_iter().map(|n| n.1).collect();
    let first = |pred: &dyn Fn(&str) -> bool| shorts.iter().position(|s| pred(s));
    let is_temperature = |s: &str| {
        let mut c = s.chars();
        c.next() == Some('t')
            && c.next().is_some_and(|d| d.is_ascii_digit() || d == 'v')
            && s.ends_with('C')
    };
    let vertical = match (
        first(&|s| s.starts_with("dep")),
        first(&|s| s.starts_with("pr")),
    ) {
        (Some(d), _) => (false, d),
        (None, Some(p)) => (true, p),
        (None, None) => {
            return Err(FileError::new(
                file,
                Place::Whole,
                format!(
                    "no depth (dep…) or pressure (pr…) column among {}",
                    shorts.join(", ")
                ),
            ))
        }
    };
    let columns = Columns {
        vertical,
        speed: first(&|s| s.starts_with("sv")),
        temperature: first(&is_temperature),
        salinity: first(&|s| s.starts_with("sal")),
    };
    if columns.speed.is_none() && columns.temperature.is_none() {
        return Err(FileError::new(
            file,
            Place::Whole,
            format!(
                "no sound speed (sv…) or temperature (t090C, t068C, …) column among {}",
                shorts.join(", ")
            ),
        ));
    }
    let mut rows = Vec::new();
    let mut flagged = 0;
    for (i, raw) in lines {
        let line = i as u64 + 1;
        let text = std::str::from_utf8(raw)
            .map_err(|e| err(line, format!("not UTF-8 text (byte {})", e.valid_up_to())))?;
        if text.trim().is_empty() {
            continue;
        }
        if rows.len() >= MAX_CAST_ROWS {
            return Err(err(line, format!("more than {MAX_CAST_ROWS} rows")));
        }
        let values = numbers(file, line, text.split_whitespace(), &shorts)?;
        if bad_flag.is_some_and(|flag| values.contains(&flag)) {
            flagged += 1;
            continue;
        }
        rows.push(Row { line, values });
    }
    let position = lat.zip(lon);
    let lat_deg = lat_deg.or(lat).unwrap_or(fallback_lat_deg);
    build(
        file,
        &shorts,
        &columns,
        rows,
        flagged,
        lat_deg,
        salinity_ppt,
        position,
    )
}

/// `DD MM.MM H` (degrees, minutes, hemisphere `pos` or `neg`) after a header key and `=`.
fn nmea_degrees(rest: &str, pos: char, neg: char) -> Option<f64> {
    let mut parts = rest.trim_start_matches([' ', '=']).split_whitespace();
    let degrees: f64 = parts.next()?.parse().ok()?;
    let minutes: f64 = parts.next()?.parse().ok()?;
    let hemisphere = parts.next()?.chars().next()?;
    if !(degrees.is_finite() && (0.0..60.0).contains(&minutes)) {
        return None;
    }
    let v = degrees + minutes / 60.0;
    match hemisphere {
        h if h == pos => Some(v),
        h if h == neg => Some(-v),
        _ => None,
    }
}

/// The downcast from `rows`: each row's depth and speed, the rows not deeper than the last one
/// kept left out, and the rows after the deepest.
#[allow(clippy::too_many_arguments)]
fn build(
    file: &str,
    names: &[String],
    columns: &Columns,
    rows: Vec<Row>,
    flagged: usize,
    lat_deg: f64,
    salinity_ppt: f64,
    position: Option<(f64, f64)>,
) -> Result<CastProfile, FileError> {
    let err = |line: u64, message: String| FileError::new(file, Place::Line(line), message);
    let speed_from = match (columns.speed, columns.salinity) {
        (Some(_), _) => SpeedFrom::Measured,
        (None, Some(_)) => SpeedFrom::TemperatureSalinity,
        (None, None) => SpeedFrom::Temperature,
    };
    let mut samples: Vec<(u64, f64, f64)> = Vec::with_capacity(rows.len());
    for row in &rows {
        let value = |i: usize| -> Result<f64, FileError> {
            let name = names.get(i).map_or("", String::as_str);
            match row.values.get(i) {
                Some(v) if v.is_finite() => Ok(*v),
                Some(v) => Err(err(row.line, format!("column {} ({name}) is {v}", i + 1))),
                None => Err(err(
                    row.line,
                    format!("no column {} ({name}) on this line", i + 1),
                )),
            }
        };
        let (pressure, v) = columns.vertical;
        let depth = if pressure {
            depth_from_pressure(value(v)?, lat_deg)
        } else {
            value(v)?
        };
        let speed = match (columns.speed, columns.temperature) {
            (Some(c), _) => value(c)?,
            (None, Some(t)) => {
                let t = value(t)?;
                if !(-2.0..=40.0).contains(&t) {
                    return Err(err(
                        row.line,
                        format!("temperature {t} °C is not in [-2, 40]"),
                    ));
                }
                let s = match columns.salinity {
                    Some(s) => value(s)?,
                    None => salinity_ppt,
                };
                if !(0.0..=45.0).contains(&s) {
                    return Err(err(row.line, format!("salinity {s} is not in [0, 45]")));
                }
                sound_speed_mackenzie(t, s, depth.max(0.0))
            }
            (None, None) => unreachable!("a cast without speed or temperature is refused above"),
        };
        if !(MIN_PROFILE_SPEED_MPS..=MAX_PROFILE_SPEED_MPS).contains(&speed) {
            return Err(err(
                row.line,
                format!(
                    "sound speed {speed:.1} m/s is not in [{MIN_PROFILE_SPEED_MPS}, \
                     {MAX_PROFILE_SPEED_MPS}] (the range of sea water)"
                ),
            ));
        }
        samples.push((row.line, depth, speed));
    }
    // The downcast: up to the deepest row, each row deeper than the last one kept.
    let deepest = samples
        .iter()
        .enumerate()
        .fold(None, |best: Option<(usize, f64)>, (i, s)| match best {
            Some((_, d)) if d >= s.1 => best,
            _ => Some((i, s.1)),
        });
    let mut depth_m = Vec::new();
    let mut speed_mps = Vec::new();
    if let Some((last, _)) = deepest {
        for &(_, d, c) in &samples[..=last] {
            if d >= 0.0 && depth_m.last().is_none_or(|&prev| d > prev) {
                depth_m.push(d);
                speed_mps.push(c);
            }
        }
    }
    if depth_m.len() < 2 {
        return Err(FileError::new(
            file,
            Place::Whole,
            format!(
                "{} row(s) going down (of {} read): a cast needs two at least",
                depth_m.len(),
                rows.len() + flagged
            ),
        ));
    }
    let left_out = rows.len() + flagged - depth_m.len();
    Ok(CastProfile {
        file: file.to_owned(),
        depth_m,
        speed_mps,
        speed_from,
        from_pressure: columns.vertical.0,
        position,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unesco_depth_matches_its_check_value() {
        // The UNESCO 1983 check value: 10,000 dbar at 30° is 9,712.653 m.
        assert!((depth_from_pressure(10_000.0, 30.0) - 9712.653).abs() < 1e-3);
        assert!((depth_from_pressure(100.0, 45.0) - 99.2).abs() < 0.1);
    }

    #[test]
    fn a_csv_cast_keeps_its_downcast() {
        let text = "# cast 3\ndepth_m,sound_speed_mps\n1,1510\n2,1509\n1.5,1508\n3,1507\n\
                    4,1506\n2,1505\n";
        let c = parse_csv(text.as_bytes(), "c.csv", 40.0, 35.0).unwrap();
        assert_eq!(c.depth_m, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(c.speed_mps, [1510.0, 1509.0, 1507.0, 1506.0]);
        assert_eq!(c.left_out, 2);
        assert_eq!(c.speed_from, SpeedFrom::Measured);
        // Temperature and salinity through Mackenzie; pressure through UNESCO.
        let text = "pressure_dbar,temperature_c,salinity_psu\n0,20,35\n100,10,35\n";
        let c = parse_csv(text.as_bytes(), "c.csv", 45.0, 30.0).unwrap();
        assert!((c.depth_m[1] - depth_from_pressure(100.0, 45.0)).abs() < 1e-12);
        assert_eq!(c.speed_mps[0], sound_speed_mackenzie(20.0, 35.0, 0.0));
        assert_eq!(c.speed_from, SpeedFrom::TemperatureSalinity);
        assert!(c.from_pressure);
    }

    #[test]
    fn bad_csv_casts_are_refused_with_their_line() {
        let cases = [
            ("speed_mps\n1500\n", "c.csv:1: no depth"),
            ("depth\n1\n", "c.csv:1: no sound speed"),
            (
                "depth,speed_mps\n0,1500\n1,fast\n",
                "c.csv:3: column 2 (speed_mps): not a number",
            ),
            (
                "depth,speed_mps\n0,1500\n1\n",
                "c.csv:3: no column 2 (speed_mps)",
            ),
            (
                "depth,speed_mps\n0,1500\n1,150\n",
                "c.csv:3: sound speed 150.0 m/s is not in",
            ),
            ("depth,temperature\n0,80\n", "c.csv:2: temperature 80 °C"),
            ("depth,speed_mps\n0,1500\n", "c.csv: 1 row(s) going down"),
            (
                "depth,speed_mps\n0,1500\n1,inf\n",
                "c.csv:3: column 2 (speed_mps) is inf",
            ),
        ];
        for (text, expect) in cases {
            let e = parse_csv(text.as_bytes(), "c.csv", 40.0, 35.0)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(expect), "{text:?}: {e}");
        }
    }

    const CNV: &str = "* Sea-Bird SBE 9 Data File:\n\
        * NMEA Latitude = 41 31.50 N\n\
        * NMEA Longitude = 070 40.20 W\n\
        # nquan = 4\n\
        # name 0 = prDM: Pressure, Digiquartz [db]\n\
        # name 1 = t090C: Temperature [ITS-90, deg C]\n\
        # name 2 = sal00: Salinity, Practical [PSU]\n\
        # name 3 = flag:  0.000e+00\n\
        # bad_flag = -9.990e-29\n\
        *END*\n\
        \x20     1.000    18.0000    32.0000  0.000e+00\n\
        \x20     2.000 -9.990e-29    32.0000  0.000e+00\n\
        \x20     3.000    15.0000    32.5000  0.000e+00\n\
        \x20    20.000    10.0000    33.0000  0.000e+00\n\
        \x20    10.000    10.5000    33.0000  0.000e+00\n";

    #[test]
    fn a_cnv_cast_reads_its_header_and_skips_flagged_rows() {
        let c = parse_cnv(CNV.as_bytes(), "c.cnv", None, 0.0, 35.0).unwrap();
        let (lat, lon) = c.position.unwrap();
        assert!(
            (lat - 41.525).abs() < 1e-9 && (lon + 70.67).abs() < 1e-9,
            "{lat} {lon}"
        );
        assert_eq!(c.depth_m.len(), 3);
        assert!((c.depth_m[2] - depth_from_pressure(20.0, 41.525)).abs() < 1e-12);
        assert_eq!(
            c.speed_mps[1],
            sound_speed_mackenzie(15.0, 32.5, depth_from_pressure(3.0, 41.525))
        );
        assert_eq!(c.left_out, 2);
        let e = parse_cnv(b"# name 0 = prDM: p\n1 2\n", "c.cnv", None, 0.0, 35.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no `*END*`"), "{e}");
        let e = parse_cnv(
            CNV.replace("t090C", "cond0").as_bytes(),
            "c.cnv",
            None,
            0.0,
            35.0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no sound speed (sv…) or temperature"), "{e}");
        let e = parse_cnv(
            CNV.replace("32.5000", "x").as_bytes(),
            "c.cnv",
            None,
            0.0,
            35.0,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("c.cnv:13: column 3 (sal00): not a number"),
            "{e}"
        );
    }
}
