//! The live network (`network.capture: tun`) as a participant: the packet copies that ended
//! in each window, and at the end the capture agents' last word (their programs' records and
//! logs, the copies they held), its shutdown at the end of the last window, the ledger and the
//! copies it dropped.

use crate::clock::stages::Stage;
use crate::coord::network::SharedAgents;
use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowView};
use crate::io::traffic::LiveNetwork;
use std::sync::Arc;

/// Hands on the [`LiveNetwork`]'s copy ends and shuts it down at the end.
pub struct LiveParticipant {
    live: Arc<LiveNetwork>,
    /// Whether the copy ends are handed on every window (to the recorder).
    collect: bool,
    agents: Option<SharedAgents>,
}

impl LiveParticipant {
    /// `collect`: hand on the copies that ended in each window (in [`Ended::copy_ends`]).
    pub fn new(live: Arc<LiveNetwork>, collect: bool) -> Self {
        LiveParticipant {
            live,
            collect,
            agents: None,
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

    fn window(&mut self, _view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        if self.collect {
            self.live.drain_copy_ends(&mut ended.copy_ends);
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
            if self.collect {
                self.live.drain_copy_ends(&mut end.ended.copy_ends);
            }
            end.report.network = Some(summary);
            end.report.programs.extend(agents?);
            Ok(())
        })
    }
}
