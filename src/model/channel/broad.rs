//! The broad phase: the walk through the terrain's pyramid along a segment, at the coarsest
//! level whose bounding slab decides (see the channel module docs, step 2), from the root or
//! from the blocks a pair remembered from the last window.

use crate::model::terrain::{block_centre, fidx, QLevel, Terrain, LEAF_LEVEL};

use super::narrow::Walk;
use super::piece::{push_piece, Piece, State, ON_TOL};

/// Footprint enlargement of pyramid blocks, in cells (keeps the broad phase conservative).
const GRID_EPS: f64 = 1e-7;

/// A pyramid block `(level k, row bi, column bj)` packed into 32 bits: `k` in the low 4 bits,
/// then 14 bits each for `bi` and `bj` (leaf blocks of the largest grid,
/// [`MAX_DIM`](crate::model::terrain::MAX_DIM) samples a side, need 11).
#[inline]
fn pack(k: usize, bi: usize, bj: usize) -> u32 {
    (k as u32) | ((bi as u32) << 4) | ((bj as u32) << 18)
}

#[inline]
fn unpack(b: u32) -> (usize, usize, usize) {
    (
        (b & 0xf) as usize,
        ((b >> 4) & 0x3fff) as usize,
        (b >> 18) as usize,
    )
}

/// A remembered block's stretch `[ta, tb]` of the moved segment and its slab's verdict there,
/// with the margin (see [`March::verdict`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Verdict {
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
pub(super) struct March<'a> {
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
    pub(super) first_hit: bool,
}

impl<'a> March<'a> {
    pub(super) fn new(terrain: &'a Terrain, walk: &'a Walk<'a>) -> Option<March<'a>> {
        let levels = &terrain.qlevels[..];
        if levels.is_empty() {
            return None;
        }
        let sign = |d: f64| {
            if d > 0.0 {
                1isize
            } else if d < 0.0 {
                -1
            } else {
                0
            }
        };
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
                    push_piece(
                        out,
                        Piece {
                            t0: t,
                            t1: te,
                            state,
                            margin,
                            slope,
                        },
                        self.walk.fine,
                    );
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
            if te >= t_end
                || (self.first_hit
                    && out
                        .last()
                        .is_some_and(|p| matches!(p.state, State::Below | State::On)))
            {
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
            self.walk
                .run(t, t_end, self.walk.terrain.max_slope(), out, hits);
        }
    }

    /// Classifies `[t_lo, t_hi]` from the root.
    pub(super) fn fresh(
        &self,
        t_lo: f64,
        t_hi: f64,
        out: &mut Vec<Piece>,
        hits: &mut Vec<f64>,
        rec: &mut Vec<u32>,
    ) {
        self.run((self.top, 0, 0), self.top, t_lo, t_hi, out, hits, rec);
    }

    /// Classifies `[t_lo, t_hi]` with the blocks `memo` recorded for a nearby segment, in order.
    /// Each block still met is tried first: over the part of the segment inside its enlarged
    /// footprint its slab may still decide (or, a leaf, be walked); if not, the walk descends
    /// from it. Stretches no remembered block covers are walked from the level above the next
    /// remembered block (from the root at the start). The classification is as exact as
    /// [`Self::fresh`]'s: only the blocks tried differ.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn replay(
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
                    let (v, margin) =
                        self.verdict(k, bi, bj, if ta > t_lo { ta } else { t_lo }, tb);
                    Verdict { ta, tb, v, margin }
                }
                _ => Verdict {
                    ta: f64::INFINITY,
                    tb: f64::NEG_INFINITY,
                    v: 0,
                    margin: 0.0,
                },
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
            let state = if v != 0 {
                as_state((v, margin))
            } else {
                self.decide(k, bi, bj, t, tb)
            };
            match state {
                Some((state, margin)) => {
                    let slope = self.slope_near(k, bi, bj);
                    push_piece(
                        out,
                        Piece {
                            t0: t,
                            t1: tb,
                            state,
                            margin,
                            slope,
                        },
                        self.walk.fine,
                    );
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
    fn gap(
        &self,
        k: usize,
        t: f64,
        t_end: f64,
        out: &mut Vec<Piece>,
        hits: &mut Vec<f64>,
        rec: &mut Vec<u32>,
    ) {
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
        self.run(
            (k, at(1, level.h), at(0, level.w)),
            self.top,
            t,
            t_end,
            out,
            hits,
            rec,
        );
    }
}
