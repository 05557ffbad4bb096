//! `cosim soak`: one `cosim run` of a scenario's live traffic for a long time (default
//! config/soak.yaml for 60 minutes), watched from outside, then judged.
//!
//! The run is a child process (this executable's `run --duration-s 60·M`, in a process group of
//! its own, killed by the kernel if the soak dies). Every few seconds the soak reads the child's
//! resident memory (`VmRSS`), open file descriptors and threads from `/proc`
//! ([`crate::io::os::procfs`]) and writes them to `soak_memory.csv`; it also notes every process
//! descended from the run and the inode of every vehicle namespace, so that what outlives the
//! run can be found (no `ncs-<vehicle>` namespace, owner file, new TUN device or process of the
//! run may be left; processes found are then killed). When the run has ended, the samples, the
//! run's `summary.json` and its report are judged ([`crate::output::soak`]), and `soak.json`
//! (every figure and check) is written next to the run's own output.

use super::run_folder::{MEMORY_CSV, RUN_STDERR_LOG, RUN_STDOUT_LOG, SOAK_JSON};
use crate::config::Capture;
use crate::io::os::{netns, procfs};
use crate::output::report::table;
use crate::output::soak::{self, Expected, NetworkTotals, RunEnd, Sample, Soak, MIN_MINUTES};
use crate::output::summary::RunReport;
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The scenario a soak runs unless told otherwise: the default scenario's traffic, kept going.
pub const DEFAULT_SCENARIO: &str = "config/soak.yaml";
/// How often a progress line is logged.
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// What `cosim soak` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The scenario file.
    pub scenario: PathBuf,
    /// How long the run lasts, in minutes of sim time (≥ [`MIN_MINUTES`]).
    pub minutes: f64,
    /// The output folder (default: the scenario's `output_dir`, else `out/<name>`).
    pub out: Option<PathBuf>,
    /// Seconds between two samples of the run's memory.
    pub sample_s: f64,
    /// The `cosim` executable that runs the scenario.
    pub exe: PathBuf,
}

/// `cosim soak`: the scenario (default [`DEFAULT_SCENARIO`]) run for `minutes` as a child
/// process and checked; prints the figures and checks, returns 0 when every check passed, 130
/// when stopped by SIGINT/SIGTERM, 1 otherwise (naming the checks that failed).
pub async fn command(
    scenario: Option<PathBuf>,
    minutes: f64,
    out: Option<PathBuf>,
    sample_s: f64,
) -> anyhow::Result<i32> {
    let stop = super::shutdown_signal();
    let opts = Options {
        scenario: scenario.unwrap_or_else(|| PathBuf::from(DEFAULT_SCENARIO)),
        minutes,
        out,
        sample_s,
        exe: std::env::current_exe()?,
    };
    let s = run(opts, stop).await?;
    print!("{}", table::soak(&s));
    println!("soak: {}", s.out.join(SOAK_JSON).display());
    if s.passed {
        println!("soak passed");
        Ok(0)
    } else {
        eprintln!("soak failed: {}", s.failed().join(", "));
        Ok(if s.interrupted {
            super::EXIT_INTERRUPTED
        } else {
            1
        })
    }
}

/// Runs the soak: the scenario for `minutes`, sampled, then checked. `stop` (SIGINT/SIGTERM)
/// stops the run early (it gets SIGINT and ends as after Ctrl-C); the checks still run.
/// An error: the soak could not be made (bad options or scenario, no root for live capture,
/// the run could not start; `summary.json` unreadable is a failed check, not an error).
pub async fn run(
    opts: Options,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<Soak> {
    anyhow::ensure!(
        opts.minutes.is_finite() && opts.minutes >= MIN_MINUTES,
        "--minutes {}: at least {MIN_MINUTES} (a minute of warm-up, then two windows to compare)",
        opts.minutes
    );
    anyhow::ensure!(
        opts.sample_s.is_finite() && opts.sample_s >= 0.1 && opts.sample_s <= 60.0,
        "--sample-s {}: must be between 0.1 and 60",
        opts.sample_s
    );
    let duration_s = opts.minutes * 60.0;
    let mut loaded = crate::config::load(&opts.scenario)?;
    loaded.set_duration_s(duration_s).map_err(|e| {
        anyhow::anyhow!(
            "{}: --minutes {}: {e}",
            opts.scenario.display(),
            opts.minutes
        )
    })?;
    let out = super::output_dir(&loaded, opts.out.clone());
    // One run per folder (its summary would also end the sampled run phase at once).
    if let Some(line) = super::run_folder::prepare(&out, &super::vehicle_names(&loaded))? {
        tracing::info!("{line}");
    }
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let namespaces: Vec<String> = loaded
        .scenario
        .vehicles
        .iter()
        .map(|v| netns::ns_name(&v.name))
        .collect();
    let tuns_before = procfs::host_tun_devices();

    // Orphans of the run (a program's child left behind) are re-parented to us, where the
    // leftover check finds them.
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes plain integers and only marks this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };

    let csv_path = out.join(MEMORY_CSV);
    let mut csv = std::io::BufWriter::new(
        std::fs::File::create(&csv_path)
            .with_context(|| format!("cannot create {}", csv_path.display()))?,
    );
    writeln!(csv, "t_s,phase,rss_mib,fds,threads")?;

    let t0 = Instant::now();
    let mut child = spawn_run(&opts, &out, duration_s)?;
    let pid = child.id().context("the run's pid")? as i32;
    tracing::info!(
        pid,
        out = %out.display(),
        "soak: {} for {} min ({} s of sim time); memory every {} s in {}",
        opts.scenario.display(),
        opts.minutes,
        duration_s,
        opts.sample_s,
        csv_path.display()
    );

    let mut watch = procfs::Watch::new(pid, namespaces);
    let mut samples: Vec<Sample> = Vec::new();
    let mut run_end_s: Option<f64> = None;
    let mut interrupted = false;
    let mut next_progress = t0 + PROGRESS_EVERY;
    // The first sample one period in: at the start the run has only just been exec'd and has
    // not loaded itself yet (its RSS can read under 1 MiB), which says nothing of its memory.
    let period = Duration::from_secs_f64(opts.sample_s);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    let status = loop {
        tokio::select! {
            status = child.wait() => break status.context("waiting for the run")?,
            _ = &mut stop, if !interrupted => {
                interrupted = true;
                tracing::warn!("soak: stopping the run (SIGINT to {pid})");
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGINT) };
            }
            _ = tick.tick() => {
                let t_s = t0.elapsed().as_secs_f64();
                if run_end_s.is_none() && out.join("summary.json").exists() {
                    run_end_s = Some(t_s);
                }
                watch.scan();
                if let Some(s) = procfs::sample(pid, t_s, run_end_s.is_none()) {
                    writeln!(
                        csv,
                        "{:.1},{},{:.2},{},{}",
                        s.t_s,
                        if s.running { "run" } else { "report" },
                        s.rss_kib as f64 / 1024.0,
                        s.fds,
                        s.threads
                    )?;
                    csv.flush()?;
                    samples.push(s);
                    if Instant::now() >= next_progress {
                        next_progress += PROGRESS_EVERY;
                        progress(&samples, &s, t_s, opts.minutes);
                    }
                }
            }
        }
    };
    let wall_s = t0.elapsed().as_secs_f64();
    let run_s = run_end_s.unwrap_or(wall_s);
    tracing::info!("soak: the run ended ({status}) after {wall_s:.0} s; checking");

    let leftovers = watch.leftovers(&tuns_before);
    let memory = soak::memory(&samples, run_s);
    let summary = RunReport::read(&out.join("summary.json"));
    let traffic = soak::traffic_bins(&out.join("report/series/throughput.csv"), duration_s);
    let run_end = RunEnd {
        status: status.to_string(),
        success: status.success(),
        interrupted,
        stderr_log: out.join(RUN_STDERR_LOG),
    };
    let expected = Expected {
        live: loaded.scenario.network.capture == Capture::Tun,
        modems: loaded.scenario.acoustic_modems.is_some(),
    };
    let checks = soak::checks(&run_end, &memory, &summary, &traffic, &leftovers, expected);
    let passed = checks.iter().all(|c| c.ok);
    let summary = summary.ok();
    let soak = Soak {
        scenario: opts.scenario,
        out: out.clone(),
        minutes: opts.minutes,
        duration_s,
        sample_s: opts.sample_s,
        exit_code: status.code(),
        interrupted,
        wall_s,
        sim_seconds: summary.as_ref().map(|s| s.sim_seconds),
        slipped_seconds: summary.as_ref().map(|s| s.slipped_seconds),
        memory,
        network: summary
            .as_ref()
            .and_then(|s| s.network.as_ref())
            .map(NetworkTotals::of),
        modems: summary
            .as_ref()
            .and_then(|s| s.modems.as_ref())
            .map(|m| m.ledger.clone()),
        traffic_bins_percent: traffic.as_ref().ok().map(soak::Traffic::percent),
        leftovers,
        output_bytes: procfs::folder_bytes(&out),
        checks,
        passed,
    };
    let json = out.join(SOAK_JSON);
    std::fs::write(&json, serde_json::to_vec_pretty(&soak)?)
        .with_context(|| format!("cannot write {}", json.display()))?;
    Ok(soak)
}

/// Starts the run: `cosim run` of the scenario into `out` for `duration_s`, its output in
/// `cosim_run.{stdout,stderr}.log`, in a process group of its own (a terminal's Ctrl-C reaches
/// the soak, which passes it on), ended by the kernel if the soak dies.
fn spawn_run(
    opts: &Options,
    out: &std::path::Path,
    duration_s: f64,
) -> anyhow::Result<tokio::process::Child> {
    let log = |name: &str| -> anyhow::Result<std::fs::File> {
        let p = out.join(name);
        std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))
    };
    let mut cmd = std::process::Command::new(&opts.exe);
    cmd.arg("run")
        .arg(&opts.scenario)
        .arg("--out")
        .arg(out)
        .arg("--duration-s")
        .arg(duration_s.to_string())
        .stdin(Stdio::null())
        .stdout(log(RUN_STDOUT_LOG)?)
        .stderr(log(RUN_STDERR_LOG)?);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    crate::io::os::child::die_with_parent(&mut cmd, libc::SIGTERM, "the soak is gone");
    tokio::process::Command::from(cmd)
        .spawn()
        .with_context(|| format!("cannot start {} run", opts.exe.display()))
}

/// The progress line logged every [`PROGRESS_EVERY`].
fn progress(samples: &[Sample], s: &Sample, t_s: f64, minutes: f64) {
    let peak = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
    tracing::info!(
        "soak: {:.1} of {} min, RSS {:.1} MiB (peak {:.1}), {} fds, {} threads",
        t_s / 60.0,
        minutes,
        s.rss_kib as f64 / 1024.0,
        peak as f64 / 1024.0,
        s.fds,
        s.threads
    );
}
