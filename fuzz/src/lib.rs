//! What the fuzz targets share: shipped scenarios, loaded once, and the fixtures built from them.

use netsim_cosim::config::{self, LoadedScenario, Scenario};
use netsim_cosim::net::addr::AddressBook;
use netsim_cosim::net::traffic::{Engine, EngineConfig};
use netsim_cosim::wire::channel::Channel;
use std::path::Path;
use std::sync::OnceLock;

fn load(
    slot: &'static OnceLock<LoadedScenario>,
    text: &str,
    file: &str,
) -> &'static LoadedScenario {
    slot.get_or_init(|| {
        config::parse_str(text, Path::new(file)).unwrap_or_else(|e| panic!("shipped scenario: {e}"))
    })
}

/// `config/default.yaml`: three AUVs with IPv4 addresses.
pub fn default_scenario() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/default.yaml"),
        "config/default.yaml",
    )
}

/// `config/acoustic.yaml`: three AUVs on acoustic links (delays, collisions, capture).
pub fn acoustic() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/acoustic.yaml"),
        "config/acoustic.yaml",
    )
}

/// `config/acoustic_modems.yaml`: four emulated Micro-Modems.
pub fn acoustic_modems() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/acoustic_modems.yaml"),
        "config/acoustic_modems.yaml",
    )
}

/// `config/netsim_manager.yaml`: vehicles driven by NETSIM nav updates.
pub fn netsim_manager() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/netsim_manager.yaml"),
        "config/netsim_manager.yaml",
    )
}

/// The vehicles at their start poses, every pair in line of sight.
pub fn channel_at_start(s: &Scenario) -> Channel {
    let mut c = Channel::default();
    for v in &s.vehicles {
        c.push_node([v.start.x, v.start.y, v.start.z, 1.0, 0.0, 0.0, 0.0]);
    }
    c
}

/// The network coordinator's packet engine for `loaded`, as the live side configures it (the
/// scenario's windows).
pub fn engine(loaded: &LoadedScenario) -> Engine {
    let s = &loaded.scenario;
    let cfg = EngineConfig {
        schedule: loaded.schedule(),
        queue_limit: s.network.queue_limit,
        max_hold_windows: s.network.max_hold_windows,
        crc: s.network.crc,
        seed: s.seed,
    };
    Engine::new(AddressBook::new(&s.vehicles), cfg)
}
