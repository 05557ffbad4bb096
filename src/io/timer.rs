//! Sleeping until an instant with sub-millisecond precision. tokio's timer wheel has a
//! resolution of 1 ms, so a window start or a packet release due at t would happen up to a
//! millisecond late; here the last stretch is slept by a blocking thread, whose `nanosleep`
//! is precise to tens of microseconds (less with the timer slack [`init`] sets).

use std::time::{Duration, Instant};

/// Below this much remaining time the blocking pool takes over from tokio's wheel.
const FINE: Duration = Duration::from_millis(2);

/// Sets this thread's timer slack to 1 µs (Linux default 50 µs); threads started from it
/// afterwards, tokio's workers and blocking pool included, inherit it.
pub fn init() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes a plain integer and only affects this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0);
    }
}

/// Resolves at `due` (or at once if it has passed), within tens of microseconds.
pub async fn sleep_until(due: Instant) {
    let now = Instant::now();
    if due <= now {
        return;
    }
    if due - now > FINE {
        tokio::time::sleep_until((due - FINE).into()).await;
    }
    let rest = due.saturating_duration_since(Instant::now());
    if !rest.is_zero() {
        // A failed join (runtime shutting down) just ends the sleep early.
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(rest)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn wakes_after_the_instant_and_not_a_millisecond_late() {
        init();
        let mut lateness = Vec::new();
        for i in 0..20 {
            let due = Instant::now() + Duration::from_micros(300 + 150 * i);
            sleep_until(due).await;
            let late = Instant::now().saturating_duration_since(due);
            assert!(Instant::now() >= due);
            lateness.push(late);
        }
        lateness.sort();
        // The median wake-up is far better than tokio's 1 ms wheel (generous for a loaded CI).
        assert!(lateness[10] < Duration::from_micros(700), "{lateness:?}");
    }
}
