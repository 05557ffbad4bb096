//! Sleeping until an instant with sub-millisecond precision. tokio's timer wheel has a
//! resolution of 1 ms, so a window start or a packet release due at t would happen up to a
//! millisecond late; here the last stretch is slept with `nanosleep` on a thread
//! ([`sleep_until`]), precise to tens of microseconds with the timer slack [`init`] sets. The nice value
//! of a paced run's threads ([`prioritize`]) and the real-time policy of those on the window's
//! path ([`on_window_path`]), so that programs competing for the CPU do not make those
//! wake-ups late. Also the conversion of a window's opening between this process's
//! monotonic clock and the Unix time a BEGIN carries to another process ([`unix_ns_of`],
//! [`instant_of_unix_ns`]). [`Alarm`]: the same precision for a task that must not block while
//! it waits.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Below this much remaining time a thread's own sleep takes over from tokio's wheel.
const FINE: Duration = Duration::from_millis(2);

/// Sets this thread's timer slack to 1 µs (Linux default 50 µs); threads started from it
/// afterwards, tokio's workers and blocking pool included, inherit it.
pub fn init() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes a plain integer and only affects this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0);
    }
}

/// The nice value this process had before [`prioritize`] changed it.
static ORIGINAL_NICE: std::sync::OnceLock<i32> = std::sync::OnceLock::new();

/// The `SCHED_FIFO` priority of the threads on the window's path (0: none), set by
/// [`prioritize`] and taken by each of them in [`on_window_path`].
static REALTIME: AtomicI32 = AtomicI32::new(0);

/// Sets every thread of this process to nice value `nice` (threads started later inherit it
/// from the thread that starts them), and the real-time priority the threads on the window's
/// path take ([`on_window_path`]; scenario key `realtime_priority`); a line in the log if it
/// may not (not root). Idempotent.
pub fn prioritize(nice: i32, realtime: Option<u8>) {
    REALTIME.store(realtime.map_or(0, i32::from), Ordering::Relaxed);
    set_nice_logged(nice);
}

/// Puts the calling thread, one on the window's path (the coordinator's window loop, the
/// embedded physics simulator's thread, the release threads), under `SCHED_FIFO` at the run's
/// `realtime_priority`, if it has one: the vehicles' programs it wakes (each release wakes a
/// receiver) then no longer take the core from it in the middle of a window's work. Threads and
/// processes it starts afterwards do not inherit the policy (`SCHED_RESET_ON_FORK`). Without
/// root (or `CAP_SYS_NICE`, or an `RLIMIT_RTPRIO` that allows it) the thread stays as it is and
/// the log says so once.
pub fn on_window_path() {
    let priority = REALTIME.load(Ordering::Relaxed);
    if priority == 0 {
        return;
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler(0, …) changes the calling thread only; `param` outlives the
    // call.
    let rc = unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    };
    static TOLD: AtomicBool = AtomicBool::new(false);
    if rc != 0 && !TOLD.swap(true, Ordering::Relaxed) {
        tracing::info!(
            "the run's threads stay at their nice value: realtime_priority {priority} needs root \
             or CAP_SYS_NICE ({})",
            std::io::Error::last_os_error()
        );
    }
}

/// Takes the calling thread off the window's path: back under the normal policy (at its nice
/// value) if [`on_window_path`] had put it under `SCHED_FIFO`, for work after the last window
/// (the run's end, its report) that must not hold a core from everything else.
pub fn off_window_path() {
    if REALTIME.load(Ordering::Relaxed) == 0 {
        return;
    }
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in `on_window_path`; going back to SCHED_OTHER needs no privilege.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
    }
}

fn set_nice_logged(nice: i32) {
    let Some(current) = nice_of(0) else {
        return;
    };
    ORIGINAL_NICE.get_or_init(|| current);
    if current == nice {
        return;
    }
    match set_nice(nice) {
        Ok(threads) => tracing::debug!("{threads} threads at nice {nice}"),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => tracing::info!(
            "the run's threads stay at nice {current}: nice {nice} (scenario key `nice`) needs \
             root or CAP_SYS_NICE"
        ),
        Err(e) => tracing::warn!(
            "cannot set this process's threads to nice {nice} ({e}): under CPU load, windows, \
             captures and releases may be late"
        ),
    }
}

/// Nice value of threads that serve onlookers (the live viewer): the run's threads come first.
pub const BACKGROUND_NICE: i32 = 10;

/// Puts the calling thread at [`BACKGROUND_NICE`], or leaves it where it is if that is lower
/// already (no privilege needed to lower a priority).
pub fn background() {
    let nice = nice_of(0).map_or(BACKGROUND_NICE, |n| n.max(BACKGROUND_NICE));
    // SAFETY: gettid and setpriority take and return plain integers.
    let rc = unsafe {
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice)
    };
    if rc != 0 {
        tracing::debug!(
            "cannot lower this thread to nice {nice}: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// The nice value the programs a run starts get: what the process had before [`prioritize`]
/// (None: it did not change it).
fn original_nice() -> Option<i32> {
    ORIGINAL_NICE.get().copied()
}

/// Makes the child `cmd` starts run at the nice value this process had before [`prioritize`]
/// raised its threads' (if it did), as a run's programs do. Best effort: going back below the
/// run's value needs root, which a run that went above it (`nice` > the caller's) may not
/// have; the child then keeps the run's.
pub fn start_at_original_nice(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    if let Some(nice) = original_nice() {
        // SAFETY: setpriority is async-signal-safe; it runs in the child right before exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::setpriority(libc::PRIO_PROCESS, 0, nice);
                Ok(())
            });
        }
    }
}

/// Thread `tid`'s nice value (0: the calling thread).
fn nice_of(tid: libc::id_t) -> Option<i32> {
    // SAFETY: getpriority takes plain integers; -1 is a valid result, so errno tells errors.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, tid);
        (n != -1 || *libc::__errno_location() == 0).then_some(n)
    }
}

fn set_nice(nice: i32) -> std::io::Result<usize> {
    let mut set = 0;
    for entry in std::fs::read_dir("/proc/self/task")? {
        let Some(tid) = entry?
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<libc::id_t>().ok())
        else {
            continue;
        };
        // SAFETY: setpriority takes plain integers.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) } != 0 {
            let e = std::io::Error::last_os_error();
            // A thread that ended since the listing.
            if e.raw_os_error() == Some(libc::ESRCH) {
                continue;
            }
            return Err(e);
        }
        set += 1;
    }
    Ok(set)
}

/// Resolves at `due` (or at once if it has passed), within tens of microseconds. On a
/// multi-threaded runtime the last stretch is slept by the calling thread itself
/// (`block_in_place`: a worker first hands its other tasks on; the thread in `block_on`, where
/// a run's coordinator loop is, has none), so one thread wakes at `due`; a blocking-pool
/// thread waking and then waking the caller made a window open later (measured at W = 1 ms
/// under TCP load: median 62 µs and 90th percentile 288 µs late, against 41 and 68). On a
/// current-thread runtime the blocking pool sleeps it, so the runtime's other tasks go on.
pub async fn sleep_until(due: Instant) {
    let now = Instant::now();
    if due <= now {
        return;
    }
    if due - now > FINE {
        tokio::time::sleep_until((due - FINE).into()).await;
    }
    if due <= Instant::now() {
        return;
    }
    let multi_threaded = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_threaded {
        tokio::task::block_in_place(|| sleep_precisely_until(due));
    } else {
        // A failed join (runtime shutting down) just ends the sleep early.
        let _ = tokio::task::spawn_blocking(move || sleep_precisely_until(due)).await;
    }
}

/// A precise wake-up for a task that must go on serving other events while it waits: in a
/// `select!`, [`sleep_until`]'s last stretch blocks the whole task, so a message arriving then
/// waits for the sleep's end. The alarm's own thread waits (a futex with a deadline, precise
/// to tens of microseconds under [`init`]'s timer slack, on the window's path) and wakes the
/// task; it ends when the alarm is dropped.
pub struct Alarm {
    shared: Arc<AlarmShared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct AlarmShared {
    /// The instant set (`None`: disarmed), and whether the alarm is being dropped.
    due: Mutex<(Option<Instant>, bool)>,
    changed: Condvar,
    rang: tokio::sync::Notify,
}

impl Alarm {
    /// A disarmed alarm; its thread is named `name`.
    pub fn new(name: &str) -> std::io::Result<Alarm> {
        let shared = Arc::new(AlarmShared {
            due: Mutex::new((None, false)),
            changed: Condvar::new(),
            rang: tokio::sync::Notify::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                init();
                on_window_path();
                let mut g = s.due.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    g = match *g {
                        (_, true) => return,
                        (None, _) => s.changed.wait(g).unwrap_or_else(|e| e.into_inner()),
                        (Some(due), _) => match due.checked_duration_since(Instant::now()) {
                            Some(left) if !left.is_zero() => {
                                (s.changed.wait_timeout(g, left))
                                    .unwrap_or_else(|e| e.into_inner())
                                    .0
                            }
                            _ => {
                                g.0 = None;
                                s.rang.notify_one();
                                g
                            }
                        },
                    };
                }
            })?;
        Ok(Alarm {
            shared,
            thread: Some(thread),
        })
    }

    /// Arms the alarm for `due`, replacing the instant set before, or disarms it (`None`).
    pub fn set(&self, due: Option<Instant>) {
        let mut g = self.shared.due.lock().unwrap_or_else(|e| e.into_inner());
        if g.0 != due {
            g.0 = due;
            self.shared.changed.notify_one();
        }
    }

    /// Resolves when an instant set has passed; one ring per instant, kept until taken. A
    /// ring may be an earlier instant's, taken late: the caller compares the time with what it
    /// waits for.
    pub async fn rung(&self) {
        self.shared.rang.notified().await
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.shared.due.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.shared.changed.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sleeps this thread until `due`, with its timer slack set by [`init`] first (once per thread).
fn sleep_precisely_until(due: Instant) {
    thread_local! {
        static SLACK_SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !SLACK_SET.with(|s| s.replace(true)) {
        init();
    }
    std::thread::sleep(due.saturating_duration_since(Instant::now()));
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_alarm_rings_after_its_instant_and_lets_its_task_serve_meanwhile() {
        let alarm = Alarm::new("test-alarm").unwrap();
        // Armed an hour away, the task serves a message meanwhile; then the alarm is moved to
        // 200 ms from then: it rings, not before that.
        alarm.set(Some(Instant::now() + Duration::from_secs(3600)));
        let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tx.send(()).await.unwrap();
        });
        let mut due = None;
        loop {
            tokio::select! {
                Some(()) = rx.recv() => {
                    let at = Instant::now() + Duration::from_millis(200);
                    alarm.set(Some(at));
                    due = Some(at);
                }
                _ = alarm.rung() => break,
            }
        }
        let due = due.expect("the message was served while the alarm was armed");
        assert!(Instant::now() >= due);
        // Disarmed: no ring (here within 100 ms); armed for an instant past: at once.
        alarm.set(Some(Instant::now() + Duration::from_secs(3600)));
        alarm.set(None);
        let quiet = tokio::time::timeout(Duration::from_millis(100), alarm.rung()).await;
        assert!(quiet.is_err(), "no ring while disarmed");
        alarm.set(Some(Instant::now()));
        tokio::time::timeout(Duration::from_secs(10), alarm.rung())
            .await
            .expect("a ring for an instant already past");
    }

    #[test]
    fn an_opening_survives_the_round_trip_through_unix_time_never_earlier() {
        // Never early; late by what passed between the two clocks' reads, which a loaded
        // machine can stretch (the thread preempted between them): the closest of 1000 round
        // trips is within 1 ms, the farthest printed.
        let opened = Instant::now() - Duration::from_millis(3);
        let mut off = Vec::with_capacity(1000);
        for _ in 0..1000 {
            let back = instant_of_unix_ns(unix_ns_of(opened)).unwrap();
            assert!(back >= opened, "{:?} early", opened - back);
            off.push(back - opened);
        }
        let (closest, farthest) = (off.iter().min().unwrap(), off.iter().max().unwrap());
        println!("round trips late by {closest:?} to {farthest:?}");
        assert!(*closest < Duration::from_millis(1), "{closest:?}");
        let later = Instant::now() + Duration::from_millis(5);
        assert!(instant_of_unix_ns(unix_ns_of(later)).unwrap() >= later);
    }

    /// How late a plain `std::thread::sleep` of `d` wakes: how well the machine itself keeps
    /// time just now.
    fn machine_lateness(d: Duration) -> Duration {
        let due = Instant::now() + d;
        std::thread::sleep(due - Instant::now());
        Instant::now().saturating_duration_since(due)
    }

    /// Sleeps until 20 instants 300 µs to 3.2 ms ahead; asserts none woke early, and the median
    /// far better than tokio's 1 ms wheel when the machine's own sleeps keep time, each one
    /// measured beside the timer's (a loaded machine's lateness is its own, not the timer's:
    /// printed, not asserted).
    async fn wakes_on_time() {
        init();
        let (mut lateness, mut machine) = (Vec::new(), Vec::new());
        for i in 0..20 {
            let d = Duration::from_micros(300 + 150 * i);
            let due = Instant::now() + d;
            sleep_until(due).await;
            let late = Instant::now().saturating_duration_since(due);
            assert!(Instant::now() >= due);
            lateness.push(late);
            machine.push(machine_lateness(d));
        }
        lateness.sort();
        machine.sort();
        if machine[10] < Duration::from_micros(200) && machine[19] < Duration::from_millis(2) {
            assert!(lateness[10] < Duration::from_micros(700), "{lateness:?}");
        } else {
            println!(
                "not asserted, the machine's own sleeps are {:?} late (median; {:?} at most): {lateness:?}",
                machine[10], machine[19]
            );
        }
    }

    /// The thread in `block_on` of a multi-threaded runtime, as a run's coordinator loop.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn wakes_after_the_instant_and_not_a_millisecond_late() {
        wakes_on_time().await;
    }

    /// A task on the only worker: it hands the worker's other tasks on while it sleeps (a
    /// plain blocking sleep there would stop them), and they run meanwhile. Whether the thread
    /// that takes them over gets a core within one 1.5 ms sleep is the machine's load: the sleep
    /// is tried until one sees them run (a blocking sleep never would), for at most 10 s.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn on_a_worker_too_while_the_other_tasks_go_on() {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let ticks = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = {
            let ticks = ticks.clone();
            tokio::spawn(async move {
                loop {
                    ticks.fetch_add(1, Relaxed);
                    tokio::task::yield_now().await;
                }
            })
        };
        let (during, tries) = {
            let ticks = ticks.clone();
            tokio::spawn(async move {
                let give_up = Instant::now() + Duration::from_secs(10);
                let mut tries = 0;
                loop {
                    tries += 1;
                    let before = ticks.load(Relaxed);
                    // Under FINE ahead: slept on this worker thread from the start.
                    sleep_until(Instant::now() + Duration::from_micros(1500)).await;
                    let during = ticks.load(Relaxed) - before;
                    if during > 0 || Instant::now() > give_up {
                        return (during, tries);
                    }
                }
            })
            .await
            .unwrap()
        };
        // The spinning task stopped first: it is this test's own load, not the machine's.
        counter.abort();
        let _ = counter.await;
        tokio::spawn(wakes_on_time()).await.unwrap();
        assert!(
            during > 0,
            "the worker's other task did not run during any of {tries} sleeps"
        );
        println!("the other task ran {during} times during sleep {tries}");
    }

    /// A current-thread runtime, where the blocking pool sleeps the last stretch.
    #[tokio::test(flavor = "current_thread")]
    async fn on_a_current_thread_runtime_through_the_blocking_pool() {
        wakes_on_time().await;
    }
}
