//! The network coordinator's live side: the vehicles' namespaces (created, or attached to:
//! `vehicles[].attach`) and TUN interfaces, a reader task per vehicle feeding the [`Engine`]
//! (without `network.offload`, each burst split into its wire packets), and a release thread
//! of its own writing each delivery into the receiver's TUN at the wall time of the sim time
//! the simulator chose (through the window clock; packets of a flow due together coalesced,
//! [`tun::Writer`]), plus the pcap files.
//! The release thread sleeps on a condition variable until the next delivery is due (precise
//! to microseconds with the timer slack [`super::timer::init`] sets), so thousands of releases
//! a second each cost a futex wake, not a hop through tokio's blocking pool. Everything is
//! shared behind one mutex; critical sections are short. Each vehicle's pcap has a lock of its
//! own, held by the release thread from before a TUN write until the packets written are
//! recorded, so that a reply the vehicle sends at once is never recorded before what it answers.

use super::netns::{Namespaces, VehicleNs};
use super::tun;
use crate::clock::{SimNanos, WindowClock};
use crate::config::{Capture, LoadedScenario};
use crate::model::fate::DropReason;
use crate::net::{
    addr::AddressBook,
    engine::{Delivery, Engine, EngineConfig, Frame},
    ledger::{CopyEnd, CopyEnds, Ledger, LedgerSummary},
};
use crate::output::stages::{Stage, Stages};
use crate::wire::pcap::PcapWriter;
use crate::wire::proto::NetworkUpdate;
use crate::wire::update::NetworkView;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;
use tokio::task::JoinHandle;
use tun_rs::AsyncDevice;

struct Scheduled {
    due: Instant,
    seq: u64,
    delivery: Delivery,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

struct State {
    engine: Engine,
    clock: WindowClock,
    releases: BinaryHeap<Reverse<Scheduled>>,
    release_limit: usize,
    seq: u64,
    closed: bool,
}

/// One vehicle's pcap file (`None` without `network.pcap`, or after a write failed).
struct Pcap(Option<PcapWriter<BufWriter<File>>>);

impl Pcap {
    fn record(&mut self, node: usize, t_ns: u64, packet: &[u8]) {
        if let Some(w) = &mut self.0 {
            if let Err(e) = w.write(t_ns, packet) {
                tracing::warn!("pcap of vehicle {node} stopped: {e}");
                self.0 = None;
            }
        }
    }
}

struct Shared {
    state: Mutex<State>,
    /// Per vehicle; never held together with `state`.
    pcaps: Vec<Mutex<Pcap>>,
    /// Signalled when a delivery is scheduled or the live side closes (the release thread).
    wake: Condvar,
    stages: Arc<Stages>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pcap(&self, node: usize) -> Option<MutexGuard<'_, Pcap>> {
        self.pcaps
            .get(node)
            .map(|p| p.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// A vehicle network in namespaces, captured through TUN interfaces.
pub struct LiveNetwork {
    shared: Arc<Shared>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    release: Mutex<Option<std::thread::JoinHandle<()>>>,
    devices: Mutex<Vec<Arc<AsyncDevice>>>,
    namespaces: Mutex<Option<Namespaces>>,
    /// The namespaces attached to (`vehicles[].attach`) and the index of the TUN in each.
    attached: Mutex<Vec<(VehicleNs, u64)>>,
    summary: Mutex<Option<LedgerSummary>>,
    pub offload: bool,
}

impl LiveNetwork {
    /// For a scenario with `network.capture: tun`: `None` otherwise. Needs root and a tokio runtime.
    pub fn for_scenario(
        loaded: &LoadedScenario,
        out_dir: Option<&Path>,
    ) -> anyhow::Result<Option<Arc<LiveNetwork>>> {
        let s = &loaded.scenario;
        if s.network.capture != Capture::Tun {
            return Ok(None);
        }
        // Always paced (validated); in a network coordinator of its own, this is where it starts.
        super::timer::prioritize(s.nice);
        let schedule = loaded.schedule();
        let book = AddressBook::new(&s.vehicles);
        let n = book.len();
        let cfg = EngineConfig {
            schedule,
            queue_limit: s.network.queue_limit,
            max_hold_windows: s.network.max_hold_windows,
            crc: s.network.crc,
            seed: s.seed,
        };
        let own: Vec<&str> = s
            .vehicles
            .iter()
            .filter(|v| v.attach.is_none())
            .map(|v| v.name.as_str())
            .collect();
        let mut namespaces = Namespaces::create(&own)?;
        for v in &s.vehicles {
            if let Some(a) = &v.attach {
                namespaces.attach(&v.name, a)?;
            }
        }
        let mut devices = Vec::new();
        let mut attached = Vec::new();
        for (v, addrs) in s.vehicles.iter().zip(&book.addresses) {
            let ns = namespaces.vehicle(&v.name)?;
            devices.push(Arc::new(tun::open(&ns, addrs)?));
            if v.attach.is_some() {
                if let Some(index) = tun::index_in(&ns) {
                    attached.push((ns, index));
                }
            }
        }
        let mut pcaps = Vec::new();
        for name in &book.names {
            pcaps.push(Mutex::new(Pcap(match (s.network.pcap, out_dir) {
                (true, Some(dir)) => {
                    std::fs::create_dir_all(dir)?;
                    let f = File::create(dir.join(format!("{name}.pcap")))?;
                    Some(PcapWriter::with_snaplen(
                        BufWriter::with_capacity(1 << 16, f),
                        s.network.pcap_snaplen,
                    )?)
                }
                _ => None,
            })));
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                engine: Engine::new(book, cfg),
                clock: WindowClock::new(schedule, s.real_time_factor),
                releases: BinaryHeap::new(),
                release_limit: s.network.queue_limit.saturating_mul(n.max(1)),
                seq: 0,
                closed: false,
            }),
            pcaps,
            wake: Condvar::new(),
            stages: Arc::default(),
        });
        let offload = s.network.offload;
        let mut tasks = Vec::new();
        let pool = Arc::new(tun::BurstPool::default());
        for (node, dev) in devices.iter().enumerate() {
            tasks.push(tokio::spawn(read_loop(
                shared.clone(),
                dev.clone(),
                pool.clone(),
                node,
                !offload,
            )));
        }
        let release = {
            let (shared, devices) = (shared.clone(), devices.clone());
            std::thread::Builder::new()
                .name("release".into())
                .spawn(move || release_loop(&shared, &devices))?
        };
        tracing::info!(
            vehicles = n,
            attached = s.vehicles.iter().filter(|v| v.attach.is_some()).count(),
            offload,
            "live capture: one namespace and TUN per vehicle (ip netns exec ncs-<vehicle> ..., or the container or namespace a vehicle attaches to)"
        );
        Ok(Some(Arc::new(LiveNetwork {
            shared,
            tasks: Mutex::new(tasks),
            release: Mutex::new(Some(release)),
            devices: Mutex::new(devices),
            namespaces: Mutex::new(Some(namespaces)),
            attached: Mutex::new(attached),
            summary: Mutex::new(None),
            offload,
        })))
    }

    /// The counters the live side adds its capture, release and window work to.
    pub fn stages(&self) -> Arc<Stages> {
        self.shared.stages.clone()
    }

    /// Window `k`'s BEGIN: the window opens at the wall instant the physics coordinator opened
    /// it at (`window_opened_unix_ns`, never later than now), or now if the BEGIN gives none;
    /// so the time the BEGIN took to get here, and its jitter, neither stamp captures nor
    /// release deliveries early. Describes the packets captured since the last BEGIN in `begin`.
    pub fn begin(&self, k: u32, begin: &mut NetworkUpdate) {
        let anchor = match begin.window_opened_unix_ns {
            0 => None,
            ns => super::timer::instant_of_unix_ns(ns),
        };
        let mut st = self.shared.lock();
        let now = Instant::now();
        st.clock.open(k, anchor.map_or(now, |a| a.min(now)));
        st.engine.fill_begin(k, begin);
        drop(st);
        self.shared.stages.since(Stage::LiveWindow, now);
    }

    /// The simulator's END of window `k`: schedules its deliveries.
    pub fn end(&self, k: u32, end: &NetworkView) {
        let started = Instant::now();
        self.end_window(k, end);
        self.shared.stages.since(Stage::LiveWindow, started);
    }

    fn end_window(&self, k: u32, end: &NetworkView) {
        let mut st = self.shared.lock();
        let deliveries = st.engine.apply_end(k, end);
        let Some((open_k, _, wall)) = st.clock.open.filter(|o| o.0 == k) else {
            for d in deliveries {
                st.engine.drop_delivery(&d, DropReason::Shutdown, d.t_ns);
            }
            return;
        };
        debug_assert_eq!(open_k, k);
        for d in deliveries {
            if st.closed || st.releases.len() >= st.release_limit {
                let reason = if st.closed {
                    DropReason::Shutdown
                } else {
                    DropReason::QueueFull
                };
                st.engine.drop_delivery(&d, reason, d.t_ns);
                continue;
            }
            let due = st.clock.wall_at(k, wall, d.t_ns);
            st.seq += 1;
            let seq = st.seq;
            st.releases.push(Reverse(Scheduled {
                due,
                seq,
                delivery: d,
            }));
        }
        drop(st);
        self.shared.wake.notify_one();
    }

    pub fn ledger(&self) -> Ledger {
        self.shared.lock().engine.ledger.clone()
    }

    /// Moves the ends of the copies that ended since the last call (delivered or dropped, one
    /// per copy, in the order they ended) to the back of `out`. They are held in a bounded
    /// buffer until taken ([`crate::net::ledger::MAX_COPY_ENDS`]; the summary counts what it
    /// could not hold); after [`Self::shutdown`] the last ones, the copies it dropped, remain.
    pub fn drain_copy_ends(&self, out: &mut Vec<CopyEnd>) {
        let mut st = self.shared.lock();
        if !st.engine.ends.is_empty() {
            st.engine.ends.drain_into(out);
        }
    }

    /// Keeps no copy ends (for a network coordinator whose run record is written elsewhere).
    pub fn without_copy_ends(&self) {
        self.shared.lock().engine.ends = CopyEnds::new(0);
    }

    /// Copies with the simulator, queued for the next window, and scheduled for release.
    pub fn in_flight_parts(&self) -> (usize, usize, usize) {
        let st = self.shared.lock();
        (
            st.engine.queued(),
            st.engine.held_copies(),
            st.releases.len(),
        )
    }

    /// Ends the live side after the last window it opened: [`Self::shutdown_at`] the end of
    /// that window (sim time 0 if none opened).
    pub fn shutdown(&self) -> LedgerSummary {
        let end_ns = {
            let st = self.shared.lock();
            st.clock.open.map_or(0, |(k, _, _)| {
                st.clock.schedule.start_ns(k.saturating_add(1))
            })
        };
        self.shutdown_at(end_ns)
    }

    /// Ends the live side of a run whose last window ended at sim time `end_ns`: stops the
    /// tasks, drops whatever is in flight (`shutdown`, at `end_ns`) and what was captured after
    /// that end while the programs were being stopped (`after_end`, at its capture time),
    /// flushes the pcaps, closes the TUNs (which takes their addresses and routes with them)
    /// and removes the namespaces it created (those attached to stay). Idempotent (the first
    /// call's end counts); returns the ledger.
    pub fn shutdown_at(&self, end_ns: SimNanos) -> LedgerSummary {
        if let Some(s) = self
            .summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return s;
        }
        for t in self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            t.abort();
        }
        // The release thread accounts for what it is writing, then sees `closed` and ends.
        self.shared.lock().closed = true;
        self.shared.wake.notify_all();
        if let Some(h) = self
            .release
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = h.join();
        }
        let summary = {
            let mut st = self.shared.lock();
            while let Some(Reverse(s)) = st.releases.pop() {
                st.engine.drop_delivery(
                    &s.delivery,
                    DropReason::Shutdown,
                    end_ns.max(s.delivery.captured_ns),
                );
            }
            st.engine.shutdown(end_ns);
            st.engine.summary()
        };
        for node in 0..self.shared.pcaps.len() {
            if let Some(w) = self.shared.pcap(node).as_mut().and_then(|p| p.0.as_mut()) {
                let _ = w.flush();
            }
        }
        self.devices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        for (ns, index) in self
            .attached
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            tun::remove(&ns, index);
        }
        if let Some(mut ns) = self
            .namespaces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            ns.remove_all();
        }
        *self.summary.lock().unwrap_or_else(|p| p.into_inner()) = Some(summary.clone());
        summary
    }
}

impl Drop for LiveNetwork {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The most frames one capture takes under the lock: what was already waiting after a read,
/// up to this, is read first (at 64 bytes and 350 000 packets a second, a lock per packet
/// kept the capture, the window's work and the release waiting on each other).
const CAPTURE_BATCH: usize = 64;

/// Captures what vehicle `node` sends: each burst the kernel hands over as one frame, or with
/// `split` as its wire packets. After a read, the bursts already waiting are read too (up to
/// [`CAPTURE_BATCH`] frames) and all go to the engine under one lock, each stamped with the
/// instant after its own read.
async fn read_loop(
    shared: Arc<Shared>,
    dev: Arc<AsyncDevice>,
    pool: Arc<tun::BurstPool>,
    node: usize,
    split: bool,
) {
    let mtu = dev.mtu().unwrap_or(1500);
    let mut reader = tun::Reader::new(split, mtu, pool);
    let mut frames: Vec<Frame> = Vec::new();
    // Per frame: the instant after the read that gave it.
    let mut read_at: Vec<Instant> = Vec::new();
    let mut times: Vec<SimNanos> = Vec::new();
    loop {
        if let Err(e) = reader.read(&dev).await {
            tracing::debug!("TUN of vehicle {node}: read failed: {e}");
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            continue;
        }
        let first = Instant::now();
        reader.take_frames(&mut frames);
        read_at.resize(frames.len(), first);
        // An error here (WouldBlock, mostly) ends the batch; the next `read` reports others.
        while frames.len() < CAPTURE_BATCH && reader.try_read(&dev).is_ok() {
            let read = Instant::now();
            reader.take_frames(&mut frames);
            read_at.resize(frames.len(), read);
        }
        let st = shared.lock();
        times.clear();
        times.extend(read_at.drain(..).map(|read| st.clock.capture_at(read)));
        drop(st);
        if let Some(mut pcap) = shared.pcap(node) {
            for (frame, &t) in frames.iter().zip(&times) {
                pcap.record(node, t, frame.ip());
            }
        }
        let mut st = shared.lock();
        for (frame, &t) in frames.drain(..).zip(&times) {
            st.engine.capture(node, frame, t);
        }
        drop(st);
        shared.stages.since(Stage::Capture, first);
    }
}

/// A delivery goes into its receiver's TUN as it was sent, unless the simulator corrupted it
/// (a receiver's GRO would not merge such a packet with others).
impl tun::AsOutgoing for Delivery {
    fn outgoing(&self) -> tun::Outgoing<'_> {
        tun::Outgoing {
            bytes: &self.frame.data,
            may_coalesce: !self.corrupted,
        }
    }
}

/// Writes each delivery into its receiver's TUN once it is due (never before), until the live
/// side closes. Runs on a thread of its own. Deliveries due together go to each receiver in one
/// [`tun::Writer`] call, which joins consecutive TCP segments of a flow, and UDP datagrams where
/// the kernel takes them coalesced (all TUNs do, or none); bursts stay as they are.
fn release_loop(shared: &Shared, devices: &[Arc<AsyncDevice>]) {
    super::timer::init();
    let mut due_now: Vec<Delivery> = Vec::new();
    let mut results: Vec<bool> = Vec::new();
    let mut writer = tun::Writer::new(devices.iter().all(|d| d.udp_gso()));
    loop {
        {
            let mut st = shared.lock();
            loop {
                if st.closed {
                    return;
                }
                let now = Instant::now();
                while let Some(Reverse(s)) = st.releases.peek() {
                    if s.due > now {
                        break;
                    }
                    if let Some(Reverse(s)) = st.releases.pop() {
                        due_now.push(s.delivery);
                    }
                }
                if !due_now.is_empty() {
                    break;
                }
                st = match st.releases.peek().map(|Reverse(s)| s.due - now) {
                    Some(wait) => match shared.wake.wait_timeout(st, wait) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    },
                    None => shared.wake.wait(st).unwrap_or_else(|p| p.into_inner()),
                };
            }
        }
        let started = Instant::now();
        // Per receiver, in the order they fell due.
        due_now.sort_by_key(|d| d.node);
        results.clear();
        results.resize(due_now.len(), false);
        let mut from = 0;
        while from < due_now.len() {
            let node = due_now[from].node;
            let to = from + due_now[from..].partition_point(|d| d.node == node);
            if let Some(dev) = devices.get(node) {
                let mut pcap = shared.pcap(node);
                writer.write(dev, &due_now[from..to], &mut results[from..to]);
                if let Some(pcap) = pcap.as_mut() {
                    for (d, _) in
                        (due_now[from..to].iter().zip(&results[from..to])).filter(|(_, &ok)| ok)
                    {
                        pcap.record(node, d.t_ns, d.frame.ip());
                    }
                }
            }
            from = to;
        }
        let mut st = shared.lock();
        for (d, &ok) in due_now.iter().zip(&results) {
            st.engine.delivered(d, ok);
        }
        due_now.clear();
        drop(st);
        shared.stages.since(Stage::Release, started);
    }
}
