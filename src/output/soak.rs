//! The judging of an endurance run (`cosim soak`), from what was sampled and what the run left:
//!
//! - **memory**: the samples taken while the windows ran (before `summary.json` appeared; the
//!   report made after it is left out) after a warm-up of max(60 s, 20 % of that time), compared
//!   as the median of the first `w` seconds after the warm-up against the median of the last
//!   `w` seconds, `w` = min(60 s, a third of what follows the warm-up): growth below 5 %,
//!   judged only on a run that kept pace (one that slipped more than a tenth of its sim time
//!   behind its schedule has its growth reported, not judged: [`memory_check`]);
//! - **network ledger** and **modem ledger** (the run's [`RunReport`]): captured = delivered +
//!   dropped + in flight in total and per link, the drops adding up, nothing in flight at the
//!   end (copies still in flight then are counted as `shutdown` drops), traffic captured at all;
//!   every modem frame sent ended in one outcome;
//! - **traffic**: packets delivered in every quarter of the run (the report's `throughput.csv`,
//!   read as [`ThroughputRow`]s);
//! - **programs**: every program started and ran until the run stopped it;
//! - **leftovers**: nothing of the run left ([`Leftovers`], found by `io::os::procfs`).
//!
//! Everything found is a [`Soak`] (`soak.json`); its terminal tables are
//! [`crate::output::report::table::soak`].

use crate::model::modem::ledger::FrameLedgerSummary;
use crate::net::ledger::{Balance, LedgerSummary};
use crate::output::report::series::ThroughputRow;
use crate::output::summary::RunReport;
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Resident memory may grow by less than this between the warm-up's end and the run's end.
pub const GROWTH_LIMIT_PERCENT: f64 = 5.0;
/// The shortest soak: a minute of warm-up and two windows to compare after it.
pub const MIN_MINUTES: f64 = 2.0;
/// The warm-up: at least this long, and at least [`WARM_UP_SHARE`] of the run.
pub const WARM_UP_MIN_S: f64 = 60.0;
pub const WARM_UP_SHARE: f64 = 0.2;
/// The windows whose medians are compared: at most this long.
pub const COMPARE_WINDOW_MAX_S: f64 = 60.0;
/// At least this many samples in each window compared.
const MIN_WINDOW_SAMPLES: usize = 3;

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

impl NetworkTotals {
    pub fn of(n: &LedgerSummary) -> NetworkTotals {
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

    pub fn balance(&self) -> Balance {
        Balance {
            captured: self.captured,
            delivered: self.delivered,
            dropped: self.dropped,
            in_flight: self.in_flight,
        }
    }
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
}

/// How the watched run ended.
#[derive(Debug, Clone)]
pub struct RunEnd {
    /// Its exit status in words (`exit status: 0`).
    pub status: String,
    pub success: bool,
    /// Stopped early by the soak's SIGINT.
    pub interrupted: bool,
    /// Its stderr log, named when it failed.
    pub stderr_log: PathBuf,
}

/// What the scenario should have produced.
#[derive(Debug, Clone, Copy)]
pub struct Expected {
    /// It captures live traffic (a network ledger).
    pub live: bool,
    /// It has emulated modems (a modem ledger).
    pub modems: bool,
}

/// Every check of a soak, in order: run, memory, the ledgers and programs (or one `ledgers`
/// check if the summary could not be read), traffic, leftovers.
pub fn checks(
    run: &RunEnd,
    memory: &Memory,
    summary: &anyhow::Result<RunReport>,
    traffic: &anyhow::Result<Traffic>,
    leftovers: &Leftovers,
    expected: Expected,
) -> Vec<Check> {
    let pace = (summary.as_ref().ok()).map(|s| (s.slipped_seconds, s.sim_seconds));
    let mut checks = vec![run_check(run), memory_check(memory, pace)];
    match summary {
        Ok(s) => {
            checks.push(network_check(s, expected.live));
            checks.push(modem_check(s, expected.modems));
            checks.push(programs_check(s));
        }
        Err(e) => checks.push(Check {
            name: "ledgers",
            ok: false,
            detail: format!("{e:#}"),
        }),
    }
    checks.push(match traffic {
        Ok(t) => Check {
            name: "traffic",
            ok: t.quarters.iter().all(|&n| n > 0),
            detail: format!(
                "packets delivered per quarter of the run: {:?}; in {:.1} % of {} bins of {} s",
                t.quarters,
                t.percent(),
                t.bins,
                t.bin_s
            ),
        },
        Err(e) => Check {
            name: "traffic",
            ok: false,
            detail: format!("{e:#}"),
        },
    });
    checks.push(Check {
        name: "leftovers",
        ok: leftovers.is_empty(),
        detail: if leftovers.is_empty() {
            "no namespace, owner file, TUN device or process of the run left".into()
        } else {
            format!("{leftovers:?} (the processes were killed)")
        },
    });
    checks
}

fn run_check(run: &RunEnd) -> Check {
    let status = &run.status;
    Check {
        name: "run",
        ok: run.success && !run.interrupted,
        detail: if run.interrupted {
            format!("stopped early by the soak's SIGINT ({status})")
        } else if run.success {
            format!("cosim run ended: {status}")
        } else {
            format!(
                "cosim run ended: {status} (see {})",
                run.stderr_log.display()
            )
        },
    }
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

/// A run that fell more than this share of its sim time behind its paced schedule is not
/// judged on memory growth.
pub const UNJUDGED_SLIP_SHARE: f64 = 0.1;

/// The memory check. `pace`: the run's `slipped_seconds` and `sim_seconds`. A run that fell
/// far behind its schedule (a machine busy with other work) held a backlog in its bounded
/// queues and grew the allocator's arenas under contention: its growth is reported, not
/// judged, so that the verdict is the code's and not the machine's load.
pub fn memory_check(m: &Memory, pace: Option<(f64, f64)>) -> Check {
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
    let figures = format!(
        "RSS {:.1} → {:.1} MiB after a {:.0} s warm-up: {:+.2} % (limit {GROWTH_LIMIT_PERCENT} %)",
        m.rss_warm_up_end_mib, m.rss_end_mib, m.warm_up_s, m.growth_percent
    );
    let ok = m.growth_percent < GROWTH_LIMIT_PERCENT;
    match pace {
        Some((slipped, sim)) if !ok && slipped > UNJUDGED_SLIP_SHARE * sim => Check {
            name: "memory",
            ok: true,
            detail: format!(
                "{figures}; not judged: the run fell {slipped:.1} s behind its schedule, more than {:.0} % of its {sim:.0} s",
                UNJUDGED_SLIP_SHARE * 100.0
            ),
        },
        _ => Check {
            name: "memory",
            ok,
            detail: figures,
        },
    }
}

/// What is wrong with one ledger line (`what`: "total" or "usv2 → usv1"), if anything.
fn ledger_problems(
    what: &str,
    balance: Balance,
    balanced: bool,
    drops: &BTreeMap<String, u64>,
    out: &mut Vec<String>,
) {
    if !balance.adds_up() {
        let Balance {
            captured,
            delivered,
            dropped,
            in_flight,
        } = balance;
        out.push(format!(
            "{what}: captured {captured} ≠ delivered {delivered} + dropped {dropped} + in flight {in_flight}"
        ));
    }
    let by_reason: u64 = drops.values().sum();
    if by_reason != balance.dropped {
        out.push(format!(
            "{what}: drops by reason add up to {by_reason}, not {}",
            balance.dropped
        ));
    }
    if balance.in_flight != 0 {
        out.push(format!(
            "{what}: {} copies still in flight at the end",
            balance.in_flight
        ));
    }
    if !balanced {
        out.push(format!("{what}: marked not balanced"));
    }
}

/// The network ledger: balanced in total and per link, the links adding up to the total,
/// nothing in flight, traffic captured and delivered (`live`: the scenario captures traffic).
pub fn network_check(s: &RunReport, live: bool) -> Check {
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
    ledger_problems("total", n.balance(), n.balanced, &n.drops, &mut problems);
    for l in &n.links {
        let what = format!("{} → {}", l.src, l.dst.as_deref().unwrap_or("(none)"));
        ledger_problems(&what, l.balance(), l.balanced, &l.drops, &mut problems);
    }
    let sum = |f: fn(&crate::net::ledger::LinkSummary) -> u64| n.links.iter().map(f).sum::<u64>();
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
            "{}, in total and on each of {} links",
            n.balance(),
            n.links.len()
        )
    })
}

/// The modem ledger: every frame sent ended in one outcome, and some were delivered
/// (`modems`: the scenario has emulated modems).
pub fn modem_check(s: &RunReport, modems: bool) -> Check {
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
pub fn programs_check(s: &RunReport) -> Check {
    let name = "programs";
    let mut problems = Vec::new();
    for p in &s.programs {
        if p.started_s.is_none() {
            problems.push(format!(
                "{} never started ({})",
                p.name,
                p.note().as_deref().unwrap_or("no reason given")
            ));
        } else if !p.end.stopped_by_run() {
            let how = match (p.exit_code, p.signal) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(sig)) => format!("signal {sig}"),
                _ => "unknown".into(),
            };
            problems.push(format!(
                "{} ended by itself at {} s ({how}{})",
                p.name,
                p.ended_s.map_or("?".into(), |t| format!("{t:.1}")),
                p.note().map_or(String::new(), |n| format!("; {n}"))
            ));
        }
    }
    Check::of(name, problems, || {
        format!("all {} ran until the end of the run", s.programs.len())
    })
}

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

/// Reads `throughput.csv` ([`ThroughputRow`]s: delivered packets per link and bin) of a run of
/// `duration_s`; an error names the file, the row and the column.
pub fn traffic_bins(path: &Path, duration_s: f64) -> anyhow::Result<Traffic> {
    let mut r = csv::Reader::from_path(path)
        .with_context(|| format!("cannot read {} (the run's report)", path.display()))?;
    let headers = r
        .headers()
        .with_context(|| format!("{}: no header", path.display()))?
        .clone();
    let mut per_bin: BTreeMap<u64, u64> = BTreeMap::new();
    let mut bin_s = 0.0_f64;
    for (i, row) in r.deserialize::<ThroughputRow<'static>>().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| {
            let column = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => err
                    .field()
                    .and_then(|f| headers.get(f as usize))
                    .map_or(String::new(), |c| format!("{c}: ")),
                _ => String::new(),
            };
            anyhow::anyhow!("{}: row {line}: {column}{e}", path.display())
        })?;
        let (a, b) = (row.bin_start_s, row.bin_end_s);
        for (name, v) in [("bin_start_s", a), ("bin_end_s", b)] {
            anyhow::ensure!(
                v.is_finite(),
                "{}: row {line}: {name} is not a number",
                path.display()
            );
        }
        bin_s = bin_s.max(b - a);
        // Bins by their start in milliseconds: links share them.
        *per_bin
            .entry((a * 1000.0).round().max(0.0) as u64)
            .or_default() += row.delivered_packets;
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
        assert!(memory_check(&m, None).ok);
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
        assert!(memory_check(&m, None).ok, "{m:?}");
        assert_eq!(m.peak_run_mib, 60.0);
        assert_eq!(m.peak_mib, 80.0);

        // A steady leak of 10 % over the run fails.
        let m = memory(&series(600.0, 2.0, |t| 40.0 + t / 150.0), 600.0);
        assert!(m.growth_percent > 5.0, "{m:?}");
        assert!(!memory_check(&m, None).ok);
        assert!(
            !memory_check(&m, Some((5.0, 600.0))).ok,
            "a run that kept pace is judged"
        );
        let c = memory_check(&m, Some((153.6, 600.0)));
        assert!(
            c.ok && c.detail.contains("not judged: the run fell 153.6 s behind"),
            "{c:?}"
        );
        assert!((m.slope_mib_per_hour - 24.0).abs() < 0.01, "{m:?}");
    }

    #[test]
    fn too_few_samples_fail_instead_of_passing_vacuously() {
        let m = memory(&series(70.0, 2.0, |_| 40.0), 70.0);
        let c = memory_check(&m, None);
        assert!(!c.ok, "{c:?}");
        assert!(c.detail.contains("too few samples"), "{c:?}");
        assert!(!memory_check(&memory(&[], 0.0), None).ok);
    }

    /// A run summary as a run writes it (every field), without network and modems.
    const BASE: &str = r#""scenario": "soak", "windows": 120000, "window_ms": 1.0,
      "sim_seconds": 120.0, "wall_seconds": 121.5, "slipped_seconds": 0.01, "late_windows": 3,
      "max_late_ms": 1.2, "windows_per_second": 987.6, "interrupted": false,
      "record": "out/soak/record.mcap", "timeline": null,
      "pairs": [{"a": "usv1", "b": "usv2", "los_windows": 100000, "nlos_windows": 20000,
                 "transitions": 2}],
      "stages": {"physics": {"seconds": 1.5, "us_per_window": 12.5}}"#;

    const SUMMARY: &str = r#"{
      "network": {"captured": 10, "delivered": 7, "dropped": 3, "in_flight": 0, "balanced": true,
        "drops": {"out of range": 2, "shutdown": 1}, "delivered_corrupted": 0,
        "captured_bytes": 1000, "delivered_bytes": 700, "unknown_releases": 0,
        "packet_records_dropped": 0,
        "links": [
          {"src": "usv2", "dst": "usv1", "captured": 9, "delivered": 7, "dropped": 2, "in_flight": 0,
           "balanced": true, "drops": {"out of range": 1, "shutdown": 1}, "delivered_corrupted": 0,
           "captured_bytes": 900, "delivered_bytes": 700},
          {"src": "usv1", "dst": null, "captured": 1, "delivered": 0, "dropped": 1, "in_flight": 0,
           "balanced": true, "drops": {"out of range": 1}, "delivered_corrupted": 0,
           "captured_bytes": 100, "delivered_bytes": 0}]},
      "modems": {"ledger": {"sent": 5, "delivered": 3, "out_of_range": 1, "packet_error": 0,
        "collision": 0, "half_duplex": 0, "no_receiver": 0, "shutdown": 1},
        "bridges": {"connections": 3, "refused": 0, "lines_in": 10, "lines_out": 20,
          "dropped_no_client": 0, "dropped_queue_full": 0, "long_lines": 0,
          "passthrough_failures": 0}},
      "programs": [
        {"name": "a", "vehicle": "usv1", "started_s": 0.0, "ended_s": 120.0, "exit_code": null,
         "signal": 2, "note": "stopped with SIGINT"},
        {"name": "b", "vehicle": null, "started_s": 1.0, "ended_s": 59.0, "exit_code": 0,
         "signal": null, "note": null}],
      BASE
    }"#;

    fn summary(text: &str) -> Result<RunReport, String> {
        RunReport::parse(text.replace("BASE", BASE).as_bytes())
    }

    #[test]
    fn ledgers_balance_and_a_program_that_ended_early_is_named() {
        let s = summary(SUMMARY).unwrap();
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
        let s = summary(&text).unwrap();
        let n = network_check(&s, true);
        assert!(!n.ok);
        assert!(n.detail.contains("usv2 → usv1: captured 8"), "{n:?}");
        assert!(n.detail.contains("links: captured adds up to 9"), "{n:?}");
        let m = modem_check(&s, true);
        assert!(!m.ok && m.detail.contains("sent 6"), "{m:?}");
        // A ledger the scenario should have but the summary lacks.
        let s = summary(r#"{"programs": [], BASE}"#).unwrap();
        assert!(!network_check(&s, true).ok);
        assert!(network_check(&s, false).ok);
        assert!(!modem_check(&s, true).ok);
    }

    #[test]
    fn a_bad_summary_names_the_field() {
        let text = SUMMARY.replace(r#""delivered": 0,"#, r#""delivered": "none","#);
        let e = summary(&text).unwrap_err();
        assert!(e.starts_with("network.links[1].delivered:"), "{e}");
        let e = RunReport::parse(b"{").unwrap_err();
        assert!(e.contains("EOF"), "{e}");
        let e = RunReport::read(Path::new("/nonexistent/summary.json")).unwrap_err();
        assert!(
            format!("{e:#}").contains("/nonexistent/summary.json"),
            "{e:#}"
        );
    }

    #[test]
    fn throughput_rows_read_back_as_the_report_writes_them() {
        let row = ThroughputRow {
            src: "usv2".into(),
            dst: "usv1".into(),
            bin_start_s: 1.0,
            bin_end_s: 2.0,
            delivered_packets: 3,
            delivered_bytes: 4000,
            mbit_per_s: 0.032,
            mean_delay_s: None,
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(&row).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(ThroughputRow::HEADER.join(",").as_str())
        );
        let back: ThroughputRow<'static> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(back, row);
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
