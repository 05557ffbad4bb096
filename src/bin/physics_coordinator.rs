//! `physics_coordinator`: owns the clock; drives the physics simulator and the network
//! coordinator window by window and writes the run record (its command line:
//! `netsim_cosim::cli::args::PhysicsCoordinatorArgs`).

use clap::Parser;
use netsim_cosim::cli::{self, args::PhysicsCoordinatorArgs};

#[tokio::main]
async fn main() {
    cli::init_logging();
    let a = PhysicsCoordinatorArgs::parse_from(cli::args());
    let overrides = cli::args::Overrides {
        physics_sim: a.physics_sim,
        network_sim: a.network_sim,
        duration_s: None,
        insecure_peers: a.insecure_peers,
    };
    cli::exit_with(
        cli::run_physics(
            "physics_coordinator",
            a.scenario,
            a.out,
            overrides,
            a.network_coordinator,
            a.vehicle_netns,
            a.timeline,
            None,
        )
        .await,
    )
}
