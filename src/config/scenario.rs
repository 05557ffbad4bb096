//! The scenario file's schema: one YAML document per run, the [`Scenario`] whose top-level
//! keys are the sections (each section's types in the file named after its key).
//!
//! Every struct rejects unknown keys (`deny_unknown_fields`), so a misspelt key is an error
//! that names the file, the key path and the line instead of a silently ignored setting.
//! Units are SI and part of the key name where it helps (`window_ms`, `speed_mps`).
//! The local frame is ENU: x east, y north, z up (metres), origin at `world.origin`;
//! underwater vehicles therefore have negative z (`z = -depth`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::acoustic_modems::AcousticModems;
use super::auv_interface::AuvInterface;
use super::links::{LinkModel, Links};
use super::netsim_manager::NetsimManager;
use super::network::Network;
use super::programs::Program;
use super::record::{RecordSettings, ViewerSettings};
use super::ros::RosSettings;
use super::simulators::Simulators;
use super::traffic::Traffic;
use super::vehicles::Vehicle;
use super::world::World;

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
    /// With pacing: the `SCHED_FIFO` priority (1–99) of the threads on the window's path — the
    /// coordinator's window loop, the embedded physics simulator's thread and the release
    /// threads that write packets into the vehicles' TUNs — so that the programs each release
    /// wakes do not take the core from them in the middle of a window's work
    /// (docs/src/explanation/lockstep.md, "Priority"). Absent (the default): they stay at
    /// `nice`. The programs the run starts never inherit it. Needs root (or CAP_SYS_NICE);
    /// otherwise the run goes on without and says so in the log.
    #[serde(default)]
    #[schemars(range(min = 1, max = 99))]
    pub realtime_priority: Option<u8>,
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
    /// Traffic the run generates itself between vehicles, in simulated time (UDP, ping,
    /// multicast heartbeats, TCP transfers), carried by the network simulator as live packets
    /// are. Default none.
    #[serde(default)]
    pub traffic: Traffic,
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

    /// Per vehicle, in order: the environment its programs get from its ROS 2 settings
    /// ([`RosSettings::env`]), and `cosim exec` in its namespace too.
    pub fn vehicles_ros_env(&self) -> Vec<Vec<(String, String)>> {
        self.vehicles
            .iter()
            .map(|v| self.vehicle_ros(v).env())
            .collect()
    }

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

#[cfg(test)]
mod tests {
    use super::*;

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
             config::scenario` and commit it (the book's scenario reference includes it)."
        );
    }
}
