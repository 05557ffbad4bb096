//! The network coordinator's packet logic, without I/O: captured packets queue until the next
//! window's BEGIN describes them to the network simulator; its END releases copies (at a sim
//! time it chooses, with a bit error rate) or drops them with a reason; the ledger counts every
//! copy, per directed link too, and every copy that ends leaves a [`CopyEnd`] for the run record
//! (bounded). Time is an argument everywhere, so it is tested without a clock or a TUN.
//!
//! End times: a delivery at its delivery time; a drop at capture at the capture time; a drop the
//! simulator reports in END(k), or a copy held too long, at the window's start kW; a copy lost
//! when writing at the time given; a copy in flight at the end of the last window at that end;
//! a copy captured after it at its capture time.

use super::addr::AddressBook;
use super::ledger::{CopyEnd, CopyEnds, Emulation, Ledger, LedgerSummary};
use crate::clock::{Schedule, SimNanos};
use crate::model::fate::{DropReason, Fate};
use crate::wire::ip::IpPacket;
use crate::wire::proto::NetworkUpdate;
use crate::wire::update::NetworkView;
use foldhash::HashMap;
use prost::bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub schedule: Schedule,
    pub queue_limit: usize,
    pub max_hold_windows: u32,
    pub crc: bool,
    pub seed: u64,
}

/// A packet as read from a TUN: `data[hdr_len..]` is the IP packet (`hdr_len` is the virtio
/// header's length with offloads, else 0).
#[derive(Debug, Clone)]
pub struct Frame {
    pub data: FrameData,
    pub hdr_len: usize,
}

/// A frame's bytes, shared by its copies: its own allocation (copied from a slice), held
/// behind a handle — the vector it was built in, taken as it is, or a burst lent by the buffer
/// it was read into (`io::os::tun::Reader`), which gets it back when the last copy is dropped —
/// or a view into a message that carried it with others ([`Frame::compact`] gives it bytes of
/// its own when it is kept for long, so that it does not keep the whole message).
#[derive(Clone)]
pub enum FrameData {
    Own(Arc<[u8]>),
    Held(Arc<dyn AsRef<[u8]> + Send + Sync>),
    View(Bytes),
}

impl std::ops::Deref for FrameData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FrameData::Own(b) => b,
            FrameData::Held(b) => (**b).as_ref(),
            FrameData::View(b) => b,
        }
    }
}

impl std::fmt::Debug for FrameData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrameData({} bytes)", self.len())
    }
}

impl From<&[u8]> for FrameData {
    fn from(bytes: &[u8]) -> FrameData {
        FrameData::Own(Arc::from(bytes))
    }
}

impl From<Vec<u8>> for FrameData {
    /// Without copying the bytes (`Arc<[u8]>::from` would).
    fn from(bytes: Vec<u8>) -> FrameData {
        FrameData::Held(Arc::new(bytes))
    }
}

impl From<Bytes> for FrameData {
    /// Without copying the bytes: a packet decoded from a message stays in the message's.
    fn from(bytes: Bytes) -> FrameData {
        FrameData::View(bytes)
    }
}

impl Frame {
    /// A bare IP packet, with no virtio header (one generated, or from a capture agent).
    pub fn plain(ip: impl Into<FrameData>) -> Frame {
        Frame {
            data: ip.into(),
            hdr_len: 0,
        }
    }

    pub fn ip(&self) -> &[u8] {
        self.data.get(self.hdr_len..).unwrap_or(&[])
    }

    /// A view into a message ([`FrameData::View`]) becomes bytes of its own; other frames stay
    /// as they are.
    pub fn compact(&mut self) {
        if let FrameData::View(b) = &self.data {
            self.data = FrameData::Own(Arc::from(&b[..]));
        }
    }

    /// The IP packet as [`Bytes`] that share this frame's (no copy), for a message carrying it.
    pub fn ip_bytes(&self) -> Bytes {
        if let FrameData::View(b) = &self.data {
            return b.slice(self.hdr_len.min(b.len())..);
        }
        struct Ip(Frame);
        impl AsRef<[u8]> for Ip {
            fn as_ref(&self) -> &[u8] {
                self.0.ip()
            }
        }
        Bytes::from_owner(Ip(self.clone()))
    }
}

#[derive(Debug)]
struct Queued {
    pkt_id: u32,
    src: usize,
    dsts: Vec<usize>,
    /// Sent to a multicast or broadcast address.
    multicast: bool,
    t_ns: SimNanos,
    /// [`Emulation::capture_lag_ns`]; none for a packet made in sim time (no emulator in its
    /// path).
    lag_ns: Option<u64>,
    /// The wall instant it was read here (none from a capture agent).
    read: Option<Instant>,
    frame: Frame,
}

#[derive(Debug)]
struct Held {
    frame: Frame,
    src: usize,
    captured_ns: SimNanos,
    lag_ns: Option<u64>,
    read: Option<Instant>,
    window: u32,
    /// Receivers whose copy is still with the simulator.
    pending: Vec<usize>,
}

/// A copy to write to `node`'s TUN at sim time `t_ns`.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub pkt_id: u32,
    /// Sender and capture sim time.
    pub src: usize,
    pub captured_ns: SimNanos,
    pub node: usize,
    pub t_ns: SimNanos,
    pub frame: Frame,
    /// Bits were flipped (and the link has no CRC).
    pub corrupted: bool,
    /// What the emulator added to it so far (its capture lag; the release sets the rest);
    /// none for a packet of the generated traffic, made and received in sim time.
    pub emulation: Option<Emulation>,
    /// The wall instant its packet was read here (none from a capture agent): with the sim
    /// delay, what the release measures [`Emulation::total_ns`] from.
    pub read: Option<Instant>,
}

/// What became of a packet read from a TUN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureOutcome {
    /// Queued for the next window with this id and these receivers.
    Queued { pkt_id: u32, receivers: Vec<usize> },
    /// Dropped at once; `copies` copies counted.
    Dropped { reason: DropReason, copies: usize },
}

pub struct Engine {
    pub book: AddressBook,
    cfg: EngineConfig,
    queue: VecDeque<Queued>,
    held: HashMap<u32, Held>,
    next_id: u32,
    rng: ChaCha8Rng,
    pub ledger: Ledger,
    /// How every copy ended, for the record (bounded).
    pub ends: CopyEnds,
}

fn bytes_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Engine {
    pub fn new(book: AddressBook, cfg: EngineConfig) -> Engine {
        let rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x6e65_7473_696d_6265);
        Engine {
            book,
            cfg,
            queue: VecDeque::new(),
            held: HashMap::default(),
            next_id: 1,
            rng,
            ledger: Ledger::default(),
            ends: CopyEnds::default(),
        }
    }

    /// A copy from `src` to `dst` captured at `captured_ns` ends at `end_ns`: counted in the
    /// ledger and its [`CopyEnd`] kept.
    #[allow(clippy::too_many_arguments)]
    fn end_copy(
        &mut self,
        src: usize,
        dst: Option<usize>,
        bytes: usize,
        captured_ns: SimNanos,
        fate: Fate,
        end_ns: SimNanos,
        corrupted: bool,
        emulation: Option<Emulation>,
    ) {
        match (fate, dst) {
            (Fate::Delivered, Some(d)) => self.ledger.deliver(src, d, bytes, corrupted),
            // Never: only a copy with a receiver is delivered.
            (Fate::Delivered, None) => self.ledger.drop_copy(src, None, DropReason::NoRoute),
            (Fate::Dropped(r), _) => self.ledger.drop_copy(src, dst, r),
        }
        self.ends.push(CopyEnd {
            captured_ns,
            src,
            dst,
            bytes: bytes_u32(bytes),
            fate,
            end_ns,
            corrupted,
            emulation,
        });
    }

    /// The ledger as the summary reports it, links named after the vehicles.
    pub fn summary(&self) -> LedgerSummary {
        LedgerSummary::new(&self.ledger, &self.book.names, self.ends.dropped)
    }

    /// A packet `src` sent at sim time `t_ns`, made in sim time (generated traffic): no
    /// emulator is in its path, so its copies carry no [`Emulation`]. Never panics; bad input
    /// is counted and dropped.
    pub fn capture(&mut self, src: usize, frame: Frame, t_ns: SimNanos) -> CaptureOutcome {
        self.enqueue(src, frame, t_ns, None, None)
    }

    /// A packet read from a vehicle's TUN (here or on a capture agent), with what the I/O side
    /// knows of the capture's timing. Never panics; bad input is counted and dropped.
    pub fn capture_stamped(&mut self, src: usize, frame: Frame, stamp: Stamp) -> CaptureOutcome {
        let Stamp { t_ns, lag_ns, read } = stamp;
        self.enqueue(src, frame, t_ns, Some(lag_ns), read)
    }

    fn enqueue(
        &mut self,
        src: usize,
        frame: Frame,
        t_ns: SimNanos,
        lag_ns: Option<u64>,
        read: Option<Instant>,
    ) -> CaptureOutcome {
        let len = frame.ip().len();
        let dst = match IpPacket::new_checked(frame.ip()) {
            Ok(p) => p.dst_addr(),
            Err(_) => {
                return self.drop_at_capture(src, &[None], len, t_ns, DropReason::Malformed, lag_ns)
            }
        };
        let Some(dest) = (src < self.book.len())
            .then(|| self.book.resolve(src, dst))
            .flatten()
        else {
            return self.drop_at_capture(src, &[None], len, t_ns, DropReason::NoRoute, lag_ns);
        };
        let receivers = self.book.receivers(src, &dest);
        if self.queue.len() >= self.cfg.queue_limit {
            let dsts: Vec<Option<usize>> = receivers.iter().map(|&d| Some(d)).collect();
            return self.drop_at_capture(src, &dsts, len, t_ns, DropReason::QueueFull, lag_ns);
        }
        let pkt_id = self.fresh_id();
        for &d in &receivers {
            self.ledger.capture(src, Some(d), len);
        }
        let multicast = dest == super::addr::Destination::AllOthers;
        self.queue.push_back(Queued {
            pkt_id,
            src,
            dsts: receivers.clone(),
            multicast,
            t_ns,
            lag_ns,
            read,
            frame,
        });
        CaptureOutcome::Queued { pkt_id, receivers }
    }

    fn drop_at_capture(
        &mut self,
        src: usize,
        dsts: &[Option<usize>],
        len: usize,
        t_ns: SimNanos,
        reason: DropReason,
        lag_ns: Option<u64>,
    ) -> CaptureOutcome {
        let emulation = lagged(lag_ns);
        for &d in dsts {
            self.ledger.capture(src, d, len);
            self.end_copy(
                src,
                d,
                len,
                t_ns,
                Fate::Dropped(reason),
                t_ns,
                false,
                emulation,
            );
        }
        CaptureOutcome::Dropped {
            reason,
            copies: dsts.len(),
        }
    }

    fn fresh_id(&mut self) -> u32 {
        loop {
            let id = self.next_id;
            self.next_id = self.next_id.wrapping_add(1).max(1);
            if !self.held.contains_key(&id) {
                return id;
            }
        }
    }

    /// Packets waiting for the next BEGIN.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Copies with the simulator.
    pub fn held_copies(&self) -> usize {
        self.held.values().map(|h| h.pending.len()).sum()
    }

    /// Describes every queued packet captured before window `k` in `begin` (window `k`), one
    /// entry per receiving copy, each saying whether the packet went to a multicast or
    /// broadcast address. Captures stamped in window k (its BEGIN arrived late) wait for the
    /// next, and do not hold back those behind them (generated packets are queued at the
    /// BEGIN, after whatever the TUNs read before it).
    pub fn fill_begin(&mut self, k: u32, begin: &mut NetworkUpdate) {
        let start = self.cfg.schedule.start_ns(k);
        let mut later = VecDeque::new();
        while let Some(q) = self.queue.pop_front() {
            if q.t_ns >= start {
                later.push_back(q);
                continue;
            }
            let len = u32::try_from(q.frame.ip().len()).unwrap_or(u32::MAX);
            for &d in &q.dsts {
                begin.pkt_id.push(q.pkt_id);
                begin.src_ip.push(self.book.first_v4(q.src));
                begin.dst_ip.push(self.book.first_v4(d));
                begin.pkt_lengths.push(len);
                begin.pkt_time_ns.push(q.t_ns);
                begin.src_node.push(q.src as u32);
                begin.dst_node.push(d as u32);
                begin.multicast.push(q.multicast);
            }
            self.held.insert(
                q.pkt_id,
                Held {
                    frame: q.frame,
                    src: q.src,
                    captured_ns: q.t_ns,
                    lag_ns: q.lag_ns,
                    read: q.read,
                    window: k,
                    pending: q.dsts,
                },
            );
        }
        if !later.is_empty() {
            self.queue = later;
        }
    }

    /// Applies the simulator's END of window `k`: releases (returned, with their sim delivery
    /// times inside the window), drops, and copies held longer than `max_hold_windows`.
    pub fn apply_end(&mut self, k: u32, end: &NetworkView) -> Vec<Delivery> {
        let (start, last) = (self.cfg.schedule.start_ns(k), self.cfg.schedule.last_ns(k));
        let mut out = Vec::with_capacity(end.releases().len());
        for r in end.releases() {
            let node = match r.rx_node {
                Some(n) => Some(n as usize),
                None => self.book.node_of_first_v4(r.rx_ip),
            };
            let Some(node) = self.take_copy(r.pkt_id, node) else {
                self.ledger.unknown_releases += 1;
                continue;
            };
            let Some((frame, src, captured_ns, lag_ns, read)) = self
                .held
                .get(&r.pkt_id)
                .map(|h| (h.frame.clone(), h.src, h.captured_ns, h.lag_ns, h.read))
            else {
                continue;
            };
            let t_ns = r.rx_time_ns.map_or(start, |t| t.clamp(start, last));
            let (frame, flipped) = self.apply_ber(frame, r.ber);
            if flipped && self.cfg.crc {
                self.end_copy(
                    src,
                    Some(node),
                    frame.ip().len(),
                    captured_ns,
                    Fate::Dropped(DropReason::BitErrors),
                    t_ns,
                    false,
                    lagged(lag_ns),
                );
            } else {
                out.push(Delivery {
                    pkt_id: r.pkt_id,
                    src,
                    captured_ns,
                    node,
                    t_ns,
                    frame,
                    corrupted: flipped,
                    emulation: lagged(lag_ns),
                    read,
                });
            }
            self.forget_if_done(r.pkt_id);
        }
        for loss in end.losses() {
            let node = loss.node.map(|n| n as usize);
            let reason = loss
                .reason
                .map_or(DropReason::Unspecified, DropReason::from_wire);
            if let Some(dst) = self.take_copy(loss.pkt_id, node) {
                if let Some((len, src, captured_ns, lag_ns)) = self
                    .held
                    .get(&loss.pkt_id)
                    .map(|h| (h.frame.ip().len(), h.src, h.captured_ns, h.lag_ns))
                {
                    self.end_copy(
                        src,
                        Some(dst),
                        len,
                        captured_ns,
                        Fate::Dropped(reason),
                        start,
                        false,
                        lagged(lag_ns),
                    );
                }
                self.forget_if_done(loss.pkt_id);
            } else {
                self.ledger.unknown_releases += 1;
            }
        }
        let max = self.cfg.max_hold_windows;
        let mut expired = Vec::new();
        for (&id, h) in &mut self.held {
            if k.saturating_sub(h.window) + 1 >= max {
                expired.push(id);
            } else {
                // Kept past its first END: no longer a view into the message it came in.
                h.frame.compact();
            }
        }
        // In id order, so that the record's copy ends do not follow the hash map's order.
        expired.sort_unstable();
        for id in expired {
            if let Some(h) = self.held.remove(&id) {
                for d in h.pending {
                    self.end_copy(
                        h.src,
                        Some(d),
                        h.frame.ip().len(),
                        h.captured_ns,
                        Fate::Dropped(DropReason::HeldTooLong),
                        start,
                        false,
                        lagged(h.lag_ns),
                    );
                }
            }
        }
        out
    }

    /// Removes the pending copy of `pkt_id` for `node` (or, with no node named, the next one).
    fn take_copy(&mut self, pkt_id: u32, node: Option<usize>) -> Option<usize> {
        let h = self.held.get_mut(&pkt_id)?;
        let pos = match node {
            Some(n) => h.pending.iter().position(|&p| p == n)?,
            None if !h.pending.is_empty() => 0,
            None => return None,
        };
        Some(h.pending.remove(pos))
    }

    fn forget_if_done(&mut self, pkt_id: u32) {
        if self.held.get(&pkt_id).is_some_and(|h| h.pending.is_empty()) {
            self.held.remove(&pkt_id);
        }
    }

    /// Flips each bit of the IP bytes with probability `ber`; true if any flipped.
    fn apply_ber(&mut self, frame: Frame, ber: f64) -> (Frame, bool) {
        if !(ber > 0.0) {
            return (frame, false);
        }
        let mut data = frame.data.to_vec();
        let from = frame.hdr_len.min(data.len());
        let flipped = flip_bits(&mut data[from..], ber, &mut self.rng);
        (
            Frame {
                data: data.into(),
                hdr_len: frame.hdr_len,
            },
            flipped > 0,
        )
    }

    /// The I/O side wrote (or failed to write) a delivery.
    pub fn delivered(&mut self, d: &Delivery, ok: bool) {
        let fate = if ok {
            Fate::Delivered
        } else {
            Fate::Dropped(DropReason::WriteError)
        };
        self.end_copy(
            d.src,
            Some(d.node),
            d.frame.ip().len(),
            d.captured_ns,
            fate,
            d.t_ns,
            ok && d.corrupted,
            d.emulation,
        );
    }

    /// A delivery the I/O side could not schedule is dropped for `reason` at sim time `end_ns`.
    pub fn drop_delivery(&mut self, d: &Delivery, reason: DropReason, end_ns: SimNanos) {
        self.end_copy(
            d.src,
            Some(d.node),
            d.frame.ip().len(),
            d.captured_ns,
            Fate::Dropped(reason),
            end_ns,
            false,
            lagged(d.emulation.map(|e| e.capture_lag_ns)),
        );
    }

    /// The run's last window ended at sim time `end_ns`: every copy queued or with the
    /// simulator is dropped, as `shutdown` at `end_ns` if it was captured before it, as
    /// `after_end` at its capture time if it was captured at or after it (while the run's
    /// programs were being stopped).
    pub fn shutdown(&mut self, end_ns: SimNanos) {
        let queued: Vec<Queued> = self.queue.drain(..).collect();
        for q in queued {
            let (reason, at) = if q.t_ns < end_ns {
                (DropReason::Shutdown, end_ns)
            } else {
                (DropReason::AfterEnd, q.t_ns)
            };
            for d in q.dsts {
                self.end_copy(
                    q.src,
                    Some(d),
                    q.frame.ip().len(),
                    q.t_ns,
                    Fate::Dropped(reason),
                    at,
                    false,
                    lagged(q.lag_ns),
                );
            }
        }
        let mut held: Vec<(u32, Held)> = self.held.drain().collect();
        held.sort_by_key(|(id, _)| *id);
        for (_, h) in held {
            for d in h.pending {
                self.end_copy(
                    h.src,
                    Some(d),
                    h.frame.ip().len(),
                    h.captured_ns,
                    Fate::Dropped(DropReason::Shutdown),
                    end_ns.max(h.captured_ns),
                    false,
                    lagged(h.lag_ns),
                );
            }
        }
    }
}

/// The emulation of a copy that was not written: its capture lag alone (none for a packet made
/// in sim time).
fn lagged(capture_lag_ns: Option<u64>) -> Option<Emulation> {
    capture_lag_ns.map(|capture_lag_ns| Emulation {
        capture_lag_ns,
        ..Emulation::default()
    })
}

/// When a packet was captured, as the I/O side hands it to [`Engine::capture_stamped`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamp {
    /// The sim time it was stamped with.
    pub t_ns: SimNanos,
    /// [`Emulation::capture_lag_ns`].
    pub lag_ns: u64,
    /// The wall instant it was read here (none from a capture agent, or before window 0: the
    /// network starts with the run, so the wait of a packet sent before it is no part of what
    /// the emulator adds; such a packet enters at sim time 0).
    pub read: Option<Instant>,
}

/// Flips each bit of `bytes` independently with probability `ber` (gaps drawn geometrically,
/// so the cost follows the number of flips); returns how many flipped.
pub fn flip_bits(bytes: &mut [u8], ber: f64, rng: &mut impl Rng) -> usize {
    let bits = bytes.len() * 8;
    if bits == 0 || !(ber > 0.0) {
        return 0;
    }
    if ber >= 1.0 {
        bytes.iter_mut().for_each(|b| *b = !*b);
        return bits;
    }
    let ln_q = (1.0 - ber).ln();
    let mut flips = 0;
    let mut pos: usize = 0;
    loop {
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        let gap = (u.ln() / ln_q).floor();
        if !gap.is_finite() || gap >= (bits - pos) as f64 {
            return flips;
        }
        pos += gap as usize;
        bytes[pos / 8] ^= 0x80 >> (pos % 8);
        flips += 1;
        pos += 1;
        if pos >= bits {
            return flips;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Motion, Pose, Vehicle};
    use crate::wire::ip::IpRepr;

    #[test]
    fn a_frames_ip_bytes_share_its_storage() {
        let frame = Frame {
            data: [vec![0; 10], vec![0x45; 40]].concat().into(),
            hdr_len: 10,
        };
        let ip = frame.ip_bytes();
        assert_eq!(ip.as_ptr(), frame.ip().as_ptr());
        assert_eq!(&ip[..], frame.ip());
        // It keeps the frame's bytes after the frame is gone.
        drop(frame);
        assert_eq!(&ip[..], &[0x45; 40][..]);
        let bare = Frame::plain(ip.clone());
        assert_eq!((bare.ip().as_ptr(), bare.hdr_len), (ip.as_ptr(), 0));
    }

    #[test]
    fn a_view_into_a_message_is_given_bytes_of_its_own_once_kept_past_its_first_end() {
        let ip = udp("10.0.0.1", "10.0.0.2", 100).ip().to_vec();
        // A message carrying two packets, each captured as a view into it.
        let message = Bytes::from([ip.clone(), ip.clone()].concat());
        let mut e = engine(16, true);
        e.capture(0, Frame::plain(message.slice(..ip.len())), 1_000);
        e.capture(0, Frame::plain(message.slice(ip.len()..)), 2_000);
        let mut begin = NetworkUpdate::default();
        e.fill_begin(1, &mut begin);
        assert!(!message.is_unique());
        // The END releasing the begin's entry `i` only.
        let only = |i: usize, k: u32| {
            let all = pass_through(&begin, k);
            NetworkUpdate {
                clear_pkt_id: vec![all.clear_pkt_id[i]],
                clear_src_ip: vec![all.clear_src_ip[i]],
                clear_dst_ip: vec![all.clear_dst_ip[i]],
                rx_ip: vec![all.rx_ip[i]],
                ber: vec![0.0],
                ..all
            }
        };
        // The first is released at window 1's END and is still a view; the second stays with
        // the simulator and is not.
        let out = e.apply_end(1, &view(&only(0, 1)));
        assert_eq!((out.len(), e.held_copies()), (1, 1));
        assert_eq!(out[0].frame.ip_bytes().as_ptr(), message.as_ptr());
        drop(out);
        assert!(message.is_unique());
        let out = e.apply_end(2, &view(&only(1, 2)));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].frame.ip(), &ip[..]);
    }

    fn vehicle(name: &str, addrs: &[&str]) -> Vehicle {
        Vehicle {
            name: name.into(),
            addresses: addrs.iter().map(|s| s.parse().unwrap()).collect(),
            modem: None,
            start_pose: Some(Pose {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                heading_deg: 0.0,
            }),
            motion: Motion::Stationary,
            ros: Default::default(),
            attach: None,
            host: None,
        }
    }

    fn engine(queue_limit: usize, crc: bool) -> Engine {
        let book = AddressBook::new(&[
            vehicle("a", &["10.0.0.1/24", "fd00::1/64"]),
            vehicle("b", &["10.0.0.2/24"]),
            vehicle("c", &["fd00::3/64"]),
        ]);
        Engine::new(
            book,
            EngineConfig {
                schedule: Schedule {
                    window_ns: 10_000_000,
                    windows: u32::MAX,
                },
                queue_limit,
                max_hold_windows: 2,
                crc,
                seed: 1,
            },
        )
    }

    fn udp(src: &str, dst: &str, len: usize) -> Frame {
        let r = IpRepr {
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            protocol: 17,
            hop_limit: 64,
            payload_len: 0,
        };
        Frame::plain(r.packet(&vec![0xab; len]).unwrap())
    }

    fn view(end: &NetworkUpdate) -> NetworkView {
        NetworkView::check(end.clone()).unwrap()
    }

    fn pass_through(begin: &NetworkUpdate, k: u32) -> NetworkUpdate {
        NetworkUpdate {
            time_val: k,
            clear_pkt_id: begin.pkt_id.clone(),
            clear_src_ip: begin.src_ip.clone(),
            clear_dst_ip: begin.dst_ip.clone(),
            rx_ip: begin.dst_ip.clone(),
            ber: vec![0.0; begin.pkt_id.len()],
            ..Default::default()
        }
    }

    #[test]
    fn unicast_multicast_broadcast_and_ipv6_reach_the_right_vehicles() {
        let mut e = engine(16, true);
        assert!(
            matches!(e.capture(0, udp("10.0.0.1", "10.0.0.2", 8), 5), CaptureOutcome::Queued { ref receivers, .. } if receivers == &[1])
        );
        assert!(
            matches!(e.capture(0, udp("10.0.0.1", "239.255.0.1", 8), 6), CaptureOutcome::Queued { ref receivers, .. } if receivers == &[1, 2])
        );
        assert!(
            matches!(e.capture(1, udp("10.0.0.2", "10.0.0.255", 8), 7), CaptureOutcome::Queued { ref receivers, .. } if receivers == &[0, 2])
        );
        assert!(
            matches!(e.capture(1, udp("10.0.0.2", "255.255.255.255", 8), 7), CaptureOutcome::Queued { ref receivers, .. } if receivers == &[0, 2])
        );
        assert!(
            matches!(e.capture(2, udp("fd00::3", "fd00::1", 8), 8), CaptureOutcome::Queued { ref receivers, .. } if receivers == &[0])
        );
        assert!(
            matches!(e.capture(2, udp("fd00::3", "ff02::1", 8), 8), CaptureOutcome::Queued { ref receivers, .. } if receivers == &[0, 1])
        );
        assert_eq!(
            e.capture(0, udp("10.0.0.1", "10.9.9.9", 8), 9),
            CaptureOutcome::Dropped {
                reason: DropReason::NoRoute,
                copies: 1
            }
        );
        assert_eq!(
            e.capture(0, Frame::plain(vec![0x45, 0, 0]), 9),
            CaptureOutcome::Dropped {
                reason: DropReason::Malformed,
                copies: 1
            }
        );
        // Stamped in window 1 (its BEGIN came late): waits for BEGIN(2).
        e.capture(0, udp("10.0.0.1", "10.0.0.2", 8), 10_000_001);
        let mut begin = NetworkUpdate::default();
        e.fill_begin(0, &mut begin);
        assert!(
            begin.pkt_id.is_empty(),
            "BEGIN(0) carries no capture of window 0"
        );
        e.fill_begin(1, &mut begin);
        assert_eq!(begin.pkt_id.len(), 10);
        assert_eq!(e.queued(), 1, "the capture stamped in window 1 waits");
        assert_eq!(begin.dst_node, vec![1, 1, 2, 0, 2, 0, 2, 0, 0, 1]);
        assert_eq!(
            begin.multicast,
            vec![false, true, true, true, true, true, true, false, true, true],
            "unicast, multicast, subnet and all-ones broadcast"
        );
        assert!(view(&begin).packets().all(|p| p.multicast.is_some()));
        assert_eq!(begin.pkt_time_ns[0], 5);
        assert_eq!(
            begin.dst_ip[0],
            u32::from(std::net::Ipv4Addr::new(10, 0, 0, 2))
        );
        assert_eq!(begin.dst_ip[2], 0, "c has no IPv4 address");
        let out = e.apply_end(1, &view(&pass_through(&begin, 1)));
        assert_eq!(out.len(), 10);
        let nodes: Vec<usize> = out.iter().map(|d| d.node).collect();
        assert_eq!(nodes, vec![1, 1, 2, 0, 2, 0, 2, 0, 0, 1]);
        for d in &out {
            e.delivered(d, true);
        }
        assert!(e.ledger.balances());
        assert_eq!(
            (
                e.ledger.total.captured,
                e.ledger.total.delivered,
                e.ledger.total.in_flight
            ),
            (13, 10, 1)
        );
        let mut begin = NetworkUpdate::default();
        e.fill_begin(2, &mut begin);
        assert_eq!(begin.pkt_time_ns, vec![10_000_001]);
    }

    #[test]
    fn simulator_drops_held_too_long_queue_full_bit_errors_and_shutdown_balance() {
        let mut e = engine(2, true);
        for _ in 0..3 {
            e.capture(0, udp("10.0.0.1", "10.0.0.2", 100), 0);
        }
        assert_eq!(e.ledger.dropped(DropReason::QueueFull), 1);
        let mut begin = NetworkUpdate::default();
        e.fill_begin(1, &mut begin);
        let (a, b) = (begin.pkt_id[0], begin.pkt_id[1]);
        // a: dropped by the simulator (collision); b: released with BER 1 → CRC drop.
        let end = NetworkUpdate {
            clear_pkt_id: vec![b],
            rx_node: vec![1],
            rx_time_ns: vec![25_000_000],
            rx_ip: vec![0],
            clear_src_ip: vec![0],
            clear_dst_ip: vec![0],
            ber: vec![0.5],
            drop_pkt_id: vec![a, 999],
            drop_node: vec![1, 1],
            drop_reason: vec![3, 1],
            ..Default::default()
        };
        assert!(e.apply_end(1, &view(&end)).is_empty());
        assert_eq!(e.ledger.dropped(DropReason::Collision), 1);
        assert_eq!(e.ledger.dropped(DropReason::BitErrors), 1);
        assert_eq!(e.ledger.unknown_releases, 1);
        // Held too long: never released within 2 windows.
        e.capture(0, udp("10.0.0.1", "10.0.0.2", 100), 10_000_000);
        let mut begin = NetworkUpdate::default();
        e.fill_begin(2, &mut begin);
        assert!(e.apply_end(2, &view(&NetworkUpdate::default())).is_empty());
        assert_eq!(e.held_copies(), 1);
        assert!(e.apply_end(3, &view(&NetworkUpdate::default())).is_empty());
        assert_eq!(e.ledger.dropped(DropReason::HeldTooLong), 1);
        e.capture(0, udp("10.0.0.1", "239.1.1.1", 100), 0);
        assert_eq!(e.ledger.total.in_flight, 2);
        e.shutdown(50_000_000);
        assert_eq!(e.ledger.dropped(DropReason::Shutdown), 2);
        assert!(e.ledger.balances());
        assert_eq!(e.ledger.total.in_flight, 0);
    }

    #[test]
    fn copies_captured_after_the_last_window_end_as_after_end_not_shutdown() {
        // The run's last window ends at 60 ms: a copy with the simulator and one queued before
        // that end were in flight (shutdown, at the end); two captured after it, while the
        // programs were being stopped, end as after_end at their capture times.
        let end_ns = 60_000_000;
        let mut e = engine(16, true);
        e.capture(0, udp("10.0.0.1", "10.0.0.2", 10), 45_000_000);
        e.fill_begin(5, &mut NetworkUpdate::default());
        e.capture(0, udp("10.0.0.1", "10.0.0.2", 10), 55_000_000);
        e.capture(0, udp("10.0.0.1", "239.255.0.1", 10), 60_000_000);
        e.capture(1, udp("10.0.0.2", "10.0.0.1", 10), 60_208_000);
        e.shutdown(end_ns);
        assert_eq!(e.ledger.dropped(DropReason::Shutdown), 2);
        assert_eq!(
            e.ledger.dropped(DropReason::AfterEnd),
            3,
            "a multicast: 2 copies"
        );
        assert!(e.ledger.balances());
        assert_eq!(e.ledger.total.in_flight, 0);
        let mut ends = Vec::new();
        e.ends.drain_into(&mut ends);
        let mut seen: Vec<(u64, Fate, u64)> = ends
            .iter()
            .map(|c| (c.captured_ns, c.fate, c.end_ns))
            .collect();
        seen.sort_by_key(|s| (s.0, s.2));
        let shutdown = Fate::Dropped(DropReason::Shutdown);
        let after = Fate::Dropped(DropReason::AfterEnd);
        assert_eq!(
            seen,
            vec![
                (45_000_000, shutdown, end_ns),
                (55_000_000, shutdown, end_ns),
                (60_000_000, after, 60_000_000),
                (60_000_000, after, 60_000_000),
                (60_208_000, after, 60_208_000),
            ]
        );
        let s = e.summary();
        assert_eq!((s.drops["shutdown"], s.drops["after end"]), (2, 3));
        assert!(s.balanced);
    }

    #[test]
    fn every_copy_that_ends_leaves_one_copy_end_matching_the_per_link_ledger() {
        let mut e = engine(2, true);
        e.capture(0, udp("10.0.0.1", "10.0.0.2", 100), 5);
        e.capture(0, udp("10.0.0.1", "239.255.0.1", 50), 6);
        assert_eq!(
            e.capture(0, udp("10.0.0.1", "10.0.0.2", 10), 7),
            CaptureOutcome::Dropped {
                reason: DropReason::QueueFull,
                copies: 1
            }
        );
        e.capture(1, Frame::plain(vec![0x45, 0, 0]), 8);
        let mut begin = NetworkUpdate::default();
        e.fill_begin(3, &mut begin);
        let (unicast, multicast) = (begin.pkt_id[0], begin.pkt_id[1]);
        let end = NetworkUpdate {
            clear_pkt_id: vec![unicast, multicast],
            rx_node: vec![1, 2],
            rx_time_ns: vec![31_000_000, 32_000_000],
            rx_ip: vec![0, 0],
            clear_src_ip: vec![0, 0],
            clear_dst_ip: vec![0, 0],
            ber: vec![0.0, 0.0],
            drop_pkt_id: vec![multicast],
            drop_node: vec![1],
            drop_reason: vec![3],
            ..Default::default()
        };
        for d in e.apply_end(3, &view(&end)) {
            e.delivered(&d, true);
        }
        let mut ends = Vec::new();
        e.ends.drain_into(&mut ends);
        assert!(e.ledger.balances());
        assert_eq!(
            ends.len() as u64,
            e.ledger.total.captured,
            "one end per copy: {ends:?}"
        );
        let ip = |n: usize| n + 20;
        let find = |dst: Option<usize>, bytes: usize| {
            ends.iter()
                .find(|x| x.dst == dst && x.bytes as usize == bytes)
                .copied()
                .unwrap()
        };
        let malformed = find(None, 3);
        assert_eq!(
            (
                malformed.src,
                malformed.fate,
                malformed.captured_ns,
                malformed.end_ns
            ),
            (1, Fate::Dropped(DropReason::Malformed), 8, 8)
        );
        let full = find(Some(1), ip(10));
        assert_eq!(
            (full.fate, full.end_ns),
            (Fate::Dropped(DropReason::QueueFull), 7)
        );
        let collided = find(Some(1), ip(50));
        assert_eq!(
            (collided.fate, collided.captured_ns, collided.end_ns),
            (Fate::Dropped(DropReason::Collision), 6, 30_000_000)
        );
        let delivered = find(Some(2), ip(50));
        assert_eq!(
            (
                delivered.fate,
                delivered.captured_ns,
                delivered.end_ns,
                delivered.corrupted
            ),
            (Fate::Delivered, 6, 32_000_000, false)
        );
        for (&(src, dst), c) in &e.ledger.links {
            let bytes: u64 = ends
                .iter()
                .filter(|x| (x.src, x.dst) == (src, dst) && x.fate == Fate::Delivered)
                .map(|x| x.bytes as u64)
                .sum();
            assert_eq!(bytes, c.delivered_bytes, "link {src} -> {dst:?}");
            assert_eq!(
                ends.iter().filter(|x| (x.src, x.dst) == (src, dst)).count() as u64,
                c.captured - c.in_flight
            );
        }
        let s = e.summary();
        assert_eq!(
            s.links
                .iter()
                .map(|l| (l.src.as_str(), l.dst.as_deref()))
                .collect::<Vec<_>>(),
            vec![("a", Some("b")), ("a", Some("c")), ("b", None)]
        );
        assert_eq!(s.links[0].delivered_bytes, ip(100) as u64);
    }

    #[test]
    fn without_crc_corrupted_bytes_are_delivered_at_the_chosen_time() {
        let mut e = engine(8, false);
        e.capture(0, udp("10.0.0.1", "10.0.0.2", 1000), 0);
        let mut begin = NetworkUpdate::default();
        e.fill_begin(3, &mut begin);
        let mut end = pass_through(&begin, 3);
        end.ber = vec![0.01];
        end.rx_time_ns = vec![34_000_000];
        let out = e.apply_end(3, &view(&end));
        assert_eq!(out.len(), 1);
        assert!(out[0].corrupted);
        assert_eq!(out[0].t_ns, 34_000_000);
        let orig = udp("10.0.0.1", "10.0.0.2", 1000);
        let diff: u32 = orig
            .ip()
            .iter()
            .zip(out[0].frame.ip())
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        assert!(
            (20..=150).contains(&diff),
            "about 1% of 8224 bits flipped: {diff}"
        );
    }

    #[test]
    fn bit_flips_follow_the_rate() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut buf = vec![0u8; 125_000];
        let n = flip_bits(&mut buf, 1e-3, &mut rng);
        assert!((900..1100).contains(&n), "{n}");
        assert_eq!(
            buf.iter().map(|b| b.count_ones() as usize).sum::<usize>(),
            n
        );
        assert_eq!(flip_bits(&mut buf, 0.0, &mut rng), 0);
    }
}
