//! Where a simulator lives, parsed once: the scenario's `simulators.physics`/`.network` and the
//! command line's `--physics-sim`/`--network-sim`/`--bind` become a [`SimulatorEndpoint`].
//!
//! The enum is the one place that names the transports: a coordinator picks its link from the
//! variant, and a served simulator picks how to listen the same way.
//!
//! Text forms ([`SimulatorEndpoint::from_str`], for the command line): `embedded`; `ns3` (the
//! ns-3 adapter with default settings); `gazebo` (Gazebo through ros_gz with default settings);
//! a ZeroMQ endpoint `tcp://host:port` or `ipc://path`; a
//! ROS-NetSim address `unix:/path` or `tcp:host:port` (without `//`). In a scenario file the
//! kind is explicit: `{kind: zeromq, endpoint: tcp://…}`, `{kind: rosnetsim, address: unix:/…}`,
//! `{kind: ns3, …}` with the [`Ns3Settings`], `{kind: gazebo, …}` with the [`GazeboSettings`].

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::Deserialize;

/// Where a simulator lives.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SimulatorEndpoint {
    /// Ours, inside the coordinator's process.
    #[default]
    Embedded,
    /// Another process (ours or a third party's) reached over ZeroMQ; the simulator binds,
    /// the coordinator connects, e.g. `tcp://127.0.0.1:5601`.
    Zeromq { endpoint: ZmqEndpoint },
    /// A ROS-NetSim simulator adapter, unchanged: ROS-NetSim's framing (4-byte big-endian
    /// length + gzip of the message) over a Unix socket or TCP; the simulator listens, the
    /// coordinator connects: `unix:/tmp/net_server_socket` or `tcp:127.0.0.1:10000`.
    Rosnetsim { address: RosnetsimAddress },
    /// ns-3 as the network simulator: the adapter `netsim-ns3` (serving this protocol over
    /// ZeroMQ), started by the coordinator, or already running at `endpoint`. Network only.
    Ns3(Ns3Settings),
    /// Gazebo (gz-sim) as the physics simulator, reached through `ros_gz_bridge` (the cargo
    /// feature `gazebo`): stepped by W per window with its world control service, poses from
    /// its pose topics. Physics only.
    Gazebo(GazeboSettings),
    /// A simulator that speaks the ZeroMQ AUV simulator interface (telemetry PUB, thruster
    /// PULL), followed as the physics simulator: it runs free in real time, each window takes
    /// every vehicle's newest telemetry. Physics only.
    AuvInterface(AuvClientSettings),
}

/// `simulators.physics: {kind: auv_interface, ...}`: where the simulator is. Its vehicles are
/// the scenario's `motion: {kind: thrusters}` ones, by `auv_id`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AuvClientSettings {
    /// The simulator's host (default 127.0.0.1).
    pub host: String,
    /// Its telemetry PUB port (default 5557) and thruster PULL port (default 5556).
    pub telemetry_port: u16,
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
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
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
/// it builds. The radio parameters come from the scenario's `links` (see the README, "ns-3").
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
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
    #[serde(default)]
    pub wifi: Ns3Wifi,
    #[serde(default)]
    pub uan: Ns3Uan,
}

/// The Wi-Fi devices of the vehicles in `rf` pairs (ad-hoc, one channel).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Ns3Wifi {
    #[serde(default)]
    pub standard: WifiStandard,
    #[serde(default)]
    pub rate_manager: WifiRateManager,
    /// The constant rate manager's ns-3 mode name, e.g. `ErpOfdmRate54Mbps` (802.11g),
    /// `OfdmRate54Mbps` (802.11a), `HtMcs7` (802.11n); required with `rate_manager: constant`.
    #[serde(default)]
    pub data_mode: Option<String>,
    /// Packets a device's queue holds; absent: `links.queue_packets`.
    #[serde(default)]
    pub queue_packets: Option<u32>,
}

impl GazeboSettings {
    /// The settings a scenario's physics simulator has if it is Gazebo, else the defaults (what
    /// `cosim export-gazebo` writes for any scenario).
    pub fn of(physics: &SimulatorEndpoint) -> GazeboSettings {
        match physics {
            SimulatorEndpoint::Gazebo(g) => g.clone(),
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
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
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
}

/// How the Wi-Fi devices choose their data rate.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
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
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Ns3Uan {
    #[serde(default)]
    pub mac: UanMac,
}

/// The UAN MAC: ns-3's UanMacAloha or UanMacCw.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
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

impl FromStr for SimulatorEndpoint {
    type Err = String;

    /// `embedded`, `ns3` (the ns-3 adapter with default settings), `gazebo`, a ZeroMQ endpoint
    /// (`tcp://…`, `ipc://…`) or a ROS-NetSim address (`unix:/path`, `tcp:host:port`).
    fn from_str(s: &str) -> Result<SimulatorEndpoint, String> {
        if s == "embedded" {
            return Ok(SimulatorEndpoint::Embedded);
        }
        if s == "ns3" {
            return Ok(SimulatorEndpoint::Ns3(Ns3Settings::default()));
        }
        if s == "gazebo" {
            return Ok(SimulatorEndpoint::Gazebo(GazeboSettings::default()));
        }
        if s == "auv" {
            return Ok(SimulatorEndpoint::AuvInterface(AuvClientSettings::default()));
        }
        if let Some(host) = s.strip_prefix("auv:") {
            return Ok(SimulatorEndpoint::AuvInterface(AuvClientSettings {
                host: host.to_owned(),
                ..Default::default()
            }));
        }
        if s.starts_with("tcp://") || s.starts_with("ipc://") {
            return s
                .parse()
                .map(|endpoint| SimulatorEndpoint::Zeromq { endpoint });
        }
        if s.starts_with("unix:") || s.starts_with("tcp:") {
            return s
                .parse()
                .map(|address| SimulatorEndpoint::Rosnetsim { address });
        }
        Err(format!(
            "{s:?} is not a simulator endpoint: `embedded`, `ns3`, `gazebo`, `auv[:HOST]`, a ZeroMQ endpoint (tcp://host:port, ipc://path) \
             or a ROS-NetSim address (unix:/path, tcp:host:port)"
        ))
    }
}

impl fmt::Display for SimulatorEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimulatorEndpoint::Embedded => f.write_str("embedded"),
            SimulatorEndpoint::Zeromq { endpoint } => endpoint.fmt(f),
            SimulatorEndpoint::Rosnetsim { address } => address.fmt(f),
            SimulatorEndpoint::Ns3(Ns3Settings {
                endpoint: Some(e), ..
            }) => write!(f, "ns3 at {e}"),
            SimulatorEndpoint::Ns3(_) => f.write_str("ns3"),
            SimulatorEndpoint::Gazebo(GazeboSettings { world: Some(w), .. }) => {
                write!(f, "gazebo world {w}")
            }
            SimulatorEndpoint::Gazebo(_) => f.write_str("gazebo"),
            SimulatorEndpoint::AuvInterface(a) => write!(
                f,
                "AUV interface simulator at {}:{}",
                a.host, a.telemetry_port
            ),
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
            return match hp.rsplit_once(':') {
                Some((host, port))
                    if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) =>
                {
                    Ok(RosnetsimAddress::Tcp(hp.to_owned()))
                }
                _ => Err(format!(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rosnetsim_addresses() {
        let parse = |s: &str| s.parse::<RosnetsimAddress>();
        assert_eq!(
            parse("unix:/tmp/x").unwrap(),
            RosnetsimAddress::Unix("/tmp/x".into())
        );
        assert_eq!(
            parse("tcp:127.0.0.1:10000").unwrap(),
            RosnetsimAddress::Tcp("127.0.0.1:10000".into())
        );
        assert_eq!(
            parse("tcp://[::1]:5").unwrap(),
            RosnetsimAddress::Tcp("[::1]:5".into())
        );
        assert_eq!(parse("tcp://[::1]:5").unwrap().to_string(), "tcp:[::1]:5");
        assert_eq!(parse("unix:/tmp/x").unwrap().to_string(), "unix:/tmp/x");
        for bad in [
            "unix:",
            "tcp:host",
            "tcp::5",
            "tcp:h:0",
            "tcp:h:99999",
            "ipc:///x",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn command_line_forms_name_each_transport() {
        let parse = |s: &str| s.parse::<SimulatorEndpoint>();
        assert_eq!(parse("embedded").unwrap(), SimulatorEndpoint::Embedded);
        for zmq in ["tcp://127.0.0.1:5601", "tcp://*:5601", "ipc:///tmp/p"] {
            let e = parse(zmq).unwrap();
            assert_eq!(
                e,
                SimulatorEndpoint::Zeromq {
                    endpoint: ZmqEndpoint(zmq.into())
                }
            );
            assert_eq!(e.to_string(), zmq);
        }
        assert_eq!(
            parse("unix:/tmp/net_server_socket").unwrap(),
            SimulatorEndpoint::Rosnetsim {
                address: RosnetsimAddress::Unix("/tmp/net_server_socket".into())
            }
        );
        assert_eq!(
            parse("tcp:127.0.0.1:10000").unwrap(),
            SimulatorEndpoint::Rosnetsim {
                address: RosnetsimAddress::Tcp("127.0.0.1:10000".into())
            }
        );
        for bad in [
            "",
            "Embedded",
            "udp://1.2.3.4:5",
            "tcp:host",
            "unix:",
            "127.0.0.1:5601",
            "ns-3",
            "NS3",
            "ns3:tcp://h:1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse("x")
            .unwrap_err()
            .contains("`embedded`, `ns3`, `gazebo`, `auv[:HOST]`, a ZeroMQ endpoint"));
        assert!("udp://x"
            .parse::<ZmqEndpoint>()
            .unwrap_err()
            .contains("must start with tcp:// or ipc://"));
    }

    #[test]
    fn ns3_on_the_command_line_means_the_default_settings() {
        let e: SimulatorEndpoint = "ns3".parse().unwrap();
        assert_eq!(e, SimulatorEndpoint::Ns3(Ns3Settings::default()));
        assert_eq!(e.to_string(), "ns3");
        let SimulatorEndpoint::Ns3(s) = e else {
            unreachable!()
        };
        assert_eq!((s.endpoint, s.program), (None, None));
        assert_eq!(
            (
                s.wifi.standard,
                s.wifi.rate_manager,
                s.wifi.data_mode,
                s.wifi.queue_packets
            ),
            (WifiStandard::G, WifiRateManager::Minstrel, None, None)
        );
        assert_eq!(s.uan.mac, UanMac::Aloha);
        let remote = SimulatorEndpoint::Ns3(Ns3Settings {
            endpoint: Some("tcp://10.0.0.5:5602".parse().unwrap()),
            ..Default::default()
        });
        assert_eq!(remote.to_string(), "ns3 at tcp://10.0.0.5:5602");
    }

    #[test]
    fn ns3_settings_in_a_scenario() {
        let parse = |y: &str| serde_yaml::from_str::<SimulatorEndpoint>(y);
        assert_eq!(
            parse("kind: ns3").unwrap(),
            SimulatorEndpoint::Ns3(Ns3Settings::default())
        );
        let e = parse(
            "{kind: ns3, endpoint: 'tcp://h:5602', wifi: {standard: 80211n-5, rate_manager: constant, data_mode: HtMcs7, queue_packets: 100}, uan: {mac: cw}}",
        )
        .unwrap();
        let SimulatorEndpoint::Ns3(s) = e else {
            panic!("{e:?}")
        };
        assert_eq!(s.endpoint.unwrap().as_str(), "tcp://h:5602");
        assert_eq!(
            (
                s.wifi.standard,
                s.wifi.rate_manager,
                s.wifi.data_mode.as_deref(),
                s.wifi.queue_packets
            ),
            (
                WifiStandard::N5,
                WifiRateManager::Constant,
                Some("HtMcs7"),
                Some(100)
            )
        );
        assert_eq!(s.uan.mac, UanMac::Cw);
        for (yaml, standard) in [
            ("80211a", "80211a"),
            ("802.11g", "80211g"),
            ("80211n-2.4", "80211n-2.4"),
            ("802.11n-5", "80211n-5"),
        ] {
            let SimulatorEndpoint::Ns3(s) =
                parse(&format!("{{kind: ns3, wifi: {{standard: {yaml}}}}}")).unwrap()
            else {
                panic!()
            };
            assert_eq!(s.wifi.standard.name(), standard);
        }
        for bad in [
            "{kind: ns3, bogus: 1}",
            "{kind: ns3, wifi: {rate: 5}}",
            "{kind: ns3, wifi: {standard: 80211ac}}",
            "{kind: ns3, uan: {mac: fama}}",
            "{kind: ns3, endpoint: 'udp://x'}",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
