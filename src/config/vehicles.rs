//! The `vehicles` section's types: each vehicle's name, addresses (parsed once,
//! [`parse_host_address`]), acoustic modem (and its passthrough to a real one), start pose,
//! motion, ROS 2 settings, the namespace it attaches to and the agent it lives with.

use std::net::IpAddr;

use ipnet::IpNet;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::ros::RosSettings;

/// A vehicle: its name, network addresses, modem, start pose and motion.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Vehicle {
    /// Unique; lowercase letters, digits, `_` and `-`, at most 12 characters (it names the
    /// vehicle's network namespace `ncs-<name>` and its interfaces). Required.
    #[schemars(regex(pattern = r"^[a-z0-9_-]{1,12}$"))]
    pub name: String,
    /// Addresses of the vehicle's interface, with prefix length: `10.10.0.1/24`, `fd00::1/64`;
    /// each a unicast host address (not unspecified, loopback, multicast or broadcast), and no
    /// IP twice in the scenario. At least one. Required.
    #[serde(deserialize_with = "host_addresses")]
    #[schemars(schema_with = "host_addresses_schema")]
    pub addresses: Vec<IpNet>,
    /// Its acoustic modem (bridged when `acoustic_modems` is set). Absent: none.
    #[serde(default)]
    pub modem: Option<Modem>,
    /// Start pose, ENU metres: inside the world and above the terrain. Required but for a
    /// track, which starts where its log is at the run's start (and holds that pose here once
    /// loaded; [`Vehicle::start`]).
    #[serde(default, rename = "start")]
    pub start_pose: Option<Pose>,
    /// How it moves: `kind: stationary`, `patrol`, `external` or `thrusters`. Required.
    pub motion: Motion,
    /// ROS 2 settings of this vehicle's stack; each key given here overrides the scenario's
    /// top-level `ros` for this vehicle. Default: the top-level ones.
    #[serde(default)]
    pub ros: RosSettings,
    /// The network namespace the vehicle lives in, when it is not one the run creates: a
    /// running container's (`container: NAME`, with `engine`) or an existing namespace's
    /// (`netns: PATH`); exactly one of the two. The run adds its TUN interface `cosim0` there
    /// with the vehicle's addresses and routes, removes them at the end, and leaves the
    /// namespace and its other interfaces alone; the vehicle's programs run inside it. Needs
    /// `network.capture: tun`. Absent: a namespace `ncs-<name>` the run creates and removes.
    #[serde(default)]
    pub attach: Option<Attach>,
    /// The capture agent (`cosim agent --name HOST`) whose machine the vehicle lives on: its
    /// namespace, TUN and programs are there, and its traffic joins the run through that
    /// agent (`network.agents`). Same form as a vehicle's name. Needs `network.capture: tun`.
    /// Absent: the network coordinator's machine.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[a-z0-9_-]{1,32}$"))]
    pub host: Option<String>,
}

impl Vehicle {
    /// Its start pose: as written, or for a track where its log is at the run's start (set
    /// when the scenario is loaded).
    pub fn start(&self) -> Pose {
        self.start_pose.unwrap_or_default()
    }
}

/// Prefix of the network namespaces a run creates (`ncs-<vehicle>`), which a later run removes
/// when their run is gone.
pub const OWN_NETNS_PREFIX: &str = "ncs-";

/// A namespace a vehicle attaches to (`vehicles[].attach`): exactly one of `container` and
/// `netns`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["container"]}, {"required": ["netns"], "not": {"required": ["engine"]}}]))]
pub struct Attach {
    /// Name (or id) of a running container: letters, digits, `_`, `.` and `-`, starting with a
    /// letter or digit. Its network namespace is the one of the process `<engine> inspect -f
    /// '{{.State.Pid}}' NAME` names, and the vehicle's programs run in its file system, network,
    /// hostname and IPC namespaces.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"))]
    pub container: Option<String>,
    /// The container engine that knows `container`: `podman` or `docker`. Default: `podman`.
    #[serde(default)]
    pub engine: Option<ContainerEngine>,
    /// Absolute path of an existing network namespace: `/run/netns/NAME` (made by `ip netns
    /// add NAME`) or `/proc/PID/ns/net` (a process's). Not one of the run's own (`ncs-*`).
    #[serde(default)]
    pub netns: Option<String>,
}

/// What a vehicle attaches to, as [`Attach`] says it once validated.
#[derive(Debug, Clone, PartialEq)]
pub enum AttachTo<'a> {
    /// A running container, by name.
    Container {
        engine: ContainerEngine,
        name: &'a str,
    },
    /// An existing network namespace, by path.
    Netns(&'a str),
}

impl Attach {
    /// The container or namespace (`None` if neither or both are given: validation refuses
    /// both).
    pub fn target(&self) -> Option<AttachTo<'_>> {
        match (&self.container, &self.netns) {
            (Some(name), None) => Some(AttachTo::Container {
                engine: self.engine.unwrap_or_default(),
                name,
            }),
            (None, Some(path)) => Some(AttachTo::Netns(path)),
            _ => None,
        }
    }
}

impl std::fmt::Display for AttachTo<'_> {
    /// `container v1 (podman)`, `namespace /run/netns/lab`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachTo::Container { engine, name } => {
                write!(f, "container {name} ({})", engine.command())
            }
            AttachTo::Netns(path) => write!(f, "namespace {path}"),
        }
    }
}

/// A container engine (`vehicles[].attach.engine`).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ContainerEngine {
    /// `podman`.
    #[default]
    Podman,
    /// `docker`.
    Docker,
}

impl ContainerEngine {
    /// The engine's command.
    pub fn command(self) -> &'static str {
        match self {
            ContainerEngine::Podman => "podman",
            ContainerEngine::Docker => "docker",
        }
    }
}

/// The schema of `vehicles[].addresses`: strings `IP/prefix`.
fn host_addresses_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {
            "type": "string",
            "pattern": "^[0-9A-Fa-f:.]+/[0-9]{1,3}$"
        }
    })
}

/// A vehicle's acoustic modem.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Modem {
    /// TCP port of the emulated modem's bridge (non-zero, unique; 62000–62007 by convention).
    /// Required.
    #[schemars(range(min = 1))]
    pub tcp_port: u16,
    /// Acoustic address (SRC) of the modem, 0–127, unique. Required.
    #[schemars(range(max = 127))]
    pub id: u8,
    /// The only source address allowed to send this vehicle's NETSIM nav updates (the
    /// reference manager's `endpoint_ip_address`). Default 127.0.0.1.
    #[serde(default = "default_nav_source")]
    pub nav_source_address: std::net::IpAddr,
    /// The NETSIM environment (`netsim_manager.environments[].id`) this vehicle must stay in.
    /// Default: the only environment, when exactly one is configured.
    #[serde(default)]
    pub environment_id: Option<i32>,
    /// Relay this modem's TCP port byte for byte to a real modem instead of emulating it
    /// (hardware in the loop); only used when `acoustic_modems` is configured.
    #[serde(default)]
    pub passthrough: Option<ModemPassthrough>,
}

/// Parses a vehicle address `IP/prefix`: an IPv4 prefix ≤ 32 or IPv6 prefix ≤ 128, and an IP
/// that is not unspecified, loopback, multicast or broadcast. The host bits are kept
/// (`10.0.0.1/24` is the address 10.0.0.1 on the network 10.0.0.0/24).
pub fn parse_host_address(a: &str) -> Result<IpNet, String> {
    let (ip, prefix) = a
        .split_once('/')
        .ok_or_else(|| format!("{a:?} is not IP/prefix (e.g. 10.10.0.1/24)"))?;
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| format!("{ip:?} is not an IP address"))?;
    let prefix: u8 = prefix
        .parse()
        .map_err(|_| format!("{prefix:?} is not a prefix length"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let net =
        IpNet::new(ip, prefix).map_err(|_| format!("prefix /{prefix} is longer than {max}"))?;
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    if ip.is_unspecified() || ip.is_multicast() || ip.is_loopback() || broadcast {
        return Err(format!("{ip} is not a unicast host address"));
    }
    Ok(net)
}

/// `vehicles[].addresses`, each parsed by [`parse_host_address`] (errors name the item).
fn host_addresses<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<IpNet>, D::Error> {
    struct Host(IpNet);
    impl<'de> Deserialize<'de> for Host {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Host, D::Error> {
            let text = String::deserialize(d)?;
            parse_host_address(&text)
                .map(Host)
                .map_err(serde::de::Error::custom)
        }
    }
    Ok(Vec::<Host>::deserialize(d)?
        .into_iter()
        .map(|h| h.0)
        .collect())
}

pub(super) fn default_nav_source() -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
}

/// A pose in the local ENU frame.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pose {
    /// East, metres. Required.
    pub x: f64,
    /// North, metres. Required.
    pub y: f64,
    /// Up, metres (negative under water). Required.
    pub z: f64,
    /// Heading in degrees, compass convention (0 = north, 90 = east); default 0.
    #[serde(default)]
    pub heading_deg: f64,
}

/// How a vehicle moves (`kind`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Motion {
    /// Holds its start pose.
    Stationary,
    /// Patrols `waypoints` (`[x, y, z]`) in order, looping back to the first.
    Patrol {
        /// Cruise speed, m/s (> 0). Required.
        speed_mps: f64,
        /// Largest turn rate, degrees per second (> 0). Required.
        max_turn_rate_deg_s: f64,
        /// Largest vertical speed, m/s (> 0). Required.
        max_depth_rate_mps: f64,
        /// The waypoints `[x, y, z]`, ENU metres, inside the world and above the terrain; at
        /// least one. Required.
        waypoints: Vec<[f64; 3]>,
        /// A waypoint counts as reached within this horizontal distance (default 2 m).
        #[serde(default = "default_capture_radius")]
        capture_radius_m: f64,
    },
    /// Moved by someone else: NETSIM nav updates or an external physics simulator.
    External,
    /// Replays a logged trajectory, interpolated in time: the run's start is `offset_s` into
    /// the log, and the vehicle starts where the log is then (leave `start` out).
    Track(super::track::Track),
    /// Driven by its four thrusters through the ZeroMQ AUV simulator interface, as the AUV
    /// with id `auv_id`; `dynamics` overrides the default small AUV's parameters.
    Thrusters {
        /// The vehicle's id on the AUV simulator interface. Required.
        auv_id: u8,
        /// Overrides of the default vehicle's parameters (any subset).
        #[serde(default)]
        dynamics: AuvDynamics,
    },
}

impl Motion {
    /// The AUV interface id of a thruster-driven vehicle.
    pub fn auv_id(&self) -> Option<u8> {
        match self {
            Motion::Thrusters { auv_id, .. } => Some(*auv_id),
            _ => None,
        }
    }
}

/// A thruster-driven AUV in four degrees of freedom (surge, sway, heave, yaw), as in Fossen's
/// model with diagonal mass and damping. Defaults: the BlueROV2 (Heavy frame for the thruster
/// layout) as identified by Wu (2018) and used by von Benzon et al. (2022), "An open-source
/// benchmark simulator: control of a BlueROV2 underwater robot", J. Mar. Sci. Eng. 10(12) 1898;
/// thrust of Blue Robotics' T200 at 16 V. Sources per value: docs/src/reference/auv-interface.md,
/// "Dynamics".
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AuvDynamics {
    /// Mass (kg); neutrally buoyant (default 11.5).
    pub mass_kg: f64,
    /// Moment of inertia about the vertical axis (kg m²; default 0.245).
    pub inertia_z_kg_m2: f64,
    /// Added mass in surge, sway, heave (kg) and yaw (kg m²), positive (default [5.5, 12.7,
    /// 14.57, 0.12]).
    pub added_mass: [f64; 4],
    /// Linear damping in surge, sway, heave (N s/m) and yaw (N m s), positive (default [4.03,
    /// 6.22, 5.18, 0.07]).
    pub linear_damping: [f64; 4],
    /// Quadratic damping in surge, sway, heave (N s²/m²) and yaw (N m s²), positive (default
    /// [18.18, 21.66, 36.99, 1.55]).
    pub quadratic_damping: [f64; 4],
    /// Thrust of one thruster at power +100 and −100 (N, magnitudes); thrust follows power
    /// squared in between (sign kept). Default [51.5, 40.2].
    pub max_thrust_n: [f64; 2],
    /// Distance of the left and right thrusters from the centre line (m; default 0.2).
    pub thruster_arm_m: f64,
    /// Depth (m below the surface) the vehicle cannot rise above (default 0).
    pub min_depth_m: f64,
    /// Height above the seafloor (m) the vehicle cannot sink below (default 0.5).
    pub min_altitude_m: f64,
}

impl Default for AuvDynamics {
    fn default() -> Self {
        AuvDynamics {
            mass_kg: 11.5,
            inertia_z_kg_m2: 0.245,
            added_mass: [5.5, 12.7, 14.57, 0.12],
            linear_damping: [4.03, 6.22, 5.18, 0.07],
            quadratic_damping: [18.18, 21.66, 36.99, 1.55],
            max_thrust_n: [51.5, 40.2],
            thruster_arm_m: 0.2,
            min_depth_m: 0.0,
            min_altitude_m: 0.5,
        }
    }
}

fn default_capture_radius() -> f64 {
    2.0
}

/// Where a passthrough modem's bytes go: a serial device opened raw at `baud`, or a TCP
/// address (`host:port`), e.g. a `socat` bridge in front of a real modem.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged, deny_unknown_fields)]
pub enum ModemPassthrough {
    /// A serial device opened raw.
    Serial {
        /// The device, e.g. `/dev/ttyUSB0`. Required.
        serial: String,
        /// Baud rate: 1200, 2400, 4800, 9600, 19200 (default), 38400, 57600, 115200 or
        /// 230400.
        #[serde(default = "default_baud")]
        #[schemars(extend("enum" = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400]))]
        baud: u32,
    },
    /// A TCP address.
    Tcp {
        /// `host:port`. Required.
        tcp: String,
    },
}

fn default_baud() -> u32 {
    19200
}

/// Baud rates a passthrough serial device may use.
pub const SERIAL_BAUDS: [u32; 9] = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400];

/// `baud` if a passthrough serial device may use it ([`SERIAL_BAUDS`]).
pub fn baud_supported(baud: u32) -> Option<u32> {
    SERIAL_BAUDS.contains(&baud).then_some(baud)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_addresses_keep_their_host_bits_and_say_what_is_wrong() {
        let net = parse_host_address("10.10.0.1/24").unwrap();
        assert_eq!(
            (net.addr(), net.prefix_len()),
            (IpAddr::from([10, 10, 0, 1]), 24)
        );
        assert_eq!(net.to_string(), "10.10.0.1/24");
        assert_eq!(
            parse_host_address("fd00:0:0::2/64").unwrap().to_string(),
            "fd00::2/64"
        );
        for (bad, why) in [
            ("10.0.0.2", "is not IP/prefix"),
            ("10.0.0.2/x", "is not a prefix length"),
            ("10.0.0.2/33", "prefix /33 is longer than 32"),
            ("fd00::2/129", "prefix /129 is longer than 128"),
            ("10.0.0.300/24", "\"10.0.0.300\" is not an IP address"),
            ("255.255.255.255/32", "not a unicast host address"),
            ("ff02::1/64", "not a unicast host address"),
        ] {
            let e = parse_host_address(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
