//! Terrain and bathymetry for raycasts: over a height grid, its exact triangulation as a
//! parry3d [`HeightField`], and a height pyramid (min/max, and bounding slabs) used as a
//! conservative broad phase.
//!
//! The grid itself ([`HeightGrid`]: its frame, sources and triangulated surface
//! [`HeightGrid::height_at`]) is [`crate::config::terrain`]'s, read when the scenario is loaded
//! ([`crate::config::LoadedScenario::terrain`]); [`Terrain::new`] builds these structures on it.
//!
//! # Frames
//! The local frame is ENU (x east, y north, z up), the grid centred on the origin, row 0 its
//! northern edge (see [`crate::config::terrain`]).
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
//! Each cell is split along its SW–NE diagonal, parry's default (non-zigzag) subdivision, so
//! [`Terrain::height_at`] (the grid's [`HeightGrid::height_at`]) is the same piecewise-linear
//! surface that parry ray casts against.
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

use std::sync::Arc;

use parry3d_f64::na::{DMatrix, Point3, Vector3};
use parry3d_f64::shape::HeightField;

pub use crate::config::terrain::{HeightGrid, TerrainError, MAX_DIM};

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
    /// The grid's dimensions, cell size and half extent, kept here for the narrow phase.
    cols: usize,
    rows: usize,
    cell: f64,
    half: [f64; 2],
    grid: Arc<HeightGrid>,
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
        origin: &crate::config::GeoOrigin,
    ) -> Result<Terrain, TerrainError> {
        HeightGrid::from_config(cfg, scenario_seed, origin).map(|g| Terrain::new(Arc::new(g)))
    }

    /// A terrain from row-major heights (`rows` rows of `cols` values, row 0 = north).
    pub fn from_grid(
        heights: Vec<f64>,
        cols: usize,
        rows: usize,
        cell_size: f64,
    ) -> Result<Terrain, TerrainError> {
        HeightGrid::new("grid", heights, cols, rows, cell_size).map(|g| Terrain::new(Arc::new(g)))
    }

    /// The raycast structures over a loaded grid (e.g. [`crate::config::LoadedScenario::terrain`]).
    pub fn new(grid: Arc<HeightGrid>) -> Terrain {
        let (cols, rows) = grid.dims();
        let cell = grid.cell_size();
        let half = grid.half_extent();
        let heights = grid.heights();
        let size_x = (cols - 1) as f64 * cell;
        let size_y = (rows - 1) as f64 * cell;
        // parry: matrix row i along +z (= south, row 0 north), column j along +x.
        let m = DMatrix::from_fn(rows, cols, |i, j| heights[i * cols + j]);
        let field = HeightField::new(m, Vector3::new(size_x, 1.0, size_y));
        let levels = build_pyramid(heights, cols, rows);
        let qlevels: Vec<QLevel> = levels
            .iter()
            .enumerate()
            .skip(LEAF_LEVEL)
            .map(|(k, l)| plane_level(heights, cols, rows, k, l))
            .collect();
        let (tiles_w, tiles) = build_tiles(heights, cols, rows);
        let slopes = slope_pyramid(heights, cols, rows, cell, &qlevels);
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Terrain {
            cols,
            rows,
            cell,
            half,
            grid,
            field,
            levels,
            qlevels,
            tiles,
            tiles_w,
            slopes,
            id,
        }
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
        self.grid.heights()
    }

    /// The height grid the terrain is built on.
    pub fn grid(&self) -> &Arc<HeightGrid> {
        &self.grid
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
    pub(crate) fn cell_triangle(
        &self,
        r: usize,
        c: usize,
        nw: bool,
    ) -> parry3d_f64::shape::Triangle {
        let tile = &self.tiles[(r / LEAF) * self.tiles_w + c / LEAF].h;
        let k = (r % LEAF) * TILE_N + c % LEAF;
        let (cw, ch) = (
            1.0 / (self.cols as f64 - 1.0),
            1.0 / (self.rows as f64 - 1.0),
        );
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
            parry3d_f64::shape::Triangle::new(
                p10,
                Point3::new(x1, tile[k + TILE_N + 1] * scale.y, z1),
                p01,
            )
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

    /// Height of the triangulated surface at `(x, y)`, `None` outside the grid's extent.
    pub fn height_at(&self, x: f64, y: f64) -> Option<f64> {
        self.grid.height_at(x, y)
    }

    /// As [`Terrain::height_at`] for a point known to be inside (clamped to the grid).
    #[inline]
    pub fn height_at_unchecked(&self, x: f64, y: f64) -> f64 {
        self.grid.height_at_unchecked(x, y)
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
    QLevel {
        w: l.w,
        h: l.h,
        qw,
        mm,
    }
}

/// The slope levels of [`Terrain::slope_near`], one per compact level: at the leaf level the
/// largest triangle slope of each leaf block's 3 × 3 neighbourhood (its footprint enlarged by
/// one leaf block each way), above it the largest of the four children (whose enlarged
/// footprints cover the parent's).
fn slope_pyramid(
    heights: &[f64],
    cols: usize,
    rows: usize,
    cell: f64,
    qlevels: &[QLevel],
) -> Vec<Vec<f32>> {
    let Some(leaf) = qlevels.first() else {
        return Vec::new();
    };
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
fn up_2x2<T: Copy>(
    prev: &[T],
    w: usize,
    h: usize,
    init: T,
    f: impl Fn(T, T) -> T,
) -> (usize, usize, Vec<T>) {
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
            let mut t = Tile {
                h: [0.0; TILE_N * TILE_N],
            };
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
        let (nw, nh, mm) = up_2x2(
            &prev.mm,
            prev.w,
            prev.h,
            [f64::INFINITY, f64::NEG_INFINITY],
            |[lo, hi], [a, b]| [lo.min(a), hi.max(b)],
        );
        levels.push(Level { w: nw, h: nh, mm });
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` heights uniform in `[0, span)` from `seed` (a 64-bit LCG).
    fn random_heights(n: usize, mut seed: u64, span: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 11) as f64 / (1u64 << 53) as f64 * span
            })
            .collect()
    }

    /// The narrow phase's triangles from the tiles are parry's, bit for bit, for every cell of
    /// a grid whose last leaf blocks are cut short in both directions.
    #[test]
    fn cell_triangles_are_parrys() {
        let (cols, rows, cell) = (23usize, 14usize, 1.7);
        let heights = random_heights(cols * rows, 9, 30.0)
            .iter()
            .map(|h| h - 100.0)
            .collect();
        let t = Terrain::from_grid(heights, cols, rows, cell).unwrap();
        for r in 0..rows - 1 {
            for c in 0..cols - 1 {
                let (nw, se) = t.heightfield().triangles_at(r, c);
                let bits = |tri: &parry3d_f64::shape::Triangle| {
                    [tri.a, tri.b, tri.c].map(|p| p.coords.map(f64::to_bits))
                };
                assert_eq!(
                    bits(&t.cell_triangle(r, c, true)),
                    bits(&nw.unwrap()),
                    "cell ({r}, {c}) north-west"
                );
                assert_eq!(
                    bits(&t.cell_triangle(r, c, false)),
                    bits(&se.unwrap()),
                    "cell ({r}, {c}) south-east"
                );
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
                    assert!(
                        bound >= m,
                        "level {k} block ({bi}, {bj}): bound {bound} < {m}"
                    );
                }
            }
        }
        assert!(
            t.max_slope() >= all && t.max_slope() <= all * (1.0 + 1e-6),
            "{} vs {all}",
            t.max_slope()
        );
    }
}
