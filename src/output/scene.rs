//! What the run looks like in a 3D viewer: the scene topics of the run record, in Foxglove's
//! well-known schemas ([`super::foxglove`]), written by the [`Recorder`](super::Recorder) beside
//! its own topics and served live with them:
//! - `/scene/terrain` (once, at 0): the terrain as a triangle mesh coloured by height (blue
//!   below the waterline, sand to brown above), decimated to at most [`MESH_SIDE`] vertices a
//!   side; its entity's metadata states the largest height difference between the mesh and the
//!   surface the raycasts use (`max_height_error_m`);
//! - `/scene/vehicles` (once, at 0): a sphere and a name per vehicle, locked to its frame;
//! - `/tf` (`foxglove.FrameTransforms`): `world` → each vehicle's frame, at every pose sample;
//! - `/scene/links`: each pair's path as a line, green in line of sight, orange behind the
//!   terrain (through the hop points, where the ray enters and leaves it, marked), grey when
//!   neither direction's link is usable (out of range): every pair at each pose sample, and a
//!   pair at the window its state changes;
//! - `/scene/traffic`: at each pose sample, an arrow from sender towards receiver per link that
//!   carried IP packets (blue delivered, red dropped) or modem frames (cyan, magenta) since the
//!   last, living until the next;
//! - `/events` (`foxglove.Log`): LOS↔NLOS changes, links coming into and going out of range,
//!   drops by reason (per pose sample), programs starting and ending.
//!
//! Everything is stamped in sim time; coordinates are the scenario's (x east, y north, z up).

use super::foxglove::*;
use super::record::{RecordError, RecordWriter};
use super::schema::{
    ProgramRecord, TOPIC_EVENTS, TOPIC_LINKS, TOPIC_TERRAIN, TOPIC_TF, TOPIC_TRAFFIC,
    TOPIC_VEHICLES,
};
use crate::config::HeightGrid;
use crate::model::link::pair_index;
use std::collections::BTreeMap;

/// Most vertices a side of the terrain mesh (about 33 000 triangles), what a viewer draws
/// smoothly in a browser.
pub const MESH_SIDE: usize = 128;

/// The layout for Foxglove-compatible viewers shipped with the package (from the crate's root):
/// the 3D scene, the events, the vehicles' heights and the link states.
pub const LAYOUT_FILE: &str = "config/foxglove-layout.json";

/// The frame every position is given in.
pub const WORLD: &str = "world";

const LOS: Color = Color::rgba(0.15, 0.8, 0.3, 1.0);
const NLOS: Color = Color::rgba(1.0, 0.55, 0.0, 1.0);
const OUT_OF_RANGE: Color = Color::rgba(0.55, 0.55, 0.55, 0.35);
const HOP: Color = Color::rgba(0.9, 0.1, 0.1, 1.0);
const IP_DELIVERED: Color = Color::rgba(0.2, 0.4, 1.0, 0.9);
const IP_DROPPED: Color = Color::rgba(0.9, 0.1, 0.1, 0.9);
const MODEM_DELIVERED: Color = Color::rgba(0.0, 0.85, 0.85, 0.9);
const MODEM_DROPPED: Color = Color::rgba(0.85, 0.0, 0.85, 0.9);

/// The vehicles' colours, in turn.
const PALETTE: [Color; 8] = [
    Color::rgba(0.95, 0.3, 0.25, 1.0),
    Color::rgba(0.25, 0.55, 0.95, 1.0),
    Color::rgba(0.95, 0.8, 0.2, 1.0),
    Color::rgba(0.6, 0.35, 0.9, 1.0),
    Color::rgba(0.2, 0.85, 0.75, 1.0),
    Color::rgba(0.95, 0.5, 0.8, 1.0),
    Color::rgba(0.6, 0.85, 0.3, 1.0),
    Color::rgba(0.95, 0.6, 0.3, 1.0),
];

/// A pair's state as drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairState {
    Los,
    Nlos,
    OutOfRange,
}

impl PairState {
    pub fn color(self) -> Color {
        match self {
            PairState::Los => LOS,
            PairState::Nlos => NLOS,
            PairState::OutOfRange => OUT_OF_RANGE,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            PairState::Los => "LOS",
            PairState::Nlos => "NLOS",
            PairState::OutOfRange => "out of range",
        }
    }
}

/// One pair's path in a window: its ends, LOS flag and hop points (`x, y, z, loss_db` each,
/// one after the other).
pub struct PathDraw<'a> {
    pub a: usize,
    pub b: usize,
    pub los: bool,
    pub hops: &'a [f64],
}

/// Packets or frames over one directed link since the last pose sample.
#[derive(Debug, Clone, Copy, Default)]
struct Carried {
    delivered: u32,
    dropped: u32,
}

/// The scene policy (see the module docs): what is drawn, kept between windows.
pub struct Scene {
    names: Vec<String>,
    /// Per vehicle: the last position drawn.
    positions: Vec<[f64; 3]>,
    /// Per pair: LOS flag of the last window, and whether any window had it.
    los: Vec<Option<bool>>,
    /// Per pair: hop points of the last window (NLOS only; `x, y, z, loss_db` each).
    hops: Vec<Vec<f64>>,
    /// Per directed link `src · n + dst`: usable as last reported (true until reported).
    usable: Vec<bool>,
    /// Per pair: the state last drawn.
    drawn: Vec<Option<PairState>>,
    ip: Vec<Carried>,
    modem: Vec<Carried>,
    drops: BTreeMap<String, u64>,
    marker_m: f64,
    /// Until the next pose sample: the traffic marks' lifetime.
    mark_ns: u64,
    /// Pairs whose state changed in this window (reused).
    changed: Vec<usize>,
}

impl Scene {
    /// The scene of `names` (node order) over `terrain`; marks live `mark_ns` (the pose
    /// interval, or W if longer).
    pub fn new(names: Vec<String>, terrain: Option<&HeightGrid>, mark_ns: u64) -> Scene {
        let n = names.len();
        let pairs = n * n.saturating_sub(1) / 2;
        let extent = terrain.map_or(1000.0, |g| {
            let h = g.half_extent();
            2.0 * h[0].max(h[1])
        });
        Scene {
            names,
            positions: vec![[0.0; 3]; n],
            los: vec![None; pairs],
            hops: vec![Vec::new(); pairs],
            usable: vec![true; n * n],
            drawn: vec![None; pairs],
            ip: vec![Carried::default(); n * n],
            modem: vec![Carried::default(); n * n],
            drops: BTreeMap::new(),
            marker_m: (extent / 150.0).max(2.0),
            mark_ns: mark_ns.max(1),
            changed: Vec::new(),
        }
    }

    fn n(&self) -> usize {
        self.names.len()
    }

    /// Writes the terrain and the vehicles' models (at sim time 0).
    pub fn start(
        &mut self,
        terrain: Option<&HeightGrid>,
        out: &mut RecordWriter,
    ) -> Result<u64, RecordError> {
        let mut written = 0;
        if let Some(grid) = terrain {
            written += update(out, TOPIC_TERRAIN, 0, vec![terrain_mesh(grid, MESH_SIDE)])?;
        }
        let entities = self
            .names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let color = PALETTE[i % PALETTE.len()];
                let d = 2.0 * self.marker_m;
                SceneEntity {
                    frame_id: name.clone(),
                    id: format!("vehicle/{name}"),
                    frame_locked: true,
                    spheres: vec![SpherePrimitive {
                        pose: Pose::default(),
                        size: [d, d, d].into(),
                        color,
                    }],
                    texts: vec![TextPrimitive {
                        pose: Pose::at([0.0, 0.0, 2.0 * d]),
                        billboard: true,
                        font_size: 14.0,
                        scale_invariant: true,
                        color: Color::rgba(1.0, 1.0, 1.0, 1.0),
                        text: name.clone(),
                    }],
                    ..Default::default()
                }
            })
            .collect();
        Ok(written + update(out, TOPIC_VEHICLES, 0, entities)?)
    }

    /// A directed link's state as the network simulator reported it (from `t_ns` on).
    pub fn link_state(
        &mut self,
        t_ns: u64,
        src: usize,
        dst: usize,
        usable: bool,
        out: &mut RecordWriter,
    ) -> Result<u64, RecordError> {
        let n = self.n();
        if src >= n || dst >= n || src == dst {
            return Ok(0);
        }
        let slot = &mut self.usable[src * n + dst];
        if *slot == usable {
            return Ok(0);
        }
        *slot = usable;
        let (a, b) = (src.min(dst), src.max(dst));
        let i = pair_index(a, b, n);
        if !self.changed.contains(&i) {
            self.changed.push(i);
        }
        let message = match usable {
            true => format!("{} → {}: in range", self.names[src], self.names[dst]),
            false => format!("{} → {}: out of range", self.names[src], self.names[dst]),
        };
        self.log(t_ns, Level::Info, message, out)
    }

    /// Window `k`'s world at `t_ns`: positions (`x, y, z, qw, qx, qy, qz` per vehicle) and
    /// paths. With `sample`, every vehicle's frame and every pair's line are drawn and the
    /// traffic since the last sample marked; otherwise only pairs whose state changed.
    pub fn window<'a>(
        &mut self,
        t_ns: u64,
        poses: &[[f64; 7]],
        paths: impl Iterator<Item = PathDraw<'a>>,
        sample: bool,
        out: &mut RecordWriter,
    ) -> Result<u64, RecordError> {
        let n = self.n();
        let mut written = 0;
        for (p, pose) in self.positions.iter_mut().zip(poses) {
            *p = [pose[0], pose[1], pose[2]];
        }
        for p in paths {
            if p.b >= n || p.a >= p.b {
                continue;
            }
            let i = pair_index(p.a, p.b, n);
            let before = self.los[i];
            self.los[i] = Some(p.los);
            let flipped = before.is_some_and(|l| l != p.los);
            if flipped && !self.changed.contains(&i) {
                self.changed.push(i);
            }
            // The hop points only where the pair's line is drawn this window.
            if sample || self.changed.contains(&i) {
                self.hops[i].clear();
                if !p.los {
                    self.hops[i].extend_from_slice(p.hops);
                }
            }
            if flipped {
                let message = match p.los {
                    true => format!(
                        "{} – {}: line of sight (LOS)",
                        self.names[p.a], self.names[p.b]
                    ),
                    false => format!(
                        "{} – {}: behind the terrain (NLOS, {} crossings)",
                        self.names[p.a],
                        self.names[p.b],
                        (p.hops.len() / 4).saturating_sub(2)
                    ),
                };
                written += self.log(t_ns, Level::Info, message, out)?;
            }
        }
        if sample {
            let transforms = self
                .names
                .iter()
                .zip(poses)
                .map(|(name, p)| FrameTransform {
                    timestamp: Time::from_ns(t_ns),
                    parent_frame_id: WORLD.into(),
                    child_frame_id: name.clone(),
                    translation: [p[0], p[1], p[2]].into(),
                    rotation: Quaternion {
                        x: p[4],
                        y: p[5],
                        z: p[6],
                        w: p[3],
                    },
                })
                .collect();
            out.write(TOPIC_TF, t_ns, &FrameTransforms { transforms })?;
            written += 1;
        }
        // Every pair at a sample, else those that changed (the list kept for the next window).
        let mut changed = std::mem::take(&mut self.changed);
        let entities: Vec<SceneEntity> = match sample {
            true => (0..self.los.len())
                .filter_map(|i| self.pair_entity(t_ns, i))
                .collect(),
            false => changed
                .iter()
                .filter_map(|&i| self.pair_entity(t_ns, i))
                .collect(),
        };
        changed.clear();
        self.changed = changed;
        written += update(out, TOPIC_LINKS, t_ns, entities)?;
        if sample {
            written += self.traffic(t_ns, out)?;
        }
        Ok(written)
    }

    fn pair_state(&self, i: usize, a: usize, b: usize) -> Option<PairState> {
        let n = self.n();
        if !self.usable[a * n + b] && !self.usable[b * n + a] {
            return Some(PairState::OutOfRange);
        }
        self.los[i].map(|los| match los {
            true => PairState::Los,
            false => PairState::Nlos,
        })
    }

    /// The line of pair `i` (none before any window gave its path).
    fn pair_entity(&mut self, t_ns: u64, i: usize) -> Option<SceneEntity> {
        let (a, b) = pair_of(i, self.n());
        let state = self.pair_state(i, a, b)?;
        self.drawn[i] = Some(state);
        // An NLOS path's hop points run from A through where the ray enters and leaves the
        // terrain to B.
        let hops = &self.hops[i];
        let (points, spheres) = match state == PairState::Nlos && hops.len() >= 8 {
            true => {
                let d = self.marker_m;
                let n_hops = hops.len() / 4;
                let points = hops
                    .chunks_exact(4)
                    .map(|h| [h[0], h[1], h[2]].into())
                    .collect();
                let spheres = hops
                    .chunks_exact(4)
                    .skip(1)
                    .take(n_hops - 2)
                    .map(|h| SpherePrimitive {
                        pose: Pose::at([h[0], h[1], h[2]]),
                        size: [d, d, d].into(),
                        color: HOP,
                    })
                    .collect();
                (points, spheres)
            }
            false => (
                vec![self.positions[a].into(), self.positions[b].into()],
                Vec::new(),
            ),
        };
        Some(SceneEntity {
            timestamp: Time::from_ns(t_ns),
            frame_id: WORLD.into(),
            id: format!("link/{}/{}", self.names[a], self.names[b]),
            metadata: vec![KeyValuePair {
                key: "state".into(),
                value: state.label().into(),
            }],
            lines: vec![LinePrimitive {
                kind: 0,
                pose: Pose::default(),
                thickness: if state == PairState::OutOfRange {
                    1.0
                } else {
                    3.0
                },
                scale_invariant: true,
                points,
                color: state.color(),
                colors: Vec::new(),
                indices: Vec::new(),
            }],
            spheres,
            ..Default::default()
        })
    }

    /// The state each pair was last drawn in (pairs in [`pair_index`] order).
    pub fn drawn(&self) -> &[Option<PairState>] {
        &self.drawn
    }

    /// Counts IP packet copies that ended (`dst` none: to every vehicle, not marked).
    pub fn packet(
        &mut self,
        src: usize,
        dst: Option<usize>,
        delivered: bool,
        reason: Option<&str>,
    ) {
        let n = self.n();
        if let Some(r) = reason {
            match self.drops.get_mut(r) {
                Some(c) => *c += 1,
                None => {
                    self.drops.insert(r.to_string(), 1);
                }
            }
        }
        if let Some(d) = dst.filter(|&d| src < n && d < n) {
            let c = &mut self.ip[src * n + d];
            match delivered {
                true => c.delivered = c.delivered.saturating_add(1),
                false => c.dropped = c.dropped.saturating_add(1),
            }
        }
    }

    /// Counts a modem frame copy between the vehicles named `src` and `dst`.
    pub fn modem_frame(&mut self, src: &str, dst: Option<&str>, delivered: bool) {
        let n = self.n();
        let index = |name: &str| self.names.iter().position(|v| v == name);
        if let (Some(s), Some(d)) = (index(src), dst.and_then(index)) {
            let c = &mut self.modem[s * n + d];
            match delivered {
                true => c.delivered = c.delivered.saturating_add(1),
                false => c.dropped = c.dropped.saturating_add(1),
            }
        }
    }

    /// A program's start and end (`/events`), the end at `end_ns`.
    pub fn program(
        &mut self,
        p: &ProgramRecord,
        end_ns: u64,
        out: &mut RecordWriter,
    ) -> Result<u64, RecordError> {
        let who = match &p.vehicle {
            Some(v) => format!("{} (on {v})", p.name),
            None => p.name.clone(),
        };
        let mut written = 0;
        if let Some(s) = p.started_s {
            let t = (s * 1e9).round().max(0.0) as u64;
            written += self.log(t, Level::Info, format!("{who} started"), out)?;
        }
        let ending = match p.note() {
            Some(note) => format!("{who} ended ({}): {note}", p.exit_text()),
            None => format!("{who} ended ({})", p.exit_text()),
        };
        let level = match p.exit_code == Some(0) && !p.has_note() {
            true => Level::Info,
            false => Level::Warning,
        };
        Ok(written + self.log(end_ns, level, ending, out)?)
    }

    /// The traffic marks and drop counts since the last sample.
    fn traffic(&mut self, t_ns: u64, out: &mut RecordWriter) -> Result<u64, RecordError> {
        let n = self.n();
        let mut entities = Vec::new();
        let kinds: [(&str, bool, Color, Color); 2] = [
            ("ip", false, IP_DELIVERED, IP_DROPPED),
            ("modem", true, MODEM_DELIVERED, MODEM_DROPPED),
        ];
        for (kind, modem, delivered_color, dropped_color) in kinds {
            for s in 0..n {
                for d in 0..n {
                    let slot = if modem { &mut self.modem } else { &mut self.ip };
                    let c = std::mem::take(&mut slot[s * n + d]);
                    for (count, what, color) in [
                        (c.delivered, "delivered", delivered_color),
                        (c.dropped, "dropped", dropped_color),
                    ] {
                        if count == 0 {
                            continue;
                        }
                        entities.push(self.mark(t_ns, kind, what, s, d, count, color));
                    }
                }
            }
        }
        let mut written = update(out, TOPIC_TRAFFIC, t_ns, entities)?;
        for (reason, count) in std::mem::take(&mut self.drops) {
            let message = format!("{count} packet copies dropped: {reason}");
            written += self.log(t_ns, Level::Warning, message, out)?;
        }
        Ok(written)
    }

    #[allow(clippy::too_many_arguments)]
    fn mark(
        &self,
        t_ns: u64,
        kind: &str,
        what: &str,
        s: usize,
        d: usize,
        count: u32,
        color: Color,
    ) -> SceneEntity {
        let (p, q) = (self.positions[s], self.positions[d]);
        let v = [q[0] - p[0], q[1] - p[1], q[2] - p[2]];
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        // The arrow points along +x of its pose: rotate +x onto v.
        let orientation = rotation_from_x(v);
        let shaft = (0.4 * len).max(self.marker_m);
        SceneEntity {
            timestamp: Time::from_ns(t_ns),
            frame_id: WORLD.into(),
            id: format!("{kind}/{what}/{}/{}", self.names[s], self.names[d]),
            lifetime: Duration::from_ns(self.mark_ns),
            metadata: vec![KeyValuePair {
                key: what.into(),
                value: count.to_string(),
            }],
            arrows: vec![ArrowPrimitive {
                pose: Pose {
                    position: p.into(),
                    orientation,
                },
                shaft_length: shaft,
                shaft_diameter: self.marker_m * 0.5,
                head_length: self.marker_m * 2.0,
                head_diameter: self.marker_m * 1.5,
                color,
            }],
            ..Default::default()
        }
    }

    fn log(
        &self,
        t_ns: u64,
        level: Level,
        message: String,
        out: &mut RecordWriter,
    ) -> Result<u64, RecordError> {
        out.write(
            TOPIC_EVENTS,
            t_ns,
            &Log {
                timestamp: Time::from_ns(t_ns),
                level: level as u8,
                message,
                name: "netsim_cosim".into(),
                file: String::new(),
                line: 0,
            },
        )?;
        Ok(1)
    }
}

/// Writes `entities` on `topic` as one `SceneUpdate`, if there are any; the messages written.
fn update(
    out: &mut RecordWriter,
    topic: &'static str,
    t_ns: u64,
    entities: Vec<SceneEntity>,
) -> Result<u64, RecordError> {
    if entities.is_empty() {
        return Ok(0);
    }
    let update = SceneUpdate {
        deletions: Vec::new(),
        entities,
    };
    out.write(topic, t_ns, &update)?;
    Ok(1)
}

/// The pair `(a, b)`, `a < b`, of [`pair_index`] `i` among `n` vehicles.
fn pair_of(i: usize, n: usize) -> (usize, usize) {
    let mut rest = i;
    for a in 0..n {
        let row = n - a - 1;
        if rest < row {
            return (a, a + 1 + rest);
        }
        rest -= row;
    }
    (0, 0)
}

/// The rotation taking +x onto `v` (identity for a zero vector).
fn rotation_from_x(v: [f64; 3]) -> Quaternion {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len <= f64::EPSILON {
        return Quaternion::default();
    }
    let u = [v[0] / len, v[1] / len, v[2] / len];
    // Half-way quaternion between +x and u: axis x × u, w 1 + x·u.
    let (w, x, y, z) = (1.0 + u[0], 0.0, -u[2], u[1]);
    if w <= 1e-9 {
        // Opposite to +x: half a turn about z.
        return Quaternion {
            x: 0.0,
            y: 0.0,
            z: 1.0,
            w: 0.0,
        };
    }
    let norm = (w * w + x * x + y * y + z * z).sqrt();
    Quaternion {
        x: x / norm,
        y: y / norm,
        z: z / norm,
        w: w / norm,
    }
}

/// Sample indices `0, step, 2·step, …` and the last.
fn decimated(len: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..len).step_by(step.max(1)).collect();
    if v.last() != Some(&(len - 1)) {
        v.push(len - 1);
    }
    v
}

/// Rounds to a centimetre (shorter JSON; far below any grid's cell).
fn cm(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The terrain as one triangle-list entity, at most `side` vertices a side, split like the
/// raycast surface (each cell along the diagonal from its north-east to its south-west corner),
/// coloured by height, with `max_height_error_m` in its metadata.
pub fn terrain_mesh(grid: &HeightGrid, side: usize) -> SceneEntity {
    let (cols, rows) = grid.dims();
    let step = cols.max(rows).div_ceil(side.max(2) - 1).max(1);
    let cs = decimated(cols, step);
    let rs = decimated(rows, step);
    let half = grid.half_extent();
    let cell = grid.cell_size();
    let [lo, hi] = {
        let h = grid.heights();
        let lo = h.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = h.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        [lo, hi]
    };
    let mut points = Vec::with_capacity(cs.len() * rs.len());
    let mut colors = Vec::with_capacity(cs.len() * rs.len());
    for &r in &rs {
        for &c in &cs {
            let h = grid.h(r, c);
            points.push(Vector3 {
                x: cm(-half[0] + c as f64 * cell),
                y: cm(half[1] - r as f64 * cell),
                z: cm(h),
            });
            colors.push(height_color(h, lo, hi));
        }
    }
    let w = cs.len() as u32;
    let mut indices = Vec::with_capacity((cs.len() - 1) * (rs.len() - 1) * 6);
    for r in 0..rs.len() as u32 - 1 {
        for c in 0..w - 1 {
            let (nw, ne, sw, se) = (
                r * w + c,
                r * w + c + 1,
                (r + 1) * w + c,
                (r + 1) * w + c + 1,
            );
            // Counter-clockwise seen from above.
            indices.extend_from_slice(&[nw, sw, ne, se, ne, sw]);
        }
    }
    let error = mesh_error(grid, &rs, &cs);
    SceneEntity {
        frame_id: WORLD.into(),
        id: "terrain".into(),
        metadata: vec![
            KeyValuePair {
                key: "grid".into(),
                value: format!("{cols}×{rows} samples, {cell} m cells"),
            },
            KeyValuePair {
                key: "mesh".into(),
                value: format!("{}×{} vertices", cs.len(), rs.len()),
            },
            KeyValuePair {
                key: "max_height_error_m".into(),
                value: format!("{error:.3}"),
            },
        ],
        triangles: vec![TriangleListPrimitive {
            pose: Pose::default(),
            points,
            color: Color::rgba(0.6, 0.6, 0.6, 1.0),
            colors,
            indices,
        }],
        ..Default::default()
    }
}

/// The largest difference, over every grid sample, between its height and the decimated
/// mesh's (rows `rs`, columns `cs`) at the same place, interpolated like the raycast surface.
pub fn mesh_error(grid: &HeightGrid, rs: &[usize], cs: &[usize]) -> f64 {
    let (cols, rows) = grid.dims();
    let coarse = |idx: &[usize], k: usize| {
        let j = idx.partition_point(|&v| v <= k).saturating_sub(1);
        let j = j.min(idx.len().saturating_sub(2));
        let span = (idx[j + 1] - idx[j]) as f64;
        (j, (k - idx[j]) as f64 / span)
    };
    let mut worst: f64 = 0.0;
    for r in 0..rows {
        let (j, v) = coarse(rs, r);
        for c in 0..cols {
            let (i, u) = coarse(cs, c);
            let h = |jj: usize, ii: usize| grid.h(rs[jj], cs[ii]);
            let m = if u + v <= 1.0 {
                let h00 = h(j, i);
                h00 + u * (h(j, i + 1) - h00) + v * (h(j + 1, i) - h00)
            } else {
                let h11 = h(j + 1, i + 1);
                h11 + (1.0 - u) * (h(j + 1, i) - h11) + (1.0 - v) * (h(j, i + 1) - h11)
            };
            worst = worst.max((grid.h(r, c) - m).abs());
        }
    }
    worst
}

/// Stops of a colour ramp: positions from 0 to 1, in order, and their colours (RGB).
pub type Ramp = [(f64, [f64; 3])];

/// The colour of height `h` on ground from `lo` to `hi` (m), with the waterline at 0: along
/// `water` by depth below it (0 at the waterline, 1 at `lo`), along `land` by height above it.
/// The scene's mesh and the report's map are tinted by it, each with its own ramps.
pub fn waterline_tint(h: f64, lo: f64, hi: f64, water: &Ramp, land: &Ramp) -> [f64; 3] {
    let (stops, t) = match h < 0.0 {
        true => (water, h / lo.min(-1e-9)),
        false => (land, h / hi.max(1e-9)),
    };
    let t = t.clamp(0.0, 1.0);
    let k = stops
        .iter()
        .rposition(|s| s.0 <= t)
        .unwrap_or(0)
        .min(stops.len() - 2);
    let ((t0, c0), (t1, c1)) = (stops[k], stops[k + 1]);
    let f = (t - t0) / (t1 - t0);
    [0, 1, 2].map(|i| c0[i] + f * (c1[i] - c0[i]))
}

/// The mesh's colour of height `h`: light to deep blue below the waterline by depth, sand
/// through green to brown above it by height (to 1/1000, for shorter JSON).
fn height_color(h: f64, lo: f64, hi: f64) -> Color {
    const WATER: [(f64, [f64; 3]); 2] = [(0.0, [0.35, 0.6, 0.8]), (1.0, [0.05, 0.15, 0.4])];
    const LAND: [(f64, [f64; 3]); 3] = [
        (0.0, [0.85, 0.8, 0.6]),
        (0.5, [0.4, 0.65, 0.3]),
        (1.0, [0.5, 0.4, 0.3]),
    ];
    let [r, g, b] = waterline_tint(h, lo, hi, &WATER, &LAND).map(|c| (c * 1000.0).round() / 1000.0);
    Color::rgba(r, g, b, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_of_inverts_pair_index() {
        for n in 2..7 {
            for a in 0..n {
                for b in a + 1..n {
                    assert_eq!(pair_of(pair_index(a, b, n), n), (a, b));
                }
            }
        }
    }

    #[test]
    fn an_arrow_points_at_its_receiver() {
        for v in [
            [1.0, 0.0, 0.0],
            [0.0, 3.0, 0.0],
            [-2.0, 0.0, 0.0],
            [1.0, 1.0, -1.0],
        ] {
            let q = rotation_from_x(v);
            // Rotate +x by q: first column of the rotation matrix.
            let x = [
                1.0 - 2.0 * (q.y * q.y + q.z * q.z),
                2.0 * (q.x * q.y + q.w * q.z),
                2.0 * (q.x * q.z - q.w * q.y),
            ];
            let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            for k in 0..3 {
                assert!((x[k] - v[k] / len).abs() < 1e-9, "{v:?} → {x:?}");
            }
        }
    }

    fn grid(cols: usize, rows: usize, f: impl Fn(usize, usize) -> f64) -> HeightGrid {
        let heights = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .map(|(r, c)| f(r, c))
            .collect();
        HeightGrid::new("test", heights, cols, rows, 2.0).unwrap()
    }

    #[test]
    fn an_undecimated_mesh_is_the_raycast_surface() {
        let g = grid(20, 15, |r, c| ((r * 7 + c * 13) % 11) as f64 - 40.0);
        let e = terrain_mesh(&g, 64);
        let t = &e.triangles[0];
        assert_eq!(t.points.len(), 20 * 15);
        assert_eq!(t.indices.len(), 19 * 14 * 6);
        assert_eq!(mesh_error(&g, &decimated(15, 1), &decimated(20, 1)), 0.0);
        // Every vertex lies on the surface the raycasts use.
        for p in &t.points {
            let h = g.height_at(p.x, p.y).unwrap();
            assert!((h - p.z).abs() < 0.006, "{p:?} vs {h}");
        }
        // Counter-clockwise from above: normals point up.
        for tri in t.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|k| t.points[tri[k] as usize]);
            let cross = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
            assert!(cross > 0.0);
        }
    }

    #[test]
    fn a_decimated_mesh_states_its_height_error() {
        // A plane is kept exactly; a bumpy surface is not, and the error says by how much.
        let plane = grid(300, 200, |r, c| 0.5 * r as f64 - 0.25 * c as f64);
        let e = terrain_mesh(&plane, 64);
        assert!(e.triangles[0].points.len() <= 64 * 64);
        let error = |e: &SceneEntity| -> f64 {
            e.metadata
                .iter()
                .find(|m| m.key == "max_height_error_m")
                .unwrap()
                .value
                .parse()
                .unwrap()
        };
        assert!(error(&e) < 1e-6, "{}", error(&e));
        let bumpy = grid(300, 200, |r, c| if (r + c) % 2 == 0 { 1.0 } else { -1.0 });
        let e = terrain_mesh(&bumpy, 64);
        assert_eq!(error(&e), 2.0);
    }

    /// The layout shipped for Foxglove-compatible viewers names panels it configures and
    /// topics the record has.
    #[test]
    fn the_shipped_layout_shows_the_scene_topics() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(LAYOUT_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let layout: serde_json::Value = serde_json::from_str(&text).unwrap();
        let configs = layout["configById"].as_object().unwrap();
        fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::String(s) => out.push(s.clone()),
                v => {
                    leaves(&v["first"], out);
                    leaves(&v["second"], out);
                }
            }
        }
        let mut panels = Vec::new();
        leaves(&layout["layout"], &mut panels);
        panels.sort();
        let mut configured: Vec<String> = configs.keys().cloned().collect();
        configured.sort();
        assert_eq!(panels, configured, "every panel placed and configured");
        let three_d = configs["3D!scene"]["topics"].as_object().unwrap();
        let mut shown: Vec<&str> = three_d.keys().map(String::as_str).collect();
        shown.sort();
        let mut scene = vec![TOPIC_TERRAIN, TOPIC_VEHICLES, TOPIC_LINKS, TOPIC_TRAFFIC];
        scene.sort();
        assert_eq!(shown, scene);
        assert_eq!(configs["RosOut!events"]["topicToRender"], TOPIC_EVENTS);
        let path_topic = configs["Plot!depth"]["paths"][0]["value"].as_str().unwrap();
        assert!(path_topic.starts_with(&format!("{}.", crate::output::schema::TOPIC_POSES)));
        let raw = configs["RawMessages!links"]["topicPath"].as_str().unwrap();
        assert_eq!(raw, crate::output::schema::TOPIC_LINK_STATE);
    }

    /// The record's messages on `topic`, as JSON with their log times.
    fn read(path: &std::path::Path, topic: &str) -> Vec<(u64, serde_json::Value)> {
        let bytes = std::fs::read(path).unwrap();
        mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(|m| m.unwrap())
            .filter(|m| m.channel.topic == topic)
            .map(|m| (m.log_time, serde_json::from_slice(&m.data).unwrap()))
            .collect()
    }

    fn state_of(update: &serde_json::Value, id: &str) -> Option<String> {
        update["entities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .map(|e| e["metadata"][0]["value"].as_str().unwrap().to_string())
    }

    #[test]
    fn links_change_colour_with_their_state_and_traffic_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.mcap");
        let mut w = RecordWriter::create(&path).unwrap();
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mut scene = Scene::new(names, None, 100_000_000);
        scene.start(None, &mut w).unwrap();
        let poses = [
            [0.0, 0.0, -5.0, 1.0, 0.0, 0.0, 0.0],
            [100.0, 0.0, -5.0, 1.0, 0.0, 0.0, 0.0],
            [0.0, 100.0, -5.0, 1.0, 0.0, 0.0, 0.0],
        ];
        let los = |a, b, los, hops: &'static [f64]| PathDraw { a, b, los, hops };
        let clear = [
            los(0, 1, true, &[]),
            los(0, 2, true, &[]),
            los(1, 2, true, &[]),
        ];
        scene
            .window(0, &poses, clear.into_iter(), true, &mut w)
            .unwrap();
        // a–b goes behind the terrain: A, where the ray enters and leaves, B.
        const HOPS: [f64; 16] = [
            0.0, 0.0, -5.0, 0.0, 40.0, 0.0, -5.0, 3.0, 60.0, 0.0, -5.0, 3.0, 100.0, 0.0, -5.0, 0.0,
        ];
        let behind = [
            los(0, 1, false, &HOPS),
            los(0, 2, true, &[]),
            los(1, 2, true, &[]),
        ];
        scene
            .window(10_000_000, &poses, behind.into_iter(), false, &mut w)
            .unwrap();
        // b–c out of range: one direction is not enough, both are.
        scene.link_state(20_000_000, 1, 2, false, &mut w).unwrap();
        let again = || {
            [
                los(0, 1, false, &HOPS),
                los(0, 2, true, &[]),
                los(1, 2, true, &[]),
            ]
        };
        scene
            .window(20_000_000, &poses, again().into_iter(), false, &mut w)
            .unwrap();
        scene.link_state(30_000_000, 2, 1, false, &mut w).unwrap();
        scene
            .window(30_000_000, &poses, again().into_iter(), false, &mut w)
            .unwrap();
        for _ in 0..3 {
            scene.packet(0, Some(1), true, None);
        }
        scene.packet(0, Some(2), false, Some("queue full"));
        scene.modem_frame("c", Some("a"), true);
        scene
            .window(100_000_000, &poses, again().into_iter(), true, &mut w)
            .unwrap();
        w.finish().unwrap();

        let links = read(&path, TOPIC_LINKS);
        let times: Vec<u64> = links.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, [0, 10_000_000, 20_000_000, 30_000_000, 100_000_000]);
        assert_eq!(state_of(&links[0].1, "link/a/b").as_deref(), Some("LOS"));
        assert_eq!(links[0].1["entities"].as_array().unwrap().len(), 3);
        // Only the pair that changed, through its hop points, the crossings marked.
        let nlos = &links[1].1["entities"][0];
        assert_eq!(nlos["id"], "link/a/b");
        assert_eq!(state_of(&links[1].1, "link/a/b").as_deref(), Some("NLOS"));
        assert_eq!(nlos["lines"][0]["points"].as_array().unwrap().len(), 4);
        assert_eq!(nlos["spheres"].as_array().unwrap().len(), 2);
        assert_eq!(nlos["lines"][0]["color"]["r"], 1.0);
        assert_eq!(state_of(&links[2].1, "link/b/c").as_deref(), Some("LOS"));
        assert_eq!(
            state_of(&links[3].1, "link/b/c").as_deref(),
            Some("out of range")
        );
        assert_eq!(
            state_of(&links[4].1, "link/b/c").as_deref(),
            Some("out of range")
        );
        assert_eq!(state_of(&links[4].1, "link/a/b").as_deref(), Some("NLOS"));

        let traffic = read(&path, TOPIC_TRAFFIC);
        assert_eq!(traffic.len(), 1);
        let marks = traffic[0].1["entities"].as_array().unwrap();
        let mark = |id: &str| marks.iter().find(|e| e["id"] == id).cloned();
        assert_eq!(
            mark("ip/delivered/a/b").unwrap()["metadata"][0]["value"],
            "3"
        );
        assert_eq!(mark("ip/dropped/a/c").unwrap()["metadata"][0]["value"], "1");
        assert!(mark("modem/delivered/c/a").is_some());
        assert_eq!(marks.len(), 3);
        assert_eq!(
            mark("ip/delivered/a/b").unwrap()["lifetime"]["nsec"],
            100_000_000
        );

        let events: Vec<String> = read(&path, TOPIC_EVENTS)
            .into_iter()
            .map(|(_, m)| m["message"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            events,
            [
                "a – b: behind the terrain (NLOS, 2 crossings)",
                "b → c: out of range",
                "c → b: out of range",
                "1 packet copies dropped: queue full",
            ]
        );
        let tf = read(&path, TOPIC_TF);
        assert_eq!(tf.len(), 2);
        assert_eq!(tf[0].1["transforms"][1]["translation"]["x"], 100.0);
        assert_eq!(tf[0].1["transforms"][1]["child_frame_id"], "b");
    }
}
