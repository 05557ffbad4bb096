//! The TUN interfaces of the vehicles on this machine: their namespaces (created, or attached
//! to: `vehicles[].attach`), a reader task per vehicle handing what it sends to a [`Sink`]
//! stamped on the window clock (without `network.offload`, each burst split into its wire
//! packets), and release threads (one per core, each for a share of the receivers) writing each
//! scheduled delivery into its receiver's TUN at the wall time of the sim time the simulator
//! chose (packets of a flow due together coalesced, [`tun::Writer`]), plus the pcap files. The
//! network coordinator puts its packet engine behind them ([`crate::io::traffic`]), a capture
//! agent its reports ([`crate::io::traffic::agents`]).
//!
//! A release thread sleeps on a condition variable until the next delivery is due (precise
//! to microseconds with the timer slack [`crate::io::os::timer::init`] sets), so thousands of releases
//! a second each cost a futex wake, not a hop through tokio's blocking pool. Everything is
//! shared behind one mutex; critical sections are short. Each vehicle's pcap has a lock of its
//! own, held by the release thread from before a TUN write until the packets written are
//! recorded, so that a reply the vehicle sends at once is never recorded before what it answers.

use crate::clock::stages::{Stage, Stages};
use crate::clock::{SimNanos, WindowClock};
use crate::config::Vehicle;
use crate::io::os::netns::{Namespaces, VehicleNs};
use crate::io::os::tun;
use crate::model::fate::DropReason;
use crate::net::traffic::{Delivery, Frame, Stamp};
use crate::wire::pcap::PcapWriter;
use ipnet::IpNet;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::BufWriter;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;
use tokio::task::JoinHandle;
use tun_rs::AsyncDevice;

/// Where the packets the vehicles send go, and who learns what became of a delivery.
pub trait Sink: Send + 'static {
    /// Vehicle `node` sent `frame`, captured as `stamp` says.
    fn capture(&mut self, node: usize, frame: Frame, stamp: Stamp);
    /// `d` was written into its receiver's TUN (`ok`; `d.emulation.release_late_ns` says how
    /// long after its due instant), or the write failed.
    fn delivered(&mut self, d: &Delivery, ok: bool);
}

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

/// What the readers, the release threads and the window's work share.
pub struct State<S> {
    pub sink: S,
    pub clock: WindowClock,
    /// Per release thread: the deliveries to its receivers (vehicle `node` goes to
    /// `node % releases.len()`), in the order they fall due.
    releases: Vec<BinaryHeap<Reverse<Scheduled>>>,
    /// Deliveries in `releases`, all threads together.
    queued: usize,
    /// The release threads (a bit each) given deliveries since [`Ports::notify`] last woke
    /// them: the others sleep on.
    touched: u32,
    release_limit: usize,
    seq: u64,
    closed: bool,
}

impl<S> State<S> {
    /// Schedules `d` for its sim time in window `k`, the open window; hands it back with the
    /// reason it cannot be (the ports closed, the window not open, `release_limit` reached).
    pub fn schedule(&mut self, k: u32, d: Delivery) -> Result<(), Box<(Delivery, DropReason)>> {
        let Some((_, _, wall)) = self.clock.open.filter(|o| o.0 == k) else {
            return Err(Box::new((d, DropReason::Shutdown)));
        };
        if self.closed {
            return Err(Box::new((d, DropReason::Shutdown)));
        }
        if self.queued >= self.release_limit {
            return Err(Box::new((d, DropReason::QueueFull)));
        }
        let due = self.clock.wall_at(k, wall, d.t_ns);
        self.seq += 1;
        self.queued += 1;
        let shard = d.node % self.releases.len();
        self.touched |= 1 << shard;
        self.releases[shard].push(Reverse(Scheduled {
            due,
            seq: self.seq,
            delivery: d,
        }));
        Ok(())
    }

    /// Deliveries scheduled and not yet written.
    pub fn scheduled(&self) -> usize {
        self.queued
    }

    /// Takes the deliveries not yet written (after [`Ports::stop`]).
    pub fn take_scheduled(&mut self) -> Vec<Delivery> {
        self.queued = 0;
        (self.releases.iter_mut())
            .flat_map(|r| std::mem::take(r).into_vec())
            .map(|Reverse(s)| s.delivery)
            .collect()
    }
}

/// One vehicle's pcap file (`None` without `network.pcap`, or after a write failed).
pub struct Pcap(Option<PcapWriter<BufWriter<File>>>);

impl Pcap {
    pub fn record(&mut self, node: usize, t_ns: u64, packet: &[u8]) {
        if let Some(w) = &mut self.0 {
            if let Err(e) = w.write(t_ns, packet) {
                tracing::warn!("pcap of vehicle {node} stopped: {e}");
                self.0 = None;
            }
        }
    }
}

struct Shared<S> {
    state: Mutex<State<S>>,
    /// Per vehicle; never held together with `state`.
    pcaps: Vec<Mutex<Pcap>>,
    /// Per release thread: signalled when deliveries are scheduled or the ports close.
    wake: Vec<Condvar>,
    stages: Arc<Stages>,
}

impl<S> Shared<S> {
    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pcap(&self, node: usize) -> Option<MutexGuard<'_, Pcap>> {
        self.pcaps
            .get(node)
            .map(|p| p.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// How the ports are made.
pub struct PortsConfig<'a> {
    /// The scenario's vehicles; only those `here` get a TUN.
    pub vehicles: &'a [Vehicle],
    /// Per vehicle: its addresses.
    pub addresses: &'a [Vec<IpNet>],
    /// Per vehicle: whether it lives on this machine.
    pub here: Vec<bool>,
    pub clock: WindowClock,
    /// Deliveries scheduled at most (more are dropped, "queue full").
    pub release_limit: usize,
    /// Hand each burst over as its wire packets (without `network.offload`).
    pub split: bool,
    /// Per vehicle: its pcap file, if any.
    pub pcaps: Vec<Option<PcapWriter<BufWriter<File>>>>,
    /// Per vehicle: the environment its programs get ([`crate::config::Scenario::vehicles_ros_env`]),
    /// left beside its namespace for `cosim exec`.
    pub env: Vec<Vec<(String, String)>>,
}

/// The TUN interfaces of the vehicles on this machine, for the lifetime of this value.
pub struct Ports<S: Sink> {
    shared: Arc<Shared<S>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    release: Mutex<Vec<std::thread::JoinHandle<()>>>,
    devices: Mutex<Vec<Option<Arc<AsyncDevice>>>>,
    namespaces: Mutex<Option<Namespaces>>,
    /// The namespaces attached to (`vehicles[].attach`) and the index of the TUN in each.
    attached: Mutex<Vec<(VehicleNs, u64)>>,
}

impl<S: Sink> Ports<S> {
    /// Creates (or attaches to) the namespaces of the vehicles here, a TUN in each, and starts
    /// their readers and the release thread. Needs root and a tokio runtime.
    pub fn open(cfg: PortsConfig<'_>, sink: S) -> anyhow::Result<Ports<S>> {
        let here = |i: usize| cfg.here.get(i).copied().unwrap_or(false);
        let own: Vec<&str> = (cfg.vehicles.iter().enumerate())
            .filter(|(i, v)| here(*i) && v.attach.is_none())
            .map(|(_, v)| v.name.as_str())
            .collect();
        let mut namespaces = Namespaces::create(&own)?;
        for (v, env) in cfg.vehicles.iter().zip(&cfg.env) {
            namespaces.note_env(&v.name, env)?;
        }
        for (i, v) in cfg.vehicles.iter().enumerate() {
            if let (true, Some(a)) = (here(i), &v.attach) {
                namespaces.attach(&v.name, a)?;
            }
        }
        let mut devices = Vec::new();
        let mut attached = Vec::new();
        for (i, (v, addrs)) in cfg.vehicles.iter().zip(cfg.addresses).enumerate() {
            if !here(i) {
                devices.push(None);
                continue;
            }
            let ns = namespaces.vehicle(&v.name)?;
            devices.push(Some(Arc::new(tun::open(&ns, addrs)?)));
            if v.attach.is_some() {
                if let Some(index) = tun::index_in(&ns) {
                    attached.push((ns, index));
                }
            }
        }
        let mut pcaps: Vec<Mutex<Pcap>> =
            cfg.pcaps.into_iter().map(|p| Mutex::new(Pcap(p))).collect();
        pcaps.resize_with(cfg.vehicles.len(), || Mutex::new(Pcap(None)));
        let threads = release_threads(devices.iter().flatten().count());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                sink,
                clock: cfg.clock,
                releases: (0..threads).map(|_| BinaryHeap::new()).collect(),
                queued: 0,
                touched: 0,
                release_limit: cfg.release_limit,
                seq: 0,
                closed: false,
            }),
            pcaps,
            wake: (0..threads).map(|_| Condvar::new()).collect(),
            stages: Arc::default(),
        });
        let mut tasks = Vec::new();
        let pool = Arc::new(tun::BurstPool::default());
        for (node, dev) in devices.iter().enumerate() {
            if let Some(dev) = dev {
                tasks.push(tokio::spawn(read_loop(
                    shared.clone(),
                    dev.clone(),
                    pool.clone(),
                    node,
                    cfg.split,
                )));
            }
        }
        let mut release = Vec::new();
        for shard in 0..threads {
            let (shared, devices) = (shared.clone(), devices.clone());
            release.push(
                std::thread::Builder::new()
                    .name("release".into())
                    .spawn(move || release_loop(&shared, &devices, shard))?,
            );
        }
        Ok(Ports {
            shared,
            tasks: Mutex::new(tasks),
            release: Mutex::new(release),
            devices: Mutex::new(devices),
            namespaces: Mutex::new(Some(namespaces)),
            attached: Mutex::new(attached),
        })
    }

    /// The shared state, locked.
    pub fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.shared.lock()
    }

    /// Wakes the release threads given deliveries since the last call.
    pub fn notify(&self) {
        let touched = std::mem::take(&mut self.shared.lock().touched);
        for (shard, w) in self.shared.wake.iter().enumerate() {
            if touched & (1 << shard) != 0 {
                w.notify_one();
            }
        }
    }

    /// Vehicle `node`'s pcap, locked (never while [`Self::lock`] is held).
    pub fn pcap(&self, node: usize) -> Option<MutexGuard<'_, Pcap>> {
        self.shared.pcap(node)
    }

    /// The counters the ports add their capture and release work to.
    pub fn stages(&self) -> Arc<Stages> {
        self.shared.stages.clone()
    }

    /// Stops the readers and the release thread (which first accounts for what it is writing);
    /// what is still scheduled stays for [`State::take_scheduled`]. Idempotent.
    pub fn stop(&self) {
        for t in self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            t.abort();
        }
        self.shared.lock().closed = true;
        for w in &self.shared.wake {
            w.notify_all();
        }
        for h in self
            .release
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let _ = h.join();
        }
    }

    /// After [`Self::stop`]: flushes the pcaps, closes the TUNs (which takes their addresses
    /// and routes with them) and removes the namespaces it created (those attached to stay).
    /// Idempotent.
    pub fn close(&self) {
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
    }
}

impl<S: Sink> Drop for Ports<S> {
    fn drop(&mut self) {
        self.stop();
        self.close();
    }
}

/// The most frames one capture takes under the lock: what was already waiting after a read,
/// up to this, is read first (at 64 bytes and 350 000 packets a second, a lock per packet
/// kept the capture, the window's work and the release waiting on each other).
const CAPTURE_BATCH: usize = 64;

/// Captures what vehicle `node` sends: each burst the kernel hands over as one frame, or with
/// `split` as its wire packets. After a read, the bursts already waiting are read too (up to
/// [`CAPTURE_BATCH`] frames) and all go to the sink under one lock, each stamped with the
/// instant after its own read.
async fn read_loop<S: Sink>(
    shared: Arc<Shared<S>>,
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
        times.extend(read_at.iter().map(|&read| st.clock.capture_at(read)));
        let before_start = st.clock.open.is_none();
        drop(st);
        if let Some(mut pcap) = shared.pcap(node) {
            for (frame, &t) in frames.iter().zip(&times) {
                pcap.record(node, t, frame.ip());
            }
        }
        let mut st = shared.lock();
        for ((frame, &t_ns), &read) in frames.drain(..).zip(&times).zip(&read_at) {
            let stamp = Stamp {
                t_ns,
                lag_ns: st.clock.capture_lag_ns(t_ns),
                read: (!before_start).then_some(read),
            };
            st.sink.capture(node, frame, stamp);
        }
        read_at.clear();
        drop(st);
        shared.stages.since(Stage::Capture, first);
    }
}

/// What the emulator added to `d`, due at `due` and written at `written` in a run at `rtf`
/// ([`crate::net::ledger::Emulation`]).
/// A copy of generated traffic (no emulation) is never written into a TUN, and is left as is.
pub fn measure(d: &mut Delivery, due: Instant, written: Instant, rtf: f64) {
    let Some(e) = &mut d.emulation else {
        return;
    };
    e.release_late_ns = written.saturating_duration_since(due).as_nanos() as u64;
    e.total_ns = match d.read {
        Some(read) => {
            let wall = written.saturating_duration_since(read).as_nanos() as f64;
            let sim = d.t_ns.saturating_sub(d.captured_ns) as f64 / rtf.max(f64::MIN_POSITIVE);
            (wall - sim).max(0.0) as u64
        }
        None => e.release_late_ns + e.capture_lag_ns,
    };
}

/// A delivery goes into its receiver's TUN as it was sent, unless the simulator corrupted it
/// (a receiver's GRO would not merge such a packet with others).
impl tun::AsOutgoing for Delivery {
    fn outgoing(&self) -> tun::Outgoing<'_> {
        tun::Outgoing {
            bytes: &self.frame.data,
            hdr_len: self.frame.hdr_len,
            may_coalesce: !self.corrupted,
        }
    }
}

/// The most release threads: each takes a share of the receivers.
pub const MAX_RELEASE_THREADS: usize = 4;

/// Release threads for `vehicles` TUNs: one per core, at most [`MAX_RELEASE_THREADS`] and one
/// per vehicle. A write into a TUN carries its packet up the receiver's stack and wakes the
/// program waiting on the socket (most of the write's cost, measured under `perf`): a datagram
/// multicast to 63 vehicles is 63 such writes, which cores write side by side.
fn release_threads(vehicles: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(MAX_RELEASE_THREADS).min(vehicles).max(1)
}

/// Writes each delivery to the receivers of shard `shard` (vehicle `node` with
/// `node % threads == shard`) into its receiver's TUN once it is due (never before), until the
/// ports close. Runs on a thread of its own. Deliveries due together go to each receiver in one
/// [`tun::Writer`] call, which joins consecutive TCP segments of a flow, and UDP datagrams where
/// the kernel takes them coalesced (all TUNs do, or none); bursts stay as they are.
fn release_loop<S: Sink>(shared: &Shared<S>, devices: &[Option<Arc<AsyncDevice>>], shard: usize) {
    crate::io::os::timer::init();
    crate::io::os::timer::on_window_path();
    let mut due_now: Vec<Delivery> = Vec::new();
    // Per delivery in `due_now`: the wall instant it was due.
    let mut dues: Vec<Instant> = Vec::new();
    let mut taken: Vec<Scheduled> = Vec::new();
    let mut results: Vec<bool> = Vec::new();
    // Per delivery in `due_now`: the instant its write returned.
    let mut written: Vec<Instant> = Vec::new();
    let mut writer = tun::Writer::new(devices.iter().flatten().all(|d| d.udp_gso()));
    let rtf = shared.lock().clock.real_time_factor;
    loop {
        {
            let mut st = shared.lock();
            loop {
                if st.closed {
                    return;
                }
                let now = Instant::now();
                let state = &mut *st;
                let mine = &mut state.releases[shard];
                while let Some(Reverse(s)) = mine.peek() {
                    if s.due > now {
                        break;
                    }
                    if let Some(Reverse(s)) = mine.pop() {
                        taken.push(s);
                    }
                }
                if !taken.is_empty() {
                    state.queued -= taken.len();
                    break;
                }
                let wake = &shared.wake[shard];
                st = match mine.peek().map(|Reverse(s)| s.due - now) {
                    Some(wait) => match wake.wait_timeout(st, wait) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    },
                    None => wake.wait(st).unwrap_or_else(|p| p.into_inner()),
                };
            }
        }
        let started = Instant::now();
        // Per receiver, in the order they fell due.
        taken.sort_by_key(|s| s.delivery.node);
        for s in taken.drain(..) {
            dues.push(s.due);
            due_now.push(s.delivery);
        }
        results.clear();
        results.resize(due_now.len(), false);
        written.clear();
        written.resize(due_now.len(), started);
        let mut from = 0;
        while from < due_now.len() {
            let node = due_now[from].node;
            let to = from + due_now[from..].partition_point(|d| d.node == node);
            if let Some(Some(dev)) = devices.get(node) {
                let mut pcap = shared.pcap(node);
                writer.write(
                    dev,
                    &due_now[from..to],
                    &mut results[from..to],
                    &mut written[from..to],
                );
                let each = due_now[from..to].iter_mut().zip(&dues[from..to]);
                for ((d, due), &at) in each.zip(&written[from..to]) {
                    measure(d, *due, at, rtf);
                }
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
            st.sink.delivered(d, ok);
        }
        due_now.clear();
        dues.clear();
        drop(st);
        shared.stages.since(Stage::Release, started);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn delivery(captured_ns: u64, t_ns: u64, read: Option<Instant>) -> Delivery {
        Delivery {
            pkt_id: 1,
            src: 0,
            captured_ns,
            node: 1,
            t_ns,
            frame: Frame::plain(vec![0x45; 20]),
            corrupted: false,
            emulation: Some(crate::net::ledger::Emulation {
                capture_lag_ns: 30_000,
                ..Default::default()
            }),
            read,
        }
    }

    #[test]
    fn the_error_is_the_wall_time_from_read_to_write_less_the_sim_delay() {
        let ms = Duration::from_millis;
        let read = Instant::now();
        // 4 ms of sim delay at rtf 2: 2 ms of wall time; due at read + 2 ms, written 1 ms late.
        let mut d = delivery(10_000_000, 14_000_000, Some(read));
        measure(&mut d, read + ms(2), read + ms(3), 2.0);
        assert_eq!(d.emulation.unwrap().release_late_ns, 1_000_000);
        assert_eq!(d.emulation.unwrap().total_ns, 1_000_000);
        // The schedule moved 500 ms while it was in flight: due (on the moved schedule) and
        // written on time, yet 500 ms late for its packet.
        let mut d = delivery(10_000_000, 14_000_000, Some(read));
        measure(&mut d, read + ms(502), read + ms(502), 2.0);
        assert_eq!(d.emulation.unwrap().release_late_ns, 0);
        assert_eq!(d.emulation.unwrap().total_ns, 500_000_000);
        // Written before its sim delay's wall time (it cannot be): no negative error.
        let mut d = delivery(10_000_000, 14_000_000, Some(read));
        measure(&mut d, read, read + ms(1), 1.0);
        assert_eq!(d.emulation.unwrap().total_ns, 0);
        // Read on a capture agent's clock: the parts added.
        let mut d = delivery(10_000_000, 14_000_000, None);
        measure(&mut d, read, read + ms(1), 1.0);
        assert_eq!(d.emulation.unwrap().total_ns, 1_030_000);
    }
}
