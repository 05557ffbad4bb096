//! 802.11 timing: how long a frame occupies the air and what the distributed coordination
//! function (DCF) makes a sender wait, for the OFDM PHYs the ns-3 adapter offers — 802.11a
//! (5 GHz, Clause 17), 802.11g (ERP-OFDM at 2.4 GHz, Clause 18) and 802.11n (HT mixed format,
//! 20 MHz, one spatial stream, 800 ns guard interval, Clause 19) — in integer nanoseconds.
//! Pure arithmetic from the standard's formulas; what uses it decides when the air is free.
//!
//! - A PPDU lasts its preamble and headers, then `ceil((16 + 8·L + 6) / N_DBPS)` OFDM symbols
//!   of 4 µs (SERVICE field, the PSDU's L bytes, tail bits), then at 2.4 GHz a 6 µs signal
//!   extension ([`Phy::ppdu_ns`]).
//! - An IP packet of `n` bytes is the MPDU `n + 8` (LLC/SNAP) `+` a data MAC header (24 bytes,
//!   26 with QoS as 802.11n uses) `+ 4` (FCS) ([`Phy::mpdu_bytes`]).
//! - A unicast frame is acknowledged after SIFS by a 14-byte ACK at the highest mandatory rate
//!   not above the data rate (6, 12 or 24 Mbit/s; for an HT MCS, its non-HT reference rate's)
//!   ([`Phy::ack_ns`]).
//! - Before each attempt a sender waits DIFS = SIFS + 2 slots of idle air (802.11n's QoS
//!   MAC: AIFS = SIFS + 3 slots, best effort's), then a backoff of
//!   a uniform number of slots in `[0, CW]`; CW starts at CWmin and doubles plus one after each
//!   failed attempt up to CWmax; after [`RETRY_LIMIT`] attempts the frame is dropped.
//!
//! - 802.11n aggregates the frames queued to one receiver into an A-MPDU (each MPDU behind a
//!   4-byte delimiter, padded to 4 bytes but the last) of at most 64 MPDUs (the Block Ack
//!   window), 65,535 bytes and 5,484 µs (aPPDUMaxTime of the HT mixed format), answered after
//!   SIFS by a 32-byte compressed Block Ack at the ACK's rate ([`Phy::aggregates`],
//!   [`Phy::ampdu_bytes`], [`Phy::block_ack_ns`]).
//!
//! Not modelled here: RTS/CTS, 40 MHz channels, several spatial streams, short guard
//! intervals, DSSS rates.

use crate::config::WifiStandard;
use std::sync::OnceLock;

/// Attempts of a frame before it is dropped: dot11ShortRetryLimit (frames below the RTS
/// threshold, which is every frame without RTS/CTS).
pub const RETRY_LIMIT: u32 = 7;
/// Bytes of an ACK frame (frame control, duration, receiver address, FCS).
pub const ACK_BYTES: u32 = 14;
/// LLC/SNAP header in front of an IP packet in an 802.11 data frame.
pub const LLC_SNAP_BYTES: u32 = 8;
/// Frame check sequence.
pub const FCS_BYTES: u32 = 4;
/// A compressed Block Ack (frame control, duration, two addresses, BA control, starting
/// sequence control, 8-byte bitmap, FCS).
pub const BLOCK_ACK_BYTES: u32 = 32;
/// A compressed Block Ack Request (frame control, duration, two addresses, BAR control,
/// starting sequence control, FCS).
pub const BLOCK_ACK_REQUEST_BYTES: u32 = 24;
/// An ADDBA Request, the action frame that sets up a Block Ack agreement (MAC header,
/// category, action, dialog token, Block Ack parameters, timeout, starting sequence control,
/// FCS).
pub const ADDBA_REQUEST_BYTES: u32 = 37;
/// The MPDU delimiter in front of each subframe of an A-MPDU.
pub const DELIMITER_BYTES: u32 = 4;
/// An A-MPDU's limits: MPDUs (the Block Ack window), bytes (the HT PSDU's maximum) and air
/// time (aPPDUMaxTime of the HT mixed format, the L-SIG's limit).
pub const MAX_AMPDU_MPDUS: usize = 64;
pub const MAX_AMPDU_BYTES: u32 = 65_535;
pub const MAX_HT_PPDU_NS: u64 = 5_484_000;

const SYMBOL_NS: u64 = 4_000;
/// Legacy preamble (short and long training, 16 µs) and SIGNAL (4 µs).
const LEGACY_PREAMBLE_NS: u64 = 20_000;
/// HT mixed format: legacy preamble and L-SIG (20 µs), HT-SIG (8), HT-STF (4), one HT-LTF (4).
const HT_PREAMBLE_NS: u64 = 36_000;
/// ERP-OFDM and HT at 2.4 GHz: the signal extension after the last symbol.
const SIGNAL_EXTENSION_NS: u64 = 6_000;

/// One data rate: its PHY rate (bit/s), data bits per OFDM symbol, modulation and coding, and
/// minimum sensitivity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub bps: u64,
    pub bits_per_symbol: u32,
    /// The non-HT rate whose mandatory rates bound the ACK's (the rate itself for a/g).
    pub reference_bps: u64,
    /// The standard's minimum receiver sensitivity (dBm): the input level at which a receiver
    /// must decode 1000-byte PSDUs with a PER of at most 10 %.
    pub sensitivity_dbm: i32,
    /// Points of the subcarriers' constellation: 2 (BPSK), 4 (QPSK), 16 or 64 (QAM).
    pub points: u16,
    pub code: Code,
}

/// The rate of 802.11's convolutional code (K = 7, generators 133 and 171 octal; punctured
/// above 1/2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Half,
    TwoThirds,
    ThreeQuarters,
    FiveSixths,
}

const fn ofdm(
    mbps: u64,
    bits_per_symbol: u32,
    sensitivity_dbm: i32,
    points: u16,
    code: Code,
) -> Rate {
    Rate {
        bps: mbps * 1_000_000,
        bits_per_symbol,
        reference_bps: mbps * 1_000_000,
        sensitivity_dbm,
        points,
        code,
    }
}

const fn ht(
    kbps: u64,
    bits_per_symbol: u32,
    reference_mbps: u64,
    sensitivity_dbm: i32,
    points: u16,
    code: Code,
) -> Rate {
    Rate {
        bps: kbps * 1_000,
        bits_per_symbol,
        reference_bps: reference_mbps * 1_000_000,
        sensitivity_dbm,
        points,
        code,
    }
}

use Code::{FiveSixths, Half, ThreeQuarters, TwoThirds};

/// Nonzero distances of a code's spectrum its bounds sum (the free distance's and the next
/// nine).
const SPECTRUM_TERMS: usize = 10;

/// A code's distance spectrum from its free distance on: for each Hamming distance `d` with
/// paths at it, the number `a_d` of paths that leave the all-zero path and first return at
/// that distance, and their information weight `c_d` (bits in error when the decoder takes
/// one), summed over the puncturing period's `b` starting phases.
struct Spectrum {
    period: f64,
    terms: Vec<Term>,
}

/// One distance of a [`Spectrum`].
struct Term {
    distance: f64,
    /// `a_d`.
    paths: f64,
    /// `c_d`.
    weight: f64,
}

impl Code {
    /// Which of each puncturing period's A (generator 133) and B (171) outputs are sent
    /// (17.3.5.6, 19.3.11.6.2): 2/3 sends A0 B0 A1, 3/4 A0 B0 A1 B2, 5/6 A0 B0 A1 B2 A3 B4.
    fn puncturing(self) -> (&'static [bool], &'static [bool]) {
        match self {
            Half => (&[true], &[true]),
            TwoThirds => (&[true, true], &[true, false]),
            ThreeQuarters => (&[true, true, false], &[true, false, true]),
            FiveSixths => (
                &[true, true, false, true, false],
                &[true, false, true, false, true],
            ),
        }
    }

    /// The spectrum, enumerated once from the encoder and its puncturing: every path that
    /// leaves state 0 (input 1) at each phase of the period, followed through the trellis
    /// until it returns to state 0, counted by the weight of the coded bits it sends, up to
    /// [`SPECTRUM_DISTANCE`] (the code has no cycle of weight 0 but state 0's, so this ends).
    fn spectrum(self) -> &'static Spectrum {
        static CELLS: [OnceLock<Spectrum>; 4] = [const { OnceLock::new() }; 4];
        let index = self as usize;
        CELLS[index].get_or_init(|| {
            let (a_sent, b_sent) = self.puncturing();
            let period = a_sent.len();
            // One step on `input` in `phase`: the next state and the weight of the bits sent.
            let step = |state: usize, input: usize, phase: usize| {
                let (next, [a, b]) = encoder_step(state, input);
                let sent = |on: bool, bit: u8| usize::from(on) * usize::from(bit);
                (next, sent(a_sent[phase], a) + sent(b_sent[phase], b))
            };
            const D: usize = SPECTRUM_DISTANCE;
            let (mut paths, mut weights) = ([0u128; D + 1], [0u128; D + 1]);
            for first in 0..period {
                // Per state and distance so far: paths, and their inputs that are 1.
                let mut mass = vec![[(0u128, 0u128); D + 1]; 64];
                let (s, w) = step(0, 1, first);
                mass[s][w] = (1, 1);
                let mut phase = (first + 1) % period;
                while mass.iter().any(|m| m.iter().any(|e| e.0 > 0)) {
                    let mut next = vec![[(0u128, 0u128); D + 1]; 64];
                    for (s, by_d) in mass.iter().enumerate() {
                        for (d, &(n, ones)) in by_d.iter().enumerate().filter(|e| e.1 .0 > 0) {
                            for input in 0..2 {
                                let (t, w) = step(s, input, phase);
                                let ones = ones + input as u128 * n;
                                if d + w > D {
                                    continue;
                                }
                                if t == 0 {
                                    paths[d + w] += n;
                                    weights[d + w] += ones;
                                } else {
                                    next[t][d + w].0 += n;
                                    next[t][d + w].1 += ones;
                                }
                            }
                        }
                    }
                    mass = next;
                    phase = (phase + 1) % period;
                }
            }
            let terms: Vec<_> = (0..=D)
                .filter(|&d| paths[d] > 0)
                .take(SPECTRUM_TERMS)
                .map(|d| Term {
                    distance: d as f64,
                    paths: paths[d] as f64,
                    weight: weights[d] as f64,
                })
                .collect();
            assert_eq!(
                terms.len(),
                SPECTRUM_TERMS,
                "distances up to {D} hold too few"
            );
            Spectrum {
                period: period as f64,
                terms,
            }
        })
    }
}

/// One step of 802.11's convolutional encoder from `state` (the last six inputs, the newest
/// lowest) on `input`: the next state and the A (generator 133) and B (171) bits, the
/// newest input being the generators' most significant tap.
fn encoder_step(state: usize, input: usize) -> (usize, [u8; 2]) {
    let r = ((state << 1) | input) & 0x7f;
    let bit = |g: usize| (r & g).count_ones() as u8 & 1;
    (r & 0x3f, [bit(0o155), bit(0o117)])
}

/// The largest distance the spectrum is enumerated to: rate 1/2's tenth (its distances are
/// even from 10 on).
const SPECTRUM_DISTANCE: usize = 28;

/// 802.11a/g rates (Tables 17-4 and 17-18): 6 to 54 Mbit/s.
const OFDM_RATES: [Rate; 8] = [
    ofdm(6, 24, -82, 2, Half),
    ofdm(9, 36, -81, 2, ThreeQuarters),
    ofdm(12, 48, -79, 4, Half),
    ofdm(18, 72, -77, 4, ThreeQuarters),
    ofdm(24, 96, -74, 16, Half),
    ofdm(36, 144, -70, 16, ThreeQuarters),
    ofdm(48, 192, -66, 64, TwoThirds),
    ofdm(54, 216, -65, 64, ThreeQuarters),
];
/// 802.11n MCS 0–7, 20 MHz, 800 ns guard interval (Tables 19-27 and 19-23), with the non-HT
/// reference rate of each (the OFDM rate of the same modulation and coding).
const HT_RATES: [Rate; 8] = [
    ht(6_500, 26, 6, -82, 2, Half),
    ht(13_000, 52, 12, -79, 4, Half),
    ht(19_500, 78, 18, -77, 4, ThreeQuarters),
    ht(26_000, 104, 24, -74, 16, Half),
    ht(39_000, 156, 36, -70, 16, ThreeQuarters),
    ht(52_000, 208, 48, -66, 64, TwoThirds),
    ht(58_500, 234, 54, -65, 64, ThreeQuarters),
    ht(65_000, 260, 54, -64, 64, FiveSixths),
];

/// The error probability of one bit the ideal rate choice allows ([`Phy::ideal_rate`]): ns-3's
/// IdealWifiManager's default `BerThreshold`, which it applies to its error model's loss of a
/// one-bit chunk (`ErrorRateModel::CalculateSnr`) — with this model, [`Rate::event_rate`].
pub const IDEAL_BER: f64 = 1e-6;

impl Rate {
    /// A coded bit's Ec/N0 at `snr_db` (the SINR over the channel's 20 MHz, as ns-3 takes
    /// it): the SNR for BPSK, half of it for QPSK, and for square M-QAM the BPSK equivalent
    /// of its Gray-coded bits' error rate `p = 2(1 − 1/√M)/log2 M · erfc(√(3γ/(2(M − 1))))`,
    /// `x ≈ 3γ/(2(M − 1)) + ln(½ / (2(1 − 1/√M)/log2 M))`.
    fn coded_bit_snr(&self, snr_db: f64) -> f64 {
        let g = 10f64.powf(snr_db / 10.0);
        match self.points {
            2 => g,
            4 => g / 2.0,
            m => {
                let m = f64::from(m);
                let c = 2.0 * (1.0 - 1.0 / m.sqrt()) / m.log2();
                3.0 * g / (2.0 * (m - 1.0)) + (0.5 / c).ln()
            }
        }
        .max(0.0)
    }

    /// `(1/b) Σ k_d · ½ erfc(√(d·x))` over the code's spectrum: the union bound of soft-decision
    /// Viterbi decoding with `k_d` a path count or information weight (Proakis, *Digital
    /// Communications*, 8.2), at most ½.
    fn union_bound(&self, snr_db: f64, k: impl Fn(&Term) -> f64) -> f64 {
        let x = self.coded_bit_snr(snr_db);
        let spectrum = self.code.spectrum();
        let erfc = crate::model::acoustic::erfc;
        let mut bound = 0.0;
        for t in &spectrum.terms {
            let tail = erfc((t.distance * x).sqrt());
            if tail == 0.0 {
                // It underflowed, and so do the terms at the larger distances after it.
                break;
            }
            bound += k(t) * 0.5 * tail;
        }
        (bound / spectrum.period).min(0.5)
    }

    /// Bit error rate after soft-decision Viterbi decoding at `snr_db`: the union bound over
    /// the code's information weights (what a receiver counting wrong bits measures; a
    /// frame's fate is [`Rate::event_rate`]'s).
    pub fn ber(&self, snr_db: f64) -> f64 {
        self.union_bound(snr_db, |t| t.weight)
    }

    /// Error events per decoded bit at `snr_db`: the union bound over the code's path
    /// counts. A decoder's errors come in bursts (a wrong path costs 3–7 bits at the free
    /// distance), so a frame of `n` bits is lost with `1 − (1 − event rate)^n`, not with
    /// the BER's `1 − (1 − BER)^n`, which counts each burst's bits as separate losses and
    /// overstates the frame error rate 3 to 7 times.
    pub fn event_rate(&self, snr_db: f64) -> f64 {
        self.union_bound(snr_db, |t| t.paths)
    }

    /// Packet error rate of `bytes` at `snr_db`: 1 − (1 − event rate)^bits.
    pub fn per(&self, bytes: u32, snr_db: f64) -> f64 {
        -(8.0 * f64::from(bytes) * (-self.event_rate(snr_db)).ln_1p()).exp_m1()
    }
}
/// The mandatory OFDM rates an ACK may use.
const MANDATORY: [Rate; 3] = [OFDM_RATES[0], OFDM_RATES[2], OFDM_RATES[4]];

/// The timing of one standard's PHY and MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phy {
    pub standard: WifiStandard,
    pub slot_ns: u64,
    pub sifs_ns: u64,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Preamble and PHY headers of a data frame.
    preamble_ns: u64,
    /// After the last symbol (2.4 GHz).
    extension_ns: u64,
    /// Bytes of a data frame's MAC header.
    pub mac_header_bytes: u32,
}

impl Phy {
    /// The standard's timing: at 5 GHz slot 9 µs and SIFS 16 µs; at 2.4 GHz SIFS 10 µs and
    /// the long slot of 20 µs (Table 18-5: the ERP default, short slots only in a BSS that
    /// announces them — none among vehicles in ad hoc mode, and what ns-3 uses); CW from 15
    /// to 1023.
    pub fn of(standard: WifiStandard) -> Phy {
        let (slot_ns, sifs_ns, preamble_ns, extension_ns, mac_header_bytes) = match standard {
            WifiStandard::A => (9_000, 16_000, LEGACY_PREAMBLE_NS, 0, 24),
            WifiStandard::G => (20_000, 10_000, LEGACY_PREAMBLE_NS, SIGNAL_EXTENSION_NS, 24),
            WifiStandard::N5 => (9_000, 16_000, HT_PREAMBLE_NS, 0, 26),
            WifiStandard::N2_4 => (20_000, 10_000, HT_PREAMBLE_NS, SIGNAL_EXTENSION_NS, 26),
        };
        Phy {
            standard,
            slot_ns,
            sifs_ns,
            cw_min: 15,
            cw_max: 1023,
            preamble_ns,
            extension_ns,
            mac_header_bytes,
        }
    }

    /// The data rates, slowest first.
    pub fn rates(&self) -> &'static [Rate] {
        match self.standard {
            WifiStandard::A | WifiStandard::G => &OFDM_RATES,
            WifiStandard::N2_4 | WifiStandard::N5 => &HT_RATES,
        }
    }

    /// Whether a receiver detects a frame arriving at `level_dbm`: at least the slowest rate's
    /// minimum sensitivity (−82 dBm), the standard's threshold for a decodable preamble (and
    /// the level under which ns-3's preamble detection drops a frame).
    pub fn detects(&self, level_dbm: f64) -> bool {
        level_dbm >= f64::from(self.rates()[0].sensitivity_dbm)
    }

    /// The ideal rate choice at `snr_db`: the fastest rate whose error events per bit there
    /// are at most [`IDEAL_BER`], else the slowest (what ns-3's IdealWifiManager does).
    pub fn ideal_rate(&self, snr_db: f64) -> Rate {
        let rates = self.rates();
        let at = self
            .thresholds_db()
            .iter()
            .rposition(|&t| t <= snr_db)
            .unwrap_or(0);
        rates[at]
    }

    /// The SNR (dB, to 0.01 dB) at which each rate's error events per bit fall to
    /// [`IDEAL_BER`], computed once.
    pub fn thresholds_db(&self) -> &'static [f64; 8] {
        static OFDM: OnceLock<[f64; 8]> = OnceLock::new();
        static HT: OnceLock<[f64; 8]> = OnceLock::new();
        let (cell, rates) = match self.standard {
            WifiStandard::A | WifiStandard::G => (&OFDM, &OFDM_RATES),
            WifiStandard::N2_4 | WifiStandard::N5 => (&HT, &HT_RATES),
        };
        cell.get_or_init(|| {
            rates.map(|r| {
                // The event rate falls with the SNR: bisect over [−10, 50] dB.
                let (mut lo, mut hi) = (-10.0, 50.0);
                while hi - lo > 0.005 {
                    let mid = 0.5 * (lo + hi);
                    if r.event_rate(mid) <= IDEAL_BER {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                (hi * 100.0f64).round() / 100.0
            })
        })
    }

    /// The standard's rate of `bps` bit/s, if it has one.
    pub fn rate(&self, bps: f64) -> Option<Rate> {
        self.rates().iter().find(|r| r.bps as f64 == bps).copied()
    }

    /// The interframe space a station senses idle before its backoff counts: the DCF's DIFS
    /// (SIFS and two slots) in 802.11a/g; in 802.11n, whose MAC is QoS (EDCA), the best-effort
    /// category's AIFS that carries all traffic here (SIFS and AIFSN 3 slots, as ns-3
    /// configures it).
    pub fn aifs_ns(&self) -> u64 {
        let slots = if self.aggregates() { 3 } else { 2 };
        self.sifs_ns + slots * self.slot_ns
    }

    /// Bytes on the air of a data frame carrying an IP packet of `ip_bytes` (at most
    /// `u32::MAX`: a length from outside never overflows).
    pub fn mpdu_bytes(&self, ip_bytes: u32) -> u32 {
        ip_bytes.saturating_add(LLC_SNAP_BYTES + self.mac_header_bytes + FCS_BYTES)
    }

    /// Airtime of a PSDU of `bytes` at `rate`: preamble, headers, symbols and extension.
    pub fn ppdu_ns(&self, bytes: u32, rate: Rate) -> u64 {
        let bits = 16 + 8 * u64::from(bytes) + 6;
        let symbols = bits.div_ceil(u64::from(rate.bits_per_symbol));
        self.preamble_ns + symbols * SYMBOL_NS + self.extension_ns
    }

    /// From a PPDU's start to the end of the symbol that carries its PSDU's first `bytes`
    /// bytes (where an A-MPDU's subframe ending there has been received).
    pub fn through_ns(&self, bytes: u32, rate: Rate) -> u64 {
        let bits = 16 + 8 * u64::from(bytes);
        self.preamble_ns + bits.div_ceil(u64::from(rate.bits_per_symbol)) * SYMBOL_NS
    }

    /// Whether the standard aggregates frames to one receiver into A-MPDUs (802.11n).
    pub fn aggregates(&self) -> bool {
        matches!(self.standard, WifiStandard::N2_4 | WifiStandard::N5)
    }

    /// The PSDU of an A-MPDU of MPDUs of `mpdus` bytes: each behind its delimiter, every one
    /// but the last padded to a multiple of 4 bytes.
    pub fn ampdu_bytes(&self, mpdus: impl IntoIterator<Item = u32>) -> u32 {
        let mut total = 0u32;
        for m in mpdus {
            total = total
                .next_multiple_of(4)
                .saturating_add(DELIMITER_BYTES + m);
        }
        total
    }

    /// The rate of the ACK to a frame sent at `data`: the highest mandatory rate not above its
    /// reference rate.
    pub fn ack_rate(&self, data: Rate) -> Rate {
        MANDATORY
            .iter()
            .rev()
            .find(|m| m.bps <= data.reference_bps)
            .copied()
            .unwrap_or(MANDATORY[0])
    }

    /// Whether an A-MPDU of `bytes` at `rate` is within the limits of one.
    pub fn ampdu_fits(&self, bytes: u32, rate: Rate) -> bool {
        bytes <= MAX_AMPDU_BYTES && self.ppdu_ns(bytes, rate) <= MAX_HT_PPDU_NS
    }

    /// Airtime of the ACK to a frame sent at `data` (a legacy PPDU in every standard here).
    pub fn ack_ns(&self, data: Rate) -> u64 {
        self.control_ns(ACK_BYTES, data)
    }

    /// Airtime of the Block Ack to an A-MPDU sent at `data` (at the ACK's rate).
    pub fn block_ack_ns(&self, data: Rate) -> u64 {
        self.control_ns(BLOCK_ACK_BYTES, data)
    }

    /// Airtime of a control frame of `bytes` (ACK, Block Ack, Block Ack Request) in a
    /// legacy PPDU at the ACK's rate for `data`.
    pub fn control_ns(&self, bytes: u32, data: Rate) -> u64 {
        let rate = self.ack_rate(data);
        let bits = 16 + 8 * u64::from(bytes) + 6;
        LEGACY_PREAMBLE_NS
            + bits.div_ceil(u64::from(rate.bits_per_symbol)) * SYMBOL_NS
            + self.extension_ns
    }

    /// The contention window of attempt `attempt` (0: the first): CWmin, doubled plus one after
    /// each failure, at most CWmax.
    pub fn cw(&self, attempt: u32) -> u32 {
        let grown = (u64::from(self.cw_min) + 1) << attempt.min(16);
        (grown - 1).min(u64::from(self.cw_max)) as u32
    }
}

#[cfg(test)]
mod bit_true;

#[cfg(test)]
mod tests {
    use super::*;

    /// The spectra enumerated from the encoder and its puncturing begin as the tables of the
    /// literature do: rate 1/2 (Proakis, Table 8.2-6: d = 10, 12, 14), the punctured rates
    /// (Haccoun and Bégin, IEEE Trans. Commun. 37(11), 1989; for 5/6, the same puncturing's
    /// published spectrum).
    #[test]
    fn the_codes_spectra_are_the_published_ones() {
        // (code, period b, the first four distances, their path counts a_d, their weights c_d)
        let published: [(Code, f64, [f64; 4], [f64; 4], [f64; 4]); 4] = [
            (
                Half,
                1.0,
                [10., 12., 14., 16.],
                [11., 38., 193., 1331.],
                [36., 211., 1404., 11633.],
            ),
            (
                TwoThirds,
                2.0,
                [6., 7., 8., 9.],
                [1., 16., 48., 158.],
                [3., 70., 285., 1276.],
            ),
            (
                ThreeQuarters,
                3.0,
                [5., 6., 7., 8.],
                [8., 31., 160., 892.],
                [42., 201., 1492., 10469.],
            ),
            (
                FiveSixths,
                5.0,
                [4., 5., 6., 7.],
                [14., 69., 654., 4996.],
                [92., 528., 8694., 79453.],
            ),
        ];
        for (code, period, distances, paths, weights) in published {
            let s = code.spectrum();
            let t = &s.terms[..4];
            assert_eq!(
                (
                    s.period,
                    t.iter().map(|t| t.distance).collect::<Vec<_>>(),
                    t.iter().map(|t| t.paths).collect::<Vec<_>>(),
                    t.iter().map(|t| t.weight).collect::<Vec<_>>(),
                ),
                (period, distances.to_vec(), paths.to_vec(), weights.to_vec()),
                "{code:?}"
            );
        }
    }

    /// The mean backoff of attempt `attempt`: CW/2 slots.
    fn mean_backoff_ns(phy: &Phy, attempt: u32) -> u64 {
        u64::from(phy.cw(attempt)) * phy.slot_ns / 2
    }

    /// 802.11a: a 1500-byte IP packet (MPDU 1536 bytes, 12,310 bits with SERVICE and tail)
    /// at each rate: 20 µs of preamble and SIGNAL and ⌈12310 / N_DBPS⌉ symbols of 4 µs.
    #[test]
    fn a_1500_byte_packet_lasts_what_clause_17_gives_at_every_rate() {
        let a = Phy::of(WifiStandard::A);
        assert_eq!(a.mpdu_bytes(1500), 1536);
        let us: Vec<(u64, u64)> = a
            .rates()
            .iter()
            .map(|r| (r.bps / 1_000_000, a.ppdu_ns(a.mpdu_bytes(1500), *r) / 1000))
            .collect();
        assert_eq!(
            us,
            [
                (6, 2072),
                (9, 1388),
                (12, 1048),
                (18, 704),
                (24, 536),
                (36, 364),
                (48, 280),
                (54, 248)
            ]
        );
        // 802.11g adds the 6 µs signal extension.
        let g = Phy::of(WifiStandard::G);
        assert_eq!(g.ppdu_ns(1536, OFDM_RATES[7]), 254_000);
    }

    #[test]
    fn acks_go_at_the_highest_mandatory_rate_not_above_the_data_rate() {
        let a = Phy::of(WifiStandard::A);
        let ack: Vec<(u64, u64)> = a
            .rates()
            .iter()
            .map(|r| (r.bps / 1_000_000, a.ack_ns(*r) / 1000))
            .collect();
        // 134 bits: 6 symbols at 6 Mbit/s (44 µs), 3 at 12 (32 µs), 2 at 24 (28 µs).
        assert_eq!(
            ack,
            [
                (6, 44),
                (9, 44),
                (12, 32),
                (18, 32),
                (24, 28),
                (36, 28),
                (48, 28),
                (54, 28)
            ]
        );
        // HT MCS 7 (65 Mbit/s) refers to 54: its ACK goes at 24 Mbit/s; MCS 0 at 6.
        let n = Phy::of(WifiStandard::N5);
        assert_eq!(n.ack_rate(HT_RATES[7]).bps, 24_000_000);
        assert_eq!(n.ack_rate(HT_RATES[0]).bps, 6_000_000);
    }

    /// The interframe spaces and windows of Tables 17-21 and 18-5: DIFS 34 µs at 5 GHz and
    /// 50 µs for ERP with the long slot; 802.11n's best-effort AIFS (AIFSN 3, Table 9-155)
    /// a slot more; CW 15, 31, 63, … 1023.
    #[test]
    fn dcf_spaces_and_windows_are_the_standards() {
        assert_eq!(Phy::of(WifiStandard::A).aifs_ns(), 34_000);
        assert_eq!(Phy::of(WifiStandard::G).aifs_ns(), 50_000);
        assert_eq!(Phy::of(WifiStandard::N2_4).aifs_ns(), 70_000);
        assert_eq!(Phy::of(WifiStandard::N5).aifs_ns(), 43_000);
        let a = Phy::of(WifiStandard::A);
        let cw: Vec<u32> = (0..8).map(|k| a.cw(k)).collect();
        assert_eq!(cw, [15, 31, 63, 127, 255, 511, 1023, 1023]);
        assert_eq!(a.cw(u32::MAX), 1023);
        assert_eq!(mean_backoff_ns(&a, 0), 67_500);
    }

    /// One 1500-byte UDP packet after another on idle 802.11a air at 54 Mbit/s: DIFS 34 µs,
    /// mean backoff 67.5 µs, 248 µs of data, SIFS 16 µs and a 28 µs ACK — 393.5 µs a packet,
    /// 30.5 Mbit/s of IP: the saturation throughput usually quoted for one 802.11a pair.
    #[test]
    fn one_saturated_pair_at_54_mbit_s_carries_about_30_mbit_s() {
        let a = Phy::of(WifiStandard::A);
        let rate = OFDM_RATES[7];
        let per_packet = a.aifs_ns()
            + mean_backoff_ns(&a, 0)
            + a.ppdu_ns(a.mpdu_bytes(1500), rate)
            + a.sifs_ns
            + a.ack_ns(rate);
        assert_eq!(per_packet, 393_500);
        let mbps = 1500.0 * 8.0 / (per_packet as f64 / 1e9) / 1e6;
        assert!((mbps - 30.5).abs() < 0.05, "{mbps}");
    }

    /// The SNR each rate needs for 10⁻⁶ error events per bit, rising with the rate; BPSK at
    /// rate 1/2 at 1.4 dB, 64-QAM at 3/4 at 19.2 dB. The ideal choice takes the fastest rate
    /// whose threshold the SNR reaches; a 1000-byte frame is lost 0.8 % of the time there
    /// and 5–11 % 0.8 dB under it. The thresholds are within 0.4 dB of ns-3.37's (its
    /// `TableBasedErrorRateModel`'s, from `ErrorRateModel::CalculateSnr` at 10⁻⁶ as its
    /// IdealWifiManager computes them: measured against libns3-wifi), and within 0.05 dB at
    /// six of 802.11a's eight rates.
    #[test]
    fn rates_need_more_snr_the_faster_they_are_and_the_ideal_choice_follows() {
        let a = Phy::of(WifiStandard::A);
        let t = a.thresholds_db();
        assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
        assert_eq!(*t, [1.42, 4.02, 4.43, 7.03, 10.41, 13.5, 17.91, 19.21]);
        let n = Phy::of(WifiStandard::N5);
        assert_eq!(n.thresholds_db()[7], 20.38);
        let ns3 = [1.46, 3.81, 4.47, 6.98, 10.37, 13.46, 17.86, 19.12];
        let near = t
            .iter()
            .zip(ns3)
            .filter(|(t, r)| (*t - r).abs() < 0.051)
            .count();
        assert!(t.iter().zip(ns3).all(|(t, r)| (t - r).abs() <= 0.4) && near == 6);
        assert!((n.thresholds_db()[7] - 20.77).abs() <= 0.4);
        // The configuration's list of each standard's rates is this table's.
        for standard in [
            WifiStandard::A,
            WifiStandard::G,
            WifiStandard::N2_4,
            WifiStandard::N5,
        ] {
            let kbps: Vec<u64> = Phy::of(standard)
                .rates()
                .iter()
                .map(|r| r.bps / 1000)
                .collect();
            assert_eq!(kbps, standard.data_rates_kbps());
        }
        let ideal = |snr: f64| a.ideal_rate(snr).bps / 1_000_000;
        assert_eq!(
            [-3.0, 1.8, 10.0, 13.3, 17.7, 19.0, 19.3, 40.0].map(ideal),
            [6, 6, 18, 24, 36, 48, 54, 54]
        );
        for (r, &th) in a.rates().iter().zip(t) {
            assert!((r.event_rate(th) - IDEAL_BER).abs() < 0.1 * IDEAL_BER);
            let (at, under) = (r.per(1000, th), r.per(1000, th - 0.8));
            assert!((0.0075..0.0085).contains(&at), "{} at {th}: {at}", r.bps);
            assert!((0.05..0.12).contains(&under), "{} at {th}: {under}", r.bps);
        }
        assert_eq!(a.rates()[0].ber(-40.0), 0.5);
    }

    /// 1500-byte IP packets (1538-byte MPDUs) aggregated at 2.4 GHz: 1544 bytes a subframe
    /// but the last (1542); the PPDU's 5,484 µs bound how many go in one A-MPDU at each MCS
    /// (65,535 bytes would allow 42), and the Block Ack at 24 Mbit/s takes 38 µs (32 at 5 GHz).
    #[test]
    fn an_ampdu_is_bound_by_the_ppdus_time_at_every_mcs() {
        let n = Phy::of(WifiStandard::N2_4);
        assert!(n.aggregates() && !Phy::of(WifiStandard::G).aggregates());
        let mpdu = n.mpdu_bytes(1500);
        assert_eq!(mpdu, 1538);
        assert_eq!(n.ampdu_bytes([mpdu]), 1542);
        assert_eq!(n.ampdu_bytes([mpdu; 28]), 1544 * 27 + 1542);
        assert_eq!(n.ampdu_bytes([30, mpdu]), 36 + 1542);
        let most: Vec<usize> = HT_RATES
            .iter()
            .map(|&r| {
                (1..=MAX_AMPDU_MPDUS)
                    .take_while(|&k| n.ampdu_fits(n.ampdu_bytes(vec![mpdu; k]), r))
                    .last()
                    .unwrap_or(0)
            })
            .collect();
        assert_eq!(most, [2, 5, 8, 11, 17, 22, 25, 28]);
        assert_eq!(n.ppdu_ns(n.ampdu_bytes([mpdu; 28]), HT_RATES[7]), 5_366_000);
        assert_eq!(n.block_ack_ns(HT_RATES[7]), 38_000);
        assert_eq!(Phy::of(WifiStandard::N5).block_ack_ns(HT_RATES[7]), 32_000);
        // A subframe is received at the end of the symbol carrying its last byte.
        assert_eq!(n.through_ns(1542, HT_RATES[7]), 36_000 + 48 * 4_000);
    }

    /// HT mixed format at MCS 7: 36 µs of preamble and ⌈(16 + 8·1538 + 6) / 260⌉ = 48 symbols
    /// for a 1500-byte packet in a QoS data frame (26-byte header).
    #[test]
    fn an_ht_frame_has_the_mixed_format_preamble() {
        let n = Phy::of(WifiStandard::N5);
        assert_eq!(n.mpdu_bytes(1500), 1538);
        assert_eq!(n.ppdu_ns(1538, HT_RATES[7]), 36_000 + 48 * 4_000);
        assert_eq!(n.mpdu_bytes(u32::MAX), u32::MAX);
        let n24 = Phy::of(WifiStandard::N2_4);
        assert_eq!(n24.ppdu_ns(1538, HT_RATES[7]), 36_000 + 48 * 4_000 + 6_000);
    }
}
