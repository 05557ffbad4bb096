//! A campaign's results (`cosim sweep`): one row of metrics per finished run, read from its
//! folder — its `summary.json` flattened ([`flatten`]) and the sweep's measured links per phase
//! from its record ([`measure`]) — written as `runs.csv`; per point, the mean and the 95 %
//! Student-t interval across its seeds ([`Interval`]) as `points.csv`; and the report
//! (`report.html` with one PNG per plotted metric and axis, [`plots`]).

pub mod plots;

use crate::config::sweep::Campaign;
use crate::config::Phase;
use crate::output::record::Record;
use crate::output::report::compare::PhaseFold;
use crate::output::summary::RunReport;
use anyhow::Context;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One finished run's metrics, by name.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMetrics {
    pub run: usize,
    pub point: usize,
    pub seed: u64,
    pub values: BTreeMap<String, f64>,
}

/// Whether the run folder `dir` holds a finished run: a `summary.json` of a run that was not
/// interrupted. A run cut short, or never started, is run again by a sweep.
pub fn finished(dir: &Path) -> bool {
    finished_summary(dir).is_some()
}

/// The `summary.json` of the finished run in `dir`, read once, as JSON ([`finished`]).
fn finished_summary(dir: &Path) -> Option<serde_json::Value> {
    let bytes = std::fs::read(dir.join("summary.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let report = RunReport::from_value(value.clone()).ok()?;
    (!report.interrupted).then_some(value)
}

/// Every number a summary holds, by its key path: objects by key (`network.delivered`), lists
/// of objects by their `name` (`traffic[bulk].throughput_kbps`), else by `src:dst`
/// (`network.links[usv1:usv2].delivered`, `*` for none), else by `a-b`
/// (`pairs[usv1-usv2].los_windows`), else by index; `true`/`false` as 1/0; text and nulls left
/// out.
pub fn flatten(summary: &serde_json::Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    walk(summary, String::new(), &mut out);
    out
}

fn walk(v: &serde_json::Value, path: String, out: &mut BTreeMap<String, f64>) {
    use serde_json::Value;
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.insert(path, x);
            }
        }
        Value::Bool(b) => {
            out.insert(path, f64::from(u8::from(*b)));
        }
        Value::Object(map) => {
            for (k, x) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(x, p, out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                walk(
                    x,
                    format!("{path}[{}]", item_label(x).unwrap_or(i.to_string())),
                    out,
                );
            }
        }
        Value::String(_) | Value::Null => {}
    }
}

/// What names a list's item: its `name`, its `src:dst`, its `a-b`.
fn item_label(item: &serde_json::Value) -> Option<String> {
    let text = |k: &str| item.get(k).and_then(|v| v.as_str());
    if let Some(name) = text("name") {
        return Some(name.to_owned());
    }
    if let Some(src) = text("src") {
        return Some(format!("{src}:{}", text("dst").unwrap_or("*")));
    }
    Some(format!("{}-{}", text("a")?, text("b")?))
}

/// The sweep's measured links in the run folder `dir`'s record, per phase (`all`: the whole
/// run, to `end_s`), as `cosim compare` measures them:
/// `links[SRC:DST].phases[NAME].{throughput_mbps, delay_p50_ms, delay_p95_ms, loss, copies,
/// delivered}` (a delay or loss with nothing to measure is left out).
pub fn measure(
    dir: &Path,
    links: &[String],
    phases: &[Phase],
    end_s: f64,
) -> anyhow::Result<BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    if links.is_empty() {
        return Ok(out);
    }
    let phases: Vec<Phase> = if phases.is_empty() {
        vec![Phase {
            name: "all".into(),
            from_s: 0.0,
            to_s: end_s,
        }]
    } else {
        phases.to_vec()
    };
    let pairs: Vec<(&str, &str)> = links.iter().filter_map(|l| l.split_once(':')).collect();
    let mut folds: Vec<Vec<PhaseFold>> = pairs
        .iter()
        .map(|_| phases.iter().map(PhaseFold::new).collect())
        .collect();
    Record::read_with(dir, &mut |p| {
        for (k, (src, dst)) in pairs.iter().enumerate() {
            if p.src == *src && p.dst.as_deref() == Some(*dst) {
                folds[k].iter_mut().for_each(|f| f.add(&p));
            }
        }
    })
    .with_context(|| format!("{}: the record", dir.display()))?;
    for (link, link_folds) in links.iter().zip(folds) {
        for (phase, fold) in phases.iter().zip(link_folds) {
            let f = fold.finish(phase.to_s.min(end_s.max(phase.from_s)) - phase.from_s);
            let key = |m: &str| format!("links[{link}].phases[{}].{m}", phase.name);
            out.insert(key("copies"), f.copies as f64);
            out.insert(key("delivered"), f.delivered as f64);
            if f.throughput_mbps.is_finite() {
                out.insert(key("throughput_mbps"), f.throughput_mbps);
            }
            for (m, v) in [
                ("delay_p50_ms", f.delay_p50_ms),
                ("delay_p95_ms", f.delay_p95_ms),
                ("loss", f.loss),
            ] {
                if let Some(v) = v {
                    out.insert(key(m), v);
                }
            }
        }
    }
    Ok(out)
}

/// The mean of a point's values across seeds and the half-width of its 95 % confidence
/// interval (Student t with n − 1 degrees of freedom; none with one value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub n: usize,
    pub mean: f64,
    pub half_width: Option<f64>,
}

impl Interval {
    pub fn of(values: &[f64]) -> Option<Interval> {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let half_width = (n > 1).then(|| {
            let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
                .expect("n − 1 ≥ 1 degrees of freedom")
                .inverse_cdf(0.975);
            t * (var / n as f64).sqrt()
        });
        Some(Interval {
            n,
            mean,
            half_width,
        })
    }
}

/// What [`aggregate`] wrote and found.
#[derive(Debug, Clone)]
pub struct Aggregate {
    pub runs: Vec<RunMetrics>,
    /// Runs of the campaign without a finished folder.
    pub missing: Vec<usize>,
    /// Every metric any run has, sorted.
    pub metrics: Vec<String>,
    /// Per point, per metric, its interval across the point's finished runs.
    pub points: Vec<BTreeMap<String, Interval>>,
    pub runs_csv: PathBuf,
    pub points_csv: PathBuf,
}

/// Reads every finished run of `campaign` in its folder `out` and writes `runs.csv` and
/// `points.csv` into `out` (the report is [`plots::report`]'s).
pub fn aggregate(campaign: &Campaign, out: &Path) -> anyhow::Result<Aggregate> {
    let mut runs = Vec::new();
    let mut missing = Vec::new();
    for k in 0..campaign.runs() {
        let dir = campaign.run_dir(out, k);
        let Some(summary) = finished_summary(&dir) else {
            missing.push(k);
            continue;
        };
        let mut values = flatten(&summary);
        let end_s = values.get("sim_seconds").copied().unwrap_or(f64::INFINITY);
        let m = &campaign.sweep.measure;
        values.extend(measure(&dir, &m.links, &m.phases, end_s)?);
        let (point, seed) = campaign.run(k);
        runs.push(RunMetrics {
            run: k,
            point,
            seed,
            values,
        });
    }
    let metrics: Vec<String> = runs
        .iter()
        .flat_map(|r| r.values.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let points: Vec<BTreeMap<String, Interval>> = (0..campaign.points.len())
        .map(|p| {
            let of_point: Vec<&RunMetrics> = runs.iter().filter(|r| r.point == p).collect();
            (metrics.iter())
                .filter_map(|m| {
                    let values: Vec<f64> = of_point
                        .iter()
                        .filter_map(|r| r.values.get(m).copied())
                        .collect();
                    Some((m.clone(), Interval::of(&values)?))
                })
                .collect()
        })
        .collect();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let runs_csv = out.join("runs.csv");
    write_runs(&runs_csv, campaign, &runs, &metrics)?;
    let points_csv = out.join("points.csv");
    write_points(&points_csv, campaign, &points, &metrics)?;
    Ok(Aggregate {
        runs,
        missing,
        metrics,
        points,
        runs_csv,
        points_csv,
    })
}

/// The leading columns of both tables: the point, its label and its axis values.
fn point_columns(campaign: &Campaign) -> Vec<String> {
    let mut head = vec!["point".to_owned()];
    head.extend(campaign.axes.iter().map(|a| a.to_string()));
    head
}

fn point_cells(campaign: &Campaign, p: usize) -> Vec<String> {
    let mut cells = vec![p.to_string()];
    cells.extend(
        campaign
            .axes
            .iter()
            .map(|axis| campaign.points[p].value_text(axis)),
    );
    cells
}

fn write_runs(
    path: &Path,
    campaign: &Campaign,
    runs: &[RunMetrics],
    metrics: &[String],
) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("{}", path.display()))?;
    let mut head = vec!["run".to_owned()];
    head.extend(point_columns(campaign));
    head.push("seed".to_owned());
    head.extend(metrics.iter().cloned());
    w.write_record(&head)?;
    for r in runs {
        let mut row = vec![r.run.to_string()];
        row.extend(point_cells(campaign, r.point));
        row.push(r.seed.to_string());
        row.extend(
            metrics
                .iter()
                .map(|m| r.values.get(m).map_or(String::new(), |v| v.to_string())),
        );
        w.write_record(&row)?;
    }
    w.flush().with_context(|| format!("{}", path.display()))
}

fn write_points(
    path: &Path,
    campaign: &Campaign,
    points: &[BTreeMap<String, Interval>],
    metrics: &[String],
) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("{}", path.display()))?;
    let mut head = point_columns(campaign);
    head.push("runs".to_owned());
    for m in metrics {
        head.push(format!("{m}.mean"));
        head.push(format!("{m}.ci95"));
    }
    w.write_record(&head)?;
    for (p, stats) in points.iter().enumerate() {
        let mut row = point_cells(campaign, p);
        row.push(stats.values().map(|i| i.n).max().unwrap_or(0).to_string());
        for m in metrics {
            let i = stats.get(m);
            row.push(i.map_or(String::new(), |i| i.mean.to_string()));
            row.push(
                i.and_then(|i| i.half_width)
                    .map_or(String::new(), |h| h.to_string()),
            );
        }
        w.write_record(&row)?;
    }
    w.flush().with_context(|| format!("{}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_flattens_to_named_numbers() {
        let v = serde_json::json!({
            "scenario": "s", "sim_seconds": 10.0, "interrupted": false,
            "traffic": [{"name": "bulk", "throughput_kbps": 5.5, "lost_share": null}],
            "network": {"links": [{"src": "a", "dst": "b", "delivered": 3}, {"src": "a", "dst": null, "delivered": 1}]},
            "pairs": [{"a": "a", "b": "b", "los_windows": 7}],
            "air": [{"standard": "80211g", "busy_share": 0.5}],
        });
        let f = flatten(&v);
        let want: BTreeMap<String, f64> = [
            ("sim_seconds", 10.0),
            ("interrupted", 0.0),
            ("traffic[bulk].throughput_kbps", 5.5),
            ("network.links[a:b].delivered", 3.0),
            ("network.links[a:*].delivered", 1.0),
            ("pairs[a-b].los_windows", 7.0),
            ("air[0].busy_share", 0.5),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(f, want);
    }

    #[test]
    fn the_interval_is_student_t_s() {
        // Two values 1 and 3: mean 2, s = √2, t(0.975, 1) = 12.706 → 12.706·√2/√2.
        let i = Interval::of(&[1.0, 3.0]).unwrap();
        assert_eq!(i.mean, 2.0);
        assert!((i.half_width.unwrap() - 12.7062).abs() < 1e-3, "{i:?}");
        // Ten values 0..9: mean 4.5, s = 3.0277, t(0.975, 9) = 2.2622 → 2.1659.
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        let i = Interval::of(&v).unwrap();
        assert!((i.half_width.unwrap() - 2.1659).abs() < 1e-3, "{i:?}");
        assert_eq!(Interval::of(&[4.0]).unwrap().half_width, None);
        assert_eq!(Interval::of(&[]), None);
    }
}
