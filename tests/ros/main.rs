//! The tests of the ROS 2 layer, in a build with `--features ros` (`--features gazebo` adds the
//! runs with Gazebo as the physics simulator): rclpy nodes against the real binaries, the Gazebo
//! coupling against a stand-in, the AUV bridge, the book's pages whose runs need it, and the
//! default scenario, whose vessels run on sim time. The Python nodes and scenarios they run are
//! in this folder. `cargo test --features ros --test ros`; one module with e.g.
//! `cargo test --features ros --test ros ros_gazebo::`.
//!
//! The default scenario's tests that need no ROS 2 (Ctrl-C on the soak scenario, an output
//! folder holding one run) and the static checks of the ROS 2 package (`launch`) also run in
//! the default build, so this binary is built by both and holds only those without the feature.

#[cfg(feature = "ros")]
#[path = "../book_commands/mod.rs"]
mod book_commands;
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "ros")]
#[path = "../ros_common/mod.rs"]
mod ros_common;

mod default_scenario;
mod launch;
#[cfg(feature = "ros")]
mod ros;
#[cfg(feature = "ros")]
mod ros_auv_bridge;
#[cfg(feature = "ros")]
mod ros_gazebo;
#[cfg(feature = "ros")]
mod tutorials_ros;
