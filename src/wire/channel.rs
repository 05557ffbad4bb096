//! A window's ChannelData: decoded into flat buffers, checked once against the scenario's
//! vehicles, then read without checks.
//!
//! [`Channel`] holds a ChannelData as flat arrays (poses, per-path spans, hop points, arrivals)
//! that are reused from window to window: decoding one allocates nothing per path, where the
//! generated message type allocates three vectors for each of the n(n−1)/2 paths. It decodes
//! with prost's own wire primitives, so it accepts exactly what the generated decoder does
//! (`fuzz/fuzz_targets/channel_data.rs` holds the two to the same result), and encodes the
//! bytes the generated encoder would.
//!
//! The physics coordinator checks every window's ChannelData as it arrives
//! ([`ChannelView::check`]) and hands the view to everything that reads it on its side: the
//! timeline, the ROS 2 layer, the vehicle bridges, the emulated modems. A ChannelData that does
//! not describe the scenario's vehicles ends the run with a protocol error naming the physics
//! simulator, the window and what is wrong. The embedded network simulator, which may run in
//! another process, checks the ChannelData of each BEGIN the same way. The model reads
//! distances, LOS flags and hop losses from a view only, through
//! `model::link::ChannelGeometry`.
//!
//! A valid ChannelData for `n` vehicles has:
//! - `node_list`: exactly `7 n` values, `x, y, z, qw, qx, qy, qz` per vehicle;
//! - per `PathDetails`: `ids` = `[a, b]` with `a < b < n`, `num_hops` = one value `h`, and
//!   `hop_points` = exactly `4 h` values (`x, y, z, loss_db` per point);
//! - per `PathDetails` with `traced`: `arrivals` = `8 m` values, `m` ≤
//!   [`MAX_ARRIVALS_PER_PATH`], each an [`Arrival`] (finite; delay, amplitude and path length
//!   ≥ 0; bounce counts whole numbers in `[0, 1e6]`); without `traced`, no arrivals.

use crate::wire::proto::{ChannelData, PathDetails};
use prost::bytes::Buf;
use prost::bytes::Bytes;
use prost::encoding::{
    self, check_wire_type, decode_key, encoded_len_varint, merge_loop, skip_field, DecodeContext,
    WireType,
};
use std::ops::Range;

/// Most arrivals one path may list (the beam tracer keeps the strongest ones).
pub const MAX_ARRIVALS_PER_PATH: usize = 256;

/// Largest bounce count an arrival may carry.
const MAX_BOUNCES: f64 = 1e6;

/// One acoustic path from a pair's source to its receiver, as BELLHOP writes an arrivals file
/// (`PathDetails.arrivals`, 8 doubles each in this field order).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct Arrival {
    /// Travel time (s).
    pub delay_s: f64,
    /// Pressure relative to the source's at 1 m: spreading and boundary losses, without volume
    /// absorption.
    pub amplitude: f64,
    /// Phase (rad).
    pub phase_rad: f64,
    /// Launch angle at the source, from the horizontal, positive down (degrees).
    pub launch_deg: f64,
    /// Angle at the receiver, from the horizontal, positive down (degrees).
    pub arrival_deg: f64,
    /// Length along the ray (m), for the receiver's absorption at its own frequency.
    pub path_m: f64,
    pub surface_bounces: u32,
    pub bottom_bounces: u32,
}

impl Arrival {
    /// Values per arrival in `PathDetails.arrivals`.
    pub const VALUES: usize = 8;

    /// The arrival's 8 wire values.
    pub fn values(&self) -> [f64; 8] {
        [
            self.delay_s,
            self.amplitude,
            self.phase_rad,
            self.launch_deg,
            self.arrival_deg,
            self.path_m,
            f64::from(self.surface_bounces),
            f64::from(self.bottom_bounces),
        ]
    }

    /// The arrival from 8 wire values (checked by [`check_arrivals`]).
    pub fn from_values(v: &[f64; 8]) -> Arrival {
        Arrival {
            delay_s: v[0],
            amplitude: v[1],
            phase_rad: v[2],
            launch_deg: v[3],
            arrival_deg: v[4],
            path_m: v[5],
            surface_bounces: v[6] as u32,
            bottom_bounces: v[7] as u32,
        }
    }
}

/// Names of an arrival's wire values, in order.
const ARRIVAL_FIELDS: [&str; 8] = [
    "delay_s",
    "amplitude",
    "phase_rad",
    "launch_deg",
    "arrival_deg",
    "path_m",
    "surface_bounces",
    "bottom_bounces",
];

/// Why a path's `arrivals` values are not a list of arrivals.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArrivalsError {
    #[error("{values} arrivals values but traced is false; only a traced path lists arrivals")]
    NotTraced { values: usize },
    #[error("{values} arrivals values; expected 8 per arrival")]
    Count { values: usize },
    #[error("{arrivals} arrivals; at most {MAX_ARRIVALS_PER_PATH} per path")]
    TooMany { arrivals: usize },
    #[error("arrivals[{arrival}].{field} = {value}: {expected}")]
    Value {
        arrival: usize,
        field: &'static str,
        value: f64,
        expected: &'static str,
    },
}

/// Checks a path's `arrivals` values (see the module docs).
pub fn check_arrivals(traced: bool, values: &[f64]) -> Result<(), ArrivalsError> {
    if !traced && !values.is_empty() {
        return Err(ArrivalsError::NotTraced {
            values: values.len(),
        });
    }
    if values.len() % Arrival::VALUES != 0 {
        return Err(ArrivalsError::Count {
            values: values.len(),
        });
    }
    let arrivals = values.len() / Arrival::VALUES;
    if arrivals > MAX_ARRIVALS_PER_PATH {
        return Err(ArrivalsError::TooMany { arrivals });
    }
    for (arrival, a) in values.chunks_exact(Arrival::VALUES).enumerate() {
        for (k, &value) in a.iter().enumerate() {
            let expected = if !value.is_finite() {
                Some("expected a finite value")
            } else if matches!(k, 0 | 1 | 5) && value < 0.0 {
                Some("expected a value ≥ 0")
            } else if k >= 6 && (value.fract() != 0.0 || !(0.0..=MAX_BOUNCES).contains(&value)) {
                Some("expected a whole number of bounces in [0, 1e6]")
            } else {
                None
            };
            if let Some(expected) = expected {
                return Err(ArrivalsError::Value {
                    arrival,
                    field: ARRIVAL_FIELDS[k],
                    value,
                    expected,
                });
            }
        }
    }
    Ok(())
}

/// A ChannelData in flat buffers (see the module docs): what [`ChannelView::check`] checks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Channel {
    nodes: Vec<f64>,
    paths: Vec<PathSpans>,
    ids: Vec<u32>,
    num_hops: Vec<u32>,
    points: Vec<f64>,
    arrivals: Vec<f64>,
}

/// Where one `PathDetails` lies in the flat buffers.
#[derive(Debug, Clone, PartialEq)]
struct PathSpans {
    los: bool,
    ids: Range<usize>,
    num_hops: Range<usize>,
    points: Range<usize>,
    traced: bool,
    arrivals: Range<usize>,
}

/// A ChannelData's bytes and their decoding.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    pub bytes: Bytes,
    pub channel: Channel,
}

/// The field a decode is in, named only if it fails.
#[derive(Clone, Copy)]
enum Field {
    None,
    NodeList,
    Path(usize),
}

/// Why bytes are not a ChannelData: where, in which field, and prost's reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("byte {at} of {len}{}: {reason}", .field.as_deref().map(|f| format!(" ({f})")).unwrap_or_default())]
pub struct ChannelDecodeError {
    /// Offset of the first byte not consumed when decoding failed.
    pub at: usize,
    pub len: usize,
    /// The field being read (`path_details[3].hop_points`), if any.
    pub field: Option<String>,
    pub reason: String,
}

impl Channel {
    /// Decodes `bytes`, a serialized ChannelData.
    pub fn decode(bytes: &[u8]) -> Result<Channel, ChannelDecodeError> {
        let mut c = Channel::default();
        c.decode_from(bytes)?;
        Ok(c)
    }

    /// Decodes `bytes` into this channel, reusing its buffers (on error it holds no paths).
    pub fn decode_from(&mut self, bytes: &[u8]) -> Result<(), ChannelDecodeError> {
        self.reset();
        let mut buf = bytes;
        let mut field = Field::None;
        let result = self.merge(&mut buf, &mut field);
        result.map_err(|e| {
            self.reset();
            ChannelDecodeError {
                at: bytes.len() - buf.remaining(),
                len: bytes.len(),
                field: match field {
                    Field::None => None,
                    Field::NodeList => Some("node_list".into()),
                    Field::Path(i) => Some(format!("path_details[{i}]")),
                },
                reason: e.to_string(),
            }
        })
    }

    /// Starts a channel in place: no poses, no paths (buffers kept).
    pub fn reset(&mut self) {
        self.nodes.clear();
        self.paths.clear();
        self.ids.clear();
        self.num_hops.clear();
        self.points.clear();
        self.arrivals.clear();
    }

    /// The generated `ChannelData::merge`, field for field, into the flat buffers.
    fn merge(&mut self, buf: &mut &[u8], field: &mut Field) -> Result<(), prost::DecodeError> {
        let ctx = DecodeContext::default();
        while buf.has_remaining() {
            let (tag, wire_type) = decode_key(buf)?;
            match tag {
                1 => {
                    *field = Field::NodeList;
                    merge_doubles(wire_type, &mut self.nodes, buf, ctx.clone())?;
                }
                2 => {
                    *field = Field::Path(self.paths.len());
                    check_wire_type(WireType::LengthDelimited, wire_type)?;
                    let mut path = PathSpans {
                        los: false,
                        ids: self.ids.len()..self.ids.len(),
                        num_hops: self.num_hops.len()..self.num_hops.len(),
                        points: self.points.len()..self.points.len(),
                        traced: false,
                        arrivals: self.arrivals.len()..self.arrivals.len(),
                    };
                    merge_loop(self, buf, ctx.clone(), |c, buf, ctx| {
                        let (tag, wire_type) = decode_key(buf)?;
                        match tag {
                            1 => merge_uint32s(wire_type, &mut c.ids, buf, ctx),
                            2 => encoding::bool::merge(wire_type, &mut path.los, buf, ctx),
                            3 => merge_uint32s(wire_type, &mut c.num_hops, buf, ctx),
                            4 => merge_doubles(wire_type, &mut c.points, buf, ctx),
                            5 => encoding::bool::merge(wire_type, &mut path.traced, buf, ctx),
                            6 => merge_doubles(wire_type, &mut c.arrivals, buf, ctx),
                            _ => skip_field(wire_type, tag, buf, ctx),
                        }
                    })?;
                    path.ids.end = self.ids.len();
                    path.num_hops.end = self.num_hops.len();
                    path.points.end = self.points.len();
                    path.arrivals.end = self.arrivals.len();
                    self.paths.push(path);
                }
                _ => {
                    *field = Field::None;
                    skip_field(wire_type, tag, buf, ctx.clone())?;
                }
            }
        }
        *field = Field::None;
        Ok(())
    }

    /// Serializes the channel: the bytes the generated encoder writes for [`Self::to_message`]
    /// (repeated scalars packed, empty ones and a false `los` or `traced` left out), in one pass with the
    /// length of everything known up front (every key of ChannelData is one byte).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        put_doubles(out, 0x0a, &self.nodes);
        for p in &self.paths {
            out.push(0x12);
            put_varint(out, self.path_len(p) as u64);
            put_uint32s(out, 0x0a, &self.ids[p.ids.clone()]);
            if p.los {
                out.extend_from_slice(&[0x10, 1]);
            }
            put_uint32s(out, 0x1a, &self.num_hops[p.num_hops.clone()]);
            put_doubles(out, 0x22, &self.points[p.points.clone()]);
            if p.traced {
                out.extend_from_slice(&[0x28, 1]);
            }
            put_doubles(out, 0x32, &self.arrivals[p.arrivals.clone()]);
        }
    }

    pub fn encode_to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// The encoded length of a path's body.
    fn path_len(&self, p: &PathSpans) -> usize {
        uint32s_len(&self.ids[p.ids.clone()])
            + if p.los { 2 } else { 0 }
            + uint32s_len(&self.num_hops[p.num_hops.clone()])
            + doubles_len(p.points.len())
            + if p.traced { 2 } else { 0 }
            + doubles_len(p.arrivals.len())
    }

    fn encoded_len(&self) -> usize {
        doubles_len(self.nodes.len())
            + self
                .paths
                .iter()
                .map(|p| {
                    let len = self.path_len(p);
                    1 + encoded_len_varint(len as u64) + len
                })
                .sum::<usize>()
    }

    /// Adds a vehicle's pose `x, y, z, qw, qx, qy, qz`.
    pub fn push_node(&mut self, pose: [f64; 7]) {
        self.nodes.extend_from_slice(&pose);
    }

    /// Adds the path between vehicles `a` and `b` with its hop points (`x, y, z, loss_db`),
    /// not traced.
    pub fn push_path(
        &mut self,
        a: u32,
        b: u32,
        los: bool,
        hops: impl IntoIterator<Item = [f64; 4]>,
    ) {
        self.push_traced_path(a, b, los, hops, None);
    }

    /// Adds the path between vehicles `a` and `b` with its hop points (`x, y, z, loss_db`) and,
    /// when the beam tracer traced the pair, its arrivals (`Some(&[])`: a shadow zone).
    pub fn push_traced_path(
        &mut self,
        a: u32,
        b: u32,
        los: bool,
        hops: impl IntoIterator<Item = [f64; 4]>,
        arrivals: Option<&[Arrival]>,
    ) {
        let ids = self.ids.len()..self.ids.len() + 2;
        self.ids.extend_from_slice(&[a, b]);
        let start = self.points.len();
        for h in hops {
            self.points.extend_from_slice(&h);
        }
        self.num_hops.push(((self.points.len() - start) / 4) as u32);
        let first = self.arrivals.len();
        for x in arrivals.unwrap_or_default() {
            self.arrivals.extend_from_slice(&x.values());
        }
        self.paths.push(PathSpans {
            los,
            ids,
            num_hops: self.num_hops.len() - 1..self.num_hops.len(),
            points: start..self.points.len(),
            traced: arrivals.is_some(),
            arrivals: first..self.arrivals.len(),
        });
    }

    /// No poses and no paths (a coordinator without a physics side sends this).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.paths.is_empty()
    }

    /// The generated message with the same content.
    pub fn to_message(&self) -> ChannelData {
        ChannelData {
            node_list: self.nodes.clone(),
            path_details: self
                .paths
                .iter()
                .map(|p| PathDetails {
                    ids: self.ids[p.ids.clone()].to_vec(),
                    los: p.los,
                    num_hops: self.num_hops[p.num_hops.clone()].to_vec(),
                    hop_points: self.points[p.points.clone()].to_vec(),
                    traced: p.traced,
                    arrivals: self.arrivals[p.arrivals.clone()].to_vec(),
                })
                .collect(),
        }
    }
}

/// prost's `double::merge_repeated`, a packed run read in one pass (the bulk of a ChannelData
/// is its hop points): the same values, and an error for the same inputs (a packed length that
/// is not a whole number of doubles, or runs past the end).
fn merge_doubles(
    wire_type: WireType,
    values: &mut Vec<f64>,
    buf: &mut &[u8],
    ctx: DecodeContext,
) -> Result<(), prost::DecodeError> {
    let start = *buf;
    if wire_type != WireType::LengthDelimited {
        return encoding::double::merge_repeated(wire_type, values, buf, ctx);
    }
    let len = encoding::decode_varint(buf)?;
    if len > buf.len() as u64 || len % 8 != 0 {
        // Not a whole run of doubles: prost's own reading says why.
        *buf = start;
        return encoding::double::merge_repeated(wire_type, values, buf, ctx);
    }
    let (run, rest) = buf.split_at(len as usize);
    values.extend(
        run.chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
    );
    *buf = rest;
    Ok(())
}

/// prost's `uint32::merge_repeated`, a packed run read in one pass: the same values (each
/// varint truncated to 32 bits), and an error for the same inputs.
fn merge_uint32s(
    wire_type: WireType,
    values: &mut Vec<u32>,
    buf: &mut &[u8],
    ctx: DecodeContext,
) -> Result<(), prost::DecodeError> {
    let start = *buf;
    if wire_type != WireType::LengthDelimited {
        return encoding::uint32::merge_repeated(wire_type, values, buf, ctx);
    }
    let len = encoding::decode_varint(buf)?;
    if len <= buf.len() as u64 {
        let (mut run, rest) = buf.split_at(len as usize);
        let before = values.len();
        while !run.is_empty() {
            match encoding::decode_varint(&mut run) {
                Ok(v) => values.push(v as u32),
                Err(_) => break,
            }
        }
        if run.is_empty() {
            *buf = rest;
            return Ok(());
        }
        values.truncate(before);
    }
    // A run that does not hold whole varints: prost's own reading says why.
    *buf = start;
    encoding::uint32::merge_repeated(wire_type, values, buf, ctx)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A packed run of doubles under the one-byte `key` (none if empty), as prost writes it.
fn put_doubles(out: &mut Vec<u8>, key: u8, values: &[f64]) {
    if values.is_empty() {
        return;
    }
    out.push(key);
    put_varint(out, 8 * values.len() as u64);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn doubles_len(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 + encoded_len_varint(8 * n as u64) + 8 * n
    }
}

/// A packed run of uint32 varints under the one-byte `key` (none if empty), as prost writes it.
fn put_uint32s(out: &mut Vec<u8>, key: u8, values: &[u32]) {
    if values.is_empty() {
        return;
    }
    out.push(key);
    let len: usize = values
        .iter()
        .map(|&v| encoded_len_varint(u64::from(v)))
        .sum();
    put_varint(out, len as u64);
    for &v in values {
        put_varint(out, u64::from(v));
    }
}

fn uint32s_len(values: &[u32]) -> usize {
    if values.is_empty() {
        return 0;
    }
    let len: usize = values
        .iter()
        .map(|&v| encoded_len_varint(u64::from(v)))
        .sum();
    1 + encoded_len_varint(len as u64) + len
}

/// Appends `x` to `v` and returns where it lies.
fn span<T: Copy>(v: &mut Vec<T>, x: &[T]) -> Range<usize> {
    let r = v.len()..v.len() + x.len();
    v.extend_from_slice(x);
    r
}

impl From<&ChannelData> for Channel {
    fn from(m: &ChannelData) -> Channel {
        let mut c = Channel {
            nodes: m.node_list.clone(),
            ..Channel::default()
        };
        for p in &m.path_details {
            let path = PathSpans {
                los: p.los,
                ids: span(&mut c.ids, &p.ids),
                num_hops: span(&mut c.num_hops, &p.num_hops),
                points: span(&mut c.points, &p.hop_points),
                traced: p.traced,
                arrivals: span(&mut c.arrivals, &p.arrivals),
            };
            c.paths.push(path);
        }
        c
    }
}

/// Why a ChannelData does not describe the vehicles.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChannelError {
    #[error("node_list has {values} values; expected 7 per vehicle for {vehicles} vehicles")]
    NodeList { values: usize, vehicles: usize },
    #[error("path_details[{index}]: ids {ids:?}: expected two vehicle indices a < b < {vehicles}")]
    Ids {
        index: usize,
        ids: Vec<u32>,
        vehicles: usize,
    },
    #[error("path_details[{index}] ([{a}, {b}]): num_hops {num_hops:?}: expected one value")]
    NumHops {
        index: usize,
        a: u32,
        b: u32,
        num_hops: Vec<u32>,
    },
    #[error(
        "path_details[{index}] ([{a}, {b}]): {values} hop_points values for {hops} hops; \
         expected 4 per hop"
    )]
    HopPoints {
        index: usize,
        a: u32,
        b: u32,
        hops: u32,
        values: usize,
    },
    #[error("path_details[{index}] ([{a}, {b}]): {error}")]
    Arrivals {
        index: usize,
        a: u32,
        b: u32,
        error: ArrivalsError,
    },
}

/// A checked ChannelData (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct ChannelView<'a> {
    data: &'a Channel,
}

/// One checked path: the pair `a < b`, LOS, its hop points and, if traced, its arrivals.
#[derive(Debug, Clone, Copy)]
pub struct PathView<'a> {
    pub a: usize,
    pub b: usize,
    pub los: bool,
    hop_points: &'a [f64],
    traced: bool,
    arrivals: &'a [f64],
}

impl<'a> ChannelView<'a> {
    /// Checks `data` against `vehicles` vehicles.
    pub fn check(data: &'a Channel, vehicles: usize) -> Result<ChannelView<'a>, ChannelError> {
        if data.nodes.len() != 7 * vehicles {
            return Err(ChannelError::NodeList {
                values: data.nodes.len(),
                vehicles,
            });
        }
        for (index, p) in data.paths.iter().enumerate() {
            let ids = &data.ids[p.ids.clone()];
            let &[a, b] = ids else {
                return Err(ChannelError::Ids {
                    index,
                    ids: ids.to_vec(),
                    vehicles,
                });
            };
            if a >= b || b as usize >= vehicles {
                return Err(ChannelError::Ids {
                    index,
                    ids: ids.to_vec(),
                    vehicles,
                });
            }
            let num_hops = &data.num_hops[p.num_hops.clone()];
            let &[hops] = num_hops else {
                return Err(ChannelError::NumHops {
                    index,
                    a,
                    b,
                    num_hops: num_hops.to_vec(),
                });
            };
            if p.points.len() as u64 != 4 * u64::from(hops) {
                return Err(ChannelError::HopPoints {
                    index,
                    a,
                    b,
                    hops,
                    values: p.points.len(),
                });
            }
            check_arrivals(p.traced, &data.arrivals[p.arrivals.clone()])
                .map_err(|error| ChannelError::Arrivals { index, a, b, error })?;
        }
        Ok(ChannelView { data })
    }

    /// The channel itself.
    pub fn data(&self) -> &'a Channel {
        self.data
    }

    /// Number of vehicles.
    pub fn vehicles(&self) -> usize {
        self.data.nodes.len() / 7
    }

    /// Vehicle `i`'s `x, y, z, qw, qx, qy, qz` (`None` past the last vehicle).
    pub fn pose(&self, i: usize) -> Option<[f64; 7]> {
        self.data
            .nodes
            .get(7 * i..7 * i + 7)
            .map(|c| c.try_into().expect("a slice of 7"))
    }

    /// Vehicle `i`'s position (`i` must be a vehicle index).
    pub fn position(&self, i: usize) -> [f64; 3] {
        let c = &self.data.nodes[7 * i..7 * i + 3];
        [c[0], c[1], c[2]]
    }

    /// Straight-line distance between vehicles `a` and `b` (metres).
    pub fn distance_m(&self, a: usize, b: usize) -> f64 {
        let (p, q) = (self.position(a), self.position(b));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    }

    /// The paths, in message order.
    pub fn paths(&self) -> impl Iterator<Item = PathView<'a>> + 'a {
        let data = self.data;
        data.paths.iter().map(move |p| PathView {
            a: data.ids[p.ids.start] as usize,
            b: data.ids[p.ids.start + 1] as usize,
            los: p.los,
            hop_points: &data.points[p.points.clone()],
            traced: p.traced,
            arrivals: &data.arrivals[p.arrivals.clone()],
        })
    }
}

impl<'a> PathView<'a> {
    /// Number of hop points (A, entries and exits, B).
    pub fn hops(&self) -> u32 {
        (self.hop_points.len() / 4) as u32
    }

    /// The hop points, `x, y, z, loss_db` each, one after the other.
    pub fn hop_values(&self) -> &'a [f64] {
        self.hop_points
    }

    /// The hop points, `[x, y, z, loss_db]` each.
    pub fn points(&self) -> Vec<[f64; 4]> {
        self.hop_points
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect()
    }

    /// Each hop's loss (dB), in order.
    pub fn losses_db(&self) -> impl Iterator<Item = f64> + '_ {
        self.hop_points.chunks_exact(4).map(|c| c[3])
    }

    /// Sum of the hops' losses (dB).
    pub fn loss_db(&self) -> f64 {
        self.hop_points.chunks_exact(4).map(|c| c[3]).sum()
    }

    /// Whether the beam tracer traced the pair (its arrivals then describe it; none: a shadow
    /// zone).
    pub fn traced(&self) -> bool {
        self.traced
    }

    /// The arrivals' wire values, 8 each (empty unless traced).
    pub fn arrival_values(&self) -> &'a [f64] {
        self.arrivals
    }

    /// The arrivals, in message order (none unless traced).
    pub fn arrivals(&self) -> impl Iterator<Item = Arrival> + 'a {
        self.arrivals
            .chunks_exact(Arrival::VALUES)
            .map(|c| Arrival::from_values(c.try_into().expect("8 values")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(ids: &[u32], num_hops: &[u32], points: usize) -> PathDetails {
        PathDetails {
            ids: ids.to_vec(),
            los: false,
            num_hops: num_hops.to_vec(),
            hop_points: vec![1.0; points],
            ..PathDetails::default()
        }
    }

    fn message(paths: Vec<PathDetails>) -> ChannelData {
        let mut node_list = vec![0.0; 21];
        node_list[7..10].copy_from_slice(&[3.0, 4.0, 0.0]);
        ChannelData {
            node_list,
            path_details: paths,
        }
    }

    fn channel(paths: Vec<PathDetails>) -> Channel {
        Channel::from(&message(paths))
    }

    #[test]
    fn decoding_and_encoding_agree_with_the_generated_message() {
        use prost::Message;
        let mut p = path(&[0, 1], &[2], 8);
        p.los = true;
        p.hop_points[3] = -0.0;
        let m = message(vec![p, path(&[1, 2], &[3], 12), path(&[], &[], 0)]);
        let bytes = m.encode_to_vec();
        let c = Channel::decode(&bytes).unwrap();
        assert_eq!(c, Channel::from(&m));
        assert_eq!(c.to_message(), m);
        assert_eq!(c.encode_to_vec(), bytes);
        // Decoding into a used channel replaces what it held.
        let mut reused = Channel::decode(&message(vec![]).encode_to_vec()).unwrap();
        reused.decode_from(&bytes).unwrap();
        assert_eq!(reused, c);
        assert_eq!(Channel::decode(&[]).unwrap(), Channel::default());
    }

    #[test]
    fn unpacked_repeats_unknown_fields_and_split_fields_decode_as_the_generated_decoder_does() {
        use prost::encoding::{self, encode_key, encode_varint, WireType};
        use prost::Message;
        // node_list unpacked, a path whose ids come unpacked and in two parts around an
        // unknown field, los given twice (the last wins), then an unknown top-level field.
        let mut inner = Vec::new();
        encoding::uint32::encode(1, &0, &mut inner);
        encoding::string::encode(9, &"x".to_string(), &mut inner);
        encoding::bool::encode(2, &true, &mut inner);
        encoding::uint32::encode(1, &2, &mut inner);
        encoding::bool::encode(2, &false, &mut inner);
        encoding::uint32::encode_packed(3, &[1], &mut inner);
        encoding::double::encode_repeated(4, &[1.0, 2.0, 3.0, 4.0], &mut inner);
        let mut bytes = Vec::new();
        encoding::double::encode_repeated(1, &[0.5; 14], &mut bytes);
        encode_key(2, WireType::LengthDelimited, &mut bytes);
        encode_varint(inner.len() as u64, &mut bytes);
        bytes.extend_from_slice(&inner);
        encoding::fixed32::encode(15, &7, &mut bytes);
        let generated = ChannelData::decode(bytes.as_slice()).unwrap();
        let flat = Channel::decode(&bytes).unwrap();
        assert_eq!(flat.to_message(), generated);
        assert_eq!(generated.path_details[0].ids, [0, 2]);
        assert!(!generated.path_details[0].los);
        let v = ChannelView::check(&flat, 2).unwrap_err();
        assert!(matches!(v, ChannelError::Ids { .. }), "{v}");
    }

    #[test]
    fn bad_bytes_name_the_byte_and_the_field() {
        use prost::Message;
        let bytes = message(vec![path(&[0, 1], &[2], 8)]).encode_to_vec();
        let cut = &bytes[..bytes.len() - 3];
        assert!(ChannelData::decode(cut).is_err());
        let e = Channel::decode(cut).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("path_details[0]"));
        assert_eq!(e.len, cut.len());
        assert!(e.to_string().starts_with(&format!("byte ")), "{e}");
        assert!(e.to_string().contains("(path_details[0])"), "{e}");
        // A wrong wire type for node_list (a varint).
        let e = Channel::decode(&[0x08, 0x01]).unwrap_err();
        assert_eq!((e.at, e.field.as_deref()), (1, Some("node_list")));
        assert!(ChannelData::decode([0x08u8, 0x01].as_slice()).is_err());
    }

    #[test]
    fn a_valid_channel_reads_back() {
        let mut p = path(&[0, 1], &[4], 16);
        p.hop_points[7] = 2.5;
        p.hop_points[15] = 0.5;
        let c = channel(vec![p, path(&[1, 2], &[2], 8)]);
        let v = ChannelView::check(&c, 3).unwrap();
        assert_eq!(v.vehicles(), 3);
        assert_eq!(v.distance_m(0, 1), 5.0);
        assert_eq!(v.pose(1).unwrap()[..3], [3.0, 4.0, 0.0]);
        assert_eq!(v.pose(3), None);
        let paths: Vec<_> = v.paths().collect();
        assert_eq!(
            (paths[0].a, paths[0].b, paths[0].hops(), paths[0].loss_db()),
            (0, 1, 4, 2.5 + 0.5 + 2.0)
        );
        assert_eq!(paths[1].points(), vec![[1.0; 4]; 2]);
    }

    #[test]
    fn every_inconsistency_is_named() {
        let bad = |paths: Vec<PathDetails>, vehicles: usize| {
            ChannelView::check(&channel(paths), vehicles).unwrap_err()
        };
        assert_eq!(
            bad(vec![], 2),
            ChannelError::NodeList {
                values: 21,
                vehicles: 2
            }
        );
        assert!(matches!(
            bad(vec![path(&[0], &[2], 8)], 3),
            ChannelError::Ids { index: 0, .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 1], &[2], 8), path(&[1, 1], &[2], 8)], 3),
            ChannelError::Ids { index: 1, .. }
        ));
        assert!(matches!(
            bad(vec![path(&[2, 1], &[2], 8)], 3),
            ChannelError::Ids { .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 3], &[2], 8)], 3),
            ChannelError::Ids { .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 1], &[], 8)], 3),
            ChannelError::NumHops { .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 1], &[2, 2], 8)], 3),
            ChannelError::NumHops { .. }
        ));
        assert_eq!(
            bad(vec![path(&[0, 2], &[2], 7)], 3),
            ChannelError::HopPoints {
                index: 0,
                a: 0,
                b: 2,
                hops: 2,
                values: 7
            }
        );
        assert_eq!(
            bad(vec![path(&[0, 2], &[2], 7)], 3).to_string(),
            "path_details[0] ([0, 2]): 7 hop_points values for 2 hops; expected 4 per hop"
        );
        assert!(matches!(
            bad(vec![path(&[0, 1], &[u32::MAX], 8)], 3),
            ChannelError::HopPoints { .. }
        ));
    }

    fn arrival(delay_s: f64, amplitude: f64) -> Arrival {
        Arrival {
            delay_s,
            amplitude,
            phase_rad: -1.5,
            launch_deg: 12.0,
            arrival_deg: -11.0,
            path_m: 1500.0 * delay_s,
            surface_bounces: 1,
            bottom_bounces: 2,
        }
    }

    #[test]
    fn arrivals_round_trip_through_the_builder_the_bytes_and_the_generated_message() {
        use prost::Message;
        let mut c = Channel::default();
        for _ in 0..3 {
            c.push_node([0.0; 7]);
        }
        let two = [arrival(0.66, 0.001), arrival(0.67, 0.0005)];
        c.push_traced_path(0, 1, true, [[0.0; 4], [1.0; 4]], Some(&two));
        c.push_traced_path(0, 2, false, [[0.0; 4]], Some(&[]));
        c.push_path(1, 2, true, [[0.0; 4]]);
        let bytes = c.encode_to_vec();
        let m = ChannelData::decode(bytes.as_slice()).unwrap();
        assert_eq!(m.encode_to_vec(), bytes, "the generated encoder's bytes");
        assert_eq!(c.to_message(), m);
        assert_eq!(Channel::decode(&bytes).unwrap(), c);
        assert_eq!(Channel::from(&m), c);
        assert!(m.path_details[0].traced && m.path_details[1].traced);
        assert!(!m.path_details[2].traced);
        assert_eq!(m.path_details[0].arrivals.len(), 16);
        let v = ChannelView::check(&c, 3).unwrap();
        let p: Vec<_> = v.paths().collect();
        assert!(p[0].traced() && p[1].traced() && !p[2].traced());
        assert_eq!(p[0].arrivals().collect::<Vec<_>>(), two);
        assert_eq!(p[1].arrivals().count(), 0);
        assert_eq!(p[2].arrival_values(), &[] as &[f64]);
        // Reused buffers hold the arrivals of the last decode only.
        let mut reused = c.clone();
        reused
            .decode_from(&message(vec![]).encode_to_vec())
            .unwrap();
        assert_eq!(reused, Channel::from(&message(vec![])));
    }

    #[test]
    fn bad_arrivals_are_refused_naming_the_path_and_the_value() {
        let traced = |values: Vec<f64>| PathDetails {
            traced: true,
            arrivals: values,
            ..path(&[0, 2], &[1], 4)
        };
        let bad = |p: PathDetails| ChannelView::check(&channel(vec![p]), 3).unwrap_err();
        let good = arrival(0.5, 0.01).values();
        assert_eq!(
            bad(traced(good[..7].to_vec())).to_string(),
            "path_details[0] ([0, 2]): 7 arrivals values; expected 8 per arrival"
        );
        let with = |k: usize, x: f64| {
            let mut v = [good, good].concat();
            v[8 + k] = x;
            bad(traced(v)).to_string()
        };
        assert_eq!(
            with(0, -0.1),
            "path_details[0] ([0, 2]): arrivals[1].delay_s = -0.1: expected a value ≥ 0"
        );
        assert_eq!(
            with(1, -1e-3),
            "path_details[0] ([0, 2]): arrivals[1].amplitude = -0.001: expected a value ≥ 0"
        );
        assert_eq!(
            with(5, -3.0),
            "path_details[0] ([0, 2]): arrivals[1].path_m = -3: expected a value ≥ 0"
        );
        assert_eq!(
            with(2, f64::NAN),
            "path_details[0] ([0, 2]): arrivals[1].phase_rad = NaN: expected a finite value"
        );
        assert_eq!(
            with(3, f64::INFINITY),
            "path_details[0] ([0, 2]): arrivals[1].launch_deg = inf: expected a finite value"
        );
        assert_eq!(
            with(6, 1.5),
            "path_details[0] ([0, 2]): arrivals[1].surface_bounces = 1.5: \
             expected a whole number of bounces in [0, 1e6]"
        );
        assert!(with(7, -1.0).contains("arrivals[1].bottom_bounces = -1: expected a whole"));
        assert!(with(7, 2e6).contains("arrivals[1].bottom_bounces = 2000000: expected a whole"));
        assert_eq!(
            bad(traced(good.repeat(MAX_ARRIVALS_PER_PATH + 1))).to_string(),
            "path_details[0] ([0, 2]): 257 arrivals; at most 256 per path"
        );
        assert!(ChannelView::check(
            &channel(vec![traced(good.repeat(MAX_ARRIVALS_PER_PATH))]),
            3
        )
        .is_ok());
        let untraced = PathDetails {
            traced: false,
            ..traced(good.to_vec())
        };
        assert_eq!(
            bad(untraced).to_string(),
            "path_details[0] ([0, 2]): 8 arrivals values but traced is false; \
             only a traced path lists arrivals"
        );
        assert!(matches!(
            bad(traced(vec![-1.0; 8])),
            ChannelError::Arrivals {
                index: 0,
                a: 0,
                b: 2,
                error: ArrivalsError::Value { arrival: 0, .. }
            }
        ));
    }
}
