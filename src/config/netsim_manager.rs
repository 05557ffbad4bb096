//! The `netsim_manager` section's types: the NETSIM manager that external vehicle
//! simulators send their navigation to, and the regions the vehicles must stay in.

use schemars::JsonSchema;
use serde::Deserialize;

use super::vehicles::default_nav_source;

/// The NETSIM manager: the reference system's `manager_tcp_port` and `env_bounds`; each
/// vehicle's modem gives the `sim_env_pair` (tcp_port, nav_source_address, environment_id).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetsimManager {
    /// Address to listen on. Default 127.0.0.1 (only local vehicle simulators).
    #[serde(default = "default_nav_source")]
    pub bind: std::net::IpAddr,
    /// TCP port. Default 61999.
    #[serde(default = "default_manager_port")]
    pub port: u16,
    /// The regions vehicles must stay in (at least one).
    pub environments: Vec<Environment>,
}

fn default_manager_port() -> u16 {
    61999
}

/// A region, as the reference's `env_bounds`: latitude/longitude in degrees, depth in metres.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// The environment's id (a vehicle's `modem.environment_id`). Required.
    pub id: i32,
    /// Southern bound, degrees. Required.
    pub lat_min: f64,
    /// Western bound, degrees. Required.
    pub lon_min: f64,
    /// Northern bound, degrees. Required.
    pub lat_max: f64,
    /// Eastern bound, degrees. Required.
    pub lon_max: f64,
    /// Shallowest depth, metres (default 0).
    #[serde(default)]
    pub depth_min: f64,
    /// Deepest depth, metres. Required.
    pub depth_max: f64,
}
