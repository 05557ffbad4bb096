//! A participant that only adds to the report what a part of the run counted, at the run's
//! end and before the recorder writes it: the acoustic paths' tracing stats
//! (`acoustic_paths`), the 802.11 media's counters (`air`).

use crate::coord::participant::{Finishing, Participant, RunEnd};
use crate::output::summary::RunReport;
use crate::sim::{acoustic_paths::SharedPathStats, air::SharedAir};
use std::sync::{Mutex, MutexGuard};

/// Writes its part into the report at the run's end.
pub struct ReportPart {
    write: Box<dyn FnMut(&mut RunReport) + Send>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ReportPart {
    /// The stats of the acoustic paths a physics simulator in this process traces.
    pub fn acoustic_paths(stats: SharedPathStats) -> Self {
        ReportPart {
            write: Box::new(move |r| r.acoustic_paths = Some(*locked(&stats))),
        }
    }

    /// The 802.11 media of a network simulator in this process.
    pub fn air(counters: SharedAir) -> Self {
        ReportPart {
            write: Box::new(move |r| r.air = locked(&counters).summary()),
        }
    }

    /// The peers on other hosts the run reached in plaintext (`insecure_peers`).
    pub fn insecure_peers(peers: Vec<String>) -> Self {
        ReportPart {
            write: Box::new(move |r| r.insecure_peers = peers.clone()),
        }
    }
}

impl Participant for ReportPart {
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        (self.write)(end.report);
        Box::pin(std::future::ready(Ok(())))
    }
}
