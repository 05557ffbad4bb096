//! What a run prints and leaves at its end (`summary.json`, the report, the tables), `cosim
//! report` and `cosim compare`.

use super::EXIT_INTERRUPTED;
use crate::net::ledger::LedgerSummary;
use crate::output::report;
use crate::output::summary::RunReport;
use crate::sim::air::AirSummary;
use crate::sim::flows::FlowSummary;
use anyhow::Context;
use std::path::Path;

/// Creates `dir` (and its parents), the error naming it.
fn create_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// Writes `bytes` to `path`, the error naming it.
fn write(path: &Path, bytes: impl AsRef<[u8]>) -> anyhow::Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `summary.json` next to the timeline, the report from the run's record
/// (`report/`), prints the summary tables, returns the exit code.
pub fn report(report: &RunReport, out_dir: &Path) -> anyhow::Result<i32> {
    finish(report, out_dir, true)
}

/// As [`report`] without the run's own report (`report/`: plots, series, report.html) — a
/// campaign's run, whose report is the campaign's; `cosim report <run folder>` makes it later.
pub fn report_without_plots(report: &RunReport, out_dir: &Path) -> anyhow::Result<i32> {
    finish(report, out_dir, false)
}

fn finish(report: &RunReport, out_dir: &Path, plots: bool) -> anyhow::Result<i32> {
    create_dir(out_dir)?;
    let summary = out_dir.join("summary.json");
    write(&summary, serde_json::to_vec_pretty(report)?)?;
    let mut files = vec![("summary", summary)];
    if let Some(m) = &report.modems {
        let ledger = out_dir.join("modem_ledger.jsonl");
        let mut text = String::new();
        for e in &m.entries {
            text.push_str(&serde_json::to_string(e)?);
            text.push('\n');
        }
        write(&ledger, text)?;
        files.push(("modem ledger", ledger));
    }
    if let Some(r) = &report.record {
        files.push(("record", r.clone()));
    }
    if !report.programs.is_empty() {
        files.push(("program logs", out_dir.join("programs")));
    }
    if let Some(t) = &report.timeline {
        files.push(("timeline", t.clone()));
    }
    // Without the report (or without a record to make it from), the tables from the run's
    // summary alone.
    let generated = plots
        .then(|| {
            report::generate(out_dir)
                .inspect_err(|e| tracing::warn!("report not written: {e}"))
                .ok()
        })
        .flatten();
    match generated {
        Some(r) => print_report(&r),
        None => {
            let analysis = report::series::Analysis::of(&Default::default(), Some(report.clone()));
            print!("{}", report::table::terminal(&analysis));
        }
    }
    for (what, path) in files {
        println!("{what}: {}", path.display());
    }
    // Last, where it is seen: the emulator ran behind more than the scenario allows.
    if let Some(w) = report.emulation.as_ref().and_then(|e| e.warning.as_ref()) {
        println!("warning: {w}");
    }
    Ok(if report.interrupted {
        EXIT_INTERRUPTED
    } else {
        0
    })
}

fn print_report(r: &report::ReportFiles) {
    print!("{}", r.table());
    for n in &r.notes {
        tracing::warn!("report: {n}");
    }
    println!("report: {}", r.html.display());
}

/// `cosim report <run folder>`: the report regenerated from the run's record, and its tables.
/// A folder that does not exist, or holds no record, is named as such.
pub fn report_folder(run_dir: &Path) -> anyhow::Result<i32> {
    use crate::output::record::RECORD_FILE;
    match std::fs::metadata(run_dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
            "{}: no such run folder or record (a run writes its folder where --out says, by default out/<scenario name>)",
            run_dir.display()
        ),
        Ok(m) if m.is_dir() && !run_dir.join(RECORD_FILE).exists() => anyhow::bail!(
            "{}: no {RECORD_FILE} in this folder, so no run to report: a run folder holds the run's \
             {RECORD_FILE} (with summary.json and report/), as `cosim run` writes it",
            run_dir.display()
        ),
        _ => {}
    }
    let r = report::generate(run_dir)?;
    print_report(&r);
    Ok(0)
}

/// `cosim compare LABEL=RUN... --link SRC:DST [--phase NAME=FROM-TO]...`: one link of several
/// runs side by side, per phase, printed as a Markdown table. Each record's copies are folded
/// into its phases as it is read ([`report::compare::PhaseFold`]); without `--phase`, one phase
/// holds every copy and runs from 0 to the end of the longest run (its windows × W; for a
/// record cut short, the latest time of any copy in it). A campaign's folder (`cosim sweep`)
/// gives one column per point, its finished runs' copies pooled: throughput per run, delays
/// and loss over all of them.
pub fn compare(
    runs: &[String],
    link: &str,
    mut phases: Vec<crate::config::Phase>,
) -> anyhow::Result<i32> {
    use report::compare::PhaseFold;
    let (src, dst) = link
        .split_once(':')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| anyhow::anyhow!("--link {link:?}: expected SRC:DST"))?;
    let mut columns = Vec::new();
    let mut end = 0.0_f64;
    for run in runs {
        for (label, dirs) in columns_of(run)? {
            let mut folds: Vec<PhaseFold> = if phases.is_empty() {
                vec![PhaseFold::whole_run()]
            } else {
                phases.iter().map(PhaseFold::new).collect()
            };
            for dir in &dirs {
                end = end.max(fold_record(dir, src, dst, &mut folds, link)?);
            }
            columns.push((label, folds, dirs.len()));
        }
    }
    if phases.is_empty() {
        phases.push(crate::config::Phase {
            name: "run".into(),
            from_s: 0.0,
            to_s: end.max(1e-9),
        });
    }
    let runs: Vec<_> = columns
        .into_iter()
        .map(|(label, folds, n)| {
            let figures = folds
                .into_iter()
                .zip(&phases)
                .map(|(f, p)| f.finish((p.to_s - p.from_s) * n as f64))
                .collect();
            (label, figures)
        })
        .collect();
    println!(
        "{src} → {dst}\n\n{}",
        report::compare::table(&runs, &phases)
    );
    Ok(0)
}

/// The columns `cosim compare`'s argument `LABEL=FOLDER` (or a folder, labelled by its name)
/// makes, each with the run folders it pools: a run's folder alone; a campaign's folder (it has
/// `points.csv`) one column per point, `LABEL axis=value, ...`, with its finished runs.
fn columns_of(arg: &str) -> anyhow::Result<Vec<(String, Vec<std::path::PathBuf>)>> {
    let (label, dir) = match arg.split_once('=') {
        Some((label, dir)) => (label.to_owned(), Path::new(dir).to_path_buf()),
        None => (
            Path::new(arg)
                .file_name()
                .map_or(arg.to_owned(), |n| n.to_string_lossy().into_owned()),
            Path::new(arg).to_path_buf(),
        ),
    };
    let points_csv = dir.join("points.csv");
    if !points_csv.is_file() {
        return Ok(vec![(label, vec![dir])]);
    }
    let mut reader =
        csv::Reader::from_path(&points_csv).with_context(|| format!("{}", points_csv.display()))?;
    let head = reader.headers()?.clone();
    let axes = head.iter().position(|h| h == "runs").unwrap_or(1);
    let mut columns = Vec::new();
    for row in reader.records() {
        let row = row.with_context(|| format!("{}", points_csv.display()))?;
        let point: usize = row[0]
            .parse()
            .with_context(|| format!("{}: point {:?}", points_csv.display(), &row[0]))?;
        let values: Vec<String> = (1..axes)
            .map(|i| format!("{}={}", &head[i], &row[i]))
            .collect();
        let point_dir = dir.join(format!("point-{point:03}"));
        let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(&point_dir)
            .with_context(|| format!("{}", point_dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| crate::output::campaign::finished(p))
            .collect();
        dirs.sort();
        anyhow::ensure!(
            !dirs.is_empty(),
            "{}: point {point} has no finished run",
            point_dir.display()
        );
        columns.push((format!("{label} {}", values.join(", ")), dirs));
    }
    Ok(columns)
}

/// Folds the copies of `src → dst` in the record in `dir` into `folds`; the run's end (its
/// windows × W, or for a record cut short the latest time of any copy in it). A record without
/// the link is an error naming the links it has.
fn fold_record(
    dir: &Path,
    src: &str,
    dst: &str,
    folds: &mut [report::compare::PhaseFold],
    link: &str,
) -> anyhow::Result<f64> {
    use crate::output::record::Record;
    let mut seen = false;
    let mut latest = 0.0_f64;
    // The links the record has, to name them if it lacks the one asked for.
    let mut links = std::collections::BTreeSet::new();
    let record = Record::read_with(dir, &mut |p| {
        latest = latest.max(p.end_s);
        if p.src == src && p.dst.as_deref() == Some(dst) {
            seen = true;
            folds.iter_mut().for_each(|f| f.add(&p));
        } else if !seen {
            links.insert(format!("{}:{}", p.src, p.dst.as_deref().unwrap_or("*")));
        }
    })?;
    if !seen {
        let links: Vec<String> = links.into_iter().collect();
        anyhow::bail!(
            "--link {link}: {}: no packet from {src} to {dst} in the record ({})",
            dir.display(),
            if links.is_empty() {
                "it has no packets".to_owned()
            } else {
                format!("its links: {}", links.join(", "))
            }
        );
    }
    let simulated = record
        .summary
        .and_then(|v| crate::output::summary::RunReport::from_value(v).ok())
        .map(|s| s.sim_seconds);
    Ok(simulated.unwrap_or(latest))
}

/// Writes a standalone network coordinator's ledger to `network_summary.json` and prints it.
pub fn report_network(n: &LedgerSummary, out_dir: &Path) -> anyhow::Result<()> {
    create_dir(out_dir)?;
    write(
        &out_dir.join("network_summary.json"),
        serde_json::to_vec_pretty(n)?,
    )?;
    println!("  network: {n}");
    Ok(())
}

/// A network coordinator's generated flows (`traffic_summary.json`, as `summary.json`'s
/// `traffic`).
pub fn report_traffic(flows: &[FlowSummary], out_dir: &Path) -> anyhow::Result<()> {
    create_dir(out_dir)?;
    write(
        &out_dir.join("traffic_summary.json"),
        serde_json::to_vec_pretty(flows)?,
    )?;
    for f in flows {
        println!("  flow {}", report::table::flow_row(f).join("  "));
    }
    Ok(())
}

/// A network coordinator's 802.11 media (`air_summary.json`, as `summary.json`'s `air`).
pub fn report_air(air: &[AirSummary], out_dir: &Path) -> anyhow::Result<()> {
    create_dir(out_dir)?;
    write(
        &out_dir.join("air_summary.json"),
        serde_json::to_vec_pretty(air)?,
    )?;
    Ok(())
}
