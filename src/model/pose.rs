//! A vehicle's pose as the physics side knows it, and angle wrapping: shared by the motion
//! laws ([`super::motion`]) and the thruster-driven AUV ([`super::auv`]).

use crate::config::Pose;
use nalgebra::{Point3, UnitQuaternion, Vector3};
use std::f64::consts::PI;

/// A vehicle's pose as the physics side knows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehicleState {
    pub position: Point3<f64>,
    /// Compass heading, radians in [0, 2π).
    pub heading: f64,
    /// Horizontal speed over ground, m/s.
    pub speed: f64,
}

impl VehicleState {
    pub fn from_pose(p: &Pose) -> Self {
        VehicleState {
            position: Point3::new(p.x, p.y, p.z),
            heading: wrap_2pi(p.heading_deg.to_radians()),
            speed: 0.0,
        }
    }

    /// Orientation in the ENU frame: a compass heading ψ is a yaw of π/2 − ψ about +z
    /// (body x axis pointing along the direction of travel).
    pub fn orientation(&self) -> UnitQuaternion<f64> {
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), PI / 2.0 - self.heading)
    }
}

/// Wraps an angle into [0, 2π).
pub fn wrap_2pi(a: f64) -> f64 {
    let r = a.rem_euclid(2.0 * PI);
    if r >= 2.0 * PI {
        0.0
    } else {
        r
    }
}

/// Wraps an angle into [−π, π).
pub fn wrap_pi(a: f64) -> f64 {
    wrap_2pi(a + PI) - PI
}
