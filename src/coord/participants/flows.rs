//! The generated traffic (`traffic.flows`) as a participant: the packet copies that ended in
//! each window, for the record, and at the end the ledger (`network`) and every flow's
//! summary (`traffic`) in the report.

use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowView};
use crate::net::ledger::CopyEnd;
use crate::sim::flows::{lock, SharedFlows};

/// Hands on the generated traffic's ([`crate::sim::flows::FlowNetwork`]) copy ends and ends
/// it with the run.
pub struct FlowParticipant {
    flows: SharedFlows,
    /// Whether the copy ends are handed on every window (to the recorder).
    collect: bool,
    scratch: Vec<CopyEnd>,
}

impl FlowParticipant {
    pub fn new(flows: SharedFlows, collect: bool) -> Self {
        FlowParticipant {
            flows,
            collect,
            scratch: Vec::new(),
        }
    }
}

impl Participant for FlowParticipant {
    fn window(&mut self, _view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        let into = if self.collect {
            &mut ended.copy_ends
        } else {
            self.scratch.clear();
            &mut self.scratch
        };
        lock(&self.flows).drain_copy_ends(into);
        Ok(())
    }

    /// What is in flight at the end is dropped (`shutdown`); the report's `network` and
    /// `traffic`.
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        let mut f = lock(&self.flows);
        let (ledger, flows) = f.finish(end.end_ns);
        if self.collect {
            f.drain_copy_ends(&mut end.ended.copy_ends);
        }
        end.report.network = Some(ledger);
        end.report.traffic = flows;
        Box::pin(std::future::ready(Ok(())))
    }
}
