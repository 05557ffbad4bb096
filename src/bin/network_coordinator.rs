//! `network_coordinator`: serves the physics coordinator's NetworkUpdate windows over
//! ZeroMQ, running each with its network simulator.
use clap::Parser;
use netsim_cosim::{
    cli,
    coord::{network_simulator, schedule, startup_timeout, NetworkCoordinator},
    sync::zmq,
};
use std::{path::PathBuf, time::Duration};

#[derive(Parser)]
#[command(version, about = "Network coordinator: runs the network simulator window by window for the physics coordinator.")]
struct Args {
    /// The scenario file (YAML), or the `scenario` parameter (`ros` feature: node
    /// `network_coordinator`).
    scenario: Option<PathBuf>,
    /// Endpoint to bind for the physics coordinator, e.g. tcp://127.0.0.1:5600.
    #[arg(long)]
    bind: String,
    /// Network simulator's ZeroMQ endpoint (default: the scenario's `simulators.network`).
    #[arg(long, value_name = "ENDPOINT")]
    network_sim: Option<String>,
    /// Exit when the physics coordinator sends nothing for this long (seconds).
    #[arg(long, default_value_t = 60.0)]
    idle_timeout_s: f64,
}

#[tokio::main]
async fn main() {
    cli::init_logging();
    let a = Args::parse_from(cli::args());
    cli::exit_with(
        async {
            let (params, _node) = cli::node("network_coordinator")?;
            let loaded = cli::load_with(&params, a.scenario.clone())?;
            let sim = network_simulator(&loaded, a.network_sim.as_deref()).await?;
            let mut coordinator = NetworkCoordinator::new(sim, schedule(&loaded), startup_timeout(&loaded));
            let idle = Duration::from_secs_f64(a.idle_timeout_s);
            tokio::select! {
                end = zmq::serve(&a.bind, &mut coordinator, idle) => match end? {
                    zmq::ServeEnd::Done => Ok(0),
                    zmq::ServeEnd::Idle => anyhow::bail!("no request for {} s; exiting", a.idle_timeout_s),
                },
                _ = cli::shutdown_signal() => Ok(cli::EXIT_INTERRUPTED),
            }
        }
        .await,
    )
}
