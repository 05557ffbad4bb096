//! `network_coordinator`: serves the physics coordinator's NetworkUpdate windows (ZeroMQ on
//! this host, the secure channel across hosts), running each with its network simulator (its
//! command line: `netsim_cosim::cli::args::NetworkCoordinatorArgs`).

use clap::Parser;
use netsim_cosim::{
    cli::{
        self,
        args::{NetworkCoordinatorArgs, Overrides},
    },
    coord::{network_coordinator, NetworkSide},
    lockstep::{self, Role},
    sim::flows::lock,
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
            let overrides = Overrides {
                network_sim: a.network_sim.clone(),
                insecure_peers: a.insecure_peers,
                ..Overrides::default()
            };
            let loaded = cli::load_with(&params, a.scenario.clone(), &overrides)?;
            let out = cli::output_dir(&loaded, a.out.clone());
            let NetworkSide {
                mut coordinator,
                live,
                agents,
                air,
                flows,
            } = network_coordinator(&loaded, Some(&out), Default::default()).await?;
            // The run record (and its packet ends) is the physics coordinator's.
            if let Some(l) = &live {
                l.without_copy_ends();
            }
            let idle = Duration::from_secs_f64(a.idle_timeout_s);
            let code = cli::serve_until(
                lockstep::serve(a.bind.peer(), Role::Network, &mut coordinator, idle),
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
                let traffic = live.traffic();
                if !traffic.is_empty() {
                    cli::report_traffic(&traffic, &out)?;
                }
            }
            if let Some(flows) = flows {
                let (ledger, traffic) = lock(&flows).finish(coordinator.end_ns());
                cli::report_network(&ledger, &out)?;
                cli::report_traffic(&traffic, &out)?;
            }
            if let Some(air) = air {
                let air = air.lock().unwrap_or_else(|e| e.into_inner()).summary();
                cli::report_air(&air, &out)?;
            }
            code
        }
        .await,
    )
}
