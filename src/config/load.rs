//! Loading a scenario: reading the file, the YAML pre-pass, the typed pass, the rules, the
//! terrain, and the [`LoadedScenario`] that holds the result.
//!
//! # Errors
//!
//! Every problem is a [`ConfigError`] that names the file, the key path (the syntax of
//! `serde_path_to_error`: `vehicles[1].motion.waypoints[2]`), the 1-based line (and column
//! when known) and a message, displayed as
//!
//! ```text
//! config/default.yaml:42:9: vehicles[1].motion.speed_mps: must be > 0 (got -1)
//! ```
//!
//! Parts that are unknown are left out (`file: message` for an unreadable file). Lines come
//! from serde_yaml's own location where it has one, and otherwise from a [`SourceMap`] built
//! from the raw text. Checks made by other modules after loading use
//! [`LoadedScenario::error_at`] so that they report the same way.
//!
//! Before the typed pass, a file with no document (nothing but comments, blank lines, `---`
//! or a null) is reported as empty, and a key written twice in one mapping at its second
//! occurrence, naming the first one's line. A tab in indentation is reported at the tab.
//!
//! Loading stops at the first problem, so one run reports one error: syntax, then types,
//! unknown keys and the values parsed with them (addresses, times, endpoints, a simulator
//! kind in the role it can take), then the semantic rules (one file per section under
//! `rules/`), checked in the order of the file's sections (scenario keys, `world`,
//! `vehicles` one by one, `links`, `simulators`, ...), then the world extent, then the logged
//! tracks (errors name the log and its line; each track's vehicle starts where its log is at
//! its offset), then the CTD casts (errors name the cast's file and line), then the terrain: reading its grid (errors name the terrain file, and for CSV
//! its line and column), every start, waypoint and track sample against it, and the reach of
//! `world.water.profile`.
//!
//! Scenario files larger than [`MAX_FILE_BYTES`] (16 MiB) are rejected before parsing, and
//! collections nested more than [`MAX_NESTING`] (128) levels deep before the typed pass (which
//! would take time quadratic in the depth); alias expansion is bounded by serde_yaml's
//! repetition limit. Loading time and memory are linear in the input.
//!
//! [`MAX_NESTING`]: super::MAX_NESTING

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cast::{self, CastProfile};
use super::endpoint;
use super::geo::LocalFrame;
use super::rules;
use super::source_map::{self, NodeKind, SourceMap};
use super::track::{self, TrackEnd, TrackLog};
use super::{
    AuvClientSettings, ConfigError, GazeboSettings, HeightGrid, Motion, Ns3Settings, Pose,
    Scenario, Terrain, Vehicle,
};
use crate::clock::Schedule;

/// Largest scenario file accepted, in bytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A scenario that parsed and validated, with its terrain read and what is needed to report
/// later problems.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    pub scenario: Scenario,
    /// The scenario file, as given.
    pub file: PathBuf,
    /// Lines of every key path of the file.
    pub source: SourceMap,
    /// `world.terrain` as read (every start and waypoint is inside it and above its surface).
    pub terrain: Arc<HeightGrid>,
}

impl LoadedScenario {
    /// The vehicle named `name` and its index; an error naming the file and the vehicles there
    /// are, for a name the scenario does not have.
    pub fn vehicle_named(&self, name: &str) -> anyhow::Result<(usize, &Vehicle)> {
        let vehicles = &self.scenario.vehicles;
        vehicles
            .iter()
            .enumerate()
            .find(|(_, v)| v.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = vehicles.iter().map(|v| v.name.as_str()).collect();
                anyhow::anyhow!(
                    "{} has no vehicle {name:?} (its vehicles: {})",
                    self.file.display(),
                    names.join(", ")
                )
            })
    }

    /// A path the scenario gives, relative to the scenario file's folder unless absolute.
    pub fn relative(&self, path: &str) -> PathBuf {
        match self.file.parent() {
            Some(dir) => dir.join(path),
            None => PathBuf::from(path),
        }
    }

    /// `viewer` with its TLS files relative to the scenario's folder, as the viewer opens them.
    pub fn viewer_settings(&self) -> super::ViewerSettings {
        let mut v = self.scenario.viewer.clone();
        if let Some(t) = &mut v.tls {
            t.cert_file = self.relative(&t.cert_file.to_string_lossy());
            t.key_file = self.relative(&t.key_file.to_string_lossy());
        }
        v
    }

    /// The run's windows, from `window_ms` and `duration_s`.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.scenario.window_ms, self.scenario.duration_s)
    }

    /// Sets W (a `window_ms` override, e.g. a node parameter) under the file's rules: W finite
    /// and positive, the run a whole number of windows (as `duration_s` in the file, see
    /// [`Scenario::duration_s`]) and `simulators.channel_interval_ms` a whole multiple of W. The
    /// error says which rule.
    pub fn set_window_ms(&mut self, window_ms: f64) -> Result<(), String> {
        if !(window_ms.is_finite() && window_ms > 0.0) {
            return Err(format!("window_ms = {window_ms}: must be > 0"));
        }
        rules::whole_windows(window_ms, self.scenario.duration_s)?;
        if let Some(c) = self.scenario.simulators.channel_interval_ms {
            rules::channel_interval_in_windows(c, window_ms)
                .map_err(|e| format!("simulators.channel_interval_ms = {c} ms: {e}"))?;
        }
        self.scenario.window_ms = window_ms;
        Ok(())
    }

    /// Sets the run's length (a `duration_s` override: `cosim run --duration-s`, `cosim soak`)
    /// under the file's rules: finite, > 0, a whole number of windows (at least one; see
    /// [`Scenario::duration_s`]), and after every program's `start_s`. The error says which
    /// rule, and which program.
    pub fn set_duration_s(&mut self, duration_s: f64) -> Result<(), String> {
        let s = &self.scenario;
        if !(duration_s.is_finite() && duration_s > 0.0) {
            return Err(format!("duration {duration_s} s: must be > 0"));
        }
        if duration_s * 1000.0 < s.window_ms {
            return Err(format!(
                "duration {duration_s} s: shorter than one window ({} ms)",
                s.window_ms
            ));
        }
        rules::whole_windows(s.window_ms, duration_s)?;
        if let Some(p) = s.programs.iter().find(|p| p.start_s >= duration_s) {
            return Err(format!(
                "duration {duration_s} s: program {} starts at {} s, after the run would end",
                p.name, p.start_s
            ));
        }
        self.scenario.duration_s = duration_s;
        Ok(())
    }

    /// An error at `key_path` of this scenario, for checks made after loading, e.g.
    /// `loaded.error_at("vehicles[1].motion.waypoints[3]", "waypoint is below the terrain")`.
    /// The line is the key's, or its nearest ancestor's if the key is not written in the file.
    pub fn error_at(&self, key_path: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::at(&self.file, &self.source, key_path, message)
    }

    /// Checks that every vehicle's start and every patrol waypoint lies inside the world's
    /// horizontal extent `[-half_extent[0], half_extent[0]] × [-half_extent[1], half_extent[1]]`
    /// (metres, centred on the origin).
    pub fn check_inside_world(&self, half_extent: [f64; 2]) -> Result<(), ConfigError> {
        rules::check_inside_world(&self.checks(), half_extent)
    }

    /// Checks `settings` and the links for ns-3 as the network simulator (the rules of
    /// `simulators.network: {kind: ns3}`): loading runs it for a scenario that chooses ns-3, a
    /// coordinator for one switched to ns-3 on the command line.
    pub fn check_ns3(&self, settings: &Ns3Settings) -> Result<(), ConfigError> {
        let cx = self.checks();
        rules::ns3_settings(&cx, settings)?;
        rules::ns3_links(&cx)
    }

    /// Checks `settings` for Gazebo as the physics simulator (the rules of
    /// `simulators.physics: {kind: gazebo}`): loading runs it for a scenario that chooses
    /// Gazebo, a coordinator for one switched to Gazebo on the command line.
    pub fn check_gazebo(&self, settings: &GazeboSettings) -> Result<(), ConfigError> {
        rules::gazebo_settings(&self.checks(), settings)
    }

    /// Checks `settings` for an AUV interface simulator as the physics simulator: loading runs
    /// it for a scenario that chooses one, a coordinator for one switched on the command line.
    pub fn check_auv_client(&self, settings: &AuvClientSettings) -> Result<(), ConfigError> {
        rules::auv_client_settings(&self.checks(), settings)
    }

    /// Checks that no simulator is reached in plaintext on another host unless
    /// `simulators.insecure_peers` allows it: loading runs it for the scenario's simulators, a
    /// coordinator for those switched on the command line.
    pub fn check_peers(&self) -> Result<(), ConfigError> {
        rules::plaintext_peers(&self.checks())
    }

    /// The sound-speed profile for beam tracing, `(depths_m, speeds_mps)`, depths from 0
    /// strictly increasing to at least the terrain's deepest point, Mackenzie applied where
    /// `world.water.profile` gives temperatures (see [`Water::sound_speed_profile`]).
    ///
    /// [`Water::sound_speed_profile`]: super::Water::sound_speed_profile
    pub fn sound_speed_profile(&self) -> (Vec<f64>, Vec<f64>) {
        self.scenario
            .world
            .water
            .sound_speed_profile(self.deepest_m())
    }

    /// The terrain's deepest point, m below the surface (0 if it is all above the water).
    pub fn deepest_m(&self) -> f64 {
        rules::deepest_m(&self.terrain)
    }

    fn checks(&self) -> rules::Ctx<'_> {
        rules::Ctx {
            scenario: &self.scenario,
            file: &self.file,
            source: &self.source,
        }
    }
}

/// Reads, parses and validates the scenario file at `path` and reads its terrain (terrain file
/// paths are resolved relative to its directory).
pub fn load(path: &Path) -> Result<LoadedScenario, ConfigError> {
    parse_str(&read_text(path)?, path)
}

/// Reads a YAML file of at most [`MAX_FILE_BYTES`] as UTF-8 text, the error naming the file.
pub(super) fn read_text(path: &Path) -> Result<String, ConfigError> {
    let file = std::fs::File::open(path)
        .map_err(|e| ConfigError::whole_file(path, format!("cannot open: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ConfigError::whole_file(path, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path));
    }
    String::from_utf8(bytes).map_err(|e| {
        ConfigError::whole_file(
            path,
            format!("not valid UTF-8 (at byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Parses and validates scenario `text` as if read from `file` (which is not read; terrain file
/// paths are resolved relative to its parent directory and must exist) and reads its terrain.
pub fn parse_str(text: &str, file: &Path) -> Result<LoadedScenario, ConfigError> {
    let (mut scenario, source) = typed::<Scenario>(
        text,
        file,
        "the scenario file is empty (nothing but comments, blank lines or a null): a \
         scenario is a mapping with at least `name`, `window_ms`, `duration_s`, `world` and \
         `vehicles` (config/default.yaml shows every key)",
    )?;
    resolve_terrain_path(&mut scenario, file);
    let cx = rules::Ctx {
        scenario: &scenario,
        file,
        source: &source,
    };
    rules::validate(&cx)?;
    let tracks = read_tracks(&cx)?;
    let casts = read_casts(&cx)?;
    place_tracks(&mut scenario, tracks);
    if let Some(list) = &mut scenario.world.water.casts {
        for (c, (read, at)) in list.iter_mut().zip(casts) {
            c.read = Some(Arc::new(read));
            c.at = Some(at);
        }
    }
    let cx = rules::Ctx {
        scenario: &scenario,
        file,
        source: &source,
    };
    let terrain = read_terrain(&cx)?;
    rules::check_against_terrain(&cx, &terrain)?;
    rules::check_profile_reaches_terrain(&cx, &terrain)?;
    Ok(LoadedScenario {
        scenario,
        file: file.to_owned(),
        source,
        terrain: Arc::new(terrain),
    })
}

/// The YAML pre-pass and the typed pass of a configuration file's `text` (a scenario, a
/// sweep): its size, a syntax error, an empty document (reported with `empty`), a key written
/// twice, then the typed value and where its keys are written.
pub(super) fn typed<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &Path,
    empty: &str,
) -> Result<(T, SourceMap), ConfigError> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(file));
    }
    let source = SourceMap::parse(text);
    if let Some((line, column, message)) = source.unreadable(text) {
        return Err(ConfigError {
            file: file.to_owned(),
            key_path: String::new(),
            line: Some(line),
            column: Some(column),
            message,
        });
    }
    if source.is_empty_document() {
        return Err(ConfigError::whole_file(file, empty));
    }
    if let Some(d) = source.duplicate() {
        return Err(ConfigError {
            file: file.to_owned(),
            key_path: d.key_path.clone().unwrap_or_default(),
            line: Some(d.line),
            column: Some(d.column),
            message: format!(
                "duplicate key `{}` (first written at line {}): a key may appear once per mapping",
                d.key, d.first_line
            ),
        });
    }
    let value = deserialize(text, file, &source)?;
    Ok((value, source))
}

/// Reads `world.terrain` into its grid; a problem is located at the terrain (its `path` for
/// a file) and names the file's own line where it has one.
fn read_terrain(cx: &rules::Ctx) -> Result<HeightGrid, ConfigError> {
    let s = cx.scenario;
    HeightGrid::from_config(&s.world.terrain, s.seed, &s.world.origin).map_err(|e| {
        let key = match s.world.terrain {
            Terrain::Procedural { .. } => "world.terrain",
            Terrain::Png { .. }
            | Terrain::Csv { .. }
            | Terrain::AsciiGrid { .. }
            | Terrain::Geotiff { .. }
            | Terrain::Netcdf { .. } => "world.terrain.path",
        };
        cx.err(key, e.to_string())
    })
}

/// Reads every track's log (relative to the scenario file); a problem is located at the
/// track's `file` and names the log's own line where it has one, and an `offset_s` at or past
/// the log's end at `offset_s`.
fn read_tracks(cx: &rules::Ctx) -> Result<Vec<Option<TrackLog>>, ConfigError> {
    let dir = cx.file.parent().unwrap_or(Path::new(""));
    let s = cx.scenario;
    let mut logs = Vec::with_capacity(s.vehicles.len());
    for (i, v) in s.vehicles.iter().enumerate() {
        let Motion::Track(t) = &v.motion else {
            logs.push(None);
            continue;
        };
        let key = |k: &str| format!("vehicles[{i}].motion.{k}");
        let log = track::read(&dir.join(&t.file), t, &s.world.origin)
            .map_err(|e| cx.err(&key("file"), e.to_string()))?;
        if t.offset_s >= log.duration_s() {
            return Err(cx.err(
                &key("offset_s"),
                format!(
                    "must be before the log's last sample, {:.3} s after its first (got {})",
                    log.duration_s(),
                    t.offset_s
                ),
            ));
        }
        logs.push(Some(log));
    }
    Ok(logs)
}

/// Reads every cast of `world.water.casts` (relative to the scenario file) and finds where it
/// was taken in the local frame; a problem is located at the cast's `file` and names the
/// file's own line where it has one, a cast placed nowhere at the cast.
fn read_casts(cx: &rules::Ctx) -> Result<Vec<(CastProfile, [f64; 2])>, ConfigError> {
    let dir = cx.file.parent().unwrap_or(Path::new(""));
    let s = cx.scenario;
    let frame = LocalFrame::new(&s.world.origin);
    let mut out = Vec::new();
    for (i, c) in s.world.water.casts.iter().flatten().enumerate() {
        let key = format!("world.water.casts[{i}]");
        let read = cast::read(
            &dir.join(&c.file),
            c.lat_deg,
            s.world.origin.lat_deg,
            s.world.water.salinity_ppt,
        )
        .map_err(|e| cx.err(&format!("{key}.file"), e.to_string()))?;
        let geo = c.lat_deg.zip(c.lon_deg).or(read.position);
        let at = match (geo, c.x.zip(c.y)) {
            (_, Some((x, y))) => [x, y],
            (Some((lat, lon)), None) => {
                let p = frame.from_lat_lon_depth(lat, lon, 0.0);
                [p.x, p.y]
            }
            (None, None) => {
                return Err(cx.err(
                    &key,
                    format!(
                        "where was it taken? give lat_deg and lon_deg, or x and y ({} gives no \
                         NMEA position in its header)",
                        c.file
                    ),
                ))
            }
        };
        out.push((read, at));
    }
    Ok(out)
}

/// Gives each track its log and its vehicle the start pose the log has at `offset_s`; a track
/// that ends the run (`at_end: end_run`) cuts `duration_s` to its log's end, in whole windows.
fn place_tracks(scenario: &mut Scenario, logs: Vec<Option<TrackLog>>) {
    let window_s = scenario.window_ms / 1e3;
    for (v, log) in scenario.vehicles.iter_mut().zip(logs) {
        let (Motion::Track(t), Some(log)) = (&mut v.motion, log) else {
            continue;
        };
        let log = Arc::new(log);
        let (position, heading_deg) = track::pose_at(&log, t.offset_s);
        v.start_pose = Some(Pose {
            x: position[0],
            y: position[1],
            z: position[2],
            heading_deg,
        });
        if t.at_end == TrackEnd::EndRun {
            let left = log.duration_s() - t.offset_s;
            let windows = ((left / window_s) + 1e-9).floor().max(1.0);
            scenario.duration_s = scenario.duration_s.min(windows * window_s);
        }
        t.log = Some(log);
    }
}

fn too_large(file: &Path) -> ConfigError {
    ConfigError::whole_file(
        file,
        format!(
            "scenario file is larger than {} MiB",
            MAX_FILE_BYTES / (1024 * 1024)
        ),
    )
}

fn resolve_terrain_path(scenario: &mut Scenario, file: &Path) {
    let dir = file.parent().unwrap_or(Path::new(""));
    match &mut scenario.world.terrain {
        Terrain::Png { path, .. }
        | Terrain::Csv { path, .. }
        | Terrain::AsciiGrid { path, .. }
        | Terrain::Geotiff { path, .. }
        | Terrain::Netcdf { path, .. } => {
            *path = dir.join(&*path).to_string_lossy().into_owned();
        }
        Terrain::Procedural { .. } => {}
    }
}

/// Typed deserialisation, with errors located by key path and line.
fn deserialize<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &Path,
    source: &SourceMap,
) -> Result<T, ConfigError> {
    let de = serde_yaml::Deserializer::from_str(text);
    let err = match serde_path_to_error::deserialize::<_, T>(de) {
        Ok(scenario) => return Ok(scenario),
        Err(err) => err,
    };
    // A tab in indentation: the typed pass's parser stops at it or after it, with a message
    // that does not say why (and the key path it was in); the source map's scanner names the
    // tab itself. An error of the typed pass before the tab is that error.
    let before_the_tab = |tab_line: usize| {
        err.inner()
            .location()
            .is_some_and(|l| l.line() > 0 && l.line() < tab_line)
    };
    if let Some((line, column, info)) = source.tab_error(text).filter(|t| !before_the_tab(t.0)) {
        return Err(ConfigError {
            file: file.to_owned(),
            key_path: String::new(),
            line: Some(line),
            column: Some(column),
            message: format!("tabs cannot indent YAML: use spaces (scanner: {info})"),
        });
    }
    let key_path = key_path_of(err.path());
    let inner = err.into_inner();
    let location = inner.location();
    let message = bare_message(&inner.to_string(), location.as_ref());
    Err(locate(file, source, key_path, location, message))
}

/// The key path of a `serde_path_to_error` path, cut before any unknown segment.
fn key_path_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out = source_map::join_index(&out, *index),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out = source_map::join_key(&out, key)
            }
            Segment::Unknown => break,
        }
    }
    out
}

/// serde_yaml's message without its own location suffix and path prefix (we print both).
fn bare_message(full: &str, location: Option<&serde_yaml::Location>) -> String {
    let mut msg = full.to_owned();
    if let Some(loc) = location {
        let suffix = format!(" at line {} column {}", loc.line(), loc.column());
        if let Some(i) = msg.find(&suffix) {
            msg.replace_range(i..i + suffix.len(), "");
        }
    }
    // serde_yaml prefixes messages with its own path (`vehicles[0].motion: ...`).
    if let Some((prefix, rest)) = msg.split_once(": ") {
        let path_like = !prefix.is_empty()
            && prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'));
        if path_like {
            msg = rest.to_owned();
        }
    }
    msg
}

/// Builds the error for a failed typed pass, improving the key path and line with the
/// source map where serde cannot see (inside internally tagged enums, serde buffers the
/// mapping, so paths stop at the enum and serde_yaml's location is missing or points at the
/// mapping's start).
fn locate(
    file: &Path,
    source: &SourceMap,
    mut key_path: String,
    location: Option<serde_yaml::Location>,
    message: String,
) -> ConfigError {
    if let Some(refined) = refine(source, &key_path, &message) {
        key_path = refined;
        let (line, column) = source.nearest(&key_path).unzip();
        return ConfigError {
            file: file.to_owned(),
            key_path,
            line,
            column,
            message,
        };
    }
    let known = source.nearest(&key_path);
    let (line, column) = match (location, known) {
        // Inside tagged enums serde_yaml may point at an enclosing mapping's start, before
        // the key itself.
        (Some(loc), Some((line, _))) if loc.line() > 0 && loc.line() < line => known.unzip(),
        (Some(loc), _) if loc.line() > 0 => (Some(loc.line()), Some(loc.column())),
        _ => known.unzip(),
    };
    ConfigError {
        file: file.to_owned(),
        key_path,
        line,
        column,
        message,
    }
}

/// A more precise key path below `key_path` for `message`, if the source map can tell.
fn refine(source: &SourceMap, key_path: &str, message: &str) -> Option<String> {
    // `unknown field `foo`, expected ...`: the key path names the enclosing mapping.
    if let Some(field) = backticked_after(message, "unknown field `") {
        let candidate = source_map::join_key(key_path, field);
        if source.contains(&candidate) && key_path_is_not(key_path, field) {
            return Some(candidate);
        }
    }
    // A simulator kind in the wrong role: point at its `kind`.
    if endpoint::WrongRole::is_message(message) {
        let candidate = source_map::join_key(key_path, "kind");
        if source.contains(&candidate) {
            return Some(candidate);
        }
    }
    // `unknown variant `foo``: point at the tag.
    if message.starts_with("unknown variant `") {
        for tag in ["kind", "model"] {
            let candidate = source_map::join_key(key_path, tag);
            if source.contains(&candidate) {
                return Some(candidate);
            }
        }
    }
    // Only inside a tagged mapping do serde's paths stop short of the culprit.
    if !(source.contains(&source_map::join_key(key_path, "kind"))
        || source.contains(&source_map::join_key(key_path, "model")))
    {
        return None;
    }
    let wanted = if let Some(rest) = message.strip_prefix("invalid type: ") {
        let unexpected = rest.split(", expected").next().unwrap_or("");
        Wanted::parse(unexpected)?
    } else if let Some(rest) = message.strip_prefix("invalid length ") {
        Wanted::Length(rest.split(',').next()?.trim().parse().ok()?)
    } else if let Some(rest) = message.strip_prefix("invalid value: ") {
        Wanted::parse(rest.split(", expected").next().unwrap_or(""))?
    } else if let Some(text) = quoted_prefix(message) {
        // A value parsed while typing (an endpoint, an address) quotes the text it rejects.
        Wanted::Text(text.to_owned())
    } else {
        return None;
    };
    let matches: Vec<&str> = source
        .descendants(key_path)
        .into_iter()
        .filter(|(_, e)| wanted.matches(&e.kind))
        .map(|(k, _)| k)
        .collect();
    // A list of the wrong length may contain lists of the same length: keep the innermost.
    let innermost: Vec<&str> = matches
        .iter()
        .filter(|m| {
            !matches
                .iter()
                .any(|other| source_map::is_descendant(other, m))
        })
        .copied()
        .collect();
    match innermost.as_slice() {
        [only] => Some((*only).to_owned()),
        _ => None,
    }
}

fn key_path_is_not(key_path: &str, field: &str) -> bool {
    !(key_path == field || key_path.ends_with(&format!(".{field}")))
}

/// The text of a message that starts with a quoted string (`"udp://x" must start ...`), if
/// it has no escapes.
fn quoted_prefix(message: &str) -> Option<&str> {
    let text = message.strip_prefix('"')?.split('"').next()?;
    (!text.contains('\\') && message.len() > text.len() + 1).then_some(text)
}

fn backticked_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(prefix)?;
    rest.split('`').next()
}

/// The offending value named by a serde "invalid type/value/length" message.
enum Wanted {
    Text(String),
    Sequence,
    Mapping,
    Length(usize),
}

impl Wanted {
    fn parse(unexpected: &str) -> Option<Wanted> {
        if let Some(s) = unexpected.strip_prefix("string ") {
            return Some(Wanted::Text(s.trim_matches('"').to_owned()));
        }
        for prefix in ["integer ", "floating point ", "boolean "] {
            if let Some(s) = unexpected.strip_prefix(prefix) {
                return Some(Wanted::Text(s.trim_matches('`').to_owned()));
            }
        }
        match unexpected {
            "sequence" => Some(Wanted::Sequence),
            "map" => Some(Wanted::Mapping),
            _ => None,
        }
    }

    fn matches(&self, kind: &NodeKind) -> bool {
        match (self, kind) {
            (Wanted::Text(t), NodeKind::Scalar(s)) => {
                s == t
                    || (s.parse::<f64>().ok())
                        .zip(t.parse::<f64>().ok())
                        .is_some_and(|(a, b)| a == b)
            }
            (Wanted::Sequence, NodeKind::Sequence(_)) => true,
            (Wanted::Mapping, NodeKind::Mapping(_)) => true,
            (Wanted::Length(n), NodeKind::Sequence(m)) => n == m,
            _ => false,
        }
    }
}
