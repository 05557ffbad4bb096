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
    match report::generate(out_dir) {
        Ok(r) => print_report(&r),
        Err(e) => {
            // No record to read: the tables from the run's summary alone.
            tracing::warn!("report not written: {e}");
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
/// record cut short, the latest time of any copy in it).
pub fn compare(
    runs: &[String],
    link: &str,
    mut phases: Vec<report::compare::Phase>,
) -> anyhow::Result<i32> {
    use crate::output::record::Record;
    use report::compare::PhaseFold;
    let (src, dst) = link
        .split_once(':')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| anyhow::anyhow!("--link {link:?}: expected SRC:DST"))?;
    let mut columns = Vec::new();
    let mut end = 0.0_f64;
    for run in runs {
        let (label, dir) = match run.split_once('=') {
            Some((label, dir)) => (label.to_owned(), Path::new(dir).to_path_buf()),
            None => (
                Path::new(run)
                    .file_name()
                    .map_or(run.clone(), |n| n.to_string_lossy().into_owned()),
                Path::new(run).to_path_buf(),
            ),
        };
        let mut folds: Vec<PhaseFold> = if phases.is_empty() {
            vec![PhaseFold::whole_run()]
        } else {
            phases.iter().map(PhaseFold::new).collect()
        };
        let mut seen = false;
        let mut latest = 0.0_f64;
        // The links the record has, to name them if it lacks the one asked for.
        let mut links = std::collections::BTreeSet::new();
        let record = Record::read_with(&dir, &mut |p| {
            latest = latest.max(p.end_s);
            if p.src == src && p.dst.as_deref() == Some(dst) {
                seen = true;
                folds.iter_mut().for_each(|f| f.add(&p));
            } else if !seen {
                links.insert(format!("{}:{}", p.src, p.dst.as_deref().unwrap_or("*")));
            }
        })?;
        // A run ends at its last window; a record cut short (no summary) at its latest copy.
        let simulated = record
            .summary
            .and_then(|v| crate::output::summary::RunReport::from_value(v).ok())
            .map(|s| s.sim_seconds);
        end = end.max(simulated.unwrap_or(latest));
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
        columns.push((label, folds));
    }
    if phases.is_empty() {
        phases.push(report::compare::Phase {
            name: "run".into(),
            from_s: 0.0,
            to_s: end.max(1e-9),
        });
    }
    let runs: Vec<_> = columns
        .into_iter()
        .map(|(label, folds)| {
            let figures = folds
                .into_iter()
                .zip(&phases)
                .map(|(f, p)| f.finish(p.to_s - p.from_s))
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
