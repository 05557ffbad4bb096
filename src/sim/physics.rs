//! The embedded physics simulator: vehicles on their motion laws over the scenario's
//! terrain, answering each window's BEGIN with an END whose ChannelData holds every
//! vehicle's pose and, for every pair, the LOS/NLOS path through the terrain.
//!
//! Timing: END(k) carries the world **at the start of window k** (t = k·W), then the
//! simulator advances to (k+1)·W in fixed sub-steps of at most `physics_step_ms`. The
//! network side runs window k with exactly that channel, so it is never a window behind.
//! With `simulators.channel_interval_ms` = m·W a new sample is published at windows m, 2m, …
//! and the windows between carry the last one, byte for byte, so the sides downstream skip
//! decoding it again; the sample published at (j+1)·m is the world at j·m, its pairs traced a
//! share a window over the m windows between, so no window carries a whole sample. Window 0 and
//! any window whose BEGIN moves a vehicle are sampled whole at once; motion still steps every
//! window.

use crate::config::LoadedScenario;
use crate::lockstep::{
    protocol::{expect_physics, physics_end, WindowCounter},
    Reply, Service,
};
use crate::model::{
    auv::Auv,
    channel::{PathInfo, Tracer},
    motion::Kinematics,
    pose::VehicleState,
    terrain::Terrain,
};
use crate::sim::acoustic_paths::{AcousticPaths, PathStats, SharedPathStats};
use crate::wire::auv::ThrusterCommand;
use crate::wire::channel::Channel;
use crate::wire::proto::{rosnetsim::physics_update::MsgType, SetPose};
use nalgebra::{Point3, UnitQuaternion};
use prost::bytes::Bytes;
use std::sync::Arc;

pub struct PhysicsSim {
    windows: WindowCounter,
    /// Sub-steps per window and their length in seconds.
    substeps: u32,
    dt: f64,
    vehicles: Vec<(VehicleState, Kinematics)>,
    channel: ChannelSampler,
    /// The channel is sampled every this many windows; the last sample, encoded.
    sample_every: u32,
    last_sample: Option<Bytes>,
    /// With a sample every m > 1 windows: the next sample, spread over the m windows before it
    /// (the poses it describes and how many of its pairs are traced).
    spread: Option<(Vec<Placement>, usize)>,
}

/// A vehicle's position and orientation in the local ENU frame.
pub type Placement = (Point3<f64>, UnitQuaternion<f64>);

/// The ChannelData of poses over the scenario's terrain: every pose, and for every pair the
/// LOS/NLOS path found by raycasting. Shared by every physics simulator that has poses and
/// the terrain (the embedded one, and Gazebo's client, whose poses come from Gazebo).
pub struct ChannelSampler {
    terrain: Arc<Terrain>,
    penetration_loss_db_per_m: f64,
    /// Remembers per pair its last classification (a certificate) and the terrain blocks that
    /// made it, for the next windows.
    tracer: Tracer,
    /// The beam-traced pairs' acoustic arrivals.
    acoustic: AcousticPaths,
    /// The last sample (its buffers reused).
    channel: Channel,
}

impl ChannelSampler {
    /// On the scenario's terrain (read and checked at load), built here.
    pub fn from_scenario(loaded: &LoadedScenario) -> ChannelSampler {
        Self::new(loaded, Arc::new(Terrain::new(loaded.terrain.clone())))
    }

    pub fn new(loaded: &LoadedScenario, terrain: Arc<Terrain>) -> ChannelSampler {
        ChannelSampler {
            acoustic: AcousticPaths::from_scenario(loaded, terrain.clone()),
            terrain,
            penetration_loss_db_per_m: loaded.scenario.world.penetration_loss_db_per_m,
            tracer: Tracer::new(),
            channel: Channel::default(),
        }
    }

    pub fn terrain(&self) -> &Arc<Terrain> {
        &self.terrain
    }

    /// The channel of window `k` between vehicles at `poses` (position, orientation in ENU), in
    /// vehicle order, serialized as a ChannelData.
    pub fn sample(&mut self, k: u32, poses: &[Placement]) -> Vec<u8> {
        let points: Vec<Point3<f64>> = poses.iter().map(|(p, _)| *p).collect();
        let paths = self
            .tracer
            .trace_all(&self.terrain, &points, self.penetration_loss_db_per_m);
        self.acoustic.update(k, &points);
        channel_data(poses, paths, &self.acoustic, &mut self.channel);
        self.channel.encode_to_vec()
    }

    /// What tracing the acoustic paths cost so far.
    pub fn acoustic_path_stats(&self) -> PathStats {
        self.acoustic.stats()
    }

    /// The same, as it goes on changing (None: no pair is beam-traced).
    pub fn shared_path_stats(&self) -> Option<SharedPathStats> {
        self.acoustic.shared_stats()
    }

    /// Part of a sample spread over several windows: traces the pairs at `range` (in ChannelData
    /// order) between vehicles at `poses`; [`Self::traced`] then serializes them.
    pub fn trace_part(&mut self, poses: &[Placement], range: std::ops::Range<usize>) {
        let points: Vec<Point3<f64>> = poses.iter().map(|(p, _)| *p).collect();
        self.tracer.trace_some(
            &self.terrain,
            &points,
            self.penetration_loss_db_per_m,
            range,
        );
    }

    /// The ChannelData of window `k` for `poses` and the paths as last traced (all of them for
    /// `poses` once a spread sample's parts cover every pair).
    pub fn traced(&mut self, k: u32, poses: &[Placement]) -> Vec<u8> {
        if self.acoustic.any() {
            let points: Vec<Point3<f64>> = poses.iter().map(|(p, _)| *p).collect();
            self.acoustic.update(k, &points);
        }
        channel_data(
            poses,
            self.tracer.paths(),
            &self.acoustic,
            &mut self.channel,
        );
        self.channel.encode_to_vec()
    }
}

impl PhysicsSim {
    /// Builds the raycast structures on the scenario's terrain (read and checked at load) and
    /// places the vehicles.
    pub fn from_scenario(loaded: &LoadedScenario) -> PhysicsSim {
        Self::new(loaded, Arc::new(Terrain::new(loaded.terrain.clone())))
    }

    /// With a terrain already loaded (shared between simulators in one process).
    pub fn new(loaded: &LoadedScenario, terrain: Arc<Terrain>) -> PhysicsSim {
        let s = &loaded.scenario;
        let schedule = loaded.schedule();
        let substeps = (s.window_ms / s.simulators.physics_step_ms).ceil().max(1.0) as u32;
        let sample_every = s
            .simulators
            .channel_interval_ms
            .map_or(1, |c| (c / s.window_ms).round().max(1.0) as u32);
        PhysicsSim {
            sample_every,
            last_sample: None,
            spread: None,
            windows: WindowCounter::new(schedule.windows),
            substeps,
            dt: schedule.window_s() / substeps as f64,
            channel: ChannelSampler::new(loaded, terrain),
            vehicles: s
                .vehicles
                .iter()
                .map(|v| {
                    (
                        VehicleState::from_pose(&v.start()),
                        Kinematics::from_config(&v.motion),
                    )
                })
                .collect(),
        }
    }

    pub fn terrain(&self) -> &Arc<Terrain> {
        self.channel.terrain()
    }

    pub fn vehicle(&self, index: usize) -> Option<&VehicleState> {
        self.vehicles.get(index).map(|(s, _)| s)
    }

    /// Moves a vehicle (as a BEGIN's `set_pose` does); applies from the next window.
    pub fn set_vehicle(&mut self, index: usize, state: VehicleState) -> bool {
        match self.vehicles.get_mut(index) {
            Some(v) => {
                v.0 = state;
                self.last_sample = None;
                true
            }
            None => false,
        }
    }

    /// The channel of window `k` as the world is now, serialized.
    pub fn channel_data(&mut self, k: u32) -> Vec<u8> {
        let poses = self.poses();
        self.channel.sample(k, &poses)
    }

    /// What tracing the acoustic paths cost so far.
    pub fn acoustic_path_stats(&self) -> PathStats {
        self.channel.acoustic_path_stats()
    }

    /// The same, as it goes on changing (None: no pair is beam-traced).
    pub fn shared_path_stats(&self) -> Option<SharedPathStats> {
        self.channel.shared_path_stats()
    }

    fn poses(&self) -> Vec<Placement> {
        self.vehicles
            .iter()
            .map(|(s, _)| (s.position, s.orientation()))
            .collect()
    }

    /// Window `k`'s channel with a sample every m = `sample_every` > 1 windows, spread: at
    /// windows m, 2m, … the sample whose pairs the m windows before traced, a share each, for
    /// the poses at the start of those windows, is published; between, the last one is held.
    /// Every window then traces about 1/m of the pairs, so no window carries a whole sample.
    fn spread_sample(&mut self, k: u32) -> Bytes {
        if k % self.sample_every == 0 {
            let pairs = self.vehicles.len() * self.vehicles.len().saturating_sub(1) / 2;
            if let Some((poses, traced)) = self.spread.take() {
                if traced >= pairs {
                    self.last_sample = Some(self.channel.traced(k, &poses).into());
                }
            }
            self.spread = Some((self.poses(), 0));
        }
        if let Some((poses, traced)) = &mut self.spread {
            let pairs = poses.len() * poses.len().saturating_sub(1) / 2;
            let share = pairs.div_ceil(self.sample_every as usize);
            let part = *traced..(*traced + share).min(pairs);
            *traced = part.end;
            self.channel.trace_part(poses, part);
        }
        self.last_sample.clone().unwrap_or_default()
    }

    fn advance(&mut self) {
        let terrain = self.channel.terrain().clone();
        let half = terrain.half_extent();
        for _ in 0..self.substeps {
            for (state, kin) in &mut self.vehicles {
                kin.step(state, self.dt);
                if let Kinematics::Thrusters(auv) = kin {
                    let floor = terrain.height_at(state.position.x, state.position.y);
                    auv.bound(state, floor, half);
                }
            }
        }
    }

    /// The thruster-driven vehicles: index, state and thrusters.
    pub fn auvs(&self) -> impl Iterator<Item = (usize, &VehicleState, &Auv)> {
        self.vehicles
            .iter()
            .enumerate()
            .filter_map(|(i, (s, k))| match k {
                Kinematics::Thrusters(a) => Some((i, s, a.as_ref())),
                _ => None,
            })
    }

    /// Applies a thruster frame to the AUV it names (from the next sub-step on).
    pub fn command(&mut self, c: &ThrusterCommand) -> Result<(), String> {
        self.vehicles
            .iter_mut()
            .find_map(|(_, k)| match k {
                Kinematics::Thrusters(a) if a.id == c.id => Some(a),
                _ => None,
            })
            .map(|a| a.command(c))
            .ok_or_else(|| format!("no vehicle is AUV id {}", c.id))
    }

    /// Applies a BEGIN's imposed poses (checked first: all or none).
    fn place(&mut self, fixes: &[SetPose]) -> Result<(), String> {
        let n = self.vehicles.len();
        if let Some((i, f)) = fixes.iter().enumerate().find(|(_, f)| f.node as usize >= n) {
            return Err(format!(
                "set_pose[{i}]: node {} is not a vehicle ({n} vehicles)",
                f.node
            ));
        }
        for f in fixes {
            self.vehicles[f.node as usize].0 = placed(f);
        }
        Ok(())
    }

    pub fn handle(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        let begin = expect_physics(request, MsgType::Begin, self.windows.next)?;
        self.windows.begin(begin.time_val)?;
        self.place(&begin.set_pose)?;
        // The first window, one every window and one that moves a vehicle are sampled at once
        // (a spread sample under way then starts again at the next multiple of m).
        let channel =
            if self.last_sample.is_none() || self.sample_every == 1 || !begin.set_pose.is_empty() {
                self.spread = None;
                let sample = Bytes::from(self.channel_data(begin.time_val));
                self.last_sample = Some(sample.clone());
                sample
            } else {
                self.spread_sample(begin.time_val)
            };
        self.advance();
        Ok(physics_end(begin.time_val, channel))
    }
}

impl Service for PhysicsSim {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        crate::lockstep::ready(self.handle(&request))
    }

    fn finished(&self) -> bool {
        self.windows.finished()
    }
}

/// A vehicle state from a pose imposed from outside.
fn placed(f: &SetPose) -> VehicleState {
    let mut s = VehicleState::from_pose(&crate::config::Pose {
        x: f.x,
        y: f.y,
        z: f.z,
        heading_deg: f.heading_deg,
    });
    s.speed = f.speed_mps;
    s
}

/// Fills `channel` with the ChannelData of `poses`, `paths` and the `acoustic` arrivals: poses,
/// then one path per pair i < j.
pub fn channel_data(
    poses: &[Placement],
    paths: &[PathInfo],
    acoustic: &AcousticPaths,
    channel: &mut Channel,
) {
    channel.reset();
    for (p, q) in poses {
        channel.push_node([p.x, p.y, p.z, q.w, q.i, q.j, q.k]);
    }
    let n = poses.len() as u32;
    let pairs = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j)));
    for (k, ((i, j), p)) in pairs.zip(paths).enumerate() {
        let hops = p
            .hops
            .iter()
            .map(|h| [h.point.x, h.point.y, h.point.z, h.loss_db]);
        channel.push_traced_path(i, j, p.los, hops, acoustic.arrivals(k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockstep::protocol::physics_begin;
    use crate::wire::proto::{decode_checked, ChannelData, PhysicsUpdate};

    fn sim() -> PhysicsSim {
        sim_with("")
    }

    /// config/patrol.yaml (W = 10 ms) with one more `simulators` key (`key: value`).
    fn sim_with(simulators: &str) -> PhysicsSim {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/patrol.yaml"))
                .unwrap()
                .replace(
                    "  physics_step_ms: 10\n",
                    &format!("  physics_step_ms: 10\n  {simulators}\n"),
                );
        PhysicsSim::from_scenario(
            &crate::config::parse_str(
                &text,
                std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config/patrol.yaml")),
            )
            .unwrap(),
        )
    }

    fn node_list(end: &[u8]) -> Vec<f64> {
        let end: PhysicsUpdate = decode_checked(end).unwrap();
        decode_checked::<ChannelData>(&end.channel_data)
            .unwrap()
            .node_list
    }

    #[test]
    fn a_begin_places_vehicles_before_the_world_is_sampled() {
        let mut s = sim();
        let fix = SetPose {
            node: 1,
            x: 12.5,
            y: -40.0,
            z: -30.0,
            heading_deg: 90.0,
            speed_mps: 0.0,
        };
        let nodes = node_list(&s.handle(&physics_begin(0, vec![fix])).unwrap());
        assert_eq!(
            &nodes[7..10],
            &[12.5, -40.0, -30.0],
            "vehicle 1 at the imposed pose in END(0)"
        );
        // Heading 90° (east) is a yaw of 0: the identity quaternion.
        assert!(
            (nodes[10] - 1.0).abs() < 1e-12 && nodes[13].abs() < 1e-12,
            "{:?}",
            &nodes[10..14]
        );
    }

    #[test]
    fn a_begin_naming_no_vehicle_is_refused_and_moves_nothing() {
        let mut s = sim();
        let before = s.vehicle(0).unwrap().position;
        let ok = SetPose {
            node: 0,
            x: 1.0,
            y: 2.0,
            z: -3.0,
            heading_deg: 0.0,
            speed_mps: 1.0,
        };
        let bad = SetPose { node: 9, ..ok };
        let e = s.handle(&physics_begin(0, vec![ok, bad])).unwrap_err();
        assert_eq!(e, "set_pose[1]: node 9 is not a vehicle (3 vehicles)");
        assert_eq!(s.vehicle(0).unwrap().position, before, "all or none");
    }

    #[test]
    fn a_sample_every_m_windows_is_traced_over_the_m_windows_before_it() {
        let every = |s: &mut PhysicsSim, k: u32, fixes: Vec<SetPose>| {
            let end: PhysicsUpdate =
                decode_checked(&s.handle(&physics_begin(k, fixes)).unwrap()).unwrap();
            end.channel_data
        };
        let mut s = sim_with("channel_interval_ms: 30");
        let mut plain = sim();
        let c: Vec<_> = (0..10).map(|k| every(&mut s, k, vec![])).collect();
        let p: Vec<_> = (0..10).map(|k| every(&mut plain, k, vec![])).collect();
        assert_eq!(c[0], p[0], "window 0 is sampled at once");
        assert!(
            c[1..6].iter().all(|x| *x == c[0]),
            "windows 1 to 5 carry window 0's sample"
        );
        assert_ne!(
            p[1], p[0],
            "the vehicles patrol: every-window samples differ"
        );
        assert_eq!(
            c[6], p[3],
            "the world at window 3, traced over windows 3 to 5, is published at window 6"
        );
        assert!(c[7] == c[6] && c[8] == c[6]);
        assert_eq!(c[9], p[6], "and the world at window 6 at window 9");
        // A BEGIN that moves a vehicle is sampled at once.
        let fix = SetPose {
            node: 0,
            x: 1.0,
            y: 2.0,
            z: -3.0,
            heading_deg: 0.0,
            speed_mps: 0.0,
        };
        let moved = every(&mut s, 10, vec![fix]);
        assert_eq!(&node_list_of(&moved)[0..3], &[1.0, 2.0, -3.0]);
        let later: Vec<_> = (11..13).map(|k| every(&mut s, k, vec![])).collect();
        assert!(
            later.iter().all(|x| *x == moved),
            "and held until the next sample"
        );
    }

    fn node_list_of(channel: &[u8]) -> Vec<f64> {
        decode_checked::<ChannelData>(channel).unwrap().node_list
    }
}
