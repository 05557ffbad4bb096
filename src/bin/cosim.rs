//! `cosim`: run a scenario end to end, or serve one of its simulators over ZeroMQ.
use clap::{Parser, Subcommand};
use netsim_cosim::{
    cli,
    coord::{embedded_physics, schedule, PhysicsCoordinator},
    sim::{network::NetworkSim, physics::PhysicsSim},
    sync::zmq,
};
use std::{path::PathBuf, time::Duration};

#[derive(Parser)]
#[command(version, about = "Co-simulate robots and the networks between them in lockstep windows.")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: physics and network side in lockstep; writes the ChannelData timeline.
    Run {
        /// The scenario file (YAML), e.g. config/default.yaml.
        scenario: PathBuf,
        /// Output folder (default: the scenario's output_dir, else out/<name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Use the physics simulator bound at this ZeroMQ endpoint instead of the scenario's.
        #[arg(long, value_name = "ENDPOINT")]
        physics_sim: Option<String>,
        /// Use the network simulator bound at this ZeroMQ endpoint instead of the scenario's.
        #[arg(long, value_name = "ENDPOINT")]
        network_sim: Option<String>,
    },
    /// Load and validate a scenario (terrain included) without running it.
    Check { scenario: PathBuf },
    /// Serve the embedded physics simulator for a scenario on a ZeroMQ REP socket.
    PhysicsSim {
        scenario: PathBuf,
        /// Endpoint to bind, e.g. tcp://127.0.0.1:5601.
        #[arg(long)]
        bind: String,
        /// Exit when no request arrives for this long (seconds).
        #[arg(long, default_value_t = 60.0)]
        idle_timeout_s: f64,
    },
    /// Serve the embedded network simulator for a scenario on a ZeroMQ REP socket.
    NetworkSim {
        scenario: PathBuf,
        #[arg(long)]
        bind: String,
        #[arg(long, default_value_t = 60.0)]
        idle_timeout_s: f64,
    },
}

#[tokio::main]
async fn main() {
    cli::init_logging();
    cli::exit_with(run(Args::parse().command).await)
}

async fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Run { scenario, out, physics_sim, network_sim } => {
            let loaded = cli::load(&scenario)?;
            let out = cli::output_dir(&loaded, out);
            let coordinator =
                PhysicsCoordinator::for_scenario(&loaded, physics_sim.as_deref(), None, network_sim.as_deref(), Some(out.clone())).await?;
            let report = coordinator.run(cli::shutdown_signal()).await?;
            cli::report(&report, &out)
        }
        Command::Check { scenario } => {
            let loaded = cli::load(&scenario)?;
            let sim = PhysicsSim::from_scenario(&loaded)?;
            let (cols, rows) = sim.terrain().dims();
            let s = schedule(&loaded);
            println!(
                "{}: ok — {} vehicles, {} windows of {} ms, terrain {cols}×{rows} cells",
                scenario.display(),
                loaded.scenario.vehicles.len(),
                s.windows,
                loaded.scenario.window_ms
            );
            Ok(0)
        }
        Command::PhysicsSim { scenario, bind, idle_timeout_s } => {
            let loaded = cli::load(&scenario)?;
            let (mut sim, _manager) = embedded_physics(&loaded).await?;
            serve(&bind, &mut sim, idle_timeout_s).await
        }
        Command::NetworkSim { scenario, bind, idle_timeout_s } => {
            let loaded = cli::load(&scenario)?;
            let mut sim = NetworkSim::from_scenario(&loaded);
            serve(&bind, &mut sim, idle_timeout_s).await
        }
    }
}

async fn serve(bind: &str, service: &mut dyn netsim_cosim::sync::Service, idle_timeout_s: f64) -> anyhow::Result<i32> {
    let idle = Duration::from_secs_f64(idle_timeout_s);
    tokio::select! {
        end = async {
            // `unix:/path` or `tcp:host:port`: ROS-NetSim's framing; `tcp://`, `ipc://`: ZeroMQ.
            if bind.starts_with("unix:") || (bind.starts_with("tcp:") && !bind.starts_with("tcp://")) {
                netsim_cosim::sync::rosnetsim::serve(bind, service, idle).await
            } else {
                zmq::serve(bind, service, idle).await
            }
        } => match end? {
            zmq::ServeEnd::Done => Ok(0),
            zmq::ServeEnd::Idle => anyhow::bail!("no request for {idle_timeout_s} s; exiting"),
        },
        _ = cli::shutdown_signal() => Ok(cli::EXIT_INTERRUPTED),
    }
}
