//! `cosim sweep`: a sweep file's mistakes located before anything runs; a small campaign over
//! the shipped in-simulation traffic scenario run, aggregated (tables, intervals, report) and
//! resumed after a stop, running only what was missing; one run as a Slurm array task runs it
//! (`--task K`) giving the same summary as the local campaign's.

use crate::common;
use netsim_cosim::config::sweep;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn flows() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/flows.yaml")
}

/// A sweep file over config/flows.yaml with `body` after its name and scenario.
fn sweep_file(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("s.yaml");
    std::fs::write(
        &path,
        format!("name: t\nscenario: {}\n{body}", flows().display()),
    )
    .unwrap();
    path
}

fn error(dir: &Path, body: &str) -> String {
    let path = sweep_file(dir, body);
    sweep::load(&path)
        .and_then(|c| c.check_runs().map(|_| format!("checked {} runs", c.runs())))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_sweep_file_s_mistakes_are_located_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("s.yaml").display().to_string();
    // At `line` of the sweep file, then `rest` (the key path and the message).
    let at = |e: &str, line: usize, rest: &str| {
        assert!(
            e.starts_with(&format!("{file}:{line}:")),
            "not at line {line}: {e}"
        );
        assert!(e.contains(&format!(": {rest}")), "{rest:?} not in {e}");
    };
    // A key the scenario does not have: at the axis's key, with the scenario's own words.
    let e = error(
        d,
        "axes:\n  - key: links.defualt.tx_power_dbm\n    values: [10]\n",
    );
    at(&e, 4, "axes[0].key: point 0");
    assert!(e.contains("unknown field `defualt`"), "{e}");
    // An item that is not there.
    let e = error(
        d,
        "axes:\n  - key: vehicles[usv9].start.x\n    values: [1]\n",
    );
    at(&e, 4, "axes[0].key");
    assert!(
        e.contains("no item named `usv9` (it has: usv1, usv2)"),
        "{e}"
    );
    // Not a key path at all.
    let e = error(d, "axes:\n  - key: vehicles[.x\n    values: [1]\n");
    assert!(
        e.contains("axes[0].key: \"vehicles[.x\" is not a key path"),
        "{e}"
    );
    // An empty axis.
    let e = error(
        d,
        "axes:\n  - key: links.default.tx_power_dbm\n    values: []\n",
    );
    at(&e, 5, "axes[0].values: an axis needs at least one value");
    // A value the scenario refuses: at that value, naming the point.
    let e = error(
        d,
        "axes:\n  - key: vehicles[usv2].motion.speed_mps\n    values: [3, -1]\n",
    );
    at(&e, 5, "axes[0].values[1]: point 1");
    assert!(
        e.contains("vehicles[usv2].motion.speed_mps=-1), seed 42: the scenario refuses it: vehicles[1].motion.speed_mps: must be > 0"),
        "{e}"
    );
    // A seed listed twice.
    let e = error(
        d,
        "axes:\n  - key: links.default.tx_power_dbm\n    values: [10]\nseeds: [1, 2, 1]\n",
    );
    at(&e, 6, "seeds[2]: seed 1 is listed twice");
    // A value listed twice, `seed` as an axis, neither or both of axes and points.
    let e = error(
        d,
        "axes:\n  - key: links.default.tx_power_dbm\n    values: [10, 10]\n",
    );
    assert!(e.contains("axes[0].values[1]: 10 is listed twice"), "{e}");
    let e = error(d, "axes:\n  - key: seed\n    values: [1]\n");
    assert!(e.contains("axes[0].key: `seed` is set by `seeds`"), "{e}");
    let e = error(d, "seeds: 3\n");
    assert!(e.contains("a sweep needs `axes`"), "{e}");
    let e = error(
        d,
        "axes:\n  - key: seed_x\n    values: [1]\npoints:\n  - {duration_s: 2}\n",
    );
    at(&e, 6, "points: give `axes` or `points`, not both");
    // Too many runs, refused before a point is made.
    let e = error(
        d,
        "axes:\n  - key: duration_s\n    values: [1]\nseeds: 200000\n",
    );
    at(
        &e,
        6,
        "seeds: 200000 seeds: a campaign runs at most 100000 runs",
    );
    let values: Vec<String> = (1..=20).map(|v| v.to_string()).collect();
    let axis = |key: &str| format!("  - key: {key}\n    values: [{}]\n", values.join(", "));
    let e = error(
        d,
        &format!(
            "axes:\n{}{}{}{}",
            axis("a"),
            axis("b"),
            axis("c"),
            axis("d")
        ),
    );
    at(&e, 3, "axes: the axes' product has more than 100000 points");
    // The sweep's own keys, as a scenario's.
    let e = error(d, "axes: []\nsped: 1\n");
    at(&e, 4, "sped: unknown field `sped`");
    let e = error(
        d,
        "points: [{duration_s: 2}]\nmeasure: {links: [\"usv1:usv7\"]}\n",
    );
    assert!(
        e.contains("measure.links[0]: the base scenario has no vehicle `usv7`"),
        "{e}"
    );
    // A campaign that is right: 2 points × 3 seeds.
    let path = sweep_file(
        d,
        "points:\n  - {duration_s: 2}\n  - duration_s: 3\n    vehicles[usv2].motion.speed_mps: 4\nseeds: 3\n",
    );
    let c = sweep::load(&path).unwrap();
    assert_eq!((c.runs(), c.seeds.clone()), (6, vec![1, 2, 3]));
    let loaded = c.scenario(5).unwrap();
    assert_eq!((loaded.scenario.seed, loaded.scenario.duration_s), (3, 3.0));
    assert!(!c.check_runs().unwrap(), "no run is paced");
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn a_campaign_runs_aggregates_and_resumes_after_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = sweep_file(
        d,
        "set: {duration_s: 2}\naxes:\n  - key: links.default.tx_power_dbm\n    values: [10, 23]\nseeds: 3\nmeasure: {links: [\"usv2:usv1\"]}\n",
    );
    let out = d.join("campaign");
    let run_dir = |k: usize| out.join(format!("point-{:03}/seed-{}", k / 3, k % 3 + 1));
    // One at a time; stopped (SIGINT, as Ctrl-C) once the first run has finished.
    let mut child = Command::new(COSIM)
        .args(["sweep", file.to_str().unwrap(), "--jobs", "1", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !run_dir(0).join("summary.json").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "the first run never finished"
        );
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let text = common::output_text(&o);
    assert_eq!(o.status.code(), Some(130), "{text}");
    let done: Vec<usize> = (0..6)
        .filter(|&k| netsim_cosim::output::campaign::finished(&run_dir(k)))
        .collect();
    assert!(!done.is_empty() && done.len() < 6, "{done:?}\n{text}");
    let stamps: Vec<_> = done
        .iter()
        .map(|&k| modified(&run_dir(k).join("summary.json")))
        .collect();
    // Again, two at a time: only the runs missing are run.
    let o = Command::new(COSIM)
        .args(["sweep", file.to_str().unwrap(), "--jobs", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "2 points × 3 seeds = 6 runs, {} finished earlier, {} to run",
            done.len(),
            6 - done.len()
        )),
        "{text}"
    );
    for (k, stamp) in done.iter().zip(stamps) {
        assert_eq!(
            modified(&run_dir(*k).join("summary.json")),
            stamp,
            "run {k} ran again"
        );
    }
    // One row per run, one per point with its interval over 3 seeds.
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 7, "{runs}");
    let mut points = csv::Reader::from_path(out.join("points.csv")).unwrap();
    let head = points.headers().unwrap().clone();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} in {head:?}"))
    };
    let (mean, ci, power) = (
        col("traffic[bulk].throughput_kbps.mean"),
        col("traffic[bulk].throughput_kbps.ci95"),
        col("links.default.tx_power_dbm"),
    );
    let col_phase = col("links[usv2:usv1].phases[all].throughput_mbps.mean");
    let rows: Vec<csv::StringRecord> = points.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    for (row, dbm) in rows.iter().zip(["10", "23"]) {
        assert_eq!(&row[power], dbm);
        assert_eq!(&row[col("runs")], "3");
        let m: f64 = row[mean].parse().unwrap();
        let h: f64 = row[ci].parse().unwrap();
        assert!(m > 1000.0 && h >= 0.0 && h < m, "{row:?}");
        let link: f64 = row[col_phase].parse().unwrap();
        assert!(link > 1.0, "{row:?}");
    }
    // The report shows a plot per metric, each a PNG.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let images: Vec<&str> = html
        .split("<img src=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert!(images.len() >= 2, "{html}");
    for image in images {
        let bytes = std::fs::read(out.join(image)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{image}");
    }
    // Run 4 once more as an array task runs it: the same summary.
    let again = d.join("again");
    let o = Command::new(COSIM)
        .args(["sweep", file.to_str().unwrap(), "--task", "4", "--out"])
        .arg(&again)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    assert_eq!(
        common::summary_without_wall_clock(&again.join("point-001/seed-2")),
        common::summary_without_wall_clock(&run_dir(4))
    );
    // The sweep file changed: its points' runs are not mixed with the old ones.
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("[10, 23]", "[12, 23]"),
    )
    .unwrap();
    let o = Command::new(COSIM)
        .args(["sweep", file.to_str().unwrap(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = common::output_text(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("was run from another scenario than the sweep file makes now"),
        "{text}"
    );
}
