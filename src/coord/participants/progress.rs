//! A progress line in the log, at most every so often: windows done, sim and wall time, rate.

use crate::clock::Schedule;
use crate::coord::participant::{Ended, Participant, WindowOpen, WindowView};
use std::time::{Duration, Instant};

/// Logs the run's progress at most every `every` (wall time counted from window 0's opening).
pub struct ProgressLog {
    schedule: Schedule,
    every: Duration,
    started: Option<Instant>,
    last: Instant,
}

impl ProgressLog {
    pub fn new(schedule: Schedule, every: Duration) -> Self {
        ProgressLog {
            schedule,
            every,
            started: None,
            last: Instant::now(),
        }
    }
}

impl Participant for ProgressLog {
    fn open(&mut self, w: &WindowOpen<'_>) -> anyhow::Result<()> {
        if self.started.is_none() {
            self.started = Some(w.opened);
            self.last = w.opened;
        }
        Ok(())
    }

    fn window(&mut self, view: &WindowView<'_>, _ended: &mut Ended) -> anyhow::Result<()> {
        let Some(started) = self.started else {
            return Ok(());
        };
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            let done = view.open.window + 1;
            let wall = started.elapsed().as_secs_f64();
            tracing::info!(
                "window {done}/{n}  sim {:.2}/{:.2} s  wall {wall:.1} s  {:.0} windows/s",
                self.schedule.start_ns(done) as f64 / 1e9,
                self.schedule.duration_ns() as f64 / 1e9,
                done as f64 / wall,
                n = self.schedule.windows,
            );
        }
        Ok(())
    }
}
