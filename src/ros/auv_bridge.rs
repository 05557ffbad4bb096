//! The ROS 2 side of the ZeroMQ AUV simulator interface (binary `auv_bridge`, node
//! `auv_bridge`): a client of the interface, so it works the same against the embedded server
//! (`cosim run` with thruster-driven vehicles) and against an external simulator followed by the
//! client adapter (then its thruster frames go to the adapter's forwarding port). Per vehicle
//! with `motion: {kind: thrusters}`:
//!
//! | topic | type | |
//! |---|---|---|
//! | `/<vehicle>/thrusters` | std_msgs/Int8MultiArray | in: `[left, right, side, vertical]`, each in [−100, 100], −127 keeps that thruster |
//! | `/<vehicle>/auv/pose` | geometry_msgs/PoseStamped | each telemetry message, frame `map` |
//! | `/<vehicle>/auv/odom` | nav_msgs/Odometry | the same pose, and the velocity from the last two (map frame, child `<vehicle>/base_link`) |
//! | `/<vehicle>/camera/front/image/compressed`, `/<vehicle>/camera/bottom/image/compressed` | sensor_msgs/CompressedImage | format `jpeg` |
//!
//! Stamps are sim time: the newest `/clock` (the coordinator's) when the message arrived.
//! A thruster message of the wrong length or with a power out of range is refused, logged and
//! counted, never sent.

use crate::config::LoadedScenario;
use crate::wire::auv::{Telemetry, ThrusterCommand};
use futures::StreamExt;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion, Twist, Vector3};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::CompressedImage;
use r2r::std_msgs::msg::{Header, Int8MultiArray};
use r2r::QosProfile;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

/// Where the bridge finds the interface.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub images: String,
    pub thrusters: String,
    pub telemetry: String,
}

impl Endpoints {
    /// The scenario's `auv_interface` ports on `host`.
    pub fn of(loaded: &LoadedScenario, host: &str) -> Endpoints {
        let a = &loaded.scenario.auv_interface;
        let ep = |port: u16| crate::io::simulators::auv_server::tcp_endpoint(host, port);
        Endpoints {
            images: ep(a.images_port),
            thrusters: ep(a.thrusters_port),
            telemetry: ep(a.telemetry_port),
        }
    }
}

struct Vehicle {
    name: String,
    pose: r2r::Publisher<PoseStamped>,
    odom: r2r::Publisher<Odometry>,
    front: r2r::Publisher<CompressedImage>,
    bottom: r2r::Publisher<CompressedImage>,
    /// The last telemetry and its sim time (ns), for the velocity.
    last: Option<(Telemetry, i64)>,
}

fn stamp(ns: i64) -> Time {
    Time {
        sec: ns.div_euclid(1_000_000_000) as i32,
        nanosec: ns.rem_euclid(1_000_000_000) as u32,
    }
}

/// A thruster message (`[left, right, side, vertical]`) as a frame for AUV `id`, or why not.
pub fn thruster_frame(id: u8, data: &[i8]) -> Result<ThrusterCommand, String> {
    let &[l, r, s, v] = data else {
        return Err(format!(
            "{} values, expected 4 (left, right, side, vertical)",
            data.len()
        ));
    };
    let mut frame = [id, 0, 0, 0, 0];
    for (b, p) in frame[1..].iter_mut().zip([l, r, s, v]) {
        *b = p as u8;
    }
    ThrusterCommand::parse(&frame).map_err(|e| e.to_string())
}

/// Runs the bridge until `stop` resolves.
pub async fn run(
    loaded: &LoadedScenario,
    endpoints: Endpoints,
    mut node: r2r::Node,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let err = |what: String| move |e: r2r::Error| anyhow::anyhow!("ROS 2: {what}: {e}");
    let sim_ns = Arc::new(AtomicI64::new(0));
    let mut clock = node
        .subscribe::<r2r::rosgraph_msgs::msg::Clock>("/clock", QosProfile::default().keep_last(1))
        .map_err(err("/clock".into()))?;
    let mut vehicles: HashMap<u8, Vehicle> = HashMap::new();
    let mut commands = Vec::new();
    for v in &loaded.scenario.vehicles {
        let Some(auv_id) = v.motion.auv_id() else {
            continue;
        };
        let n = &v.name;
        let t = |suffix: &str| format!("/{n}/{suffix}");
        let sensor = QosProfile::sensor_data();
        vehicles.insert(
            auv_id,
            Vehicle {
                name: n.clone(),
                pose: node
                    .create_publisher(&t("auv/pose"), QosProfile::default())
                    .map_err(err(t("auv/pose")))?,
                odom: node
                    .create_publisher(&t("auv/odom"), QosProfile::default())
                    .map_err(err(t("auv/odom")))?,
                front: node
                    .create_publisher(&t("camera/front/image/compressed"), sensor.clone())
                    .map_err(err(t("camera/front")))?,
                bottom: node
                    .create_publisher(&t("camera/bottom/image/compressed"), sensor)
                    .map_err(err(t("camera/bottom")))?,
                last: None,
            },
        );
        let sub = node
            .subscribe::<Int8MultiArray>(&t("thrusters"), QosProfile::default())
            .map_err(err(t("thrusters")))?;
        commands.push(sub.map(move |m| (auv_id, m)).boxed());
    }
    anyhow::ensure!(
        !vehicles.is_empty(),
        "the scenario has no vehicle with `motion: {{kind: thrusters}}`"
    );
    let mut telemetry = zeromq::SubSocket::new();
    telemetry.connect(&endpoints.telemetry).await?;
    telemetry.subscribe("").await?;
    let mut images = zeromq::SubSocket::new();
    images.connect(&endpoints.images).await?;
    images.subscribe("").await?;
    let mut push = zeromq::PushSocket::new();
    push.connect(&endpoints.thrusters).await?;
    tracing::info!(
        "AUV bridge: telemetry {}, images {}, thrusters {}",
        endpoints.telemetry,
        endpoints.images,
        endpoints.thrusters
    );

    let stop_spin = Arc::new(AtomicBool::new(false));
    let spinning = stop_spin.clone();
    let spinner = std::thread::spawn(move || {
        while !spinning.load(Ordering::Relaxed) {
            node.spin_once(Duration::from_millis(5));
        }
    });
    let clock_ns = sim_ns.clone();
    let clock_task = tokio::spawn(async move {
        while let Some(c) = clock.next().await {
            clock_ns.store(
                i64::from(c.clock.sec) * 1_000_000_000 + i64::from(c.clock.nanosec),
                Ordering::Relaxed,
            );
        }
    });
    let refused = Arc::new(AtomicU64::new(0));
    let mut commands = futures::stream::select_all(commands);
    let names: HashMap<u8, String> = vehicles
        .iter()
        .map(|(id, v)| (*id, v.name.clone()))
        .collect();
    let refusals = refused.clone();
    let forward = tokio::spawn(async move {
        while let Some((id, m)) = commands.next().await {
            match thruster_frame(id, &m.data) {
                Ok(c) => {
                    if let Err(e) = push.send(ZmqMessage::from(c.emit().to_vec())).await {
                        tracing::warn!("AUV bridge: thruster frame for {}: {e}", names[&id]);
                    }
                }
                Err(e) => {
                    refusals.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!("AUV bridge: /{}/thrusters refused: {e}", names[&id]);
                }
            }
        }
    });
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            m = telemetry.recv() => {
                let Ok(m) = m else { continue };
                let parts: Vec<&[u8]> = m.iter().map(|b| &b[..]).collect();
                match Telemetry::parse_message(&parts) {
                    Ok((id, t)) => if let Some(v) = vehicles.get_mut(&id) {
                        publish_telemetry(v, t, sim_ns.load(Ordering::Relaxed));
                    },
                    Err(e) => tracing::warn!("AUV bridge: telemetry not used: {e}"),
                }
            }
            m = images.recv() => {
                let Ok(m) = m else { continue };
                let parts: Vec<&[u8]> = m.iter().map(|b| &b[..]).collect();
                if let [&[id], front, bottom] = parts[..] {
                    if let Some(v) = vehicles.get(&id) {
                        let header = Header { stamp: stamp(sim_ns.load(Ordering::Relaxed)), frame_id: format!("{}/base_link", v.name) };
                        let img = |data: &[u8]| CompressedImage { header: header.clone(), format: "jpeg".into(), data: data.to_vec() };
                        let _ = v.front.publish(&img(front));
                        let _ = v.bottom.publish(&img(bottom));
                    }
                } else {
                    tracing::warn!("AUV bridge: an image message of {} parts, expected 3", parts.len());
                }
            }
        }
    }
    forward.abort();
    clock_task.abort();
    stop_spin.store(true, Ordering::Relaxed);
    let _ = spinner.join();
    tracing::info!(
        "AUV bridge: {} thruster messages refused",
        refused.load(Ordering::Relaxed)
    );
    Ok(())
}

fn publish_telemetry(v: &mut Vehicle, t: Telemetry, now_ns: i64) {
    let q = nalgebra::UnitQuaternion::from_euler_angles(
        f64::from(t.roll),
        f64::from(t.pitch),
        f64::from(t.yaw),
    );
    let pose = Pose {
        position: Point {
            x: f64::from(t.x),
            y: f64::from(t.y),
            z: f64::from(t.z),
        },
        orientation: Quaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        },
    };
    let header = Header {
        stamp: stamp(now_ns),
        frame_id: crate::ros::names::MAP_FRAME.into(),
    };
    let _ = v.pose.publish(&PoseStamped {
        header: header.clone(),
        pose: pose.clone(),
    });
    let mut twist = Twist::default();
    if let Some((prev, prev_ns)) = v.last {
        let dt = (now_ns - prev_ns) as f64 / 1e9;
        if dt > 0.0 {
            let d = |a: f32, b: f32| f64::from(a - b) / dt;
            twist.linear = Vector3 {
                x: d(t.x, prev.x),
                y: d(t.y, prev.y),
                z: d(t.z, prev.z),
            };
            let dyaw = crate::model::pose::wrap_pi(f64::from(t.yaw - prev.yaw));
            twist.angular = Vector3 {
                x: 0.0,
                y: 0.0,
                z: dyaw / dt,
            };
        }
    }
    v.last = Some((t, now_ns));
    let mut odom = Odometry {
        header,
        child_frame_id: crate::ros::names::base_link(&v.name),
        ..Default::default()
    };
    odom.pose.pose = pose;
    odom.pose.covariance = vec![0.0; 36];
    odom.twist.twist = twist;
    odom.twist.covariance = vec![0.0; 36];
    let _ = v.odom.publish(&odom);
}
