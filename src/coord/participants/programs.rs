//! The scenario's programs as a participant: started as the windows open, stopped at the end
//! (before the live network removes their namespaces).

use crate::coord::participant::{Finishing, Participant, RunEnd, WindowOpen};
use crate::io::programs::Programs;

/// Starts and stops the scenario's [`Programs`].
pub struct ProgramParticipant(Programs);

impl ProgramParticipant {
    pub fn new(programs: Programs) -> Self {
        ProgramParticipant(programs)
    }
}

impl Participant for ProgramParticipant {
    fn open(&mut self, w: &WindowOpen<'_>) -> anyhow::Result<()> {
        self.0.tick(w.start_ns);
        Ok(())
    }

    /// The report's `programs`.
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        Box::pin(async move {
            end.report.programs = self.0.stop_all(end.end_ns).await;
            Ok(())
        })
    }
}
