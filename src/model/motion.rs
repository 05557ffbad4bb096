//! Vehicle kinematics: a unicycle in the horizontal plane with bounded turn rate, and a
//! bounded vertical rate, following a looping list of waypoints; or replaying a logged track.
//!
//! Deterministic and I/O-free: [`Kinematics::step`] advances by `dt` seconds. Headings are
//! compass headings (0 = north, clockwise positive, degrees in config, radians inside); the
//! local frame is ENU, so a heading ψ moves the vehicle along (sin ψ, cos ψ).

use crate::config::track::{TrackEnd, TrackLog, TrackPoint};
use crate::config::Motion;
use crate::model::auv::Auv;
use crate::model::pose::{wrap_2pi, wrap_pi, VehicleState};
use nalgebra::Point3;
use std::sync::Arc;

/// The motion law of one vehicle, with its progress along a patrol.
#[derive(Debug, Clone)]
pub enum Kinematics {
    Stationary,
    /// Moved from outside (NETSIM nav updates, an external simulator): `step` leaves it.
    External,
    Patrol(Patrol),
    /// Driven by its thrusters ([`Auv`]).
    Thrusters(Box<Auv>),
    /// Replaying a logged track.
    Track(Replay),
}

/// A logged track being replayed: the log's time is `offset + elapsed` (wrapped to the span
/// after the offset when it loops).
#[derive(Debug, Clone)]
pub struct Replay {
    pub log: Arc<TrackLog>,
    pub offset: f64,
    pub at_end: TrackEnd,
    /// Sim seconds since the run's start.
    pub elapsed: f64,
    /// The log's segment last used.
    hint: usize,
}

impl Replay {
    /// Where the log is after `elapsed` seconds of the run.
    pub fn at(&mut self, elapsed: f64) -> TrackPoint {
        let span = self.log.duration_s() - self.offset;
        // Laps completed (a nanosecond early: the elapsed time is a sum of steps).
        let laps = ((elapsed + 1e-9) / span).floor();
        let into = match self.at_end {
            TrackEnd::Loop if span > 0.0 && laps >= 1.0 => {
                self.hint = 0;
                (elapsed - laps * span).max(0.0)
            }
            _ => elapsed,
        };
        let mut p = self.log.at(self.offset + into, &mut self.hint);
        if self.at_end != TrackEnd::Loop && elapsed > span {
            p.speed_mps = 0.0;
        }
        p
    }
}

#[derive(Debug, Clone)]
pub struct Patrol {
    pub speed: f64,
    pub max_turn_rate: f64,
    pub max_depth_rate: f64,
    pub capture_radius: f64,
    pub waypoints: Vec<Point3<f64>>,
    /// Index of the waypoint being steered to.
    pub target: usize,
}

impl Kinematics {
    pub fn from_config(m: &Motion) -> Self {
        match m {
            Motion::Stationary => Kinematics::Stationary,
            Motion::External => Kinematics::External,
            Motion::Thrusters { auv_id, dynamics } => {
                Kinematics::Thrusters(Box::new(Auv::new(*auv_id, *dynamics)))
            }
            Motion::Track(t) => match &t.log {
                Some(log) => Kinematics::Track(Replay {
                    log: log.clone(),
                    offset: t.offset_s,
                    at_end: t.at_end,
                    elapsed: 0.0,
                    hint: 0,
                }),
                // Never: a loaded scenario's tracks hold their logs.
                None => Kinematics::Stationary,
            },
            Motion::Patrol {
                speed_mps,
                max_turn_rate_deg_s,
                max_depth_rate_mps,
                waypoints,
                capture_radius_m,
            } => Kinematics::Patrol(Patrol {
                speed: *speed_mps,
                max_turn_rate: max_turn_rate_deg_s.to_radians(),
                max_depth_rate: *max_depth_rate_mps,
                capture_radius: *capture_radius_m,
                waypoints: waypoints
                    .iter()
                    .map(|w| Point3::new(w[0], w[1], w[2]))
                    .collect(),
                target: 0,
            }),
        }
    }

    /// Advances `state` by `dt` seconds.
    pub fn step(&mut self, state: &mut VehicleState, dt: f64) {
        let p = match self {
            Kinematics::Patrol(p) => p,
            Kinematics::Thrusters(auv) => return auv.step(state, dt),
            Kinematics::Track(r) => {
                r.elapsed += dt;
                let at = r.at(r.elapsed);
                state.position = Point3::from(at.position);
                state.heading = wrap_2pi(at.heading_deg.to_radians());
                state.speed = at.speed_mps;
                return;
            }
            Kinematics::Stationary | Kinematics::External => return,
        };
        if p.waypoints.is_empty() {
            return;
        }
        let mut goal = p.waypoints[p.target];
        let horizontal = |s: &VehicleState, g: &Point3<f64>| {
            ((g.x - s.position.x).powi(2) + (g.y - s.position.y).powi(2)).sqrt()
        };
        if horizontal(state, &goal) <= p.capture_radius {
            p.target = (p.target + 1) % p.waypoints.len();
            goal = p.waypoints[p.target];
        }
        // Turn towards the goal, at most max_turn_rate·dt.
        let desired = wrap_2pi((goal.x - state.position.x).atan2(goal.y - state.position.y));
        let error = wrap_pi(desired - state.heading);
        let max_turn = p.max_turn_rate * dt;
        state.heading = wrap_2pi(state.heading + error.clamp(-max_turn, max_turn));
        state.speed = p.speed;
        state.position.x += p.speed * dt * state.heading.sin();
        state.position.y += p.speed * dt * state.heading.cos();
        let dz = goal.z - state.position.z;
        let max_dz = p.max_depth_rate * dt;
        state.position.z += dz.clamp(-max_dz, max_dz);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Pose;
    use nalgebra::Vector3;
    use std::f64::consts::PI;

    fn patrol(waypoints: Vec<[f64; 3]>) -> Kinematics {
        Kinematics::from_config(&Motion::Patrol {
            speed_mps: 1.0,
            max_turn_rate_deg_s: 10.0,
            max_depth_rate_mps: 0.5,
            waypoints,
            capture_radius_m: 1.0,
        })
    }

    #[test]
    fn heading_north_moves_along_y_and_orientation_points_north() {
        let mut k = patrol(vec![[0.0, 100.0, 0.0]]);
        let mut s = VehicleState::from_pose(&Pose {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            heading_deg: 0.0,
        });
        for _ in 0..100 {
            k.step(&mut s, 0.1);
        }
        assert!(
            (s.position.y - 10.0).abs() < 1e-9 && s.position.x.abs() < 1e-9,
            "{s:?}"
        );
        let fwd = s.orientation() * Vector3::x();
        assert!((fwd - Vector3::y()).norm() < 1e-12, "{fwd:?}");
    }

    #[test]
    fn turn_rate_and_depth_rate_are_bounded() {
        // Goal due east, vehicle facing north: after 1 s it has turned exactly 10°.
        let mut k = patrol(vec![[100.0, 0.0, -50.0]]);
        let mut s = VehicleState::from_pose(&Pose {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            heading_deg: 0.0,
        });
        for _ in 0..10 {
            k.step(&mut s, 0.1);
        }
        assert!((s.heading.to_degrees() - 10.0).abs() < 1e-9);
        assert!((s.position.z + 0.5).abs() < 1e-12);
    }

    #[test]
    fn patrol_loops_over_its_waypoints() {
        let mut k = patrol(vec![[0.0, 10.0, 0.0], [0.0, 0.0, 0.0]]);
        let mut s = VehicleState::from_pose(&Pose {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            heading_deg: 0.0,
        });
        let mut max_y: f64 = 0.0;
        for _ in 0..1000 {
            k.step(&mut s, 0.1);
            max_y = max_y.max(s.position.y);
        }
        // It reaches the first waypoint (within the 1 m capture radius), then overshoots by at
        // most one turning radius v/ω = 1 m/s / 10°/s = 5.73 m while it turns back.
        let radius = 1.0 / 10f64.to_radians();
        assert!(max_y > 9.0 && max_y < 9.0 + radius + 0.1, "{max_y}");
        assert!(s.position.x.abs() < 20.0 && s.position.y > -10.0, "{s:?}");
    }

    #[test]
    fn wraps() {
        assert!((wrap_pi(3.0 * PI / 2.0) + PI / 2.0).abs() < 1e-12);
        assert!((wrap_2pi(-PI / 2.0) - 3.0 * PI / 2.0).abs() < 1e-12);
    }
}
