//! The ROS 2 layer. It only observes: as a participant of the run ([`crate::coord::Participant`])
//! it gets every completed window from the physics coordinator and publishes what the model
//! already knows.
//!
//! Always compiled (no ROS needed, unit-tested): [`state`] turns a window's ChannelData and
//! network END into per-vehicle poses and per-pair link states; [`params`] holds the node
//! parameters; [`bridge`] is the line protocol and the parent side of the per-vehicle bridges
//! that serve `/clock` inside each vehicle's network namespace.
//!
//! With the cargo feature `ros` (r2r, links rcl): [`publisher`] publishes `/clock`, poses,
//! `/tf`, `/netsim/paths`, `/diagnostics` and `/netsim/channel_data`; [`node`] creates the
//! nodes of the three binaries and reads their parameters; [`vehicle`] is the bridge process;
//! [`auv_bridge`] the ROS 2 side of the ZeroMQ AUV simulator interface (binary `auv_bridge`);
//! [`context`] initialises rcl for them all.
pub mod bridge;
pub mod params;
pub mod state;

#[cfg(feature = "ros")]
pub mod auv_bridge;
#[cfg(feature = "ros")]
pub mod node;
#[cfg(feature = "ros")]
pub mod publisher;
#[cfg(feature = "ros")]
pub mod vehicle;

/// A ROS 2 context (rcl initialised). Where that fails for the commonest reason, a folder rcl
/// cannot write its log to (a container's user whose home is not writable), the error names
/// the folder and the variable that moves it.
#[cfg(feature = "ros")]
pub fn context() -> anyhow::Result<r2r::Context> {
    r2r::Context::create().map_err(|e| {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from)
        };
        let log = var("ROS_LOG_DIR")
            .or_else(|| var("ROS_HOME").map(|h| h.join("log")))
            .or_else(|| var("HOME").map(|h| h.join(".ros/log")));
        match log.map(|dir| (std::fs::create_dir_all(&dir), dir)) {
            Some((Err(io), dir)) => anyhow::anyhow!(
                "ROS 2 context: {e}: rcl writes its log to {} (ROS_LOG_DIR, else ROS_HOME/log, \
                 else ~/.ros/log), which cannot be made ({io}): set ROS_LOG_DIR to a folder \
                 this user may write",
                dir.display()
            ),
            _ => anyhow::anyhow!("ROS 2 context: {e}"),
        }
    })
}

// A filter (IDL_PACKAGE_FILTER) without rosgraph_msgs would build r2r without sim-time
// support and silently ignore `use_sim_time`: refuse to compile instead.
#[cfg(feature = "ros")]
r2r::assert_compiled_with_use_sim_time_support!();

/// Topic names and frames (one place, so the book's ROS 2 reference, docs/src/reference/ros.md,
/// and the tests agree).
pub mod names {
    pub const CLOCK: &str = "/clock";
    pub const TF: &str = "/tf";
    pub const PATHS: &str = "/netsim/paths";
    pub const DIAGNOSTICS: &str = "/diagnostics";
    pub const CHANNEL_DATA: &str = "/netsim/channel_data";
    /// The fixed frame: local ENU at the scenario's origin.
    pub const MAP_FRAME: &str = "map";

    pub fn pose_topic(vehicle: &str) -> String {
        format!("/{vehicle}/pose")
    }

    pub fn base_link(vehicle: &str) -> String {
        format!("{vehicle}/base_link")
    }
}
