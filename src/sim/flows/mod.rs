//! Traffic without programs (`traffic.flows`): UDP at a constant rate, Poisson or on/off, ping,
//! multicast heartbeats, TCP transfers and TCP requests and responses, sent and received in
//! sim time. A sans-IO state machine with time passed in: [`Flows::advance`] runs every
//! sender, receiver and TCP stack up to a sim time and hands out the packets they sent, each
//! stamped with the sim time it was sent; [`Flows::deliver`] takes a packet the network
//! simulator delivered, at its delivery time. [`FlowNetwork`] couples them to the packet
//! [`Engine`] (the same ledger, record and report as live packets): the packets sent before
//! window k's start go into BEGIN(k), as a live capture stamped then would, and END(k)'s
//! deliveries come back. With live capture, the live side hosts the flows in its own engine
//! the same way ([`Flows::send_into`], [`Flows::take_delivery`]).
//!
//! Every random draw comes from the flow's own stream (`traffic` and the flow's name), and
//! nothing depends on the wall clock: a run is a function of the scenario and its seed.

pub mod packets;
pub mod tcp;

use crate::clock::{Schedule, SimNanos};
use crate::config::{FlowKind, Pattern, Scenario};
use crate::net::addr::AddressBook;
use crate::net::ledger::{CopyEnd, LedgerSummary};
use crate::net::traffic::{Delivery, Engine, EngineConfig, Frame};
use crate::sim::streams::stream;
use crate::wire::ip::{IpPacket, TCP, UDP};
use crate::wire::proto::NetworkUpdate;
use crate::wire::update::NetworkView;
use packets::{Refused, Stamp};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use smoltcp::iface::SocketHandle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{IpAddr, Ipv4Addr};
use tcp::Stack;

/// Delays kept per flow for its quantiles; more are counted but not kept.
const MAX_DELAY_SAMPLES: usize = 1 << 20;
/// Packets delivered and not yet taken by [`Flows::advance`]; more are dropped and counted.
const MAX_INBOX: usize = 1 << 20;
/// First local port of the TCP flows' senders (flow i sends from this + i).
const TCP_LOCAL_PORT: u16 = 49152;
/// First source port of the UDP flows (flow i sends from this + i).
const UDP_LOCAL_PORT: u16 = 40000;

/// A flow's delays (one way; round trip for ping), ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DelayQuantiles {
    /// Delays measured (kept: at most 2²⁰).
    pub samples: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// What one flow sent and what arrived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowSummary {
    pub name: String,
    /// `udp`, `ping`, `heartbeat`, `tcp` or `request`.
    pub kind: String,
    pub from: String,
    /// The receiving vehicle; none for a heartbeat (every other vehicle receives it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Datagrams or echo requests sent, requests issued (TCP: none counted here; the ledger
    /// counts its segments).
    pub sent_packets: u64,
    /// Payload bytes sent (TCP: bytes the sender wrote into its socket; request: request bytes).
    pub sent_bytes: u64,
    /// Datagrams received intact (each receiver's count for a heartbeat), echo replies received,
    /// responses read whole.
    pub received_packets: u64,
    /// Payload bytes received intact (TCP: bytes the receiver read, in order; request:
    /// response bytes the sender read).
    pub received_bytes: u64,
    /// Packets that arrived with flipped bits (a link without CRC) and that the receiving
    /// stack dropped on their checksum.
    pub refused_corrupted: u64,
    /// The share of what was sent that never arrived intact (per receiver for a heartbeat;
    /// ping: requests without a reply); none for TCP and requests, which send again what they
    /// lost (a request's `sent_packets − received_packets` were unanswered at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_share: Option<f64>,
    /// Payload bits received per second of the flow's time (its start to its stop or the end
    /// of the run; a TCP transfer of given bytes to its last byte; requests to their last
    /// response if later), kbit/s.
    pub throughput_kbps: f64,
    /// One-way delay of each datagram (UDP, heartbeat), round trip of each echo (ping), time
    /// of each exchange from its request issued to its response's last byte read (request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelayQuantiles>,
    /// A TCP transfer of given bytes: when its last byte was read, s of sim time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_s: Option<f64>,
}

/// How a datagram flow spaces its packets.
enum Gaps {
    /// The i-th packet at start + i·gap.
    Constant {
        gap_ns: f64,
    },
    Poisson {
        mean_ns: f64,
        rng: Box<ChaCha8Rng>,
    },
    /// Evenly every `gap_ns` in the first `on_ns` of every `period_ns`.
    OnOff {
        gap_ns: f64,
        on_ns: f64,
        period_ns: f64,
    },
}

impl Gaps {
    /// When packet `seq` goes, the one before it having gone at `prev` (relative to the start).
    fn next(&mut self, seq: u32, prev: f64) -> f64 {
        match self {
            Gaps::Constant { gap_ns } => f64::from(seq) * *gap_ns,
            Gaps::Poisson { mean_ns, rng } => {
                let u: f64 = 1.0 - rng.random::<f64>();
                if seq == 0 {
                    0.0
                } else {
                    prev - mean_ns.max(1.0) * u.ln()
                }
            }
            Gaps::OnOff {
                gap_ns,
                on_ns,
                period_ns,
            } => {
                let t = if seq == 0 { 0.0 } else { prev + *gap_ns };
                let into = t % *period_ns;
                if into < *on_ns {
                    t
                } else {
                    t - into + *period_ns
                }
            }
        }
    }
}

enum Sending {
    /// UDP to one receiver or a heartbeat to a group.
    Datagrams {
        dst: Ipv4Addr,
        port: u16,
        size: usize,
        gaps: Gaps,
        /// When the last one went, ns after the start.
        prev: f64,
    },
    Ping {
        interval_ns: u64,
        size: usize,
        /// Per sequence number mod 2¹⁶: whether its reply came (duplicates are not counted).
        answered: Vec<bool>,
    },
    Tcp {
        conn: Conn,
        app: App,
    },
}

/// A TCP flow's connection: the receiver's listening socket, the sender's once it connects.
struct Conn {
    port: u16,
    /// Each socket's buffers, bytes.
    buffer: usize,
    server: SocketHandle,
    client: Option<SocketHandle>,
    /// The sender closed it (its bytes written, or the flow's stop).
    closed: bool,
}

/// What a TCP flow's ends do with their connection.
enum App {
    /// The sender writes `bytes` (none: without end), the receiver reads.
    Bulk {
        bytes: Option<u64>,
    },
    Exchange(Box<Exchange>),
}

/// A request/response flow's state at both ends.
struct Exchange {
    interval_ns: u64,
    request: u64,
    response: u64,
    /// The sender: when each request not yet answered whole was issued, oldest first.
    issued: std::collections::VecDeque<SimNanos>,
    /// The sender: bytes of issued requests not yet written into the socket.
    to_write: u64,
    /// The sender: bytes read of the oldest response.
    answer_read: u64,
    /// The receiver: bytes read of the request it is reading.
    asked: u64,
    /// The receiver: response bytes owed and not yet written.
    owed: u64,
}

/// Requests issued and not yet answered, at most; more are not issued (counted).
const MAX_OUTSTANDING: usize = 1 << 20;

struct Spec {
    name: String,
    kind: &'static str,
    from: usize,
    to: Option<usize>,
    /// Receivers of each packet (a heartbeat's: every other vehicle).
    receivers: u64,
    start_ns: SimNanos,
    stop_ns: SimNanos,
    send: Sending,
    /// When it next sends (or, for TCP, connects or closes); none when done.
    next_ns: Option<SimNanos>,
    seq: u32,
    stats: Stats,
}

impl Spec {
    /// Whether `node` receives the flow's packets: its `to`, or for a heartbeat every vehicle
    /// but its sender.
    fn received_by(&self, node: usize) -> bool {
        match self.to {
            Some(to) => to == node,
            None => self.from != node,
        }
    }
}

#[derive(Default)]
struct Stats {
    sent_packets: u64,
    sent_bytes: u64,
    received_packets: u64,
    received_bytes: u64,
    refused_corrupted: u64,
    delays_ns: Vec<u64>,
    delays_seen: u64,
    last_rx_ns: Option<SimNanos>,
}

impl Stats {
    fn delay(&mut self, ns: u64) {
        self.delays_seen += 1;
        if self.delays_ns.len() < MAX_DELAY_SAMPLES {
            self.delays_ns.push(ns);
        }
    }

    fn quantiles(&self) -> Option<DelayQuantiles> {
        if self.delays_ns.is_empty() {
            return None;
        }
        let mut d = self.delays_ns.clone();
        d.sort_unstable();
        let rank = |q: f64| {
            let i = ((q * d.len() as f64).ceil() as usize).clamp(1, d.len()) - 1;
            d[i] as f64 / 1e6
        };
        Some(DelayQuantiles {
            samples: self.delays_seen,
            p50_ms: rank(0.5),
            p95_ms: rank(0.95),
            p99_ms: rank(0.99),
            max_ms: rank(1.0),
        })
    }
}

/// A packet delivered to `node` at `t_ns`, waiting for the loop to reach it.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Arrival {
    t_ns: SimNanos,
    /// Delivery order among equal times.
    order: u64,
    node: usize,
    ip: Vec<u8>,
}

/// What happens next in the loop.
#[derive(Clone, Copy)]
enum Event {
    Arrival,
    Flow(usize),
    Stack(usize),
}

/// Every generated flow of a run, and the TCP stacks of the vehicles that have TCP flows.
pub struct Flows {
    specs: Vec<Spec>,
    names: Vec<String>,
    /// Per vehicle: its first IPv4 address.
    addrs: Vec<Ipv4Addr>,
    stacks: Vec<Option<Stack>>,
    inbox: BinaryHeap<Reverse<Arrival>>,
    order: u64,
    /// Deliveries dropped because the inbox was full.
    pub inbox_dropped: u64,
    /// Delivered packets no flow took (a live program's, or addressed to no flow's port).
    pub unclaimed: u64,
    /// Requests not issued because 2²⁰ of their flow's were unanswered.
    pub not_issued: u64,
    now: SimNanos,
    scratch: Vec<Vec<u8>>,
}

impl Flows {
    /// The flows of `s` (validated), none if it has none: its vehicles named and addressed by
    /// `book` (each by its first IPv4 address); the run lasts `end_ns`.
    pub fn for_scenario(s: &Scenario, book: &AddressBook, end_ns: SimNanos) -> Option<Flows> {
        if s.traffic.flows.is_empty() {
            return None;
        }
        let names = book.names.clone();
        let node = |n: &str| names.iter().position(|v| v == n);
        let addrs: Vec<Ipv4Addr> = (0..book.len())
            .map(|n| Ipv4Addr::from(book.first_v4(n)))
            .collect();
        let mut stacks: Vec<Option<Stack>> = (0..names.len()).map(|_| None).collect();
        let stack = |n: usize, stacks: &mut Vec<Option<Stack>>| -> usize {
            if stacks[n].is_none() {
                let seed = stream(s.seed, "tcp stack", &[&names[n]]).random::<u64>();
                stacks[n] = Some(Stack::new(addrs[n], seed));
            }
            n
        };
        let mut specs = Vec::new();
        for f in &s.traffic.flows {
            let from = node(&f.from)?;
            let to = f.to.as_deref().and_then(node);
            let start_ns = (f.start_s * 1e9).round() as SimNanos;
            let stop_ns = f
                .stop_s
                .map_or(end_ns, |t| ((t * 1e9).round() as SimNanos).min(end_ns));
            let rng = || Box::new(stream(s.seed, "traffic", &[&f.name]));
            let (send, receivers) = match &f.send {
                FlowKind::Udp {
                    rate_kbps,
                    size_bytes,
                    pattern,
                    port,
                } => {
                    let gap_ns = f64::from(*size_bytes) * 8.0 / (rate_kbps * 1e3) * 1e9;
                    let gaps = match pattern {
                        Pattern::Constant => Gaps::Constant { gap_ns },
                        Pattern::Poisson => Gaps::Poisson {
                            mean_ns: gap_ns,
                            rng: rng(),
                        },
                        Pattern::OnOff { on_s, off_s } => Gaps::OnOff {
                            gap_ns: gap_ns * on_s / (on_s + off_s),
                            on_ns: on_s * 1e9,
                            period_ns: (on_s + off_s) * 1e9,
                        },
                    };
                    let dst = addrs[to?];
                    let size = *size_bytes as usize;
                    (
                        Sending::Datagrams {
                            dst,
                            port: *port,
                            size,
                            gaps,
                            prev: 0.0,
                        },
                        1,
                    )
                }
                FlowKind::Heartbeat {
                    interval_s,
                    size_bytes,
                    group,
                    port,
                } => {
                    let gaps = Gaps::Constant {
                        gap_ns: interval_s * 1e9,
                    };
                    let size = *size_bytes as usize;
                    let others = names.len().saturating_sub(1) as u64;
                    (
                        Sending::Datagrams {
                            dst: *group,
                            port: *port,
                            size,
                            gaps,
                            prev: 0.0,
                        },
                        others,
                    )
                }
                FlowKind::Ping {
                    interval_s,
                    size_bytes,
                } => {
                    let interval_ns = ((interval_s * 1e9).round() as u64).max(1);
                    let size = *size_bytes as usize;
                    (
                        Sending::Ping {
                            interval_ns,
                            size,
                            answered: Vec::new(),
                        },
                        1,
                    )
                }
                FlowKind::Tcp {
                    port, buffer_bytes, ..
                }
                | FlowKind::Request {
                    port, buffer_bytes, ..
                } => {
                    let to = to?;
                    let buffer = *buffer_bytes as usize;
                    stack(from, &mut stacks);
                    let to = stack(to, &mut stacks);
                    let conn = Conn {
                        port: *port,
                        buffer,
                        server: stacks[to].as_mut()?.listen(*port, buffer),
                        client: None,
                        closed: false,
                    };
                    let app = match &f.send {
                        FlowKind::Request {
                            interval_s,
                            request_bytes,
                            response_bytes,
                            ..
                        } => App::Exchange(Box::new(Exchange {
                            interval_ns: ((interval_s * 1e9).round() as u64).max(1),
                            request: u64::from(*request_bytes),
                            response: u64::from(*response_bytes),
                            issued: Default::default(),
                            to_write: 0,
                            answer_read: 0,
                            asked: 0,
                            owed: 0,
                        })),
                        FlowKind::Tcp { bytes, .. } => App::Bulk { bytes: *bytes },
                        _ => return None,
                    };
                    (Sending::Tcp { conn, app }, 1)
                }
            };
            specs.push(Spec {
                name: f.name.clone(),
                kind: f.send.name(),
                from,
                to,
                receivers,
                start_ns,
                stop_ns,
                send,
                next_ns: (start_ns < stop_ns).then_some(start_ns),
                seq: 0,
                stats: Stats::default(),
            });
        }
        Some(Flows {
            specs,
            names,
            addrs,
            stacks,
            inbox: BinaryHeap::new(),
            order: 0,
            inbox_dropped: 0,
            unclaimed: 0,
            not_issued: 0,
            now: 0,
            scratch: Vec::new(),
        })
    }

    /// A packet the network delivered to `node` at `t_ns` (taken when the loop reaches it).
    pub fn deliver(&mut self, node: usize, t_ns: SimNanos, ip: &[u8]) {
        if self.inbox.len() >= MAX_INBOX {
            self.inbox_dropped += 1;
            return;
        }
        self.order += 1;
        self.inbox.push(Reverse(Arrival {
            t_ns: t_ns.max(self.now),
            order: self.order,
            node,
            ip: ip.to_vec(),
        }));
    }

    /// Runs every flow up to (not including) `until_ns`; `out(node, ip, t_ns)` takes each
    /// packet a vehicle sent, in the order sent.
    pub fn advance(&mut self, until_ns: SimNanos, out: &mut impl FnMut(usize, Vec<u8>, SimNanos)) {
        while let Some((t, event)) = self.next_event().filter(|(t, _)| *t < until_ns) {
            self.now = self.now.max(t);
            let t = self.now;
            match event {
                Event::Arrival => {
                    if let Some(Reverse(a)) = self.inbox.pop() {
                        self.arrive(a, out);
                    }
                }
                Event::Flow(i) => self.send(i, t, out),
                Event::Stack(n) => self.run_stack(n, t, out),
            }
        }
        self.now = self.now.max(until_ns);
    }

    fn next_event(&self) -> Option<(SimNanos, Event)> {
        let mut best: Option<(SimNanos, Event)> = None;
        let mut consider = |t: Option<SimNanos>, e: Event| {
            if let Some(t) = t {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, e));
                }
            }
        };
        consider(self.inbox.peek().map(|a| a.0.t_ns), Event::Arrival);
        for (i, f) in self.specs.iter().enumerate() {
            consider(f.next_ns, Event::Flow(i));
        }
        for (n, s) in self.stacks.iter().enumerate() {
            consider(s.as_ref().and_then(|s| s.wake_ns), Event::Stack(n));
        }
        best
    }

    /// Flow `i`'s next packet (or TCP connect or close) at `t`.
    fn send(&mut self, i: usize, t: SimNanos, out: &mut impl FnMut(usize, Vec<u8>, SimNanos)) {
        let from_addr = self.addrs[self.specs[i].from];
        let to_addr = self.specs[i].to.map(|n| self.addrs[n]);
        let f = &mut self.specs[i];
        let stamp = Stamp {
            flow: i as u32,
            seq: f.seq,
            sent_ns: t,
        };
        match &mut f.send {
            Sending::Datagrams {
                dst,
                port,
                size,
                gaps,
                prev,
            } => {
                let src_port = UDP_LOCAL_PORT.wrapping_add(i as u16);
                if let Some(ip) = packets::udp(from_addr, *dst, (src_port, *port), stamp, *size) {
                    f.stats.sent_packets += 1;
                    f.stats.sent_bytes += *size as u64;
                    out(f.from, ip, t);
                }
                f.seq = f.seq.wrapping_add(1);
                let next = gaps.next(f.seq, *prev);
                *prev = next;
                f.next_ns = Some(f.start_ns + next.round() as SimNanos)
                    .filter(|&n| n < f.stop_ns)
                    .map(|n| n.max(t + 1));
            }
            Sending::Ping {
                interval_ns,
                size,
                answered,
            } => {
                let to = to_addr.unwrap_or(Ipv4Addr::UNSPECIFIED);
                let seq16 = f.seq as u16;
                if let Some(ip) = packets::echo(from_addr, to, false, i as u16, seq16, stamp, *size)
                {
                    f.stats.sent_packets += 1;
                    f.stats.sent_bytes += *size as u64;
                    out(f.from, ip, t);
                }
                if answered.len() <= usize::from(seq16) {
                    answered.resize(usize::from(seq16) + 1, false);
                }
                answered[usize::from(seq16)] = false;
                f.seq = f.seq.wrapping_add(1);
                f.next_ns = Some(t + *interval_ns).filter(|&n| n < f.stop_ns);
            }
            Sending::Tcp { conn, app } => {
                let from = f.from;
                if conn.client.is_none() {
                    if let (Some(stack), Some(to)) = (self.stacks[from].as_mut(), to_addr) {
                        let local = TCP_LOCAL_PORT.wrapping_add(i as u16);
                        conn.client = Some(stack.connect(to, conn.port, local, conn.buffer));
                    }
                } else if t >= f.stop_ns {
                    conn.closed = true;
                }
                f.next_ns = match app {
                    _ if conn.closed => None,
                    App::Bulk { .. } => Some(f.stop_ns),
                    App::Exchange(x) => {
                        if x.issued.len() < MAX_OUTSTANDING {
                            x.issued.push_back(t);
                            x.to_write += x.request;
                            f.stats.sent_packets += 1;
                        } else {
                            self.not_issued += 1;
                        }
                        Some((t + x.interval_ns).min(f.stop_ns))
                    }
                };
                self.run_stack(from, t, out);
            }
        }
    }

    /// A delivered packet reaches its vehicle.
    fn arrive(&mut self, a: Arrival, out: &mut impl FnMut(usize, Vec<u8>, SimNanos)) {
        let Arrival {
            t_ns: t, node, ip, ..
        } = a;
        let protocol = IpPacket::new_checked(&ip[..]).map(|p| p.protocol()).ok();
        match protocol {
            Some(TCP) => match self.stacks.get_mut(node).and_then(Option::as_mut) {
                Some(stack) => {
                    stack.receive(ip);
                    self.run_stack(node, t, out);
                }
                None => self.unclaimed += 1,
            },
            Some(UDP) => self.datagram(node, t, &ip),
            Some(packets::ICMP) => self.echo(node, t, &ip, out),
            _ => self.unclaimed += 1,
        }
    }

    /// A datagram reaches `node`: counted for its flow if it is one's and `node` receives it.
    fn datagram(&mut self, node: usize, t: SimNanos, ip: &[u8]) {
        let d = match packets::read_udp(ip) {
            Ok(d) => d,
            Err(Refused::Checksum) => {
                // Whose it was cannot be read from flipped bits: the flow with that port.
                let port = ip.get(22..24).map(|p| u16::from_be_bytes([p[0], p[1]]));
                self.refused(self.udp_flow_at(node, port));
                return;
            }
            Err(Refused::NotOurs) => {
                self.unclaimed += 1;
                return;
            }
        };
        let i = d.stamp.flow as usize;
        let ours = self.specs.get(i).is_some_and(|f| match &f.send {
            Sending::Datagrams { port, dst, .. } => {
                *port == d.dst_port && IpAddr::V4(*dst) == d.dst && f.received_by(node)
            }
            _ => false,
        });
        if !ours {
            self.unclaimed += 1;
            return;
        }
        let st = &mut self.specs[i].stats;
        st.received_packets += 1;
        st.received_bytes += d.len as u64;
        st.delay(t.saturating_sub(d.stamp.sent_ns));
        st.last_rx_ns = Some(t);
    }

    /// A packet that failed its checksum is counted for `flow`, or as unclaimed.
    fn refused(&mut self, flow: Option<usize>) {
        match flow {
            Some(i) => self.specs[i].stats.refused_corrupted += 1,
            None => self.unclaimed += 1,
        }
    }

    /// The datagram flow whose packets `node` receives on `port`.
    fn udp_flow_at(&self, node: usize, port: Option<u16>) -> Option<usize> {
        self.specs.iter().position(|f| match &f.send {
            Sending::Datagrams { port: p, .. } => Some(*p) == port && f.received_by(node),
            _ => false,
        })
    }

    /// An ICMP echo reaches `node`: a request to it is answered at once, as a kernel does; a
    /// reply to its ping is counted.
    fn echo(
        &mut self,
        node: usize,
        t: SimNanos,
        ip: &[u8],
        out: &mut impl FnMut(usize, Vec<u8>, SimNanos),
    ) {
        let e = match packets::read_echo(ip) {
            Ok(e) => e,
            Err(Refused::Checksum) => {
                // A request or reply whose bits flipped: the ping flow it answers or asks.
                let id = ip
                    .get(24..26)
                    .map(|p| usize::from(u16::from_be_bytes([p[0], p[1]])));
                let ping = id.filter(|&i| {
                    matches!(
                        self.specs.get(i).map(|f| &f.send),
                        Some(Sending::Ping { .. })
                    )
                });
                self.refused(ping);
                return;
            }
            Err(Refused::NotOurs) => {
                self.unclaimed += 1;
                return;
            }
        };
        if IpAddr::V4(e.dst) != IpAddr::V4(self.addrs[node]) {
            self.unclaimed += 1;
            return;
        }
        if !e.reply {
            // Any vehicle answers a request to its address, the kernel's way (same payload).
            if let Some(reply) = packets::echo(e.dst, e.src, true, e.id, e.seq, e.stamp, e.len) {
                out(node, reply, t);
            }
            return;
        }
        let i = usize::from(e.id);
        let Some(f) = self.specs.get_mut(i).filter(|f| f.from == node) else {
            self.unclaimed += 1;
            return;
        };
        let Sending::Ping { answered, .. } = &mut f.send else {
            self.unclaimed += 1;
            return;
        };
        match answered.get_mut(usize::from(e.seq)) {
            Some(a) if !*a => {
                *a = true;
                f.stats.received_packets += 1;
                f.stats.received_bytes += e.len as u64;
                f.stats.delay(t.saturating_sub(e.stamp.sent_ns));
                f.stats.last_rx_ns = Some(t);
            }
            _ => {}
        }
    }

    /// Runs `node`'s TCP stack at `t`: its sockets' applications (senders write what their
    /// buffer takes, receivers read all), then the stack, twice (what reading opened).
    fn run_stack(
        &mut self,
        node: usize,
        t: SimNanos,
        out: &mut impl FnMut(usize, Vec<u8>, SimNanos),
    ) {
        let Some(stack) = self.stacks.get_mut(node).and_then(Option::as_mut) else {
            return;
        };
        for _ in 0..2 {
            serve(&mut self.specs, stack, node, t);
            stack.poll(t, &mut self.scratch);
        }
        serve(&mut self.specs, stack, node, t);
        for ip in self.scratch.drain(..) {
            out(node, ip, t);
        }
    }

    /// Runs every flow up to `until_ns` (window k's start), the packets they sent captured by
    /// `engine` as made in sim time; `sent(node, ip, t_ns)` sees each (for a pcap).
    pub fn send_into(
        &mut self,
        engine: &mut Engine,
        until_ns: SimNanos,
        mut sent: impl FnMut(usize, &[u8], SimNanos),
    ) {
        self.advance(until_ns, &mut |node, ip, t| {
            sent(node, &ip, t);
            engine.capture(node, Frame::plain(ip), t);
        });
    }

    /// `engine` delivered `d`, a copy of a packet the flows sent ([`Delivery::emulation`] none):
    /// the ledger counts it delivered and it reaches its receiver at its delivery time.
    pub fn take_delivery(&mut self, engine: &mut Engine, d: &Delivery) {
        engine.delivered(d, true);
        self.deliver(d.node, d.t_ns, d.frame.ip());
    }

    /// Every flow's summary at the end of the run, `end_ns`, with a warning if delivered
    /// packets went to no flow or found the inbox full.
    pub fn finish(&self, end_ns: SimNanos) -> Vec<FlowSummary> {
        if self.unclaimed > 0 || self.inbox_dropped > 0 || self.not_issued > 0 {
            tracing::warn!(
                unclaimed = self.unclaimed,
                inbox_dropped = self.inbox_dropped,
                not_issued = self.not_issued,
                "generated traffic: delivered packets no flow took, that the receivers' inbox had no room for, or requests not issued because 2^20 were unanswered"
            );
        }
        self.summary(end_ns)
    }

    /// Every flow's summary at the end of the run, `end_ns`.
    pub fn summary(&self, end_ns: SimNanos) -> Vec<FlowSummary> {
        (self.specs.iter())
            .map(|f| {
                let st = &f.stats;
                let done = match &f.send {
                    Sending::Tcp {
                        app: App::Bulk { bytes: Some(b) },
                        ..
                    } if st.received_bytes >= *b => st.last_rx_ns,
                    _ => None,
                };
                let mut until = done.unwrap_or(f.stop_ns.min(end_ns));
                if let Sending::Tcp {
                    app: App::Exchange(_),
                    ..
                } = &f.send
                {
                    // Responses to requests issued before the stop still come after it.
                    until = until.max(st.last_rx_ns.unwrap_or(0));
                }
                let secs = until.saturating_sub(f.start_ns) as f64 / 1e9;
                let tcp = matches!(f.send, Sending::Tcp { .. });
                let expected = st.sent_packets * f.receivers;
                FlowSummary {
                    name: f.name.clone(),
                    kind: f.kind.to_owned(),
                    from: self.names[f.from].clone(),
                    to: f.to.map(|n| self.names[n].clone()),
                    sent_packets: st.sent_packets,
                    sent_bytes: st.sent_bytes,
                    received_packets: st.received_packets,
                    received_bytes: st.received_bytes,
                    refused_corrupted: st.refused_corrupted,
                    lost_share: (!tcp && expected > 0)
                        .then(|| 1.0 - (st.received_packets as f64 / expected as f64).min(1.0)),
                    throughput_kbps: if secs > 0.0 {
                        st.received_bytes as f64 * 8.0 / secs / 1e3
                    } else {
                        0.0
                    },
                    delay: st.quantiles(),
                    completed_s: done.map(|t| t as f64 / 1e9),
                }
            })
            .collect()
    }
}

/// Bytes a TCP sender writes at a time.
const CHUNK: [u8; 16384] = [0; 16384];

/// The applications of `node`'s TCP flows. Bulk: the sender writes what its socket takes
/// (until its bytes are written or it closes), the receiver reads everything. Exchange: the
/// sender writes its issued requests and reads the responses, each answering its oldest
/// request; the receiver reads requests and writes a response for each whole one. A receiver
/// closes when its sender has and it owes nothing.
fn serve(specs: &mut [Spec], stack: &mut Stack, node: usize, t: SimNanos) {
    let mut buf = [0u8; 16384];
    for f in specs.iter_mut() {
        let Sending::Tcp { conn, app } = &mut f.send else {
            continue;
        };
        let st = &mut f.stats;
        if let (true, Some(c)) = (f.from == node, conn.client) {
            let s = stack.socket_mut(c);
            match app {
                App::Bulk { bytes } => {
                    let left = |sent: u64| bytes.map_or(u64::MAX, |b| b - sent);
                    if left(st.sent_bytes) == 0 {
                        conn.closed = true;
                    }
                    st.sent_bytes += write(s, left(st.sent_bytes), conn.closed);
                    if left(st.sent_bytes) == 0 {
                        conn.closed = true;
                    }
                }
                App::Exchange(x) => {
                    let n = write(s, x.to_write, conn.closed);
                    x.to_write -= n;
                    st.sent_bytes += n;
                    let got = read(s, &mut buf);
                    st.received_bytes += got;
                    x.answer_read += got;
                    while x.answer_read >= x.response {
                        let Some(issued) = x.issued.pop_front() else {
                            break;
                        };
                        x.answer_read -= x.response;
                        st.received_packets += 1;
                        st.delay(t.saturating_sub(issued));
                        st.last_rx_ns = Some(t);
                    }
                }
            }
            if conn.closed {
                s.close();
            }
        }
        if f.to == Some(node) {
            let s = stack.socket_mut(conn.server);
            let got = read(s, &mut buf);
            let owes = match app {
                App::Bulk { .. } => {
                    st.received_bytes += got;
                    if got > 0 {
                        st.last_rx_ns = Some(t);
                    }
                    false
                }
                App::Exchange(x) => {
                    x.asked += got;
                    x.owed += x.asked / x.request * x.response;
                    x.asked %= x.request;
                    x.owed -= write(s, x.owed, false);
                    x.owed > 0
                }
            };
            if !owes && !s.may_recv() && s.state() == smoltcp::socket::tcp::State::CloseWait {
                s.close();
            }
        }
    }
}

/// Writes up to `left` bytes into `s` (nothing once `closed`); returns how many it took.
fn write(s: &mut smoltcp::socket::tcp::Socket<'static>, left: u64, closed: bool) -> u64 {
    let mut written = 0;
    while !closed && s.can_send() && written < left {
        let want = (left - written).min(CHUNK.len() as u64) as usize;
        match s.send_slice(&CHUNK[..want]) {
            Ok(n) if n > 0 => written += n as u64,
            _ => break,
        }
    }
    written
}

/// Reads everything `s` holds; returns how many bytes.
fn read(s: &mut smoltcp::socket::tcp::Socket<'static>, buf: &mut [u8]) -> u64 {
    let mut got = 0;
    while s.can_recv() {
        match s.recv_slice(buf) {
            Ok(n) if n > 0 => got += n as u64,
            _ => break,
        }
    }
    got
}

/// The run's [`FlowNetwork`], shared by the network coordinator that drives it and the
/// participant that ends it.
pub type SharedFlows = std::sync::Arc<std::sync::Mutex<FlowNetwork>>;

/// `flows` locked (a thread that panicked holding it left it usable: the flows are counters).
pub fn lock(flows: &SharedFlows) -> std::sync::MutexGuard<'_, FlowNetwork> {
    flows.lock().unwrap_or_else(|e| e.into_inner())
}

/// The run's generated traffic on the packet engine, without live capture: each BEGIN gets the
/// packets the flows sent before its window, each END's deliveries go back to the flows.
pub struct FlowNetwork {
    pub engine: Engine,
    pub flows: Flows,
    schedule: Schedule,
}

impl FlowNetwork {
    /// For a scenario with `traffic.flows` (validated), none otherwise.
    pub fn for_scenario(s: &Scenario, schedule: Schedule) -> Option<FlowNetwork> {
        let book = AddressBook::new(&s.vehicles);
        let flows = Flows::for_scenario(s, &book, schedule.duration_ns())?;
        let engine = Engine::new(
            book,
            EngineConfig {
                schedule,
                queue_limit: s.network.queue_limit,
                max_hold_windows: s.network.max_hold_windows,
                crc: s.network.crc,
                seed: s.seed,
            },
        );
        Some(FlowNetwork {
            engine,
            flows,
            schedule,
        })
    }

    /// Window `k`'s BEGIN: the flows run to its start and what they sent is described in it.
    pub fn begin(&mut self, k: u32, begin: &mut NetworkUpdate) {
        let start = self.schedule.start_ns(k);
        self.flows.send_into(&mut self.engine, start, |_, _, _| {});
        self.engine.fill_begin(k, begin);
    }

    /// Window `k`'s END: its deliveries reach the flows (the ledger counts them delivered).
    pub fn end(&mut self, k: u32, end: &NetworkView) {
        for d in self.engine.apply_end(k, end) {
            self.flows.take_delivery(&mut self.engine, &d);
        }
    }

    /// Moves the ends of the copies that ended since the last call to the back of `out`.
    pub fn drain_copy_ends(&mut self, out: &mut Vec<CopyEnd>) {
        if !self.engine.ends.is_empty() {
            self.engine.ends.drain_into(out);
        }
    }

    /// The run ended at `end_ns`: what is in flight is dropped (`shutdown`); the ledger and
    /// every flow's summary.
    pub fn finish(&mut self, end_ns: SimNanos) -> (LedgerSummary, Vec<FlowSummary>) {
        self.engine.shutdown(end_ns);
        (self.engine.summary(), self.flows.finish(end_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A scenario of three vehicles (a, b, c) with `flows` (YAML of `traffic.flows`' items).
    fn scenario(flows: &str) -> Scenario {
        let text = format!(
            "name: t\nwindow_ms: 1\nduration_s: 30\nseed: 3\n\
             world:\n  origin: {{lat_deg: 0, lon_deg: 0}}\n  terrain: {{kind: procedural, size_m: [400, 400], cell_size_m: 10, base_height_m: -50, relief_m: 0}}\n\
             vehicles:\n\
             \x20 - {{name: a, addresses: [10.0.0.1/24], start: {{x: 0, y: 0, z: 0}}, motion: {{kind: stationary}}}}\n\
             \x20 - {{name: b, addresses: [10.0.0.2/24], start: {{x: 10, y: 0, z: 0}}, motion: {{kind: stationary}}}}\n\
             \x20 - {{name: c, addresses: [10.0.0.3/24], start: {{x: 20, y: 0, z: 0}}, motion: {{kind: stationary}}}}\n\
             traffic:\n  flows:\n{flows}"
        );
        crate::config::parse_str(&text, std::path::Path::new("t.yaml"))
            .unwrap()
            .scenario
    }

    /// One direction of a link: a drop-tail FIFO of `queue` packets served at `bps`, then
    /// `delay_ns` of propagation.
    struct Bottleneck {
        bps: f64,
        queue: usize,
        delay_ns: u64,
        /// Departure times of the packets in the queue.
        departures: VecDeque<u64>,
        dropped: u64,
    }

    impl Bottleneck {
        fn new(mbps: f64, queue: usize, delay_ms: f64) -> Self {
            Bottleneck {
                bps: mbps * 1e6,
                queue,
                delay_ns: (delay_ms * 1e6) as u64,
                departures: VecDeque::new(),
                dropped: 0,
            }
        }

        /// When a packet of `bytes` sent at `t` arrives, if it is not dropped.
        fn carry(&mut self, t: u64, bytes: usize) -> Option<u64> {
            while self.departures.front().is_some_and(|&d| d <= t) {
                self.departures.pop_front();
            }
            if self.departures.len() >= self.queue {
                self.dropped += 1;
                return None;
            }
            let start = self.departures.back().copied().unwrap_or(0).max(t);
            let done = start + (bytes as f64 * 8.0 / self.bps * 1e9) as u64;
            self.departures.push_back(done);
            Some(done + self.delay_ns)
        }
    }

    /// Runs `flows` for `secs` in windows of 1 ms over a network that sends every packet
    /// through `link(src, dst)` (its arrival time, or none if lost); unicast by address, the
    /// group to every other vehicle.
    fn run(
        flows: &mut Flows,
        secs: f64,
        mut link: impl FnMut(usize, usize, u64, &[u8]) -> Option<u64>,
    ) {
        let book = AddressBook::new(&scenario("").vehicles);
        let w = 1_000_000u64;
        let mut sent = Vec::new();
        for k in 1..=(secs * 1000.0) as u64 {
            flows.advance(k * w, &mut |n, ip, t| sent.push((n, ip, t)));
            for (n, ip, t) in sent.drain(..) {
                let dst = IpPacket::new_checked(&ip[..]).unwrap().dst_addr();
                let Some(d) = book.resolve(n, dst) else {
                    continue;
                };
                for r in book.receivers(n, &d) {
                    if let Some(at) = link(n, r, t, &ip) {
                        flows.deliver(r, at, &ip);
                    }
                }
            }
        }
    }

    fn flows(yaml: &str) -> Flows {
        let s = scenario(yaml);
        Flows::for_scenario(&s, &AddressBook::new(&s.vehicles), 30_000_000_000).unwrap()
    }

    #[test]
    fn a_tcp_transfer_fills_a_bottleneck_whose_queue_holds_its_bandwidth_delay_product() {
        // 20 Mbit/s, 10 ms round trip: the product is 17 segments, the queue 64.
        let mut f = flows("    - {name: bulk, from: a, to: b, send: {kind: tcp}}\n");
        let mut links = [
            Bottleneck::new(20.0, 64, 5.0),
            Bottleneck::new(20.0, 64, 5.0),
        ];
        run(&mut f, 10.0, |s, _, t, ip| links[s].carry(t, ip.len()));
        let s = &f.summary(10_000_000_000)[0];
        let ceiling = 20_000.0 * 1460.0 / 1500.0;
        println!(
            "TCP over 20 Mbit/s: {:.0} kbit/s ({:.1} % of the payload ceiling), {} dropped at the queue",
            s.throughput_kbps,
            100.0 * s.throughput_kbps / ceiling,
            links[0].dropped
        );
        assert!(
            s.throughput_kbps > 0.85 * ceiling && s.throughput_kbps <= ceiling,
            "{s:?}"
        );
        assert!(s.received_bytes <= s.sent_bytes);
    }

    #[test]
    fn a_tcp_transfer_of_given_bytes_ends_with_every_byte_in_order_through_losses() {
        let mut f =
            flows("    - {name: file, from: a, to: b, send: {kind: tcp, bytes: 1000000}}\n");
        // One packet in 50 lost, each way.
        let mut n = 0u64;
        run(&mut f, 30.0, |_, _, t, _| {
            n += 1;
            (!n.is_multiple_of(50)).then_some(t + 2_000_000)
        });
        let s = &f.summary(30_000_000_000)[0];
        assert_eq!(
            (s.sent_bytes, s.received_bytes),
            (1_000_000, 1_000_000),
            "{s:?}"
        );
        let done = s.completed_s.expect("the transfer completes");
        assert!(done > 0.0 && done < 30.0);
    }

    #[test]
    fn requests_are_answered_in_order_each_after_a_round_trip_and_its_response_s_serialization() {
        // 10 Mbit/s each way, 5 ms of propagation: a 100-byte request and its 10000-byte
        // response (7 segments, inside the first window) take one round trip and the
        // response's 8.6 ms on the wire at least, and a request every 100 ms never waits.
        let mut f = flows(
            "    - {name: rpc, from: a, to: b, start_s: 1, send: {kind: request, interval_s: 0.1, request_bytes: 100, response_bytes: 10000}}\n",
        );
        let mut links = [
            Bottleneck::new(10.0, 64, 5.0),
            Bottleneck::new(10.0, 64, 5.0),
        ];
        run(&mut f, 10.0, |s, _, t, ip| links[s].carry(t, ip.len()));
        let s = &f.summary(10_000_000_000)[0];
        let d = s.delay.as_ref().unwrap();
        println!("{s:?}");
        assert_eq!(s.kind, "request");
        assert_eq!(s.sent_packets, 90, "one every 0.1 s from 1 s to 10 s");
        assert_eq!(s.sent_bytes, 9000);
        assert!(
            s.received_packets >= 89,
            "at most the last in flight: {s:?}"
        );
        assert_eq!(s.received_bytes, s.received_packets * 10_000);
        // Wire time of the response's 7 packets (6 × 1500 + 1 × 1080 bytes) at 10 Mbit/s.
        let floor_ms = 10.0 + (6.0 * 1500.0 + 1080.0) * 8.0 / 10e6 * 1e3;
        assert!(d.p50_ms >= floor_ms && d.p50_ms < floor_ms + 12.0, "{d:?}");
        assert_eq!(s.lost_share, None);
    }

    #[test]
    fn requests_issued_faster_than_answered_queue_and_every_one_is_answered_through_losses() {
        // A response of 100 kB every 50 ms is 16 Mbit/s on a 10 Mbit/s link: the requests
        // queue on the connection, their times grow, and with one packet in 40 lost each way
        // every request issued in the first 5 s is still answered, whole and in order.
        let mut f = flows(
            "    - {name: rpc, from: a, to: b, stop_s: 5, send: {kind: request, interval_s: 0.05, response_bytes: 100000}}\n",
        );
        let mut links = [
            Bottleneck::new(10.0, 64, 2.0),
            Bottleneck::new(10.0, 64, 2.0),
        ];
        let mut n = 0u64;
        run(&mut f, 30.0, |s, _, t, ip| {
            n += 1;
            (!n.is_multiple_of(40))
                .then_some(())
                .and_then(|_| links[s].carry(t, ip.len()))
        });
        let s = &f.summary(30_000_000_000)[0];
        let d = s.delay.as_ref().unwrap();
        println!("{s:?}");
        assert_eq!((s.sent_packets, s.received_packets), (100, 100), "{s:?}");
        assert_eq!(s.received_bytes, 100 * 100_000);
        assert!(
            s.throughput_kbps < 10_000.0,
            "over the time they took: {s:?}"
        );
        assert!(d.p50_ms > 1000.0, "they queued: {d:?}");
        assert!(
            d.max_ms > 2000.0,
            "the last waited for the 99 before it: {d:?}"
        );
    }

    #[test]
    fn datagrams_go_at_their_rate_spaced_as_their_pattern_says() {
        let mut f = flows(
            "    - {name: cbr, from: a, to: b, send: {kind: udp, rate_kbps: 80, size_bytes: 1000}}\n\
             \x20   - {name: poisson, from: a, to: c, send: {kind: udp, rate_kbps: 80, size_bytes: 1000, pattern: {kind: poisson}}}\n\
             \x20   - {name: onoff, from: b, to: c, start_s: 1, stop_s: 21, send: {kind: udp, rate_kbps: 80, size_bytes: 1000, port: 5001, pattern: {kind: on_off, on_s: 1, off_s: 3}}}\n",
        );
        let mut times: Vec<Vec<u64>> = vec![Vec::new(); 3];
        run(&mut f, 30.0, |s, r, t, _| {
            times[s + r - 1].push(t);
            Some(t + 3_000_000)
        });
        let s = f.summary(30_000_000_000);
        // 10 datagrams a second for 30 s, the first at 0.
        assert_eq!(s[0].sent_packets, 300);
        assert!(
            times[0].windows(2).all(|p| p[1] - p[0] == 100_000_000),
            "evenly spaced"
        );
        assert_eq!(s[0].delay.as_ref().unwrap().p50_ms, 3.0);
        // Poisson: 300 expected; its gaps vary.
        assert!(
            (240..=360).contains(&s[1].sent_packets),
            "{}",
            s[1].sent_packets
        );
        let gaps: Vec<u64> = times[1].windows(2).map(|p| p[1] - p[0]).collect();
        assert!(gaps.iter().min() < Some(&30_000_000) && gaps.iter().max() > Some(&250_000_000));
        // On 1 s of every 4 at 4 × 80 kbit/s: 40 datagrams each period, 5 periods.
        assert_eq!(s[2].sent_packets, 200);
        assert!(times[2]
            .iter()
            .all(|&t| (t - 1_000_000_000) % 4_000_000_000 < 1_000_000_000));
        for x in &s {
            assert_eq!(
                (x.received_packets, x.lost_share),
                (x.sent_packets, Some(0.0)),
                "{x:?}"
            );
        }
    }

    #[test]
    fn a_ping_is_answered_a_heartbeat_reaches_every_other_vehicle_and_losses_count() {
        let mut f = flows(
            "    - {name: ping, from: a, to: b, send: {kind: ping, interval_s: 0.5}}\n\
             \x20   - {name: hello, from: c, send: {kind: heartbeat, interval_s: 1}}\n",
        );
        // c → b loses everything; all else takes 4 ms.
        run(&mut f, 30.0, |s, r, t, _| {
            ((s, r) != (2, 1)).then_some(t + 4_000_000)
        });
        let s = f.summary(30_000_000_000);
        assert_eq!((s[0].sent_packets, s[0].received_packets), (60, 60));
        assert_eq!(s[0].delay.as_ref().unwrap().max_ms, 8.0, "the round trip");
        assert_eq!((s[1].sent_packets, s[1].received_packets), (30, 30));
        assert_eq!(s[1].lost_share, Some(0.5), "b heard none of c's");
    }

    #[test]
    fn a_datagram_whose_bits_flipped_is_refused_by_its_receiver() {
        let mut f = flows("    - {name: cbr, from: a, to: b, send: {kind: udp, rate_kbps: 80, size_bytes: 1000}}\n");
        let mut sent = Vec::new();
        f.advance(1_000_000, &mut |n, ip, t| sent.push((n, ip, t)));
        let (_, mut ip, t) = sent.pop().unwrap();
        ip[100] ^= 1;
        f.deliver(1, t + 1, &ip);
        f.advance(2_000_000, &mut |_, _, _| {});
        let s = &f.summary(2_000_000)[0];
        assert_eq!((s.received_packets, s.refused_corrupted), (0, 1));
    }

    #[test]
    fn the_same_scenario_and_seed_give_the_same_flows() {
        let yaml = "    - {name: bulk, from: a, to: b, send: {kind: tcp}}\n\
                    \x20   - {name: p, from: b, to: a, send: {kind: udp, rate_kbps: 500, size_bytes: 700, pattern: {kind: poisson}}}\n";
        let go = || {
            let mut f = flows(yaml);
            let mut links = [Bottleneck::new(5.0, 32, 3.0), Bottleneck::new(5.0, 32, 3.0)];
            run(&mut f, 5.0, |s, _, t, ip| links[s].carry(t, ip.len()));
            f.summary(5_000_000_000)
        };
        assert_eq!(go(), go());
    }
}
