//! The nodes of the three binaries: `netsim_cosim` (`cosim run`), `physics_coordinator` and
//! `network_coordinator`. rcl reads `--ros-args` (remaps, `--params-file`) from the process's
//! command line itself; [`start`] creates the node and reads its [`RunParams`].

use super::{params::RunParams, publisher::RosPublisher, state::Vehicles};
use crate::config::LoadedScenario;
use r2r::ParameterValue;
use std::time::Duration;

pub struct RosNode {
    pub node: r2r::Node,
    pub params: RunParams,
}

fn param(node: &r2r::Node, name: &str) -> ParameterValue {
    node.params
        .lock()
        .expect("parameter map")
        .get(name)
        .map(|p| p.value.clone())
        .unwrap_or(ParameterValue::NotSet)
}

fn number(node: &r2r::Node, name: &str) -> anyhow::Result<Option<f64>> {
    Ok(match param(node, name) {
        ParameterValue::NotSet => None,
        ParameterValue::Double(v) => Some(v),
        ParameterValue::Integer(v) => Some(v as f64),
        other => anyhow::bail!("parameter {name}: expected a number, got {other:?}"),
    })
}

fn string(node: &r2r::Node, name: &str) -> anyhow::Result<Option<String>> {
    Ok(match param(node, name) {
        ParameterValue::NotSet => None,
        ParameterValue::String(s) if s.is_empty() => None,
        ParameterValue::String(s) => Some(s),
        other => anyhow::bail!("parameter {name}: expected a string, got {other:?}"),
    })
}

/// Creates the ROS context and the node `name` and reads its parameters.
pub fn start(name: &str) -> anyhow::Result<RosNode> {
    let ctx = r2r::Context::create().map_err(|e| anyhow::anyhow!("ROS 2 context: {e}"))?;
    let node =
        r2r::Node::create(ctx, name, "").map_err(|e| anyhow::anyhow!("ROS 2 node {name}: {e}"))?;
    let params = RunParams {
        scenario: string(&node, "scenario")?.map(Into::into),
        window_ms: number(&node, "window_ms")?,
        out: string(&node, "out")?.map(Into::into),
        real_time_factor: number(&node, "real_time_factor")?,
        wait_for_subscribers: number(&node, "wait_for_subscribers")?.map(|n| n.max(0.0) as u32),
        bridge_wait_for_subscribers: number(&node, "bridge_wait_for_subscribers")?
            .map(|n| n.max(0.0) as u32),
    };
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
