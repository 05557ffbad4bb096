//! Sleeping until an instant with sub-millisecond precision. tokio's timer wheel has a
//! resolution of 1 ms, so a window start or a packet release due at t would happen up to a
//! millisecond late; here the last stretch is slept by a blocking thread, whose `nanosleep`
//! is precise to tens of microseconds (less with the timer slack [`init`] sets). Also the
//! conversion of a window's opening between this process's monotonic clock and the Unix time
//! a BEGIN carries to another process ([`unix_ns_of`], [`instant_of_unix_ns`]).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// The Unix time (ns) of monotonic instant `at`, rounded late: the monotonic clock is read
/// before the system clock, so the pair's reading gap makes the result later, never earlier.
pub fn unix_ns_of(at: Instant) -> u64 {
    let mono = Instant::now();
    let sys = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let unix = if at <= mono {
        sys.saturating_sub(mono - at)
    } else {
        sys + (at - mono)
    };
    unix.as_nanos().min(u64::MAX as u128) as u64
}

/// The monotonic instant of Unix time `unix_ns`, rounded late (the system clock is read before
/// the monotonic one). `None` if it lies before this process's clock can express it.
pub fn instant_of_unix_ns(unix_ns: u64) -> Option<Instant> {
    let sys = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mono = Instant::now();
    let at = Duration::from_nanos(unix_ns);
    if at <= sys {
        mono.checked_sub(sys - at)
    } else {
        mono.checked_add(at - sys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_survives_the_round_trip_through_unix_time_never_earlier() {
        let opened = Instant::now() - Duration::from_millis(3);
        for _ in 0..1000 {
            let back = instant_of_unix_ns(unix_ns_of(opened)).unwrap();
            assert!(back >= opened, "{:?} early", opened - back);
            assert!(
                back - opened < Duration::from_millis(1),
                "{:?}",
                back - opened
            );
        }
        let later = Instant::now() + Duration::from_millis(5);
        assert!(instant_of_unix_ns(unix_ns_of(later)).unwrap() >= later);
    }

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
