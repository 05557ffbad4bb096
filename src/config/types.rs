//! The scenario file's schema: one YAML document per run.
//!
//! Every struct rejects unknown keys (`deny_unknown_fields`), so a misspelt key is an error
//! that names the file, the key path and the line instead of a silently ignored setting.
//! Units are SI and part of the key name where it helps (`window_ms`, `speed_mps`).
//! The local frame is ENU: x east, y north, z up (metres), origin at `world.origin`;
//! underwater vehicles therefore have negative z (`z = -depth`).

use serde::Deserialize;

/// A whole scenario: `cosim run <file>` runs exactly one.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name; the default output folder is `out/<name>`.
    pub name: String,
    /// Lockstep window W in milliseconds (sim time). Must be > 0.
    pub window_ms: f64,
    /// Simulated duration in seconds; the run ends after `ceil(duration_s / W)` windows.
    pub duration_s: f64,
    /// Seed for every random draw (procedural terrain, packet error draws, ...).
    #[serde(default)]
    pub seed: u64,
    /// Wall-clock pacing: 1.0 = real time, 2.0 = twice as fast, 0 = as fast as possible.
    #[serde(default)]
    pub real_time_factor: f64,
    /// Output folder (relative to the working directory); default `out/<name>`.
    #[serde(default)]
    pub output_dir: Option<String>,
    pub world: World,
    pub vehicles: Vec<Vehicle>,
    #[serde(default)]
    pub links: Links,
    #[serde(default)]
    pub simulators: Simulators,
    /// Live vehicle traffic: capture through TUN interfaces, release, ledger, pcap.
    #[serde(default)]
    pub network: Network,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct World {
    /// Geodetic origin of the local ENU frame.
    pub origin: GeoOrigin,
    pub terrain: Terrain,
    /// Loss charged per metre of terrain a path crosses, in dB/m (default 2.0).
    #[serde(default = "default_penetration_loss")]
    pub penetration_loss_db_per_m: f64,
}

fn default_penetration_loss() -> f64 {
    2.0
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeoOrigin {
    pub lat_deg: f64,
    pub lon_deg: f64,
    #[serde(default)]
    pub alt_m: f64,
}

/// Terrain or bathymetry: a height grid, centred on the origin, heights in metres (z up).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Terrain {
    /// A seeded generator: gentle noise plus explicit ridges and hills.
    Procedural {
        /// Extent in metres, `[x, y]`.
        size_m: [f64; 2],
        cell_size_m: f64,
        /// Height of the flat floor (negative for a seafloor).
        base_height_m: f64,
        /// Peak-to-peak amplitude of the seeded noise on top of the floor.
        #[serde(default)]
        relief_m: f64,
        /// Seed of the noise; default the scenario's `seed`.
        #[serde(default)]
        seed: Option<u64>,
        #[serde(default)]
        ridges: Vec<Ridge>,
    },
    /// A grayscale PNG (8 or 16 bit): black = `min_height_m`, white = `max_height_m`.
    /// Row 0 is the northern edge, column 0 the western edge.
    Png {
        /// Relative to the scenario file.
        path: String,
        cell_size_m: f64,
        min_height_m: f64,
        max_height_m: f64,
    },
    /// A CSV grid of heights in metres (comma separated, one row per line, `#` comments).
    /// Row 0 is the northern edge, column 0 the western edge.
    Csv { path: String, cell_size_m: f64 },
}

/// A ridge: a raised band between two points with a cosine cross-section.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ridge {
    pub from: [f64; 2],
    pub to: [f64; 2],
    /// Crest height (absolute z, metres).
    pub crest_height_m: f64,
    /// Full width at the base, metres.
    pub width_m: f64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Vehicle {
    pub name: String,
    /// Addresses of the vehicle's interface, with prefix length: `10.10.0.1/24`, `fd00::1/64`.
    pub addresses: Vec<String>,
    #[serde(default)]
    pub modem: Option<Modem>,
    pub start: Pose,
    pub motion: Motion,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Modem {
    /// TCP port of the emulated modem's bridge (62000–62007 by convention).
    pub tcp_port: u16,
    /// Acoustic address (SRC) of the modem, 0–127.
    pub id: u8,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pose {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    /// Heading in degrees, compass convention (0 = north, 90 = east).
    #[serde(default)]
    pub heading_deg: f64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Motion {
    /// Holds its start pose.
    Stationary,
    /// Patrols `waypoints` (`[x, y, z]`) in order, looping back to the first.
    Patrol {
        speed_mps: f64,
        max_turn_rate_deg_s: f64,
        max_depth_rate_mps: f64,
        waypoints: Vec<[f64; 3]>,
        /// A waypoint counts as reached within this horizontal distance (default 2 m).
        #[serde(default = "default_capture_radius")]
        capture_radius_m: f64,
    },
    /// Moved by someone else: NETSIM nav updates or an external physics simulator.
    External,
}

fn default_capture_radius() -> f64 {
    2.0
}

/// Link models between vehicles; used by the embedded network simulator.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Links {
    #[serde(default)]
    pub default: LinkModel,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LinkModel {
    /// Every packet arrives after `delay_ms`, serialized at `rate_bps`, no errors.
    Ideal { rate_bps: f64, delay_ms: f64 },
}

impl Default for LinkModel {
    fn default() -> Self {
        LinkModel::Ideal { rate_bps: 1e9, delay_ms: 0.0 }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Simulators {
    #[serde(default)]
    pub physics: SimulatorEndpoint,
    #[serde(default)]
    pub network: SimulatorEndpoint,
    /// How long a coordinator waits for a simulator's END before it ends the run.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// How long a coordinator waits for a simulator to accept the connection and answer
    /// window 0 (a simulator may need time to load its world).
    #[serde(default = "default_startup_timeout_ms")]
    pub startup_timeout_ms: u64,
    /// Internal integration step of the embedded physics simulator (ms, ≤ W is used).
    #[serde(default = "default_physics_step_ms")]
    pub physics_step_ms: f64,
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
            physics: SimulatorEndpoint::default(),
            network: SimulatorEndpoint::default(),
            timeout_ms: default_timeout_ms(),
            startup_timeout_ms: default_startup_timeout_ms(),
            physics_step_ms: default_physics_step_ms(),
        }
    }
}

/// Where a simulator lives.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SimulatorEndpoint {
    /// Ours, inside the coordinator's process.
    #[default]
    Embedded,
    /// Another process (ours or a third party's) reached over ZeroMQ; the simulator binds,
    /// the coordinator connects, e.g. `tcp://127.0.0.1:5601`.
    Zeromq { endpoint: String },
}

/// The network coordinator's live side: vehicle traffic captured from one TUN interface per
/// vehicle (each in its own network namespace) and released as the network simulator decides.
#[derive(Debug, Clone, Deserialize, PartialEq)]
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
    /// TUN segmentation offload (IFF_VNET_HDR): the kernel hands over TCP bursts of up to
    /// 64 KiB as one packet, which is much faster; per-packet link models then see fewer,
    /// larger packets. Default false (one entry per IP packet on the wire).
    #[serde(default)]
    pub offload: bool,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Capture {
    #[default]
    None,
    Tun,
}

fn default_max_hold_windows() -> u32 {
    100
}
fn default_queue_limit() -> usize {
    4096
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
            offload: false,
        }
    }
}
