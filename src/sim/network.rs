//! The embedded network simulator: a pure state machine (time passed in, seeded draws, no I/O)
//! that takes each window's ChannelData and packets and decides what every copy experiences,
//! through the scenario's link models ([`crate::model::link`]).
//!
//! # One window
//! BEGIN(k) carries the ChannelData at t = kW and the packets captured before kW: one entry per
//! (packet, receiving vehicle) with `pkt_id`, `src_ip`, `dst_ip`, `pkt_lengths` and, when given,
//! `pkt_time_ns`, `src_node`, `dst_node`. Nodes missing → looked up from the IPs among the
//! vehicles' IPv4 addresses (as `u32::from(Ipv4Addr)`); times missing → kW. Entries with the same
//! (`pkt_time_ns`, `src_node`, `pkt_id`) are **one transmission** heard by several receivers
//! (multicast/broadcast), serialized once at the slowest of its links' rates.
//!
//! For each transmission, in order of capture time (then source node, packet id, entry order):
//! 1. **Queue**: each vehicle has one transmitter, serving FIFO; a packet starts at
//!    max(capture time, end of the previous transmission). At most `links.queue_packets` may wait;
//!    one more is dropped (QUEUE_FULL) for every receiver.
//! 2. **Serialization**: on air for `8 · length / rate` (the link's rate; no framing overhead).
//!    **802.11**: a transmission whose receivers are all over rf links with `mac` on one
//!    standard and channel goes instead to that channel's medium
//!    ([`crate::model::wifi_medium`]), queued at the sender's radio there one W after its
//!    capture (when every frame that could contend with it is known): DCF contention, the
//!    frame at the link's rate (unicast; group-addressed at the lowest rate, unacknowledged),
//!    ACK and retries; a copy lost after the last attempt is RETRY_LIMIT (OUT_OF_RANGE when
//!    its link was), a group-addressed copy lost is COLLISION, HALF_DUPLEX or PACKET_ERROR. A
//!    copy received arrives at the end of its frame and is not drawn again at release
//!    (whatever `links.errors` says: the MAC's FCS passed it). Each BEGIN runs the media to
//!    the end of its window; the queue bound is the radio's.
//! 3. **Propagation**: each copy's reception ends `delay` after the transmission ends
//!    (acoustic d/c, rf `delay_ms` + d/c₀, ideal/disk `delay_ms`); it starts `delay` after the
//!    transmission starts.
//! 4. **No link**: a receiver whose pair has no link (`none`) loses its copy at once (OUT_OF_RANGE)
//!    and takes no part in the transmission; so does one the model says is out of range,
//!    except on an 802.11 medium: there the sender does not know, and tries the frame to the
//!    retry limit (a receiver never detects a frame under −82 dBm).
//! 5. **Acoustic medium**: every transmission of a vehicle with an acoustic link goes through
//!    the shared acoustic medium ([`crate::model::medium`]; the same rules as the emulated
//!    modems'): it is heard wherever it is decodable or its in-band SNR is ≥ 0 dB, addressed
//!    or not; a copy its receiver cannot decode is OUT_OF_RANGE at once; a copy whose receiver
//!    transmits during it is lost with HALF_DUPLEX, else one that overlaps another heard
//!    signal with COLLISION unless it captures it (`capture_sir_db`, pairwise). The medium
//!    decides each copy when it is released.
//!
//! END(k) releases every copy whose reception ends in [kW, (k+1)W) — and any whose computed
//! end is earlier (a packet captured at the end of window k−1 over a fast link): those are
//! released at kW, the earliest the lockstep allows — with `rx_time_ns` = max(end, kW),
//! `rx_node`, `rx_ip` (the receiver's first IPv4 address, 0 if none), `clear_*` and `ber`.
//! With `links.errors: drop` each copy is first drawn against PER = 1 − (1 − BER)^bits and lost
//! with PACKET_ERROR on failure; delivered copies carry ber 0. With `errors: flip` no draw is
//! made and every copy carries its BER. Copies due later stay held. Losses go into
//! `drop_pkt_id`/`drop_node`/`drop_reason`: OUT_OF_RANGE and QUEUE_FULL in the END of the window
//! their packet arrived in, the others in the END of the window they would have been delivered
//! in. Entries naming an unknown vehicle are dropped with DROP_UNSPECIFIED (`drop_node` is the
//! receiver if known, else `u32::MAX`).
//!
//! **Link state.** Every END also carries `link_state` for the directed pairs whose link model
//! state changed since they were last reported (all of them in window 0): usable, in-band SNR
//! (absent for ideal/disk), rate, the PER of a 1000-byte packet (from the BER; 1 when not
//! usable) and the delay, from this BEGIN's geometry. Tolerances: usable and rate any change,
//! SNR 0.1 dB, PER 1 % relative and 0.001 absolute, delay 1 µs or 0.1 % of it if larger. The models are symmetric,
//! so one budget per pair serves both directions, and both are reported together. The cost is
//! one budget per pair and window, no allocation unless something is reported.
//!
//! **Causality.** The simulator knows at BEGIN(k) only packets captured before kW, so a copy
//! released in window k cannot be destroyed by a transmission that starts after kW; if such a
//! later transmission overlaps it on the acoustic medium, only the later one is lost
//! (COLLISION). The error is bounded by W. The 802.11 media have none: their frames go on the
//! air a window after capture, when every frame that can overlap them is known.
//!
//! **ChannelData.** Each BEGIN's ChannelData is checked against the vehicles
//! ([`ChannelView::check`]); one that does not describe them is an error naming the window. A
//! BEGIN without any (no `node_list`, no paths, as from a coordinator without a physics side)
//! leaves the geometry unknown: every vehicle at the origin, every pair in LOS.
//!
//! **Determinism.** Every ordering is total (capture time, source, id, entry index; release by
//! end time then sequence number) and each random stream ([`crate::sim::streams`], from the
//! scenario's `seed`: one per 802.11 medium by its standard and channel, one per directed link's
//! packet errors by its vehicles' names) is drawn in a fixed order (a medium's events in time
//! order, a link's releases in order), so the same inputs and seed give the same END bytes, and
//! a vehicle added, or traffic on other links, leaves a link's packet-error draws as they were.

use crate::clock::Schedule;
use crate::config::{ErrorHandling, LoadedScenario};
use crate::lockstep::{
    protocol::{expect_network_into, Received, WindowCounter},
    Reply, Service,
};
use crate::model::fate::DropReason;
use crate::model::link::{pair_index, Budget, ChannelGeometry, LinkSpec};
use crate::model::medium::{self, CopyId, Medium, Reception, Signal, Verdict};
use crate::model::wifi_medium::{Frame, Outcome, WifiMedium};
use crate::sim::air::{AirCounters, SharedAir};
use crate::sim::streams;
use crate::wire::channel::{Channel, ChannelView, Decoded};
use crate::wire::proto::{rosnetsim::network_update::MsgType, LinkState, NetworkUpdate};
use crate::wire::update::Packet;
use foldhash::HashMap;
use prost::bytes::Bytes;
use prost::Message;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use smallvec::SmallVec;
use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

pub use crate::sim::passthrough::PassthroughNetwork;

/// Largest number of packet entries accepted in one BEGIN.
pub const MAX_ENTRIES_PER_WINDOW: usize = 1 << 20;
/// Most copies held for later windows; beyond it new copies are dropped (QUEUE_FULL).
pub const MAX_PENDING: usize = 1 << 20;

/// Counters of what the simulator did (for logs and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub transmissions: u64,
    pub delivered: u64,
    pub out_of_range: u64,
    pub packet_error: u64,
    pub collision: u64,
    pub half_duplex: u64,
    pub queue_full: u64,
    /// 802.11: unicast frames dropped after their last retry, retransmissions sent, and
    /// attempts lost while another transmission overlapped them.
    pub retry_limit: u64,
    pub retries: u64,
    pub collided_attempts: u64,
    pub unknown_node: u64,
    /// Signals the acoustic medium forgot because a node's list was full.
    pub events_forgotten: u64,
}

/// One vehicle as the simulator sees it.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub name: String,
    /// First IPv4 address (0 if none), as `u32::from(Ipv4Addr)`.
    pub ipv4: u32,
}

/// A copy held until its reception ends.
#[derive(Debug, Clone)]
struct Pending {
    pkt_id: u32,
    /// The sender (a node index): its link's packet errors are drawn from its own stream.
    src: usize,
    src_ip: u32,
    dst_ip: u32,
    dst: usize,
    bits: u64,
    budget: Budget,
    /// Its copy in the acoustic medium (acoustic links only).
    medium: Option<CopyId>,
    /// Decided by an 802.11 medium: no error draw at release.
    decided: bool,
}

/// One 802.11 medium of the scenario's links with `mac`, by standard and channel.
struct Air {
    key: (crate::config::WifiStandard, u16),
    medium: WifiMedium<Arc<AirCopies>>,
    /// The medium's own draws (backoffs, receptions): [`streams::stream`] of its key.
    rng: ChaCha8Rng,
}

/// A transmission handed to an 802.11 medium: the packet and, per receiver, its entry's
/// destination address and the budget of its link.
#[derive(Debug)]
struct AirCopies {
    pkt_id: u32,
    src: usize,
    src_ip: u32,
    bits: u64,
    copies: Copies,
}

/// Each receiver's node, address and budget: one for a unicast frame, held inline.
type Copies = SmallVec<[(usize, u32, Budget); 1]>;

impl Stats {
    /// Counts a copy lost for `reason`.
    fn lost(&mut self, reason: DropReason) {
        match reason {
            DropReason::Collision => self.collision += 1,
            DropReason::HalfDuplex => self.half_duplex += 1,
            DropReason::OutOfRange => self.out_of_range += 1,
            DropReason::QueueFull => self.queue_full += 1,
            DropReason::RetryLimit => self.retry_limit += 1,
            _ => self.packet_error += 1,
        }
    }
}

/// The channel last decoded in this process, for the next reader of the same bytes: the physics
/// coordinator decodes every window's ChannelData, and the embedded network simulator in the
/// same process ([`NetworkSim::with_memo`]) takes it from here instead of decoding it a second
/// time. A reader compares the bytes, so it can only ever take the decoding of exactly what it
/// holds.
#[derive(Debug, Clone, Default)]
pub struct ChannelMemo(Arc<Mutex<Option<Arc<Decoded>>>>);

impl ChannelMemo {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<Decoded>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Leaves `decoded` for the next reader.
    pub fn put(&self, decoded: Arc<Decoded>) {
        *self.slot() = Some(decoded);
    }

    /// Takes back what was left (so its owner may reuse the buffers).
    pub fn take(&self) -> Option<Arc<Decoded>> {
        self.slot().take()
    }

    /// The decoding of `bytes`, if it is what was left.
    pub fn get(&self, bytes: &[u8]) -> Option<Arc<Decoded>> {
        self.slot()
            .as_ref()
            .filter(|d| d.bytes.as_ref() == bytes)
            .cloned()
    }
}

pub struct NetworkSim {
    windows: WindowCounter,
    schedule: Schedule,
    nodes: Vec<NodeInfo>,
    ip_to_node: HashMap<u32, usize>,
    /// `links[a * n + b]`: index into `specs` of the model of pair (a, b).
    links: Vec<usize>,
    specs: Vec<LinkSpec>,
    queue_packets: usize,
    errors: ErrorHandling,
    seed: u64,
    /// Per directed pair that drew a packet error (`s * n + d`): its own stream of draws.
    losses: HashMap<usize, ChaCha8Rng>,
    /// Per transmitter: start times of transmissions scheduled but not yet started.
    waiting: Vec<VecDeque<u64>>,
    busy_until: Vec<u64>,
    medium: Medium,
    /// The 802.11 media: one per standard and channel of the links with `mac`.
    airs: Vec<Air>,
    /// Per spec: its 802.11 medium's index in `airs`.
    air_of_spec: Vec<Option<usize>>,
    /// The media's counters as of the last window (None without a medium).
    air_counters: Option<SharedAir>,
    pending: BTreeMap<(u64, u64), Pending>,
    seq: u64,
    stats: Stats,
    /// The last window's geometry (its memory reused from window to window).
    geometry: ChannelGeometry,
    /// Each directed pair's budget in that geometry, computed on first use (emptied when the
    /// geometry changes).
    budgets: Vec<Option<Budget>>,
    /// The link state last reported per unordered pair ([`pair_index`]); `None` before window 0.
    reported: Vec<Option<HeldState>>,
    /// The last window's serialized ChannelData: a BEGIN carrying the same bytes keeps the
    /// geometry without decoding it again.
    last_channel: Bytes,
    /// The last channel decoded (its buffers reused).
    channel: Channel,
    /// Channels a physics coordinator in this process decoded already.
    memo: ChannelMemo,
    /// The last BEGIN and END, emptied: their lists' memory serves the next window's.
    spare: (NetworkUpdate, NetworkUpdate),
}

/// A pair's link state as last reported in an END (the embedded models are symmetric: both
/// directions of a pair share it).
#[derive(Debug, Clone, Copy, PartialEq)]
struct HeldState {
    usable: bool,
    snr_db: Option<f64>,
    rate_bps: f64,
    per: f64,
    delay_ns: u64,
}

/// Bits of the packet `LinkState.per` is given for (1000 bytes).
const PER_BITS: u64 = 8000;
/// Smallest PER change reported on its own.
const PER_FLOOR: f64 = 0.001;

impl HeldState {
    fn of(b: &Budget) -> HeldState {
        HeldState {
            usable: b.usable,
            snr_db: b.snr_db.is_finite().then_some(b.snr_db),
            rate_bps: b.rate_bps,
            per: if b.usable {
                crate::model::acoustic::per(b.ber, PER_BITS)
            } else {
                1.0
            },
            delay_ns: medium::delay_ns(b.delay_s),
        }
    }

    /// `new` differs from this state beyond the reporting tolerances: usable or rate any
    /// change, SNR 0.1 dB, PER 1 % relative and 0.001 absolute (so that a PER near 0, which the
    /// waterfall moves by a few percent per hundredth of a dB, follows the SNR), delay 1 µs or
    /// 0.1 % of the held delay if larger.
    fn changed(&self, new: &HeldState) -> bool {
        let snr = match (self.snr_db, new.snr_db) {
            (Some(a), Some(b)) => (a - b).abs() >= 0.1,
            (None, None) => false,
            _ => true,
        };
        let (d0, d1) = (self.delay_ns, new.delay_ns);
        let delay_tol = (d0 / 1000).max(1000);
        self.usable != new.usable
            || self.rate_bps != new.rate_bps
            || snr
            || (self.per - new.per).abs() > (0.01 * self.per.max(new.per)).max(PER_FLOOR)
            || d0.abs_diff(d1) >= delay_tol
    }

    fn wire(&self, src: usize, dst: usize) -> LinkState {
        LinkState {
            src_node: src as u32,
            dst_node: dst as u32,
            usable: self.usable,
            snr_db: self.snr_db,
            rate_bps: self.rate_bps,
            per: self.per,
            delay_ns: self.delay_ns,
        }
    }
}

/// The END lists being built.
#[derive(Default)]
struct EndLists {
    end: NetworkUpdate,
}

impl EndLists {
    fn drop(&mut self, pkt_id: u32, node: u32, reason: DropReason) {
        self.end.drop_pkt_id.push(pkt_id);
        self.end.drop_node.push(node);
        self.end.drop_reason.push(reason.to_wire());
    }
}

fn ipv4_of(address: &ipnet::IpNet) -> Option<u32> {
    match address.addr() {
        IpAddr::V4(v4) => Some(u32::from(v4)),
        IpAddr::V6(_) => None,
    }
}

impl NetworkSim {
    /// The simulator for a (validated) scenario.
    pub fn from_scenario(loaded: &LoadedScenario) -> NetworkSim {
        let s = &loaded.scenario;
        let schedule = loaded.schedule();
        let nodes: Vec<NodeInfo> = s
            .vehicles
            .iter()
            .map(|v| NodeInfo {
                name: v.name.clone(),
                ipv4: v.addresses.iter().find_map(|a| ipv4_of(a)).unwrap_or(0),
            })
            .collect();
        let mut ip_to_node = HashMap::default();
        for (i, v) in s.vehicles.iter().enumerate() {
            for a in &v.addresses {
                if let Some(ip) = ipv4_of(a) {
                    ip_to_node.entry(ip).or_insert(i);
                }
            }
        }
        let n = nodes.len();
        let mut specs = vec![LinkSpec::from_config(&s.links.default, &s.world.water)];
        let mut links = vec![0usize; n * n];
        for pair in &s.links.pairs {
            let Some([a, b]) = pair.between() else {
                continue;
            };
            let find = |name: &str| nodes.iter().position(|v| v.name == name);
            if let (Some(a), Some(b)) = (find(a), find(b)) {
                specs.push(LinkSpec::from_config(pair, &s.world.water));
                links[a * n + b] = specs.len() - 1;
                links[b * n + a] = specs.len() - 1;
            }
        }
        NetworkSim::new(
            nodes,
            specs,
            links,
            schedule,
            s.links.queue_packets as usize,
            s.links.errors,
            s.seed,
        )
    }

    /// A simulator over `nodes` with `links[a * n + b]` indexing `specs`.
    pub fn new(
        nodes: Vec<NodeInfo>,
        specs: Vec<LinkSpec>,
        links: Vec<usize>,
        schedule: Schedule,
        queue_packets: usize,
        errors: ErrorHandling,
        seed: u64,
    ) -> NetworkSim {
        let n = nodes.len();
        let ip_to_node = nodes
            .iter()
            .enumerate()
            .filter(|(_, v)| v.ipv4 != 0)
            .map(|(i, v)| (v.ipv4, i))
            .collect();
        let links = if links.len() == n * n && links.iter().all(|&i| i < specs.len()) {
            links
        } else {
            vec![0; n * n]
        };
        let specs = if specs.is_empty() {
            vec![LinkSpec::Ideal {
                rate_bps: 1e9,
                delay_s: 0.0,
            }]
        } else {
            specs
        };
        let mut airs: Vec<Air> = Vec::new();
        let air_of_spec = specs
            .iter()
            .map(|spec| {
                let ((key, _), phy) = (spec.medium()?, *spec.mac()?);
                Some(match airs.iter().position(|a| a.key == key) {
                    Some(x) => x,
                    None => {
                        airs.push(Air {
                            key,
                            medium: WifiMedium::new(phy, n),
                            rng: streams::stream(
                                seed,
                                "802.11",
                                &[key.0.name(), &key.1.to_string()],
                            ),
                        });
                        airs.len() - 1
                    }
                })
            })
            .collect();
        let air_counters = (!airs.is_empty()).then(|| {
            let mut c = AirCounters::new(nodes.iter().map(|v| v.name.clone()).collect());
            for a in &airs {
                c.add_medium(a.key.0, a.key.1);
            }
            Arc::new(Mutex::new(c))
        });
        NetworkSim {
            windows: WindowCounter::new(schedule.windows),
            schedule,
            nodes,
            ip_to_node,
            links,
            specs,
            queue_packets: queue_packets.max(1),
            errors,
            seed,
            losses: HashMap::default(),
            waiting: vec![VecDeque::new(); n],
            busy_until: vec![0; n],
            medium: Medium::new(n),
            airs,
            air_of_spec,
            air_counters,
            pending: BTreeMap::new(),
            seq: 0,
            stats: Stats::default(),
            geometry: ChannelGeometry::unknown(),
            budgets: Vec::new(),
            reported: Vec::new(),
            last_channel: Bytes::new(),
            channel: Channel::default(),
            memo: ChannelMemo::default(),
            spare: Default::default(),
        }
    }

    /// Takes the channels a physics coordinator in this process decoded from `memo` instead of
    /// decoding them again.
    pub fn with_memo(mut self, memo: ChannelMemo) -> Self {
        self.memo = memo;
        self
    }

    pub fn stats(&self) -> Stats {
        let air = |f: fn(&crate::model::wifi_medium::AirStats) -> u64| {
            self.airs.iter().map(|a| f(&a.medium.stats())).sum::<u64>()
        };
        Stats {
            events_forgotten: self.medium.forgotten(),
            retries: air(|s| s.retries),
            collided_attempts: air(|s| s.collided),
            ..self.stats
        }
    }

    /// The 802.11 media's counters, kept current after every window (None if the scenario
    /// has no link with `mac`).
    pub fn shared_air(&self) -> Option<SharedAir> {
        self.air_counters.clone()
    }

    /// Copies held for later windows.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    fn spec(&self, a: usize, b: usize) -> &LinkSpec {
        &self.specs[self.links[a * self.nodes.len() + b]]
    }

    /// The budget of the link from `a` to `b` in `geometry` (this window's), computed once
    /// for as long as the geometry stays.
    fn budget(&mut self, a: usize, b: usize, geometry: &ChannelGeometry) -> Budget {
        let n = self.nodes.len();
        if self.budgets.len() != n * n {
            self.budgets = vec![None; n * n];
        }
        let (specs, links) = (&self.specs, &self.links);
        *self.budgets[a * n + b]
            .get_or_insert_with(|| specs[links[a * n + b]].budget(&geometry.between(a, b)))
    }

    pub fn handle(&mut self, request: impl Received) -> Result<Vec<u8>, String> {
        let (spare_begin, spare_end) = std::mem::take(&mut self.spare);
        let begin = expect_network_into(request, MsgType::Begin, self.windows.next, spare_begin)?;
        let k = begin.time_val;
        let n = begin.pkt_id.len();
        if n > MAX_ENTRIES_PER_WINDOW {
            return Err(format!(
                "window {k}: {n} packet entries exceed the limit of {MAX_ENTRIES_PER_WINDOW}"
            ));
        }
        // A channel byte for byte the last one (sampled less often than every window) leaves
        // the geometry, and so every link's state, as it was.
        let same_channel = k > 0 && begin.channel_data == self.last_channel;
        let mut geometry = std::mem::take(&mut self.geometry);
        if !same_channel {
            self.budgets.fill(None);
            let memo = self.memo.get(&begin.channel_data);
            let channel = match &memo {
                Some(d) => &d.channel,
                None => {
                    self.channel
                        .decode_from(&begin.channel_data)
                        .map_err(|e| format!("window {k}: channel_data: {e}"))?;
                    &self.channel
                }
            };
            if channel.is_empty() {
                geometry = ChannelGeometry::unknown();
            } else {
                let view = ChannelView::check(channel, self.nodes.len())
                    .map_err(|e| format!("window {k}: channel_data: {e}"))?;
                geometry.update(&view);
            }
        }
        self.windows.begin(k)?;
        let window_start = self.schedule.start_ns(k);
        let mut out = EndLists { end: spare_end };
        out.end.clear();
        if !same_channel {
            self.link_states(&geometry, &mut out.end);
        }
        let packets: Vec<Packet> = begin.packets().collect();
        self.schedule_entries(&packets, &geometry, window_start, &mut out);
        self.advance_airs(self.schedule.start_ns(k + 1), &mut out);
        self.release(window_start, self.schedule.start_ns(k + 1), &mut out);
        let mut begin = begin.into_inner();
        if !same_channel {
            self.last_channel = std::mem::take(&mut begin.channel_data);
        }
        self.geometry = geometry;
        out.end.msg_type = MsgType::End as i32;
        out.end.time_val = k;
        let end = out.end.encode_to_vec();
        self.spare = (begin, out.end);
        Ok(end)
    }

    /// Adds to `end` the link state of every directed pair whose state changed beyond the
    /// tolerances since it was last reported (every pair in the first window): one budget per
    /// unordered pair from this window's geometry, both directions reported together. Pairs
    /// without a link (`none`) have no state to report. The same budget sets the pair's level
    /// on its 802.11 medium, if it has one.
    fn link_states(&mut self, geometry: &ChannelGeometry, end: &mut NetworkUpdate) {
        let n = self.nodes.len();
        let pairs = n * n.saturating_sub(1) / 2;
        if self.reported.len() != pairs {
            self.reported = vec![None; pairs];
        }
        for a in 0..n {
            for b in a + 1..n {
                if matches!(self.spec(a, b), LinkSpec::None) {
                    continue;
                }
                let budget = self.budget(a, b, geometry);
                let spec = self.spec(a, b);
                // The pair's level on its 802.11 medium, for what the medium senses and decides.
                if let (Some(x), Some((_, noise))) =
                    (self.air_of_spec[self.links[a * n + b]], spec.medium())
                {
                    let medium = &mut self.airs[x].medium;
                    medium.set_level(a, b, Some(budget.level_db), noise);
                    medium.set_level(b, a, Some(budget.level_db), noise);
                }
                let now = HeldState::of(&budget);
                let slot = &mut self.reported[pair_index(a, b, n)];
                if slot.is_none_or(|held| held.changed(&now)) {
                    *slot = Some(now);
                    end.link_state.push(now.wire(a, b));
                    end.link_state.push(now.wire(b, a));
                }
            }
        }
    }

    fn node_of(&self, node: Option<u32>, ip: u32) -> Option<usize> {
        match node {
            Some(i) => ((i as usize) < self.nodes.len()).then_some(i as usize),
            None => self.ip_to_node.get(&ip).copied(),
        }
    }

    fn schedule_entries(
        &mut self,
        b: &[Packet],
        geometry: &ChannelGeometry,
        window_start: u64,
        out: &mut EndLists,
    ) {
        let n = b.len();
        let time = |i: usize| b[i].time_ns.unwrap_or(window_start);
        let srcs: Vec<Option<usize>> = b
            .iter()
            .map(|p| self.node_of(p.src_node, p.src_ip))
            .collect();
        let dsts: Vec<Option<usize>> = b
            .iter()
            .map(|p| self.node_of(p.dst_node, p.dst_ip))
            .collect();
        let src = |i: usize| srcs[i];
        let dst = |i: usize| dsts[i];
        let mut order: Vec<usize> = (0..n).collect();
        let key = |i: usize| (time(i), src(i).map_or(u64::MAX, |s| s as u64), b[i].pkt_id);
        order.sort_by_key(|&i| (key(i), i));
        let mut g = 0;
        while g < order.len() {
            let mut h = g + 1;
            while h < order.len() && key(order[h]) == key(order[g]) {
                h += 1;
            }
            let group = &order[g..h];
            g = h;
            let first = group[0];
            let Some(s) = src(first) else {
                for &i in group {
                    self.stats.unknown_node += 1;
                    out.drop(
                        b[i].pkt_id,
                        dst(i).map_or(u32::MAX, |d| d as u32),
                        DropReason::Unspecified,
                    );
                }
                continue;
            };
            let mut receivers = Vec::new();
            for &i in group {
                match dst(i) {
                    Some(d) if d != s => receivers.push((i, d)),
                    other => {
                        self.stats.unknown_node += 1;
                        out.drop(
                            b[i].pkt_id,
                            other.map_or(u32::MAX, |d| d as u32),
                            DropReason::Unspecified,
                        );
                    }
                }
            }
            if receivers.is_empty() {
                continue;
            }
            self.transmit(b, s, &receivers, time(first), geometry, out);
        }
    }

    /// One transmission from `s` to `receivers` (entry index, node), captured at `t`.
    fn transmit(
        &mut self,
        b: &[Packet],
        s: usize,
        receivers: &[(usize, usize)],
        t: u64,
        geometry: &ChannelGeometry,
        out: &mut EndLists,
    ) {
        let n = self.nodes.len();
        // Receivers without a link (no radio in common) lose their copy at once, whatever
        // carries the others: a multicast heard over an 802.11 link goes on its medium.
        let no_link = |d: usize| matches!(self.specs[self.links[s * n + d]], LinkSpec::None);
        if receivers.iter().any(|&(_, d)| no_link(d)) {
            let (none, linked): (Vec<_>, Vec<_>) =
                receivers.iter().partition(|&&(_, d)| no_link(d));
            for (i, d) in none {
                self.stats.out_of_range += 1;
                out.drop(b[i].pkt_id, d as u32, DropReason::OutOfRange);
            }
            if !linked.is_empty() {
                self.transmit(b, s, &linked, t, geometry, out);
            }
            return;
        }
        let first = receivers[0].0;
        let pkt_id = b[first].pkt_id;
        let bits = b[first].length as u64 * 8;
        let air = self.air_of_spec[self.links[s * n + receivers[0].1]].filter(|&x| {
            receivers
                .iter()
                .all(|&(_, d)| self.air_of_spec[self.links[s * n + d]] == Some(x))
        });
        if let Some(x) = air {
            self.send_on_air(x, b, s, receivers, t, geometry, out);
            return;
        }
        // Queue.
        let q = &mut self.waiting[s];
        while q.front().is_some_and(|&start| start <= t) {
            q.pop_front();
        }
        if q.len() >= self.queue_packets || self.pending.len() + receivers.len() > MAX_PENDING {
            for &(_, d) in receivers {
                self.stats.queue_full += 1;
                out.drop(pkt_id, d as u32, DropReason::QueueFull);
            }
            return;
        }
        let budgets: Vec<Budget> = receivers
            .iter()
            .map(|&(_, d)| self.budget(s, d, geometry))
            .collect();
        let rate = budgets
            .iter()
            .map(|x| x.rate_bps)
            .fold(f64::INFINITY, f64::min);
        let duration = if rate.is_finite() && rate > 0.0 {
            (bits as f64 / rate * 1e9).round().min(1e18) as u64
        } else {
            0
        };
        let start = t.max(self.busy_until[s]);
        let end = start.saturating_add(duration);
        self.busy_until[s] = end;
        if start > t {
            self.waiting[s].push_back(start);
        }
        self.stats.transmissions += 1;

        // Every vehicle with an acoustic link transmits on the acoustic medium: each copy over an
        // acoustic link is a signal there, and so is the transmission where any other vehicle
        // over an acoustic link hears it.
        let acoustic_sender =
            (0..self.nodes.len()).any(|r| r != s && self.spec(s, r).is_acoustic());
        let mut receptions = vec![None; receivers.len()];
        if acoustic_sender {
            let mut signals = Vec::new();
            let mut addressed = vec![false; self.nodes.len()];
            for (&(_, d), budget) in receivers.iter().zip(&budgets) {
                if budget.acoustic {
                    addressed[d] = true;
                    signals.push(Signal {
                        receiver: d,
                        budget: *budget,
                        capture_sir_db: self.spec(s, d).capture_sir_db(),
                        addressed: true,
                    });
                }
            }
            for (r, &to_r) in addressed.iter().enumerate() {
                if r != s && !to_r && self.spec(s, r).is_acoustic() {
                    signals.push(Signal {
                        receiver: r,
                        budget: self.budget(s, r, geometry),
                        capture_sir_db: self.spec(s, r).capture_sir_db(),
                        addressed: false,
                    });
                }
            }
            let mut decided = self.medium.transmit(s, start, end, &signals).into_iter();
            for (slot, budget) in receptions.iter_mut().zip(&budgets) {
                if budget.acoustic {
                    *slot = decided.next().flatten();
                }
            }
        }

        for ((&(i, d), budget), reception) in receivers.iter().zip(&budgets).zip(receptions) {
            let in_range = match reception {
                Some(r) => r != Reception::OutOfRange,
                None => budget.usable,
            };
            if !in_range {
                self.stats.out_of_range += 1;
                out.drop(pkt_id, d as u32, DropReason::OutOfRange);
                continue;
            }
            let delay = medium::delay_ns(budget.delay_s);
            let key = (end.saturating_add(delay), self.seq);
            self.seq += 1;
            let medium = match reception {
                Some(Reception::InFlight(id)) => Some(id),
                _ => None,
            };
            self.pending.insert(
                key,
                Pending {
                    pkt_id,
                    src: s,
                    src_ip: b[i].src_ip,
                    dst_ip: b[i].dst_ip,
                    dst: d,
                    bits,
                    budget: *budget,
                    medium,
                    decided: false,
                },
            );
        }
    }

    /// One transmission from `s` to `receivers` all over links of the 802.11 medium
    /// `airs[x]`, captured at `t`: queued at its station a window later (see the module docs).
    #[allow(clippy::too_many_arguments)]
    fn send_on_air(
        &mut self,
        x: usize,
        b: &[Packet],
        s: usize,
        receivers: &[(usize, usize)],
        t: u64,
        geometry: &ChannelGeometry,
        out: &mut EndLists,
    ) {
        let first = &b[receivers[0].0];
        if self.airs[x].medium.queued(s) >= self.queue_packets
            || self.pending.len() + receivers.len() > MAX_PENDING
        {
            for &(_, d) in receivers {
                self.stats.queue_full += 1;
                out.drop(first.pkt_id, d as u32, DropReason::QueueFull);
            }
            return;
        }
        let copies: Copies = receivers
            .iter()
            .map(|&(i, d)| (d, b[i].dst_ip, self.budget(s, d, geometry)))
            .collect();
        let group = std::net::Ipv4Addr::from(first.dst_ip);
        let unicast = receivers.len() == 1
            && first.multicast != Some(true)
            && !group.is_multicast()
            && !group.is_broadcast();
        let phy = *self.airs[x].medium.phy();
        let lowest = phy.rates()[0];
        let rate = match unicast {
            true => phy.rate(copies[0].2.rate_bps).unwrap_or(lowest),
            false => lowest,
        };
        let frame = Frame {
            receivers: receivers.iter().map(|&(_, d)| d).collect(),
            bytes: phy.mpdu_bytes(first.length),
            rate,
            unicast,
            ideal: unicast && self.spec(s, copies[0].0).ideal_rate_choice(),
            tag: Arc::new(AirCopies {
                pkt_id: first.pkt_id,
                src: s,
                src_ip: first.src_ip,
                bits: u64::from(first.length) * 8,
                copies,
            }),
        };
        self.stats.transmissions += 1;
        let on_air = t.saturating_add(self.schedule.window_ns);
        self.airs[x].medium.enqueue(s, frame, on_air);
    }

    /// Runs each 802.11 medium to `until` (every frame that reaches it before then is known,
    /// a window after its capture): a copy
    /// received is held until its reception ends, one lost is dropped now (out of range when
    /// its link was).
    fn advance_airs(&mut self, until: u64, out: &mut EndLists) {
        let mut outcomes: Vec<Outcome<Arc<AirCopies>>> = Vec::new();
        for air in &mut self.airs {
            air.medium.advance(until, &mut air.rng, &mut outcomes);
        }
        if let Some(c) = &self.air_counters {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            for (x, air) in self.airs.iter_mut().enumerate() {
                c.update(x, &mut air.medium);
            }
        }
        for o in outcomes {
            let c = &o.tag;
            let Some(&(d, dst_ip, budget)) = c.copies.iter().find(|c| c.0 == o.receiver) else {
                continue;
            };
            match o.result {
                Ok(end) => {
                    let key = (
                        end.saturating_add(medium::delay_ns(budget.delay_s)),
                        self.seq,
                    );
                    self.seq += 1;
                    self.pending.insert(
                        key,
                        Pending {
                            pkt_id: c.pkt_id,
                            src: c.src,
                            src_ip: c.src_ip,
                            dst_ip,
                            dst: d,
                            bits: c.bits,
                            budget,
                            medium: None,
                            decided: true,
                        },
                    );
                }
                Err(reason) => {
                    let reason = if budget.usable {
                        reason
                    } else {
                        DropReason::OutOfRange
                    };
                    self.stats.lost(reason);
                    out.drop(c.pkt_id, d as u32, reason);
                }
            }
        }
    }

    /// Releases every copy whose reception ends before `until`; forgets signals that can no
    /// longer overlap anything undecided.
    fn release(&mut self, window_start: u64, until: u64, out: &mut EndLists) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 >= until {
                break;
            }
            let ((end, _), p) = entry.remove_entry();
            let verdict = p.medium.map(|id| {
                self.medium
                    .decide(id)
                    .unwrap_or(Verdict::Dropped(DropReason::Unspecified))
            });
            let reason = match verdict {
                Some(Verdict::Dropped(r)) => Some(r),
                _ if p.decided => None,
                _ if self.errors == ErrorHandling::Drop && p.budget.ber > 0.0 => {
                    let per = crate::model::acoustic::per(p.budget.ber, p.bits);
                    let (seed, nodes) = (self.seed, &self.nodes);
                    let rng = self
                        .losses
                        .entry(p.src * nodes.len() + p.dst)
                        .or_insert_with(|| {
                            streams::stream(
                                seed,
                                "packet errors",
                                &[&nodes[p.src].name, &nodes[p.dst].name],
                            )
                        });
                    (rng.random::<f64>() < per).then_some(DropReason::PacketError)
                }
                _ => None,
            };
            match reason {
                Some(r) => {
                    self.stats.lost(r);
                    out.drop(p.pkt_id, p.dst as u32, r);
                }
                None => {
                    self.stats.delivered += 1;
                    let e = &mut out.end;
                    e.clear_pkt_id.push(p.pkt_id);
                    e.clear_src_ip.push(p.src_ip);
                    e.clear_dst_ip.push(p.dst_ip);
                    e.rx_ip.push(self.nodes[p.dst].ipv4);
                    e.ber
                        .push(if self.errors == ErrorHandling::Flip && !p.decided {
                            p.budget.ber
                        } else {
                            0.0
                        });
                    e.rx_time_ns.push(end.max(window_start));
                    e.rx_node.push(p.dst as u32);
                }
            }
        }
        // Transmissions still to come are captured at or after the window start.
        self.medium.forget_before(window_start);
    }
}

impl Service for NetworkSim {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        crate::lockstep::ready(self.handle(request))
    }

    fn finished(&self) -> bool {
        self.windows.finished()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Absorption, SoundSpeed, Water};
    use crate::lockstep::protocol::expect_network;
    use crate::lockstep::protocol::network_begin;
    use crate::model::acoustic::Modulation;
    use crate::model::link::AcousticSpec;
    use crate::wire::proto::ChannelData;
    use crate::wire::proto::PathDetails;
    use crate::wire::update::LinkStateEntry;

    const W: u64 = 100_000_000; // 100 ms windows

    fn acoustic(source_level_db: f64, capture_sir_db: Option<f64>) -> LinkSpec {
        LinkSpec::Acoustic(AcousticSpec {
            modulation: Modulation::Psk,
            bit_rate_bps: 250.0,
            coding_gain_db: 3.0,
            frequency_khz: 25.0,
            bandwidth_hz: 5000.0,
            source_level_db,
            spreading_factor: 1.5,
            absorption: Absorption::Thorp,
            capture_sir_db,
            water: Water {
                sound_speed: SoundSpeed::Fixed(1500.0),
                ..Water::default()
            },
            propagation: crate::config::Propagation::Straight,
            multipath_window_s: crate::model::link::PSK_MULTIPATH_WINDOW_S,
        })
    }

    fn nodes(n: usize) -> Vec<NodeInfo> {
        named((0..n).map(|i| format!("v{i}")))
    }

    /// Vehicles named `names`, vehicle i at 10.10.0.(i + 1) (as [`begin`] addresses them).
    fn named(names: impl IntoIterator<Item = String>) -> Vec<NodeInfo> {
        names
            .into_iter()
            .enumerate()
            .map(|(i, name)| NodeInfo {
                name,
                ipv4: 0x0a0a_0001 + i as u32,
            })
            .collect()
    }

    fn sim(n: usize, spec: LinkSpec, queue: usize, errors: ErrorHandling, seed: u64) -> NetworkSim {
        NetworkSim::new(
            nodes(n),
            vec![spec],
            vec![0; n * n],
            Schedule {
                window_ns: W,
                windows: 1000,
            },
            queue,
            errors,
            seed,
        )
    }

    /// ChannelData with nodes at `xs` (y = 0, z = −20) and every pair LOS unless listed in `nlos`
    /// with its loss.
    fn channel(xs: &[f64], nlos: &[((u32, u32), f64)]) -> Vec<u8> {
        let mut c = ChannelData::default();
        for &x in xs {
            c.node_list
                .extend_from_slice(&[x, 0.0, -20.0, 1.0, 0.0, 0.0, 0.0]);
        }
        for i in 0..xs.len() as u32 {
            for j in i + 1..xs.len() as u32 {
                let loss = nlos.iter().find(|(p, _)| *p == (i, j)).map(|(_, l)| *l);
                c.path_details.push(PathDetails {
                    ids: vec![i, j],
                    los: loss.is_none(),
                    num_hops: vec![2],
                    hop_points: vec![
                        xs[i as usize],
                        0.0,
                        -20.0,
                        0.0,
                        xs[j as usize],
                        0.0,
                        -20.0,
                        loss.unwrap_or(0.0),
                    ],
                    ..Default::default()
                });
            }
        }
        c.encode_to_vec()
    }

    /// (pkt_id, src, dst, bytes, time_ns)
    fn begin(k: u32, channel: &[u8], pkts: &[(u32, u32, u32, u32, u64)]) -> Vec<u8> {
        let mut b = network_begin(k, channel.to_vec());
        for &(id, s, d, len, t) in pkts {
            b.pkt_id.push(id);
            b.src_ip.push(0x0a0a_0001 + s);
            b.dst_ip.push(0x0a0a_0001 + d);
            b.pkt_lengths.push(len);
            b.pkt_time_ns.push(t);
            b.src_node.push(s);
            b.dst_node.push(d);
        }
        b.encode_to_vec()
    }

    /// Runs windows `0..windows`, feeding `pkts` at the BEGIN of the window given with each;
    /// returns every END.
    fn run(
        sim: &mut NetworkSim,
        xs: &[f64],
        windows: u32,
        pkts: &[(u32, (u32, u32, u32, u32, u64))],
    ) -> Vec<NetworkUpdate> {
        let ch = channel(xs, &[]);
        (0..windows)
            .map(|k| {
                let now: Vec<_> = pkts
                    .iter()
                    .filter(|(w, _)| *w == k)
                    .map(|(_, p)| *p)
                    .collect();
                let reply = sim.handle(&begin(k, &ch, &now)).unwrap();
                expect_network(&reply, MsgType::End, k)
                    .unwrap()
                    .into_inner()
            })
            .collect()
    }

    fn deliveries(ends: &[NetworkUpdate]) -> Vec<(u32, u32, u64, u32)> {
        ends.iter()
            .flat_map(|e| {
                (0..e.clear_pkt_id.len())
                    .map(move |i| (e.time_val, e.clear_pkt_id[i], e.rx_time_ns[i], e.rx_node[i]))
            })
            .collect()
    }

    fn drops(ends: &[NetworkUpdate]) -> Vec<(u32, u32, u32, i32)> {
        ends.iter()
            .flat_map(|e| {
                (0..e.drop_pkt_id.len()).map(move |i| {
                    (
                        e.time_val,
                        e.drop_pkt_id[i],
                        e.drop_node[i],
                        e.drop_reason[i],
                    )
                })
            })
            .collect()
    }

    #[test]
    fn acoustic_delay_is_serialization_plus_distance_over_c() {
        // 25 bytes at 250 bit/s = 0.8 s on air; 1500 m at 1500 m/s = 1 s: ends at 1.8 s + 5 ms.
        let mut s = sim(2, acoustic(185.0, None), 8, ErrorHandling::Drop, 1);
        let ends = run(&mut s, &[0.0, 1500.0], 20, &[(0, (7, 0, 1, 25, 5_000_000))]);
        assert_eq!(deliveries(&ends), vec![(18, 7, 1_805_000_000, 1)]);
        let e = &ends[18];
        assert_eq!(
            (e.clear_src_ip[0], e.clear_dst_ip[0], e.rx_ip[0], e.ber[0]),
            (0x0a0a0001, 0x0a0a0002, 0x0a0a0002, 0.0)
        );
        assert!(drops(&ends).is_empty());
    }

    #[test]
    fn serialization_queues_at_the_link_rate_and_overflow_is_queue_full() {
        // 100 bytes at 8000 bit/s = 0.1 s each; queue of 1 waiting packet.
        let mut s = sim(
            2,
            LinkSpec::Ideal {
                rate_bps: 8000.0,
                delay_s: 0.01,
            },
            1,
            ErrorHandling::Drop,
            1,
        );
        let p = |id| (0, (id, 0, 1, 100, 0));
        let ends = run(&mut s, &[0.0, 10.0], 5, &[p(1), p(2), p(3)]);
        assert_eq!(
            deliveries(&ends),
            vec![(1, 1, 110_000_000, 1), (2, 2, 210_000_000, 1)]
        );
        assert_eq!(
            drops(&ends),
            vec![(0, 3, 1, DropReason::QueueFull.to_wire())]
        );
        assert_eq!(s.stats().queue_full, 1);
    }

    /// 1500-byte packets over 802.11a at 54 Mbit/s, all captured at once (as many as go out
    /// within their 500 ms lifetime): on the air a window later, one every DIFS + backoff +
    /// 248 µs + SIFS + ACK, 393.5 µs on average (30.5 Mbit/s), each arriving at the end of its
    /// frame; the first at once (the air was idle), none sooner than the last's ACK, DIFS and
    /// the frame.
    #[test]
    fn an_80211_link_spaces_unicast_frames_by_the_dcf() {
        let spec = LinkSpec::test_rf_mac(Some(crate::config::WifiStandard::A));
        let n = 1000u32;
        let mut s = sim(2, spec, n as usize, ErrorHandling::Drop, 3);
        let pkts: Vec<_> = (0..n).map(|i| (0, (i, 0, 1, 1500, 0))).collect();
        let ends = run(&mut s, &[0.0, 10.0], 20, &pkts);
        let mut at: Vec<u64> = deliveries(&ends).iter().map(|d| d.2).collect();
        assert_eq!(at.len(), n as usize, "every packet delivered at 10 m");
        assert!(drops(&ends).is_empty());
        at.sort_unstable();
        // The first: the 248 µs frame (and 33 ns of flight over 10 m) a window after capture.
        let first = at[0];
        assert_eq!(first, W + 248_000 + 33, "{first}");
        let gaps: Vec<u64> = at.windows(2).map(|w| w[1] - w[0]).collect();
        // Each gap: the last frame's SIFS and ACK (44 µs), DIFS, a backoff, this frame.
        assert!(gaps
            .iter()
            .all(|&g| (326_000..=326_000 + 135_000).contains(&g)));
        let mean = (at[at.len() - 1] - first) as f64 / f64::from(n - 1);
        assert!((mean - 393_500.0).abs() < 4_000.0, "mean spacing {mean} ns");
        assert_eq!((s.stats().retries, s.stats().retry_limit), (0, 0));
    }

    /// Just above 12 Mbit/s's minimum sensitivity, with a noise floor of −83 dBm (an SNR of
    /// 4.1 dB, just above what a preamble needs), a 1500-byte frame at a constant 12 Mbit/s
    /// (the ideal choice there would be 6) fails about
    /// one attempt in seven: those are sent again, and every copy still ends delivered (the
    /// MAC's ACK stands for the error draw); out of range, the sender tries its seven times and
    /// the copies are dropped as out of range.
    #[test]
    fn an_80211_link_retries_failed_frames_and_accounts_for_every_copy() {
        let phy = crate::model::wifi::Phy::of(crate::config::WifiStandard::A);
        let rate = phy.rates()[2];
        assert_eq!(rate.bps, 12_000_000);
        let mut spec = LinkSpec::test_rf_mac(Some(crate::config::WifiStandard::A));
        if let LinkSpec::Rf {
            noise_floor_dbm,
            constant,
            ..
        } = &mut spec
        {
            *noise_floor_dbm = -83.0;
            *constant = Some(rate);
        }
        let pl0 = crate::model::link::free_space_loss_db(1.0, 2.4e9);
        // 20 dBm − PL(d) = −78.9 dBm with PL(d) = PL(1 m) + 30 log10(d).
        let edge = 10f64.powf((20.0 + 78.9 - pl0) / 30.0);
        // About 1.4 ms each with their retries: all sent within their 500 ms lifetime.
        let n = 250u32;
        let mut s = sim(2, spec.clone(), n as usize, ErrorHandling::Drop, 5);
        let pkts: Vec<_> = (0..n).map(|i| (0, (i, 0, 1, 1500, 0))).collect();
        let ends = run(&mut s, &[0.0, edge], 30, &pkts);
        let delivered = deliveries(&ends).len() as u64;
        let dropped = drops(&ends);
        assert_eq!(delivered + dropped.len() as u64, u64::from(n));
        let st = s.stats();
        assert_eq!(dropped.len() as u64, st.retry_limit);
        // Each attempt fails with the PER of 1536 bytes at 4.1 dB: PER/(1 − PER) retries a
        // packet.
        let per = rate.per(1536, -78.9 + 83.0);
        let expected = f64::from(n) * per / (1.0 - per);
        println!(
            "PER {per:.3}: {} retries, {expected:.0} expected",
            st.retries
        );
        assert!(
            (0.6 * expected..1.4 * expected).contains(&(st.retries as f64)),
            "{} retries for {n} packets, {expected:.0} expected",
            st.retries
        );
        // Every copy at 12 Mbit/s: none before its frame ends, a window after capture.
        let frame = phy.ppdu_ns(1536, rate);
        assert!(deliveries(&ends).iter().all(|d| d.2 >= W + frame));

        let mut far = sim(2, spec, 8, ErrorHandling::Drop, 5);
        let ends = run(&mut far, &[0.0, 10_000.0], 2, &[(0, (1, 0, 1, 1500, 0))]);
        // Dropped when the seventh attempt's wait for its ACK ends, in window 1.
        assert_eq!(
            drops(&ends),
            vec![(1, 1, 1, DropReason::OutOfRange.to_wire())]
        );
        assert_eq!((far.stats().retries, far.stats().retry_limit), (6, 0));
    }

    #[test]
    fn fast_links_release_late_captures_at_the_window_start() {
        let mut s = sim(
            2,
            LinkSpec::Ideal {
                rate_bps: 1e9,
                delay_s: 0.0,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        // Captured at 95 ms (window 0), handed over at BEGIN(1): released at 100 ms.
        let ends = run(&mut s, &[0.0, 10.0], 2, &[(1, (1, 0, 1, 125, 95_000_000))]);
        assert_eq!(deliveries(&ends), vec![(1, 1, W, 1)]);
    }

    #[test]
    fn half_duplex_receiver_transmitting_loses_the_reception() {
        // v0 → v1 arrives at v1 during [1.0, 1.8] s; v1 transmits during [1.2, 2.0] s.
        let mut s = sim(2, acoustic(185.0, None), 8, ErrorHandling::Drop, 1);
        let ends = run(
            &mut s,
            &[0.0, 1500.0],
            40,
            &[(0, (1, 0, 1, 25, 0)), (13, (2, 1, 0, 25, 1_200_000_000))],
        );
        assert_eq!(
            drops(&ends),
            vec![(18, 1, 1, DropReason::HalfDuplex.to_wire())]
        );
        // v1's own packet reaches v0 at 3.0 s: v0 is silent then.
        assert_eq!(deliveries(&ends), vec![(30, 2, 3_000_000_000, 0)]);
    }

    #[test]
    fn overlapping_receptions_collide_unless_one_captures() {
        // v0 at 0 m and v2 at 1650 m both send to v1 at 1500 m at t = 0: arrivals [1.0, 1.8] s
        // and [0.1, 0.9] s + ... overlap at v1 (v2's: 150 m → [0.1, 0.9] s; v0's: [1.0, 1.8] s).
        // Make them overlap: v2 sends 0.5 s later.
        let xs = [0.0, 1500.0, 1650.0];
        let pkts = [(0, (1, 0, 1, 25, 0)), (5, (2, 2, 1, 25, 500_000_000))];
        let mut s = sim(3, acoustic(185.0, None), 8, ErrorHandling::Drop, 1);
        let ends = run(&mut s, &xs, 25, &pkts);
        let mut d = drops(&ends);
        d.sort();
        assert_eq!(
            d,
            vec![
                (14, 2, 1, DropReason::Collision.to_wire()),
                (18, 1, 1, DropReason::Collision.to_wire())
            ]
        );
        assert!(deliveries(&ends).is_empty());
        // v2's signal is 15 log10(10) + absorption ≈ 15.3 dB stronger: with a 10 dB capture
        // threshold it survives and v0's is lost.
        let mut s = sim(3, acoustic(185.0, Some(10.0)), 8, ErrorHandling::Drop, 1);
        let ends = run(&mut s, &xs, 25, &pkts);
        assert_eq!(
            drops(&ends),
            vec![(18, 1, 1, DropReason::Collision.to_wire())]
        );
        assert_eq!(deliveries(&ends), vec![(14, 2, 1_400_000_000, 1)]);
    }

    /// Two vehicles each sending 1500-byte packets to a third over 802.11a links: on one
    /// channel they share its air, so together they get about what one gets alone, and some
    /// of their attempts collide; on two channels (the receiver has a radio on each) each
    /// gets all of one. Counted over the first second of air.
    #[test]
    fn senders_on_one_channel_share_its_air_and_on_two_do_not() {
        let on = |channel: u16| {
            let mut spec = LinkSpec::test_rf_mac(Some(crate::config::WifiStandard::A));
            if let LinkSpec::Rf { channel: c, .. } = &mut spec {
                *c = channel;
            }
            spec
        };
        let delivered = |senders: &[usize], channels: [u16; 2]| {
            // Pairs (0, 1) and (0, 2) on the first channel, (1, 2) on the second.
            let links = vec![0, 0, 0, 0, 0, 1, 0, 1, 0];
            let mut s = NetworkSim::new(
                nodes(3),
                vec![on(channels[0]), on(channels[1])],
                links,
                Schedule {
                    window_ns: W,
                    windows: 1000,
                },
                5000,
                ErrorHandling::Drop,
                9,
            );
            let pkts: Vec<_> = senders
                .iter()
                .flat_map(|&from| {
                    (0..4000u32).map(move |i| (from as u32 * 10_000 + i, from as u32))
                })
                .map(|(id, from)| (0, (id, from, 1, 1500, 0)))
                .collect();
            let ends = run(&mut s, &[0.0, 10.0, 20.0], 12, &pkts);
            // Within 400 ms: no frame has yet waited out its 500 ms lifetime.
            let got = deliveries(&ends)
                .iter()
                .filter(|d| d.2 < W + 400_000_000)
                .count();
            let air = s.shared_air().unwrap().lock().unwrap().summary();
            (got, s.stats(), air)
        };
        let (alone, _, _) = delivered(&[0], [1, 1]);
        let (shared, st, air) = delivered(&[0, 2], [1, 1]);
        let (apart, st2, air2) = delivered(&[0, 2], [1, 2]);
        // The summary's links: both senders on the one medium, one on each of two; they add
        // up to the simulator's counters.
        let names = |m: &crate::sim::air::AirSummary| -> Vec<(String, Option<String>)> {
            m.links
                .iter()
                .map(|l| (l.src.clone(), l.dst.clone()))
                .collect()
        };
        let v = |i: usize| format!("v{i}");
        assert_eq!(air.len(), 1);
        assert_eq!(names(&air[0]), [(v(0), Some(v(1))), (v(2), Some(v(1)))]);
        assert_eq!(
            air[0].links.iter().map(|l| l.retries).sum::<u64>(),
            st.retries
        );
        assert_eq!(
            air[0].links.iter().map(|l| l.collided).sum::<u64>(),
            st.collided_attempts
        );
        assert!(
            air[0].busy_share > 0.0 && air[0].busy_share <= 1.0,
            "{air:?}"
        );
        let service = |m: &crate::sim::air::AirSummary| m.links[0].mean_service_ms.unwrap();
        assert_eq!(
            (air2.len(), names(&air2[0]), names(&air2[1])),
            (2, vec![(v(0), Some(v(1)))], vec![(v(2), Some(v(1)))])
        );
        // Sharing the air doubles the time each frame waits for it.
        assert!(
            service(&air[0]) > 1.5 * service(&air2[0]),
            "{air:?} {air2:?}"
        );
        println!("alone {alone}, one channel {shared} ({st:?}), two channels {apart} ({st2:?})");
        // 393.5 µs an exchange alone: 1016 in 400 ms.
        assert!((960..1080).contains(&alone), "{alone}");
        let ratio = |a: usize, b: usize| a as f64 / b as f64;
        assert!((0.95..1.15).contains(&ratio(shared, alone)), "{shared}");
        assert!(st.collided_attempts > 0 && st.retries > 0, "{st:?}");
        assert!((1.9..2.1).contains(&ratio(apart, alone)), "{apart}");
        assert_eq!(st2.collided_attempts, 0);
    }

    #[test]
    fn out_of_range_and_unknown_nodes_are_dropped_in_the_same_window() {
        let mut s = sim(
            3,
            LinkSpec::Disk {
                range_m: 100.0,
                rate_bps: 1e6,
                delay_s: 0.0,
                los_required: false,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        let ends = run(
            &mut s,
            &[0.0, 100.0, 100.5],
            2,
            &[
                (0, (1, 0, 1, 10, 0)),
                (0, (2, 0, 2, 10, 0)),
                (0, (3, 0, 9, 10, 0)),
            ],
        );
        assert_eq!(
            drops(&ends),
            vec![
                (0, 2, 2, DropReason::OutOfRange.to_wire()),
                (0, 3, u32::MAX, DropReason::Unspecified.to_wire())
            ]
        );
        assert_eq!(deliveries(&ends), vec![(0, 1, 80_000, 1)]);
    }

    #[test]
    fn nodes_and_times_fall_back_to_ips_and_the_window_start() {
        let mut s = sim(
            2,
            LinkSpec::Ideal {
                rate_bps: 1e9,
                delay_s: 0.002,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        let ch = channel(&[0.0, 1.0], &[]);
        s.handle(&begin(0, &ch, &[])).unwrap();
        let mut b = network_begin(1, ch);
        b.pkt_id = vec![4];
        b.src_ip = vec![0x0a0a0002];
        b.dst_ip = vec![0x0a0a0001];
        b.pkt_lengths = vec![0];
        let end = expect_network(&s.handle(&b.encode_to_vec()).unwrap(), MsgType::End, 1)
            .unwrap()
            .into_inner();
        assert_eq!(
            (end.clear_pkt_id, end.rx_node, end.rx_time_ns, end.rx_ip),
            (vec![4], vec![0], vec![W + 2_000_000], vec![0x0a0a0001])
        );
    }

    #[test]
    fn receivers_without_a_link_lose_their_copy_and_the_others_get_it_over_the_air() {
        // (0, 1) an 802.11 link, the other pairs none: one transmission from 0 to both.
        let mut s = NetworkSim::new(
            nodes(3),
            vec![
                LinkSpec::None,
                LinkSpec::test_rf_mac(Some(crate::config::WifiStandard::A)),
            ],
            vec![0, 1, 0, 1, 0, 0, 0, 0, 0],
            Schedule {
                window_ns: W,
                windows: 10,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        let ends = run(
            &mut s,
            &[0.0, 10.0, 20.0],
            4,
            &[(0, (7, 0, 1, 100, 0)), (0, (7, 0, 2, 100, 0))],
        );
        let out_of_range = DropReason::OutOfRange.to_wire();
        assert_eq!(drops(&ends), vec![(0, 7, 2, out_of_range)]);
        let got = deliveries(&ends);
        assert_eq!((got.len(), got[0].1, got[0].3), (1, 7, 1), "{got:?}");
        // On the air a window after its capture, as every frame of the medium.
        assert!(got[0].2 > W, "{got:?}");
        let air = s.shared_air().unwrap().lock().unwrap().summary();
        assert_eq!(air[0].links.len(), 1);
        assert_eq!((air[0].links[0].frames, air[0].links[0].attempts), (1, 1));
    }

    #[test]
    fn broadcast_entries_are_one_transmission() {
        // Same pkt_id, source and time to two receivers: on air once (0.1 s), so a second packet
        // waits 0.1 s, not 0.2 s.
        let mut s = sim(
            3,
            LinkSpec::Ideal {
                rate_bps: 8000.0,
                delay_s: 0.0,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        let ends = run(
            &mut s,
            &[0.0, 1.0, 2.0],
            4,
            &[
                (0, (1, 0, 1, 100, 0)),
                (0, (1, 0, 2, 100, 0)),
                (0, (2, 0, 1, 100, 0)),
            ],
        );
        assert_eq!(
            deliveries(&ends),
            vec![(1, 1, W, 1), (1, 1, W, 2), (2, 2, 2 * W, 1)]
        );
    }

    #[test]
    fn no_link_drops_as_out_of_range_and_takes_no_transmitter_time() {
        // v0 broadcasts to v1 (ideal, 8 kbit/s: 0.1 s on air) and v2 (none); the copy to v2 is
        // out of range, the one to v1 arrives as if v2 were not there, and v0–v2 reports no state.
        let specs = vec![
            LinkSpec::Ideal {
                rate_bps: 8000.0,
                delay_s: 0.0,
            },
            LinkSpec::None,
        ];
        let mut links = vec![0; 9];
        for (a, b) in [(0, 2), (2, 0), (1, 2), (2, 1)] {
            links[a * 3 + b] = 1;
        }
        let mut s = NetworkSim::new(
            nodes(3),
            specs,
            links,
            Schedule {
                window_ns: W,
                windows: 1000,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        let ends = run(
            &mut s,
            &[0.0, 1.0, 2.0],
            4,
            &[
                (0, (1, 0, 1, 100, 0)),
                (0, (1, 0, 2, 100, 0)),
                (0, (2, 0, 1, 100, 0)),
            ],
        );
        assert_eq!(deliveries(&ends), vec![(1, 1, W, 1), (2, 2, 2 * W, 1)]);
        assert_eq!(
            drops(&ends),
            vec![(0, 1, 2, DropReason::OutOfRange.to_wire())]
        );
        let reported: Vec<(u32, u32)> = ends[0]
            .link_state
            .iter()
            .map(|l| (l.src_node, l.dst_node))
            .collect();
        assert_eq!(reported, vec![(0, 1), (1, 0)]);
    }

    #[test]
    fn rf_nlos_loses_the_hop_losses_and_rate() {
        let rf = LinkSpec::test_rf();
        let mut s = sim(2, rf, 8, ErrorHandling::Flip, 1);
        let los = channel(&[0.0, 100.0], &[]);
        let nlos = channel(&[0.0, 100.0], &[((0, 1), 3.0)]);
        // 1500 bytes = 12000 bits: 12 Mbit/s in LOS (13.95 dB) → 1 ms; behind 3 dB of terrain,
        // 10.95 dB: 9 Mbit/s (threshold 10 dB) → 1.333 ms. Plus 100 m / c₀ = 334 ns.
        let e0 = expect_network(
            &s.handle(&begin(0, &los, &[(1, 0, 1, 1500, 0)])).unwrap(),
            MsgType::End,
            0,
        )
        .unwrap();
        let e1 = expect_network(
            &s.handle(&begin(1, &nlos, &[(2, 0, 1, 1500, W)])).unwrap(),
            MsgType::End,
            1,
        )
        .unwrap();
        assert_eq!(e0.rx_time_ns, vec![1_000_000 + 334]);
        assert_eq!(e1.rx_time_ns, vec![W + 1_333_333 + 334]);
        // BER falls a decade per dB above the threshold: 1.95 dB above 12 dB vs 0.95 dB above 10 dB.
        assert!(
            (e1.ber[0] / e0.ber[0] - 10.0).abs() < 1e-9,
            "{} {}",
            e0.ber[0],
            e1.ber[0]
        );
    }

    #[test]
    fn link_state_is_reported_in_window_0_and_when_it_changes() {
        let mut s = sim(3, LinkSpec::test_rf(), 8, ErrorHandling::Drop, 1);
        let states = |s: &mut NetworkSim, k: u32, ch: &[u8]| {
            let end =
                expect_network(&s.handle(&begin(k, ch, &[])).unwrap(), MsgType::End, k).unwrap();
            end.check_nodes(3).unwrap();
            end.link_states().collect::<Vec<_>>()
        };
        // Window 0: every directed pair, each direction with the same state.
        let l0 = states(&mut s, 0, &channel(&[0.0, 100.0, 300.0], &[]));
        assert_eq!(
            l0.iter()
                .map(|l| (l.src_node, l.dst_node))
                .collect::<Vec<_>>(),
            vec![(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
        );
        let ab = l0[0];
        assert_eq!((ab.usable, ab.rate_bps, ab.delay_ns), (true, 12e6, 334));
        assert!((ab.snr_db.unwrap() - 13.94799).abs() < 1e-4, "{ab:?}");
        let ber = crate::model::link::rf_threshold_ber() * 10f64.powf(-(ab.snr_db.unwrap() - 12.0));
        assert!((ab.per - crate::model::acoustic::per(ber, 8000)).abs() < 1e-12);
        assert_eq!(
            l0[1],
            LinkStateEntry {
                src_node: 1,
                dst_node: 0,
                ..ab
            }
        );
        // 1 cm closer: below every tolerance, nothing reported.
        assert!(states(&mut s, 1, &channel(&[0.0, 99.99, 300.0], &[])).is_empty());
        // Behind 3 dB of terrain: 0-1 changes (SNR, rate), the others do not.
        let l2 = states(&mut s, 2, &channel(&[0.0, 99.99, 300.0], &[((0, 1), 3.0)]));
        assert_eq!(l2.len(), 2);
        assert_eq!(
            (l2[0].src_node, l2[0].dst_node, l2[0].rate_bps),
            (0, 1, 9e6)
        );
        assert!((ab.snr_db.unwrap() - l2[0].snr_db.unwrap() - 3.0).abs() < 0.01);
        // Far away: not usable, PER 1.
        let l3 = states(
            &mut s,
            3,
            &channel(&[0.0, 99.99, 30_000.0], &[((0, 1), 3.0)]),
        );
        assert_eq!(l3.len(), 4);
        assert!(
            l3.iter()
                .all(|l| !l.usable && l.per == 1.0 && l.snr_db.is_some()),
            "{l3:?}"
        );
        // Ideal links: no SNR; reported once.
        let mut s = sim(
            2,
            LinkSpec::Ideal {
                rate_bps: 1e6,
                delay_s: 0.002,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        let l0 = states_of(&mut s, 0, &channel(&[0.0, 10.0], &[]));
        assert_eq!(
            l0[0],
            LinkStateEntry {
                src_node: 0,
                dst_node: 1,
                usable: true,
                snr_db: None,
                rate_bps: 1e6,
                per: 0.0,
                delay_ns: 2_000_000
            }
        );
        assert!(states_of(&mut s, 1, &channel(&[0.0, 5000.0], &[((0, 1), 40.0)])).is_empty());
    }

    fn states_of(s: &mut NetworkSim, k: u32, ch: &[u8]) -> Vec<LinkStateEntry> {
        expect_network(&s.handle(&begin(k, ch, &[])).unwrap(), MsgType::End, k)
            .unwrap()
            .link_states()
            .collect()
    }

    #[test]
    fn held_state_tolerances() {
        let base = HeldState {
            usable: true,
            snr_db: Some(10.0),
            rate_bps: 6e6,
            per: 0.1,
            delay_ns: 1_000_000,
        };
        let same = [
            HeldState {
                snr_db: Some(10.09),
                ..base
            },
            HeldState {
                per: 0.1009,
                ..base
            },
            HeldState {
                delay_ns: 1_000_999,
                ..base
            },
        ];
        for s in same {
            assert!(!base.changed(&s), "{s:?}");
        }
        let changed = [
            HeldState {
                snr_db: Some(10.11),
                ..base
            },
            HeldState {
                snr_db: None,
                ..base
            },
            HeldState {
                per: 0.1011,
                ..base
            },
            HeldState {
                delay_ns: 1_001_000,
                ..base
            },
            HeldState {
                rate_bps: 9e6,
                ..base
            },
            HeldState {
                usable: false,
                ..base
            },
        ];
        for c in changed {
            assert!(base.changed(&c), "{c:?}");
        }
        // A PER near 0: 0.001 absolute.
        let clean = HeldState {
            per: 0.0001,
            ..base
        };
        assert!(!clean.changed(&HeldState {
            per: 0.0009,
            ..base
        }));
        assert!(clean.changed(&HeldState {
            per: 0.0012,
            ..base
        }));
        // A long (acoustic) delay: 0.1 % of it.
        let far = HeldState {
            delay_ns: 1_000_000_000,
            ..base
        };
        assert!(!far.changed(&HeldState {
            delay_ns: 1_000_999_000,
            ..base
        }));
        assert!(far.changed(&HeldState {
            delay_ns: 1_001_000_000,
            ..base
        }));
    }

    #[test]
    fn same_inputs_and_seed_give_the_same_bytes() {
        // A source level that puts a 25-byte packet's PER near one half at 1500 m.
        let sl = (100..185)
            .map(f64::from)
            .find(|&sl| {
                let b = acoustic(sl, None).budget(&crate::model::link::Geometry {
                    distance_m: 1500.0,
                    los: true,
                    hop_loss_db: 0.0,
                    mean_depth_m: 20.0,
                    arrivals: None,
                });
                b.usable && crate::model::acoustic::per(b.ber, 200) < 0.7
            })
            .unwrap();
        let go = |seed| {
            let mut s = sim(2, acoustic(sl, None), 64, ErrorHandling::Drop, seed);
            let ch = channel(&[0.0, 1500.0], &[]);
            let mut bytes = Vec::new();
            for k in 0..400u32 {
                let pkts: Vec<_> = if k % 10 == 0 {
                    vec![(k, 0, 1, 25, k as u64 * W)]
                } else {
                    vec![]
                };
                bytes.extend(s.handle(&begin(k, &ch, &pkts)).unwrap());
            }
            (bytes, s.stats())
        };
        let (a, sa) = go(7);
        let (b, _) = go(7);
        let (c, _) = go(8);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(sa.packet_error > 0 && sa.delivered > 0, "{sa:?}");
    }

    /// Each link draws its packet errors from a stream of its own, named by its vehicles: a
    /// vehicle added ahead of them (every index shifted) whose own link to one of them loses
    /// copies too, drawn between theirs, leaves the copies their link loses exactly as they
    /// were.
    #[test]
    fn a_vehicle_added_leaves_another_links_packet_errors_as_they_were() {
        // A distance where a 1000-byte packet's PER is 5–10 % (10 % at the slowest rate's
        // threshold, the most a usable rf link loses).
        let d = (100..300_000)
            .map(|d| f64::from(d) / 100.0)
            .find(|&d| {
                let b = LinkSpec::test_rf().budget(&crate::model::link::Geometry {
                    distance_m: d,
                    los: true,
                    hop_loss_db: 0.0,
                    mean_depth_m: 0.0,
                    arrivals: None,
                });
                b.usable && (0.05..0.1).contains(&crate::model::acoustic::per(b.ber, 8000))
            })
            .expect("a distance with PER 5-10 %");
        let lost = |names: &[&str], xs: &[f64], flows: &[(u32, u32)]| {
            let nodes = named(names.iter().map(|n| n.to_string()));
            let n = nodes.len();
            let mut s = NetworkSim::new(
                nodes,
                vec![LinkSpec::test_rf()],
                vec![0; n * n],
                Schedule {
                    window_ns: W,
                    windows: 1000,
                },
                64,
                ErrorHandling::Drop,
                5,
            );
            // Flow f's k-th packet is pkt_id 1000·f + k, one per flow every 2 windows.
            let pkts: Vec<(u32, (u32, u32, u32, u32, u64))> = (0..495u32)
                .flat_map(|k| {
                    flows.iter().enumerate().map(move |(f, &(a, b))| {
                        (
                            2 * k,
                            (1000 * f as u32 + k, a, b, 1000, u64::from(2 * k) * W),
                        )
                    })
                })
                .collect();
            let ends = run(&mut s, xs, 1000, &pkts);
            let error = DropReason::PacketError.to_wire();
            let mut ids: Vec<u32> = drops(&ends)
                .into_iter()
                .filter(|x| x.3 == error && x.1 < 1000)
                .map(|x| x.1)
                .collect();
            ids.sort();
            ids
        };
        let alone = lost(&["usv1", "usv2"], &[0.0, d], &[(0, 1)]);
        let beside = lost(
            &["boat", "usv1", "usv2"],
            &[-d, 0.0, d],
            &[(1, 2), (0, 1), (2, 0)],
        );
        assert!(alone.len() > 10 && alone.len() < 80, "{alone:?}");
        assert_eq!(alone, beside);
    }

    #[test]
    fn garbage_requests_are_errors_not_panics() {
        let mut s = sim(
            2,
            LinkSpec::Ideal {
                rate_bps: 1e9,
                delay_s: 0.0,
            },
            8,
            ErrorHandling::Drop,
            1,
        );
        assert!(s.handle(&b"\xff\xff\xff"[..]).is_err());
        let mut b = network_begin(0, b"\x0a\xff".to_vec());
        assert!(s
            .handle(&b.encode_to_vec())
            .unwrap_err()
            .contains("channel_data"));
        // A ChannelData that does not describe the two vehicles is an error naming the window.
        b.channel_data = channel(&[0.0], &[]).into();
        assert_eq!(
            s.handle(&b.encode_to_vec()).unwrap_err(),
            "window 0: channel_data: node_list has 7 values; expected 7 per vehicle for 2 vehicles"
        );
        b.channel_data = channel(&[0.0, 1.0], &[]).into();
        b.pkt_id = vec![1];
        b.src_ip = vec![1];
        b.dst_ip = vec![2];
        b.pkt_lengths = vec![u32::MAX];
        b.src_node = vec![0];
        b.dst_node = vec![1];
        b.pkt_time_ns = vec![u64::MAX];
        assert!(s.handle(&b.encode_to_vec()).is_ok());
        // No ChannelData at all: the geometry is unknown, ideal links still deliver.
        let end = expect_network(
            &s.handle(&begin(1, &[], &[(2, 1, 0, 10, W)])).unwrap(),
            MsgType::End,
            1,
        )
        .unwrap();
        assert_eq!(end.clear_pkt_id, vec![2]);
    }
}
