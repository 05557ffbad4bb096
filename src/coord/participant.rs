//! What takes part in a run beside the window protocol: a [`Participant`] sees every window
//! the physics coordinator opens and completes, may give poses for the next physics BEGIN, and
//! adds its part to the [`RunReport`] at the end. The recorder, the modem bridges, the programs,
//! the live copies, the NETSIM nav source, the progress line, the ROS 2 layer and the progress
//! bar are each one ([`super::participants`] holds the adapters of the `io` and `output` types).
//!
//! Participants run in the order they were added, in every phase; each sees in [`Ended`] what
//! those before it produced for the window. Adding one (a live viewer, a remote agent) is one
//! file implementing [`Participant`] and one [`super::PhysicsCoordinator::with_participant`].

use crate::clock::stages::{Stage, Stages};
use crate::model::modem::FrameLedgerEntry;
use crate::net::ledger::CopyEnd;
use crate::output::schema::{EmulationWindow, MetricSample};
use crate::output::summary::RunReport;
use crate::wire::channel::{ChannelView, Decoded};
use crate::wire::proto::SetPose;
use crate::wire::update::NetworkView;
use std::{future::Future, pin::Pin, sync::Arc, time::Instant};

/// A window as it opens: its ChannelData is checked and the network side has not yet got it.
#[derive(Debug, Clone, Copy)]
pub struct WindowOpen<'a> {
    /// The window index k.
    pub window: u32,
    /// Sim time at the window's start (k·W), ns; the channel was sampled then.
    pub start_ns: u64,
    /// W, ns.
    pub window_ns: u64,
    /// The wall instant the window opened at (its due time when paced).
    pub opened: Instant,
    /// How long after `opened` it really opened (the run behind its schedule, or the timer's
    /// wake-up; zero unpaced).
    pub late: std::time::Duration,
    /// The window's channel, checked against the vehicles.
    pub channel: ChannelView<'a>,
    /// The same channel decoded, shared: for a participant that keeps it past the window
    /// (the record's writer thread). Check it with [`ChannelView::check`] where it is read.
    pub decoded: &'a Arc<Decoded>,
}

/// One completed window as the physics coordinator saw it, after the network side's END for
/// it arrived.
#[derive(Debug, Clone, Copy)]
pub struct WindowView<'a> {
    /// The window as it opened: its index, times and the channel the network side used.
    pub open: WindowOpen<'a>,
    /// The network side's END for this window: deliveries (and, from simulators that report
    /// them, drops) during [kW, (k+1)W).
    pub network_end: &'a Arc<NetworkView>,
}

/// What participants produced for a window (or, at the end, after the last one), for the ones
/// after them: emptied once every participant has seen it, its memory kept.
#[derive(Debug, Default)]
pub struct Ended {
    /// Captured packet copies that ended (delivered or dropped), in the order they ended.
    pub copy_ends: Vec<CopyEnd>,
    /// Modem frame copies that were decided.
    pub frames: Vec<FrameLedgerEntry>,
    /// Values the programs reported in their metrics files.
    pub metrics: Vec<MetricSample>,
    /// The live traffic's emulation error in the window, when anything ended in it or it
    /// opened late.
    pub emulation: Option<EmulationWindow>,
}

impl Ended {
    fn clear(&mut self) {
        self.copy_ends.clear();
        self.frames.clear();
        self.metrics.clear();
        self.emulation = None;
    }
}

/// The run as it ends, for [`Participant::finish`].
#[derive(Debug)]
pub struct RunEnd<'a> {
    /// The windows completed.
    pub windows: u32,
    /// Sim time at the end: the start of the first window not completed, ns.
    pub end_ns: u64,
    /// The report so far: the coordinator's figures and what earlier participants added.
    pub report: &'a mut RunReport,
    /// What earlier participants produced after the last window.
    pub ended: &'a mut Ended,
}

/// The future of [`Participant::finish`].
pub type Finishing<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;

/// Something that takes part in a run window by window. Every method has a default that does
/// nothing; an error ends the run with it.
pub trait Participant: Send {
    /// The stage its window work counts to in the report's `stages`.
    fn stage(&self) -> Stage {
        Stage::Observers
    }

    /// Before window 0 opens and before the run's wall clock starts: work that would stall the
    /// first windows if it were done inside one (starting the programs due at the start). The
    /// paced schedule is anchored after every participant prepared.
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Window k opens, before the network side gets its ChannelData.
    fn open(&mut self, _window: &WindowOpen<'_>) -> anyhow::Result<()> {
        Ok(())
    }

    /// Window k completed. `ended` holds what the participants before this one produced for
    /// it; add to it what this one produces.
    fn window(&mut self, _view: &WindowView<'_>, _ended: &mut Ended) -> anyhow::Result<()> {
        Ok(())
    }

    /// Poses to impose in the next physics BEGIN (appended to `into`).
    fn poses(&mut self, _into: &mut Vec<SetPose>) {}

    /// The windows are over (the run finished or was interrupted), before anything is
    /// finished: let go of what only watched the windows.
    fn stop(&mut self) {}

    /// Ends its part of the run and adds it to the report (in the order of addition).
    fn finish<'a>(&'a mut self, _end: RunEnd<'a>) -> Finishing<'a> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// The report is complete (every participant finished).
    fn report(&mut self, _report: &mut RunReport) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The participants of a run, in order, and the buffers they share.
#[derive(Default)]
pub(super) struct Participants {
    list: Vec<Box<dyn Participant>>,
    ended: Ended,
}

impl Participants {
    pub(super) fn push(&mut self, p: Box<dyn Participant>) {
        self.list.push(p);
    }

    pub(super) fn poses(&mut self) -> Vec<SetPose> {
        let mut poses = Vec::new();
        for p in &mut self.list {
            p.poses(&mut poses);
        }
        poses
    }

    pub(super) fn prepare(&mut self) -> anyhow::Result<()> {
        for p in &mut self.list {
            p.prepare()?;
        }
        Ok(())
    }

    pub(super) fn open(&mut self, window: &WindowOpen<'_>) -> anyhow::Result<()> {
        for p in &mut self.list {
            p.open(window)?;
        }
        Ok(())
    }

    /// Hands `view` to every participant, adding each one's time to its stage.
    pub(super) fn window(&mut self, view: &WindowView<'_>, stages: &Stages) -> anyhow::Result<()> {
        if self.list.is_empty() {
            return Ok(());
        }
        let mut mark = Instant::now();
        for p in &mut self.list {
            p.window(view, &mut self.ended)?;
            let now = Instant::now();
            stages.add(p.stage(), now - mark);
            mark = now;
        }
        self.ended.clear();
        Ok(())
    }

    pub(super) fn stop(&mut self) {
        for p in &mut self.list {
            p.stop();
        }
    }

    /// Finishes every participant, in order.
    pub(super) async fn finish(
        &mut self,
        windows: u32,
        end_ns: u64,
        report: &mut RunReport,
    ) -> anyhow::Result<()> {
        for p in &mut self.list {
            let end = RunEnd {
                windows,
                end_ns,
                report: &mut *report,
                ended: &mut self.ended,
            };
            p.finish(end).await?;
        }
        Ok(())
    }

    /// Hands every participant the complete report.
    pub(super) fn report(&mut self, report: &mut RunReport) -> anyhow::Result<()> {
        for p in &mut self.list {
            p.report(report)?;
        }
        Ok(())
    }
}
