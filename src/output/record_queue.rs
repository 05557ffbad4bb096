//! The run record written on a thread of its own: the lockstep path hands each completed window
//! to a bounded queue and goes on; the [`Recorder`] on the writer thread turns it into messages,
//! encodes and compresses them, and feeds the live viewer. A window shares the physics
//! coordinator's decoded ChannelData and the network END (reference-counted, not copied).
//!
//! Windows go over in batches of [`BATCH_NS`] of sim time (every window from W = 10 ms up), so
//! the writer is woken once per batch, and the writer thread runs at the priority the caller
//! gives it (the run gives it a lower one than its own), so that waking it does not take the
//! window's thread off the CPU. The queue holds [`QUEUE_WINDOWS`] windows. When the writer falls
//! that far behind, the run waits for it (the record loses nothing); every wait is counted and
//! timed in the summary's `record_queue`, beside the most windows the queue held. An error of the
//! writer (a full disk) ends the run at the next batch it is handed.

use super::record::RecordError;
use super::schema::{EmulationWindow, MetricSample};
use super::summary::RecordQueueSummary;
use super::Recorder;
use crate::model::modem::FrameLedgerEntry;
use crate::net::ledger::CopyEnd;
use crate::wire::channel::{ChannelView, Decoded};
use crate::wire::update::NetworkView;
use std::sync::{
    atomic::{AtomicU64, AtomicUsize, Ordering},
    mpsc::{sync_channel, Receiver, SyncSender, TrySendError},
    Arc,
};
use std::thread::JoinHandle;
use std::time::Instant;

/// Windows the queue holds before the run waits for the writer (about a second at W = 1 ms).
pub const QUEUE_WINDOWS: usize = 1024;

/// Sim time one batch of windows spans (one wake-up of the writer).
pub const BATCH_NS: u64 = 10_000_000;

/// One completed window, owned, for the writer thread.
#[derive(Debug)]
pub struct QueuedWindow {
    pub window: u32,
    pub start_ns: u64,
    /// The window's ChannelData, as the coordinator checked it.
    pub channel: Arc<Decoded>,
    pub network_end: Arc<NetworkView>,
    pub copy_ends: Vec<CopyEnd>,
    pub frames: Vec<FrameLedgerEntry>,
    pub metrics: Vec<MetricSample>,
    pub emulation: Option<EmulationWindow>,
}

/// A [`Recorder`] on its writer thread, behind a bounded queue of windows.
pub struct RecordQueue {
    sender: Option<SyncSender<Vec<QueuedWindow>>>,
    /// Windows not yet handed over, and how many make a batch.
    batch: Vec<QueuedWindow>,
    per_batch: usize,
    writer: Option<JoinHandle<Result<Recorder, RecordError>>>,
    counts: Arc<Counts>,
    summary: RecordQueueSummary,
}

/// What the run and the writer thread count together.
#[derive(Default)]
struct Counts {
    /// Windows handed over and not yet written.
    queued: AtomicUsize,
    /// Batches that found the queue full.
    waits: AtomicU64,
}

impl RecordQueue {
    /// Starts the writer thread with `recorder` for windows of `window_ns`; `vehicles` is what
    /// each window's channel is checked against, `modems` names the modem frames' `from`/`to`,
    /// and `on_start` runs first on the writer thread (to set its priority).
    pub fn spawn(
        recorder: Recorder,
        vehicles: usize,
        modems: Vec<String>,
        window_ns: u64,
        on_start: fn(),
    ) -> std::io::Result<RecordQueue> {
        let per_batch = BATCH_NS.div_ceil(window_ns.max(1)).max(1) as usize;
        let batches = (QUEUE_WINDOWS / per_batch).max(1);
        Self::with_capacity(recorder, vehicles, modems, per_batch, batches, on_start)
    }

    fn with_capacity(
        recorder: Recorder,
        vehicles: usize,
        modems: Vec<String>,
        per_batch: usize,
        batches: usize,
        on_start: fn(),
    ) -> std::io::Result<RecordQueue> {
        let (sender, receiver) = sync_channel(batches);
        let counts = Arc::new(Counts::default());
        let held = counts.clone();
        let writer = std::thread::Builder::new()
            .name("record-writer".into())
            .spawn(move || {
                on_start();
                write_windows(recorder, receiver, &held.queued, vehicles, &modems)
            })?;
        Ok(RecordQueue {
            sender: Some(sender),
            batch: Vec::with_capacity(per_batch),
            per_batch,
            writer: Some(writer),
            counts,
            summary: RecordQueueSummary {
                capacity_windows: (batches * per_batch) as u64,
                ..Default::default()
            },
        })
    }

    /// Hands a window to the writer (with the batch it completes); waits while the queue is
    /// full. An error is the writer's.
    pub fn push(&mut self, window: QueuedWindow) -> Result<(), RecordError> {
        let depth = self.counts.queued.fetch_add(1, Ordering::Relaxed) + 1;
        self.summary.most_queued = self.summary.most_queued.max(depth as u64);
        self.batch.push(window);
        match self.batch.len() >= self.per_batch {
            true => self.send(),
            false => Ok(()),
        }
    }

    /// Hands the batch over.
    fn send(&mut self) -> Result<(), RecordError> {
        let Some(sender) = &self.sender else {
            return Err(self.writer_error());
        };
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(self.per_batch));
        let sent = match sender.try_send(batch) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(batch)) => {
                self.counts.waits.fetch_add(1, Ordering::Relaxed);
                let waiting = Instant::now();
                let sent = sender.send(batch).map_err(|_| ());
                self.summary.waited_s += waiting.elapsed().as_secs_f64();
                sent
            }
            Err(TrySendError::Disconnected(_)) => Err(()),
        };
        sent.map_err(|()| self.writer_error())
    }

    /// Writes what is queued and hands the recorder back, with what the queue saw.
    pub fn drain(mut self) -> Result<(Recorder, RecordQueueSummary), RecordError> {
        if !self.batch.is_empty() {
            self.send()?;
        }
        self.sender = None;
        let recorder = self.join()?;
        self.summary.waits = self.counts.waits.load(Ordering::Relaxed);
        Ok((recorder, self.summary.clone()))
    }

    fn join(&mut self) -> Result<Recorder, RecordError> {
        let writer = self.writer.take().ok_or_else(|| RecordError::Writer {
            what: "the record's writer already ended".into(),
        })?;
        writer.join().unwrap_or_else(|_| {
            Err(RecordError::Writer {
                what: "the record's writer thread panicked".into(),
            })
        })
    }

    /// The writer stopped: why (its error), once.
    fn writer_error(&mut self) -> RecordError {
        self.sender = None;
        match self.join() {
            Err(e) => e,
            Ok(_) => RecordError::Writer {
                what: "the record's writer ended before the run".into(),
            },
        }
    }
}

/// The writer thread: every window into the record, in order, until the queue closes.
fn write_windows(
    mut recorder: Recorder,
    receiver: Receiver<Vec<QueuedWindow>>,
    queued: &AtomicUsize,
    vehicles: usize,
    modems: &[String],
) -> Result<Recorder, RecordError> {
    for w in receiver.into_iter().flatten() {
        let channel =
            ChannelView::check(&w.channel.channel, vehicles).map_err(|e| RecordError::Writer {
                what: format!("window {}: channel_data: {e}", w.window),
            })?;
        recorder.window(w.window, w.start_ns, &channel, &w.network_end)?;
        recorder.packets(&w.copy_ends)?;
        if !w.frames.is_empty() {
            recorder.modem_frames(&w.frames, modems)?;
        }
        if !w.metrics.is_empty() {
            recorder.metrics(&w.metrics)?;
        }
        if let Some(e) = &w.emulation {
            recorder.emulation(e)?;
        }
        queued.fetch_sub(1, Ordering::Relaxed);
    }
    Ok(recorder)
}

impl Drop for RecordQueue {
    /// A run that ends on an error lets the writer finish what it has (its file stays readable
    /// up to there, as a record cut short).
    fn drop(&mut self) {
        self.sender = None;
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record::{RecordTap, RECORD_FILE};
    use crate::output::record_policy::tests::{channel, end, run, W};
    use crate::output::RecorderOptions;
    use crate::wire::channel::Channel;
    use std::sync::{Condvar, Mutex};

    fn window(k: u32, shared: &mut Option<Arc<Decoded>>) -> QueuedWindow {
        // A new channel every 5 windows, shared by the windows between (as the coordinator's).
        if k % 5 == 0 || shared.is_none() {
            *shared = Some(Arc::new(Decoded {
                bytes: Default::default(),
                channel: Channel::from(&channel(k, (k / 5) % 2 == 1)),
            }));
        }
        QueuedWindow {
            window: k,
            start_ns: k as u64 * W,
            channel: shared.clone().unwrap(),
            network_end: Arc::new(end(vec![])),
            copy_ends: Vec::new(),
            frames: Vec::new(),
            metrics: Vec::new(),
            emulation: (k % 7 == 0).then(|| EmulationWindow {
                t_s: k as f64 * 0.01,
                ..Default::default()
            }),
        }
    }

    fn recorder(dir: &std::path::Path, tap: Option<Arc<dyn RecordTap>>) -> Recorder {
        let options = RecorderOptions {
            scene: true,
            tap,
            ..Default::default()
        };
        Recorder::create(dir, run(0.05, 0.1), options).unwrap()
    }

    /// The record written through the queue, in batches, is the record written on the caller's
    /// thread, byte for byte.
    #[test]
    fn the_queued_record_is_the_direct_one_byte_for_byte() {
        let (direct, queued) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut r = recorder(direct.path(), None);
        let mut shared = None;
        for k in 0..61 {
            let w = window(k, &mut shared);
            let c = ChannelView::check(&w.channel.channel, 3).unwrap();
            r.window(k, w.start_ns, &c, &w.network_end).unwrap();
            if let Some(e) = &w.emulation {
                r.emulation(e).unwrap();
            }
        }
        r.finish(&serde_json::json!({"windows": 61})).unwrap();

        let mut q =
            RecordQueue::with_capacity(recorder(queued.path(), None), 3, vec![], 3, 4, || {})
                .unwrap();
        let mut shared = None;
        for k in 0..61 {
            q.push(window(k, &mut shared)).unwrap();
        }
        let (r, seen) = q.drain().unwrap();
        r.finish(&serde_json::json!({"windows": 61})).unwrap();
        // Batches of 3 windows (the last one short), 4 batches queued at most.
        assert_eq!(seen.capacity_windows, 12);
        assert!(seen.most_queued >= 1 && seen.most_queued <= 61, "{seen:?}");
        let bytes = |d: &tempfile::TempDir| std::fs::read(d.path().join(RECORD_FILE)).unwrap();
        assert!(bytes(&direct).len() > 1000);
        assert_eq!(bytes(&direct), bytes(&queued));
    }

    /// A tap that, once armed, holds the writer on its next message until opened.
    #[derive(Default)]
    struct Gate {
        armed: std::sync::atomic::AtomicBool,
        open: Mutex<bool>,
        opened: Condvar,
    }

    impl RecordTap for Gate {
        fn channel(&self, _: u16, _: &str, _: &str, _: &[u8]) {}
        fn message(&self, _: u16, _: u64, _: &[u8]) {
            if !self.armed.load(Ordering::Relaxed) {
                return;
            }
            let mut open = self.open.lock().unwrap();
            while !*open {
                open = self.opened.wait(open).unwrap();
            }
        }
    }

    /// A writer held back fills the queue: the run waits (counted, timed) and nothing is lost.
    #[test]
    fn a_full_queue_makes_the_run_wait_and_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let gate = Arc::new(Gate::default());
        let r = {
            let options = RecorderOptions {
                tap: Some(gate.clone()),
                ..Default::default()
            };
            let mut run = run(0.05, 0.1);
            run.vehicles.truncate(3);
            Recorder::create(dir.path(), run, options).unwrap()
        };
        gate.armed.store(true, Ordering::Relaxed);
        let mut q = RecordQueue::with_capacity(r, 3, vec![], 1, 4, || {}).unwrap();
        // Opened once the run found the queue full (the writer holds window 0 meanwhile).
        let opener = {
            let (gate, counts) = (gate.clone(), q.counts.clone());
            std::thread::spawn(move || {
                while counts.waits.load(Ordering::Relaxed) == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                *gate.open.lock().unwrap() = true;
                gate.opened.notify_all();
            })
        };
        let mut shared = None;
        for k in 0..20 {
            q.push(window(k, &mut shared)).unwrap();
        }
        opener.join().unwrap();
        let (r, seen) = q.drain().unwrap();
        assert!(seen.waits >= 1, "{seen:?}");
        assert!(seen.waited_s > 0.0, "{seen:?}");
        // 4 in the queue and the one waiting (and window 0 at the writer, if it had it).
        assert!(seen.most_queued >= 5, "{seen:?}");
        let files = r.finish(&serde_json::json!({})).unwrap();
        let record = crate::output::record::Record::read(files.record.parent().unwrap()).unwrap();
        // Windows 0, 7 and 14 had an emulation message: none lost while the run waited.
        assert_eq!(record.emulation.len(), 3);
    }

    /// The writer's error reaches the run at the next window it is handed, named.
    #[test]
    fn the_writer_s_error_ends_the_run_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        // A writer that expects 2 vehicles gets a window with 3.
        let mut q =
            RecordQueue::with_capacity(recorder(dir.path(), None), 2, vec![], 1, 4, || {}).unwrap();
        let mut shared = None;
        let mut error = None;
        for k in 0..50 {
            if let Err(e) = q.push(window(k, &mut shared)) {
                error = Some(e);
                break;
            }
        }
        let error = match error {
            Some(e) => e,
            None => q.drain().err().expect("the writer failed"),
        };
        assert!(
            error.to_string().starts_with("window 0: channel_data:"),
            "{error}"
        );
    }
}
