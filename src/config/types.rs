//! The scenario file's schema: one YAML document per run.
//!
//! Every struct rejects unknown keys (`deny_unknown_fields`), so a misspelt key is an error
//! that names the file, the key path and the line instead of a silently ignored setting.
//! Units are SI and part of the key name where it helps (`window_ms`, `speed_mps`).
//! The local frame is ENU: x east, y north, z up (metres), origin at `world.origin`;
//! underwater vehicles therefore have negative z (`z = -depth`).

use std::net::IpAddr;

use ipnet::IpNet;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::endpoint::{NetworkEndpoint, PhysicsEndpoint};
use crate::wire::utc::UtcTime;

fn default_nice() -> i32 {
    -5
}

/// A whole scenario: `cosim run <file>` runs exactly one.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name of the scenario: letters, digits, `_` and `-`. It names the default output
    /// folder (`out/<name>`) and, with Gazebo, the default world. Required.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]+$"))]
    pub name: String,
    /// The lockstep window W, milliseconds of sim time (> 0): the coordinators exchange poses,
    /// channels and packets once per window. Required.
    pub window_ms: f64,
    /// Simulated duration, seconds: a whole number of windows (at least one). Sim time is
    /// counted in whole nanoseconds, so `window_ms` and `duration_s` are taken to the nearest
    /// nanosecond and the duration must then be an exact multiple of W: 0.1 s at W = 10 ms is
    /// 10 windows, 0.015 s at W = 10 ms is refused (the error names the nearest durations that
    /// are whole numbers of windows, 0.01 s and 0.02 s). The same rule holds for `cosim run
    /// --duration-s` and the `window_ms` node parameter. Required.
    pub duration_s: f64,
    /// Seed of every random draw (procedural terrain noise, packet error draws, ...); default 0.
    #[serde(default)]
    pub seed: u64,
    /// Wall-clock pacing: 1.0 = real time, 2.0 = twice as fast, 0 = as fast as possible
    /// (default 0); ≥ 0.
    #[serde(default)]
    pub real_time_factor: f64,
    /// The nice value (−20 to 19) of the coordinators' threads while a run is paced
    /// (`real_time_factor` > 0), so that the vehicles' programs competing for the CPU delay
    /// neither window starts nor packet captures and releases; default −5 (at −10 the
    /// coordinator's threads, woken every few packets, took a 2-core machine from a program
    /// receiving a flood; docs/src/explanation/lockstep.md, "Priority"). The programs the run
    /// starts keep the nice value the coordinator had before. Needs root (or CAP_SYS_NICE) to go
    /// below it; otherwise the run goes on at it and says so in the log.
    #[serde(default = "default_nice")]
    #[schemars(range(min = -20, max = 19))]
    pub nice: i32,
    /// Output folder (relative to the working directory); absent: `out/<name>`.
    #[serde(default)]
    pub output_dir: Option<String>,
    /// The world: the geodetic origin of the local frame, the terrain or bathymetry, the
    /// water. Required.
    pub world: World,
    /// The vehicles (at least one), each with its name, addresses, start pose and motion.
    /// Required.
    pub vehicles: Vec<Vehicle>,
    /// The link models between vehicles, used by the embedded network simulator (ns-3 builds
    /// its devices from them too). Default: every pair `ideal`.
    #[serde(default)]
    pub links: Links,
    /// Where the physics and the network simulator live, and how long the coordinators wait
    /// for them. Default: both embedded.
    #[serde(default)]
    pub simulators: Simulators,
    /// The NETSIM manager (TCP, `NETSIM|name|base64` lines) that external vehicle simulators
    /// send their navigation to. Absent: no manager runs.
    #[serde(default)]
    pub netsim_manager: Option<NetsimManager>,
    /// Live vehicle traffic: capture through TUN interfaces, release, ledger, pcap.
    #[serde(default)]
    pub network: Network,
    /// Emulated WHOI Micro-Modems on each vehicle's `modem.tcp_port`. Absent: no modem
    /// bridges run.
    #[serde(default)]
    pub acoustic_modems: Option<AcousticModems>,
    /// Programs the run starts at a sim time, on the host or inside a vehicle's network
    /// namespace, and stops at its end. Default none.
    #[serde(default)]
    pub programs: Vec<Program>,
    /// ROS 2 settings of every vehicle's stack (`domain_id`, `use_sim_time`, `namespace`); a
    /// vehicle's own `vehicles[].ros` overrides them key by key. Default none of them.
    #[serde(default)]
    pub ros: RosSettings,
    /// What the run record (`record.mcap`) samples, and the per-window JSONL on request.
    #[serde(default)]
    pub record: RecordSettings,
    /// The live 3D view: the record's topics served to Foxglove-compatible viewers while the
    /// run goes (off by default; `cosim run --live`).
    #[serde(default)]
    pub viewer: ViewerSettings,
    /// The ZeroMQ AUV simulator interface served for the vehicles with `motion: {kind:
    /// thrusters}`: where, and how often (defaults below).
    #[serde(default)]
    pub auv_interface: AuvInterface,
}

/// The ZeroMQ AUV simulator interface: sockets, telemetry rate and cameras.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AuvInterface {
    /// Address the three sockets bind (default 127.0.0.1; `0.0.0.0` for every interface).
    pub bind: String,
    /// Camera images, PUB (default 5555).
    pub images_port: u16,
    /// Thruster commands, PULL (default 5556).
    pub thrusters_port: u16,
    /// Telemetry, PUB (default 5557).
    pub telemetry_port: u16,
    /// Telemetry messages per vehicle per second of sim time (default 20).
    pub telemetry_hz: f64,
    /// The front and bottom cameras (defaults below).
    pub cameras: Cameras,
}

impl Default for AuvInterface {
    fn default() -> Self {
        AuvInterface {
            bind: "127.0.0.1".into(),
            images_port: 5555,
            thrusters_port: 5556,
            telemetry_port: 5557,
            telemetry_hz: 20.0,
            cameras: Cameras::default(),
        }
    }
}

/// The front and bottom cameras, rendered by raycasting the terrain (range-shaded JPEGs).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cameras {
    /// Image width, pixels (default 320).
    pub width: u32,
    /// Image height, pixels (default 240).
    pub height: u32,
    /// Horizontal field of view, degrees (default 90).
    pub fov_deg: f64,
    /// Frames (front and bottom together) per vehicle per second of sim time (default 2;
    /// 0 = no images).
    pub rate_hz: f64,
    /// Range (m) at which the seafloor fades into the water's colour (default 30).
    pub max_range_m: f64,
    /// JPEG quality 1–100 (default 80).
    #[schemars(range(min = 1, max = 100))]
    pub jpeg_quality: u8,
}

impl Default for Cameras {
    fn default() -> Self {
        Cameras {
            width: 320,
            height: 240,
            fov_deg: 90.0,
            rate_hz: 2.0,
            max_range_m: 30.0,
            jpeg_quality: 80,
        }
    }
}

/// The run record's sampling. Intervals are sim time; one shorter than the window W means
/// every window.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecordSettings {
    /// Every vehicle's position is written this often (`/poses`). Default 0.1 s.
    #[serde(default = "default_pose_interval")]
    pub pose_interval_s: f64,
    /// Every pair's channel geometry is written this often (`/channel`), and a pair's at every
    /// LOS/NLOS change. Default 1 s.
    #[serde(default = "default_channel_interval")]
    pub channel_interval_s: f64,
    /// Also write `timeline.jsonl`: one line per pair per window (large). Default false.
    #[serde(default)]
    pub timeline_jsonl: bool,
    /// Write the 3D scene (`/scene/*`, `/tf`, `/events`) for Foxglove-compatible viewers.
    /// Default true.
    #[serde(default = "default_true")]
    pub scene: bool,
}

fn default_pose_interval() -> f64 {
    0.1
}
fn default_channel_interval() -> f64 {
    1.0
}

impl Default for RecordSettings {
    fn default() -> Self {
        RecordSettings {
            pose_interval_s: default_pose_interval(),
            channel_interval_s: default_channel_interval(),
            timeline_jsonl: false,
            scene: true,
        }
    }
}

/// The live viewer server: what it listens on and how much it holds for each client.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ViewerSettings {
    /// Serve the run live over the Foxglove WebSocket protocol. Default false.
    #[serde(default)]
    pub live: bool,
    /// Where (`HOST:PORT`). Default `127.0.0.1:8765`; on any other than a loopback address a
    /// client must give the token the run prints (`ws://HOST:PORT/?token=…`).
    #[serde(default = "default_viewer_address")]
    pub address: String,
    /// Messages held for one client that reads slower than the run writes; beyond them a
    /// client's messages are dropped and counted. Default 4096.
    #[serde(default = "default_client_queue_messages")]
    pub client_queue_messages: usize,
    /// Bytes held for one client, likewise. Default 64 MiB.
    #[serde(default = "default_client_queue_bytes")]
    pub client_queue_bytes: usize,
    /// Clients served at once; more are refused. Default 8.
    #[serde(default = "default_viewer_clients")]
    pub max_clients: usize,
}

fn default_viewer_address() -> String {
    "127.0.0.1:8765".into()
}
fn default_client_queue_messages() -> usize {
    4096
}
fn default_client_queue_bytes() -> usize {
    64 << 20
}
fn default_viewer_clients() -> usize {
    8
}

impl Default for ViewerSettings {
    fn default() -> Self {
        ViewerSettings {
            live: false,
            address: default_viewer_address(),
            client_queue_messages: default_client_queue_messages(),
            client_queue_bytes: default_client_queue_bytes(),
            max_clients: default_viewer_clients(),
        }
    }
}

/// The world: origin, terrain or bathymetry, water.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct World {
    /// Geodetic origin of the local ENU frame (x east, y north, z up, metres). Required.
    pub origin: GeoOrigin,
    /// Terrain or bathymetry: `kind: procedural`, `png` or `csv`. Required.
    pub terrain: Terrain,
    /// Loss charged per metre of terrain a path crosses, in dB/m (default 2.0).
    #[serde(default = "default_penetration_loss")]
    pub penetration_loss_db_per_m: f64,
    /// The water, for acoustic links (defaults: 10 °C, 35 ppt, pH 8, Mackenzie sound speed,
    /// 5 m/s wind, shipping 0.5, no sound-speed profile).
    #[serde(default)]
    pub water: Water,
    /// The bottom half-space under the terrain, for beam tracing (default sand: 1650 m/s,
    /// density ratio 1.9, 0.8 dB/λ; Jensen, Kuperman, Porter & Schmidt, *Computational Ocean
    /// Acoustics*, Table 1.3).
    #[serde(default)]
    pub seabed: Seabed,
    /// How the physics side traces acoustic paths for pairs with `propagation: beam`
    /// (defaults: 400 beams over ±80°, 64 arrivals per pair, retraced at most every 1 s and
    /// only when an end moved more than 2 m).
    #[serde(default)]
    pub acoustic_paths: AcousticPaths,
}

/// The bottom half-space under the terrain (`world.seabed`): a fluid whose reflection
/// coefficient the beam tracer applies at each bottom bounce. Defaults: sand, Jensen,
/// Kuperman, Porter & Schmidt, *Computational Ocean Acoustics* (2nd ed., 2011), Table 1.3
/// (c_p/c_w = 1.1, ρ_b/ρ_w = 1.9, α_p = 0.8 dB/λ).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Seabed {
    /// Compressional sound speed in the bottom, m/s (> 0; default 1650, sand).
    #[serde(default = "default_seabed_speed")]
    pub sound_speed_mps: f64,
    /// Bottom density over the water's (> 0; default 1.9, sand).
    #[serde(default = "default_seabed_density")]
    pub density_ratio: f64,
    /// Compressional attenuation, dB per wavelength (≥ 0; default 0.8, sand).
    #[serde(default = "default_seabed_attenuation")]
    pub attenuation_db_per_wavelength: f64,
}

impl Default for Seabed {
    fn default() -> Self {
        Seabed {
            sound_speed_mps: default_seabed_speed(),
            density_ratio: default_seabed_density(),
            attenuation_db_per_wavelength: default_seabed_attenuation(),
        }
    }
}

fn default_seabed_speed() -> f64 {
    1650.0
}
fn default_seabed_density() -> f64 {
    1.9
}
fn default_seabed_attenuation() -> f64 {
    0.8
}

/// How the physics side traces the acoustic paths of pairs with `propagation: beam`
/// (`world.acoustic_paths`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AcousticPaths {
    /// Launch angles in the fan, in [3, 10000] (default 400).
    #[serde(default = "default_beams")]
    pub beams: u32,
    /// The fan spans −x to +x degrees from the horizontal, x in (0, 90] (default 80).
    #[serde(default = "default_launch_angle")]
    pub launch_angle_deg: f64,
    /// Arrivals kept per pair, the strongest, in [1, 256] (default 64); the rest are counted.
    #[serde(default = "default_max_arrivals")]
    pub max_arrivals: u32,
    /// A pair is retraced at most this often, sim seconds (> 0; default 1).
    #[serde(default = "default_one")]
    pub refresh_s: f64,
    /// ... and only when one of its ends moved more than this since, metres (≥ 0; default 2).
    #[serde(default = "default_tolerance")]
    pub tolerance_m: f64,
}

impl Default for AcousticPaths {
    fn default() -> Self {
        AcousticPaths {
            beams: default_beams(),
            launch_angle_deg: default_launch_angle(),
            max_arrivals: default_max_arrivals(),
            refresh_s: default_one(),
            tolerance_m: default_tolerance(),
        }
    }
}

fn default_beams() -> u32 {
    400
}
fn default_launch_angle() -> f64 {
    80.0
}
fn default_max_arrivals() -> u32 {
    64
}
fn default_tolerance() -> f64 {
    2.0
}

/// How an acoustic link finds the sound's path from one end to the other.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Propagation {
    /// One straight path: spreading and absorption along the line between the ends, the
    /// terrain's penetration losses, delay d/c.
    #[default]
    Straight,
    /// The arrivals the beam tracer finds through `world.water.profile` over the terrain:
    /// energy summed within the multipath window, later energy as interference, delay of the
    /// first detectable arrival, no arrival a shadow zone.
    Beam,
}

fn default_penetration_loss() -> f64 {
    2.0
}

/// A geodetic position: the origin of the local ENU frame.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeoOrigin {
    /// Latitude, degrees north, in [-90, 90]. Required.
    pub lat_deg: f64,
    /// Longitude, degrees east, in [-180, 180]. Required.
    pub lon_deg: f64,
    /// Altitude, metres (default 0).
    #[serde(default)]
    pub alt_m: f64,
}

/// Terrain or bathymetry: a height grid, centred on the origin, heights in metres (z up).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Terrain {
    /// A seeded generator: gentle noise plus explicit ridges and hills.
    Procedural {
        /// Extent `[x, y]`, metres, centred on the origin (> 0). Required.
        size_m: [f64; 2],
        /// Spacing of the height samples, metres (> 0; at most 8192 cells per side).
        /// Required.
        cell_size_m: f64,
        /// Height of the flat floor, metres (negative for a seafloor). Required.
        base_height_m: f64,
        /// Peak-to-peak amplitude of the seeded noise on top of the floor, metres (default 0).
        #[serde(default)]
        relief_m: f64,
        /// Seed of the noise; absent: the scenario's `seed`.
        #[serde(default)]
        seed: Option<u64>,
        /// Raised bands on the floor (default none).
        #[serde(default)]
        ridges: Vec<Ridge>,
    },
    /// A grayscale PNG (8 or 16 bit): black = `min_height_m`, white = `max_height_m`.
    /// Row 0 is the northern edge, column 0 the western edge.
    Png {
        /// The PNG file, relative to the scenario file's directory. Required.
        path: String,
        /// Spacing of the pixels, metres (> 0). Required.
        cell_size_m: f64,
        /// Height of black, metres. Required.
        min_height_m: f64,
        /// Height of white, metres (above `min_height_m`). Required.
        max_height_m: f64,
    },
    /// A CSV grid of heights in metres (comma separated, one row per line, `#` comments).
    /// Row 0 is the northern edge, column 0 the western edge.
    Csv {
        /// The CSV file, relative to the scenario file's directory. Required.
        path: String,
        /// Spacing of the samples, metres (> 0). Required.
        cell_size_m: f64,
    },
}

/// A ridge: a raised band between two points with a cosine cross-section.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ridge {
    /// One end of the crest line, `[x, y]`, metres. Required.
    pub from: [f64; 2],
    /// The other end, `[x, y]`, metres. Required.
    pub to: [f64; 2],
    /// Crest height (absolute z, metres).
    pub crest_height_m: f64,
    /// Full width at the base, metres.
    pub width_m: f64,
}

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
    /// Start pose, ENU metres: inside the world and above the terrain. Required.
    pub start: Pose,
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

/// ROS 2 settings of a vehicle's stack (top-level `ros` for every vehicle, `vehicles[].ros` for
/// one). The programs of the vehicle (`programs[]` with its `vehicle`) get them as environment
/// variables: `ROS_DOMAIN_ID`, `COSIM_ROS_NAMESPACE`, `COSIM_ROS_USE_SIM_TIME` and
/// `COSIM_ROS_ARGS` (ROS 2 reads no environment variable for a node's namespace or for
/// `use_sim_time`: a program passes `$COSIM_ROS_ARGS` to its node).
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
        env
    }
}

impl Scenario {
    /// The capture agents the vehicles live with (`vehicles[].host`), each once, in the order
    /// they first appear: an agent's index is its place here.
    pub fn agents(&self) -> Vec<String> {
        let mut agents: Vec<String> = Vec::new();
        for h in self.vehicles.iter().filter_map(|v| v.host.as_ref()) {
            if !agents.contains(h) {
                agents.push(h.clone());
            }
        }
        agents
    }

    /// The ROS 2 settings of vehicle `v`: its own, then the scenario's.
    pub fn vehicle_ros(&self, v: &Vehicle) -> RosSettings {
        v.ros.or(&self.ros)
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

/// A UTC time `YYYY-MM-DDThh:mm:ssZ` (see [`UtcTime`]).
fn utc_time<'de, D: Deserializer<'de>>(d: D) -> Result<UtcTime, D::Error> {
    String::deserialize(d)?
        .parse()
        .map_err(serde::de::Error::custom)
}

fn default_nav_source() -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
}

/// A pose in the local ENU frame.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
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

/// Link models between vehicles, used by the embedded network simulator (`sim::network`;
/// formulas and sources in `model::link` and the book's Link models page).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Links {
    /// The model of every pair not listed in `pairs` (default `ideal`: 1 Gb/s, no delay); it
    /// has no `between`.
    #[serde(default)]
    pub default: LinkModel,
    /// Per-pair overrides: `{between: [a, b], model: ..., <model fields>}` (either direction).
    #[serde(default)]
    pub pairs: Vec<LinkModel>,
    /// Packets each vehicle's transmitter may hold waiting (beyond the one on air); an
    /// arrival finding it full is dropped with QUEUE_FULL (default 64).
    #[serde(default = "default_queue_packets")]
    pub queue_packets: u32,
    /// What a bit error does: `drop` (default) draws each copy against its PER and drops
    /// failures (PACKET_ERROR), delivered copies carry ber 0; `flip` delivers every copy with
    /// its link's BER for the receiving side to flip bits (ROS-NetSim's behaviour).
    #[serde(default)]
    pub errors: ErrorHandling,
}

impl Default for Links {
    fn default() -> Self {
        Links {
            default: LinkModel::default(),
            pairs: Vec::new(),
            queue_packets: default_queue_packets(),
            errors: ErrorHandling::default(),
        }
    }
}

fn default_queue_packets() -> u32 {
    64
}

/// What a bit error does to a packet copy.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ErrorHandling {
    /// Each copy is drawn against its PER; failures are dropped (PACKET_ERROR).
    #[default]
    Drop,
    /// Every copy is delivered with its link's BER, for the receiving side to flip bits.
    Flip,
}

/// One link model. `between` names the pair in `links.pairs` and is not allowed in
/// `links.default`.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LinkModel {
    /// Every packet arrives after `delay_ms`, serialized at `rate_bps`, no errors.
    Ideal {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Serialization rate, bit/s (> 0; default 1e9).
        #[serde(default = "default_ideal_rate")]
        rate_bps: f64,
        /// Delay, ms (≥ 0; default 0).
        #[serde(default)]
        delay_ms: f64,
    },
    /// As `ideal` within `range_m` (and only in line of sight if `los_required`); no link beyond.
    Disk {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Range, metres (> 0). Required.
        range_m: f64,
        /// Serialization rate, bit/s (> 0; default 1e9).
        #[serde(default = "default_ideal_rate")]
        rate_bps: f64,
        /// Delay, ms (≥ 0; default 0).
        #[serde(default)]
        delay_ms: f64,
        /// Only in line of sight (default false).
        #[serde(default)]
        los_required: bool,
    },
    /// No link: every copy is dropped as out of range, and the pair takes no transmitter time
    /// (vehicles without a radio in common, e.g. AUVs that talk through their modems only).
    None {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
    },
    /// Log-distance path loss plus the path's penetration losses → SNR → 802.11-like rate.
    Rf {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Carrier frequency, GHz (> 0; default 2.4).
        #[serde(default = "default_rf_frequency")]
        frequency_ghz: f64,
        /// Transmit power, dBm (default 20).
        #[serde(default = "default_rf_tx_power")]
        tx_power_dbm: f64,
        /// Path loss exponent n of the log-distance model (> 0; default 3).
        #[serde(default = "default_rf_exponent")]
        path_loss_exponent: f64,
        /// Reference distance d0, metres (> 0; default 1).
        #[serde(default = "default_one")]
        reference_distance_m: f64,
        /// Loss at the reference distance, dB; absent: the free-space loss there.
        #[serde(default)]
        reference_loss_db: Option<f64>,
        /// Receiver noise floor, dBm (default −94).
        #[serde(default = "default_rf_noise_floor")]
        noise_floor_dbm: f64,
        /// SNR thresholds → rates, `snr_db` strictly increasing; absent: the 802.11a/g OFDM
        /// table.
        #[serde(default)]
        rates: Option<Vec<RateStep>>,
        /// Delay, ms (≥ 0; default 0).
        #[serde(default)]
        delay_ms: f64,
    },
    /// Underwater acoustic link: sound speed, spreading + absorption + penetration losses,
    /// Wenz noise → SNR → BER/PER of a WHOI Micro-Modem rate; delay d/c; half-duplex and
    /// collisions at the receiver.
    Acoustic {
        /// The pair, `[a, b]` (vehicle names, either order): only in `links.pairs`, where it
        /// is required.
        #[serde(default)]
        between: Option<[String; 2]>,
        /// Micro-Modem rate 0–6 (default 1): modulation, bit rate and coding gain.
        #[serde(default = "default_one_u8")]
        #[schemars(range(max = 6))]
        micromodem_rate: u8,
        /// Bit rate, bit/s (> 0); absent: the rate's nominal bit rate.
        #[serde(default)]
        bit_rate_bps: Option<f64>,
        /// Coding gain, dB; absent: the rate's assumed coding gain.
        #[serde(default)]
        coding_gain_db: Option<f64>,
        /// Centre frequency, kHz (> 0; default 25).
        #[serde(default = "default_acoustic_frequency")]
        frequency_khz: f64,
        /// Bandwidth, kHz (> 0; default 5).
        #[serde(default = "default_acoustic_bandwidth")]
        bandwidth_khz: f64,
        /// Source level, dB re 1 µPa at 1 m (default 185).
        #[serde(default = "default_source_level")]
        source_level_db: f64,
        /// k in TL = k·10·log10(d) + α·d, in [0, 3] (default 1.5).
        #[serde(default = "default_spreading")]
        spreading_factor: f64,
        /// The absorption α: `francois_garrison` (default) or `thorp`.
        #[serde(default)]
        absorption: Absorption,
        /// `straight` (default: one straight path) or `beam` (the beam tracer's arrivals through
        /// `world.water.profile`; see `world.acoustic_paths`).
        #[serde(default)]
        propagation: Propagation,
        /// With `beam`: energy arriving within this many ms (> 0) after the strongest arrival is
        /// signal, later energy interference (ns-3 UAN's FH-FSK rule). Default: one bit time for
        /// FSK (12.5 ms at 80 bit/s), 5 ms for PSK (an assumed equaliser span).
        #[serde(default)]
        multipath_window_ms: Option<f64>,
        /// Capture: of overlapping receptions at one receiver, one at least this many dB
        /// (≥ 0) stronger than each other survives; absent: every overlap destroys both.
        #[serde(default)]
        capture_sir_db: Option<f64>,
    },
}

/// The acoustic absorption model.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Absorption {
    /// Thorp's formula (frequency only).
    Thorp,
    /// Francois and Garrison's (frequency, temperature, salinity, pH, depth).
    #[default]
    FrancoisGarrison,
}

/// One row of a rate table: `rate_bps` is usable from `snr_db` up.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    /// SNR from which the rate is usable, dB. Required.
    pub snr_db: f64,
    /// The rate, bit/s (> 0). Required.
    pub rate_bps: f64,
}

fn default_ideal_rate() -> f64 {
    1e9
}
fn default_rf_frequency() -> f64 {
    2.4
}
fn default_rf_tx_power() -> f64 {
    20.0
}
fn default_rf_exponent() -> f64 {
    3.0
}
fn default_one() -> f64 {
    1.0
}
fn default_one_u8() -> u8 {
    1
}
fn default_rf_noise_floor() -> f64 {
    -94.0
}
fn default_acoustic_frequency() -> f64 {
    25.0
}
fn default_acoustic_bandwidth() -> f64 {
    5.0
}
fn default_source_level() -> f64 {
    185.0
}
fn default_spreading() -> f64 {
    1.5
}

impl Default for LinkModel {
    fn default() -> Self {
        LinkModel::Ideal {
            between: None,
            rate_bps: 1e9,
            delay_ms: 0.0,
        }
    }
}

impl LinkModel {
    /// The pair a `links.pairs` entry names.
    pub fn between(&self) -> Option<&[String; 2]> {
        match self {
            LinkModel::Ideal { between, .. }
            | LinkModel::Disk { between, .. }
            | LinkModel::None { between }
            | LinkModel::Rf { between, .. }
            | LinkModel::Acoustic { between, .. } => between.as_ref(),
        }
    }
}

impl Scenario {
    /// The JSON Schema of a scenario file (`schema/scenario.schema.json`), as text: every key
    /// with its meaning, unit and default (the doc comments of these types), unknown keys
    /// refused as the loader refuses them. The loader's semantic rules beyond types, ranges and
    /// patterns (unique names, a whole number of windows, ...) are in the descriptions.
    pub fn schema_text() -> String {
        let mut text = serde_json::to_string_pretty(&schemars::schema_for!(Scenario))
            .expect("a derived JSON schema serializes");
        text.push('\n');
        text
    }

    /// Every pair of vehicles `(a, b)`, a < b in vehicle order, with its link model: the
    /// `links.pairs` entry naming it (`Some(index)`) or `links.default` (`None`).
    pub fn pair_links(&self) -> Vec<(usize, usize, Option<usize>, &LinkModel)> {
        let n = self.vehicles.len();
        let index = |name: &String| self.vehicles.iter().position(|v| &v.name == name);
        let mut listed = std::collections::HashMap::new();
        for (k, m) in self.links.pairs.iter().enumerate() {
            if let Some((a, b)) = m.between().and_then(|[a, b]| index(a).zip(index(b))) {
                listed.entry((a.min(b), a.max(b))).or_insert(k);
            }
        }
        let mut out = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for a in 0..n {
            for b in a + 1..n {
                out.push(match listed.get(&(a, b)) {
                    Some(&k) => (a, b, Some(k), &self.links.pairs[k]),
                    None => (a, b, None, &self.links.default),
                });
            }
        }
        out
    }
}

/// The water the acoustic links run through (`world.water`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Water {
    /// Temperature, °C, in [−2, 40] (default 10).
    #[serde(default = "default_temperature")]
    pub temperature_c: f64,
    /// Salinity, ppt, in [0, 45] (default 35).
    #[serde(default = "default_salinity")]
    pub salinity_ppt: f64,
    /// pH, in [6, 9.5] (default 8).
    #[serde(default = "default_ph")]
    pub ph: f64,
    /// `mackenzie` (default; from temperature, salinity and depth) or a fixed speed in m/s,
    /// in [1300, 1700].
    #[serde(default)]
    pub sound_speed: SoundSpeed,
    /// Surface wind speed for the Wenz noise, m/s (≥ 0; default 5).
    #[serde(default = "default_wind")]
    pub wind_mps: f64,
    /// Shipping activity factor in [0, 1] for the Wenz noise (default 0.5).
    #[serde(default = "default_shipping")]
    pub shipping: f64,
    /// Sound speed by depth, for beam tracing: rows of `depth_m` (m, from 0, strictly
    /// increasing, the last at least the terrain's deepest point) and either `speed_mps` or
    /// `temperature_c` (with `salinity_ppt`, default the water's, through Mackenzie 1981);
    /// every speed in [1400, 1700] m/s, linear between rows. Absent: Mackenzie at the water's
    /// temperature and salinity (or the fixed `sound_speed`), the same at every depth but for
    /// the pressure term.
    #[serde(default)]
    pub profile: Option<Vec<ProfileRow>>,
}

/// One row of `world.water.profile`: a depth and the sound speed there, given or from the
/// temperature and salinity.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileRow {
    /// Depth, m (≥ 0, positive down). Required.
    pub depth_m: f64,
    /// Sound speed, m/s, in [1400, 1700]; or give `temperature_c` instead.
    #[serde(default)]
    pub speed_mps: Option<f64>,
    /// Temperature, °C, in [−2, 40], for Mackenzie's equation; or give `speed_mps` instead.
    #[serde(default)]
    pub temperature_c: Option<f64>,
    /// Salinity, ppt, in [0, 45], with `temperature_c` (default the water's `salinity_ppt`).
    #[serde(default)]
    pub salinity_ppt: Option<f64>,
}

/// Lowest sound speed a profile may hold, m/s.
pub const MIN_PROFILE_SPEED_MPS: f64 = 1400.0;
/// Highest sound speed a profile may hold, m/s.
pub const MAX_PROFILE_SPEED_MPS: f64 = 1700.0;

/// Sound speed in sea water (m/s) from temperature (°C), salinity (ppt) and depth (m, positive
/// down), Mackenzie (1981), JASA 70(3) 807–812, nine-term equation:
///
/// c = 1448.96 + 4.591 T − 5.304·10⁻² T² + 2.374·10⁻⁴ T³ + 1.340 (S − 35) + 1.630·10⁻² D
///     + 1.675·10⁻⁷ D² − 1.025·10⁻² T (S − 35) − 7.139·10⁻¹³ T D³
///
/// Valid for 2 ≤ T ≤ 30 °C, 25 ≤ S ≤ 40 ppt, 0 ≤ D ≤ 8000 m (standard error 0.07 m/s).
pub fn sound_speed_mackenzie(temperature_c: f64, salinity_ppt: f64, depth_m: f64) -> f64 {
    let (t, s, d) = (temperature_c, salinity_ppt - 35.0, depth_m);
    1448.96 + 4.591 * t - 5.304e-2 * t * t
        + 2.374e-4 * t * t * t
        + 1.340 * s
        + 1.630e-2 * d
        + 1.675e-7 * d * d
        - 1.025e-2 * t * s
        - 7.139e-13 * t * d * d * d
}

/// Depth step of the profile made from the water's own settings when `profile` is absent.
const DEFAULT_PROFILE_STEP_M: f64 = 50.0;

impl Water {
    /// The speed of row `row` (its `speed_mps`, or Mackenzie at its temperature, its salinity
    /// or the water's, and its depth); `None` when the row gives neither.
    pub fn row_speed(&self, row: &ProfileRow) -> Option<f64> {
        row.speed_mps.or_else(|| {
            row.temperature_c.map(|t| {
                sound_speed_mackenzie(
                    t,
                    row.salinity_ppt.unwrap_or(self.salinity_ppt),
                    row.depth_m,
                )
            })
        })
    }

    /// The sound-speed profile for beam tracing down to `deepest_m` (m, the terrain's deepest
    /// point): `(depths, speeds)`, depths from 0 increasing. The scenario's `profile` with
    /// Mackenzie applied where a row gives a temperature; absent, rows every 50 m from 0 to
    /// `deepest_m` (at least two) at the water's temperature and salinity (or its fixed
    /// `sound_speed`).
    pub fn sound_speed_profile(&self, deepest_m: f64) -> (Vec<f64>, Vec<f64>) {
        if let Some(rows) = &self.profile {
            return rows
                .iter()
                .map(|r| (r.depth_m, self.row_speed(r).unwrap_or(f64::NAN)))
                .unzip();
        }
        let deepest = if deepest_m.is_finite() {
            deepest_m.max(1.0)
        } else {
            1.0
        };
        let steps = (deepest / DEFAULT_PROFILE_STEP_M).ceil().max(1.0) as usize;
        (0..=steps)
            .map(|i| {
                let d = deepest * i as f64 / steps as f64;
                let c = match self.sound_speed {
                    SoundSpeed::Fixed(c) => c,
                    SoundSpeed::Model(SoundSpeedModel::Mackenzie) => {
                        sound_speed_mackenzie(self.temperature_c, self.salinity_ppt, d)
                    }
                };
                (d, c)
            })
            .unzip()
    }
}

impl Default for Water {
    fn default() -> Self {
        Water {
            temperature_c: default_temperature(),
            salinity_ppt: default_salinity(),
            ph: default_ph(),
            sound_speed: SoundSpeed::default(),
            wind_mps: default_wind(),
            shipping: default_shipping(),
            profile: None,
        }
    }
}

fn default_temperature() -> f64 {
    10.0
}
fn default_salinity() -> f64 {
    35.0
}
fn default_ph() -> f64 {
    8.0
}
fn default_wind() -> f64 {
    5.0
}
fn default_shipping() -> f64 {
    0.5
}

/// The speed of sound: a fixed value or a model.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum SoundSpeed {
    /// A fixed speed, m/s.
    Fixed(f64),
    /// A model of temperature, salinity and depth.
    Model(SoundSpeedModel),
}

impl Default for SoundSpeed {
    fn default() -> Self {
        SoundSpeed::Model(SoundSpeedModel::Mackenzie)
    }
}

/// A sound speed model.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SoundSpeedModel {
    /// Mackenzie's nine-term equation (1981).
    Mackenzie,
}

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
        }
    }
}

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

/// The network coordinator's live side: vehicle traffic captured from one TUN interface per
/// vehicle (each in its own network namespace) and released as the network simulator decides.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// `none` (default): no live traffic; `tun`: a namespace and TUN interface per vehicle.
    #[serde(default)]
    pub capture: Capture,
    /// A copy the simulator has neither released nor dropped after this many windows is
    /// dropped ("held too long"). Default 100.
    #[serde(default = "default_max_hold_windows")]
    pub max_hold_windows: u32,
    /// Packets waiting for the next window, at most (more are dropped, "queue full"). Default 4096.
    #[serde(default = "default_queue_limit")]
    pub queue_limit: usize,
    /// Links check a CRC: a packet with any flipped bit is dropped ("bit errors"). With
    /// `false` the corrupted bytes are delivered. Default true.
    #[serde(default = "default_true")]
    pub crc: bool,
    /// Write `<vehicle>.pcap` per vehicle (what it sent and what it received, sim timestamps).
    #[serde(default)]
    pub pcap: bool,
    /// Bytes of each packet kept in the pcap files (as `tcpdump -s`); the headers fit in 128.
    /// Default 262144 (whole packets).
    #[serde(default = "default_pcap_snaplen")]
    pub pcap_snaplen: u32,
    /// TUN segmentation offload (IFF_VNET_HDR): the kernel hands over TCP bursts of up to
    /// 64 KiB as one packet, which is much faster; per-packet link models then see fewer,
    /// larger packets. Default false (one entry per IP packet on the wire).
    #[serde(default)]
    pub offload: bool,
    /// Where the network coordinator meets the capture agents of the vehicles on other
    /// machines (`vehicles[].host`). Default: loopback only.
    #[serde(default)]
    pub agents: Agents,
}

/// The network coordinator's side of the capture agents (`network.agents`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    /// `ADDRESS:PORT` the network coordinator listens on for its agents (TCP). Default
    /// `127.0.0.1:5610`: set the address of the network that reaches the agents' machines.
    #[serde(default = "default_agents_bind")]
    pub bind: String,
    /// A file holding the run's secret (64 hex digits, readable by its owner only), made by
    /// `cosim agent-key`. Absent: every run makes a fresh one, `<out>/agent.key`.
    #[serde(default)]
    pub key_file: Option<String>,
    /// How long (ms, > 0) a window waits for every agent's report before the run ends with an
    /// error naming the agent. Default 2000.
    #[serde(default = "default_agents_timeout_ms")]
    pub timeout_ms: u64,
    /// How long (s, > 0) the run waits for every agent to join before window 0. Default 120.
    #[serde(default = "default_agents_join_timeout_s")]
    pub join_timeout_s: f64,
}

impl Default for Agents {
    fn default() -> Agents {
        Agents {
            bind: default_agents_bind(),
            key_file: None,
            timeout_ms: default_agents_timeout_ms(),
            join_timeout_s: default_agents_join_timeout_s(),
        }
    }
}

fn default_agents_bind() -> String {
    "127.0.0.1:5610".into()
}

fn default_agents_timeout_ms() -> u64 {
    2000
}

fn default_agents_join_timeout_s() -> f64 {
    120.0
}

/// Whether the vehicles' own traffic is captured.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Capture {
    /// No live traffic.
    #[default]
    None,
    /// A network namespace `ncs-<vehicle>` and a TUN interface per vehicle (needs root).
    Tun,
}

fn default_max_hold_windows() -> u32 {
    100
}
fn default_queue_limit() -> usize {
    4096
}
fn default_pcap_snaplen() -> u32 {
    crate::wire::pcap::SNAPLEN
}
fn default_true() -> bool {
    true
}

impl Default for Network {
    fn default() -> Self {
        Network {
            capture: Capture::None,
            max_hold_windows: default_max_hold_windows(),
            queue_limit: default_queue_limit(),
            crc: true,
            pcap: false,
            pcap_snaplen: default_pcap_snaplen(),
            offload: false,
            agents: Agents::default(),
        }
    }
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

/// The emulated Micro-Modems (`acoustic_modems`): bridges and the acoustic front end shared
/// by every vehicle's modem. Channel numbers default to a Micro-Modem's 25 kHz band.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AcousticModems {
    /// Address the modem bridges listen on (default 127.0.0.1).
    #[serde(default = "default_nav_source")]
    pub bind: std::net::IpAddr,
    /// UTC time of sim time 0, `YYYY-MM-DDThh:mm:ss[.f]Z`: the modems' clocks read this plus
    /// the sim time (plus whatever offset the host sets). Default 2026-01-01T00:00:00Z.
    #[serde(default = "default_modem_epoch", deserialize_with = "utc_time")]
    #[schemars(
        with = "String",
        regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$")
    )]
    pub epoch_utc: UtcTime,
    /// Centre frequency of the modems' band, kHz (> 0; default 25).
    #[serde(default = "default_acoustic_frequency")]
    pub frequency_khz: f64,
    /// Bandwidth, kHz (> 0; default 5).
    #[serde(default = "default_acoustic_bandwidth")]
    pub bandwidth_khz: f64,
    /// Source level, dB re 1 µPa at 1 m (default 185).
    #[serde(default = "default_source_level")]
    pub source_level_db: f64,
    /// k in TL = k·10·log10(d) + α·d, in [0, 3] (default 1.5).
    #[serde(default = "default_spreading")]
    pub spreading_factor: f64,
    /// The absorption α: `francois_garrison` (default) or `thorp`.
    #[serde(default)]
    pub absorption: Absorption,
    /// `straight` (default: one straight path) or `beam` (the beam tracer's arrivals through
    /// `world.water.profile`; see `world.acoustic_paths`).
    #[serde(default)]
    pub propagation: Propagation,
    /// With `beam`: energy arriving within this many ms (> 0) after the strongest arrival is
    /// signal, later energy interference (ns-3 UAN's FH-FSK rule). Default: one bit time for
    /// FSK (12.5 ms at 80 bit/s), 5 ms for PSK (an assumed equaliser span).
    #[serde(default)]
    pub multipath_window_ms: Option<f64>,
    /// Capture threshold for overlapping receptions, dB (≥ 0); absent: every overlap destroys
    /// both.
    #[serde(default)]
    pub capture_sir_db: Option<f64>,
    /// Period of the `$CAREV,...,AUV` heartbeat (sim seconds, default 10).
    #[serde(default = "default_heartbeat_s")]
    pub heartbeat_s: f64,
}

fn default_modem_epoch() -> UtcTime {
    // 2026-01-01T00:00:00Z
    UtcTime::from_ns(1_767_225_600_000_000_000)
}
fn default_heartbeat_s() -> f64 {
    10.0
}

/// A program the run starts (`programs[]`): its output goes to
/// `<out>/programs/<name>.stdout.log` and `.stderr.log`.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// Unique, `[A-Za-z0-9_-]`, at most 32 characters; names the log files.
    pub name: String,
    /// Run inside this vehicle's network namespace `ncs-<vehicle>` (needs `network.capture:
    /// tun`); absent: on the host.
    #[serde(default)]
    pub vehicle: Option<String>,
    /// Sim time to start at (s, default 0, below `duration_s`).
    #[serde(default)]
    pub start_s: f64,
    /// The program: a string run by `sh -c`, or a list of strings (the program and its
    /// arguments, no shell). Required.
    pub command: ProgramCommand,
    /// Extra environment variables (on top of the run's own and the `COSIM_*` ones); numbers
    /// and booleans are taken as written. Default none.
    #[serde(default, deserialize_with = "scalar_map")]
    #[schemars(schema_with = "scalar_map_schema")]
    pub env: std::collections::BTreeMap<String, String>,
    /// Working directory, relative to the scenario file's directory (default that directory).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Signal sent to the program's process group at the end of the run: `INT` (default) or
    /// `TERM` (`SIGINT` and `SIGTERM` are accepted too).
    #[serde(default)]
    pub stop_signal: StopSignal,
    /// How long the group may take to end after the stop signal before it is killed (s,
    /// default 5).
    #[serde(default = "default_stop_timeout_s")]
    pub stop_timeout_s: f64,
}

fn default_stop_timeout_s() -> f64 {
    5.0
}

/// `command`: a string run by `sh -c`, or a list of strings run as argv (no shell).
#[derive(Debug, Clone, PartialEq)]
pub enum ProgramCommand {
    Shell(String),
    Argv(Vec<String>),
}

impl<'de> Deserialize<'de> for ProgramCommand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProgramCommand, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ProgramCommand;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a string (run by sh -c) or a list of strings (the program and its arguments)",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ProgramCommand, E> {
                Ok(ProgramCommand::Shell(v.to_owned()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ProgramCommand, A::Error> {
                let mut argv = Vec::new();
                while let Some(Scalar(arg)) = seq.next_element()? {
                    argv.push(arg);
                }
                Ok(ProgramCommand::Argv(argv))
            }
        }
        d.deserialize_any(V)
    }
}

/// A scalar taken as a string: `[iperf3, -p, 5201]` is three arguments.
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The schema of a `programs[].env`: names to strings, numbers or booleans.
fn scalar_map_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "additionalProperties": { "type": ["string", "number", "boolean"] }
    })
}

/// `command`: a string, or a list of strings and numbers.
impl JsonSchema for ProgramCommand {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProgramCommand".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A string run by `sh -c`, or a list of strings (the program and its arguments; numbers and booleans are taken as written).",
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": ["string", "number", "boolean"] } }
            ]
        })
    }
}

fn scalar_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, String>, D::Error> {
    let m = std::collections::BTreeMap::<String, Scalar>::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k, v.0)).collect())
}

/// The signal that asks a program to stop: `INT` or `TERM` (also written `SIGINT`,
/// `SIGTERM`).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[schemars(extend("enum" = ["INT", "SIGINT", "TERM", "SIGTERM"]))]
pub enum StopSignal {
    #[default]
    #[serde(rename = "INT", alias = "SIGINT")]
    Int,
    #[serde(rename = "TERM", alias = "SIGTERM")]
    Term,
}

impl StopSignal {
    /// The signal's number.
    pub fn number(self) -> i32 {
        match self {
            StopSignal::Int => libc::SIGINT,
            StopSignal::Term => libc::SIGTERM,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Int => "SIGINT",
            StopSignal::Term => "SIGTERM",
        }
    }
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

    /// Where the committed schema lives, from the crate's root.
    const SCHEMA_FILE: &str = "schema/scenario.schema.json";

    #[test]
    fn the_committed_schema_is_the_scenario_types_schema() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_FILE);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let current = Scenario::schema_text();
        if std::env::var_os("COSIM_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &current).unwrap();
            return;
        }
        assert!(
            committed == current,
            "{SCHEMA_FILE} is not the schema of the scenario types (config::Scenario): a key \
             of the scenario file, or its doc comment, was added, renamed, retyped or removed. \
             If that is meant, regenerate it with `COSIM_WRITE_SCHEMA=1 cargo test --lib \
             config::types` and commit it (the book's scenario reference includes it)."
        );
    }

    #[test]
    fn default_modem_epoch_is_2026() {
        assert_eq!(
            default_modem_epoch(),
            "2026-01-01T00:00:00Z".parse().unwrap()
        );
        assert_eq!(baud_supported(19200), Some(19200));
        assert_eq!(baud_supported(12345), None);
    }
}
