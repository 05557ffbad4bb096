//! Scenario configuration: one YAML file per run, typed and validated.
//!
//! # Format
//!
//! A scenario is a single YAML document whose schema is [`Scenario`] ([`scenario`]), each
//! section's types in the module named after its key: [`world`] (its water in [`water`]),
//! [`vehicles`], [`links`], [`simulators`], [`netsim_manager`], [`network`],
//! [`acoustic_modems`], [`programs`], [`traffic`], [`ros`], [`record`] (with `viewer`) and
//! [`auv_interface`]; the shipped `config/default.yaml` explains every key.
//! `schema/scenario.schema.json` is its JSON Schema, generated from these types and their doc
//! comments ([`Scenario::schema_text`]; a test keeps the two equal): every shipped scenario
//! names it on its first line (`# yaml-language-server: $schema=../schema/scenario.schema.json`)
//! so that editors complete and check keys.
//!
//! Units are SI and usually part of the key name (`window_ms`, `speed_mps`); the local frame
//! is ENU (x east, y north, z up, metres) centred on `world.origin`. Tagged choices use a
//! `kind:` key (`world.terrain`, `vehicles[i].motion`, `simulators.*`) or a `model:` key
//! (`links.default`, `links.pairs[i]`). Unknown keys are errors, never silently ignored.
//! Terrain files (`kind: png`, `csv`, `geotiff`, `ascii_grid`) are resolved relative to the
//! directory of the scenario file; after loading, their `path` holds the resolved path. A
//! georeferenced raster is resampled around `world.origin` ([`raster`], through [`geo`]); a
//! logged track's file is read at loading into its samples ([`track`]).
//!
//! # Parsed once
//!
//! Values with a syntax of their own are typed when the file is read, so nothing later parses
//! them again: vehicle addresses are [`ipnet::IpNet`]s ([`parse_host_address`]), the modems'
//! `epoch_utc` a [`UtcTime`](crate::wire::utc::UtcTime), `simulators.physics` a
//! [`PhysicsEndpoint`] and `simulators.network` a [`NetworkEndpoint`], each holding a
//! [`PeerEndpoint`] (a [`ZmqEndpoint`] or a [`RosnetsimAddress`]) or the settings of a
//! simulator of its role ([`endpoint`]).
//! The terrain is read into a [`HeightGrid`] ([`terrain`]) and held by the
//! [`LoadedScenario`], so the checks against it are part of loading.
//!
//! # Loading and rules
//!
//! [`load()`] and [`parse_str`] read a scenario into a [`LoadedScenario`]: a YAML pre-pass
//! (size, nesting, an empty document, keys written twice, tabs), the typed pass, then the
//! semantic rules, one file per section under `rules/` named as the file of its types, then
//! the terrain. Every problem is a [`ConfigError`] that names the file, the key path and the
//! line; loading stops at the first, in the order the loader's and the rules' module docs
//! give.
//!
//! # Sweep files
//!
//! A campaign's sweep file ([`sweep`], `schema/sweep.schema.json`) is read by the same pre-pass
//! and typed pass; each of its runs is the base scenario's YAML with values written at key
//! paths, loaded as above.

pub mod acoustic_modems;
pub mod auv_interface;
pub mod cast;
pub mod endpoint;
pub mod files;
pub mod geo;
pub mod links;
pub mod netsim_manager;
pub mod network;
pub mod phase;
pub mod programs;
pub mod raster;
pub mod record;
pub mod ros;
pub mod scenario;
pub mod sea_water;
pub mod simulators;
pub mod sweep;
pub mod terrain;
pub mod track;
pub mod traffic;
pub mod vehicles;
pub mod water;
pub mod world;

mod error;
mod load;
mod rules;
mod source_map;

pub use acoustic_modems::AcousticModems;
pub use auv_interface::{AuvInterface, Cameras};
pub use cast::{Cast, CastProfile};
pub use endpoint::{
    AuvClientSettings, CoordinatorEndpoint, GazeboSettings, HostPort, NetworkEndpoint, Ns3Settings,
    Ns3Uan, Ns3Wifi, PeerEndpoint, PhysicsEndpoint, RosnetsimAddress, SecureAddress, SimulatorArg,
    UanMac, WifiRateManager, WifiStandard, WrongRole, ZmqEndpoint, INSECURE_PEERS,
};
pub use error::ConfigError;
pub use links::{Absorption, ErrorHandling, LinkModel, Links, Propagation, RateStep};
pub use load::{load, parse_str, LoadedScenario, MAX_FILE_BYTES};
pub use netsim_manager::{Environment, NetsimManager};
pub use network::{Agents, Capture, Network};
pub use phase::Phase;
pub use programs::{Program, ProgramCommand, StopSignal};
pub use record::{RecordSettings, ViewerSettings, ViewerTls};
pub use ros::RosSettings;
pub use scenario::Scenario;
pub use sea_water::{sound_speed_mackenzie, MAX_PROFILE_SPEED_MPS, MIN_PROFILE_SPEED_MPS};
pub use simulators::Simulators;
pub use source_map::{SourceMap, MAX_NESTING};
pub use terrain::{HeightGrid, TerrainError};
pub use track::{Track, TrackEnd, TrackLog};
pub use traffic::{Flow, FlowKind, Pattern, Traffic};
pub use vehicles::{
    baud_supported, parse_host_address, Attach, AttachTo, AuvDynamics, ContainerEngine, Modem,
    ModemPassthrough, Motion, Pose, Vehicle, OWN_NETNS_PREFIX, SERIAL_BAUDS,
};
pub use water::{ProfileRow, SoundSpeed, SoundSpeedModel, Water};
pub use world::{AcousticPaths, GeoOrigin, RasterValues, Ridge, Seabed, Terrain, World};
