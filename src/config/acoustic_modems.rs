//! The `acoustic_modems` section's types: the emulated WHOI Micro-Modems' bridges, clock
//! epoch and the acoustic front end every vehicle's modem shares.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::links::{
    default_acoustic_bandwidth, default_acoustic_frequency, default_source_level,
    default_spreading, Absorption, Propagation,
};
use super::vehicles::default_nav_source;
use crate::wire::utc::UtcTime;

/// A UTC time `YYYY-MM-DDThh:mm:ssZ` (see [`UtcTime`]).
fn utc_time<'de, D: Deserializer<'de>>(d: D) -> Result<UtcTime, D::Error> {
    String::deserialize(d)?
        .parse()
        .map_err(serde::de::Error::custom)
}

/// The emulated Micro-Modems (`acoustic_modems`): bridges and the acoustic front end shared
/// by every vehicle's modem. Channel numbers default to a Micro-Modem's 25 kHz band.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AcousticModems {
    /// Address the modem bridges listen on (default 127.0.0.1).
    #[serde(default = "default_nav_source")]
    pub bind: std::net::IpAddr,
    /// UTC time of sim time 0, `YYYY-MM-DDThh:mm:ss[.f]Z`: the modems' clocks read this plus
    /// the sim time (plus whatever offset the host sets). Default 2026-01-01T00:00:00Z.
    #[serde(default = "default_modem_epoch", deserialize_with = "utc_time")]
    #[schemars(
        with = "String",
        regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$")
    )]
    pub epoch_utc: UtcTime,
    /// Centre frequency of the modems' band, kHz (> 0; default 25).
    #[serde(default = "default_acoustic_frequency")]
    pub frequency_khz: f64,
    /// Bandwidth, kHz (> 0; default 5).
    #[serde(default = "default_acoustic_bandwidth")]
    pub bandwidth_khz: f64,
    /// Source level, dB re 1 µPa at 1 m (default 185).
    #[serde(default = "default_source_level")]
    pub source_level_db: f64,
    /// k in TL = k·10·log10(d) + α·d, in [0, 3] (default 1.5).
    #[serde(default = "default_spreading")]
    pub spreading_factor: f64,
    /// The absorption α: `francois_garrison` (default) or `thorp`.
    #[serde(default)]
    pub absorption: Absorption,
    /// `straight` (default: one straight path) or `beam` (the beam tracer's arrivals through
    /// `world.water.profile`; see `world.acoustic_paths`).
    #[serde(default)]
    pub propagation: Propagation,
    /// With `beam`: energy arriving within this many ms (> 0) after the strongest arrival is
    /// signal, later energy interference (ns-3 UAN's FH-FSK rule). Default: one bit time for
    /// FSK (12.5 ms at 80 bit/s), 5 ms for PSK (an assumed equaliser span).
    #[serde(default)]
    pub multipath_window_ms: Option<f64>,
    /// Capture threshold for overlapping receptions, dB (≥ 0); absent: every overlap destroys
    /// both.
    #[serde(default)]
    pub capture_sir_db: Option<f64>,
    /// Period of the `$CAREV,...,AUV` heartbeat (sim seconds, default 10).
    #[serde(default = "default_heartbeat_s")]
    pub heartbeat_s: f64,
}

fn default_modem_epoch() -> UtcTime {
    // 2026-01-01T00:00:00Z
    UtcTime::from_ns(1_767_225_600_000_000_000)
}
fn default_heartbeat_s() -> f64 {
    10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::baud_supported;

    #[test]
    fn default_modem_epoch_is_2026() {
        assert_eq!(
            default_modem_epoch(),
            "2026-01-01T00:00:00Z".parse().unwrap()
        );
        assert_eq!(baud_supported(19200), Some(19200));
        assert_eq!(baud_supported(12345), None);
    }
}
