//! What recording costs: 64 vehicles at W = 1 ms, physics only (no traffic), embedded physics
//! and network simulators through the physics coordinator as fast as they go
//! (`real_time_factor: 0`), the same run several ways in this process:
//!
//! 1. no record (the baseline: no output folder);
//! 2. the run record without the 3D scene (`record.scene: false`; poses every 0.1 s, channel
//!    every 1 s and at every LOS/NLOS change, link state on change: the scenario defaults);
//! 3. the run record with the scene (the default: terrain mesh, frames, every pair's line and
//!    the traffic marks at each pose sample, events);
//! 4. the same, served live (`viewer.live`) to one client that subscribes to every channel and
//!    reads everything: a WebSocket client of the Foxglove protocol on a thread of its own,
//!    whose CPU time is taken out of the process's;
//! 5. the run record and the per-window `timeline.jsonl` (`record.timeline_jsonl: true`).
//!
//! For each: wall time, CPU time of the process (getrusage: every thread, the physics
//! simulator's ray-casting threads and the record's writer thread included), bytes written per
//! simulated second (and, live, bytes the client received), the record's time on the lockstep
//! path (the run's `record` stage: handing each window to the writer thread), and the CPU added
//! against the record without the scene, (cpu − cpu_record) / cpu_record. Each variant runs
//! `ROUNDS` times (default 2),
//! interleaved, after a warm-up; the figures are each variant's median.
//!
//! On a shared machine the difference of two runs' CPU times is noisy, so a last variant
//! measures the record's cost directly: the baseline run with a `Participant` that writes
//! the same record (with the scene) through its own `Recorder`, timing every call on the
//! calling thread's CPU clock; its share is that time over the run's CPU time.
//!
//! The world: a 1024 m × 1024 m seafloor (1 m cells) at −200 m with three ridges rising to
//! −100 m; the 64 AUVs cruise east-west at 150–170 m depth in bands between the ridges at
//! 0.5–2.5 m/s, so pairs in different bands are mostly behind a ridge and pairs passing a
//! ridge's end change LOS. rf links (the 802.11 model) between every pair.
//!
//! Run: `cargo bench --bench record`. Optional env: SIM_SECONDS (default 2), ROUNDS (default 2).

#[path = "../tests/common/viewer_client.rs"]
mod viewer_client;

use netsim_cosim::{
    config,
    coord::{Ended, Participant, WindowView},
    output::Recorder,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::{
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

const VEHICLES: usize = 64;
/// Ridges along y = these, from x = −450 to +450.
const RIDGES_Y: [f64; 3] = [-250.0, 0.0, 250.0];

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn scenario(dir: &Path, sim_seconds: f64) -> PathBuf {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut y = format!(
        "name: record_bench\nwindow_ms: 1\nduration_s: {sim_seconds}\nreal_time_factor: 0\nseed: 7\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  terrain:\n    kind: procedural\n    size_m: [1024, 1024]\n    \
         cell_size_m: 1\n    base_height_m: -200\n    relief_m: 10\n    ridges:\n"
    );
    for r in RIDGES_Y {
        y += &format!(
            "      - {{from: [-450, {r}], to: [450, {r}], crest_height_m: -100, width_m: 40}}\n"
        );
    }
    y += "vehicles:\n";
    // Bands between and beside the ridges, clear of their 40 m bases.
    let bands = [
        (-480.0, -280.0),
        (-220.0, -30.0),
        (30.0, 220.0),
        (280.0, 480.0),
    ];
    for i in 0..VEHICLES {
        let (lo, hi) = bands[i % bands.len()];
        let vy: f64 = rng.random_range(lo..hi);
        let z: f64 = rng.random_range(-170.0..-150.0);
        let (x0, x1): (f64, f64) = (
            rng.random_range(-490.0..-100.0),
            rng.random_range(100.0..490.0),
        );
        let speed: f64 = rng.random_range(0.5..2.5);
        let start_x: f64 = rng.random_range(x0..x1);
        y += &format!(
            "  - name: v{i:02}\n    addresses: [10.40.{}.{}/16]\n    start: {{x: {start_x:.1}, y: {vy:.1}, z: {z:.1}, heading_deg: 90}}\n    \
             motion: {{kind: patrol, speed_mps: {speed:.2}, max_turn_rate_deg_s: 20, max_depth_rate_mps: 0.5, waypoints: [[{x1:.1}, {vy:.1}, {z:.1}], [{x0:.1}, {vy:.1}, {z:.1}]]}}\n",
            i / 200,
            i % 200 + 1
        );
    }
    y += "links:\n  default: {model: rf}\n";
    let path = dir.join("record_bench.yaml");
    std::fs::write(&path, y).unwrap();
    path
}

/// CPU time (user + system) of the whole process so far.
fn process_cpu() -> Duration {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage for the duration of the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    assert_eq!(rc, 0, "getrusage");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Writes the run record from the windows it watches, adding the CPU time of every call to
/// `spent` (ns).
struct TimedRecorder {
    recorder: Option<Recorder>,
    spent: Arc<AtomicU64>,
}

impl TimedRecorder {
    fn timed<T>(&self, f: impl FnOnce() -> T) -> T {
        let t0 = thread_cpu();
        let r = f();
        self.spent
            .fetch_add((thread_cpu() - t0).as_nanos() as u64, Ordering::Relaxed);
        r
    }
}

impl Participant for TimedRecorder {
    fn window(&mut self, view: &WindowView<'_>, _ended: &mut Ended) -> anyhow::Result<()> {
        let t0 = thread_cpu();
        if let Some(r) = &mut self.recorder {
            r.window(
                view.open.window,
                view.open.start_ns,
                &view.open.channel,
                view.network_end,
            )?;
        }
        self.spent
            .fetch_add((thread_cpu() - t0).as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(r) = self.recorder.take() {
            self.timed(|| r.finish(&serde_json::json!({})).unwrap());
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Baseline,
    RecordWithoutScene,
    Record,
    RecordLive,
    RecordAndTimeline,
    Observed,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::Baseline => "no record (baseline)",
            Variant::RecordWithoutScene => "record.mcap without scene",
            Variant::Record => "record.mcap with scene",
            Variant::RecordLive => "with scene, 1 live client",
            Variant::RecordAndTimeline => "record.mcap + timeline.jsonl",
            Variant::Observed => "with scene, timed observer",
        }
    }
}

struct Figures {
    wall: f64,
    cpu: f64,
    bytes: u64,
    /// What the live client received.
    received: viewer_client::Received,
    windows: u32,
    /// The timed observer's recording CPU time.
    recording: f64,
    /// The record's time on the lockstep path (the run's `record` stage), µs per window.
    record_us: f64,
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn run(
    rt: &tokio::runtime::Runtime,
    loaded: &config::LoadedScenario,
    variant: Variant,
    work: &Path,
) -> Figures {
    let mut loaded = loaded.clone();
    loaded.scenario.record.timeline_jsonl = variant == Variant::RecordAndTimeline;
    loaded.scenario.record.scene = variant != Variant::RecordWithoutScene;
    let port = viewer_client::free_port();
    loaded.scenario.viewer.live = variant == Variant::RecordLive;
    loaded.scenario.viewer.address = format!("127.0.0.1:{port}");
    let out = work.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let out_dir = (!matches!(variant, Variant::Baseline | Variant::Observed)).then(|| out.clone());
    let spent = Arc::new(AtomicU64::new(0));
    let (wall, cpu, report, client) = rt.block_on(async {
        let mut c = netsim_cosim::coord::physics_coordinator(&loaded, None, out_dir)
            .await
            .unwrap();
        let client = (variant == Variant::RecordLive)
            .then(|| viewer_client::spawn(port, viewer_client::Reading::default()));
        if variant == Variant::Observed {
            let recorder = Some(Recorder::for_scenario(&out, &loaded, None).unwrap());
            c = c.with_participant(TimedRecorder {
                recorder,
                spent: spent.clone(),
            });
        }
        let (t0, c0) = (Instant::now(), process_cpu());
        let report = c.run(std::future::pending()).await.unwrap();
        (t0.elapsed(), process_cpu() - c0, report, client)
    });
    let received = client.map(|c| c.join().unwrap()).unwrap_or_default();
    // The client's CPU time is its own, not the run's: taken out (it ran within the run).
    let cpu = (cpu.as_secs_f64() - received.cpu_s).max(0.0);
    let bytes = dir_bytes(&out);
    let _ = std::fs::remove_dir_all(&out);
    let recording = spent.load(Ordering::Relaxed) as f64 / 1e9;
    let record_us = report.stages.get("record").map_or(0.0, |s| s.us_per_window);
    Figures {
        wall: wall.as_secs_f64(),
        cpu,
        bytes,
        received,
        windows: report.windows,
        recording,
        record_us,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let sim_seconds: f64 = env_or("SIM_SECONDS", 2.0);
    let rounds: usize = env_or("ROUNDS", 2).max(1);
    let work = tempfile::tempdir().unwrap();
    let path = scenario(work.path(), sim_seconds);
    let loaded = config::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("{VEHICLES} vehicles ({} pairs), W = 1 ms, {sim_seconds} s simulated, physics only, real_time_factor 0; median of {rounds}", VEHICLES * (VEHICLES - 1) / 2);
    // Warm-up: terrain pages, thread pools, allocator.
    let mut warm = loaded.clone();
    warm.scenario.duration_s = 0.3;
    warm.set_window_ms(1.0).unwrap();
    run(&rt, &warm, Variant::Baseline, work.path());

    let variants = [
        Variant::Baseline,
        Variant::RecordWithoutScene,
        Variant::Record,
        Variant::RecordLive,
        Variant::RecordAndTimeline,
        Variant::Observed,
    ];
    let mut figures: Vec<Vec<Figures>> = variants.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for (i, &v) in variants.iter().enumerate() {
            figures[i].push(run(&rt, &loaded, v, work.path()));
        }
    }
    let cpu_of = |i: usize| median(figures[i].iter().map(|f| f.cpu).collect());
    let (base_cpu, record_cpu) = (cpu_of(0), cpu_of(1));
    for (i, &v) in variants.iter().enumerate() {
        let f = &figures[i];
        let wall = median(f.iter().map(|f| f.wall).collect());
        let cpu = cpu_of(i);
        let sim = f[0].windows as f64 * 1e-3;
        let bytes = median(f.iter().map(|f| f.bytes as f64).collect()) / sim;
        let share = match v {
            Variant::Baseline => String::new(),
            Variant::RecordWithoutScene => format!(
                "  record's CPU share {:5.1} %",
                100.0 * (cpu - base_cpu) / cpu
            ),
            Variant::Observed => {
                let rec = median(f.iter().map(|f| f.recording / f.cpu).collect());
                format!(
                    "  recording {:5.3} s CPU = {:4.1} % of the run",
                    median(f.iter().map(|f| f.recording).collect()),
                    100.0 * rec
                )
            }
            _ => format!(
                "  CPU {:+5.1} % against the record without scene",
                100.0 * (cpu - record_cpu) / record_cpu
            ),
        };
        let on_path = median(f.iter().map(|f| f.record_us).collect());
        println!(
            "  {:<30} wall {wall:6.2} s  CPU {cpu:6.2} s  ({:4.2}x real time)  {:>9} per simulated s  record stage {on_path:6.1} µs/window{share}",
            v.label(),
            sim / wall,
            human(bytes)
        );
        if v == Variant::RecordLive {
            let r = |g: fn(&viewer_client::Received) -> f64| {
                median(f.iter().map(|f| g(&f.received)).collect())
            };
            println!(
                "  {:<30} received {:>9} per simulated s, {:.0} messages per simulated s; client's own CPU {:.2} s (not counted)",
                "",
                human(r(|r| r.bytes as f64) / sim),
                r(|r| r.messages as f64) / sim,
                r(|r| r.cpu_s)
            );
        }
    }
    let added = |i: usize| (cpu_of(i) - record_cpu) / record_cpu;
    println!(
        "target: the scene with a live client adds ≤ 10 % CPU to the record without it: {} (scene {:+.1} %, scene and client {:+.1} %)",
        if added(3) <= 0.10 { "met" } else { "NOT met" },
        100.0 * added(2),
        100.0 * added(3)
    );
}

fn human(bytes: f64) -> String {
    if bytes >= 1e9 {
        format!("{:.2} GB", bytes / 1e9)
    } else if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else {
        format!("{:.1} kB", bytes / 1e3)
    }
}
