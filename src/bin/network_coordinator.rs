//! `network_coordinator`: serves the physics coordinator's NetworkUpdate windows over
//! ZeroMQ, running each with its network simulator (its command line:
//! `netsim_cosim::cli::args::NetworkCoordinatorArgs`).

use clap::Parser;
use netsim_cosim::{
    cli::{self, args::NetworkCoordinatorArgs},
    coord::{network_simulator, startup_timeout, NetworkCoordinator},
    io::{agents::hub::AgentHub, live::LiveNetwork},
    sync::zmq,
};
use std::time::Duration;

#[tokio::main]
async fn main() {
    cli::init_logging();
    let a = NetworkCoordinatorArgs::parse_from(cli::args());
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
            let agents = match &live {
                Some(l) => AgentHub::start(&loaded, l, Some(&out))
                    .await?
                    .map(|h| std::sync::Arc::new(tokio::sync::Mutex::new(h))),
                None => None,
            };
            let mut coordinator =
                NetworkCoordinator::new(sim, loaded.schedule(), startup_timeout(&loaded))
                    .with_live(live.clone())
                    .with_agents(agents.clone());
            let idle = Duration::from_secs_f64(a.idle_timeout_s);
            let code = cli::serve_until(
                zmq::serve(a.bind.as_str(), &mut coordinator, idle),
                a.idle_timeout_s,
                stop,
            )
            .await;
            if let Some(live) = live {
                if let Some(a) = agents {
                    if let Err(e) = a.lock().await.finish(live.end_ns(), &live).await {
                        tracing::error!("{e:#}");
                    }
                }
                cli::report_network(&live.shutdown(), &out)?;
            }
            code
        }
        .await,
    )
}
