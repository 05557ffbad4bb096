//! The ROS 2 publishers fed by the physics coordinator (a [`Participant`]).
//!
//! | topic | type | QoS | content |
//! |---|---|---|---|
//! | `/clock` | rosgraph_msgs/Clock | reliable, keep-last 1 | the window's start k·W, every window |
//! | `/<vehicle>/pose` | geometry_msgs/PoseStamped | best effort, keep-last 5 (sensor data) | frame `map` (ENU) |
//! | `/tf` | tf2_msgs/TFMessage | reliable, keep-last 100 | map → `<vehicle>/base_link` for every vehicle |
//! | `/netsim/paths` | visualization_msgs/MarkerArray | reliable, keep-last 1 | per pair a LINE_STRIP (green LOS, red NLOS) and a SPHERE_LIST of its hop points |
//! | `/diagnostics` | diagnostic_msgs/DiagnosticArray | reliable, keep-last 10 | one status per pair |
//! | `/netsim/channel_data` | std_msgs/UInt8MultiArray | reliable, keep-last 10 | the serialized `rosnetsim.ChannelData` |
//!
//! Every stamp is sim time (the window's start), so the topics line up with `/clock`.

use super::{
    names,
    state::{ros_time, HeldLinks, PairState, Vehicles, WindowState},
};
use crate::coord::{Ended, Participant, WindowView};
use r2r::{
    builtin_interfaces::msg::Time,
    diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue},
    geometry_msgs::msg::{
        Point, Pose, PoseStamped, Quaternion, Transform, TransformStamped, Vector3,
    },
    rosgraph_msgs::msg::Clock,
    std_msgs::msg::{ColorRGBA, Header, MultiArrayDimension, MultiArrayLayout, UInt8MultiArray},
    tf2_msgs::msg::TFMessage,
    visualization_msgs::msg::{Marker, MarkerArray},
    Publisher,
};
use std::time::{Duration, Instant};

/// QoS of each topic, and why (also in the book: docs/src/reference/ros.md).
pub mod qos {
    use r2r::QosProfile;
    /// Reliable keep-last 1: a clock consumer needs the newest time, never a backlog.
    pub fn clock() -> QosProfile {
        QosProfile::default().reliable().keep_last(1)
    }
    /// Sensor-data style: best effort, keep-last 5; a lost pose is superseded next window.
    pub fn pose() -> QosProfile {
        QosProfile::sensor_data()
    }
    /// Reliable keep-last 100, as tf2's broadcasters use.
    pub fn tf() -> QosProfile {
        QosProfile::default().reliable().keep_last(100)
    }
    /// Reliable keep-last 1: only the current picture matters to RViz.
    pub fn markers() -> QosProfile {
        QosProfile::default().reliable().keep_last(1)
    }
    /// Reliable keep-last 10 (the diagnostics aggregator's default depth).
    pub fn diagnostics() -> QosProfile {
        QosProfile::default().reliable().keep_last(10)
    }
    /// Reliable keep-last 10: meant for rosbag, which subscribes reliably.
    pub fn channel_data() -> QosProfile {
        QosProfile::default().reliable().keep_last(10)
    }
}

pub struct RosPublisher {
    node: r2r::Node,
    vehicles: Vehicles,
    clock: Publisher<Clock>,
    poses: Vec<Publisher<PoseStamped>>,
    tf: Publisher<TFMessage>,
    paths: Publisher<MarkerArray>,
    diagnostics: Publisher<DiagnosticArray>,
    channel_data: Publisher<UInt8MultiArray>,
    /// The network simulator's link states, held from window to window.
    links: HeldLinks,
    /// How long to keep the node alive after the last window so late samples get out.
    pub linger: Duration,
}

fn err(e: r2r::Error) -> anyhow::Error {
    anyhow::anyhow!("ROS 2: {e}")
}

impl RosPublisher {
    pub fn new(mut node: r2r::Node, vehicles: Vehicles) -> anyhow::Result<RosPublisher> {
        let poses = vehicles
            .names
            .iter()
            .map(|v| node.create_publisher::<PoseStamped>(&names::pose_topic(v), qos::pose()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        Ok(RosPublisher {
            clock: node
                .create_publisher(names::CLOCK, qos::clock())
                .map_err(err)?,
            tf: node.create_publisher(names::TF, qos::tf()).map_err(err)?,
            paths: node
                .create_publisher(names::PATHS, qos::markers())
                .map_err(err)?,
            diagnostics: node
                .create_publisher(names::DIAGNOSTICS, qos::diagnostics())
                .map_err(err)?,
            channel_data: node
                .create_publisher(names::CHANNEL_DATA, qos::channel_data())
                .map_err(err)?,
            poses,
            node,
            links: HeldLinks::new(vehicles.names.len()),
            vehicles,
            linger: Duration::from_millis(500),
        })
    }

    /// Blocks until `/clock` has `n` subscribers in other processes, or `timeout` passes.
    pub fn wait_for_clock_subscribers(&mut self, n: u32, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let have = self
                .clock
                .get_inter_process_subscription_count()
                .map_err(err)?;
            if have >= n as usize {
                tracing::info!("/clock has {have} subscriber(s)");
                // Let the other topics' matching finish as well.
                std::thread::sleep(Duration::from_millis(300));
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "/clock has {have} of {n} subscribers after {timeout:?}"
            );
            self.node.spin_once(Duration::from_millis(50));
        }
    }

    /// Whether any topic has a subscriber in another process (a count that cannot be read
    /// counts as one).
    fn listened(&self) -> bool {
        fn any(count: r2r::Result<usize>) -> bool {
            count.map_or(true, |n| n > 0)
        }
        any(self.clock.get_inter_process_subscription_count())
            || self
                .poses
                .iter()
                .any(|p| any(p.get_inter_process_subscription_count()))
            || any(self.tf.get_inter_process_subscription_count())
            || any(self.paths.get_inter_process_subscription_count())
            || any(self.diagnostics.get_inter_process_subscription_count())
            || any(self.channel_data.get_inter_process_subscription_count())
    }

    fn publish(&mut self, s: &WindowState, channel_bytes: Vec<u8>) -> Result<(), r2r::Error> {
        let (sec, nanosec) = ros_time(s.start_ns);
        let stamp = Time { sec, nanosec };
        let header = |frame: &str| Header {
            stamp: stamp.clone(),
            frame_id: frame.to_string(),
        };
        self.clock.publish(&Clock {
            clock: stamp.clone(),
        })?;
        let mut transforms = Vec::with_capacity(s.poses.len());
        for (i, p) in s.poses.iter().enumerate() {
            let [x, y, z] = p.position;
            let [qw, qx, qy, qz] = p.orientation;
            let orientation = Quaternion {
                x: qx,
                y: qy,
                z: qz,
                w: qw,
            };
            self.poses[i].publish(&PoseStamped {
                header: header(names::MAP_FRAME),
                pose: Pose {
                    position: Point { x, y, z },
                    orientation: orientation.clone(),
                },
            })?;
            transforms.push(TransformStamped {
                header: header(names::MAP_FRAME),
                child_frame_id: names::base_link(&self.vehicles.names[i]),
                transform: Transform {
                    translation: Vector3 { x, y, z },
                    rotation: orientation,
                },
            });
        }
        self.tf.publish(&TFMessage { transforms })?;
        let markers = s
            .pairs
            .iter()
            .enumerate()
            .flat_map(|(k, p)| path_markers(k, p, &header(names::MAP_FRAME)))
            .collect();
        self.paths.publish(&MarkerArray { markers })?;
        let status = s
            .pairs
            .iter()
            .map(|p| link_status(p, &self.vehicles.names))
            .collect();
        self.diagnostics.publish(&DiagnosticArray {
            header: header(""),
            status,
        })?;
        let len = channel_bytes.len() as u32;
        self.channel_data.publish(&UInt8MultiArray {
            layout: MultiArrayLayout {
                dim: vec![MultiArrayDimension {
                    label: channel_data_label(s.window, s.start_ns),
                    size: len,
                    stride: len,
                }],
                data_offset: 0,
            },
            data: channel_bytes,
        })?;
        Ok(())
    }
}

/// The label of `/netsim/channel_data`'s one dimension: the protobuf type, window and sim time.
pub fn channel_data_label(window: u32, start_ns: u64) -> String {
    format!("rosnetsim.ChannelData window={window} t_ns={start_ns}")
}

const GREEN: ColorRGBA = ColorRGBA {
    r: 0.1,
    g: 0.8,
    b: 0.1,
    a: 1.0,
};
const RED: ColorRGBA = ColorRGBA {
    r: 0.9,
    g: 0.1,
    b: 0.1,
    a: 1.0,
};

/// The pair's path (id 2k, namespace `netsim_paths`) and hop points (id 2k+1, `netsim_hops`).
fn path_markers(k: usize, p: &PairState, header: &Header) -> [Marker; 2] {
    let points: Vec<Point> = p
        .path
        .iter()
        .map(|h| Point {
            x: h[0],
            y: h[1],
            z: h[2],
        })
        .collect();
    let color = if p.los { GREEN } else { RED };
    let identity = Pose {
        orientation: Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        },
        ..Default::default()
    };
    let line = Marker {
        header: header.clone(),
        ns: "netsim_paths".into(),
        id: 2 * k as i32,
        type_: Marker::LINE_STRIP as i32,
        action: Marker::ADD as i32,
        pose: identity.clone(),
        scale: Vector3 {
            x: 0.5,
            y: 0.0,
            z: 0.0,
        },
        color: color.clone(),
        points: points.clone(),
        ..Default::default()
    };
    let hops = Marker {
        header: header.clone(),
        ns: "netsim_hops".into(),
        id: 2 * k as i32 + 1,
        type_: Marker::SPHERE_LIST as i32,
        action: Marker::ADD as i32,
        pose: identity,
        scale: Vector3 {
            x: 2.0,
            y: 2.0,
            z: 2.0,
        },
        color,
        points,
        ..Default::default()
    };
    [line, hops]
}

/// One DiagnosticStatus per pair: `netsim/link/<a>-<b>`, OK when LOS, WARN when NLOS; the link
/// model's figures (`snr_db`, `per`, `delay_ms`, `rate_bps`) are the held link state of a → b
/// (`n/a` where the network simulator reported none).
fn link_status(p: &PairState, names: &[String]) -> DiagnosticStatus {
    let kv = |key: &str, value: String| KeyValue {
        key: key.into(),
        value,
    };
    let opt = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_else(|| "n/a".into());
    let (a, b) = (&names[p.a], &names[p.b]);
    let t = &p.traffic;
    DiagnosticStatus {
        level: if p.los {
            DiagnosticStatus::OK as u8
        } else {
            DiagnosticStatus::WARN as u8
        },
        name: format!("netsim/link/{a}-{b}"),
        message: format!(
            "{} {:.1} m, {:.1} dB",
            if p.los { "LOS" } else { "NLOS" },
            p.distance_m,
            p.loss_db
        ),
        hardware_id: format!("{a}-{b}"),
        values: vec![
            kv("distance_m", format!("{}", p.distance_m)),
            kv("los", p.los.to_string()),
            kv("loss_db", format!("{}", p.loss_db)),
            kv("hops", p.path.len().to_string()),
            kv(&format!("delivered_{a}_to_{b}"), t.delivered_ab.to_string()),
            kv(&format!("delivered_{b}_to_{a}"), t.delivered_ba.to_string()),
            kv(&format!("dropped_{a}_to_{b}"), t.dropped_ab.to_string()),
            kv(&format!("dropped_{b}_to_{a}"), t.dropped_ba.to_string()),
            kv("snr_db", opt(p.model.snr_db)),
            kv("per", opt(p.model.per)),
            kv("delay_ms", opt(p.model.delay_s.map(|d| d * 1e3))),
            kv("rate_bps", opt(p.model.rate_bps)),
        ],
    }
}

impl Participant for RosPublisher {
    fn window(&mut self, view: &WindowView<'_>, _ended: &mut Ended) -> anyhow::Result<()> {
        self.links.update(view.network_end);
        // A DDS writer sends to its matched readers only: with none on any topic nothing would
        // leave the process, so the window's messages are not built.
        if !self.listened() {
            return Ok(());
        }
        let mut state = self.vehicles.window(
            view.open.window,
            view.open.start_ns,
            &view.open.channel,
            view.network_end,
        );
        for p in &mut state.pairs {
            p.model = self.links.figures(p.a, p.b);
        }
        self.publish(&state, view.open.channel.data().encode_to_vec())
            .map_err(err)?;
        Ok(())
    }

    fn stop(&mut self) {
        let until = Instant::now() + self.linger;
        while Instant::now() < until {
            self.node.spin_once(Duration::from_millis(20));
        }
    }
}
