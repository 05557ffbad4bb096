//! A sweep file (`cosim sweep SWEEP.yaml`): a campaign of runs of one base scenario — axes over
//! any of its keys (their full product) or listed points, each point run once per seed —
//! checked as a scenario is before anything runs.
//!
//! [`load`] reads the file into a [`Campaign`]: the sweep's own keys are typed and checked
//! (located errors, as a scenario's) and its base scenario loaded; [`Campaign::check_runs`]
//! then makes and loads every run's scenario, so that a bad key path or a value the scenario
//! refuses is reported at the sweep file's line that asked for it, with the scenario's own
//! message, before anything runs. A run's scenario is the base scenario's YAML with `set`'s
//! values, then the point's, then the seed written at their key paths ([`KeyPath`]);
//! [`Campaign::scenario`] makes it where the run happens (a child process, a Slurm array task),
//! which checks that run alone.
//!
//! Runs are numbered point-major: run `k` is point `k / seeds` with seed `k % seeds`, in the
//! folder `point-NNN/seed-S` of the campaign's folder.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_yaml::Value;

use super::load::{read_text, typed};
use super::source_map::SourceMap;
use super::{Capture, ConfigError, LoadedScenario, Phase};

/// The most runs (points × seeds) a campaign holds; larger ones are refused before any point
/// is made.
pub const MAX_RUNS: usize = 100_000;

/// A sweep file: a base scenario, what changes between its runs, what is measured and where
/// the campaign runs.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Names the campaign; its folder is `out/sweeps/<name>` unless `out` says otherwise.
    /// Letters, digits, `_` and `-`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    pub name: String,
    /// The base scenario file, relative to the sweep file.
    pub scenario: String,
    /// The campaign's folder, relative to the sweep file (default `out/sweeps/<name>` under
    /// the current directory).
    #[serde(default)]
    pub out: Option<String>,
    /// Values set in every run's scenario before a point's own, by key path (e.g.
    /// `duration_s: 20`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub set: BTreeMap<String, Value>,
    /// Axes, each a key path and its values: the points are their full product, the first
    /// axis varying slowest. Give `axes` or `points`, not both.
    #[serde(default)]
    pub axes: Vec<Axis>,
    /// Listed points instead of a product: each a mapping from key path to value.
    #[serde(default)]
    #[schemars(with = "Vec<BTreeMap<String, serde_json::Value>>")]
    pub points: Vec<BTreeMap<String, Value>>,
    /// The seeds each point runs with: a count N (seeds 1 to N) or a list of distinct seeds.
    /// Default: the base scenario's `seed`, one run per point.
    #[serde(default)]
    pub seeds: Option<Seeds>,
    /// What is measured in each run's record besides its summary.
    #[serde(default)]
    pub measure: Measure,
    /// The metrics the report plots against each axis, named as in the campaign's `runs.csv`
    /// (`*` matches any text, e.g. `traffic[*].throughput_kbps`). Default: every flow's
    /// throughput and lost share, and every measured link's throughput per phase.
    #[serde(default)]
    pub plot: Vec<String>,
    /// The resources of each run as a Slurm array task (`cosim sweep --slurm`).
    #[serde(default)]
    pub slurm: Slurm,
}

/// One axis: a key path of the scenario and the values it takes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// A key path of the scenario: keys joined by `.`, a list's item by its index
    /// (`vehicles[1]`) or by its `name` (`vehicles[usv2]`), e.g.
    /// `links.default.tx_power_dbm` or `vehicles[usv2].motion.speed_mps`.
    pub key: String,
    /// The values, in the order the points take them (at least one, none twice).
    #[schemars(with = "Vec<serde_json::Value>")]
    pub values: Vec<Value>,
}

/// The seeds of a campaign's points.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Seeds {
    /// Seeds 1 to N.
    Count(u32),
    /// These seeds, each once.
    List(Vec<u64>),
}

/// Links measured per phase in each run's record (as `cosim compare` measures them).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// Directed links, `SRC:DST` (vehicle names).
    #[serde(default)]
    pub links: Vec<String>,
    /// Phases, `NAME=FROM-TO` in seconds of sim time; default: the whole run.
    #[serde(default)]
    pub phases: Vec<Phase>,
}

/// What each array task asks Slurm for.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slurm {
    /// The partition (default: the cluster's default).
    #[serde(default)]
    pub partition: Option<String>,
    /// The wall-time limit of one run, `[D-]HH:MM:SS` or minutes.
    #[serde(default = "default_time_limit")]
    pub time_limit: String,
    /// CPUs per run.
    #[serde(default = "one")]
    pub cpus_per_task: u32,
    /// Memory per run, MiB.
    #[serde(default = "default_mem_mb")]
    pub mem_mb: u32,
    /// At most this many runs at once (the array's `%N`); default: as many as Slurm allows.
    #[serde(default)]
    pub max_parallel: Option<u32>,
}

impl Default for Slurm {
    fn default() -> Slurm {
        Slurm {
            partition: None,
            time_limit: default_time_limit(),
            cpus_per_task: 1,
            mem_mb: default_mem_mb(),
            max_parallel: None,
        }
    }
}

fn default_time_limit() -> String {
    "01:00:00".to_owned()
}
fn one() -> u32 {
    1
}
fn default_mem_mb() -> u32 {
    2048
}

impl Sweep {
    /// The JSON Schema of a sweep file (`schema/sweep.schema.json`), as text.
    pub fn schema_text() -> String {
        let mut text = serde_json::to_string_pretty(&schemars::schema_for!(Sweep))
            .expect("a derived JSON schema serializes");
        text.push('\n');
        text
    }
}

/// A key path of a scenario, as an axis names it: `links.default.tx_power_dbm`,
/// `vehicles[1].start.x`, `vehicles[usv2].motion.speed_mps`.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyPath {
    text: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
    /// The list's item whose `name` is this.
    Named(String),
}

impl std::str::FromStr for KeyPath {
    type Err = String;

    fn from_str(s: &str) -> Result<KeyPath, String> {
        let mut segments = Vec::new();
        for part in s.split('.') {
            let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
            if key.is_empty() || key.contains(']') {
                return Err(format!(
                    "{s:?} is not a key path: expected keys joined by `.`, each followed by \
                     any `[INDEX]` or `[NAME]` (e.g. vehicles[usv2].motion.speed_mps)"
                ));
            }
            segments.push(Segment::Key(key.to_owned()));
            while !rest.is_empty() {
                let inner = rest
                    .strip_prefix('[')
                    .and_then(|r| r.split_once(']'))
                    .filter(|(sel, _)| !sel.is_empty() && !sel.contains('['));
                let Some((sel, after)) = inner else {
                    return Err(format!(
                        "{s:?} is not a key path: `{rest}` should be `[INDEX]` or `[NAME]`"
                    ));
                };
                segments.push(match sel.parse::<usize>() {
                    Ok(i) => Segment::Index(i),
                    Err(_) => Segment::Named(sel.to_owned()),
                });
                rest = after;
            }
        }
        Ok(KeyPath {
            text: s.to_owned(),
            segments,
        })
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl KeyPath {
    /// Writes `value` at this path of `root`. A missing last key is added (the scenario's
    /// typed pass then refuses a key it does not know), as are missing mappings on the way to
    /// a key; a list's item must exist. The error names the part of the path that is not there.
    pub fn set(&self, root: &mut Value, value: Value) -> Result<(), String> {
        let mut node = root;
        let mut at = String::new();
        let last = self.segments.len() - 1;
        for (i, seg) in self.segments.iter().enumerate() {
            let here = if at.is_empty() {
                "the scenario".to_owned()
            } else {
                format!("`{at}`")
            };
            node = match seg {
                Segment::Key(k) => {
                    if node.is_null() {
                        *node = Value::Mapping(Default::default());
                    }
                    let map = node
                        .as_mapping_mut()
                        .ok_or_else(|| format!("{here} is not a mapping: it has no key `{k}`"))?;
                    if i == last {
                        map.insert(Value::String(k.clone()), value);
                        return Ok(());
                    }
                    let next_is_key = matches!(self.segments[i + 1], Segment::Key(_));
                    if !map.contains_key(k.as_str()) && next_is_key {
                        map.insert(Value::String(k.clone()), Value::Null);
                    }
                    at = super::source_map::join_key(&at, k);
                    map.get_mut(k.as_str())
                        .ok_or_else(|| format!("{here} has no list `{k}` to pick an item from"))?
                }
                Segment::Index(n) => {
                    let seq = node
                        .as_sequence_mut()
                        .ok_or_else(|| format!("{here} is not a list"))?;
                    let len = seq.len();
                    at = super::source_map::join_index(&at, *n);
                    seq.get_mut(*n).ok_or_else(|| {
                        format!("{here} has {len} items: no item [{n}] (the first is [0])")
                    })?
                }
                Segment::Named(name) => {
                    let seq = node
                        .as_sequence_mut()
                        .ok_or_else(|| format!("{here} is not a list"))?;
                    let names: Vec<String> = seq
                        .iter()
                        .filter_map(|item| item.get("name")?.as_str().map(str::to_owned))
                        .collect();
                    at = format!("{at}[{name}]");
                    let found = seq
                        .iter()
                        .position(|item| item.get("name").and_then(Value::as_str) == Some(name));
                    match found {
                        Some(p) => &mut seq[p],
                        None => {
                            return Err(format!(
                                "{here} has no item named `{name}` (it has: {})",
                                if names.is_empty() {
                                    "no named items".to_owned()
                                } else {
                                    names.join(", ")
                                }
                            ))
                        }
                    }
                }
            };
            if i == last {
                *node = value;
                return Ok(());
            }
        }
        Ok(())
    }
}

/// A point of the campaign: the values its axes (or its listed entry) set.
#[derive(Debug, Clone)]
pub struct Point {
    pub values: Vec<Setting>,
}

/// One value written at one key path of a run's scenario, and where the sweep file asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub key: KeyPath,
    pub value: Value,
    /// The sweep file's key path of the value (`axes[0].values[2]`, `set.duration_s`).
    pub value_at: String,
    /// The sweep file's key path of the key (`axes[0].key`; for `set` and listed points, the
    /// entry's own).
    pub key_at: String,
}

impl Point {
    /// The value the point writes at `key`, if it writes one.
    pub fn value(&self, key: &KeyPath) -> Option<&Value> {
        self.values.iter().find(|s| &s.key == key).map(|s| &s.value)
    }

    /// The same as text for a table's cell (empty where the point does not set `key`).
    pub fn value_text(&self, key: &KeyPath) -> String {
        self.value(key).map_or(String::new(), scalar_text)
    }

    /// `key=value, key=value`, as tables and logs name the point.
    pub fn label(&self) -> String {
        let parts: Vec<String> = (self.values.iter())
            .map(|s| format!("{}={}", s.key, scalar_text(&s.value)))
            .collect();
        parts.join(", ")
    }
}

/// A value as one line of text: a scalar as written, anything else as flow YAML.
pub fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        other => serde_json::to_string(other).unwrap_or_else(|_| format!("{other:?}")),
    }
}

/// A loaded sweep: its runs, each made into a scenario on demand.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub sweep: Sweep,
    /// The sweep file, as given.
    pub file: PathBuf,
    /// The base scenario file (resolved against the sweep file's folder).
    pub base_file: PathBuf,
    /// The axes' key paths, in order (for listed points, every key any point sets, in order
    /// of first appearance).
    pub axes: Vec<KeyPath>,
    pub points: Vec<Point>,
    pub seeds: Vec<u64>,
    base: Value,
    set: Vec<Setting>,
    source: SourceMap,
}

/// Reads and checks the sweep file at `path` and its base scenario; the first problem is
/// returned, located in the sweep file (or in the base scenario, for the base's own).
/// [`Campaign::check_runs`] checks every run's scenario.
pub fn load(path: &Path) -> Result<Campaign, ConfigError> {
    parse_str(&read_text(path)?, path)
}

/// [`load`] of sweep file `text` as if read from `path` (which is not read; its base scenario,
/// relative to it, is).
pub fn parse_str(text: &str, path: &Path) -> Result<Campaign, ConfigError> {
    let (sweep, source) = typed::<Sweep>(
        text,
        path,
        "the sweep file is empty: a sweep has at least `name`, `scenario`, and `axes` or \
         `points` (config/sweeps/tx_power.yaml shows every key)",
    )?;
    let err = |key: &str, message: String| ConfigError::at(path, &source, key, message);
    if sweep.name.is_empty()
        || !(sweep.name.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    {
        return Err(err(
            "name",
            format!(
                "{:?}: must be letters, digits, `_` and `-` (it names a folder)",
                sweep.name
            ),
        ));
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let base_file = dir.join(&sweep.scenario);
    let base_loaded = super::load(&base_file)?;
    let base: Value = serde_yaml::from_str(&read_text(&base_file)?)
        .map_err(|e| ConfigError::whole_file(&base_file, e.to_string()))?;
    let key_path = |key: &str, at: &str| -> Result<KeyPath, ConfigError> {
        let k: KeyPath = key.parse().map_err(|e: String| err(at, e))?;
        if k.segments == [Segment::Key("seed".into())] {
            return Err(err(
                at,
                "`seed` is set by `seeds`, not by a key path".to_owned(),
            ));
        }
        Ok(k)
    };
    let mut set = Vec::new();
    for (key, value) in &sweep.set {
        let at = format!("set.{key}");
        set.push(Setting {
            key: key_path(key, &at)?,
            value: value.clone(),
            value_at: at.clone(),
            key_at: at,
        });
    }
    let (axes, points) = match (sweep.axes.is_empty(), sweep.points.is_empty()) {
        (true, true) => {
            return Err(err(
                "",
                "a sweep needs `axes` (their product makes the points) or `points` (listed)"
                    .to_owned(),
            ))
        }
        (false, false) => {
            return Err(err(
                "points",
                "give `axes` or `points`, not both: the points are the axes' product or a list"
                    .to_owned(),
            ))
        }
        (false, true) => product(&sweep, &key_path, &err)?,
        (true, false) => listed(&sweep, &key_path, &err)?,
    };
    let seeds = match &sweep.seeds {
        None => vec![base_loaded.scenario.seed],
        Some(Seeds::Count(0)) => return Err(err("seeds", "must be at least 1".to_owned())),
        Some(Seeds::Count(n)) if *n as usize > MAX_RUNS => {
            return Err(err(
                "seeds",
                format!("{n} seeds: a campaign runs at most {MAX_RUNS} runs"),
            ))
        }
        Some(Seeds::Count(n)) => (1..=u64::from(*n)).collect(),
        Some(Seeds::List(list)) if list.is_empty() => {
            return Err(err("seeds", "lists no seed: give at least one".to_owned()))
        }
        Some(Seeds::List(list)) => {
            for (j, s) in list.iter().enumerate() {
                if let Some(i) = list[..j].iter().position(|x| x == s) {
                    return Err(err(
                        &format!("seeds[{j}]"),
                        format!("seed {s} is listed twice (seeds[{i}] and seeds[{j}]): each seed runs once per point"),
                    ));
                }
            }
            list.clone()
        }
    };
    if points
        .len()
        .checked_mul(seeds.len())
        .is_none_or(|n| n > MAX_RUNS)
    {
        return Err(err(
            "seeds",
            format!(
                "{} points × {} seeds: a campaign runs at most {MAX_RUNS} runs",
                points.len(),
                seeds.len()
            ),
        ));
    }
    let names: Vec<&str> = (base_loaded.scenario.vehicles.iter())
        .map(|v| v.name.as_str())
        .collect();
    for (i, link) in sweep.measure.links.iter().enumerate() {
        let at = format!("measure.links[{i}]");
        let (src, dst) = link
            .split_once(':')
            .ok_or_else(|| err(&at, format!("{link:?}: expected SRC:DST (vehicle names)")))?;
        for v in [src, dst] {
            if !names.contains(&v) {
                return Err(err(
                    &at,
                    format!(
                        "the base scenario has no vehicle `{v}` (it has: {})",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    let mut seen = std::collections::HashMap::new();
    for (i, p) in sweep.measure.phases.iter().enumerate() {
        if let Some(j) = seen.insert(p.name.clone(), i) {
            return Err(err(
                &format!("measure.phases[{i}]"),
                format!("phase `{}` is named twice (measure.phases[{j}])", p.name),
            ));
        }
    }
    let s = &sweep.slurm;
    if s.cpus_per_task == 0 || s.mem_mb == 0 || s.max_parallel == Some(0) {
        return Err(err(
            "slurm",
            "cpus_per_task, mem_mb and max_parallel must be at least 1".to_owned(),
        ));
    }
    if !valid_time_limit(&s.time_limit) {
        return Err(err(
            "slurm.time_limit",
            format!(
                "{:?}: expected minutes or [D-]HH:MM:SS (e.g. 00:30:00)",
                s.time_limit
            ),
        ));
    }
    Ok(Campaign {
        sweep,
        file: path.to_owned(),
        base_file,
        axes,
        points,
        seeds,
        base,
        set,
        source,
    })
}

type KeyPathOf<'a> = dyn Fn(&str, &str) -> Result<KeyPath, ConfigError> + 'a;
type ErrAt<'a> = dyn Fn(&str, String) -> ConfigError + 'a;

/// The axes' full product, the first axis varying slowest.
fn product(
    sweep: &Sweep,
    key_path: &KeyPathOf,
    err: &ErrAt,
) -> Result<(Vec<KeyPath>, Vec<Point>), ConfigError> {
    let mut axes: Vec<KeyPath> = Vec::new();
    for (i, axis) in sweep.axes.iter().enumerate() {
        let k = key_path(&axis.key, &format!("axes[{i}].key"))?;
        if let Some(j) = axes.iter().position(|a| a == &k) {
            return Err(err(
                &format!("axes[{i}].key"),
                format!("`{k}` is already axes[{j}]'s key"),
            ));
        }
        if axis.values.is_empty() {
            return Err(err(
                &format!("axes[{i}].values"),
                "an axis needs at least one value".to_owned(),
            ));
        }
        for (j, v) in axis.values.iter().enumerate() {
            if let Some(first) = axis.values[..j].iter().position(|x| x == v) {
                return Err(err(
                    &format!("axes[{i}].values[{j}]"),
                    format!(
                        "{} is listed twice (values[{first}] and values[{j}])",
                        scalar_text(v)
                    ),
                ));
            }
        }
        axes.push(k);
    }
    let count = (sweep.axes.iter()).try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    if count.is_none_or(|n| n > MAX_RUNS) {
        return Err(err(
            "axes",
            format!("the axes' product has more than {MAX_RUNS} points: a campaign runs at most {MAX_RUNS}"),
        ));
    }
    let mut points = vec![Point { values: Vec::new() }];
    for (i, (axis, key)) in sweep.axes.iter().zip(&axes).enumerate() {
        points = points
            .into_iter()
            .flat_map(|p| {
                axis.values.iter().enumerate().map(move |(j, v)| {
                    let mut p = p.clone();
                    p.values.push(Setting {
                        key: key.clone(),
                        value: v.clone(),
                        value_at: format!("axes[{i}].values[{j}]"),
                        key_at: format!("axes[{i}].key"),
                    });
                    p
                })
            })
            .collect();
    }
    Ok((axes, points))
}

/// The listed points; the axes are every key they set, in order of first appearance.
fn listed(
    sweep: &Sweep,
    key_path: &KeyPathOf,
    err: &ErrAt,
) -> Result<(Vec<KeyPath>, Vec<Point>), ConfigError> {
    let mut axes: Vec<KeyPath> = Vec::new();
    let mut points: Vec<Point> = Vec::new();
    for (i, entry) in sweep.points.iter().enumerate() {
        if entry.is_empty() {
            return Err(err(
                &format!("points[{i}]"),
                "a point sets at least one key".to_owned(),
            ));
        }
        let mut values = Vec::new();
        for (key, value) in entry {
            let at = format!("points[{i}].{key}");
            let k = key_path(key, &at)?;
            if !axes.contains(&k) {
                axes.push(k.clone());
            }
            values.push(Setting {
                key: k,
                value: value.clone(),
                value_at: at.clone(),
                key_at: at,
            });
        }
        if let Some(j) = points.iter().position(|p| {
            p.values.len() == values.len()
                && p.values
                    .iter()
                    .zip(&values)
                    .all(|(a, b)| a.key == b.key && a.value == b.value)
        }) {
            return Err(err(
                &format!("points[{i}]"),
                format!("the same point as points[{j}]"),
            ));
        }
        points.push(Point { values });
    }
    Ok((axes, points))
}

/// Slurm's `--time`: minutes, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`.
fn valid_time_limit(t: &str) -> bool {
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, t),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit());
    days.is_none_or(digits)
        && rest.split(':').count() <= 3
        && rest.split(':').all(digits)
        && t.bytes().any(|b| b != b'0' && b.is_ascii_digit())
}

impl Campaign {
    /// Loads every run's scenario, as [`Campaign::scenario`] does, and says whether some run
    /// is paced at real time or has live traffic (such runs go one at a time); the first run
    /// refused is the error.
    pub fn check_runs(&self) -> Result<bool, ConfigError> {
        let mut paced = false;
        for k in 0..self.runs() {
            let s = self.scenario(k)?.scenario;
            paced |= s.real_time_factor > 0.0 || s.network.capture == Capture::Tun;
        }
        Ok(paced)
    }

    /// How many runs: points × seeds.
    pub fn runs(&self) -> usize {
        self.points.len() * self.seeds.len()
    }

    /// Run `k`'s point index and seed.
    pub fn run(&self, k: usize) -> (usize, u64) {
        (k / self.seeds.len(), self.seeds[k % self.seeds.len()])
    }

    /// The campaign's folder: `out` of the sweep file (relative to it), or `out/sweeps/<name>`.
    pub fn out_dir(&self) -> PathBuf {
        match &self.sweep.out {
            Some(o) => self.file.parent().unwrap_or(Path::new("")).join(o),
            None => Path::new("out/sweeps").join(&self.sweep.name),
        }
    }

    /// Point `p`'s folder inside the campaign's folder `out`.
    pub fn point_dir(&self, out: &Path, p: usize) -> PathBuf {
        out.join(format!("point-{p:03}"))
    }

    /// Run `k`'s folder inside the campaign's folder `out`.
    pub fn run_dir(&self, out: &Path, k: usize) -> PathBuf {
        let (p, seed) = self.run(k);
        self.point_dir(out, p).join(format!("seed-{seed}"))
    }

    /// Point `p`'s scenario as YAML text: the base with `set`'s values and the point's (the
    /// seed left as the base has it). A campaign's folder keeps it per point, so that a sweep
    /// file changed since its runs is noticed.
    pub fn point_text(&self, p: usize) -> Result<String, ConfigError> {
        let value = self.point_value(p, None)?;
        Ok(serde_yaml::to_string(&value).expect("a YAML value serializes"))
    }

    fn point_value(&self, p: usize, seed: Option<u64>) -> Result<Value, ConfigError> {
        let mut value = self.base.clone();
        let point = &self.points[p];
        for s in self.set.iter().chain(&point.values) {
            s.key.set(&mut value, s.value.clone()).map_err(|e| {
                ConfigError::at(
                    &self.file,
                    &self.source,
                    &s.key_at,
                    format!("`{}`: {e}", s.key),
                )
            })?;
        }
        if let Some(seed) = seed {
            let root = value.as_mapping_mut().ok_or_else(|| {
                ConfigError::whole_file(&self.base_file, "the scenario is not a mapping")
            })?;
            root.insert(Value::String("seed".into()), Value::Number(seed.into()));
        }
        Ok(value)
    }

    /// Run `k`'s scenario, loaded and checked: a problem is reported at the sweep file's key
    /// that made the point (the `set` key it lies under, else the point's first value), with
    /// the point, the seed and the scenario's own message.
    pub fn scenario(&self, k: usize) -> Result<LoadedScenario, ConfigError> {
        let (p, seed) = self.run(k);
        let value = self.point_value(p, Some(seed))?;
        let text = serde_yaml::to_string(&value).expect("a YAML value serializes");
        super::parse_str(&text, &self.base_file).map_err(|e| {
            let point = &self.points[p];
            // The setting the problem lies under (its value was refused, or its key is one
            // the scenario does not have), or above (its path goes through a key the
            // scenario does not have); else the point's first.
            let settings = || point.values.iter().rev().chain(self.set.iter().rev());
            let under = settings().find(|s| {
                let k = s.key.to_string();
                e.key_path == k || super::source_map::is_descendant(&e.key_path, &k)
            });
            let above = || {
                settings()
                    .find(|s| super::source_map::is_descendant(&s.key.to_string(), &e.key_path))
            };
            let unknown_key = e.message.starts_with("unknown field");
            let at = match (under, above()) {
                // The key the setting adds is not one the scenario has.
                (Some(s), _) if unknown_key && e.key_path == s.key.to_string() => s.key_at.as_str(),
                (Some(s), _) => s.value_at.as_str(),
                (None, Some(s)) => s.key_at.as_str(),
                (None, None) => point.values.first().map_or("", |s| s.value_at.as_str()),
            };
            let whose = if e.key_path.is_empty() {
                String::new()
            } else {
                format!("{}: ", e.key_path)
            };
            ConfigError::at(
                &self.file,
                &self.source,
                at,
                format!(
                    "point {p} ({}), seed {seed}: the scenario refuses it: {whose}{}",
                    point.label(),
                    e.message
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the committed schema lives, from the crate's root.
    const SCHEMA_FILE: &str = "schema/sweep.schema.json";

    #[test]
    fn the_committed_schema_is_the_sweep_types_schema() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_FILE);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let current = Sweep::schema_text();
        if std::env::var_os("COSIM_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &current).unwrap();
            return;
        }
        assert!(
            committed == current,
            "{SCHEMA_FILE} is not the schema of the sweep types (config::sweep::Sweep): \
             regenerate it with COSIM_WRITE_SCHEMA=1 cargo test --lib config::sweep"
        );
    }

    fn set(path: &str, yaml: &str, value: Value) -> Result<Value, String> {
        let mut root: Value = serde_yaml::from_str(yaml).unwrap();
        path.parse::<KeyPath>()?.set(&mut root, value)?;
        Ok(root)
    }

    #[test]
    fn a_key_path_reaches_keys_indices_and_named_items() {
        let yaml = "a: {b: 1}\nvehicles: [{name: x, s: 1}, {name: y, s: 2}]\n";
        let v = set("a.b", yaml, 5.into()).unwrap();
        assert_eq!(v["a"]["b"], Value::from(5));
        let v = set("vehicles[y].s", yaml, 7.into()).unwrap();
        assert_eq!(v["vehicles"][1]["s"], Value::from(7));
        let v = set("vehicles[0].s", yaml, 9.into()).unwrap();
        assert_eq!(v["vehicles"][0]["s"], Value::from(9));
        let v = set("c.d", yaml, 3.into()).unwrap();
        assert_eq!(v["c"]["d"], Value::from(3));
        let e = set("vehicles[z].s", yaml, 1.into()).unwrap_err();
        assert!(e.contains("no item named `z` (it has: x, y)"), "{e}");
        let e = set("vehicles[2].s", yaml, 1.into()).unwrap_err();
        assert!(e.contains("has 2 items"), "{e}");
        let e = set("a.b.c", yaml, 1.into()).unwrap_err();
        assert!(e.contains("`a.b` is not a mapping"), "{e}");
        for bad in ["", "a..b", "[0]", "a[", "a[]", "a[0]x", "a]"] {
            assert!(bad.parse::<KeyPath>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn slurm_time_limits() {
        for ok in ["30", "00:30:00", "1-00:00:00", "2-12", "10:00"] {
            assert!(valid_time_limit(ok), "{ok}");
        }
        for bad in ["", "0", "1h", "1:2:3:4", "00:00:00", "a-01:00"] {
            assert!(!valid_time_limit(bad), "{bad}");
        }
    }
}
