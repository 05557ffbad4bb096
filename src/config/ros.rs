//! The ROS 2 settings of the vehicles' stacks: the top-level `ros` and each vehicle's
//! `vehicles[].ros`, and the environment variables a vehicle's programs get from them.

use schemars::JsonSchema;
use serde::Deserialize;

/// ROS 2 settings of a vehicle's stack (top-level `ros` for every vehicle, `vehicles[].ros` for
/// one). The programs of the vehicle (`programs[]` with its `vehicle`, and commands started in
/// it with `cosim exec`) get them as environment variables: `ROS_DOMAIN_ID`,
/// `ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET` (peers over the vehicle's interface, whatever the
/// caller's shell set), `COSIM_ROS_NAMESPACE`, `COSIM_ROS_USE_SIM_TIME` and `COSIM_ROS_ARGS`
/// (ROS 2 reads no environment variable for a node's namespace or for `use_sim_time`: a
/// program passes `$COSIM_ROS_ARGS` to its node).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RosSettings {
    /// The DDS domain (`ROS_DOMAIN_ID`, 0–232) of the vehicle's programs and of its `/clock`
    /// bridge. Absent: the one the run has from its environment (0 without).
    #[serde(default)]
    #[schemars(range(min = 0, max = 232))]
    pub domain_id: Option<u32>,
    /// `true`: the run serves `/clock` (sim time) on the vehicle's own loopback, inside its
    /// network namespace `ncs-<vehicle>` (needs `network.capture: tun` and a build with the
    /// `ros` feature), and its programs get `COSIM_ROS_USE_SIM_TIME=true` and `-p
    /// use_sim_time:=true` in `COSIM_ROS_ARGS`. Absent: `false`.
    #[serde(default)]
    pub use_sim_time: Option<bool>,
    /// The ROS namespace of the vehicle's nodes: absolute (`/auv1`, `/fleet/auv1`), tokens of
    /// letters, digits and `_` not starting with a digit. Its programs get it as
    /// `COSIM_ROS_NAMESPACE` and `-r __ns:=<namespace>` in `COSIM_ROS_ARGS`. Absent: none.
    #[serde(default)]
    pub namespace: Option<String>,
}

impl RosSettings {
    /// These settings with every key absent here taken from `defaults`.
    pub fn or(&self, defaults: &RosSettings) -> RosSettings {
        RosSettings {
            domain_id: self.domain_id.or(defaults.domain_id),
            use_sim_time: self.use_sim_time.or(defaults.use_sim_time),
            namespace: self.namespace.clone().or(defaults.namespace.clone()),
        }
    }

    /// Whether the vehicle runs on sim time (`use_sim_time: true`).
    pub fn sim_time(&self) -> bool {
        self.use_sim_time == Some(true)
    }

    /// The environment variables a program of the vehicle gets (see [`RosSettings`]).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        let mut args = Vec::new();
        if let Some(d) = self.domain_id {
            env.push(("ROS_DOMAIN_ID".to_owned(), d.to_string()));
        }
        if let Some(ns) = &self.namespace {
            env.push(("COSIM_ROS_NAMESPACE".to_owned(), ns.clone()));
            args.push(format!("-r __ns:={ns}"));
        }
        if let Some(t) = self.use_sim_time {
            env.push(("COSIM_ROS_USE_SIM_TIME".to_owned(), t.to_string()));
            args.push(format!("-p use_sim_time:={t}"));
        }
        if !args.is_empty() {
            env.push((
                "COSIM_ROS_ARGS".to_owned(),
                format!("--ros-args {}", args.join(" ")),
            ));
        }
        if !env.is_empty() {
            env.push((
                "ROS_AUTOMATIC_DISCOVERY_RANGE".to_owned(),
                "SUBNET".to_owned(),
            ));
        }
        env
    }
}
