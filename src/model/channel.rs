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
//! 2. **Broad phase** (not in [`trace_naive`]): a walk through the terrain's pyramid along the
//!    segment, from A to B, at the coarsest level that decides. Every pyramid block bounds the
//!    surface over its footprint between two parallel planes, `lo + p ≤ h ≤ hi + p` with `p`
//!    linear (a least-squares plane, or flat where that is thinner; see
//!    [`crate::model::terrain`]). Over the stretch `[t, te]` of the segment inside a block
//!    (footprint slightly enlarged; `te` from the faces ahead, no division per block),
//!    `u = z - p` is linear in `t`, so the clearance lies between `u - hi` and `u - lo` with
//!    both extremes at the ends: `u - hi > 0` at both ends ⇒ the segment is above the terrain
//!    over the whole block (Above); `u - lo < 0` at both ends ⇒ entirely below (Below).
//!    Otherwise the walk descends to the child holding `t`; an undecided leaf block (4 × 4 cells)
//!    goes to step 3. After a decided block the walk steps to the next block along the segment
//!    (a 2-D DDA) and climbs to the coarsest level whose block boundary that step crossed.
//!    Pieces come out in order and gap-free.
//!
//!    [`Tracer`] repeats this window after window for every pair and remembers the blocks
//!    that decided each pair. The next window starts from them: each remembered block still
//!    met by the moved segment is tried on the part of the segment inside it (its slab usually
//!    still decides; if not the walk descends from it), and stretches no remembered block
//!    covers are walked from two levels above. Every piece is still decided by a block whose
//!    footprint holds it, so the result is as exact as a walk from the root; only the work
//!    differs. Before that it tries the pair's *certificate*: the last walked classification
//!    with a lower bound on `|f|` per piece and a bound on the surface's slope near it. The
//!    moved segment's `f` differs from the reference's at the same `t` by at most the vertical
//!    motion plus the slope times the horizontal motion, so every piece whose bound exceeds
//!    that keeps its sign; only the rest (the crossings and their surroundings) is walked again
//!    by step 3. Exact as well.
//! 3. **Exact linear pre-check**: the surface is linear on each triangle, and the triangles'
//!    edges are the grid lines `gx = k`, `gy = k` and the SW–NE diagonals `gx + gy = k` (grid
//!    coordinates, integer `k`). So between consecutive crossings of those lines by the
//!    segment's xy-projection the clearance `f(t)` is linear, and its sign can only change on a
//!    piece whose ends differ in sign or touch 0. Each undecided leaf block is walked piece by
//!    piece (three interleaved line families, as a 2-D DDA), evaluating `f` at the breakpoints
//!    only, from per-leaf-block height tiles. A piece with `f` beyond a tolerance (1 µm, far
//!    above the interpolation's rounding) of one sign at both ends is Above or Below,
//!    decided without parry; the others are candidates for the narrow phase.
//! 4. **Narrow phase**: every crossing of the surface inside a candidate piece is found with
//!    parry's ray cast against the [`HeightField`](parry3d_f64::shape::HeightField) triangle the
//!    piece lies on (`Terrain::cell_triangle` builds it from the leaf tile, bit for bit
//!    `HeightField::triangles_at`'s), always with the ray from the exact endpoint `A` along
//!    `B - A` (time of impact = `t`), so a crossing is computed from the original coordinates
//!    whatever the stretch. A line meets a triangle's plane at most once. parry's
//!    3-D triangle ray cast is two-sided (it ignores `solid` and hits faces from above and below
//!    alike), so entries and exits are both found; a hit outside its piece (beyond 1 nm of
//!    rounding) belongs to a neighbour and is ignored. A piece whose ends are beyond the
//!    tolerance with opposite signs holds exactly one crossing, the hit: its two sides take the
//!    signs of its ends. Otherwise, between consecutive crossings `f` keeps one
//!    sign, read from the exact surface at both ends and the midpoint of the sub-interval (the
//!    sample of largest `|f|` decides; all three within 1e-9 m of the surface = running along
//!    it). A crossing a cast missed (a hit exactly on a triangle edge can be rejected by rounding)
//!    shows as opposite signs there and is found by bisection on the exact surface.
//! 5. Adjacent obstructed pieces merge into maximal intervals; crossings with free space on
//!    both sides are touches (entry = exit, 0 dB).
//!
//! Per-call scratch buffers are kept per thread, and [`Tracer`] overwrites its paths in place
//! window after window, so it allocates nothing per pair (only its few per-window lists).
//!
//! [`trace_naive`] is parry alone, the reference the broad phase is measured and tested
//! against: no pyramid; `HeightField::cast_local_ray` from `A` (or the grid edge) finds the first
//! crossing, the next ray starts 1 nm past it, and so on to the end of the clipped segment.

use std::sync::OnceLock;

use nalgebra::{Point3, Vector3};
use parry3d_f64::query::{Ray, RayCast};

use crate::model::terrain::{block_centre, f32_up, fidx, to_parry, to_parry_vec, QLevel, Terrain, LEAF, LEAF_LEVEL};

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
/// The linear pre-check decides a piece without parry only if its clearance is beyond this at
/// both ends (metres): well above rounding, so pieces near the surface always go to parry.
const PRE_TOL: f64 = 1e-6;
/// Safety cap on crossings per candidate stretch.
const MAX_CROSSINGS: usize = 1 << 16;
/// Margins of at least this (metres) are all alike to a certificate: pieces with such margins
/// merge, and a certificate is given up once the vertical motion reaches it.
const CERT_CAP_M: f64 = 0.5;
/// Pieces recorded for a certificate merge when their margins are within this factor.
const CERT_MERGE: f64 = 0.5;
/// A certificate is reused while the stretches to walk again exceed its reference's own by at
/// most this many cells' length.
const CERT_WALK_CELLS: f64 = 8.0;
/// At most this many windows between attempts at a certificate for a pair whose certificates
/// go unused.
const CERT_BACKOFF_MAX: u8 = 15;

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
    /// For Above and Below: a lower bound on `|f|` over the piece (metres); else 0.
    margin: f64,
    /// A bound on the surface's slope near the piece ([`Terrain::slope_near`] of the block
    /// that decided it).
    slope: f64,
}

impl Piece {
    /// A piece without a margin (On, Mixed, or one not kept for a [`Cert`]).
    #[inline]
    fn bare(t0: f64, t1: f64, state: State) -> Piece {
        Piece { t0, t1, state, margin: 0.0, slope: f64::INFINITY }
    }
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
    trace_impl(terrain, a, b, penetration_loss_db_per_m, Mode::Fresh)
}

/// As [`trace`], without the pyramid broad phase: parry ray casts over the whole clipped
/// segment. Same results; the baseline for tests and benchmarks.
pub fn trace_naive(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    penetration_loss_db_per_m: f64,
) -> PathInfo {
    trace_impl(terrain, a, b, penetration_loss_db_per_m, Mode::Naive)
}

/// Whether the segment from `a` to `b` is clear of the terrain: `trace(..).los`, found by a
/// walk that stops at the first obstruction (no hop points).
pub fn line_of_sight(terrain: &Terrain, a: &Point3<f64>, b: &Point3<f64>) -> bool {
    trace_impl(terrain, a, b, 0.0, Mode::FirstHit).los
}

/// How [`trace_with`] classifies the segment.
enum Mode<'m> {
    /// parry alone.
    Naive,
    /// The pyramid walk from the root.
    Fresh,
    /// The pyramid walk from the blocks remembered for this pair, which it then replaces.
    Replay(&'m mut Memo),
    /// The pyramid walk from the root, up to the first obstruction: the result's `los` is
    /// exact, its hops are left out when it is NLOS (for [`line_of_sight`] only).
    FirstHit,
}

/// Makes `out` the free path from `a` to `b`.
fn set_los(out: &mut PathInfo, a: &Point3<f64>, b: &Point3<f64>) {
    out.los = true;
    out.hops.clear();
    out.hops.extend([Hop { point: *a, loss_db: 0.0 }, Hop { point: *b, loss_db: 0.0 }]);
}

/// Reusable per-thread buffers of [`trace`] (no allocation in the hot path).
#[derive(Default)]
struct Scratch {
    pieces: Vec<Piece>,
    hits: Vec<f64>,
    resolved: Vec<Piece>,
    rec: Vec<u32>,
    ver: Vec<Verdict>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn trace_impl(terrain: &Terrain, a: &Point3<f64>, b: &Point3<f64>, loss_per_m: f64, mode: Mode) -> PathInfo {
    let mut out = PathInfo { los: true, hops: Vec::new() };
    trace_into(terrain, a, b, loss_per_m, mode, &mut out);
    out
}

/// [`trace_with`] with this thread's scratch buffers, into `out` (its hops' allocation is
/// reused).
fn trace_into(terrain: &Terrain, a: &Point3<f64>, b: &Point3<f64>, loss_per_m: f64, mode: Mode, out: &mut PathInfo) {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => trace_with(terrain, a, b, loss_per_m, mode, &mut s, out),
        Err(_) => trace_with(terrain, a, b, loss_per_m, mode, &mut Scratch::default(), out),
    })
}

fn trace_with(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    loss_per_m: f64,
    mut mode: Mode,
    sc: &mut Scratch,
    out: &mut PathInfo,
) {
    let broad = !matches!(mode, Mode::Naive);
    if !(a.coords.iter().chain(b.coords.iter()).all(|v| v.is_finite())) {
        return set_los(out, a, b);
    }
    let d = b - a;
    let seg = Seg { a: *a, d, len: d.norm() };
    let [hx, hy] = terrain.half_extent();

    if seg.len == 0.0 {
        if let Some(h) = terrain.height_at(a.x, a.y) {
            if a.z - h <= ON_TOL {
                let hop = Hop { point: *a, loss_db: 0.0 };
                out.los = false;
                out.hops.clear();
                out.hops.extend([hop, hop, hop, Hop { point: *b, loss_db: 0.0 }]);
                return;
            }
        }
        return set_los(out, a, b);
    }

    // 1. Clip to the footprint.
    let Some((t_lo, t_hi)) = clip(a.x, d.x, -hx, hx, 0.0, 1.0)
        .and_then(|(l, h)| clip(a.y, d.y, -hy, hy, l, h))
    else {
        return set_los(out, a, b);
    };

    let Scratch { pieces, hits, resolved, rec, ver } = sc;
    pieces.clear();
    hits.clear();
    resolved.clear();
    rec.clear();

    // 2. Broad phase (pyramid) and exact linear pre-check (cell walk).
    if broad {
        let range = terrain.height_range();
        if a.z.min(b.z) > range[1] + ON_TOL {
            return set_los(out, a, b);
        }
        let mut walk = Walk::new(terrain, &seg);
        let mut reused = false;
        if let Mode::Replay(memo) = &mut mode {
            let cells = seg.len / terrain.cell_size();
            memo.reused = memo
                .cert
                .moved(a, b, t_lo, t_hi, terrain.slope_reach(), walk.tol)
                .is_some_and(|moved| memo.cert.reuse(&walk, moved, CERT_WALK_CELLS / cells, pieces, hits));
            if memo.reused {
                memo.unused = false;
                memo.backoff = 0;
            } else {
                pieces.clear();
                hits.clear();
                if memo.unused {
                    // The last certificate was never reused: wait longer before the next.
                    memo.backoff = (2 * memo.backoff + 1).min(CERT_BACKOFF_MAX);
                    memo.wait = memo.backoff;
                }
                walk.fine = memo.wait == 0;
                memo.wait = memo.wait.saturating_sub(1);
            }
            reused = memo.reused;
        }
        if !reused {
            match (March::new(terrain, &walk), mode) {
                (None, _) => walk.run(t_lo, t_hi, terrain.max_slope(), pieces, hits),
                (Some(m), Mode::Replay(memo)) => {
                    if memo.blocks.is_empty() || memo.blocks.len() > memo.fresh_len + memo.fresh_len / 4 + 4 {
                        // Nothing remembered, or grown well past a fresh walk's length: start afresh.
                        m.fresh(t_lo, t_hi, pieces, hits, rec);
                        memo.fresh_len = rec.len();
                    } else {
                        m.replay(&memo.blocks, t_lo, t_hi, pieces, hits, rec, ver);
                    }
                    std::mem::swap(&mut memo.blocks, rec);
                    if walk.fine {
                        memo.cert.set(a, b, t_lo, t_hi, pieces);
                    } else {
                        memo.cert.pieces.clear();
                    }
                    memo.unused = walk.fine;
                }
                (Some(mut m), Mode::FirstHit) => {
                    m.first_hit = true;
                    m.fresh(t_lo, t_hi, pieces, hits, rec);
                    if pieces.last().is_some_and(|p| matches!(p.state, State::Below | State::On)) {
                        out.los = false;
                        out.hops.clear();
                        return;
                    }
                }
                (Some(m), _) => m.fresh(t_lo, t_hi, pieces, hits, rec),
            }
        }
        if pieces.iter().all(|p| p.state == State::Above) {
            return set_los(out, a, b);
        }
    } else {
        pieces.push(Piece::bare(t_lo, t_hi, State::Mixed));
    }

    // 3. Narrow phase.
    if broad {
        debug_assert!(hits.is_sorted_by(|p, q| p <= q));
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
                resolved.push(Piece::bare(h, h, State::On));
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
    let hops = &mut out.hops;
    hops.clear();
    hops.push(Hop { point: *a, loss_db: 0.0 });
    let mut run: Option<(f64, f64, f64)> = None; // (t_entry, t_exit, buried length in t)
    for p in resolved.iter() {
        match (p.state, run.as_mut()) {
            (State::Above, Some(_)) => {
                let (t0, t1, buried) = run.take().expect("run is open");
                push_run(hops, &seg, t0, t1, buried, loss_per_m);
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
        push_run(hops, &seg, t0, t1, buried, loss_per_m);
    }
    hops.push(Hop { point: *b, loss_db: 0.0 });
    out.los = hops.len() == 2;
}

/// Appends a piece, merging it into the previous one when both are Above or both Below. For a
/// certificate (`fine`) only pieces whose margins are alike merge (within a factor of
/// [`CERT_MERGE`], or both at least [`CERT_CAP_M`]): a merged piece keeps the smaller margin
/// and the larger slope bound, so merging never loosens a bound by more than that.
#[inline]
fn push_piece(out: &mut Vec<Piece>, p: Piece, fine: bool) {
    if p.t1 < p.t0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        let (lo, hi) = if last.margin < p.margin { (last.margin, p.margin) } else { (p.margin, last.margin) };
        if last.state == p.state
            && p.state != State::Mixed
            && p.state != State::On
            && (!fine || lo >= CERT_MERGE * hi || lo >= CERT_CAP_M)
        {
            last.t1 = last.t1.max(p.t1);
            last.margin = lo;
            last.slope = last.slope.max(p.slope);
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
    /// `1 / dg` (infinite for a family the segment runs parallel to).
    inv: [f64; 3],
    ncw: usize,
    nch: usize,
    /// Clearance beyond which a piece is decided without parry (metres).
    tol: f64,
    /// [`STEP_M`] in units of `t`: how far outside its piece a hit may fall through rounding.
    slack: f64,
    /// Keep the pieces' margins apart for a certificate (see [`push_piece`]).
    fine: bool,
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
            inv: [1.0 / dgx, 1.0 / dgy, 1.0 / (dgx + dgy)],
            ncw,
            nch,
            tol: PRE_TOL,
            slack: STEP_M / seg.len,
            fine: false,
        }
    }

    /// The cell `(row, col)` holding the point at `t` (grid coordinates clamped to the grid)
    /// and the point's eastward and southward fractions `(u, v)` inside it. Grids have at most
    /// MAX_DIM samples a side, so cell indices go through `u32` (one conversion instruction).
    #[inline(always)]
    fn locate(&self, t: f64) -> (usize, usize, f64, f64) {
        let gx = (self.g0[0] + t * self.dg[0]).clamp(0.0, self.ncw as f64);
        let gy = (self.g0[1] + t * self.dg[1]).clamp(0.0, self.nch as f64);
        let c = (gx as u32).min(self.ncw as u32 - 1);
        let r = (gy as u32).min(self.nch as u32 - 1);
        (r as usize, c as usize, gx - f64::from(c), gy - f64::from(r))
    }

    /// Clearance at `t` on the triangulated surface (grid coordinates clamped to the grid),
    /// from the leaf-block tiles. Both triangles' heights are computed and one is selected,
    /// without a branch.
    #[inline]
    fn f(&self, t: f64) -> f64 {
        let (r, c, u, v) = self.locate(t);
        let tile = &self.terrain.tiles[(r / LEAF) * self.terrain.tiles_w + c / LEAF].h;
        let k = (r % LEAF) * (LEAF + 1) + c % LEAF;
        let (nw, ne, sw, se) = (tile[k], tile[k + 1], tile[k + LEAF + 1], tile[k + LEAF + 2]);
        let h_nw = nw + u * (ne - nw) + v * (sw - nw);
        let h_se = se + (1.0 - u) * (sw - se) + (1.0 - v) * (ne - se);
        let h = if u + v <= 1.0 { h_nw } else { h_se };
        self.seg.a.z + t * self.seg.d.z - h
    }

    /// The cell `(row, col)` holding the point at `t`, and whether it is in the cell's
    /// north-west triangle.
    #[inline]
    fn triangle(&self, t: f64) -> (usize, usize, bool) {
        let (r, c, u, v) = self.locate(t);
        (r, c, u + v <= 1.0)
    }

    /// Classifies `[ts, te]` exactly: linear pieces whose clearance is beyond [`PRE_TOL`] with one
    /// sign at both ends are Above or Below; the cells of the others are candidates (Mixed),
    /// ray cast with parry against their two triangles (hits clamped into the piece). `slope`
    /// bounds the surface's slope around `[ts, te]`; for a certificate (`fine`) the pieces keep
    /// it with their margins.
    fn run(&self, ts: f64, te: f64, slope: f64, out: &mut Vec<Piece>, hits: &mut Vec<f64>) {
        if te <= ts {
            return;
        }
        // Next line crossing of each family after `ts`: the integer `k` and the step direction.
        // (The crossings of a family are `(k - g0) * inv` for consecutive integers `k`:
        // strictly monotonic, so the families merge in order.)
        let mut k = [0.0f64; 3];
        let mut tn = [f64::INFINITY; 3];
        let mut step = [0.0f64; 3];
        let inv = self.inv;
        for i in 0..3 {
            let dg = self.dg[i];
            if dg == 0.0 {
                continue;
            }
            let g = self.g0[i] + ts * dg;
            let (ki, si) = if dg > 0.0 { (floor(g) + 1.0, 1.0) } else { (-floor(-g) - 1.0, -1.0) };
            k[i] = ki;
            step[i] = si;
            tn[i] = (ki - self.g0[i]) * inv[i];
            // Rounding can put the first crossing at or before `ts`: skip it.
            while tn[i] <= ts {
                k[i] += si;
                tn[i] = (k[i] - self.g0[i]) * inv[i];
            }
        }
        let mut tp = ts;
        let mut fp = self.f(ts);
        loop {
            // The nearest crossing ahead (at a vertex two families tie: the second one then
            // gives an empty piece).
            let a01 = tn[0] <= tn[1];
            let (i01, m01) = if a01 { (0, tn[0]) } else { (1, tn[1]) };
            let a2 = m01 <= tn[2];
            let (i, tmin) = if a2 { (i01, m01) } else { (2, tn[2]) };
            let tq = if tmin < te { tmin } else { te };
            let fq = self.f(tq);
            let state = if fp > self.tol && fq > self.tol {
                State::Above
            } else if fp < -self.tol && fq < -self.tol {
                State::Below
            } else {
                State::Mixed
            };
            // f is linear on the piece: |f| is least at an end (the rounding is within `tol`,
            // which a certificate's test adds to the motion).
            let margin = if self.fine { fp.abs().min(fq.abs()) } else { 0.0 };
            if state == State::Mixed {
                // Cast the one triangle this linear piece lies on (parry's non-zigzag cell:
                // first the north-west triangle NW, SW, NE, then the south-east one).
                let (r, c, nw) = self.triangle(0.5 * (tp + tq));
                let hit = self
                    .terrain
                    .cell_triangle(r, c, nw)
                    .cast_local_ray(&self.ray, 1.0, false)
                    // A hit beyond the piece (by more than rounding) is the neighbour's.
                    .filter(|&toi| toi >= tp - self.slack && toi <= tq + self.slack)
                    .map(|toi| toi.clamp(tp, tq));
                // Clearance beyond the tolerance with opposite signs at the ends: `f` is linear
                // here, so it has one sign on each side of its one zero, the hit.
                let clean = (fp > self.tol && fq < -self.tol) || (fp < -self.tol && fq > self.tol);
                match hit {
                    Some(h) if clean => {
                        let (s0, s1) =
                            if fp > 0.0 { (State::Above, State::Below) } else { (State::Below, State::Above) };
                        push_piece(out, Piece::bare(tp, h, s0), self.fine);
                        out.push(Piece::bare(h, h, State::On));
                        push_piece(out, Piece::bare(h, tq, s1), self.fine);
                    }
                    _ => {
                        out.push(Piece::bare(tp, tq, State::Mixed));
                        hits.extend(hit);
                    }
                }
            } else {
                push_piece(out, Piece { t0: tp, t1: tq, state, margin, slope }, self.fine);
            }
            if tq >= te {
                break;
            }
            k[i] += step[i];
            tn[i] = (k[i] - self.g0[i]) * inv[i];
            tp = tq;
            fp = fq;
        }
    }
}

/// `x.floor()` for grid coordinates (`|x| < 2⁶³`), inline: without SSE4.1 `f64::floor` is a
/// call into libm.
#[inline(always)]
fn floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
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

/// A pyramid block `(level k, row bi, column bj)` packed into 32 bits: `k` in the low 4 bits,
/// then 14 bits each for `bi` and `bj` (leaf blocks of the largest grid,
/// [`MAX_DIM`](crate::model::terrain::MAX_DIM) samples a side, need 11).
#[inline]
fn pack(k: usize, bi: usize, bj: usize) -> u32 {
    (k as u32) | ((bi as u32) << 4) | ((bj as u32) << 18)
}

#[inline]
fn unpack(b: u32) -> (usize, usize, usize) {
    ((b & 0xf) as usize, ((b >> 4) & 0x3fff) as usize, (b >> 18) as usize)
}

/// A remembered block's stretch `[ta, tb]` of the moved segment and its slab's verdict there,
/// with the margin (see [`March::verdict`]).
#[derive(Debug, Clone, Copy)]
struct Verdict {
    ta: f64,
    tb: f64,
    v: u8,
    margin: f64,
}

const ABOVE: u8 = 1;
const BELOW: u8 = 2;

/// A slab's verdict and margin as a state, if it decides.
#[inline]
fn as_state((v, margin): (u8, f64)) -> Option<(State, f64)> {
    match v {
        ABOVE => Some((State::Above, margin)),
        BELOW => Some((State::Below, margin)),
        _ => None,
    }
}

/// The pyramid walk of one segment (see the module docs, step 2).
///
/// It classifies a stretch `[t, t_end]` from A towards B, at the coarsest level that decides.
/// At each step the current block's exit parameter `te` (footprint enlarged by [`GRID_EPS`])
/// bounds the stretch `[t, te]`; the block's bounding slab decides it Above or Below, or the
/// walk descends to the child holding `t`; an undecided leaf block is walked exactly by
/// [`Walk::run`]. After a decided block the walk steps to the next block along the segment (a
/// 2-D DDA) and climbs to the coarsest level whose block boundary that step crossed. Pieces
/// come out in order and gap-free; every block that classified a piece is recorded.
struct March<'a> {
    levels: &'a [QLevel],
    top: usize,
    walk: &'a Walk<'a>,
    g0: [f64; 2],
    dg: [f64; 2],
    inv: [f64; 2],
    sgn: [isize; 2],
    z: [f64; 2],
    /// Stop at the first piece that is surely obstructed, Below or a crossing (a line-of-sight
    /// query; an undecided piece does not stop it).
    first_hit: bool,
}

impl<'a> March<'a> {
    fn new(terrain: &'a Terrain, walk: &'a Walk<'a>) -> Option<March<'a>> {
        let levels = &terrain.qlevels[..];
        if levels.is_empty() {
            return None;
        }
        let sign = |d: f64| if d > 0.0 { 1isize } else if d < 0.0 { -1 } else { 0 };
        let dg = [walk.dg[0], walk.dg[1]];
        Some(March {
            levels,
            top: levels.len() - 1 + LEAF_LEVEL,
            walk,
            g0: [walk.g0[0], walk.g0[1]],
            dg,
            inv: dg.map(|d| 1.0 / d),
            sgn: dg.map(sign),
            z: [walk.seg.a.z, walk.seg.d.z],
            first_hit: false,
        })
    }

    /// Where the segment leaves the enlarged footprint of block `b` (a column or a row of
    /// size `s`) on `axis`, or infinity if it runs parallel to it.
    #[inline]
    fn exit(&self, axis: usize, b: usize, s: f64) -> f64 {
        match self.sgn[axis] {
            1 => (fidx(b + 1) * s + GRID_EPS - self.g0[axis]) * self.inv[axis],
            -1 => (fidx(b) * s - GRID_EPS - self.g0[axis]) * self.inv[axis],
            _ => f64::INFINITY,
        }
    }

    /// Where the segment enters the enlarged footprint on `axis` (mirror of [`Self::exit`]);
    /// for a parallel segment, minus infinity if it runs inside, infinity if outside.
    #[inline]
    fn entry(&self, axis: usize, b: usize, s: f64) -> f64 {
        match self.sgn[axis] {
            1 => (fidx(b) * s - GRID_EPS - self.g0[axis]) * self.inv[axis],
            -1 => (fidx(b + 1) * s + GRID_EPS - self.g0[axis]) * self.inv[axis],
            _ => {
                let g = self.g0[axis];
                if g >= fidx(b) * s - GRID_EPS && g <= fidx(b + 1) * s + GRID_EPS {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
        }
    }

    /// Above or Below with its margin if block `(k, bi, bj)`'s slab decides `[t, te]`
    /// (`t <= te`), else None.
    #[inline]
    fn decide(&self, k: usize, bi: usize, bj: usize, t: f64, te: f64) -> Option<(State, f64)> {
        as_state(self.verdict(k, bi, bj, t, te))
    }

    /// [`ABOVE`] or [`BELOW`] if block `(k, bi, bj)`'s slab decides `[t, te]`, else 0, without
    /// a branch; an empty or reversed range gives 0. With it the margin, a lower bound on `|f|`
    /// over `[t, te]` (meaningful for ABOVE and BELOW only). Over the block
    /// `lo + p <= h <= hi + p` with `p` linear in `(gx, gy)` and so in `t`: the clearance lies
    /// between `u - hi` and `u - lo` with `u = z - p` linear in `t`, extreme at the ends.
    #[inline]
    fn verdict(&self, k: usize, bi: usize, bj: usize, t: f64, te: f64) -> (u8, f64) {
        let [lo, hi, px, py] = self.levels[k - LEAF_LEVEL].get(bi, bj).map(f64::from);
        let (cx, cy) = block_centre(k, bi, bj);
        let ua = self.z[0] - px * (self.g0[0] - cx) - py * (self.g0[1] - cy);
        let ub = self.z[1] - px * self.dg[0] - py * self.dg[1];
        let (u0, u1) = (ua + t * ub, ua + te * ub);
        let ok = t <= te;
        let above = ok & (u0 - hi > ON_TOL) & (u1 - hi > ON_TOL);
        let below = ok & (u0 - lo < -ON_TOL) & (u1 - lo < -ON_TOL);
        let (umin, umax) = if u0 < u1 { (u0, u1) } else { (u1, u0) };
        let margin = if above { umin - hi } else { lo - umax };
        (u8::from(above) * ABOVE + u8::from(below) * BELOW, margin)
    }

    /// Classifies `[t, t_end]`, starting at block `(k, bi, bj)` (which should hold the point at
    /// `t`) and climbing no higher than level `k_max`.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        (mut k, mut bi, mut bj): (usize, usize, usize),
        k_max: usize,
        mut t: f64,
        t_end: f64,
        out: &mut Vec<Piece>,
        hits: &mut Vec<f64>,
        rec: &mut Vec<u32>,
    ) {
        // A segment meets at most 2 (w + h) blocks of a level; each can cost a descent and a
        // climb. Far more steps than that can only be a defect: walk what is left exactly.
        let l0 = &self.levels[0];
        let mut budget = 8 * (l0.w + l0.h + 2) * (self.top + 1);
        while budget > 0 && t < t_end {
            budget -= 1;
            let s = fidx(1 << k);
            let (tx, ty) = (self.exit(0, bj, s), self.exit(1, bi, s));
            let te = if tx < ty { tx } else { ty };
            let te = if te < t_end { te } else { t_end };
            let te = if te > t { te } else { t };
            match self.decide(k, bi, bj, t, te) {
                Some((state, margin)) => {
                    let slope = self.slope_near(k, bi, bj);
                    push_piece(out, Piece { t0: t, t1: te, state, margin, slope }, self.walk.fine);
                    rec.push(pack(k, bi, bj));
                }
                None if k == LEAF_LEVEL => {
                    self.walk.run(t, te, self.slope_near(k, bi, bj), out, hits);
                    rec.push(pack(k, bi, bj));
                }
                None => {
                    // Descend to the child holding the point at t (ahead of it on a mid line).
                    let child = &self.levels[k - 1 - LEAF_LEVEL];
                    let half = s * 0.5;
                    let gx = self.g0[0] + t * self.dg[0];
                    let gy = self.g0[1] + t * self.dg[1];
                    let (mx, my) = (fidx(2 * bj + 1) * half, fidx(2 * bi + 1) * half);
                    let right = if self.sgn[0] < 0 { gx > mx } else { gx >= mx };
                    let down = if self.sgn[1] < 0 { gy > my } else { gy >= my };
                    bj = (2 * bj + usize::from(right)).min(child.w - 1);
                    bi = (2 * bi + usize::from(down)).min(child.h - 1);
                    k -= 1;
                    continue;
                }
            }
            if te >= t_end || (self.first_hit && out.last().is_some_and(|p| matches!(p.state, State::Below | State::On))) {
                return;
            }
            t = te;
            // Step to the next block along the segment (through one face, or a corner), then
            // climb to the coarsest level whose block boundary the step crossed: old and new
            // indices agree above their highest differing bit.
            let level = &self.levels[k - LEAF_LEVEL];
            let nbj = bj.wrapping_add_signed(self.sgn[0] * isize::from(tx <= te));
            let nbi = bi.wrapping_add_signed(self.sgn[1] * isize::from(ty <= te));
            if nbj >= level.w || nbi >= level.h {
                break;
            }
            let diff = (nbi ^ bi) | (nbj ^ bj) | 1;
            let climb = ((usize::BITS - 1 - diff.leading_zeros()) as usize).min(k_max.max(k) - k);
            k += climb;
            (bi, bj) = (nbi >> climb, nbj >> climb);
        }
        // Left the grid through rounding before t_end, or out of budget.
        if t < t_end {
            self.walk.run(t, t_end, self.walk.terrain.max_slope(), out, hits);
        }
    }

    /// Classifies `[t_lo, t_hi]` from the root.
    fn fresh(&self, t_lo: f64, t_hi: f64, out: &mut Vec<Piece>, hits: &mut Vec<f64>, rec: &mut Vec<u32>) {
        self.run((self.top, 0, 0), self.top, t_lo, t_hi, out, hits, rec);
    }

    /// Classifies `[t_lo, t_hi]` with the blocks `memo` recorded for a nearby segment, in order.
    /// Each block still met is tried first: over the part of the segment inside its enlarged
    /// footprint its slab may still decide (or, a leaf, be walked); if not, the walk descends
    /// from it. Stretches no remembered block covers are walked from the level above the next
    /// remembered block (from the root at the start). The classification is as exact as
    /// [`Self::fresh`]'s: only the blocks tried differ.
    #[allow(clippy::too_many_arguments)]
    fn replay(
        &self,
        memo: &[u32],
        t_lo: f64,
        t_hi: f64,
        out: &mut Vec<Piece>,
        hits: &mut Vec<f64>,
        rec: &mut Vec<u32>,
        ver: &mut Vec<Verdict>,
    ) {
        // First every remembered block's stretch and verdict over the whole of it, in one
        // branch-free pass (the loads overlap); a verdict over a stretch holds over any part.
        ver.clear();
        ver.extend(memo.iter().map(|&b| {
            let (k, bi, bj) = unpack(b);
            match self.levels.get(k.wrapping_sub(LEAF_LEVEL)) {
                Some(level) if bi < level.h && bj < level.w => {
                    let s = fidx(1 << k);
                    let (ex, ey) = (self.entry(0, bj, s), self.entry(1, bi, s));
                    let (tx, ty) = (self.exit(0, bj, s), self.exit(1, bi, s));
                    let ta = if ex > ey { ex } else { ey };
                    let tb = if tx < ty { tx } else { ty };
                    let tb = if tb < t_hi { tb } else { t_hi };
                    let (v, margin) = self.verdict(k, bi, bj, if ta > t_lo { ta } else { t_lo }, tb);
                    Verdict { ta, tb, v, margin }
                }
                _ => Verdict { ta: f64::INFINITY, tb: f64::NEG_INFINITY, v: 0, margin: 0.0 },
            }
        }));
        let mut t = t_lo;
        for (&b, &Verdict { ta, tb, v, margin }) in memo.iter().zip(ver.iter()) {
            if t >= t_hi {
                return;
            }
            if tb <= t || ta > tb {
                continue; // behind, or no longer met
            }
            let (k, bi, bj) = unpack(b);
            if ta > t {
                // A stretch no remembered block covers: walk it from the block two levels up
                // that holds its start.
                self.gap(k, t, ta, out, hits, rec);
                t = ta;
            }
            // A verdict over the whole stretch holds over the part met now, and so does its
            // margin; a slab that did not decide the whole may decide the part.
            let state = if v != 0 { as_state((v, margin)) } else { self.decide(k, bi, bj, t, tb) };
            match state {
                Some((state, margin)) => {
                    let slope = self.slope_near(k, bi, bj);
                    push_piece(out, Piece { t0: t, t1: tb, state, margin, slope }, self.walk.fine);
                    rec.push(b);
                }
                None if k == LEAF_LEVEL => {
                    self.walk.run(t, tb, self.slope_near(k, bi, bj), out, hits);
                    rec.push(b);
                }
                None => self.run((k, bi, bj), k, t, tb, out, hits, rec),
            }
            t = tb;
        }
        if t < t_hi {
            self.gap(self.top, t, t_hi, out, hits, rec);
        }
    }

    /// [`Terrain::slope_near`] when recording a certificate (else unused: infinite).
    #[inline]
    fn slope_near(&self, k: usize, bi: usize, bj: usize) -> f64 {
        if self.walk.fine {
            self.walk.terrain.slope_near(k, bi, bj)
        } else {
            f64::INFINITY
        }
    }

    /// Classifies `[t, t_end]` starting from the block of level `min(k + 2, top)` that holds
    /// the point at `t`.
    fn gap(&self, k: usize, t: f64, t_end: f64, out: &mut Vec<Piece>, hits: &mut Vec<f64>, rec: &mut Vec<u32>) {
        let k = (k + 2).min(self.top);
        let level = &self.levels[k - LEAF_LEVEL];
        let s = fidx(1 << k);
        let at = |axis: usize, n: usize| {
            let g = (self.g0[axis] + t * self.dg[axis]) / s;
            if g > 0.0 {
                (g as usize).min(n - 1)
            } else {
                0
            }
        };
        self.run((k, at(1, level.h), at(0, level.w)), self.top, t, t_end, out, hits, rec);
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
        out.push(Piece::bare(h, h, State::On));
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
                out.push(Piece::bare(r, r, State::On));
                resolve(terrain, seg, r, t1, out, depth + 1);
                return;
            }
        }
    }
    // One sign throughout; the most decisive sample tells which.
    let g = f.into_iter().fold(0.0f64, |g, e| if e.abs() > g.abs() { e } else { g });
    out.push(Piece::bare(t0, t1, [State::Below, State::On, State::Above][(sign(g) + 1) as usize]));
}

fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).max(1))
}

/// Pairs per unit of work handed to a thread by [`Tracer::trace_all`].
const BATCH: usize = 32;

/// What one pair remembers between windows: the pyramid blocks that classified its segment,
/// in order from A to B, how many a walk from the root needed when last made, and its
/// certificate.
#[derive(Debug, Default, Clone)]
struct Memo {
    blocks: Vec<u32>,
    fresh_len: usize,
    cert: Cert,
    /// Whether the last window reused `cert`.
    reused: bool,
    /// `cert` was made and not reused yet.
    unused: bool,
    /// Windows to wait between certificates (doubles while they go unused, up to
    /// [`CERT_BACKOFF_MAX`]; 0 once one is reused), and how many of them are left.
    backoff: u8,
    wait: u8,
}

/// One piece of a [`Cert`]: it ends at `t1` (it starts where the previous one ends) and, if
/// Above or Below, `|f| >= margin` on it in the reference window.
#[derive(Debug, Clone, Copy)]
struct CertPiece {
    t1: f64,
    margin: f64,
    slope: f32,
    state: State,
}

impl CertPiece {
    /// Whether the piece keeps its state on the moved segment: `f` there changed by at most
    /// `dz + slope · dxy` (plus the rounding tolerance).
    #[inline]
    fn sure(&self, m: Moved) -> bool {
        self.margin > m.dz + f64::from(self.slope) * m.dxy && matches!(self.state, State::Above | State::Below)
    }
}

/// How far a segment's points moved since a certificate's reference window: `dz` vertically
/// (plus the walk's rounding tolerance), `dxy` horizontally (metres).
#[derive(Debug, Clone, Copy)]
struct Moved {
    dz: f64,
    dxy: f64,
}

/// A pair's certificate: the classification of its segment in a reference window, with a
/// lower bound on the clearance `|f|` over each Above or Below piece.
///
/// Why it carries over. At the same `t` the moved segment's point differs from the reference's
/// by `Δ(t) = (1 - t) ΔA + t ΔB`, so by at most `δz = max(|ΔA_z|, |ΔB_z|)` vertically and
/// `δxy = max(|ΔA_xy|, |ΔB_xy|)` horizontally. Each piece keeps the slope bound `s` of the
/// block that decided it ([`Terrain::slope_near`]: the surface's largest slope within one leaf
/// block's width of the block), so while `δxy` is below that width the surface under the
/// moved points of the piece differs from that under the reference points by at most `s δxy`,
/// and `f` changed by at most `ε = δz + s δxy` (plus the walk's rounding tolerance). Every
/// piece whose margin exceeds its `ε` keeps its sign with `|f| > 0`: the moved segment is
/// Above (Below) the surface there, exactly. Only the pieces with smaller margins — the
/// crossings and the stretches near the surface — are classified again, by the exact cell
/// walk ([`Walk::run`]); the hop points come from parry on the moved segment as always. The
/// result is as exact as a walk from the root. The certificate is replaced (by a pyramid walk)
/// once `δxy` reaches the slope bounds' reach or `δz` reaches [`CERT_CAP_M`], the stretches to
/// walk again exceed the reference's own by more than [`CERT_WALK_CELLS`], or the clipped
/// parameter range changed (an endpoint outside the grid).
#[derive(Debug, Default, Clone)]
struct Cert {
    a: Point3<f64>,
    b: Point3<f64>,
    t_lo: f64,
    t_hi: f64,
    /// From `t_lo` to `t_hi` in order; empty: no certificate.
    pieces: Vec<CertPiece>,
    /// The length (in `t`) of the pieces that are never sure: the crossings and the pieces
    /// touching the surface.
    base_walk: f64,
}

impl Cert {
    /// Makes the classification `pieces` of the segment from `a` to `b` over `[t_lo, t_hi]`
    /// the certificate. A gap between pieces (none are expected) is kept as unsure.
    fn set(&mut self, a: &Point3<f64>, b: &Point3<f64>, t_lo: f64, t_hi: f64, pieces: &[Piece]) {
        (self.a, self.b, self.t_lo, self.t_hi) = (*a, *b, t_lo, t_hi);
        self.pieces.clear();
        let unsure = |t1| CertPiece { t1, margin: 0.0, slope: f32::INFINITY, state: State::Mixed };
        let mut t = t_lo;
        for p in pieces {
            if p.t0 != t {
                self.pieces.push(unsure(p.t0.max(t)));
            }
            let margin = if matches!(p.state, State::Above | State::Below) { p.margin } else { 0.0 };
            // Rounded up: a slope bound may only grow.
            let slope = f32_up(p.slope);
            self.pieces.push(CertPiece { t1: p.t1.max(t), margin, slope, state: p.state });
            t = p.t1.max(t);
        }
        if t < t_hi || self.pieces.is_empty() {
            self.pieces.push(unsure(t_hi));
        }
        self.base_walk = self.unsure(Moved { dz: 0.0, dxy: 0.0 });
    }

    /// The length (in `t`) of the pieces that are not sure after `moved`.
    fn unsure(&self, moved: Moved) -> f64 {
        let mut t = self.t_lo;
        let mut len = 0.0;
        for p in &self.pieces {
            if !p.sure(moved) {
                len += p.t1 - t;
            }
            t = p.t1;
        }
        len
    }

    /// Classifies the moved segment of `walk` from the certificate, if the stretches to walk
    /// again (the pieces not sure after `moved`) are no longer than the reference's own by more
    /// than `extra` (in `t`): the sure pieces keep their state, the others are walked exactly
    /// ([`Walk::run`]). False if they are longer (`out` and `hits` then hold part of the
    /// classification).
    fn reuse(&self, walk: &Walk, moved: Moved, extra: f64, out: &mut Vec<Piece>, hits: &mut Vec<f64>) -> bool {
        let mut budget = self.base_walk + extra;
        let mut t = self.t_lo;
        let mut open: Option<f64> = None;
        for p in &self.pieces {
            if p.sure(moved) {
                if let Some(w) = open.take() {
                    walk.run(w, t, f64::INFINITY, out, hits);
                }
                push_piece(out, Piece::bare(t, p.t1, p.state), false);
            } else {
                budget -= p.t1 - t;
                if budget < 0.0 {
                    return false;
                }
                open = open.or(Some(t));
            }
            t = p.t1;
        }
        if let Some(w) = open {
            walk.run(w, t, f64::INFINITY, out, hits);
        }
        true
    }

    /// How far the segment from `a` to `b` clipped to `[t_lo, t_hi]` moved since the
    /// reference, if the certificate may be used for it (`reach`: the slope bounds' reach).
    fn moved(&self, a: &Point3<f64>, b: &Point3<f64>, t_lo: f64, t_hi: f64, reach: f64, tol: f64) -> Option<Moved> {
        if self.pieces.is_empty() || t_lo != self.t_lo || t_hi != self.t_hi {
            return None;
        }
        let (da, db) = (a - self.a, b - self.b);
        let dxy2 = (da.x * da.x + da.y * da.y).max(db.x * db.x + db.y * db.y);
        let m = Moved { dz: da.z.abs().max(db.z.abs()) + tol, dxy: dxy2.sqrt() };
        (m.dxy < reach && m.dz < CERT_CAP_M).then_some(m)
    }
}

/// [`trace`] for every pair of a set of points, window after window, exploiting that vehicles
/// move little between windows.
///
/// For each pair it keeps a *certificate* (see `Cert`): the last classification it walked, with
/// a lower bound on the clearance over each piece. While the endpoints have moved so little
/// that those bounds still decide most of the segment, only the stretches near the surface
/// (the crossings) are walked again, cell by cell; this is what makes short windows cheap.
/// Otherwise it walks the pyramid starting from the blocks that classified the segment last
/// time (see `March::replay`): a block's slab usually still decides the part of the moved
/// segment inside it, so the walk down from the root is skipped. A pair whose remembered list
/// has grown past 1.25× the length of a walk from the root starts afresh; a pair whose
/// certificates keep going unused (fast motion for its geometry) makes them less and less
/// often, up to one in 16 windows. The classification is exact either way, so the paths equal
/// [`trace`]'s (up to the rounding of a buried length summed over differently cut pieces,
/// ~1e-15 relative). A different number of points or a different terrain starts every pair
/// afresh.
#[derive(Debug, Default)]
pub struct Tracer {
    memos: Vec<Memo>,
    /// The last window's paths, overwritten in place window after window.
    paths: Vec<PathInfo>,
    /// [`Terrain::id`] of the terrain the memos were made with.
    terrain: u64,
}

impl Tracer {
    pub fn new() -> Tracer {
        Tracer::default()
    }

    /// The paths of every pair `i < j` of `points`, in the order (0,1), (0,2), …, (0,n-1),
    /// (1,2), …, on all cores. Each result depends only on its two points and its pair's own
    /// memory, so the output never depends on timing. The paths are kept (and their storage
    /// reused) until the next call.
    pub fn trace_all(
        &mut self,
        terrain: &Terrain,
        points: &[Point3<f64>],
        penetration_loss_db_per_m: f64,
    ) -> &[PathInfo] {
        let pairs = pairs(points.len());
        if self.memos.len() != pairs.len() || self.terrain != terrain.id() {
            self.memos = vec![Memo::default(); pairs.len()];
            self.paths = vec![PathInfo { los: true, hops: Vec::new() }; pairs.len()];
            self.terrain = terrain.id();
        }
        let mut slots: Vec<_> = self.memos.iter_mut().zip(self.paths.iter_mut()).collect();
        on_all_cores(&pairs, &mut slots, |&(i, j), (memo, path)| {
            memo.reused = false;
            let mode = Mode::Replay(memo);
            trace_into(terrain, &points[i], &points[j], penetration_loss_db_per_m, mode, path);
        });
        &self.paths
    }

    /// How many pairs of the last [`Self::trace_all`] reused their certificate (see the
    /// module docs) instead of walking the pyramid.
    pub fn reused(&self) -> usize {
        self.memos.iter().filter(|m| m.reused).count()
    }
}

/// [`trace`] for every pair `i < j` of `points`, in the order (0,1), (0,2), …, (0,n-1), (1,2), …,
/// on all cores, each from the pyramid's root (nothing remembered).
pub fn trace_all(
    terrain: &Terrain,
    points: &[Point3<f64>],
    penetration_loss_db_per_m: f64,
) -> Vec<PathInfo> {
    let pairs = pairs(points.len());
    let mut paths = vec![PathInfo { los: true, hops: Vec::new() }; pairs.len()];
    on_all_cores(&pairs, &mut paths, |&(i, j), path| {
        trace_into(terrain, &points[i], &points[j], penetration_loss_db_per_m, Mode::Fresh, path)
    });
    paths
}

/// [`line_of_sight`] for every pair `i < j` of `points`, in [`trace_all`]'s order, on all cores.
pub fn line_of_sight_all(terrain: &Terrain, points: &[Point3<f64>]) -> Vec<bool> {
    let pairs = pairs(points.len());
    let mut flags = vec![false; pairs.len()];
    on_all_cores(&pairs, &mut flags, |&(i, j), los| *los = line_of_sight(terrain, &points[i], &points[j]));
    flags
}

/// The pairs `i < j` of `n` points in the order (0,1), (0,2), …, (0,n-1), (1,2), ….
fn pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n).flat_map(|i| ((i + 1)..n).map(move |j| (i, j))).collect()
}

/// `f(pair, slot)` for every pair with its own slot (`slots[k]` goes with `pairs[k]`).
///
/// The pairs are cut into batches of 32 consecutive pairs, and each available core (scoped
/// threads) has an equal contiguous share of the batches, which it takes in order; a core done
/// with its share takes batches left in the others'. So a core meets mostly the same pairs
/// window after window (their memory stays in its cache; a shared queue measured 4–5 % slower
/// at W = 1 ms), and a core that drew cheap pairs still helps with the rest. Each call touches
/// only its pair's own slot, so the outcome never depends on timing.
fn on_all_cores<S: Send>(pairs: &[(usize, usize)], slots: &mut [S], f: impl Fn(&(usize, usize), &mut S) + Sync) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let workers = threads().min(pairs.len() / BATCH).max(1);
    if workers == 1 {
        pairs.iter().zip(slots.iter_mut()).for_each(|(p, s)| f(p, s));
        return;
    }
    // A batch's pairs and slots, until a worker takes them.
    type Batch<'p, S> = Mutex<Option<(&'p [(usize, usize)], &'p mut [S])>>;
    let batches: Vec<Batch<S>> =
        pairs.chunks(BATCH).zip(slots.chunks_mut(BATCH)).map(|b| Mutex::new(Some(b))).collect();
    // Worker `w`'s share is batches `bounds[w]..bounds[w + 1]`; `next[w]` is its next one.
    let n = batches.len();
    let bounds: Vec<usize> = (0..=workers).map(|w| w * n / workers).collect();
    let next: Vec<AtomicUsize> = bounds[..workers].iter().map(|&b| AtomicUsize::new(b)).collect();
    let work = |me: usize| {
        for w in (me..workers).chain(0..me) {
            loop {
                let b = next[w].fetch_add(1, Ordering::Relaxed);
                if b >= bounds[w + 1] {
                    break;
                }
                let taken = batches[b].lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some((p, s)) = taken {
                    p.iter().zip(s.iter_mut()).for_each(|(p, s)| f(p, s));
                }
            }
        }
    };
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (1..workers).map(|w| s.spawn(move || work(w))).collect();
        work(0);
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
}
