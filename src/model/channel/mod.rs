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
//! 2. **Broad phase** (`broad.rs`; not in [`trace_naive`]): a walk through the terrain's pyramid along the
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
//!    differs. Before that it tries the pair's *certificate* (`certificate.rs`): the last walked classification
//!    with a lower bound on `|f|` per piece and a bound on the surface's slope near it. The
//!    moved segment's `f` differs from the reference's at the same `t` by at most the vertical
//!    motion plus the slope times the horizontal motion, so every piece whose bound exceeds
//!    that keeps its sign; only the rest (the crossings and their surroundings) is walked again
//!    by step 3. Exact as well.
//! 3. **Exact linear pre-check** (`narrow.rs`): the surface is linear on each triangle, and the triangles'
//!    edges are the grid lines `gx = k`, `gy = k` and the SW–NE diagonals `gx + gy = k` (grid
//!    coordinates, integer `k`). So between consecutive crossings of those lines by the
//!    segment's xy-projection the clearance `f(t)` is linear, and its sign can only change on a
//!    piece whose ends differ in sign or touch 0. Each undecided leaf block is walked piece by
//!    piece (three interleaved line families, as a 2-D DDA), evaluating `f` at the breakpoints
//!    only, from per-leaf-block height tiles. A piece with `f` beyond a tolerance (1 µm, far
//!    above the interpolation's rounding) of one sign at both ends is Above or Below,
//!    decided without parry; the others are candidates for the narrow phase.
//! 4. **Narrow phase** (`narrow.rs`): every crossing of the surface inside a candidate piece is found with
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
//!
//! # Files
//! - `mod.rs`: the path types, the entry points ([`trace`], [`line_of_sight`], [`trace_naive`],
//!   [`trace_all`], [`line_of_sight_all`], [`Tracer`]) and the steps in order (1 and 5 here);
//! - `broad.rs`: the pyramid walk of step 2, from the root or from a pair's remembered blocks;
//! - `certificate.rs`: what a pair remembers between windows, and its certificate;
//! - `narrow.rs`: steps 3 and 4 (the exact cell walk, parry's crossings and the signs between
//!   them) and the parry-only walk of [`trace_naive`];
//! - `parallel.rs`: the pairs of a set of points shared across the cores;
//! - `piece.rs`: a segment, its pieces and how consecutive pieces merge, which every step uses.

mod broad;
mod certificate;
mod narrow;
mod parallel;
mod piece;

use nalgebra::Point3;

use crate::model::terrain::Terrain;

use broad::{March, Verdict};
use certificate::{Memo, CERT_BACKOFF_MAX, CERT_WALK_CELLS};
use narrow::{narrow_phase_naive, push_resolved, Walk};
use parallel::{on_all_cores, pairs};
use piece::{Piece, Seg, State, ON_TOL};

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
    out.hops.extend([
        Hop {
            point: *a,
            loss_db: 0.0,
        },
        Hop {
            point: *b,
            loss_db: 0.0,
        },
    ]);
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

fn trace_impl(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    loss_per_m: f64,
    mode: Mode,
) -> PathInfo {
    let mut out = PathInfo {
        los: true,
        hops: Vec::new(),
    };
    trace_into(terrain, a, b, loss_per_m, mode, &mut out);
    out
}

/// [`trace_with`] with this thread's scratch buffers, into `out` (its hops' allocation is
/// reused).
fn trace_into(
    terrain: &Terrain,
    a: &Point3<f64>,
    b: &Point3<f64>,
    loss_per_m: f64,
    mode: Mode,
    out: &mut PathInfo,
) {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => trace_with(terrain, a, b, loss_per_m, mode, &mut s, out),
        Err(_) => trace_with(
            terrain,
            a,
            b,
            loss_per_m,
            mode,
            &mut Scratch::default(),
            out,
        ),
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
    if !(a
        .coords
        .iter()
        .chain(b.coords.iter())
        .all(|v| v.is_finite()))
    {
        return set_los(out, a, b);
    }
    let d = b - a;
    let seg = Seg {
        a: *a,
        d,
        len: d.norm(),
    };
    let [hx, hy] = terrain.half_extent();

    if seg.len == 0.0 {
        if let Some(h) = terrain.height_at(a.x, a.y) {
            if a.z - h <= ON_TOL {
                let hop = Hop {
                    point: *a,
                    loss_db: 0.0,
                };
                out.los = false;
                out.hops.clear();
                out.hops.extend([
                    hop,
                    hop,
                    hop,
                    Hop {
                        point: *b,
                        loss_db: 0.0,
                    },
                ]);
                return;
            }
        }
        return set_los(out, a, b);
    }

    // 1. Clip to the footprint.
    let Some((t_lo, t_hi)) =
        clip(a.x, d.x, -hx, hx, 0.0, 1.0).and_then(|(l, h)| clip(a.y, d.y, -hy, hy, l, h))
    else {
        return set_los(out, a, b);
    };

    let Scratch {
        pieces,
        hits,
        resolved,
        rec,
        ver,
    } = sc;
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
                .is_some_and(|moved| {
                    memo.cert
                        .reuse(&walk, moved, CERT_WALK_CELLS / cells, pieces, hits)
                });
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
                    if memo.blocks.is_empty()
                        || memo.blocks.len() > memo.fresh_len + memo.fresh_len / 4 + 4
                    {
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
                    if pieces
                        .last()
                        .is_some_and(|p| matches!(p.state, State::Below | State::On))
                    {
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
    hops.push(Hop {
        point: *a,
        loss_db: 0.0,
    });
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
                run = Some((
                    p.t0,
                    p.t1,
                    if s == State::Below { p.t1 - p.t0 } else { 0.0 },
                ));
            }
        }
    }
    if let Some((t0, t1, buried)) = run {
        push_run(hops, &seg, t0, t1, buried, loss_per_m);
    }
    hops.push(Hop {
        point: *b,
        loss_db: 0.0,
    });
    out.los = hops.len() == 2;
}

fn push_run(hops: &mut Vec<Hop>, seg: &Seg, t0: f64, t1: f64, buried: f64, loss_per_m: f64) {
    hops.push(Hop {
        point: seg.at(t0),
        loss_db: 0.0,
    });
    hops.push(Hop {
        point: seg.at(t1),
        loss_db: loss_per_m * buried * seg.len,
    });
}

/// Parameter range `[lo, hi] ∩ [t0, t1]` where `p0 + t dp ∈ [min, max]`.
#[inline]
fn clip(p0: f64, dp: f64, min: f64, max: f64, t0: f64, t1: f64) -> Option<(f64, f64)> {
    if dp == 0.0 {
        return if p0 >= min && p0 <= max {
            Some((t0, t1))
        } else {
            None
        };
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

/// [`trace`] for every pair of a set of points, window after window, exploiting that vehicles
/// move little between windows.
///
/// For each pair it keeps a *certificate* (`Cert`, `certificate.rs`): the last classification
/// it walked, with a lower bound on the clearance over each piece. While the endpoints have
/// moved so little that those bounds still decide most of the segment, only the stretches near
/// the surface (the crossings) are walked again, cell by cell; this is what makes short windows
/// cheap. Otherwise it walks the pyramid starting from the blocks that classified the segment
/// last time (`March::replay`, `broad.rs`): a block's slab usually still decides the part of
/// the moved segment inside it, so the walk down from the root is skipped. A pair whose
/// remembered list has grown past 1.25× the length of a walk from the root starts afresh; a
/// pair whose certificates keep going unused (fast motion for its geometry) makes them less and
/// less often, up to one in 16 windows. The classification is exact either way, so the paths
/// equal [`trace`]'s (up to the rounding of a buried length summed over differently cut pieces,
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
        let all = 0..points.len() * points.len().saturating_sub(1) / 2;
        self.trace_some(terrain, points, penetration_loss_db_per_m, all);
        &self.paths
    }

    /// [`Self::trace_all`] for the pairs at `range` of that order only; the other paths stay
    /// as they were (every path is traced afresh, in full, if the number of points or the
    /// terrain changed).
    pub fn trace_some(
        &mut self,
        terrain: &Terrain,
        points: &[Point3<f64>],
        penetration_loss_db_per_m: f64,
        range: std::ops::Range<usize>,
    ) {
        let pairs = pairs(points.len());
        let mut range = range.start.min(pairs.len())..range.end.min(pairs.len());
        if self.memos.len() != pairs.len() || self.terrain != terrain.id() {
            range = 0..pairs.len();
            self.memos = vec![Memo::default(); pairs.len()];
            self.paths = vec![
                PathInfo {
                    los: true,
                    hops: Vec::new()
                };
                pairs.len()
            ];
            self.terrain = terrain.id();
        }
        let mut slots: Vec<_> = self.memos[range.clone()]
            .iter_mut()
            .zip(self.paths[range.clone()].iter_mut())
            .collect();
        on_all_cores(&pairs[range], &mut slots, |&(i, j), (memo, path)| {
            memo.reused = false;
            let mode = Mode::Replay(memo);
            trace_into(
                terrain,
                &points[i],
                &points[j],
                penetration_loss_db_per_m,
                mode,
                path,
            );
        });
    }

    /// The paths as last traced, in [`Self::trace_all`]'s order.
    pub fn paths(&self) -> &[PathInfo] {
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
    let mut paths = vec![
        PathInfo {
            los: true,
            hops: Vec::new()
        };
        pairs.len()
    ];
    on_all_cores(&pairs, &mut paths, |&(i, j), path| {
        trace_into(
            terrain,
            &points[i],
            &points[j],
            penetration_loss_db_per_m,
            Mode::Fresh,
            path,
        )
    });
    paths
}

/// [`line_of_sight`] for every pair `i < j` of `points`, in [`trace_all`]'s order, on all cores.
pub fn line_of_sight_all(terrain: &Terrain, points: &[Point3<f64>]) -> Vec<bool> {
    let pairs = pairs(points.len());
    let mut flags = vec![false; pairs.len()];
    on_all_cores(&pairs, &mut flags, |&(i, j), los| {
        *los = line_of_sight(terrain, &points[i], &points[j])
    });
    flags
}
