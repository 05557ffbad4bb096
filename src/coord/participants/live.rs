//! The live network (`network.capture: tun`) as a participant: the packet copies that ended
//! in each window and what the emulator added to them ([`EmulationMonitor`]), and at the end
//! the capture agents' last word (their programs' records and logs, the copies they held), its
//! shutdown at the end of the last window, the ledger, the copies it dropped and the emulation
//! error's summary.

use crate::clock::stages::{Stage, Stages};
use crate::coord::network::SharedAgents;
use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowView};
use crate::io::traffic::LiveNetwork;
use crate::net::ledger::CopyEnd;
use crate::output::emulation::EmulationMonitor;
use std::sync::Arc;

/// Hands on the [`LiveNetwork`]'s copy ends, follows their emulation error and shuts the live
/// network down at the end.
pub struct LiveParticipant {
    live: Arc<LiveNetwork>,
    /// Whether the copy ends are handed on every window (to the recorder).
    collect: bool,
    agents: Option<SharedAgents>,
    stages: Arc<Stages>,
    monitor: Option<EmulationMonitor>,
    /// The copies that ended in a window when they are not handed on.
    scratch: Vec<CopyEnd>,
}

impl LiveParticipant {
    /// `collect`: hand on the copies that ended in each window (in [`Ended::copy_ends`]);
    /// `bound_ms`: `network.emulation_bound_ms` (its default applied).
    pub fn new(live: Arc<LiveNetwork>, collect: bool, window_ns: u64, bound_ms: f64) -> Self {
        let stages = live.stages();
        let monitor = EmulationMonitor::new(window_ns, bound_ms, live.names(), stages.snapshot());
        LiveParticipant {
            live,
            collect,
            agents: None,
            stages,
            monitor: Some(monitor),
            scratch: Vec::new(),
        }
    }

    /// Ends the run on the capture agents too.
    pub fn with_agents(mut self, agents: Option<SharedAgents>) -> Self {
        self.agents = agents;
        self
    }
}

impl Participant for LiveParticipant {
    fn stage(&self) -> Stage {
        Stage::Record
    }

    fn window(&mut self, view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        let copies = if self.collect {
            let from = ended.copy_ends.len();
            self.live.drain_copy_ends(&mut ended.copy_ends);
            &ended.copy_ends[from..]
        } else {
            self.scratch.clear();
            self.live.drain_copy_ends(&mut self.scratch);
            &self.scratch[..]
        };
        if let Some(m) = &mut self.monitor {
            ended.emulation = m.window(
                view.open.window,
                view.open.late,
                self.stages.snapshot(),
                copies,
            );
        }
        Ok(())
    }

    /// Runs after the programs' (their namespaces still exist until here); the report's
    /// `network`. What the programs sent while being stopped, after the last window, ends as
    /// `after_end`.
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        Box::pin(async move {
            let agents = match &self.agents {
                Some(a) => a.lock().await.finish(end.end_ns, &self.live).await,
                None => Ok(Vec::new()),
            };
            let summary = self.live.shutdown_at(end.end_ns);
            let from = end.ended.copy_ends.len();
            self.live.drain_copy_ends(&mut end.ended.copy_ends);
            if let Some(mut m) = self.monitor.take() {
                // The copies the shutdown ended (and the agents' last written ones).
                m.ended(&end.ended.copy_ends[from..]);
                end.report.emulation = Some(m.finish());
            }
            if !self.collect {
                end.ended.copy_ends.truncate(from);
            }
            end.report.network = Some(summary);
            end.report.traffic = self.live.traffic();
            end.report.programs.extend(agents?);
            Ok(())
        })
    }
}
