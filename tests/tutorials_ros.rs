//! The commands of the book's ROS 2 tutorial (`docs/src/tutorials/ros2-node.md`), run as a
//! reader runs them: its run serves `/clock` inside the vehicles (`ros: {use_sim_time: true}`), which
//! needs a build with the `ros` feature, and its nodes need rclpy. How the page marks its
//! commands and the output it shows: `tests/book_commands/mod.rs`; the other tutorials run in
//! `tests/tutorials.rs`.

mod book_commands;

use std::{process::Command, time::Duration};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

#[test]
fn ros2_node() {
    let rel = "tutorials/ros2-node.md";
    let _one = book_commands::root_and_alone();
    let rclpy = Command::new("python3")
        .args(["-c", "import rclpy, std_msgs.msg, geometry_msgs.msg"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        rclpy,
        "python3 on the PATH has no rclpy: source .ros/env.sh (scripts/setup --ros) or a ROS 2 installation"
    );
    let r = book_commands::run_page(rel, COSIM, Duration::from_secs(120));
    assert_eq!(
        (r.commands_run, r.commands_not_run),
        (3, 3),
        "{rel}: commands run and shown only"
    );
    assert!(r.outputs_checked >= 3, "{rel}: {r:?}");
}
