//! The geometric channel between two points: line of sight through the terrain and the length
//! of terrain a straight path crosses.
//!
//! # Semantics
//! The path from `A` to `B` is the straight segment `P(t) = A + t (B - A)`, `t ∈ [0, 1]`, in the
//! local ENU frame (metres, z up; see [`crate::model::terrain`]). With `h(x, y)` the triangulated
//! terrain surface ([`Terrain::height_at`]) let `f(t) = z(t) - h(x(t), y(t))`.
//!
//! - A point of the segment is **obstructed** where `f(t) <= 0`: on or below the surface.
//! - `los` is true iff no point of the segment is obstructed. A segment that only touches the
//!   surface (grazing a crest, `f = 0` at a single point) is **NLOS**: it yields an entry and an
//!   exit hop at the same point with 0 dB. A stretch where the segment runs along a facet
//!   (coplanar, `|f| <= 1e-9 m`) is obstructed but contributes no penetration length.
//! - `hops = [A, entry₁, exit₁, entry₂, exit₂, …, B]`, one entry/exit pair per maximal obstructed
//!   interval, in order from A to B. Entries carry 0 dB; an exit carries
//!   `penetration_loss_db_per_m × (length of the segment strictly below the surface between
//!   that entry and exit)`. `A` and `B` carry 0 dB. The total loss of the path is the sum.
//! - An endpoint below (or on) the surface starts or ends an obstruction at itself: the entry
//!   hop equals `A` (or the exit hop equals `B`).
//! - Outside the grid's extent there is no terrain: nothing is obstructed there, and an
//!   obstruction that reaches the edge of the grid ends (or starts) at the edge.
//! - A segment with non-finite coordinates is reported as LOS, `hops = [A, B]`.
//!
//! # Algorithm
//! 1. Clip the segment to the grid's footprint.
//! 2. **Broad phase** ([`trace`] only): walk the terrain's min/max pyramid (its compact `f32`
//!    form, bounds rounded outwards) from the root down to leaf blocks of 4 × 4 cells. For a
//!    block, the segment's parameter range over the block's footprint (slightly enlarged; found
//!    from the parent's column and row slabs, no division per block) gives its lowest and
//!    highest z there (z is linear in `t`). Lowest z above the block's max height ⇒ the segment
//!    is above the terrain over the whole block: skipped. Highest z below the block's min ⇒
//!    entirely below: recorded as buried. Otherwise the block is split; leaf blocks that are
//!    still undecided become candidate stretches (merged where they touch).
//! 3. **Exact linear pre-check**: the surface is linear on each triangle, and the triangles'
//!    edges are the grid lines `gx = k`, `gy = k` and the SW–NE diagonals `gx + gy = k` (grid
//!    coordinates, integer `k`). So between consecutive crossings of those lines by the
//!    segment's xy-projection the clearance `f(t)` is linear, and its sign can only change on a
//!    piece whose ends differ in sign or touch 0. Each candidate stretch is walked piece by
//!    piece (three interleaved line families, as a 2-D DDA), evaluating `f` at the breakpoints
//!    only, from per-leaf-block height tiles. A piece with `f` beyond a tolerance (1 µm plus
//!    twice the tiles' `f32` rounding bound) of one sign at both ends is Above or Below,
//!    decided without parry; the others are candidates for the narrow phase.
//! 4. **Narrow phase**: every crossing of the surface inside a candidate piece is found with
//!    parry's ray cast against the [`HeightField`](parry3d_f64::shape::HeightField) triangle the
//!    piece lies on (`HeightField::triangles_at`), always with the ray from the exact endpoint `A`
//!    along `B - A` (time of impact = `t`), so a crossing is computed from the original
//!    coordinates whatever the stretch. A line meets a triangle's plane at most once. parry's
//!    3-D triangle ray cast is two-sided (it ignores `solid` and hits faces from above and below
//!    alike), so entries and exits are both found. Between consecutive crossings `f` keeps one
//!    sign, read from the exact surface at both ends and the midpoint of the sub-interval (the
//!    sample of largest `|f|` decides; all three within 1e-9 m of the surface = running along
//!    it). A crossing a cast missed (a hit exactly on a triangle edge can be rejected by rounding)
//!    shows as opposite signs there and is found by bisection on the exact surface.
//! 5. Adjacent obstructed pieces merge into maximal intervals; crossings with free space on
//!    both sides are touches (entry = exit, 0 dB).
//!
//! Per-call scratch buffers are kept per thread, so the hot path allocates only the result.
//!
//! [`trace_naive`] is parry alone, the reference the broad phase is measured and tested
//! against: no pyramid; `HeightField::cast_local_ray` from `A` (or the grid edge) finds the first
//! crossing, the next ray starts 1 nm past it, and so on to the end of the clipped segment.

use std::sync::OnceLock;

use nalgebra::{Point3, Vector3};
use parry3d_f64::query::{Ray, RayCast};

use crate::model::terrain::{to_parry, to_parry_vec, Terrain, LEAF, LEAF_LEVEL};

/// One point of a path: `A`, an entry into or exit out of the terrain, or `B`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hop {
    pub point: Point3<f64>,
    /// Loss charged at this hop (dB): non-zero only on exits.
    pub loss_db: f64,
}

/// The geometry of one path: see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct PathInfo {
    pub los: bool,
    /// `[A, entry₁, exit₁, …, B]`.
    pub hops: Vec<Hop>,
}

impl PathInfo {
    /// Sum of the hops' losses (dB).
    pub fn total_loss_db(&self) -> f64 {
        self.hops.iter().map(|h| h.loss_db).sum()
    }
}

/// Heights within this distance of the surface count as on it (metres).
const ON_TOL: f64 = 1e-9;
/// After a crossing, the next ray starts this far along the segment (metres).
const STEP_M: f64 = 1e-9;
/// Footprint enlargement of pyramid blocks, in cells (keeps the broad phase conservative).
const GRID_EPS: f64 = 1e-7;
/// The linear pre-check decides a piece without parry only if its clearance is beyond this (plus
/// twice the tiles' f32 rounding bound) at both ends (metres): well above rounding, so pieces
/// near the surface always go to parry.
const PRE_TOL: f64 = 1e-6;
/// Safety cap on crossings per candidate stretch.
const MAX_CROSSINGS: usize = 1 << 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Above,
    On,
    Below,
    /// Broad-phase candidate (to be ray cast).
    Mixed,
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    t0: f64,
    t1: f64,
    state: State,
}

struct Seg {
    a: Point3<f64>,
    d: Vector3<f64>,
    len: f64,
}

impl Seg {
    #[inline]
    fn at(&self, t: f64) -> Point3<f64> {
        self.a + self.d * t
    }
}

/// The path between `a` and `b` through `terrain`. See the module docs for the semantics.
pub fn trace(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    penetration_loss_db_per_m: f64,
) -> PathInfo {
    trace_impl(terrain, a, b, penetration_loss_db_per_m, true)
}

/// As [`trace`], without the pyramid broad phase: parry ray casts over the whole clipped
/// segment. Same results; the baseline for tests and benchmarks.
pub fn trace_naive(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    penetration_loss_db_per_m: f64,
) -> PathInfo {
    trace_impl(terrain, a, b, penetration_loss_db_per_m, false)
}

fn los(a: &Point3<f64>, b: &Point3<f64>) -> PathInfo {
    PathInfo {
        los: true,
        hops: vec![Hop { point: *a, loss_db: 0.0 }, Hop { point: *b, loss_db: 0.0 }],
    }
}

/// Reusable per-thread buffers of [`trace`] (no allocation in the hot path but the result).
#[derive(Default)]
struct Scratch {
    recs: Vec<Piece>,
    stack: Vec<(usize, usize, usize)>,
    assembled: Vec<Piece>,
    parts: Vec<Piece>,
    mixed: Vec<Piece>,
    below: Vec<Piece>,
    pieces: Vec<Piece>,
    hits: Vec<f64>,
    resolved: Vec<Piece>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn trace_impl(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    loss_per_m: f64,
    broad: bool,
) -> PathInfo {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => trace_with(terrain, a, b, loss_per_m, broad, &mut s),
        Err(_) => trace_with(terrain, a, b, loss_per_m, broad, &mut Scratch::default()),
    })
}

fn trace_with(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    loss_per_m: f64,
    broad: bool,
    sc: &mut Scratch,
) -> PathInfo {
    if !(a.coords.iter().chain(b.coords.iter()).all(|v| v.is_finite())) {
        return los(a, b);
    }
    let d = b - a;
    let seg = Seg { a: *a, d, len: d.norm() };
    let [hx, hy] = terrain.half_extent();

    if seg.len == 0.0 {
        if let Some(h) = terrain.height_at(a.x, a.y) {
            if a.z - h <= ON_TOL {
                let hop = Hop { point: *a, loss_db: 0.0 };
                return PathInfo { los: false, hops: vec![hop, hop, hop, Hop { point: *b, loss_db: 0.0 }] };
            }
        }
        return los(a, b);
    }

    // 1. Clip to the footprint.
    let Some((t_lo, t_hi)) = clip(a.x, d.x, -hx, hx, 0.0, 1.0)
        .and_then(|(l, h)| clip(a.y, d.y, -hy, hy, l, h))
    else {
        return los(a, b);
    };

    let Scratch { recs, stack, assembled, parts, mixed, below, pieces, hits, resolved } = sc;
    pieces.clear();
    hits.clear();
    resolved.clear();

    // 2. Broad phase (pyramid) and exact linear pre-check (cell walk).
    if broad {
        let range = terrain.height_range();
        let zmin = a.z.min(b.z);
        if zmin > range[1] + ON_TOL {
            return los(a, b);
        }
        recs.clear();
        broad_phase(terrain, &seg, t_lo, t_hi, recs, stack);
        if recs.is_empty() {
            return los(a, b);
        }
        recs.sort_unstable_by(|p, q| p.t0.total_cmp(&q.t0));
        assemble(recs, t_lo, t_hi, assembled, parts, mixed, below);
        let walk = Walk::new(terrain, &seg);
        for p in assembled.iter() {
            if p.state == State::Mixed {
                walk.run(p.t0, p.t1, pieces, hits);
            } else {
                push_piece(pieces, *p);
            }
        }
        if pieces.iter().all(|p| p.state == State::Above) {
            return los(a, b);
        }
    } else {
        pieces.push(Piece { t0: t_lo, t1: t_hi, state: State::Mixed });
    }

    // 3. Narrow phase.
    if broad {
        hits.sort_unstable_by(f64::total_cmp);
        let mut k = 0;
        for p in pieces.iter() {
            if p.state != State::Mixed {
                resolved.push(*p);
                continue;
            }
            let mut prev = p.t0;
            while k < hits.len() && hits[k] <= p.t1 {
                let h = hits[k].max(prev);
                push_resolved(terrain, &seg, prev, h, resolved);
                resolved.push(Piece { t0: h, t1: h, state: State::On });
                prev = h;
                k += 1;
            }
            push_resolved(terrain, &seg, prev, p.t1, resolved);
        }
    } else {
        for p in pieces.iter() {
            narrow_phase_naive(terrain, &seg, p.t0, p.t1, resolved);
        }
    }

    // 4. Maximal obstructed intervals.
    let mut hops = vec![Hop { point: *a, loss_db: 0.0 }];
    let mut run: Option<(f64, f64, f64)> = None; // (t_entry, t_exit, buried length in t)
    for p in resolved.iter() {
        match (p.state, run.as_mut()) {
            (State::Above, Some(_)) => {
                let (t0, t1, buried) = run.take().expect("run is open");
                push_run(&mut hops, &seg, t0, t1, buried, loss_per_m);
            }
            (State::Above, None) => {}
            (s, Some(r)) => {
                r.1 = p.t1.max(r.1);
                if s == State::Below {
                    r.2 += p.t1 - p.t0;
                }
            }
            (s, None) => {
                run = Some((p.t0, p.t1, if s == State::Below { p.t1 - p.t0 } else { 0.0 }));
            }
        }
    }
    if let Some((t0, t1, buried)) = run {
        push_run(&mut hops, &seg, t0, t1, buried, loss_per_m);
    }
    hops.push(Hop { point: *b, loss_db: 0.0 });
    PathInfo { los: hops.len() == 2, hops }
}

/// Appends a piece, merging it into the previous one when both are Above or both Below.
#[inline]
fn push_piece(out: &mut Vec<Piece>, p: Piece) {
    if p.t1 < p.t0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.state == p.state && p.state != State::Mixed && p.state != State::On {
            last.t1 = last.t1.max(p.t1);
            return;
        }
    }
    out.push(p);
}

/// The segment in grid coordinates, for the exact cell walk of candidate stretches.
///
/// `gx` counts cells east from the west edge, `gy` cells south from the north edge. The
/// surface is linear on each triangle, and the triangles' edges are the lines `gx = k`,
/// `gy = k` and (the SW–NE diagonals) `gx + gy = k` for integers `k`. Between consecutive
/// crossings of those lines the clearance `f(t)` is therefore linear in `t`.
struct Walk<'a> {
    terrain: &'a Terrain,
    seg: &'a Seg,
    ray: Ray,
    g0: [f64; 3],
    dg: [f64; 3],
    ncw: usize,
    nch: usize,
    /// Clearance beyond which a piece is decided without parry (metres).
    tol: f64,
}

impl<'a> Walk<'a> {
    fn new(terrain: &'a Terrain, seg: &'a Seg) -> Walk<'a> {
        let cs = terrain.cell_size();
        let [hx, hy] = terrain.half_extent();
        let gx0 = (seg.a.x + hx) / cs;
        let gy0 = (hy - seg.a.y) / cs;
        let dgx = seg.d.x / cs;
        let dgy = -seg.d.y / cs;
        let (ncw, nch) = (terrain.dims().0 - 1, terrain.dims().1 - 1);
        Walk {
            terrain,
            seg,
            ray: Ray::new(to_parry(&seg.a), to_parry_vec(&seg.d)),
            g0: [gx0, gy0, gx0 + gy0],
            dg: [dgx, dgy, dgx + dgy],
            ncw,
            nch,
            tol: PRE_TOL + 2.0 * terrain.tile_tolerance(),
        }
    }

    /// Clearance at `t` on the triangulated surface (grid coordinates clamped to the grid),
    /// from the leaf-block tiles: within [`Terrain::tile_tolerance`] of the exact value.
    #[inline]
    fn f(&self, t: f64) -> f64 {
        let gx = (self.g0[0] + t * self.dg[0]).clamp(0.0, self.ncw as f64);
        let gy = (self.g0[1] + t * self.dg[1]).clamp(0.0, self.nch as f64);
        let c = (gx as usize).min(self.ncw - 1);
        let r = (gy as usize).min(self.nch - 1);
        let (u, v) = (gx - c as f64, gy - r as f64);
        let tile = &self.terrain.tiles[(r / LEAF) * self.terrain.tiles_w + c / LEAF].h;
        let k = (r % LEAF) * (LEAF + 1) + c % LEAF;
        let at = |i: usize| f64::from(tile[i]);
        let h = if u + v <= 1.0 {
            let h00 = at(k);
            h00 + u * (at(k + 1) - h00) + v * (at(k + LEAF + 1) - h00)
        } else {
            let h11 = at(k + LEAF + 2);
            h11 + (1.0 - u) * (at(k + LEAF + 1) - h11) + (1.0 - v) * (at(k + 1) - h11)
        };
        self.seg.a.z + t * self.seg.d.z - h
    }

    /// The cell `(row, col)` holding the point at `t`, and whether it is in the cell's
    /// north-west triangle.
    #[inline]
    fn triangle(&self, t: f64) -> (usize, usize, bool) {
        let gx = (self.g0[0] + t * self.dg[0]).clamp(0.0, self.ncw as f64);
        let gy = (self.g0[1] + t * self.dg[1]).clamp(0.0, self.nch as f64);
        let c = (gx as usize).min(self.ncw - 1);
        let r = (gy as usize).min(self.nch - 1);
        (r, c, (gx - c as f64) + (gy - r as f64) <= 1.0)
    }

    /// Classifies `[ts, te]` exactly: linear pieces whose clearance is beyond [`PRE_TOL`] with one
    /// sign at both ends are Above or Below; the cells of the others are candidates (Mixed),
    /// ray cast with parry against their two triangles (hits clamped into the piece).
    fn run(&self, ts: f64, te: f64, out: &mut Vec<Piece>, hits: &mut Vec<f64>) {
        if te <= ts {
            return;
        }
        // Next line crossing of each family after `ts`: the integer `k` and the step direction.
        let mut k = [0.0f64; 3];
        let mut tn = [f64::INFINITY; 3];
        let mut step = [0.0f64; 3];
        for i in 0..3 {
            let dg = self.dg[i];
            if dg == 0.0 {
                continue;
            }
            let g = self.g0[i] + ts * dg;
            let (ki, si) = if dg > 0.0 { (g.floor() + 1.0, 1.0) } else { (g.ceil() - 1.0, -1.0) };
            k[i] = ki;
            step[i] = si;
            tn[i] = (ki - self.g0[i]) / dg;
            // Rounding can put the first crossing at or before `ts`: skip it.
            while tn[i] <= ts {
                k[i] += si;
                tn[i] = (k[i] - self.g0[i]) / dg;
            }
        }
        let mut tp = ts;
        let mut fp = self.f(ts);
        loop {
            let tq = tn[0].min(tn[1]).min(tn[2]).min(te);
            let fq = self.f(tq);
            let state = if fp > self.tol && fq > self.tol {
                State::Above
            } else if fp < -self.tol && fq < -self.tol {
                State::Below
            } else {
                State::Mixed
            };
            if state == State::Mixed {
                // Cast the one triangle this linear piece lies on (parry's non-zigzag cell:
                // first the north-west triangle NW, SW, NE, then the south-east one).
                let (r, c, nw) = self.triangle(0.5 * (tp + tq));
                out.push(Piece { t0: tp, t1: tq, state: State::Mixed });
                let (t1, t2) = self.terrain.heightfield().triangles_at(r, c);
                if let Some(tri) = if nw { t1 } else { t2 } {
                    if let Some(toi) = tri.cast_local_ray(&self.ray, 1.0, false) {
                        hits.push(toi.clamp(tp, tq));
                    }
                }
            } else {
                push_piece(out, Piece { t0: tp, t1: tq, state });
            }
            if tq >= te {
                break;
            }
            for i in 0..3 {
                while tn[i] <= tq {
                    k[i] += step[i];
                    tn[i] = (k[i] - self.g0[i]) / self.dg[i];
                }
            }
            tp = tq;
            fp = fq;
        }
    }
}

fn push_run(hops: &mut Vec<Hop>, seg: &Seg, t0: f64, t1: f64, buried: f64, loss_per_m: f64) {
    hops.push(Hop { point: seg.at(t0), loss_db: 0.0 });
    hops.push(Hop { point: seg.at(t1), loss_db: loss_per_m * buried * seg.len });
}

/// Parameter range `[lo, hi] ∩ [t0, t1]` where `p0 + t dp ∈ [min, max]`.
#[inline]
fn clip(p0: f64, dp: f64, min: f64, max: f64, t0: f64, t1: f64) -> Option<(f64, f64)> {
    if dp == 0.0 {
        return if p0 >= min && p0 <= max { Some((t0, t1)) } else { None };
    }
    let inv = 1.0 / dp;
    let (mut ta, mut tb) = ((min - p0) * inv, (max - p0) * inv);
    if ta > tb {
        std::mem::swap(&mut ta, &mut tb);
    }
    let (l, h) = (ta.max(t0), tb.min(t1));
    if l <= h {
        Some((l, h))
    } else {
        None
    }
}

/// Candidate blocks (at most `2^LEAF_LEVEL` cells a side) and buried blocks, unordered.
fn broad_phase(
    terrain: &Terrain,
    seg: &Seg,
    t_lo: f64,
    t_hi: f64,
    out: &mut Vec<Piece>,
    stack: &mut Vec<(usize, usize, usize)>,
) {
    let cs = terrain.cell_size();
    let [hx, hy] = terrain.half_extent();
    // Grid coordinates: gx east in cells from the west edge, gy south in cells from the north.
    let gx0 = (seg.a.x + hx) / cs;
    let gy0 = (hy - seg.a.y) / cs;
    let dgx = seg.d.x / cs;
    let dgy = -seg.d.y / cs;
    let (z0, dz) = (seg.a.z, seg.d.z);
    let levels = &terrain.qlevels;
    let (ncw, nch) = (terrain.levels[0].w, terrain.levels[0].h);
    if levels.is_empty() {
        // A grid smaller than one leaf block: walk all of it.
        out.push(Piece { t0: t_lo, t1: t_hi, state: State::Mixed });
        return;
    }
    let top = levels.len() - 1 + LEAF_LEVEL;

    // Children's footprints are found from their parent's: the t-interval where the line is
    // within a column (row) range is a slab, and a block's t-range is the intersection of its
    // column and row slabs with `[t_lo, t_hi]`. Footprints are enlarged by GRID_EPS cells.
    let (ix, iy) = (1.0 / dgx, 1.0 / dgy);
    let slab = |g0: f64, inv: f64, lo: f64, hi: f64| -> (f64, f64) {
        if inv.is_finite() {
            let (p, q) = ((lo - g0) * inv, (hi - g0) * inv);
            if p < q {
                (p, q)
            } else {
                (q, p)
            }
        } else if g0 >= lo && g0 <= hi {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else {
            (f64::INFINITY, f64::NEG_INFINITY)
        }
    };
    // Classifies the block (k, bi, bj) over [ta, tb]; returns true if it must be split.
    let visit = |k: usize, bi: usize, bj: usize, ta: f64, tb: f64, out: &mut Vec<Piece>| -> bool {
        let (za, zb) = (z0 + ta * dz, z0 + tb * dz);
        let (zlo, zhi) = if za < zb { (za, zb) } else { (zb, za) };
        let [hmin, hmax] = levels[k - LEAF_LEVEL].get(bi, bj).map(f64::from);
        if zlo > hmax + ON_TOL {
            false // above everything in the block
        } else if zhi < hmin - ON_TOL {
            out.push(Piece { t0: ta, t1: tb, state: State::Below });
            false
        } else if k <= LEAF_LEVEL {
            out.push(Piece { t0: ta, t1: tb, state: State::Mixed });
            // The cell walk will read this block's tile: start loading it now.
            prefetch(&terrain.tiles[bi * terrain.tiles_w + bj]);
            false
        } else {
            true
        }
    };

    stack.clear();
    if visit(top, 0, 0, t_lo, t_hi, out) {
        stack.push((top, 0, 0));
    }
    while let Some((k, bi, bj)) = stack.pop() {
        let child = &levels[k - 1 - LEAF_LEVEL];
        let s = 1usize << (k - 1);
        let (c0, r0) = (2 * bj * s, 2 * bi * s);
        let cm = c0 + s;
        let rm = r0 + s;
        let c1 = (cm + s).min(ncw);
        let r1 = (rm + s).min(nch);
        let xs = [
            slab(gx0, ix, c0 as f64 - GRID_EPS, cm.min(ncw) as f64 + GRID_EPS),
            slab(gx0, ix, cm as f64 - GRID_EPS, c1 as f64 + GRID_EPS),
        ];
        let ys = [
            slab(gy0, iy, r0 as f64 - GRID_EPS, rm.min(nch) as f64 + GRID_EPS),
            slab(gy0, iy, rm as f64 - GRID_EPS, r1 as f64 + GRID_EPS),
        ];
        for di in 0..2 {
            let ci = 2 * bi + di;
            if ci >= child.h {
                continue;
            }
            for dj in 0..2 {
                let cj = 2 * bj + dj;
                if cj >= child.w {
                    continue;
                }
                let ta = xs[dj].0.max(ys[di].0).max(t_lo);
                let tb = xs[dj].1.min(ys[di].1).min(t_hi);
                if ta <= tb && visit(k - 1, ci, cj, ta, tb, out) {
                    stack.push((k - 1, ci, cj));
                }
            }
        }
    }
}

/// Hints the CPU to load `v`'s cache line (no effect on results).
#[inline(always)]
fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_unsafe)]
    // SAFETY: a prefetch is only a hint and never faults; the pointer is a valid reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((v as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// Broad-phase records (sorted by start) to a gap-free piece list `out` over `[t_lo, t_hi]`:
/// candidate wherever any candidate record is, buried where only buried records are, Above
/// elsewhere. (Records overlap only by the blocks' enlargement, or where a line passes through
/// a corner.) `parts`, `mixed` and `below` are scratch.
fn assemble(
    recs: &[Piece],
    t_lo: f64,
    t_hi: f64,
    out: &mut Vec<Piece>,
    parts: &mut Vec<Piece>,
    mixed: &mut Vec<Piece>,
    below: &mut Vec<Piece>,
) {
    let union = |state: State, u: &mut Vec<Piece>| {
        u.clear();
        for r in recs.iter().filter(|r| r.state == state) {
            match u.last_mut() {
                Some(last) if r.t0 <= last.t1 => last.t1 = last.t1.max(r.t1),
                _ => u.push(*r),
            }
        }
    };
    union(State::Mixed, mixed);
    union(State::Below, below);
    // Below minus Mixed.
    parts.clear();
    let mut k = 0;
    for b in below.iter() {
        let mut t0 = b.t0;
        while k < mixed.len() && mixed[k].t1 <= t0 {
            k += 1;
        }
        let mut j = k;
        while j < mixed.len() && mixed[j].t0 < b.t1 {
            if mixed[j].t0 > t0 {
                parts.push(Piece { t0, t1: mixed[j].t0, state: State::Below });
            }
            t0 = t0.max(mixed[j].t1);
            j += 1;
        }
        if t0 < b.t1 {
            parts.push(Piece { t0, t1: b.t1, state: State::Below });
        }
    }
    parts.extend_from_slice(mixed);
    parts.sort_unstable_by(|p, q| p.t0.total_cmp(&q.t0));
    out.clear();
    let mut cur = t_lo;
    for r in parts.iter() {
        if r.t0 > cur {
            out.push(Piece { t0: cur, t1: r.t0, state: State::Above });
        }
        cur = cur.max(r.t1);
        out.push(*r);
    }
    if cur < t_hi {
        out.push(Piece { t0: cur, t1: t_hi, state: State::Above });
    }
}

/// Ray casts `[ts, te]` with the whole heightfield and appends its resolved pieces.
fn narrow_phase_naive(terrain: &Terrain, seg: &Seg, ts: f64, te: f64, out: &mut Vec<Piece>) {
    let field = terrain.heightfield();
    let [hx, hy] = terrain.half_extent();
    let dir = to_parry_vec(&seg.d);
    let step = STEP_M / seg.len;
    let mut t = ts;
    let mut prev = ts;
    let mut n = 0;
    while t <= te && n < MAX_CROSSINGS {
        let mut o = to_parry(&seg.at(t));
        // Keep the origin on the footprint despite rounding (parry picks its first cell there).
        o.x = o.x.clamp(-hx, hx);
        o.z = o.z.clamp(-hy, hy);
        let Some(toi) = field.cast_local_ray(&Ray::new(o, dir), te - t, false) else {
            break;
        };
        let h = (t + toi).clamp(prev, te);
        push_resolved(terrain, seg, prev, h, out);
        out.push(Piece { t0: h, t1: h, state: State::On });
        prev = h;
        t = h + step;
        n += 1;
    }
    push_resolved(terrain, seg, prev, te, out);
}

fn push_resolved(terrain: &Terrain, seg: &Seg, t0: f64, t1: f64, out: &mut Vec<Piece>) {
    resolve(terrain, seg, t0, t1, out, 0);
}

#[inline]
fn clearance(terrain: &Terrain, seg: &Seg, t: f64) -> f64 {
    let p = seg.at(t);
    p.z - terrain.height_at_unchecked(p.x, p.y)
}

#[inline]
fn sign(f: f64) -> i8 {
    if f > ON_TOL {
        1
    } else if f < -ON_TOL {
        -1
    } else {
        0
    }
}

/// Classifies `[t0, t1]`, which should hold no crossing. A crossing the triangle casts missed
/// (a hit exactly on a triangle edge can be rejected by both triangles through rounding) shows
/// as opposite signs at the ends and midpoint; it is then found by bisection on the exact
/// surface and both sides are classified again.
fn resolve(terrain: &Terrain, seg: &Seg, t0: f64, t1: f64, out: &mut Vec<Piece>, depth: u32) {
    if t1 <= t0 {
        return;
    }
    let tm = 0.5 * (t0 + t1);
    let f = [clearance(terrain, seg, t0), clearance(terrain, seg, tm), clearance(terrain, seg, t1)];
    let s = f.map(sign);
    if depth < 16 {
        let ts = [t0, tm, t1];
        for k in 0..2 {
            if s[k] * s[k + 1] == -1 {
                let (mut lo, mut hi) = (ts[k], ts[k + 1]);
                let s_lo = s[k];
                for _ in 0..64 {
                    let mid = 0.5 * (lo + hi);
                    if mid <= lo || mid >= hi {
                        break;
                    }
                    if sign(clearance(terrain, seg, mid)) == s_lo {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                let r = 0.5 * (lo + hi);
                resolve(terrain, seg, t0, r, out, depth + 1);
                out.push(Piece { t0: r, t1: r, state: State::On });
                resolve(terrain, seg, r, t1, out, depth + 1);
                return;
            }
        }
    }
    // One sign throughout; the most decisive sample tells which.
    let g = f.into_iter().fold(0.0f64, |g, e| if e.abs() > g.abs() { e } else { g });
    out.push(Piece { t0, t1, state: [State::Below, State::On, State::Above][(sign(g) + 1) as usize] });
}

fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).max(1))
}

/// Pairs per unit of work handed to a thread by [`trace_all`].
const BATCH: usize = 32;

/// [`trace`] for every pair `i < j` of `points`, in the order (0,1), (0,2), …, (0,n-1), (1,2), ….
///
/// The pairs are cut into batches of 32 consecutive pairs that the available cores
/// (scoped threads) take in turn from a shared counter, so a thread that drew cheap pairs
/// takes more batches. Each result is written to its pair's own slot and depends only on its
/// two points, so the output never depends on timing.
pub fn trace_all(
    terrain: &Terrain,
    points: &[Point3<f64>],
    penetration_loss_db_per_m: f64,
) -> Vec<PathInfo> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let n = points.len();
    let pairs: Vec<(usize, usize)> =
        (0..n).flat_map(|i| ((i + 1)..n).map(move |j| (i, j))).collect();
    let one = |&(i, j): &(usize, usize)| trace(terrain, &points[i], &points[j], penetration_loss_db_per_m);
    let workers = threads().min(pairs.len() / BATCH).max(1);
    if workers == 1 {
        return pairs.iter().map(one).collect();
    }
    let batches: Vec<&[(usize, usize)]> = pairs.chunks(BATCH).collect();
    let slots: Vec<Mutex<Vec<PathInfo>>> = batches.iter().map(|_| Mutex::new(Vec::new())).collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let b = next.fetch_add(1, Ordering::Relaxed);
        let Some(batch) = batches.get(b) else { break };
        let out: Vec<PathInfo> = batch.iter().map(one).collect();
        *slots[b].lock().unwrap_or_else(|e| e.into_inner()) = out;
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
        work();
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
    let mut out = Vec::with_capacity(pairs.len());
    for slot in slots {
        out.extend(slot.into_inner().unwrap_or_else(|e| e.into_inner()));
    }
    out
}
