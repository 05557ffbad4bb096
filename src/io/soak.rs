//! Endurance (`cosim soak`): one `cosim run` of a scenario's live traffic for a long time
//! (default config/soak.yaml for 60 minutes), watched from outside, then judged.
//!
//! The run is a child process (this executable's `run --duration-s 60·M`, in a process group of
//! its own, killed by the kernel if the soak dies). Every few seconds the soak reads the child's
//! resident memory (`VmRSS`), open file descriptors and threads from `/proc` and writes them to
//! `soak_memory.csv`; it also notes every process descended from the run and the inode of every
//! vehicle namespace, so that what outlives the run can be found. When the run has ended:
//!
//! - **memory**: the samples taken while the windows ran (before `summary.json` appeared; the
//!   report made after it is left out) after a warm-up of max(60 s, 20 % of that time), compared
//!   as the median of the first `w` seconds after the warm-up against the median of the last
//!   `w` seconds, `w` = min(60 s, a third of what follows the warm-up): growth below 5 %;
//! - **network ledger** and **modem ledger** (`summary.json`): captured = delivered + dropped +
//!   in flight in total and per link, the drops adding up, nothing in flight at the end (copies
//!   still in flight then are counted as `shutdown` drops), traffic captured at all; every modem
//!   frame sent ended in one outcome;
//! - **traffic**: packets delivered in every quarter of the run (the report's `throughput.csv`);
//! - **programs**: every program started and ran until the run stopped it;
//! - **leftovers**: no `ncs-<vehicle>` namespace, owner file, new TUN device or process of the
//!   run left (processes found are then killed).
//!
//! It writes `soak.json` (every figure and check) next to the run's own output.

use super::netns;
use crate::config::{Capture, LoadedScenario};
use crate::model::modem::ledger::FrameLedgerSummary;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The scenario a soak runs unless told otherwise: the default scenario's traffic, kept going.
pub const DEFAULT_SCENARIO: &str = "config/soak.yaml";
/// Resident memory may grow by less than this between the warm-up's end and the run's end.
pub const GROWTH_LIMIT_PERCENT: f64 = 5.0;
/// The shortest soak: a minute of warm-up and two windows to compare after it.
pub const MIN_MINUTES: f64 = 2.0;
/// The warm-up: at least this long, and at least [`WARM_UP_SHARE`] of the run.
pub const WARM_UP_MIN_S: f64 = 60.0;
pub const WARM_UP_SHARE: f64 = 0.2;
/// The windows whose medians are compared: at most this long.
pub const COMPARE_WINDOW_MAX_S: f64 = 60.0;
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

/// One look at the run's process.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the run was started.
    pub t_s: f64,
    /// Whether the windows were still running (false: the run was writing its report).
    pub running: bool,
    pub rss_kib: u64,
    pub fds: u32,
    pub threads: u32,
}

/// The memory figures of a soak (MiB; times in seconds since the run was started).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Memory {
    pub samples: usize,
    /// When the windows ended (`summary.json` appeared), or the run did.
    pub run_s: f64,
    pub warm_up_s: f64,
    /// Length of each of the two windows whose medians are compared.
    pub window_s: f64,
    pub samples_at_warm_up_end: usize,
    pub samples_at_end: usize,
    /// Median RSS of [warm_up_s, warm_up_s + window_s).
    pub rss_warm_up_end_mib: f64,
    /// Median RSS of (run_s − window_s, run_s].
    pub rss_end_mib: f64,
    pub growth_percent: f64,
    /// Least-squares slope of RSS after the warm-up, MiB per hour (for information).
    pub slope_mib_per_hour: f64,
    /// Largest RSS sampled while the windows ran, and at all (the report included).
    pub peak_run_mib: f64,
    pub peak_mib: f64,
    /// Open file descriptors and threads of the run: at the warm-up's end and at the end
    /// (medians of the same windows), and the most seen.
    pub fds_warm_up_end: u32,
    pub fds_end: u32,
    pub fds_max: u32,
    pub threads_max: u32,
}

/// One check of the soak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

impl Check {
    /// Passed if there are no `problems` (then `passed` says what was found), else failed
    /// naming them all.
    fn of(name: &'static str, problems: Vec<String>, passed: impl FnOnce() -> String) -> Check {
        Check {
            name,
            ok: problems.is_empty(),
            detail: if problems.is_empty() {
                passed()
            } else {
                problems.join("; ")
            },
        }
    }

    /// For a part of `summary.json` that is absent: a failure (`missing`) if the scenario
    /// should have produced it, else a pass (`not_expected`).
    fn absent(name: &'static str, expected: bool, missing: &str, not_expected: &str) -> Check {
        Check {
            name,
            ok: !expected,
            detail: if expected { missing } else { not_expected }.into(),
        }
    }
}

/// What the run left behind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Leftovers {
    pub namespaces: Vec<String>,
    pub owner_files: Vec<String>,
    pub tun_devices: Vec<String>,
    /// `pid command line` of each process of the run still there (then killed).
    pub processes: Vec<String>,
}

impl Leftovers {
    pub fn is_empty(&self) -> bool {
        self.namespaces.is_empty()
            && self.owner_files.is_empty()
            && self.tun_devices.is_empty()
            && self.processes.is_empty()
    }
}

/// The network ledger's totals as the soak reports them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NetworkTotals {
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub drops: BTreeMap<String, u64>,
    pub delivered_bytes: u64,
    pub links: usize,
}

/// Everything a soak found: `soak.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Soak {
    pub scenario: PathBuf,
    pub out: PathBuf,
    pub minutes: f64,
    pub duration_s: f64,
    pub sample_s: f64,
    /// The run's exit code (None: ended by a signal).
    pub exit_code: Option<i32>,
    /// Stopped early by SIGINT or SIGTERM to the soak.
    pub interrupted: bool,
    pub wall_s: f64,
    /// From `summary.json`: sim seconds run, and how far paced windows fell behind.
    pub sim_seconds: Option<f64>,
    pub slipped_seconds: Option<f64>,
    pub memory: Memory,
    pub network: Option<NetworkTotals>,
    pub modems: Option<FrameLedgerSummary>,
    /// Share of the report's throughput bins in which some link delivered a packet.
    pub traffic_bins_percent: Option<f64>,
    pub leftovers: Leftovers,
    /// Bytes the run's output folder holds at the end (record, pcaps, report, logs).
    pub output_bytes: u64,
    pub checks: Vec<Check>,
    pub passed: bool,
}

impl Soak {
    /// The names of the checks that failed.
    pub fn failed(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name)
            .collect()
    }

    /// The figures and checks as terminal tables.
    pub fn table(&self) -> String {
        use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
        let m = &self.memory;
        let mut figures = Table::new();
        figures.load_preset(UTF8_FULL_CONDENSED);
        figures.set_header(vec!["soak", "value"]);
        let rows: Vec<(String, String)> = vec![
            (
                "run".into(),
                format!(
                    "{} for {:.0} min: {:.0} s wall ({:.0} s of windows), slipped {}",
                    self.scenario.display(),
                    self.minutes,
                    self.wall_s,
                    m.run_s,
                    self.slipped_seconds
                        .map_or("?".into(), |s| format!("{s:.2} s"))
                ),
            ),
            (
                "RSS at warm-up end".into(),
                format!(
                    "{:.1} MiB (median of {:.0}–{:.0} s, {} samples)",
                    m.rss_warm_up_end_mib,
                    m.warm_up_s,
                    m.warm_up_s + m.window_s,
                    m.samples_at_warm_up_end
                ),
            ),
            (
                "RSS at end".into(),
                format!(
                    "{:.1} MiB (median of {:.0}–{:.0} s, {} samples)",
                    m.rss_end_mib,
                    m.run_s - m.window_s,
                    m.run_s,
                    m.samples_at_end
                ),
            ),
            (
                "growth".into(),
                format!(
                    "{:+.2} % (limit {GROWTH_LIMIT_PERCENT} %); slope {:+.2} MiB/h",
                    m.growth_percent, m.slope_mib_per_hour
                ),
            ),
            (
                "peak RSS".into(),
                format!(
                    "{:.1} MiB while running, {:.1} MiB with the report",
                    m.peak_run_mib, m.peak_mib
                ),
            ),
            (
                "fds / threads".into(),
                format!(
                    "fds {} → {} (max {}), threads max {}",
                    m.fds_warm_up_end, m.fds_end, m.fds_max, m.threads_max
                ),
            ),
            (
                "network ledger".into(),
                self.network.as_ref().map_or("none".into(), |n| {
                    let drops: Vec<String> =
                        n.drops.iter().map(|(r, c)| format!("{r} {c}")).collect();
                    format!(
                        "captured {} = delivered {} + dropped {} + in flight {}; {} links; drops: {}",
                        n.captured,
                        n.delivered,
                        n.dropped,
                        n.in_flight,
                        n.links,
                        if drops.is_empty() { "none".into() } else { drops.join(", ") }
                    )
                }),
            ),
            (
                "modem ledger".into(),
                self.modems.as_ref().map_or("none".into(), |l| {
                    format!(
                        "sent {} = delivered {} + out of range {} + packet error {} + collision {} + half-duplex {} + no receiver {} + shutdown {} + other {}",
                        l.sent,
                        l.delivered,
                        l.out_of_range,
                        l.packet_error,
                        l.collision,
                        l.half_duplex,
                        l.no_receiver,
                        l.shutdown,
                        l.other
                    )
                }),
            ),
            (
                "traffic".into(),
                self.traffic_bins_percent
                    .map_or("?".into(), |p| format!("delivered in {p:.1} % of the report's bins")),
            ),
            (
                "leftovers".into(),
                if self.leftovers.is_empty() {
                    "none".into()
                } else {
                    let l = &self.leftovers;
                    format!(
                        "namespaces {:?}, owner files {:?}, TUN devices {:?}, processes {:?}",
                        l.namespaces, l.owner_files, l.tun_devices, l.processes
                    )
                },
            ),
            (
                "output".into(),
                format!(
                    "{} ({:.1} MiB)",
                    self.out.display(),
                    self.output_bytes as f64 / MIB
                ),
            ),
        ];
        for (k, v) in rows {
            figures.add_row(vec![k, v]);
        }
        let mut checks = Table::new();
        checks.load_preset(UTF8_FULL_CONDENSED);
        checks.set_header(vec!["check", "", "detail"]);
        for c in &self.checks {
            checks.add_row(vec![
                c.name.to_string(),
                if c.ok { "ok" } else { "FAILED" }.to_string(),
                shortened(&c.detail),
            ]);
        }
        format!("{figures}\n{checks}\n")
    }
}

/// A check's detail for the terminal: at most its first 400 characters (a check that lists
/// every one of many programs or links would fill the screen); `soak.json` has it whole.
fn shortened(detail: &str) -> String {
    const MAX: usize = 400;
    match detail.char_indices().nth(MAX) {
        None => detail.to_string(),
        Some((cut, _)) => format!("{} … (soak.json has it all)", &detail[..cut]),
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The output folder: `out`, else the scenario's `output_dir`, else `out/<name>`.
fn output_dir(loaded: &LoadedScenario, out: Option<PathBuf>) -> PathBuf {
    out.or_else(|| loaded.scenario.output_dir.as_ref().map(PathBuf::from))
        .unwrap_or_else(|| Path::new("out").join(&loaded.scenario.name))
}

/// Runs the soak: the scenario for `minutes`, sampled, then checked. `stop` (SIGINT/SIGTERM)
/// stops the run early (it gets SIGINT and ends as after Ctrl-C); the checks still run.
/// An error: the soak could not be made (bad options or scenario, no root for live capture,
/// the run could not start, `summary.json` unreadable is a failed check, not an error).
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
    if loaded.scenario.network.capture == Capture::Tun && unsafe { libc::geteuid() } != 0 {
        anyhow::bail!(
            "{}: network.capture is tun: a soak of live traffic needs root (network namespaces, TUN devices)",
            opts.scenario.display()
        );
    }
    let out = output_dir(&loaded, opts.out.clone());
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    // A summary left by an earlier run would end the sampled run phase at once.
    for stale in ["summary.json", "soak.json"] {
        let _ = std::fs::remove_file(out.join(stale));
    }
    let namespaces: Vec<String> = loaded
        .scenario
        .vehicles
        .iter()
        .map(|v| netns::ns_name(&v.name))
        .collect();
    let tuns_before = host_tun_devices();

    // Orphans of the run (a program's child left behind) are re-parented to us, where the
    // leftover check finds them.
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes plain integers and only marks this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };

    let csv_path = out.join("soak_memory.csv");
    let mut csv = std::io::BufWriter::new(
        std::fs::File::create(&csv_path)
            .with_context(|| format!("cannot create {}", csv_path.display()))?,
    );
    writeln!(csv, "t_s,phase,rss_mib,fds,threads")?;

    let log = |name: &str| -> anyhow::Result<std::fs::File> {
        let p = out.join(name);
        std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))
    };
    let mut cmd = std::process::Command::new(&opts.exe);
    cmd.arg("run")
        .arg(&opts.scenario)
        .arg("--out")
        .arg(&out)
        .arg("--duration-s")
        .arg(duration_s.to_string())
        .stdin(Stdio::null())
        .stdout(log("cosim_run.stdout.log")?)
        .stderr(log("cosim_run.stderr.log")?);
    // Its own process group: a terminal's Ctrl-C reaches the soak, which passes it on.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 || libc::getppid() != parent
            {
                return Err(std::io::Error::other("the soak is gone"));
            }
            Ok(())
        });
    }
    let t0 = Instant::now();
    let mut child = tokio::process::Command::from(cmd)
        .spawn()
        .with_context(|| format!("cannot start {} run", opts.exe.display()))?;
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

    let mut watch = Watch::new(pid, namespaces.clone());
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
                if let Some(s) = sample(pid, t_s, run_end_s.is_none()) {
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
                        let peak = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
                        tracing::info!(
                            "soak: {:.1} of {} min, RSS {:.1} MiB (peak {:.1}), {} fds, {} threads",
                            t_s / 60.0,
                            opts.minutes,
                            s.rss_kib as f64 / 1024.0,
                            peak as f64 / 1024.0,
                            s.fds,
                            s.threads
                        );
                    }
                }
            }
        }
    };
    let wall_s = t0.elapsed().as_secs_f64();
    let run_s = run_end_s.unwrap_or(wall_s);
    tracing::info!("soak: the run ended ({status}) after {wall_s:.0} s; checking");

    let leftovers = watch.leftovers(&tuns_before);
    let memory = memory(&samples, run_s);
    let summary_path = out.join("summary.json");
    let summary = read_summary(&summary_path);
    let traffic = traffic_bins(&out.join("report/series/throughput.csv"), duration_s);

    let mut checks = Vec::new();
    let exit_code = status.code();
    checks.push(Check {
        name: "run",
        ok: status.success() && !interrupted,
        detail: if interrupted {
            format!("stopped early by the soak's SIGINT ({status})")
        } else if status.success() {
            format!("cosim run ended: {status}")
        } else {
            format!(
                "cosim run ended: {status} (see {})",
                out.join("cosim_run.stderr.log").display()
            )
        },
    });
    checks.push(memory_check(&memory));
    let (network, modems) = match &summary {
        Ok(s) => {
            checks.push(network_check(
                s,
                loaded.scenario.network.capture == Capture::Tun,
            ));
            checks.push(modem_check(s, loaded.scenario.acoustic_modems.is_some()));
            checks.push(programs_check(s));
            (
                s.network.as_ref().map(NetworkTotals::of),
                s.modems.as_ref().map(|m| m.ledger.clone()),
            )
        }
        Err(e) => {
            checks.push(Check {
                name: "ledgers",
                ok: false,
                detail: format!("{e:#}"),
            });
            (None, None)
        }
    };
    let traffic_bins_percent = match &traffic {
        Ok(t) => {
            checks.push(Check {
                name: "traffic",
                ok: t.quarters.iter().all(|&n| n > 0),
                detail: format!(
                    "packets delivered per quarter of the run: {:?}; in {:.1} % of {} bins of {} s",
                    t.quarters,
                    t.percent(),
                    t.bins,
                    t.bin_s
                ),
            });
            Some(t.percent())
        }
        Err(e) => {
            checks.push(Check {
                name: "traffic",
                ok: false,
                detail: format!("{e:#}"),
            });
            None
        }
    };
    checks.push(Check {
        name: "leftovers",
        ok: leftovers.is_empty(),
        detail: if leftovers.is_empty() {
            "no namespace, owner file, TUN device or process of the run left".into()
        } else {
            format!("{leftovers:?} (the processes were killed)")
        },
    });
    let passed = checks.iter().all(|c| c.ok);
    let (sim_seconds, slipped_seconds) = summary.as_ref().map_or((None, None), |s| {
        (Some(s.sim_seconds), Some(s.slipped_seconds))
    });
    let soak = Soak {
        scenario: opts.scenario,
        out: out.clone(),
        minutes: opts.minutes,
        duration_s,
        sample_s: opts.sample_s,
        exit_code,
        interrupted,
        wall_s,
        sim_seconds,
        slipped_seconds,
        memory,
        network,
        modems,
        traffic_bins_percent,
        leftovers,
        output_bytes: folder_bytes(&out),
        checks,
        passed,
    };
    let json = out.join("soak.json");
    std::fs::write(&json, serde_json::to_vec_pretty(&soak)?)
        .with_context(|| format!("cannot write {}", json.display()))?;
    Ok(soak)
}

/// The run's process now: None once it is gone (or a zombie).
fn sample(pid: i32, t_s: f64, running: bool) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    // A zombie has no VmRSS line.
    let rss_kib = field("VmRSS:")?;
    let threads = field("Threads:").unwrap_or(0) as u32;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count() as u32)
        .unwrap_or(0);
    Some(Sample {
        t_s,
        running,
        rss_kib,
        fds,
        threads,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The memory figures of `samples`, the windows having run until `run_s` (see the module docs
/// for the warm-up and the windows compared).
pub fn memory(samples: &[Sample], run_s: f64) -> Memory {
    let warm_up_s = WARM_UP_MIN_S.max(WARM_UP_SHARE * run_s);
    let window_s = COMPARE_WINDOW_MAX_S.min((run_s - warm_up_s) / 3.0).max(0.0);
    let running: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.running && s.t_s <= run_s)
        .collect();
    let first: Vec<&&Sample> = running
        .iter()
        .filter(|s| s.t_s >= warm_up_s && s.t_s < warm_up_s + window_s)
        .collect();
    let last: Vec<&&Sample> = running
        .iter()
        .filter(|s| s.t_s > run_s - window_s && s.t_s >= warm_up_s)
        .collect();
    let mib = |s: &Sample| s.rss_kib as f64 / 1024.0;
    let rss_warm_up_end_mib = median(first.iter().map(|s| mib(s)).collect());
    let rss_end_mib = median(last.iter().map(|s| mib(s)).collect());
    let fds = |v: &[&&Sample]| median(v.iter().map(|s| f64::from(s.fds)).collect());
    let after: Vec<(f64, f64)> = running
        .iter()
        .filter(|s| s.t_s >= warm_up_s)
        .map(|s| (s.t_s, mib(s)))
        .collect();
    let peak = |it: &mut dyn Iterator<Item = &Sample>| it.map(mib).fold(0.0, f64::max);
    Memory {
        samples: samples.len(),
        run_s,
        warm_up_s,
        window_s,
        samples_at_warm_up_end: first.len(),
        samples_at_end: last.len(),
        rss_warm_up_end_mib,
        rss_end_mib,
        growth_percent: (rss_end_mib - rss_warm_up_end_mib) / rss_warm_up_end_mib * 100.0,
        slope_mib_per_hour: slope(&after) * 3600.0,
        peak_run_mib: peak(&mut running.iter().copied()),
        peak_mib: peak(&mut samples.iter()),
        fds_warm_up_end: fds(&first) as u32,
        fds_end: fds(&last) as u32,
        fds_max: samples.iter().map(|s| s.fds).max().unwrap_or(0),
        threads_max: samples.iter().map(|s| s.threads).max().unwrap_or(0),
    }
}

/// Least-squares slope of y over x (0 with fewer than two distinct x).
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if points.len() < 2 {
        return 0.0;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx > 0.0 {
        sxy / sxx
    } else {
        0.0
    }
}

/// At least this many samples in each window compared.
const MIN_WINDOW_SAMPLES: usize = 3;

fn memory_check(m: &Memory) -> Check {
    if m.samples_at_warm_up_end < MIN_WINDOW_SAMPLES || m.samples_at_end < MIN_WINDOW_SAMPLES {
        return Check {
            name: "memory",
            ok: false,
            detail: format!(
                "too few samples to compare: {} after the warm-up ({} s) and {} at the end of {:.0} s of windows (at least {MIN_WINDOW_SAMPLES} each)",
                m.samples_at_warm_up_end, m.warm_up_s, m.samples_at_end, m.run_s
            ),
        };
    }
    Check {
        name: "memory",
        ok: m.growth_percent < GROWTH_LIMIT_PERCENT,
        detail: format!(
            "RSS {:.1} → {:.1} MiB after a {:.0} s warm-up: {:+.2} % (limit {GROWTH_LIMIT_PERCENT} %)",
            m.rss_warm_up_end_mib, m.rss_end_mib, m.warm_up_s, m.growth_percent
        ),
    }
}

// ---- summary.json, as far as the soak reads it ------------------------------------------------

/// The parts of a run's `summary.json` the soak checks (other fields are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Summary {
    pub interrupted: bool,
    pub sim_seconds: f64,
    pub slipped_seconds: f64,
    #[serde(default)]
    pub network: Option<NetworkLedger>,
    #[serde(default)]
    pub modems: Option<Modems>,
    #[serde(default)]
    pub programs: Vec<ProgramEnd>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NetworkLedger {
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
    pub drops: BTreeMap<String, u64>,
    pub delivered_bytes: u64,
    pub links: Vec<LinkLedger>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LinkLedger {
    pub src: String,
    pub dst: Option<String>,
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
    pub drops: BTreeMap<String, u64>,
    pub delivered_bytes: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Modems {
    pub ledger: FrameLedgerSummary,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ProgramEnd {
    pub name: String,
    pub started_s: Option<f64>,
    pub ended_s: Option<f64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub note: Option<String>,
}

/// Reads `summary.json`; an error names the file and the field (`network.links[2].captured`).
pub fn read_summary(path: &Path) -> anyhow::Result<Summary> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse_summary(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// `summary.json`'s text → [`Summary`]; the error names the field.
pub fn parse_summary(bytes: &[u8]) -> Result<Summary, String> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path.is_empty() || path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })
}

impl NetworkTotals {
    fn of(n: &NetworkLedger) -> NetworkTotals {
        NetworkTotals {
            captured: n.captured,
            delivered: n.delivered,
            dropped: n.dropped,
            in_flight: n.in_flight,
            drops: n.drops.clone(),
            delivered_bytes: n.delivered_bytes,
            links: n.links.len(),
        }
    }
}

/// What is wrong with one ledger line (`what`: "total" or "usv2 → usv1"), if anything.
#[allow(clippy::too_many_arguments)]
fn ledger_problems(
    what: &str,
    captured: u64,
    delivered: u64,
    dropped: u64,
    in_flight: u64,
    balanced: bool,
    drops: &BTreeMap<String, u64>,
    out: &mut Vec<String>,
) {
    if captured != delivered + dropped + in_flight {
        out.push(format!(
            "{what}: captured {captured} ≠ delivered {delivered} + dropped {dropped} + in flight {in_flight}"
        ));
    }
    let by_reason: u64 = drops.values().sum();
    if by_reason != dropped {
        out.push(format!(
            "{what}: drops by reason add up to {by_reason}, not {dropped}"
        ));
    }
    if in_flight != 0 {
        out.push(format!(
            "{what}: {in_flight} copies still in flight at the end"
        ));
    }
    if !balanced {
        out.push(format!("{what}: marked not balanced"));
    }
}

/// The network ledger: balanced in total and per link, the links adding up to the total,
/// nothing in flight, traffic captured and delivered (`live`: the scenario captures traffic).
pub fn network_check(s: &Summary, live: bool) -> Check {
    let name = "network ledger";
    let Some(n) = &s.network else {
        return Check::absent(
            name,
            live,
            "summary.json has no network ledger, yet the scenario captures live traffic",
            "no live traffic in this scenario",
        );
    };
    let mut problems = Vec::new();
    ledger_problems(
        "total",
        n.captured,
        n.delivered,
        n.dropped,
        n.in_flight,
        n.balanced,
        &n.drops,
        &mut problems,
    );
    for l in &n.links {
        let what = format!("{} → {}", l.src, l.dst.as_deref().unwrap_or("(none)"));
        ledger_problems(
            &what,
            l.captured,
            l.delivered,
            l.dropped,
            l.in_flight,
            l.balanced,
            &l.drops,
            &mut problems,
        );
    }
    let sum = |f: fn(&LinkLedger) -> u64| n.links.iter().map(f).sum::<u64>();
    for (field, links, total) in [
        ("captured", sum(|l| l.captured), n.captured),
        ("delivered", sum(|l| l.delivered), n.delivered),
        ("dropped", sum(|l| l.dropped), n.dropped),
        (
            "delivered_bytes",
            sum(|l| l.delivered_bytes),
            n.delivered_bytes,
        ),
    ] {
        if links != total {
            problems.push(format!(
                "links: {field} adds up to {links}, the total says {total}"
            ));
        }
    }
    if n.delivered == 0 {
        problems.push("no copy was delivered: no traffic crossed the network".into());
    }
    Check::of(name, problems, || {
        format!(
            "captured {} = delivered {} + dropped {} + in flight {}, in total and on each of {} links",
            n.captured,
            n.delivered,
            n.dropped,
            n.in_flight,
            n.links.len()
        )
    })
}

/// The modem ledger: every frame sent ended in one outcome, and some were delivered
/// (`modems`: the scenario has emulated modems).
pub fn modem_check(s: &Summary, modems: bool) -> Check {
    let name = "modem ledger";
    let Some(m) = &s.modems else {
        return Check::absent(
            name,
            modems,
            "summary.json has no modem ledger, yet the scenario has modems",
            "no modems in this scenario",
        );
    };
    let l = &m.ledger;
    let mut problems = Vec::new();
    if l.sent != l.ended() {
        problems.push(format!(
            "sent {} ≠ {} frames with an outcome",
            l.sent,
            l.ended()
        ));
    }
    if l.delivered == 0 {
        problems.push("no frame was delivered".into());
    }
    Check::of(name, problems, || {
        format!(
            "sent {} = delivered {} + dropped {}",
            l.sent,
            l.delivered,
            l.sent - l.delivered
        )
    })
}

/// Every program started and ran until the run stopped it (one that ended by itself, e.g. an
/// iperf3 with a fixed `-t`, stopped part of the traffic early).
pub fn programs_check(s: &Summary) -> Check {
    let name = "programs";
    let mut problems = Vec::new();
    for p in &s.programs {
        let stopped_by_run = p
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with("stopped with") || n.starts_with("did not stop within"));
        if p.started_s.is_none() {
            problems.push(format!(
                "{} never started ({})",
                p.name,
                p.note.as_deref().unwrap_or("no reason given")
            ));
        } else if !stopped_by_run {
            let how = match (p.exit_code, p.signal) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(sig)) => format!("signal {sig}"),
                _ => "unknown".into(),
            };
            problems.push(format!(
                "{} ended by itself at {} s ({how}{})",
                p.name,
                p.ended_s.map_or("?".into(), |t| format!("{t:.1}")),
                p.note
                    .as_deref()
                    .map_or(String::new(), |n| format!("; {n}"))
            ));
        }
    }
    Check::of(name, problems, || {
        format!("all {} ran until the end of the run", s.programs.len())
    })
}

// ---- traffic over time ------------------------------------------------------------------------

/// Packets delivered over the run, from the report's `throughput.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Traffic {
    /// Delivered packets (all links) per quarter of the run.
    pub quarters: [u64; 4],
    pub bins: usize,
    pub bins_with_traffic: usize,
    pub bin_s: f64,
}

impl Traffic {
    pub fn percent(&self) -> f64 {
        if self.bins == 0 {
            0.0
        } else {
            self.bins_with_traffic as f64 / self.bins as f64 * 100.0
        }
    }
}

/// Reads `throughput.csv` (`bin_start_s`, `delivered_packets` per link and bin) of a run of
/// `duration_s`; an error names the file, the row and the column.
pub fn traffic_bins(path: &Path, duration_s: f64) -> anyhow::Result<Traffic> {
    let mut r = csv::Reader::from_path(path)
        .with_context(|| format!("cannot read {} (the run's report)", path.display()))?;
    let headers = r
        .headers()
        .with_context(|| format!("{}: no header", path.display()))?
        .clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| anyhow::anyhow!("{}: no column {name}", path.display()))
    };
    let (start, end, packets) = (
        col("bin_start_s")?,
        col("bin_end_s")?,
        col("delivered_packets")?,
    );
    let mut per_bin: BTreeMap<u64, u64> = BTreeMap::new();
    let mut bin_s = 0.0_f64;
    for (i, row) in r.records().enumerate() {
        let row = row.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        let num = |c: usize, name: &str| -> anyhow::Result<f64> {
            row.get(c)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    anyhow::anyhow!("{}: row {}: {name} is not a number", path.display(), i + 2)
                })
        };
        let (a, b, n) = (
            num(start, "bin_start_s")?,
            num(end, "bin_end_s")?,
            num(packets, "delivered_packets")?,
        );
        bin_s = bin_s.max(b - a);
        // Bins by their start in milliseconds: links share them.
        *per_bin
            .entry((a * 1000.0).round().max(0.0) as u64)
            .or_default() += n.max(0.0) as u64;
    }
    let bins = if bin_s > 0.0 {
        (duration_s / bin_s).ceil() as usize
    } else {
        0
    };
    let mut quarters = [0u64; 4];
    for (&ms, &n) in &per_bin {
        let q = ((ms as f64 / 1000.0 / duration_s * 4.0).floor() as usize).min(3);
        quarters[q] += n;
    }
    Ok(Traffic {
        quarters,
        bins,
        bins_with_traffic: per_bin.values().filter(|&&n| n > 0).count().min(bins),
        bin_s,
    })
}

// ---- what the run leaves behind ---------------------------------------------------------------

/// One process as `/proc/<pid>/stat` describes it.
struct Proc {
    pid: i32,
    ppid: i32,
    start: u64,
    zombie: bool,
}

fn read_proc(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        pid,
        zombie: f.first() == Some(&"Z") || f.first() == Some(&"X"),
        ppid: f.get(1)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn all_procs() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter_map(read_proc)
                .collect()
        })
        .unwrap_or_default()
}

/// The network namespace inode of a process.
fn netns_inode(pid: i32) -> Option<u64> {
    std::fs::metadata(format!("/proc/{pid}/ns/net"))
        .ok()
        .map(|m| m.ino())
}

fn cmdline(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    if text.is_empty() {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| format!("[{}]", c.trim()))
            .unwrap_or_default()
    } else {
        text.join(" ")
    }
}

/// TUN devices of the host's network namespace (those with `tun_flags` in sysfs).
fn host_tun_devices() -> BTreeSet<String> {
    std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("tun_flags").exists())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// TUN devices inside namespace `ns` (`ip -d link` details say `tun type`).
fn tun_devices_in(ns: &str) -> Vec<String> {
    let Ok(out) = std::process::Command::new("ip")
        .args(["-n", ns, "-d", "-o", "link", "show"])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" tun type "))
        .filter_map(|l| {
            let name = l.split(':').nth(1)?.trim();
            Some(format!("{ns}/{}", name.split('@').next().unwrap_or(name)))
        })
        .collect()
}

/// Who belongs to the run: its descendants and whatever ran in its vehicles' namespaces,
/// gathered while it runs.
struct Watch {
    root: i32,
    namespaces: Vec<String>,
    /// Inodes of the vehicles' namespaces, as seen while they existed.
    ns_inodes: BTreeSet<u64>,
    /// (pid, start time) → command line of every process seen belonging to the run.
    seen: HashMap<(i32, u64), String>,
}

impl Watch {
    fn new(root: i32, namespaces: Vec<String>) -> Watch {
        Watch {
            root,
            namespaces,
            ns_inodes: BTreeSet::new(),
            seen: HashMap::new(),
        }
    }

    /// Notes the namespaces' inodes and the run's processes now.
    fn scan(&mut self) {
        for ns in &self.namespaces {
            if let Ok(m) = std::fs::metadata(Path::new(netns::NETNS_DIR).join(ns)) {
                self.ns_inodes.insert(m.ino());
            }
        }
        let procs = all_procs();
        let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
        for p in &procs {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut todo = vec![self.root];
        let mut members: Vec<&Proc> = Vec::new();
        while let Some(pid) = todo.pop() {
            for c in children.get(&pid).into_iter().flatten() {
                members.push(c);
                todo.push(c.pid);
            }
        }
        for p in &procs {
            if !p.zombie && netns_inode(p.pid).is_some_and(|i| self.ns_inodes.contains(&i)) {
                members.push(p);
            }
        }
        for p in members {
            if !p.zombie {
                self.seen
                    .entry((p.pid, p.start))
                    .or_insert_with(|| cmdline(p.pid));
            }
        }
    }

    /// What is left after the run ended: its namespaces, owner files, new TUN devices (on the
    /// host and in namespaces left), and processes (seen as the run's, re-parented to the soak,
    /// or in one of its namespaces), which are then killed.
    fn leftovers(&self, tuns_before: &BTreeSet<String>) -> Leftovers {
        let me = std::process::id() as i32;
        let mut left = Leftovers::default();
        for ns in &self.namespaces {
            if Path::new(netns::NETNS_DIR).join(ns).exists() {
                left.namespaces.push(ns.clone());
                left.tun_devices.extend(tun_devices_in(ns));
            }
            let owner = Path::new(netns::STATE_DIR).join(format!("{ns}.owner"));
            if owner.exists() {
                left.owner_files.push(owner.display().to_string());
            }
        }
        left.tun_devices.extend(
            host_tun_devices()
                .difference(tuns_before)
                .map(|d| d.to_string()),
        );
        let mut pids = BTreeSet::new();
        for p in all_procs() {
            if p.zombie || p.pid == me {
                continue;
            }
            let run_member = self.seen.contains_key(&(p.pid, p.start))
                || p.ppid == me
                || netns_inode(p.pid).is_some_and(|i| self.ns_inodes.contains(&i));
            if run_member && pids.insert(p.pid) {
                left.processes.push(format!("{} {}", p.pid, cmdline(p.pid)));
            }
        }
        for &pid in &pids {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        // Reap what was re-parented to us (the run itself was waited for already).
        loop {
            let mut status = 0;
            // SAFETY: waitpid with WNOHANG on any child only writes `status`.
            let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if r <= 0 {
                break;
            }
        }
        left
    }
}

/// Bytes of every file under `dir`.
fn folder_bytes(dir: &Path) -> u64 {
    let Ok(d) = std::fs::read_dir(dir) else {
        return 0;
    };
    d.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => folder_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(run_s: f64, every_s: f64, rss: impl Fn(f64) -> f64) -> Vec<Sample> {
        let mut v = Vec::new();
        let mut t = 0.0;
        while t <= run_s + 10.0 {
            v.push(Sample {
                t_s: t,
                running: t <= run_s,
                rss_kib: (rss(t) * 1024.0) as u64,
                fds: 30,
                threads: 8,
            });
            t += every_s;
        }
        v
    }

    #[test]
    fn warm_up_and_windows_follow_the_run_length() {
        let m = memory(&series(120.0, 2.0, |_| 40.0), 120.0);
        assert_eq!((m.warm_up_s, m.window_s), (60.0, 20.0));
        assert_eq!((m.samples_at_warm_up_end, m.samples_at_end), (10, 10));
        assert_eq!(m.growth_percent, 0.0);
        let m = memory(&series(3600.0, 2.0, |_| 40.0), 3600.0);
        assert_eq!((m.warm_up_s, m.window_s), (720.0, 60.0));
        assert!(memory_check(&m).ok);
    }

    #[test]
    fn growth_is_the_medians_of_the_two_windows_and_ignores_spikes_and_the_report() {
        // Start-up ramp, then flat at 40 MiB with one spike per window; the report phase
        // (after 600 s) doubles the memory but is not part of the comparison.
        let rss = |t: f64| {
            if t < 30.0 {
                10.0 + t
            } else if t > 600.0 {
                80.0
            } else if (t as u64) % 50 == 0 {
                60.0
            } else {
                40.0
            }
        };
        let m = memory(&series(600.0, 2.0, rss), 600.0);
        assert_eq!(m.rss_warm_up_end_mib, 40.0);
        assert_eq!(m.rss_end_mib, 40.0);
        assert!(memory_check(&m).ok, "{m:?}");
        assert_eq!(m.peak_run_mib, 60.0);
        assert_eq!(m.peak_mib, 80.0);

        // A steady leak of 10 % over the run fails.
        let m = memory(&series(600.0, 2.0, |t| 40.0 + t / 150.0), 600.0);
        assert!(m.growth_percent > 5.0, "{m:?}");
        assert!(!memory_check(&m).ok);
        assert!((m.slope_mib_per_hour - 24.0).abs() < 0.01, "{m:?}");
    }

    #[test]
    fn too_few_samples_fail_instead_of_passing_vacuously() {
        let m = memory(&series(70.0, 2.0, |_| 40.0), 70.0);
        let c = memory_check(&m);
        assert!(!c.ok, "{c:?}");
        assert!(c.detail.contains("too few samples"), "{c:?}");
        assert!(!memory_check(&memory(&[], 0.0)).ok);
    }

    const SUMMARY: &str = r#"{
      "interrupted": false, "sim_seconds": 120.0, "slipped_seconds": 0.01, "windows": 120000,
      "network": {"captured": 10, "delivered": 7, "dropped": 3, "in_flight": 0, "balanced": true,
        "drops": {"out of range": 2, "shutdown": 1}, "delivered_bytes": 700,
        "links": [
          {"src": "usv2", "dst": "usv1", "captured": 9, "delivered": 7, "dropped": 2, "in_flight": 0,
           "balanced": true, "drops": {"out of range": 1, "shutdown": 1}, "delivered_bytes": 700},
          {"src": "usv1", "dst": null, "captured": 1, "delivered": 0, "dropped": 1, "in_flight": 0,
           "balanced": true, "drops": {"out of range": 1}, "delivered_bytes": 0}]},
      "modems": {"ledger": {"sent": 5, "delivered": 3, "out_of_range": 1, "packet_error": 0,
        "collision": 0, "half_duplex": 0, "no_receiver": 0, "shutdown": 1}},
      "programs": [
        {"name": "a", "vehicle": "usv1", "started_s": 0.0, "ended_s": 120.0, "exit_code": null,
         "signal": 2, "note": "stopped with SIGINT"},
        {"name": "b", "vehicle": null, "started_s": 1.0, "ended_s": 59.0, "exit_code": 0,
         "signal": null, "note": null}]
    }"#;

    #[test]
    fn ledgers_balance_and_a_program_that_ended_early_is_named() {
        let s = parse_summary(SUMMARY.as_bytes()).unwrap();
        assert!(network_check(&s, true).ok, "{:?}", network_check(&s, true));
        assert!(modem_check(&s, true).ok);
        let p = programs_check(&s);
        assert!(!p.ok);
        assert!(
            p.detail.contains("b ended by itself at 59.0 s (exit 0)"),
            "{p:?}"
        );
    }

    #[test]
    fn an_unbalanced_ledger_says_where() {
        let text = SUMMARY
            .replace(r#""captured": 9"#, r#""captured": 8"#)
            .replace(r#""sent": 5"#, r#""sent": 6"#);
        let s = parse_summary(text.as_bytes()).unwrap();
        let n = network_check(&s, true);
        assert!(!n.ok);
        assert!(n.detail.contains("usv2 → usv1: captured 8"), "{n:?}");
        assert!(n.detail.contains("links: captured adds up to 9"), "{n:?}");
        let m = modem_check(&s, true);
        assert!(!m.ok && m.detail.contains("sent 6"), "{m:?}");
        // A ledger the scenario should have but the summary lacks.
        let s = parse_summary(br#"{"interrupted": false, "sim_seconds": 1, "slipped_seconds": 0}"#)
            .unwrap();
        assert!(!network_check(&s, true).ok);
        assert!(network_check(&s, false).ok);
        assert!(!modem_check(&s, true).ok);
    }

    #[test]
    fn a_bad_summary_names_the_field() {
        let text = SUMMARY.replace(r#""delivered": 0,"#, r#""delivered": "none","#);
        let e = parse_summary(text.as_bytes()).unwrap_err();
        assert!(e.starts_with("network.links[1].delivered:"), "{e}");
        let e = parse_summary(b"{").unwrap_err();
        assert!(e.contains("EOF"), "{e}");
        let e = read_summary(Path::new("/nonexistent/summary.json")).unwrap_err();
        assert!(
            format!("{e:#}").contains("/nonexistent/summary.json"),
            "{e:#}"
        );
    }

    #[test]
    fn traffic_is_counted_per_quarter_and_a_bad_row_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("throughput.csv");
        std::fs::write(
            &p,
            "src,dst,bin_start_s,bin_end_s,delivered_packets,delivered_bytes,mbit_per_s,mean_delay_s\n\
             usv2,usv1,0,1,5,500,0.004,0.001\n\
             usv1,usv2,0,1,2,100,0.001,0.001\n\
             usv2,usv1,1,2,0,0,0,\n\
             usv2,usv1,2,3,1,100,0.001,0.001\n",
        )
        .unwrap();
        let t = traffic_bins(&p, 4.0).unwrap();
        assert_eq!(t.quarters, [7, 0, 1, 0]);
        assert_eq!((t.bins, t.bins_with_traffic, t.bin_s), (4, 2, 1.0));
        assert_eq!(t.percent(), 50.0);
        std::fs::write(
            &p,
            "src,dst,bin_start_s,bin_end_s,delivered_packets\nusv2,usv1,0,1,x\n",
        )
        .unwrap();
        let e = format!("{:#}", traffic_bins(&p, 4.0).unwrap_err());
        assert!(e.contains("row 2: delivered_packets"), "{e}");
        let e = format!(
            "{:#}",
            traffic_bins(&dir.path().join("no.csv"), 4.0).unwrap_err()
        );
        assert!(e.contains("no.csv"), "{e}");
    }
}
