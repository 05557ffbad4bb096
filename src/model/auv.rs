//! A thruster-driven AUV in four degrees of freedom: surge u, sway v, heave w (body frame x
//! forward, y left, z up) and yaw rate r, after Fossen's model with diagonal mass and damping:
//!
//!   (m + m_a) ν̇ = τ − (D_lin + D_quad |ν|) ν        (per degree of freedom)
//!
//! with the BlueROV2's identified parameters by default ([`AuvDynamics`]). Coriolis and
//! centripetal terms are left out (below 2 m/s and 3 rad/s they are a few percent of damping),
//! the vehicle is neutrally buoyant and level (pitch and roll stay 0).
//!
//! Thrusters: left and right push along x at y = ±arm, so their sum drives surge and their
//! difference turns it (right harder than left turns it left, counter-clockwise); the side
//! thruster pushes to starboard (−y) at positive power, the vertical thruster up (+z). A power p
//! in [−100, 100] gives thrust T_fwd (p/100)² forward, or T_rev (p/100)² in reverse.
//! Semi-implicit Euler at the physics sub-step.

use crate::config::AuvDynamics;
use crate::model::pose::{wrap_2pi, wrap_pi, VehicleState};
use crate::wire::auv::ThrusterCommand;
use nalgebra::Vector4;
use std::f64::consts::FRAC_PI_2;

/// One AUV's thrusters and velocities; its pose is the [`VehicleState`] it moves.
#[derive(Debug, Clone)]
pub struct Auv {
    pub id: u8,
    params: AuvDynamics,
    /// Left, right, side, vertical power in [−100, 100].
    power: [i8; 4],
    /// Body velocities u, v, w (m/s) and yaw rate r (rad/s).
    nu: Vector4<f64>,
}

impl Auv {
    pub fn new(id: u8, params: AuvDynamics) -> Auv {
        Auv {
            id,
            params,
            power: [0; 4],
            nu: Vector4::zeros(),
        }
    }

    /// Applies a thruster frame: each given power replaces the thruster's, `None` keeps it.
    pub fn command(&mut self, c: &ThrusterCommand) {
        for (p, new) in self.power.iter_mut().zip(c.power) {
            if let Some(new) = new {
                *p = new;
            }
        }
    }

    pub fn power(&self) -> [i8; 4] {
        self.power
    }

    /// Body velocities u, v, w (m/s) and yaw rate r (rad/s).
    pub fn velocity(&self) -> [f64; 4] {
        self.nu.into()
    }

    /// Thrust (N) of one thruster at `power`.
    pub fn thrust(&self, power: i8) -> f64 {
        let x = f64::from(power) / 100.0;
        if x >= 0.0 {
            self.params.max_thrust_n[0] * x * x
        } else {
            -self.params.max_thrust_n[1] * x * x
        }
    }

    /// Advances `state` by `dt` seconds.
    pub fn step(&mut self, state: &mut VehicleState, dt: f64) {
        let p = &self.params;
        let [l, r, side, vertical] = self.power.map(|q| self.thrust(q));
        let tau = Vector4::new(l + r, -side, vertical, p.thruster_arm_m * (r - l));
        let mass = Vector4::new(p.mass_kg, p.mass_kg, p.mass_kg, p.inertia_z_kg_m2)
            + Vector4::from(p.added_mass);
        let damping = (Vector4::from(p.linear_damping)
            + Vector4::from(p.quadratic_damping).component_mul(&self.nu.abs()))
        .component_mul(&self.nu);
        self.nu += (tau - damping).component_div(&mass) * dt;
        let [u, v, w, yaw_rate]: [f64; 4] = self.nu.into();
        let yaw = yaw(state) + yaw_rate * dt;
        state.heading = wrap_2pi(FRAC_PI_2 - yaw);
        let (s, c) = yaw.sin_cos();
        state.position.x += (u * c - v * s) * dt;
        state.position.y += (u * s + v * c) * dt;
        state.position.z += w * dt;
        state.speed = u.hypot(v);
    }

    /// Keeps the vehicle below `min_depth_m` under the surface (z = 0), `min_altitude_m`
    /// above the seafloor at `floor` (where there is one) and inside `half_extent`, stopping
    /// its motion into whichever it meets.
    pub fn bound(&mut self, state: &mut VehicleState, floor: Option<f64>, half_extent: [f64; 2]) {
        let top = -self.params.min_depth_m;
        if state.position.z > top {
            state.position.z = top;
            self.nu[2] = self.nu[2].min(0.0);
        }
        if let Some(bottom) = floor.map(|f| f + self.params.min_altitude_m) {
            if state.position.z < bottom {
                state.position.z = bottom.min(top);
                self.nu[2] = self.nu[2].max(0.0);
            }
        }
        let (x, y) = (state.position.x, state.position.y);
        state.position.x = x.clamp(-half_extent[0], half_extent[0]);
        state.position.y = y.clamp(-half_extent[1], half_extent[1]);
        if state.position.x != x || state.position.y != y {
            self.nu[0] = 0.0;
            self.nu[1] = 0.0;
        }
    }
}

/// The ENU yaw of `state` (counter-clockwise from east), in [−π, π).
pub fn yaw(state: &VehicleState) -> f64 {
    wrap_pi(FRAC_PI_2 - state.heading)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pose;

    fn run(power: [Option<i8>; 4], seconds: f64) -> (Auv, VehicleState) {
        let mut a = Auv::new(0, AuvDynamics::default());
        // Facing north.
        let mut s = VehicleState::from_pose(&Pose {
            x: 0.0,
            y: 0.0,
            z: -20.0,
            heading_deg: 0.0,
        });
        a.command(&ThrusterCommand { id: 0, power });
        for _ in 0..(seconds / 0.01).round() as usize {
            a.step(&mut s, 0.01);
        }
        (a, s)
    }

    #[test]
    fn forward_thrust_moves_along_the_heading_to_its_terminal_speed() {
        let (a, s) = run([Some(100), Some(100), None, None], 30.0);
        // 2 × 51.5 N = 4.03 u + 18.18 u² → u = 2.2720 m/s.
        let u = a.velocity()[0];
        assert!((u - 2.2720).abs() < 1e-3, "{u}");
        assert!(s.position.x.abs() < 1e-9 && s.position.y > 50.0, "{s:?}");
        assert!((s.position.z + 20.0).abs() < 1e-12);
    }

    #[test]
    fn a_differential_turns_it_and_vertical_thrust_changes_depth() {
        let (_, s) = run([Some(-50), Some(50), None, None], 1.0);
        assert!(
            yaw(&s) > FRAC_PI_2 + 0.3,
            "right harder than left turns it left: {s:?}"
        );
        let (_, s) = run([None, None, None, Some(60)], 5.0);
        assert!(s.position.z > -19.0, "up: {s:?}");
        let (_, s) = run([None, None, Some(60), None], 5.0);
        assert!(s.position.x > 1.0, "facing north, starboard is east: {s:?}");
    }

    #[test]
    fn keep_leaves_a_thruster_as_it_was() {
        let mut a = Auv::new(0, AuvDynamics::default());
        a.command(&ThrusterCommand {
            id: 0,
            power: [Some(10), Some(20), Some(30), Some(40)],
        });
        a.command(&ThrusterCommand {
            id: 0,
            power: [None, Some(-5), None, None],
        });
        assert_eq!(a.power(), [10, -5, 30, 40]);
    }

    #[test]
    fn the_surface_the_seafloor_and_the_edges_bound_it() {
        let mut a = Auv::new(0, AuvDynamics::default());
        let mut s = VehicleState::from_pose(&Pose {
            x: 0.0,
            y: 0.0,
            z: 3.0,
            heading_deg: 0.0,
        });
        a.bound(&mut s, Some(-40.0), [100.0, 100.0]);
        assert_eq!(s.position.z, 0.0);
        s.position.z = -45.0;
        s.position.x = 300.0;
        a.bound(&mut s, Some(-40.0), [100.0, 100.0]);
        assert_eq!((s.position.x, s.position.z), (100.0, -39.5));
    }
}
