//! What the binaries share: logging, signals, loading a scenario, reporting a run.
//! The binaries themselves only parse arguments and call into the library.

use crate::config::{self, LoadedScenario};
use crate::coord::RunReport;
use std::path::{Path, PathBuf};

/// Exit code of a run stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Logs to stderr; `RUST_LOG` selects what (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::warn!("SIGINT: stopping after the current window"),
        _ = term.recv() => tracing::warn!("SIGTERM: stopping after the current window"),
    }
}

pub fn load(path: &Path) -> anyhow::Result<LoadedScenario> {
    Ok(config::load(path)?)
}

/// The output folder: `--out`, else the scenario's `output_dir`, else `out/<name>`.
pub fn output_dir(loaded: &LoadedScenario, out: Option<PathBuf>) -> PathBuf {
    out.or_else(|| loaded.scenario.output_dir.as_ref().map(PathBuf::from))
        .unwrap_or_else(|| Path::new("out").join(&loaded.scenario.name))
}

/// Writes `summary.json` next to the timeline, prints the run's figures, returns the exit code.
pub fn report(report: &RunReport, out_dir: &Path) -> anyhow::Result<i32> {
    std::fs::create_dir_all(out_dir)?;
    let summary = out_dir.join("summary.json");
    std::fs::write(&summary, serde_json::to_vec_pretty(report)?)?;
    println!(
        "{}: {} windows of {} ms = {:.2} s simulated in {:.2} s wall ({:.0} windows/s){}",
        report.scenario,
        report.windows,
        report.window_ms,
        report.sim_seconds,
        report.wall_seconds,
        report.windows_per_second,
        if report.interrupted { ", interrupted" } else { "" }
    );
    for p in &report.pairs {
        let total = (p.los_windows + p.nlos_windows).max(1) as f64;
        println!(
            "  {:>12} - {:<12} LOS {:5.1}%  NLOS {:5.1}%  transitions {}",
            p.a,
            p.b,
            100.0 * p.los_windows as f64 / total,
            100.0 * p.nlos_windows as f64 / total,
            p.transitions
        );
    }
    if let Some(m) = &report.modems {
        let l = &m.ledger;
        println!(
            "  modem frames: {} sent, {} delivered, dropped: {} out of range, {} packet error, {} collision, {} half-duplex, {} no receiver, {} shutdown",
            l.sent, l.delivered, l.out_of_range, l.packet_error, l.collision, l.half_duplex, l.no_receiver, l.shutdown
        );
        let ledger = out_dir.join("modem_ledger.jsonl");
        let mut text = String::new();
        for e in &m.entries {
            text.push_str(&serde_json::to_string(e)?);
            text.push('\n');
        }
        std::fs::write(&ledger, text)?;
        println!("modem ledger: {}", ledger.display());
    }
    if let Some(t) = &report.timeline {
        println!("timeline: {}", t.display());
    }
    println!("summary: {}", summary.display());
    Ok(if report.interrupted { EXIT_INTERRUPTED } else { 0 })
}

/// Runs `f` and turns its error into a message on stderr and exit code 1.
pub fn exit_with(result: anyhow::Result<i32>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}
