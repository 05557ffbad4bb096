//! The physics coordinator: owns the clock and drives the physics simulator and the network
//! coordinator window by window (see the [module docs](super)).

use super::simulators::{network_simulator, physics_simulator, startup_timeout, timeout};
use super::{NetworkCoordinator, RunReport};
use crate::clock::{Opening, Pacer, Schedule};
use crate::config::LoadedScenario;
use crate::io::live::LiveNetwork;
use crate::io::modem_bridge::ModemBridges;
use crate::io::netsim_manager::NavSource;
use crate::io::programs::Programs;
use crate::net::ledger::CopyEnd;
use crate::output::{
    stages::{Stage, Stages},
    Recorder,
};
use crate::sync::{
    protocol::{expect_network, expect_physics, network_begin, physics_begin},
    Link, LinkError,
};
use crate::wire::channel::{ChannelMemo, ChannelView, Decoded};
use crate::wire::proto::rosnetsim::{network_update, physics_update};
use crate::wire::update::NetworkView;
use anyhow::Context;
use prost::bytes::Bytes;
use prost::Message;
use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

/// One completed window as the physics coordinator saw it: handed to every
/// [`WindowObserver`] after the network side's END for the window arrived.
#[derive(Debug, Clone, Copy)]
pub struct WindowView<'a> {
    /// The window index k.
    pub window: u32,
    /// Sim time at the window's start (k·W), ns; the channel was sampled then.
    pub start_ns: u64,
    /// W, ns.
    pub window_ns: u64,
    /// The channel the network side used for this window, checked against the vehicles.
    pub channel: ChannelView<'a>,
    /// The network side's END for this window: deliveries (and, from simulators that report
    /// them, drops) during [kW, (k+1)W).
    pub network_end: &'a NetworkView,
}

/// Something that watches the run window by window (the ROS 2 publishers, for one). It sees
/// only what the coordinator already has; an error ends the run.
pub trait WindowObserver: Send {
    fn window(&mut self, view: &WindowView<'_>) -> anyhow::Result<()>;
    /// The run is over (finished or interrupted).
    fn finish(&mut self) {}
}

/// The physics coordinator and the run it drives.
pub struct PhysicsCoordinator {
    pub physics: Link,
    pub network: Link,
    pub schedule: Schedule,
    /// Wall-clock pacing; 0 = as fast as the simulators go.
    pub real_time_factor: f64,
    pub startup: Duration,
    /// The run record (and, on request, the per-window timeline); none: nothing is written.
    pub recorder: Option<Recorder>,
    pub scenario: String,
    /// Number of vehicles: every window's ChannelData is checked against it.
    pub vehicles: usize,
    /// Log a progress line at most this often.
    pub progress_every: Option<Duration>,
    /// The NETSIM manager, if any: its accepted fixes go into each physics BEGIN.
    pub nav: Option<NavSource>,
    /// The in-process network coordinator's live side, if it captures traffic.
    pub live: Option<Arc<LiveNetwork>>,
    /// Called after every window, in order; none by default (then the loop does no extra work).
    pub observers: Vec<Box<dyn WindowObserver>>,
    /// The modem bridges (`acoustic_modems`), fed every window's ChannelData.
    pub modem_bridges: Option<ModemBridges>,
    /// The scenario's programs (`programs`), started at window openings and stopped at the end.
    pub programs: Option<Programs>,
    /// Where the wall time goes, shared with the in-process network coordinator and live side.
    pub stages: Arc<Stages>,
    /// Each window's decoded channel, for an embedded network simulator in this process.
    pub channel_memo: ChannelMemo,
}

impl PhysicsCoordinator {
    /// The coordinator for a scenario: its physics simulator, the network coordinator (in
    /// this process unless `network_coordinator` names a ZeroMQ endpoint) and the run record in
    /// `out_dir` (none if `None`).
    pub async fn for_scenario(
        loaded: &LoadedScenario,
        physics_endpoint: Option<&str>,
        network_coordinator: Option<&str>,
        network_endpoint: Option<&str>,
        out_dir: Option<PathBuf>,
    ) -> anyhow::Result<PhysicsCoordinator> {
        let s = &loaded.scenario;
        if s.real_time_factor > 0.0 {
            crate::io::timer::prioritize(s.nice);
        }
        let schedule = loaded.schedule();
        let physics = physics_simulator(loaded, physics_endpoint, out_dir.as_deref()).await?;
        let nav = NavSource::start(loaded).await?;
        let channel_memo = ChannelMemo::default();
        let mut live = None;
        let mut stages = Arc::<Stages>::default();
        let network = match network_coordinator {
            Some(ep) => {
                Link::zeromq(
                    "network coordinator",
                    ep,
                    timeout(loaded),
                    startup_timeout(loaded),
                )
                .await?
            }
            None => {
                let sim = network_simulator(
                    loaded,
                    network_endpoint,
                    out_dir.as_deref(),
                    channel_memo.clone(),
                )
                .await?;
                live = LiveNetwork::for_scenario(loaded, out_dir.as_deref())?;
                if let Some(l) = &live {
                    stages = l.stages();
                }
                let coordinator = NetworkCoordinator::new(sim, schedule, startup_timeout(loaded))
                    .with_live(live.clone())
                    .with_stages(stages.clone());
                Link::local("network coordinator", Box::new(coordinator))
            }
        };
        let modem_bridges = ModemBridges::start(loaded).await?;
        let programs = Programs::for_scenario(loaded, out_dir.as_deref())?;
        let recorder = match out_dir {
            Some(dir) => Some(Recorder::for_scenario(&dir, loaded)?),
            None => None,
        };
        if let (None, Some(l)) = (&recorder, &live) {
            l.without_copy_ends();
        }
        Ok(PhysicsCoordinator {
            physics,
            network,
            schedule,
            real_time_factor: s.real_time_factor,
            startup: startup_timeout(loaded),
            recorder,
            scenario: s.name.clone(),
            vehicles: s.vehicles.len(),
            progress_every: Some(Duration::from_secs(2)),
            nav,
            live,
            observers: Vec::new(),
            modem_bridges,
            programs,
            stages,
            channel_memo,
        })
    }

    /// Runs every window, or until `stop` resolves (then the window under way is abandoned, the
    /// run ends as after its last window and the report says `interrupted`). The record gets
    /// every completed window and ends with the report as `/summary`.
    pub async fn run(
        mut self,
        stop: impl std::future::Future<Output = ()>,
    ) -> anyhow::Result<RunReport> {
        tokio::pin!(stop);
        let n = self.schedule.windows;
        let started = Instant::now();
        let mut pacer = Pacer::new(self.schedule, self.real_time_factor, started);
        let mut last_progress = started;
        let mut interrupted = false;
        let mut done = 0;
        let mut copy_ends: Vec<CopyEnd> = Vec::new();
        let mut frames = Vec::new();
        // The last channel decoded, with its bytes (buffers reused from window to window), also
        // left in the memo for an embedded network simulator.
        let mut decoded = Arc::new(Decoded::default());

        let mut pending = Some(
            Self::physics_exchange(&mut self.physics, self.nav.as_ref(), 0, Some(self.startup))
                .await?,
        );
        // The wall instant the next window opens at: its due time on the paced schedule (the
        // timer wakes a little after it), else when it starts.
        let mut opens: Option<Instant> = None;
        for k in 0..n {
            let opened = opens.take().unwrap_or_else(Instant::now);
            if let Some(p) = &mut self.programs {
                p.tick(self.schedule.start_ns(k));
            }
            let channel_bytes = pending
                .take()
                .expect("the physics END for this window is in hand");
            let decoding = Instant::now();
            // A channel byte for byte the last one (sampled less often than every window) is
            // not decoded again.
            if k == 0 || channel_bytes != decoded.bytes {
                self.channel_memo.take();
                let d = Arc::make_mut(&mut decoded);
                d.channel
                    .decode_from(&channel_bytes)
                    .map_err(|e| self.physics.protocol_error(k, format!("channel_data: {e}")))?;
                d.bytes = channel_bytes.clone();
                self.channel_memo.put(decoded.clone());
            }
            let checked = ChannelView::check(&decoded.channel, self.vehicles)
                .map_err(|e| self.physics.protocol_error(k, format!("channel_data: {e}")))?;
            self.stages.since(Stage::Channel, decoding);
            if let Some(a) = &mut self.modem_bridges {
                a.on_window(k, self.schedule.start_ns(k), opened, &checked);
            }
            // The network side anchors the window where it opened here, not at the BEGIN's
            // arrival (in this process or another).
            let mut network_request = network_begin(k, channel_bytes);
            network_request.window_opened_unix_ns = crate::io::timer::unix_ns_of(opened);
            let network_request = network_request.encode_to_vec();
            let first = (k == 0).then_some(self.startup);
            let (physics, network, nav) = (&mut self.physics, &mut self.network, self.nav.as_ref());
            let stages = &self.stages;
            let next_physics = async {
                if k + 1 < n {
                    let started = Instant::now();
                    let end = Self::physics_exchange(physics, nav, k + 1, None).await;
                    stages.since(Stage::Physics, started);
                    Some(end).transpose()
                } else {
                    Ok(None)
                }
            };
            let network_window = async {
                let reply = network.exchange(k, network_request, first).await?;
                expect_network(&reply, network_update::MsgType::End, k)
                    .map_err(|e| network.protocol_error(k, e))
            };
            let (next, end) = tokio::select! {
                r = async { tokio::join!(next_physics, network_window) } => r,
                _ = &mut stop => { interrupted = true; break; }
            };
            let end = end?;
            end.check_nodes(self.vehicles)
                .map_err(|e| self.network.protocol_error(k, e))?;
            pending = next?;
            done = k + 1;
            let recording = Instant::now();
            if let Some(r) = &mut self.recorder {
                let writing = |r: &Recorder| format!("writing {}", r.path().display());
                r.window(k, self.schedule.start_ns(k), &checked, &end)
                    .with_context(|| writing(r))?;
                if let Some(live) = &self.live {
                    live.drain_copy_ends(&mut copy_ends);
                    r.packets(&copy_ends).with_context(|| writing(r))?;
                    copy_ends.clear();
                }
                if let Some(m) = &mut self.modem_bridges {
                    if m.drain_frames(&mut frames) > 0 {
                        r.modem_frames(&frames, m.modem_names())
                            .with_context(|| writing(r))?;
                        frames.clear();
                    }
                }
            }
            self.stages.since(Stage::Record, recording);
            let observing = Instant::now();
            if !self.observers.is_empty() {
                let view = WindowView {
                    window: k,
                    start_ns: self.schedule.start_ns(k),
                    window_ns: self.schedule.window_ns,
                    channel: checked,
                    network_end: &end,
                };
                for o in &mut self.observers {
                    o.window(&view)?;
                }
            }
            self.stages.since(Stage::Observers, observing);

            let opening = if pacer.paced() {
                pacer.open(k + 1, Instant::now())
            } else {
                None
            };
            match opening {
                None => {}
                Some(Opening::Late(anchor)) => opens = Some(anchor),
                Some(Opening::At(due)) => {
                    let waiting = Instant::now();
                    tokio::select! {
                        _ = crate::io::timer::sleep_until(due) => {}
                        _ = &mut stop => { interrupted = true; break; }
                    }
                    opens = Some(due);
                    self.stages.since(Stage::Pacing, waiting);
                }
            }
            if let Some(every) = self.progress_every {
                if last_progress.elapsed() >= every {
                    last_progress = Instant::now();
                    let wall = started.elapsed().as_secs_f64();
                    tracing::info!(
                        "window {done}/{n}  sim {:.2}/{:.2} s  wall {wall:.1} s  {:.0} windows/s",
                        self.schedule.start_ns(done) as f64 / 1e9,
                        self.schedule.duration_ns() as f64 / 1e9,
                        done as f64 / wall
                    );
                }
            }
        }
        for o in &mut self.observers {
            o.finish();
        }
        let wall_seconds = started.elapsed().as_secs_f64();
        let mut recorder = self.recorder.take();
        let writing = |r: &Recorder| format!("writing {}", r.path().display());
        // Programs stop while their namespaces still exist.
        let programs = match self.programs.take() {
            Some(mut p) => p.stop_all(self.schedule.start_ns(done)).await,
            None => Vec::new(),
        };
        if let Some(r) = &mut recorder {
            r.programs(&programs).with_context(|| writing(r))?;
        }
        let network = match self.live.take() {
            Some(live) => {
                let summary = live.shutdown();
                if let Some(r) = &mut recorder {
                    live.drain_copy_ends(&mut copy_ends);
                    r.packets(&copy_ends).with_context(|| writing(r))?;
                }
                Some(summary)
            }
            None => None,
        };
        let modem_names = self
            .modem_bridges
            .as_ref()
            .map(|m| m.modem_names().to_vec())
            .unwrap_or_default();
        let modems = self
            .modem_bridges
            .take()
            .map(|a| a.finish(self.schedule.start_ns(done)));
        if let (Some(r), Some(m)) = (&mut recorder, &modems) {
            r.modem_frames(&m.entries[m.drained..], &modem_names)
                .with_context(|| writing(r))?;
        }
        let pairs = recorder.as_ref().map(Recorder::pairs).unwrap_or_default();
        let mut report = RunReport {
            scenario: self.scenario,
            windows: done,
            window_ms: self.schedule.window_ms(),
            sim_seconds: self.schedule.start_ns(done) as f64 / 1e9,
            wall_seconds,
            slipped_seconds: pacer.slipped().as_secs_f64(),
            late_windows: pacer.lateness().0,
            max_late_ms: pacer.lateness().1.as_secs_f64() * 1e3,
            windows_per_second: done as f64 / wall_seconds.max(1e-9),
            interrupted,
            record: recorder.as_ref().map(|r| r.path().to_path_buf()),
            timeline: None,
            pairs,
            network,
            modems,
            programs,
            stages: self.stages.summary(done),
        };
        if let Some(r) = recorder {
            let path = r.path().to_path_buf();
            report.timeline = r.timeline_path();
            let files = r
                .finish(&serde_json::to_value(&report)?)
                .with_context(|| format!("writing {}", path.display()))?;
            report.record = Some(files.record);
        }
        Ok(report)
    }

    /// BEGIN(k), with the nav fixes accepted since the last BEGIN, → END(k); returns the END's
    /// serialized ChannelData.
    async fn physics_exchange(
        physics: &mut Link,
        nav: Option<&NavSource>,
        k: u32,
        timeout: Option<Duration>,
    ) -> Result<Bytes, LinkError> {
        let fixes = nav.map(NavSource::take).unwrap_or_default();
        let reply = physics
            .exchange(k, physics_begin(k, fixes), timeout)
            .await?;
        let end = expect_physics(reply, physics_update::MsgType::End, k)
            .map_err(|e| physics.protocol_error(k, e))?;
        Ok(end.channel_data)
    }
}
