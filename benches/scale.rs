//! The whole co-simulation at scale: `cosim run` (physics, network coordinator, run record) with
//! N = 8 … 256 vehicles patrolling at 2 m/s over a 1024 × 1024-cell terrain, at W = 1 ms and
//! W = 10 ms, each run in a process of its own (its peak RSS read with `wait4`):
//!
//! - **physics only**: no capture, unpaced (`real_time_factor: 0`): windows/s and real time
//!   reached;
//! - **live**: every vehicle in its namespace behind its TUN, paced at real time, each running
//!   this benchmark's own traffic program (`scale --traffic`, a scenario program,
//!   `benches/common/traffic.rs`: a 100-byte multicast heartbeat to 239.255.0.1:7400 every
//!   100 ms, as DDS's participant announcements, and 100-byte unicast to a neighbour at
//!   10 packets/s, each stamped with its send time):
//!   slip behind the wall clock (how much longer than real time the windows took), how many
//!   windows opened late and were caught up, the latest of them, the one-way time the receivers
//!   saw (p50/p99, wall clock, of the messages sent from window 0 on; those the programs sent
//!   while the run was still starting, which waited for window 0, counted apart with their
//!   longest wait), the run's own emulation error (`summary.json`'s `emulation`:
//!   p50/p99/max per delivered copy and the share over its bound) and the ledger.
//!
//! Each row also says where the time went (`summary.json`'s `stages`, µs per window).
//!
//! `cargo bench --bench scale` (root for the live rows). Environment:
//! - `BENCH_N` (default `8,16,32,64,128,256`), `BENCH_LIVE_N` (default `8,16,32,64,128`);
//! - `BENCH_CHANNEL_MS` (default 10): `simulators.channel_interval_ms`; the physics-only rows at
//!   W = 1 ms are also run with the channel sampled every window;
//! - `BENCH_LIVE_SECONDS` (default 10) per live row, `BENCH_LONG_SECONDS` (default 60) for the
//!   64-vehicle live row at W = 1 ms;
//! - `BENCH_REALTIME` (default 10): the live rows' `realtime_priority`, 0 to leave it out;
//! - `BENCH_KEEP` set: the runs' folders (scenarios, `summary.json`, the traffic programs'
//!   `traffic/<vehicle>.json` with each one-way time's send stamp) are kept and their place
//!   printed.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "common/traffic.rs"]
mod traffic;
use traffic::{address, pct};
#[path = "common/figures.rs"]
mod figures;
use figures::number;

/// The stages each row prints.
const STAGES: [(&str, &str); 7] = [
    ("physics", "physics"),
    ("channel decode", "channel_decode"),
    ("network sim", "network_simulator"),
    ("live window", "live_window"),
    ("capture", "capture"),
    ("release", "release"),
    ("record", "record"),
];

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn list(var: &str, default: &str) -> Vec<usize> {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// `BENCH_REALTIME`: the live rows' `realtime_priority` (default 10; 0 leaves it out).
fn realtime_priority() -> u32 {
    number("BENCH_REALTIME", 10.0) as u32
}

#[derive(Clone, Copy)]
struct Row {
    n: usize,
    window_ms: f64,
    channel_ms: f64,
    live: bool,
    seconds: f64,
}

fn scenario(dir: &Path, r: Row) -> PathBuf {
    let side = (r.n as f64).sqrt().ceil() as usize;
    let spacing = 1800.0 / (side.max(2) - 1) as f64;
    let mut y = format!(
        "name: scale{n}\nwindow_ms: {w}\nduration_s: {d}\nseed: 1\nreal_time_factor: {rtf}\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  \
         terrain: {{kind: procedural, size_m: [2048, 2048], cell_size_m: 2, base_height_m: -80}}\n\
         simulators: {{channel_interval_ms: {c}}}\n\
         links:\n  default: {{model: ideal, rate_bps: 1.0e8, delay_ms: 0}}\n\
         network: {{capture: {cap}, queue_limit: 65536}}\n{rt}vehicles:\n",
        n = r.n,
        w = r.window_ms,
        d = r.seconds,
        rtf = if r.live { 1 } else { 0 },
        c = r.channel_ms,
        cap = if r.live { "tun" } else { "none" },
        rt = match (r.live, realtime_priority()) {
            (true, p) if p > 0 => format!("realtime_priority: {p}\n"),
            _ => String::new(),
        },
    );
    for i in 0..r.n {
        let (x, yy) = (
            -900.0 + (i % side) as f64 * spacing,
            -900.0 + (i / side) as f64 * spacing,
        );
        y += &format!(
            "  - name: v{i}\n    addresses: [{}/8]\n    start: {{x: {x:.1}, y: {yy:.1}, z: -10}}\n    \
             motion: {{kind: patrol, speed_mps: 2, max_turn_rate_deg_s: 20, max_depth_rate_mps: 0.5, \
             waypoints: [[{:.1}, {yy:.1}, -10], [{:.1}, {:.1}, -10], [{x:.1}, {:.1}, -10]]}}\n",
            address(i),
            x + 50.0,
            x + 50.0,
            yy + 50.0,
            yy + 50.0
        );
    }
    if r.live {
        let me = std::env::current_exe().unwrap();
        y += "programs:\n";
        for i in 0..r.n {
            y += &format!(
                "  - {{name: traffic_v{i}, vehicle: v{i}, command: [{}, --traffic, {}, {}]}}\n",
                me.display(),
                address(i),
                address((i + 1) % r.n)
            );
        }
    }
    let p = dir.join(format!(
        "scale_{}_{}_{}_{}.yaml",
        r.n, r.window_ms, r.channel_ms, r.live
    ));
    std::fs::write(&p, y).unwrap();
    p
}

struct Outcome {
    summary: serde_json::Value,
    peak_rss_mib: f64,
    one_way_ms: Vec<f64>,
    /// One-way times of the messages sent before window 0 (they waited for the run to start).
    before_start_ms: Vec<f64>,
}

/// Runs `cosim run` on the row's scenario; its summary, its peak RSS and the traffic's one-way
/// times.
fn run(dir: &Path, r: Row) -> Option<Outcome> {
    let s = scenario(dir, r);
    let out = dir.join(s.file_stem().unwrap());
    let _ = std::fs::remove_dir_all(&out);
    // Beside the run's folder: a run refuses a folder holding files it does not write.
    let log_path = PathBuf::from(format!("{}.log", out.display()));
    let log = std::fs::File::create(&log_path).unwrap();
    let child = Command::new(COSIM)
        .arg("run")
        .arg(&s)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    if status != 0 {
        eprintln!(
            "  N = {} W = {} ms live {}: cosim run failed, see {}",
            r.n,
            r.window_ms,
            r.live,
            log_path.display()
        );
        return None;
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).ok()?).ok()?;
    let mut one_way_ms = Vec::new();
    let mut before_start_ms = Vec::new();
    // Messages sent before window 0 waited for the network to start: counted apart.
    let from_unix_ms = summary["started_unix_s"].as_f64().unwrap_or(0.0) * 1e3;
    traffic::one_way_ms(&out, from_unix_ms, &mut one_way_ms, &mut before_start_ms);
    one_way_ms.sort_by(f64::total_cmp);
    before_start_ms.sort_by(f64::total_cmp);
    Some(Outcome {
        before_start_ms,
        summary,
        peak_rss_mib: usage.ru_maxrss as f64 / 1024.0,
        one_way_ms,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if traffic::run_if_asked(&args) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_tmp, dir) = if std::env::var_os("BENCH_KEEP").is_some() {
        let kept = tmp.keep();
        println!("runs kept in {}", kept.display());
        (None, kept)
    } else {
        let path = tmp.path().to_owned();
        (Some(tmp), path)
    };
    let channel_ms = number("BENCH_CHANNEL_MS", 10.0);
    let live_seconds = number("BENCH_LIVE_SECONDS", 10.0);
    let long_seconds = number("BENCH_LONG_SECONDS", 60.0);
    println!("whole runs (`cosim run`), vehicles patrolling at 2 m/s over 1024 × 1024 cells of 2 m; µs per window by stage");
    println!("\nphysics only, unpaced");
    println!(
        "| vehicles | W (ms) | channel every (ms) | windows/s | × real time | peak RSS (MiB) | µs per window by stage |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &w in &[1.0, 10.0] {
        for &n in &list("BENCH_N", "8,16,32,64,128,256") {
            let intervals: Vec<f64> = if w == 1.0 && channel_ms != w {
                vec![w, channel_ms]
            } else {
                vec![channel_ms.max(w)]
            };
            for c in intervals {
                let seconds = if w == 1.0 { 2.0 } else { 10.0 };
                let seconds = if c == w && n >= 128 && w == 1.0 {
                    0.5
                } else {
                    seconds
                };
                let r = Row {
                    n,
                    window_ms: w,
                    channel_ms: c,
                    live: false,
                    seconds,
                };
                if let Some(o) = run(&dir, r) {
                    let s = &o.summary;
                    let sim = s["sim_seconds"].as_f64().unwrap_or(0.0);
                    let wall = s["wall_seconds"].as_f64().unwrap_or(f64::NAN);
                    println!(
                        "| {n} | {w} | {c} | {:.0} | {:.2} | {:.0} | {} |",
                        s["windows_per_second"].as_f64().unwrap_or(0.0),
                        sim / wall,
                        o.peak_rss_mib,
                        figures::stages(s, &STAGES)
                    );
                }
            }
        }
    }
    if unsafe { libc::geteuid() } != 0 {
        println!("\nlive rows skipped: they need root (namespaces, TUN devices)");
        return;
    }
    println!("\nlive: TUN capture, DDS-like traffic, real time");
    println!(
        "| vehicles | W (ms) | channel every (ms) | sim s | × real time | slip | windows late | latest (ms) | one-way p50 / p99 (ms) | sent before window 0 (longest wait, ms) | emulation error p50 / p99 / max (ms), over bound | copies delivered / dropped | peak RSS (MiB) | µs per window by stage |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &w in &[1.0, 10.0] {
        for &n in &list("BENCH_LIVE_N", "8,16,32,64,128") {
            let seconds = if n == 64 && w == 1.0 {
                long_seconds
            } else {
                live_seconds
            };
            let c = channel_ms.max(w);
            let r = Row {
                n,
                window_ms: w,
                channel_ms: c,
                live: true,
                seconds,
            };
            if let Some(o) = run(&dir, r) {
                let s = &o.summary;
                let sim = s["sim_seconds"].as_f64().unwrap_or(0.0);
                let wall = s["wall_seconds"].as_f64().unwrap_or(f64::NAN);
                // Slip: how much longer than real time the windows took (schedule moves and
                // any lag left at the end).
                let slip = (wall - sim).max(0.0);
                let windows = s["windows"].as_f64().unwrap_or(f64::NAN);
                let late = s["late_windows"].as_f64().unwrap_or(f64::NAN);
                let net = &s["network"];
                println!(
                    "| {n} | {w} | {c} | {sim:.0} | {:.3} | {:.2} % | {:.1} % | {:.1} | {:.2} / {:.2} | {} ({:.1}) | {} | {} / {} | {:.0} | {} |",
                    sim / wall,
                    100.0 * slip / sim.max(1e-9),
                    100.0 * late / windows.max(1.0),
                    s["max_late_ms"].as_f64().unwrap_or(f64::NAN),
                    pct(&o.one_way_ms, 0.5),
                    pct(&o.one_way_ms, 0.99),
                    o.before_start_ms.len(),
                    o.before_start_ms.last().copied().unwrap_or(0.0),
                    figures::emulation(s),
                    net["delivered"],
                    net["dropped"],
                    o.peak_rss_mib,
                    figures::stages(s, &STAGES)
                );
            }
        }
    }
}
