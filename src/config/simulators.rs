//! The `simulators` section's types: where the physics and the network simulator live (the
//! endpoints by role are [`super::endpoint`]'s), how long the coordinators wait for them, and
//! the embedded physics simulator's step and channel interval.

use schemars::JsonSchema;
use serde::Deserialize;

use super::endpoint::{NetworkEndpoint, Ns3Settings, PeerEndpoint, PhysicsEndpoint};

/// Where the simulators live, and how long the coordinators wait for them.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Simulators {
    /// Where the physics simulator lives: `kind: embedded` (default), `zeromq`, `rosnetsim`,
    /// `gazebo` or `auv_interface`.
    #[serde(default)]
    pub physics: PhysicsEndpoint,
    /// Where the network simulator lives: `kind: embedded` (default), `zeromq`, `rosnetsim`
    /// or `ns3`.
    #[serde(default)]
    pub network: NetworkEndpoint,
    /// How long a coordinator waits for a simulator's END before it ends the run, ms of wall
    /// time (> 0; default 2000).
    #[serde(default = "default_timeout_ms")]
    #[schemars(range(min = 1))]
    pub timeout_ms: u64,
    /// How long a coordinator waits for a simulator to accept the connection and answer
    /// window 0, ms of wall time (> 0; default 30000: a simulator may need time to load its
    /// world).
    #[serde(default = "default_startup_timeout_ms")]
    #[schemars(range(min = 1))]
    pub startup_timeout_ms: u64,
    /// Internal integration step of the embedded physics simulator, ms (> 0; default 10; a
    /// window is split into the fewest equal steps no longer than this).
    #[serde(default = "default_physics_step_ms")]
    pub physics_step_ms: f64,
    /// How often the embedded physics simulator publishes a channel sample (poses and paths,
    /// ms): a whole multiple of W; between samples every window carries the last one, and each
    /// sample is traced over the interval before it (docs/src/development/scale.md). Absent: W.
    #[serde(default)]
    pub channel_interval_ms: Option<f64>,
    /// Connect to simulators on other hosts over ZeroMQ or ROS-NetSim's framing, neither of
    /// which authenticates its peer nor encrypts (default false: refused at load, naming the
    /// secure channel; `--insecure-peers` on the command line sets it). The run's log and its
    /// summary's `insecure_peers` name each such peer (docs/src/explanation/threat-model.md).
    #[serde(default)]
    pub insecure_peers: bool,
}

impl Simulators {
    /// The simulator processes reached over the window protocol, by key
    /// (`simulators.physics`, `simulators.network`), the ns-3 adapter's endpoint included.
    pub fn peers(&self) -> Vec<(&'static str, PeerEndpoint)> {
        let physics = match &self.physics {
            PhysicsEndpoint::Peer(p) => Some(p.clone()),
            _ => None,
        };
        let network = match &self.network {
            NetworkEndpoint::Peer(p) => Some(p.clone()),
            NetworkEndpoint::Ns3(Ns3Settings {
                endpoint: Some(e), ..
            }) => Some(PeerEndpoint::Zeromq(e.clone())),
            _ => None,
        };
        [
            ("simulators.physics", physics),
            ("simulators.network", network),
        ]
        .into_iter()
        .filter_map(|(key, p)| Some((key, p?)))
        .collect()
    }

    /// The simulators reached in plaintext on another host
    /// ([`PeerEndpoint::plaintext_remote`]).
    pub fn plaintext_remote_peers(&self) -> Vec<PeerEndpoint> {
        self.peers()
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| p.plaintext_remote().is_some())
            .collect()
    }
}

fn default_timeout_ms() -> u64 {
    2000
}
fn default_startup_timeout_ms() -> u64 {
    30_000
}
fn default_physics_step_ms() -> f64 {
    10.0
}

impl Default for Simulators {
    fn default() -> Self {
        Simulators {
            physics: PhysicsEndpoint::default(),
            network: NetworkEndpoint::default(),
            timeout_ms: default_timeout_ms(),
            startup_timeout_ms: default_startup_timeout_ms(),
            physics_step_ms: default_physics_step_ms(),
            channel_interval_ms: None,
            insecure_peers: false,
        }
    }
}
