//! The numbers behind the report, computed from a [`Record`] alone: per pair the channel state
//! over time, per directed link throughput bins, one-way delays, link states and its ledger,
//! modem frames per time bin by outcome, the programs' metrics beside the one-way delay of the
//! link they came over, and the record checked against the run summary. The
//! record's packets are folded one at a time ([`PacketFold`]), so they need not be held.

use crate::model::fate::DropReason;
use crate::output::record::Record;
use crate::output::schema::{
    EmulationWindow, LinkState, MetricSample, ModemFrame, Outcome, PacketRecord, PairChannel,
    ProgramRecord, RunInfo,
};
use crate::output::summary::RunReport;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// The destination shown for copies of packets that named no vehicle.
pub const NO_VEHICLE: &str = "(no vehicle)";

/// What a pair or a directed link is in over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelState {
    Los,
    Nlos,
    /// The network simulator's link model says the link is not usable.
    OutOfRange,
}

impl ChannelState {
    pub const ALL: [ChannelState; 3] = [
        ChannelState::Los,
        ChannelState::Nlos,
        ChannelState::OutOfRange,
    ];

    pub fn label(self) -> &'static str {
        match self {
            ChannelState::Los => "LOS",
            ChannelState::Nlos => "NLOS",
            ChannelState::OutOfRange => "out of range",
        }
    }
}

/// `[start_s, end_s)` in one state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]

pub struct Interval {
    pub start_s: f64,
    pub end_s: f64,
    pub state: ChannelState,
}

/// One pair's channel over the run.
#[derive(Debug, Clone)]
pub struct PairSeries {
    pub a: String,
    pub b: String,
    /// The record's `/channel` samples of this pair, in time order.
    pub samples: Vec<PairChannel>,
    /// LOS / NLOS from the samples; out of range while every direction the network simulator
    /// reported on says "not usable".
    pub intervals: Vec<Interval>,
    /// LOS↔NLOS changes.
    pub changes: u64,
}

impl PairSeries {
    /// Seconds spent in `state`.
    pub fn seconds(&self, state: ChannelState) -> f64 {
        // fold from +0.0: an empty f64 sum is -0.0.
        self.intervals
            .iter()
            .filter(|i| i.state == state)
            .fold(0.0, |s, i| s + (i.end_s - i.start_s))
    }

    /// Share of the time with a known state spent in `state` (0..=1), None before any sample.
    pub fn share(&self, state: ChannelState) -> Option<f64> {
        let known = self
            .intervals
            .iter()
            .fold(0.0, |s, i| s + (i.end_s - i.start_s));
        (known > 0.0).then(|| self.seconds(state) / known)
    }
}

/// Delivered copies and bytes in one time bin (by delivery time).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThroughputBin {
    pub packets: u64,
    pub bytes: u64,
    /// Sum of the one-way delays of the bin's packets (s).
    pub delay_sum_s: f64,
}

/// One delivered copy (24 bytes: a report holds one per delivered copy of the run).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelaySample {
    pub sent_s: f64,
    pub delivered_s: f64,
    pub bytes: u32,
    pub corrupted: bool,
}

impl DelaySample {
    /// Capture to delivery (s).
    pub fn delay_s(&self) -> f64 {
        self.delivered_s - self.sent_s
    }
}

/// Copies and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub copies: u64,
    pub bytes: u64,
}

impl Count {
    fn add(&mut self, bytes: u64) {
        self.copies += 1;
        self.bytes += bytes;
    }
}

/// A directed link's ledger: every copy of `/packets` from `src` to `dst`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkLedger {
    pub total: Count,
    pub delivered: Count,
    /// Delivered with flipped bits.
    pub corrupted: u64,
    /// Per drop reason label.
    pub dropped: BTreeMap<String, Count>,
}

impl LinkLedger {
    pub fn dropped_copies(&self) -> u64 {
        self.dropped.values().map(|c| c.copies).sum()
    }
}

/// One directed link over the run.
#[derive(Debug, Clone)]
pub struct LinkSeries {
    pub src: String,
    pub dst: String,
    /// Delivered bytes per bin of [`Analysis::bin_s`], by delivery time; [`Analysis::bins`] long.
    pub bins: Vec<ThroughputBin>,
    /// Every delivered copy, by delivery time.
    pub delays: Vec<DelaySample>,
    /// The network simulator's reports for this direction (each holds until the next).
    pub states: Vec<LinkState>,
    /// The pair's LOS / NLOS, out of range while this direction is not usable.
    pub shading: Vec<Interval>,
    pub ledger: LinkLedger,
    /// First capture and last end of a copy on this link (s).
    pub span: Option<(f64, f64)>,
}

impl LinkSeries {
    fn new(src: &str, dst: &str) -> LinkSeries {
        LinkSeries {
            src: src.to_string(),
            dst: dst.to_string(),
            bins: Vec::new(),
            delays: Vec::new(),
            states: Vec::new(),
            shading: Vec::new(),
            ledger: LinkLedger::default(),
            span: None,
        }
    }

    pub fn has_traffic(&self) -> bool {
        self.ledger.total.copies > 0
    }

    pub fn has_snr(&self) -> bool {
        self.states.iter().any(|s| s.snr_db.is_some())
    }

    /// Delivered bits over the link's active span (first capture to last end), Mbit/s.
    pub fn mean_mbit_s(&self) -> Option<f64> {
        let (a, b) = self.span?;
        (b > a && self.ledger.delivered.copies > 0)
            .then(|| self.ledger.delivered.bytes as f64 * 8.0 / (b - a) / 1e6)
    }

    pub fn mean_delay_s(&self) -> Option<f64> {
        (!self.delays.is_empty()).then(|| {
            self.delays.iter().map(|d| d.delay_s()).sum::<f64>() / self.delays.len() as f64
        })
    }

    /// The `q` quantile (0..=1) of the one-way delays (nearest rank).
    pub fn delay_quantile_s(&self, q: f64) -> Option<f64> {
        let mut d: Vec<f64> = self.delays.iter().map(|d| d.delay_s()).collect();
        if d.is_empty() {
            return None;
        }
        d.sort_by(f64::total_cmp);
        nearest_rank(&d, q)
    }

    /// The bins inside the link's active span: (bin start s, Mbit/s, mean delay s if any).
    pub fn active_bins(&self, bin_s: f64) -> Vec<(f64, f64, Option<f64>)> {
        let Some((a, b)) = self.span else {
            return Vec::new();
        };
        let first = bin_index(a, bin_s, self.bins.len());
        let last = bin_index(b, bin_s, self.bins.len());
        (first..=last)
            .map(|i| {
                let bin = &self.bins[i];
                let delay = (bin.packets > 0).then(|| bin.delay_sum_s / bin.packets as f64);
                (i as f64 * bin_s, mbit_s(bin.bytes, bin_s), delay)
            })
            .collect()
    }
}

/// Mbit/s of `bytes` in `bin_s` seconds.
pub fn mbit_s(bytes: u64, bin_s: f64) -> f64 {
    bytes as f64 * 8.0 / bin_s / 1e6
}

/// One row of `series/throughput.csv`: a directed link's delivered copies in one time bin
/// (written by the report, read back by `cosim soak`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputRow<'a> {
    pub src: Cow<'a, str>,
    pub dst: Cow<'a, str>,
    pub bin_start_s: f64,
    pub bin_end_s: f64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub mbit_per_s: f64,
    /// Absent (an empty cell) in a bin without deliveries.
    pub mean_delay_s: Option<f64>,
}

impl ThroughputRow<'_> {
    /// The columns, in order.
    pub const HEADER: [&'static str; 8] = [
        "src",
        "dst",
        "bin_start_s",
        "bin_end_s",
        "delivered_packets",
        "delivered_bytes",
        "mbit_per_s",
        "mean_delay_s",
    ];
}

/// Modem frames of one (sender, addressed receiver).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModemLink {
    pub src: String,
    /// None: addressed to no modem.
    pub dst: Option<String>,
    pub frames: u64,
    pub bytes: u64,
    pub by_outcome: BTreeMap<String, u64>,
}

/// The emulated modems' frames over the run.
#[derive(Debug, Clone, Default)]
pub struct ModemSeries {
    /// `delivered` first, then the drop reasons that occur, in the ledger's order.
    pub outcomes: Vec<String>,
    /// Frames sent per bin (by send time) and outcome: `bins[i][j]` for `outcomes[j]`.
    pub bins: Vec<Vec<u64>>,
    pub links: Vec<ModemLink>,
    /// Frames per outcome.
    pub totals: BTreeMap<String, u64>,
    pub frames: u64,
}

/// A figure of the record set beside the same figure in the run summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub what: String,
    pub record: u64,
    pub summary: u64,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.record == self.summary
    }
}

/// Everything the report shows.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub run: Option<RunInfo>,
    /// The run summary (from the record, else `summary.json`).
    pub summary: Option<RunReport>,
    /// The run's end (s): the summary's `sim_seconds` (its windows × W; copies captured after
    /// the last window, while the programs were being stopped, do not extend it), or without a
    /// summary (a record cut short) the last time in the record.
    pub end_s: f64,
    /// Width of the time bins (s) and their number.
    pub bin_s: f64,
    pub bins: usize,
    pub pairs: Vec<PairSeries>,
    /// Every directed link with packets or link states.
    pub links: Vec<LinkSeries>,
    pub modem: ModemSeries,
    pub programs: Vec<ProgramRecord>,
    /// The programs' metrics, per program, name and source vehicle.
    pub metrics: Vec<MetricSeries>,
    /// The record against the summary (only where the summary has the figure).
    pub checks: Vec<Check>,
    /// `/poses` messages in the record.
    pub poses: usize,
    /// The vehicles' tracks and the terrain, for the maps.
    pub map: super::mapdata::MapData,
    /// Per time bin, what the emulator added (from `/emulation`; empty without live traffic).
    pub emulation: Vec<EmulationBin>,
}

/// One time bin of the record's `/emulation` windows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EmulationBin {
    /// Delivered copies that ended in it, and those over the bound.
    pub copies: u64,
    pub over_bound: u64,
    /// The largest error of a copy, and lateness of a window's opening, ms.
    pub error_max_ms: f64,
    pub late_max_ms: f64,
}

/// The `/emulation` windows in `bins` bins of `bin_s` (none without any).
fn emulation_bins(windows: &[EmulationWindow], bin_s: f64, bins: usize) -> Vec<EmulationBin> {
    if windows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![EmulationBin::default(); bins];
    for w in windows {
        let b = &mut out[bin_index(w.t_s, bin_s, bins)];
        b.copies += u64::from(w.copies);
        b.over_bound += u64::from(w.over_bound);
        b.error_max_ms = b.error_max_ms.max(w.error_max_ms);
        b.late_max_ms = b.late_max_ms.max(w.opened_late_ms);
    }
    out
}

/// Bin widths (s) the report picks from.
const NICE_BINS: [f64; 20] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0,
    1800.0, 3600.0, 7200.0, 21600.0,
];

fn nice_at_least(x: f64) -> f64 {
    NICE_BINS
        .iter()
        .copied()
        .find(|&b| b >= x)
        .unwrap_or_else(|| (x / 86400.0).ceil().max(1.0) * 86400.0)
}

/// The bin width for a run of `end_s`: 1 s for runs of 20 s to 5 min, finer for shorter runs
/// (about 20 bins), coarser for longer ones (at most about 300 bins).
pub fn bin_width(end_s: f64) -> f64 {
    nice_at_least(end_s / 300.0).max(nice_at_least(end_s / 20.0).min(1.0))
}

/// The bin holding time `t_s` (times outside the run go to the first or last bin).
pub fn bin_index(t_s: f64, bin_s: f64, bins: usize) -> usize {
    let i = (t_s / bin_s).floor();
    if i.is_nan() || i < 0.0 {
        0
    } else {
        (i as usize).min(bins.saturating_sub(1))
    }
}

/// The drop reason whose label is `label`.
pub fn reason_of(label: &str) -> Option<DropReason> {
    DropReason::ALL.iter().copied().find(|r| r.label() == label)
}

/// At most this many distinct outcome labels are kept apart (the ledger has 15); a record with
/// more counts the rest as [`OTHER_OUTCOMES`].
pub const MAX_OUTCOMES: usize = 32;
pub const OTHER_OUTCOMES: &str = "other reasons";

/// Outcome labels: `delivered`, or the drop reason (`dropped` if it has none), at most
/// [`MAX_OUTCOMES`] distinct ones.
#[derive(Debug, Default)]
struct Outcomes(std::collections::HashSet<String>);

impl Outcomes {
    fn label(&mut self, outcome: Outcome, reason: Option<&str>) -> String {
        let label = match outcome {
            Outcome::Delivered => "delivered",
            Outcome::Dropped => reason.unwrap_or("dropped"),
        };
        if self.0.contains(label) {
            return label.to_string();
        }
        if self.0.len() >= MAX_OUTCOMES {
            return OTHER_OUTCOMES.to_string();
        }
        self.0.insert(label.to_string());
        label.to_string()
    }
}

/// Sort key of an outcome label: delivered, the ledger's reasons in order, then the rest.
pub fn outcome_rank(label: &str) -> (usize, String) {
    if label == "delivered" {
        return (0, String::new());
    }
    match DropReason::ALL.iter().position(|r| r.label() == label) {
        Some(i) => (1 + i, String::new()),
        None => (1 + DropReason::ALL.len(), label.to_string()),
    }
}

/// Orders vehicle names by node order (names the run does not list after, alphabetically).
struct NodeOrder(HashMap<String, usize>);

impl NodeOrder {
    fn key(&self, name: &str) -> (usize, String) {
        (
            self.0.get(name).copied().unwrap_or(usize::MAX),
            name.to_string(),
        )
    }
}

/// Events that change a pair's or a link's state.
#[derive(Debug, Clone, Copy)]
enum Event {
    Los(bool),
    /// Direction 0 or 1 of the pair.
    Usable(usize, bool),
}

/// The intervals of constant state from `events` (any order) up to `end_s`; events at or after
/// `end_s` change nothing.
fn intervals(mut events: Vec<(f64, Event)>, end_s: f64) -> Vec<Interval> {
    events.retain(|e| e.0 < end_s);
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut los = None;
    let mut usable = [None; 2];
    let mut out = Vec::new();
    let mut current: Option<(f64, ChannelState)> = None;
    for i in 0..events.len() {
        let (t, e) = events[i];
        match e {
            Event::Los(l) => los = Some(l),
            Event::Usable(d, u) => usable[d.min(1)] = Some(u),
        }
        // Decide once every event at this instant is applied.
        if events.get(i + 1).is_some_and(|n| n.0 == t) {
            continue;
        }
        let reported = usable.iter().any(|u| u.is_some());
        let state = if reported && !usable.contains(&Some(true)) {
            Some(ChannelState::OutOfRange)
        } else {
            los.map(|l| {
                if l {
                    ChannelState::Los
                } else {
                    ChannelState::Nlos
                }
            })
        };
        if current.map(|c| c.1) != state {
            if let Some((start, s)) = current {
                if t > start {
                    out.push(Interval {
                        start_s: start,
                        end_s: t,
                        state: s,
                    });
                }
            }
            current = state.map(|s| (t, s));
        }
    }
    if let Some((start, s)) = current {
        if end_s > start {
            out.push(Interval {
                start_s: start,
                end_s,
                state: s,
            });
        }
    }
    out
}

/// The `q` quantile (0..=1) of `sorted` values by nearest rank; `None` for none.
pub fn nearest_rank(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    (n > 0).then(|| sorted[((q.clamp(0.0, 1.0) * n as f64).ceil() as usize).clamp(1, n) - 1])
}

/// Count, extremes, median and 95th percentile (nearest rank) of some values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub count: u64,
    pub min: f64,
    pub median: f64,
    pub p95: f64,
    pub max: f64,
}

impl Stats {
    /// The statistics of `values` (`None` for none).
    pub fn of(mut values: Vec<f64>) -> Option<Stats> {
        values.sort_by(f64::total_cmp);
        Some(Stats {
            count: values.len() as u64,
            min: *values.first()?,
            median: nearest_rank(&values, 0.5)?,
            p95: nearest_rank(&values, 0.95)?,
            max: *values.last()?,
        })
    }
}

/// One program's values of one name (from one source vehicle), beside the one-way delay of
/// the link they came over.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSeries {
    pub program: String,
    /// The program's vehicle (absent: the host).
    pub vehicle: Option<String>,
    pub name: String,
    /// The vehicle the values came from, as the program said.
    pub from: Option<String>,
    /// The first and last value's time (s).
    pub first_s: f64,
    pub last_s: f64,
    pub values: Stats,
    /// The one-way delays (s) of the copies delivered on `from` → `vehicle` between the first
    /// and last value (absent without a source, or without such copies).
    pub link_delay: Option<Stats>,
}

impl MetricSeries {
    /// `from → vehicle`, the link the values came over, if the program named one.
    pub fn link(&self) -> Option<String> {
        Some(format!(
            "{} → {}",
            self.from.as_ref()?,
            self.vehicle.as_ref()?
        ))
    }
}

/// The record's `/metrics` grouped by program, name and source (in order of first
/// appearance), each beside its link's one-way delay in the same span.
fn metric_series(
    samples: &[MetricSample],
    links: &BTreeMap<(String, String), LinkSeries>,
) -> Vec<MetricSeries> {
    type Key<'a> = (&'a str, &'a str, Option<&'a str>);
    let mut order: Vec<Key> = Vec::new();
    let mut groups: HashMap<Key, Vec<&MetricSample>> = HashMap::new();
    for m in samples {
        let key = (m.program.as_str(), m.name.as_str(), m.from.as_deref());
        groups
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(m);
    }
    order
        .into_iter()
        .filter_map(|key| {
            let group = &groups[&key];
            let first = group.first()?;
            let first_s = group.iter().map(|m| m.t_s).fold(f64::INFINITY, f64::min);
            let last_s = group
                .iter()
                .map(|m| m.t_s)
                .fold(f64::NEG_INFINITY, f64::max);
            let link_delay = match (&first.from, &first.vehicle) {
                (Some(src), Some(dst)) => links.get(&(src.clone(), dst.clone())).and_then(|l| {
                    Stats::of(
                        l.delays
                            .iter()
                            .filter(|d| (first_s..=last_s).contains(&d.delivered_s))
                            .map(DelaySample::delay_s)
                            .collect(),
                    )
                }),
                _ => None,
            };
            Some(MetricSeries {
                program: first.program.clone(),
                vehicle: first.vehicle.clone(),
                name: first.name.clone(),
                from: first.from.clone(),
                first_s,
                last_s,
                values: Stats::of(group.iter().map(|m| m.value).collect())?,
                link_delay,
            })
        })
        .collect()
}

/// The record's `/packets` folded one copy at a time into per-link ledgers, spans and delays,
/// so that the copies themselves need not be held (an hour of live traffic is millions).
#[derive(Debug, Default)]
pub struct PacketFold {
    /// Throughput bins are left empty: their width depends on the run's end.
    links: BTreeMap<(String, String), LinkSeries>,
    labels: Outcomes,
    /// The latest capture or end of a copy (s).
    latest_s: Option<f64>,
}

impl PacketFold {
    pub fn add(&mut self, p: &PacketRecord) {
        // A copy of a packet that named no vehicle is its own "link".
        let dst = p.dst.as_deref().unwrap_or(NO_VEHICLE);
        let l = self
            .links
            .entry((p.src.clone(), dst.to_string()))
            .or_insert_with(|| LinkSeries::new(&p.src, dst));
        let latest = p.end_s.max(p.t_s);
        self.latest_s = Some(self.latest_s.map_or(latest, |t| t.max(latest)));
        let bytes = u64::from(p.bytes);
        l.ledger.total.add(bytes);
        let (a, b) = l.span.unwrap_or((p.t_s, p.end_s));
        l.span = Some((a.min(p.t_s), b.max(p.end_s)));
        match p.outcome {
            Outcome::Delivered => {
                l.ledger.delivered.add(bytes);
                l.ledger.corrupted += u64::from(p.corrupted);
                l.delays.push(DelaySample {
                    sent_s: p.t_s,
                    delivered_s: p.end_s,
                    bytes: p.bytes,
                    corrupted: p.corrupted,
                });
            }
            Outcome::Dropped => l
                .ledger
                .dropped
                .entry(self.labels.label(p.outcome, p.reason.as_deref()))
                .or_default()
                .add(bytes),
        }
    }
}

impl Analysis {
    /// Analyses `record`; `summary` is the run summary (the record's `/summary` read with
    /// [`RunReport::from_value`], else `summary.json`: a record cut short has none).
    pub fn of(record: &Record, summary: Option<RunReport>) -> Analysis {
        let mut packets = PacketFold::default();
        for p in &record.packets {
            packets.add(p);
        }
        Analysis::with_packets(record, packets, summary)
    }

    /// Analyses `record` whose `/packets` were folded into `packets` as they were read
    /// ([`Record::read_with`]); `summary` as for [`Self::of`].
    pub fn with_packets(
        record: &Record,
        packets: PacketFold,
        summary: Option<RunReport>,
    ) -> Analysis {
        let order = NodeOrder(
            record
                .run
                .as_ref()
                .map(|r| {
                    r.vehicles
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (v.clone(), i))
                        .collect()
                })
                .unwrap_or_default(),
        );

        let end_s = match &summary {
            Some(s) => s.sim_seconds,
            None => record
                .poses
                .iter()
                .map(|p| p.t_s)
                .chain(record.channel.iter().map(|c| c.t_s))
                .chain(record.link_states.iter().map(|l| l.t_s))
                .chain(packets.latest_s)
                .chain(record.modem_frames.iter().map(|f| f.decided_s.max(f.t_s)))
                .fold(0.0, f64::max),
        };
        let bin_s = bin_width(end_s);
        let bins = ((end_s / bin_s).ceil() as usize).max(1);

        let mut states: BTreeMap<(String, String), Vec<LinkState>> = BTreeMap::new();
        for s in &record.link_states {
            states
                .entry((s.src.clone(), s.dst.clone()))
                .or_default()
                .push(s.clone());
        }
        let pairs = pair_series(&record.channel, &states, end_s);
        let links = link_series(packets.links, states, &pairs, end_s, bin_s, bins);

        let mut pairs: Vec<PairSeries> = pairs.into_values().collect();
        pairs.sort_by_key(|p| (order.key(&p.a), order.key(&p.b)));
        let metrics = metric_series(&record.metrics, &links);
        let mut links: Vec<LinkSeries> = links.into_values().collect();
        links.sort_by_key(|l| (order.key(&l.src), order.key(&l.dst)));

        let modem = modem_series(&record.modem_frames, bin_s, bins, &order);
        let checks = summary
            .as_ref()
            .map(|s| checks(s, &links, &modem))
            .unwrap_or_default();
        Analysis {
            run: record.run.clone(),
            summary,
            end_s,
            bin_s,
            bins,
            pairs,
            links,
            modem,
            programs: record.programs.clone(),
            metrics,
            checks,
            poses: record.poses.len(),
            map: super::mapdata::MapData::of(record),
            emulation: emulation_bins(&record.emulation, bin_s, bins),
        }
    }

    /// The links that carried packets.
    pub fn traffic_links(&self) -> impl Iterator<Item = &LinkSeries> {
        self.links.iter().filter(|l| l.has_traffic())
    }
}

/// Pairs, unordered: the record's channel samples and each direction's link states, with the
/// intervals they make up to `end_s`.
fn pair_series(
    channel: &[PairChannel],
    states: &BTreeMap<(String, String), Vec<LinkState>>,
    end_s: f64,
) -> BTreeMap<(String, String), PairSeries> {
    let mut pairs: BTreeMap<(String, String), PairSeries> = BTreeMap::new();
    for c in channel {
        pairs
            .entry(pair_key(&c.a, &c.b))
            .or_insert_with(|| PairSeries {
                a: c.a.clone(),
                b: c.b.clone(),
                samples: Vec::new(),
                intervals: Vec::new(),
                changes: 0,
            })
            .samples
            .push(c.clone());
    }
    for p in pairs.values_mut() {
        p.samples.sort_by(|x, y| x.t_s.total_cmp(&y.t_s));
        p.changes = p
            .samples
            .windows(2)
            .filter(|w| w[0].los != w[1].los)
            .count() as u64;
        let mut events: Vec<(f64, Event)> = p
            .samples
            .iter()
            .map(|s| (s.t_s, Event::Los(s.los)))
            .collect();
        for (d, (src, dst)) in [(&p.a, &p.b), (&p.b, &p.a)].into_iter().enumerate() {
            for s in states
                .get(&(src.clone(), dst.clone()))
                .into_iter()
                .flatten()
            {
                events.push((s.t_s, Event::Usable(d, s.usable)));
            }
        }
        p.intervals = intervals(events, end_s);
    }
    pairs
}

/// A pair's key: its two names in order.
fn pair_key(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// Directed links: the folded packets and the link states, binned (`bins` of `bin_s`) and
/// shaded by their pair's LOS / NLOS up to `end_s`.
fn link_series(
    mut links: BTreeMap<(String, String), LinkSeries>,
    states: BTreeMap<(String, String), Vec<LinkState>>,
    pairs: &BTreeMap<(String, String), PairSeries>,
    end_s: f64,
    bin_s: f64,
    bins: usize,
) -> BTreeMap<(String, String), LinkSeries> {
    for ((src, dst), s) in states {
        let l = links
            .entry((src.clone(), dst.clone()))
            .or_insert_with(|| LinkSeries::new(&src, &dst));
        l.states = s;
        l.states.sort_by(|x, y| x.t_s.total_cmp(&y.t_s));
    }
    for l in links.values_mut() {
        // Delivered copies by delivery time, in the record's order.
        l.bins = vec![ThroughputBin::default(); bins];
        for d in &l.delays {
            let bin = &mut l.bins[bin_index(d.delivered_s, bin_s, bins)];
            bin.packets += 1;
            bin.bytes += u64::from(d.bytes);
            bin.delay_sum_s += d.delay_s();
        }
        l.delays
            .sort_by(|x, y| x.delivered_s.total_cmp(&y.delivered_s));
        let mut events: Vec<(f64, Event)> = l
            .states
            .iter()
            .map(|s| (s.t_s, Event::Usable(0, s.usable)))
            .collect();
        if let Some(p) = pairs.get(&pair_key(&l.src, &l.dst)) {
            events.extend(p.samples.iter().map(|s| (s.t_s, Event::Los(s.los))));
        }
        l.shading = intervals(events, end_s);
    }
    links
}

fn modem_series(frames: &[ModemFrame], bin_s: f64, bins: usize, order: &NodeOrder) -> ModemSeries {
    let mut labels = Outcomes::default();
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut links: BTreeMap<(String, Option<String>), ModemLink> = BTreeMap::new();
    for f in frames {
        let o = labels.label(f.outcome, f.reason.as_deref());
        *totals.entry(o.clone()).or_default() += 1;
        let l = links
            .entry((f.src.clone(), f.dst.clone()))
            .or_insert_with(|| ModemLink {
                src: f.src.clone(),
                dst: f.dst.clone(),
                ..Default::default()
            });
        l.frames += 1;
        l.bytes += u64::from(f.bytes);
        *l.by_outcome.entry(o).or_default() += 1;
    }
    let mut outcomes: Vec<String> = totals.keys().cloned().collect();
    outcomes.sort_by_key(|o| outcome_rank(o));
    let column: HashMap<&str, usize> = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| (o.as_str(), i))
        .collect();
    let mut per_bin = vec![vec![0u64; outcomes.len()]; bins];
    for f in frames {
        let o = labels.label(f.outcome, f.reason.as_deref());
        per_bin[bin_index(f.t_s, bin_s, bins)][column[o.as_str()]] += 1;
    }
    let mut links: Vec<ModemLink> = links.into_values().collect();
    links.sort_by_key(|l| (order.key(&l.src), l.dst.as_deref().map(|d| order.key(d))));
    ModemSeries {
        outcomes,
        bins: per_bin,
        links,
        totals,
        frames: frames.len() as u64,
    }
}

/// The summary's figures that the record also gives: per link (`network.links`) the delivered
/// bytes and copies; the modem ledger's totals (`modems.ledger`, by field name, as
/// `summary.json` orders them).
fn checks(summary: &RunReport, links: &[LinkSeries], modem: &ModemSeries) -> Vec<Check> {
    let mut out = Vec::new();
    for e in summary.network.iter().flat_map(|n| &n.links) {
        let Some(dst) = e.dst.as_deref() else {
            continue;
        };
        let src = e.src.as_str();
        let ledger = links
            .iter()
            .find(|l| l.src == src && l.dst == dst)
            .map(|l| l.ledger.delivered)
            .unwrap_or_default();
        out.push(Check {
            what: format!("{src} → {dst} delivered bytes"),
            record: ledger.bytes,
            summary: e.delivered_bytes,
        });
        out.push(Check {
            what: format!("{src} → {dst} delivered packets"),
            record: ledger.copies,
            summary: e.delivered,
        });
    }
    if let Some(m) = &summary.modems {
        let ledger = m.ledger.fields();
        let has = |key: &str| ledger.iter().any(|(k, _)| *k == key);
        // The summary's keys are the reasons' snake_case names; `other` takes the rest.
        let mut by_key: BTreeMap<String, u64> = BTreeMap::new();
        for (label, n) in &modem.totals {
            let key = label.replace([' ', '-'], "_");
            let key = if key == "delivered" || has(&key) {
                key
            } else {
                "other".to_string()
            };
            *by_key.entry(key).or_default() += n;
        }
        for (key, n) in ledger {
            let record = if key == "sent" {
                modem.frames
            } else {
                by_key.get(key).copied().unwrap_or(0)
            };
            out.push(Check {
                what: format!("modem frames {}", key.replace('_', " ")),
                record,
                summary: n,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_suit_the_run_length() {
        assert_eq!(bin_width(120.0), 1.0);
        assert_eq!(bin_width(60.0), 1.0);
        assert_eq!(bin_width(5.0), 0.5);
        assert_eq!(bin_width(3600.0), 15.0);
        assert!(bin_width(0.0) > 0.0);
        assert!(1e9 / bin_width(1e9) <= 301.0);
        assert_eq!(bin_index(-1.0, 1.0, 10), 0);
        assert_eq!(bin_index(9.99, 1.0, 10), 9);
        assert_eq!(bin_index(10.0, 1.0, 10), 9);
        assert_eq!(bin_index(f64::NAN, 1.0, 10), 0);
    }

    #[test]
    fn states_hold_until_the_next_change_and_out_of_range_wins() {
        let ev = vec![
            (0.0, Event::Los(true)),
            (5.0, Event::Los(true)),
            (10.0, Event::Los(false)),
            (20.0, Event::Usable(0, false)),
            (20.0, Event::Usable(1, true)),
            (25.0, Event::Usable(1, false)),
            (28.0, Event::Usable(0, true)),
        ];
        let iv = intervals(ev, 30.0);
        let s = |a, b, state| Interval {
            start_s: a,
            end_s: b,
            state,
        };
        assert_eq!(
            iv,
            vec![
                s(0.0, 10.0, ChannelState::Los),
                s(10.0, 25.0, ChannelState::Nlos),
                s(25.0, 28.0, ChannelState::OutOfRange),
                s(28.0, 30.0, ChannelState::Nlos)
            ]
        );
    }

    #[test]
    fn packets_folded_as_read_give_the_run_its_end_and_their_links_bins_and_ledgers() {
        let copy = |t_s: f64, dst: Option<&str>, delivered: bool, end_s: f64| PacketRecord {
            t_s,
            src: "a".into(),
            dst: dst.map(Into::into),
            bytes: 100,
            outcome: if delivered {
                Outcome::Delivered
            } else {
                Outcome::Dropped
            },
            reason: (!delivered).then(|| "queue full".into()),
            end_s,
            corrupted: false,
            emulation_ms: None,
        };
        let mut fold = PacketFold::default();
        for p in [
            copy(0.1, Some("b"), true, 0.3),
            copy(59.0, Some("b"), true, 59.5),
            copy(1.0, Some("b"), false, 1.0),
            copy(2.0, None, false, 2.0),
            copy(30.0, Some("b"), true, 30.25),
        ] {
            fold.add(&p);
        }
        // No other message: the run's end comes from the packets alone.
        let a = Analysis::with_packets(&Record::default(), fold, None);
        assert_eq!((a.end_s, a.bin_s, a.bins), (59.5, 1.0, 60));
        let link = |dst: &str| {
            a.links
                .iter()
                .find(|l| l.src == "a" && l.dst == dst)
                .unwrap()
        };
        let ab = link("b");
        assert_eq!(
            ab.ledger.total,
            Count {
                copies: 4,
                bytes: 400
            }
        );
        assert_eq!(
            ab.ledger.delivered,
            Count {
                copies: 3,
                bytes: 300
            }
        );
        assert_eq!(
            ab.ledger.dropped["queue full"],
            Count {
                copies: 1,
                bytes: 100
            }
        );
        assert_eq!(ab.span, Some((0.1, 59.5)));
        let filled: Vec<(usize, u64)> = ab
            .bins
            .iter()
            .enumerate()
            .filter(|(_, b)| b.packets > 0)
            .map(|(i, b)| (i, b.packets))
            .collect();
        assert_eq!(filled, vec![(0, 1), (30, 1), (59, 1)]);
        assert!((ab.bins[30].delay_sum_s - 0.25).abs() < 1e-9);
        let delivered: Vec<f64> = ab.delays.iter().map(|d| d.delivered_s).collect();
        assert_eq!(delivered, vec![0.3, 30.25, 59.5], "by delivery time");
        assert_eq!(
            (a.links.len(), link(NO_VEHICLE).ledger.total.copies),
            (2, 1)
        );
    }

    #[test]
    fn a_summarised_run_ends_at_its_last_window_though_copies_were_captured_after_it() {
        // 60 windows of 1 s; the pair is LOS for the first 21 s. Copies captured after the last
        // window (while the programs were being stopped) end as `after end`, up to 60.208 s.
        let sample = |t_s: f64, los: bool| PairChannel {
            t_s,
            a: "a".into(),
            b: "b".into(),
            los,
            distance_m: 100.0,
            loss_db: 0.0,
            hops: 0,
            change: false,
            arrivals: None,
        };
        let record = Record {
            channel: (0..60).map(|s| sample(s as f64, s < 21)).collect(),
            ..Default::default()
        };
        let mut fold = PacketFold::default();
        for t_s in [59.9995, 60.0015, 60.1, 60.208] {
            fold.add(&PacketRecord {
                t_s,
                src: "a".into(),
                dst: Some("b".into()),
                bytes: 100,
                outcome: Outcome::Dropped,
                reason: Some(if t_s < 60.0 { "shutdown" } else { "after end" }.into()),
                end_s: t_s.max(60.0),
                corrupted: false,
                emulation_ms: None,
            });
        }
        let summary = RunReport {
            scenario: "s".into(),
            windows: 60,
            window_ms: 1000.0,
            sim_seconds: 60.0,
            wall_seconds: 60.3,
            started_unix_s: 0.0,
            slipped_seconds: 0.0,
            late_windows: 0,
            max_late_ms: 0.0,
            windows_per_second: 1.0,
            interrupted: false,
            record: None,
            timeline: None,
            pairs: Vec::new(),
            network: None,
            traffic: Vec::new(),
            emulation: None,
            modems: None,
            programs: Vec::new(),
            metrics: Vec::new(),
            viewer: None,
            record_queue: None,
            acoustic_paths: None,
            air: Vec::new(),
            insecure_peers: Vec::new(),
            stages: BTreeMap::new(),
        };
        let a = Analysis::with_packets(&record, fold, Some(summary));
        assert_eq!((a.end_s, a.bin_s, a.bins), (60.0, 1.0, 60));
        let p = &a.pairs[0];
        assert_eq!(p.share(ChannelState::Los), Some(21.0 / 60.0));
        assert_eq!(p.intervals.last().map(|i| i.end_s), Some(60.0));
        let ledger = &a.links[0].ledger;
        assert_eq!(
            (
                ledger.total.copies,
                ledger.dropped["after end"].copies,
                ledger.dropped["shutdown"].copies
            ),
            (4, 3, 1)
        );
    }

    #[test]
    fn outcome_labels_are_bounded() {
        let mut o = Outcomes::default();
        assert_eq!(o.label(Outcome::Delivered, None), "delivered");
        assert_eq!(o.label(Outcome::Dropped, None), "dropped");
        for i in 0..100 {
            let r = format!("reason {i}");
            let l = o.label(Outcome::Dropped, Some(&r));
            assert_eq!(l == r, i < MAX_OUTCOMES - 2, "{i}: {l}");
        }
        assert_eq!(o.label(Outcome::Dropped, Some("reason 3")), "reason 3");
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut l = LinkSeries {
            src: "a".into(),
            dst: "b".into(),
            bins: vec![],
            delays: vec![],
            states: vec![],
            shading: vec![],
            ledger: Default::default(),
            span: None,
        };
        assert_eq!(l.delay_quantile_s(0.5), None);
        for d in [4.0, 1.0, 3.0, 2.0] {
            l.delays.push(DelaySample {
                sent_s: 0.0,
                delivered_s: d,
                bytes: 1,
                corrupted: false,
            });
        }
        assert_eq!(l.delay_quantile_s(0.5), Some(2.0));
        assert_eq!(l.delay_quantile_s(0.95), Some(4.0));
        assert_eq!(l.delay_quantile_s(0.0), Some(1.0));
        assert_eq!(l.mean_delay_s(), Some(2.5));
    }
}
