//! The `world` section's types: the geodetic origin of the local frame, the terrain or
//! bathymetry ([`Terrain`], read into a grid by [`super::terrain`]), the seabed under it and
//! how acoustic paths are traced. The water is [`super::water`]'s.

use schemars::JsonSchema;
use serde::Deserialize;

use super::links::default_one;
use super::water::Water;

/// The world: origin, terrain or bathymetry, water.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct World {
    /// Geodetic origin of the local ENU frame (x east, y north, z up, metres). Required.
    pub origin: GeoOrigin,
    /// Terrain or bathymetry: `kind: procedural`, `png` or `csv`. Required.
    pub terrain: Terrain,
    /// Loss charged per metre of terrain a path crosses, in dB/m (default 2.0).
    #[serde(default = "default_penetration_loss")]
    pub penetration_loss_db_per_m: f64,
    /// The water, for acoustic links (defaults: 10 °C, 35 ppt, pH 8, Mackenzie sound speed,
    /// 5 m/s wind, shipping 0.5, no sound-speed profile).
    #[serde(default)]
    pub water: Water,
    /// The bottom half-space under the terrain, for beam tracing (default sand: 1650 m/s,
    /// density ratio 1.9, 0.8 dB/λ; Jensen, Kuperman, Porter & Schmidt, *Computational Ocean
    /// Acoustics*, Table 1.3).
    #[serde(default)]
    pub seabed: Seabed,
    /// How the physics side traces acoustic paths for pairs with `propagation: beam`
    /// (defaults: 400 beams over ±80°, 64 arrivals per pair, retraced at most every 1 s and
    /// only when an end moved more than 2 m).
    #[serde(default)]
    pub acoustic_paths: AcousticPaths,
}

/// The bottom half-space under the terrain (`world.seabed`): a fluid whose reflection
/// coefficient the beam tracer applies at each bottom bounce. Defaults: sand, Jensen,
/// Kuperman, Porter & Schmidt, *Computational Ocean Acoustics* (2nd ed., 2011), Table 1.3
/// (c_p/c_w = 1.1, ρ_b/ρ_w = 1.9, α_p = 0.8 dB/λ).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Seabed {
    /// Compressional sound speed in the bottom, m/s (> 0; default 1650, sand).
    #[serde(default = "default_seabed_speed")]
    pub sound_speed_mps: f64,
    /// Bottom density over the water's (> 0; default 1.9, sand).
    #[serde(default = "default_seabed_density")]
    pub density_ratio: f64,
    /// Compressional attenuation, dB per wavelength (≥ 0; default 0.8, sand).
    #[serde(default = "default_seabed_attenuation")]
    pub attenuation_db_per_wavelength: f64,
}

impl Default for Seabed {
    fn default() -> Self {
        Seabed {
            sound_speed_mps: default_seabed_speed(),
            density_ratio: default_seabed_density(),
            attenuation_db_per_wavelength: default_seabed_attenuation(),
        }
    }
}

fn default_seabed_speed() -> f64 {
    1650.0
}
fn default_seabed_density() -> f64 {
    1.9
}
fn default_seabed_attenuation() -> f64 {
    0.8
}

/// How the physics side traces the acoustic paths of pairs with `propagation: beam`
/// (`world.acoustic_paths`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AcousticPaths {
    /// Launch angles in the fan, in [3, 10000] (default 400).
    #[serde(default = "default_beams")]
    pub beams: u32,
    /// The fan spans −x to +x degrees from the horizontal, x in (0, 90] (default 80).
    #[serde(default = "default_launch_angle")]
    pub launch_angle_deg: f64,
    /// Arrivals kept per pair, the strongest, in [1, 256] (default 64); the rest are counted.
    #[serde(default = "default_max_arrivals")]
    pub max_arrivals: u32,
    /// A pair is retraced at most this often, sim seconds (> 0; default 1).
    #[serde(default = "default_one")]
    pub refresh_s: f64,
    /// ... and only when one of its ends moved more than this since, metres (≥ 0; default 2).
    #[serde(default = "default_tolerance")]
    pub tolerance_m: f64,
}

impl Default for AcousticPaths {
    fn default() -> Self {
        AcousticPaths {
            beams: default_beams(),
            launch_angle_deg: default_launch_angle(),
            max_arrivals: default_max_arrivals(),
            refresh_s: default_one(),
            tolerance_m: default_tolerance(),
        }
    }
}

fn default_beams() -> u32 {
    400
}
fn default_launch_angle() -> f64 {
    80.0
}
fn default_max_arrivals() -> u32 {
    64
}
fn default_tolerance() -> f64 {
    2.0
}

fn default_penetration_loss() -> f64 {
    2.0
}

/// A geodetic position: the origin of the local ENU frame.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeoOrigin {
    /// Latitude, degrees north, in [-90, 90]. Required.
    pub lat_deg: f64,
    /// Longitude, degrees east, in [-180, 180]. Required.
    pub lon_deg: f64,
    /// Altitude, metres (default 0).
    #[serde(default)]
    pub alt_m: f64,
}

/// Terrain or bathymetry: a height grid, centred on the origin, heights in metres (z up).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Terrain {
    /// A seeded generator: gentle noise plus explicit ridges and hills.
    Procedural {
        /// Extent `[x, y]`, metres, centred on the origin (> 0). Required.
        size_m: [f64; 2],
        /// Spacing of the height samples, metres (> 0; at most 8192 cells per side).
        /// Required.
        cell_size_m: f64,
        /// Height of the flat floor, metres (negative for a seafloor). Required.
        base_height_m: f64,
        /// Peak-to-peak amplitude of the seeded noise on top of the floor, metres (default 0).
        #[serde(default)]
        relief_m: f64,
        /// Seed of the noise; absent: the scenario's `seed`.
        #[serde(default)]
        seed: Option<u64>,
        /// Raised bands on the floor (default none).
        #[serde(default)]
        ridges: Vec<Ridge>,
    },
    /// A grayscale PNG (8 or 16 bit): black = `min_height_m`, white = `max_height_m`.
    /// Row 0 is the northern edge, column 0 the western edge.
    Png {
        /// The PNG file, relative to the scenario file's directory. Required.
        path: String,
        /// Spacing of the pixels, metres (> 0). Required.
        cell_size_m: f64,
        /// Height of black, metres. Required.
        min_height_m: f64,
        /// Height of white, metres (above `min_height_m`). Required.
        max_height_m: f64,
    },
    /// A CSV grid of heights in metres (comma separated, one row per line, `#` comments).
    /// Row 0 is the northern edge, column 0 the western edge.
    Csv {
        /// The CSV file, relative to the scenario file's directory. Required.
        path: String,
        /// Spacing of the samples, metres (> 0). Required.
        cell_size_m: f64,
    },
    /// A georeferenced ESRI ASCII grid (`.asc`, as GDAL and GIS tools export one), in
    /// geographic coordinates or a projected CRS: the area of `size_m` around `world.origin`
    /// is resampled from it onto a grid of `cell_size_m`.
    AsciiGrid {
        /// The grid file, relative to the scenario file's directory. Required.
        path: String,
        /// The CRS its cells are in: `EPSG:4326` (latitude, longitude), `EPSG:326NN` or
        /// `EPSG:327NN` (UTM zone NN north or south), `EPSG:3857`, or a PROJ string
        /// (`+proj=…`). Required.
        crs: String,
        /// What its values are: `height` (metres up, default) or `depth` (metres down).
        #[serde(default)]
        values: RasterValues,
        /// Extent `[x, y]` taken around the origin, metres (> 0). Required.
        size_m: [f64; 2],
        /// Spacing of the scenario's samples, metres (> 0). Required.
        cell_size_m: f64,
    },
    /// A georeferenced GeoTIFF (one band of integer or float samples, north up, as GDAL
    /// writes one): the area of `size_m` around `world.origin` is resampled from it onto a grid
    /// of `cell_size_m`.
    Geotiff {
        /// The GeoTIFF, relative to the scenario file's directory. Required.
        path: String,
        /// The CRS its cells are in, as for `ascii_grid`; absent: the EPSG code its GeoKeys
        /// name.
        #[serde(default)]
        crs: Option<String>,
        /// What its values are: `height` (metres up, default) or `depth` (metres down).
        #[serde(default)]
        values: RasterValues,
        /// Extent `[x, y]` taken around the origin, metres (> 0). Required.
        size_m: [f64; 2],
        /// Spacing of the scenario's samples, metres (> 0). Required.
        cell_size_m: f64,
    },
    /// A CF NetCDF grid (classic or NetCDF-4, as GEBCO distributes its tiles: `elevation` over
    /// `lat` and `lon`): the area of `size_m` around `world.origin` is resampled from it onto a
    /// grid of `cell_size_m`.
    Netcdf {
        /// The NetCDF file, relative to the scenario file's directory. Required.
        path: String,
        /// The variable holding the grid, over a y and an x axis (`lat`, `lon` or `y`, `x`);
        /// absent: the first such variable (GEBCO's `elevation`).
        #[serde(default)]
        variable: Option<String>,
        /// The CRS its axes are in, as for `ascii_grid`; absent: `EPSG:4326` for latitude and
        /// longitude axes (required for others).
        #[serde(default)]
        crs: Option<String>,
        /// What its values are: `height` (metres up, default: GEBCO's elevation) or `depth`
        /// (metres down).
        #[serde(default)]
        values: RasterValues,
        /// Extent `[x, y]` taken around the origin, metres (> 0). Required.
        size_m: [f64; 2],
        /// Spacing of the scenario's samples, metres (> 0). Required.
        cell_size_m: f64,
    },
}

/// What a raster terrain's values are.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RasterValues {
    /// Heights, metres up.
    #[default]
    Height,
    /// Depths, metres down (the scenario's z is their negative).
    Depth,
}

/// A ridge: a raised band between two points with a cosine cross-section.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ridge {
    /// One end of the crest line, `[x, y]`, metres. Required.
    pub from: [f64; 2],
    /// The other end, `[x, y]`, metres. Required.
    pub to: [f64; 2],
    /// Crest height (absolute z, metres).
    pub crest_height_m: f64,
    /// Full width at the base, metres.
    pub width_m: f64,
}
