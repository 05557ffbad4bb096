//! The acoustic medium: who hears which transmission, and what becomes of every copy addressed
//! to a receiver — one account shared by the embedded network simulator
//! ([`crate::sim::network`], IP packets) and the emulated Micro-Modems
//! ([`crate::model::modem`], modem frames). Pure and sans-IO: time is passed in as sim
//! nanoseconds, the link budgets ([`Budget`]) are computed by the caller.
//!
//! # Rules
//! A transmission occupies its sender for its airtime, `[start, end)`. At a receiver it arrives
//! `delay` later (the budget's d/c) and lasts as long. For each receiver:
//! 1. **Heard**: a signal is heard where the receiver can decode it (coded Eb/N0 ≥ 0 dB,
//!    [`Budget::usable`]) or where its in-band SNR is ≥ 0 dB ([`Budget::audible`]), whoever it
//!    is addressed to. Every heard signal interferes there.
//! 2. **Out of range**: a copy its receiver cannot decode is dropped with
//!    [`DropReason::OutOfRange`], known as soon as it is sent.
//! 3. **Half-duplex**: a copy during any part of which its receiver transmits is lost
//!    ([`DropReason::HalfDuplex`]).
//! 4. **Collision**: a copy that overlaps another heard signal at its receiver is lost
//!    ([`DropReason::Collision`]) unless it captures that signal: with its link's
//!    `capture_sir_db` = x, a copy whose received level is at least x dB above the other's
//!    survives the overlap. Capture is pairwise — a copy survives when it captures every signal
//!    that overlaps it; interference does not add up — so two overlapping copies are both lost
//!    unless one captures the other.
//! 5. Otherwise it is **received** ([`Verdict::Received`]) with its budget: SNR, level, BER.
//!    The caller draws PER = 1 − (1 − BER)^bits ([`crate::model::acoustic::per`]) over the unit
//!    its receiver checks — an IP packet for the network simulator (no framing), each frame of
//!    a data packet, or a whole mini-packet, for the modems — and drops a failed one with
//!    [`DropReason::PacketError`].
//!
//! The first rule that applies decides. Overlaps are of half-open intervals. A copy is decided
//! when the caller asks ([`Medium::decide`]), from the transmissions it knows then: the modems
//! decide at the end of the reception, when every transmission that could overlap it has
//! started; the network simulator at the END of the window the reception ends in, knowing the
//! transmissions captured before that window — a later one that overlaps an already decided
//! copy is lost alone. Signals are remembered until nothing undecided or still to come can
//! overlap them ([`Medium::forget_before`]), at most [`MAX_SIGNALS_PER_NODE`] per receiver.

use crate::model::fate::DropReason;
use crate::model::link::Budget;
use std::collections::{BTreeMap, BTreeSet};

/// Most signals (heard ones, own transmissions) remembered per node; beyond it the oldest are
/// forgotten and counted ([`Medium::forgotten`]).
pub const MAX_SIGNALS_PER_NODE: usize = 1 << 16;

/// A copy in flight, to be decided with [`Medium::decide`].
pub type CopyId = u64;

/// One transmission as it reaches one receiver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signal {
    pub receiver: usize,
    /// The link budget from the sender to `receiver`.
    pub budget: Budget,
    /// The capture threshold of the link (None: every overlap is lost).
    pub capture_sir_db: Option<f64>,
    /// A copy for `receiver` (its destination, or one of a broadcast's), not only a signal
    /// heard there.
    pub addressed: bool,
}

/// A copy addressed to a receiver, when its transmission starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reception {
    /// Its receiver cannot decode it: dropped with [`DropReason::OutOfRange`].
    OutOfRange,
    /// On its way; decide it with [`Medium::decide`] (or [`Medium::abandon`] it).
    InFlight(CopyId),
}

/// The medium's verdict on a copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Reached its receiver intact as far as the medium goes; the caller draws its PER.
    Received(Budget),
    Dropped(DropReason),
}

/// Nanoseconds of a delay in seconds (negative and NaN count as 0).
pub fn delay_ns(delay_s: f64) -> u64 {
    (delay_s * 1e9).round().clamp(0.0, 1e18) as u64
}

#[derive(Debug, Clone, Copy)]
struct Heard {
    tx: u64,
    start: u64,
    end: u64,
    level_db: f64,
}

#[derive(Debug, Clone, Copy)]
struct InFlight {
    receiver: usize,
    tx: u64,
    start: u64,
    end: u64,
    budget: Budget,
    capture_sir_db: Option<f64>,
}

fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// The shared acoustic medium of `n` nodes (see the module docs).
#[derive(Debug, Clone)]
pub struct Medium {
    /// Per node: its own transmissions `[start, end)`.
    own: Vec<Vec<(u64, u64)>>,
    /// Per node: the signals heard there.
    heard: Vec<Vec<Heard>>,
    in_flight: BTreeMap<CopyId, InFlight>,
    /// (reception start, id) of every copy in flight.
    starts: BTreeSet<(u64, CopyId)>,
    next_tx: u64,
    next_copy: CopyId,
    forgotten: u64,
}

impl Medium {
    pub fn new(nodes: usize) -> Medium {
        Medium {
            own: vec![Vec::new(); nodes],
            heard: vec![Vec::new(); nodes],
            in_flight: BTreeMap::new(),
            starts: BTreeSet::new(),
            next_tx: 0,
            next_copy: 0,
            forgotten: 0,
        }
    }

    pub fn nodes(&self) -> usize {
        self.own.len()
    }

    /// Node `sender` transmits during `[start_ns, end_ns)`, reaching the receivers of
    /// `signals`. Returns, for each signal in order, what became of its copy when it is
    /// addressed (`None` for a signal only heard, or naming a node the medium does not have).
    pub fn transmit(
        &mut self,
        sender: usize,
        start_ns: u64,
        end_ns: u64,
        signals: &[Signal],
    ) -> Vec<Option<Reception>> {
        self.next_tx += 1;
        let tx = self.next_tx;
        if let Some(own) = self.own.get_mut(sender) {
            if own.len() >= MAX_SIGNALS_PER_NODE {
                own.remove(0);
                self.forgotten += 1;
            }
            own.push((start_ns, end_ns));
        }
        let mut out = Vec::with_capacity(signals.len());
        for s in signals {
            if s.receiver >= self.heard.len() || s.receiver == sender {
                out.push(None);
                continue;
            }
            let b = &s.budget;
            let delay = delay_ns(b.delay_s);
            let (start, end) = (start_ns.saturating_add(delay), end_ns.saturating_add(delay));
            if b.usable || b.audible {
                let heard = &mut self.heard[s.receiver];
                if heard.len() >= MAX_SIGNALS_PER_NODE {
                    heard.remove(0);
                    self.forgotten += 1;
                }
                heard.push(Heard {
                    tx,
                    start,
                    end,
                    level_db: b.level_db,
                });
            }
            if !s.addressed {
                out.push(None);
            } else if !b.usable {
                out.push(Some(Reception::OutOfRange));
            } else {
                let id = self.next_copy;
                self.next_copy += 1;
                self.in_flight.insert(
                    id,
                    InFlight {
                        receiver: s.receiver,
                        tx,
                        start,
                        end,
                        budget: *b,
                        capture_sir_db: s.capture_sir_db,
                    },
                );
                self.starts.insert((start, id));
                out.push(Some(Reception::InFlight(id)));
            }
        }
        out
    }

    /// Decides a copy in flight from what the medium knows now (see the module docs); `None`
    /// for a copy already decided, abandoned or never sent.
    pub fn decide(&mut self, id: CopyId) -> Option<Verdict> {
        let c = self.in_flight.remove(&id)?;
        self.starts.remove(&(c.start, id));
        let span = (c.start, c.end);
        if self.own[c.receiver].iter().any(|&o| overlap(o, span)) {
            return Some(Verdict::Dropped(DropReason::HalfDuplex));
        }
        let captures = |other: &Heard| {
            c.capture_sir_db
                .is_some_and(|x| c.budget.level_db >= other.level_db + x)
        };
        if self.heard[c.receiver]
            .iter()
            .any(|h| h.tx != c.tx && overlap((h.start, h.end), span) && !captures(h))
        {
            return Some(Verdict::Dropped(DropReason::Collision));
        }
        Some(Verdict::Received(c.budget))
    }

    /// Forgets a copy in flight without deciding it (e.g. still in the water when the run ends).
    pub fn abandon(&mut self, id: CopyId) {
        if let Some(c) = self.in_flight.remove(&id) {
            self.starts.remove(&(c.start, id));
        }
    }

    /// Copies in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Forgets every signal that ended by `horizon_ns` and by the start of every copy in flight.
    /// The caller promises that nothing still to be sent reaches any node before `horizon_ns`.
    pub fn forget_before(&mut self, horizon_ns: u64) {
        let horizon = self
            .starts
            .first()
            .map_or(horizon_ns, |&(s, _)| s.min(horizon_ns));
        for h in &mut self.heard {
            h.retain(|h| h.end > horizon);
        }
        for o in &mut self.own {
            o.retain(|&(_, end)| end > horizon);
        }
    }

    /// Signals forgotten because a node's list was full.
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// A budget `delay_s` long at `level_db`, decodable and audible as given.
    fn budget(delay_s: f64, level_db: f64, usable: bool, audible: bool) -> Budget {
        Budget {
            usable,
            rate_bps: 250.0,
            delay_s,
            ber: 0.0,
            level_db,
            snr_db: level_db - 80.0,
            acoustic: true,
            audible,
            straight_fallback: false,
        }
    }

    fn to(receiver: usize, delay_s: f64, level_db: f64, capture: Option<f64>) -> Signal {
        Signal {
            receiver,
            budget: budget(delay_s, level_db, true, true),
            capture_sir_db: capture,
            addressed: true,
        }
    }

    fn heard_only(receiver: usize, delay_s: f64, level_db: f64) -> Signal {
        Signal {
            addressed: false,
            ..to(receiver, delay_s, level_db, None)
        }
    }

    fn id(r: &[Option<Reception>], i: usize) -> CopyId {
        match r[i] {
            Some(Reception::InFlight(id)) => id,
            other => panic!("{other:?}"),
        }
    }

    fn dropped(m: &mut Medium, id: CopyId) -> Option<DropReason> {
        match m.decide(id).unwrap() {
            Verdict::Received(_) => None,
            Verdict::Dropped(r) => Some(r),
        }
    }

    #[test]
    fn a_lone_copy_is_received_with_its_budget() {
        let mut m = Medium::new(2);
        let r = m.transmit(0, 0, S, &[to(1, 1.0, 120.0, None)]);
        assert_eq!(
            m.decide(id(&r, 0)),
            Some(Verdict::Received(budget(1.0, 120.0, true, true)))
        );
        assert_eq!(m.decide(id(&r, 0)), None);
    }

    #[test]
    fn an_undecodable_copy_is_out_of_range_but_an_audible_one_still_interferes() {
        let mut m = Medium::new(3);
        let deaf = Signal {
            budget: budget(1.0, 90.0, false, true),
            ..to(1, 1.0, 90.0, None)
        };
        assert_eq!(
            m.transmit(0, 0, S, &[deaf]),
            vec![Some(Reception::OutOfRange)]
        );
        let r = m.transmit(2, 0, S, &[to(1, 1.0, 120.0, None)]);
        assert_eq!(dropped(&mut m, id(&r, 0)), Some(DropReason::Collision));
        // Neither decodable nor audible: not heard, no interference.
        let mut m = Medium::new(3);
        let silent = Signal {
            budget: budget(1.0, 40.0, false, false),
            ..to(1, 1.0, 40.0, None)
        };
        m.transmit(0, 0, S, &[silent]);
        let r = m.transmit(2, 0, S, &[to(1, 1.0, 120.0, None)]);
        assert_eq!(dropped(&mut m, id(&r, 0)), None);
    }

    #[test]
    fn a_decodable_signal_below_the_noise_is_heard_addressed_or_not() {
        let mut m = Medium::new(3);
        let faint = Signal {
            budget: budget(1.0, 70.0, true, false),
            ..heard_only(1, 1.0, 70.0)
        };
        m.transmit(0, 0, S, &[faint]);
        let r = m.transmit(2, 0, S, &[to(1, 1.0, 120.0, None)]);
        assert_eq!(dropped(&mut m, id(&r, 0)), Some(DropReason::Collision));
    }

    #[test]
    fn half_duplex_comes_before_collision_whatever_the_order() {
        for own_first in [false, true] {
            let mut m = Medium::new(3);
            if own_first {
                m.transmit(1, S, 2 * S, &[]);
            }
            let r = m.transmit(0, 0, S, &[to(1, 0.5, 120.0, None)]);
            m.transmit(2, 0, S, &[heard_only(1, 0.5, 120.0)]);
            if !own_first {
                m.transmit(1, S, 2 * S, &[]);
            }
            assert_eq!(dropped(&mut m, id(&r, 0)), Some(DropReason::HalfDuplex));
        }
    }

    #[test]
    fn capture_is_pairwise_against_every_overlap() {
        // Copy A at 120 dB overlaps B at 105 and C at 112; threshold 10 dB: A captures B, not C.
        let mut m = Medium::new(4);
        let a = m.transmit(0, 0, 2 * S, &[to(3, 0.0, 120.0, Some(10.0))]);
        let b = m.transmit(1, 0, S, &[to(3, 0.0, 105.0, Some(10.0))]);
        assert_eq!(dropped(&mut m, id(&b, 0)), Some(DropReason::Collision));
        let mut m2 = m.clone();
        assert_eq!(dropped(&mut m2, id(&a, 0)), None);
        m.transmit(2, S, 2 * S, &[heard_only(3, 0.0, 112.0)]);
        assert_eq!(dropped(&mut m, id(&a, 0)), Some(DropReason::Collision));
        // Exactly the threshold captures; touching intervals do not overlap.
        let mut m = Medium::new(3);
        let a = m.transmit(0, 0, S, &[to(2, 0.0, 110.0, Some(10.0))]);
        m.transmit(1, 0, S, &[heard_only(2, 0.0, 100.0)]);
        m.transmit(1, S, 2 * S, &[heard_only(2, 0.0, 200.0)]);
        assert_eq!(dropped(&mut m, id(&a, 0)), None);
    }

    #[test]
    fn a_decided_copy_stays_decided_and_a_later_overlap_loses_alone() {
        let mut m = Medium::new(3);
        let a = m.transmit(0, 0, 2 * S, &[to(2, 0.0, 120.0, None)]);
        assert_eq!(dropped(&mut m, id(&a, 0)), None);
        let b = m.transmit(1, S, 3 * S, &[to(2, 0.0, 120.0, None)]);
        assert_eq!(dropped(&mut m, id(&b, 0)), Some(DropReason::Collision));
    }

    #[test]
    fn forgetting_keeps_what_a_copy_in_flight_overlaps() {
        let mut m = Medium::new(3);
        let a = m.transmit(0, 0, 10 * S, &[to(2, 0.0, 120.0, None)]);
        m.transmit(1, 0, S, &[heard_only(2, 0.0, 120.0)]);
        m.forget_before(20 * S);
        assert_eq!(dropped(&mut m, id(&a, 0)), Some(DropReason::Collision));
        m.forget_before(20 * S);
        assert!(m.heard.iter().all(|h| h.is_empty()) && m.own.iter().all(|o| o.is_empty()));
        let b = m.transmit(
            0,
            30 * S,
            31 * S,
            &[
                to(2, 0.0, 120.0, None),
                to(7, 0.0, 120.0, None),
                to(0, 0.0, 120.0, None),
            ],
        );
        assert_eq!((b[1], b[2]), (None, None));
        m.abandon(id(&b, 0));
        assert_eq!((m.in_flight(), m.decide(id(&b, 0))), (0, None));
    }
}
