//! One 802.11 channel shared by every radio on it, as the distributed coordination function
//! shares it: a sans-IO discrete-event simulation (time passed in, the caller's RNG) of each
//! station's queue, DIFS, backoff, frame and ACK, with carrier sense and interference taken
//! from the received levels the caller gives per pair. The standard's numbers are
//! [`crate::model::wifi`]'s; the network simulator feeds this and releases what it decides.
//!
//! - **Carrier sense.** A station senses a transmission whose level at it is at least the
//!   lowest rate's minimum sensitivity (−82 dBm, the standard's CCA threshold for a decodable
//!   preamble); its own transmissions and ACK waits keep it busy too. It counts its backoff in
//!   slots of air it has sensed idle for DIFS (802.11n: AIFS), freezes while it senses the air
//!   busy and counts on after DIFS of idle air again; a new backoff from `[0, CW]` follows every exchange
//!   (post-backoff), so a frame reaching a station whose backoff has run out on idle air goes
//!   at once. Stations whose backoffs end within [`CCA_NS`] of each other do not sense each
//!   other in time and transmit together; stations that cannot sense each other (the terrain
//!   between them) are hidden terminals and overlap freely.
//! - **Reception.** A receiver locks onto a PPDU when its preamble starts if it is neither
//!   sending nor locked onto another PPDU still on the air, and the preamble's SINR (its level
//!   against the noise and every transmission on the air within [`CCA_NS`] of its start) is at
//!   least [`PREAMBLE_SNR_DB`], as ns-3's default preamble detection decides; of two PPDUs
//!   starting in the same slot it locks onto neither unless one is that much stronger, and a
//!   PPDU that starts while it receives another is lost to it whole, even the part after the
//!   first ends. A frame from `s` at `r` that `r` locked onto is decided by its SINR: the
//!   caller's level of `s` at `r` against the noise floor plus every other transmission
//!   overlapping it that `r` receives, piece by piece: each piece's bits survive the
//!   decoder's error events at that SINR ([`Rate::event_rate`]), so without interference a
//!   frame fails exactly as often as the link model says; a receiver that transmits during
//!   the frame loses it (half duplex).
//! - **Exchange.** A unicast frame that is received is acknowledged after SIFS by an ACK that
//!   occupies the air (sensed by the stations around the receiver); one that is not makes its
//!   sender wait as long, then try again with the next contention window, at most
//!   [`RETRY_LIMIT`] attempts (then dropped, and the window starts again), or until
//!   [`LIFETIME_NS`] after it was queued (then dropped after the attempt that failed, the
//!   window as it is, or at its station's next access if it waits then: given up if it was
//!   sent before, else `queue full`, as ns-3's MAC queue drops it). The ACK (or Block
//!   Ack) reaches the sender as a frame reaches a receiver — its preamble locked onto, its
//!   SINR over what else is on the air — and one the sender loses counts as no answer: it
//!   sends the frame again (or a Block Ack Request, whose Block Ack tells what the receiver
//!   has), the receiver discards a frame it already has, and a frame given up that the
//!   receiver had is delivered, not lost. A group-addressed frame is sent once, without
//!   ACK, at the lowest rate.
//! - **Aggregation (802.11n).** A station whose access comes with more than one frame for the
//!   head frame's receiver sends them in one A-MPDU, in queue order, within
//!   [`Phy::ampdu_fits`] and the Block Ack window (64 frames from the oldest not yet
//!   acknowledged), all at the head frame's rate; a lone frame goes alone with an ACK. Each
//!   subframe is decided over its own symbols when they end, and the receiver hands frames
//!   up in each link's order, holding those after a gap until the frame missing arrives or is
//!   given up, as a Block Ack recipient reorders. A Block Ack follows after SIFS if any
//!   subframe got through: the contention window starts again and the frames it leaves out
//!   go in a later A-MPDU. An A-MPDU nobody answered grows the window, and the sender's next
//!   access is a Block Ack Request (answered by a Block Ack, which starts the window again)
//!   before the data goes again. Frames sent under the agreement have no retry limit: one
//!   still unanswered [`LIFETIME_NS`] after it was queued is given up; when an unanswered
//!   exchange leaves none of its frames to go again, the contention window starts again and
//!   the sender forgets the receiver's SNR, as after a frame given up at the retry limit
//!   (while some are left, frames given up cost neither), and while other frames to that
//!   receiver wait its next access still sends a Block Ack Request (at the lowest rate, and
//!   again until one is answered) before they go. This is ns-3's behaviour. A link's first
//!   A-MPDU waits for its Block Ack agreement: the sender's access
//!   sends an ADDBA Request (at the lowest rate, acknowledged as a data frame is; the
//!   receiver's ADDBA Response is not modelled), and one unanswered at the retry limit leaves
//!   the frames going alone with their ACKs for [`ADDBA_FAILED_NS`] before it asks again, as
//!   ns-3 does.
//! - **Ideal rate.** A unicast frame whose rate is the ideal choice for its link
//!   ([`Frame::ideal`]) goes at the ideal rate for the SNR its sender knows, as ns-3's
//!   IdealWifiManager knows it: each ACK or Block Ack reports the SINR its receiver measured
//!   at the end of the frame it answers — the interference on the air then included, so a
//!   hidden sender's transmission overlapping the end of an exchange that still got through
//!   slows the next one down. Once a frame to a receiver is dropped at the retry limit the
//!   manager forgets it, and the sender uses the lowest rate until a frame to that receiver
//!   is acknowledged. (ns-3 starts without the SNR; here each pair starts with its link's,
//!   the caller's choice, until the first answer.)
//! - **Causality.** [`WifiMedium::advance`] runs the events before `until`; the caller queues
//!   every frame before the medium's time passes its arrival. A frame is decided when it ends,
//!   with every transmission that overlapped it known; one still on the air at `until` is
//!   decided in a later call.
//!
//! Not modelled: EIFS after a frame not decoded, RTS/CTS, the ADDBA Response, frame capture
//! (a receiver switching to a stronger PPDU that starts while it receives one), propagation
//! delay within the contention (the slot covers it), fading.

use crate::model::fate::DropReason;
use crate::model::wifi::{
    Phy, Rate, ACK_BYTES, ADDBA_REQUEST_BYTES, BLOCK_ACK_BYTES, BLOCK_ACK_REQUEST_BYTES,
    DELIMITER_BYTES, MAX_AMPDU_MPDUS, RETRY_LIMIT,
};
use rand::Rng;
use smallvec::SmallVec;
use std::collections::{BTreeMap, VecDeque};

/// The OFDM PHY's clear channel assessment time (aCCATime, below 4 µs): a transmission that
/// starts less than this before a station's backoff ends is not sensed by it in time.
pub const CCA_NS: u64 = 4_000;

/// The SINR a preamble needs for its receiver to lock onto it (ns-3's
/// ThresholdPreambleDetectionModel's default threshold; its minimum RSSI is
/// [`Phy::detects`]'s −82 dBm).
pub const PREAMBLE_SNR_DB: f64 = 4.0;

/// How long a frame may wait for its receiver before its sender gives it up, after an attempt
/// that failed or at its next access (ns-3's MAC queue `MaxDelay`, 802.11's transmit MSDU
/// lifetime).
pub const LIFETIME_NS: u64 = 500_000_000;

/// How long a sender whose ADDBA Request went unanswered at the retry limit sends to that
/// receiver without a Block Ack agreement before it asks again (ns-3's `FailedAddBaTimeout`).
pub const ADDBA_FAILED_NS: u64 = 200_000_000;

/// One frame handed to the medium: its receivers, size, rate and the caller's tag.
#[derive(Debug, Clone)]
pub struct Frame<T> {
    pub tag: T,
    /// Receiving stations; one for a unicast frame.
    pub receivers: Receivers,
    /// MPDU bytes (header, payload, FCS).
    pub bytes: u32,
    pub rate: Rate,
    /// Acknowledged and retried (else sent once).
    pub unicast: bool,
    /// `rate` is the ideal choice for the link's SNR (not a constant rate): the lowest rate
    /// replaces it while the sender does not know the SNR (see the module docs).
    pub ideal: bool,
}

/// A frame's receiving stations: one for a unicast frame, held inline (no allocation per
/// frame or per subframe copy).
pub type Receivers = SmallVec<[usize; 2]>;

impl<T> Frame<T> {
    /// The receiver of the link `frame` from `s` counts under: its one receiver, or `s` itself
    /// for a group-addressed frame.
    fn link_to(&self, s: usize) -> usize {
        if self.unicast {
            self.receivers[0]
        } else {
            s
        }
    }
}

/// What became of one copy of a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome<T> {
    pub tag: T,
    pub receiver: usize,
    /// `Ok(end of the data frame that got through)` or the reason it was lost.
    pub result: Result<u64, DropReason>,
}

/// Counters of the medium (its links' added up, and its busy time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AirStats {
    /// Data frames put on the air (first attempts and retries).
    pub attempts: u64,
    pub retries: u64,
    /// Attempts whose receiver lost them while another transmission (its own included)
    /// overlapped them.
    pub collided: u64,
    /// Time with at least one transmission (data or ACK) on the air, ns.
    pub busy_ns: u64,
}

/// What one link carried: its sender's frames to its receiver (a sender's group-addressed
/// frames under the link from the sender to itself).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkAir {
    /// Frames done with: received, or dropped after their last attempt.
    pub frames: u64,
    /// Data frames put on the air (first attempts and retries), and the retries among them.
    pub attempts: u64,
    pub retries: u64,
    /// Attempts lost while another transmission overlapped them, the receiver's own included
    /// (per receiver for a group-addressed frame).
    pub collided: u64,
    /// Frames dropped after their last attempt.
    pub retry_limit: u64,
    /// Air time of its data frames, every attempt, ns.
    pub airtime_ns: u64,
    /// Sum over its frames of the MAC service time: from reaching the head of the sender's
    /// queue (or arriving there, if later) to the end of their exchange, ns.
    pub service_ns: u64,
}

#[derive(Debug, Clone)]
struct Queued<T> {
    frame: Frame<T>,
    arrival: u64,
    /// Its failed attempts, and whether it has been on the air.
    attempts: u32,
    aired: bool,
    /// Its station's number for it, and (unicast) its number on its link, in the order the
    /// link's frames were queued.
    id: u64,
    seq: u64,
}

#[derive(Debug, Clone)]
struct Station<T> {
    queue: VecDeque<Queued<T>>,
    next_id: u64,
    /// Failed exchanges since the last answered one (or the last frame given up on): the
    /// contention window's stage.
    stage: u32,
    /// Backoff slots left.
    backoff: u32,
    /// Transmissions on the air it senses.
    sensed: u32,
    /// Since when it has sensed the air idle (when `sensed` is 0 and no exchange).
    idle_since: u64,
    exchange: Option<Exchange>,
    /// After an A-MPDU nobody answered: the Block Ack Request its next access sends first (the
    /// receiver and the rate of the A-MPDU), and the frames that A-MPDU carried (none, at the
    /// lowest rate, after they were all given up while others to the receiver wait).
    bar: Option<(usize, Rate, Vec<u64>)>,
    /// When its last frame left the queue (the next one's service starts then or at its
    /// arrival).
    head_since: u64,
    /// Until when it receives the PPDU it locked onto last.
    rx_until: u64,
}

/// A station's exchange: its PPDU, then the ACK or Block Ack (or the wait for it).
#[derive(Debug, Clone)]
struct Exchange {
    end: u64,
    /// Each frame sent (its `Queued::id`) and whether it got through.
    sent: Vec<(u64, bool)>,
    /// The receiver of a unicast PPDU.
    to: Option<usize>,
    /// The receiver answered (or a group-addressed frame, which nobody answers).
    answered: bool,
    /// The rate of the A-MPDU or Block Ack Request a Block Ack answers.
    block: Option<Rate>,
    /// The SINR (dB) the receiver measured at the end of what it answers, which its ACK or
    /// Block Ack reports.
    snr: Option<f64>,
    /// An ADDBA Request's exchange: its ACK sets the agreement up.
    setup: bool,
    /// The answer's bytes and rate, if one was sent: the sender has yet to receive it.
    answer: Option<(u32, Rate)>,
}

/// What a sender knows of the SNR at a receiver, which its ideal rate follows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Known {
    /// The link's own (the caller's ideal rate), until an answer reports one.
    Link,
    /// The SINR the last ACK or Block Ack reported: the receiver's measure at the end of the
    /// frame it answered, interference then on the air included, as ns-3's receiver measures
    /// it (`InterferenceHelper::CalculateSnr` at the PPDU's end) and tags its answer with.
    Measured(f64),
    /// None since a frame to it was given up on: the lowest rate until an answer.
    Forgotten,
}

/// A frame a sender sends for the agreement rather than for data (802.11n), answered after
/// SIFS (a Block Ack, an ACK).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Request {
    kind: RequestKind,
    to: usize,
    /// Whether `to` received it, once decided.
    got: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RequestKind {
    /// After an A-MPDU nobody answered: which of its frames does the receiver have?
    BlockAckRequest,
    /// Before a link's first A-MPDU: set up the Block Ack agreement.
    AddBa,
}

/// A link's Block Ack agreement (802.11n), which its A-MPDUs need.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Agreement {
    /// Not yet: the sender's next access to the receiver sends an ADDBA Request, which has
    /// failed this many times.
    Asking(u32),
    Established,
    /// The request went unanswered at the retry limit: frames go alone, each with its ACK,
    /// until then (then the sender asks again).
    FailedUntil(u64),
}

/// Per receiver of a data frame: received, or why not.
type Fates = SmallVec<[Result<(), DropReason>; 2]>;

/// One frame of a PPDU: the whole PPDU's, or one subframe of an A-MPDU.
#[derive(Debug, Clone)]
struct Sub<T> {
    frame: Frame<T>,
    id: u64,
    seq: u64,
    /// Bytes it occupies (its delimiter included in an A-MPDU), and when its last symbol ends.
    bytes: u32,
    end: u64,
}

#[derive(Debug, Clone)]
struct Ppdu<T> {
    subs: Vec<Sub<T>>,
    /// The fates of `subs[..fates.len()]`, decided at each one's end.
    fates: Vec<Fates>,
}

#[derive(Debug, Clone)]
struct Tx<T> {
    from: usize,
    start: u64,
    end: u64,
    /// The data PPDU (None: an ACK, Block Ack or request).
    data: Option<Ppdu<T>>,
    /// A Block Ack Request or ADDBA Request: its receiver and whether it got it, once decided.
    request: Option<Request>,
    started: bool,
    /// Off the air, kept while a frame it overlapped is undecided.
    ended: bool,
    /// The stations that detect it but did not lock onto it when it started, and why.
    missed: Vec<(usize, DropReason)>,
}

impl<T> Tx<T> {
    /// A transmission from `from` over `[start, end)`, not yet on the air: an answer (ACK or
    /// Block Ack) unless it carries data or a request.
    fn new(from: usize, start: u64, end: u64) -> Self {
        Tx {
            from,
            start,
            end,
            data: None,
            request: None,
            started: false,
            ended: false,
            missed: Vec::new(),
        }
    }
}

/// One channel's stations and air (see the module docs).
#[derive(Debug, Clone)]
pub struct WifiMedium<T> {
    phy: Phy,
    n: usize,
    /// `levels[s * n + r]`: level (dBm) of `s`'s signal at `r`; None: `r` does not receive `s`.
    levels: Vec<Option<f64>>,
    /// Noise floor (mW) of each pair's receiver.
    noise_mw: Vec<f64>,
    /// `known[s * n + r]`: what `s` knows of the SNR at `r` (see [`Known`]).
    known: Vec<Known>,
    /// `agreements[s * n + r]`: the Block Ack agreement of the link (802.11n).
    agreements: Vec<Agreement>,
    stations: Vec<Station<T>>,
    /// Transmissions scheduled or on the air.
    air: Vec<Tx<T>>,
    now: u64,
    /// Whether the air is idle everywhere since `now` with nothing queued (the fast path).
    idle: bool,
    /// Time with a transmission on the air so far, and until when the air is busy.
    busy_ns: u64,
    busy_until: u64,
    /// `links[s * n + r]`, and the links changed since [`WifiMedium::take_changed`].
    links: Vec<LinkAir>,
    changed: Vec<usize>,
    is_changed: Vec<bool>,
    /// Per link: the number of its next frame queued, and of the next one its receiver hands
    /// up; frames received after a gap wait in `held` (with None for one given up on) until
    /// the gap closes, as a Block Ack recipient reorders.
    next_seq: Vec<u64>,
    expect: Vec<u64>,
    held: BTreeMap<(usize, u64), Option<T>>,
    /// The last error event rate computed: `(rate's bit/s, SINR's bits, events per bit)`. An
    /// A-MPDU's subframes, and a sender's frames to one receiver, are decided at one SINR
    /// while nothing else is on the air, so most receptions need no new
    /// [`Rate::event_rate`] (the same value, not an approximation).
    last_event_rate: std::cell::Cell<(u64, u64, f64)>,
}

fn mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

impl<T: Clone> WifiMedium<T> {
    /// `n` stations (the network simulator's nodes; those without a radio here never send).
    pub fn new(phy: Phy, n: usize) -> Self {
        WifiMedium {
            phy,
            n,
            levels: vec![None; n * n],
            noise_mw: vec![mw(-94.0); n * n],
            known: vec![Known::Link; n * n],
            agreements: vec![Agreement::Asking(0); n * n],
            stations: (0..n)
                .map(|_| Station {
                    queue: VecDeque::new(),
                    next_id: 0,
                    stage: 0,
                    backoff: 0,
                    sensed: 0,
                    idle_since: 0,
                    exchange: None,
                    bar: None,
                    head_since: 0,
                    rx_until: 0,
                })
                .collect(),
            air: Vec::new(),
            now: 0,
            idle: true,
            busy_ns: 0,
            busy_until: 0,
            links: vec![LinkAir::default(); n * n],
            last_event_rate: std::cell::Cell::new((0, 0, 0.0)),
            changed: Vec::new(),
            is_changed: vec![false; n * n],
            next_seq: vec![0; n * n],
            expect: vec![0; n * n],
            held: BTreeMap::new(),
        }
    }

    pub fn phy(&self) -> &Phy {
        &self.phy
    }

    pub fn stats(&self) -> AirStats {
        self.links.iter().fold(
            AirStats {
                busy_ns: self.busy_ns,
                ..AirStats::default()
            },
            |t, l| AirStats {
                attempts: t.attempts + l.attempts,
                retries: t.retries + l.retries,
                collided: t.collided + l.collided,
                busy_ns: t.busy_ns,
            },
        )
    }

    /// The medium's time: every event before it has run.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// What the link from `s` to `r` carried (`r == s`: `s`'s group-addressed frames).
    pub fn link(&self, s: usize, r: usize) -> LinkAir {
        if s < self.n && r < self.n {
            self.links[s * self.n + r]
        } else {
            LinkAir::default()
        }
    }

    /// Calls `f(s, r, link)` for every link whose counters changed since the last call.
    pub fn take_changed(&mut self, mut f: impl FnMut(usize, usize, &LinkAir)) {
        for i in self.changed.drain(..) {
            self.is_changed[i] = false;
            f(i / self.n, i % self.n, &self.links[i]);
        }
    }

    /// The counters of the link of `frame` from `s`, marked changed.
    fn link_of(&mut self, s: usize, frame: &Frame<T>) -> &mut LinkAir {
        self.touch(s, frame.link_to(s))
    }

    /// The counters of the link from `s` to `r`, marked changed.
    fn touch(&mut self, s: usize, r: usize) -> &mut LinkAir {
        let i = s * self.n + r;
        if !self.is_changed[i] {
            self.is_changed[i] = true;
            self.changed.push(i);
        }
        &mut self.links[i]
    }

    /// Sets the level of `s`'s signal at `r` (None: not received) and `r`'s noise floor, for
    /// what the medium senses and decides from now on.
    pub fn set_level(&mut self, s: usize, r: usize, level_dbm: Option<f64>, noise_floor_dbm: f64) {
        if s < self.n && r < self.n {
            self.levels[s * self.n + r] = level_dbm;
            self.noise_mw[s * self.n + r] = mw(noise_floor_dbm);
        }
    }

    /// Frames waiting at `s`, the one on the air included.
    pub fn queued(&self, s: usize) -> usize {
        self.stations.get(s).map_or(0, |st| st.queue.len())
    }

    /// Queues `frame` at station `s`, arriving at `at` (at the medium's time if earlier).
    pub fn enqueue(&mut self, s: usize, frame: Frame<T>, at: u64) {
        if let Some(st) = self.stations.get_mut(s) {
            let link = frame.unicast.then(|| s * self.n + frame.receivers[0]);
            let seq = match link.and_then(|l| self.next_seq.get_mut(l)) {
                Some(next) => {
                    *next += 1;
                    *next - 1
                }
                None => 0,
            };
            st.queue.push_back(Queued {
                frame,
                arrival: at.max(self.now),
                attempts: 0,
                aired: false,
                id: st.next_id,
                seq,
            });
            st.next_id += 1;
            self.idle = false;
        }
    }

    fn senses(&self, s: usize, x: usize) -> bool {
        s == x || self.levels[s * self.n + x].is_some_and(|l| self.phy.detects(l))
    }

    /// When `x`'s backoff ends and its head frame may go (None: nothing to send, or busy). A
    /// Block Ack Request due goes even if the frames it asks about have all left the queue
    /// (at the end of their lifetime), as ns-3 sends it.
    fn expiry(&self, x: usize) -> Option<u64> {
        let st = &self.stations[x];
        let arrival = match st.queue.front() {
            Some(head) => head.arrival,
            None => st.bar.as_ref().map(|_| 0)?,
        };
        if st.sensed > 0 || st.exchange.is_some() {
            return None;
        }
        let counted = st.idle_since + self.phy.aifs_ns() + u64::from(st.backoff) * self.phy.slot_ns;
        Some(counted.max(arrival))
    }

    /// `x` senses the air turn busy at `t`: the backoff slots it counted are spent.
    fn freeze(&mut self, x: usize, t: u64) {
        let aifs = self.phy.aifs_ns();
        let slot = self.phy.slot_ns;
        let st = &mut self.stations[x];
        if st.sensed == 0 && st.exchange.is_none() {
            let from = st.idle_since + aifs;
            if t > from {
                let counted = (t - from) / slot;
                st.backoff -= st.backoff.min(counted.min(u64::from(u32::MAX)) as u32);
            }
        }
        st.sensed += 1;
    }

    fn new_backoff(&mut self, x: usize, rng: &mut impl Rng) {
        let cw = self.phy.cw(self.stations[x].stage);
        self.stations[x].backoff = rng.random_range(0..=cw);
    }

    /// Runs every event before `until`; appends what became of each copy decided to `out`.
    pub fn advance(&mut self, until: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        if self.idle {
            self.now = self.now.max(until);
            return;
        }
        while let Some(t) = self.next_event() {
            if t >= until {
                break;
            }
            self.now = t;
            self.subframes_at(t, rng, out);
            self.ends_at(t, rng, out);
            self.exchanges_end_at(t, rng, out);
            self.starts_at(t, out);
            self.forget();
        }
        self.now = self.now.max(until);
        self.forget();
        self.idle = self.air.is_empty()
            && self
                .stations
                .iter()
                .all(|s| s.queue.is_empty() && s.exchange.is_none() && s.bar.is_none());
    }

    /// A data PPDU on the air (or off it) with frames not yet decided.
    fn undecided(&self, i: usize) -> bool {
        let tx = &self.air[i];
        tx.started
            && (tx
                .data
                .as_ref()
                .is_some_and(|d| d.fates.len() < d.subs.len())
                || tx.request.is_some_and(|r| r.got.is_none()))
    }

    /// Drops the transmissions off the air that no undecided frame overlaps (every frame to
    /// come starts at `now` or later).
    fn forget(&mut self) {
        let horizon = (0..self.air.len())
            .filter(|&i| self.undecided(i))
            .map(|i| self.air[i].start)
            .fold(self.now, u64::min);
        self.air.retain(|tx| !tx.ended || tx.end > horizon);
    }

    fn next_event(&self) -> Option<u64> {
        let air = self.air.iter().filter(|tx| !tx.ended).map(|tx| {
            if !tx.started {
                return tx.start;
            }
            // An A-MPDU's next subframe to end, or the PPDU's end.
            tx.data
                .as_ref()
                .and_then(|d| d.subs.get(d.fates.len()))
                .map_or(tx.end, |sub| sub.end.min(tx.end))
        });
        let exchanges = self
            .stations
            .iter()
            .filter_map(|s| s.exchange.as_ref().map(|e| e.end));
        let expiries = (0..self.n).filter_map(|x| self.expiry(x));
        air.chain(exchanges).chain(expiries).min()
    }

    /// Subframes of A-MPDUs on the air whose last symbol ends at `t` (before their PPDU's
    /// end): decided now, from what has overlapped them.
    fn subframes_at(&mut self, t: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        for i in 0..self.air.len() {
            let tx = &self.air[i];
            if tx.started && !tx.ended && tx.end > t && self.undecided(i) {
                self.decide(i, t, rng, out);
            }
        }
    }

    /// Transmissions ending at `t`: the stations that sensed them count idle air from `t`; a
    /// data PPDU's frames are decided and its sender waits for the ACK or Block Ack (sent if
    /// a frame got through), a Block Ack Request's sender for the Block Ack.
    fn ends_at(&mut self, t: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        for i in 0..self.air.len() {
            if !(self.air[i].started && !self.air[i].ended && self.air[i].end == t) {
                continue;
            }
            if self.undecided(i) {
                self.decide(i, t, rng, out);
            }
            self.air[i].ended = true;
            let from = self.air[i].from;
            for x in 0..self.n {
                if self.senses(from, x) {
                    let st = &mut self.stations[x];
                    st.sensed = st.sensed.saturating_sub(1);
                    if st.sensed == 0 {
                        st.idle_since = t;
                    }
                }
            }
            if let Some(request) = self.air[i].request {
                let (span, to) = ((self.air[i].start, t), request.to);
                match request.kind {
                    RequestKind::AddBa => {
                        // A management frame at the lowest rate, acknowledged as a data
                        // frame is.
                        let lowest = self.phy.rates()[0];
                        let control = self.phy.ack_rate(lowest);
                        let got =
                            (self.receive(i, span, ADDBA_REQUEST_BYTES, control, to, rng)).is_ok();
                        self.air[i].request = Some(Request {
                            got: Some(got),
                            ..request
                        });
                        let to = Some((to, lowest, false));
                        self.answer(from, to, t, got, Vec::new(), None, true);
                    }
                    RequestKind::BlockAckRequest => {
                        let Some((_, rate, ids)) = self.stations[from].bar.clone() else {
                            continue;
                        };
                        // A control frame, at the ACK's rate for the data's.
                        let control = self.phy.ack_rate(rate);
                        let got = self
                            .receive(i, span, BLOCK_ACK_REQUEST_BYTES, control, to, rng)
                            .is_ok();
                        self.air[i].request = Some(Request {
                            got: Some(got),
                            ..request
                        });
                        // Its Block Ack tells which of the frames the receiver has (those
                        // whose own Block Ack the sender lost).
                        let link = from * self.n + to;
                        let sent = (ids.iter())
                            .map(|&id| {
                                let seq = (self.stations[from].queue.iter())
                                    .find(|q| q.id == id)
                                    .map(|q| q.seq);
                                (id, got && seq.is_some_and(|seq| self.has(link, seq)))
                            })
                            .collect();
                        let snr = self.sinr_at_end(i, to, t);
                        self.answer(from, Some((to, rate, true)), t, got, sent, snr, false);
                    }
                }
                continue;
            }
            let Some(d) = &self.air[i].data else {
                continue;
            };
            let head = &d.subs[0].frame;
            // A group-addressed frame is sent once, whoever received it.
            let sent: Vec<(u64, bool)> = d
                .subs
                .iter()
                .zip(&d.fates)
                .map(|(sub, fates)| (sub.id, !head.unicast || fates.iter().all(|f| f.is_ok())))
                .collect();
            let to = head
                .unicast
                .then(|| (head.receivers[0], head.rate, d.subs.len() > 1));
            let answered = to.is_none() || sent.iter().any(|s| s.1);
            let snr = to.and_then(|(r, ..)| self.sinr_at_end(i, r, t));
            self.answer(from, to, t, answered, sent, snr, false);
        }
    }

    /// The SINR (dB) at `r` of the transmission `air[i]` ending at `t`, over what else is on
    /// the air at its last instant (started before `t`, not ended before it); None if `r`
    /// does not receive its sender.
    fn sinr_at_end(&self, i: usize, r: usize, t: u64) -> Option<f64> {
        let (n, from) = (self.n, self.air[i].from);
        let level = self.levels[from * n + r]?;
        let interference: f64 = (self.air.iter().enumerate())
            .filter(|&(j, tx)| j != i && tx.from != r && tx.start < t && tx.end >= t)
            .filter_map(|(_, tx)| self.levels[tx.from * n + r].map(mw))
            .sum();
        Some(level - 10.0 * (self.noise_mw[from * n + r] + interference).log10())
    }

    /// `from`'s exchange after its transmission ended at `t`: for a unicast one (`to`: the
    /// receiver, the rate and whether a Block Ack answers) the answer after SIFS if it is
    /// `answered`, or the wait as long; its own exchange keeps the sender busy until it ends.
    /// `setup`: the transmission was an ADDBA Request.
    #[allow(clippy::too_many_arguments)]
    fn answer(
        &mut self,
        from: usize,
        to: Option<(usize, Rate, bool)>,
        t: u64,
        answered: bool,
        sent: Vec<(u64, bool)>,
        snr: Option<f64>,
        setup: bool,
    ) {
        let mut end = t;
        let mut reply = None;
        if let Some((receiver, rate, block)) = to {
            let answer_ns = match block {
                true => self.phy.block_ack_ns(rate),
                false => self.phy.ack_ns(rate),
            };
            let answer = t + self.phy.sifs_ns;
            end = answer + answer_ns;
            if answered {
                let bytes = if block { BLOCK_ACK_BYTES } else { ACK_BYTES };
                reply = Some((bytes, self.phy.ack_rate(rate)));
                self.air.push(Tx::new(receiver, answer, end));
            }
        }
        self.stations[from].exchange = Some(Exchange {
            end,
            sent,
            to: to.map(|t| t.0),
            answered,
            block: to.filter(|t| t.2).map(|t| t.1),
            snr,
            setup,
            answer: reply,
        });
        self.stations[from].sensed += 1;
    }

    /// Exchanges ending at `t`: each frame sent leaves the queue (received, or after its last
    /// attempt or its lifetime) or waits for its next attempt; the contention window starts
    /// again after an answer (even a Block Ack missing frames) or an exchange failed for good,
    /// else grows; a new backoff either way.
    fn exchanges_end_at(&mut self, t: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        for x in 0..self.n {
            if self.stations[x]
                .exchange
                .as_ref()
                .is_none_or(|e| e.end != t)
            {
                continue;
            }
            let Some(exchange) = self.stations[x].exchange.take() else {
                continue;
            };
            let st = &mut self.stations[x];
            st.sensed = st.sensed.saturating_sub(1);
            if st.sensed == 0 {
                st.idle_since = t;
            }
            let head_since = st.head_since;
            // The answer is a frame too: the sender may lose it (interference, or its
            // preamble missed), and then knows nothing of what got through.
            let heard = match (exchange.to, exchange.answer) {
                (Some(r), Some((bytes, rate))) => self.hears_answer(x, r, t, bytes, rate, rng),
                _ => true,
            };
            let answered = exchange.answered && heard;
            if let (Some(r), true, Some(snr)) = (exchange.to, answered, exchange.snr) {
                // An ACK or Block Ack tells the sender the SNR its receiver measured.
                self.known[x * self.n + r] = Known::Measured(snr);
            }
            // A frame sent alone given up at its retry limit starts the contention window
            // again and leaves its sender without the receiver's SNR; frames under the Block
            // Ack agreement given up at the end of their lifetime do so only when none of the
            // exchange's frames is left to go again (ns-3's MissedBlockAck; its MAC queue
            // drops an expired frame without telling the rate manager).
            let mut at_limit = false;
            if let (true, Some(to)) = (exchange.setup, exchange.to) {
                // An ADDBA Request: acknowledged, the agreement is set up (the receiver's
                // ADDBA Response, which follows, is not modelled); else asked again, until the
                // retry limit, then given up on as a data frame is.
                let agreement = &mut self.agreements[x * self.n + to];
                *agreement = match (answered, *agreement) {
                    (true, _) => Agreement::Established,
                    (false, Agreement::Asking(failed)) if failed + 1 < RETRY_LIMIT => {
                        Agreement::Asking(failed + 1)
                    }
                    (false, _) => {
                        at_limit = true;
                        self.known[x * self.n + to] = Known::Forgotten;
                        Agreement::FailedUntil(t.saturating_add(ADDBA_FAILED_NS))
                    }
                };
            }
            for &(id, got) in &exchange.sent {
                let got = got && heard;
                let st = &mut self.stations[x];
                let Some(at) = st.queue.iter().position(|q| q.id == id) else {
                    continue;
                };
                let q = &mut st.queue[at];
                // A frame sent alone counts its attempts against the retry limit; one under
                // the Block Ack agreement goes again (after a Block Ack Request if nobody
                // answered). Either is given up once its lifetime has ended, answered or not
                // (ns-3 checks an unacknowledged MPDU's lifetime at every Block Ack too).
                let alive = t < q.arrival.saturating_add(LIFETIME_NS);
                let again = !got
                    && match exchange.block {
                        Some(_) => alive,
                        None => {
                            q.attempts += 1;
                            q.attempts < RETRY_LIMIT && alive
                        }
                    };
                if again {
                    continue;
                }
                let Some(q) = st.queue.remove(at) else {
                    continue;
                };
                st.head_since = t;
                if got {
                    let link = self.touch(x, q.frame.link_to(x));
                    link.frames += 1;
                    link.service_ns += t - q.arrival.max(head_since);
                    continue;
                }
                // At the retry limit (not at the end of its lifetime, which ns-3's queue
                // drops without telling the rate manager or the contention window).
                let reached = exchange.block.is_none() && q.attempts >= RETRY_LIMIT;
                at_limit |= reached;
                if q.frame.unicast && reached {
                    self.known[x * self.n + q.frame.link_to(x)] = Known::Forgotten;
                }
                self.give_up(x, q, t, head_since, out);
            }
            let st = &mut self.stations[x];
            // An A-MPDU (or Block Ack Request) nobody answered: a Block Ack Request goes
            // first at the next access, while a frame it carried waits. If none waits (all
            // were given up at the end of their lifetime), the exchange has failed for good,
            // as a frame sent alone at its retry limit; while other frames to the receiver
            // wait, the next access still sends a Block Ack Request (its receiver's window
            // moves past the frames given up), at the lowest rate, again until one is
            // answered, before they go (ns-3's MissedBlockAck).
            st.bar = None;
            if let (false, Some(to), Some(rate)) = (answered, exchange.to, exchange.block) {
                let ids: Vec<u64> = (exchange.sent.iter())
                    .map(|s| s.0)
                    .filter(|id| st.queue.iter().any(|q| q.id == *id))
                    .collect();
                if !ids.is_empty() {
                    self.stations[x].bar = Some((to, rate, ids));
                } else {
                    at_limit = true;
                    self.known[x * self.n + to] = Known::Forgotten;
                    if self.waits_for(x, to) {
                        self.stations[x].bar = Some((to, self.phy.rates()[0], ids));
                    }
                }
            }
            let st = &mut self.stations[x];
            st.stage = if answered || at_limit {
                0
            } else {
                st.stage + 1
            };
            self.new_backoff(x, rng);
        }
    }

    /// Whether the receiver of link `link` has its frame `seq` already: handed up, or held
    /// behind a gap.
    fn has(&self, link: usize, seq: u64) -> bool {
        seq < self.expect[link] || self.held.get(&(link, seq)).is_some_and(Option::is_some)
    }

    /// Whether `x` has a unicast frame to `r` queued.
    fn waits_for(&self, x: usize, r: usize) -> bool {
        (self.stations[x].queue.iter()).any(|q| q.frame.unicast && q.frame.receivers[0] == r)
    }

    /// Whether `x` receives the answer (`bytes` at `rate`) `r` sent it, ending at `t`: as a
    /// data frame, from its preamble's lock and its SINR; drawn only when it can fail.
    fn hears_answer(
        &self,
        x: usize,
        r: usize,
        t: u64,
        bytes: u32,
        rate: Rate,
        rng: &mut impl Rng,
    ) -> bool {
        let Some(i) = (self.air.iter()).position(|tx| {
            tx.from == r && tx.end == t && tx.data.is_none() && tx.request.is_none()
        }) else {
            return true;
        };
        let span = (self.air[i].start, t);
        match self.chance(i, span, bytes, rate, x) {
            Ok((1.0, _)) => true,
            Ok((p, _)) => rng.random::<f64>() < p,
            Err(_) => false,
        }
    }

    /// The receiver of link `link` has frame `seq` (`Some(tag)`) at `t`, or its sender gave
    /// it up (None): hands up, in the link's order, every frame it holds from the next one
    /// expected until a gap.
    fn hand_up(
        &mut self,
        link: usize,
        seq: u64,
        tag: Option<T>,
        t: u64,
        out: &mut Vec<Outcome<T>>,
    ) {
        if seq < self.expect[link] {
            // Behind the window already (not expected: nothing is sent twice once received).
            if let Some(tag) = tag {
                let receiver = link % self.n;
                out.push(Outcome {
                    tag,
                    receiver,
                    result: Ok(t),
                });
            }
            return;
        }
        self.held.insert((link, seq), tag);
        while let Some(tag) = self.held.remove(&(link, self.expect[link])) {
            self.expect[link] += 1;
            if let Some(tag) = tag {
                out.push(Outcome {
                    tag,
                    receiver: link % self.n,
                    result: Ok(t),
                });
            }
        }
    }

    /// The frames that go in `x`'s next PPDU, starting at `start`: its head frame, and for
    /// 802.11n the frames queued behind it to the same receiver, in order, while the A-MPDU
    /// keeps within its limits ([`Phy::ampdu_fits`], the Block Ack window).
    fn ppdu(&self, x: usize, start: u64) -> (Ppdu<T>, u64) {
        let queue = &self.stations[x].queue;
        let head = &queue[0];
        let mut rate = head.frame.rate;
        if head.frame.unicast && head.frame.ideal {
            match self.known[x * self.n + head.frame.link_to(x)] {
                Known::Link => {}
                Known::Measured(snr) => rate = self.phy.ideal_rate(snr),
                Known::Forgotten => rate = self.phy.rates()[0],
            }
        }
        let sub = |q: &Queued<T>, bytes| Sub {
            frame: Frame {
                rate,
                ..q.frame.clone()
            },
            id: q.id,
            seq: q.seq,
            bytes,
            end: 0,
        };
        let mut subs = vec![sub(head, head.frame.bytes)];
        let to = head.frame.receivers[0];
        if head.frame.unicast && self.agreements[x * self.n + to] == Agreement::Established {
            let oldest = queue
                .iter()
                .find(|q| q.frame.unicast && q.frame.receivers[0] == to)
                .map_or(head.seq, |q| q.seq);
            // The PSDU's bytes so far, as `Phy::ampdu_bytes` adds them.
            let mut psdu = self.phy.ampdu_bytes([head.frame.bytes]);
            for q in queue.iter().skip(1) {
                if subs.len() == MAX_AMPDU_MPDUS {
                    break;
                }
                let fits = q.frame.unicast
                    && q.frame.receivers[0] == to
                    && q.arrival <= start
                    && q.seq < oldest + MAX_AMPDU_MPDUS as u64;
                if !fits {
                    continue;
                }
                let with = psdu
                    .next_multiple_of(4)
                    .saturating_add(DELIMITER_BYTES + q.frame.bytes);
                if !self.phy.ampdu_fits(with, rate) {
                    break;
                }
                psdu = with;
                subs.push(sub(q, 0));
            }
        }
        let bytes = if subs.len() > 1 {
            // Bytes of the PSDU through each subframe, as `Phy::ampdu_bytes` adds them.
            let mut through = 0u32;
            for s in &mut subs {
                s.bytes = s.frame.bytes.saturating_add(DELIMITER_BYTES);
                through = through.next_multiple_of(4).saturating_add(s.bytes);
                s.end = start + self.phy.through_ns(through, rate);
            }
            through
        } else {
            head.frame.bytes
        };
        let end = start + self.phy.ppdu_ns(bytes, rate);
        if let Some(last) = subs.last_mut() {
            last.end = end;
        }
        let fates = Vec::with_capacity(subs.len());
        (Ppdu { subs, fates }, end)
    }

    /// Transmissions starting at `t`: answers due then, and the PPDUs of every station whose
    /// backoff ends before another's start can reach it ([`CCA_NS`]); each station that
    /// senses one freezes.
    fn starts_at(&mut self, t: u64, out: &mut Vec<Outcome<T>>) {
        let first = self.air.len();
        for x in 0..self.n {
            if let Some(e) = self.expiry(x).filter(|&e| e < t + CCA_NS) {
                // What waited past its lifetime leaves the queue first (given up if it was
                // sent before); the access goes to what is left if its head had arrived then.
                if self.expire(x, e, out) && self.expiry(x) != Some(e) {
                    continue;
                }
                // A Block Ack Request first (one after frames given up only while others to
                // its receiver wait), or an ADDBA Request before the link's first A-MPDU,
                // instead of data.
                if let Some((to, _, ids)) = &self.stations[x].bar {
                    if ids.is_empty() && !self.waits_for(x, *to) {
                        self.stations[x].bar = None;
                        if self.expiry(x) != Some(e) {
                            continue;
                        }
                    }
                }
                let lowest = self.phy.rates()[0];
                let request = match &self.stations[x].bar {
                    Some((to, rate, _)) => Some((RequestKind::BlockAckRequest, *to, *rate)),
                    None => (self.asks(x, e)).map(|to| (RequestKind::AddBa, to, lowest)),
                };
                if let Some((kind, to, rate)) = request {
                    let bytes = match kind {
                        RequestKind::BlockAckRequest => BLOCK_ACK_REQUEST_BYTES,
                        RequestKind::AddBa => ADDBA_REQUEST_BYTES,
                    };
                    let end = e + self.phy.control_ns(bytes, rate);
                    let got = None;
                    self.air.push(Tx {
                        request: Some(Request { kind, to, got }),
                        ..Tx::new(x, e, end)
                    });
                    continue;
                }
                let (ppdu, end) = self.ppdu(x, e);
                // The subframes are in queue order: one walk of the queue marks them aired.
                let mut queue = self.stations[x].queue.iter_mut();
                let again: Vec<bool> = (ppdu.subs.iter())
                    .map(|sub| {
                        (queue.by_ref())
                            .find(|q| q.id == sub.id)
                            .is_some_and(|q| std::mem::replace(&mut q.aired, true))
                    })
                    .collect();
                for (sub, again) in ppdu.subs.iter().zip(again) {
                    let link = self.link_of(x, &sub.frame);
                    link.attempts += 1;
                    link.retries += u64::from(again);
                }
                self.link_of(x, &ppdu.subs[0].frame).airtime_ns += end - e;
                self.air.push(Tx {
                    data: Some(ppdu),
                    ..Tx::new(x, e, end)
                });
            }
        }
        for i in 0..self.air.len() {
            let tx = &self.air[i];
            if tx.started || (tx.start != t && i < first) {
                continue;
            }
            let (from, start, end) = (tx.from, tx.start, tx.end);
            self.air[i].started = true;
            self.busy_ns += end.saturating_sub(start.max(self.busy_until));
            self.busy_until = self.busy_until.max(end);
            for x in 0..self.n {
                if self.senses(from, x) {
                    self.freeze(x, start);
                }
            }
            self.lock(i);
        }
    }

    /// The receiver `x`'s access at `t` asks a Block Ack agreement of, with an ADDBA Request
    /// instead of its head frame: on 802.11n, the head frame's receiver when their link has no
    /// agreement (and no request failed within [`ADDBA_FAILED_NS`]).
    fn asks(&mut self, x: usize, t: u64) -> Option<usize> {
        let head = self.stations[x].queue.front()?;
        if !self.phy.aggregates() || !head.frame.unicast {
            return None;
        }
        let to = head.frame.receivers[0];
        let agreement = &mut self.agreements[x * self.n + to];
        match *agreement {
            Agreement::Asking(_) => Some(to),
            Agreement::Established => None,
            Agreement::FailedUntil(until) if t < until => None,
            Agreement::FailedUntil(_) => {
                *agreement = Agreement::Asking(0);
                Some(to)
            }
        }
    }

    /// Drops from `x`'s queue at its access at `t` every frame that has waited
    /// [`LIFETIME_NS`], as ns-3's MAC queue drops an expired MPDU when it looks for the next
    /// one to send: one never sent leaves as `queue full` (as the adapter counts it), one sent
    /// before is given up as after its last attempt (delivered if its receiver has it); true
    /// if any.
    fn expire(&mut self, x: usize, t: u64, out: &mut Vec<Outcome<T>>) -> bool {
        let expired = |q: &Queued<T>| q.arrival.saturating_add(LIFETIME_NS) <= t;
        if !self.stations[x].queue.iter().any(expired) {
            return false;
        }
        let st = &mut self.stations[x];
        let head_since = st.head_since;
        if st.queue.front().is_some_and(expired) {
            st.head_since = t;
        }
        let (gone, kept): (VecDeque<_>, VecDeque<_>) =
            std::mem::take(&mut st.queue).into_iter().partition(expired);
        st.queue = kept;
        for q in gone {
            if q.aired {
                self.give_up(x, q, t, head_since, out);
                continue;
            }
            if q.frame.unicast {
                self.hand_up(x * self.n + q.frame.receivers[0], q.seq, None, t, out);
            }
            for &r in &q.frame.receivers {
                out.push(Outcome {
                    tag: q.frame.tag.clone(),
                    receiver: r,
                    result: Err(DropReason::QueueFull),
                });
            }
        }
        true
    }

    /// `x` gives up its frame `q` at `t` after an attempt (its service counted from
    /// `head_since`, when the frame before it left the queue): lost, unless its receiver has
    /// it (the answers lost), then delivered.
    fn give_up(
        &mut self,
        x: usize,
        q: Queued<T>,
        t: u64,
        head_since: u64,
        out: &mut Vec<Outcome<T>>,
    ) {
        let r = q.frame.link_to(x);
        let link = self.touch(x, r);
        link.frames += 1;
        link.service_ns += t - q.arrival.max(head_since);
        if q.frame.unicast && self.has(x * self.n + r, q.seq) {
            return;
        }
        self.touch(x, r).retry_limit += 1;
        if q.frame.unicast {
            self.hand_up(x * self.n + r, q.seq, None, t, out);
        }
        for &r in &q.frame.receivers {
            out.push(Outcome {
                tag: q.frame.tag.clone(),
                receiver: r,
                result: Err(DropReason::RetryLimit),
            });
        }
    }

    /// The stations that lock onto `air[i]` as its preamble starts (see the module docs): the
    /// others that detect it are recorded as missing it, with the reason.
    fn lock(&mut self, i: usize) {
        let (from, start, end) = (self.air[i].from, self.air[i].start, self.air[i].end);
        let n = self.n;
        let mut missed = Vec::new();
        for x in (0..n).filter(|&x| x != from) {
            let Some(level) = self.levels[from * n + x].filter(|&l| self.phy.detects(l)) else {
                continue;
            };
            // What x hears while the preamble is being detected, and whether x sends then.
            let mut interference = 0.0;
            let mut sending = false;
            for (j, tx) in self.air.iter().enumerate() {
                if j == i || tx.end <= start || tx.start >= start + CCA_NS {
                    continue;
                }
                sending |= tx.from == x;
                interference += self.levels[tx.from * n + x].map_or(0.0, mw);
            }
            let sinr = level - 10.0 * (self.noise_mw[from * n + x] + interference).log10();
            if sending {
                missed.push((x, DropReason::HalfDuplex));
            } else if self.stations[x].rx_until > start || sinr < PREAMBLE_SNR_DB {
                missed.push((x, DropReason::Collision));
            } else {
                self.stations[x].rx_until = end;
            }
        }
        self.air[i].missed = missed;
    }

    /// Decides every receiver of each frame of the data PPDU `air[i]` whose last symbol has
    /// ended by `t`, from what overlaps it at each.
    fn decide(&mut self, i: usize, t: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        let from = self.air[i].from;
        loop {
            let Some(d) = &self.air[i].data else {
                return;
            };
            let k = d.fates.len();
            let Some(sub) = d.subs.get(k).filter(|s| s.end <= t) else {
                return;
            };
            let sub = sub.clone();
            let since = match k {
                0 => self.air[i].start,
                _ => d.subs[k - 1].end,
            };
            let frame = &sub.frame;
            let mut fates = Fates::with_capacity(frame.receivers.len());
            for &r in &frame.receivers {
                let fate = self.receive(i, (since, sub.end), sub.bytes, frame.rate, r, rng);
                // Lost to another transmission: one reaching the receiver, or the receiver's
                // own (two stations whose backoffs ended in the same slot, sending to each
                // other).
                if matches!(fate, Err(DropReason::Collision | DropReason::HalfDuplex)) {
                    self.link_of(from, frame).collided += 1;
                }
                match fate {
                    Ok(()) if frame.unicast => {
                        // A frame sent again because its sender lost the answer is a
                        // duplicate its receiver discards.
                        let link = from * self.n + r;
                        if !self.has(link, sub.seq) {
                            self.hand_up(link, sub.seq, Some(frame.tag.clone()), sub.end, out);
                        }
                    }
                    Ok(()) => out.push(Outcome {
                        tag: frame.tag.clone(),
                        receiver: r,
                        result: Ok(sub.end),
                    }),
                    Err(reason) if !frame.unicast => out.push(Outcome {
                        tag: frame.tag.clone(),
                        receiver: r,
                        result: Err(reason),
                    }),
                    Err(_) => {}
                }
                fates.push(fate);
            }
            if let Some(d) = self.air[i].data.as_mut() {
                d.fates.push(fates);
            }
        }
    }

    /// Whether `r` receives the `bytes` of `air[i]` sent at `rate` over `span` (the whole
    /// PPDU, or one subframe of an A-MPDU; see the module docs).
    fn receive(
        &self,
        i: usize,
        span: (u64, u64),
        bytes: u32,
        rate: Rate,
        r: usize,
        rng: &mut impl Rng,
    ) -> Result<(), DropReason> {
        let (survive, interfered) = self.chance(i, span, bytes, rate, r)?;
        if rng.random::<f64>() < survive {
            Ok(())
        } else if interfered {
            Err(DropReason::Collision)
        } else {
            Err(DropReason::PacketError)
        }
    }

    /// The chance that `r` receives the `bytes` of `air[i]` sent at `rate` over `span`, and
    /// whether another transmission overlapped them; or why it cannot.
    fn chance(
        &self,
        i: usize,
        (start, end): (u64, u64),
        bytes: u32,
        rate: Rate,
        r: usize,
    ) -> Result<(f64, bool), DropReason> {
        let from = self.air[i].from;
        let bits = 8.0 * f64::from(bytes);
        let n = self.n;
        // Below the detection threshold the receiver never finds the preamble; what it does
        // not detect still adds to what it hears (the interference below).
        let Some(level) = self.levels[from * n + r].filter(|&l| self.phy.detects(l)) else {
            return Err(DropReason::OutOfRange);
        };
        // Pieces of the span: each other transmission r receives adds its power over its
        // overlap.
        let mut edges: Vec<(u64, f64)> = Vec::new();
        for (j, tx) in self.air.iter().enumerate() {
            if j == i || !tx.started || tx.end <= start || tx.start >= end {
                continue;
            }
            if tx.from == r {
                return Err(DropReason::HalfDuplex);
            }
            if let Some(l) = self.levels[tx.from * n + r] {
                edges.push((tx.start.max(start), mw(l)));
                edges.push((tx.end.min(end), -mw(l)));
            }
        }
        if let Some(&(_, reason)) = self.air[i].missed.iter().find(|m| m.0 == r) {
            return Err(reason);
        }
        let noise = self.noise_mw[from * n + r];
        let per_bit = |interference: f64| {
            let sinr = level - 10.0 * (noise + interference.max(0.0)).log10();
            let (bps, bits, events) = self.last_event_rate.get();
            if (bps, bits) == (rate.bps, sinr.to_bits()) {
                return events;
            }
            let events = rate.event_rate(sinr);
            self.last_event_rate.set((rate.bps, sinr.to_bits(), events));
            events
        };
        let duration = (end - start).max(1) as f64;
        let mut survive_log = 0.0;
        let interfered = !edges.is_empty();
        edges.sort_by_key(|e| e.0);
        let (mut at, mut interference) = (start, 0.0);
        for (t, delta) in edges.into_iter().chain([(end, 0.0)]) {
            let piece = bits * (t - at) as f64 / duration;
            survive_log += piece * (-per_bit(interference)).ln_1p();
            at = t;
            interference += delta;
        }
        Ok((survive_log.exp(), interfered))
    }
}

/// Bianchi's saturation throughput of the DCF (MPDU bit/s; G. Bianchi, "Performance analysis
/// of the IEEE 802.11 distributed coordination function", IEEE JSAC 18(3), 2000) for `n`
/// stations in range of each other, each always with an `mpdu_bytes` frame at `rate` to send:
/// with the retry limit (backoff stages 0–6 of CW 15 … 1023, then the frame dropped), a
/// success taking frame + SIFS + ACK + DIFS and a collision as long (the colliders wait for
/// the ACK they do not get), as this medium does.
pub fn bianchi_saturation_bps(phy: &Phy, n: usize, mpdu_bytes: u32, rate: Rate) -> f64 {
    let tau_of = |p: f64| {
        let (mut attempts, mut slots) = (0.0, 0.0);
        for j in 0..RETRY_LIMIT {
            let pj = p.powi(j as i32);
            attempts += pj;
            slots += pj * f64::from(phy.cw(j)) / 2.0;
        }
        attempts / (attempts + slots)
    };
    let others = n.saturating_sub(1) as i32;
    // The fixed point p = 1 − (1 − τ(p))^(n−1), damped.
    let mut p: f64 = 0.1;
    for _ in 0..200 {
        p = 0.5 * p + 0.5 * (1.0 - (1.0 - tau_of(p)).powi(others));
    }
    let tau = tau_of(p);
    let n_f = n as f64;
    let busy = 1.0 - (1.0 - tau).powi(n as i32);
    let success = n_f * tau * (1.0 - tau).powi(others) / busy;
    let exchange =
        (phy.ppdu_ns(mpdu_bytes, rate) + phy.sifs_ns + phy.ack_ns(rate) + phy.aifs_ns()) as f64;
    let slot = phy.slot_ns as f64;
    let bits = 8.0 * f64::from(mpdu_bytes);
    success * busy * bits * 1e9 / ((1.0 - busy) * slot + busy * exchange)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WifiStandard;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// 802.11a at 54 Mbit/s: a 1500-byte IP packet is a 1536-byte MPDU of 248 µs, its ACK
    /// (24 Mbit/s) 28 µs.
    fn phy() -> Phy {
        Phy::of(WifiStandard::A)
    }

    fn frame(tag: u64, to: usize, unicast: bool) -> Frame<u64> {
        Frame {
            tag,
            receivers: smallvec::smallvec![to],
            bytes: 1536,
            rate: *phy().rates().last().unwrap(),
            unicast,
            ideal: false,
        }
    }

    /// Two stations of `phy`: 1 hears 0 at `there` (dBm), 0 hears 1 at `back`, over a noise
    /// floor of −94 dBm.
    fn pair(phy: Phy, there: Option<f64>, back: Option<f64>) -> WifiMedium<u64> {
        let mut m = WifiMedium::new(phy, 2);
        m.set_level(0, 1, there, -94.0);
        m.set_level(1, 0, back, -94.0);
        m
    }

    /// `n` stations; `senders` keep their queue at `backlog` frames to station 0 for `secs`
    /// of simulated time, advanced in windows of 1 ms; every level `level` (None: not heard)
    /// from `levels(s, r)`. Returns every outcome and the medium.
    fn saturate(
        n: usize,
        senders: &[usize],
        levels: impl Fn(usize, usize) -> Option<f64>,
        secs: f64,
        seed: u64,
    ) -> (Vec<Outcome<u64>>, WifiMedium<u64>) {
        let mut m = WifiMedium::new(phy(), n);
        for s in 0..n {
            for r in 0..n {
                if s != r {
                    m.set_level(s, r, levels(s, r), -94.0);
                }
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        let mut tag = 0;
        let windows = (secs * 1e3) as u64;
        for k in 1..=windows {
            for &s in senders {
                while m.queued(s) < 4 {
                    tag += 1;
                    m.enqueue(s, frame(tag << 8 | s as u64, 0, true), (k - 1) * 1_000_000);
                }
            }
            m.advance(k * 1_000_000, &mut rng, &mut out);
        }
        (out, m)
    }

    /// 2, 4, 8 and 16 saturated stations in range of each other, all sending to one receiver:
    /// the aggregate within 10 % of Bianchi's model and the shares fair (Jain's index above
    /// 0.98; each run 10 s of simulated time).
    #[test]
    fn saturated_stations_share_the_air_as_bianchis_model_says() {
        let phy = phy();
        let rate = *phy.rates().last().unwrap();
        for n in [2usize, 4, 8, 16] {
            let senders: Vec<usize> = (1..=n).collect();
            let secs = 10.0;
            let (out, m) = saturate(n + 1, &senders, |_, _| Some(-50.0), secs, n as u64);
            let mut per = vec![0u64; n + 1];
            for o in &out {
                if o.result.is_ok() {
                    per[(o.tag & 0xff) as usize] += 1;
                }
            }
            let bits = 8.0 * 1536.0;
            let total: u64 = per.iter().sum();
            let measured = total as f64 * bits / secs;
            let model = bianchi_saturation_bps(&phy, n, 1536, rate);
            let st = m.stats();
            println!(
                "{n} stations: {:.2} Mbit/s, Bianchi {:.2}; {} attempts, {} retries, {} collided",
                measured / 1e6,
                model / 1e6,
                st.attempts,
                st.retries,
                st.collided
            );
            assert!(
                (measured / model - 1.0).abs() < 0.10,
                "{n} stations: {measured} against Bianchi's {model}"
            );
            // Jain's index: over 10 s the binary exponential backoff's short-term unfairness
            // leaves each station within about ±15 % of the mean at 16 stations.
            let shares: Vec<f64> = senders.iter().map(|&s| per[s] as f64).collect();
            let jain = shares.iter().sum::<f64>().powi(2)
                / (n as f64 * shares.iter().map(|x| x * x).sum::<f64>());
            println!("  per station: {:?}, Jain's index {jain:.4}", &per[1..]);
            assert!(jain > 0.98, "{n} stations: {:?}", &per[1..]);
            assert!(n == 1 || st.collided > 0);
        }
    }

    /// One 802.11n (5 GHz) sender keeping 64 frames of 1500-byte IP packets queued to one
    /// receiver at MCS 7 for `secs`, its signal at `level_dbm` (then, with `drain`, until it
    /// has sent them all): the outcomes, in order, and the medium.
    fn saturated_ht_pair(
        level_dbm: f64,
        secs: f64,
        drain: bool,
    ) -> (Vec<Outcome<u64>>, WifiMedium<u64>) {
        let phy = Phy::of(WifiStandard::N5);
        let mut m = pair(phy, Some(level_dbm), Some(level_dbm));
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut out, mut tag) = (Vec::new(), 0);
        for k in 1..=(secs * 1e3) as u64 {
            while m.queued(0) < 64 {
                let f = Frame {
                    bytes: phy.mpdu_bytes(1500),
                    rate: *phy.rates().last().unwrap(),
                    ..frame(tag, 1, true)
                };
                m.enqueue(0, f, (k - 1) * 1_000_000);
                tag += 1;
            }
            m.advance(k * 1_000_000, &mut rng, &mut out);
        }
        if drain {
            m.advance(u64::MAX, &mut rng, &mut out);
        }
        (out, m)
    }

    /// Stations 1 and 2, hidden from each other, each send `frames` 1500-byte packets to
    /// station 0 in one 802.11n PPDU at MCS 7 that starts at `start_ns`, arriving at 0 at
    /// `level` dBm; returns, per sender, how many of its packets station 0 lost to the other
    /// transmission when station 2's PPDU (the later and longer one) and its Block Ack end.
    fn two_hidden_ampdus(frames: [usize; 2], start_ns: [u64; 2], level: [f64; 2]) -> [u64; 2] {
        let phy = Phy::of(WifiStandard::N5);
        let rate = *phy.rates().last().unwrap();
        let mut m = WifiMedium::new(phy, 3);
        m.agreements.fill(Agreement::Established);
        for (s, l) in [(1, level[0]), (2, level[1])] {
            m.set_level(s, 0, Some(l), -94.0);
            m.set_level(0, s, Some(l), -94.0);
        }
        for s in [1, 2] {
            for k in 0..frames[s - 1] {
                let f = Frame {
                    bytes: phy.mpdu_bytes(1500),
                    rate,
                    ..frame((s as u64) << 8 | k as u64, 0, true)
                };
                m.enqueue(s, f, start_ns[s - 1]);
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let bytes = phy.ampdu_bytes(vec![phy.mpdu_bytes(1500); frames[1]]);
        let end = start_ns[1] + phy.ppdu_ns(bytes, rate) + phy.sifs_ns + phy.block_ack_ns(rate);
        m.advance(end + 1, &mut rng, &mut Vec::new());
        [m.link(1, 0).collided, m.link(2, 0).collided]
    }

    /// A receiver locks onto a preamble only when it is free and the preamble is 4 dB above
    /// what else is on the air: a short PPDU and a long A-MPDU starting in the same slot at
    /// equal levels are both lost, the A-MPDU's tail too, though nothing overlaps it after the
    /// short one ends; 10 dB stronger, the A-MPDU is locked onto and only the subframes the
    /// short one (and its retries) overlapped are lost. An A-MPDU that starts while the receiver receives another
    /// PPDU is lost whole; starting after that PPDU ends, none of it is.
    #[test]
    fn a_receiver_locks_onto_one_preamble_and_misses_what_starts_while_it_receives() {
        let same_slot = two_hidden_ampdus([1, 20], [1_000_000; 2], [-50.0, -50.0]);
        let stronger = two_hidden_ampdus([1, 20], [1_000_000; 2], [-60.0, -50.0]);
        // Station 1's PPDU (one packet at MCS 7) lasts 36 µs of preamble and 188 µs of data.
        let during = two_hidden_ampdus([1, 20], [1_000_000, 1_100_000], [-50.0, -50.0]);
        let after = two_hidden_ampdus([1, 20], [1_000_000, 1_300_000], [-50.0, -50.0]);
        println!(
            "packets lost to the other: same slot {same_slot:?}, the A-MPDU 10 dB stronger \
             {stronger:?}, the A-MPDU starting during the first PPDU {during:?}, after it \
             {after:?}"
        );
        // Station 1's frame, lost, goes again while the A-MPDU is on the air (hidden from it)
        // and costs it a subframe each time when the receiver locked onto the A-MPDU.
        assert_eq!(same_slot[1], 20, "neither preamble is 4 dB above the other");
        assert!(same_slot[0] >= 1);
        assert!((1..20).contains(&stronger[1]), "the A-MPDU locked onto");
        assert_eq!(during[1], 20, "started while the receiver was locked");
        assert_eq!(after, [0, 0]);
    }

    /// 802.11n aggregates what waits for one receiver: at MCS 7 each access carries 28
    /// MPDUs (the 5,484 µs bound) answered by one Block Ack, so a clean link carries the
    /// 28 packets per AIFS + mean backoff + PPDU + SIFS + Block Ack (60.89 Mbit/s of IP,
    /// within 2 %), where one MPDU per access would carry 31.4.
    #[test]
    fn an_ht_sender_aggregates_what_waits_for_one_receiver() {
        let phy = Phy::of(WifiStandard::N5);
        let secs = 10.0;
        let (out, m) = saturated_ht_pair(-40.0, secs, false);
        let mcs7 = *phy.rates().last().unwrap();
        let ppdu = phy.ppdu_ns(phy.ampdu_bytes([phy.mpdu_bytes(1500); 28]), mcs7);
        let l = m.link(0, 1);
        assert_eq!(l.retries, 0, "{l:?}");
        assert_eq!(l.airtime_ns % ppdu, 0, "every PPDU carries 28 MPDUs: {l:?}");
        assert_eq!(l.attempts, 28 * (l.airtime_ns / ppdu), "{l:?}");
        let exchange = phy.aifs_ns() as f64
            + 7.5 * phy.slot_ns as f64
            + (ppdu + phy.sifs_ns + phy.block_ack_ns(mcs7)) as f64;
        let model = 28.0 * 1500.0 * 8.0 / exchange * 1e3;
        let single = 1500.0 * 8.0 * 1e3
            / (phy.aifs_ns() as f64
                + 7.5 * phy.slot_ns as f64
                + (phy.ppdu_ns(phy.mpdu_bytes(1500), mcs7) + phy.sifs_ns + phy.ack_ns(mcs7))
                    as f64);
        let delivered = out.iter().filter(|o| o.result.is_ok()).count();
        let measured = delivered as f64 * 1500.0 * 8.0 / secs / 1e6;
        println!("{measured:.2} Mbit/s, model {model:.2}, one MPDU per access {single:.2}");
        assert!(
            (measured / model - 1.0).abs() < 0.02,
            "{measured} against {model}"
        );
        assert!(measured > 1.8 * single);
    }

    /// On a link where subframes fail (1 dB under MCS 7's threshold: one in five), the
    /// Block Ack names what got through: the rest goes again in the next A-MPDU, nothing is
    /// given up, and the receiver hands every packet up once and in order, holding those
    /// received after a gap until it closes.
    #[test]
    fn subframes_lost_go_again_and_the_receiver_hands_up_in_order() {
        let phy = Phy::of(WifiStandard::N5);
        let level = -94.0 + phy.thresholds_db()[7] - 1.0;
        let (out, m) = saturated_ht_pair(level, 2.0, true);
        let l = m.link(0, 1);
        println!("{l:?}");
        assert!(
            l.retries * 50 > l.attempts,
            "a few in a hundred fail: {l:?}"
        );
        assert_eq!(l.retry_limit, 0, "{l:?}");
        assert_eq!(l.frames, out.len() as u64);
        let tags: Vec<u64> = out.iter().map(|o| o.tag).collect();
        let disorder = tags.windows(2).find(|w| w[0] + 1 != w[1]);
        assert_eq!(disorder, None, "handed up out of order");
        assert!(out.iter().all(|o| o.result.is_ok()));
        // Some were held: handed up after their subframe's end, at the retry's.
        let times: Vec<u64> = out.iter().map(|o| o.result.unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!(
            times.windows(2).any(|w| w[0] == w[1]),
            "a gap closed hands up several at once"
        );
    }

    /// An A-MPDU nobody answers (its receiver out of range, the agreement set up before):
    /// the sender asks with Block Ack Requests, not the data again, and gives its frames up
    /// when they are 500 ms old, not after 7 attempts.
    #[test]
    fn an_unanswered_ampdu_is_followed_by_requests_until_its_frames_lifetime_ends() {
        let phy = Phy::of(WifiStandard::N5);
        let mut m = WifiMedium::new(phy, 2);
        m.agreements.fill(Agreement::Established);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for tag in 0..10 {
            let f = Frame {
                bytes: phy.mpdu_bytes(1500),
                rate: *phy.rates().last().unwrap(),
                ..frame(tag, 1, true)
            };
            m.enqueue(0, f, 0);
        }
        let mut out = Vec::new();
        m.advance(LIFETIME_NS - 1_000_000, &mut rng, &mut out);
        assert!(out.is_empty(), "{out:?}");
        let busy = m.stats().busy_ns;
        let ampdu = phy.ppdu_ns(phy.ampdu_bytes([phy.mpdu_bytes(1500); 10]), phy.rates()[7]);
        assert!(busy > ampdu + 5 * phy.control_ns(BLOCK_ACK_REQUEST_BYTES, phy.rates()[7]));
        m.advance(LIFETIME_NS + 100_000_000, &mut rng, &mut out);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|o| o.result == Err(DropReason::RetryLimit)));
        let l = m.link(0, 1);
        assert_eq!((l.attempts, l.retries, l.retry_limit), (10, 0, 10), "{l:?}");
        assert_eq!(l.airtime_ns, ampdu, "the data went on the air once");
        // Given up at the end of their lifetime with none left to go again: the exchange
        // failed for good, so the sender forgets the receiver's SNR and starts its window
        // again, as ns-3 does.
        assert_eq!(m.known[1], Known::Forgotten);
        assert_eq!(m.stations[0].stage, 0);
    }

    /// ns-3's IdealWifiManager: after a frame given up on, the sender knows no SNR and sends
    /// at the lowest rate until an ACK tells it one; a constant rate stays.
    #[test]
    fn after_a_frame_given_up_on_the_ideal_rate_waits_for_an_ack() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut m = WifiMedium::new(phy(), 2);
        let ideal = |tag| Frame {
            ideal: true,
            ..frame(tag, 1, true)
        };
        let mut out = Vec::new();
        // Out of range: every attempt fails, the frame is dropped at the retry limit.
        m.enqueue(0, ideal(0), 0);
        m.advance(100_000_000, &mut rng, &mut out);
        assert_eq!(out[0].result, Err(DropReason::RetryLimit));
        // In range again: the next frame goes at 6 Mbit/s, the one after its ACK at 54.
        m.set_level(0, 1, Some(-40.0), -94.0);
        m.set_level(1, 0, Some(-40.0), -94.0);
        let before = m.link(0, 1).airtime_ns;
        m.enqueue(0, ideal(1), 100_000_000);
        m.advance(200_000_000, &mut rng, &mut out);
        let slow = m.link(0, 1).airtime_ns - before;
        let before = m.link(0, 1).airtime_ns;
        m.enqueue(0, ideal(2), 200_000_000);
        m.advance(300_000_000, &mut rng, &mut out);
        let fast = m.link(0, 1).airtime_ns - before;
        let rates = phy().rates();
        assert_eq!(slow, phy().ppdu_ns(1536, rates[0]));
        assert_eq!(fast, phy().ppdu_ns(1536, *rates.last().unwrap()));
        assert!(out[1..].iter().all(|o| o.result.is_ok()), "{out:?}");
        // A constant rate is kept whatever happened.
        let mut m = WifiMedium::new(phy(), 2);
        m.enqueue(0, frame(0, 1, true), 0);
        m.advance(100_000_000, &mut rng, &mut out);
        m.set_level(0, 1, Some(-40.0), -94.0);
        m.set_level(1, 0, Some(-40.0), -94.0);
        let before = m.link(0, 1).airtime_ns;
        m.enqueue(0, frame(1, 1, true), 100_000_000);
        m.advance(200_000_000, &mut rng, &mut out);
        assert_eq!(
            m.link(0, 1).airtime_ns - before,
            phy().ppdu_ns(1536, *rates.last().unwrap())
        );
    }

    /// A frame whose level at the receiver is under −82 dBm is never received, however clean
    /// the SNR (here 11 dB over the noise floor, where 6 Mbit/s would decode): every attempt
    /// fails and the frame is dropped at the retry limit.
    #[test]
    fn a_frame_under_the_detection_threshold_is_never_received() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut m = pair(phy(), Some(-83.0), Some(-83.0));
        let slow = Frame {
            rate: phy().rates()[0],
            ..frame(0, 1, true)
        };
        let mut out = Vec::new();
        m.enqueue(0, slow, 0);
        m.advance(100_000_000, &mut rng, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].result, Err(DropReason::RetryLimit));
        let l = m.link(0, 1);
        assert_eq!(
            (l.frames, l.attempts, l.retry_limit),
            (1, RETRY_LIMIT as u64, 1)
        );
    }

    /// A sender that cannot hear its receiver's answers (the link heard one way only): a
    /// frame sent alone is received at its first attempt and handed up once, its sender
    /// tries it again to the retry limit, the receiver discarding each copy, and gives it up
    /// without a loss; under 802.11n's Block Ack the A-MPDU's frames arrive once each, the
    /// Block Ack Requests that follow go unanswered too, and the frames' lifetime ends
    /// without a loss either.
    #[test]
    fn a_sender_that_does_not_hear_the_answers_costs_retries_but_loses_nothing() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut m = pair(phy(), Some(-50.0), Some(-90.0));
        let mut out = Vec::new();
        m.enqueue(0, frame(0, 1, true), 0);
        m.advance(100_000_000, &mut rng, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].result.is_ok());
        let l = m.link(0, 1);
        assert_eq!(
            (l.frames, l.attempts, l.retries, l.retry_limit),
            (1, RETRY_LIMIT as u64, RETRY_LIMIT as u64 - 1, 0)
        );
        let n = Phy::of(WifiStandard::N5);
        let mut m = pair(n, Some(-50.0), Some(-90.0));
        m.agreements.fill(Agreement::Established);
        let mut out = Vec::new();
        for tag in 0..10 {
            let f = Frame {
                rate: n.rates()[7],
                ..frame(tag, 1, true)
            };
            m.enqueue(0, f, 0);
        }
        m.advance(LIFETIME_NS + 100_000_000, &mut rng, &mut out);
        let tags: Vec<u64> = out.iter().map(|o| o.tag).collect();
        assert_eq!(tags, (0..10).collect::<Vec<_>>());
        assert!(out.iter().all(|o| o.result.is_ok()), "{out:?}");
        let l = m.link(0, 1);
        assert_eq!((l.frames, l.attempts, l.retry_limit), (10, 10, 0), "{l:?}");
        assert!(m.stations[0].queue.is_empty());
    }

    /// 802.11n sets a link's Block Ack agreement up before its first A-MPDU: an ADDBA Request
    /// at the lowest rate, acknowledged, then the frames waiting go in one A-MPDU. A request
    /// whose ACK never comes back is given up at the retry limit as a data frame is; the
    /// frames then go alone, each with its ACK, and 200 ms later the sender asks again.
    #[test]
    fn an_ht_link_asks_for_its_block_ack_agreement_before_its_first_ampdu() {
        let n = Phy::of(WifiStandard::N5);
        let mcs7 = n.rates()[7];
        let frame = |tag| Frame {
            bytes: n.mpdu_bytes(1500),
            rate: mcs7,
            ..frame(tag, 1, true)
        };
        let request = n.control_ns(ADDBA_REQUEST_BYTES, n.rates()[0]) + n.ack_ns(n.rates()[0]);
        let ampdu = |k| n.ppdu_ns(n.ampdu_bytes(vec![n.mpdu_bytes(1500); k]), mcs7);
        let single = n.ppdu_ns(n.mpdu_bytes(1500), mcs7);
        let mut rng = ChaCha8Rng::seed_from_u64(7);

        let mut m = pair(n, Some(-50.0), Some(-50.0));
        let mut out = Vec::new();
        (0..10).for_each(|tag| m.enqueue(0, frame(tag), 0));
        m.advance(20_000_000, &mut rng, &mut out);
        assert_eq!(m.agreements[1], Agreement::Established);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|o| o.result.is_ok()), "{out:?}");
        let l = m.link(0, 1);
        assert_eq!((l.attempts, l.retries, l.airtime_ns), (10, 0, ampdu(10)));
        let block_ack = n.block_ack_ns(mcs7);
        assert_eq!(m.stats().busy_ns, request + ampdu(10) + block_ack);

        // The receiver's answers do not reach the sender.
        let mut m = pair(n, Some(-50.0), Some(-90.0));
        let mut out = Vec::new();
        (0..3).for_each(|tag| m.enqueue(0, frame(tag), 0));
        m.advance(150_000_000, &mut rng, &mut out);
        let Agreement::FailedUntil(until) = m.agreements[1] else {
            panic!("{:?}", m.agreements[1]);
        };
        assert!((ADDBA_FAILED_NS..150_000_000 + ADDBA_FAILED_NS).contains(&until));
        let unanswered = RETRY_LIMIT as u64 * request;
        assert!(m.stats().busy_ns >= unanswered, "7 requests");
        let l = m.link(0, 1);
        let sent = 3 * RETRY_LIMIT as u64;
        assert_eq!(
            (l.attempts, l.airtime_ns),
            (sent, sent * single),
            "alone: {l:?}"
        );
        assert_eq!(out.len(), 3, "received, not lost: {out:?}");
        // Answers heard from now on: alone until `until`, then asked again, and aggregated.
        m.set_level(1, 0, Some(-50.0), -94.0);
        (3..13).for_each(|tag| m.enqueue(0, frame(tag), 150_000_000));
        m.advance(until - 1, &mut rng, &mut out);
        let l = m.link(0, 1);
        assert_eq!(
            (l.attempts, l.airtime_ns),
            (sent + 10, (sent + 10) * single)
        );
        (13..23).for_each(|tag| m.enqueue(0, frame(tag), until));
        m.advance(until + 20_000_000, &mut rng, &mut out);
        assert_eq!(m.agreements[1], Agreement::Established);
        let l = m.link(0, 1);
        let airtime = (sent + 10) * single + ampdu(10);
        assert_eq!((l.attempts, l.airtime_ns), (sent + 20, airtime));
        assert_eq!(out.len(), 23);
        assert!(out.iter().all(|o| o.result.is_ok()), "{out:?}");
    }

    /// A frame sent before whose lifetime ends while it waits for its next attempt is given up
    /// at its station's next access, not sent again, as ns-3's MAC queue drops an expired MPDU
    /// before it sends the next one: frames queued at once to a link that loses every attempt
    /// all end by their lifetime, and no attempt starts after it.
    #[test]
    fn a_frame_sent_before_is_not_sent_again_past_its_lifetime() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut m = pair(phy(), Some(-83.0), Some(-83.0));
        let mut out = Vec::new();
        for tag in 0..200 {
            m.enqueue(0, frame(tag, 1, true), 0);
        }
        m.advance(LIFETIME_NS, &mut rng, &mut out);
        let head = m.stations[0].queue.front().map(|q| (q.aired, q.attempts));
        assert!(
            head.is_some_and(|(aired, tries)| aired && tries < RETRY_LIMIT),
            "{head:?}"
        );
        let attempts = m.link(0, 1).attempts;
        m.advance(2 * LIFETIME_NS, &mut rng, &mut out);
        let l = m.link(0, 1);
        assert_eq!(l.attempts, attempts, "{l:?}");
        assert_eq!(out.len(), 200);
        let given_up = out
            .iter()
            .filter(|o| o.result == Err(DropReason::RetryLimit))
            .count() as u64;
        assert_eq!((l.frames, l.retry_limit), (given_up, given_up), "{l:?}");
        assert_eq!(m.queued(0), 0);
    }

    /// Under 802.11n's Block Ack, once an unanswered exchange's frames have all been given up
    /// at the end of their lifetime, the sender's next accesses send Block Ack Requests while
    /// other frames to the receiver wait, and the data goes only after one is answered, as
    /// ns-3 does: here the sender cannot hear the receiver's answers, so the frames queued
    /// behind never go, until it can.
    #[test]
    fn frames_behind_ones_given_up_wait_for_an_answered_block_ack_request() {
        let n = Phy::of(WifiStandard::N5);
        let frame = |tag| Frame {
            bytes: n.mpdu_bytes(1500),
            rate: n.rates()[7],
            ..frame(tag, 1, true)
        };
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut m = pair(n, Some(-50.0), Some(-90.0));
        m.agreements.fill(Agreement::Established);
        let mut out = Vec::new();
        (0..10).for_each(|tag| m.enqueue(0, frame(tag), 0));
        (10..15).for_each(|tag| m.enqueue(0, frame(tag), 300_000_000));
        m.advance(LIFETIME_NS + 200_000_000, &mut rng, &mut out);
        // The first ten were received (and are delivered when given up); the five behind
        // have not been on the air, a Block Ack Request at the lowest rate going instead.
        let tags: Vec<u64> = out.iter().map(|o| o.tag).collect();
        assert_eq!(tags, (0..10).collect::<Vec<_>>());
        assert!(out.iter().all(|o| o.result.is_ok()), "{out:?}");
        assert_eq!(m.link(0, 1).attempts, 10);
        assert_eq!(m.queued(0), 5);
        let bar = m.stations[0].bar.clone();
        assert_eq!(bar, Some((1, n.rates()[0], Vec::new())));
        // The answers heard: a Block Ack Request answered, then the five in one A-MPDU.
        m.set_level(1, 0, Some(-50.0), -94.0);
        m.advance(LIFETIME_NS + 220_000_000, &mut rng, &mut out);
        assert_eq!(out.len(), 15);
        assert!(out.iter().all(|o| o.result.is_ok()), "{out:?}");
        let l = m.link(0, 1);
        assert_eq!((l.attempts, l.retries, l.retry_limit), (15, 0, 0), "{l:?}");
    }

    /// Frames queued faster than a link that loses every attempt lets them go: each is sent
    /// and given up at the retry limit (or after the attempt that ends past its lifetime)
    /// until the ones behind have waited 500 ms unsent; those leave the queue as `queue
    /// full`, as ns-3's queue drops them, and never reach the air.
    #[test]
    fn a_frame_that_waits_past_its_lifetime_unsent_leaves_the_queue() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut m = pair(phy(), Some(-83.0), Some(-83.0));
        let mut out = Vec::new();
        for tag in 0..200 {
            m.enqueue(0, frame(tag, 1, true), 0);
        }
        m.advance(2 * LIFETIME_NS, &mut rng, &mut out);
        assert_eq!(out.len(), 200, "{out:?}");
        let given_up = out
            .iter()
            .filter(|o| o.result == Err(DropReason::RetryLimit));
        let unsent = out
            .iter()
            .filter(|o| o.result == Err(DropReason::QueueFull));
        let (given_up, unsent) = (given_up.count() as u64, unsent.count() as u64);
        println!("{given_up} given up after attempts, {unsent} unsent");
        assert!(given_up > 10 && unsent > 100 && given_up + unsent == 200);
        let l = m.link(0, 1);
        assert_eq!((l.frames, l.retry_limit), (given_up, given_up), "{l:?}");
        assert!(l.attempts <= given_up * u64::from(RETRY_LIMIT));
        assert_eq!(m.queued(0), 0);
    }

    /// Two senders the terrain hides from each other, both heard by the receiver at the same
    /// level: their frames overlap and several times more attempts collide than when they
    /// sense each other (where only equal backoffs do), and fewer frames get through.
    #[test]
    fn hidden_terminals_collide_where_carrier_sense_would_have_kept_them_apart() {
        let hidden = |s: usize, r: usize| (s.min(r) == 0).then_some(-60.0);
        let (out_h, h) = saturate(3, &[1, 2], hidden, 2.0, 1);
        let (out_s, s) = saturate(3, &[1, 2], |_, _| Some(-60.0), 2.0, 1);
        let ok = |out: &[Outcome<u64>]| out.iter().filter(|o| o.result.is_ok()).count();
        let (h, s) = (h.stats(), s.stats());
        println!(
            "hidden: {} delivered, {}/{} attempts collided; in sight: {} delivered, {}/{}",
            ok(&out_h),
            h.collided,
            h.attempts,
            ok(&out_s),
            s.collided,
            s.attempts
        );
        assert!(h.collided > 2 * s.collided, "{h:?} against {s:?}");
        assert!(s.collided * 5 < s.attempts, "{s:?}");
        assert!(ok(&out_h) * 10 < ok(&out_s) * 9);
        assert!(out_h
            .iter()
            .any(|o| o.result == Err(DropReason::RetryLimit)));
    }

    /// Frames of random sizes queued at random times by stations that partly hear each other,
    /// in 802.11a and in 802.11n (A-MPDUs): every copy ends exactly once, none received before
    /// its frame's airtime after its arrival (for a subframe of an A-MPDU, its bytes at the
    /// fastest rate), each link's frames received in the order they were queued, whatever the
    /// window length.
    #[test]
    fn every_copy_ends_once_and_none_before_its_airtime() {
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.random_range(2..7usize);
            let phy = match seed % 2 {
                0 => phy(),
                _ => Phy::of(WifiStandard::N5),
            };
            let mut m = WifiMedium::new(phy, n);
            for s in 0..n {
                for r in 0..n {
                    let l = rng.random_range(-95.0..-40.0);
                    m.set_level(s, r, (rng.random::<f64>() < 0.8).then_some(l), -94.0);
                }
            }
            let window = rng.random_range(100_000..3_000_000u64);
            let mut arrivals = std::collections::HashMap::new();
            let mut out = Vec::new();
            let mut tag = 0u64;
            let mut copies = 0;
            let mut sent = std::collections::HashMap::new();
            for k in 1..=200u64 {
                for _ in 0..rng.random_range(0..4) {
                    let s = rng.random_range(0..n);
                    let at = (k - 1) * window + rng.random_range(0..window);
                    let unicast = rng.random::<f64>() < 0.7;
                    let receivers: Receivers = if unicast {
                        smallvec::smallvec![(s + rng.random_range(1..n)) % n]
                    } else {
                        (0..n).filter(|&r| r != s).collect()
                    };
                    let rates = phy.rates();
                    let f = Frame {
                        tag,
                        receivers,
                        bytes: rng.random_range(30..2400),
                        rate: rates[rng.random_range(0..rates.len())],
                        unicast,
                        ideal: false,
                    };
                    copies += f.receivers.len();
                    sent.insert(tag, (s, f.link_to(s)));
                    let airtime = match phy.aggregates() && unicast {
                        true => phy.through_ns(f.bytes, *rates.last().unwrap()),
                        false => phy.ppdu_ns(f.bytes, f.rate),
                    };
                    arrivals.insert(tag, at.max((k - 1) * window) + airtime);
                    m.enqueue(s, f, at);
                    tag += 1;
                }
                m.advance(k * window, &mut rng, &mut out);
            }
            m.advance(u64::MAX, &mut rng, &mut out);
            let mut seen = std::collections::HashSet::new();
            let mut last_on_link = std::collections::HashMap::new();
            for o in &out {
                assert!(seen.insert((o.tag, o.receiver)), "seed {seed}: {o:?} twice");
                if let Ok(at) = o.result {
                    assert!(at >= arrivals[&o.tag], "seed {seed}: {o:?}");
                    let (s, r) = sent[&o.tag];
                    if s != r {
                        let last = last_on_link.insert((s, r), o.tag);
                        assert!(last < Some(o.tag), "seed {seed}: {o:?} after {last:?}");
                    }
                }
            }
            assert_eq!(seen.len(), copies, "seed {seed}");
            // Every frame sent is counted once on its link (one that waited past its lifetime
            // unsent ends as `queue full` and is not); a unicast frame's one copy says how it
            // ended; the links add up to the medium's counters.
            let mut ended: std::collections::HashMap<(usize, usize), (u64, u64)> =
                std::collections::HashMap::new();
            for (tag, &(s, r)) in &sent {
                let result = |o: &&Outcome<u64>| o.tag == *tag;
                if out
                    .iter()
                    .filter(result)
                    .any(|o| o.result == Err(DropReason::QueueFull))
                {
                    continue;
                }
                let e = ended.entry((s, r)).or_default();
                e.0 += 1;
                if r != s && out.iter().filter(result).any(|o| o.result.is_err()) {
                    e.1 += 1;
                }
            }
            let mut changed = std::collections::HashMap::new();
            m.take_changed(|s, r, l| assert!(changed.insert((s, r), *l).is_none()));
            let mut total = AirStats::default();
            for s in 0..n {
                let mut own_airtime = 0;
                for r in 0..n {
                    let l = m.link(s, r);
                    let (frames, dropped) = ended.get(&(s, r)).copied().unwrap_or_default();
                    let why = format!("seed {seed}, link {s} → {r}: {l:?}");
                    assert_eq!(l.frames, frames, "{why}");
                    assert_eq!(l.attempts, l.frames + l.retries, "{why}");
                    if r != s {
                        assert_eq!(l.retry_limit, dropped, "{why}");
                    }
                    assert!(l.service_ns >= l.airtime_ns, "{why}");
                    assert_eq!(
                        changed.get(&(s, r)).copied().unwrap_or_default(),
                        l,
                        "{why}"
                    );
                    own_airtime += l.airtime_ns;
                    total.attempts += l.attempts;
                    total.retries += l.retries;
                    total.collided += l.collided;
                }
                assert!(m.stats().busy_ns >= own_airtime, "seed {seed}");
            }
            let st = m.stats();
            assert_eq!(
                (total.attempts, total.retries, total.collided),
                (st.attempts, st.retries, st.collided),
                "seed {seed}"
            );
            m.take_changed(|s, r, _| panic!("link {s} → {r} reported twice"));
        }
    }
}
