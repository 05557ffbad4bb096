//! Underwater acoustic propagation and modem performance: pure functions, SI units unless the
//! name says otherwise (`_khz`, `_db`). Each function names its formula and source; the
//! acoustic link model ([`crate::model::link`]) and the acoustic modem emulator both use them.
//!
//! | quantity | function | source |
//! |---|---|---|
//! | sound speed | [`sound_speed_mackenzie`] | Mackenzie (1981), JASA 70(3) 807–812 |
//! | absorption | [`absorption_thorp_db_per_km`] | Thorp (1967), as in Brekhovskikh & Lysanov; Stojanovic (2007) eq. 3 |
//! | absorption | [`absorption_francois_garrison_db_per_km`] | Francois & Garrison (1982), JASA 72(6) 1879–1890 |
//! | transmission loss | [`transmission_loss_db`] | Urick, *Principles of Underwater Sound*; Stojanovic (2007) eq. 1 |
//! | ambient noise | [`noise_psd_db`] | Wenz (1962) curves as formulated by Coates (1989) and Stojanovic (2007) eqs. 7 |
//! | SNR | [`snr_db`] | passive sonar equation SNR = SL − TL − (NL + 10 log10 B) (Urick) |
//! | BER | [`ber`] | Proakis, *Digital Communications*: non-coherent BFSK and coherent BPSK in AWGN |
//! | PER | [`per`] | independent bit errors |
//! | delay, Doppler | [`propagation_delay_s`], [`doppler_shift_hz`] | d / c; f·v/c |
//!
//! The channel is treated as AWGN at the in-band SNR. Along the straight path multipath,
//! fading and ray bending are not modelled, so BER/PER are optimistic compared with a real
//! shallow-water channel; a link with `propagation: beam` takes its SNR and delay from the beam
//! tracer's arrivals instead ([`crate::model::link`]).

pub use crate::config::sound_speed_mackenzie;

/// Thorp's absorption (dB/km) at frequency `f_khz` (kHz):
///
/// α = 0.11 f²/(1 + f²) + 44 f²/(4100 + f²) + 2.75·10⁻⁴ f² + 0.003
///
/// The form in Stojanovic (2007), eq. 3, for f above a few hundred Hz; it has no temperature,
/// salinity or depth dependence (it was fitted at about 4 °C, ~1 km depth).
pub fn absorption_thorp_db_per_km(f_khz: f64) -> f64 {
    let f2 = f_khz * f_khz;
    0.11 * f2 / (1.0 + f2) + 44.0 * f2 / (4100.0 + f2) + 2.75e-4 * f2 + 0.003
}

/// Francois–Garrison (1982) absorption (dB/km): boric acid, magnesium sulphate and pure-water
/// contributions, at frequency `f_khz` (kHz), temperature (°C), salinity (ppt), depth (m) and pH.
///
/// c = 1412 + 3.21 T + 1.19 S + 0.0167 D
/// A₁ = 8.86/c · 10^(0.78 pH − 5),  P₁ = 1,  f₁ = 2.8 √(S/35) · 10^(4 − 1245/(273 + T))
/// A₂ = 21.44 S/c · (1 + 0.025 T),  P₂ = 1 − 1.37·10⁻⁴ D + 6.2·10⁻⁹ D²,
/// f₂ = 8.17 · 10^(8 − 1990/(273 + T)) / (1 + 0.0018 (S − 35))
/// P₃ = 1 − 3.83·10⁻⁵ D + 4.9·10⁻¹⁰ D²,
/// A₃ = 4.937·10⁻⁴ − 2.59·10⁻⁵ T + 9.11·10⁻⁷ T² − 1.50·10⁻⁸ T³ (T ≤ 20 °C),
///      3.964·10⁻⁴ − 1.146·10⁻⁵ T + 1.45·10⁻⁷ T² − 6.5·10⁻¹⁰ T³ (T > 20 °C)
/// α = A₁P₁ f₁f²/(f₁² + f²) + A₂P₂ f₂f²/(f₂² + f²) + A₃P₃ f²
///
/// Valid for 0.2–1000 kHz, −2 to 22 °C (pure water term to 30 °C), 30–35 ppt, 0–7000 m.
pub fn absorption_francois_garrison_db_per_km(
    f_khz: f64,
    temperature_c: f64,
    salinity_ppt: f64,
    depth_m: f64,
    ph: f64,
) -> f64 {
    let (t, s, d, f2) = (temperature_c, salinity_ppt, depth_m, f_khz * f_khz);
    let c = 1412.0 + 3.21 * t + 1.19 * s + 0.0167 * d;
    let a1 = 8.86 / c * 10f64.powf(0.78 * ph - 5.0);
    let f1 = 2.8 * (s / 35.0).sqrt() * 10f64.powf(4.0 - 1245.0 / (273.0 + t));
    let a2 = 21.44 * s / c * (1.0 + 0.025 * t);
    let p2 = 1.0 - 1.37e-4 * d + 6.2e-9 * d * d;
    let f2r = 8.17 * 10f64.powf(8.0 - 1990.0 / (273.0 + t)) / (1.0 + 0.0018 * (s - 35.0));
    let p3 = 1.0 - 3.83e-5 * d + 4.9e-10 * d * d;
    let a3 = if t <= 20.0 {
        4.937e-4 - 2.59e-5 * t + 9.11e-7 * t * t - 1.50e-8 * t * t * t
    } else {
        3.964e-4 - 1.146e-5 * t + 1.45e-7 * t * t - 6.5e-10 * t * t * t
    };
    a1 * f1 * f2 / (f1 * f1 + f2) + a2 * p2 * f2r * f2 / (f2r * f2r + f2) + a3 * p3 * f2
}

/// Transmission loss (dB) over `distance_m` with spreading factor `k` (1 cylindrical,
/// 1.5 "practical", 2 spherical) and absorption `alpha_db_per_km`:
///
/// TL = k · 10 log10(d / 1 m) + α · d / 1000
///
/// Distances under 1 m are taken as 1 m (the source level's reference distance).
pub fn transmission_loss_db(distance_m: f64, k: f64, alpha_db_per_km: f64) -> f64 {
    let d = distance_m.max(1.0);
    k * 10.0 * d.log10() + alpha_db_per_km * d / 1000.0
}

/// Ambient-noise conditions for [`noise_psd_db`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseConditions {
    /// Shipping activity factor s in [0, 1] (0 low, 0.5 moderate, 1 high).
    pub shipping: f64,
    /// Wind speed at the surface, m/s.
    pub wind_mps: f64,
}

/// Ambient noise power spectral density (dB re 1 µPa²/Hz) at `f_khz`, the sum of the four
/// Wenz components as formulated in Stojanovic (2007), eq. 7 (after Coates 1989):
///
/// 10 log N_t  = 17 − 30 log f                                  (turbulence)
/// 10 log N_s  = 40 + 20 (s − 0.5) + 26 log f − 60 log(f + 0.03) (shipping, activity s)
/// 10 log N_w  = 50 + 7.5 √w + 20 log f − 40 log(f + 0.4)        (wind speed w, m/s)
/// 10 log N_th = −15 + 20 log f                                 (thermal)
///
/// N = N_t + N_s + N_w + N_th (linear powers).
pub fn noise_psd_db(f_khz: f64, c: NoiseConditions) -> f64 {
    let f = f_khz.max(1e-6);
    let lf = f.log10();
    let nt = 17.0 - 30.0 * lf;
    let ns = 40.0 + 20.0 * (c.shipping - 0.5) + 26.0 * lf - 60.0 * (f + 0.03).log10();
    let nw = 50.0 + 7.5 * c.wind_mps.max(0.0).sqrt() + 20.0 * lf - 40.0 * (f + 0.4).log10();
    let nth = -15.0 + 20.0 * lf;
    let lin: f64 = [nt, ns, nw, nth]
        .iter()
        .map(|db| 10f64.powf(db / 10.0))
        .sum();
    10.0 * lin.log10()
}

/// In-band SNR (dB) by the passive sonar equation for an omnidirectional link:
///
/// SNR = SL − TL − (NL + 10 log10 B)
///
/// with SL the source level (dB re 1 µPa at 1 m), TL the transmission loss plus any extra
/// path loss (dB), NL the noise PSD (dB re 1 µPa²/Hz) and B the receiver bandwidth (Hz).
pub fn snr_db(source_level_db: f64, loss_db: f64, noise_psd_db: f64, bandwidth_hz: f64) -> f64 {
    source_level_db - loss_db - (noise_psd_db + 10.0 * bandwidth_hz.max(1e-9).log10())
}

/// Source level (dB re 1 µPa at 1 m) of an omnidirectional projector radiating `power_w`
/// acoustic watts: SL = 170.8 + 10 log10 P (Urick).
pub fn source_level_from_power_db(power_w: f64) -> f64 {
    170.8 + 10.0 * power_w.max(1e-30).log10()
}

/// Modulations used by the WHOI Micro-Modem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modulation {
    /// Frequency-hopped FSK, detected non-coherently (Micro-Modem rate 0).
    FhFsk,
    /// Coherent PSK with error-correcting coding (Micro-Modem rates 1–6).
    Psk,
}

/// A Micro-Modem packet rate: modulation, nominal information bit rate and the coding gain
/// assumed on top of the AWGN bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModemRate {
    pub modulation: Modulation,
    pub bit_rate_bps: f64,
    pub coding_gain_db: f64,
}

/// The WHOI Micro-Modem rates 0–6 (nominal rates from Freitag et al., "The WHOI Micro-Modem:
/// an acoustic communications and navigation system for multiple platforms", OCEANS 2005,
/// and the Micro-Modem software interface guide): 0 FH-FSK 80 bit/s; 1 PSK 250; 2 PSK 500;
/// 3 PSK 1200; 4 PSK 1300; 5 PSK 5300; 6 PSK 2400. The coding gain is an assumption: 0 dB
/// for FH-FSK (its repetition/convolutional coding is not credited: conservative) and 3 dB for
/// the convolutionally coded PSK rates (a typical soft-decision gain at BER 10⁻⁵ for a rate-1/2
/// constraint-length-7 code is ~5 dB; 3 dB leaves margin for the equaliser's losses).
/// `None` outside 0–6.
pub fn micromodem_rate(rate: u8) -> Option<ModemRate> {
    let (modulation, bit_rate_bps, coding_gain_db) = match rate {
        0 => (Modulation::FhFsk, 80.0, 0.0),
        1 => (Modulation::Psk, 250.0, 3.0),
        2 => (Modulation::Psk, 500.0, 3.0),
        3 => (Modulation::Psk, 1200.0, 3.0),
        4 => (Modulation::Psk, 1300.0, 3.0),
        5 => (Modulation::Psk, 5300.0, 3.0),
        6 => (Modulation::Psk, 2400.0, 3.0),
        _ => return None,
    };
    Some(ModemRate {
        modulation,
        bit_rate_bps,
        coding_gain_db,
    })
}

/// Eb/N0 (linear) from the in-band SNR (dB) over bandwidth B at bit rate R:
/// Eb/N0 = SNR · B / R (the processing gain of spreading a low rate over the band).
pub fn eb_n0(snr_db: f64, bandwidth_hz: f64, bit_rate_bps: f64) -> f64 {
    10f64.powf(snr_db / 10.0) * bandwidth_hz / bit_rate_bps.max(1e-9)
}

/// Bit error rate in AWGN for Eb/N0 (linear) after a coding gain (dB) is applied to Eb/N0:
///
/// - FH-FSK, non-coherent binary FSK: Pb = ½ exp(−γ/2)  (Proakis, eq. 5.4-47);
/// - PSK, coherent BPSK: Pb = Q(√(2γ)) = ½ erfc(√γ)     (Proakis, eq. 5.2-5),
///
/// with γ = Eb/N0 · 10^(G/10). Approximations: the coded performance is modelled as the uncoded
/// curve shifted by the coding gain G; FH-FSK is taken as binary FSK per hop.
pub fn ber(modulation: Modulation, eb_n0: f64, coding_gain_db: f64) -> f64 {
    let g = (eb_n0 * 10f64.powf(coding_gain_db / 10.0)).max(0.0);
    let p = match modulation {
        Modulation::FhFsk => 0.5 * (-g / 2.0).exp(),
        Modulation::Psk => 0.5 * erfc(g.sqrt()),
    };
    if p.is_finite() {
        p.clamp(0.0, 0.5)
    } else {
        0.5
    }
}

/// Packet error rate with independent bit errors: PER = 1 − (1 − BER)^bits.
pub fn per(ber: f64, bits: u64) -> f64 {
    let b = ber.clamp(0.0, 1.0);
    if b >= 1.0 {
        return if bits == 0 { 0.0 } else { 1.0 };
    }
    -((bits as f64) * (-b).ln_1p()).exp_m1()
}

/// Propagation delay (s) over `distance_m` at sound speed `c_mps`: d / c.
pub fn propagation_delay_s(distance_m: f64, c_mps: f64) -> f64 {
    distance_m / c_mps
}

/// Doppler shift (Hz) of a carrier `f_hz` for a closing radial speed `v_mps` (positive when the
/// two approach): Δf = f · v / c (first order; received frequency f (1 + v/c)).
pub fn doppler_shift_hz(f_hz: f64, v_mps: f64, c_mps: f64) -> f64 {
    f_hz * v_mps / c_mps
}

/// Complementary error function, Numerical Recipes' `erfcc` (Chebyshev fit, fractional error
/// below 1.2·10⁻⁷ everywhere).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398
                                + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mackenzie_check_value() {
        // Mackenzie (1981) gives 1550.744 m/s at T = 25 °C, S = 35 ppt, D = 1000 m.
        assert!((sound_speed_mackenzie(25.0, 35.0, 1000.0) - 1550.744).abs() < 1e-3);
    }

    #[test]
    fn thorp_at_10_khz() {
        // 0.11·100/101 + 44·100/4200 + 0.0275 + 0.003 = 0.10891 + 1.04762 + 0.0305 = 1.18703 dB/km
        assert!((absorption_thorp_db_per_km(10.0) - 1.18703).abs() < 1e-5);
    }

    #[test]
    fn francois_garrison_near_thorp_in_cold_deep_water() {
        // Both fit the same measurements: within ~30 % around 10–30 kHz at 4 °C, 1000 m.
        for f in [10.0, 20.0, 30.0] {
            let fg = absorption_francois_garrison_db_per_km(f, 4.0, 35.0, 1000.0, 8.0);
            let th = absorption_thorp_db_per_km(f);
            assert!((fg / th - 1.0).abs() < 0.3, "{f} kHz: FG {fg} Thorp {th}");
        }
    }

    #[test]
    fn transmission_loss_by_hand() {
        // 1.5 · 10 · log10(1000) + 1 dB/km · 1 km = 46 dB
        assert!((transmission_loss_db(1000.0, 1.5, 1.0) - 46.0).abs() < 1e-12);
        assert_eq!(transmission_loss_db(0.2, 1.5, 0.0), 0.0);
    }

    #[test]
    fn wenz_noise_at_25_khz_is_in_the_textbook_range() {
        // Stojanovic (2007), fig. 2: ~30–45 dB re µPa²/Hz around 25 kHz for moderate conditions.
        let n = noise_psd_db(
            25.0,
            NoiseConditions {
                shipping: 0.5,
                wind_mps: 5.0,
            },
        );
        assert!((30.0..45.0).contains(&n), "{n}");
        // Wind and shipping raise it.
        assert!(
            noise_psd_db(
                1.0,
                NoiseConditions {
                    shipping: 1.0,
                    wind_mps: 10.0
                }
            ) > noise_psd_db(
                1.0,
                NoiseConditions {
                    shipping: 0.0,
                    wind_mps: 0.0
                }
            )
        );
    }

    #[test]
    fn ber_and_per_by_hand() {
        // BPSK at Eb/N0 = 9.6 dB gives the textbook 1e-5.
        let g = 10f64.powf(0.96);
        assert!((ber(Modulation::Psk, g, 0.0) / 1.0e-5 - 1.0).abs() < 0.1);
        // Non-coherent BFSK at Eb/N0 = 10: ½ e^-5.
        assert!((ber(Modulation::FhFsk, 10.0, 0.0) - 0.5 * (-5.0f64).exp()).abs() < 1e-15);
        assert_eq!(ber(Modulation::Psk, 0.0, 0.0), 0.5);
        assert!((per(1e-3, 1000) - (1.0 - 0.999f64.powi(1000))).abs() < 1e-12);
        assert_eq!(per(0.0, 1000), 0.0);
        assert_eq!(per(1.0, 8), 1.0);
        assert!(
            (erfc(0.0) - 1.0).abs() < 1e-7
                && (erfc(1.0) - 0.157299207).abs() < 1e-7
                && (erfc(-1.0) - 1.842700793).abs() < 1e-7
        );
    }

    #[test]
    fn snr_delay_doppler_by_hand() {
        assert!(
            (snr_db(185.0, 60.0, 40.0, 5000.0) - (185.0 - 60.0 - 40.0 - 36.98970004336019)).abs()
                < 1e-9
        );
        assert_eq!(propagation_delay_s(1500.0, 1500.0), 1.0);
        assert!((doppler_shift_hz(25_000.0, 1.5, 1500.0) - 25.0).abs() < 1e-9);
        assert!((source_level_from_power_db(10.0) - 180.8).abs() < 1e-9);
        assert!((eb_n0(0.0, 5000.0, 250.0) - 20.0).abs() < 1e-12);
        assert_eq!(micromodem_rate(7), None);
    }
}
