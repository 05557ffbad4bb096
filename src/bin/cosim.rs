//! `cosim`: run a scenario end to end, or serve one of its simulators over ZeroMQ.

use clap::{Parser, Subcommand};
use netsim_cosim::{
    cli,
    config::{NetworkEndpoint, PeerEndpoint, PhysicsEndpoint, SimulatorArg},
    sim::network::NetworkSim,
    sync::Role,
};
use std::{path::PathBuf, time::Duration};

#[derive(Parser)]
#[command(
    version,
    about = "Co-simulate robots and the networks between them in lockstep windows."
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run a scenario: physics and network side in lockstep; writes the run record.
    /// Built with the `ros` feature it is the ROS 2 node `netsim_cosim` (parameters via
    /// `--ros-args --params-file config/params.yaml`).
    Run {
        /// The scenario file (YAML), e.g. config/default.yaml (or the `scenario` parameter).
        scenario: Option<PathBuf>,
        /// Output folder (default: the scenario's output_dir, else out/<name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Use the physics simulator at this endpoint instead of the scenario's: ZeroMQ
        /// (`tcp://host:port`, `ipc://path`) or ROS-NetSim framing (`unix:/path`, `tcp:host:port`),
        /// `gazebo`: Gazebo through ros_gz_bridge (built with `--features gazebo`), or `auv[:HOST]`:
        /// a simulator speaking the ZeroMQ AUV simulator interface; or `embedded`.
        #[arg(long, value_name = "ENDPOINT")]
        physics_sim: Option<SimulatorArg<PhysicsEndpoint>>,
        /// Use the network simulator at this endpoint instead of the scenario's (ZeroMQ or
        /// ROS-NetSim framing, as `--physics-sim`), `ns3`: ns-3, through its adapter netsim-ns3
        /// started for the run, or `embedded`.
        #[arg(long, value_name = "ENDPOINT")]
        network_sim: Option<SimulatorArg<NetworkEndpoint>>,
        /// Serve /clock and each vehicle's pose inside its network namespace, named by this
        /// pattern (e.g. `ncs-{vehicle}`), for every vehicle whose namespace exists (`ros` feature).
        #[arg(long, value_name = "PATTERN")]
        vehicle_netns: Option<String>,
        /// Also write timeline.jsonl, one line per pair per window (as `record.timeline_jsonl`).
        #[arg(long)]
        timeline: bool,
        /// Run for this many seconds of sim time instead of the scenario's `duration_s`.
        #[arg(long, value_name = "SECONDS")]
        duration_s: Option<f64>,
    },
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
        /// Output folder (default: the scenario's output_dir, else out/<name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seconds between two samples of the run's memory.
        #[arg(long, default_value_t = 2.0)]
        sample_s: f64,
    },
    /// Publish /clock and a vehicle's pose inside its network namespace from per-window lines
    /// on stdin (started by `cosim run --vehicle-netns`).
    #[cfg(feature = "ros")]
    RosVehicleBridge {
        /// The vehicle's name (pose topic /<vehicle>/pose).
        #[arg(long)]
        vehicle: String,
        /// Network namespace to enter (as listed by `ip netns`).
        #[arg(long)]
        netns: Option<String>,
        /// ROS_DOMAIN_ID for the bridge (default: inherited).
        #[arg(long)]
        domain_id: Option<u32>,
        /// Let DDS discover beyond the namespace's loopback (default: loopback only).
        #[arg(long)]
        any_interface: bool,
        /// Wait for this many /clock subscribers in the namespace before reading input.
        #[arg(long, default_value_t = 0)]
        wait_for_subscribers: u32,
    },
    /// Load and validate a scenario (terrain included) without running it; for ns-3 as its
    /// network simulator, print the adapter's command line.
    Check { scenario: PathBuf },
    /// Regenerate a run's report (`<run folder>/report/`: plots, series, report.html) from its
    /// record and print its summary tables.
    Report {
        /// The run's output folder (holding record.mcap), or the record file itself.
        run: PathBuf,
    },
    /// Write the scenario as a Gazebo world into DIR: world.sdf (the terrain as a heightmap, the
    /// vehicles at their start poses publishing their poses, the world's step), terrain.png
    /// and bridge.yaml (ros_gz_bridge: the control service, poses, clock).
    ExportGazebo { scenario: PathBuf, dir: PathBuf },
    /// Compare one link across runs, per phase of sim time: throughput, one-way delay (p50,
    /// p95), loss and drops, as a Markdown table (e.g. a scenario with the embedded rf model
    /// and with ns-3 Wi-Fi).
    Compare {
        /// Runs as `LABEL=FOLDER` (or a folder, labelled by its name), each holding record.mcap.
        #[arg(required = true, num_args = 1..)]
        runs: Vec<String>,
        /// The directed link, `SRC:DST` (vehicle names).
        #[arg(long)]
        link: String,
        /// A phase, `NAME=FROM-TO` in seconds of sim time (repeatable); default the whole run.
        #[arg(long = "phase")]
        phases: Vec<netsim_cosim::output::report::compare::Phase>,
    },
    /// Serve the embedded physics simulator for a scenario on a ZeroMQ REP socket, or with
    /// ROS-NetSim's framing.
    PhysicsSim {
        scenario: PathBuf,
        /// Endpoint to bind: ZeroMQ (e.g. tcp://127.0.0.1:5601) or ROS-NetSim (unix:/path,
        /// tcp:host:port).
        #[arg(long)]
        bind: PeerEndpoint,
        /// Exit when no request arrives for this long (seconds).
        #[arg(long, default_value_t = 60.0)]
        idle_timeout_s: f64,
    },
    /// Run a program inside a vehicle's network namespace (the run must be live:
    /// `network.capture: tun`), e.g. `cosim exec auv1 -- ping 10.10.0.2`.
    Exec {
        /// The vehicle's name.
        vehicle: String,
        /// Check that the scenario has this vehicle.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Serve the embedded network simulator for a scenario on a ZeroMQ REP socket, or with
    /// ROS-NetSim's framing.
    NetworkSim {
        scenario: PathBuf,
        /// Endpoint to bind (as for `physics-sim`).
        #[arg(long)]
        bind: PeerEndpoint,
        #[arg(long, default_value_t = 60.0)]
        idle_timeout_s: f64,
    },
}

#[tokio::main]
async fn main() {
    cli::init_logging();
    cli::exit_with(run(Args::parse_from(cli::args()).command).await)
}

async fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Run {
            scenario,
            out,
            physics_sim,
            network_sim,
            vehicle_netns,
            timeline,
            duration_s,
        } => {
            let peers = cli::Peers {
                physics_sim,
                network_sim,
                network_coordinator: None,
            };
            cli::run_physics(
                "netsim_cosim",
                scenario,
                out,
                peers,
                vehicle_netns,
                timeline,
                duration_s,
            )
            .await
        }
        Command::Soak {
            scenario,
            minutes,
            out,
            sample_s,
        } => cli::soak::command(scenario, minutes, out, sample_s).await,
        #[cfg(feature = "ros")]
        Command::RosVehicleBridge {
            vehicle,
            netns,
            domain_id,
            any_interface,
            wait_for_subscribers,
        } => {
            let opts = netsim_cosim::ros::vehicle::BridgeOptions {
                vehicle,
                netns,
                domain_id,
                localhost_only: !any_interface,
                wait_for_subscribers,
            };
            netsim_cosim::ros::vehicle::run(opts, std::io::BufReader::new(std::io::stdin()))?;
            Ok(0)
        }
        Command::Check { scenario } => {
            // Loading reads the terrain and checks every start and waypoint against it.
            let loaded = cli::load(&scenario)?;
            let (cols, rows) = loaded.terrain.dims();
            let s = loaded.schedule();
            println!(
                "{}: ok — {} vehicles, {} windows of {} ms, terrain {cols}×{rows} cells",
                scenario.display(),
                loaded.scenario.vehicles.len(),
                s.windows,
                loaded.scenario.window_ms
            );
            // The command line an ns-3 adapter started by hand (e.g. on another host) needs.
            if let NetworkEndpoint::Ns3(settings) = &loaded.scenario.simulators.network {
                let args = netsim_cosim::model::ns3::adapter_args(&loaded, settings)?;
                println!(
                    "ns-3 adapter: {} --bind=ENDPOINT {}",
                    netsim_cosim::io::ns3::PROGRAM,
                    args.join(" ")
                );
            }
            if let PhysicsEndpoint::Gazebo(g) = &loaded.scenario.simulators.physics {
                let s = &loaded.scenario;
                let (step_s, steps) = g
                    .steps(s.window_ms, s.simulators.physics_step_ms)
                    .map_err(anyhow::Error::msg)?;
                let world = g.world_name(&s.name);
                let models: Vec<String> = s
                    .vehicles
                    .iter()
                    .map(|v| format!("{} = {}", v.name, g.model(&v.name)))
                    .collect();
                println!(
                    "Gazebo: world `{world}`, {steps} steps of {} ms per window through {}; models {}",
                    step_s * 1e3,
                    g.control_service(&s.name),
                    models.join(", ")
                );
            }
            Ok(0)
        }
        Command::Report { run } => cli::report_folder(&run),
        Command::Compare { runs, link, phases } => cli::compare(&runs, &link, phases),
        Command::ExportGazebo { scenario, dir } => {
            let loaded = cli::load(&scenario)?;
            let e = netsim_cosim::output::gazebo::export(&loaded, &dir)?;
            println!(
                "world: {}\nheightmap: {} ({} × {} pixels, {:.3} to {:.3} m)\nbridge: {}\nstep: {} ms, {} per window",
                e.world.display(),
                e.heightmap.display(),
                e.map.side,
                e.map.side,
                e.map.min_m,
                e.map.max_m,
                e.bridge.display(),
                e.step_s * 1e3,
                e.steps_per_window
            );
            Ok(0)
        }
        Command::PhysicsSim {
            scenario,
            bind,
            idle_timeout_s,
        } => {
            let loaded = cli::load(&scenario)?;
            let mut sim = netsim_cosim::coord::embedded_physics(&loaded, None).await?;
            serve(&bind, Role::Physics, sim.as_mut(), idle_timeout_s).await
        }
        Command::Exec {
            vehicle,
            scenario,
            command,
        } => {
            if let Some(s) = scenario {
                let loaded = cli::load(&s)?;
                if !loaded.scenario.vehicles.iter().any(|v| v.name == vehicle) {
                    anyhow::bail!("{} has no vehicle {vehicle:?}", s.display());
                }
            }
            Err(netsim_cosim::io::netns::exec_in(&vehicle, &command))
        }
        Command::NetworkSim {
            scenario,
            bind,
            idle_timeout_s,
        } => {
            let loaded = cli::load(&scenario)?;
            let mut sim = NetworkSim::from_scenario(&loaded);
            serve(&bind, Role::Network, &mut sim, idle_timeout_s).await
        }
    }
}

async fn serve(
    bind: &PeerEndpoint,
    role: Role,
    service: &mut dyn netsim_cosim::sync::Service,
    idle_timeout_s: f64,
) -> anyhow::Result<i32> {
    let idle = Duration::from_secs_f64(idle_timeout_s);
    cli::serve_until(
        netsim_cosim::sync::serve(bind, role, service, idle),
        idle_timeout_s,
        cli::shutdown_signal(),
    )
    .await
}
