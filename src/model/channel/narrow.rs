//! The exact cell walk of the stretches the broad phase leaves undecided (the linear pre-check
//! on the triangles' breakpoints), the crossings found with parry on the one triangle of each
//! candidate piece, the signs between crossings, and the parry-only reference of `trace_naive`
//! (see the channel module docs, steps 3 and 4).

use parry3d_f64::query::{Ray, RayCast};

use crate::model::terrain::{to_parry, to_parry_vec, Terrain, LEAF};

use super::piece::{push_piece, Piece, Seg, State, ON_TOL};

/// After a crossing, the next ray starts this far along the segment (metres).
const STEP_M: f64 = 1e-9;
/// The linear pre-check decides a piece without parry only if its clearance is beyond this at
/// both ends (metres): well above rounding, so pieces near the surface always go to parry.
const PRE_TOL: f64 = 1e-6;
/// Safety cap on crossings per candidate stretch.
const MAX_CROSSINGS: usize = 1 << 16;

/// The segment in grid coordinates, for the exact cell walk of candidate stretches.
///
/// `gx` counts cells east from the west edge, `gy` cells south from the north edge. The
/// surface is linear on each triangle, and the triangles' edges are the lines `gx = k`,
/// `gy = k` and (the SW–NE diagonals) `gx + gy = k` for integers `k`. Between consecutive
/// crossings of those lines the clearance `f(t)` is therefore linear in `t`.
pub(super) struct Walk<'a> {
    pub(super) terrain: &'a Terrain,
    pub(super) seg: &'a Seg,
    ray: Ray,
    pub(super) g0: [f64; 3],
    pub(super) dg: [f64; 3],
    /// `1 / dg` (infinite for a family the segment runs parallel to).
    inv: [f64; 3],
    ncw: usize,
    nch: usize,
    /// Clearance beyond which a piece is decided without parry (metres).
    pub(super) tol: f64,
    /// [`STEP_M`] in units of `t`: how far outside its piece a hit may fall through rounding.
    slack: f64,
    /// Keep the pieces' margins apart for a certificate (see [`push_piece`]).
    pub(super) fine: bool,
}

impl<'a> Walk<'a> {
    pub(super) fn new(terrain: &'a Terrain, seg: &'a Seg) -> Walk<'a> {
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
    pub(super) fn run(
        &self,
        ts: f64,
        te: f64,
        slope: f64,
        out: &mut Vec<Piece>,
        hits: &mut Vec<f64>,
    ) {
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
            let (ki, si) = if dg > 0.0 {
                (floor(g) + 1.0, 1.0)
            } else {
                (-floor(-g) - 1.0, -1.0)
            };
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
            let margin = if self.fine {
                fp.abs().min(fq.abs())
            } else {
                0.0
            };
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
                        let (s0, s1) = if fp > 0.0 {
                            (State::Above, State::Below)
                        } else {
                            (State::Below, State::Above)
                        };
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
                push_piece(
                    out,
                    Piece {
                        t0: tp,
                        t1: tq,
                        state,
                        margin,
                        slope,
                    },
                    self.fine,
                );
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

/// Ray casts `[ts, te]` with the whole heightfield and appends its resolved pieces.
pub(super) fn narrow_phase_naive(
    terrain: &Terrain,
    seg: &Seg,
    ts: f64,
    te: f64,
    out: &mut Vec<Piece>,
) {
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

pub(super) fn push_resolved(terrain: &Terrain, seg: &Seg, t0: f64, t1: f64, out: &mut Vec<Piece>) {
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
    let f = [
        clearance(terrain, seg, t0),
        clearance(terrain, seg, tm),
        clearance(terrain, seg, t1),
    ];
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
    let g = f
        .into_iter()
        .fold(0.0f64, |g, e| if e.abs() > g.abs() { e } else { g });
    out.push(Piece::bare(
        t0,
        t1,
        [State::Below, State::On, State::Above][(sign(g) + 1) as usize],
    ));
}
