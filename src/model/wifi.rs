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
//! - Before each attempt a sender waits DIFS = SIFS + 2 slots of idle air, then a backoff of
//!   a uniform number of slots in `[0, CW]`; CW starts at CWmin and doubles plus one after each
//!   failed attempt up to CWmax; after [`RETRY_LIMIT`] attempts the frame is dropped.
//!
//! Not modelled here: RTS/CTS, A-MPDU aggregation and block acknowledgements, 40 MHz channels,
//! several spatial streams, short guard intervals, DSSS rates.

use crate::config::WifiStandard;

/// Attempts of a frame before it is dropped: dot11ShortRetryLimit (frames below the RTS
/// threshold, which is every frame without RTS/CTS).
pub const RETRY_LIMIT: u32 = 7;
/// Bytes of an ACK frame (frame control, duration, receiver address, FCS).
pub const ACK_BYTES: u32 = 14;
/// LLC/SNAP header in front of an IP packet in an 802.11 data frame.
pub const LLC_SNAP_BYTES: u32 = 8;
/// Frame check sequence.
pub const FCS_BYTES: u32 = 4;

const SYMBOL_NS: u64 = 4_000;
/// Legacy preamble (short and long training, 16 µs) and SIGNAL (4 µs).
const LEGACY_PREAMBLE_NS: u64 = 20_000;
/// HT mixed format: legacy preamble and L-SIG (20 µs), HT-SIG (8), HT-STF (4), one HT-LTF (4).
const HT_PREAMBLE_NS: u64 = 36_000;
/// ERP-OFDM and HT at 2.4 GHz: the signal extension after the last symbol.
const SIGNAL_EXTENSION_NS: u64 = 6_000;

/// One data rate: its PHY rate (bit/s), data bits per OFDM symbol and minimum sensitivity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub bps: u64,
    pub bits_per_symbol: u32,
    /// The non-HT rate whose mandatory rates bound the ACK's (the rate itself for a/g).
    pub reference_bps: u64,
    /// The standard's minimum receiver sensitivity (dBm): the input level at which a receiver
    /// must decode 1000-byte PSDUs with a PER of at most 10 %.
    pub sensitivity_dbm: i32,
}

const fn ofdm(mbps: u64, bits_per_symbol: u32, sensitivity_dbm: i32) -> Rate {
    Rate {
        bps: mbps * 1_000_000,
        bits_per_symbol,
        reference_bps: mbps * 1_000_000,
        sensitivity_dbm,
    }
}

const fn ht(kbps: u64, bits_per_symbol: u32, reference_mbps: u64, sensitivity_dbm: i32) -> Rate {
    Rate {
        bps: kbps * 1_000,
        bits_per_symbol,
        reference_bps: reference_mbps * 1_000_000,
        sensitivity_dbm,
    }
}

/// 802.11a/g rates (Tables 17-4 and 17-18): 6 to 54 Mbit/s.
const OFDM_RATES: [Rate; 8] = [
    ofdm(6, 24, -82),
    ofdm(9, 36, -81),
    ofdm(12, 48, -79),
    ofdm(18, 72, -77),
    ofdm(24, 96, -74),
    ofdm(36, 144, -70),
    ofdm(48, 192, -66),
    ofdm(54, 216, -65),
];
/// 802.11n MCS 0–7, 20 MHz, 800 ns guard interval (Tables 19-27 and 19-23), with the non-HT
/// reference rate of each (the OFDM rate of the same modulation and coding).
const HT_RATES: [Rate; 8] = [
    ht(6_500, 26, 6, -82),
    ht(13_000, 52, 12, -79),
    ht(19_500, 78, 18, -77),
    ht(26_000, 104, 24, -74),
    ht(39_000, 156, 36, -70),
    ht(52_000, 208, 48, -66),
    ht(58_500, 234, 54, -65),
    ht(65_000, 260, 54, -64),
];
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
    /// The standard's timing: slot 9 µs (802.11g: the short slot of a BSS of ERP stations
    /// only), SIFS 16 µs at 5 GHz and 10 µs at 2.4 GHz, CW from 15 to 1023.
    pub fn of(standard: WifiStandard) -> Phy {
        let (sifs_ns, preamble_ns, extension_ns, mac_header_bytes) = match standard {
            WifiStandard::A => (16_000, LEGACY_PREAMBLE_NS, 0, 24),
            WifiStandard::G => (10_000, LEGACY_PREAMBLE_NS, SIGNAL_EXTENSION_NS, 24),
            WifiStandard::N5 => (16_000, HT_PREAMBLE_NS, 0, 26),
            WifiStandard::N2_4 => (10_000, HT_PREAMBLE_NS, SIGNAL_EXTENSION_NS, 26),
        };
        Phy {
            standard,
            slot_ns: 9_000,
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

    /// The fastest rate a receiver decodes at `level_dbm` (its minimum sensitivity at or below
    /// the level), if any.
    pub fn rate_for(&self, level_dbm: f64) -> Option<Rate> {
        self.rates()
            .iter()
            .rev()
            .find(|r| f64::from(r.sensitivity_dbm) <= level_dbm)
            .copied()
    }

    /// The standard's rate of `bps` bit/s, if it has one.
    pub fn rate(&self, bps: f64) -> Option<Rate> {
        self.rates().iter().find(|r| r.bps as f64 == bps).copied()
    }

    /// DCF interframe space: SIFS and two slots.
    pub fn difs_ns(&self) -> u64 {
        self.sifs_ns + 2 * self.slot_ns
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

    /// Airtime of the ACK to a frame sent at `data` (a legacy PPDU in every standard here).
    pub fn ack_ns(&self, data: Rate) -> u64 {
        let rate = self.ack_rate(data);
        let bits = 16 + 8 * u64::from(ACK_BYTES) + 6;
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
mod tests {
    use super::*;

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
    /// 28 µs for ERP with the short slot; CW 15, 31, 63, … 1023.
    #[test]
    fn dcf_spaces_and_windows_are_the_standards() {
        assert_eq!(Phy::of(WifiStandard::A).difs_ns(), 34_000);
        assert_eq!(Phy::of(WifiStandard::G).difs_ns(), 28_000);
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
        let per_packet = a.difs_ns()
            + mean_backoff_ns(&a, 0)
            + a.ppdu_ns(a.mpdu_bytes(1500), rate)
            + a.sifs_ns
            + a.ack_ns(rate);
        assert_eq!(per_packet, 393_500);
        let mbps = 1500.0 * 8.0 / (per_packet as f64 / 1e9) / 1e6;
        assert!((mbps - 30.5).abs() < 0.05, "{mbps}");
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
