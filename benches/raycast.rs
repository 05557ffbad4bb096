//! Ray casting cost of the channel geometry: all pairs of 64 vehicles over a 1024 × 1024 seafloor,
//! per lockstep window, with the pyramid broad phase on all cores against parry alone.
//!
//! Run: `cargo bench --bench raycast`.

use std::time::{Duration, Instant};

use nalgebra::Point3;
use netsim_cosim::config::{Ridge, Terrain as TerrainCfg};
use netsim_cosim::model::channel::{trace, trace_all, trace_naive, PathInfo};
use netsim_cosim::model::terrain::Terrain;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const VEHICLES: usize = 64;
const WINDOWS: usize = 300;
/// The naive baseline runs on every BASE_EVERY-th window (same positions).
const BASE_EVERY: usize = 5;
const WINDOW_S: f64 = 0.1;
const LOSS: f64 = 2.0;

fn stats(name: &str, v: &mut [Duration]) -> f64 {
    v.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = v.iter().map(|d| us(*d)).sum::<f64>() / v.len() as f64;
    let pct = |p: f64| us(v[((v.len() - 1) as f64 * p).round() as usize]);
    println!(
        "{name:<34} windows {:>4}  mean {:>9.1} µs  p50 {:>9.1} µs  p99 {:>9.1} µs  max {:>9.1} µs",
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
    let terrain = Terrain::from_config(&cfg, 0).expect("terrain");
    let build = t0.elapsed();
    let (cols, rows) = terrain.dims();

    // Vehicles: deterministic positions and headings; depth between 5 m above the local
    // seafloor and 20 m below the surface.
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut pos: Vec<Point3<f64>> = Vec::new();
    let mut vel: Vec<[f64; 3]> = Vec::new();
    for _ in 0..VEHICLES {
        let x = rng.random_range(-480.0..480.0);
        let y = rng.random_range(-480.0..480.0);
        let floor = terrain.height_at(x, y).unwrap();
        let z = rng.random_range((floor + 5.0)..-20.0);
        pos.push(Point3::new(x, y, z));
        let hdg: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let speed = rng.random_range(0.5..2.5);
        vel.push([speed * hdg.sin(), speed * hdg.cos(), rng.random_range(-0.2..0.2)]);
    }
    let pairs = VEHICLES * (VEHICLES - 1) / 2;

    let mut fast = Vec::with_capacity(WINDOWS);
    let mut fast1 = Vec::new();
    let mut naive = Vec::new();
    let (mut los, mut total, mut mismatch) = (0usize, 0usize, 0usize);
    let mut sink = 0.0;
    for w in 0..WINDOWS {
        // Move.
        for (p, v) in pos.iter_mut().zip(&mut vel) {
            p.x += v[0] * WINDOW_S;
            p.y += v[1] * WINDOW_S;
            p.z += v[2] * WINDOW_S;
            if p.x.abs() > 500.0 {
                v[0] = -v[0];
            }
            if p.y.abs() > 500.0 {
                v[1] = -v[1];
            }
            let floor = terrain.height_at(p.x, p.y).unwrap_or(-200.0);
            if p.z < floor + 3.0 || p.z > -10.0 {
                v[2] = -v[2];
                p.z = p.z.clamp(floor + 3.0, -10.0);
            }
        }
        let s = Instant::now();
        let all: Vec<PathInfo> = trace_all(&terrain, &pos, LOSS);
        fast.push(s.elapsed());
        los += all.iter().filter(|p| p.los).count();
        total += all.len();
        sink += all.iter().map(|p| p.total_loss_db()).sum::<f64>();

        if w % BASE_EVERY == 0 {
            let s = Instant::now();
            let mut one = Vec::with_capacity(pairs);
            for i in 0..VEHICLES {
                for j in (i + 1)..VEHICLES {
                    one.push(trace(&terrain, &pos[i], &pos[j], LOSS));
                }
            }
            fast1.push(s.elapsed());
            let s = Instant::now();
            let mut base = Vec::with_capacity(pairs);
            for i in 0..VEHICLES {
                for j in (i + 1)..VEHICLES {
                    base.push(trace_naive(&terrain, &pos[i], &pos[j], LOSS));
                }
            }
            naive.push(s.elapsed());
            mismatch += all.iter().zip(&base).filter(|(a, b)| a.los != b.los).count();
            sink += one.len() as f64;
        }
    }
    println!("grid {cols} x {rows} samples, cell {} m, built in {:.1} ms", terrain.cell_size(), build.as_secs_f64() * 1e3);
    println!(
        "vehicles {VEHICLES}, pairs {pairs} per window, windows {WINDOWS}, threads {}",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    println!(
        "LOS {:.1} %, NLOS {:.1} %  (LOS/NLOS disagreements with the baseline: {mismatch})",
        100.0 * los as f64 / total as f64,
        100.0 * (total - los) as f64 / total as f64
    );
    let m_fast = stats("trace_all (pyramid, all cores)", &mut fast);
    let m_fast1 = stats("trace (pyramid, 1 thread)", &mut fast1);
    let m_naive = stats("baseline: parry only, 1 thread", &mut naive);
    println!(
        "speed-up vs baseline: {:.1}x (all cores), {:.1}x (1 thread); target 1000 µs per window: {}",
        m_naive / m_fast,
        m_naive / m_fast1,
        if m_fast <= 1000.0 { "met (mean)" } else { "NOT met (mean)" }
    );
    std::hint::black_box(sink);
}
