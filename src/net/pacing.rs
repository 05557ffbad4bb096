//! Sim time ↔ wall time on the network side. The window k that is open started at the wall
//! instant it was opened at: the instant the pacing coordinator opened it when that coordinator
//! runs in the same process (its due time on the paced schedule), else when its BEGIN arrived.
//! Inside it, sim time runs at `real_time_factor` × wall time. Pure: the wall instant is an
//! argument.

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

    pub fn open(&mut self, k: u32, now: Instant) {
        self.open = Some((k, k as u64 * self.window_ns, now));
    }

    /// The sim time at wall instant `now`, clamped inside the open window (0 before window 0).
    pub fn sim_at(&self, now: Instant) -> SimNanos {
        let Some((_, start, wall)) = self.open else { return 0 };
        let elapsed = now.saturating_duration_since(wall).as_secs_f64() * self.real_time_factor;
        let offset = (elapsed * 1e9).min((self.window_ns - 1) as f64) as u64;
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
    fn maps_both_ways_and_clamps_into_the_window() {
        let mut p = Pacing::new(10_000_000, 2.0);
        let t0 = Instant::now();
        assert_eq!(p.sim_at(t0), 0);
        p.open(3, t0);
        assert_eq!(p.sim_at(t0 + Duration::from_millis(2)), 34_000_000);
        assert_eq!(p.sim_at(t0 + Duration::from_secs(1)), 39_999_999);
        assert_eq!(p.wall_at(3, t0, 34_000_000), t0 + Duration::from_millis(2));
        assert_eq!(p.wall_at(3, t0, 1), t0);
    }
}
