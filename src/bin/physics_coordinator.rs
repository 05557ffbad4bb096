//! `physics_coordinator`: owns the clock; drives the physics simulator and the network
//! coordinator window by window and writes the run record.

use clap::Parser;
use netsim_cosim::{
    cli,
    config::{NetworkEndpoint, PhysicsEndpoint, SimulatorArg, ZmqEndpoint},
};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    version,
    about = "Physics coordinator: drives the physics simulator and the network coordinator in lockstep."
)]
struct Args {
    /// The scenario file (YAML), or the `scenario` parameter (`ros` feature: node
    /// `physics_coordinator`).
    scenario: Option<PathBuf>,
    /// Physics simulator's endpoint, ZeroMQ (`tcp://…`, `ipc://…`) or ROS-NetSim (`unix:/path`,
    /// `tcp:host:port`), `embedded`, `gazebo` or `auv[:HOST]` (default: the scenario's
    /// `simulators.physics`).
    #[arg(long, value_name = "ENDPOINT")]
    physics_sim: Option<SimulatorArg<PhysicsEndpoint>>,
    /// Network coordinator's ZeroMQ endpoint (default: a network coordinator in this process).
    #[arg(long, value_name = "ENDPOINT")]
    network_coordinator: Option<ZmqEndpoint>,
    /// Network simulator's endpoint, for the in-process network coordinator: ZeroMQ, ROS-NetSim,
    /// `embedded` or `ns3` (default: the scenario's `simulators.network`).
    #[arg(long, value_name = "ENDPOINT", conflicts_with = "network_coordinator")]
    network_sim: Option<SimulatorArg<NetworkEndpoint>>,
    /// Output folder (default: the scenario's output_dir, else out/<name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Serve /clock in every vehicle namespace matching this pattern, e.g. `ncs-{vehicle}`.
    #[arg(long, value_name = "PATTERN")]
    vehicle_netns: Option<String>,
    /// Also write timeline.jsonl, one line per pair per window (as `record.timeline_jsonl`).
    #[arg(long)]
    timeline: bool,
}

#[tokio::main]
async fn main() {
    cli::init_logging();
    let a = Args::parse_from(cli::args());
    let peers = cli::Peers {
        physics_sim: a.physics_sim,
        network_coordinator: a.network_coordinator,
        network_sim: a.network_sim,
    };
    cli::exit_with(
        cli::run_physics(
            "physics_coordinator",
            a.scenario,
            a.out,
            peers,
            a.vehicle_netns,
            a.timeline,
            None,
        )
        .await,
    )
}
