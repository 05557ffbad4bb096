//! The physics simulator's acoustic paths as a participant: at the run's end, what tracing
//! them cost (traces, their time, windows that waited, arrivals left out) goes into the report
//! (`acoustic_paths`), before the recorder writes it.

use crate::coord::participant::{Finishing, Participant, RunEnd};
use crate::sim::acoustic_paths::SharedPathStats;

/// Reports the acoustic paths' stats of a physics simulator in this process.
pub struct AcousticPathsParticipant {
    stats: SharedPathStats,
}

impl AcousticPathsParticipant {
    pub fn new(stats: SharedPathStats) -> Self {
        AcousticPathsParticipant { stats }
    }
}

impl Participant for AcousticPathsParticipant {
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        end.report.acoustic_paths = Some(*self.stats.lock().unwrap_or_else(|e| e.into_inner()));
        Box::pin(std::future::ready(Ok(())))
    }
}
