//! The physics side's acoustic paths: which pairs are beam-traced, when each is traced again,
//! and the tracing itself on a thread of its own, so that the windows never wait for it.
//!
//! Schedule (deterministic: the same scenario gives the same arrivals, whatever the CPU): the
//! window at t = 0 traces every pair at once. Then every refresh period P (`refresh_s`,
//! rounded to whole windows), at t = kP, each pair whose ends moved more than `tolerance_m`
//! since its last trace is queued with the poses of t = kP; the worker thread traces the queue
//! while the windows go on, and the arrivals apply from t = (k + 1)P. A pair's arrivals thus
//! describe the geometry of at most 2P ago. A window at (k + 1)P whose traces are not done
//! waits for them: counted in [`PathStats::windows_waited`] (the benchmark shows it stays 0).
//!
//! Each trace runs [`crate::model::beam::arrivals`] from the lower-indexed vehicle to the
//! other over the terrain sampled along their bearing ([`Section::along`]); acoustic
//! reciprocity makes it serve both directions. The strongest `max_arrivals` are kept, in order
//! of delay; the rest are counted ([`PathStats::arrivals_dropped`]).

use crate::config::{LinkModel, LoadedScenario, Propagation};
use crate::model::beam::{arrivals, Arrival, Environment, Fan, Seabed, Section};
use crate::model::sound_speed::SoundSpeed;
use crate::model::terrain::Terrain;
use nalgebra::Point3;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the pairs are traced (resolved from the scenario).
#[derive(Debug, Clone, PartialEq)]
pub struct PathSettings {
    /// The sea's sound speed: each pair's profile along its bearing.
    pub sound_speed: SoundSpeed,
    pub seabed: Seabed,
    pub fan: Fan,
    /// Arrivals kept per pair (the strongest).
    pub max_arrivals: usize,
    /// The refresh period, in windows (≥ 1).
    pub refresh_windows: u32,
    /// A pair is traced again only when an end moved more than this (m).
    pub tolerance_m: f64,
}

impl PathSettings {
    /// The scenario's `world.water.casts` or `profile` (Mackenzie where it gives temperatures;
    /// without either, Mackenzie at the water's temperature and salinity), `world.seabed` and
    /// `world.acoustic_paths`, the refresh period in the scenario's windows.
    pub fn from_scenario(loaded: &LoadedScenario) -> PathSettings {
        let s = &loaded.scenario;
        let p = &s.world.acoustic_paths;
        PathSettings {
            sound_speed: SoundSpeed::from_scenario(loaded),
            seabed: Seabed {
                speed_mps: s.world.seabed.sound_speed_mps,
                density_ratio: s.world.seabed.density_ratio,
                attenuation_db_per_wavelength: s.world.seabed.attenuation_db_per_wavelength,
            },
            fan: Fan::symmetric(p.beams as usize, p.launch_angle_deg),
            max_arrivals: p.max_arrivals as usize,
            refresh_windows: (p.refresh_s / loaded.schedule().window_s())
                .round()
                .max(1.0) as u32,
            tolerance_m: p.tolerance_m,
        }
    }
}

/// What tracing the acoustic paths cost and dropped over a run (the run summary's
/// `acoustic_paths`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathStats {
    /// Beam-traced pairs.
    pub pairs: u64,
    /// Pair traces run.
    pub traces: u64,
    /// Their CPU time on the worker (s).
    pub trace_s: f64,
    /// The slowest one (s).
    pub max_trace_s: f64,
    /// Windows that waited for a refresh's traces, and how long in all (s).
    pub windows_waited: u64,
    pub wait_s: f64,
    /// Arrivals beyond `max_arrivals` left out.
    pub arrivals_dropped: u64,
}

/// The stats of a run's tracer, shared with whoever reports them.
pub type SharedPathStats = Arc<Mutex<PathStats>>;

/// One pair's trace request: its index among the pairs and the two ends (ENU).
struct Job {
    pair: usize,
    a: [f64; 3],
    b: [f64; 3],
}

/// A finished trace.
struct Done {
    pair: usize,
    arrivals: Vec<Arrival>,
    dropped: usize,
    seconds: f64,
}

/// One unordered pair's state.
#[derive(Debug, Clone, Default)]
struct PairState {
    /// Beam-traced at all.
    beam: bool,
    /// The arrivals in use.
    arrivals: Vec<Arrival>,
    /// Where its ends were when it was last traced (queued).
    traced_at: Option<([f64; 3], [f64; 3])>,
}

/// The acoustic paths of a run's pairs (see the module docs).
pub struct AcousticPaths {
    settings: Arc<PathSettings>,
    terrain: Arc<Terrain>,
    pairs: Vec<PairState>,
    /// Traces queued at the last refresh, to apply at the next.
    pending: usize,
    /// The worker's queue and answers (the answers behind a lock only so that the sampler can
    /// be shared with the async task that drives it; one thread uses them).
    worker: Option<(SyncSender<Job>, Mutex<Receiver<Done>>)>,
    stats: SharedPathStats,
}

/// Traces one pair: the section along its bearing, the arrivals at `b` from a source at `a`,
/// the strongest `max` kept in order of delay.
pub fn trace_pair(
    settings: &PathSettings,
    terrain: &Terrain,
    a: [f64; 3],
    b: [f64; 3],
    out: &mut Vec<Arrival>,
) -> usize {
    let range = (b[0] - a[0]).hypot(b[1] - a[1]).max(0.1);
    let beyond = range * 0.02 + 2.0;
    let section = Section::along(terrain, [a[0], a[1]], [b[0], b[1]], beyond);
    let env = Environment {
        profile: settings
            .sound_speed
            .along([a[0], a[1]], [b[0], b[1]], range + beyond),
        seabed: settings.seabed,
        section,
    };
    // Both ends at least 1 cm under the surface, the source at least 1 cm above the bottom.
    let d0 = env.section.depth_m[0];
    out.clear();
    if d0 <= 0.02 {
        return 0;
    }
    let source = (-a[2]).clamp(0.01, d0 - 0.01);
    let receiver = (-b[2]).max(0.01);
    arrivals(&env, &settings.fan, source, range, receiver, out);
    let mut dropped = 0;
    if out.len() > settings.max_arrivals {
        out.sort_by(|x, y| y.amplitude.total_cmp(&x.amplitude));
        dropped = out.len() - settings.max_arrivals;
        out.truncate(settings.max_arrivals);
    }
    out.sort_by(|x, y| x.delay_s.total_cmp(&y.delay_s));
    dropped
}

impl AcousticPaths {
    /// The scenario's beam-traced pairs over `terrain`: those whose link is `acoustic` with
    /// `propagation: beam`, and with `acoustic_modems.propagation: beam` those of two vehicles
    /// with modems.
    pub fn from_scenario(loaded: &LoadedScenario, terrain: Arc<Terrain>) -> AcousticPaths {
        let s = &loaded.scenario;
        let modems_beam = s
            .acoustic_modems
            .as_ref()
            .is_some_and(|m| m.propagation == Propagation::Beam);
        let beam = s
            .pair_links()
            .into_iter()
            .map(|(a, b, _, model)| {
                matches!(
                    model,
                    LinkModel::Acoustic {
                        propagation: Propagation::Beam,
                        ..
                    }
                ) || (modems_beam && s.vehicles[a].modem.is_some() && s.vehicles[b].modem.is_some())
            })
            .collect::<Vec<_>>();
        AcousticPaths::new(PathSettings::from_scenario(loaded), terrain, beam)
    }

    /// For `beam[p]` per unordered pair p (ChannelData order) over `terrain`.
    pub fn new(settings: PathSettings, terrain: Arc<Terrain>, beam: Vec<bool>) -> AcousticPaths {
        let stats = PathStats {
            pairs: beam.iter().filter(|&&b| b).count() as u64,
            ..PathStats::default()
        };
        AcousticPaths {
            settings: Arc::new(settings),
            terrain,
            pairs: beam
                .into_iter()
                .map(|beam| PairState {
                    beam,
                    ..PairState::default()
                })
                .collect(),
            pending: 0,
            worker: None,
            stats: Arc::new(Mutex::new(stats)),
        }
    }

    /// Any pair traced at all.
    pub fn any(&self) -> bool {
        self.pairs.iter().any(|p| p.beam)
    }

    pub fn stats(&self) -> PathStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The stats, as they go on changing (None: no pair is beam-traced).
    pub fn shared_stats(&self) -> Option<SharedPathStats> {
        self.any().then(|| self.stats.clone())
    }

    /// Pair `p`'s arrivals (None: not beam-traced).
    pub fn arrivals(&self, p: usize) -> Option<&[Arrival]> {
        self.pairs
            .get(p)
            .filter(|s| s.beam)
            .map(|s| s.arrivals.as_slice())
    }

    /// Brings the arrivals to window `k` for vehicles at `positions` (ENU), per the schedule.
    pub fn update(&mut self, k: u32, positions: &[Point3<f64>]) {
        if !self.any() {
            return;
        }
        let n = positions.len();
        if k == 0 || self.pairs.iter().all(|p| p.traced_at.is_none()) {
            self.trace_now(positions);
            return;
        }
        if k % self.settings.refresh_windows != 0 {
            return;
        }
        self.collect();
        let tol = self.settings.tolerance_m;
        let moved = |x: &[f64; 3], y: &[f64; 3]| {
            ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2)).sqrt() > tol
        };
        let mut jobs = Vec::new();
        for (p, (i, j)) in (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .enumerate()
        {
            let Some(state) = self.pairs.get_mut(p) else {
                break;
            };
            if !state.beam {
                continue;
            }
            let (a, b) = (positions[i].coords.into(), positions[j].coords.into());
            let stale = match &state.traced_at {
                Some((pa, pb)) => moved(pa, &a) || moved(pb, &b),
                None => true,
            };
            if stale {
                state.traced_at = Some((a, b));
                jobs.push(Job { pair: p, a, b });
            }
        }
        self.submit(jobs);
    }

    /// Traces every beam pair here and now (the first window).
    fn trace_now(&mut self, positions: &[Point3<f64>]) {
        let n = positions.len();
        for (p, (i, j)) in (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .enumerate()
        {
            let Some(state) = self.pairs.get_mut(p) else {
                break;
            };
            if !state.beam {
                continue;
            }
            let started = Instant::now();
            let (a, b) = (positions[i].coords.into(), positions[j].coords.into());
            let dropped = trace_pair(&self.settings, &self.terrain, a, b, &mut state.arrivals);
            state.traced_at = Some((a, b));
            self.record(started.elapsed().as_secs_f64(), dropped);
        }
    }

    /// Hands the refresh's traces to the worker (started on first use).
    fn submit(&mut self, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        if self.worker.is_none() {
            let capacity = self.pairs.len().max(1);
            let (job_tx, job_rx) = sync_channel::<Job>(capacity);
            let (done_tx, done_rx) = sync_channel::<Done>(capacity);
            let settings = self.settings.clone();
            let terrain = self.terrain.clone();
            let spawned = std::thread::Builder::new()
                .name("acoustic-paths".into())
                .spawn(move || {
                    for job in job_rx {
                        let started = Instant::now();
                        let mut arrivals = Vec::new();
                        let dropped = trace_pair(&settings, &terrain, job.a, job.b, &mut arrivals);
                        let done = Done {
                            pair: job.pair,
                            arrivals,
                            dropped,
                            seconds: started.elapsed().as_secs_f64(),
                        };
                        if done_tx.send(done).is_err() {
                            return;
                        }
                    }
                });
            match spawned {
                Ok(_) => self.worker = Some((job_tx, Mutex::new(done_rx))),
                Err(e) => {
                    tracing::warn!("acoustic paths: no worker thread ({e}); tracing in the window");
                }
            }
        }
        match &self.worker {
            Some((tx, _)) => {
                for job in jobs {
                    // The queue holds every pair: a refresh never blocks on it.
                    if tx.send(job).is_ok() {
                        self.pending += 1;
                    }
                }
            }
            None => {
                for job in jobs {
                    let started = Instant::now();
                    let state = &mut self.pairs[job.pair];
                    let dropped = trace_pair(
                        &self.settings,
                        &self.terrain,
                        job.a,
                        job.b,
                        &mut state.arrivals,
                    );
                    self.record(started.elapsed().as_secs_f64(), dropped);
                }
            }
        }
    }

    fn record(&mut self, seconds: f64, dropped: usize) {
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        s.traces += 1;
        s.trace_s += seconds;
        s.max_trace_s = s.max_trace_s.max(seconds);
        s.arrivals_dropped += dropped as u64;
    }

    /// Applies the last refresh's traces, waiting for those not done yet.
    fn collect(&mut self) {
        if self.pending == 0 {
            return;
        }
        let Some((_, rx)) = &mut self.worker else {
            self.pending = 0;
            return;
        };
        let rx = rx.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut waited = false;
        let started = Instant::now();
        let mut done = Vec::with_capacity(self.pending);
        while done.len() < self.pending {
            let next = match rx.try_recv() {
                Ok(d) => Some(d),
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    waited = true;
                    rx.recv_timeout(Duration::from_secs(600)).ok()
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
            };
            let Some(d) = next else {
                tracing::warn!(
                    "acoustic paths: the worker stopped; {} traces lost",
                    self.pending - done.len()
                );
                break;
            };
            done.push(d);
        }
        self.pending = 0;
        if waited {
            let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            s.windows_waited += 1;
            s.wait_s += started.elapsed().as_secs_f64();
        }
        for d in done {
            self.record(d.seconds, d.dropped);
            if let Some(state) = self.pairs.get_mut(d.pair) {
                state.arrivals = d.arrivals;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(beam: Vec<bool>) -> AcousticPaths {
        let terrain = Terrain::from_grid(vec![-40.0; 101 * 101], 101, 101, 10.0).unwrap();
        AcousticPaths::new(
            PathSettings {
                sound_speed: SoundSpeed::uniform(vec![0.0], vec![1500.0]),
                seabed: Seabed::SAND,
                fan: Fan::symmetric(200, 80.0),
                max_arrivals: 8,
                refresh_windows: 10,
                tolerance_m: 1.0,
            },
            Arc::new(terrain),
            beam,
        )
    }

    #[test]
    fn a_moved_pair_is_traced_at_a_refresh_and_used_from_the_next() {
        // Three vehicles, pairs (0,1), (0,2), (1,2); (0,2) is not beam-traced.
        let mut p = paths(vec![true, false, true]);
        let mut at = vec![
            Point3::new(0.0, 0.0, -20.0),
            Point3::new(200.0, 0.0, -20.0),
            Point3::new(0.0, 150.0, -10.0),
        ];
        p.update(0, &at);
        assert_eq!(p.stats().traces, 2);
        assert!(p.arrivals(1).is_none());
        let first = p.arrivals(0).unwrap().to_vec();
        assert!(!first.is_empty() && first.len() <= 8);
        assert!(first.windows(2).all(|w| w[0].delay_s <= w[1].delay_s));
        // The drops are what the strongest 8 leave of each pair's whole list.
        let full = PathSettings {
            max_arrivals: usize::MAX,
            ..(*p.settings).clone()
        };
        let mut all = Vec::new();
        let mut expect = 0;
        for (a, b) in [(0, 1), (1, 2)] {
            trace_pair(
                &full,
                &p.terrain,
                at[a].coords.into(),
                at[b].coords.into(),
                &mut all,
            );
            expect += all.len().saturating_sub(8) as u64;
        }
        assert!(expect > 0);
        assert_eq!(p.stats().arrivals_dropped, expect);
        // Vehicle 1 moves 100 m: nothing changes between refreshes ...
        at[1].x = 300.0;
        for k in 1..10 {
            p.update(k, &at);
        }
        assert_eq!(p.arrivals(0).unwrap(), &first[..]);
        // ... the refresh at window 10 queues (0,1) and (1,2), and they apply at window 20.
        p.update(10, &at);
        assert_eq!(p.arrivals(0).unwrap(), &first[..]);
        p.update(20, &at);
        assert_eq!(p.stats().traces, 4);
        let later = p.arrivals(0).unwrap();
        assert!(later[0].delay_s > first[0].delay_s + 0.05, "{later:?}");
        // Nobody moves: the next refreshes trace nothing.
        p.update(30, &at);
        p.update(40, &at);
        assert_eq!(p.stats().traces, 4);
    }

    #[test]
    fn ends_on_land_or_out_of_the_water_give_what_is_physical() {
        let p = paths(vec![true]);
        let mut out = Vec::new();
        // A source above the surface is put just under it; the arrivals still exist.
        trace_pair(
            &p.settings,
            &p.terrain,
            [0.0, 0.0, 2.0],
            [100.0, 0.0, -20.0],
            &mut out,
        );
        assert!(!out.is_empty());
        // Two vehicles at the same point: a range of 10 cm.
        trace_pair(
            &p.settings,
            &p.terrain,
            [0.0, 0.0, -20.0],
            [0.0, 0.0, -20.0],
            &mut out,
        );
        assert!(!out.is_empty());
    }
}
