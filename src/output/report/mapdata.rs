//! What the report's maps ([`super::map`]) are drawn from, read from the record: every
//! vehicle's track (`/poses`), the terrain's triangles (`/scene/terrain`), and the frame that
//! puts the ground on a map's pixels.

use crate::output::foxglove::{Pose, SceneUpdate};
use crate::output::record::Record;
use std::collections::HashMap;

/// At most this many points per track (every n-th beyond it, and the last).
pub const MAX_TRACK_POINTS: usize = 10_000;
/// At most this many terrain triangles are read from the record.
pub const MAX_TRIANGLES: usize = 1 << 20;

/// A vehicle's position at a sample time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackPoint {
    pub t_s: f64,
    pub x: f64,
    pub y: f64,
}

/// One vehicle's recorded positions, in time order.
#[derive(Debug, Clone)]
pub struct Track {
    pub vehicle: String,
    pub points: Vec<TrackPoint>,
}

impl Track {
    /// The position at `t_s`, interpolated between samples (held before the first and after the
    /// last). None for an empty track.
    pub fn at(&self, t_s: f64) -> Option<(f64, f64)> {
        let p = &self.points;
        let k = p.partition_point(|q| q.t_s <= t_s);
        match (k.checked_sub(1).and_then(|i| p.get(i)), p.get(k)) {
            (Some(a), Some(b)) if b.t_s > a.t_s => {
                let f = (t_s - a.t_s) / (b.t_s - a.t_s);
                Some((a.x + f * (b.x - a.x), a.y + f * (b.y - a.y)))
            }
            (Some(a), _) => Some((a.x, a.y)),
            (None, Some(b)) => Some((b.x, b.y)),
            (None, None) => None,
        }
    }
}

/// The terrain as triangles in world coordinates (x east, y north, z up).
#[derive(Debug, Clone, Default)]
pub struct Mesh {
    pub vertices: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
}

impl Mesh {
    /// The triangles of every entity in `update` (each primitive's pose applied). Triangles
    /// with an index beyond their primitive's points or a coordinate that is not finite are
    /// left out, and the returned notes say how many.
    pub fn from_scene(update: &SceneUpdate) -> (Mesh, Vec<String>) {
        let mut m = Mesh::default();
        let (mut bad_index, mut not_finite, mut over) = (0usize, 0usize, 0usize);
        for prim in update.entities.iter().flat_map(|e| &e.triangles) {
            let base = m.vertices.len();
            let Ok(base32) = u32::try_from(base + prim.points.len()) else {
                over += prim.points.len() / 3;
                continue;
            };
            let base32 = base32 - prim.points.len() as u32;
            let n = prim.points.len();
            m.vertices.extend(
                prim.points
                    .iter()
                    .map(|p| transform(&prim.pose, [p.x, p.y, p.z])),
            );
            let finite = |k: usize| m.vertices[base + k].iter().all(|c| c.is_finite());
            let mut add = |tri: [usize; 3], m_tris: &mut Vec<[u32; 3]>| {
                if tri.iter().any(|&k| k >= n) {
                    bad_index += 1;
                } else if !tri.iter().all(|&k| finite(k)) {
                    not_finite += 1;
                } else if m_tris.len() >= MAX_TRIANGLES {
                    over += 1;
                } else {
                    m_tris.push(tri.map(|k| base32 + k as u32));
                }
            };
            let mut tris = std::mem::take(&mut m.triangles);
            if prim.indices.is_empty() {
                for k in (0..n / 3).map(|t| 3 * t) {
                    add([k, k + 1, k + 2], &mut tris);
                }
            } else {
                for c in prim.indices.chunks_exact(3) {
                    add([c[0], c[1], c[2]].map(|i| i as usize), &mut tris);
                }
            }
            m.triangles = tris;
        }
        let mut notes = Vec::new();
        for (count, why) in [
            (bad_index, "name a point their primitive does not have"),
            (not_finite, "have a coordinate that is not a finite number"),
            (over, "are beyond the map's limit of triangles"),
        ] {
            if count > 0 {
                notes.push(format!(
                    "/scene/terrain: {count} triangles {why} (left out of the map)"
                ));
            }
        }
        (m, notes)
    }

    /// Lowest and highest vertex of a triangle.
    pub(super) fn height_range(&self) -> Option<(f64, f64)> {
        let mut used = vec![false; self.vertices.len()];
        for t in &self.triangles {
            for &k in t {
                used[k as usize] = true;
            }
        }
        let (lo, hi) = self
            .vertices
            .iter()
            .zip(&used)
            .filter(|(_, &u)| u)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (v, _)| {
                (lo.min(v[2]), hi.max(v[2]))
            });
        (lo <= hi).then_some((lo, hi))
    }

    /// Bounds of the vertices of its triangles: [west, east, south, north].
    pub(super) fn bounds(&self) -> Option<[f64; 4]> {
        bounds(
            self.triangles
                .iter()
                .flatten()
                .map(|&k| (self.vertices[k as usize][0], self.vertices[k as usize][1])),
        )
    }
}

/// `p` moved by `pose` (rotation, then translation).
pub(super) fn transform(pose: &Pose, p: [f64; 3]) -> [f64; 3] {
    let q = pose.orientation;
    let (qv, w) = ([q.x, q.y, q.z], q.w);
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    // v + 2w(q×v) + 2 q×(q×v), for a unit quaternion.
    let t = cross(qv, p).map(|c| 2.0 * c);
    let u = cross(qv, t);
    let o = pose.position;
    [
        p[0] + w * t[0] + u[0] + o.x,
        p[1] + w * t[1] + u[1] + o.y,
        p[2] + w * t[2] + u[2] + o.z,
    ]
}

/// [west, east, south, north] of `points`, None without a finite one.
fn bounds(points: impl Iterator<Item = (f64, f64)>) -> Option<[f64; 4]> {
    let b = points.filter(|p| p.0.is_finite() && p.1.is_finite()).fold(
        [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ],
        |b, (x, y)| [b[0].min(x), b[1].max(x), b[2].min(y), b[3].max(y)],
    );
    (b[0] <= b[1]).then_some(b)
}

/// What the maps are drawn from: the tracks and the terrain of a record.
#[derive(Debug, Clone, Default)]
pub struct MapData {
    /// In the run's vehicle order, then the others by name.
    pub tracks: Vec<Track>,
    /// None when the record has no `/scene/terrain` (or no usable triangle in it).
    pub terrain: Option<Mesh>,
    /// What could not be drawn, in words.
    pub notes: Vec<String>,
}

impl MapData {
    pub fn of(record: &Record) -> MapData {
        let mut order: HashMap<&str, usize> = HashMap::new();
        let mut tracks: Vec<Track> = Vec::new();
        for v in record.run.iter().flat_map(|r| &r.vehicles) {
            if !order.contains_key(v.as_str()) {
                order.insert(v, tracks.len());
                tracks.push(Track {
                    vehicle: v.clone(),
                    points: Vec::new(),
                });
            }
        }
        let known = tracks.len();
        for m in &record.poses {
            for p in &m.poses {
                if !(m.t_s.is_finite() && p.x.is_finite() && p.y.is_finite()) {
                    continue;
                }
                let i = *order.entry(&p.vehicle).or_insert_with(|| {
                    tracks.push(Track {
                        vehicle: p.vehicle.clone(),
                        points: Vec::new(),
                    });
                    tracks.len() - 1
                });
                tracks[i].points.push(TrackPoint {
                    t_s: m.t_s,
                    x: p.x,
                    y: p.y,
                });
            }
        }
        tracks[known..].sort_by(|a, b| a.vehicle.cmp(&b.vehicle));
        for t in &mut tracks {
            t.points.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
            if t.points.len() > MAX_TRACK_POINTS {
                let stride = t.points.len().div_ceil(MAX_TRACK_POINTS);
                let last = t.points[t.points.len() - 1];
                t.points = t.points.iter().copied().step_by(stride).collect();
                if t.points.last() != Some(&last) {
                    t.points.push(last);
                }
            }
        }
        tracks.retain(|t| !t.points.is_empty());
        let mut notes = Vec::new();
        let terrain = record.terrain.as_ref().and_then(|u| {
            let (mesh, n) = Mesh::from_scene(u);
            notes.extend(n);
            if mesh.triangles.is_empty() {
                notes.push("/scene/terrain has no triangle to draw".into());
                None
            } else {
                Some(mesh)
            }
        });
        MapData {
            tracks,
            terrain,
            notes,
        }
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty() && self.terrain.is_none()
    }
}

/// Where the world is on a map's pixels: `w`×`h` pixels of `m_per_px` metres, the top-left
/// corner at (`x0`, `y1`). Pixel (i, j) covers x0 + [i, i+1)·m_per_px east and
/// y1 − [j, j+1)·m_per_px north.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapFrame {
    pub x0: f64,
    pub y1: f64,
    pub m_per_px: f64,
    pub w: u32,
    pub h: u32,
}

impl MapFrame {
    /// The frame of `w`×`h` pixels showing `b` ([west, east, south, north]) whole, centred, at
    /// one scale both ways; then moved, where the pixels show more than `b` along an axis, to
    /// stay inside `within` along it as far as it can.
    pub fn fit(b: [f64; 4], within: Option<[f64; 4]>, w: u32, h: u32) -> MapFrame {
        let (w, h) = (w.max(1), h.max(1));
        let span = |lo: f64, hi: f64| (hi - lo).max(1e-6);
        let m = (span(b[0], b[1]) / f64::from(w)).max(span(b[2], b[3]) / f64::from(h));
        let (ww, hh) = (m * f64::from(w), m * f64::from(h));
        let mut x0 = 0.5 * (b[0] + b[1]) - 0.5 * ww;
        let mut y0 = 0.5 * (b[2] + b[3]) - 0.5 * hh;
        if let Some(t) = within {
            x0 = inside(x0, ww, t[0], t[1]);
            y0 = inside(y0, hh, t[2], t[3]);
        }
        MapFrame {
            x0,
            y1: y0 + hh,
            m_per_px: m,
            w,
            h,
        }
    }

    pub fn x1(&self) -> f64 {
        self.x0 + self.m_per_px * f64::from(self.w)
    }

    pub fn y0(&self) -> f64 {
        self.y1 - self.m_per_px * f64::from(self.h)
    }

    /// (x, y) in pixels from the top-left corner (pixel (i, j) spans [i, i+1) × [j, j+1)).
    pub fn pixel(&self, x: f64, y: f64) -> (f64, f64) {
        ((x - self.x0) / self.m_per_px, (self.y1 - y) / self.m_per_px)
    }

    /// The same ground on `w`×`h` pixels (of the same shape).
    pub fn scaled(&self, w: u32, h: u32) -> MapFrame {
        MapFrame {
            m_per_px: self.m_per_px * f64::from(self.w) / f64::from(w.max(1)),
            w: w.max(1),
            h: h.max(1),
            ..*self
        }
    }
}

/// The start of the span [lo0, lo0 + len), moved to lie inside [a, b] where it fits there
/// (kept where it does not).
fn inside(lo0: f64, len: f64, a: f64, b: f64) -> f64 {
    if len >= b - a {
        // Wider than the terrain: keep what was asked for.
        return lo0;
    }
    lo0.clamp(a, b - len)
}

/// The ground a map shows: the tracks with a margin (the terrain's bounds without tracks).
pub(super) fn ground(d: &MapData) -> Option<[f64; 4]> {
    let tracks = bounds(
        d.tracks
            .iter()
            .flat_map(|t| t.points.iter().map(|p| (p.x, p.y))),
    );
    let terrain = d.terrain.as_ref().and_then(Mesh::bounds);
    let b = match (tracks, terrain) {
        (Some(b), _) => {
            let pad = 0.08 * (b[1] - b[0]).max(b[3] - b[2]) + 10.0;
            let grow = |lo: f64, hi: f64| {
                let extra = (50.0 - (hi - lo)).max(0.0) / 2.0;
                (lo - pad - extra, hi + pad + extra)
            };
            let (w, e) = grow(b[0], b[1]);
            let (s, n) = grow(b[2], b[3]);
            [w, e, s, n]
        }
        (None, Some(t)) => t,
        (None, None) => return None,
    };
    Some(b)
}
