//! The ledger: every captured copy of a packet (one per receiving vehicle) ends delivered or
//! dropped with a reason; until then it is in flight. At every moment
//! `captured = delivered + dropped + in_flight`, in total and for every directed link
//! (sender → receiver; a copy whose packet names no vehicle has no receiver). Pure counting, no
//! clock. The reasons are the shared vocabulary of [`crate::model::fate`].
//!
//! Each copy that ends also yields one [`CopyEnd`] (capture and end sim time, link, bytes,
//! fate), kept in a bounded buffer ([`CopyEnds`]) for the run record to take.

use crate::model::fate::{DropReason, Fate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Copy counts. `in_flight` is kept, not derived, so [`Counts::balances`] is a real check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub captured: u64,
    pub delivered: u64,
    pub in_flight: u64,
    /// Drops by reason (only reasons that occurred).
    pub dropped: BTreeMap<DropReason, u64>,
    /// Delivered with flipped bits (no CRC); included in `delivered`.
    pub delivered_corrupted: u64,
    /// Bytes captured and delivered (of copies).
    pub captured_bytes: u64,
    pub delivered_bytes: u64,
}

impl Counts {
    fn capture(&mut self, bytes: usize) {
        self.captured += 1;
        self.in_flight += 1;
        self.captured_bytes += bytes as u64;
    }

    fn deliver(&mut self, bytes: usize, corrupted: bool) {
        self.take_in_flight();
        self.delivered += 1;
        self.delivered_bytes += bytes as u64;
        if corrupted {
            self.delivered_corrupted += 1;
        }
    }

    fn drop_copy(&mut self, reason: DropReason) {
        self.take_in_flight();
        *self.dropped.entry(reason).or_default() += 1;
    }

    fn take_in_flight(&mut self) {
        debug_assert!(self.in_flight > 0, "a copy left that never entered");
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }

    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped.get(&reason).copied().unwrap_or(0)
    }

    /// captured = delivered + dropped + in flight.
    pub fn balances(&self) -> bool {
        self.captured == self.delivered + self.dropped_total() + self.in_flight
    }
}

/// A directed link: sender and receiving vehicle (node indices); no receiver for a packet that
/// names no vehicle (malformed, no route).
pub type LinkKey = (usize, Option<usize>);

/// The ledger of a run: the totals, the same per directed link, and releases naming nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    pub total: Counts,
    pub links: BTreeMap<LinkKey, Counts>,
    /// Releases or drops from the simulator naming no copy in flight (ignored).
    pub unknown_releases: u64,
}

impl Ledger {
    fn both(&mut self, link: LinkKey, f: impl Fn(&mut Counts)) {
        f(&mut self.total);
        f(self.links.entry(link).or_default());
    }

    /// A copy of `bytes` bytes from `src` to `dst` enters; it is in flight.
    pub fn capture(&mut self, src: usize, dst: Option<usize>, bytes: usize) {
        self.both((src, dst), |c| c.capture(bytes));
    }

    /// A copy enters and is dropped at once (malformed, no route, queue full at capture).
    pub fn capture_dropped(
        &mut self,
        src: usize,
        dst: Option<usize>,
        bytes: usize,
        reason: DropReason,
    ) {
        self.capture(src, dst, bytes);
        self.drop_copy(src, dst, reason);
    }

    pub fn deliver(&mut self, src: usize, dst: usize, bytes: usize, corrupted: bool) {
        self.both((src, Some(dst)), |c| c.deliver(bytes, corrupted));
    }

    pub fn drop_copy(&mut self, src: usize, dst: Option<usize>, reason: DropReason) {
        self.both((src, dst), |c| c.drop_copy(reason));
    }

    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.total.dropped(reason)
    }

    /// captured = delivered + dropped + in flight, in total and on every link, and the links
    /// add up to the total.
    pub fn balances(&self) -> bool {
        let sum = |f: fn(&Counts) -> u64| self.links.values().map(f).sum::<u64>();
        self.total.balances()
            && self.links.values().all(Counts::balances)
            && sum(|c| c.captured) == self.total.captured
            && sum(|c| c.delivered) == self.total.delivered
            && sum(|c| c.delivered_bytes) == self.total.delivered_bytes
    }
}

/// How one captured copy ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyEnd {
    /// Capture sim time (ns).
    pub captured_ns: u64,
    pub src: usize,
    /// The receiving vehicle (none: the packet named no vehicle).
    pub dst: Option<usize>,
    /// IP bytes of the copy.
    pub bytes: u32,
    pub fate: Fate,
    /// Sim time it was delivered or dropped (ns).
    pub end_ns: u64,
    /// Delivered with flipped bits (no CRC).
    pub corrupted: bool,
    /// What the emulator added to it; none for a copy of generated traffic, made and received
    /// in sim time.
    pub emulation: Option<Emulation>,
}

/// What the emulator itself added to a copy, beside what the network simulator decided, ns;
/// 0 where it does not apply (the release parts of a copy not delivered).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Emulation {
    /// How much later than the BEGIN due to describe its packet (the one after its stamp's
    /// window) the packet entered one: a window per BEGIN it missed (a reader behind, a capture
    /// agent's report too late for its window); see [`crate::clock::WindowClock::capture_lag_ns`].
    pub capture_lag_ns: u64,
    /// Wall time from the instant its sim-time release maps to (on the writer's clock) to its
    /// write into the receiver's TUN.
    pub release_late_ns: u64,
    /// The whole: its wall time from read to write less the sim delay the network simulator
    /// gave it (÷ the real-time factor). It holds what the two parts miss, a schedule that
    /// moved while the copy was in flight. For a copy read or written on a capture agent's
    /// machine (another clock), the two parts added.
    pub total_ns: u64,
}

/// Most [`CopyEnd`]s held for the record to take.
pub const MAX_COPY_ENDS: usize = 1_000_000;

/// A bounded buffer of [`CopyEnd`]s: beyond its limit new ones are counted, not kept. Off (keeps
/// and counts nothing) when no record takes them.
#[derive(Debug, Clone)]
pub struct CopyEnds {
    ends: Vec<CopyEnd>,
    limit: usize,
    /// Ends not kept because the buffer was full.
    pub dropped: u64,
}

impl Default for CopyEnds {
    fn default() -> Self {
        CopyEnds::new(MAX_COPY_ENDS)
    }
}

impl CopyEnds {
    /// A buffer of at most `limit` ends (0: off).
    pub fn new(limit: usize) -> CopyEnds {
        CopyEnds {
            ends: Vec::new(),
            limit,
            dropped: 0,
        }
    }

    pub fn push(&mut self, end: CopyEnd) {
        if self.ends.len() < self.limit {
            self.ends.push(end);
        } else if self.limit > 0 {
            self.dropped += 1;
        }
    }

    /// Moves every held end to the back of `out`.
    pub fn drain_into(&mut self, out: &mut Vec<CopyEnd>) {
        out.append(&mut self.ends);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// One directed link's ledger as `summary.json` reports it (`network.links`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LinkSummary {
    pub src: String,
    /// Absent: copies of packets that named no vehicle.
    pub dst: Option<String>,
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
    /// Dropped copies by reason label, as in [`LedgerSummary::drops`].
    pub drops: BTreeMap<String, u64>,
    pub delivered_corrupted: u64,
    pub captured_bytes: u64,
    pub delivered_bytes: u64,
}

/// The ledger as `summary.json` reports it: reasons by their labels, links by vehicle names.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LedgerSummary {
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
    /// Dropped copies by reason label (only reasons that occurred): `out of range`,
    /// `packet error`, `collision`, `half-duplex`, `queue full`, `retry limit`, `bit errors`,
    /// `held too long`, `no route`, `no receiver`, `malformed`, `shutdown` (in flight at the end
    /// of the last window), `after end` (captured after the run's last window, while its
    /// programs were being stopped), `unspecified`, `write error`.
    pub drops: BTreeMap<String, u64>,
    pub delivered_corrupted: u64,
    pub captured_bytes: u64,
    pub delivered_bytes: u64,
    pub unknown_releases: u64,
    /// Per directed link, in (sender, receiver) node order.
    pub links: Vec<LinkSummary>,
    /// Ends of copies the record did not get because its buffer was full ([`MAX_COPY_ENDS`]).
    pub packet_records_dropped: u64,
}

/// A ledger line's balance, printed the one way every table, page and check shows it:
/// `captured C = delivered D + dropped X + in flight F`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

impl Balance {
    /// Whether captured = delivered + dropped + in flight.
    pub fn adds_up(&self) -> bool {
        self.captured == self.delivered + self.dropped + self.in_flight
    }
}

impl std::fmt::Display for Balance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "captured {} = delivered {} + dropped {} + in flight {}",
            self.captured, self.delivered, self.dropped, self.in_flight
        )
    }
}

/// `reason count, reason count` of a ledger's drops (None without drops).
pub fn drops_text(drops: &BTreeMap<String, u64>) -> Option<String> {
    let parts: Vec<String> = drops.iter().map(|(r, c)| format!("{r} {c}")).collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

impl LedgerSummary {
    /// The totals' balance.
    pub fn balance(&self) -> Balance {
        Balance {
            captured: self.captured,
            delivered: self.delivered,
            dropped: self.dropped,
            in_flight: self.in_flight,
        }
    }
}

/// `captured C = delivered D + dropped X + in flight F (balanced); drops: reason n, …`.
impl std::fmt::Display for LedgerSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({})",
            self.balance(),
            if self.balanced {
                "balanced"
            } else {
                "NOT BALANCED"
            }
        )?;
        match drops_text(&self.drops) {
            Some(d) => write!(f, "; drops: {d}"),
            None => Ok(()),
        }
    }
}

impl LinkSummary {
    /// This link's balance.
    pub fn balance(&self) -> Balance {
        Balance {
            captured: self.captured,
            delivered: self.delivered,
            dropped: self.dropped,
            in_flight: self.in_flight,
        }
    }
}

fn drops(c: &Counts) -> BTreeMap<String, u64> {
    c.dropped
        .iter()
        .map(|(r, n)| (r.label().to_owned(), *n))
        .collect()
}

impl LedgerSummary {
    /// The summary of `l`, naming node `i` `names[i]` (its index if unnamed).
    pub fn new(l: &Ledger, names: &[String], packet_records_dropped: u64) -> LedgerSummary {
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| i.to_string());
        let t = &l.total;
        LedgerSummary {
            captured: t.captured,
            delivered: t.delivered,
            dropped: t.dropped_total(),
            in_flight: t.in_flight,
            balanced: l.balances(),
            drops: drops(t),
            delivered_corrupted: t.delivered_corrupted,
            captured_bytes: t.captured_bytes,
            delivered_bytes: t.delivered_bytes,
            unknown_releases: l.unknown_releases,
            links: l
                .links
                .iter()
                .map(|(&(src, dst), c)| LinkSummary {
                    src: name(src),
                    dst: dst.map(name),
                    captured: c.captured,
                    delivered: c.delivered,
                    dropped: c.dropped_total(),
                    in_flight: c.in_flight,
                    balanced: c.balances(),
                    drops: drops(c),
                    delivered_corrupted: c.delivered_corrupted,
                    captured_bytes: c.captured_bytes,
                    delivered_bytes: c.delivered_bytes,
                })
                .collect(),
            packet_records_dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_keeps_the_balance_in_total_and_per_link() {
        let mut l = Ledger::default();
        l.capture(0, Some(1), 100);
        l.capture(0, Some(2), 100);
        l.capture_dropped(0, None, 3, DropReason::Malformed);
        assert!(l.balances());
        assert_eq!(l.total.in_flight, 2);
        l.deliver(0, 1, 100, false);
        l.drop_copy(0, Some(2), DropReason::from_wire(3));
        assert!(l.balances());
        assert_eq!(
            (
                l.total.in_flight,
                l.total.delivered,
                l.dropped(DropReason::Collision)
            ),
            (0, 1, 1)
        );
        assert_eq!(l.links[&(0, Some(1))].delivered_bytes, 100);
        assert_eq!(l.links[&(0, Some(2))].dropped(DropReason::Collision), 1);
        let names = ["a".to_string(), "b".to_string(), "c".to_string()];
        let s = LedgerSummary::new(&l, &names, 0);
        assert_eq!(s.drops["malformed"], 1);
        assert!(s.balanced);
        let links: Vec<(&str, Option<&str>, u64)> = s
            .links
            .iter()
            .map(|k| (k.src.as_str(), k.dst.as_deref(), k.captured))
            .collect();
        assert_eq!(
            links,
            vec![("a", None, 1), ("a", Some("b"), 1), ("a", Some("c"), 1)]
        );
        assert!(s.links.iter().all(|k| k.balanced));
        // A link that lost count no longer balances the whole.
        l.links.get_mut(&(0, Some(1))).unwrap().delivered_bytes += 1;
        assert!(!l.balances());
    }

    #[test]
    fn the_summary_schema_names_every_drop_reason() {
        let schema = serde_json::to_string(&schemars::schema_for!(LedgerSummary)).unwrap();
        for r in DropReason::ALL {
            assert!(schema.contains(&format!("`{}`", r.label())), "{r:?}");
        }
    }

    #[test]
    fn the_copy_end_buffer_is_bounded_and_counts_what_it_drops() {
        let end = CopyEnd {
            captured_ns: 1,
            src: 0,
            dst: Some(1),
            bytes: 10,
            fate: Fate::Delivered,
            end_ns: 2,
            corrupted: false,
            emulation: None,
        };
        let mut b = CopyEnds::new(2);
        for _ in 0..5 {
            b.push(end);
        }
        assert_eq!((b.len(), b.dropped), (2, 3));
        let mut out = Vec::new();
        b.drain_into(&mut out);
        assert_eq!((out.len(), b.len()), (2, 0));
        b.push(end);
        assert_eq!(b.len(), 1);
        let mut off = CopyEnds::new(0);
        off.push(end);
        assert_eq!((off.len(), off.dropped), (0, 0));
    }
}
