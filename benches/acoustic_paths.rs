//! The beam tracer in a live run: 8 AUVs (28 pairs, 56 directed links) patrolling at 2 m/s over
//! the default scenario's terrain (40 m deep, the headland), every pair `propagation: beam`
//! with the default `world.acoustic_paths` (refresh and tolerance as configured), the
//! embedded physics simulator driven window by window (W = 10 ms) and paced to the wall
//! clock as a live run is. The same run with `propagation: straight` (nothing traced) is the
//! baseline, measured side by side in this process.
//!
//! Printed per variant: the physics window's own time (p50, p99, max) and how many windows
//! took longer than W, the process CPU per simulated second (getrusage: the tracer's worker
//! thread included), the traces run, their mean and slowest time per pair, the tracer's share
//! of one core (its CPU time over the wall time), the windows that waited for a refresh
//! (`windows_waited`, the figure that must stay 0) and the arrivals kept per pair; and, unpaced,
//! how long tracing all 28 pairs once takes.
//!
//! Run: `cargo bench --bench acoustic_paths`. Optional env: SIM_SECONDS (default 20).

use netsim_cosim::{
    config,
    lockstep::protocol::physics_begin,
    sim::physics::PhysicsSim,
    wire::{
        channel::{Channel, ChannelView},
        proto::PhysicsUpdate,
    },
};
use prost::Message;
use std::time::{Duration, Instant};

const AUVS: usize = 8;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The default scenario's world, with 8 patrolling AUVs and acoustic links.
fn scenario(propagation: &str, seconds: u32) -> config::LoadedScenario {
    let default =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/default.yaml"))
            .expect("config/default.yaml");
    let start = default.find("\nworld:").expect("a world section") + 1;
    let end = default.find("\nvehicles:").expect("a vehicles section") + 1;
    let world = &default[start..end];
    let mut text = format!(
        "name: acoustic-paths-bench\nwindow_ms: 10\nduration_s: {seconds}\nseed: 7\nreal_time_factor: 0\n{world}vehicles:\n"
    );
    // Four lanes west of the headland and four east of it, each AUV pacing 250 m of its lane at 2 m/s
    // at 10–30 m depth: pairs across the headland are blocked, the others change range.
    for k in 0..AUVS {
        let x0 = if k < 4 {
            -450.0 + 60.0 * k as f64
        } else {
            100.0 + 30.0 * (k - 4) as f64
        };
        let y = -150.0 + 40.0 * k as f64;
        let depth = 10.0 + 20.0 * (k % 3) as f64 / 2.0;
        text.push_str(&format!(
            "  - name: auv{k}\n    addresses: [10.40.0.{}/24]\n    start: {{x: {x0}, y: {y}, z: {}, heading_deg: 90}}\n    motion:\n      kind: patrol\n      speed_mps: 2\n      max_turn_rate_deg_s: 15\n      max_depth_rate_mps: 0.5\n      waypoints:\n        - [{}, {y}, {}]\n        - [{x0}, {y}, {}]\n",
            k + 1,
            -depth,
            x0 + 250.0,
            -depth,
            -depth
        ));
    }
    text.push_str(&format!(
        "links:\n  default:\n    model: acoustic\n    propagation: {propagation}\n"
    ));
    config::parse_str(
        &text,
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config/bench.yaml")),
    )
    .expect("the bench scenario loads")
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Figures {
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    over_w: usize,
    cpu_per_sim_s: f64,
    stats: netsim_cosim::sim::acoustic_paths::PathStats,
    wall_s: f64,
    arrivals_per_pair: f64,
}

fn run(propagation: &str, seconds: u32) -> Figures {
    let loaded = scenario(propagation, seconds);
    let windows = loaded.schedule().windows;
    let w = Duration::from_millis(10);
    let mut sim = PhysicsSim::from_scenario(&loaded);
    let mut times = Vec::with_capacity(windows as usize);
    let mut arrivals = (0usize, 0usize);
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    for k in 0..windows {
        let due = start + w * k;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let t = Instant::now();
        let end = sim.handle(&physics_begin(k, Vec::new())).expect("END");
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if k % 100 == 0 {
            let end = PhysicsUpdate::decode(end.as_slice()).expect("END decodes");
            let c = Channel::decode(&end.channel_data).expect("ChannelData");
            let view = ChannelView::check(&c, AUVS).expect("checked");
            for p in view.paths() {
                if p.traced() {
                    arrivals.0 += p.arrivals().count();
                    arrivals.1 += 1;
                }
            }
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let stats = sim.acoustic_path_stats();
    let over_w = times.iter().filter(|&&t| t > 10.0).count();
    times.sort_by(f64::total_cmp);
    Figures {
        p50_ms: percentile(&times, 0.5),
        p99_ms: percentile(&times, 0.99),
        max_ms: *times.last().unwrap_or(&0.0),
        over_w,
        cpu_per_sim_s: cpu / f64::from(seconds),
        stats,
        wall_s,
        arrivals_per_pair: arrivals.0 as f64 / arrivals.1.max(1) as f64,
    }
}

fn main() {
    let seconds: u32 = env_or("SIM_SECONDS", 20);
    // Unpaced: every pair traced once, at the start poses.
    let loaded = scenario("beam", 1);
    let t = Instant::now();
    let mut sim = PhysicsSim::from_scenario(&loaded);
    sim.handle(&physics_begin(0, Vec::new())).expect("END");
    let first = sim.acoustic_path_stats();
    println!(
        "all {} pairs traced once: {:.1} ms in all ({:.2} ms per pair, slowest {:.2} ms); with the terrain's set-up {:.1} ms",
        first.traces,
        first.trace_s * 1e3,
        first.trace_s * 1e3 / first.traces.max(1) as f64,
        first.max_trace_s * 1e3,
        t.elapsed().as_secs_f64() * 1e3
    );
    println!("{AUVS} AUVs at 2 m/s, W = 10 ms, paced to the wall clock, {seconds} s:");
    println!(
        "{:<9} {:>8} {:>8} {:>8} {:>7} {:>11} {:>7} {:>10} {:>10} {:>9} {:>7} {:>9}",
        "variant",
        "p50 ms",
        "p99 ms",
        "max ms",
        ">W",
        "cpu/sim s",
        "traces",
        "mean ms",
        "max ms",
        "share",
        "waited",
        "arrivals"
    );
    let mut base_cpu = None;
    for variant in ["straight", "beam", "straight", "beam"] {
        let f = run(variant, seconds);
        let share = f.stats.trace_s / f.wall_s;
        println!(
            "{:<9} {:>8.3} {:>8.3} {:>8.3} {:>7} {:>11.4} {:>7} {:>10.3} {:>10.3} {:>8.2}% {:>7} {:>9.1}",
            variant,
            f.p50_ms,
            f.p99_ms,
            f.max_ms,
            f.over_w,
            f.cpu_per_sim_s,
            f.stats.traces,
            f.stats.trace_s * 1e3 / f.stats.traces.max(1) as f64,
            f.stats.max_trace_s * 1e3,
            share * 100.0,
            f.stats.windows_waited,
            f.arrivals_per_pair
        );
        match (variant, base_cpu) {
            ("straight", _) => base_cpu = Some(f.cpu_per_sim_s),
            (_, Some(b)) => println!(
                "          beam ÷ straight CPU per simulated second: {:.2}",
                f.cpu_per_sim_s / b
            ),
            _ => {}
        }
    }
}
