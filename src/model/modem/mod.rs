//! Emulated WHOI Micro-Modems sharing one acoustic medium ([`crate::model::medium`], the same
//! one the embedded network simulator uses): [`Modems`], a pure state machine (no I/O, time
//! passed in as sim nanoseconds, seeded RNG). [`crate::io::servers::modem_bridge`] puts it on TCP.
//!
//! # Host interface
//! Each modem speaks the Micro-Modem's NMEA host interface: every sentence is a typed
//! [`crate::wire::nmea::Command`] (host → modem, applied in `commands.rs`) or
//! [`crate::wire::nmea::Report`] (modem → host). Configuration (`$CCCFG`/`$CCCFQ` → `$CACFG`,
//! `ALL,0` factory reset), clocks (`$CCCLK` → `$CACLK`, `$CCTMS` → `$CATMS`, `$CCTMQ` →
//! `$CATMQ`), reboot (`$CCMSC,…,0` → `$CAMSC`, then `$CAREV,…,INIT` and `$CAREV,…,AUV` after
//! [`BOOT_S`]), `$CAREV,…,AUV` heartbeats every `heartbeat_s` of sim time and after each data
//! transmission (when `REV` = 1),
//! data cycles (`$CCCYC` → `$CACYC`, `$CADRQ` per frame, `$CCTXD` → `$CATXD`, `$CATXP` /
//! `$CATXF` around the transmission, `$CAXST` when `XST` = 1; `$CAERR,…,DATA_TIMEOUT` when
//! the host leaves a `$CADRQ` unanswered for `DTO` seconds: the cycle is abandoned),
//! receptions (`$CACYC`, `$CARXD` per good frame, `$CAMSG,BAD_CRC` per bad one,
//! `$CAMSG,PACKET_TIMEOUT` for a packet detected but lost in a collision, `$CACST` when
//! `CST` = 1), acks (`$CAACK` at the sender), two-way pings (`$CCMPC` → `$CAMPC`, `$CAMPA` at
//! the target, `$CAMPR` with the one-way travel time at the pinger) and mini-packets
//! (`$CCMUC` → `$CAMUC`, `$CAMUA` at the receiver). Anything else, or a malformed command,
//! gets `$CAERR,hhmmss,NMEA,<code>,<text>` ([`crate::wire::nmea::ErrCode`]). Output checksums
//! are upper case.
//!
//! # Timing
//! A modem's clock reads `epoch_utc + sim time + offset`; `$CCCLK`/`$CCTMS` set the offset.
//! Airtime of a data packet at rate r with n frames of B bytes at bit rate R
//! ([`acoustic::micromodem_rate`]): `preamble + n·8·B/R + (n−1)·FRAME_GAP_S`, with a preamble of
//! [`FSK_PREAMBLE_S`] (rate 0: FH-FSK header) or [`PSK_PREAMBLE_S`] (FH-FSK header, probe and
//! guard before PSK). Frames always go out full size, as the modem pads them. Pings, ping
//! replies, acks and mini-packets are FH-FSK mini-packets of [`MINI_PACKET_S`]. Transmission
//! starts when the last `$CCTXD` arrives; a replying modem (ack, ping reply) turns around in
//! [`TURNAROUND_S`].
//!
//! # Channel
//! The geometry comes from each window's checked ChannelData ([`ChannelGeometry`]: positions,
//! LOS flag and penetration losses per pair) and is held for the window. A copy from A to B
//! arrives `d/c` after it is sent (c at the pair's mean depth) and occupies B's receiver for
//! the airtime. Its budget is [`LinkSpec::budget`] of an acoustic link with the scenario's
//! water and [`ModemHardware`] at the packet's rate ([`ModemHardware::link_spec`]). The
//! acoustic medium decides every copy at the end of its reception: out of range (B cannot
//! decode it), half-duplex (B transmits during it) or collision (another heard signal overlaps
//! it, unless it captures it by `capture_sir_db`); a received copy's frames are each drawn
//! against their PER (BER over the frame's bits; a mini-packet is one draw). Doppler in
//! `$CACST` is the closing speed (m/s) estimated from the positions of consecutive windows.
//! A transmission started before the first ChannelData (a host that spoke as the run was
//! starting, at sim time 0) is put in the water when that world arrives, as it stood at time 0.
//!
//! # Ledger
//! Every frame copy sent to an addressed receiver (every other modem for destination 0, the
//! broadcast address) ends in exactly one [`Fate`]: delivered, or dropped for out of range,
//! packet error, collision, half-duplex, no receiver with that address, or shutdown (still in
//! the water when the run ended) ([`FrameLedgerEntry`], [`FrameLedgerSummary`]). Data frames
//! with no bytes (`$CCTXD` with empty hex) are sent but carry nothing to report and are not in
//! the ledger.

mod commands;
pub mod ledger;

use std::collections::{BTreeMap, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::{AcousticModems, Scenario, Water};
use crate::model::acoustic::{self, Modulation};
use crate::model::fate::{DropReason, Fate};
use crate::model::link::{AcousticSpec, Budget, ChannelGeometry, LinkSpec};
use crate::model::medium::{self, CopyId, Medium, Reception, Signal, Verdict};
use crate::wire::channel::ChannelView;
use crate::wire::nmea::report::{Cst, RevEvent, Xst};
use crate::wire::nmea::{rate_frames, CycleInit, Report, PARAMS};
use crate::wire::utc::TimeOfDay;
pub use crate::wire::utc::{parse_iso_utc_ns, Civil};
pub use ledger::{FrameLedgerEntry, FrameLedgerSummary, TxKind};

/// Firmware version the emulated modems report in `$CAREV`.
pub const VERSION: &str = "0.94.0.52";
/// FH-FSK header and detection before a rate-0 packet (s).
pub const FSK_PREAMBLE_S: f64 = 0.5;
/// FH-FSK header, LFM probe and guard before a PSK packet (s).
pub const PSK_PREAMBLE_S: f64 = 1.0;
/// Gap between the frames of a packet (s).
pub const FRAME_GAP_S: f64 = 0.05;
/// Airtime of a mini-packet, ping, ping reply or ack (s).
pub const MINI_PACKET_S: f64 = 0.4;
/// Delay between receiving and answering (ack, ping reply) (s).
pub const TURNAROUND_S: f64 = 0.05;
/// Time from a reboot command to `$CAREV,…,INIT` (s).
pub const BOOT_S: f64 = 0.5;
/// Bits a mini-packet carries; pings, ping replies and acks are counted alike.
pub const MINI_PACKET_BITS: u64 = 13;
/// Broadcast address.
pub const BROADCAST: u8 = 0;

const NS: u64 = 1_000_000_000;

fn ns(s: f64) -> u64 {
    (s * 1e9).round().max(0.0) as u64
}

/// The rate table (frames per packet, bytes per frame) and the physics of a rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateInfo {
    pub frames: u8,
    pub frame_bytes: usize,
    pub modulation: Modulation,
    pub bit_rate_bps: f64,
    pub coding_gain_db: f64,
}

pub fn rate_info(rate: u8) -> Option<RateInfo> {
    let (frames, frame_bytes) = rate_frames(rate)?;
    let r = acoustic::micromodem_rate(rate)?;
    Some(RateInfo {
        frames,
        frame_bytes,
        modulation: r.modulation,
        bit_rate_bps: r.bit_rate_bps,
        coding_gain_db: r.coding_gain_db,
    })
}

/// Airtime (s) of a data packet of `nframes` frames at `rate` (see the module docs).
pub fn packet_airtime_s(rate: u8, nframes: u8) -> f64 {
    let Some(r) = rate_info(rate) else { return 0.0 };
    let n = nframes.max(1) as f64;
    let pre = if rate == 0 {
        FSK_PREAMBLE_S
    } else {
        PSK_PREAMBLE_S
    };
    pre + n * 8.0 * r.frame_bytes as f64 / r.bit_rate_bps + (n - 1.0) * FRAME_GAP_S
}

/// One line for a modem's host, due at `at_ns` of sim time.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub modem: usize,
    pub at_ns: u64,
    pub line: String,
}

/// A configured (emulated) modem.
#[derive(Debug, Clone, PartialEq)]
pub struct ModemSpec {
    /// Index of the vehicle (= node in ChannelData).
    pub vehicle: usize,
    pub name: String,
    pub id: u8,
    pub tcp_port: u16,
}

/// The hardware every emulated modem shares: clock epoch, transducer and band, the water it
/// works in, capture threshold and heartbeat period.
#[derive(Debug, Clone, PartialEq)]
pub struct ModemHardware {
    pub epoch_ns: i64,
    pub frequency_khz: f64,
    pub bandwidth_hz: f64,
    pub source_level_db: f64,
    pub spreading_factor: f64,
    pub absorption: crate::config::Absorption,
    pub capture_sir_db: Option<f64>,
    pub heartbeat_ns: u64,
    pub water: Water,
    /// `straight` or `beam` (`acoustic_modems.propagation`).
    pub propagation: crate::config::Propagation,
    /// `acoustic_modems.multipath_window_ms` (ms); absent: by each rate's modulation.
    pub multipath_window_ms: Option<f64>,
}

impl ModemHardware {
    pub fn from_config(a: &AcousticModems, water: &Water) -> ModemHardware {
        ModemHardware {
            epoch_ns: a.epoch_utc.ns(),
            frequency_khz: a.frequency_khz,
            bandwidth_hz: a.bandwidth_khz * 1e3,
            source_level_db: a.source_level_db,
            spreading_factor: a.spreading_factor,
            absorption: a.absorption,
            capture_sir_db: a.capture_sir_db,
            heartbeat_ns: ns(a.heartbeat_s),
            water: water.clone(),
            propagation: a.propagation,
            multipath_window_ms: a.multipath_window_ms,
        }
    }

    /// The acoustic link of a transmission at Micro-Modem `rate` (rate 0's for an unknown one;
    /// pings, ping replies, acks and mini-packets go at rate 0).
    pub fn link_spec(&self, rate: u8) -> LinkSpec {
        let r = acoustic::micromodem_rate(rate)
            .or_else(|| acoustic::micromodem_rate(0))
            .expect("rate 0 exists");
        LinkSpec::Acoustic(AcousticSpec {
            modulation: r.modulation,
            bit_rate_bps: r.bit_rate_bps,
            coding_gain_db: r.coding_gain_db,
            frequency_khz: self.frequency_khz,
            bandwidth_hz: self.bandwidth_hz,
            source_level_db: self.source_level_db,
            spreading_factor: self.spreading_factor,
            absorption: self.absorption,
            capture_sir_db: self.capture_sir_db,
            water: self.water.clone(),
            propagation: self.propagation,
            multipath_window_s: crate::model::link::multipath_window_s(
                self.multipath_window_ms,
                r.modulation,
                r.bit_rate_bps,
            ),
        })
    }
}

#[derive(Debug, Clone)]
struct Cycle {
    id: u64,
    dest: u8,
    rate: u8,
    ack: bool,
    nframes: u8,
    frames: Vec<Vec<u8>>,
}

#[derive(Debug, Clone)]
struct Modem {
    spec: ModemSpec,
    params: Vec<i64>,
    clock_offset_ns: i64,
    cycle: Option<Cycle>,
    /// Transmitting until then (sim ns).
    tx_until: u64,
    /// Rebooting until then.
    boot_until: u64,
}

impl Modem {
    fn param(&self, name: &str) -> i64 {
        PARAMS
            .iter()
            .position(|p| p.0 == name)
            .map_or(0, |i| self.params[i])
    }

    fn factory(&mut self) {
        self.params = PARAMS
            .iter()
            .map(|p| {
                if p.0 == "SRC" {
                    self.spec.id as i64
                } else {
                    p.1
                }
            })
            .collect();
    }

    fn src(&self) -> u8 {
        self.param("SRC") as u8
    }
}

#[derive(Debug, Clone)]
enum Payload {
    Data {
        rate: u8,
        ack: bool,
        frames: Vec<Vec<u8>>,
    },
    Ping,
    PingReply {
        ping_start_ns: u64,
    },
    Mini {
        value: u16,
    },
    Ack {
        original_src: u8,
        frames: Vec<u8>,
    },
}

impl Payload {
    fn kind(&self) -> TxKind {
        match self {
            Payload::Data { .. } => TxKind::Data,
            Payload::Ping => TxKind::Ping,
            Payload::PingReply { .. } => TxKind::PingReply,
            Payload::Mini { .. } => TxKind::Mini,
            Payload::Ack { .. } => TxKind::Ack,
        }
    }
}

/// A copy of a transmission at one receiver.
#[derive(Debug, Clone, Copy)]
struct Copy {
    /// None before the first ChannelData.
    budget: Option<Budget>,
    closing_mps: f64,
    start_ns: u64,
    end_ns: u64,
    /// Its copy in the medium when addressed and decodable.
    medium: Option<CopyId>,
}

#[derive(Debug, Clone)]
struct Tx {
    id: u64,
    from: usize,
    src: u8,
    dest: u8,
    payload: Payload,
    start_ns: u64,
    end_ns: u64,
    copies: Vec<Option<Copy>>,
}

#[derive(Debug, Clone)]
enum Event {
    Heartbeat {
        modem: usize,
    },
    BootDone {
        modem: usize,
    },
    DrqTimeout {
        modem: usize,
        cycle: u64,
        frame: u8,
    },
    TxEnd {
        modem: usize,
        tx: u64,
    },
    RxEnd {
        modem: usize,
        tx: u64,
    },
    Reply {
        modem: usize,
        dest: u8,
        payload: Payload,
    },
}

/// Every emulated modem and the medium between them.
pub struct Modems {
    modems: Vec<Modem>,
    fe: ModemHardware,
    /// The window's geometry and each vehicle's velocity.
    geometry: Option<(ChannelGeometry, Vec<[f64; 3]>)>,
    prev: Option<(u64, Vec<[f64; 3]>)>,
    events: BTreeMap<(u64, u64), Event>,
    seq: u64,
    txs: HashMap<u64, Tx>,
    /// Transmissions started before the first window's world was known, placed when it is.
    unplaced: Vec<u64>,
    next_tx: u64,
    next_cycle: u64,
    /// The acoustic medium between the modems (its nodes are modem indices).
    medium: Medium,
    out: Vec<Output>,
    ledger: Vec<FrameLedgerEntry>,
    rng: ChaCha8Rng,
    now: u64,
}

impl Modems {
    /// The emulated modems of a scenario (vehicles with a modem and no passthrough), or None
    /// when `acoustic_modems` is absent.
    pub fn from_scenario(s: &Scenario) -> Option<Modems> {
        let a = s.acoustic_modems.as_ref()?;
        let specs = s
            .vehicles
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let m = v.modem.as_ref().filter(|m| m.passthrough.is_none())?;
                Some(ModemSpec {
                    vehicle: i,
                    name: v.name.clone(),
                    id: m.id,
                    tcp_port: m.tcp_port,
                })
            })
            .collect();
        Some(Modems::new(
            ModemHardware::from_config(a, &s.world.water),
            specs,
            s.seed,
        ))
    }

    pub fn new(fe: ModemHardware, specs: Vec<ModemSpec>, seed: u64) -> Modems {
        let n = specs.len();
        let mut f = Modems {
            modems: specs
                .into_iter()
                .map(|spec| {
                    let mut m = Modem {
                        spec,
                        params: Vec::new(),
                        clock_offset_ns: 0,
                        cycle: None,
                        tx_until: 0,
                        boot_until: 0,
                    };
                    m.factory();
                    m
                })
                .collect(),
            fe,
            geometry: None,
            prev: None,
            events: BTreeMap::new(),
            seq: 0,
            txs: HashMap::new(),
            unplaced: Vec::new(),
            next_tx: 1,
            next_cycle: 1,
            medium: Medium::new(n),
            out: Vec::new(),
            ledger: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x6d6f_6465_6d00_0001),
            now: 0,
        };
        if f.fe.heartbeat_ns > 0 {
            for m in 0..n {
                f.schedule(f.fe.heartbeat_ns, Event::Heartbeat { modem: m });
            }
        }
        f
    }

    pub fn modems(&self) -> Vec<ModemSpec> {
        self.modems.iter().map(|m| m.spec.clone()).collect()
    }

    pub fn now_ns(&self) -> u64 {
        self.now
    }

    /// The modem's clock (ns since the Unix epoch) at sim time `t_ns`.
    pub fn clock_ns(&self, modem: usize, t_ns: u64) -> i64 {
        self.fe.epoch_ns + t_ns as i64 + self.modems.get(modem).map_or(0, |m| m.clock_offset_ns)
    }

    /// A configuration value of a modem (None for an unknown name or modem).
    pub fn param(&self, modem: usize, name: &str) -> Option<i64> {
        let m = self.modems.get(modem)?;
        PARAMS.iter().position(|p| p.0 == name).map(|i| m.params[i])
    }

    /// The world for the coming window (held until the next call): positions, LOS and
    /// penetration losses per pair; velocities from the previous call.
    pub fn set_channel(&mut self, start_ns: u64, channel: &ChannelView) {
        let geometry = ChannelGeometry::new(channel);
        let pos = geometry.positions();
        let n = pos.len();
        let vel = match &self.prev {
            Some((t, p)) if start_ns > *t && p.len() == n => {
                let dt = (start_ns - t) as f64 / 1e9;
                pos.iter()
                    .zip(p)
                    .map(|(a, b)| [(a[0] - b[0]) / dt, (a[1] - b[1]) / dt, (a[2] - b[2]) / dt])
                    .collect()
            }
            _ => vec![[0.0; 3]; n],
        };
        self.prev = Some((start_ns, pos.to_vec()));
        self.geometry = Some((geometry, vel));
        for id in std::mem::take(&mut self.unplaced) {
            self.place(id);
        }
    }

    fn schedule(&mut self, at: u64, e: Event) {
        self.seq += 1;
        self.events.insert((at, self.seq), e);
    }

    /// The earliest pending event's time.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.events.keys().next().map(|k| k.0)
    }

    /// Processes every event due at or before `now_ns` (sim time never goes back).
    pub fn advance(&mut self, now_ns: u64) {
        while let Some(entry) = self.events.first_entry() {
            let at = entry.key().0;
            if at > now_ns {
                break;
            }
            let e = entry.remove();
            self.now = self.now.max(at);
            self.handle_event(e);
        }
        self.now = self.now.max(now_ns);
        self.prune();
    }

    /// Lines produced so far, in the order produced (times non-decreasing per modem).
    pub fn drain(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.out)
    }

    pub fn ledger(&self) -> &[FrameLedgerEntry] {
        &self.ledger
    }

    pub fn ledger_summary(&self) -> FrameLedgerSummary {
        FrameLedgerSummary::of(&self.ledger)
    }

    /// Ends the run at `now_ns`: every copy still in the water is dropped with `shutdown`.
    pub fn shutdown(&mut self, now_ns: u64) {
        self.advance(now_ns);
        let pending: Vec<(usize, u64)> = self
            .events
            .values()
            .filter_map(|e| {
                if let Event::RxEnd { modem, tx } = e {
                    Some((*modem, *tx))
                } else {
                    None
                }
            })
            .collect();
        for (modem, tx) in pending {
            if let Some(t) = self.txs.get(&tx).cloned() {
                let copy = t.copies[modem];
                if let Some(id) = copy.and_then(|c| c.medium) {
                    self.medium.abandon(id);
                }
                let snr = copy.and_then(|c| c.budget).map(|b| b.snr_db);
                self.record_all(&t, Some(modem), snr, |_| {
                    Fate::Dropped(DropReason::Shutdown)
                });
            }
        }
        self.events.clear();
    }

    fn report(&mut self, modem: usize, r: Report) {
        self.out.push(Output {
            modem,
            at_ns: self.now,
            line: r.emit(),
        });
    }

    fn time_of_day(&self, modem: usize) -> TimeOfDay {
        TimeOfDay::seconds(&Civil::from_ns(self.clock_ns(modem, self.now)))
    }

    fn rev(&mut self, modem: usize, event: RevEvent) {
        self.report(
            modem,
            Report::Rev {
                time: self.time_of_day(modem),
                event,
                version: VERSION.into(),
            },
        );
    }

    /// Starts a transmission from modem `m` now. Its copies are placed in the water now, or,
    /// before the first window's world is known (a host that spoke as the run was starting),
    /// when it is.
    fn transmit(&mut self, m: usize, src: u8, dest: u8, payload: Payload, host: bool) {
        let airtime = match &payload {
            Payload::Data { rate, frames, .. } => packet_airtime_s(*rate, frames.len() as u8),
            _ => MINI_PACKET_S,
        };
        let (start, end) = (self.now, self.now + ns(airtime));
        let id = self.next_tx;
        self.next_tx += 1;
        let tx = Tx {
            id,
            from: m,
            src,
            dest,
            payload,
            start_ns: start,
            end_ns: end,
            copies: vec![None; self.modems.len()],
        };
        if !(0..self.modems.len()).any(|j| self.intended(&tx, j)) {
            self.record_all(&tx, None, None, |_| Fate::Dropped(DropReason::NoReceiver));
        }
        self.modems[m].tx_until = end;
        if host {
            self.report(
                m,
                Report::Txp {
                    nbytes: tx_bytes(&tx.payload),
                },
            );
        }
        self.schedule(end, Event::TxEnd { modem: m, tx: id });
        self.txs.insert(id, tx);
        if self.geometry.is_some() {
            self.place(id);
        } else {
            self.unplaced.push(id);
        }
    }

    /// Whether modem `j` is one `tx` is meant for (a data frame or mini-packet to its address
    /// or to all; any other kind to its address alone).
    fn intended(&self, tx: &Tx, j: usize) -> bool {
        let addr = self.modems[j].src();
        j != tx.from
            && match tx.payload {
                Payload::Data { .. } | Payload::Mini { .. } => {
                    tx.dest == addr || tx.dest == BROADCAST
                }
                _ => tx.dest == addr,
            }
    }

    /// Puts transmission `id`'s copies in the water: each receiver's link budget in the
    /// current world, the medium's copies, and the decisions at the receivers it is meant for.
    fn place(&mut self, id: u64) {
        let Some(tx) = self.txs.get(&id) else {
            return;
        };
        let (m, start, end) = (tx.from, tx.start_ns, tx.end_ns);
        let rate = match &tx.payload {
            Payload::Data { rate, .. } => *rate,
            _ => 0,
        };
        let intended: Vec<bool> = (0..self.modems.len())
            .map(|j| self.intended(tx, j))
            .collect();
        let spec = self.fe.link_spec(rate);
        let mut copies = vec![None; self.modems.len()];
        let mut signals = Vec::new();
        for (j, slot) in copies.iter_mut().enumerate() {
            if j == m {
                continue;
            }
            let (budget, closing) = match self.budget(m, j, &spec) {
                Some((b, c)) => (Some(b), c),
                None => (None, 0.0),
            };
            let delay = budget.map_or(0, |b| medium::delay_ns(b.delay_s));
            if let Some(b) = budget {
                signals.push(Signal {
                    receiver: j,
                    budget: b,
                    capture_sir_db: self.fe.capture_sir_db,
                    addressed: intended[j],
                });
            }
            *slot = Some(Copy {
                budget,
                closing_mps: closing,
                start_ns: start + delay,
                end_ns: end + delay,
                medium: None,
            });
        }
        for (signal, reception) in signals
            .iter()
            .zip(self.medium.transmit(m, start, end, &signals))
        {
            if let (Some(Reception::InFlight(id)), Some(copy)) =
                (reception, &mut copies[signal.receiver])
            {
                copy.medium = Some(id);
            }
        }
        for (j, copy) in copies.iter().enumerate() {
            if let (true, Some(copy)) = (intended[j], copy) {
                // A copy its receiver cannot decode is decided when its transmission ends.
                self.schedule(
                    if copy.medium.is_some() {
                        copy.end_ns
                    } else {
                        end
                    },
                    Event::RxEnd { modem: j, tx: id },
                );
            }
        }
        if let Some(tx) = self.txs.get_mut(&id) {
            tx.copies = copies;
        }
    }

    fn budget(&self, a: usize, b: usize, spec: &LinkSpec) -> Option<(Budget, f64)> {
        let (geometry, vel) = self.geometry.as_ref()?;
        let (va, vb) = (self.modems[a].spec.vehicle, self.modems[b].spec.vehicle);
        let (pa, pb) = (geometry.positions().get(va)?, geometry.positions().get(vb)?);
        let g = geometry.between(va, vb);
        let budget = spec.budget(&g);
        let d = [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]];
        let dist = g.distance_m;
        let (ua, ub) = (
            vel.get(va).copied().unwrap_or_default(),
            vel.get(vb).copied().unwrap_or_default(),
        );
        let closing = if dist > 0.0 {
            -((ub[0] - ua[0]) * d[0] + (ub[1] - ua[1]) * d[1] + (ub[2] - ua[2]) * d[2]) / dist
        } else {
            0.0
        };
        Some((budget, closing))
    }

    fn record_all(
        &mut self,
        tx: &Tx,
        to: Option<usize>,
        snr: Option<f64>,
        fate: impl Fn(u8) -> Fate,
    ) {
        let (rate, frames): (u8, Vec<(u8, usize)>) = match &tx.payload {
            Payload::Data { rate, frames, .. } => (
                *rate,
                frames
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| !b.is_empty())
                    .map(|(i, b)| (i as u8 + 1, b.len()))
                    .collect(),
            ),
            _ => (0, vec![(1, 2)]),
        };
        for (frame, bytes) in frames {
            self.ledger.push(FrameLedgerEntry {
                tx: tx.id,
                kind: tx.payload.kind(),
                frame,
                from: tx.from,
                to,
                src: tx.src,
                dest: tx.dest,
                rate,
                bytes,
                sent_ns: tx.start_ns,
                decided_ns: self.now,
                snr_db: snr.filter(|s| s.is_finite()),
                fate: fate(frame),
            });
        }
    }

    fn handle_event(&mut self, e: Event) {
        match e {
            Event::Heartbeat { modem } => {
                if self.modems[modem].param("REV") != 0 && self.modems[modem].boot_until <= self.now
                {
                    self.rev(modem, RevEvent::Auv);
                }
                self.schedule(self.now + self.fe.heartbeat_ns, Event::Heartbeat { modem });
            }
            Event::BootDone { modem } => {
                self.rev(modem, RevEvent::Init);
                self.rev(modem, RevEvent::Auv);
            }
            Event::DrqTimeout {
                modem,
                cycle,
                frame,
            } => {
                let waiting = self.modems[modem]
                    .cycle
                    .as_ref()
                    .is_some_and(|c| c.id == cycle && c.frames.len() + 1 == frame as usize);
                if waiting {
                    self.modems[modem].cycle = None;
                    self.report(
                        modem,
                        Report::DataTimeout {
                            time: self.time_of_day(modem),
                            frame,
                        },
                    );
                }
            }
            Event::TxEnd { modem, tx } => {
                let Some(t) = self.txs.get(&tx).cloned() else {
                    return;
                };
                if let Payload::Data { rate, ack, frames } = &t.payload {
                    let nbytes = tx_bytes(&t.payload);
                    self.report(modem, Report::Txf { nbytes });
                    if self.modems[modem].param("XST") == 1 {
                        let n = frames.len() as u8;
                        self.report(
                            modem,
                            Report::Xst(Box::new(Xst {
                                start: Civil::from_ns(self.clock_ns(modem, t.start_ns)),
                                clock_status: 0,
                                mode: 0,
                                probe_length: if *rate == 0 { 0 } else { 200 },
                                bandwidth_hz: self.fe.bandwidth_hz,
                                carrier_hz: self.fe.frequency_khz * 1e3,
                                rate: *rate,
                                src: t.src,
                                dest: t.dest,
                                ack: *ack,
                                frames_expected: n,
                                frames_sent: n,
                                packet_type: if *rate == 0 { 1 } else { 3 },
                                nbytes,
                            })),
                        );
                    }
                    if self.modems[modem].param("REV") != 0 {
                        self.rev(modem, RevEvent::Auv);
                    }
                } else if !matches!(t.payload, Payload::Ack { .. } | Payload::PingReply { .. }) {
                    self.report(
                        modem,
                        Report::Txf {
                            nbytes: tx_bytes(&t.payload),
                        },
                    );
                }
            }
            Event::RxEnd { modem, tx } => self.receive(modem, tx),
            Event::Reply {
                modem,
                dest,
                payload,
            } => {
                if self.modems[modem].tx_until <= self.now
                    && self.modems[modem].boot_until <= self.now
                {
                    let src = self.modems[modem].src();
                    self.transmit(modem, src, dest, payload, false);
                }
            }
        }
    }

    /// Decides a copy at its receiver `j` at the end of its reception.
    fn receive(&mut self, j: usize, id: u64) {
        let Some(tx) = self.txs.get(&id).cloned() else {
            return;
        };
        let Some(copy) = tx.copies.get(j).copied().flatten() else {
            return;
        };
        let snr = copy.budget.map(|b| b.snr_db);
        let verdict = match copy.medium {
            Some(id) => self
                .medium
                .decide(id)
                .unwrap_or(Verdict::Dropped(DropReason::Unspecified)),
            None => Verdict::Dropped(DropReason::OutOfRange),
        };
        let b = match verdict {
            Verdict::Received(b) => b,
            Verdict::Dropped(DropReason::Collision) => {
                self.record_all(&tx, Some(j), snr, |_| Fate::Dropped(DropReason::Collision));
                if matches!(tx.payload, Payload::Data { .. }) {
                    self.report(
                        j,
                        Report::PacketTimeout {
                            time: self.time_of_day(j),
                        },
                    );
                    self.cst(j, &tx, &copy, 2, 0);
                }
                return;
            }
            Verdict::Dropped(r) => return self.record_all(&tx, Some(j), snr, |_| Fate::Dropped(r)),
        };
        match &tx.payload {
            Payload::Data { rate, ack, frames } => {
                let info = rate_info(*rate).expect("valid rate");
                let bits = 8 * info.frame_bytes as u64;
                let p = acoustic::per(b.ber, bits);
                let fates: Vec<bool> = frames
                    .iter()
                    .map(|_| self.rng.random::<f64>() >= p)
                    .collect();
                self.report(
                    j,
                    Report::Cyc(CycleInit {
                        cmd: 0,
                        src: tx.src,
                        dest: tx.dest,
                        rate: *rate,
                        ack: *ack,
                        nframes: frames.len() as u8,
                    }),
                );
                let mut good = Vec::new();
                for (i, (data, ok)) in frames.iter().zip(&fates).enumerate() {
                    let frame = i as u8 + 1;
                    if data.is_empty() {
                        continue;
                    }
                    if *ok {
                        good.push(frame);
                        self.report(
                            j,
                            Report::Rxd {
                                src: tx.src,
                                dest: tx.dest,
                                ack: *ack,
                                frame,
                                data: data.clone(),
                            },
                        );
                    } else {
                        self.report(
                            j,
                            Report::BadCrc {
                                time: self.time_of_day(j),
                                frame,
                            },
                        );
                    }
                }
                let bad = frames
                    .iter()
                    .zip(&fates)
                    .filter(|(d, ok)| !d.is_empty() && !**ok)
                    .count();
                self.record_all(&tx, Some(j), snr, |f| {
                    if fates.get(f as usize - 1).copied().unwrap_or(false) {
                        Fate::Delivered
                    } else {
                        Fate::Dropped(DropReason::PacketError)
                    }
                });
                self.cst(j, &tx, &copy, if bad > 0 { 1 } else { 0 }, bad);
                if *ack && tx.dest != BROADCAST && !good.is_empty() {
                    self.schedule(
                        self.now + ns(TURNAROUND_S),
                        Event::Reply {
                            modem: j,
                            dest: tx.src,
                            payload: Payload::Ack {
                                original_src: tx.src,
                                frames: good,
                            },
                        },
                    );
                }
            }
            other => {
                let ok = self.rng.random::<f64>() >= acoustic::per(b.ber, MINI_PACKET_BITS);
                self.record_all(&tx, Some(j), snr, |_| {
                    if ok {
                        Fate::Delivered
                    } else {
                        Fate::Dropped(DropReason::PacketError)
                    }
                });
                if !ok {
                    return;
                }
                match other {
                    Payload::Ping => {
                        self.report(
                            j,
                            Report::Mpa {
                                src: tx.src,
                                dest: tx.dest,
                            },
                        );
                        self.schedule(
                            self.now + ns(TURNAROUND_S),
                            Event::Reply {
                                modem: j,
                                dest: tx.src,
                                payload: Payload::PingReply {
                                    ping_start_ns: tx.start_ns,
                                },
                            },
                        );
                    }
                    Payload::PingReply { ping_start_ns } => {
                        let total = (self.now - ping_start_ns) as f64 / 1e9;
                        let owtt = ((total - 2.0 * MINI_PACKET_S - TURNAROUND_S) / 2.0).max(0.0);
                        self.report(
                            j,
                            Report::Mpr {
                                replier: tx.src,
                                pinger: tx.dest,
                                owtt_s: owtt,
                            },
                        );
                    }
                    Payload::Mini { value } => {
                        self.report(
                            j,
                            Report::Mua {
                                src: tx.src,
                                dest: tx.dest,
                                value: *value,
                            },
                        );
                    }
                    Payload::Ack {
                        original_src,
                        frames,
                    } => {
                        for &frame in frames {
                            self.report(
                                j,
                                Report::Ack {
                                    acker: tx.src,
                                    original_src: *original_src,
                                    frame,
                                },
                            );
                        }
                    }
                    Payload::Data { .. } => {}
                }
            }
        }
    }

    /// `$CACST` (version 0 field order) for a data packet at receiver `j`, when CST = 1.
    fn cst(&mut self, j: usize, tx: &Tx, copy: &Copy, mode: u8, bad: usize) {
        if self.modems[j].param("CST") != 1 {
            return;
        }
        let Payload::Data { rate, frames, .. } = &tx.payload else {
            return;
        };
        let Some(b) = copy.budget else { return };
        let toa = TimeOfDay::tenths_ms(&Civil::from_ns(self.clock_ns(j, copy.start_ns)));
        let noise_db = acoustic::noise_psd_db(
            self.fe.frequency_khz,
            acoustic::NoiseConditions {
                shipping: self.fe.water.shipping,
                wind_mps: self.fe.water.wind_mps,
            },
        ) + 10.0 * self.fe.bandwidth_hz.log10();
        let info = rate_info(*rate).expect("valid rate");
        let ebn0 = acoustic::eb_n0(b.snr_db, self.fe.bandwidth_hz, info.bit_rate_bps);
        let snr_out = 10.0 * ebn0.max(1e-12).log10();
        let cst = Cst {
            mode,
            toa,
            clock_status: 0.0,
            mfd_peak: 0.0,
            mfd_power: 0.0,
            mfd_ratio: 0.0,
            spl_db: b.level_db,
            shifts: [0.0; 4],
            rate: *rate,
            src: tx.src,
            dest: tx.dest,
            psk_error: 0.0,
            packet_type: if *rate == 0 { 1 } else { 3 },
            frames: frames.len() as u8,
            bad_frames: bad as u8,
            rss_db: b.level_db,
            snr_in_db: b.snr_db,
            snr_out_db: snr_out,
            symbol_snr_db: snr_out,
            mse: 0.0,
            dqf: 0.0,
            doppler_mps: copy.closing_mps,
            noise_db,
            carrier_hz: self.fe.frequency_khz * 1e3,
            bandwidth_hz: self.fe.bandwidth_hz,
        };
        self.report(j, Report::Cst(Box::new(cst)));
    }

    fn prune(&mut self) {
        // Every transmission still to come starts now or later.
        self.medium.forget_before(self.now);
        // Transmissions older than a minute with nothing pending are done with.
        let horizon = self.now.saturating_sub(60 * NS);
        let pending: std::collections::HashSet<u64> = self
            .events
            .values()
            .filter_map(|e| match e {
                Event::RxEnd { tx, .. } | Event::TxEnd { tx, .. } => Some(*tx),
                _ => None,
            })
            .collect();
        self.txs
            .retain(|id, t| pending.contains(id) || t.end_ns >= horizon);
    }
}

fn tx_bytes(p: &Payload) -> usize {
    match p {
        Payload::Data { frames, .. } => frames.iter().map(|f| f.len()).sum(),
        _ => 2,
    }
}

#[cfg(test)]
mod tests;
