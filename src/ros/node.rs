//! The nodes of the three binaries: `netsim_cosim` (`cosim run`), `physics_coordinator` and
//! `network_coordinator`. rcl reads `--ros-args` (remaps, `--params-file`) from the process's
//! command line itself; [`start`] creates the node and reads its [`RunParams`].

use super::{
    params::{Param, RunParams},
    publisher::RosPublisher,
    state::Vehicles,
};
use crate::config::LoadedScenario;
use r2r::ParameterValue;
use std::time::Duration;

pub struct RosNode {
    pub node: r2r::Node,
    pub params: RunParams,
}

fn param(node: &r2r::Node, name: &str) -> Param {
    let value = node
        .params
        .lock()
        .expect("parameter map")
        .get(name)
        .map(|p| p.value.clone())
        .unwrap_or(ParameterValue::NotSet);
    match value {
        ParameterValue::NotSet => Param::NotSet,
        ParameterValue::Double(v) => Param::Number(v),
        ParameterValue::Integer(v) => Param::Number(v as f64),
        ParameterValue::String(s) => Param::Text(s),
        other => Param::Other(format!("{other:?}")),
    }
}

/// Creates the ROS context and the node `name` and reads its parameters.
pub fn start(name: &str) -> anyhow::Result<RosNode> {
    let ctx = super::context()?;
    let node =
        r2r::Node::create(ctx, name, "").map_err(|e| anyhow::anyhow!("ROS 2 node {name}: {e}"))?;
    let params = RunParams::read(|name| param(&node, name))?;
    tracing::info!("ROS 2 node /{name}, parameters {params:?}");
    Ok(RosNode { node, params })
}

impl RosNode {
    /// The publisher observer for a run of `loaded` (waits for `/clock` subscribers first if
    /// `wait_for_subscribers` is set).
    pub fn publisher(self, loaded: &LoadedScenario) -> anyhow::Result<RosPublisher> {
        let mut p = RosPublisher::new(self.node, Vehicles::from_scenario(&loaded.scenario))?;
        if let Some(n) = self.params.wait_for_subscribers.filter(|&n| n > 0) {
            p.wait_for_clock_subscribers(n, Duration::from_secs(30))?;
        }
        Ok(p)
    }
}
