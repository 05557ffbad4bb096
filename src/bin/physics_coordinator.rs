//! `physics_coordinator`: owns the clock; drives the physics simulator and the network
//! coordinator window by window and writes the ChannelData timeline.
use clap::Parser;
use netsim_cosim::{cli, coord::PhysicsCoordinator};
use std::path::PathBuf;

#[derive(Parser)]
#[command(version, about = "Physics coordinator: drives the physics simulator and the network coordinator in lockstep.")]
struct Args {
    /// The scenario file (YAML).
    scenario: PathBuf,
    /// Physics simulator's ZeroMQ endpoint (default: the scenario's `simulators.physics`).
    #[arg(long, value_name = "ENDPOINT")]
    physics_sim: Option<String>,
    /// Network coordinator's ZeroMQ endpoint (default: a network coordinator in this process).
    #[arg(long, value_name = "ENDPOINT")]
    network_coordinator: Option<String>,
    /// Network simulator's endpoint, for the in-process network coordinator.
    #[arg(long, value_name = "ENDPOINT", conflicts_with = "network_coordinator")]
    network_sim: Option<String>,
    /// Output folder (default: the scenario's output_dir, else out/<name>).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[tokio::main]
async fn main() {
    cli::init_logging();
    let a = Args::parse();
    cli::exit_with(
        async {
            let stop = cli::shutdown_signal();
            let loaded = cli::load(&a.scenario)?;
            let out = cli::output_dir(&loaded, a.out);
            let c = PhysicsCoordinator::for_scenario(
                &loaded,
                a.physics_sim.as_deref(),
                a.network_coordinator.as_deref(),
                a.network_sim.as_deref(),
                Some(out.clone()),
            )
            .await?;
            let report = c.run(stop).await?;
            cli::report(&report, &out)
        }
        .await,
    )
}
