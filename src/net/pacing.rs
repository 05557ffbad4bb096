//! Sim time ↔ wall time on the network side. The window k that is open started (in wall
//! time) when its BEGIN arrived; inside it, sim time runs at `real_time_factor` × wall time.
//! Pure: the wall instant is an argument.

use crate::sync::SimNanos;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct Pacing {
    pub window_ns: SimNanos,
    pub real_time_factor: f64,
    /// The open window, its sim start and the wall instant it opened; `None` before window 0.
    pub open: Option<(u32, SimNanos, Instant)>,
}

impl Pacing {
    pub fn new(window_ns: SimNanos, real_time_factor: f64) -> Pacing {
        Pacing { window_ns, real_time_factor, open: None }
    }

    /// Window `k` opens (its BEGIN arrived) at `now`. A window that opens less than one window
    /// late on the schedule the previous one set is taken to have opened on schedule: the delay is
    /// jitter in the delivery of its BEGIN, and anchoring at `now` would make the sim clock lag
    /// in this window and stamp captures too early (their releases, anchored at a punctual later
    /// window, would then come early). A later BEGIN is a slip of the run: the clock restarts from
    /// `now`, which only ever delays releases.
    pub fn open(&mut self, k: u32, now: Instant) {
        let scheduled = match self.open {
            Some((prev, _, wall)) if k == prev + 1 && self.real_time_factor > 0.0 => {
                Some(wall + Duration::from_secs_f64(self.window_ns as f64 / 1e9 / self.real_time_factor))
            }
            _ => None,
        };
        let wall = match scheduled {
            Some(s) if now >= s && now - s < Duration::from_secs_f64(self.window_ns as f64 / 1e9 / self.real_time_factor) => s,
            _ => now,
        };
        self.open = Some((k, k as u64 * self.window_ns, wall));
    }

    /// The sim time at wall instant `now` (0 before window 0). Past the open window's end, while
    /// the next window has not opened yet (its start is late on the wall clock), it is the next
    /// window's start: the earliest sim time the next window can give it. Clamping to the open
    /// window instead would stamp such a packet earlier than the wall clock says, and its
    /// release would come early by as much as the window was late.
    pub fn sim_at(&self, now: Instant) -> SimNanos {
        let Some((_, start, wall)) = self.open else { return 0 };
        let elapsed = now.saturating_duration_since(wall).as_secs_f64() * self.real_time_factor;
        let offset = (elapsed * 1e9).min(self.window_ns as f64) as u64;
        start + offset
    }

    /// The wall instant of sim time `t` in window `k` opened at `wall` (never before `wall`).
    pub fn wall_at(&self, k: u32, wall: Instant, t: SimNanos) -> Instant {
        let start = k as u64 * self.window_ns;
        let offset = t.saturating_sub(start).min(self.window_ns - 1);
        let rtf = if self.real_time_factor > 0.0 { self.real_time_factor } else { f64::INFINITY };
        wall + Duration::from_secs_f64(offset as f64 / 1e9 / rtf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_both_ways_and_never_past_the_next_window_start() {
        let mut p = Pacing::new(10_000_000, 2.0);
        let t0 = Instant::now();
        assert_eq!(p.sim_at(t0), 0);
        p.open(3, t0);
        assert_eq!(p.sim_at(t0 + Duration::from_millis(2)), 34_000_000);
        assert_eq!(p.sim_at(t0 + Duration::from_secs(1)), 40_000_000, "a late next window: its start");
        assert_eq!(p.wall_at(3, t0, 34_000_000), t0 + Duration::from_millis(2));
        assert_eq!(p.wall_at(3, t0, 1), t0);
    }

    #[test]
    fn a_jittered_begin_keeps_the_schedule_and_a_slip_restarts_it() {
        let mut p = Pacing::new(10_000_000, 1.0);
        let t0 = Instant::now();
        p.open(0, t0);
        // Window 1 due at t0 + 10 ms; its BEGIN arrives 3 ms late: still on schedule.
        p.open(1, t0 + Duration::from_millis(13));
        assert_eq!(p.open.unwrap().2, t0 + Duration::from_millis(10));
        assert_eq!(p.sim_at(t0 + Duration::from_millis(15)), 15_000_000);
        // Window 2 due at t0 + 20 ms arrives at t0 + 45 ms: a slip, the clock restarts there.
        p.open(2, t0 + Duration::from_millis(45));
        assert_eq!(p.open.unwrap().2, t0 + Duration::from_millis(45));
        assert_eq!(p.sim_at(t0 + Duration::from_millis(46)), 21_000_000);
        // An early BEGIN opens when it arrives.
        p.open(3, t0 + Duration::from_millis(50));
        assert_eq!(p.open.unwrap().2, t0 + Duration::from_millis(50));
    }
}
