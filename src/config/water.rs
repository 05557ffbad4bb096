//! The water of `world.water`: temperature, salinity, pH, sound speed (fixed or Mackenzie's
//! equation), the Wenz noise inputs and the sound-speed profile the beam tracer reads, given by
//! rows or by CTD casts ([`super::cast`]).

use super::cast::Cast;
use super::sea_water::sound_speed_mackenzie;
use schemars::JsonSchema;
use serde::Deserialize;

/// The water the acoustic links run through (`world.water`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Water {
    /// Temperature, °C, in [−2, 40] (default 10).
    #[serde(default = "default_temperature")]
    pub temperature_c: f64,
    /// Salinity, ppt, in [0, 45] (default 35).
    #[serde(default = "default_salinity")]
    pub salinity_ppt: f64,
    /// pH, in [6, 9.5] (default 8).
    #[serde(default = "default_ph")]
    pub ph: f64,
    /// `mackenzie` (default; from temperature, salinity and depth) or a fixed speed in m/s,
    /// in [1400, 1700] (sea water's range).
    #[serde(default)]
    pub sound_speed: SoundSpeed,
    /// Surface wind speed for the Wenz noise, m/s (≥ 0; default 5).
    #[serde(default = "default_wind")]
    pub wind_mps: f64,
    /// Shipping activity factor in [0, 1] for the Wenz noise (default 0.5).
    #[serde(default = "default_shipping")]
    pub shipping: f64,
    /// Sound speed by depth, for beam tracing: rows of `depth_m` (m, from 0, strictly
    /// increasing, the last at least the terrain's deepest point) and either `speed_mps` or
    /// `temperature_c` (with `salinity_ppt`, default the water's, through Mackenzie 1981);
    /// every speed in [1400, 1700] m/s, linear between rows. Absent: Mackenzie at the water's
    /// temperature and salinity (or the fixed `sound_speed`), the same at every depth but for
    /// the pressure term.
    #[serde(default)]
    pub profile: Option<Vec<ProfileRow>>,
    /// Sound speed from CTD casts (instead of `profile`), for beam tracing: each cast's file
    /// and where it was taken (see [`Cast`]). One cast holds everywhere; with several, each
    /// point of the sea takes the casts' speeds at its depth weighted by the inverse square of
    /// its horizontal distance to each, and each traced pair the profiles so found along its
    /// bearing (range-dependent, as BELLHOP's `Q` option). A cast that stops short of the
    /// surface or the terrain's deepest point holds its first and last speeds.
    #[serde(default)]
    pub casts: Option<Vec<Cast>>,
}

/// One row of `world.water.profile`: a depth and the sound speed there, given or from the
/// temperature and salinity.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileRow {
    /// Depth, m (≥ 0, positive down). Required.
    pub depth_m: f64,
    /// Sound speed, m/s, in [1400, 1700]; or give `temperature_c` instead.
    #[serde(default)]
    pub speed_mps: Option<f64>,
    /// Temperature, °C, in [−2, 40], for Mackenzie's equation; or give `speed_mps` instead.
    #[serde(default)]
    pub temperature_c: Option<f64>,
    /// Salinity, ppt, in [0, 45], with `temperature_c` (default the water's `salinity_ppt`).
    #[serde(default)]
    pub salinity_ppt: Option<f64>,
}

/// Depth step of the profile made from the water's own settings when `profile` is absent.
const DEFAULT_PROFILE_STEP_M: f64 = 50.0;

impl Water {
    /// The speed of row `row` (its `speed_mps`, or Mackenzie at its temperature, its salinity
    /// or the water's, and its depth); `None` when the row gives neither.
    pub fn row_speed(&self, row: &ProfileRow) -> Option<f64> {
        row.speed_mps.or_else(|| {
            row.temperature_c.map(|t| {
                sound_speed_mackenzie(
                    t,
                    row.salinity_ppt.unwrap_or(self.salinity_ppt),
                    row.depth_m,
                )
            })
        })
    }

    /// The sound-speed profile for beam tracing down to `deepest_m` (m, the terrain's deepest
    /// point): `(depths, speeds)`, depths from 0 increasing. The scenario's `profile` with
    /// Mackenzie applied where a row gives a temperature; absent, rows every 50 m from 0 to
    /// `deepest_m` (at least two) at the water's temperature and salinity (or its fixed
    /// `sound_speed`).
    pub fn sound_speed_profile(&self, deepest_m: f64) -> (Vec<f64>, Vec<f64>) {
        if let Some(rows) = &self.profile {
            return rows
                .iter()
                .map(|r| (r.depth_m, self.row_speed(r).unwrap_or(f64::NAN)))
                .unzip();
        }
        let deepest = if deepest_m.is_finite() {
            deepest_m.max(1.0)
        } else {
            1.0
        };
        let steps = (deepest / DEFAULT_PROFILE_STEP_M).ceil().max(1.0) as usize;
        (0..=steps)
            .map(|i| {
                let d = deepest * i as f64 / steps as f64;
                let c = match self.sound_speed {
                    SoundSpeed::Fixed(c) => c,
                    SoundSpeed::Model(SoundSpeedModel::Mackenzie) => {
                        sound_speed_mackenzie(self.temperature_c, self.salinity_ppt, d)
                    }
                };
                (d, c)
            })
            .unzip()
    }
}

impl Default for Water {
    fn default() -> Self {
        Water {
            temperature_c: default_temperature(),
            salinity_ppt: default_salinity(),
            ph: default_ph(),
            sound_speed: SoundSpeed::default(),
            wind_mps: default_wind(),
            shipping: default_shipping(),
            profile: None,
            casts: None,
        }
    }
}

fn default_temperature() -> f64 {
    10.0
}
fn default_salinity() -> f64 {
    35.0
}
fn default_ph() -> f64 {
    8.0
}
fn default_wind() -> f64 {
    5.0
}
fn default_shipping() -> f64 {
    0.5
}

/// The speed of sound: a fixed value or a model.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum SoundSpeed {
    /// A fixed speed, m/s.
    Fixed(f64),
    /// A model of temperature, salinity and depth.
    Model(SoundSpeedModel),
}

impl Default for SoundSpeed {
    fn default() -> Self {
        SoundSpeed::Model(SoundSpeedModel::Mackenzie)
    }
}

/// A sound speed model.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SoundSpeedModel {
    /// Mackenzie's nine-term equation (1981).
    Mackenzie,
}
