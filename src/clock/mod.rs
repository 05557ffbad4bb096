//! Sim time, at the bottom of the layer stack: the windows of a run ([`Schedule`], built once
//! from the scenario when it is loaded), the pacer that opens windows on the wall clock
//! ([`Pacer`]) and the sim ↔ wall mapping inside the open window ([`WindowClock`]).
//!
//! Sim time is integer nanoseconds; window k covers `[k·W, (k+1)·W)`. Everything here is pure:
//! the wall instant is always an argument, never read from the system.

pub mod stages;

use std::time::{Duration, Instant};

/// Sim time in integer nanoseconds.
pub type SimNanos = u64;

/// The windows of a run: window k covers `[k·W, (k+1)·W)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub window_ns: SimNanos,
    pub windows: u32,
}

impl Schedule {
    /// W in milliseconds (rounded to whole nanoseconds) and a duration covered by whole windows.
    pub fn new(window_ms: f64, duration_s: f64) -> Schedule {
        let window_ns = ((window_ms * 1e6).round() as u64).max(1);
        let duration_ns = (duration_s * 1e9).round() as u64;
        let windows = duration_ns.div_ceil(window_ns).clamp(1, u32::MAX as u64) as u32;
        Schedule { window_ns, windows }
    }

    /// Sim time at the start of window `k`: `k·W`.
    pub fn start_ns(&self, window: u32) -> SimNanos {
        window as u64 * self.window_ns
    }

    /// The last nanosecond of window `k`: `(k+1)·W − 1`.
    pub fn last_ns(&self, window: u32) -> SimNanos {
        self.start_ns(window) + self.window_ns - 1
    }

    /// W in seconds.
    pub fn window_s(&self) -> f64 {
        self.window_ns as f64 / 1e9
    }

    /// W in milliseconds.
    pub fn window_ms(&self) -> f64 {
        self.window_ns as f64 / 1e6
    }

    /// The end of the last window.
    pub fn duration_ns(&self) -> SimNanos {
        self.start_ns(self.windows)
    }
}

/// When a window opens on the wall clock, and the instant it is anchored at (sim time inside
/// it maps to wall time from there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// On time: at this instant (wait for it), anchored there.
    At(Instant),
    /// Late: at once, anchored at this instant (its due time while the run catches up; now if
    /// it fell so far behind that the schedule moved).
    Late(Instant),
}

/// How far behind its schedule a window may open and still keep its anchor: the run catches
/// up, windows opening back to back until they are on time again. Further behind, the schedule
/// moves (the lateness counts as slip).
pub const CATCH_UP: Duration = Duration::from_millis(100);

/// Opens windows on the wall clock at a real-time factor: window k is due `k·W / rtf` after the
/// anchor (the run's start) and is anchored at its due time, so sim time stays locked to the
/// wall clock. A window that cannot open on time (the machine is busy) opens at once, still
/// anchored at its due time, and the windows after it open back to back until the run has
/// caught up: on the wall clock a capture is stamped, and a delivery released, by the one
/// mapping of sim time to wall time, so catching up never releases a packet before the delay
/// the network simulator chose (it only adds the lateness). A window more than [`CATCH_UP`]
/// late moves the anchor to now instead; that lateness is the run's slip. With
/// `real_time_factor` = 0 nothing is paced.
#[derive(Debug, Clone)]
pub struct Pacer {
    schedule: Schedule,
    real_time_factor: f64,
    anchor: Instant,
    anchor_ns: SimNanos,
    slipped: Duration,
    late_windows: u64,
    max_late: Duration,
}

impl Pacer {
    /// A pacer for a run that starts at `started`.
    pub fn new(schedule: Schedule, real_time_factor: f64, started: Instant) -> Pacer {
        Pacer {
            schedule,
            real_time_factor,
            anchor: started,
            anchor_ns: 0,
            slipped: Duration::ZERO,
            late_windows: 0,
            max_late: Duration::ZERO,
        }
    }

    /// Whether windows are paced at all (`real_time_factor` > 0).
    pub fn paced(&self) -> bool {
        self.real_time_factor > 0.0
    }

    /// When window `k` opens, asked at `now` (after window k−1 is done). `None` unpaced.
    pub fn open(&mut self, k: u32, now: Instant) -> Option<Opening> {
        if !self.paced() {
            return None;
        }
        let sim_since_anchor = self.schedule.start_ns(k) - self.anchor_ns;
        let due = self.anchor
            + Duration::from_secs_f64(sim_since_anchor as f64 / 1e9 / self.real_time_factor);
        if now <= due {
            return Some(Opening::At(due));
        }
        let late = now - due;
        self.late_windows += 1;
        self.max_late = self.max_late.max(late);
        if late <= CATCH_UP {
            return Some(Opening::Late(due));
        }
        self.slipped += late;
        self.anchor = now;
        self.anchor_ns = self.schedule.start_ns(k);
        Some(Opening::Late(now))
    }

    /// How far behind the wall clock the schedule moved in all.
    pub fn slipped(&self) -> Duration {
        self.slipped
    }

    /// How many windows opened late (caught up or not), and the latest of them.
    pub fn lateness(&self) -> (u64, Duration) {
        (self.late_windows, self.max_late)
    }
}

/// Sim time ↔ wall time inside the open window. Window k started at the wall instant the
/// physics coordinator opened it at (its due time on the paced schedule, carried in the BEGIN;
/// the BEGIN's arrival if it carries none); inside it, sim time runs at `real_time_factor` ×
/// wall time and is clamped to the window.
#[derive(Debug, Clone, Copy)]
pub struct WindowClock {
    pub schedule: Schedule,
    pub real_time_factor: f64,
    /// The open window, its sim start and the wall instant it opened; `None` before window 0.
    pub open: Option<(u32, SimNanos, Instant)>,
}

impl WindowClock {
    pub fn new(schedule: Schedule, real_time_factor: f64) -> WindowClock {
        WindowClock {
            schedule,
            real_time_factor,
            open: None,
        }
    }

    pub fn open(&mut self, k: u32, now: Instant) {
        self.open = Some((k, self.schedule.start_ns(k), now));
    }

    /// The sim time at wall instant `now`, clamped inside the open window (0 before window 0).
    pub fn sim_at(&self, now: Instant) -> SimNanos {
        self.sim_within(now, self.schedule.window_ns - 1)
    }

    /// The sim time of a packet captured at wall instant `now`: like [`Self::sim_at`], but past
    /// the open window's end it runs on into the windows after it (their BEGINs late to arrive,
    /// or the run catching up after a late window); the capture then waits for the BEGIN after
    /// its window. Clamping into the open window would stamp such a capture, and so release it,
    /// early by the lateness.
    pub fn capture_at(&self, now: Instant) -> SimNanos {
        self.sim_within(now, SimNanos::MAX)
    }

    /// The sim time at `now`, at most `limit` ns past the open window's start (0 before window 0).
    fn sim_within(&self, now: Instant, limit: SimNanos) -> SimNanos {
        let Some((_, start, wall)) = self.open else {
            return 0;
        };
        let elapsed = now.saturating_duration_since(wall).as_secs_f64() * self.real_time_factor;
        start.saturating_add((elapsed * 1e9).min(limit as f64) as u64)
    }

    /// How much later than it should a packet stamped `t` enters a BEGIN, handed to the packet
    /// engine now: the BEGIN due to describe it is the one of the window after `t`'s, the next
    /// one the engine builds is the one after the open window. Zero for a packet handed over
    /// in time, however long it waited for that BEGIN (a capture agent's report on its way, as
    /// a capture here, waits for the window's end): that wait is the lockstep's, the same for
    /// every packet, and its sim delay counts from `t`. A window for each BEGIN it missed (a
    /// reader behind, an agent's report too late for its window).
    pub fn capture_lag_ns(&self, t: SimNanos) -> u64 {
        let Some((k, _, _)) = self.open else {
            return 0;
        };
        let due = t / self.schedule.window_ns + 1;
        self.schedule
            .start_ns(k.saturating_add(1))
            .saturating_sub(due.saturating_mul(self.schedule.window_ns))
    }

    /// The wall instant of sim time `t` in window `k` opened at `wall` (never before `wall`).
    pub fn wall_at(&self, k: u32, wall: Instant, t: SimNanos) -> Instant {
        let start = self.schedule.start_ns(k);
        let offset = t.saturating_sub(start).min(self.schedule.window_ns - 1);
        let rtf = if self.real_time_factor > 0.0 {
            self.real_time_factor
        } else {
            f64::INFINITY
        };
        wall + Duration::from_secs_f64(offset as f64 / 1e9 / rtf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_windows_cover_the_duration_without_float_drift() {
        assert_eq!(
            Schedule::new(10.0, 60.0),
            Schedule {
                window_ns: 10_000_000,
                windows: 6000
            }
        );
        assert_eq!(Schedule::new(0.1, 0.3).windows, 3000);
        assert_eq!(
            Schedule::new(7.0, 0.1).windows,
            15,
            "a partial last window is run whole"
        );
        assert_eq!(Schedule::new(10.0, 60.0).start_ns(6000) as f64 / 1e9, 60.0);
        assert_eq!(Schedule::new(10.0, 60.0).last_ns(2), 29_999_999);
    }

    #[test]
    fn window_clock_maps_both_ways_and_clamps_into_the_window() {
        let mut p = WindowClock::new(
            Schedule {
                window_ns: 10_000_000,
                windows: 100,
            },
            2.0,
        );
        let t0 = Instant::now();
        assert_eq!(p.sim_at(t0), 0);
        p.open(3, t0);
        assert_eq!(p.sim_at(t0 + Duration::from_millis(2)), 34_000_000);
        assert_eq!(p.sim_at(t0 + Duration::from_secs(1)), 39_999_999);
        assert_eq!(p.wall_at(3, t0, 34_000_000), t0 + Duration::from_millis(2));
        assert_eq!(p.wall_at(3, t0, 1), t0);
        // A capture after the window's end (the next BEGIN late) is stamped in the window of
        // its wall time.
        assert_eq!(p.capture_at(t0 + Duration::from_millis(7)), 44_000_000);
        assert_eq!(p.capture_at(t0 + Duration::from_secs(1)), 2_030_000_000);
    }

    #[test]
    fn a_capture_lags_by_the_begins_it_missed_not_by_its_wait_for_the_next() {
        let mut p = WindowClock::new(
            Schedule {
                window_ns: 10_000_000,
                windows: 100,
            },
            1.0,
        );
        assert_eq!(p.capture_lag_ns(5), 0, "before window 0");
        p.open(3, Instant::now());
        // Window 3 open: the next BEGIN is window 4's, describing what was stamped in 3.
        for t in [30_000_000, 39_999_999] {
            assert_eq!(p.capture_lag_ns(t), 0, "{t}");
        }
        // Stamped in window 2 (an agent's report, or a read, after BEGIN 3 went): one window.
        assert_eq!(p.capture_lag_ns(25_000_000), 10_000_000);
        assert_eq!(p.capture_lag_ns(5_000_000), 30_000_000);
        // Stamped past the open window (its BEGIN late): not late.
        assert_eq!(p.capture_lag_ns(45_000_000), 0);
    }

    #[test]
    fn pacer_opens_on_time_catches_up_and_moves_the_schedule_only_when_far_behind() {
        let t0 = Instant::now();
        let s = Schedule {
            window_ns: 10_000_000,
            windows: 100,
        };
        assert_eq!(Pacer::new(s, 0.0, t0).open(1, t0), None, "unpaced");
        let mut p = Pacer::new(s, 2.0, t0);
        assert_eq!(
            p.open(1, t0),
            Some(Opening::At(t0 + Duration::from_millis(5)))
        );
        // Window 2 is due at 10 ms; asked at 30 ms it opens at once, anchored at 10 ms.
        let late = t0 + Duration::from_millis(30);
        let ms = Duration::from_millis;
        assert_eq!(p.open(2, late), Some(Opening::Late(t0 + ms(10))));
        // Window 3 (due at 15 ms) too: the run catches up; nothing slipped.
        assert_eq!(p.open(3, late), Some(Opening::Late(t0 + ms(15))));
        assert_eq!(p.open(7, late), Some(Opening::At(t0 + ms(35))));
        assert_eq!(p.slipped(), Duration::ZERO);
        assert_eq!(p.lateness(), (2, ms(20)));
        // Beyond the catch-up bound the schedule moves with the late window.
        let far = t0 + ms(40) + CATCH_UP + ms(1);
        assert_eq!(p.open(8, far), Some(Opening::Late(far)));
        assert_eq!(p.slipped(), CATCH_UP + ms(1));
        assert_eq!(p.open(9, far), Some(Opening::At(far + ms(5))));
    }
}
