//! The `auv_interface` section's types: the ZeroMQ AUV simulator interface served for the
//! thruster-driven vehicles (sockets, telemetry rate) and its cameras.

use schemars::JsonSchema;
use serde::Deserialize;

/// The ZeroMQ AUV simulator interface: sockets, telemetry rate and cameras.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AuvInterface {
    /// Address the three sockets bind (default 127.0.0.1; `0.0.0.0` for every interface).
    pub bind: String,
    /// Camera images, PUB (default 5555).
    pub images_port: u16,
    /// Thruster commands, PULL (default 5556).
    pub thrusters_port: u16,
    /// Telemetry, PUB (default 5557).
    pub telemetry_port: u16,
    /// Telemetry messages per vehicle per second of sim time (default 20).
    pub telemetry_hz: f64,
    /// The front and bottom cameras (defaults below).
    pub cameras: Cameras,
}

impl Default for AuvInterface {
    fn default() -> Self {
        AuvInterface {
            bind: "127.0.0.1".into(),
            images_port: 5555,
            thrusters_port: 5556,
            telemetry_port: 5557,
            telemetry_hz: 20.0,
            cameras: Cameras::default(),
        }
    }
}

/// The front and bottom cameras, rendered by raycasting the terrain (range-shaded JPEGs).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cameras {
    /// Image width, pixels (default 320).
    pub width: u32,
    /// Image height, pixels (default 240).
    pub height: u32,
    /// Horizontal field of view, degrees (default 90).
    pub fov_deg: f64,
    /// Frames (front and bottom together) per vehicle per second of sim time (default 2;
    /// 0 = no images).
    pub rate_hz: f64,
    /// Range (m) at which the seafloor fades into the water's colour (default 30).
    pub max_range_m: f64,
    /// JPEG quality 1–100 (default 80).
    #[schemars(range(min = 1, max = 100))]
    pub jpeg_quality: u8,
}

impl Default for Cameras {
    fn default() -> Self {
        Cameras {
            width: 320,
            height: 240,
            fov_deg: 90.0,
            rate_hz: 2.0,
            max_range_m: 30.0,
            jpeg_quality: 80,
        }
    }
}
