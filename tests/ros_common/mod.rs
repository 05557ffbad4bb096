//! What the tests with ROS 2 nodes (`tests/ros/ros.rs`, `tests/ros/ros_gazebo.rs`,
//! `tests/ros/ros_auv_bridge.rs`, `tests/live/agents.rs`) share: the binaries and Python to run,
//! and a DDS domain per test.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::atomic::{AtomicU32, Ordering},
};

#[allow(dead_code)]
pub const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

#[allow(dead_code)]
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python when there is one, else the sourced ROS 2's python3.
#[allow(dead_code)]
pub fn python() -> PathBuf {
    match std::env::var_os("NETSIM_ROS_VENV") {
        Some(v) => Path::new(&v).join("bin/python"),
        None if repo().join(".ros/bin/python").exists() => repo().join(".ros/bin/python"),
        None => "python3".into(),
    }
}

/// A DDS domain of its own per test (tests run in parallel), discovery on loopback only.
#[allow(dead_code)]
pub fn domain() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    (20 + (std::process::id() % 40) * 4 + NEXT.fetch_add(1, Ordering::SeqCst) % 4).to_string()
}

#[allow(dead_code)]
pub fn ros_env(cmd: &mut Command, domain: &str) {
    cmd.env("ROS_DOMAIN_ID", domain)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
}
