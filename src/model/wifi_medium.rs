//! One 802.11 channel shared by every radio on it, as the distributed coordination function
//! shares it: a sans-IO discrete-event simulation (time passed in, the caller's RNG) of each
//! station's queue, DIFS, backoff, frame and ACK, with carrier sense and interference taken
//! from the received levels the caller gives per pair. The standard's numbers are
//! [`crate::model::wifi`]'s; the network simulator feeds this and releases what it decides.
//!
//! - **Carrier sense.** A station senses a transmission whose level at it is at least the
//!   lowest rate's minimum sensitivity (−82 dBm, the standard's CCA threshold for a decodable
//!   preamble); its own transmissions and ACK waits keep it busy too. It counts its backoff in
//!   slots of air it has sensed idle for DIFS, freezes while it senses the air busy and counts
//!   on after DIFS of idle air again; a new backoff from `[0, CW]` follows every exchange
//!   (post-backoff), so a frame reaching a station whose backoff has run out on idle air goes
//!   at once. Stations whose backoffs end within [`CCA_NS`] of each other do not sense each
//!   other in time and transmit together; stations that cannot sense each other (the terrain
//!   between them) are hidden terminals and overlap freely.
//! - **Reception.** A frame from `s` at `r` is decided by its SINR: the caller's level of `s`
//!   at `r` against the noise floor plus every other transmission overlapping it that `r`
//!   receives, piece by piece. Each piece's bit error rate is the link model's BER at that many
//!   dB above the rate's threshold, less the interference's rise over the noise
//!   (`10·log10((N + I)/N)`), so without interference a frame fails exactly as often as the
//!   link model says; a receiver that transmits during the frame loses it (half duplex).
//! - **Exchange.** A unicast frame that is received is acknowledged after SIFS by an ACK that
//!   occupies the air (sensed by the stations around the receiver); one that is not makes its
//!   sender wait as long, then try again with the next contention window, at most
//!   [`RETRY_LIMIT`] attempts (then dropped). A group-addressed frame is sent once, without
//!   ACK, at the lowest rate.
//! - **Ideal rate.** A unicast frame whose rate is the ideal choice for its link
//!   ([`Frame::ideal`]) goes at it while its sender knows the receiver's SNR, as ns-3's
//!   IdealWifiManager knows it (from the ACKs of frames to that receiver): once a frame to a
//!   receiver is dropped at the retry limit the manager forgets it, and the sender uses the
//!   lowest rate until a frame to that receiver is acknowledged. (ns-3 starts without the SNR
//!   too; here each pair starts with it.)
//! - **Causality.** [`WifiMedium::advance`] runs the events before `until`; the caller queues
//!   every frame before the medium's time passes its arrival. A frame is decided when it ends,
//!   with every transmission that overlapped it known; one still on the air at `until` is
//!   decided in a later call.
//!
//! Not modelled: ACK losses (an ACK follows every received frame), EIFS after a frame not
//! decoded, RTS/CTS, A-MPDU aggregation, a receiver locking onto the first of two preambles,
//! propagation delay within the contention (the slot covers it), fading.

use crate::model::fate::DropReason;
use crate::model::wifi::{Phy, Rate, RETRY_LIMIT};
use rand::Rng;
use std::collections::VecDeque;

/// The OFDM PHY's clear channel assessment time (aCCATime, below 4 µs): a transmission that
/// starts less than this before a station's backoff ends is not sensed by it in time.
pub const CCA_NS: u64 = 4_000;

/// One frame handed to the medium: its receivers, size, rate and the caller's tag.
#[derive(Debug, Clone)]
pub struct Frame<T> {
    pub tag: T,
    /// Receiving stations; one for a unicast frame.
    pub receivers: Vec<usize>,
    /// MPDU bytes (header, payload, FCS).
    pub bytes: u32,
    pub rate: Rate,
    /// Acknowledged and retried (else sent once).
    pub unicast: bool,
    /// `rate` is the ideal choice for the link's SNR (not a constant rate): the lowest rate
    /// replaces it while the sender does not know the SNR (see the module docs).
    pub ideal: bool,
}

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
}

#[derive(Debug, Clone)]
struct Station<T> {
    queue: VecDeque<Queued<T>>,
    /// Failed attempts of the frame at the head.
    attempt: u32,
    /// Backoff slots left.
    backoff: u32,
    /// Transmissions on the air it senses.
    sensed: u32,
    /// Since when it has sensed the air idle (when `sensed` is 0 and no exchange).
    idle_since: u64,
    /// Its exchange (frame, then ACK or the wait for it) ends then; whether the frame got
    /// through.
    exchange: Option<(u64, bool)>,
    /// When its last frame left the queue (the next one's service starts then or at its
    /// arrival).
    head_since: u64,
}

/// Per receiver of a data frame: received, or why not.
type Fates = Vec<Result<(), DropReason>>;

#[derive(Debug, Clone)]
struct Tx<T> {
    from: usize,
    start: u64,
    end: u64,
    /// The data frame (None: an ACK) and, once decided, which receivers got it.
    data: Option<(Frame<T>, Option<Fates>)>,
    started: bool,
    /// Off the air, kept while a frame it overlapped is undecided.
    ended: bool,
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
    /// `known[s * n + r]`: `s` knows `r`'s SNR (no frame of `s` to `r` dropped at the retry
    /// limit since the last acknowledged), so sends at the ideal rate.
    known: Vec<bool>,
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
            known: vec![true; n * n],
            stations: (0..n)
                .map(|_| Station {
                    queue: VecDeque::new(),
                    attempt: 0,
                    backoff: 0,
                    sensed: 0,
                    idle_since: 0,
                    exchange: None,
                    head_since: 0,
                })
                .collect(),
            air: Vec::new(),
            now: 0,
            idle: true,
            busy_ns: 0,
            busy_until: 0,
            links: vec![LinkAir::default(); n * n],
            changed: Vec::new(),
            is_changed: vec![false; n * n],
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
            st.queue.push_back(Queued {
                frame,
                arrival: at.max(self.now),
            });
            self.idle = false;
        }
    }

    fn senses(&self, s: usize, x: usize) -> bool {
        s == x || self.levels[s * self.n + x].is_some_and(|l| self.phy.detects(l))
    }

    /// When `x`'s backoff ends and its head frame may go (None: nothing to send, or busy).
    fn expiry(&self, x: usize) -> Option<u64> {
        let st = &self.stations[x];
        let head = st.queue.front()?;
        if st.sensed > 0 || st.exchange.is_some() {
            return None;
        }
        let counted = st.idle_since + self.phy.difs_ns() + u64::from(st.backoff) * self.phy.slot_ns;
        Some(counted.max(head.arrival))
    }

    /// `x` senses the air turn busy at `t`: the backoff slots it counted are spent.
    fn freeze(&mut self, x: usize, t: u64) {
        let difs = self.phy.difs_ns();
        let slot = self.phy.slot_ns;
        let st = &mut self.stations[x];
        if st.sensed == 0 && st.exchange.is_none() {
            let from = st.idle_since + difs;
            if t > from {
                let counted = (t - from) / slot;
                st.backoff -= st.backoff.min(counted.min(u64::from(u32::MAX)) as u32);
            }
        }
        st.sensed += 1;
    }

    fn new_backoff(&mut self, x: usize, rng: &mut impl Rng) {
        let cw = self.phy.cw(self.stations[x].attempt);
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
            self.ends_at(t, rng, out);
            self.exchanges_end_at(t, rng, out);
            self.starts_at(t);
            self.forget();
        }
        self.now = self.now.max(until);
        self.forget();
        self.idle = self.air.is_empty()
            && self
                .stations
                .iter()
                .all(|s| s.queue.is_empty() && s.exchange.is_none());
    }

    /// A data frame on the air (or off it) not yet decided.
    fn undecided(&self, i: usize) -> bool {
        let tx = &self.air[i];
        tx.started && tx.data.as_ref().is_some_and(|d| d.1.is_none())
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
        let air =
            self.air
                .iter()
                .filter(|tx| !tx.ended)
                .map(|tx| if tx.started { tx.end } else { tx.start });
        let exchanges = self.stations.iter().filter_map(|s| s.exchange.map(|e| e.0));
        let expiries = (0..self.n).filter_map(|x| self.expiry(x));
        air.chain(exchanges).chain(expiries).min()
    }

    /// Transmissions ending at `t`: the stations that sensed them count idle air from `t`; a
    /// data frame is decided and its sender waits for the ACK (sent if it got through).
    fn ends_at(&mut self, t: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        for i in 0..self.air.len() {
            if !(self.air[i].started && !self.air[i].ended && self.air[i].end == t) {
                continue;
            }
            if self.undecided(i) {
                self.decide(i, rng, out);
            }
            self.air[i].ended = true;
            let tx = &self.air[i];
            let from = tx.from;
            let data = tx.data.as_ref().map(|(f, fates)| {
                (
                    f.unicast,
                    f.receivers[0],
                    f.rate,
                    fates.as_ref().is_some_and(|v| v.iter().all(|f| f.is_ok())),
                )
            });
            for x in 0..self.n {
                if self.senses(from, x) {
                    let st = &mut self.stations[x];
                    st.sensed = st.sensed.saturating_sub(1);
                    if st.sensed == 0 {
                        st.idle_since = t;
                    }
                }
            }
            let Some((unicast, receiver, rate, got)) = data else {
                continue;
            };
            if unicast {
                let ack_ns = self.phy.ack_ns(rate);
                let ack_start = t + self.phy.sifs_ns;
                if got {
                    self.air.push(Tx {
                        from: receiver,
                        start: ack_start,
                        end: ack_start + ack_ns,
                        data: None,
                        started: false,
                        ended: false,
                    });
                }
                self.stations[from].exchange = Some((ack_start + ack_ns, got));
            } else {
                self.stations[from].exchange = Some((t, true));
            }
            // Its own exchange keeps the sender busy until it ends.
            self.stations[from].sensed += 1;
        }
    }

    /// Exchanges ending at `t`: the frame leaves the queue (received, or after its last
    /// attempt) or waits for its next attempt; a new backoff either way.
    fn exchanges_end_at(&mut self, t: u64, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        for x in 0..self.n {
            let Some((end, got)) = self.stations[x].exchange else {
                continue;
            };
            if end != t {
                continue;
            }
            let st = &mut self.stations[x];
            st.exchange = None;
            st.sensed = st.sensed.saturating_sub(1);
            if st.sensed == 0 {
                st.idle_since = t;
            }
            let done = got || st.attempt + 1 >= RETRY_LIMIT;
            st.attempt = if done { 0 } else { st.attempt + 1 };
            if !done {
                if let Some(r) = self.stations[x].queue.front().map(|q| q.frame.link_to(x)) {
                    self.touch(x, r).retries += 1;
                }
            } else if let Some(q) = self.stations[x].queue.pop_front() {
                let service = t - q.arrival.max(self.stations[x].head_since);
                self.stations[x].head_since = t;
                if q.frame.unicast {
                    // An ACK tells the sender the receiver's SNR; a frame given up on leaves it
                    // none.
                    self.known[x * self.n + q.frame.link_to(x)] = got;
                }
                let link = self.link_of(x, &q.frame);
                link.frames += 1;
                link.service_ns += service;
                if !got {
                    link.retry_limit += 1;
                    for &r in &q.frame.receivers {
                        out.push(Outcome {
                            tag: q.frame.tag.clone(),
                            receiver: r,
                            result: Err(DropReason::RetryLimit),
                        });
                    }
                }
            }
            self.new_backoff(x, rng);
        }
    }

    /// Transmissions starting at `t`: ACKs due then, and the head frames of every station
    /// whose backoff ends before another's start can reach it ([`CCA_NS`]); each station that
    /// senses one freezes.
    fn starts_at(&mut self, t: u64) {
        let first = self.air.len();
        for x in 0..self.n {
            if let Some(e) = self.expiry(x).filter(|&e| e < t + CCA_NS) {
                let mut frame = self.stations[x].queue[0].frame.clone();
                if frame.unicast && frame.ideal && !self.known[x * self.n + frame.link_to(x)] {
                    frame.rate = self.phy.rates()[0];
                }
                let end = e + self.phy.ppdu_ns(frame.bytes, frame.rate);
                let link = self.link_of(x, &frame);
                link.attempts += 1;
                link.airtime_ns += end - e;
                self.air.push(Tx {
                    from: x,
                    start: e,
                    end,
                    data: Some((frame, None)),
                    started: false,
                    ended: false,
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
        }
    }

    /// Decides every receiver of the data frame `air[i]` from what overlaps it at each.
    fn decide(&mut self, i: usize, rng: &mut impl Rng, out: &mut Vec<Outcome<T>>) {
        let end = self.air[i].end;
        let Some((frame, _)) = &self.air[i].data else {
            return;
        };
        let frame = frame.clone();
        let mut fates = Vec::with_capacity(frame.receivers.len());
        for &r in &frame.receivers {
            let fate = self.receive(i, &frame, r, rng);
            // Lost to another transmission: one reaching the receiver, or the receiver's own
            // (two stations whose backoffs ended in the same slot, sending to each other).
            if matches!(fate, Err(DropReason::Collision | DropReason::HalfDuplex)) {
                let from = self.air[i].from;
                self.link_of(from, &frame).collided += 1;
            }
            match fate {
                Ok(()) => out.push(Outcome {
                    tag: frame.tag.clone(),
                    receiver: r,
                    result: Ok(end),
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
            d.1 = Some(fates);
        }
    }

    /// Whether `r` receives `frame`, the data of `air[i]` (see the module docs).
    fn receive(
        &self,
        i: usize,
        frame: &Frame<T>,
        r: usize,
        rng: &mut impl Rng,
    ) -> Result<(), DropReason> {
        let (from, start, end) = (self.air[i].from, self.air[i].start, self.air[i].end);
        let (rate, bits) = (frame.rate, 8.0 * f64::from(frame.bytes));
        let n = self.n;
        // Below the detection threshold the receiver never finds the preamble; what it does
        // not detect still adds to what it hears (the interference below).
        let Some(level) = self.levels[from * n + r].filter(|&l| self.phy.detects(l)) else {
            return Err(DropReason::OutOfRange);
        };
        // Pieces of the frame: each other transmission r receives adds its power over its
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
        let noise = self.noise_mw[from * n + r];
        let per_bit =
            |interference: f64| rate.ber(level - 10.0 * (noise + interference.max(0.0)).log10());
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
        if rng.random::<f64>() < survive_log.exp() {
            Ok(())
        } else if interfered {
            Err(DropReason::Collision)
        } else {
            Err(DropReason::PacketError)
        }
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
        (phy.ppdu_ns(mpdu_bytes, rate) + phy.sifs_ns + phy.ack_ns(rate) + phy.difs_ns()) as f64;
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
            receivers: vec![to],
            bytes: 1536,
            rate: *phy().rates().last().unwrap(),
            unicast,
            ideal: false,
        }
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
        let mut m = WifiMedium::new(phy(), 2);
        m.set_level(0, 1, Some(-83.0), -94.0);
        m.set_level(1, 0, Some(-83.0), -94.0);
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

    /// Frames of random sizes queued at random times by stations that partly hear each other:
    /// every copy ends exactly once, none received before its frame's airtime after its
    /// arrival, whatever the window length.
    #[test]
    fn every_copy_ends_once_and_none_before_its_airtime() {
        for seed in 0..20u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.random_range(2..7usize);
            let mut m = WifiMedium::new(phy(), n);
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
                    let receivers: Vec<usize> = if unicast {
                        vec![(s + rng.random_range(1..n)) % n]
                    } else {
                        (0..n).filter(|&r| r != s).collect()
                    };
                    let rates = phy().rates();
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
                    let airtime = phy().ppdu_ns(f.bytes, f.rate);
                    arrivals.insert(tag, at.max((k - 1) * window) + airtime);
                    m.enqueue(s, f, at);
                    tag += 1;
                }
                m.advance(k * window, &mut rng, &mut out);
            }
            m.advance(u64::MAX, &mut rng, &mut out);
            let mut seen = std::collections::HashSet::new();
            for o in &out {
                assert!(seen.insert((o.tag, o.receiver)), "seed {seed}: {o:?} twice");
                if let Ok(at) = o.result {
                    assert!(at >= arrivals[&o.tag], "seed {seed}: {o:?}");
                }
            }
            assert_eq!(seen.len(), copies, "seed {seed}");
            // Every frame is counted once on its link; a unicast frame's one copy says how it
            // ended; the links add up to the medium's counters.
            let mut ended: std::collections::HashMap<(usize, usize), (u64, u64)> =
                std::collections::HashMap::new();
            for (tag, &(s, r)) in &sent {
                let e = ended.entry((s, r)).or_default();
                e.0 += 1;
                if r != s && out.iter().any(|o| o.tag == *tag && o.result.is_err()) {
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
