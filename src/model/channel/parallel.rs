//! The share of pairs across the cores: every pair `i < j` of a set of points, each with its
//! own slot, on scoped threads, in an order that never depends on timing.

use std::sync::OnceLock;

fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .max(1)
    })
}

/// Pairs per unit of work handed to a thread by [`Tracer::trace_all`](super::Tracer::trace_all).
const BATCH: usize = 32;

/// Fewest pairs worth a thread of their own: starting one costs tens of µs, about what 100
/// pairs cost to trace, and on a machine busy with live traffic the second core is rarely
/// free anyway. A share of a sample spread over its interval (a few hundred pairs) is traced
/// on the calling thread.
const PER_THREAD: usize = 512;

/// The pairs `i < j` of `n` points in the order (0,1), (0,2), …, (0,n-1), (1,2), ….
pub(super) fn pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|i| ((i + 1)..n).map(move |j| (i, j)))
        .collect()
}

/// `f(pair, slot)` for every pair with its own slot (`slots[k]` goes with `pairs[k]`).
///
/// The pairs are cut into batches of 32 consecutive pairs, and each available core (scoped
/// threads) has an equal contiguous share of the batches, which it takes in order; a core done
/// with its share takes batches left in the others'. So a core meets mostly the same pairs
/// window after window (their memory stays in its cache; a shared queue measured 4–5 % slower
/// at W = 1 ms), and a core that drew cheap pairs still helps with the rest. Each call touches
/// only its pair's own slot, so the outcome never depends on timing.
pub(super) fn on_all_cores<S: Send>(
    pairs: &[(usize, usize)],
    slots: &mut [S],
    f: impl Fn(&(usize, usize), &mut S) + Sync,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let workers = threads().min(pairs.len() / PER_THREAD).max(1);
    if workers == 1 {
        pairs
            .iter()
            .zip(slots.iter_mut())
            .for_each(|(p, s)| f(p, s));
        return;
    }
    // A batch's pairs and slots, until a worker takes them.
    type Batch<'p, S> = Mutex<Option<(&'p [(usize, usize)], &'p mut [S])>>;
    let batches: Vec<Batch<S>> = pairs
        .chunks(BATCH)
        .zip(slots.chunks_mut(BATCH))
        .map(|b| Mutex::new(Some(b)))
        .collect();
    // Worker `w`'s share is batches `bounds[w]..bounds[w + 1]`; `next[w]` is its next one.
    let n = batches.len();
    let bounds: Vec<usize> = (0..=workers).map(|w| w * n / workers).collect();
    let next: Vec<AtomicUsize> = bounds[..workers]
        .iter()
        .map(|&b| AtomicUsize::new(b))
        .collect();
    let work = |me: usize| {
        for w in (me..workers).chain(0..me) {
            loop {
                let b = next[w].fetch_add(1, Ordering::Relaxed);
                if b >= bounds[w + 1] {
                    break;
                }
                let taken = batches[b].lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some((p, s)) = taken {
                    p.iter().zip(s.iter_mut()).for_each(|(p, s)| f(p, s));
                }
            }
        }
    };
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (1..workers).map(|w| s.spawn(move || work(w))).collect();
        work(0);
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
}
