//! Where each simulator lives, by role, parsed once: the scenario's `simulators.physics` is a
//! [`PhysicsEndpoint`] and `simulators.network` a [`NetworkEndpoint`]; the command line's
//! `--physics-sim`/`--network-sim` parse into the same types ([`SimulatorArg`]) and `--bind`
//! into a [`PeerEndpoint`].
//!
//! A kind exists only in the role it can take: ns-3 only as a [`NetworkEndpoint`], Gazebo and
//! an AUV interface simulator only as a [`PhysicsEndpoint`]; both roles share `embedded` and a
//! [`PeerEndpoint`], a simulator process reached over the window protocol (ZeroMQ, ROS-NetSim
//! framing or the secure channel), which is also all a served simulator can listen at. A kind
//! named for the wrong role is refused ([`WrongRole`]) at argument parsing for the command line,
//! naming the forms that flag takes, and at load for a scenario file, naming the kinds that
//! role takes.
//!
//! Text forms (the command line): `embedded`; `ns3` (the ns-3 adapter with default
//! settings, network); `gazebo` (Gazebo through ros_gz with default settings, physics);
//! `auv[:HOST]` (an AUV interface simulator, physics); a ZeroMQ endpoint `tcp://host:port` or
//! `ipc://path`; a ROS-NetSim address `unix:/path` or `tcp:host:port` (without `//`); a secure
//! endpoint `secure://host:port?key=FILE`. In a scenario file the kind is explicit: `{kind:
//! zeromq, endpoint: tcp://…}`, `{kind: rosnetsim, address: unix:/…}`, `{kind: secure, address:
//! host:port, key_file: …}`, `{kind: ns3, …}` with the [`Ns3Settings`], `{kind: gazebo, …}`
//! with the [`GazeboSettings`], `{kind: auv_interface, …}` with the [`AuvClientSettings`].

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::Deserialize;

/// Where the physics simulator lives.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(try_from = "Written")]
pub enum PhysicsEndpoint {
    /// Ours, inside the coordinator's process.
    #[default]
    Embedded,
    /// A simulator process reached over the window protocol.
    Peer(PeerEndpoint),
    /// Gazebo (gz-sim), reached through `ros_gz_bridge` (the cargo feature `gazebo`): stepped
    /// by W per window with its world control service, poses from its pose topics.
    Gazebo(GazeboSettings),
    /// A simulator that speaks the ZeroMQ AUV simulator interface (telemetry PUB, thruster
    /// PULL), followed: it runs free in real time, each window takes every vehicle's newest
    /// telemetry.
    AuvInterface(AuvClientSettings),
}

/// Where the network simulator lives.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(try_from = "Written")]
pub enum NetworkEndpoint {
    /// Ours, inside the network coordinator's process.
    #[default]
    Embedded,
    /// A simulator process reached over the window protocol.
    Peer(PeerEndpoint),
    /// ns-3, through the adapter `netsim-ns3` (serving this protocol over ZeroMQ), started by
    /// the coordinator, or already running at the settings' `endpoint`.
    Ns3(Ns3Settings),
}

/// A simulator process of either role reached over the window protocol: what a coordinator
/// connects to and what `cosim physics-sim`/`cosim network-sim` serve at (`--bind`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PeerEndpoint {
    /// ZeroMQ (ours or a third party's process): the simulator binds, the coordinator
    /// connects, e.g. `tcp://127.0.0.1:5601`.
    Zeromq(ZmqEndpoint),
    /// A ROS-NetSim simulator adapter, unchanged: ROS-NetSim's framing (4-byte big-endian
    /// length + gzip of the message) over a Unix socket or TCP; the simulator listens, the
    /// coordinator connects: `unix:/tmp/net_server_socket` or `tcp:127.0.0.1:10000`.
    Rosnetsim(RosnetsimAddress),
    /// Our simulator process on another host, through the secure channel between hosts
    /// (`crate::lockstep::secure`): the simulator listens, the coordinator connects, both with
    /// the same key file: `secure://10.0.0.2:5601?key=run.key`.
    Secure(SecureAddress),
}

/// A simulator named for a role it cannot take: in a scenario file (displayed, located at the
/// `kind`) or on the command line ([`WrongRole::on_command_line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrongRole {
    /// `ns3` as the physics simulator.
    Ns3AsPhysics,
    /// `gazebo` as the network simulator.
    GazeboAsNetwork,
    /// `auv_interface` (`auv` on the command line) as the network simulator.
    AuvInterfaceAsNetwork,
}

impl WrongRole {
    const ALL: [WrongRole; 3] = [
        WrongRole::Ns3AsPhysics,
        WrongRole::GazeboAsNetwork,
        WrongRole::AuvInterfaceAsNetwork,
    ];

    /// True if `message` is one of these refusals (a scenario file's then points at `kind`).
    pub(crate) fn is_message(message: &str) -> bool {
        Self::ALL.iter().any(|w| w.message() == message)
    }

    fn message(self) -> &'static str {
        match self {
            WrongRole::Ns3AsPhysics => {
                "ns-3 is a network simulator: `ns3` belongs in simulators.network (--network-sim ns3); \
                 the physics simulator is one of embedded, zeromq, rosnetsim, secure, gazebo, auv_interface"
            }
            WrongRole::GazeboAsNetwork => {
                "Gazebo is a physics simulator: `gazebo` belongs in simulators.physics (--physics-sim gazebo); \
                 the network simulator is one of embedded, zeromq, rosnetsim, secure, ns3"
            }
            WrongRole::AuvInterfaceAsNetwork => {
                "an AUV interface simulator is a physics simulator: `auv_interface` belongs in simulators.physics \
                 (--physics-sim auv[:HOST]); the network simulator is one of embedded, zeromq, rosnetsim, secure, ns3"
            }
        }
    }

    /// The refusal of `--physics-sim`/`--network-sim` (clap names the flag and the value): the
    /// flag the simulator belongs to, and only the forms the refused flag takes.
    pub fn on_command_line(self) -> String {
        match self {
            WrongRole::Ns3AsPhysics => {
                format!("ns-3 is a network simulator (--network-sim ns3); {PHYSICS_FORMS}")
            }
            WrongRole::GazeboAsNetwork => {
                format!("Gazebo is a physics simulator (--physics-sim gazebo); {NETWORK_FORMS}")
            }
            WrongRole::AuvInterfaceAsNetwork => format!(
                "an AUV interface simulator is a physics simulator (--physics-sim auv[:HOST]); {NETWORK_FORMS}"
            ),
        }
    }
}

impl fmt::Display for WrongRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for WrongRole {}

/// A simulator as a scenario file writes it, before its role is known: `kind` and its keys.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Written {
    Embedded,
    Zeromq {
        endpoint: ZmqEndpoint,
    },
    Rosnetsim {
        address: RosnetsimAddress,
    },
    Secure {
        address: HostPort,
        key_file: PathBuf,
    },
    Ns3(Ns3Settings),
    Gazebo(GazeboSettings),
    AuvInterface(AuvClientSettings),
}

impl TryFrom<Written> for PhysicsEndpoint {
    type Error = WrongRole;

    fn try_from(w: Written) -> Result<PhysicsEndpoint, WrongRole> {
        Ok(match w {
            Written::Embedded => PhysicsEndpoint::Embedded,
            Written::Zeromq { endpoint } => PhysicsEndpoint::Peer(PeerEndpoint::Zeromq(endpoint)),
            Written::Rosnetsim { address } => {
                PhysicsEndpoint::Peer(PeerEndpoint::Rosnetsim(address))
            }
            Written::Secure { address, key_file } => {
                PhysicsEndpoint::Peer(PeerEndpoint::Secure(SecureAddress { address, key_file }))
            }
            Written::Gazebo(g) => PhysicsEndpoint::Gazebo(g),
            Written::AuvInterface(a) => PhysicsEndpoint::AuvInterface(a),
            Written::Ns3(_) => return Err(WrongRole::Ns3AsPhysics),
        })
    }
}

impl TryFrom<Written> for NetworkEndpoint {
    type Error = WrongRole;

    fn try_from(w: Written) -> Result<NetworkEndpoint, WrongRole> {
        Ok(match w {
            Written::Embedded => NetworkEndpoint::Embedded,
            Written::Zeromq { endpoint } => NetworkEndpoint::Peer(PeerEndpoint::Zeromq(endpoint)),
            Written::Rosnetsim { address } => {
                NetworkEndpoint::Peer(PeerEndpoint::Rosnetsim(address))
            }
            Written::Secure { address, key_file } => {
                NetworkEndpoint::Peer(PeerEndpoint::Secure(SecureAddress { address, key_file }))
            }
            Written::Ns3(s) => NetworkEndpoint::Ns3(s),
            Written::Gazebo(_) => return Err(WrongRole::GazeboAsNetwork),
            Written::AuvInterface(_) => return Err(WrongRole::AuvInterfaceAsNetwork),
        })
    }
}

/// `simulators.physics: {kind: auv_interface, ...}`: where the simulator is. Its vehicles are
/// the scenario's `motion: {kind: thrusters}` ones, by `auv_id`.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AuvClientSettings {
    /// The simulator's host (default 127.0.0.1).
    pub host: String,
    /// Its telemetry PUB port (default 5557).
    pub telemetry_port: u16,
    /// Its thruster PULL port (default 5556).
    pub thrusters_port: u16,
    /// A vehicle without telemetry for this long (ms of wall time) ends the run (default 1000).
    pub stale_ms: u64,
    /// Thruster frames arriving at this scenario's `auv_interface` thruster port are checked
    /// and forwarded to the simulator at the next window (default true).
    pub forward_thrusters: bool,
}

impl Default for AuvClientSettings {
    fn default() -> Self {
        AuvClientSettings {
            host: "127.0.0.1".into(),
            telemetry_port: 5557,
            thrusters_port: 5556,
            stale_ms: 1000,
            forward_thrusters: true,
        }
    }
}

/// `simulators.physics: {kind: gazebo, ...}`: which Gazebo world, and which of its models is
/// which vehicle. `cosim export-gazebo` writes a world that matches these settings.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GazeboSettings {
    /// The world's name (`<world name=…>`); absent: the scenario's `name`.
    #[serde(default)]
    pub world: Option<String>,
    /// The world's step (`<physics><max_step_size>`), ms; W must be a whole number of them.
    /// Absent: W split into the fewest equal steps no longer than `simulators.physics_step_ms`
    /// (what `cosim export-gazebo` writes).
    #[serde(default)]
    pub step_ms: Option<f64>,
    /// Vehicle name → Gazebo model name; a vehicle not named here is the model of its own name.
    #[serde(default)]
    pub models: std::collections::BTreeMap<String, String>,
}

/// `simulators.network: {kind: ns3, ...}`: how to reach the ns-3 adapter and the ns-3 models
/// it builds. The radio parameters come from the scenario's `links` (docs/src/reference/ns3.md).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Ns3Settings {
    /// An adapter already running (possibly on another host), e.g. `tcp://10.0.0.5:5602`;
    /// absent: the coordinator starts one for the run.
    #[serde(default)]
    pub endpoint: Option<ZmqEndpoint>,
    /// The `netsim-ns3` program to start (relative to the scenario file's folder); absent:
    /// `$NETSIM_NS3`, then `target/ns3/netsim-ns3` beside the running executable, then `PATH`.
    #[serde(default)]
    pub program: Option<PathBuf>,
    /// The Wi-Fi devices of the vehicles in `rf` pairs (defaults below).
    #[serde(default)]
    pub wifi: Ns3Wifi,
    /// The UAN devices of the vehicles in `acoustic` pairs (defaults below).
    #[serde(default)]
    pub uan: Ns3Uan,
}

/// The Wi-Fi devices of the vehicles in `rf` pairs (ad-hoc, one channel).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Ns3Wifi {
    /// The 802.11 standard: `80211a`, `80211g` (default), `80211n-2.4` or `80211n-5` (also
    /// written `802.11a`, ...).
    #[serde(default)]
    pub standard: WifiStandard,
    /// How the devices choose their rate: `minstrel` (default), `constant` (at `data_mode`) or
    /// `ideal`.
    #[serde(default)]
    pub rate_manager: WifiRateManager,
    /// The constant rate manager's ns-3 mode name, e.g. `ErpOfdmRate54Mbps` (802.11g),
    /// `OfdmRate54Mbps` (802.11a), `HtMcs7` (802.11n); required with `rate_manager: constant`.
    #[serde(default)]
    pub data_mode: Option<String>,
    /// Packets a device's queue holds (> 0); absent: `links.queue_packets`.
    #[serde(default)]
    pub queue_packets: Option<u32>,
}

impl GazeboSettings {
    /// The settings a scenario's physics simulator has if it is Gazebo, else the defaults (what
    /// `cosim export-gazebo` writes for any scenario).
    pub fn of(physics: &PhysicsEndpoint) -> GazeboSettings {
        match physics {
            PhysicsEndpoint::Gazebo(g) => g.clone(),
            _ => GazeboSettings::default(),
        }
    }

    /// The world's name: `world`, else the scenario's name.
    pub fn world_name<'a>(&'a self, scenario_name: &'a str) -> &'a str {
        self.world.as_deref().unwrap_or(scenario_name)
    }

    /// The world's control service (gz-sim's `/world/<w>/control`, bridged as is).
    pub fn control_service(&self, scenario_name: &str) -> String {
        format!("/world/{}/control", self.world_name(scenario_name))
    }

    /// The pose topic of `model` (PosePublisher's `/model/<name>/pose`, bridged as is).
    pub fn pose_topic(model: &str) -> String {
        format!("/model/{model}/pose")
    }

    /// The Gazebo model that is `vehicle`.
    pub fn model<'a>(&'a self, vehicle: &'a str) -> &'a str {
        self.models.get(vehicle).map_or(vehicle, String::as_str)
    }

    /// The world's step (s) and the steps in a window of `window_ms`: `step_ms` if set (an error
    /// unless W is a whole number of them), else W split into the fewest equal steps no longer
    /// than `physics_step_ms`.
    pub fn steps(&self, window_ms: f64, physics_step_ms: f64) -> Result<(f64, u32), String> {
        let w = window_ms / 1e3;
        match self.step_ms {
            Some(step_ms) => {
                if !(step_ms.is_finite() && step_ms > 0.0) {
                    return Err(format!("must be a positive number of ms (got {step_ms})"));
                }
                let n = window_ms / step_ms;
                let whole = n.round();
                if whole < 1.0 || (n - whole).abs() > 1e-6 * whole || whole > f64::from(u32::MAX) {
                    return Err(format!(
                        "the window ({window_ms} ms) must be a whole number of Gazebo steps of {step_ms} ms (it is {n:.6} of them)"
                    ));
                }
                Ok((step_ms / 1e3, whole as u32))
            }
            None => {
                let n = if physics_step_ms > 0.0 {
                    (window_ms / physics_step_ms)
                        .ceil()
                        .clamp(1.0, f64::from(u32::MAX)) as u32
                } else {
                    1
                };
                Ok((w / f64::from(n), n))
            }
        }
    }
}

/// The IEEE 802.11 standard of the Wi-Fi devices, as the adapter's `--wifiStandard` names it.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[schemars(extend("enum" = ["80211a", "802.11a", "80211g", "802.11g", "80211n-2.4", "802.11n-2.4", "80211n-5", "802.11n-5"]))]
pub enum WifiStandard {
    #[serde(rename = "80211a", alias = "802.11a")]
    A,
    #[default]
    #[serde(rename = "80211g", alias = "802.11g")]
    G,
    #[serde(rename = "80211n-2.4", alias = "802.11n-2.4")]
    N2_4,
    #[serde(rename = "80211n-5", alias = "802.11n-5")]
    N5,
}

impl WifiStandard {
    /// The adapter's name for it.
    pub fn name(self) -> &'static str {
        match self {
            WifiStandard::A => "80211a",
            WifiStandard::G => "80211g",
            WifiStandard::N2_4 => "80211n-2.4",
            WifiStandard::N5 => "80211n-5",
        }
    }

    /// Its data rates, kbit/s, slowest first (802.11a/g: the OFDM rates; 802.11n: MCS 0–7 at
    /// 20 MHz, 800 ns guard interval); `model::wifi` holds the rest of each rate.
    pub fn data_rates_kbps(self) -> &'static [u64] {
        match self {
            WifiStandard::A | WifiStandard::G => {
                &[6_000, 9_000, 12_000, 18_000, 24_000, 36_000, 48_000, 54_000]
            }
            WifiStandard::N2_4 | WifiStandard::N5 => &[
                6_500, 13_000, 19_500, 26_000, 39_000, 52_000, 58_500, 65_000,
            ],
        }
    }
}

/// How the Wi-Fi devices choose their data rate.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WifiRateManager {
    /// ns-3's MinstrelWifiManager (Minstrel; MinstrelHt for 802.11n).
    #[default]
    Minstrel,
    /// ConstantRateWifiManager at `data_mode`.
    Constant,
    /// IdealWifiManager (the best rate for the receiver's last SNR).
    Ideal,
}

impl WifiRateManager {
    /// The adapter's name for it.
    pub fn name(self) -> &'static str {
        match self {
            WifiRateManager::Minstrel => "minstrel",
            WifiRateManager::Constant => "constant",
            WifiRateManager::Ideal => "ideal",
        }
    }
}

/// The UAN devices of the vehicles in `acoustic` pairs.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Ns3Uan {
    /// The MAC: `aloha` (default) or `cw`.
    #[serde(default)]
    pub mac: UanMac,
}

/// The UAN MAC: ns-3's UanMacAloha or UanMacCw.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UanMac {
    #[default]
    Aloha,
    Cw,
}

impl UanMac {
    /// The adapter's name for it.
    pub fn name(self) -> &'static str {
        match self {
            UanMac::Aloha => "aloha",
            UanMac::Cw => "cw",
        }
    }
}

/// The command line's text forms of a ZeroMQ endpoint and a ROS-NetSim address.
const PEER_FORMS: &str =
    "a ZeroMQ endpoint (tcp://host:port, ipc://path), a ROS-NetSim address (unix:/path, tcp:host:port) or a secure one (secure://host:port?key=FILE)";
/// What `--physics-sim` takes.
const PHYSICS_FORMS: &str = "--physics-sim takes `embedded`, `gazebo`, `auv[:HOST]`, a ZeroMQ endpoint (tcp://host:port, ipc://path), a ROS-NetSim address (unix:/path, tcp:host:port) or a secure one (secure://host:port?key=FILE)";
/// What `--network-sim` takes.
const NETWORK_FORMS: &str = "--network-sim takes `embedded`, `ns3`, a ZeroMQ endpoint (tcp://host:port, ipc://path), a ROS-NetSim address (unix:/path, tcp:host:port) or a secure one (secure://host:port?key=FILE)";

impl PeerEndpoint {
    /// `s` as a peer if it has a transport's prefix (`tcp://`, `ipc://`, `unix:`, `tcp:`), with
    /// that transport's own error if the rest is wrong; `None` without such a prefix.
    fn parse_prefixed(s: &str) -> Option<Result<PeerEndpoint, String>> {
        if s.starts_with("tcp://") || s.starts_with("ipc://") {
            return Some(s.parse().map(PeerEndpoint::Zeromq));
        }
        if s.starts_with("unix:") || s.starts_with("tcp:") {
            return Some(s.parse().map(PeerEndpoint::Rosnetsim));
        }
        if s.starts_with("secure://") {
            return Some(s.parse().map(PeerEndpoint::Secure));
        }
        None
    }

    /// The `host:port` of a plaintext peer on another host: a ZeroMQ `tcp://` endpoint or a
    /// ROS-NetSim `tcp:` address whose host is not loopback. `None` for loopback, `ipc://`, a
    /// Unix socket and the secure channel.
    pub fn plaintext_remote(&self) -> Option<&str> {
        let hp = match self {
            PeerEndpoint::Zeromq(e) => e.as_str().strip_prefix("tcp://")?,
            PeerEndpoint::Rosnetsim(RosnetsimAddress::Tcp(hp)) => hp.as_str(),
            PeerEndpoint::Rosnetsim(RosnetsimAddress::Unix(_)) | PeerEndpoint::Secure(_) => {
                return None
            }
        };
        (!is_loopback(host_of(hp))).then_some(hp)
    }

    /// Why binding here would open the window protocol to other hosts without authenticating
    /// them ([`PeerEndpoint::plaintext_remote`]), or None.
    pub fn exposed(&self) -> Option<String> {
        let hp = self.plaintext_remote()?;
        Some(format!(
            "{self} is reachable from other hosts, and the window protocol there authenticates no peer: \
             anyone who reaches it could answer the run's windows. Serve at secure://{hp}?key=FILE instead \
             (the same key file on both hosts, made by `cosim agent-key FILE`), or at a loopback address"
        ))
    }

    /// Why connecting here crosses to another host in plaintext
    /// ([`PeerEndpoint::plaintext_remote`]), or None: the refusal a run gives unless told
    /// [`INSECURE_PEERS`].
    pub fn insecure(&self) -> Option<String> {
        let hp = self.plaintext_remote()?;
        let (protocol, instead) = match self {
            PeerEndpoint::Rosnetsim(_) => (
                "ROS-NetSim's framing",
                "Keep the ROS-NetSim simulator on this host (a Unix socket or loopback)".to_owned(),
            ),
            _ => (
                "ZeroMQ",
                format!(
                    "Serve our simulator there at secure://{hp}?key=FILE (another program, e.g. the ns-3 adapter: run it on this host)"
                ),
            ),
        };
        Some(format!(
            "{self} is on another host, and {protocol} neither authenticates the peer nor encrypts: \
             anyone on the path could read or answer the run's windows. {instead}, or tunnel it; \
             to connect in plaintext anyway say {INSECURE_PEERS} (the run's log and summary then name it)"
        ))
    }
}

/// How a run is told to reach plaintext peers on other hosts all the same.
pub const INSECURE_PEERS: &str = "--insecure-peers (scenario: simulators.insecure_peers: true)";

/// Whether `host` (a name or an address, IPv6 in brackets or not) is this host's loopback.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The host of `host:port` (`*` and an empty host mean every address).
fn host_of(hp: &str) -> &str {
    hp.rsplit_once(':').map_or(hp, |(h, _)| h)
}

impl FromStr for PeerEndpoint {
    type Err = String;

    /// A ZeroMQ endpoint (`tcp://…`, `ipc://…`) or a ROS-NetSim address (`unix:/path`,
    /// `tcp:host:port`): where a served simulator listens (`--bind`). The other simulators
    /// are refused, each saying why it is not served.
    fn from_str(s: &str) -> Result<PeerEndpoint, String> {
        if let Some(peer) = PeerEndpoint::parse_prefixed(s) {
            return peer;
        }
        Err(match s {
            "embedded" => "`embedded` is not an endpoint to serve at".to_owned(),
            "ns3" => "`ns3` is not an endpoint to serve at: the ns-3 adapter netsim-ns3 serves itself".to_owned(),
            "gazebo" => "`gazebo` is not an endpoint to serve at: Gazebo is reached through ros_gz_bridge".to_owned(),
            _ if s == "auv" || s.starts_with("auv:") => "`auv` is not an endpoint to serve at: the embedded physics serves the AUV interface itself for thruster-driven vehicles".to_owned(),
            _ => format!("{s:?} is not an endpoint to serve at: {PEER_FORMS}"),
        })
    }
}

/// Where the network coordinator listens for the physics coordinator
/// (`network_coordinator --bind`, `physics_coordinator --network-coordinator`): ZeroMQ on this
/// host (`tcp://127.0.0.1:5600`, `ipc://path`) or the secure channel across hosts
/// (`secure://host:port?key=FILE`). ROS-NetSim's framing is refused: it carries a simulator's
/// windows in ROS-NetSim's dialect, not a coordinator's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CoordinatorEndpoint(PeerEndpoint);

impl CoordinatorEndpoint {
    pub fn peer(&self) -> &PeerEndpoint {
        &self.0
    }
}

impl FromStr for CoordinatorEndpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<CoordinatorEndpoint, String> {
        match s.parse()? {
            PeerEndpoint::Rosnetsim(_) => Err(format!(
                "{s:?}: the coordinators speak to each other over ZeroMQ (tcp://127.0.0.1:PORT, ipc://path) \
                 or the secure channel (secure://host:port?key=FILE), not ROS-NetSim's framing"
            )),
            peer => Ok(CoordinatorEndpoint(peer)),
        }
    }
}

impl fmt::Display for CoordinatorEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for PhysicsEndpoint {
    type Err = String;

    /// `embedded`, `gazebo`, `auv[:HOST]`, a ZeroMQ endpoint (`tcp://…`, `ipc://…`) or a
    /// ROS-NetSim address (`unix:/path`, `tcp:host:port`); `ns3` is refused ([`WrongRole`]).
    fn from_str(s: &str) -> Result<PhysicsEndpoint, String> {
        match s {
            "embedded" => return Ok(PhysicsEndpoint::Embedded),
            "gazebo" => return Ok(PhysicsEndpoint::Gazebo(GazeboSettings::default())),
            "auv" => return Ok(PhysicsEndpoint::AuvInterface(AuvClientSettings::default())),
            "ns3" => return Err(WrongRole::Ns3AsPhysics.on_command_line()),
            _ => {}
        }
        if let Some(host) = s.strip_prefix("auv:") {
            return Ok(PhysicsEndpoint::AuvInterface(AuvClientSettings {
                host: host.to_owned(),
                ..Default::default()
            }));
        }
        match PeerEndpoint::parse_prefixed(s) {
            Some(peer) => peer.map(PhysicsEndpoint::Peer),
            None => Err(format!(
                "{s:?} is not a physics simulator endpoint: `embedded`, `gazebo`, `auv[:HOST]`, {PEER_FORMS}"
            )),
        }
    }
}

impl FromStr for NetworkEndpoint {
    type Err = String;

    /// `embedded`, `ns3` (the ns-3 adapter with default settings), a ZeroMQ endpoint
    /// (`tcp://…`, `ipc://…`) or a ROS-NetSim address (`unix:/path`, `tcp:host:port`);
    /// `gazebo` and `auv[:HOST]` are refused ([`WrongRole`]).
    fn from_str(s: &str) -> Result<NetworkEndpoint, String> {
        match s {
            "embedded" => return Ok(NetworkEndpoint::Embedded),
            "ns3" => return Ok(NetworkEndpoint::Ns3(Ns3Settings::default())),
            "gazebo" => return Err(WrongRole::GazeboAsNetwork.on_command_line()),
            _ if s == "auv" || s.starts_with("auv:") => {
                return Err(WrongRole::AuvInterfaceAsNetwork.on_command_line())
            }
            _ => {}
        }
        match PeerEndpoint::parse_prefixed(s) {
            Some(peer) => peer.map(NetworkEndpoint::Peer),
            None => Err(format!(
                "{s:?} is not a network simulator endpoint: `embedded`, `ns3`, {PEER_FORMS}"
            )),
        }
    }
}

/// A simulator given on the command line (`--physics-sim`, `--network-sim`) for the role `E`
/// ([`PhysicsEndpoint`] or [`NetworkEndpoint`]), parsed and checked for the role when the
/// arguments are. A bare kind (`ns3`, `gazebo`, `auv`) keeps the scenario's own settings for
/// that kind when the scenario has them ([`SimulatorArg::or_scenario`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatorArg<E> {
    endpoint: E,
    /// The text it was parsed from.
    text: String,
}

impl<E: Clone> SimulatorArg<E> {
    /// The simulator to use instead of the scenario's `configured` one: the scenario's own if
    /// the text only named the kind it already is, else the endpoint the text gives.
    pub fn or_scenario(&self, configured: &E) -> E {
        let bare_kind = matches!(self.text.as_str(), "ns3" | "gazebo" | "auv");
        if bare_kind && std::mem::discriminant(&self.endpoint) == std::mem::discriminant(configured)
        {
            configured.clone()
        } else {
            self.endpoint.clone()
        }
    }
}

impl<E: FromStr<Err = String>> FromStr for SimulatorArg<E> {
    type Err = String;

    fn from_str(s: &str) -> Result<SimulatorArg<E>, String> {
        Ok(SimulatorArg {
            endpoint: s.parse()?,
            text: s.to_owned(),
        })
    }
}

/// As written on the command line.
impl<E> fmt::Display for SimulatorArg<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for PeerEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerEndpoint::Zeromq(endpoint) => endpoint.fmt(f),
            PeerEndpoint::Rosnetsim(address) => address.fmt(f),
            PeerEndpoint::Secure(address) => address.fmt(f),
        }
    }
}

/// `host:port`, checked for its shape (the host resolved when connecting or binding).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct HostPort(String);

impl HostPort {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for HostPort {
    type Err = String;

    fn from_str(s: &str) -> Result<HostPort, String> {
        match s.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
                Ok(HostPort(s.to_owned()))
            }
            _ => Err(format!("{s:?}: expected host:port, e.g. 10.0.0.2:5601")),
        }
    }
}

impl TryFrom<String> for HostPort {
    type Error = String;

    fn try_from(s: String) -> Result<HostPort, String> {
        s.parse()
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where our simulator process listens through the secure channel, and the key file both
/// ends read: `secure://host:port?key=FILE` on the command line (the file relative to the
/// current folder), `{kind: secure, address: host:port, key_file: FILE}` in a scenario file
/// (relative to the scenario's folder). Displayed without the key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SecureAddress {
    pub address: HostPort,
    pub key_file: PathBuf,
}

impl FromStr for SecureAddress {
    type Err = String;

    fn from_str(s: &str) -> Result<SecureAddress, String> {
        let rest = s
            .strip_prefix("secure://")
            .ok_or_else(|| format!("{s:?} must start with secure://"))?;
        let Some((address, key)) = rest.split_once("?key=") else {
            return Err(format!(
                "{s:?}: a secure endpoint needs its key file, e.g. secure://10.0.0.2:5601?key=run.key (`cosim agent-key run.key` makes one)"
            ));
        };
        if key.is_empty() {
            return Err(format!("{s:?}: the key file's path is empty"));
        }
        let key_file = std::path::absolute(key).map_err(|e| format!("{s:?}: {key}: {e}"))?;
        Ok(SecureAddress {
            address: address.parse()?,
            key_file,
        })
    }
}

impl fmt::Display for SecureAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "secure://{}", self.address)
    }
}

impl fmt::Display for PhysicsEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhysicsEndpoint::Embedded => f.write_str("embedded"),
            PhysicsEndpoint::Peer(peer) => peer.fmt(f),
            PhysicsEndpoint::Gazebo(GazeboSettings { world: Some(w), .. }) => {
                write!(f, "gazebo world {w}")
            }
            PhysicsEndpoint::Gazebo(_) => f.write_str("gazebo"),
            PhysicsEndpoint::AuvInterface(a) => write!(
                f,
                "AUV interface simulator at {}:{}",
                a.host, a.telemetry_port
            ),
        }
    }
}

impl fmt::Display for NetworkEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkEndpoint::Embedded => f.write_str("embedded"),
            NetworkEndpoint::Peer(peer) => peer.fmt(f),
            NetworkEndpoint::Ns3(Ns3Settings {
                endpoint: Some(e), ..
            }) => write!(f, "ns3 at {e}"),
            NetworkEndpoint::Ns3(_) => f.write_str("ns3"),
        }
    }
}

/// A ZeroMQ endpoint a coordinator connects to or a simulator binds: `tcp://…` or `ipc://…`
/// (the rest is the ZeroMQ library's to interpret).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct ZmqEndpoint(String);

impl ZmqEndpoint {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ZmqEndpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<ZmqEndpoint, String> {
        if s.starts_with("tcp://") || s.starts_with("ipc://") {
            Ok(ZmqEndpoint(s.to_owned()))
        } else {
            Err(format!("{s:?} must start with tcp:// or ipc://"))
        }
    }
}

impl TryFrom<String> for ZmqEndpoint {
    type Error = String;

    fn try_from(s: String) -> Result<ZmqEndpoint, String> {
        s.parse()
    }
}

impl fmt::Display for ZmqEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a ROS-NetSim peer listens: `unix:/path` or `tcp:host:port` (`tcp://host:port` is
/// accepted too). Displayed as `unix:/path` or `tcp:host:port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub enum RosnetsimAddress {
    Unix(PathBuf),
    /// `host:port`, resolved when connecting or binding.
    Tcp(String),
}

impl FromStr for RosnetsimAddress {
    type Err = String;

    fn from_str(s: &str) -> Result<RosnetsimAddress, String> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!(
                    "{s:?}: a Unix socket address needs a path, e.g. unix:/tmp/net_server_socket"
                ));
            }
            return Ok(RosnetsimAddress::Unix(PathBuf::from(path)));
        }
        if let Some(hp) = s.strip_prefix("tcp:") {
            let hp = hp.trim_start_matches("//");
            return match hp.parse::<HostPort>() {
                Ok(_) => Ok(RosnetsimAddress::Tcp(hp.to_owned())),
                Err(_) => Err(format!(
                    "{s:?}: expected tcp:host:port, e.g. tcp:127.0.0.1:10000"
                )),
            };
        }
        Err(format!(
            "{s:?} must start with unix: or tcp: (unix:/path or tcp:host:port)"
        ))
    }
}

impl TryFrom<String> for RosnetsimAddress {
    type Error = String;

    fn try_from(s: String) -> Result<RosnetsimAddress, String> {
        s.parse()
    }
}

impl fmt::Display for RosnetsimAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RosnetsimAddress::Unix(p) => write!(f, "unix:{}", p.display()),
            RosnetsimAddress::Tcp(hp) => write!(f, "tcp:{hp}"),
        }
    }
}

// The JSON Schema of the scenario file's simulators (`schema/scenario.schema.json`): each role
// lists only the kinds it takes, each with its own keys.

// Only its JSON Schema is used.
/// Where the physics simulator lives, by `kind`.
#[derive(JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[allow(dead_code)]
enum PhysicsSchema {
    /// Ours, inside the coordinator's process (the default).
    Embedded,
    /// A simulator process reached over the window protocol on ZeroMQ: it binds, the
    /// coordinator connects.
    Zeromq {
        /// `tcp://host:port` or `ipc://path`. Required.
        endpoint: ZmqEndpoint,
    },
    /// A ROS-NetSim simulator adapter (ROS-NetSim's framing): it listens, the coordinator
    /// connects.
    Rosnetsim {
        /// `unix:/path` or `tcp:host:port`. Required.
        address: RosnetsimAddress,
    },
    /// Our simulator process on another host (`cosim physics-sim`/`network-sim --bind
    /// secure://…`), through the secure channel between hosts: it listens, the coordinator
    /// connects.
    Secure {
        /// `host:port`. Required.
        address: HostPort,
        /// The run's key file, the same on both hosts (`cosim agent-key FILE` makes one; mode
        /// 0600), relative to this file's folder. Required.
        key_file: PathBuf,
    },
    /// Gazebo (gz-sim) through `ros_gz_bridge` (a build with the cargo feature `gazebo`),
    /// stepped by W each window.
    Gazebo(GazeboSettings),
    /// A simulator speaking the ZeroMQ AUV simulator interface, followed in real time.
    AuvInterface(AuvClientSettings),
}

// Only its JSON Schema is used.
/// Where the network simulator lives, by `kind`.
#[derive(JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[allow(dead_code)]
enum NetworkSchema {
    /// Ours, inside the network coordinator's process (the default).
    Embedded,
    /// A simulator process reached over the window protocol on ZeroMQ: it binds, the
    /// coordinator connects.
    Zeromq {
        /// `tcp://host:port` or `ipc://path`. Required.
        endpoint: ZmqEndpoint,
    },
    /// A ROS-NetSim simulator adapter (ROS-NetSim's framing): it listens, the coordinator
    /// connects.
    Rosnetsim {
        /// `unix:/path` or `tcp:host:port`. Required.
        address: RosnetsimAddress,
    },
    /// Our simulator process on another host (`cosim physics-sim`/`network-sim --bind
    /// secure://…`), through the secure channel between hosts: it listens, the coordinator
    /// connects.
    Secure {
        /// `host:port`. Required.
        address: HostPort,
        /// The run's key file, the same on both hosts (`cosim agent-key FILE` makes one; mode
        /// 0600), relative to this file's folder. Required.
        key_file: PathBuf,
    },
    /// ns-3 through the adapter `netsim-ns3`, started by the coordinator or already running
    /// at `endpoint`.
    Ns3(Ns3Settings),
}

impl JsonSchema for PhysicsEndpoint {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PhysicsEndpoint".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        PhysicsSchema::json_schema(generator)
    }
}

impl JsonSchema for NetworkEndpoint {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NetworkEndpoint".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        NetworkSchema::json_schema(generator)
    }
}

impl JsonSchema for ZmqEndpoint {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ZmqEndpoint".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A ZeroMQ endpoint: `tcp://host:port` or `ipc://path`.",
            "type": "string",
            "pattern": "^(tcp|ipc)://"
        })
    }
}

impl JsonSchema for HostPort {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HostPort".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`host:port`.",
            "type": "string",
            "pattern": "^.+:[0-9]+$"
        })
    }
}

impl JsonSchema for RosnetsimAddress {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RosnetsimAddress".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Where a ROS-NetSim peer listens: `unix:/path` or `tcp:host:port` (`tcp://host:port` is accepted too).",
            "type": "string",
            "pattern": "^(unix:.+|tcp:(//)?.+:[0-9]+)$"
        })
    }
}

#[cfg(test)]
mod tests;
