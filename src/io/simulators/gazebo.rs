//! Gazebo (gz-sim) as the physics simulator, reached through `ros_gz_bridge` (cargo feature
//! `gazebo`): a [`Followed`] simulator that answers each physics BEGIN(k) from a paused
//! Gazebo world.
//!
//! Per window k ≥ 1 it asks the world's control service (`/world/<w>/control`,
//! `ros_gz_interfaces/srv/ControlWorld`) for `pause: true, multi_step: W / step`, which moves
//! the world from (k−1)·W to k·W. gz-sim answers that request *before* it runs the steps
//! (`SimulationRunner` queues it for the end of its next iteration), so the answer is only
//! acceptance. Done is each model's pose stamped k·W: PosePublisher publishes a model's pose in
//! PostUpdate of every step, stamped with that step's sim time, and nothing while paused, so a
//! pose stamped k·W exists exactly when the k-th window's last step has run. (`/clock` comes at
//! a step's start, and `/world/<w>/stats` is throttled to 10 Hz of wall time: neither says it.)
//! Those poses, and the scenario's terrain raycast as the embedded simulator does it
//! ([`crate::sim::followed::Follow`]), make END(k). Window 0 is the world as loaded: the scenario's start
//! poses, which `cosim export-gazebo` places the models at.
//!
//! Gazebo is therefore never ahead of the window the physics coordinator is on: it reaches k·W
//! when BEGIN(k) asks for it. A pose stamped after k·W means something else runs the world
//! (started with `gz sim -r`, or play pressed): an error. Every wait is bounded by the exchange's
//! timeout and ends with an error naming Gazebo, the world, the window and what was missing.

use crate::config::{GazeboSettings, LoadedScenario};
use crate::sim::followed::Followed;
use crate::sim::physics::Placement;
use futures::{stream::SelectAll, Stream, StreamExt};
use nalgebra::{Point3, Quaternion, UnitQuaternion};
use r2r::geometry_msgs::msg::PoseStamped;
use r2r::ros_gz_interfaces::{msg::WorldControl, srv::ControlWorld};
use r2r::QosProfile;
use std::pin::Pin;
use std::sync::{
    atomic::{AtomicBool, Ordering},
    Arc,
};
use std::time::{Duration, Instant};

type PoseStream = Pin<Box<dyn Stream<Item = (usize, PoseStamped)> + Send>>;

/// A pose of one model with its stamp.
#[derive(Debug, Clone, Copy)]
struct Stamped {
    t_ns: i64,
    pose: Placement,
}

/// The physics simulator that is a Gazebo world; see the module docs.
pub struct GazeboPhysics {
    world: String,
    control_service: String,
    models: Vec<String>,
    window_ns: i64,
    steps: u32,
    /// Half a step (ns): how far a stamp may sit from k·W (gz-sim sums whole-ns steps).
    tolerance_ns: i64,
    client: r2r::Client<ControlWorld::Service>,
    available: Option<Pin<Box<dyn std::future::Future<Output = r2r::Result<()>> + Send>>>,
    poses: SelectAll<PoseStream>,
    newest: Vec<Option<Stamped>>,
    start: Vec<Placement>,
    stop: Arc<AtomicBool>,
    spinner: Option<std::thread::JoinHandle<()>>,
}

fn ros_err(what: &str) -> impl Fn(r2r::Error) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("Gazebo client: {what}: {e}")
}

impl GazeboPhysics {
    /// The ROS 2 node `netsim_gazebo` (its own context) with the world's control client and a
    /// pose subscription per vehicle's model, spun on a thread of its own.
    pub fn connect(
        loaded: &LoadedScenario,
        settings: &GazeboSettings,
    ) -> anyhow::Result<GazeboPhysics> {
        let s = &loaded.scenario;
        let world = settings.world_name(&s.name).to_owned();
        let (step_s, steps) = settings
            .steps(s.window_ms, s.simulators.physics_step_ms)
            .map_err(|e| anyhow::anyhow!("simulators.physics.step_ms: {e}"))?;
        let ctx = r2r::Context::create().map_err(ros_err("ROS 2 context"))?;
        let mut node = r2r::Node::create(ctx, "netsim_gazebo", "").map_err(ros_err("node"))?;
        let control_service = settings.control_service(&s.name);
        let client = node
            .create_client::<ControlWorld::Service>(
                &control_service,
                QosProfile::services_default(),
            )
            .map_err(ros_err(&control_service))?;
        let available = r2r::Node::is_available(&client).map_err(ros_err(&control_service))?;
        let models: Vec<String> = s
            .vehicles
            .iter()
            .map(|v| settings.model(&v.name).to_owned())
            .collect();
        let mut poses = SelectAll::new();
        for (i, m) in models.iter().enumerate() {
            let topic = GazeboSettings::pose_topic(m);
            let sub = node
                .subscribe::<PoseStamped>(&topic, QosProfile::default().keep_last(100))
                .map_err(ros_err(&topic))?;
            poses.push(Box::pin(sub.map(move |p| (i, p))) as PoseStream);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = stop.clone();
        let spinner = std::thread::Builder::new()
            .name("gazebo-ros".into())
            .spawn(move || {
                while !spinning.load(Ordering::Relaxed) {
                    node.spin_once(Duration::from_millis(2));
                }
            })?;
        let start = s
            .vehicles
            .iter()
            .map(|v| {
                let st = crate::model::pose::VehicleState::from_pose(&v.start());
                (st.position, st.orientation())
            })
            .collect();
        tracing::info!(
            "Gazebo world `{world}`: {steps} steps of {:.6} ms per window through {control_service}, models {models:?}",
            step_s * 1e3
        );
        Ok(GazeboPhysics {
            world,
            control_service,
            newest: vec![None; models.len()],
            models,
            window_ns: (loaded.schedule().window_s() * 1e9).round() as i64,
            steps,
            tolerance_ns: ((step_s * 1e9) / 2.0).floor().max(1.0) as i64,
            client,
            available: Some(Box::pin(available)),
            poses,
            start,
            stop,
            spinner: Some(spinner),
        })
    }

    /// Window 0: the control service is there (ros_gz_bridge up, the world loaded).
    async fn wait_available(&mut self, deadline: Instant, timeout: Duration) -> Result<(), String> {
        let Some(available) = self.available.take() else {
            return Ok(());
        };
        match tokio::time::timeout_at(deadline.into(), available).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("{}: {e}", self.control_service)),
            Err(_) => Err(format!(
                "{} did not appear within {} ms: is `gz sim` running the world `{}`, and ros_gz_bridge bridging the service (bridge.yaml from `cosim export-gazebo`)?",
                self.control_service,
                timeout.as_millis(),
                self.world
            )),
        }
    }

    /// Asks for one window of steps and waits for the acceptance (not the steps).
    async fn step(&mut self, deadline: Instant, timeout: Duration) -> Result<(), String> {
        let req = ControlWorld::Request {
            world_control: WorldControl {
                pause: true,
                multi_step: self.steps,
                ..Default::default()
            },
        };
        let answer = self
            .client
            .request(&req)
            .map_err(|e| format!("cannot call {}: {e}", self.control_service))?;
        match tokio::time::timeout_at(deadline.into(), answer).await {
            Ok(Ok(r)) if r.success => Ok(()),
            Ok(Ok(_)) => Err(format!(
                "{} refused pause + multi_step {}",
                self.control_service, self.steps
            )),
            Ok(Err(e)) => Err(format!("{}: {e}", self.control_service)),
            Err(_) => Err(format!(
                "{} did not answer pause + multi_step {} within {} ms",
                self.control_service,
                self.steps,
                timeout.as_millis()
            )),
        }
    }

    /// Every model's pose stamped `t_ns` (within half a step).
    async fn poses_at(
        &mut self,
        t_ns: i64,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Vec<Placement>, String> {
        let at =
            |s: &Option<Stamped>| s.is_some_and(|s| (s.t_ns - t_ns).abs() <= self.tolerance_ns);
        while !self.newest.iter().all(at) {
            let next = match tokio::time::timeout_at(deadline.into(), self.poses.next()).await {
                Ok(Some(next)) => next,
                Ok(None) => return Err("the pose subscriptions closed".into()),
                Err(_) => return Err(self.missing(t_ns, timeout)),
            };
            let (i, msg) = next;
            let Some(stamped) = stamped(&msg) else {
                return Err(format!(
                    "{}: a pose with a non-finite value",
                    GazeboSettings::pose_topic(&self.models[i])
                ));
            };
            if stamped.t_ns > t_ns + self.tolerance_ns {
                return Err(format!(
                    "model `{}` is at sim time {:.6} s, ahead of the lockstep's {:.6} s: something else runs the world (start `gz sim` paused, without -r, and leave it paused)",
                    self.models[i],
                    secs(stamped.t_ns),
                    secs(t_ns)
                ));
            }
            // A pose already at the target is kept: later ones of an older step cannot exist.
            if !at(&self.newest[i]) {
                self.newest[i] = Some(stamped);
            }
        }
        Ok(self
            .newest
            .iter()
            .map(|s| s.expect("all present").pose)
            .collect())
    }

    /// What is missing when no pose stamped `t_ns` came in time.
    fn missing(&self, t_ns: i64, timeout: Duration) -> String {
        let lacking: Vec<String> = self
            .models
            .iter()
            .zip(&self.newest)
            .filter(|(_, s)| !s.is_some_and(|s| (s.t_ns - t_ns).abs() <= self.tolerance_ns))
            .map(|(m, s)| match s {
                Some(s) => format!("`{m}` (newest stamped {:.6} s)", secs(s.t_ns)),
                None => format!("`{m}` (none yet)"),
            })
            .collect();
        format!(
            "the world accepted {} steps but no pose stamped {:.6} s came within {} ms from {}: Gazebo stopped stepping, or a model's PosePublisher does not publish at each window's end (update_frequency -1 publishes every step)",
            self.steps,
            secs(t_ns),
            timeout.as_millis(),
            lacking.join(", ")
        )
    }
}

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

fn stamped(m: &PoseStamped) -> Option<Stamped> {
    let (p, q) = (&m.pose.position, &m.pose.orientation);
    let values = [p.x, p.y, p.z, q.w, q.x, q.y, q.z];
    if !values.iter().all(|v| v.is_finite()) {
        return None;
    }
    let q = Quaternion::new(q.w, q.x, q.y, q.z);
    let q = if q.norm() > 0.0 {
        UnitQuaternion::from_quaternion(q)
    } else {
        UnitQuaternion::identity()
    };
    Some(Stamped {
        t_ns: i64::from(m.header.stamp.sec) * 1_000_000_000 + i64::from(m.header.stamp.nanosec),
        pose: (Point3::new(p.x, p.y, p.z), q),
    })
}

impl Followed for GazeboPhysics {
    fn mover(&self) -> &str {
        "Gazebo"
    }

    fn peer(&self) -> String {
        format!("Gazebo world `{}` ({})", self.world, self.control_service)
    }

    /// Window 0: the world as loaded, once its control service is there; window k: one
    /// window of steps asked for, then every model's pose stamped k·W.
    async fn poses(&mut self, k: u32, timeout: Duration) -> Result<Vec<Placement>, String> {
        let deadline = Instant::now() + timeout;
        if k == 0 {
            self.wait_available(deadline, timeout).await?;
            return Ok(self.start.clone());
        }
        self.step(deadline, timeout).await?;
        self.poses_at(i64::from(k) * self.window_ns, deadline, timeout)
            .await
    }
}

impl Drop for GazeboPhysics {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.spinner.take() {
            let _ = t.join();
        }
    }
}
