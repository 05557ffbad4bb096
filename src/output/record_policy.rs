//! What a run writes when: the policy between the coordinator and the run record
//! ([`super::record`]). The coordinator hands it every completed window, the packet copies and
//! modem frames that ended, and at the end the run summary; it writes the
//! [`schema`](super::schema) topics so that the record grows with what changes, not with
//! windows × pairs:
//! - `/run` once when created;
//! - `/poses` at the first window starting at or after each multiple of `record.pose_interval_s`
//!   (every window if the interval is shorter than W);
//! - `/channel` for every pair at the same kind of instants of `record.channel_interval_s`, and
//!   for a pair at the window its LOS flag differs from the previous window's (`change: true`);
//! - `/link_state` for every link state the network simulator's END carries (it reports
//!   changes only), from the window's start on;
//! - `/packets`, `/modem_frames`, `/programs`, `/metrics` as they are handed over;
//! - `/summary` when finished;
//! - the 3D scene topics ([`super::scene`]) at the same instants as `/poses`, and when a pair's
//!   state changes.
//!
//! It also keeps the per-pair LOS/NLOS counts of the run summary, every window, and writes the
//! per-window `timeline.jsonl` when asked to. A window where nothing changed and nothing is due
//! costs a pass over the pairs comparing LOS flags (two with the scene), without allocating.

use super::record::{RecordError, RecordTap, RecordWriter, RECORD_FILE};
use super::scene::{PathDraw, Scene};
use super::schema::*;
use super::timeline::Timeline;
use crate::config::{HeightGrid, LoadedScenario};
use crate::model::fate::Fate;
use crate::model::link::pair_index;
use crate::model::modem::FrameLedgerEntry;
use crate::net::ledger::CopyEnd;
use crate::wire::channel::ChannelView;
use crate::wire::update::NetworkView;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Per-pair totals over a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema, PartialEq)]
pub struct PairSummary {
    pub a: String,
    pub b: String,
    pub los_windows: u64,
    pub nlos_windows: u64,
    pub transitions: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct PairCount {
    los_windows: u64,
    nlos_windows: u64,
    transitions: u64,
}

/// Instants `0, every, 2·every, …` of sim time: each is due at the first window starting at or
/// after it.
#[derive(Debug, Clone, Copy)]
struct Sampler {
    every_ns: u64,
    next_ns: u64,
}

impl Sampler {
    fn new(interval_s: f64) -> Sampler {
        Sampler {
            every_ns: ((interval_s * 1e9).round() as u64).max(1),
            next_ns: 0,
        }
    }

    fn due(&mut self, t_ns: u64) -> bool {
        if t_ns < self.next_ns {
            return false;
        }
        self.next_ns = (t_ns / self.every_ns)
            .saturating_add(1)
            .saturating_mul(self.every_ns);
        true
    }
}

/// What a finished recorder leaves in the run folder.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordFiles {
    pub record: PathBuf,
    pub timeline: Option<PathBuf>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn ns(s: f64) -> u64 {
    (s * 1e9).round().clamp(0.0, u64::MAX as f64) as u64
}

fn outcome(fate: Fate) -> (Outcome, Option<String>) {
    match fate {
        Fate::Delivered => (Outcome::Delivered, None),
        Fate::Dropped(r) => (Outcome::Dropped, Some(r.label().to_string())),
    }
}

/// What a [`Recorder`] writes beside its own topics, and who else sees it.
#[derive(Default)]
pub struct RecorderOptions<'a> {
    /// The terrain, for the scene's mesh.
    pub terrain: Option<&'a HeightGrid>,
    /// Also write `timeline.jsonl`.
    pub timeline_jsonl: bool,
    /// Write the 3D scene topics ([`super::scene`]).
    pub scene: bool,
    /// Sees every channel and message (a live viewer server).
    pub tap: Option<Arc<dyn RecordTap>>,
}

/// The run record's writer policy (see the module docs).
pub struct Recorder {
    writer: RecordWriter,
    names: Vec<String>,
    window_ns: u64,
    poses: Sampler,
    channel: Sampler,
    /// Per pair ([`pair_index`]): its LOS flag in the last window that had its path.
    los: Vec<bool>,
    /// Per pair: whether any window had its path yet.
    seen: Vec<bool>,
    counts: Vec<PairCount>,
    timeline: Option<Timeline>,
    scene: Option<Scene>,
    /// Per vehicle, the window's pose (reused).
    poses_buf: Vec<[f64; 7]>,
    /// End of the last window recorded (sim ns).
    end_ns: u64,
    messages: u64,
}

impl Recorder {
    /// Creates `dir/record.mcap` (and `dir/timeline.jsonl` if asked to) and writes `/run` and,
    /// with the scene, its start (the terrain's mesh, when given). `run.vehicles` names the
    /// vehicles in node order; its intervals set the sampling.
    pub fn create(
        dir: &Path,
        run: RunInfo,
        options: RecorderOptions,
    ) -> Result<Recorder, RecordError> {
        let mut writer = RecordWriter::create(&dir.join(RECORD_FILE))?;
        if let Some(tap) = options.tap {
            writer = writer.with_tap(tap);
        }
        let timeline = match options.timeline_jsonl {
            true => Some(
                Timeline::create(dir, run.vehicles.clone()).map_err(|source| RecordError::Io {
                    path: dir.join(super::timeline::TIMELINE_FILE),
                    source,
                })?,
            ),
            false => None,
        };
        writer.write(TOPIC_RUN, 0, &run)?;
        let n = run.vehicles.len();
        let pairs = n * n.saturating_sub(1) / 2;
        let window_ns = ns(run.window_ms / 1e3).max(1);
        let mut messages = 1;
        let scene = match options.scene {
            true => {
                let mut scene = Scene::new(
                    run.vehicles.clone(),
                    options.terrain,
                    ns(run.pose_interval_s).max(window_ns),
                );
                messages += scene.start(options.terrain, &mut writer)?;
                Some(scene)
            }
            false => None,
        };
        Ok(Recorder {
            writer,
            names: run.vehicles,
            window_ns: ns(run.window_ms / 1e3).max(1),
            poses: Sampler::new(run.pose_interval_s),
            channel: Sampler::new(run.channel_interval_s),
            los: vec![false; pairs],
            seen: vec![false; pairs],
            counts: vec![PairCount::default(); pairs],
            timeline,
            scene,
            poses_buf: Vec::with_capacity(n),
            end_ns: 0,
            messages,
        })
    }

    /// The recorder of a scenario's run in `dir` (its `record` section); `tap` sees what it
    /// writes (a live viewer server).
    pub fn for_scenario(
        dir: &Path,
        loaded: &LoadedScenario,
        tap: Option<Arc<dyn RecordTap>>,
    ) -> Result<Recorder, RecordError> {
        let s = &loaded.scenario;
        let run = RunInfo {
            scenario: s.name.clone(),
            seed: s.seed,
            window_ms: s.window_ms,
            duration_s: s.duration_s,
            real_time_factor: s.real_time_factor,
            vehicles: s.vehicles.iter().map(|v| v.name.clone()).collect(),
            pose_interval_s: s.record.pose_interval_s,
            channel_interval_s: s.record.channel_interval_s,
        };
        let options = RecorderOptions {
            terrain: Some(&loaded.terrain),
            timeline_jsonl: s.record.timeline_jsonl,
            scene: s.record.scene,
            tap,
        };
        Recorder::create(dir, run, options)
    }

    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    /// The per-window timeline's path, if one is written.
    pub fn timeline_path(&self) -> Option<PathBuf> {
        self.timeline.as_ref().map(|t| t.path().to_path_buf())
    }

    /// Messages written so far.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    fn write<T: Serialize + schemars::JsonSchema>(
        &mut self,
        topic: &'static str,
        t_ns: u64,
        message: &T,
    ) -> Result<(), RecordError> {
        self.messages += 1;
        self.writer.write(topic, t_ns, message)
    }

    /// Window `k` completed: its ChannelData (the world at `start_ns`, checked against the
    /// vehicles) and the network side's END. Paths or link states naming no vehicle are skipped.
    pub fn window(
        &mut self,
        k: u32,
        start_ns: u64,
        channel: &ChannelView,
        end: &NetworkView,
    ) -> Result<(), RecordError> {
        let n = self.names.len();
        let t_s = secs(start_ns);
        let sample = self.channel.due(start_ns);
        for p in channel.paths() {
            if p.b >= n {
                continue;
            }
            let i = pair_index(p.a, p.b, n);
            let c = &mut self.counts[i];
            if p.los {
                c.los_windows += 1;
            } else {
                c.nlos_windows += 1;
            }
            let change = self.seen[i] && self.los[i] != p.los;
            if change {
                c.transitions += 1;
            }
            self.los[i] = p.los;
            self.seen[i] = true;
            if change || sample {
                let m = PairChannel {
                    t_s,
                    a: self.names[p.a].clone(),
                    b: self.names[p.b].clone(),
                    los: p.los,
                    distance_m: channel.distance_m(p.a, p.b),
                    loss_db: p.loss_db(),
                    hops: p.hops(),
                    change,
                    arrivals: p.traced().then(|| p.arrivals().collect()),
                };
                self.write(TOPIC_CHANNEL, start_ns, &m)?;
            }
        }
        let pose_sample = self.poses.due(start_ns);
        if let Some(scene) = &mut self.scene {
            for l in end.link_states() {
                self.messages += scene.link_state(
                    start_ns,
                    l.src_node as usize,
                    l.dst_node as usize,
                    l.usable,
                    &mut self.writer,
                )?;
            }
            self.poses_buf.clear();
            self.poses_buf
                .extend((0..n.min(channel.vehicles())).filter_map(|i| channel.pose(i)));
            let paths = channel.paths().map(|p| PathDraw {
                a: p.a,
                b: p.b,
                los: p.los,
                hops: p.hop_values(),
            });
            self.messages += scene.window(
                start_ns,
                &self.poses_buf,
                paths,
                pose_sample,
                &mut self.writer,
            )?;
        }
        if pose_sample {
            let poses = (0..n.min(channel.vehicles()))
                .map(|i| {
                    let [x, y, z] = channel.position(i);
                    VehiclePose {
                        vehicle: self.names[i].clone(),
                        x,
                        y,
                        z,
                    }
                })
                .collect();
            self.write(TOPIC_POSES, start_ns, &Poses { t_s, poses })?;
        }
        for l in end.link_states() {
            let (Some(src), Some(dst)) = (
                self.names.get(l.src_node as usize),
                self.names.get(l.dst_node as usize),
            ) else {
                continue;
            };
            let m = LinkState {
                t_s,
                src: src.clone(),
                dst: dst.clone(),
                usable: l.usable,
                snr_db: l.snr_db,
                rate_bps: l.rate_bps,
                per: l.per,
                delay_s: secs(l.delay_ns),
            };
            self.write(TOPIC_LINK_STATE, start_ns, &m)?;
        }
        if let Some(t) = &mut self.timeline {
            t.record(k, t_s, channel)
                .map_err(|source| RecordError::Io {
                    path: t.path().to_path_buf(),
                    source,
                })?;
        }
        self.end_ns = self.end_ns.max(start_ns.saturating_add(self.window_ns));
        Ok(())
    }

    fn name(&self, i: usize) -> String {
        self.names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("node {i}"))
    }

    /// Captured packet copies that ended (`/packets`, at their end time).
    pub fn packets(&mut self, ends: &[CopyEnd]) -> Result<(), RecordError> {
        for e in ends {
            let (outcome, reason) = outcome(e.fate);
            if let Some(scene) = &mut self.scene {
                scene.packet(
                    e.src,
                    e.dst,
                    outcome == Outcome::Delivered,
                    reason.as_deref(),
                );
            }
            let m = PacketRecord {
                t_s: secs(e.captured_ns),
                src: self.name(e.src),
                dst: e.dst.map(|d| self.name(d)),
                bytes: e.bytes,
                outcome,
                reason,
                end_s: secs(e.end_ns),
                corrupted: e.corrupted,
                emulation_ms: (e.emulation)
                    .filter(|_| outcome == Outcome::Delivered)
                    .map(|em| em.total_ns as f64 / 1e6),
            };
            self.write(TOPIC_PACKETS, e.end_ns, &m)?;
        }
        Ok(())
    }

    /// A live window's emulation error (`/emulation`, at the window's start).
    pub fn emulation(&mut self, w: &EmulationWindow) -> Result<(), RecordError> {
        self.write(TOPIC_EMULATION, ns(w.t_s), w)
    }

    /// Modem frame copies that were decided (`/modem_frames`, at their decision time);
    /// `modems` names the modems of the entries' `from`/`to` indices.
    pub fn modem_frames(
        &mut self,
        frames: &[FrameLedgerEntry],
        modems: &[String],
    ) -> Result<(), RecordError> {
        let name = |i: usize| {
            modems
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("modem {i}"))
        };
        for f in frames {
            let (outcome, reason) = outcome(f.fate);
            let (src, dst) = (name(f.from), f.to.map(name));
            if let Some(scene) = &mut self.scene {
                scene.modem_frame(&src, dst.as_deref(), outcome == Outcome::Delivered);
            }
            let m = ModemFrame {
                t_s: secs(f.sent_ns),
                decided_s: secs(f.decided_ns),
                src,
                dst,
                kind: f.kind.label().to_string(),
                frame: f.frame,
                rate: f.rate,
                bytes: u32::try_from(f.bytes).unwrap_or(u32::MAX),
                snr_db: f.snr_db,
                outcome,
                reason,
            };
            self.write(TOPIC_MODEM_FRAMES, f.decided_ns, &m)?;
        }
        Ok(())
    }

    /// The scenario's programs, when they ended (`/programs`, at their end time, else at the
    /// end of the last window recorded).
    pub fn programs(&mut self, programs: &[ProgramRecord]) -> Result<(), RecordError> {
        for p in programs {
            let t = p.ended_s.map_or(self.end_ns, ns);
            if let Some(scene) = &mut self.scene {
                self.messages += scene.program(p, t, &mut self.writer)?;
            }
            self.write(TOPIC_PROGRAMS, t, p)?;
        }
        Ok(())
    }

    /// Values the programs reported (`/metrics`, at their time).
    pub fn metrics(&mut self, samples: &[MetricSample]) -> Result<(), RecordError> {
        for m in samples {
            self.write(TOPIC_METRICS, ns(m.t_s), m)?;
        }
        Ok(())
    }

    /// The per-pair LOS/NLOS counts so far, pairs in ChannelData order.
    pub fn pairs(&self) -> Vec<PairSummary> {
        let n = self.names.len();
        let mut out = Vec::with_capacity(self.counts.len());
        for a in 0..n {
            for b in a + 1..n {
                let c = self.counts[pair_index(a, b, n)];
                out.push(PairSummary {
                    a: self.names[a].clone(),
                    b: self.names[b].clone(),
                    los_windows: c.los_windows,
                    nlos_windows: c.nlos_windows,
                    transitions: c.transitions,
                });
            }
        }
        out
    }

    /// Writes `/summary` (at the end of the last window) and completes the files.
    pub fn finish(mut self, summary: &serde_json::Value) -> Result<RecordFiles, RecordError> {
        let end = self.end_ns;
        self.write(TOPIC_SUMMARY, end, summary)?;
        let timeline = match self.timeline.take() {
            Some(t) => {
                let path = t.path().to_path_buf();
                Some(
                    t.finish()
                        .map_err(|source| RecordError::Io { path, source })?,
                )
            }
            None => None,
        };
        Ok(RecordFiles {
            record: self.writer.finish()?,
            timeline,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::output::record::Record;
    use crate::wire::proto::{ChannelData, NetworkUpdate, PathDetails};

    pub(crate) const W: u64 = 10_000_000;

    pub(crate) fn run(pose_interval_s: f64, channel_interval_s: f64) -> RunInfo {
        RunInfo {
            scenario: "t".into(),
            seed: 1,
            window_ms: 10.0,
            duration_s: 1.0,
            real_time_factor: 0.0,
            vehicles: vec!["a".into(), "b".into(), "c".into()],
            pose_interval_s,
            channel_interval_s,
        }
    }

    /// Three vehicles on the x axis at window `k`; pair (0, 1) in LOS unless `nlos01`.
    pub(crate) fn channel(k: u32, nlos01: bool) -> ChannelData {
        let xs = [0.0, 100.0 + k as f64, 300.0];
        let mut c = ChannelData::default();
        for x in xs {
            c.node_list
                .extend_from_slice(&[x, 0.0, -5.0, 1.0, 0.0, 0.0, 0.0]);
        }
        for (a, b) in [(0u32, 1u32), (0, 2), (1, 2)] {
            let los = !(nlos01 && (a, b) == (0, 1));
            let loss = if los { 0.0 } else { 7.5 };
            c.path_details.push(PathDetails {
                ids: vec![a, b],
                los,
                num_hops: vec![2],
                hop_points: vec![
                    xs[a as usize],
                    0.0,
                    -5.0,
                    0.0,
                    xs[b as usize],
                    0.0,
                    -5.0,
                    loss,
                ],
                ..Default::default()
            });
        }
        c
    }

    pub(crate) fn end(states: Vec<crate::wire::proto::LinkState>) -> NetworkView {
        NetworkView::check(NetworkUpdate {
            link_state: states,
            ..Default::default()
        })
        .unwrap()
    }

    /// Runs `windows` windows with pair (0, 1) NLOS in `nlos` windows; returns the record.
    fn record(
        windows: u32,
        nlos: impl Fn(u32) -> bool,
        pose_s: f64,
        channel_s: f64,
    ) -> (Record, Vec<PairSummary>) {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Recorder::create(
            dir.path(),
            run(pose_s, channel_s),
            RecorderOptions::default(),
        )
        .unwrap();
        for k in 0..windows {
            let c = channel(k, nlos(k));
            let e = if k == 0 {
                end(vec![crate::wire::proto::LinkState {
                    src_node: 0,
                    dst_node: 1,
                    usable: true,
                    snr_db: Some(20.0),
                    rate_bps: 6e6,
                    per: 0.001,
                    delay_ns: 400,
                }])
            } else {
                end(vec![])
            };
            r.window(
                k,
                k as u64 * W,
                &ChannelView::check(&crate::wire::channel::Channel::from(&c), 3).unwrap(),
                &e,
            )
            .unwrap();
        }
        let pairs = r.pairs();
        r.finish(&serde_json::json!({"windows": windows})).unwrap();
        (Record::read(dir.path()).unwrap(), pairs)
    }

    /// A traced pair's channel samples carry its arrivals (none: a shadow zone); a pair not
    /// traced has none.
    #[test]
    fn channel_samples_keep_a_traced_pair_s_arrivals() {
        let dir = tempfile::tempdir().unwrap();
        let mut r =
            Recorder::create(dir.path(), run(0.05, 0.1), RecorderOptions::default()).unwrap();
        let arrival = |k: f64| crate::wire::channel::Arrival {
            delay_s: 0.07 + k * 1e-3,
            amplitude: 0.01 / (1.0 + k),
            phase_rad: k,
            launch_deg: -3.0 + k,
            arrival_deg: 3.0 - k,
            path_m: 100.0 + k,
            surface_bounces: k as u32,
            bottom_bounces: 1,
        };
        for k in 0..30u32 {
            let mut c = channel(k, false);
            c.path_details[0].traced = true;
            for a in [arrival(0.0), arrival(1.0)] {
                c.path_details[0].arrivals.extend_from_slice(&a.values());
            }
            c.path_details[1].traced = true;
            r.window(
                k,
                k as u64 * W,
                &ChannelView::check(&crate::wire::channel::Channel::from(&c), 3).unwrap(),
                &end(vec![]),
            )
            .unwrap();
        }
        r.finish(&serde_json::json!({})).unwrap();
        let record = Record::read(dir.path()).unwrap();
        let of = |a: &str, b: &str| -> Vec<&PairChannel> {
            record
                .channel
                .iter()
                .filter(|c| c.a == a && c.b == b)
                .collect()
        };
        assert_eq!(of("a", "b").len(), 3);
        for c in of("a", "b") {
            let got: Vec<crate::wire::channel::Arrival> = c.arrivals.as_ref().unwrap().clone();
            assert_eq!(got, [arrival(0.0), arrival(1.0)]);
        }
        assert!(of("a", "c")
            .iter()
            .all(|c| c.arrivals.as_ref().is_some_and(Vec::is_empty)));
        assert!(of("b", "c").iter().all(|c| c.arrivals.is_none()));
    }

    #[test]
    fn periodic_samples_at_the_interval_and_a_los_change_at_its_window_nothing_between() {
        // W = 10 ms; poses every 50 ms, channel every 200 ms; pair a-b NLOS in windows 33..=36.
        let (r, pairs) = record(100, |k| (33..=36).contains(&k), 0.05, 0.2);
        assert_eq!(r.run.as_ref().unwrap().vehicles, ["a", "b", "c"]);
        let pose_windows: Vec<u64> = r
            .poses
            .iter()
            .map(|p| (p.t_s * 100.0).round() as u64)
            .collect();
        assert_eq!(pose_windows, (0..20).map(|i| i * 5).collect::<Vec<_>>());
        assert_eq!(
            r.poses[3].poses[1],
            VehiclePose {
                vehicle: "b".into(),
                x: 115.0,
                y: 0.0,
                z: -5.0
            }
        );
        // Periodic samples: every pair at 0, 0.2, …, 0.8 s (5 × 3), none flagged as a change.
        let periodic: Vec<(f64, &str, &str)> = r
            .channel
            .iter()
            .filter(|c| !c.change)
            .map(|c| (c.t_s, c.a.as_str(), c.b.as_str()))
            .collect();
        assert_eq!(periodic.len(), 15);
        assert!(
            periodic.iter().all(|(t, _, _)| [0.0, 0.2, 0.4, 0.6, 0.8]
                .iter()
                .any(|s| (s - t).abs() < 1e-9)),
            "{periodic:?}"
        );
        // Changes: a-b at window 33 (to NLOS) and 37 (back), nothing else.
        let changes: Vec<(f64, &str, &str, bool)> = r
            .channel
            .iter()
            .filter(|c| c.change)
            .map(|c| (c.t_s, c.a.as_str(), c.b.as_str(), c.los))
            .collect();
        assert_eq!(
            changes,
            vec![(0.33, "a", "b", false), (0.37, "a", "b", true)]
        );
        let nlos = r.channel.iter().find(|c| c.change && !c.los).unwrap();
        assert_eq!((nlos.distance_m, nlos.loss_db, nlos.hops), (133.0, 7.5, 2));
        // The link state the END carried, once.
        assert_eq!(r.link_states.len(), 1);
        assert_eq!(
            (
                r.link_states[0].src.as_str(),
                r.link_states[0].dst.as_str(),
                r.link_states[0].snr_db
            ),
            ("a", "b", Some(20.0))
        );
        assert_eq!(r.link_states[0].delay_s, 400e-9);
        assert_eq!(r.summary, Some(serde_json::json!({"windows": 100})));
        // The counts behind summary.json, kept every window.
        assert_eq!(
            pairs[0],
            PairSummary {
                a: "a".into(),
                b: "b".into(),
                los_windows: 96,
                nlos_windows: 4,
                transitions: 2
            }
        );
        assert_eq!((pairs[2].los_windows, pairs[2].transitions), (100, 0));
    }

    #[test]
    fn a_change_on_a_sample_window_is_written_once_and_short_intervals_mean_every_window() {
        // Intervals below W: every window; a-b flips at window 2.
        let (r, _) = record(4, |k| k >= 2, 0.001, 0.001);
        assert_eq!(r.poses.len(), 4);
        assert_eq!(r.channel.len(), 12);
        let at2: Vec<bool> = r
            .channel
            .iter()
            .filter(|c| (c.t_s - 0.02).abs() < 1e-9)
            .map(|c| c.change)
            .collect();
        assert_eq!(at2, vec![true, false, false]);
    }

    #[test]
    fn sampler_is_due_at_the_first_window_after_each_multiple() {
        // 25 ms over 10 ms windows: due at 0, 30 (≥ 25), 50, 80 (≥ 75), 100.
        let mut s = Sampler::new(0.025);
        let due: Vec<u64> = (0..11).map(|k| k * W).filter(|&t| s.due(t)).collect();
        assert_eq!(
            due,
            vec![0, 30_000_000, 50_000_000, 80_000_000, 100_000_000]
        );
    }

    #[test]
    fn packets_frames_and_programs_are_written_with_names() {
        use crate::model::fate::DropReason;
        use crate::model::modem::TxKind;
        let dir = tempfile::tempdir().unwrap();
        let mut r = Recorder::create(
            dir.path(),
            run(1.0, 1.0),
            RecorderOptions {
                timeline_jsonl: true,
                ..Default::default()
            },
        )
        .unwrap();
        let c = channel(0, false);
        r.window(
            0,
            0,
            &ChannelView::check(&crate::wire::channel::Channel::from(&c), 3).unwrap(),
            &end(vec![]),
        )
        .unwrap();
        let delivered = CopyEnd {
            captured_ns: 1_000,
            src: 0,
            dst: Some(2),
            bytes: 84,
            fate: Fate::Delivered,
            end_ns: 5_000,
            corrupted: false,
            emulation: Default::default(),
        };
        let no_route = CopyEnd {
            dst: None,
            fate: Fate::Dropped(DropReason::NoRoute),
            end_ns: 1_000,
            ..delivered
        };
        r.packets(&[delivered, no_route]).unwrap();
        let frame = FrameLedgerEntry {
            tx: 1,
            kind: TxKind::Data,
            frame: 1,
            from: 1,
            to: Some(0),
            src: 2,
            dest: 1,
            rate: 1,
            bytes: 32,
            sent_ns: 2_000_000,
            decided_ns: 9_000_000,
            snr_db: Some(11.0),
            fate: Fate::Dropped(DropReason::Collision),
        };
        r.modem_frames(&[frame], &["b".into(), "c".into()]).unwrap();
        let program = ProgramRecord {
            name: "iperf3".into(),
            vehicle: Some("a".into()),
            started_s: Some(0.0),
            ended_s: None,
            exit_code: Some(0),
            signal: None,
            end: ProgramEnd::Exited,
            leftovers_killed: false,
        };
        r.programs(std::slice::from_ref(&program)).unwrap();
        let metric = MetricSample {
            t_s: 0.5,
            program: "listener".into(),
            vehicle: Some("a".into()),
            name: "latency_s".into(),
            value: 0.012,
            from: Some("b".into()),
        };
        r.metrics(std::slice::from_ref(&metric)).unwrap();
        let files = r.finish(&serde_json::json!({"interrupted": true})).unwrap();
        assert_eq!(
            std::fs::read_to_string(files.timeline.unwrap())
                .unwrap()
                .lines()
                .count(),
            3
        );
        let rec = Record::read(&files.record).unwrap();
        assert_eq!(rec.metrics, vec![metric]);
        assert_eq!(rec.packets.len(), 2);
        assert_eq!(
            (
                rec.packets[0].src.as_str(),
                rec.packets[0].dst.as_deref(),
                rec.packets[0].outcome,
                rec.packets[0].end_s
            ),
            ("a", Some("c"), Outcome::Delivered, 5e-6)
        );
        assert_eq!(
            (
                rec.packets[1].dst.as_deref(),
                rec.packets[1].reason.as_deref()
            ),
            (None, Some("no route"))
        );
        let f = &rec.modem_frames[0];
        assert_eq!(
            (
                f.src.as_str(),
                f.dst.as_deref(),
                f.kind.as_str(),
                f.outcome,
                f.reason.as_deref()
            ),
            ("c", Some("b"), "data", Outcome::Dropped, Some("collision"))
        );
        assert_eq!(rec.programs, vec![program]);
        assert_eq!(rec.summary.unwrap()["interrupted"], true);
    }
}
