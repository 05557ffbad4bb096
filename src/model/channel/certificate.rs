//! What a pair remembers between windows for [`Tracer`](super::Tracer): the pyramid blocks
//! that classified its segment, and its certificate, the classification with a lower bound on
//! the clearance per piece, which decides most of a slightly moved segment without a walk.

use nalgebra::Point3;

use crate::model::terrain::f32_up;

use super::narrow::Walk;
use super::piece::{push_piece, Piece, State, CERT_CAP_M};

/// A certificate is reused while the stretches to walk again exceed its reference's own by at
/// most this many cells' length.
pub(super) const CERT_WALK_CELLS: f64 = 8.0;
/// At most this many windows between attempts at a certificate for a pair whose certificates
/// go unused.
pub(super) const CERT_BACKOFF_MAX: u8 = 15;

/// What one pair remembers between windows: the pyramid blocks that classified its segment,
/// in order from A to B, how many a walk from the root needed when last made, and its
/// certificate.
#[derive(Debug, Default, Clone)]
pub(super) struct Memo {
    pub(super) blocks: Vec<u32>,
    pub(super) fresh_len: usize,
    pub(super) cert: Cert,
    /// Whether the last window reused `cert`.
    pub(super) reused: bool,
    /// `cert` was made and not reused yet.
    pub(super) unused: bool,
    /// Windows to wait between certificates (doubles while they go unused, up to
    /// [`CERT_BACKOFF_MAX`]; 0 once one is reused), and how many of them are left.
    pub(super) backoff: u8,
    pub(super) wait: u8,
}

/// One piece of a [`Cert`]: it ends at `t1` (it starts where the previous one ends) and, if
/// Above or Below, `|f| >= margin` on it in the reference window.
#[derive(Debug, Clone, Copy)]
pub(super) struct CertPiece {
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
        self.margin > m.dz + f64::from(self.slope) * m.dxy
            && matches!(self.state, State::Above | State::Below)
    }
}

/// How far a segment's points moved since a certificate's reference window: `dz` vertically
/// (plus the walk's rounding tolerance), `dxy` horizontally (metres).
#[derive(Debug, Clone, Copy)]
pub(super) struct Moved {
    dz: f64,
    dxy: f64,
}

/// A pair's certificate: the classification of its segment in a reference window, with a
/// lower bound on the clearance `|f|` over each Above or Below piece.
///
/// Why it carries over. At the same `t` the moved segment's point differs from the reference's
/// by `Δ(t) = (1 - t) ΔA + t ΔB`, so by at most `δz = max(|ΔA_z|, |ΔB_z|)` vertically and
/// `δxy = max(|ΔA_xy|, |ΔB_xy|)` horizontally. Each piece keeps the slope bound `s` of the
/// block that decided it ([`Terrain::slope_near`](crate::model::terrain::Terrain::slope_near): the surface's largest slope within one leaf
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
pub(super) struct Cert {
    a: Point3<f64>,
    b: Point3<f64>,
    t_lo: f64,
    t_hi: f64,
    /// From `t_lo` to `t_hi` in order; empty: no certificate.
    pub(super) pieces: Vec<CertPiece>,
    /// The length (in `t`) of the pieces that are never sure: the crossings and the pieces
    /// touching the surface.
    base_walk: f64,
}

impl Cert {
    /// Makes the classification `pieces` of the segment from `a` to `b` over `[t_lo, t_hi]`
    /// the certificate. A gap between pieces (none are expected) is kept as unsure.
    pub(super) fn set(
        &mut self,
        a: &Point3<f64>,
        b: &Point3<f64>,
        t_lo: f64,
        t_hi: f64,
        pieces: &[Piece],
    ) {
        (self.a, self.b, self.t_lo, self.t_hi) = (*a, *b, t_lo, t_hi);
        self.pieces.clear();
        let unsure = |t1| CertPiece {
            t1,
            margin: 0.0,
            slope: f32::INFINITY,
            state: State::Mixed,
        };
        let mut t = t_lo;
        for p in pieces {
            if p.t0 != t {
                self.pieces.push(unsure(p.t0.max(t)));
            }
            let margin = if matches!(p.state, State::Above | State::Below) {
                p.margin
            } else {
                0.0
            };
            // Rounded up: a slope bound may only grow.
            let slope = f32_up(p.slope);
            self.pieces.push(CertPiece {
                t1: p.t1.max(t),
                margin,
                slope,
                state: p.state,
            });
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
    pub(super) fn reuse(
        &self,
        walk: &Walk,
        moved: Moved,
        extra: f64,
        out: &mut Vec<Piece>,
        hits: &mut Vec<f64>,
    ) -> bool {
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
    pub(super) fn moved(
        &self,
        a: &Point3<f64>,
        b: &Point3<f64>,
        t_lo: f64,
        t_hi: f64,
        reach: f64,
        tol: f64,
    ) -> Option<Moved> {
        if self.pieces.is_empty() || t_lo != self.t_lo || t_hi != self.t_hi {
            return None;
        }
        let (da, db) = (a - self.a, b - self.b);
        let dxy2 = (da.x * da.x + da.y * da.y).max(db.x * db.x + db.y * db.y);
        let m = Moved {
            dz: da.z.abs().max(db.z.abs()) + tol,
            dxy: dxy2.sqrt(),
        };
        (m.dxy < reach && m.dz < CERT_CAP_M).then_some(m)
    }
}
