//! The command lines of the binaries as clap types: `cosim` ([`Cosim`]), `physics_coordinator`
//! ([`PhysicsCoordinatorArgs`]), `network_coordinator` ([`NetworkCoordinatorArgs`]) and
//! `auv_bridge` ([`AuvBridgeArgs`]). The binaries parse them; the book's CLI reference
//! (`docs/src/reference/cli.md`) is generated from them with `clap-markdown` by the tests
//! below, which keep it current and every argument and subcommand described.
//!
//! The command tree is the same in every build: what needs a cargo feature (`ros`, `gazebo`)
//! is there and says so, and refuses to run in a build without it.

use crate::config::Phase;
use crate::config::{
    CoordinatorEndpoint, NetworkEndpoint, PeerEndpoint, PhysicsEndpoint, SimulatorArg,
};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// The version and the cargo features of this build, as `--version` prints them.
pub const VERSION: &str = if cfg!(feature = "gazebo") {
    concat!(env!("CARGO_PKG_VERSION"), " (features: ros, gazebo)")
} else if cfg!(feature = "ros") {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (features: ros; without gazebo)"
    )
} else {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (features: none; without ros, gazebo)"
    )
};

/// What a build without the `ros` feature says when asked for something only ROS 2 gives.
pub const NEEDS_ROS: &str = "this build has no `ros` feature: build with `cargo build --features ros` (ROS 2 sourced, or `. .ros/env.sh` after `scripts/setup --ros`)";

/// The output folder's rule, shared by the commands that write a run.
const OUT_HELP: &str = "Output folder (default: the scenario's `output_dir`, else `out/<name>`). \
A folder holds one run: the files of a run already in it (it has summary.json or record.mcap) \
are removed before this run starts; a folder holding any other file is refused, naming it";

/// `cosim`: every command of the product in one executable.
#[derive(Parser, Debug)]
#[command(
    name = "cosim",
    version = VERSION,
    about = "Co-simulate robots and the networks between them in lockstep windows."
)]
pub struct Cosim {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `cosim`.
// Parsed once per process: the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario: physics and network side in lockstep; writes the run record.
    /// Built with the `ros` feature it is the ROS 2 node `netsim_cosim` (parameters via
    /// `--ros-args --params-file params/params.yaml`; a build without it refuses `--ros-args`).
    Run(RunArgs),
    /// Endurance: run a scenario's live traffic for a long time (`cosim run` as a child
    /// process), sample its resident memory, then check that memory stayed flat after the
    /// warm-up, every ledger balanced and nothing was left behind; writes soak.json and
    /// soak_memory.csv into the output folder and exits 1 naming the checks that failed.
    Soak {
        /// The scenario file (default config/soak.yaml: the default scenario's traffic, kept going).
        scenario: Option<PathBuf>,
        /// Minutes of sim time (at least 2).
        #[arg(long, default_value_t = 60.0)]
        minutes: f64,
        #[arg(long, help = OUT_HELP)]
        out: Option<PathBuf>,
        /// Seconds between two samples of the run's memory.
        #[arg(long, default_value_t = 2.0)]
        sample_s: f64,
    },
    /// Publish /clock and a vehicle's pose inside its network namespace from per-window lines
    /// on stdin (started by `cosim run --vehicle-netns`). Needs a build with the `ros` feature.
    #[command(arg_required_else_help = true)]
    RosVehicleBridge(VehicleBridgeArgs),
    /// Load and validate a scenario (terrain included) without running it, with the
    /// simulators and duration `cosim run` would take from the same overrides; print what it
    /// holds and, for ns-3 as its network simulator, the adapter's command line.
    Check(CheckArgs),
    /// Regenerate a run's report (`<run folder>/report/`: plots, series, report.html) from its
    /// record and print its summary tables.
    Report {
        /// The run's output folder (holding record.mcap), or the record file itself.
        run: PathBuf,
    },
    /// Write the scenario as a Gazebo world into DIR: world.sdf (the terrain as a heightmap, the
    /// vehicles at their start poses publishing their poses, the world's step), terrain.png
    /// and bridge.yaml (ros_gz_bridge: the control service, poses, clock).
    ExportGazebo {
        /// The scenario file (YAML).
        scenario: PathBuf,
        /// The folder to write the world into (created if missing; the three files are replaced).
        dir: PathBuf,
    },
    /// Draw the acoustic paths between two vehicles at one time as PNG files: the
    /// transmission-loss field along the bearing from the source to the receiver (range ×
    /// depth, the bathymetry filled), the ray fan with the rays that reach the receiver in
    /// bold, and the arrivals (delay × level). The vehicles are where the embedded physics has
    /// them at the start of the window holding `--time` (vehicles with `motion: external` hold
    /// their start pose; thruster-driven ones get no command); the water, the seabed and the
    /// link's frequency are the scenario's. Refused: a vehicle the scenario does not have, a
    /// time outside the run, a vehicle out of the water, land between the two.
    Acoustics {
        /// The scenario file (YAML).
        scenario: PathBuf,
        /// The source and the receiver, `SOURCE,RECEIVER` (vehicle names).
        #[arg(long, value_name = "SOURCE,RECEIVER")]
        pair: String,
        /// Seconds of sim time, from 0 to the run's duration.
        #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
        time: f64,
        /// The folder to write the pictures into (created if missing; default
        /// `<the scenario's output folder>/acoustics`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run a campaign: a base scenario's runs over the sweep file's axes (or listed points)
    /// and seeds, each into `point-NNN/seed-S` of the campaign's folder, several at once where
    /// no run is paced at real time or live; then aggregate them (`runs.csv`, `points.csv`,
    /// `report.html`). Every run's scenario is checked before anything runs. Resumable: a
    /// finished run is not run again, one cut short is.
    Sweep(SweepArgs),
    /// Compare one link across runs, per phase of sim time: throughput, one-way delay (p50,
    /// p95), loss and drops, as a Markdown table (e.g. a scenario with the embedded rf model
    /// and with ns-3 Wi-Fi).
    Compare {
        /// Runs as `LABEL=FOLDER` (or a folder, labelled by its name), each holding record.mcap;
        /// a campaign's folder (`cosim sweep`) gives one column per point, pooling its runs.
        #[arg(required = true, num_args = 1..)]
        runs: Vec<String>,
        /// The directed link, `SRC:DST` (vehicle names).
        #[arg(long)]
        link: String,
        /// A phase, `NAME=FROM-TO` in seconds of sim time (repeatable); default the whole run.
        #[arg(long = "phase")]
        phases: Vec<Phase>,
    },
    /// Serve the embedded physics simulator for a scenario on a ZeroMQ REP socket, or with
    /// ROS-NetSim's framing.
    PhysicsSim(ServeArgs),
    /// Run a program inside a vehicle's network namespace (the run must be live:
    /// `network.capture: tun`), e.g. `cosim exec auv1 -- ping 10.10.0.2`. It gets the
    /// environment the vehicle's programs get from the scenario's ROS 2 settings
    /// (`ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET`, `COSIM_ROS_*`): the running
    /// run's, or with `--scenario` that file's.
    Exec {
        /// The vehicle's name.
        vehicle: String,
        /// Check that the scenario has this vehicle; a vehicle that attaches to a container or
        /// an existing namespace (`vehicles[].attach`) is entered there.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Serve the embedded network simulator for a scenario on a ZeroMQ REP socket, or with
    /// ROS-NetSim's framing.
    NetworkSim(ServeArgs),
    /// Be the capture agent of this machine's vehicles (those whose `host` is `--name`) in a
    /// run whose network coordinator is on another machine: creates their namespaces and TUN
    /// interfaces, runs their programs, joins the run's lockstep and ends with it.
    Agent(AgentArgs),
    /// Write a fresh secret for a run and its capture agents to FILE (64 hex digits, readable
    /// by its owner only), for `network.agents.key_file` and `cosim agent --key`.
    AgentKey {
        /// The file to create (it must not exist).
        file: PathBuf,
    },
    /// Write a self-signed TLS certificate and its key for the live viewer off loopback
    /// (`viewer.tls`): DIR/viewer.crt and DIR/viewer.key (the key readable by its owner only).
    /// Prints the certificate's SHA-256 fingerprint, to check where a browser is told to trust
    /// it.
    ViewerCert {
        /// The folder to write into (created if missing; neither file may exist).
        dir: PathBuf,
        /// A name or IP address clients reach the viewer by (repeatable), beside localhost,
        /// 127.0.0.1 and ::1. Default: this machine's host name.
        #[arg(long = "host", value_name = "NAME")]
        hosts: Vec<String>,
    },
    /// A capture agent's guardian: waits for its stdin to end (the agent gone), then kills
    /// what runs in the namespaces still owned by `--owner` and removes them. Started by
    /// `cosim agent` itself.
    #[command(hide = true)]
    AgentGuard {
        /// The agent's pid, recorded as the namespaces' owner.
        #[arg(long)]
        owner: u32,
        /// The namespaces it guards.
        namespaces: Vec<String>,
    },
}

/// `cosim agent`.
#[derive(Args, Debug)]
pub struct AgentArgs {
    /// The run's scenario file: the same file as the network coordinator's (its SHA-256 is
    /// compared when the agent joins).
    pub scenario: PathBuf,
    /// This agent's name: the `host` of the vehicles it owns.
    #[arg(long)]
    pub name: String,
    /// The network coordinator: `ADDRESS:PORT` (its `network.agents.bind`).
    #[arg(long)]
    pub coordinator: String,
    /// The run's secret: a copy of the run's `<out>/agent.key`, or the scenario's
    /// `network.agents.key_file` (readable by its owner only).
    #[arg(long)]
    pub key: PathBuf,
    /// Folder for the agent's program logs (default `out/<scenario name>-agent-<name>`); they
    /// are sent to the run's output folder at its end too.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Open each window at the wall time the physics coordinator opened it (carried in the
    /// opening), not at the opening's receipt: for machines whose clocks PTP or chrony keep
    /// synchronised with the coordinator's. An offset of δ then moves every window by δ (a
    /// clock behind the coordinator's releases early by δ).
    #[arg(long)]
    pub synchronized_clock: bool,
}

/// What replaces the scenario's own choices for one run (`cosim run`) or check (`cosim check`).
#[derive(Args, Debug, Clone, Default)]
pub struct Overrides {
    /// Use the physics simulator at this endpoint instead of the scenario's: ZeroMQ
    /// (`tcp://host:port`, `ipc://path`), ROS-NetSim framing (`unix:/path`, `tcp:host:port`),
    /// the secure channel to our simulator on another host (`secure://host:port?key=FILE`),
    /// `gazebo`: Gazebo through ros_gz_bridge (built with `--features gazebo`), or `auv[:HOST]`:
    /// a simulator speaking the ZeroMQ AUV simulator interface; or `embedded`.
    #[arg(long, value_name = "ENDPOINT")]
    pub physics_sim: Option<SimulatorArg<PhysicsEndpoint>>,
    /// Use the network simulator at this endpoint instead of the scenario's (ZeroMQ, ROS-NetSim
    /// framing or the secure channel, as `--physics-sim`), `ns3`: ns-3, through its adapter
    /// netsim-ns3 started for the run, or `embedded`.
    #[arg(long, value_name = "ENDPOINT")]
    pub network_sim: Option<SimulatorArg<NetworkEndpoint>>,
    /// Run for this many seconds of sim time instead of the scenario's `duration_s` (a whole
    /// number of windows, as `duration_s` must be).
    #[arg(long, value_name = "SECONDS")]
    pub duration_s: Option<f64>,
    /// Connect to simulators (and a network coordinator) on other hosts over ZeroMQ or
    /// ROS-NetSim's framing, which neither authenticate nor encrypt (as the scenario's
    /// `simulators.insecure_peers: true`); the log and the summary name each such peer.
    #[arg(long)]
    pub insecure_peers: bool,
}

/// `cosim run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (YAML), e.g. config/default.yaml (or the `scenario` parameter).
    pub scenario: Option<PathBuf>,
    #[arg(long, help = OUT_HELP)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Serve /clock and each vehicle's pose inside its network namespace, named by this
    /// pattern (e.g. `ncs-{vehicle}`), for every vehicle whose namespace exists (`ros` feature;
    /// without this flag, a vehicle's `ros.use_sim_time: true` in the scenario does so for it).
    #[arg(long, value_name = "PATTERN")]
    pub vehicle_netns: Option<String>,
    /// Also write timeline.jsonl, one line per pair per window (as `record.timeline_jsonl`).
    #[arg(long)]
    pub timeline: bool,
    /// Serve the run live to Foxglove-compatible viewers (as `viewer.live: true`), on the
    /// scenario's `viewer.address` (default 127.0.0.1:8765) or on the address given.
    #[arg(long, value_name = "HOST:PORT", num_args = 0..=1, default_missing_value = "")]
    pub live: Option<String>,
}

/// `cosim sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (YAML), e.g. config/sweeps/tx_power.yaml.
    pub sweep: PathBuf,
    /// The campaign's folder (default: the sweep's `out`, else `out/sweeps/<name>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Runs at once (default: the machine's cores). A campaign with a run paced at real time
    /// or with live traffic runs one at a time whatever this says.
    #[arg(long, value_name = "N")]
    pub jobs: Option<std::num::NonZeroUsize>,
    /// Run only run K of the campaign (0-based; run K is point K / seeds with its K % seeds-th
    /// seed) into its folder, in this process: what each local job and each Slurm array task
    /// runs.
    #[arg(long, value_name = "K", conflicts_with_all = ["collect", "slurm"])]
    pub task: Option<usize>,
    /// Aggregate the finished runs only (after a campaign run elsewhere, e.g. through Slurm).
    #[arg(long, conflicts_with = "slurm")]
    pub collect: bool,
    /// Submit the runs not finished yet as a Slurm job array (`sbatch`; each array task runs
    /// `cosim sweep SWEEP --task K`, with the sweep's `slurm` resources), write its script
    /// into the campaign's folder and return; `--collect` aggregates later.
    #[arg(long)]
    pub slurm: bool,
    /// With `--slurm`: wait for the array to end (`sbatch --wait`), then aggregate.
    #[arg(long, requires = "slurm")]
    pub wait: bool,
}

/// `cosim check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The scenario file (YAML) to check.
    pub scenario: PathBuf,
    #[command(flatten)]
    pub overrides: Overrides,
}

/// `cosim ros-vehicle-bridge`.
#[derive(Args, Debug)]
pub struct VehicleBridgeArgs {
    /// The vehicle's name (pose topic `/<vehicle>/pose`).
    #[arg(long)]
    pub vehicle: String,
    /// Network namespace to enter (as listed by `ip netns`).
    #[arg(long)]
    pub netns: Option<String>,
    /// ROS_DOMAIN_ID for the bridge (default: inherited).
    #[arg(long)]
    pub domain_id: Option<u32>,
    /// Let DDS discover beyond the namespace's loopback (default: loopback only).
    #[arg(long)]
    pub any_interface: bool,
    /// Wait for this many /clock subscribers in the namespace before reading input.
    #[arg(long, default_value_t = 0)]
    pub wait_for_subscribers: u32,
}

/// `cosim physics-sim` and `cosim network-sim`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The scenario file (YAML) whose simulator to serve.
    pub scenario: PathBuf,
    /// Endpoint to bind: ZeroMQ (e.g. tcp://127.0.0.1:5601) or ROS-NetSim (unix:/path,
    /// tcp:host:port) on this host only (loopback, ipc:// or a Unix socket: they authenticate no
    /// peer), or the secure channel for coordinators on other hosts
    /// (secure://0.0.0.0:5601?key=FILE, the same key file on both hosts).
    #[arg(long)]
    pub bind: PeerEndpoint,
    /// Exit when no request arrives for this long (seconds).
    #[arg(long, default_value_t = 60.0)]
    pub idle_timeout_s: f64,
}

/// `physics_coordinator`.
#[derive(Parser, Debug)]
#[command(
    name = "physics_coordinator",
    version = VERSION,
    about = "Physics coordinator: drives the physics simulator and the network coordinator in lockstep."
)]
pub struct PhysicsCoordinatorArgs {
    /// The scenario file (YAML), or the `scenario` parameter (`ros` feature: node
    /// `physics_coordinator`).
    pub scenario: Option<PathBuf>,
    /// Physics simulator's endpoint, ZeroMQ (`tcp://…`, `ipc://…`), ROS-NetSim (`unix:/path`,
    /// `tcp:host:port`), secure (`secure://host:port?key=FILE`), `embedded`, `gazebo` or
    /// `auv[:HOST]` (default: the scenario's `simulators.physics`).
    #[arg(long, value_name = "ENDPOINT")]
    pub physics_sim: Option<SimulatorArg<PhysicsEndpoint>>,
    /// Network coordinator's endpoint: ZeroMQ (`tcp://127.0.0.1:5600`, `ipc://…`) or, on
    /// another host, secure (`secure://host:port?key=FILE`) (default: a network coordinator in
    /// this process).
    #[arg(long, value_name = "ENDPOINT")]
    pub network_coordinator: Option<CoordinatorEndpoint>,
    /// Network simulator's endpoint, for the in-process network coordinator: ZeroMQ, ROS-NetSim,
    /// secure, `embedded` or `ns3` (default: the scenario's `simulators.network`).
    #[arg(long, value_name = "ENDPOINT", conflicts_with = "network_coordinator")]
    pub network_sim: Option<SimulatorArg<NetworkEndpoint>>,
    /// Output folder (default: the scenario's `output_dir`, else `out/<name>`). With the network
    /// coordinator in this process a folder holds one run, as for `cosim run --out`; with a
    /// network coordinator of its own (`--network-coordinator`) the folder is shared with it and
    /// nothing in it is removed.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Serve /clock in every vehicle namespace matching this pattern, e.g. `ncs-{vehicle}`
    /// (`ros` feature; without this flag, a vehicle's `ros.use_sim_time: true` does so for it).
    #[arg(long, value_name = "PATTERN")]
    pub vehicle_netns: Option<String>,
    /// Also write timeline.jsonl, one line per pair per window (as `record.timeline_jsonl`).
    #[arg(long)]
    pub timeline: bool,
    /// Connect to simulators or a network coordinator on other hosts over ZeroMQ or ROS-NetSim's
    /// framing, which neither authenticate nor encrypt (as `cosim run --insecure-peers`).
    #[arg(long)]
    pub insecure_peers: bool,
}

/// `network_coordinator`.
#[derive(Parser, Debug)]
#[command(
    name = "network_coordinator",
    version = VERSION,
    about = "Network coordinator: runs the network simulator window by window for the physics coordinator."
)]
pub struct NetworkCoordinatorArgs {
    /// The scenario file (YAML), or the `scenario` parameter (`ros` feature: node
    /// `network_coordinator`).
    pub scenario: Option<PathBuf>,
    /// Endpoint to bind for the physics coordinator: ZeroMQ on this host (e.g.
    /// tcp://127.0.0.1:5600, ipc://path), or the secure channel for a physics coordinator on
    /// another host (secure://0.0.0.0:5600?key=FILE, the same key file on both hosts).
    #[arg(long)]
    pub bind: CoordinatorEndpoint,
    /// Network simulator's endpoint, ZeroMQ (`tcp://…`, `ipc://…`), ROS-NetSim (`unix:/path`,
    /// `tcp:host:port`), secure (`secure://host:port?key=FILE`), `ns3` (start the ns-3 adapter)
    /// or `embedded` (default: the scenario's `simulators.network`).
    #[arg(long, value_name = "ENDPOINT")]
    pub network_sim: Option<SimulatorArg<NetworkEndpoint>>,
    /// Output folder for `network_summary.json`, `air_summary.json` and pcaps (default: the
    /// scenario's `output_dir`, else `out/<name>`; shared with the physics coordinator, nothing
    /// in it is removed).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Exit when the physics coordinator sends nothing for this long (seconds).
    #[arg(long, default_value_t = 60.0)]
    pub idle_timeout_s: f64,
    /// Connect to a network simulator on another host over ZeroMQ or ROS-NetSim's framing,
    /// which neither authenticate nor encrypt (as `cosim run --insecure-peers`).
    #[arg(long)]
    pub insecure_peers: bool,
}

/// `auv_bridge` (built with the `ros` feature).
#[derive(Parser, Debug)]
#[command(
    name = "auv_bridge",
    version = VERSION,
    about = "ROS 2 bridge of the ZeroMQ AUV simulator interface (node auv_bridge; built with the `ros` feature)."
)]
pub struct AuvBridgeArgs {
    /// The scenario file (YAML), or the `scenario` parameter: its thruster-driven vehicles and
    /// `auv_interface` ports.
    pub scenario: Option<PathBuf>,
    /// The host serving the interface (the coordinator, or the client adapter's forwarding
    /// port for thrusters).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
}

/// Every binary's command, in the order the reference lists them.
pub fn commands() -> [clap::Command; 4] {
    use clap::CommandFactory;
    [
        Cosim::command(),
        PhysicsCoordinatorArgs::command(),
        NetworkCoordinatorArgs::command(),
        AuvBridgeArgs::command(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the generated CLI reference lives, from the crate's root.
    const REFERENCE_FILE: &str = "docs/src/reference/cli.md";

    /// The CLI reference (`docs/src/reference/cli.md`): every binary's commands, arguments and
    /// options as Markdown, generated by `clap-markdown` from the types above.
    fn reference() -> String {
        let mut text = String::from(
            "<!-- Generated from the clap types in src/cli/args.rs: do not edit. Regenerate with\n     \
             COSIM_WRITE_CLI_REFERENCE=1 cargo test --lib cli::args -->\n\n\
             # Command line\n\n\
             `cosim` runs, checks and reports scenarios and serves simulators; `physics_coordinator` \
             and `network_coordinator` are the two halves of `cosim run` as processes (and ROS 2 \
             nodes) of their own; `auv_bridge` is the AUV simulator interface as ROS 2 topics. Each \
             prints this help with `--help` and its version and cargo features with `--version`.\n\n",
        );
        for command in commands() {
            let name = command.get_name().to_owned();
            let options = clap_markdown::MarkdownOptions::new()
                .title(format!("The `{name}` program"))
                .show_footer(false);
            text.push_str(&clap_markdown::help_markdown_command_custom(
                &command, &options,
            ));
            if !text.ends_with("\n\n") {
                text.push('\n');
            }
        }
        while text.ends_with("\n\n") {
            text.pop();
        }
        text
    }

    #[test]
    fn the_committed_cli_reference_is_the_command_lines_reference() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE_FILE);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let current = reference();
        if std::env::var_os("COSIM_WRITE_CLI_REFERENCE").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &current).unwrap();
            return;
        }
        assert!(
            committed == current,
            "{REFERENCE_FILE} is not the reference of the command lines (src/cli/args.rs): an \
             argument, subcommand or help text changed. Regenerate it with \
             `COSIM_WRITE_CLI_REFERENCE=1 cargo test --lib cli::args` and commit it."
        );
    }

    /// Every subcommand has an about line and every argument a help text, in every binary.
    #[test]
    fn every_argument_and_subcommand_is_described() {
        fn walk(path: &str, command: &clap::Command, missing: &mut Vec<String>) {
            if command.get_about().is_none() && command.get_long_about().is_none() {
                missing.push(format!("`{path}` (the command)"));
            }
            for arg in command.get_arguments() {
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("`{path}` argument `{}`", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                walk(&format!("{path} {}", sub.get_name()), sub, missing);
            }
        }
        let mut missing = Vec::new();
        for command in commands() {
            walk(command.get_name(), &command, &mut missing);
        }
        assert!(missing.is_empty(), "without help text: {missing:?}");
        // The walk sees what it is meant to.
        let mut bare = Vec::new();
        walk(
            "x",
            &clap::Command::new("x")
                .about("x")
                .arg(clap::Arg::new("a"))
                .subcommand(clap::Command::new("y")),
            &mut bare,
        );
        assert_eq!(bare, ["`x` argument `a`", "`x y` (the command)"]);
    }

    #[test]
    fn every_command_line_is_consistent() {
        for command in commands() {
            command.debug_assert();
        }
    }

    #[test]
    fn the_version_names_the_build_s_features() {
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")));
        for feature in ["ros", "gazebo"] {
            let built = match feature {
                "ros" => cfg!(feature = "ros"),
                _ => cfg!(feature = "gazebo"),
            };
            let (with, without) = VERSION.split_once("without").unwrap_or((VERSION, ""));
            assert_eq!(with.contains(feature), built, "{VERSION}");
            assert_eq!(without.contains(feature), !built, "{VERSION}");
        }
    }

    #[test]
    fn check_takes_run_s_overrides() {
        let check = Cosim::try_parse_from([
            "cosim",
            "check",
            "s.yaml",
            "--network-sim",
            "ns3",
            "--physics-sim",
            "tcp://127.0.0.1:5601",
            "--duration-s",
            "2",
        ])
        .unwrap();
        let Command::Check(c) = check.command else {
            panic!("{check:?}")
        };
        assert_eq!(c.overrides.network_sim.unwrap().to_string(), "ns3");
        assert_eq!(
            c.overrides.physics_sim.unwrap().to_string(),
            "tcp://127.0.0.1:5601"
        );
        assert_eq!(c.overrides.duration_s, Some(2.0));
    }
}
