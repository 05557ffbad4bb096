//! The bridge process (`cosim ros-vehicle-bridge`): enters a vehicle's network namespace,
//! then publishes `/clock` and the vehicle's pose there from the lines on its stdin
//! (see [`super::bridge`] for the protocol and why).

use super::{
    bridge::{netns_path, VehicleSample},
    names,
    publisher::qos,
    state::ros_time,
};
use anyhow::Context;
use r2r::{
    builtin_interfaces::msg::Time,
    geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion},
    rosgraph_msgs::msg::Clock,
    std_msgs::msg::Header,
};
use std::{io::BufRead, os::fd::AsRawFd, time::Duration};

#[derive(Debug, Clone)]
pub struct BridgeOptions {
    pub vehicle: String,
    /// Network namespace to enter (a name from `ip netns`); none = stay where we are.
    pub netns: Option<String>,
    /// `ROS_DOMAIN_ID` for the bridge's context (default: inherited).
    pub domain_id: Option<u32>,
    /// Keep DDS discovery on the namespace's loopback (default true).
    pub localhost_only: bool,
    /// Before reading input, wait (up to 30 s) for this many `/clock` subscribers.
    pub wait_for_subscribers: u32,
}

/// Moves the calling thread (and every thread it starts afterwards) into a network namespace.
pub fn enter_netns(name: &str) -> anyhow::Result<()> {
    let path = netns_path(name);
    let f = std::fs::File::open(&path)
        .with_context(|| format!("network namespace {name} ({})", path.display()))?;
    // SAFETY: a valid descriptor of a namespace file; setns only changes this thread's namespace.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    anyhow::ensure!(
        r == 0,
        "setns({}) failed: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
    Ok(())
}

/// The bridge's Fast DDS participant profile: it announces itself every 100 ms.
///
/// A participant whose discovery is loopback-only hears no multicast: it finds the nodes
/// started after it in its namespace only when its own periodic announcement (unicast to the
/// loopback ports of the domain's first participants) reaches them — every 3 s by Fast DDS's
/// default, so a node on sim time started during the run could read 0 on its clock for up to 3 s
/// of wall time (6 s of sim time at twice real time) while its other topics already flowed. At
/// 100 ms a new node has `/clock` within about a tenth of a second; the announcements never
/// leave the namespace's loopback.
const LOOPBACK_PROFILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <profiles>
    <participant profile_name="netsim_vehicle_bridge" is_default_profile="true">
      <rtps>
        <builtin>
          <discovery_config>
            <leaseAnnouncement><sec>0</sec><nanosec>100000000</nanosec></leaseAnnouncement>
          </discovery_config>
        </builtin>
      </rtps>
    </participant>
  </profiles>
</dds>
"#;

/// Fast DDS's profile variables (2.x and 3.x names).
const PROFILE_VARS: [&str; 2] = [
    "FASTRTPS_DEFAULT_PROFILES_FILE",
    "FASTDDS_DEFAULT_PROFILES_FILE",
];

/// Writes [`LOOPBACK_PROFILE`] to a file of this process's own and points Fast DDS at it,
/// unless the environment names a profile already (the user's own DDS set-up wins). Returns
/// the file to remove once the participant exists. Other RMW implementations ignore it.
fn loopback_profile() -> anyhow::Result<Option<std::path::PathBuf>> {
    if PROFILE_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
        return Ok(None);
    }
    let path = std::env::temp_dir().join(format!("netsim-bridge-{}.xml", std::process::id()));
    // A file left by an earlier process of the same id (a link is removed, not followed).
    let _ = std::fs::remove_file(&path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, LOOPBACK_PROFILE.as_bytes()))
        .with_context(|| format!("the bridge's DDS profile {}", path.display()))?;
    for v in PROFILE_VARS {
        std::env::set_var(v, &path);
    }
    Ok(Some(path))
}

/// Runs the bridge on a thread of its own (so the namespace change touches no other thread),
/// until its input ends.
pub fn run(opts: BridgeOptions, input: impl BufRead + Send + 'static) -> anyhow::Result<()> {
    std::thread::spawn(move || bridge(opts, input))
        .join()
        .map_err(|_| anyhow::anyhow!("bridge thread panicked"))?
}

fn bridge(opts: BridgeOptions, input: impl BufRead) -> anyhow::Result<()> {
    if let Some(ns) = &opts.netns {
        enter_netns(ns)?;
    }
    // Before rcl starts DDS: discovery and data stay on this namespace's loopback, and the
    // bridge announces itself there often (see `LOOPBACK_PROFILE`).
    let profile = if opts.localhost_only {
        std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
        loopback_profile()?
    } else {
        None
    };
    if let Some(d) = opts.domain_id {
        std::env::set_var("ROS_DOMAIN_ID", d.to_string());
    }
    let node_name = format!("netsim_bridge_{}", opts.vehicle.replace('-', "_"));
    let node = super::context().and_then(|ctx| {
        r2r::Node::create(ctx, &node_name, "")
            .map_err(|e| anyhow::anyhow!("ROS 2 node {node_name}: {e}"))
    });
    // Fast DDS has read the profile once the node's participant exists (or failed to).
    if let Some(path) = profile {
        let _ = std::fs::remove_file(path);
    }
    let mut node = node?;
    let clock = node
        .create_publisher::<Clock>(names::CLOCK, qos::clock())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let pose = node
        .create_publisher::<PoseStamped>(&names::pose_topic(&opts.vehicle), qos::pose())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while clock
        .get_inter_process_subscription_count()
        .map_err(|e| anyhow::anyhow!("{e}"))?
        < opts.wait_for_subscribers as usize
    {
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "no /clock subscriber in 30 s"
        );
        node.spin_once(Duration::from_millis(50));
    }
    if opts.wait_for_subscribers > 0 {
        std::thread::sleep(Duration::from_millis(300)); // the pose topic's matching as well
    }
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")?;
        out.flush()?;
    }
    tracing::info!(
        "bridge {node_name}: /clock and {} in namespace {:?}",
        names::pose_topic(&opts.vehicle),
        opts.netns
    );
    for line in input.lines() {
        let line = line.context("reading the coordinator's samples")?;
        if line.trim().is_empty() {
            continue;
        }
        let s = VehicleSample::parse(&line).map_err(|e| anyhow::anyhow!("bad sample: {e}"))?;
        let (sec, nanosec) = ros_time(s.start_ns);
        let stamp = Time { sec, nanosec };
        clock
            .publish(&Clock {
                clock: stamp.clone(),
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let p = s.pose;
        pose.publish(&PoseStamped {
            header: Header {
                stamp,
                frame_id: names::MAP_FRAME.into(),
            },
            pose: Pose {
                position: Point {
                    x: p[0],
                    y: p[1],
                    z: p[2],
                },
                orientation: Quaternion {
                    x: p[4],
                    y: p[5],
                    z: p[6],
                    w: p[3],
                },
            },
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        node.spin_once(Duration::ZERO);
    }
    // Give reliable samples time to reach their subscribers before the participant goes.
    for _ in 0..25 {
        node.spin_once(Duration::from_millis(20));
    }
    Ok(())
}
