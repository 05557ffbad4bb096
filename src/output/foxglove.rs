//! The Foxglove well-known message types the scene topics use ([`super::scene`]), as JSON: the
//! fields and names of the `foxglove.*` schemas (the JSON Schemas of npm `@foxglove/schemas`),
//! so that Foxglove, Lichtblick and other viewers draw them in a 3D panel by their schema name.
//! Only the types the scene needs; every field is always written.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A sim time (`foxglove.Time`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Time {
    pub sec: u32,
    pub nsec: u32,
}

impl Time {
    pub fn from_ns(ns: u64) -> Time {
        Time {
            sec: u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX),
            nsec: (ns % 1_000_000_000) as u32,
        }
    }
}

/// A span of sim time (`foxglove.Duration`); zero means forever where a lifetime is meant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Duration {
    pub sec: i32,
    pub nsec: u32,
}

impl Duration {
    pub fn from_ns(ns: u64) -> Duration {
        Duration {
            sec: i32::try_from(ns / 1_000_000_000).unwrap_or(i32::MAX),
            nsec: (ns % 1_000_000_000) as u32,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl From<[f64; 3]> for Vector3 {
    fn from([x, y, z]: [f64; 3]) -> Vector3 {
        Vector3 { x, y, z }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Quaternion {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    pub w: f64,
}

impl Default for Quaternion {
    fn default() -> Quaternion {
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pose {
    pub position: Vector3,
    pub orientation: Quaternion,
}

impl Pose {
    pub fn at(position: [f64; 3]) -> Pose {
        Pose {
            position: position.into(),
            orientation: Quaternion::default(),
        }
    }
}

/// RGBA, each 0–1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Color {
    pub r: f64,
    pub g: f64,
    pub b: f64,
    pub a: f64,
}

impl Color {
    pub const fn rgba(r: f64, g: f64, b: f64, a: f64) -> Color {
        Color { r, g, b, a }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KeyValuePair {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SpherePrimitive {
    pub pose: Pose,
    pub size: Vector3,
    pub color: Color,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CubePrimitive {
    pub pose: Pose,
    pub size: Vector3,
    pub color: Color,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CylinderPrimitive {
    pub pose: Pose,
    pub size: Vector3,
    pub bottom_scale: f64,
    pub top_scale: f64,
    pub color: Color,
}

/// A 3D model by URL or embedded (`data`, base64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelPrimitive {
    pub pose: Pose,
    pub scale: Vector3,
    pub color: Color,
    pub override_color: bool,
    pub url: String,
    pub media_type: String,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArrowPrimitive {
    pub pose: Pose,
    pub shaft_length: f64,
    pub shaft_diameter: f64,
    pub head_length: f64,
    pub head_diameter: f64,
    pub color: Color,
}

/// `type`: 0 line strip, 1 line loop, 2 line list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LinePrimitive {
    #[serde(rename = "type")]
    pub kind: u8,
    pub pose: Pose,
    pub thickness: f64,
    pub scale_invariant: bool,
    pub points: Vec<Vector3>,
    pub color: Color,
    pub colors: Vec<Color>,
    pub indices: Vec<u32>,
}

/// Triangles of `points` taken three by three, or by `indices` when there are any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TriangleListPrimitive {
    pub pose: Pose,
    pub points: Vec<Vector3>,
    pub color: Color,
    pub colors: Vec<Color>,
    pub indices: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TextPrimitive {
    pub pose: Pose,
    pub billboard: bool,
    pub font_size: f64,
    pub scale_invariant: bool,
    pub color: Color,
    pub text: String,
}

/// Something drawn in the 3D panel (`foxglove.SceneEntity`); an entity replaces the one of the
/// same `id` on the same topic.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SceneEntity {
    pub timestamp: Time,
    pub frame_id: String,
    pub id: String,
    pub lifetime: Duration,
    pub frame_locked: bool,
    pub metadata: Vec<KeyValuePair>,
    pub arrows: Vec<ArrowPrimitive>,
    pub cubes: Vec<CubePrimitive>,
    pub spheres: Vec<SpherePrimitive>,
    pub cylinders: Vec<CylinderPrimitive>,
    pub lines: Vec<LinePrimitive>,
    pub triangles: Vec<TriangleListPrimitive>,
    pub texts: Vec<TextPrimitive>,
    pub models: Vec<ModelPrimitive>,
}

/// `type`: 0 the entity `id`, 1 every entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SceneEntityDeletion {
    pub timestamp: Time,
    #[serde(rename = "type")]
    pub kind: u8,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "foxglove.SceneUpdate")]
pub struct SceneUpdate {
    pub deletions: Vec<SceneEntityDeletion>,
    pub entities: Vec<SceneEntity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FrameTransform {
    pub timestamp: Time,
    pub parent_frame_id: String,
    pub child_frame_id: String,
    pub translation: Vector3,
    pub rotation: Quaternion,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "foxglove.FrameTransforms")]
pub struct FrameTransforms {
    pub transforms: Vec<FrameTransform>,
}

/// `foxglove.Log` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info = 2,
    Warning = 3,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "foxglove.Log")]
pub struct Log {
    pub timestamp: Time,
    pub level: u8,
    pub message: String,
    pub name: String,
    pub file: String,
    pub line: u32,
}
