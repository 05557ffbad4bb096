//! The rules of the ROS 2 settings, the top-level `ros` and every `vehicles[].ros`: a domain
//! id ROS 2 accepts and an absolute ROS namespace.

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::RosSettings;

/// Largest `ROS_DOMAIN_ID` ROS 2 accepts.
const MAX_ROS_DOMAIN_ID: u32 = 232;
/// Longest ROS namespace accepted.
const MAX_ROS_NAMESPACE: usize = 255;

/// The top-level `ros` and every `vehicles[].ros`.
pub(super) fn ros(cx: &Ctx) -> Check {
    ros_settings(cx, "ros", &cx.scenario.ros)?;
    for (i, v) in cx.scenario.vehicles.iter().enumerate() {
        ros_settings(cx, &join_key(&join_index("vehicles", i), "ros"), &v.ros)?;
    }
    Ok(())
}

fn ros_settings(cx: &Ctx, path: &str, r: &RosSettings) -> Check {
    if let Some(d) = r.domain_id {
        if d > MAX_ROS_DOMAIN_ID {
            return Err(cx.err(
                &join_key(path, "domain_id"),
                format!("must be a ROS 2 domain id, 0 to {MAX_ROS_DOMAIN_ID} (got {d})"),
            ));
        }
    }
    if let Some(ns) = &r.namespace {
        ros_namespace(ns).map_err(|e| cx.err(&join_key(path, "namespace"), e))?;
    }
    Ok(())
}

/// A ROS 2 namespace: absolute, `/`-separated tokens of `A-Z`, `a-z`, `0-9` and `_`, none
/// empty or starting with a digit.
fn ros_namespace(ns: &str) -> Result<(), String> {
    let shown: String = ns.chars().take(64).collect();
    if ns.len() > MAX_ROS_NAMESPACE {
        return Err(format!(
            "{shown:?}… is longer than {MAX_ROS_NAMESPACE} characters"
        ));
    }
    let Some(rest) = ns.strip_prefix('/') else {
        return Err(format!(
            "{shown:?} is not a ROS namespace: it must start with '/' (e.g. \"/auv1\")"
        ));
    };
    if rest.is_empty() {
        return Ok(());
    }
    for token in rest.split('/') {
        if token.is_empty() {
            return Err(format!(
                "{shown:?} is not a ROS namespace: empty name between '/' (or a '/' at the end)"
            ));
        }
        if let Some(c) = token
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(format!(
                "{shown:?} is not a ROS namespace: only A-Z, a-z, 0-9, '_' and '/' (found {c:?})"
            ));
        }
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "{shown:?} is not a ROS namespace: {token:?} starts with a digit"
            ));
        }
    }
    Ok(())
}
