//! The TUN interface inside a vehicle's namespace: created there (on a thread that entered the
//! namespace), so every vehicle's interface can have the same name, and configured with `ip`:
//! the vehicle's IPv4/IPv6 addresses (IPv6 without duplicate address detection, so they are
//! usable at once), `multicast on`, a transmit queue of [`TX_QUEUE_LEN`], up, default routes
//! and the multicast ranges 224.0.0.0/4 and ff00::/8 through it. The coordinator holds the
//! file descriptor; the interface goes away with it. In a namespace the run attached to, an
//! interface, address or route of the same kind already there is refused, never shared, and
//! the interface is taken out at the end ([`remove`]).
//!
//! Every interface has the kernel's offloads (TCP and UDP segmentation, checksums left to
//! finish), so the kernel hands over bursts of up to 64 KiB, each behind a virtio-net header,
//! and takes them back the same way. With `network.offload` a burst is one packet for the
//! simulator. Without it, [`Reader`] splits each burst into the packets a network card would
//! put on the wire (checksums finished), so the simulator, the ledger and the pcaps see every
//! one with its own fate and time; and [`Writer`] hands the receiving kernel consecutive TCP
//! segments of a flow that are due at the same instant as one coalesced segment, as a card's
//! GRO would on a real receiver, and consecutive UDP datagrams of a flow as one UDP GSO
//! datagram where the kernel takes those (USO, Linux ≥ 6.2), which it splits again before any
//! socket sees them. The kernel's per-packet work is then done once per burst, on both sides.
//! Splitting and coalescing are tun-rs's own (`recv_multiple` and `handle_gro`, wireguard-go's;
//! the latter exported but hidden from its documentation, so the version in Cargo.lock is the
//! one this was checked against). A coalesced UDP datagram says nothing about which datagrams
//! it took; [`Writer`] checks them byte for byte against its payload. A long burst becomes its
//! frame in the very buffer it was read into, lent from a [`BurstPool`] until its last copy is
//! done, so that on its way it is copied only by the kernel: out of the sender's TUN and into
//! the receiver's. A packet from elsewhere (a capture agent's, a view into the message that
//! brought it) has no header: [`Writer`] puts an all-zero one in front of it where it copies it
//! anyway, into a coalesced segment, or else into a buffer of its own.

use crate::io::os::netns::{ip_in, ip_output, run_in, VehicleNs};
use crate::net::traffic::{Frame, FrameData};
use crate::wire::{
    self,
    ip::{TcpSpan, UdpSpan},
};
use anyhow::{bail, Context};
use ipnet::IpNet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;
use tun_rs::{AsyncDevice, DeviceBuilder};

/// Name of the interface in every vehicle's namespace.
pub const IFNAME: &str = "cosim0";
/// Packets (or bursts) a TUN holds between the sending vehicle and the coordinator's read: the
/// transmit ring of a network card (they hold 256–4096). The kernel's default for a TUN, 500,
/// overflows whenever the reader is off the CPU for a moment under a small-packet flood, and
/// what overflows is dropped before capture, outside the ledger (the interface's `TX dropped`).
/// Queued packets are charged to the sending sockets, whose buffers bound their memory.
pub const TX_QUEUE_LEN: u32 = 4096;
/// Length of the virtio-net header in front of each packet with offloads.
pub const VNET_HDR_LEN: usize = tun_rs::VIRTIO_NET_HDR_LEN;

/// Creates and configures the TUN interface in `ns`; needs a tokio runtime. An interface
/// named [`IFNAME`], one of the addresses, or a route the run adds (the addresses' networks,
/// the multicast ranges, the default routes) already in the namespace is an error naming it:
/// the run never shares them with what else lives there.
pub fn open(ns: &VehicleNs, addresses: &[IpNet]) -> anyhow::Result<AsyncDevice> {
    let what = || format!("vehicle {}: {}", ns.vehicle(), ns.what());
    already_there(ns, addresses).with_context(what)?;
    let dev = run_in(ns, move || {
        DeviceBuilder::new().name(IFNAME).offload(true).build_sync()
    })
    .with_context(|| format!("cannot create TUN {IFNAME} in {}", what()))?;
    for net in addresses {
        let cidr = net.to_string();
        let mut args = vec!["addr", "add", &cidr, "dev", IFNAME];
        if net.addr().is_ipv6() {
            args.push("nodad");
        }
        ip_in(ns, &args)?;
    }
    let queue = TX_QUEUE_LEN.to_string();
    ip_in(
        ns,
        &[
            "link",
            "set",
            IFNAME,
            "multicast",
            "on",
            "txqueuelen",
            &queue,
            "up",
        ],
    )?;
    ip_in(ns, &["route", "add", "224.0.0.0/4", "dev", IFNAME])?;
    ip_in(ns, &["route", "add", "255.255.255.255/32", "dev", IFNAME])?;
    let _ = ip_in(ns, &["route", "add", "default", "dev", IFNAME]);
    // ff00::/8 sits in the local table once the interface is up; a main-table route makes
    // sure it is chosen without a source-specific configuration.
    let _ = ip_in(ns, &["-6", "route", "add", "ff00::/8", "dev", IFNAME]);
    let _ = ip_in(ns, &["-6", "route", "add", "default", "dev", IFNAME]);
    Ok(AsyncDevice::new(dev)?)
}

/// The index of the interface [`IFNAME`] in `ns`, if it has one.
pub fn index_in(ns: &VehicleNs) -> Option<u64> {
    let out = ip_output(ns, &["-j", "link", "show", "dev", IFNAME]).ok()?;
    let links: serde_json::Value = serde_json::from_str(&out).ok()?;
    links.get(0)?["ifindex"].as_u64()
}

/// Removes the interface [`open`] made in `ns` (index `index`) if it is still there. The kernel
/// removes a TUN when its last file descriptor closes; this makes it so at once, in a namespace
/// that outlives the run, while a reader being cancelled may still hold one for a moment. An
/// interface of that name with another index is not the run's and stays.
pub fn remove(ns: &VehicleNs, index: u64) {
    if index_in(ns) == Some(index) {
        if let Err(e) = ip_in(ns, &["link", "del", "dev", IFNAME]) {
            if index_in(ns) == Some(index) {
                tracing::warn!("{e:#}");
            }
        }
    }
}

/// The routes [`open`] adds besides the addresses' own networks.
const ROUTES: [&str; 5] = [
    "224.0.0.0/4",
    "255.255.255.255/32",
    "0.0.0.0/0",
    "ff00::/8",
    "::/0",
];

/// An error naming the first of [`IFNAME`], `addresses` and the routes [`open`] adds that `ns`
/// already has (read with `ip -j`).
fn already_there(ns: &VehicleNs, addresses: &[IpNet]) -> anyhow::Result<()> {
    let links: serde_json::Value = serde_json::from_str(&ip_output(ns, &["-j", "addr", "show"])?)
        .context("cannot read the output of ip -j addr show")?;
    for link in links.as_array().into_iter().flatten() {
        let name = link["ifname"].as_str().unwrap_or("?");
        if name == IFNAME {
            bail!("an interface {IFNAME} is there already (is another run attached to it?)");
        }
        for info in link["addr_info"].as_array().into_iter().flatten() {
            let Some(local) = info["local"]
                .as_str()
                .and_then(|a| a.parse::<IpAddr>().ok())
            else {
                continue;
            };
            if let Some(a) = addresses.iter().find(|a| a.addr() == local) {
                bail!("address {} is there already, on interface {name}", a.addr());
            }
        }
    }
    let mut ours: Vec<IpNet> = ROUTES.iter().filter_map(|r| r.parse().ok()).collect();
    ours.extend(
        addresses
            .iter()
            .filter(|a| a.prefix_len() < a.max_prefix_len())
            .map(IpNet::trunc),
    );
    for family in ["-4", "-6"] {
        let out = ip_output(ns, &["-j", family, "route", "show", "table", "main"])?;
        let routes: serde_json::Value = serde_json::from_str(&out)
            .with_context(|| format!("cannot read the output of ip -j {family} route show"))?;
        for r in routes.as_array().into_iter().flatten() {
            let Some(dst) = r["dst"].as_str() else {
                continue;
            };
            let net = match dst {
                "default" if family == "-4" => "0.0.0.0/0".parse().ok(),
                "default" => "::/0".parse().ok(),
                d if d.contains('/') => d.parse::<IpNet>().ok(),
                d => d.parse::<IpAddr>().ok().map(IpNet::from),
            };
            if net.is_some_and(|n| ours.contains(&n)) {
                let dev = r["dev"].as_str().unwrap_or("?");
                bail!("a route to {dst} (dev {dev}) is there already; the run routes it through its {IFNAME}: give the namespace no route of its own there (a container: --network none)");
            }
        }
    }
    Ok(())
}

/// Packets one write call takes at most (a coalesced segment holds up to 45 full-size ones).
pub const BATCH: usize = 64;
/// Room for the largest coalesced segment: a 64 KiB IP packet behind its virtio header.
const COALESCED_CAPACITY: usize = 65_535 + 2 * VNET_HDR_LEN;

/// Room for a burst as the kernel hands it over: the largest IP packet behind a virtio header.
const BURST: usize = 65_535 + VNET_HDR_LEN;
/// A burst at least this long becomes a frame in the buffer it was read into; a shorter one
/// (an ACK, a lone datagram) is copied into a frame of its own size, and the buffer is read into
/// again. A frame then never holds more than 4 times its bytes.
const KEEP_FROM: usize = BURST / 4;
/// Idle burst buffers [`BurstPool`] keeps (16 MiB).
const POOL_LIMIT: usize = 256;

/// Burst buffers shared by the readers of all TUNs. A burst becomes a frame in the buffer it was
/// read into, and the buffer comes back here when the frame's last copy is done (delivered or
/// dropped): reading a burst neither copies it again nor allocates, and the allocator never
/// hands 64 KiB blocks back to the kernel only to fault them in again (with glibc: 74 000 page
/// faults a second in a 14 Gbit/s TCP flow, against 600). Holds at most [`POOL_LIMIT`] idle
/// buffers; what comes back beyond that is freed.
#[derive(Default)]
pub struct BurstPool {
    free: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl BurstPool {
    fn get(&self) -> Vec<u8> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        free.pop().unwrap_or_else(|| vec![0; BURST])
    }

    fn put(&self, buf: Vec<u8>) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.len() < POOL_LIMIT {
            free.push(buf);
        }
    }

    /// Idle buffers held.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// A burst in its pool's buffer; gives the buffer back when dropped.
struct Burst {
    buf: Vec<u8>,
    len: usize,
    pool: Arc<BurstPool>,
}

impl AsRef<[u8]> for Burst {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.pool.put(std::mem::take(&mut self.buf));
    }
}

/// Reads a TUN: each burst the kernel hands over as it is, or split into its wire packets
/// (module docs).
pub struct Reader {
    /// The next burst goes here (a buffer of [`BURST`] bytes from `pool`).
    raw: Vec<u8>,
    pool: Arc<BurstPool>,
    /// Splitting: [`IDEAL_BATCH_SIZE`](tun_rs::IDEAL_BATCH_SIZE) slots, one per packet of a
    /// burst, each the MTU behind a virtio header that stays all zero. Empty when bursts are
    /// read as they are.
    slots: Vec<Vec<u8>>,
    sizes: Vec<usize>,
    count: usize,
}

impl Reader {
    /// Splitting needs the interface's MTU: no wire packet is larger. (A burst of packets
    /// larger than the MTU at the start, after the MTU was raised in the namespace, cannot be
    /// split: the read fails and the burst is lost before capture, logged at debug level.)
    pub fn new(split: bool, mtu: u16, pool: Arc<BurstPool>) -> Reader {
        let batch = if split { tun_rs::IDEAL_BATCH_SIZE } else { 1 };
        Reader {
            raw: pool.get(),
            pool,
            slots: if split {
                vec![vec![0; VNET_HDR_LEN + usize::from(mtu)]; batch]
            } else {
                Vec::new()
            },
            sizes: vec![0; batch],
            count: 0,
        }
    }

    /// Waits for the next burst; how many packets it gave.
    pub async fn read(&mut self, dev: &AsyncDevice) -> std::io::Result<usize> {
        self.count = 0;
        let n = if self.slots.is_empty() {
            self.sizes[0] = dev.recv(&mut self.raw).await?;
            1
        } else {
            dev.recv_multiple(
                &mut self.raw,
                &mut self.slots,
                &mut self.sizes,
                VNET_HDR_LEN,
            )
            .await?
        };
        self.count = n.min(self.sizes.len());
        Ok(self.count)
    }

    /// The next burst if one is already waiting (`WouldBlock` if not), as [`Self::read`].
    pub fn try_read(&mut self, dev: &AsyncDevice) -> std::io::Result<usize> {
        self.count = 0;
        let n = if self.slots.is_empty() {
            self.sizes[0] = dev.try_recv(&mut self.raw)?;
            1
        } else {
            dev.try_recv_multiple(
                &mut self.raw,
                &mut self.slots,
                &mut self.sizes,
                VNET_HDR_LEN,
            )?
        };
        self.count = n.min(self.sizes.len());
        Ok(self.count)
    }

    /// Packet `i` of the last read: its virtio header (all zero when split) and the IP packet.
    pub fn packet(&self, i: usize) -> &[u8] {
        if i >= self.count {
            return &[];
        }
        match self.slots.get(i) {
            Some(slot) => &slot[..(VNET_HDR_LEN + self.sizes[i]).min(slot.len())],
            None => &self.raw[..self.sizes[0].min(BURST)],
        }
    }

    /// Moves the packets of the last read to the back of `out` as frames (a long burst in the
    /// buffer it was read into, [`KEEP_FROM`]); [`Self::packet`] has none after.
    pub fn take_frames(&mut self, out: &mut Vec<Frame>) {
        let hdr_len = |len: usize| VNET_HDR_LEN.min(len);
        if self.slots.is_empty() && self.count == 1 && self.sizes[0] >= KEEP_FROM {
            let len = self.sizes[0].min(BURST);
            let buf = std::mem::replace(&mut self.raw, self.pool.get());
            let pool = self.pool.clone();
            out.push(Frame {
                data: FrameData::Held(Arc::new(Burst { buf, len, pool })),
                hdr_len: hdr_len(len),
            });
        } else {
            out.extend((0..self.count).map(|i| {
                let bytes = self.packet(i);
                Frame {
                    data: bytes.into(),
                    hdr_len: hdr_len(bytes.len()),
                }
            }));
        }
        self.count = 0;
    }
}

/// One packet for [`Writer::write`]: its virtio header and the IP packet behind it, or a bare
/// IP packet (one from elsewhere, a capture agent's), which goes in behind an all-zero header.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    pub bytes: &'a [u8],
    /// [`VNET_HDR_LEN`]: `bytes` start with the virtio header; 0: `bytes` are the IP packet.
    pub hdr_len: usize,
    /// May be coalesced with others: its bytes as sent (not corrupted by the simulator: a
    /// receiver's GRO would not merge those). Only a single packet is, not a burst: one read
    /// without offloads (all-zero header), or with them one whose header asks only for its
    /// checksum to be finished ([`lone_packet_header`]).
    pub may_coalesce: bool,
}

impl Outgoing<'_> {
    fn hdr(&self) -> &[u8] {
        &self.bytes[..self.hdr_len.min(self.bytes.len())]
    }

    fn ip(&self) -> &[u8] {
        &self.bytes[self.hdr_len.min(self.bytes.len())..]
    }
}

/// What [`Writer::write`] takes: anything seen as an [`Outgoing`] packet, such as a delivery,
/// so that the release writes what fell due without first listing it again.
pub trait AsOutgoing {
    fn outgoing(&self) -> Outgoing<'_>;
}

impl AsOutgoing for Outgoing<'_> {
    fn outgoing(&self) -> Outgoing<'_> {
        *self
    }
}

/// `hdr` is a virtio header of a single packet (no GSO type): all zero (or none: a bare
/// packet), or asking only for the checksum to be finished ([`F_NEEDS_CSUM`]), as a TUN with
/// offloads hands over a packet that is not a burst. Such a packet is coalesced with its
/// checksum finished.
fn lone_packet_header(hdr: &[u8]) -> bool {
    hdr.is_empty() || hdr.len() == VNET_HDR_LEN && hdr[1] == GSO_NONE && hdr[0] & !F_NEEDS_CSUM == 0
}

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM` and `VIRTIO_NET_HDR_GSO_NONE` (linux/virtio_net.h; tun-rs
/// does not export them).
const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;

/// Writes packets into TUNs, coalescing consecutive TCP segments of a flow, and consecutive
/// UDP datagrams of a flow where the TUN takes them (module docs). Keeps its buffers between
/// calls: [`BATCH`] of 64 KiB (4.2 MB), allocated once, since tun-rs only coalesces into a
/// buffer with room for the largest segment.
#[derive(Default)]
pub struct Writer {
    /// The candidates' bytes; after [`Self::plan`], a coalesced segment at its first packet's.
    bufs: Vec<Vec<u8>>,
    /// The chunk index of each candidate (`bufs[j]` is packet `candidates[j]`'s).
    candidates: Vec<usize>,
    /// Per packet of the chunk: what goes into the TUN for it.
    carrier: Vec<Carrier>,
    /// The coalesced TCP segments: buffer index and the stretch of its flow it carries.
    segments: Vec<(usize, TcpSpan)>,
    /// The coalesced UDP datagrams being attributed: buffer index, the flow, and the stretch
    /// of the buffer's payload not yet attributed to a datagram of the chunk.
    datagrams: Vec<(usize, UdpSpan, std::ops::Range<usize>)>,
    gro: tun_rs::GROTable,
    /// The TUN takes coalesced UDP datagrams (the kernel's USO, [`AsyncDevice::udp_gso`]).
    udp: bool,
    /// A bare packet written as it is, behind its all-zero header.
    bare: Vec<u8>,
}

/// How one packet of a chunk reaches the TUN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// Its own bytes, as they are.
    Itself,
    /// `bufs[j]`: a coalesced segment holding it and the packets after it that name it.
    Head(usize),
    /// Inside the segment written for packet `i` of the chunk (an earlier one).
    In(usize),
}

impl Writer {
    /// A writer for TUNs that take coalesced UDP datagrams (`udp`) or only TCP segments.
    pub fn new(udp: bool) -> Writer {
        Writer {
            udp,
            ..Writer::default()
        }
    }

    /// Writes `packets` into `dev` in their order (a coalesced one with the segment carrying
    /// it) and sets `ok[i]` to whether packet `i` went in (a coalesced one: whether the
    /// segment that carried it did) and `at[i]` to the instant its write returned (a coalesced
    /// one: its carrier's). `ok` and `at` are as long as `packets`.
    pub fn write<P: AsOutgoing>(
        &mut self,
        dev: &AsyncDevice,
        packets: &[P],
        ok: &mut [bool],
        at: &mut [Instant],
    ) {
        self.write_with(packets, ok, at, |bytes| write_one(dev, bytes));
    }

    /// [`Writer::write`] with `put` writing one packet (its virtio-net header first).
    fn write_with<P: AsOutgoing>(
        &mut self,
        packets: &[P],
        ok: &mut [bool],
        at: &mut [Instant],
        mut put: impl FnMut(&[u8]) -> bool,
    ) {
        let chunks = packets.chunks(BATCH).zip(ok.chunks_mut(BATCH));
        for ((chunk, ok), at) in chunks.zip(at.chunks_mut(BATCH)) {
            self.plan(chunk);
            for (i, p) in chunk.iter().enumerate() {
                let (went, when) = match self.carrier[i] {
                    Carrier::Itself => {
                        let o = p.outgoing();
                        let went = if o.hdr_len == VNET_HDR_LEN {
                            put(o.bytes)
                        } else {
                            self.bare.clear();
                            self.bare.resize(VNET_HDR_LEN, 0);
                            self.bare.extend_from_slice(o.ip());
                            put(&self.bare)
                        };
                        (went, Instant::now())
                    }
                    Carrier::Head(j) => (put(&self.bufs[j]), Instant::now()),
                    Carrier::In(h) => (ok[h], at[h]),
                };
                (ok[i], at[i]) = (went, when);
            }
        }
    }

    /// Decides how each packet of `chunk` (at most [`BATCH`]) goes in; no I/O.
    pub fn plan<P: AsOutgoing>(&mut self, chunk: &[P]) -> &[Carrier] {
        self.carrier.clear();
        self.carrier.resize(chunk.len(), Carrier::Itself);
        self.candidates.clear();
        // Only TCP segments and UDP datagrams with data are ever coalesced; the rest is not
        // even copied.
        let udp = self.udp;
        self.candidates.extend((0..chunk.len()).filter(|&i| {
            let o = chunk[i].outgoing();
            let ip = o.ip();
            o.may_coalesce
                && lone_packet_header(o.hdr())
                && (TcpSpan::of(ip).is_some_and(|s| s.len > 0)
                    || udp && UdpSpan::of(ip).is_some_and(|s| s.len > 0))
        }));
        let n = self.candidates.len();
        if n < 2 || chunk.len() > BATCH {
            return &self.carrier;
        }
        if self.bufs.len() < n {
            self.bufs.resize_with(n, Vec::new);
        }
        for (b, &i) in self.bufs.iter_mut().zip(&self.candidates) {
            let o = chunk[i].outgoing();
            b.clear();
            b.reserve(COALESCED_CAPACITY);
            b.resize(VNET_HDR_LEN - o.hdr().len(), 0);
            b.extend_from_slice(o.bytes);
            if b[0] & F_NEEDS_CSUM != 0 {
                // The GRO takes whole checksums; the coalesced packet asks for them again.
                wire::ip::set_transport_checksum(&mut b[VNET_HDR_LEN..]);
                b[..VNET_HDR_LEN].fill(0);
            }
        }
        let bufs = &mut self.bufs[..n];
        let gro = &mut self.gro;
        let planned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            gro.apply_gro(bufs, VNET_HDR_LEN, udp)
        }));
        if !matches!(planned, Ok(Ok(()))) || !self.attribute(chunk) {
            // Written one by one, as they came.
            self.carrier.fill(Carrier::Itself);
        }
        &self.carrier
    }

    /// After the GRO: a coalesced segment sits at its first packet's index, its header saying
    /// so (a GSO type); every other candidate either went into one of them or is written as it
    /// is. A TCP segment went into the one whose stretch of the flow holds it; a UDP datagram
    /// into its flow's coalesced datagram, whose payload is the payloads of the flow's
    /// datagrams it took, one after the other, each checked byte for byte. `false` if the
    /// coalesced datagrams are not exactly made of the chunk's (then nothing is coalesced).
    fn attribute<P: AsOutgoing>(&mut self, chunk: &[P]) -> bool {
        let n = self.candidates.len();
        self.segments.clear();
        self.datagrams.clear();
        self.segments.extend((0..n).filter_map(|j| {
            let b = &self.bufs[j];
            if b[1] != tun_rs::VIRTIO_NET_HDR_GSO_TCPV4 && b[1] != tun_rs::VIRTIO_NET_HDR_GSO_TCPV6
            {
                return None;
            }
            Some((j, TcpSpan::of(&b[VNET_HDR_LEN..])?))
        }));
        for (j, &i) in self.candidates.iter().enumerate() {
            let o = chunk[i].outgoing();
            let ip = o.ip();
            if let Some(mine) = TcpSpan::of(ip) {
                if self.segments.iter().any(|&(h, _)| h == j) {
                    self.carrier[i] = Carrier::Head(j);
                    continue;
                }
                let host = self.segments.iter().find(|(_, s)| mine.within(s));
                self.carrier[i] = match host {
                    Some(&(h, _)) if self.candidates[h] < i => Carrier::In(self.candidates[h]),
                    _ => Carrier::Itself,
                };
                continue;
            }
            let Some(mine) = UdpSpan::of(ip) else {
                return false;
            };
            let open = self
                .datagrams
                .iter()
                .position(|(_, flow, rest)| flow.same_flow(&mine) && !rest.is_empty());
            if self.bufs[j][1] == tun_rs::VIRTIO_NET_HDR_GSO_UDP_L4 {
                // A new coalesced datagram while the flow's last one is not yet filled is not
                // what the GRO makes.
                let Some(whole) = UdpSpan::of(&self.bufs[j][VNET_HDR_LEN..]) else {
                    return false;
                };
                if open.is_some() || whole.len < mine.len || !whole.same_flow(&mine) {
                    return false;
                }
                let rest = whole.at + mine.len..whole.at + whole.len;
                self.datagrams.push((j, mine, rest));
                self.carrier[i] = Carrier::Head(j);
            } else if let Some(o) = open {
                let (h, _, rest) = &mut self.datagrams[o];
                let taken = rest.start..rest.start + mine.len;
                let payload = &ip[mine.at..mine.at + mine.len];
                let coalesced = self.bufs[*h]
                    .get(VNET_HDR_LEN..)
                    .and_then(|b| b.get(taken.clone()));
                if taken.end > rest.end || coalesced != Some(payload) {
                    return false;
                }
                rest.start = taken.end;
                self.carrier[i] = Carrier::In(self.candidates[*h]);
            }
        }
        self.datagrams.iter().all(|(_, _, rest)| rest.is_empty())
    }
}

/// One packet into a TUN; a full device queue is waited out for at most 10 ms.
fn write_one(dev: &AsyncDevice, packet: &[u8]) -> bool {
    for _ in 0..100 {
        match dev.try_send(packet) {
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_micros(100))
            }
            Err(_) => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ip::{tcp_segment, udp_datagram};

    #[test]
    fn lone_packets_read_with_offloads_coalesce_with_their_checksums_finished_and_bursts_do_not() {
        // As a TUN with offloads hands them over: the header asks for the checksum to be
        // finished (from byte 20, field at 6), the field holds only a partial sum.
        let partial = |mut p: Vec<u8>| {
            p[..VNET_HDR_LEN].copy_from_slice(&[F_NEEDS_CSUM, 0, 0, 0, 0, 0, 20, 0, 6, 0]);
            p[VNET_HDR_LEN + 26..VNET_HDR_LEN + 28].copy_from_slice(&[0x12, 0x34]);
            p
        };
        let a: Vec<Vec<u8>> = (0..3u8)
            .map(|k| partial(datagram(4000, &[k; 36])))
            .collect();
        let mut burst = datagram(4000, &[7; 72]);
        burst[1] = tun_rs::VIRTIO_NET_HDR_GSO_UDP_L4;
        let mut packets: Vec<Outgoing> = a.iter().map(|p| out(p, true)).collect();
        packets.push(out(&burst, true));
        let mut w = Writer::new(true);
        let carrier = w.plan(&packets).to_vec();
        assert_eq!(
            carrier,
            [
                Carrier::Head(0),
                Carrier::In(0),
                Carrier::In(0),
                Carrier::Itself
            ]
        );
        let seg = &w.bufs[0];
        assert_eq!(seg[1], tun_rs::VIRTIO_NET_HDR_GSO_UDP_L4);
        let payload: Vec<u8> = (0..3u8).flat_map(|k| [k; 36]).collect();
        assert_eq!(&seg[VNET_HDR_LEN + 28..], &payload[..]);
        // The coalesced datagram asks for its checksums (over each datagram) again.
        assert_eq!(seg[0], F_NEEDS_CSUM);
        // A header asking for anything else keeps its packet out.
        let mut valid = a[0].clone();
        valid[0] = 2; // VIRTIO_NET_HDR_F_DATA_VALID
        let packets = [out(&valid, true), out(&a[1], true)];
        assert_eq!(w.plan(&packets), [Carrier::Itself, Carrier::Itself]);
    }

    #[test]
    fn a_burst_buffer_comes_back_when_the_last_copy_is_done_and_the_pool_is_bounded() {
        let pool = Arc::new(BurstPool::default());
        let mut reader = Reader::new(false, 1500, pool.clone());
        // A long burst as the last read: it becomes a frame in the very buffer.
        reader.raw[..4].copy_from_slice(&[1, 2, 3, 4]);
        let raw = reader.raw.as_ptr();
        reader.sizes[0] = KEEP_FROM;
        reader.count = 1;
        let mut frames = Vec::new();
        reader.take_frames(&mut frames);
        assert_eq!(reader.packet(0), &[] as &[u8]);
        let copy = frames[0].clone();
        assert_eq!(copy.data.as_ptr(), raw);
        assert_eq!(
            (copy.data.len(), &copy.data[..4]),
            (KEEP_FROM, &[1, 2, 3, 4][..])
        );
        assert_ne!(reader.raw.as_ptr(), raw, "the next read goes elsewhere");
        drop(frames);
        assert_eq!(pool.idle(), 0, "a copy still holds it");
        drop(copy);
        assert_eq!(pool.idle(), 1);
        // The next buffer taken is that one.
        let again = pool.get();
        assert_eq!(again.as_ptr(), raw);
        // A short one is copied, and the read buffer stays.
        reader.sizes[0] = 60;
        reader.count = 1;
        let raw = reader.raw.as_ptr();
        let mut frames = Vec::new();
        reader.take_frames(&mut frames);
        assert_eq!(
            (frames[0].data.len(), frames[0].hdr_len),
            (60, VNET_HDR_LEN)
        );
        assert_ne!(frames[0].data.as_ptr(), raw);
        assert_eq!(reader.raw.as_ptr(), raw);
        // At most POOL_LIMIT idle buffers are kept.
        for _ in 0..POOL_LIMIT + 3 {
            pool.put(vec![0; 8]);
        }
        assert_eq!(pool.idle(), POOL_LIMIT);
    }

    /// A TCP segment to 10.0.0.2:`port` behind an all-zero virtio header, checksummed as the
    /// kernel hands it over.
    fn segment(port: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; VNET_HDR_LEN];
        v.extend_from_slice(&tcp_segment(port, seq, 1, payload));
        v
    }

    /// `n` consecutive segments of `mss` bytes from port 5201 from sequence number 1, and their
    /// payloads as one.
    fn flow(mss: usize, n: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
        let data: Vec<u8> = (0..n * mss).map(|i| (i % 251) as u8).collect();
        let flow = (0..n)
            .map(|k| segment(5201, 1 + (k * mss) as u32, &data[k * mss..(k + 1) * mss]))
            .collect();
        (data, flow)
    }

    /// A UDP datagram from port `port` behind an all-zero virtio header.
    fn datagram(port: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; VNET_HDR_LEN];
        v.extend_from_slice(&udp_datagram(port, payload));
        v
    }

    fn out(bytes: &[u8], may_coalesce: bool) -> Outgoing<'_> {
        Outgoing {
            bytes,
            hdr_len: VNET_HDR_LEN,
            may_coalesce,
        }
    }

    #[test]
    fn consecutive_segments_of_a_flow_go_in_as_one_and_each_knows_its_carrier() {
        let mss = 1000;
        let (data, flow) = flow(mss, 5);
        let other_port = segment(5202, 1, &data[..mss]);
        let mut corrupted = segment(5201, 1 + 5 * mss as u32, &data[..mss]);
        corrupted[VNET_HDR_LEN + 40] ^= 1;
        // A gap: the byte after the fifth segment is skipped.
        let after_gap = segment(5201, 2 + 6 * mss as u32, &data[..mss]);
        let mut packets: Vec<Outgoing> = flow.iter().map(|p| out(p, true)).collect();
        packets.push(out(&other_port, true));
        packets.push(out(&corrupted, false));
        packets.push(out(&after_gap, true));

        let mut w = Writer::default();
        let carrier = w.plan(&packets).to_vec();
        let head = Carrier::Head(0);
        assert_eq!(
            carrier,
            [
                head,
                Carrier::In(0),
                Carrier::In(0),
                Carrier::In(0),
                Carrier::In(0),
                Carrier::Itself,
                Carrier::Itself,
                Carrier::Itself
            ]
        );
        // The coalesced segment: a TCPv4 GSO header and the five payloads in order.
        let seg = &w.bufs[0];
        assert_eq!(seg[1], 1, "GSO TCPv4");
        assert_eq!(u16::from_le_bytes([seg[4], seg[5]]), mss as u16, "gso_size");
        let span = TcpSpan::of(&seg[VNET_HDR_LEN..]).unwrap();
        assert_eq!((span.seq, span.len), (1, 5 * mss as u32));
        assert_eq!(&seg[VNET_HDR_LEN + 40..], &data[..]);

        // A segment whose checksum is wrong is never coalesced (it would be dropped on a
        // real receiver by itself, not take its neighbours with it).
        let mut bad = flow[1].clone();
        bad[VNET_HDR_LEN + 45] ^= 0xff;
        let mut w = Writer::default();
        let packets = [out(&flow[0], true), out(&bad, true), out(&flow[2], true)];
        let carrier = w.plan(&packets).to_vec();
        assert_eq!(carrier[1], Carrier::Itself);

        // Fewer than two candidates: nothing to plan.
        let packets = [out(&flow[0], true), out(&flow[1], false)];
        assert_eq!(Writer::default().plan(&packets), [Carrier::Itself; 2]);
    }

    #[test]
    fn each_packet_is_timed_by_the_write_that_carried_it() {
        let mss = 1000;
        let (data, flow) = flow(mss, 5);
        let other_port = segment(5202, 1, &data[..mss]);
        let lone = segment(5203, 1, &data[..mss]);
        let mut packets: Vec<Outgoing> = flow.iter().map(|p| out(p, true)).collect();
        packets.push(out(&other_port, false));
        packets.push(out(&lone, false));
        let n = packets.len();
        // Each write takes a millisecond at least and the device refuses the third: three
        // writes (the five segments coalesced, then the two others), each instant after its own.
        let mut calls: Vec<Instant> = Vec::new();
        let (mut ok, mut at) = (vec![false; n], vec![Instant::now(); n]);
        Writer::default().write_with(&packets, &mut ok, &mut at, |_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            calls.push(Instant::now());
            calls.len() != 3
        });
        assert_eq!(calls.len(), 3);
        assert_eq!(ok, [true, true, true, true, true, true, false]);
        assert!(
            at[..5].iter().all(|&t| t == at[0]),
            "one write carried the five"
        );
        assert!(calls[0] <= at[0] && at[0] < calls[1]);
        assert!(calls[1] <= at[5] && at[5] < calls[2]);
        assert!(calls[2] <= at[6]);
    }

    #[test]
    fn bare_packets_from_elsewhere_coalesce_with_headed_ones_behind_an_all_zero_header() {
        let mss = 1000;
        let data: Vec<u8> = (0..3 * mss).map(|i| (i % 251) as u8).collect();
        let headed: Vec<Vec<u8>> = (0..3)
            .map(|k| segment(5201, 1 + (k * mss) as u32, &data[k * mss..(k + 1) * mss]))
            .collect();
        let bare = |k: usize| Outgoing {
            bytes: &headed[k][VNET_HDR_LEN..],
            hdr_len: 0,
            may_coalesce: true,
        };
        assert_eq!(bare(1).hdr(), &[] as &[u8]);
        assert_eq!(bare(1).ip(), out(&headed[1], true).ip());
        // Bare first, then a headed one, then bare: one segment, as with headers throughout.
        let packets = [bare(0), out(&headed[1], true), bare(2)];
        let mut w = Writer::default();
        let carrier = w.plan(&packets).to_vec();
        assert_eq!(carrier, [Carrier::Head(0), Carrier::In(0), Carrier::In(0)]);
        let seg = &w.bufs[0];
        assert_eq!(seg[1], 1, "GSO TCPv4");
        let span = TcpSpan::of(&seg[VNET_HDR_LEN..]).unwrap();
        assert_eq!((span.seq, span.len), (1, 3 * mss as u32));
        assert_eq!(&seg[VNET_HDR_LEN + 40..], &data[..]);
        // Alone, it is not coalesced.
        assert_eq!(Writer::default().plan(&[bare(0)]), [Carrier::Itself]);
    }

    #[test]
    fn consecutive_datagrams_of_a_flow_go_in_as_one_where_the_tun_takes_them() {
        let a: Vec<Vec<u8>> = (0..8u8).map(|k| datagram(4000, &[k; 36])).collect();
        let other = datagram(4001, &[9; 36]);
        let short = datagram(4000, &[20; 20]);
        let after_short = datagram(4000, &[21; 36]);
        let mut corrupted = datagram(4000, &[22; 36]);
        corrupted[VNET_HDR_LEN + 30] ^= 1;
        let mut packets: Vec<Outgoing> = a[..5].iter().map(|p| out(p, true)).collect();
        packets.push(out(&other, true)); // 5
        packets.extend(a[5..].iter().map(|p| out(p, true))); // 6, 7, 8
        packets.push(out(&corrupted, false)); // 9
        packets.push(out(&short, true)); // 10
        packets.push(out(&after_short, true)); // 11

        let mut w = Writer::new(true);
        let carrier = w.plan(&packets).to_vec();
        let mut expected = vec![Carrier::In(0); 12];
        expected[0] = Carrier::Head(0);
        expected[5] = Carrier::Itself;
        expected[9] = Carrier::Itself;
        // Nothing follows a shorter datagram in a coalesced one.
        expected[11] = Carrier::Itself;
        assert_eq!(carrier, expected);
        // One UDP GSO datagram: 36-byte segments, the eight payloads then the short one.
        let seg = &w.bufs[0];
        assert_eq!(seg[1], tun_rs::VIRTIO_NET_HDR_GSO_UDP_L4);
        assert_eq!(u16::from_le_bytes([seg[4], seg[5]]), 36, "gso_size");
        let mut payload: Vec<u8> = (0..8u8).flat_map(|k| [k; 36]).collect();
        payload.extend_from_slice(&[20; 20]);
        assert_eq!(&seg[VNET_HDR_LEN + 28..], &payload[..]);

        // A TUN without USO: every datagram by itself.
        let mut w = Writer::new(false);
        assert_eq!(w.plan(&packets), vec![Carrier::Itself; 12]);
    }

    #[test]
    fn a_coalesced_datagram_not_made_of_the_chunks_own_coalesces_nothing() {
        let a: Vec<Vec<u8>> = (0..3u8).map(|k| datagram(4000, &[k; 36])).collect();
        let packets: Vec<Outgoing> = a.iter().map(|p| out(p, true)).collect();
        let mut w = Writer::new(true);
        assert_eq!(w.plan(&packets)[2], Carrier::In(0));
        // The same coalesced buffer checked against a chunk whose third payload differs.
        let changed = datagram(4000, &[7; 36]);
        let packets = [out(&a[0], true), out(&a[1], true), out(&changed, true)];
        w.candidates = vec![0, 1, 2];
        w.carrier = vec![Carrier::Itself; 3];
        assert!(!w.attribute(&packets));
    }
}
