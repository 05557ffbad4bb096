//! The live network (`network.capture: tun`) as a participant: the packet copies that ended
//! in each window, and at the end its shutdown at the end of the last window, the ledger and
//! the copies it dropped.

use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowView};
use crate::io::live::LiveNetwork;
use crate::output::stages::Stage;
use std::sync::Arc;

/// Hands on the [`LiveNetwork`]'s copy ends and shuts it down at the end.
pub struct LiveParticipant {
    live: Arc<LiveNetwork>,
    /// Whether the copy ends are handed on every window (to the recorder).
    collect: bool,
}

impl LiveParticipant {
    /// `collect`: hand on the copies that ended in each window (in [`Ended::copy_ends`]).
    pub fn new(live: Arc<LiveNetwork>, collect: bool) -> Self {
        LiveParticipant { live, collect }
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
        let summary = self.live.shutdown_at(end.end_ns);
        if self.collect {
            self.live.drain_copy_ends(&mut end.ended.copy_ends);
        }
        end.report.network = Some(summary);
        Box::pin(std::future::ready(Ok(())))
    }
}
