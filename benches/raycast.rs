//! Ray casting cost of the channel geometry: all 2,016 pairs of 64 vehicles over a 1024 × 1024
//! seafloor (1 m cells), per lockstep window, with the broad phase and linear pre-check on all
//! cores against parry alone.
//!
//! Scenario: a seafloor at -200 m with 40 m of value-noise relief and five ridges rising to
//! between -140 m and -70 m (60–120 m wide). 64 AUVs start at random positions over the central
//! 960 m × 960 m and cruise at 0.5–2.5 m/s on fixed headings (bouncing off the edge), with a
//! slow vertical drift; every pair is traced in every 100 ms window. Two regimes:
//!
//! - **typical**: altitude 5–60 m above the local seafloor (survey and transit);
//! - **hard**: altitude 2–10 m above the local seafloor (near-bottom inspection). Most paths then
//!   run within a few metres of the floor for hundreds of cells, so the broad phase can rule out
//!   little and most of the path is walked cell by cell.
//!
//! Each regime prints the LOS/NLOS share and, per window:
//!
//! - `Tracer::trace_all` on all cores, window after window: what the physics simulator runs
//!   (each pair reuses its certificate where the motion allows, else starts from the terrain
//!   blocks that classified it in the previous window);
//! - `trace_all` on all cores with nothing remembered (every window from the pyramid's root);
//! - `line_of_sight_all` on all cores: the LOS/NLOS answer alone (each walk stops at the first
//!   obstruction; no hop points), what a LOS raycast in the narrow sense costs;
//! - `trace` on one thread and parry alone on one thread (every 5th window, same positions);
//!
//! and the speed-ups. The one-thread rows also give the thread's CPU time, which is what to
//! compare on a busy machine. On the baseline windows the tracer's paths are compared with
//! parry's (LOS/NLOS) and with `trace`'s (every hop within 1 µm and 1 µdB).
//!
//! Then `Tracer::trace_all` alone with windows of 1 ms (ROS-NetSim's evaluation) and 10 ms (the
//! default scenario's), same vehicles and speeds, so ten and a hundred times less motion per
//! window: per-window time, the share of pairs that reused their certificate, and every 10th
//! window compared with `trace`.
//!
//! The target — the LOS raycasts of all pairs within 1 ms per window on two cores — is judged
//! on `line_of_sight_all`, which remembers nothing, so its time holds for any window length
//! and any motion. The complete paths' times (what the ChannelData carries) are set against
//! the same 1 ms: "within" or "over".
//!
//! Run: `cargo bench --bench raycast`; with `RAYCAST_ROWS=tracer` only the rows by window
//! length (the physics simulator's work, short enough to count under callgrind).

use std::time::{Duration, Instant};

/// The origin the terrains here do not depend on.
const ORIGIN: netsim_cosim::config::GeoOrigin = netsim_cosim::config::GeoOrigin {
    lat_deg: 0.0,
    lon_deg: 0.0,
    alt_m: 0.0,
};

use nalgebra::Point3;
use netsim_cosim::config::{Ridge, Terrain as TerrainCfg};
use netsim_cosim::model::channel::{
    line_of_sight_all, trace, trace_all, trace_naive, PathInfo, Tracer,
};
use netsim_cosim::model::terrain::Terrain;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const VEHICLES: usize = 64;
const WINDOWS: usize = 300;
/// The one-thread and baseline rows run on every BASE_EVERY-th window (same positions).
const BASE_EVERY: usize = 5;
const WINDOW_S: f64 = 0.1;
const LOSS: f64 = 2.0;

/// CPU time of the calling thread, or None. (`clock_gettime`, which is exact to the moment of
/// the call; `/proc/thread-self/schedstat` lags by up to a scheduler tick for a running thread.)
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// Same LOS flag and hops (points within 1 µm, losses within 1 µdB).
fn same(a: &PathInfo, b: &PathInfo) -> bool {
    a.los == b.los
        && a.hops.len() == b.hops.len()
        && a.hops
            .iter()
            .zip(&b.hops)
            .all(|(x, y)| (x.point - y.point).norm() < 1e-6 && (x.loss_db - y.loss_db).abs() < 1e-6)
}

fn stats(name: &str, v: &mut [Duration], cpu: Option<&[Duration]>) -> f64 {
    v.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = v.iter().map(|d| us(*d)).sum::<f64>() / v.len() as f64;
    let pct = |p: f64| us(v[((v.len() - 1) as f64 * p).round() as usize]);
    let cpu = cpu
        .filter(|c| !c.is_empty())
        .map(|c| {
            format!(
                "  cpu mean {:>9.1} µs",
                c.iter().map(|d| us(*d)).sum::<f64>() / c.len() as f64
            )
        })
        .unwrap_or_default();
    println!(
        "  {name:<32} windows {:>4}  mean {:>9.1} µs  p50 {:>9.1} µs  p99 {:>9.1} µs  max {:>9.1} µs{cpu}",
        v.len(),
        mean,
        pct(0.5),
        pct(0.99),
        us(*v.last().unwrap())
    );
    mean
}

fn main() {
    let ridge = |from: [f64; 2], to: [f64; 2], crest: f64, width: f64| Ridge {
        from,
        to,
        crest_height_m: crest,
        width_m: width,
    };
    let cfg = TerrainCfg::Procedural {
        size_m: [1023.0, 1023.0],
        cell_size_m: 1.0,
        base_height_m: -200.0,
        relief_m: 40.0,
        seed: Some(2024),
        ridges: vec![
            ridge([-450.0, -300.0], [300.0, 420.0], -90.0, 80.0),
            ridge([-100.0, -480.0], [-20.0, 150.0], -120.0, 120.0),
            ridge([150.0, -450.0], [460.0, -60.0], -70.0, 60.0),
            ridge([-480.0, 250.0], [-150.0, 330.0], -110.0, 50.0),
            ridge([200.0, 100.0], [240.0, 470.0], -140.0, 90.0),
        ],
    };
    let t0 = Instant::now();
    let terrain = Terrain::from_config(&cfg, 0, &ORIGIN).expect("terrain");
    let build = t0.elapsed();
    let (cols, rows) = terrain.dims();
    println!(
        "grid {cols} x {rows} samples, cell {} m, heights {:.0}..{:.0} m, built in {:.1} ms",
        terrain.cell_size(),
        terrain.height_range()[0],
        terrain.height_range()[1],
        build.as_secs_f64() * 1e3
    );
    println!(
        "vehicles {VEHICLES}, pairs {} per window, windows {WINDOWS}, threads {}",
        VEHICLES * (VEHICLES - 1) / 2,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    const REGIMES: [(&str, [f64; 2]); 2] = [("typical", [5.0, 60.0]), ("hard", [2.0, 10.0])];
    if std::env::var("RAYCAST_ROWS").as_deref() != Ok("tracer") {
        for (name, alt) in REGIMES {
            regime(&terrain, name, alt);
        }
    }
    println!("Tracer::trace_all (all cores) by window length, {WINDOWS} windows each from the same start:");
    for (name, alt) in REGIMES {
        for window_s in [0.001, 0.01] {
            tracer_at(&terrain, name, alt, window_s);
        }
    }
}

/// `trace` of every pair `i < j` of `pos`, one thread, in `trace_all`'s order.
fn trace_each(terrain: &Terrain, pos: &[Point3<f64>]) -> Vec<PathInfo> {
    (0..pos.len())
        .flat_map(|i| ((i + 1)..pos.len()).map(move |j| trace(terrain, &pos[i], &pos[j], LOSS)))
        .collect()
}

/// The vehicles: positions and velocities (m/s), from one seed.
struct Fleet {
    pos: Vec<Point3<f64>>,
    vel: Vec<[f64; 3]>,
    alt: [f64; 2],
}

impl Fleet {
    /// Vehicles at `alt` metres above the local seafloor.
    fn new(terrain: &Terrain, alt: [f64; 2]) -> Fleet {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let (mut pos, mut vel) = (Vec::new(), Vec::new());
        for _ in 0..VEHICLES {
            let x = rng.random_range(-480.0..480.0);
            let y = rng.random_range(-480.0..480.0);
            let floor = terrain.height_at(x, y).unwrap();
            pos.push(Point3::new(x, y, floor + rng.random_range(alt[0]..alt[1])));
            let hdg: f64 = rng.random_range(0.0..std::f64::consts::TAU);
            let speed = rng.random_range(0.5..2.5);
            vel.push([
                speed * hdg.sin(),
                speed * hdg.cos(),
                rng.random_range(-0.2..0.2),
            ]);
        }
        Fleet { pos, vel, alt }
    }

    /// Moves every vehicle by `dt` seconds, keeping its altitude above the local floor within
    /// the band.
    fn step(&mut self, terrain: &Terrain, dt: f64) {
        let alt = self.alt;
        for (p, v) in self.pos.iter_mut().zip(&mut self.vel) {
            p.x += v[0] * dt;
            p.y += v[1] * dt;
            p.z += v[2] * dt;
            if p.x.abs() > 500.0 {
                v[0] = -v[0];
            }
            if p.y.abs() > 500.0 {
                v[1] = -v[1];
            }
            let floor = terrain.height_at(p.x, p.y).unwrap_or(-200.0);
            if p.z < floor + alt[0] || p.z > floor + alt[1] {
                v[2] = -v[2];
                p.z = p.z.clamp(floor + alt[0], floor + alt[1]);
            }
        }
    }
}

/// What the physics simulator runs, alone, with windows of `window_s`: time per window, the
/// share of pairs that reused their certificate, and every 10th window compared with `trace`.
fn tracer_at(terrain: &Terrain, name: &str, alt: [f64; 2], window_s: f64) {
    let mut fleet = Fleet::new(terrain, alt);
    let mut tracer = Tracer::new();
    let mut times = Vec::with_capacity(WINDOWS);
    let (mut reused, mut differ) = (0usize, 0usize);
    for w in 0..WINDOWS {
        fleet.step(terrain, window_s);
        let s = Instant::now();
        let all = tracer.trace_all(terrain, &fleet.pos, LOSS);
        times.push(s.elapsed());
        if w % 10 == 0 {
            differ += trace_each(terrain, &fleet.pos)
                .iter()
                .zip(all)
                .filter(|(a, b)| !same(a, b))
                .count();
        }
        reused += tracer.reused();
    }
    let first = times[0].as_secs_f64() * 1e6;
    let label = format!("{name}, W = {} ms", window_s * 1e3);
    let mean = stats(&label, &mut times, None);
    println!(
        "    certificates reused by {:.1} % of pairs; first window {first:.0} µs; paths differing from trace: {differ}; complete paths in 1000 µs: {}",
        100.0 * reused as f64 / (WINDOWS * VEHICLES * (VEHICLES - 1) / 2) as f64,
        if mean <= 1000.0 { "within" } else { "over" }
    );
    assert_eq!(differ, 0, "{label}: paths vs trace");
}

/// One regime: vehicles at `alt` metres above the local seafloor.
fn regime(terrain: &Terrain, name: &str, alt: [f64; 2]) {
    let mut fleet = Fleet::new(terrain, alt);
    let pairs = VEHICLES * (VEHICLES - 1) / 2;

    let mut tracer = Tracer::new();
    let mut coherent = Vec::with_capacity(WINDOWS);
    let mut fast = Vec::with_capacity(WINDOWS);
    let mut los_only = Vec::with_capacity(WINDOWS);
    let mut los_differ = 0usize;
    let (mut fast1, mut fast1_cpu) = (Vec::new(), Vec::new());
    let (mut naive, mut naive_cpu) = (Vec::new(), Vec::new());
    let (mut los, mut total, mut mismatch, mut differ) = (0usize, 0usize, 0usize, 0usize);
    let mut sink = 0.0;
    for w in 0..WINDOWS {
        fleet.step(terrain, WINDOW_S);
        let pos = &fleet.pos;
        let s = Instant::now();
        let all: &[PathInfo] = tracer.trace_all(terrain, pos, LOSS);
        coherent.push(s.elapsed());
        let s = Instant::now();
        let fresh: Vec<PathInfo> = trace_all(terrain, pos, LOSS);
        fast.push(s.elapsed());
        let s = Instant::now();
        let flags = line_of_sight_all(terrain, pos);
        los_only.push(s.elapsed());
        los_differ += flags.iter().zip(all).filter(|(l, p)| **l != p.los).count();
        los += all.iter().filter(|p| p.los).count();
        total += all.len();
        sink += all.iter().map(|p| p.total_loss_db()).sum::<f64>();
        sink += fresh.len() as f64;

        if w % BASE_EVERY == 0 {
            let (s, c) = (Instant::now(), thread_cpu());
            let one = trace_each(terrain, pos);
            fast1.push(s.elapsed());
            fast1_cpu.extend(c.zip(thread_cpu()).map(|(a, b)| b - a));
            let (s, c) = (Instant::now(), thread_cpu());
            let mut base = Vec::with_capacity(pairs);
            for i in 0..VEHICLES {
                for j in (i + 1)..VEHICLES {
                    base.push(trace_naive(terrain, &pos[i], &pos[j], LOSS));
                }
            }
            naive.push(s.elapsed());
            naive_cpu.extend(c.zip(thread_cpu()).map(|(a, b)| b - a));
            mismatch += all
                .iter()
                .zip(&base)
                .filter(|(a, b)| a.los != b.los)
                .count();
            differ += all.iter().zip(&one).filter(|(a, b)| !same(a, b)).count();
            sink += one.len() as f64;
        }
    }
    println!(
        "{name}: altitude {}-{} m above the seafloor; LOS {:.1} %, NLOS {:.1} %  (LOS/NLOS disagreements with the baseline: {mismatch}; paths differing from trace: {differ}; line_of_sight disagreeing: {los_differ})",
        alt[0],
        alt[1],
        100.0 * los as f64 / total as f64,
        100.0 * (total - los) as f64 / total as f64
    );
    let first = coherent[0].as_secs_f64() * 1e6;
    let m_coherent = stats("Tracer::trace_all (all cores)", &mut coherent, None);
    println!(
        "  {:<32} {first:.1} µs (nothing remembered yet)",
        "  its first window"
    );
    let m_fast = stats("trace_all (all cores)", &mut fast, None);
    let m_los = stats("line_of_sight_all (all cores)", &mut los_only, None);
    let m_fast1 = stats("trace (1 thread)", &mut fast1, Some(&fast1_cpu));
    let m_naive = stats(
        "baseline: parry only, 1 thread",
        &mut naive,
        Some(&naive_cpu),
    );
    let cpu_ratio = if fast1_cpu.is_empty() {
        String::new()
    } else {
        let sum = |v: &[Duration]| v.iter().map(|d| d.as_secs_f64()).sum::<f64>();
        format!(
            ", {:.1}x (1 thread, cpu time)",
            sum(&naive_cpu) / sum(&fast1_cpu)
        )
    };
    println!(
        "  speed-up vs baseline: {:.1}x (Tracer, all cores), {:.1}x (trace_all, all cores), {:.1}x (1 thread){cpu_ratio}; Tracer vs trace_all {:.2}x",
        m_naive / m_coherent,
        m_naive / m_fast,
        m_naive / m_fast1,
        m_fast / m_coherent
    );
    println!(
        "  1000 µs per window: LOS raycasts of all pairs (line_of_sight_all mean) {}; complete paths at W = {} ms (Tracer mean) {}",
        if m_los <= 1000.0 { "met" } else { "NOT met" },
        WINDOW_S * 1e3,
        if m_coherent <= 1000.0 { "within" } else { "over" }
    );
    // A fast answer that is wrong is no figure: fail the run (after printing) if any differ.
    assert_eq!(
        (mismatch, differ, los_differ),
        (0, 0, 0),
        "{name}: LOS/NLOS vs parry, paths vs trace, line_of_sight vs paths"
    );
    std::hint::black_box(sink);
}
