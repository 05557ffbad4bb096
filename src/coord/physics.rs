//! The physics coordinator: owns the clock and drives the physics simulator and the network
//! coordinator window by window (see the [module docs](super)); what else takes part in a run
//! does so as a [`Participant`].

use super::participant::{Participant, Participants, WindowOpen, WindowView};
use crate::clock::stages::{Stage, Stages};
use crate::clock::{Opening, Pacer, Schedule};
use crate::lockstep::{
    protocol::{expect_network, expect_physics, network_begin, physics_begin},
    Link, LinkError,
};
use crate::output::summary::RunReport;
use crate::sim::network::ChannelMemo;
use crate::wire::channel::{ChannelView, Decoded};
use crate::wire::proto::rosnetsim::{network_update, physics_update};
use crate::wire::proto::SetPose;
use crate::wire::update::NetworkView;
use prost::bytes::Bytes;
use prost::Message;
use std::{
    future::Future,
    ops::ControlFlow,
    pin::Pin,
    sync::Arc,
    time::{Duration, Instant},
};

/// The physics coordinator and the run it drives: the window protocol with the physics
/// simulator and the network coordinator, the pacing, and the run's participants.
pub struct PhysicsCoordinator {
    physics: Link,
    network: Link,
    schedule: Schedule,
    /// Wall-clock pacing; 0 = as fast as the simulators go.
    real_time_factor: f64,
    /// The timeout of window 0's exchanges (the simulators may take time to start).
    startup: Duration,
    scenario: String,
    /// Number of vehicles: every window's ChannelData is checked against it.
    vehicles: usize,
    /// Where the wall time goes, shared with the in-process network coordinator and live side.
    stages: Arc<Stages>,
    /// Each window's decoded channel, for an embedded network simulator in this process.
    channel_memo: ChannelMemo,
    /// In the order added; none by default (then a window costs nothing beyond the protocol).
    participants: Participants,
}

impl PhysicsCoordinator {
    /// The coordinator of `physics` and `network` (the network coordinator) over `schedule`:
    /// unpaced, 10 s for window 0's exchanges, no vehicles and no participants.
    pub fn new(physics: Link, network: Link, schedule: Schedule) -> PhysicsCoordinator {
        PhysicsCoordinator {
            physics,
            network,
            schedule,
            real_time_factor: 0.0,
            startup: Duration::from_secs(10),
            scenario: String::new(),
            vehicles: 0,
            stages: Arc::default(),
            channel_memo: ChannelMemo::default(),
            participants: Participants::default(),
        }
    }

    /// Paces the windows at `factor` × real time (0: as fast as the simulators go).
    pub fn with_real_time_factor(mut self, factor: f64) -> Self {
        self.real_time_factor = factor;
        self
    }

    /// The timeout of window 0's exchanges (and so of the simulators' start).
    pub fn with_startup_timeout(mut self, startup: Duration) -> Self {
        self.startup = startup;
        self
    }

    /// The scenario's name, for the report.
    pub fn with_scenario_name(mut self, name: impl Into<String>) -> Self {
        self.scenario = name.into();
        self
    }

    /// Checks every window's ChannelData against `vehicles` vehicles.
    pub fn with_vehicles(mut self, vehicles: usize) -> Self {
        self.vehicles = vehicles;
        self
    }

    /// Adds its stages' time to `stages` (shared with the network coordinator and live side).
    pub fn with_stages(mut self, stages: Arc<Stages>) -> Self {
        self.stages = stages;
        self
    }

    /// Leaves each window's decoded channel in `memo`, for an embedded network simulator in
    /// this process.
    pub fn with_channel_memo(mut self, memo: ChannelMemo) -> Self {
        self.channel_memo = memo;
        self
    }

    /// Exchanges the windows with `network` (the network coordinator) instead.
    pub fn with_network(mut self, network: Link) -> Self {
        self.network = network;
        self
    }

    /// Adds `participant` after those already added.
    pub fn with_participant(mut self, participant: impl Participant + 'static) -> Self {
        self.participants.push(Box::new(participant));
        self
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// Runs every window, or until `stop` resolves (then the window under way is abandoned, the
    /// run ends as after its last window and the report says `interrupted`). The participants
    /// see every completed window and finish in order; the recorder ends the record with the
    /// report as `/summary`.
    pub async fn run(mut self, stop: impl Future<Output = ()>) -> anyhow::Result<RunReport> {
        tokio::pin!(stop);
        let n = self.schedule.windows;
        let mut interrupted = false;
        let mut done = 0;
        // The last channel decoded, with its bytes (buffers reused from window to window).
        let mut decoded = Arc::new(Decoded::default());
        self.participants.prepare()?;
        // After the programs started (they never inherit it either way).
        crate::io::os::timer::on_window_path();
        let poses = self.participants.poses();
        let first = Self::physics_exchange(&mut self.physics, poses, 0, Some(self.startup)).await;
        let mut pending = Some(first?);
        // The paced schedule starts as window 0 opens: what came before (the participants'
        // preparations, the physics simulator's first window) is not a window's lateness.
        let anchor = Instant::now();
        let mut pacer = Pacer::new(self.schedule, self.real_time_factor, anchor);
        // The wall instant the next window opens at: its due time on the paced schedule (the
        // timer wakes a little after it), else when it starts.
        let mut opens: Option<Instant> = Some(anchor);
        for k in 0..n {
            let now = Instant::now();
            let opened = opens.take().unwrap_or(now);
            let channel_bytes = pending
                .take()
                .expect("the physics END for this window is in hand");
            let (channel, shared) = self.channel(k, &channel_bytes, &mut decoded)?;
            let open = WindowOpen {
                decoded: shared,
                window: k,
                start_ns: self.schedule.start_ns(k),
                window_ns: self.schedule.window_ns,
                opened,
                late: now.saturating_duration_since(opened),
                channel,
            };
            self.participants.open(&open)?;
            let poses = if k + 1 < n {
                self.participants.poses()
            } else {
                Vec::new()
            };
            let exchanges = self.exchange(k, channel_bytes, opened, poses);
            let (next, end) = tokio::select! {
                r = exchanges => r,
                _ = &mut stop => { interrupted = true; break; }
            };
            let end = Arc::new(end?);
            end.check_nodes(self.vehicles)
                .map_err(|e| self.network.protocol_error(k, e))?;
            pending = next?;
            done = k + 1;
            let view = WindowView {
                open,
                network_end: &end,
            };
            self.participants.window(&view, &self.stages)?;
            match Self::pace(&self.stages, &mut pacer, k + 1, stop.as_mut()).await {
                ControlFlow::Continue(at) => opens = at,
                ControlFlow::Break(()) => {
                    interrupted = true;
                    break;
                }
            }
        }
        crate::io::os::timer::off_window_path();
        self.finish(done, interrupted, anchor, &pacer).await
    }

    /// Window k's ChannelData decoded (unless byte for byte the last one: a channel sampled
    /// less often than every window is not decoded again), left in the memo and checked.
    fn channel<'d>(
        &self,
        k: u32,
        bytes: &Bytes,
        decoded: &'d mut Arc<Decoded>,
    ) -> anyhow::Result<(ChannelView<'d>, &'d Arc<Decoded>)> {
        let decoding = Instant::now();
        if k == 0 || *bytes != decoded.bytes {
            self.channel_memo.take();
            if Arc::get_mut(decoded).is_none() {
                // Still held by a participant past its window (the record's writer): decoded
                // afresh rather than copied first.
                *decoded = Arc::new(Decoded::default());
            }
            let d = Arc::make_mut(decoded);
            d.channel
                .decode_from(bytes)
                .map_err(|e| self.physics.protocol_error(k, format!("channel_data: {e}")))?;
            d.bytes = bytes.clone();
            self.channel_memo.put(decoded.clone());
        }
        let decoded: &'d Arc<Decoded> = decoded;
        let checked = ChannelView::check(&decoded.channel, self.vehicles)
            .map_err(|e| self.physics.protocol_error(k, format!("channel_data: {e}")))?;
        self.stages.since(Stage::Channel, decoding);
        Ok((checked, decoded))
    }

    /// Window k with the network coordinator, beside window k+1 with the physics simulator
    /// (with `poses`); returns the next physics END's ChannelData (none after the last window)
    /// and the network END.
    async fn exchange(
        &mut self,
        k: u32,
        channel_bytes: Bytes,
        opened: Instant,
        poses: Vec<SetPose>,
    ) -> (
        Result<Option<Bytes>, LinkError>,
        Result<NetworkView, LinkError>,
    ) {
        // The network side anchors the window where it opened here, not at the BEGIN's
        // arrival (in this process or another).
        let mut network_request = network_begin(k, channel_bytes);
        network_request.window_opened_unix_ns = crate::io::os::timer::unix_ns_of(opened);
        let network_request = network_request.encode_to_vec();
        let first = (k == 0).then_some(self.startup);
        let n = self.schedule.windows;
        let (physics, network, stages) = (&mut self.physics, &mut self.network, &self.stages);
        let next_physics = async {
            if k + 1 < n {
                let started = Instant::now();
                let end = Self::physics_exchange(physics, poses, k + 1, None).await;
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
        tokio::join!(next_physics, network_window)
    }

    /// Waits for window `next`'s due time when paced; returns the instant it opens at (none
    /// when unpaced or on time to the wake-up), or breaks if `stop` resolved meanwhile.
    async fn pace(
        stages: &Stages,
        pacer: &mut Pacer,
        next: u32,
        stop: Pin<&mut impl Future<Output = ()>>,
    ) -> ControlFlow<(), Option<Instant>> {
        if !pacer.paced() {
            return ControlFlow::Continue(None);
        }
        match pacer.open(next, Instant::now()) {
            None => ControlFlow::Continue(None),
            Some(Opening::Late(anchor)) => ControlFlow::Continue(Some(anchor)),
            Some(Opening::At(due)) => {
                let waiting = Instant::now();
                tokio::select! {
                    _ = crate::io::os::timer::sleep_until(due) => {}
                    _ = stop => return ControlFlow::Break(()),
                }
                stages.since(Stage::Pacing, waiting);
                ControlFlow::Continue(Some(due))
            }
        }
    }

    /// Ends the run after `done` windows: the participants stop, finish in order (adding their
    /// parts to the report) and get the complete report.
    async fn finish(
        mut self,
        done: u32,
        interrupted: bool,
        anchor: Instant,
        pacer: &Pacer,
    ) -> anyhow::Result<RunReport> {
        self.participants.stop();
        let wall_seconds = anchor.elapsed().as_secs_f64();
        let mut report = RunReport {
            scenario: self.scenario,
            windows: done,
            window_ms: self.schedule.window_ms(),
            sim_seconds: self.schedule.start_ns(done) as f64 / 1e9,
            wall_seconds,
            started_unix_s: if done > 0 {
                crate::io::os::timer::unix_ns_of(anchor) as f64 / 1e9
            } else {
                0.0
            },
            slipped_seconds: pacer.slipped().as_secs_f64(),
            late_windows: pacer.lateness().0,
            max_late_ms: pacer.lateness().1.as_secs_f64() * 1e3,
            windows_per_second: done as f64 / wall_seconds.max(1e-9),
            interrupted,
            record: None,
            timeline: None,
            pairs: Vec::new(),
            network: None,
            traffic: Vec::new(),
            emulation: None,
            modems: None,
            programs: Vec::new(),
            metrics: Vec::new(),
            viewer: None,
            record_queue: None,
            acoustic_paths: None,
            air: Vec::new(),
            insecure_peers: Vec::new(),
            stages: Default::default(),
        };
        let end_ns = self.schedule.start_ns(done);
        self.participants.finish(done, end_ns, &mut report).await?;
        report.stages = self.stages.summary(done);
        self.participants.report(&mut report)?;
        Ok(report)
    }

    /// BEGIN(k) with `poses` → END(k); returns the END's serialized ChannelData.
    async fn physics_exchange(
        physics: &mut Link,
        poses: Vec<SetPose>,
        k: u32,
        timeout: Option<Duration>,
    ) -> Result<Bytes, LinkError> {
        let reply = physics
            .exchange(k, physics_begin(k, poses), timeout)
            .await?;
        let end = expect_physics(reply, physics_update::MsgType::End, k)
            .map_err(|e| physics.protocol_error(k, e))?;
        Ok(end.channel_data)
    }
}
