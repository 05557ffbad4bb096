//! Terrain and bathymetry: a regular height grid, its exact triangulation as a parry3d
//! [`HeightField`], and a height pyramid (min/max, and bounding slabs) used as a conservative broad phase.
//!
//! # Frames
//! The local frame is ENU: x east, y north, z up, metres. The grid is centred on the origin:
//! a grid of `cols × rows` samples with spacing `cell_size` covers
//! `[-size_x/2, size_x/2] × [-size_y/2, size_y/2]` with `size = (cols-1, rows-1) * cell_size`.
//! Sample `(row r, col c)` sits at `x = -size_x/2 + c*cell_size`, `y = size_y/2 - r*cell_size`:
//! row 0 is the northern edge, column 0 the western edge (as in PNG and CSV files).
//!
//! parry's `HeightField` lies in parry's x–z plane with heights along parry's **y** axis; its
//! row index `i` runs along +z and its column index `j` along +x. We map
//!
//! ```text
//! parry (x, y, z) = ours (x, z, -y)        ours (x, y, z) = parry (x, -z, y)
//! ```
//!
//! which is a proper rotation (−90° about x, no mirror), so row `i` of parry's height matrix is
//! exactly row `r = i` of our grid (north first) and column `j` is column `c`. See
//! [`to_parry`] / [`from_parry`].
//!
//! # Triangulation
//! Each cell, with corners NW = (r, c), NE = (r, c+1), SW = (r+1, c), SE = (r+1, c+1), is split
//! along the SW–NE diagonal (parry's default, non-zigzag subdivision) into the north-west
//! triangle (NW, SW, NE) and the south-east triangle (SW, SE, NE). With `u` the eastward and `v`
//! the southward fraction inside the cell, [`Terrain::height_at`] is
//!
//! ```text
//! u + v <= 1:  h = h_NW + u (h_NE - h_NW) + v (h_SW - h_NW)
//! u + v >  1:  h = h_SE + (1-u) (h_SW - h_SE) + (1-v) (h_NE - h_SE)
//! ```
//!
//! the same piecewise-linear surface that parry ray casts against.
//!
//! # Pyramid
//! Level 0 holds, per cell, the min and max of its four corner heights; level `k+1` holds the
//! min/max over 2×2 blocks of level `k`, up to a single root block.
//!
//! For the channel's broad phase the levels from 4 × 4-cell blocks up are also kept as
//! **slabs**: per block two parallel planes that enclose the surface over the block's footprint,
//! `lo + p(gx, gy) ≤ h ≤ hi + p(gx, gy)`, with `p = px (gx - cx) + py (gy - cy)` in grid
//! coordinates about the block's nominal centre. `px, py` are the least-squares plane through
//! the block's samples (rounded to `f32`); `lo, hi` are the exact extremes of the samples'
//! residuals about that plane (the surface minus a plane is linear on each triangle and a block
//! is a union of whole triangles, so the extremes are at samples), rounded outwards to `f32`.
//! Where the flat slab `[min, max]` is thinner it is used (`px = py = 0`). On sloping ground a
//! tilted slab is several times thinner than the min/max range, so a segment is decided at
//! coarser levels. Slabs are stored by 2×2 quads so that a block's four children share one
//! cache line. Each 4 × 4-cell leaf block also has its 5 × 5 corner heights (`f64`, exact) in
//! one aligned 256-byte tile: the channel's linear pre-check reads the surface there, and its
//! narrow phase builds parry's triangle of a cell from the same tile
//! (`Terrain::cell_triangle`, equal to `HeightField::triangles_at`'s), so the one cache miss
//! serves both.
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
//! Every file problem is a [`TerrainError`] naming the file, never a panic.

use std::path::{Path, PathBuf};

use parry3d_f64::na::{DMatrix, Point3, Vector3};
use parry3d_f64::shape::HeightField;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
    CsvBadValue { path: PathBuf, line: usize, column: usize, text: String },
    #[error("{path}:{line}:{column}: height is not finite: {text:?}")]
    CsvNonFinite { path: PathBuf, line: usize, column: usize, text: String },
    #[error("{path}:{line}: ragged row: {found} values, expected {expected} like the first row")]
    CsvRagged { path: PathBuf, line: usize, expected: usize, found: usize },
    #[error("{path}: empty grid (no height values)")]
    Empty { path: PathBuf },
    #[error("{path}: PNG decoding failed: {message}")]
    PngDecode { path: PathBuf, message: String },
    #[error(
        "{path}: unsupported PNG format {color_type} at {bit_depth} bit; \
         terrain PNGs must be 8- or 16-bit grayscale"
    )]
    PngColorType { path: PathBuf, color_type: String, bit_depth: u8 },
    #[error("{source_name}: grid is {cols}×{rows} samples; at least 2×2 are needed")]
    TooSmall { source_name: String, cols: usize, rows: usize },
    #[error("{source_name}: grid is {cols}×{rows} samples; at most {MAX_DIM}×{MAX_DIM} are allowed")]
    TooLarge { source_name: String, cols: usize, rows: usize },
    #[error("{source_name}: {message}")]
    Invalid { source_name: String, message: String },
}

/// One level of the min/max pyramid: `w × h` blocks, each `[min, max]`.
#[derive(Debug, Clone)]
pub(crate) struct Level {
    pub(crate) w: usize,
    pub(crate) h: usize,
    /// Row-major `[min, max]` per block.
    pub(crate) mm: Vec<[f64; 2]>,
}

/// Cells per side of a leaf block: the compact pyramid stops at blocks of `LEAF × LEAF` cells,
/// and each leaf block's `(LEAF+1)²` corner heights are stored together as one [`Tile`].
pub(crate) const LEAF_LEVEL: usize = 2;
pub(crate) const LEAF: usize = 1 << LEAF_LEVEL;
pub(crate) const TILE_N: usize = LEAF + 1;

/// One level of the compact pyramid: per block a bounding slab `[lo, hi]` around a plane,
/// `f32` rounded outwards (so still conservative), stored by 2×2 quads so that the four
/// children of a block share one 64-byte cache line. See [`QLevel::get`].
#[derive(Debug, Clone)]
pub(crate) struct QLevel {
    pub(crate) w: usize,
    pub(crate) h: usize,
    /// Quads per row.
    qw: usize,
    mm: Vec<[f32; 4]>,
}

impl QLevel {
    /// `[lo, hi, px, py]` of block `(bi, bj)` at level `k`: over the block's footprint
    /// `lo + p(gx, gy) <= h <= hi + p(gx, gy)` with `p = px (gx - cx) + py (gy - cy)`,
    /// `(gx, gy)` grid coordinates (columns east, rows south) and `(cx, cy)` the block's
    /// nominal centre `((bj + ½) 2^k, (bi + ½) 2^k)` (see [`block_centre`]).
    #[inline]
    pub(crate) fn get(&self, bi: usize, bj: usize) -> [f32; 4] {
        *self.slot(bi, bj)
    }

    #[inline]
    pub(crate) fn slot(&self, bi: usize, bj: usize) -> &[f32; 4] {
        &self.mm[((bi >> 1) * self.qw + (bj >> 1)) * 4 + (bi & 1) * 2 + (bj & 1)]
    }
}

/// Nominal centre of block `(bi, bj)` of level `k` in grid coordinates `(cx, cy)`: the
/// reference point of its bounding plane (also for blocks cut short by the grid's edge).
#[inline]
pub(crate) fn block_centre(k: usize, bi: usize, bj: usize) -> (f64, f64) {
    let s = fidx(1 << k);
    ((fidx(bj) + 0.5) * s, (fidx(bi) + 0.5) * s)
}

/// A grid or block index as `f64`. Indices are below [`MAX_DIM`], so they go through `u32`,
/// whose conversion is one instruction (a `usize`'s is several on x86-64).
#[inline(always)]
pub(crate) fn fidx(i: usize) -> f64 {
    debug_assert!(i <= u32::MAX as usize);
    f64::from(i as u32)
}

/// The `(LEAF+1)²` corner heights of one leaf block, row-major, in one aligned record.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Tile {
    pub(crate) h: [f64; TILE_N * TILE_N],
}

/// A height grid with its parry triangulation and min/max pyramid. See the module docs.
#[derive(Debug, Clone)]
pub struct Terrain {
    cols: usize,
    rows: usize,
    cell: f64,
    half: [f64; 2],
    /// Row-major heights, row 0 = north.
    heights: Vec<f64>,
    field: HeightField,
    /// `levels[0]` is per cell, the last level is a single block.
    pub(crate) levels: Vec<Level>,
    /// `qlevels[k - LEAF_LEVEL]` is level `k >= LEAF_LEVEL` of the pyramid in compact form.
    pub(crate) qlevels: Vec<QLevel>,
    /// Leaf-block height tiles, row-major by leaf block.
    pub(crate) tiles: Vec<Tile>,
    /// Blocks per row at the leaf level.
    pub(crate) tiles_w: usize,
    /// `slopes[k - LEAF_LEVEL][bi * w + bj]`: the largest slope of the surface near block
    /// `(k, bi, bj)`, see [`Terrain::slope_near`].
    slopes: Vec<Vec<f32>>,
    /// Distinct for every terrain built in this process (a clone keeps it: same heights).
    id: u64,
}

/// Our ENU point to parry's heightfield frame: `(x, y, z) -> (x, z, -y)`.
#[inline]
pub fn to_parry(p: &Point3<f64>) -> Point3<f64> {
    Point3::new(p.x, p.z, -p.y)
}

/// Our ENU vector to parry's heightfield frame: `(x, y, z) -> (x, z, -y)`.
#[inline]
pub fn to_parry_vec(v: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v.x, v.z, -v.y)
}

/// parry's heightfield frame back to our ENU point: `(x, y, z) -> (x, -z, y)`.
#[inline]
pub fn from_parry(p: &Point3<f64>) -> Point3<f64> {
    Point3::new(p.x, -p.z, p.y)
}

impl Terrain {
    /// Builds the terrain a scenario describes. `scenario_seed` is used when a procedural
    /// terrain has no seed of its own.
    pub fn from_config(
        cfg: &crate::config::Terrain,
        scenario_seed: u64,
    ) -> Result<Terrain, TerrainError> {
        use crate::config::Terrain as T;
        match cfg {
            T::Procedural { size_m, cell_size_m, base_height_m, relief_m, seed, ridges } => {
                procedural(
                    *size_m,
                    *cell_size_m,
                    *base_height_m,
                    *relief_m,
                    seed.unwrap_or(scenario_seed),
                    ridges,
                )
            }
            T::Png { path, cell_size_m, min_height_m, max_height_m } => {
                load_png(Path::new(path), *cell_size_m, *min_height_m, *max_height_m)
            }
            T::Csv { path, cell_size_m } => load_csv(Path::new(path), *cell_size_m),
        }
    }

    /// A terrain from row-major heights (`rows` rows of `cols` values, row 0 = north).
    pub fn from_grid(
        heights: Vec<f64>,
        cols: usize,
        rows: usize,
        cell_size: f64,
    ) -> Result<Terrain, TerrainError> {
        Self::build("grid", heights, cols, rows, cell_size)
    }

    fn build(
        name: &str,
        heights: Vec<f64>,
        cols: usize,
        rows: usize,
        cell: f64,
    ) -> Result<Terrain, TerrainError> {
        let invalid = |message: String| TerrainError::Invalid { source_name: name.into(), message };
        if !(cell.is_finite() && cell > 0.0) {
            return Err(invalid(format!("cell size must be finite and > 0, got {cell}")));
        }
        if cols < 2 || rows < 2 {
            return Err(TerrainError::TooSmall { source_name: name.into(), cols, rows });
        }
        if cols > MAX_DIM || rows > MAX_DIM {
            return Err(TerrainError::TooLarge { source_name: name.into(), cols, rows });
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
        let size_x = (cols - 1) as f64 * cell;
        let size_y = (rows - 1) as f64 * cell;
        let half = [size_x / 2.0, size_y / 2.0];
        // parry: matrix row i along +z (= south, row 0 north), column j along +x.
        let m = DMatrix::from_fn(rows, cols, |i, j| heights[i * cols + j]);
        let field = HeightField::new(m, Vector3::new(size_x, 1.0, size_y));
        let levels = build_pyramid(&heights, cols, rows);
        let qlevels: Vec<QLevel> = levels
            .iter()
            .enumerate()
            .skip(LEAF_LEVEL)
            .map(|(k, l)| plane_level(&heights, cols, rows, k, l))
            .collect();
        let (tiles_w, tiles) = build_tiles(&heights, cols, rows);
        let slopes = slope_pyramid(&heights, cols, rows, cell, &qlevels);
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Terrain { cols, rows, cell, half, heights, field, levels, qlevels, tiles, tiles_w, slopes, id })
    }

    /// Half the extent, `[size_x/2, size_y/2]` (metres).
    pub fn half_extent(&self) -> [f64; 2] {
        self.half
    }

    /// Distance between neighbouring samples (metres).
    pub fn cell_size(&self) -> f64 {
        self.cell
    }

    /// `(cols, rows)`: samples per row and number of rows.
    pub fn dims(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }

    /// Row-major heights, row 0 = north.
    pub fn heights(&self) -> &[f64] {
        &self.heights
    }

    /// The parry heightfield, in parry's frame (see [`to_parry`]).
    pub fn heightfield(&self) -> &HeightField {
        &self.field
    }

    /// Smallest and largest height of the grid.
    pub fn height_range(&self) -> [f64; 2] {
        self.levels.last().map(|l| l.mm[0]).unwrap_or([0.0, 0.0])
    }

    /// The largest slope of the triangulated surface, `max |∇h|` over its triangles (metres of
    /// height per metre, rounded up): two points `d` metres apart horizontally differ in height
    /// by at most `max_slope · d`.
    pub fn max_slope(&self) -> f64 {
        self.slopes.last().map_or(0.0, |l| f64::from(l[0]))
    }

    /// parry's triangle `nw` (north-west: NW, SW, NE corners) or south-east (SW, SE, NE) of
    /// cell `(r, c)`, exactly as [`HeightField::triangles_at`] makes it, from the leaf tile.
    #[inline]
    pub(crate) fn cell_triangle(&self, r: usize, c: usize, nw: bool) -> parry3d_f64::shape::Triangle {
        let tile = &self.tiles[(r / LEAF) * self.tiles_w + c / LEAF].h;
        let k = (r % LEAF) * TILE_N + c % LEAF;
        let (cw, ch) = (1.0 / (self.cols as f64 - 1.0), 1.0 / (self.rows as f64 - 1.0));
        let scale = self.field.scale();
        let z0 = (-0.5 + ch * (r as f64)) * scale.z;
        let z1 = (-0.5 + ch * ((r + 1) as f64)) * scale.z;
        let x0 = (-0.5 + cw * (c as f64)) * scale.x;
        let x1 = (-0.5 + cw * ((c + 1) as f64)) * scale.x;
        let p10 = Point3::new(x0, tile[k + TILE_N] * scale.y, z1);
        let p01 = Point3::new(x1, tile[k + 1] * scale.y, z0);
        if nw {
            parry3d_f64::shape::Triangle::new(Point3::new(x0, tile[k] * scale.y, z0), p10, p01)
        } else {
            parry3d_f64::shape::Triangle::new(p10, Point3::new(x1, tile[k + TILE_N + 1] * scale.y, z1), p01)
        }
    }

    /// An identity distinct for every terrain built in this process (clones share it).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// How far around a block [`Self::slope_near`] looks (metres): one leaf block's width.
    pub(crate) fn slope_reach(&self) -> f64 {
        fidx(LEAF) * self.cell
    }

    /// The largest slope `max |∇h|` (rounded up) over the triangles within
    /// [`Self::slope_reach`] of block `(k, bi, bj)`'s footprint, `k >= LEAF_LEVEL`: two points
    /// there `d` metres apart horizontally, on a straight line that stays there, differ in
    /// height by at most this times `d`.
    #[inline]
    pub(crate) fn slope_near(&self, k: usize, bi: usize, bj: usize) -> f64 {
        let l = &self.qlevels[k - LEAF_LEVEL];
        f64::from(self.slopes[k - LEAF_LEVEL][bi * l.w + bj])
    }

    #[inline]
    pub(crate) fn h(&self, r: usize, c: usize) -> f64 {
        self.heights[r * self.cols + c]
    }

    /// Height of the triangulated surface at `(x, y)`, `None` outside the grid's extent.
    pub fn height_at(&self, x: f64, y: f64) -> Option<f64> {
        if !(x.abs() <= self.half[0] && y.abs() <= self.half[1]) {
            return None;
        }
        Some(self.height_at_unchecked(x, y))
    }

    /// As [`Terrain::height_at`] for a point known to be inside (clamped to the grid).
    #[inline]
    pub(crate) fn height_at_unchecked(&self, x: f64, y: f64) -> f64 {
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

/// Largest f32 not above `v`.
fn f32_down(v: f64) -> f32 {
    let m = v as f32;
    if f64::from(m) <= v {
        m
    } else if m == 0.0 {
        -f32::from_bits(1)
    } else if m > 0.0 {
        f32::from_bits(m.to_bits() - 1)
    } else {
        f32::from_bits(m.to_bits() + 1)
    }
}

/// Smallest f32 not below `v`.
pub(crate) fn f32_up(v: f64) -> f32 {
    -f32_down(-v)
}

/// Level `k` of the compact pyramid: for each block, the least-squares plane through its
/// samples (coefficients rounded to `f32`) and the exact extremes of the samples' residuals
/// about it, unless the flat slab `[min, max]` is thinner. The surface is linear on each
/// triangle and a block's footprint is a union of whole triangles, so the residual of any
/// plane is extreme at a sample: the slab bounds the surface over the whole footprint.
fn plane_level(heights: &[f64], cols: usize, rows: usize, k: usize, l: &Level) -> QLevel {
    let qw = l.w.div_ceil(2);
    let qh = l.h.div_ceil(2);
    // Blocks beyond the level's edge (padding of the last quads) can never be hit.
    let mut mm = vec![[f32::INFINITY, f32::NEG_INFINITY, 0.0, 0.0]; qw * qh * 4];
    let s = 1usize << k;
    for bi in 0..l.h {
        for bj in 0..l.w {
            let (r0, c0) = (bi * s, bj * s);
            let (r1, c1) = ((r0 + s).min(rows - 1), (c0 + s).min(cols - 1));
            let (nr, nc) = ((r1 - r0 + 1) as f64, (c1 - c0 + 1) as f64);
            // Sample means of the coordinates, and the moments of a regular grid about them.
            let (xm, ym) = ((c0 + c1) as f64 / 2.0, (r0 + r1) as f64 / 2.0);
            let (mut shx, mut shy) = (0.0, 0.0);
            for r in r0..=r1 {
                let row = &heights[r * cols + c0..=r * cols + c1];
                let dy = r as f64 - ym;
                for (j, &h) in row.iter().enumerate() {
                    shx += h * ((c0 + j) as f64 - xm);
                    shy += h * dy;
                }
            }
            let sxx = nr * (nc - 1.0) * nc * (nc + 1.0) / 12.0;
            let syy = nc * (nr - 1.0) * nr * (nr + 1.0) / 12.0;
            let px = if sxx > 0.0 { (shx / sxx) as f32 } else { 0.0 };
            let py = if syy > 0.0 { (shy / syy) as f32 } else { 0.0 };
            let [hmin, hmax] = l.mm[bi * l.w + bj];
            let (cx, cy) = block_centre(k, bi, bj);
            let (fx, fy) = (f64::from(px), f64::from(py));
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for r in r0..=r1 {
                let row = &heights[r * cols + c0..=r * cols + c1];
                let py_r = fy * (r as f64 - cy);
                for (j, &h) in row.iter().enumerate() {
                    let e = h - (fx * ((c0 + j) as f64 - cx) + py_r);
                    lo = lo.min(e);
                    hi = hi.max(e);
                }
            }
            let q = ((bi >> 1) * qw + (bj >> 1)) * 4 + (bi & 1) * 2 + (bj & 1);
            mm[q] = if hi - lo < hmax - hmin {
                [f32_down(lo), f32_up(hi), px, py]
            } else {
                [f32_down(hmin), f32_up(hmax), 0.0, 0.0]
            };
        }
    }
    QLevel { w: l.w, h: l.h, qw, mm }
}

/// The slope levels of [`Terrain::slope_near`], one per compact level: at the leaf level the
/// largest triangle slope of each leaf block's 3 × 3 neighbourhood (its footprint enlarged by
/// one leaf block each way), above it the largest of the four children (whose enlarged
/// footprints cover the parent's).
fn slope_pyramid(heights: &[f64], cols: usize, rows: usize, cell: f64, qlevels: &[QLevel]) -> Vec<Vec<f32>> {
    let Some(leaf) = qlevels.first() else { return Vec::new() };
    let (w, h) = (leaf.w, leaf.h);
    // Largest slope within each leaf block (cells of the last blocks may be fewer).
    let mut own = vec![0.0f64; w * h];
    for r in 0..rows - 1 {
        for c in 0..cols - 1 {
            let at = |r: usize, c: usize| heights[r * cols + c];
            let (nw, ne, sw, se) = (at(r, c), at(r, c + 1), at(r + 1, c), at(r + 1, c + 1));
            // The north-west triangle's gradient (NE - NW, SW - NW), the south-east one's.
            let g = (ne - nw).hypot(sw - nw).max((se - sw).hypot(se - ne)) / cell;
            let b = &mut own[(r / LEAF).min(h - 1) * w + (c / LEAF).min(w - 1)];
            *b = b.max(g);
        }
    }
    let up = |g: f64| f32_up(g * (1.0 + 1e-12));
    let mut levels = Vec::with_capacity(qlevels.len());
    let mut cur = vec![0.0f32; w * h];
    for bi in 0..h {
        for bj in 0..w {
            let mut m = 0.0f64;
            for i in bi.saturating_sub(1)..(bi + 2).min(h) {
                for j in bj.saturating_sub(1)..(bj + 2).min(w) {
                    m = m.max(own[i * w + j]);
                }
            }
            cur[bi * w + bj] = up(m);
        }
    }
    levels.push(cur);
    for child in &qlevels[..qlevels.len() - 1] {
        let prev = levels.last().expect("leaf level");
        let (_, _, next) = up_2x2(prev, child.w, child.h, 0.0f32, f32::max);
        levels.push(next);
    }
    levels
}

/// One level up a pyramid: the `w × h` blocks of `prev` (row-major) combined by `f` over each
/// parent's (up to) 2 × 2 children, starting from `init`; returns the parent level's width,
/// height and blocks.
fn up_2x2<T: Copy>(prev: &[T], w: usize, h: usize, init: T, f: impl Fn(T, T) -> T) -> (usize, usize, Vec<T>) {
    let (nw, nh) = (w.div_ceil(2), h.div_ceil(2));
    let mut out = Vec::with_capacity(nw * nh);
    for r in 0..nh {
        for c in 0..nw {
            let mut acc = init;
            for rr in (2 * r)..(2 * r + 2).min(h) {
                for cc in (2 * c)..(2 * c + 2).min(w) {
                    acc = f(acc, prev[rr * w + cc]);
                }
            }
            out.push(acc);
        }
    }
    (nw, nh, out)
}

fn build_tiles(heights: &[f64], cols: usize, rows: usize) -> (usize, Vec<Tile>) {
    let tw = (cols - 1).div_ceil(LEAF);
    let th = (rows - 1).div_ceil(LEAF);
    let mut tiles = Vec::with_capacity(tw * th);
    for ti in 0..th {
        for tj in 0..tw {
            let mut t = Tile { h: [0.0; TILE_N * TILE_N] };
            for a in 0..TILE_N {
                let r = (ti * LEAF + a).min(rows - 1);
                for b in 0..TILE_N {
                    let c = (tj * LEAF + b).min(cols - 1);
                    t.h[a * TILE_N + b] = heights[r * cols + c];
                }
            }
            tiles.push(t);
        }
    }
    (tw, tiles)
}

fn build_pyramid(heights: &[f64], cols: usize, rows: usize) -> Vec<Level> {
    let (w, h) = (cols - 1, rows - 1);
    let mut mm = Vec::with_capacity(w * h);
    for r in 0..h {
        for c in 0..w {
            let a = heights[r * cols + c];
            let b = heights[r * cols + c + 1];
            let d = heights[(r + 1) * cols + c];
            let e = heights[(r + 1) * cols + c + 1];
            mm.push([a.min(b).min(d).min(e), a.max(b).max(d).max(e)]);
        }
    }
    let mut levels = vec![Level { w, h, mm }];
    loop {
        let prev = levels.last().expect("level 0 exists");
        if prev.w == 1 && prev.h == 1 {
            break;
        }
        let (nw, nh, mm) =
            up_2x2(&prev.mm, prev.w, prev.h, [f64::INFINITY, f64::NEG_INFINITY], |[lo, hi], [a, b]| [lo.min(a), hi.max(b)]);
        levels.push(Level { w: nw, h: nh, mm });
    }
    levels
}

fn procedural(
    size_m: [f64; 2],
    cell: f64,
    base: f64,
    relief: f64,
    seed: u64,
    ridges: &[crate::config::Ridge],
) -> Result<Terrain, TerrainError> {
    let name = "procedural terrain";
    let invalid = |message: String| TerrainError::Invalid { source_name: name.into(), message };
    if !(cell.is_finite() && cell > 0.0) {
        return Err(invalid(format!("cell_size_m must be finite and > 0, got {cell}")));
    }
    for (axis, s) in ["x", "y"].iter().zip(size_m) {
        if !(s.is_finite() && s > 0.0) {
            return Err(invalid(format!("size_m {axis} must be finite and > 0, got {s}")));
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
        return Err(TerrainError::TooSmall { source_name: name.into(), cols, rows });
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
                    let p = base
                        + rise * 0.5 * (1.0 + (std::f64::consts::PI * d / hw).cos());
                    let h = &mut heights[r * cols + c];
                    *h = h.max(p);
                }
            }
        }
    }
    Terrain::build(name, heights, cols, rows, cell)
}

#[inline]
fn smooth(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

fn load_csv(path: &Path, cell: f64) -> Result<Terrain, TerrainError> {
    let p = || path.to_path_buf();
    let text = std::fs::read_to_string(path).map_err(|source| TerrainError::Io { path: p(), source })?;
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
            return Err(TerrainError::CsvRagged { path: p(), line: ln + 1, expected: cols, found: n });
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
    Terrain::build(&path.display().to_string(), heights, cols, rows, cell)
}

fn load_png(path: &Path, cell: f64, min_h: f64, max_h: f64) -> Result<Terrain, TerrainError> {
    let p = || path.to_path_buf();
    let name = path.display().to_string();
    if !(min_h.is_finite() && max_h.is_finite()) {
        return Err(TerrainError::Invalid {
            source_name: name,
            message: format!("min_height_m and max_height_m must be finite ({min_h}, {max_h})"),
        });
    }
    let file = std::fs::File::open(path).map_err(|source| TerrainError::Io { path: p(), source })?;
    let dec_err = |e: png::DecodingError| TerrainError::PngDecode { path: p(), message: e.to_string() };
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::IDENTITY);
    // Room for the largest accepted grid at 16 bit, plus slack for the decoder's own buffers.
    decoder.set_limits(png::Limits { bytes: MAX_DIM * MAX_DIM * 2 + (64 << 20) });
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
        return Err(TerrainError::TooSmall { source_name: name, cols, rows });
    }
    if cols > MAX_DIM || rows > MAX_DIM {
        return Err(TerrainError::TooLarge { source_name: name, cols, rows });
    }
    let size = reader.output_buffer_size().ok_or_else(|| TerrainError::PngDecode {
        path: p(),
        message: "image too large".into(),
    })?;
    let mut buf = vec![0u8; size];
    let out = reader.next_frame(&mut buf).map_err(dec_err)?;
    let stride = out.line_size;
    let mut heights = Vec::with_capacity(cols * rows);
    let span = max_h - min_h;
    for r in 0..rows {
        let line = buf.get(r * stride..r * stride + stride).ok_or_else(|| TerrainError::PngDecode {
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
    Terrain::build(&name, heights, cols, rows, cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` heights uniform in `[0, span)` from `seed` (a 64-bit LCG).
    fn random_heights(n: usize, mut seed: u64, span: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (seed >> 11) as f64 / (1u64 << 53) as f64 * span
            })
            .collect()
    }

    /// The narrow phase's triangles from the tiles are parry's, bit for bit, for every cell of
    /// a grid whose last leaf blocks are cut short in both directions.
    #[test]
    fn cell_triangles_are_parrys() {
        let (cols, rows, cell) = (23usize, 14usize, 1.7);
        let heights = random_heights(cols * rows, 9, 30.0).iter().map(|h| h - 100.0).collect();
        let t = Terrain::from_grid(heights, cols, rows, cell).unwrap();
        for r in 0..rows - 1 {
            for c in 0..cols - 1 {
                let (nw, se) = t.heightfield().triangles_at(r, c);
                let bits = |tri: &parry3d_f64::shape::Triangle| {
                    [tri.a, tri.b, tri.c].map(|p| p.coords.map(f64::to_bits))
                };
                assert_eq!(bits(&t.cell_triangle(r, c, true)), bits(&nw.unwrap()), "cell ({r}, {c}) north-west");
                assert_eq!(bits(&t.cell_triangle(r, c, false)), bits(&se.unwrap()), "cell ({r}, {c}) south-east");
            }
        }
    }

    /// Every block's slope bound covers every triangle within one leaf block of its footprint
    /// (brute force, on a grid whose last blocks are cut short), and the top one is the
    /// largest slope of all.
    #[test]
    fn slope_bounds_cover_each_blocks_surroundings() {
        let (cols, rows, cell) = (38usize, 27usize, 1.5);
        let heights = random_heights(cols * rows, 3, 20.0);
        let t = Terrain::from_grid(heights.clone(), cols, rows, cell).unwrap();
        let at = |r: usize, c: usize| heights[r * cols + c];
        // Slope of cell (r, c)'s steeper triangle.
        let cell_slope = |r: usize, c: usize| {
            let (nw, ne, sw, se) = (at(r, c), at(r, c + 1), at(r + 1, c), at(r + 1, c + 1));
            (ne - nw).hypot(sw - nw).max((se - sw).hypot(se - ne)) / cell
        };
        let mut all = 0.0f64;
        for (i, l) in t.qlevels.iter().enumerate() {
            let k = i + LEAF_LEVEL;
            let size = 1usize << k;
            for bi in 0..l.h {
                for bj in 0..l.w {
                    let r0 = (bi * size).saturating_sub(LEAF);
                    let c0 = (bj * size).saturating_sub(LEAF);
                    let r1 = ((bi + 1) * size + LEAF).min(rows - 1);
                    let c1 = ((bj + 1) * size + LEAF).min(cols - 1);
                    let mut m = 0.0f64;
                    for r in r0..r1 {
                        for c in c0..c1 {
                            m = m.max(cell_slope(r, c));
                        }
                    }
                    all = all.max(m);
                    let bound = t.slope_near(k, bi, bj);
                    assert!(bound >= m, "level {k} block ({bi}, {bj}): bound {bound} < {m}");
                }
            }
        }
        assert!(t.max_slope() >= all && t.max_slope() <= all * (1.0 + 1e-6), "{} vs {all}", t.max_slope());
    }
}
