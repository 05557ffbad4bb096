//! The commands of the book's pages that need a build with the `ros` feature, run as a reader
//! runs them: the ROS 2 tutorial (`docs/src/tutorials/ros2-node.md`: its run serves `/clock`
//! inside the vehicles, `ros: {use_sim_time: true}`, and its nodes need rclpy), and the pages
//! that run the default scenario, whose vessels are on sim time (the first run, ns-3, the record
//! how-to, watching a run), and "your stack in a vehicle" (processes, a podman container,
//! ROS 2 nodes on sim time). How the pages mark their commands and the output they show:
//! `tests/book_commands/mod.rs`; the other tutorials run in `tests/live/tutorials.rs`.

use crate::book_commands;

use book_commands::PageRun;
use std::{process::Command, time::Duration};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

/// Runs `page` as root, alone, with `tools` required on the PATH.
fn page(rel: &str, tools: &[&str]) -> PageRun {
    let _one = book_commands::root_and_alone();
    book_commands::require_tools(tools, "scripts/setup --test");
    book_commands::run_page(rel, COSIM, Duration::from_secs(150))
}

/// The page ran `run` commands, showed `not_run` without running them, and had at least
/// `outputs` of its shown outputs checked.
fn assert_counts(rel: &str, r: &PageRun, run: usize, not_run: usize, outputs: usize) {
    assert_eq!(
        (r.commands_run, r.commands_not_run),
        (run, not_run),
        "{rel}: commands run and shown only"
    );
    assert!(
        r.outputs_checked >= outputs,
        "{rel}: {} outputs checked, expected {outputs}",
        r.outputs_checked
    );
}

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

#[test]
fn first_run() {
    let rel = "tutorials/first-run.md";
    let r = page(rel, &["iperf3", "python3", "tshark"]);
    assert_counts(rel, &r, 10, 0, 9);
}

#[test]
fn ns3() {
    let rel = "tutorials/ns3.md";
    let ns3 = std::path::Path::new(COSIM)
        .parent()
        .and_then(|d| d.parent())
        .map(|t| t.join("ns3/netsim-ns3"))
        .unwrap();
    assert!(
        ns3.exists(),
        "{} is missing: scripts/setup --ns3 builds it",
        ns3.display()
    );
    let r = page(rel, &["iperf3", "python3"]);
    assert_counts(rel, &r, 4, 1, 4);
}

#[test]
fn record_python() {
    let rel = "howto/record-python.md";
    let r = page(rel, &["iperf3", "python3"]);
    assert_counts(rel, &r, 5, 0, 3);
}

#[test]
fn watching() {
    let rel = "tutorials/watching.md";
    let r = page(rel, &["python3"]);
    assert_counts(rel, &r, 9, 0, 4);
}

#[test]
fn your_stack() {
    let rel = "tutorials/your-stack.md";
    let r = page(rel, &["python3", "podman", "busybox"]);
    assert_counts(rel, &r, 12, 0, 5);
}
