//! `cosim`: run a scenario end to end, or serve one of its simulators over ZeroMQ (its command
//! line: `netsim_cosim::cli::args::Cosim`).

use clap::Parser;
use netsim_cosim::{
    cli::{
        self,
        args::{Command, Cosim, RunArgs, ServeArgs},
    },
    config::PeerEndpoint,
    lockstep::Role,
    sim::network::NetworkSim,
};
use std::time::Duration;

fn main() {
    let command = Cosim::parse_from(cli::args()).command;
    // Before any thread: a run without root may go on in a user namespace of its own.
    match &command {
        Command::Run(a) => cli::user_namespace_for(a.scenario.as_deref()),
        Command::Agent(a) => cli::user_namespace_for(Some(&a.scenario)),
        Command::AgentGuard { owner, namespaces } => {
            netsim_cosim::io::traffic::agents::agent::guard(*owner, namespaces);
            std::process::exit(0)
        }
        _ => {}
    }
    cli::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| cli::exit_with(Err(anyhow::anyhow!("cannot start tokio: {e}"))));
    cli::exit_with(runtime.block_on(run(command)))
}

async fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Run(RunArgs {
            scenario,
            out,
            overrides,
            vehicle_netns,
            timeline,
            live,
        }) => {
            cli::run_physics(
                "netsim_cosim",
                scenario,
                out,
                overrides,
                None,
                vehicle_netns,
                timeline,
                live,
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
        Command::RosVehicleBridge(a) => {
            let opts = netsim_cosim::ros::vehicle::BridgeOptions {
                vehicle: a.vehicle,
                netns: a.netns,
                domain_id: a.domain_id,
                localhost_only: !a.any_interface,
                wait_for_subscribers: a.wait_for_subscribers,
            };
            netsim_cosim::ros::vehicle::run(opts, std::io::BufReader::new(std::io::stdin()))?;
            Ok(0)
        }
        #[cfg(not(feature = "ros"))]
        Command::RosVehicleBridge(_) => anyhow::bail!(
            "ros-vehicle-bridge: the vehicle bridge is a ROS 2 node, and {}",
            cli::args::NEEDS_ROS
        ),
        Command::Check(args) => cli::check::command(&args),
        Command::Report { run } => cli::report_folder(&run),
        Command::Compare { runs, link, phases } => cli::compare(&runs, &link, phases),
        Command::Sweep(a) => cli::sweep::command(a).await,
        Command::Acoustics {
            scenario,
            pair,
            time,
            out,
        } => {
            let loaded = cli::load(&scenario)?;
            let out = out.unwrap_or_else(|| cli::output_dir(&loaded, None).join("acoustics"));
            cli::acoustics::command(&loaded, &pair, time, &out)
        }
        Command::ExportGazebo { scenario, dir } => {
            let loaded = cli::load(&scenario)?;
            let e = netsim_cosim::output::export::gazebo::export(&loaded, &dir)?;
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
        Command::PhysicsSim(ServeArgs {
            scenario,
            bind,
            idle_timeout_s,
        }) => {
            let loaded = cli::load(&scenario)?;
            let mut sim = netsim_cosim::coord::embedded_physics(&loaded, None).await?;
            serve(&bind, Role::Physics, sim.as_mut(), idle_timeout_s).await
        }
        Command::Exec {
            vehicle,
            scenario,
            command,
        } => {
            let mut attach = None;
            let mut env = netsim_cosim::io::os::netns::vehicle_env(&vehicle);
            if let Some(s) = scenario {
                let loaded = cli::load(&s)?;
                let (_, v) = loaded.vehicle_named(&vehicle)?;
                attach = v.attach.clone();
                env = loaded.scenario.vehicle_ros(v).env();
                let ns = netsim_cosim::io::os::netns::ns_name(&vehicle);
                if let (Some(host), None) = (&v.host, &attach) {
                    if !std::path::Path::new(netsim_cosim::io::os::netns::NETNS_DIR)
                        .join(&ns)
                        .exists()
                    {
                        anyhow::bail!("vehicle {vehicle} lives on agent {host}'s machine ({}: vehicles[].host): run this command there", s.display());
                    }
                }
            }
            Err(netsim_cosim::io::os::netns::exec_in(
                &vehicle,
                attach.as_ref(),
                &env,
                &command,
            ))
        }
        Command::Agent(a) => cli::agent::run(a).await,
        Command::AgentKey { file } => {
            let secret = netsim_cosim::wire::secure::Secret::generate();
            netsim_cosim::lockstep::secure::write_secret(&file, &secret)?;
            println!("{}", file.display());
            Ok(0)
        }
        Command::ViewerCert { dir, hosts } => cli::viewer_cert::run(&dir, hosts),
        Command::AgentGuard { .. } => Ok(0),
        Command::NetworkSim(ServeArgs {
            scenario,
            bind,
            idle_timeout_s,
        }) => {
            let loaded = cli::load(&scenario)?;
            let mut sim = NetworkSim::from_scenario(&loaded);
            serve(&bind, Role::Network, &mut sim, idle_timeout_s).await
        }
    }
}

async fn serve(
    bind: &PeerEndpoint,
    role: Role,
    service: &mut dyn netsim_cosim::lockstep::Service,
    idle_timeout_s: f64,
) -> anyhow::Result<i32> {
    let idle = Duration::from_secs_f64(idle_timeout_s);
    cli::serve_until(
        netsim_cosim::lockstep::serve(bind, role, service, idle),
        idle_timeout_s,
        cli::shutdown_signal(),
    )
    .await
}
