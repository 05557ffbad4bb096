//! Link models: what one transmission from vehicle A experiences at vehicle B, given the
//! geometry of the window's ChannelData (distance from `node_list`, LOS flag, the penetration
//! losses of the path's hop points), read through [`ChannelGeometry`]. Pure functions of
//! configuration and geometry; the embedded network simulator ([`crate::sim::network`]) adds
//! time (queues, serialization) and the acoustic medium ([`crate::model::medium`]) half-duplex
//! and collisions.
//!
//! | model | usable when | rate | delay | bit errors |
//! |---|---|---|---|---|
//! | `ideal` | always | `rate_bps` | `delay_ms` | none |
//! | `disk` | d ≤ `range_m` (and LOS if `los_required`) | `rate_bps` | `delay_ms` | none |
//! | `rf` | SNR ≥ lowest threshold of the rate table (with `mac`: level ≥ −82 dBm) | highest rate whose threshold ≤ SNR (with `mac`: `rate_mbps`, or the ideal rate for the SNR) | `delay_ms` + d/c₀ | waterfall below (with `mac`: the rate's coded BER) |
//! | `acoustic` | coded Eb/N0 ≥ 0 dB | Micro-Modem rate (or `bit_rate_bps`) | d / c(T, S, depth) | BFSK / BPSK in AWGN |
//! | `acoustic`, `propagation: beam` | as above, SNR from the arrivals; none: out of range | as above | first arrival detectable alone | as above |
//!
//! **rf** — log-distance path loss (Rappaport, *Wireless Communications*, eq. 4.68):
//! PL(d) = PL(d₀) + 10 n log10(d/d₀), d ≥ d₀, with PL(d₀) = 20 log10(4π d₀ f / c₀) (free space,
//! Friis) unless `reference_loss_db` is given; defaults f = 2.4 GHz, n = 3.0 (Rappaport's
//! Table 4.2 gives 2.7–3.5 for urban cellular, 2 for free space), d₀ = 1 m, 20 dBm.
//! SNR = P_tx − PL(d) − L_hops − N, where L_hops is the sum of the path's penetration losses
//! (0 in LOS) and N the noise floor, default −94 dBm = −174 dBm/Hz + 10 log10(20 MHz) + 7 dB
//! noise figure. The default rate table is 802.11a/g OFDM: 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s
//! from 9, 10, 12, 14, 17, 21, 25, 26 dB — the minimum sensitivities of IEEE 802.11-2016
//! Table 17-18 (−82 … −65 dBm) over the −91 dBm noise floor they assume (10 dB noise figure,
//! 20 MHz). The standard's sensitivity is where a 1000-byte PSDU has PER 10 %; the model turns
//! that into an equivalent BER b₀ = 1 − 0.9^(1/8000) ≈ 1.3·10⁻⁵ at the threshold and lets it
//! fall one decade per dB above it (the steep waterfall of coded OFDM), BER = b₀·10^−(SNR−thr),
//! so PER = 1 − (1 − BER)^bits for any length. With `mac` (an 802.11 standard) the rates are
//! the standard's ([`crate::model::wifi`]): a frame is detected from −82 dBm, the rate is
//! `rate_mbps` or the fastest whose BER at the SNR is at most 10⁻⁶, and the BER is that rate's
//! from its modulation and code ([`crate::model::wifi::Rate::ber`]); the network simulator
//! sends the frames on one medium per channel ([`crate::model::wifi_medium`]).
//!
//! **acoustic** — see [`crate::model::acoustic`] for every formula. Sound speed c at the mean
//! depth of the two ends (fixed if configured; straight path, no ray bending); absorption α
//! (Francois–Garrison by default, or Thorp) at the carrier and mean depth; loss
//! TL = k·10·log10(d) + α·d + L_hops (k = 1.5); Wenz noise N(f) over bandwidth B;
//! SNR = SL − TL − (N + 10 log10 B); Eb/N0 = SNR·B/R; BER from the rate's modulation and
//! coding gain. Defaults: 25 kHz carrier, 5 kHz band (the Micro-Modem's), SL 185 dB re µPa at
//! 1 m (a typical Micro-Modem transducer), rate 1 (PSK, 250 bit/s). A link whose coded Eb/N0 is
//! below 0 dB (BER ≳ 0.08) is out of range; a signal is heard, and interferes, wherever it is
//! decodable or its in-band SNR is ≥ 0 dB ([`Budget::audible`], [`crate::model::medium`]).
//!
//! **acoustic, `propagation: beam`** — the pair's arrivals from the beam tracer
//! ([`Geometry::arrivals`]) replace the straight path. Per arrival i the energy
//! Eᵢ = (Aᵢ · 10^(−α·pathᵢ/20 000))² (amplitude re the source at 1 m, α in dB/km at the carrier
//! and mean depth, pathᵢ in m along the ray). The strongest arrival sets t_max; the signal
//! S = Σ Eᵢ over t_max ≤ tᵢ < t_max + T_w and every other arrival's energy is interference I
//! (ns-3 UAN's `UanPhyCalcSinrFhFsk`: energy within one symbol time after the strongest tap is
//! signal, the rest noise). T_w is `multipath_window_ms`, default one bit time for FH-FSK
//! (12.5 ms at Micro-Modem rate 0) and 5 ms for PSK (an assumed equaliser span).
//! SNR = 10 log10(SL·S / (N·B + SL·I)) in linear powers, level = SL + 10 log10 S; the delay is
//! that of the first arrival whose own in-band SNR (SL·Eᵢ / N·B) is ≥ 0 dB (the strongest
//! one's if none is). The terrain's penetration losses do not apply: the tracer's rays
//! already follow the bathymetry. A pair traced with no arrival is a shadow zone: not usable,
//! not audible (OUT_OF_RANGE). A pair the ChannelData did not trace (a physics simulator
//! without a tracer) takes the straight path, flagged in [`Budget::straight_fallback`].

use crate::config::{Absorption, LinkModel, Propagation, RateStep, SoundSpeed, Water};
use crate::model::acoustic::{self, Modulation, NoiseConditions};
use crate::model::wifi::{Phy, Rate};
use crate::wire::channel::{Arrival, ChannelView};

/// Speed of light (m/s).
pub const C0: f64 = 299_792_458.0;

/// The geometry of one directed pair, from ChannelData.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry<'a> {
    pub distance_m: f64,
    pub los: bool,
    /// Sum of the path's penetration losses (dB), 0 in LOS.
    pub hop_loss_db: f64,
    /// Mean depth of the two ends (m, positive down; an end above the surface counts as 0).
    pub mean_depth_m: f64,
    /// The beam tracer's arrivals for the pair (empty: a shadow zone); `None` when the
    /// ChannelData did not trace it.
    pub arrivals: Option<&'a [Arrival]>,
}

/// What a transmission over one link experiences.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// False: no link (out of range); a copy sent over it is dropped with OUT_OF_RANGE.
    pub usable: bool,
    /// Serialization rate (bit/s) of the transmitter on this link.
    pub rate_bps: f64,
    /// From the end of transmission to the end of reception (s).
    pub delay_s: f64,
    /// Bit error rate of a received copy, as independent errors: a copy of `n` bits arrives
    /// intact with `(1 − ber)^n`. For 802.11's coded rates, whose decoding errors come in
    /// bursts, the decoder's error events per bit ([`crate::model::wifi::Rate::event_rate`]).
    pub ber: f64,
    /// Received level (dB: re 1 µPa for acoustic, dBm for rf; 0 for ideal/disk); compared
    /// between overlapping receptions for capture.
    pub level_db: f64,
    /// In-band SNR (dB; +∞ for ideal/disk).
    pub snr_db: f64,
    /// Shared acoustic medium: half-duplex and collisions apply.
    pub acoustic: bool,
    /// Acoustic only: in-band SNR ≥ 0 dB, so heard at the receiver (and interfering there) even
    /// where it cannot be decoded.
    pub audible: bool,
    /// Acoustic `propagation: beam` only: the pair was not traced, so the straight path stood
    /// in for its arrivals.
    pub straight_fallback: bool,
}

/// The 802.11a/g OFDM rate table (see the module docs).
pub fn default_rf_rates() -> Vec<RateStep> {
    [
        (9.0, 6e6),
        (10.0, 9e6),
        (12.0, 12e6),
        (14.0, 18e6),
        (17.0, 24e6),
        (21.0, 36e6),
        (25.0, 48e6),
        (26.0, 54e6),
    ]
    .into_iter()
    .map(|(snr_db, rate_bps)| RateStep { snr_db, rate_bps })
    .collect()
}

/// BER at an rf rate's threshold: a 1000-byte packet has PER 10 % there.
pub fn rf_threshold_ber() -> f64 {
    -((0.9f64).ln() / 8000.0).exp_m1()
}

/// Free-space loss (dB) at `d_m` and `f_hz`: 20 log10(4π d f / c₀).
pub fn free_space_loss_db(d_m: f64, f_hz: f64) -> f64 {
    20.0 * (4.0 * std::f64::consts::PI * d_m * f_hz / C0).log10()
}

/// A configured link model, resolved once (defaults filled in).
#[derive(Debug, Clone, PartialEq)]
pub enum LinkSpec {
    /// No link: nothing crosses, and the pair adds no transmitter time.
    None,
    Ideal {
        rate_bps: f64,
        delay_s: f64,
    },
    Disk {
        range_m: f64,
        rate_bps: f64,
        delay_s: f64,
        los_required: bool,
    },
    Rf {
        tx_power_dbm: f64,
        exponent: f64,
        d0_m: f64,
        pl0_db: f64,
        noise_floor_dbm: f64,
        rates: Vec<RateStep>,
        delay_s: f64,
        /// 802.11 medium access: the standard's rates, each with its coded BER, and the DCF on
        /// a medium shared per channel in the network simulator.
        mac: Option<Phy>,
        /// With `mac`: the channel its radios share with every link of the same standard and
        /// channel (0 when the scenario names none).
        channel: u16,
        /// With `mac`: the constant data rate (None: the ideal rate for the SNR).
        constant: Option<Rate>,
    },
    Acoustic(AcousticSpec),
}

#[derive(Debug, Clone, PartialEq)]
pub struct AcousticSpec {
    pub modulation: Modulation,
    pub bit_rate_bps: f64,
    pub coding_gain_db: f64,
    pub frequency_khz: f64,
    pub bandwidth_hz: f64,
    pub source_level_db: f64,
    pub spreading_factor: f64,
    pub absorption: Absorption,
    pub capture_sir_db: Option<f64>,
    pub water: Water,
    /// `straight` or `beam` (see the module docs).
    pub propagation: Propagation,
    /// With `beam`: the multipath window T_w (s) after the strongest arrival.
    pub multipath_window_s: f64,
}

/// Assumed equaliser span of a PSK receiver (s): its default multipath window.
pub const PSK_MULTIPATH_WINDOW_S: f64 = 5e-3;

/// The multipath window (s): `configured_ms` if given, else one bit time for FH-FSK and
/// [`PSK_MULTIPATH_WINDOW_S`] for PSK.
pub fn multipath_window_s(
    configured_ms: Option<f64>,
    modulation: Modulation,
    bit_rate_bps: f64,
) -> f64 {
    match (configured_ms, modulation) {
        (Some(ms), _) => ms / 1e3,
        (None, Modulation::FhFsk) => 1.0 / bit_rate_bps,
        (None, Modulation::Psk) => PSK_MULTIPATH_WINDOW_S,
    }
}

impl AcousticSpec {
    /// Sound speed (m/s) at `depth_m`.
    pub fn sound_speed(&self, depth_m: f64) -> f64 {
        match self.water.sound_speed {
            SoundSpeed::Fixed(c) => c,
            SoundSpeed::Model(_) => acoustic::sound_speed_mackenzie(
                self.water.temperature_c,
                self.water.salinity_ppt,
                depth_m,
            ),
        }
    }

    /// Absorption (dB/km) at `depth_m`.
    pub fn absorption_db_per_km(&self, depth_m: f64) -> f64 {
        let w = &self.water;
        match self.absorption {
            Absorption::Thorp => acoustic::absorption_thorp_db_per_km(self.frequency_khz),
            Absorption::FrancoisGarrison => acoustic::absorption_francois_garrison_db_per_km(
                self.frequency_khz,
                w.temperature_c,
                w.salinity_ppt,
                depth_m,
                w.ph,
            ),
        }
    }

    pub fn noise_psd_db(&self) -> f64 {
        acoustic::noise_psd_db(
            self.frequency_khz,
            NoiseConditions {
                shipping: self.water.shipping,
                wind_mps: self.water.wind_mps,
            },
        )
    }
}

impl LinkSpec {
    /// Resolves a configured model (validated: every number finite and in range).
    pub fn from_config(model: &LinkModel, water: &Water) -> LinkSpec {
        match model {
            LinkModel::None { .. } => LinkSpec::None,
            LinkModel::Ideal {
                rate_bps, delay_ms, ..
            } => LinkSpec::Ideal {
                rate_bps: *rate_bps,
                delay_s: delay_ms / 1e3,
            },
            LinkModel::Disk {
                range_m,
                rate_bps,
                delay_ms,
                los_required,
                ..
            } => LinkSpec::Disk {
                range_m: *range_m,
                rate_bps: *rate_bps,
                delay_s: delay_ms / 1e3,
                los_required: *los_required,
            },
            LinkModel::Rf {
                frequency_ghz,
                tx_power_dbm,
                path_loss_exponent,
                reference_distance_m,
                reference_loss_db,
                noise_floor_dbm,
                rates,
                delay_ms,
                mac,
                channel,
                rate_mbps,
                ..
            } => LinkSpec::Rf {
                tx_power_dbm: *tx_power_dbm,
                exponent: *path_loss_exponent,
                d0_m: *reference_distance_m,
                pl0_db: reference_loss_db.unwrap_or_else(|| {
                    free_space_loss_db(*reference_distance_m, frequency_ghz * 1e9)
                }),
                noise_floor_dbm: *noise_floor_dbm,
                rates: rates
                    .clone()
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(default_rf_rates),
                delay_s: delay_ms / 1e3,
                mac: mac.map(Phy::of),
                channel: channel.unwrap_or(0),
                constant: mac
                    .zip(*rate_mbps)
                    .and_then(|(m, r)| Phy::of(m).rate(r * 1e6)),
            },
            LinkModel::Acoustic {
                micromodem_rate,
                bit_rate_bps,
                coding_gain_db,
                frequency_khz,
                bandwidth_khz,
                source_level_db,
                spreading_factor,
                absorption,
                capture_sir_db,
                propagation,
                multipath_window_ms,
                ..
            } => {
                let rate =
                    acoustic::micromodem_rate(*micromodem_rate).unwrap_or(acoustic::ModemRate {
                        modulation: Modulation::Psk,
                        bit_rate_bps: 250.0,
                        coding_gain_db: 3.0,
                    });
                let bit_rate_bps = bit_rate_bps.unwrap_or(rate.bit_rate_bps);
                LinkSpec::Acoustic(AcousticSpec {
                    modulation: rate.modulation,
                    bit_rate_bps,
                    coding_gain_db: coding_gain_db.unwrap_or(rate.coding_gain_db),
                    frequency_khz: *frequency_khz,
                    bandwidth_hz: bandwidth_khz * 1e3,
                    source_level_db: *source_level_db,
                    spreading_factor: *spreading_factor,
                    absorption: *absorption,
                    capture_sir_db: *capture_sir_db,
                    water: water.clone(),
                    propagation: *propagation,
                    multipath_window_s: multipath_window_s(
                        *multipath_window_ms,
                        rate.modulation,
                        bit_rate_bps,
                    ),
                })
            }
        }
    }

    pub fn is_acoustic(&self) -> bool {
        matches!(self, LinkSpec::Acoustic(_))
    }

    /// What a transmission over this link experiences with geometry `g`.
    pub fn budget(&self, g: &Geometry) -> Budget {
        let clear = |rate_bps: f64, delay_s: f64, usable: bool| Budget {
            usable,
            rate_bps,
            delay_s,
            ber: 0.0,
            level_db: 0.0,
            snr_db: f64::INFINITY,
            acoustic: false,
            audible: false,
            straight_fallback: false,
        };
        match self {
            // An infinite rate: the copy takes no time of the transmitter's.
            LinkSpec::None => Budget {
                snr_db: f64::NEG_INFINITY,
                ..clear(f64::INFINITY, 0.0, false)
            },
            LinkSpec::Ideal { rate_bps, delay_s } => clear(*rate_bps, *delay_s, true),
            LinkSpec::Disk {
                range_m,
                rate_bps,
                delay_s,
                los_required,
            } => clear(
                *rate_bps,
                *delay_s,
                g.distance_m <= *range_m && (g.los || !los_required),
            ),
            LinkSpec::Rf {
                tx_power_dbm,
                exponent,
                d0_m,
                pl0_db,
                noise_floor_dbm,
                rates,
                delay_s,
                mac,
                constant,
                ..
            } => {
                let pl = pl0_db + 10.0 * exponent * (g.distance_m.max(*d0_m) / d0_m).log10();
                let level = tx_power_dbm - pl - g.hop_loss_db;
                let snr = level - noise_floor_dbm;
                if let Some(phy) = mac {
                    // 802.11: detected from −82 dBm, the constant rate or the ideal rate for the
                    // SNR, and its decoder's error events per bit there.
                    let rate = constant.unwrap_or_else(|| phy.ideal_rate(snr));
                    let usable = phy.detects(level);
                    return Budget {
                        usable,
                        rate_bps: rate.bps as f64,
                        delay_s: delay_s + g.distance_m / C0,
                        ber: if usable { rate.event_rate(snr) } else { 0.5 },
                        level_db: level,
                        snr_db: snr,
                        acoustic: false,
                        audible: false,
                        straight_fallback: false,
                    };
                }
                // The rate and how far above its threshold the link is (dB), and the lowest rate.
                let step = rates
                    .iter()
                    .rev()
                    .find(|r| r.snr_db <= snr)
                    .map(|r| (r.rate_bps, snr - r.snr_db));
                let lowest = rates.first().map_or(1e6, |r| r.rate_bps);
                let (usable, rate, ber) = match step {
                    Some((rate, above_db)) => (
                        true,
                        rate,
                        (rf_threshold_ber() * 10f64.powf(-above_db)).min(0.5),
                    ),
                    None => (false, lowest, 0.5),
                };
                Budget {
                    usable,
                    rate_bps: rate,
                    delay_s: delay_s + g.distance_m / C0,
                    ber,
                    level_db: level,
                    snr_db: snr,
                    acoustic: false,
                    audible: false,
                    straight_fallback: false,
                }
            }
            LinkSpec::Acoustic(a) => match (a.propagation, g.arrivals) {
                (Propagation::Beam, Some(arrivals)) => a.beam_budget(g, arrivals),
                (Propagation::Beam, None) => Budget {
                    straight_fallback: true,
                    ..a.straight_budget(g)
                },
                (Propagation::Straight, _) => a.straight_budget(g),
            },
        }
    }

    /// The 802.11 timing of an rf link with `mac`.
    pub fn mac(&self) -> Option<&Phy> {
        match self {
            LinkSpec::Rf { mac, .. } => mac.as_ref(),
            _ => None,
        }
    }

    /// An rf link with `mac` whose rate is the ideal choice for its SNR (no constant rate).
    pub fn ideal_rate_choice(&self) -> bool {
        matches!(
            self,
            LinkSpec::Rf {
                mac: Some(_),
                constant: None,
                ..
            }
        )
    }

    /// The 802.11 medium of an rf link with `mac` (its standard and channel), and its
    /// receivers' noise floor (dBm).
    pub fn medium(&self) -> Option<((crate::config::WifiStandard, u16), f64)> {
        match self {
            LinkSpec::Rf {
                mac: Some(phy),
                channel,
                noise_floor_dbm,
                ..
            } => Some(((phy.standard, *channel), *noise_floor_dbm)),
            _ => None,
        }
    }

    /// Capture threshold of an acoustic link (None: every overlap destroys both).
    pub fn capture_sir_db(&self) -> Option<f64> {
        match self {
            LinkSpec::Acoustic(a) => a.capture_sir_db,
            _ => None,
        }
    }
}

impl AcousticSpec {
    /// The straight path's budget (see the module docs).
    fn straight_budget(&self, g: &Geometry) -> Budget {
        let depth = g.mean_depth_m.max(0.0);
        let c = self.sound_speed(depth);
        let tl = acoustic::transmission_loss_db(
            g.distance_m,
            self.spreading_factor,
            self.absorption_db_per_km(depth),
        ) + g.hop_loss_db;
        let snr = acoustic::snr_db(
            self.source_level_db,
            tl,
            self.noise_psd_db(),
            self.bandwidth_hz,
        );
        let ebn0 = acoustic::eb_n0(snr, self.bandwidth_hz, self.bit_rate_bps);
        let coded = ebn0 * 10f64.powf(self.coding_gain_db / 10.0);
        Budget {
            usable: coded >= 1.0,
            rate_bps: self.bit_rate_bps,
            delay_s: acoustic::propagation_delay_s(g.distance_m, c),
            ber: acoustic::ber(self.modulation, ebn0, self.coding_gain_db),
            level_db: self.source_level_db - tl,
            snr_db: snr,
            acoustic: true,
            audible: snr >= 0.0,
            straight_fallback: false,
        }
    }

    /// The budget from the pair's arrivals (see the module docs); no arrival: a shadow zone.
    fn beam_budget(&self, g: &Geometry, arrivals: &[Arrival]) -> Budget {
        let depth = g.mean_depth_m.max(0.0);
        let alpha = self.absorption_db_per_km(depth);
        let energy = |x: &Arrival| {
            let a = x.amplitude * 10f64.powf(-alpha * x.path_m / 20_000.0);
            a * a
        };
        // The strongest arrival (the first of equals).
        let mut strongest: Option<(f64, f64)> = None;
        for x in arrivals {
            let e = energy(x);
            if strongest.is_none_or(|(_, best)| e > best) {
                strongest = Some((x.delay_s, e));
            }
        }
        let Some((t_max, _)) = strongest else {
            return Budget {
                usable: false,
                rate_bps: self.bit_rate_bps,
                delay_s: 0.0,
                ber: 0.5,
                level_db: f64::NEG_INFINITY,
                snr_db: f64::NEG_INFINITY,
                acoustic: true,
                audible: false,
                straight_fallback: false,
            };
        };
        let (mut signal, mut interference) = (0.0, 0.0);
        for x in arrivals {
            if x.delay_s >= t_max && x.delay_s < t_max + self.multipath_window_s {
                signal += energy(x);
            } else {
                interference += energy(x);
            }
        }
        let source = 10f64.powf(self.source_level_db / 10.0);
        let noise = 10f64.powf((self.noise_psd_db() + 10.0 * self.bandwidth_hz.log10()) / 10.0);
        let snr = 10.0 * (source * signal / (noise + source * interference)).log10();
        // The first arrival a receiver detects on its own: in-band SNR ≥ 0 dB.
        let delay_s = arrivals
            .iter()
            .filter(|x| source * energy(x) >= noise)
            .map(|x| x.delay_s)
            .fold(None, |first: Option<f64>, t| {
                Some(first.map_or(t, |f| f.min(t)))
            })
            .unwrap_or(t_max);
        let ebn0 = acoustic::eb_n0(snr, self.bandwidth_hz, self.bit_rate_bps);
        let coded = ebn0 * 10f64.powf(self.coding_gain_db / 10.0);
        Budget {
            usable: coded >= 1.0,
            rate_bps: self.bit_rate_bps,
            delay_s,
            ber: acoustic::ber(self.modulation, ebn0, self.coding_gain_db),
            level_db: self.source_level_db + 10.0 * signal.log10(),
            snr_db: snr,
            acoustic: true,
            audible: snr >= 0.0,
            straight_fallback: false,
        }
    }
}

/// The geometry of one window, read from its checked ChannelData ([`ChannelView`]): positions,
/// and per pair its LOS flag and the sum of its hop losses. The one way the model reads
/// ChannelData geometry (link budgets, the acoustic medium, the modems).
#[derive(Debug, Clone, Default)]
pub struct ChannelGeometry {
    positions: Vec<[f64; 3]>,
    /// (los, hop loss) per unordered pair (i < j), at [`pair_index`]; (true, 0) for a pair the
    /// ChannelData has no path for.
    paths: Vec<(bool, f64)>,
    /// Where each pair's arrivals lie in `arrivals`, at [`pair_index`]; `None`: not traced.
    traced: Vec<Option<(u32, u32)>>,
    /// Every traced pair's arrivals, one pair after the other.
    arrivals: Vec<Arrival>,
}

/// Index of the unordered pair `a < b` among `n` vehicles, in ChannelData's order (0,1), (0,2),
/// …, (1,2), ….
pub fn pair_index(a: usize, b: usize, n: usize) -> usize {
    a * n - a * (a + 1) / 2 + (b - a - 1)
}

impl ChannelGeometry {
    /// The geometry of a checked ChannelData; non-finite hop losses count as 0.
    pub fn new(view: &ChannelView) -> ChannelGeometry {
        let mut g = ChannelGeometry::default();
        g.update(view);
        g
    }

    /// Replaces the geometry with `view`'s, reusing the memory already held.
    pub fn update(&mut self, view: &ChannelView) {
        let n = view.vehicles();
        self.positions.clear();
        self.positions.extend((0..n).map(|i| view.position(i)));
        self.paths.clear();
        self.paths.resize(n * n.saturating_sub(1) / 2, (true, 0.0));
        self.traced.clear();
        self.traced.resize(self.paths.len(), None);
        self.arrivals.clear();
        for p in view.paths() {
            let i = pair_index(p.a, p.b, n);
            self.paths[i] = (p.los, p.losses_db().filter(|l| l.is_finite()).sum());
            self.traced[i] = p.traced().then(|| {
                let start = self.arrivals.len() as u32;
                self.arrivals.extend(p.arrivals());
                (start, self.arrivals.len() as u32)
            });
        }
    }

    /// Number of pairs the ChannelData did not trace (their acoustic `beam` links take the
    /// straight path).
    pub fn untraced_pairs(&self) -> usize {
        self.traced.iter().filter(|t| t.is_none()).count()
    }

    /// No ChannelData at all (a coordinator without a physics side): every vehicle at the
    /// origin, every pair in LOS.
    pub fn unknown() -> ChannelGeometry {
        ChannelGeometry::default()
    }

    /// Vehicle positions (empty when unknown).
    pub fn positions(&self) -> &[[f64; 3]] {
        &self.positions
    }

    /// Geometry of the pair: distance between the vehicles (`f64::MAX` if not finite), LOS and
    /// hop losses from its path (LOS with no loss if the ChannelData has no path for it), the
    /// mean of the two ends' depths (an end above the surface counts as 0 m deep), and the
    /// arrivals if the pair was traced (the same for both directions: reciprocity).
    pub fn between(&self, a: usize, b: usize) -> Geometry<'_> {
        let pa = self.positions.get(a).copied().unwrap_or_default();
        let pb = self.positions.get(b).copied().unwrap_or_default();
        let d =
            ((pa[0] - pb[0]).powi(2) + (pa[1] - pb[1]).powi(2) + (pa[2] - pb[2]).powi(2)).sqrt();
        let n = self.positions.len();
        let (lo, hi) = (a.min(b), a.max(b));
        let ((los, hop_loss_db), traced) = if lo < hi && hi < n {
            let i = pair_index(lo, hi, n);
            (self.paths[i], self.traced[i])
        } else {
            ((true, 0.0), None)
        };
        Geometry {
            distance_m: if d.is_finite() { d } else { f64::MAX },
            los,
            hop_loss_db,
            mean_depth_m: ((-pa[2]).max(0.0) + (-pb[2]).max(0.0)) / 2.0,
            arrivals: traced.map(|(s, e)| &self.arrivals[s as usize..e as usize]),
        }
    }
}

#[cfg(test)]
impl LinkSpec {
    /// A 2.4 GHz, 20 dBm, exponent-3 rf link without delay, for tests.
    #[cfg(test)]
    pub(crate) fn test_rf() -> LinkSpec {
        Self::test_rf_mac(None)
    }

    /// The same with 802.11 medium access of `mac`.
    #[cfg(test)]
    pub(crate) fn test_rf_mac(mac: Option<crate::config::WifiStandard>) -> LinkSpec {
        LinkSpec::from_config(
            &LinkModel::Rf {
                between: None,
                frequency_ghz: 2.4,
                tx_power_dbm: 20.0,
                path_loss_exponent: 3.0,
                reference_distance_m: 1.0,
                reference_loss_db: None,
                noise_floor_dbm: -94.0,
                rates: None,
                delay_ms: 0.0,
                mac,
                channel: None,
                rate_mbps: None,
            },
            &Water::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(d: f64, los: bool, hop: f64) -> Geometry<'static> {
        Geometry {
            distance_m: d,
            los,
            hop_loss_db: hop,
            mean_depth_m: 20.0,
            arrivals: None,
        }
    }

    fn rf() -> LinkSpec {
        LinkSpec::test_rf()
    }

    #[test]
    fn disk_range_edge_is_inclusive() {
        let d = LinkSpec::Disk {
            range_m: 100.0,
            rate_bps: 1e6,
            delay_s: 0.0,
            los_required: false,
        };
        assert!(d.budget(&geo(100.0, true, 0.0)).usable);
        assert!(!d.budget(&geo(100.000001, true, 0.0)).usable);
        let los = LinkSpec::Disk {
            range_m: 100.0,
            rate_bps: 1e6,
            delay_s: 0.0,
            los_required: true,
        };
        assert!(!los.budget(&geo(50.0, false, 0.0)).usable);
    }

    #[test]
    fn rf_by_hand_and_nlos_costs_exactly_the_hop_losses() {
        // FSPL(1 m, 2.4 GHz) = 20 log10(4π · 2.4e9 / c₀) = 40.052 dB; at 100 m, n = 3: + 60 dB;
        // SNR = 20 − 100.052 + 94 = 13.948 dB.
        let spec = rf();
        let los = spec.budget(&geo(100.0, true, 0.0));
        assert!((free_space_loss_db(1.0, 2.4e9) - 40.05201).abs() < 1e-4);
        assert!((los.snr_db - 13.94799).abs() < 1e-4, "{}", los.snr_db);
        // 13.95 dB: at or above the 12 Mbit/s threshold (12 dB), below 18 Mbit/s (14 dB).
        assert_eq!(los.rate_bps, 12e6);
    }

    /// With `mac` the rate is the ideal choice for the SNR over the −94 dBm noise floor
    /// (802.11a: 54 Mbit/s from 19.85 dB, 24 Mbit/s from 10.86 dB), with its BER there; the
    /// link is there from −82 dBm, the slowest rate's minimum sensitivity, whatever the SNR.
    #[test]
    fn rf_with_a_mac_takes_the_ideal_rate_and_is_detected_from_minus_82_dbm() {
        let a = LinkSpec::test_rf_mac(Some(crate::config::WifiStandard::A));
        let pl0 = free_space_loss_db(1.0, 2.4e9);
        // 20 dBm − PL(1 m) − 30 log10(d) = level.
        let at = |level: f64| a.budget(&geo(10f64.powf((20.0 - level - pl0) / 30.0), true, 0.0));
        let rates: Vec<(f64, bool)> = [-60.0, -74.0, -75.0, -79.5, -81.99, -82.01]
            .iter()
            .map(|&l| (at(l).rate_bps / 1e6, at(l).usable))
            .collect();
        assert_eq!(
            rates,
            [
                (54.0, true),
                (54.0, true),
                (48.0, true),
                (36.0, true),
                (24.0, true),
                (24.0, false)
            ]
        );
        let phy = crate::model::wifi::Phy::of(crate::config::WifiStandard::A);
        let b = at(-74.0);
        assert_eq!(b.ber, phy.rates()[7].event_rate(20.0));
        assert_eq!(at(-90.0).ber, 0.5);
        // A constant rate holds at any SNR, with its BER there.
        let mut fixed = a.clone();
        if let LinkSpec::Rf { constant, .. } = &mut fixed {
            *constant = Some(phy.rates()[4]);
        }
        let b = fixed.budget(&geo(10f64.powf((20.0 + 60.0 - pl0) / 30.0), true, 0.0));
        assert_eq!(
            (b.rate_bps, b.ber),
            (24e6, phy.rates()[4].event_rate(b.snr_db))
        );
        // The same level without a mac: the default table's 9 dB over −94 dBm reaches −85 dBm.
        assert!(
            rf().budget(&geo(10f64.powf((20.0 + 84.0 - pl0) / 30.0), true, 0.0))
                .usable
        );
    }

    #[test]
    fn rf_nlos_vs_los() {
        let spec = rf();
        let los = spec.budget(&geo(30.0, true, 0.0));
        let nlos = spec.budget(&geo(30.0, false, 7.5));
        assert!((los.snr_db - nlos.snr_db - 7.5).abs() < 1e-12);
        assert!(nlos.rate_bps < los.rate_bps);
        assert!(!spec.budget(&geo(30.0, false, 80.0)).usable);
        // At a threshold the 1000-byte PER is 10 %.
        assert!((acoustic::per(rf_threshold_ber(), 8000) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn acoustic_delay_is_distance_over_sound_speed() {
        let mut w = Water::default();
        w.sound_speed = SoundSpeed::Fixed(1500.0);
        let spec = LinkSpec::from_config(
            &LinkModel::Acoustic {
                between: None,
                micromodem_rate: 1,
                bit_rate_bps: None,
                coding_gain_db: None,
                frequency_khz: 25.0,
                bandwidth_khz: 5.0,
                source_level_db: 185.0,
                spreading_factor: 1.5,
                absorption: Absorption::Thorp,
                capture_sir_db: None,
                propagation: Propagation::Straight,
                multipath_window_ms: None,
            },
            &w,
        );
        let b = spec.budget(&geo(1500.0, true, 0.0));
        assert_eq!(b.delay_s, 1.0);
        assert_eq!(b.rate_bps, 250.0);
        assert!(b.usable && b.audible && b.acoustic);
        // Far away: out of range.
        assert!(!spec.budget(&geo(200_000.0, true, 0.0)).usable);
        // The hop losses lower the received level one for one.
        let nlos = spec.budget(&geo(1500.0, false, 12.0));
        assert!((b.level_db - nlos.level_db - 12.0).abs() < 1e-9);
    }

    /// A beam link at rate 1 (PSK, 5 ms window unless given), Thorp, fixed 1500 m/s.
    fn beam(window_ms: Option<f64>) -> AcousticSpec {
        let w = Water {
            sound_speed: SoundSpeed::Fixed(1500.0),
            ..Water::default()
        };
        let LinkSpec::Acoustic(a) = LinkSpec::from_config(
            &LinkModel::Acoustic {
                between: None,
                micromodem_rate: 1,
                bit_rate_bps: None,
                coding_gain_db: None,
                frequency_khz: 25.0,
                bandwidth_khz: 5.0,
                source_level_db: 185.0,
                spreading_factor: 1.5,
                absorption: Absorption::Thorp,
                capture_sir_db: None,
                propagation: Propagation::Beam,
                multipath_window_ms: window_ms,
            },
            &w,
        ) else {
            unreachable!()
        };
        a
    }

    fn arrival(delay_s: f64, amplitude: f64, path_m: f64) -> Arrival {
        Arrival {
            delay_s,
            amplitude,
            path_m,
            ..Arrival::default()
        }
    }

    fn traced<'a>(arrivals: &'a [Arrival]) -> Geometry<'a> {
        Geometry {
            arrivals: Some(arrivals),
            ..geo(1000.0, true, 0.0)
        }
    }

    /// The noise power N·B (µPa², linear) and the source power (linear) of `a`.
    fn powers(a: &AcousticSpec) -> (f64, f64) {
        let nb = 10f64.powf((a.noise_psd_db() + 10.0 * a.bandwidth_hz.log10()) / 10.0);
        (nb, 10f64.powf(a.source_level_db / 10.0))
    }

    #[test]
    fn the_multipath_window_defaults_by_modulation() {
        assert_eq!(beam(None).multipath_window_s, 5e-3);
        assert_eq!(beam(Some(12.5)).multipath_window_s, 0.0125);
        assert_eq!(multipath_window_s(None, Modulation::FhFsk, 80.0), 0.0125);
    }

    #[test]
    fn beam_arrivals_inside_the_window_add() {
        let a = beam(None);
        let (nb, sl) = powers(&a);
        // No absorption (path 0): E = A².
        let one = [arrival(0.6, 1e-4, 0.0)];
        let two = [arrival(0.6, 1e-4, 0.0), arrival(0.604, 1e-4, 0.0)];
        let b1 = LinkSpec::Acoustic(a.clone()).budget(&traced(&one));
        let b2 = LinkSpec::Acoustic(a.clone()).budget(&traced(&two));
        let snr1 = 10.0 * (sl * 1e-8 / nb).log10();
        assert!((b1.snr_db - snr1).abs() < 1e-9, "{} {snr1}", b1.snr_db);
        assert!((b2.snr_db - (snr1 + 10.0 * 2f64.log10())).abs() < 1e-9);
        assert!((b2.level_db - (185.0 + 10.0 * 2e-8f64.log10())).abs() < 1e-9);
        assert!(!b2.straight_fallback && b2.acoustic);
        assert_eq!(b2.delay_s, 0.6);
    }

    #[test]
    fn beam_energy_after_the_window_is_interference() {
        let a = beam(None);
        let (nb, sl) = powers(&a);
        // The strongest at 0.6 s, a weaker one 6 ms later: outside the 5 ms window.
        let late = [arrival(0.6, 2e-4, 0.0), arrival(0.606, 1e-4, 0.0)];
        let b = LinkSpec::Acoustic(a.clone()).budget(&traced(&late));
        let by_hand = 10.0 * (sl * 4e-8 / (nb + sl * 1e-8)).log10();
        assert!((b.snr_db - by_hand).abs() < 1e-9, "{} {by_hand}", b.snr_db);
        let alone = 10.0 * (sl * 4e-8 / nb).log10();
        assert!(b.snr_db < alone - 1.0, "{} vs {alone}", b.snr_db);
        // The level is the signal's only.
        assert!((b.level_db - (185.0 + 10.0 * 4e-8f64.log10())).abs() < 1e-9);
        // Energy before the strongest arrival interferes too.
        let early = [arrival(0.594, 1e-4, 0.0), arrival(0.6, 2e-4, 0.0)];
        let e = LinkSpec::Acoustic(a).budget(&traced(&early));
        assert!((e.snr_db - by_hand).abs() < 1e-9);
    }

    #[test]
    fn a_traced_pair_with_no_arrival_is_a_shadow_zone_and_an_untraced_one_goes_straight() {
        let spec = LinkSpec::Acoustic(beam(None));
        let b = spec.budget(&traced(&[]));
        assert!(!b.usable && !b.audible && b.acoustic);
        assert_eq!(b.snr_db, f64::NEG_INFINITY);
        let straight = LinkSpec::Acoustic(AcousticSpec {
            propagation: Propagation::Straight,
            ..beam(None)
        })
        .budget(&geo(1000.0, true, 0.0));
        let fallback = spec.budget(&geo(1000.0, true, 0.0));
        assert!(fallback.straight_fallback && fallback.usable);
        assert_eq!(
            Budget {
                straight_fallback: false,
                ..fallback
            },
            straight
        );
        // A straight link ignores arrivals, even none.
        let s = LinkSpec::Acoustic(AcousticSpec {
            propagation: Propagation::Straight,
            ..beam(None)
        });
        assert_eq!(s.budget(&traced(&[])), straight);
    }

    #[test]
    fn the_delay_is_the_first_arrival_detectable_alone_not_the_strongest() {
        let a = beam(None);
        let (nb, sl) = powers(&a);
        // Amplitudes at in-band SNR −10 dB, +10 dB and +20 dB (strongest last).
        let amp = |snr_db: f64| (nb * 10f64.powf(snr_db / 10.0) / sl).sqrt();
        let x = [
            arrival(0.60, amp(-10.0), 0.0),
            arrival(0.61, amp(10.0), 0.0),
            arrival(0.62, amp(20.0), 0.0),
        ];
        let b = LinkSpec::Acoustic(a.clone()).budget(&traced(&x));
        assert_eq!(b.delay_s, 0.61);
        // None detectable alone: the strongest one's delay.
        let weak = [
            arrival(0.60, amp(-3.0), 0.0),
            arrival(0.601, amp(-2.0), 0.0),
        ];
        assert_eq!(LinkSpec::Acoustic(a).budget(&traced(&weak)).delay_s, 0.601);
    }

    #[test]
    fn each_arrival_is_absorbed_over_its_own_path() {
        let a = beam(Some(50.0));
        let (nb, sl) = powers(&a);
        let alpha = a.absorption_db_per_km(20.0);
        // Two equal amplitudes, paths 1 km and 3 km: energies 10^(−α/10) and 10^(−3α/10).
        let x = [arrival(0.6, 1e-4, 1000.0), arrival(0.61, 1e-4, 3000.0)];
        let b = LinkSpec::Acoustic(a).budget(&traced(&x));
        let s = 1e-8 * (10f64.powf(-alpha / 10.0) + 10f64.powf(-3.0 * alpha / 10.0));
        assert!((b.snr_db - 10.0 * (sl * s / nb).log10()).abs() < 1e-9);
        assert!(alpha > 1.0, "{alpha}");
    }

    #[test]
    fn the_geometry_keeps_each_pairs_arrivals_in_both_directions() {
        use crate::wire::channel::Channel;
        let mut c = Channel::default();
        for _ in 0..3 {
            c.push_node([0.0, 0.0, -10.0, 1.0, 0.0, 0.0, 0.0]);
        }
        let x = [arrival(0.5, 1e-3, 750.0), arrival(0.51, 1e-4, 765.0)];
        c.push_traced_path(0, 1, true, [], Some(&x));
        c.push_traced_path(0, 2, true, [], Some(&[]));
        c.push_path(1, 2, true, []);
        let view = ChannelView::check(&c, 3).unwrap();
        let mut g = ChannelGeometry::new(&view);
        assert_eq!(g.between(0, 1).arrivals, Some(&x[..]));
        assert_eq!(g.between(1, 0).arrivals, Some(&x[..]));
        assert_eq!(g.between(2, 0).arrivals, Some(&[][..]));
        assert_eq!(g.between(1, 2).arrivals, None);
        assert_eq!(g.untraced_pairs(), 1);
        // The next window reuses the memory.
        let held = g.arrivals.capacity();
        g.update(&view);
        assert_eq!(g.arrivals.capacity(), held);
        assert_eq!(g.between(0, 1).arrivals, Some(&x[..]));
    }
}
