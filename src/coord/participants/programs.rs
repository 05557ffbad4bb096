//! The scenario's programs as a participant: those due at the start started before window 0
//! opens and given up to [`SETTLE_LIMIT`] to settle (dozens of starts inside it would make the
//! first windows late), the others as their windows open; their metrics files read every
//! [`METRICS_INTERVAL_NS`] of sim time and handed on; stopped at the end (before the live
//! network removes their namespaces).

use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowOpen, WindowView};
use crate::io::programs::{Programs, SETTLE_LIMIT};

/// How often (sim ns) the programs' metrics files are read.
pub const METRICS_INTERVAL_NS: u64 = 50_000_000;

/// Starts and stops the scenario's [`Programs`] and hands on what they report.
pub struct ProgramParticipant {
    programs: Programs,
    /// The first window start at which the metrics files are read again.
    next_read_ns: u64,
}

impl ProgramParticipant {
    pub fn new(programs: Programs) -> Self {
        ProgramParticipant {
            programs,
            next_read_ns: 0,
        }
    }
}

impl Participant for ProgramParticipant {
    fn prepare(&mut self) -> anyhow::Result<()> {
        self.programs.tick(0);
        match self.programs.settle(SETTLE_LIMIT) {
            (waited, true) => {
                tracing::debug!("the programs settled in {} ms", waited.as_millis())
            }
            (waited, false) => tracing::warn!(
                "the programs were still busy {} s after their start: window 0 opens anyway, \
                 and its first windows may be late",
                waited.as_secs()
            ),
        }
        Ok(())
    }

    fn open(&mut self, w: &WindowOpen<'_>) -> anyhow::Result<()> {
        self.programs.tick(w.start_ns);
        Ok(())
    }

    /// Every [`METRICS_INTERVAL_NS`]: the values the programs reported (in [`Ended::metrics`]).
    fn window(&mut self, view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        let now = view.open.start_ns;
        if now >= self.next_read_ns {
            self.programs.read_metrics(now, &mut ended.metrics);
            self.next_read_ns = now.saturating_add(METRICS_INTERVAL_NS);
        }
        Ok(())
    }

    /// The report's `programs` and `metrics`; the last values in [`Ended::metrics`].
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        Box::pin(async move {
            end.report.programs = self.programs.stop_all(end.end_ns).await;
            end.report.metrics = self
                .programs
                .finish_metrics(end.end_ns, &mut end.ended.metrics);
            Ok(())
        })
    }
}
