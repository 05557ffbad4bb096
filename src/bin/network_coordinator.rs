//! `network_coordinator`: serves the physics coordinator's NetworkUpdate windows over
//! ZeroMQ, running each with its network simulator.

use clap::Parser;
use netsim_cosim::{
    cli,
    config::{NetworkEndpoint, SimulatorArg, ZmqEndpoint},
    coord::{network_simulator, startup_timeout, NetworkCoordinator},
    io::live::LiveNetwork,
    sync::zmq,
};
use std::{path::PathBuf, time::Duration};

#[derive(Parser)]
#[command(
    version,
    about = "Network coordinator: runs the network simulator window by window for the physics coordinator."
)]
struct Args {
    /// The scenario file (YAML), or the `scenario` parameter (`ros` feature: node
    /// `network_coordinator`).
    scenario: Option<PathBuf>,
    /// Endpoint to bind for the physics coordinator, e.g. tcp://127.0.0.1:5600.
    #[arg(long)]
    bind: ZmqEndpoint,
    /// Network simulator's endpoint, ZeroMQ (`tcp://…`, `ipc://…`), ROS-NetSim (`unix:/path`,
    /// `tcp:host:port`), `ns3` (start the ns-3 adapter) or `embedded` (default: the scenario's
    /// `simulators.network`).
    #[arg(long, value_name = "ENDPOINT")]
    network_sim: Option<SimulatorArg<NetworkEndpoint>>,
    /// Output folder for `network_summary.json` and pcaps (default: the scenario's output_dir,
    /// else out/<name>).
    #[arg(long)]
    out: Option<PathBuf>,
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
            let stop = cli::shutdown_signal();
            let (params, _node) = cli::node("network_coordinator")?;
            let loaded = cli::load_with(&params, a.scenario.clone())?;
            let out = cli::output_dir(&loaded, a.out.clone());
            let sim = network_simulator(
                &loaded,
                a.network_sim.as_ref(),
                Some(&out),
                Default::default(),
            )
            .await?;
            let live = LiveNetwork::for_scenario(&loaded, Some(&out))?;
            // The run record (and its packet ends) is the physics coordinator's.
            if let Some(l) = &live {
                l.without_copy_ends();
            }
            let mut coordinator =
                NetworkCoordinator::new(sim, loaded.schedule(), startup_timeout(&loaded))
                    .with_live(live.clone());
            let idle = Duration::from_secs_f64(a.idle_timeout_s);
            let code = cli::serve_until(
                zmq::serve(a.bind.as_str(), &mut coordinator, idle),
                a.idle_timeout_s,
                stop,
            )
            .await;
            if let Some(live) = live {
                cli::report_network(&live.shutdown(), &out)?;
            }
            code
        }
        .await,
    )
}
