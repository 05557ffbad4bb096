//! The ledger: every captured copy of a packet (one per receiving vehicle) ends delivered or
//! dropped with a reason; until then it is in flight. At every moment
//! `captured = delivered + dropped + in_flight`. Pure counting, no clock. The reasons are the
//! shared vocabulary of [`crate::model::fate`].

use crate::model::fate::DropReason;
use serde::Serialize;
use std::collections::BTreeMap;

/// Copy counts. `in_flight` is kept, not derived, so [`Ledger::balances`] is a real check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ledger {
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
    /// Releases or drops from the simulator naming no copy in flight (ignored).
    pub unknown_releases: u64,
}

impl Ledger {
    /// A copy of `bytes` bytes enters; it is in flight.
    pub fn capture(&mut self, bytes: usize) {
        self.captured += 1;
        self.in_flight += 1;
        self.captured_bytes += bytes as u64;
    }

    /// A copy enters and is dropped at once (malformed, no route, queue full at capture).
    pub fn capture_dropped(&mut self, bytes: usize, reason: DropReason) {
        self.capture(bytes);
        self.drop_copy(reason);
    }

    pub fn deliver(&mut self, bytes: usize, corrupted: bool) {
        self.take_in_flight();
        self.delivered += 1;
        self.delivered_bytes += bytes as u64;
        if corrupted {
            self.delivered_corrupted += 1;
        }
    }

    pub fn drop_copy(&mut self, reason: DropReason) {
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

/// The ledger as `summary.json` reports it: reasons by their labels.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LedgerSummary {
    pub captured: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
    pub drops: BTreeMap<&'static str, u64>,
    pub delivered_corrupted: u64,
    pub captured_bytes: u64,
    pub delivered_bytes: u64,
    pub unknown_releases: u64,
}

impl From<&Ledger> for LedgerSummary {
    fn from(l: &Ledger) -> Self {
        LedgerSummary {
            captured: l.captured,
            delivered: l.delivered,
            dropped: l.dropped_total(),
            in_flight: l.in_flight,
            balanced: l.balances(),
            drops: l.dropped.iter().map(|(r, n)| (r.label(), *n)).collect(),
            delivered_corrupted: l.delivered_corrupted,
            captured_bytes: l.captured_bytes,
            delivered_bytes: l.delivered_bytes,
            unknown_releases: l.unknown_releases,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_keeps_the_balance() {
        let mut l = Ledger::default();
        l.capture(100);
        l.capture(100);
        l.capture_dropped(3, DropReason::Malformed);
        assert!(l.balances());
        assert_eq!(l.in_flight, 2);
        l.deliver(100, false);
        l.drop_copy(DropReason::from_wire(3));
        assert!(l.balances());
        assert_eq!((l.in_flight, l.delivered, l.dropped(DropReason::Collision)), (0, 1, 1));
        let s = LedgerSummary::from(&l);
        assert_eq!(s.drops["malformed"], 1);
        assert!(s.balanced);
    }
}
