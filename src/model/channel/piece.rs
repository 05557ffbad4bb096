//! A segment between two points and its parameter range cut into pieces, each above, on or
//! below the surface or still to be decided, in order and gap-free: what every step of the
//! channel's trace (broad phase, narrow phase, certificates) produces and reads, and how
//! consecutive pieces merge.

use nalgebra::{Point3, Vector3};

/// Heights within this distance of the surface count as on it (metres).
pub(super) const ON_TOL: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Above,
    On,
    Below,
    /// Broad-phase candidate (to be ray cast).
    Mixed,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Piece {
    pub(super) t0: f64,
    pub(super) t1: f64,
    pub(super) state: State,
    /// For Above and Below: a lower bound on `|f|` over the piece (metres); else 0.
    pub(super) margin: f64,
    /// A bound on the surface's slope near the piece ([`Terrain::slope_near`](crate::model::terrain::Terrain::slope_near) of the block
    /// that decided it).
    pub(super) slope: f64,
}

impl Piece {
    /// A piece without a margin (On, Mixed, or one not kept for a [`Cert`](super::certificate::Cert)).
    #[inline]
    pub(super) fn bare(t0: f64, t1: f64, state: State) -> Piece {
        Piece {
            t0,
            t1,
            state,
            margin: 0.0,
            slope: f64::INFINITY,
        }
    }
}

pub(super) struct Seg {
    pub(super) a: Point3<f64>,
    pub(super) d: Vector3<f64>,
    pub(super) len: f64,
}

impl Seg {
    #[inline]
    pub(super) fn at(&self, t: f64) -> Point3<f64> {
        self.a + self.d * t
    }
}

/// Margins of at least this (metres) are all alike to a certificate: pieces with such margins
/// merge, and a certificate is given up once the vertical motion reaches it.
pub(super) const CERT_CAP_M: f64 = 0.5;
/// Pieces recorded for a certificate merge when their margins are within this factor.
pub(super) const CERT_MERGE: f64 = 0.5;

/// Appends a piece, merging it into the previous one when both are Above or both Below. For a
/// certificate (`fine`) only pieces whose margins are alike merge (within a factor of
/// [`CERT_MERGE`], or both at least [`CERT_CAP_M`]): a merged piece keeps the smaller margin
/// and the larger slope bound, so merging never loosens a bound by more than that.
#[inline]
pub(super) fn push_piece(out: &mut Vec<Piece>, p: Piece, fine: bool) {
    if p.t1 < p.t0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        let (lo, hi) = if last.margin < p.margin {
            (last.margin, p.margin)
        } else {
            (p.margin, last.margin)
        };
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
