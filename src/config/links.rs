//! The `links` section's types: the link model of every pair of vehicles (a default and
//! per-pair overrides), the transmit queue and what a bit error does; also the acoustic
//! choices (absorption, propagation) that `acoustic_modems` shares.

use schemars::JsonSchema;
use serde::Deserialize;

use super::WifiStandard;

/// How an acoustic link finds the sound's path from one end to the other.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Propagation {
    /// One straight path: spreading and absorption along the line between the ends, the
    /// terrain's penetration losses, delay d/c.
    #[default]
    Straight,
    /// The arrivals the beam tracer finds through `world.water.profile` over the terrain:
    /// energy summed within the multipath window, later energy as interference, delay of the
    /// first detectable arrival, no arrival a shadow zone.
    Beam,
}

/// Link models between vehicles, used by the embedded network simulator (`sim::network`;
/// formulas and sources in `model::link` and the book's Link models page).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Links {
    /// The model of every pair not listed in `pairs` (default `ideal`: 1 Gb/s, no delay); it
    /// has no `between`.
    #[serde(default)]
    pub default: LinkModel,
    /// Per-pair overrides: `{between: [a, b], model: ..., <model fields>}` (either direction).
    #[serde(default)]
    pub pairs: Vec<LinkModel>,
    /// Packets each vehicle's transmitter may hold waiting (beyond the one on air); an
    /// arrival finding it full is dropped with QUEUE_FULL (default 64).
    #[serde(default = "default_queue_packets")]
    pub queue_packets: u32,
    /// What a bit error does: `drop` (default) draws each copy against its PER and drops
    /// failures (PACKET_ERROR), delivered copies carry ber 0; `flip` delivers every copy with
    /// its link's BER for the receiving side to flip bits (ROS-NetSim's behaviour).
    #[serde(default)]
    pub errors: ErrorHandling,
}

impl Default for Links {
    fn default() -> Self {
        Links {
            default: LinkModel::default(),
            pairs: Vec::new(),
            queue_packets: default_queue_packets(),
            errors: ErrorHandling::default(),
        }
    }
}

fn default_queue_packets() -> u32 {
    64
}

/// What a bit error does to a packet copy.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ErrorHandling {
    /// Each copy is drawn against its PER; failures are dropped (PACKET_ERROR).
    #[default]
    Drop,
    /// Every copy is delivered with its link's BER, for the receiving side to flip bits.
    Flip,
}

/// One link model. `between` names the pair in `links.pairs` and is not allowed in
/// `links.default`.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LinkModel {
    /// Every packet arrives after `delay_ms`, serialized at `rate_bps`, no errors.
    Ideal {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Serialization rate, bit/s (> 0; default 1e9).
        #[serde(default = "default_ideal_rate")]
        rate_bps: f64,
        /// Delay, ms (≥ 0; default 0).
        #[serde(default)]
        delay_ms: f64,
    },
    /// As `ideal` within `range_m` (and only in line of sight if `los_required`); no link beyond.
    Disk {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Range, metres (> 0). Required.
        range_m: f64,
        /// Serialization rate, bit/s (> 0; default 1e9).
        #[serde(default = "default_ideal_rate")]
        rate_bps: f64,
        /// Delay, ms (≥ 0; default 0).
        #[serde(default)]
        delay_ms: f64,
        /// Only in line of sight (default false).
        #[serde(default)]
        los_required: bool,
    },
    /// No link: every copy is dropped as out of range, and the pair takes no transmitter time
    /// (vehicles without a radio in common, e.g. AUVs that talk through their modems only).
    None {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
    },
    /// Log-distance path loss plus the path's penetration losses → SNR → 802.11-like rate.
    Rf {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Carrier frequency, GHz (> 0; default 2.4).
        #[serde(default = "default_rf_frequency")]
        frequency_ghz: f64,
        /// Transmit power, dBm (default 20).
        #[serde(default = "default_rf_tx_power")]
        tx_power_dbm: f64,
        /// Path loss exponent n of the log-distance model (> 0; default 3).
        #[serde(default = "default_rf_exponent")]
        path_loss_exponent: f64,
        /// Reference distance d0, metres (> 0; default 1).
        #[serde(default = "default_one")]
        reference_distance_m: f64,
        /// Loss at the reference distance, dB; absent: the free-space loss there.
        #[serde(default)]
        reference_loss_db: Option<f64>,
        /// Receiver noise floor, dBm (default −94).
        #[serde(default = "default_rf_noise_floor")]
        noise_floor_dbm: f64,
        /// SNR thresholds → rates, `snr_db` strictly increasing; absent: the 802.11a/g OFDM
        /// table. Not with `mac`, whose standard sets the rates.
        #[serde(default)]
        rates: Option<Vec<RateStep>>,
        /// Delay, ms (≥ 0; default 0).
        #[serde(default)]
        delay_ms: f64,
        /// 802.11 medium access of the link's radios (`80211a`, `80211g`, `80211n-2.4`,
        /// `80211n-5`): the standard's rates (the ideal one for the SNR unless `rate_mbps`),
        /// frames detected from −82 dBm, and every packet sent as the DCF sends a frame on one
        /// medium with every radio of the channel: carrier sense, backoff, ACK, up to 7
        /// attempts before it is dropped (`retry_limit`), collisions. Absent: a packet takes
        /// its bits at the rate, and a failed one is lost at once.
        #[serde(default)]
        mac: Option<WifiStandard>,
        /// With `mac`: the channel, any number naming it. The radios of every link with the
        /// same standard and channel share one medium and contend for it; absent: the
        /// standard's one channel, shared by all its links. Only with `mac`.
        #[serde(default)]
        channel: Option<u16>,
        /// With `mac`: a constant data rate, Mbit/s, one of the standard's (802.11a/g: 6, 9,
        /// 12, 18, 24, 36, 48, 54; 802.11n: 6.5, 13, 19.5, 26, 39, 52, 58.5, 65); absent: the
        /// ideal rate for the link's SNR. Only with `mac`.
        #[serde(default)]
        rate_mbps: Option<f64>,
    },
    /// Underwater acoustic link: sound speed, spreading + absorption + penetration losses,
    /// Wenz noise → SNR → BER/PER of a WHOI Micro-Modem rate; delay d/c; half-duplex and
    /// collisions at the receiver.
    Acoustic {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Micro-Modem rate 0–6 (default 1): modulation, bit rate and coding gain.
        #[serde(default = "default_one_u8")]
        #[schemars(range(max = 6))]
        micromodem_rate: u8,
        /// Bit rate, bit/s (> 0); absent: the rate's nominal bit rate.
        #[serde(default)]
        bit_rate_bps: Option<f64>,
        /// Coding gain, dB; absent: the rate's assumed coding gain.
        #[serde(default)]
        coding_gain_db: Option<f64>,
        /// Centre frequency, kHz (> 0; default 25).
        #[serde(default = "default_acoustic_frequency")]
        frequency_khz: f64,
        /// Bandwidth, kHz (> 0; default 5).
        #[serde(default = "default_acoustic_bandwidth")]
        bandwidth_khz: f64,
        /// Source level, dB re 1 µPa at 1 m (default 185).
        #[serde(default = "default_source_level")]
        source_level_db: f64,
        /// k in TL = k·10·log10(d) + α·d, in [0, 3] (default 1.5).
        #[serde(default = "default_spreading")]
        spreading_factor: f64,
        /// The absorption α: `francois_garrison` (default) or `thorp`.
        #[serde(default)]
        absorption: Absorption,
        /// `straight` (default: one straight path) or `beam` (the beam tracer's arrivals through
        /// `world.water.profile`; see `world.acoustic_paths`).
        #[serde(default)]
        propagation: Propagation,
        /// With `beam`: energy arriving within this many ms (> 0) after the strongest arrival is
        /// signal, later energy interference (ns-3 UAN's FH-FSK rule). Default: one bit time for
        /// FSK (12.5 ms at 80 bit/s), 5 ms for PSK (an assumed equaliser span).
        #[serde(default)]
        multipath_window_ms: Option<f64>,
        /// Capture: of overlapping receptions at one receiver, one at least this many dB
        /// (≥ 0) stronger than each other survives; absent: every overlap destroys both.
        #[serde(default)]
        capture_sir_db: Option<f64>,
    },
}

/// The acoustic absorption model.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Absorption {
    /// Thorp's formula (frequency only).
    Thorp,
    /// Francois and Garrison's (frequency, temperature, salinity, pH, depth).
    #[default]
    FrancoisGarrison,
}

/// One row of a rate table: `rate_bps` is usable from `snr_db` up.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    /// SNR from which the rate is usable, dB. Required.
    pub snr_db: f64,
    /// The rate, bit/s (> 0). Required.
    pub rate_bps: f64,
}

fn default_ideal_rate() -> f64 {
    1e9
}
fn default_rf_frequency() -> f64 {
    2.4
}
fn default_rf_tx_power() -> f64 {
    20.0
}
fn default_rf_exponent() -> f64 {
    3.0
}
pub(super) fn default_one() -> f64 {
    1.0
}
fn default_one_u8() -> u8 {
    1
}
fn default_rf_noise_floor() -> f64 {
    -94.0
}
pub(super) fn default_acoustic_frequency() -> f64 {
    25.0
}
pub(super) fn default_acoustic_bandwidth() -> f64 {
    5.0
}
pub(super) fn default_source_level() -> f64 {
    185.0
}
pub(super) fn default_spreading() -> f64 {
    1.5
}

impl Default for LinkModel {
    fn default() -> Self {
        LinkModel::Ideal {
            between: None,
            rate_bps: 1e9,
            delay_ms: 0.0,
        }
    }
}

impl LinkModel {
    /// The pair a `links.pairs` entry names.
    pub fn between(&self) -> Option<&[String; 2]> {
        match self {
            LinkModel::Ideal { between, .. }
            | LinkModel::Disk { between, .. }
            | LinkModel::None { between }
            | LinkModel::Rf { between, .. }
            | LinkModel::Acoustic { between, .. } => between.as_ref(),
        }
    }
}
