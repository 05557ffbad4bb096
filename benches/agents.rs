//! Vehicles on capture agents against the same vehicles on the network coordinator's machine,
//! side by side in one run (root): `cosim run` with vehicles whose `host` names an agent, and
//! a `cosim agent` process per agent on this same machine, each joining the coordinator over
//! loopback TCP (127.0.0.1). Every run is a process of its own, paced at real time.
//!
//! 1. **A pair**: two stationary vehicles on an ideal 100 Gbit/s link, one on each of two agents,
//!    against both on the coordinator's machine, at W = 1 ms and W = 10 ms: the one-way time
//!    the receiving program saw (p50/p99, wall clock, from the send stamps of the traffic
//!    program of `benches/common/traffic.rs`, here every 9.7 ms each way for 5 s: a period no window
//!    divides, so the sends fall at every phase of the windows), then iperf3
//!    TCP for 5 s (as `benches/tun.rs` measures it, its link's transmitter holding as many
//!    packets waiting), and the ratio agents / one host.
//! 2. **Vehicles per agent**: the scale benchmark's DDS-like traffic (its traffic program, a
//!    multicast heartbeat and a unicast to the neighbour every 100 ms per vehicle) with N
//!    vehicles on each of two agents (the vehicles alternate between them, so every unicast
//!    crosses from one agent to the other), at W = 1 ms, against the same 2N vehicles all on the
//!    coordinator's machine: slip, windows late, one-way p50/p99, whether the row holds real
//!    time (slip < 1 % and p99 ≤ W + 2 ms), and the stages' µs per window (`summary.json`;
//!    `agents` is the wait for the agents' reports).
//!
//! Every row also gives the run's own emulation error (`summary.json`'s `emulation`).
//!
//! `cargo bench --bench agents` as root. Environment: `BENCH_AGENT_N` (default `4,8,16,32`,
//! vehicles per agent), `BENCH_AGENT_SECONDS` (default 10, per row of part 2),
//! `BENCH_PAIR_SECONDS` (default 5, each of the pair's two measurements), `BENCH_AGENT_WINDOWS_MS`
//! (default `1,10`, the pair's windows); `BENCH_KEEP` set: the runs' folders are kept and their
//! place printed.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

#[path = "common/traffic.rs"]
mod traffic;
use traffic::{address, pct};
#[path = "common/figures.rs"]
mod figures;
use figures::number;

/// The stages each row prints.
const STAGES: [(&str, &str); 8] = [
    ("physics", "physics"),
    ("network sim", "network_simulator"),
    ("live window", "live_window"),
    ("agents", "agents"),
    ("capture", "capture"),
    ("release", "release"),
    ("record", "record"),
    ("pacing wait", "pacing_wait"),
];

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
const AGENTS: [&str; 2] = ["hostb", "hostc"];

fn list(var: &str, default: &str) -> Vec<f64> {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// A scenario's common part: real time, ideal links, TUN capture, the agents on `port`.
/// `tcp`: deep holds and a transmitter queue for a TCP flow, as `benches/tun.rs` sets them.
fn header(name: &str, w: f64, duration: f64, port: u16, key: &Path, tcp: bool) -> String {
    format!(
        "name: {name}\nwindow_ms: {w}\nduration_s: {duration}\nseed: 1\nreal_time_factor: 1\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  \
         terrain: {{kind: procedural, size_m: [2048, 2048], cell_size_m: 2, base_height_m: -80}}\n\
         simulators: {{channel_interval_ms: {c}}}\n\
         links:\n  default: {{model: ideal, rate_bps: {rate}, delay_ms: 0}}\n{queue}\
         network:\n  capture: tun\n  queue_limit: 65536\n{hold}  \
         agents: {{bind: \"127.0.0.1:{port}\", key_file: {key}, timeout_ms: 2000, join_timeout_s: 60}}\n",
        c = w.max(10.0),
        key = key.display(),
        rate = if tcp { "1.0e11" } else { "1.0e8" },
        hold = if tcp { "  max_hold_windows: 1000\n" } else { "" },
        queue = if tcp { "  queue_packets: 1000\n" } else { "" }
    )
}

fn host(agents: bool, i: usize) -> String {
    if agents {
        format!(", host: {}", AGENTS[i % AGENTS.len()])
    } else {
        String::new()
    }
}

/// Two stationary vehicles 10 m apart: the traffic program every 9.7 ms for `secs`, then iperf3
/// TCP from `a` to `b` for `secs`.
fn pair(w: f64, agents: bool, secs: f64, port: u16, key: &Path) -> String {
    let me = std::env::current_exe().unwrap();
    let me = me.display();
    let duration = secs * 2.0 + 5.0;
    let mut y = header("agents_pair", w, duration, port, key, true);
    y += "vehicles:\n";
    for (i, name) in ["a", "b"].iter().enumerate() {
        y += &format!(
            "  - {{name: {name}, addresses: [{}/8], start: {{x: {}, y: 0, z: -10}}, motion: {{kind: stationary}}{}}}\n",
            address(i),
            10 * i,
            host(agents, i)
        );
    }
    let (a, b) = (address(0), address(1));
    y += &format!(
        "programs:\n\
         \x20 - {{name: traffic_a, vehicle: a, start_s: 0.5, command: [{me}, --traffic, {a}, {b}, '9.7', '{secs}']}}\n\
         \x20 - {{name: traffic_b, vehicle: b, start_s: 0.5, command: [{me}, --traffic, {b}, {a}, '9.7', '{secs}']}}\n\
         \x20 - {{name: iperf_server, vehicle: b, command: [iperf3, -s, '-1', -B, {b}]}}\n\
         \x20 - {{name: iperf_client, vehicle: a, start_s: {}, command: [iperf3, -c, {b}, -t, '{secs}', -J]}}\n",
        secs + 1.5
    );
    y
}

/// The scale benchmark's scenario: `n` vehicles patrolling at 2 m/s, each running the traffic
/// program; with `agents`, vehicle i on agent i mod 2.
fn scale(n: usize, w: f64, secs: f64, agents: bool, port: u16, key: &Path) -> String {
    let me = std::env::current_exe().unwrap();
    let mut y = header(&format!("agents_scale{n}"), w, secs, port, key, false);
    y += "vehicles:\n";
    let side = (n as f64).sqrt().ceil() as usize;
    let spacing = 1800.0 / (side.max(2) - 1) as f64;
    for i in 0..n {
        let (x, yy) = (
            -900.0 + (i % side) as f64 * spacing,
            -900.0 + (i / side) as f64 * spacing,
        );
        y += &format!(
            "  - {{name: v{i}, addresses: [{}/8], start: {{x: {x:.1}, y: {yy:.1}, z: -10}}{}, \
             motion: {{kind: patrol, speed_mps: 2, max_turn_rate_deg_s: 20, max_depth_rate_mps: 0.5, \
             waypoints: [[{:.1}, {yy:.1}, -10], [{:.1}, {:.1}, -10], [{x:.1}, {:.1}, -10]]}}}}\n",
            address(i),
            host(agents, i),
            x + 50.0,
            x + 50.0,
            yy + 50.0,
            yy + 50.0
        );
    }
    y += "programs:\n";
    for i in 0..n {
        y += &format!(
            "  - {{name: traffic_v{i}, vehicle: v{i}, command: [{}, --traffic, {}, {}]}}\n",
            me.display(),
            address(i),
            address((i + 1) % n)
        );
    }
    y
}

struct Outcome {
    summary: serde_json::Value,
    one_way_ms: Vec<f64>,
    out: PathBuf,
}

fn spawn(args: &[&std::ffi::OsStr], log: &Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    Command::new(COSIM)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Waits (at most 60 s) until `log` holds `text` or `child` has ended.
fn wait_for(log: &Path, text: &str, child: &mut Child) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < until
        && !std::fs::read_to_string(log).is_ok_and(|l| l.contains(text))
        && child.try_wait().ok().flatten().is_none()
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs `cosim run` on `yaml`, with a `cosim agent` for each of `agents` beside it.
fn run(
    dir: &Path,
    name: &str,
    yaml: String,
    agents: usize,
    port: u16,
    key: &Path,
) -> Option<Outcome> {
    let scen = dir.join(format!("{name}.yaml"));
    std::fs::write(&scen, yaml).unwrap();
    let out = dir.join(name);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let coordinator = spawn(
        &[
            "run".as_ref(),
            scen.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
        &dir.join(format!("{name}.cosim.log")),
    );
    let at = format!("127.0.0.1:{port}");
    let outs: Vec<PathBuf> = AGENTS[..agents]
        .iter()
        .map(|a| dir.join(format!("{name}.agent-{a}")))
        .collect();
    // One after the other, each once the one before has made its namespaces: on one machine
    // they share /run/netns, and a start removes the namespaces it takes for a dead run's.
    let mut coordinator = coordinator;
    wait_for(
        &dir.join(format!("{name}.cosim.log")),
        "waiting for agent",
        &mut coordinator,
    );
    let mut children: Vec<Child> = Vec::new();
    for (a, o) in AGENTS[..agents].iter().zip(&outs) {
        let log = dir.join(format!("{name}.agent-{a}.log"));
        let mut child = spawn(
            &[
                "agent".as_ref(),
                scen.as_os_str(),
                "--name".as_ref(),
                a.as_ref(),
                "--coordinator".as_ref(),
                at.as_ref(),
                "--key".as_ref(),
                key.as_os_str(),
                "--out".as_ref(),
                o.as_os_str(),
            ],
            &log,
        );
        wait_for(&log, "namespaces ready", &mut child);
        children.push(child);
    }
    let status = { coordinator }.wait().unwrap();
    let mut agents_ok = true;
    for (mut c, a) in children.into_iter().zip(AGENTS) {
        let s = c.wait().unwrap();
        if !s.success() {
            eprintln!(
                "  {name}: cosim agent {a} ended with {s}, see {}",
                dir.join(format!("{name}.agent-{a}.log")).display()
            );
            agents_ok = false;
        }
    }
    if !status.success() || !agents_ok {
        eprintln!(
            "  {name}: cosim run ended with {status}, see {}",
            dir.join(format!("{name}.cosim.log")).display()
        );
        return None;
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).ok()?).ok()?;
    let mut one_way_ms = Vec::new();
    let mut before_start_ms = Vec::new();
    // Messages sent before window 0 waited for the network to start: left out.
    let from_unix_ms = summary["started_unix_s"].as_f64().unwrap_or(0.0) * 1e3;
    traffic::one_way_ms(&out, from_unix_ms, &mut one_way_ms, &mut before_start_ms);
    for o in &outs {
        traffic::one_way_ms(o, from_unix_ms, &mut one_way_ms, &mut before_start_ms);
    }
    one_way_ms.sort_by(f64::total_cmp);
    Some(Outcome {
        summary,
        one_way_ms,
        out,
    })
}

fn ledger(s: &serde_json::Value) -> String {
    let n = &s["network"];
    format!(
        "{} / {}{}",
        n["delivered"],
        n["dropped"],
        if n["balanced"].as_bool() == Some(false) {
            " (not balanced)"
        } else {
            ""
        }
    )
}

/// (slip %, windows late %, latest ms) from a run's summary: slip as the scale benchmark
/// computes it, how much longer than real time the windows took.
fn slip(s: &serde_json::Value) -> (f64, f64, f64) {
    let sim = s["sim_seconds"].as_f64().unwrap_or(0.0);
    let wall = s["wall_seconds"].as_f64().unwrap_or(f64::NAN);
    let windows = s["windows"].as_f64().unwrap_or(f64::NAN);
    let late = s["late_windows"].as_f64().unwrap_or(f64::NAN);
    (
        100.0 * (wall - sim).max(0.0) / sim.max(1e-9),
        100.0 * late / windows.max(1.0),
        s["max_late_ms"].as_f64().unwrap_or(f64::NAN),
    )
}

/// iperf3's received rate (bit/s) and its sender's mean round trip (µs), from the client's log.
fn iperf(out: &Path) -> (f64, f64) {
    let j: serde_json::Value = std::fs::read(out.join("programs/iperf_client.stdout.log"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    (
        j["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .unwrap_or(f64::NAN),
        j["end"]["streams"][0]["sender"]["mean_rtt"]
            .as_f64()
            .unwrap_or(f64::NAN),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if traffic::run_if_asked(&args) {
        return;
    }
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("bench agents: run it as root (namespaces, TUN devices)");
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
    let key = dir.join("agent.key");
    let made = Command::new(COSIM).arg("agent-key").arg(&key).status();
    assert!(made.is_ok_and(|s| s.success()), "cosim agent-key failed");
    let mut port = 5710u16;
    let pair_secs = number("BENCH_PAIR_SECONDS", 5.0);
    let secs = number("BENCH_AGENT_SECONDS", 10.0);
    println!(
        "capture agents: two `cosim agent` processes on this machine, each joined to `cosim run` over loopback TCP; real time"
    );
    println!(
        "\n1. two vehicles on an ideal 100 Gbit/s link: one-way time seen by the receiver (traffic every 9.7 ms each way, {pair_secs} s), then iperf3 TCP ({pair_secs} s)"
    );
    println!("| vehicles | W (ms) | one-way p50 / p99 (ms) | TCP (Mbit/s) | TCP round trip, mean (µs) | slip | emulation error p50 / p99 / max (ms), over bound | delivered / dropped | µs per window by stage |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for w in list("BENCH_AGENT_WINDOWS_MS", "1,10") {
        let mut rows = Vec::new();
        for agents in [true, false] {
            let name = format!("pair_{w}_{}", if agents { "agents" } else { "local" });
            port += 1;
            let y = pair(w, agents, pair_secs, port, &key);
            let Some(o) = run(&dir, &name, y, if agents { 2 } else { 0 }, port, &key) else {
                rows.push(None);
                continue;
            };
            let (tcp, rtt) = iperf(&o.out);
            let (slip, _, _) = slip(&o.summary);
            println!(
                "| {} | {w} | {:.2} / {:.2} | {:.1} | {:.0} | {:.2} % | {} | {} | {} |",
                if agents {
                    "on two agents"
                } else {
                    "on the coordinator's machine"
                },
                pct(&o.one_way_ms, 0.5),
                pct(&o.one_way_ms, 0.99),
                tcp / 1e6,
                rtt,
                slip,
                figures::emulation(&o.summary),
                ledger(&o.summary),
                figures::stages(&o.summary, &STAGES)
            );
            rows.push(Some((
                pct(&o.one_way_ms, 0.5),
                pct(&o.one_way_ms, 0.99),
                tcp,
            )));
        }
        if let [Some(a), Some(l)] = rows[..] {
            ratios.push(format!(
                "W = {w} ms, agents / one machine: one-way p50 × {:.2}, p99 × {:.2}, TCP × {:.2}",
                a.0 / l.0,
                a.1 / l.1,
                a.2 / l.2
            ));
        }
    }
    for r in ratios {
        println!("{r}");
    }
    let w = 1.0;
    println!(
        "\n2. the scale benchmark's DDS-like traffic at W = {w} ms, {secs} s per row; vehicles alternate between the two agents (every unicast crosses); holds = slip < 1 % and p99 ≤ W + 2 ms"
    );
    println!("| vehicles per agent | vehicles | where | slip | windows late | latest (ms) | one-way p50 / p99 (ms) | emulation error p50 / p99 / max (ms), over bound | holds | delivered / dropped | µs per window by stage |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut largest = None;
    for n in list("BENCH_AGENT_N", "4,8,16,32") {
        let n = n as usize;
        for agents in [true, false] {
            let total = 2 * n;
            let name = format!("scale_{total}_{}", if agents { "agents" } else { "local" });
            port += 1;
            let y = scale(total, w, secs, agents, port, &key);
            let Some(o) = run(&dir, &name, y, if agents { 2 } else { 0 }, port, &key) else {
                continue;
            };
            let (slip, late, latest) = slip(&o.summary);
            let p99 = pct(&o.one_way_ms, 0.99);
            let holds = slip < 1.0 && p99 <= w + 2.0;
            if agents && holds {
                largest = Some(n);
            }
            println!(
                "| {} | {total} | {} | {slip:.2} % | {late:.1} % | {latest:.1} | {:.2} / {p99:.2} | {} | {} | {} | {} |",
                if agents { n.to_string() } else { "–".into() },
                if agents { "two agents" } else { "coordinator's machine" },
                pct(&o.one_way_ms, 0.5),
                figures::emulation(&o.summary),
                if holds { "yes" } else { "no" },
                ledger(&o.summary),
                figures::stages(&o.summary, &STAGES)
            );
        }
    }
    match largest {
        Some(n) => println!("largest vehicle count per agent holding real time at W = {w} ms: {n}"),
        None => println!("no vehicle count per agent held real time at W = {w} ms"),
    }
}
