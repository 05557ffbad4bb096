//! Emulated WHOI Micro-Modems sharing one acoustic medium: a pure state machine (no I/O, time
//! passed in as sim nanoseconds, seeded RNG). [`crate::io::modem_bridge`] puts it on TCP.
//!
//! # Host interface
//! Each modem speaks the NMEA host interface of `/work/shared/notes/micromodem-nmea.md`
//! ([`crate::wire::nmea`] parses and emits): configuration (`$CCCFG`/`$CCCFQ` → `$CACFG`,
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
//! gets `$CAERR,hhmmss,NMEA,<code>,<text>` ([`ErrCode`]). Output checksums are upper case.
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
//! The geometry comes from each window's ChannelData (positions, LOS flag and penetration
//! losses per pair) and is held for the window. A copy from A to B arrives `d/c` after it is
//! sent (c at the pair's mean depth) and occupies B's receiver for the airtime. Its budget is
//! [`LinkSpec::budget`] of an acoustic link with the scenario's water and `acoustic_modems`
//! front end at the packet's rate: in-band SNR below 0 dB is not heard at all (out of range);
//! otherwise each frame is drawn against its PER (BER over the frame's bits). A copy is lost
//! when its receiver transmits during any part of it (half-duplex) or when another audible copy
//! overlaps it at the receiver (collision; with `capture_sir_db`, one that is that much
//! stronger than every overlapping one survives). Doppler in `$CACST` is the closing speed
//! (m/s) estimated from the positions of consecutive windows.
//!
//! # Ledger
//! Every frame copy sent to an addressed receiver (every other modem for destination 0, the
//! broadcast address) ends in exactly one [`Fate`]: delivered, or dropped for out of range,
//! packet error, collision, half-duplex, no receiver with that address, or shutdown (still in
//! the water when the run ended). Data frames with no bytes (`$CCTXD` with empty hex) are sent
//! but carry nothing to report and are not in the ledger.

pub mod time;

use std::collections::{BTreeMap, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::config::{AcousticModems, Scenario, Water};
use crate::model::acoustic::{self, Modulation};
use crate::model::link::{AcousticSpec, Budget, ChannelGeometry, Geometry, LinkSpec};
use crate::wire::nmea::{emit, Sentence};
use crate::wire::proto::ChannelData;
pub use time::{parse_iso_utc_ns, Civil};

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
    let (frames, frame_bytes) = [(1, 32), (3, 64), (3, 64), (2, 256), (2, 256), (8, 256), (6, 32)].get(rate as usize).copied()?;
    let r = acoustic::micromodem_rate(rate)?;
    Some(RateInfo { frames, frame_bytes, modulation: r.modulation, bit_rate_bps: r.bit_rate_bps, coding_gain_db: r.coding_gain_db })
}

/// Airtime (s) of a data packet of `nframes` frames at `rate` (see the module docs).
pub fn packet_airtime_s(rate: u8, nframes: u8) -> f64 {
    let Some(r) = rate_info(rate) else { return 0.0 };
    let n = nframes.max(1) as f64;
    let pre = if rate == 0 { FSK_PREAMBLE_S } else { PSK_PREAMBLE_S };
    pre + n * 8.0 * r.frame_bytes as f64 / r.bit_rate_bps + (n - 1.0) * FRAME_GAP_S
}

/// Baud rates a passthrough serial device may use.
pub fn baud_supported(baud: u32) -> Option<u32> {
    [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400].contains(&baud).then_some(baud)
}

/// `$CAERR` codes (field 3) for host commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrCode {
    /// Not a sentence: framing, characters or checksum.
    Malformed = 1,
    /// A sentence the modem does not know.
    Unknown = 2,
    /// A known command with missing or invalid fields.
    BadField = 3,
    /// The modem is busy with a cycle or a transmission.
    Busy = 4,
    /// A command that was not asked for (`$CCTXD` without `$CADRQ`).
    Unexpected = 5,
}

/// The parameter set: name, factory value, part of `$CCCFQ,TOP`.
const PARAMS: &[(&str, i64, bool)] = &[
    ("AGC", 0, false), ("AGN", 250, true), ("ASD", 0, false), ("BND", 0, true), ("BR1", 3, false), ("BR2", 3, false),
    ("BRN", 0, false), ("BSP", 1, false), ("BW0", 5000, true), ("CPR", 1, false), ("CRL", 50, false), ("CST", 0, true),
    ("CTO", 10, true), ("DBG", 0, false), ("DGM", 0, false), ("DOP", 1, false), ("DQF", 0, false), ("DTH", 108, false),
    ("DTO", 2, true), ("DTP", 90, false), ("ECD", 50, false), ("EFB", 0, false), ("EFF", 100, false), ("FC0", 25000, true),
    ("FMD", 1, false), ("FML", 200, false), ("GPS", 0, false), ("HFC", 0, false), ("IRE", 0, false), ("MCM", 1, false),
    ("MFD", 1, false), ("MOD", 0, true), ("MPR", 1, false), ("MSE", 0, false), ("MVM", 1, false), ("NDT", 150, false),
    ("NPT", 50, false), ("NRL", 0, false), ("NRV", 150, false), ("PAD", 2, false), ("PCM", 0, false), ("POW", -100, true),
    ("PRL", 50, false), ("PTH", 180, false), ("PTO", 6, true), ("REV", 1, true), ("RXA", 0, false), ("RXD", 1, false),
    ("RXP", 1, true), ("SCG", 0, false), ("SGP", 0, false), ("SHF", 0, false), ("SNR", 0, false), ("SNV", 0, false),
    ("SRC", 0, true), ("TAT", 50, false), ("TOA", 0, false), ("TXD", 600, true), ("TXP", 0, false), ("XST", 0, true),
];

/// Allowed range of a parameter's value.
fn param_range(name: &str) -> (i64, i64) {
    match name {
        "SRC" => (0, 127),
        "CST" | "XST" | "REV" | "RXP" | "RXA" | "RXD" | "AGC" | "DOP" | "MOD" | "TOA" | "TXP" | "MFD" | "MSE" | "DQF" | "SNV" => (0, 1),
        "DTO" => (1, 30),
        "BND" => (0, 5),
        "BR1" | "BR2" | "BRN" => (0, 8),
        "POW" => (-200, 0),
        _ => (-1_000_000, 1_000_000),
    }
}

/// What happened to one frame copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    Delivered,
    OutOfRange,
    PacketError,
    Collision,
    HalfDuplex,
    NoReceiver,
    Shutdown,
}

/// Kind of transmission a ledger entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    Data,
    Ping,
    PingReply,
    Mini,
    Ack,
}

/// One frame copy: who sent it to whom, when, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LedgerEntry {
    pub tx: u64,
    pub kind: TxKind,
    /// Frame number (from 1; 1 for non-data packets).
    pub frame: u8,
    /// Modem indices (configuration order) and acoustic addresses.
    pub from: usize,
    pub to: Option<usize>,
    pub src: u8,
    pub dest: u8,
    pub rate: u8,
    pub bytes: usize,
    pub sent_ns: u64,
    pub decided_ns: u64,
    /// In-band SNR at the receiver (absent when unknown, e.g. no geometry yet).
    pub snr_db: Option<f64>,
    pub fate: Fate,
}

/// Ledger totals for the run summary: `sent` = the sum of the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LedgerSummary {
    pub sent: u64,
    pub delivered: u64,
    pub out_of_range: u64,
    pub packet_error: u64,
    pub collision: u64,
    pub half_duplex: u64,
    pub no_receiver: u64,
    pub shutdown: u64,
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

/// The physical front end shared by every modem.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontEnd {
    pub epoch_ns: i64,
    pub frequency_khz: f64,
    pub bandwidth_hz: f64,
    pub source_level_db: f64,
    pub spreading_factor: f64,
    pub absorption: crate::config::Absorption,
    pub capture_sir_db: Option<f64>,
    pub heartbeat_ns: u64,
    pub water: Water,
}

impl FrontEnd {
    pub fn from_config(a: &AcousticModems, water: &Water) -> FrontEnd {
        FrontEnd {
            epoch_ns: parse_iso_utc_ns(&a.epoch_utc).unwrap_or(0),
            frequency_khz: a.frequency_khz,
            bandwidth_hz: a.bandwidth_khz * 1e3,
            source_level_db: a.source_level_db,
            spreading_factor: a.spreading_factor,
            absorption: a.absorption,
            capture_sir_db: a.capture_sir_db,
            heartbeat_ns: ns(a.heartbeat_s),
            water: water.clone(),
        }
    }

    fn spec(&self, modulation: Modulation, bit_rate_bps: f64, coding_gain_db: f64) -> LinkSpec {
        LinkSpec::Acoustic(AcousticSpec {
            modulation,
            bit_rate_bps,
            coding_gain_db,
            frequency_khz: self.frequency_khz,
            bandwidth_hz: self.bandwidth_hz,
            source_level_db: self.source_level_db,
            spreading_factor: self.spreading_factor,
            absorption: self.absorption,
            capture_sir_db: self.capture_sir_db,
            water: self.water.clone(),
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
        PARAMS.iter().position(|p| p.0 == name).map_or(0, |i| self.params[i])
    }

    fn factory(&mut self) {
        self.params = PARAMS.iter().map(|p| if p.0 == "SRC" { self.spec.id as i64 } else { p.1 }).collect();
    }

    fn src(&self) -> u8 {
        self.param("SRC") as u8
    }
}

#[derive(Debug, Clone)]
enum Payload {
    Data { rate: u8, ack: bool, frames: Vec<Vec<u8>> },
    Ping,
    PingReply { ping_start_ns: u64 },
    Mini { value: u16 },
    Ack { original_src: u8, frames: Vec<u8> },
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
    budget: Option<Budget>,
    closing_mps: f64,
    start_ns: u64,
    end_ns: u64,
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
    Heartbeat { modem: usize },
    BootDone { modem: usize },
    DrqTimeout { modem: usize, cycle: u64, frame: u8 },
    TxEnd { modem: usize, tx: u64 },
    RxEnd { modem: usize, tx: u64 },
    Reply { modem: usize, dest: u8, payload: Payload },
}

#[derive(Debug, Clone, Default)]
struct Geo {
    pos: Vec<[f64; 3]>,
    vel: Vec<[f64; 3]>,
    /// (i < j) → (los, penetration loss dB)
    paths: HashMap<(usize, usize), (bool, f64)>,
}

/// Every emulated modem and the medium between them.
pub struct Front {
    modems: Vec<Modem>,
    fe: FrontEnd,
    geo: Option<Geo>,
    prev: Option<(u64, Vec<[f64; 3]>)>,
    events: BTreeMap<(u64, u64), Event>,
    seq: u64,
    txs: HashMap<u64, Tx>,
    next_tx: u64,
    next_cycle: u64,
    /// Per modem: transmissions heard there (tx id, start, end, level) and own transmissions.
    heard: Vec<Vec<(u64, u64, u64, f64)>>,
    sent: Vec<Vec<(u64, u64)>>,
    out: Vec<Output>,
    ledger: Vec<LedgerEntry>,
    rng: ChaCha8Rng,
    now: u64,
}

impl Front {
    /// The emulated modems of a scenario (vehicles with a modem and no passthrough), or None
    /// when `acoustic_modems` is absent.
    pub fn from_scenario(s: &Scenario) -> Option<Front> {
        let a = s.acoustic_modems.as_ref()?;
        let specs = s
            .vehicles
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let m = v.modem.as_ref().filter(|m| m.passthrough.is_none())?;
                Some(ModemSpec { vehicle: i, name: v.name.clone(), id: m.id, tcp_port: m.tcp_port })
            })
            .collect();
        Some(Front::new(FrontEnd::from_config(a, &s.world.water), specs, s.seed))
    }

    pub fn new(fe: FrontEnd, specs: Vec<ModemSpec>, seed: u64) -> Front {
        let n = specs.len();
        let mut f = Front {
            modems: specs
                .into_iter()
                .map(|spec| {
                    let mut m = Modem { spec, params: Vec::new(), clock_offset_ns: 0, cycle: None, tx_until: 0, boot_until: 0 };
                    m.factory();
                    m
                })
                .collect(),
            fe,
            geo: None,
            prev: None,
            events: BTreeMap::new(),
            seq: 0,
            txs: HashMap::new(),
            next_tx: 1,
            next_cycle: 1,
            heard: vec![Vec::new(); n],
            sent: vec![Vec::new(); n],
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
    pub fn set_channel(&mut self, start_ns: u64, channel: &ChannelData) {
        let n = channel.node_list.len() / 7;
        let ChannelGeometry { positions: pos, paths } = ChannelGeometry::new(channel, n);
        let vel = match &self.prev {
            Some((t, p)) if start_ns > *t && p.len() == n => {
                let dt = (start_ns - t) as f64 / 1e9;
                pos.iter().zip(p).map(|(a, b)| [(a[0] - b[0]) / dt, (a[1] - b[1]) / dt, (a[2] - b[2]) / dt]).collect()
            }
            _ => vec![[0.0; 3]; n],
        };
        self.prev = Some((start_ns, pos.clone()));
        self.geo = Some(Geo { pos, vel, paths });
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

    pub fn ledger(&self) -> &[LedgerEntry] {
        &self.ledger
    }

    pub fn ledger_summary(&self) -> LedgerSummary {
        let mut s = LedgerSummary::default();
        for e in &self.ledger {
            s.sent += 1;
            *match e.fate {
                Fate::Delivered => &mut s.delivered,
                Fate::OutOfRange => &mut s.out_of_range,
                Fate::PacketError => &mut s.packet_error,
                Fate::Collision => &mut s.collision,
                Fate::HalfDuplex => &mut s.half_duplex,
                Fate::NoReceiver => &mut s.no_receiver,
                Fate::Shutdown => &mut s.shutdown,
            } += 1;
        }
        s
    }

    /// Ends the run at `now_ns`: every copy still in the water is dropped with `shutdown`.
    pub fn shutdown(&mut self, now_ns: u64) {
        self.advance(now_ns);
        let pending: Vec<(usize, u64)> =
            self.events.values().filter_map(|e| if let Event::RxEnd { modem, tx } = e { Some((*modem, *tx)) } else { None }).collect();
        for (modem, tx) in pending {
            if let Some(t) = self.txs.get(&tx).cloned() {
                let snr = t.copies[modem].and_then(|c| c.budget).map(|b| b.snr_db);
                self.record_all(&t, Some(modem), snr, |_| Fate::Shutdown);
            }
        }
        self.events.clear();
    }

    fn emit(&mut self, modem: usize, fields: &[&str], id: &str) {
        self.out.push(Output { modem, at_ns: self.now, line: emit(id, fields) });
    }

    fn hhmmss(&self, modem: usize) -> String {
        Civil::from_ns(self.clock_ns(modem, self.now)).hhmmss()
    }

    fn err(&mut self, modem: usize, code: ErrCode, text: &str) {
        let clean: String = text.chars().map(|c| if matches!(c, ',' | '*' | '$') || !(' '..='~').contains(&c) { ' ' } else { c }).take(120).collect();
        let t = self.hhmmss(modem);
        self.emit(modem, &[&t, "NMEA", &(code as u8).to_string(), &clean], "CAERR");
    }

    /// One line from a modem's host at sim time `now_ns` (events due before it run first).
    /// Never panics; every line gets an answer or a `$CAERR`, blank lines are ignored.
    pub fn host_line(&mut self, modem: usize, now_ns: u64, line: &[u8]) {
        self.advance(now_ns);
        if modem >= self.modems.len() {
            return;
        }
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        let s = match Sentence::parse(line) {
            Ok(s) => s,
            Err(e) => return self.err(modem, ErrCode::Malformed, &e.to_string()),
        };
        let talker = s.talker.to_ascii_uppercase();
        let kind = s.kind.to_ascii_uppercase();
        if talker != "CC" {
            return self.err(modem, ErrCode::Unknown, &format!("unknown sentence {talker}{kind}"));
        }
        let f: Vec<&str> = s.fields.iter().map(|x| x.trim()).collect();
        if let Err((code, text)) = self.command(modem, &kind, &f) {
            self.err(modem, code, &text);
        }
    }

    fn command(&mut self, m: usize, kind: &str, f: &[&str]) -> Result<(), (ErrCode, String)> {
        let bad = |what: &str| (ErrCode::BadField, format!("CC{kind}: {what}"));
        let int = |i: usize, lo: i64, hi: i64, name: &str| -> Result<i64, (ErrCode, String)> {
            let v: i64 = f.get(i).and_then(|x| x.parse().ok()).ok_or_else(|| bad(&format!("{name} missing or not a number")))?;
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(bad(&format!("{name} {v} outside {lo}-{hi}")))
            }
        };
        match kind {
            "CFG" => {
                let name = f.first().map(|x| x.to_ascii_uppercase()).filter(|x| !x.is_empty()).ok_or_else(|| bad("parameter name missing"))?;
                if name == "ALL" {
                    int(1, 0, 0, "ALL value")?;
                    self.modems[m].factory();
                    self.emit(m, &["ALL", "0"], "CACFG");
                    return Ok(());
                }
                let idx = PARAMS.iter().position(|p| p.0 == name).ok_or_else(|| bad(&format!("unknown parameter {name}")))?;
                let (lo, hi) = param_range(&name);
                let v = int(1, lo, hi, &name)?;
                self.modems[m].params[idx] = v;
                self.emit(m, &[&name, &v.to_string()], "CACFG");
            }
            "CFQ" => {
                let name = f.first().map(|x| x.to_ascii_uppercase()).filter(|x| !x.is_empty()).ok_or_else(|| bad("parameter name missing"))?;
                let chosen: Vec<usize> = match name.as_str() {
                    "ALL" => (0..PARAMS.len()).collect(),
                    "TOP" => (0..PARAMS.len()).filter(|&i| PARAMS[i].2).collect(),
                    n => vec![PARAMS.iter().position(|p| p.0 == n).ok_or_else(|| bad(&format!("unknown parameter {n}")))?],
                };
                for i in chosen {
                    let v = self.modems[m].params[i].to_string();
                    self.emit(m, &[PARAMS[i].0, &v], "CACFG");
                }
            }
            "CLK" => {
                let y = int(0, 1970, 2200, "year")?;
                let c = Civil {
                    year: y,
                    month: int(1, 1, 12, "month")?,
                    day: int(2, 1, 31, "day")?,
                    hour: int(3, 0, 23, "hour")?,
                    minute: int(4, 0, 59, "minute")?,
                    second: int(5, 0, 60, "second")?,
                    nanos: 0,
                };
                let t = c.to_ns().ok_or_else(|| bad("not a valid date"))?;
                self.set_clock(m, t);
                let c = Civil::from_ns(self.clock_ns(m, self.now));
                let fields: Vec<String> = [c.year, c.month, c.day, c.hour, c.minute, c.second]
                    .iter()
                    .enumerate()
                    .map(|(i, v)| if i == 0 { format!("{v:04}") } else { format!("{v:02}") })
                    .collect();
                let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
                self.emit(m, &refs, "CACLK");
            }
            "TMS" => {
                let t = f.first().and_then(|x| parse_iso_utc_ns(x)).ok_or_else(|| bad("time is not YYYY-MM-DDThh:mm:ssZ"))?;
                if let Some(mode) = f.get(1).filter(|x| !x.is_empty()) {
                    mode.parse::<u8>().map_err(|_| bad("mode is not a number"))?;
                }
                self.set_clock(m, t);
                let iso = Civil::from_ns(self.clock_ns(m, self.now)).iso();
                self.emit(m, &["0", &iso], "CATMS");
            }
            "TMQ" => {
                let iso = Civil::from_ns(self.clock_ns(m, self.now)).iso();
                self.emit(m, &[&iso, "0", "0"], "CATMQ");
            }
            "MSC" => {
                let src = int(0, 0, 127, "src")?;
                let dest = int(1, 0, 127, "dest")?;
                let cmd = f.get(2).copied().unwrap_or("");
                self.emit(m, &[&src.to_string(), &dest.to_string(), cmd], "CAMSC");
                if cmd.trim() == "0" {
                    let md = &mut self.modems[m];
                    md.cycle = None;
                    md.boot_until = self.now + ns(BOOT_S);
                    let at = md.boot_until;
                    self.schedule(at, Event::BootDone { modem: m });
                }
            }
            "CYC" => {
                let cmd = int(0, 0, 127, "command")?;
                let src = int(1, 0, 127, "src")? as u8;
                let dest = int(2, 0, 127, "dest")? as u8;
                let rate = int(3, 0, 6, "rate")? as u8;
                let ack = int(4, 0, 1, "ack")? == 1;
                let info = rate_info(rate).ok_or_else(|| bad("rate"))?;
                let nframes = int(5, 1, info.frames as i64, "nframes")? as u8;
                if src != self.modems[m].src() {
                    return Err(bad(&format!("src {src} is not this modem ({}); remote-initiated cycles are not emulated", self.modems[m].src())));
                }
                self.check_idle(m)?;
                let fields = [cmd.to_string(), src.to_string(), dest.to_string(), rate.to_string(), (ack as u8).to_string(), nframes.to_string()];
                let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
                self.emit(m, &refs, "CACYC");
                let id = self.next_cycle;
                self.next_cycle += 1;
                self.modems[m].cycle = Some(Cycle { id, dest, rate, ack, nframes, frames: Vec::new() });
                self.request_frame(m);
            }
            "TXD" => {
                let Some(cycle) = self.modems[m].cycle.clone() else {
                    return Err((ErrCode::Unexpected, "CCTXD without a data request".into()));
                };
                let src = int(0, 0, 127, "src")? as u8;
                let dest = int(1, 0, 127, "dest")? as u8;
                let ack = int(2, 0, 1, "ack")?;
                let hex = f.get(3).copied().unwrap_or("");
                let bytes = decode_hex(hex).ok_or_else(|| bad("data is not hex"))?;
                let max = rate_info(cycle.rate).map_or(0, |r| r.frame_bytes);
                if bytes.len() > max {
                    return Err(bad(&format!("{} bytes exceed the frame's {max}", bytes.len())));
                }
                self.emit(m, &[&src.to_string(), &dest.to_string(), &ack.to_string(), &bytes.len().to_string()], "CATXD");
                let c = self.modems[m].cycle.as_mut().expect("checked above");
                c.frames.push(bytes);
                if c.frames.len() < c.nframes as usize {
                    self.request_frame(m);
                } else {
                    let c = self.modems[m].cycle.take().expect("checked above");
                    let src = self.modems[m].src();
                    self.transmit(m, src, c.dest, Payload::Data { rate: c.rate, ack: c.ack, frames: c.frames }, true);
                }
            }
            "MPC" => {
                let src = int(0, 0, 127, "src")? as u8;
                let dest = int(1, 0, 127, "dest")? as u8;
                self.check_idle(m)?;
                self.emit(m, &[&src.to_string(), &dest.to_string()], "CAMPC");
                let own = self.modems[m].src();
                self.transmit(m, own, dest, Payload::Ping, true);
            }
            "MUC" => {
                let src = int(0, 0, 127, "src")? as u8;
                let dest = int(1, 0, 127, "dest")? as u8;
                let hex = f.get(2).copied().unwrap_or("");
                let value = (!hex.is_empty() && hex.len() <= 4 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| u16::from_str_radix(hex, 16).ok()).flatten().ok_or_else(|| bad("value is not 1-4 hex digits"))?;
                if value > 0x1fff {
                    return Err(bad("value exceeds 13 bits"));
                }
                self.check_idle(m)?;
                let v = format!("{value:04X}");
                self.emit(m, &[&src.to_string(), &dest.to_string(), &v], "CAMUC");
                let own = self.modems[m].src();
                self.transmit(m, own, dest, Payload::Mini { value }, true);
            }
            other => return Err((ErrCode::Unknown, format!("unknown command CC{other}"))),
        }
        Ok(())
    }

    fn check_idle(&self, m: usize) -> Result<(), (ErrCode, String)> {
        let md = &self.modems[m];
        if md.cycle.is_some() || md.tx_until > self.now || md.boot_until > self.now {
            Err((ErrCode::Busy, "modem busy".into()))
        } else {
            Ok(())
        }
    }

    fn set_clock(&mut self, m: usize, t: i64) {
        let base = self.fe.epoch_ns + self.now as i64;
        self.modems[m].clock_offset_ns = t - base;
    }

    fn request_frame(&mut self, m: usize) {
        let Some(c) = self.modems[m].cycle.clone() else { return };
        let frame = c.frames.len() as u8 + 1;
        let src = self.modems[m].src();
        let max = rate_info(c.rate).map_or(0, |r| r.frame_bytes);
        let t = self.hhmmss(m);
        self.emit(m, &[&t, &src.to_string(), &c.dest.to_string(), &(c.ack as u8).to_string(), &max.to_string(), &frame.to_string()], "CADRQ");
        let dto = self.modems[m].param("DTO").max(1) as u64;
        self.schedule(self.now + dto * NS, Event::DrqTimeout { modem: m, cycle: c.id, frame });
    }

    /// Starts a transmission from modem `m` now.
    fn transmit(&mut self, m: usize, src: u8, dest: u8, payload: Payload, host: bool) {
        let airtime = match &payload {
            Payload::Data { rate, frames, .. } => packet_airtime_s(*rate, frames.len() as u8),
            _ => MINI_PACKET_S,
        };
        let (start, end) = (self.now, self.now + ns(airtime));
        let id = self.next_tx;
        self.next_tx += 1;
        let rate = match &payload {
            Payload::Data { rate, .. } => *rate,
            _ => 0,
        };
        let spec = match rate_info(rate) {
            Some(r) if matches!(payload, Payload::Data { .. }) => self.fe.spec(r.modulation, r.bit_rate_bps, r.coding_gain_db),
            _ => {
                let r = acoustic::micromodem_rate(0).expect("rate 0 exists");
                self.fe.spec(r.modulation, r.bit_rate_bps, r.coding_gain_db)
            }
        };
        let n = self.modems.len();
        let mut copies = vec![None; n];
        let mut any_intended = false;
        for (j, slot) in copies.iter_mut().enumerate() {
            if j == m {
                continue;
            }
            let addr = self.modems[j].src();
            let intended = match payload {
                Payload::Data { .. } | Payload::Mini { .. } => dest == addr || dest == BROADCAST,
                _ => dest == addr,
            };
            let (budget, closing) = match self.budget(m, j, &spec) {
                Some((b, c)) => (Some(b), c),
                None => (None, 0.0),
            };
            let delay = budget.map_or(0.0, |b| b.delay_s);
            let copy = Copy { budget, closing_mps: closing, start_ns: start.saturating_add(ns(delay)), end_ns: end.saturating_add(ns(delay)) };
            if budget.is_some_and(|b| b.audible) {
                self.heard[j].push((id, copy.start_ns, copy.end_ns, budget.map_or(0.0, |b| b.level_db)));
            }
            if intended {
                any_intended = true;
                // A copy nobody can hear is decided when its transmission ends.
                let heard = budget.is_some_and(|b| b.audible && b.usable);
                self.schedule(if heard { copy.end_ns } else { end }, Event::RxEnd { modem: j, tx: id });
            }
            *slot = Some(copy);
        }
        let tx = Tx { id, from: m, src, dest, payload, start_ns: start, end_ns: end, copies };
        if !any_intended {
            self.record_all(&tx, None, None, |_| Fate::NoReceiver);
        }
        self.sent[m].push((start, end));
        self.modems[m].tx_until = end;
        if host {
            let nbytes = tx_bytes(&tx.payload);
            self.emit(m, &[&nbytes.to_string()], "CATXP");
        }
        self.schedule(end, Event::TxEnd { modem: m, tx: id });
        self.txs.insert(id, tx);
    }

    fn budget(&self, a: usize, b: usize, spec: &LinkSpec) -> Option<(Budget, f64)> {
        let geo = self.geo.as_ref()?;
        let (va, vb) = (self.modems[a].spec.vehicle, self.modems[b].spec.vehicle);
        let (pa, pb) = (geo.pos.get(va)?, geo.pos.get(vb)?);
        let d = [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]];
        let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if !dist.is_finite() {
            return None;
        }
        let (los, loss) = geo.paths.get(&(va.min(vb), va.max(vb))).copied().unwrap_or((true, 0.0));
        let mean_depth = ((-pa[2]).max(0.0) + (-pb[2]).max(0.0)) / 2.0;
        let budget = spec.budget(&Geometry { distance_m: dist, los, hop_loss_db: loss, mean_depth_m: mean_depth });
        let (ua, ub) = (geo.vel.get(va).copied().unwrap_or_default(), geo.vel.get(vb).copied().unwrap_or_default());
        let closing = if dist > 0.0 { -((ub[0] - ua[0]) * d[0] + (ub[1] - ua[1]) * d[1] + (ub[2] - ua[2]) * d[2]) / dist } else { 0.0 };
        Some((budget, closing))
    }

    fn record_all(&mut self, tx: &Tx, to: Option<usize>, snr: Option<f64>, fate: impl Fn(u8) -> Fate) {
        let (rate, frames): (u8, Vec<(u8, usize)>) = match &tx.payload {
            Payload::Data { rate, frames, .. } => {
                (*rate, frames.iter().enumerate().filter(|(_, b)| !b.is_empty()).map(|(i, b)| (i as u8 + 1, b.len())).collect())
            }
            _ => (0, vec![(1, 2)]),
        };
        for (frame, bytes) in frames {
            self.ledger.push(LedgerEntry {
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
                if self.modems[modem].param("REV") != 0 && self.modems[modem].boot_until <= self.now {
                    let t = self.hhmmss(modem);
                    self.emit(modem, &[&t, "AUV", VERSION], "CAREV");
                }
                self.schedule(self.now + self.fe.heartbeat_ns, Event::Heartbeat { modem });
            }
            Event::BootDone { modem } => {
                let t = self.hhmmss(modem);
                self.emit(modem, &[&t, "INIT", VERSION], "CAREV");
                self.emit(modem, &[&t, "AUV", VERSION], "CAREV");
            }
            Event::DrqTimeout { modem, cycle, frame } => {
                let waiting = self.modems[modem].cycle.as_ref().is_some_and(|c| c.id == cycle && c.frames.len() + 1 == frame as usize);
                if waiting {
                    self.modems[modem].cycle = None;
                    let t = self.hhmmss(modem);
                    self.emit(modem, &[&t, "DATA_TIMEOUT", &frame.to_string(), "no CCTXD for the data request; cycle abandoned"], "CAERR");
                }
            }
            Event::TxEnd { modem, tx } => {
                let Some(t) = self.txs.get(&tx).cloned() else { return };
                if let Payload::Data { rate, ack, frames } = &t.payload {
                    let nbytes = tx_bytes(&t.payload);
                    self.emit(modem, &[&nbytes.to_string()], "CATXF");
                    if self.modems[modem].param("XST") == 1 {
                        let c = Civil::from_ns(self.clock_ns(modem, t.start_ns));
                        let date = format!("{:04}{:02}{:02}", c.year, c.month, c.day);
                        let time = format!("{:02}{:02}{:02}.{:04}", c.hour, c.minute, c.second, c.nanos / 100_000);
                        let probe = if *rate == 0 { "0" } else { "200" };
                        let bw = format!("{:.0}", self.fe.bandwidth_hz);
                        let fc = format!("{:.0}", self.fe.frequency_khz * 1e3);
                        let n = frames.len().to_string();
                        let ptype = if *rate == 0 { "1" } else { "3" };
                        let fields = [
                            "6", &date, &time, "0", "0", probe, &bw, &fc, &rate.to_string(), &t.src.to_string(), &t.dest.to_string(),
                            if *ack { "1" } else { "0" }, &n, &n, ptype, &nbytes.to_string(),
                        ];
                        self.emit(modem, &fields, "CAXST");
                    }
                    if self.modems[modem].param("REV") != 0 {
                        let t = self.hhmmss(modem);
                        self.emit(modem, &[&t, "AUV", VERSION], "CAREV");
                    }
                } else if !matches!(t.payload, Payload::Ack { .. } | Payload::PingReply { .. }) {
                    self.emit(modem, &[&tx_bytes(&t.payload).to_string()], "CATXF");
                }
            }
            Event::RxEnd { modem, tx } => self.receive(modem, tx),
            Event::Reply { modem, dest, payload } => {
                if self.modems[modem].tx_until <= self.now && self.modems[modem].boot_until <= self.now {
                    let src = self.modems[modem].src();
                    self.transmit(modem, src, dest, payload, false);
                }
            }
        }
    }

    /// Decides a copy at its receiver `j` at the end of its reception.
    fn receive(&mut self, j: usize, id: u64) {
        let Some(tx) = self.txs.get(&id).cloned() else { return };
        let Some(copy) = tx.copies.get(j).copied().flatten() else { return };
        let snr = copy.budget.map(|b| b.snr_db);
        let heard = copy.budget.is_some_and(|b| b.audible && b.usable);
        if !heard {
            return self.record_all(&tx, Some(j), snr, |_| Fate::OutOfRange);
        }
        let b = copy.budget.expect("heard");
        if self.sent[j].iter().any(|&(s, e)| s < copy.end_ns && e > copy.start_ns) {
            return self.record_all(&tx, Some(j), snr, |_| Fate::HalfDuplex);
        }
        let overlapping: Vec<f64> =
            self.heard[j].iter().filter(|h| h.0 != id && h.1 < copy.end_ns && h.2 > copy.start_ns).map(|h| h.3).collect();
        let captured = match self.fe.capture_sir_db {
            Some(sir) => overlapping.iter().all(|l| b.level_db - l >= sir),
            None => overlapping.is_empty(),
        };
        if !captured {
            self.record_all(&tx, Some(j), snr, |_| Fate::Collision);
            if matches!(tx.payload, Payload::Data { .. }) {
                let t = self.hhmmss(j);
                self.emit(j, &["PACKET_TIMEOUT", &t, "packet lost in a collision"], "CAMSG");
                self.cst(j, &tx, &copy, 2, 0);
            }
            return;
        }
        let dest_s = tx.dest.to_string();
        let src_s = tx.src.to_string();
        match &tx.payload {
            Payload::Data { rate, ack, frames } => {
                let info = rate_info(*rate).expect("valid rate");
                let bits = 8 * info.frame_bytes as u64;
                let p = acoustic::per(b.ber, bits);
                let fates: Vec<bool> = frames.iter().map(|_| self.rng.random::<f64>() >= p).collect();
                let fields = ["0".to_string(), src_s.clone(), dest_s.clone(), rate.to_string(), (*ack as u8).to_string(), frames.len().to_string()];
                let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
                self.emit(j, &refs, "CACYC");
                let mut good = Vec::new();
                for (i, (data, ok)) in frames.iter().zip(&fates).enumerate() {
                    let frame = (i + 1).to_string();
                    if data.is_empty() {
                        continue;
                    }
                    if *ok {
                        good.push(i as u8 + 1);
                        let hex = encode_hex(data);
                        self.emit(j, &[&src_s, &dest_s, &(*ack as u8).to_string(), &frame, &hex], "CARXD");
                    } else {
                        let t = self.hhmmss(j);
                        self.emit(j, &["BAD_CRC", &t, &frame], "CAMSG");
                    }
                }
                let bad = frames.iter().zip(&fates).filter(|(d, ok)| !d.is_empty() && !**ok).count();
                self.record_all(&tx, Some(j), snr, |f| if fates.get(f as usize - 1).copied().unwrap_or(false) { Fate::Delivered } else { Fate::PacketError });
                self.cst(j, &tx, &copy, if bad > 0 { 1 } else { 0 }, bad);
                if *ack && tx.dest != BROADCAST && !good.is_empty() {
                    self.schedule(self.now + ns(TURNAROUND_S), Event::Reply { modem: j, dest: tx.src, payload: Payload::Ack { original_src: tx.src, frames: good } });
                }
            }
            other => {
                let ok = self.rng.random::<f64>() >= acoustic::per(b.ber, MINI_PACKET_BITS);
                self.record_all(&tx, Some(j), snr, |_| if ok { Fate::Delivered } else { Fate::PacketError });
                if !ok {
                    return;
                }
                match other {
                    Payload::Ping => {
                        self.emit(j, &[&src_s, &dest_s], "CAMPA");
                        self.schedule(self.now + ns(TURNAROUND_S), Event::Reply { modem: j, dest: tx.src, payload: Payload::PingReply { ping_start_ns: tx.start_ns } });
                    }
                    Payload::PingReply { ping_start_ns } => {
                        let total = (self.now - ping_start_ns) as f64 / 1e9;
                        let owtt = ((total - 2.0 * MINI_PACKET_S - TURNAROUND_S) / 2.0).max(0.0);
                        self.emit(j, &[&src_s, &dest_s, &format!("{owtt:.4}")], "CAMPR");
                    }
                    Payload::Mini { value } => {
                        self.emit(j, &[&src_s, &dest_s, &format!("{value:04X}")], "CAMUA");
                    }
                    Payload::Ack { original_src, frames } => {
                        for f in frames {
                            self.emit(j, &[&src_s, &original_src.to_string(), &f.to_string(), "1"], "CAACK");
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
        let Payload::Data { rate, frames, .. } = &tx.payload else { return };
        let Some(b) = copy.budget else { return };
        let c = Civil::from_ns(self.clock_ns(j, copy.start_ns));
        let toa = format!("{:02}{:02}{:02}.{:04}", c.hour, c.minute, c.second, c.nanos / 100_000);
        let noise_db = acoustic::noise_psd_db(self.fe.frequency_khz, acoustic::NoiseConditions { shipping: self.fe.water.shipping, wind_mps: self.fe.water.wind_mps })
            + 10.0 * self.fe.bandwidth_hz.log10();
        let info = rate_info(*rate).expect("valid rate");
        let ebn0 = acoustic::eb_n0(b.snr_db, self.fe.bandwidth_hz, info.bit_rate_bps);
        let snr_out = 10.0 * ebn0.max(1e-12).log10();
        let f1 = |v: f64| format!("{v:.1}");
        let fields: Vec<String> = vec![
            mode.to_string(),
            toa,
            "0".into(),
            "0".into(),
            "0".into(),
            "0".into(),
            f1(b.level_db),
            "0".into(),
            "0".into(),
            "0".into(),
            "0".into(),
            rate.to_string(),
            tx.src.to_string(),
            tx.dest.to_string(),
            "0".into(),
            if *rate == 0 { "1".into() } else { "3".into() },
            frames.len().to_string(),
            bad.to_string(),
            f1(b.level_db),
            f1(b.snr_db),
            f1(snr_out),
            f1(snr_out),
            "0".into(),
            "0".into(),
            format!("{:.2}", copy.closing_mps),
            f1(noise_db),
            format!("{:.0}", self.fe.frequency_khz * 1e3),
            format!("{:.0}", self.fe.bandwidth_hz),
        ];
        let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
        self.emit(j, &refs, "CACST");
    }

    fn prune(&mut self) {
        // Nothing older than a minute can overlap anything still to be decided.
        let horizon = self.now.saturating_sub(60 * NS);
        for h in &mut self.heard {
            h.retain(|x| x.2 >= horizon);
        }
        for s in &mut self.sent {
            s.retain(|x| x.1 >= horizon);
        }
        let pending: std::collections::HashSet<u64> = self.events.values().filter_map(|e| match e {
            Event::RxEnd { tx, .. } | Event::TxEnd { tx, .. } => Some(*tx),
            _ => None,
        }).collect();
        self.txs.retain(|id, t| pending.contains(id) || t.end_ns >= horizon);
    }
}

fn tx_bytes(p: &Payload) -> usize {
    match p {
        Payload::Data { frames, .. } => frames.iter().map(|f| f.len()).sum(),
        _ => 2,
    }
}

/// Hex → bytes, either case; None for an odd length or a non-hex digit.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}

/// Bytes → lower-case hex (as Goby writes payloads).
pub fn encode_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests;
