//! The scenario's terrain or bathymetry as a plain height grid ([`HeightGrid`]), read from
//! its source (procedural generation from a seed, a PNG or a CSV file, a georeferenced raster
//! through [`super::raster`]) when the scenario is loaded, and the surface it describes ([`HeightGrid::height_at`]). The raycast structures
//! built on it are [`crate::model::terrain`]'s.
//!
//! # Frames
//! The local frame is ENU: x east, y north, z up, metres. The grid is centred on the origin:
//! a grid of `cols × rows` samples with spacing `cell_size` covers
//! `[-size_x/2, size_x/2] × [-size_y/2, size_y/2]` with `size = (cols-1, rows-1) * cell_size`.
//! Sample `(row r, col c)` sits at `x = -size_x/2 + c*cell_size`, `y = size_y/2 - r*cell_size`:
//! row 0 is the northern edge, column 0 the western edge (as in PNG and CSV files).
//!
//! # Triangulation
//! Each cell, with corners NW = (r, c), NE = (r, c+1), SW = (r+1, c), SE = (r+1, c+1), is split
//! along the SW–NE diagonal into the north-west triangle (NW, SW, NE) and the south-east
//! triangle (SW, SE, NE). With `u` the eastward and `v` the southward fraction inside the cell,
//! [`HeightGrid::height_at`] is
//!
//! ```text
//! u + v <= 1:  h = h_NW + u (h_NE - h_NW) + v (h_SW - h_NW)
//! u + v >  1:  h = h_SE + (1-u) (h_SW - h_SE) + (1-v) (h_NE - h_SE)
//! ```
//!
//! the piecewise-linear surface the raycasts use (parry's default, non-zigzag subdivision).
//!
//! # Procedural terrain
//! Deterministic from the seed (ChaCha8): the floor is `base_height_m` plus value noise (three
//! octaves of smoothstep-interpolated lattice noise, wavelengths λ, λ/2, λ/4 with
//! λ = max(min(size_x, size_y)/4, 4 cells)), rescaled so that its peak-to-peak amplitude over the
//! grid is exactly `relief_m`, centred on `base_height_m`. Each ridge, with `d` the distance from
//! the sample to the segment `from → to` (rounded, capped ends) and `w = width_m`, adds the profile
//!
//! ```text
//! p(d) = base + (crest - base) * (1 + cos(2π d / w)) / 2     for d <= w/2
//! ```
//!
//! and the height is `max(floor, p(d))` (ridges never dig into the floor). The grid has
//! `round(size/cell)+1` samples per axis, so its real extent is `(samples-1) * cell`.
//!
//! # Files
//! PNG: 8- or 16-bit grayscale only; black = `min_height_m`, white = `max_height_m`, linear.
//! CSV: comma separated heights in metres, one grid row per line; `#` starts a comment to the end
//! of the line; blank lines are skipped. Grids must be at least 2×2 and at most 8192×8192.
//! Every file problem is a [`TerrainError`] naming the file (and for CSV the line and column),
//! never a panic.

use std::fmt;
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::files::read_bounded;
use super::raster::{self, Crs};
use super::{GeoOrigin, RasterValues, Ridge, Terrain};

/// Largest accepted grid dimension (samples per axis).
pub const MAX_DIM: usize = 8192;

/// Why a terrain could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TerrainError {
    #[error("{path}: cannot read terrain file: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: not a number: {text:?}")]
    CsvBadValue {
        path: PathBuf,
        line: usize,
        column: usize,
        text: String,
    },
    #[error("{path}:{line}:{column}: height is not finite: {text:?}")]
    CsvNonFinite {
        path: PathBuf,
        line: usize,
        column: usize,
        text: String,
    },
    #[error("{path}:{line}: ragged row: {found} values, expected {expected} like the first row")]
    CsvRagged {
        path: PathBuf,
        line: usize,
        expected: usize,
        found: usize,
    },
    #[error("{path}: empty grid (no height values)")]
    Empty { path: PathBuf },
    #[error("{path}: PNG decoding failed: {message}")]
    PngDecode { path: PathBuf, message: String },
    #[error(
        "{path}: unsupported PNG format {color_type} at {bit_depth} bit; \
         terrain PNGs must be 8- or 16-bit grayscale"
    )]
    PngColorType {
        path: PathBuf,
        color_type: String,
        bit_depth: u8,
    },
    #[error("{source_name}: grid is {cols}×{rows} samples; at least 2×2 are needed")]
    TooSmall {
        source_name: String,
        cols: usize,
        rows: usize,
    },
    #[error(
        "{source_name}: grid is {cols}×{rows} samples; at most {MAX_DIM}×{MAX_DIM} are allowed"
    )]
    TooLarge {
        source_name: String,
        cols: usize,
        rows: usize,
    },
    #[error("{source_name}: {message}")]
    Invalid {
        source_name: String,
        message: String,
    },
}

/// A regular height grid: `rows` rows of `cols` heights (metres, z up), row 0 the northern
/// edge, `cell` metres apart, centred on the origin (see the module docs). Every grid is at
/// least 2×2 and at most [`MAX_DIM`] a side, with a finite, positive cell size and finite
/// heights.
#[derive(Clone, PartialEq)]
pub struct HeightGrid {
    cols: usize,
    rows: usize,
    cell: f64,
    half: [f64; 2],
    /// Row-major heights, row 0 = north.
    heights: Vec<f64>,
    /// What a georeferenced file it was resampled from holds: its cells, their CRS, extent.
    source: Option<String>,
}

impl fmt::Debug for HeightGrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeightGrid")
            .field("cols", &self.cols)
            .field("rows", &self.rows)
            .field("cell", &self.cell)
            .finish_non_exhaustive()
    }
}

impl HeightGrid {
    /// For a grid resampled from a georeferenced file, what the file holds: its cells, their
    /// spacing and CRS, the extent of their centres in that CRS.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The grid a scenario's `world.terrain` describes (file paths as given, already resolved).
    /// `scenario_seed` is used when a procedural terrain has no seed of its own.
    pub fn from_config(
        cfg: &Terrain,
        scenario_seed: u64,
        origin: &GeoOrigin,
    ) -> Result<HeightGrid, TerrainError> {
        match cfg {
            Terrain::Procedural {
                size_m,
                cell_size_m,
                base_height_m,
                relief_m,
                seed,
                ridges,
            } => procedural(
                *size_m,
                *cell_size_m,
                *base_height_m,
                *relief_m,
                seed.unwrap_or(scenario_seed),
                ridges,
            ),
            Terrain::Png {
                path,
                cell_size_m,
                min_height_m,
                max_height_m,
            } => load_png(Path::new(path), *cell_size_m, *min_height_m, *max_height_m),
            Terrain::Csv { path, cell_size_m } => load_csv(Path::new(path), *cell_size_m),
            Terrain::AsciiGrid {
                path,
                crs,
                values,
                size_m,
                cell_size_m,
            } => georeferenced(
                path,
                RasterFormat::AsciiGrid,
                Some(crs),
                *values,
                (*size_m, *cell_size_m),
                origin,
            ),
            Terrain::Geotiff {
                path,
                crs,
                values,
                size_m,
                cell_size_m,
            } => georeferenced(
                path,
                RasterFormat::Geotiff,
                crs.as_ref(),
                *values,
                (*size_m, *cell_size_m),
                origin,
            ),
            Terrain::Netcdf {
                path,
                variable,
                crs,
                values,
                size_m,
                cell_size_m,
            } => georeferenced(
                path,
                RasterFormat::Netcdf(variable.as_deref()),
                crs.as_ref(),
                *values,
                (*size_m, *cell_size_m),
                origin,
            ),
        }
    }

    /// A grid from row-major heights (`rows` rows of `cols` values, row 0 = north); `name`
    /// names the source in errors.
    pub fn new(
        name: &str,
        heights: Vec<f64>,
        cols: usize,
        rows: usize,
        cell: f64,
    ) -> Result<HeightGrid, TerrainError> {
        let invalid = |message: String| TerrainError::Invalid {
            source_name: name.into(),
            message,
        };
        if !(cell.is_finite() && cell > 0.0) {
            return Err(invalid(format!(
                "cell size must be finite and > 0, got {cell}"
            )));
        }
        if cols < 2 || rows < 2 {
            return Err(TerrainError::TooSmall {
                source_name: name.into(),
                cols,
                rows,
            });
        }
        if cols > MAX_DIM || rows > MAX_DIM {
            return Err(TerrainError::TooLarge {
                source_name: name.into(),
                cols,
                rows,
            });
        }
        if heights.len() != cols * rows {
            return Err(invalid(format!(
                "{} heights for a {cols}×{rows} grid (expected {})",
                heights.len(),
                cols * rows
            )));
        }
        if let Some(k) = heights.iter().position(|h| !h.is_finite()) {
            return Err(invalid(format!(
                "height at row {}, column {} is not finite",
                k / cols,
                k % cols
            )));
        }
        let half = [
            (cols - 1) as f64 * cell / 2.0,
            (rows - 1) as f64 * cell / 2.0,
        ];
        Ok(HeightGrid {
            cols,
            rows,
            cell,
            half,
            heights,
            source: None,
        })
    }

    /// Half the extent, `[size_x/2, size_y/2]` (metres).
    #[inline]
    pub fn half_extent(&self) -> [f64; 2] {
        self.half
    }

    /// Distance between neighbouring samples (metres).
    #[inline]
    pub fn cell_size(&self) -> f64 {
        self.cell
    }

    /// `(cols, rows)`: samples per row and number of rows.
    #[inline]
    pub fn dims(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }

    /// Row-major heights, row 0 = north.
    #[inline]
    pub fn heights(&self) -> &[f64] {
        &self.heights
    }

    /// The height of sample `(r, c)`.
    #[inline]
    pub fn h(&self, r: usize, c: usize) -> f64 {
        self.heights[r * self.cols + c]
    }

    /// Height of the triangulated surface at `(x, y)`, `None` outside the grid's extent.
    pub fn height_at(&self, x: f64, y: f64) -> Option<f64> {
        if !(x.abs() <= self.half[0] && y.abs() <= self.half[1]) {
            return None;
        }
        Some(self.height_at_unchecked(x, y))
    }

    /// As [`HeightGrid::height_at`] for a point known to be inside (clamped to the grid).
    #[inline]
    pub fn height_at_unchecked(&self, x: f64, y: f64) -> f64 {
        let gx = ((x + self.half[0]) / self.cell).clamp(0.0, (self.cols - 1) as f64);
        let gy = ((self.half[1] - y) / self.cell).clamp(0.0, (self.rows - 1) as f64);
        let c = (gx.floor() as usize).min(self.cols - 2);
        let r = (gy.floor() as usize).min(self.rows - 2);
        let u = gx - c as f64;
        let v = gy - r as f64;
        if u + v <= 1.0 {
            let h00 = self.h(r, c);
            h00 + u * (self.h(r, c + 1) - h00) + v * (self.h(r + 1, c) - h00)
        } else {
            let h11 = self.h(r + 1, c + 1);
            h11 + (1.0 - u) * (self.h(r + 1, c) - h11) + (1.0 - v) * (self.h(r, c + 1) - h11)
        }
    }
}

/// The file format of a georeferenced raster terrain.
#[derive(Debug, Clone, Copy)]
enum RasterFormat<'a> {
    AsciiGrid,
    Geotiff,
    /// A NetCDF grid, and the variable named (absent: the first over a y and an x axis).
    Netcdf(Option<&'a str>),
}

/// The grid of `size_m` around `origin`, `cell` metres apart, resampled from the raster at
/// `path` in `crs` (for a GeoTIFF absent: the one its GeoKeys name; for a NetCDF grid: EPSG:4326
/// when its axes are latitude and longitude).
fn georeferenced(
    path: &str,
    format: RasterFormat,
    crs: Option<&String>,
    values: RasterValues,
    (size_m, cell): ([f64; 2], f64),
    origin: &GeoOrigin,
) -> Result<HeightGrid, TerrainError> {
    let invalid = |message: String| TerrainError::Invalid {
        source_name: path.to_owned(),
        message,
    };
    let cols = (size_m[0] / cell).round() as usize + 1;
    let rows = (size_m[1] / cell).round() as usize + 1;
    if cols > MAX_DIM || rows > MAX_DIM {
        return Err(TerrainError::TooLarge {
            source_name: path.to_owned(),
            cols,
            rows,
        });
    }
    let read = || read_bounded(Path::new(path), raster::MAX_RASTER_BYTES).map_err(invalid);
    let (raster, named) = match format {
        RasterFormat::AsciiGrid => (
            raster::read_ascii_grid(Path::new(path), MAX_DIM).map_err(invalid)?,
            None,
        ),
        RasterFormat::Geotiff => raster::read_geotiff(&read()?, MAX_DIM).map_err(invalid)?,
        RasterFormat::Netcdf(variable) => {
            raster::read_netcdf(&read()?, variable, MAX_DIM).map_err(invalid)?
        }
    };
    let crs = crs.cloned().or(named).ok_or_else(|| {
        invalid(match format {
            RasterFormat::Netcdf(_) => {
                "its axes are not latitude and longitude: give the terrain's `crs`".into()
            }
            _ => "its GeoKeys name no EPSG code: give the terrain's `crs`".into(),
        })
    })?;
    let parsed = Crs::parse(&crs).map_err(invalid)?;
    let depths = values == RasterValues::Depth;
    let heights =
        raster::resample(&raster, &parsed, origin, (cols, rows), cell, depths).map_err(invalid)?;
    // Seven decimals: a centimetre in degrees, without the binary fractions' tails.
    let r = |v: f64| (v * 1e7).round() / 1e7 + 0.0;
    let [w, s, e, n] = raster.extent().map(r);
    let mut grid = HeightGrid::new(path, heights, cols, rows, cell)?;
    grid.source = Some(format!(
        "{} × {} cells {} × {} apart in {crs}, centres from ({w}, {s}) to ({e}, {n})",
        raster.cols,
        raster.rows,
        r(raster.dx),
        r(raster.dy)
    ));
    Ok(grid)
}

fn procedural(
    size_m: [f64; 2],
    cell: f64,
    base: f64,
    relief: f64,
    seed: u64,
    ridges: &[Ridge],
) -> Result<HeightGrid, TerrainError> {
    let name = "procedural terrain";
    let invalid = |message: String| TerrainError::Invalid {
        source_name: name.into(),
        message,
    };
    if !(cell.is_finite() && cell > 0.0) {
        return Err(invalid(format!(
            "cell_size_m must be finite and > 0, got {cell}"
        )));
    }
    for (axis, s) in ["x", "y"].iter().zip(size_m) {
        if !(s.is_finite() && s > 0.0) {
            return Err(invalid(format!(
                "size_m {axis} must be finite and > 0, got {s}"
            )));
        }
    }
    if !base.is_finite() || !(relief.is_finite() && relief >= 0.0) {
        return Err(invalid(format!(
            "base_height_m must be finite and relief_m finite and >= 0 (got {base}, {relief})"
        )));
    }
    for (k, r) in ridges.iter().enumerate() {
        let ok = r.from.iter().chain(&r.to).all(|v| v.is_finite())
            && r.crest_height_m.is_finite()
            && r.width_m.is_finite()
            && r.width_m > 0.0;
        if !ok {
            return Err(invalid(format!(
                "ridge {k}: coordinates and crest height must be finite, width_m > 0"
            )));
        }
    }
    let dim = |s: f64| (s / cell).round() + 1.0;
    let (fc, fr) = (dim(size_m[0]), dim(size_m[1]));
    if fc > MAX_DIM as f64 || fr > MAX_DIM as f64 {
        return Err(TerrainError::TooLarge {
            source_name: name.into(),
            cols: fc.min(usize::MAX as f64) as usize,
            rows: fr.min(usize::MAX as f64) as usize,
        });
    }
    let (cols, rows) = (fc as usize, fr as usize);
    if cols < 2 || rows < 2 {
        return Err(TerrainError::TooSmall {
            source_name: name.into(),
            cols,
            rows,
        });
    }
    let hx = (cols - 1) as f64 * cell / 2.0;
    let hy = (rows - 1) as f64 * cell / 2.0;

    let mut heights = vec![base; cols * rows];
    if relief > 0.0 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let wl = ((2.0 * hx).min(2.0 * hy) / 4.0).max(4.0 * cell);
        let mut noise = vec![0.0; cols * rows];
        let mut amp = 1.0;
        for octave in 0..3 {
            let lambda = wl / f64::from(1u32 << octave);
            let lx = ((2.0 * hx) / lambda).ceil() as usize + 2;
            let ly = ((2.0 * hy) / lambda).ceil() as usize + 2;
            let lattice: Vec<f64> = (0..lx * ly).map(|_| rng.random::<f64>()).collect();
            for r in 0..rows {
                let fy = r as f64 * cell / lambda;
                let iy = (fy.floor() as usize).min(ly - 2);
                let ty = smooth(fy - iy as f64);
                for c in 0..cols {
                    let fx = c as f64 * cell / lambda;
                    let ix = (fx.floor() as usize).min(lx - 2);
                    let tx = smooth(fx - ix as f64);
                    let l = |a: usize, b: usize| lattice[b * lx + a];
                    let top = l(ix, iy) + tx * (l(ix + 1, iy) - l(ix, iy));
                    let bot = l(ix, iy + 1) + tx * (l(ix + 1, iy + 1) - l(ix, iy + 1));
                    noise[r * cols + c] += amp * (top + ty * (bot - top));
                }
            }
            amp *= 0.5;
        }
        let lo = noise.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = noise.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let span = hi - lo;
        if span > 0.0 {
            for (h, n) in heights.iter_mut().zip(&noise) {
                *h = base + relief * ((n - lo) / span - 0.5);
            }
        }
    }
    for ridge in ridges {
        let (ax, ay) = (ridge.from[0], ridge.from[1]);
        let (dx, dy) = (ridge.to[0] - ax, ridge.to[1] - ay);
        let len2 = dx * dx + dy * dy;
        let hw = ridge.width_m / 2.0;
        let rise = ridge.crest_height_m - base;
        // Only the rows/columns within the ridge's bounding box can change.
        let (xmin, xmax) = (ax.min(ax + dx) - hw, ax.max(ax + dx) + hw);
        let (ymin, ymax) = (ay.min(ay + dy) - hw, ay.max(ay + dy) + hw);
        let c0 = (((xmin + hx) / cell).floor().max(0.0) as usize).min(cols - 1);
        let c1 = (((xmax + hx) / cell).ceil().max(0.0) as usize).min(cols - 1);
        let r0 = (((hy - ymax) / cell).floor().max(0.0) as usize).min(rows - 1);
        let r1 = (((hy - ymin) / cell).ceil().max(0.0) as usize).min(rows - 1);
        for r in r0..=r1 {
            let y = hy - r as f64 * cell;
            for c in c0..=c1 {
                let x = -hx + c as f64 * cell;
                let t = if len2 > 0.0 {
                    (((x - ax) * dx + (y - ay) * dy) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let d = ((x - ax - t * dx).powi(2) + (y - ay - t * dy).powi(2)).sqrt();
                if d <= hw {
                    let p = base + rise * 0.5 * (1.0 + (std::f64::consts::PI * d / hw).cos());
                    let h = &mut heights[r * cols + c];
                    *h = h.max(p);
                }
            }
        }
    }
    HeightGrid::new(name, heights, cols, rows, cell)
}

#[inline]
fn smooth(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

fn load_csv(path: &Path, cell: f64) -> Result<HeightGrid, TerrainError> {
    let p = || path.to_path_buf();
    let text =
        std::fs::read_to_string(path).map_err(|source| TerrainError::Io { path: p(), source })?;
    let mut heights = Vec::new();
    let mut cols = 0usize;
    let mut rows = 0usize;
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        if line.trim().is_empty() {
            continue;
        }
        let mut n = 0usize;
        for (k, cell_text) in line.split(',').enumerate() {
            let s = cell_text.trim();
            let v: f64 = s.parse().map_err(|_| TerrainError::CsvBadValue {
                path: p(),
                line: ln + 1,
                column: k + 1,
                text: s.to_string(),
            })?;
            if !v.is_finite() {
                return Err(TerrainError::CsvNonFinite {
                    path: p(),
                    line: ln + 1,
                    column: k + 1,
                    text: s.to_string(),
                });
            }
            heights.push(v);
            n += 1;
        }
        if rows == 0 {
            cols = n;
            if cols > MAX_DIM {
                return Err(TerrainError::TooLarge {
                    source_name: path.display().to_string(),
                    cols,
                    rows: 1,
                });
            }
        } else if n != cols {
            return Err(TerrainError::CsvRagged {
                path: p(),
                line: ln + 1,
                expected: cols,
                found: n,
            });
        }
        rows += 1;
        if rows > MAX_DIM {
            return Err(TerrainError::TooLarge {
                source_name: path.display().to_string(),
                cols,
                rows,
            });
        }
    }
    if rows == 0 {
        return Err(TerrainError::Empty { path: p() });
    }
    HeightGrid::new(&path.display().to_string(), heights, cols, rows, cell)
}

fn load_png(path: &Path, cell: f64, min_h: f64, max_h: f64) -> Result<HeightGrid, TerrainError> {
    let p = || path.to_path_buf();
    let name = path.display().to_string();
    if !(min_h.is_finite() && max_h.is_finite()) {
        return Err(TerrainError::Invalid {
            source_name: name,
            message: format!("min_height_m and max_height_m must be finite ({min_h}, {max_h})"),
        });
    }
    let file =
        std::fs::File::open(path).map_err(|source| TerrainError::Io { path: p(), source })?;
    let dec_err = |e: png::DecodingError| TerrainError::PngDecode {
        path: p(),
        message: e.to_string(),
    };
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::IDENTITY);
    // Room for the largest accepted grid at 16 bit, plus slack for the decoder's own buffers.
    decoder.set_limits(png::Limits {
        bytes: MAX_DIM * MAX_DIM * 2 + (64 << 20),
    });
    let mut reader = decoder.read_info().map_err(dec_err)?;
    let info = reader.info();
    let (cols, rows) = (info.width as usize, info.height as usize);
    let (color, depth) = (info.color_type, info.bit_depth);
    let bits = depth as u8;
    if color != png::ColorType::Grayscale || !(bits == 8 || bits == 16) {
        return Err(TerrainError::PngColorType {
            path: p(),
            color_type: format!("{color:?}"),
            bit_depth: bits,
        });
    }
    if cols < 2 || rows < 2 {
        return Err(TerrainError::TooSmall {
            source_name: name,
            cols,
            rows,
        });
    }
    if cols > MAX_DIM || rows > MAX_DIM {
        return Err(TerrainError::TooLarge {
            source_name: name,
            cols,
            rows,
        });
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| TerrainError::PngDecode {
            path: p(),
            message: "image too large".into(),
        })?;
    let mut buf = vec![0u8; size];
    let out = reader.next_frame(&mut buf).map_err(dec_err)?;
    let stride = out.line_size;
    let mut heights = Vec::with_capacity(cols * rows);
    let span = max_h - min_h;
    for r in 0..rows {
        let line =
            buf.get(r * stride..r * stride + stride)
                .ok_or_else(|| TerrainError::PngDecode {
                    path: p(),
                    message: "short image data".into(),
                })?;
        for c in 0..cols {
            let v = if bits == 16 {
                f64::from(u16::from_be_bytes([line[2 * c], line[2 * c + 1]])) / 65535.0
            } else {
                f64::from(line[c]) / 255.0
            };
            heights.push(min_h + span * v);
        }
    }
    HeightGrid::new(&name, heights, cols, rows, cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The surface passes through every sample and is linear along each cell's edges and its
    /// SW–NE diagonal; outside the extent there is none.
    #[test]
    fn height_at_samples_edges_and_diagonal() {
        // 3 × 2 samples, 2 m apart: x in [-2, 2], y in [-1, 1].
        let g = HeightGrid::new("grid", vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2, 2.0).unwrap();
        assert_eq!(g.half_extent(), [2.0, 1.0]);
        assert_eq!(g.height_at(-2.0, 1.0), Some(1.0));
        assert_eq!(g.height_at(2.0, -1.0), Some(6.0));
        assert_eq!(g.height_at(-1.0, 1.0), Some(1.5));
        // The SW–NE diagonal of the western cell: SW = 4 at (-2, -1), NE = 2 at (0, 1).
        assert_eq!(g.height_at(-1.0, 0.0), Some(3.0));
        assert_eq!(g.height_at(2.5, 0.0), None);
        assert_eq!(g.height_at(0.0, f64::NAN), None);
    }

    #[test]
    fn bad_grids_are_refused() {
        assert!(matches!(
            HeightGrid::new("g", vec![0.0; 4], 2, 2, 0.0),
            Err(TerrainError::Invalid { .. })
        ));
        assert!(matches!(
            HeightGrid::new("g", vec![0.0; 3], 2, 2, 1.0),
            Err(TerrainError::Invalid { .. })
        ));
        assert!(matches!(
            HeightGrid::new("g", vec![0.0; 2], 2, 1, 1.0),
            Err(TerrainError::TooSmall { .. })
        ));
        assert!(matches!(
            HeightGrid::new("g", vec![], MAX_DIM + 1, 2, 1.0),
            Err(TerrainError::TooLarge { .. })
        ));
    }
}
