//! The simulators a coordinator links to: the scenario's choice for each role (the command
//! line's, applied and checked at loading) turned into a [`Link`] in one place per role
//! ([`physics_simulator`], [`network_simulator`]), starting the embedded ones in this process
//! and the ns-3 adapter as a child.

use crate::config::{LoadedScenario, NetworkEndpoint, PeerEndpoint, PhysicsEndpoint};
use crate::io::simulators::auv_server::AuvInterfaceSim;
use crate::lockstep::{Link, Role, Service};
use crate::sim::acoustic_paths::SharedPathStats;
use crate::sim::air::SharedAir;
use crate::sim::followed::{Follow, Followed};
use crate::sim::network::ChannelMemo;
use crate::sim::{network::NetworkSim, physics::PhysicsSim};
use std::{path::Path, time::Duration};

/// How long a peer may take to come up and answer window 0.
pub fn startup_timeout(loaded: &LoadedScenario) -> Duration {
    Duration::from_millis(loaded.scenario.simulators.startup_timeout_ms)
}

/// A secure endpoint's key file as a scenario file names it is relative to the file's folder
/// (one from the command line is already absolute).
fn with_key_beside(loaded: &LoadedScenario, endpoint: PeerEndpoint) -> PeerEndpoint {
    match endpoint {
        PeerEndpoint::Secure(mut a) if a.key_file.is_relative() => {
            a.key_file = loaded.relative(&a.key_file.to_string_lossy());
            PeerEndpoint::Secure(a)
        }
        other => other,
    }
}

pub(super) fn timeout(loaded: &LoadedScenario) -> Duration {
    Duration::from_millis(loaded.scenario.simulators.timeout_ms)
}

/// The link to the physics simulator the scenario chooses. The one place a [`PhysicsEndpoint`] becomes a [`Link`]. With it, the
/// stats of its acoustic paths when it traces them in this process.
pub async fn physics_simulator(
    loaded: &LoadedScenario,
    out_dir: Option<&Path>,
) -> anyhow::Result<(Link, Option<SharedPathStats>)> {
    let peer = "physics simulator";
    Ok(match loaded.scenario.simulators.physics.clone() {
        PhysicsEndpoint::Embedded => {
            let sim = PhysicsSim::from_scenario(loaded);
            let stats = sim.shared_path_stats();
            let (peer, sim) = (
                "embedded physics simulator",
                serve_embedded(loaded, sim, out_dir).await?,
            );
            // With many pairs, on a thread of its own: it computes window k+1 while the
            // network side runs k. With few, the hand-off between threads would cost more
            // than the window's work. The AUV interface's sockets stay on this runtime.
            let link = if loaded.scenario.vehicles.len() >= THREADED_PHYSICS_VEHICLES
                && !AuvInterfaceSim::wanted(loaded)
            {
                Link::threaded(peer, sim, crate::io::os::timer::on_window_path)?
            } else {
                Link::local(peer, sim)
            };
            (link, stats)
        }
        PhysicsEndpoint::Peer(endpoint) => {
            let (timeout, startup) = (timeout(loaded), startup_timeout(loaded));
            let endpoint = with_key_beside(loaded, endpoint);
            let link = Link::connect(peer, Role::Physics, &endpoint, timeout, startup).await?;
            (link, None)
        }
        PhysicsEndpoint::Gazebo(settings) => gazebo(loaded, &settings)?,
        PhysicsEndpoint::AuvInterface(settings) => {
            let report = out_dir.map(|d| d.join("auv_interface.json"));
            let c =
                crate::io::simulators::auv_client::AuvClient::connect(loaded, &settings, report)
                    .await?;
            follow(loaded, c)
        }
    })
}

/// A physics simulator that moves the vehicles itself, followed window by window.
fn follow<F: Followed + 'static>(
    loaded: &LoadedScenario,
    sim: F,
) -> (Link, Option<SharedPathStats>) {
    let peer = sim.peer();
    let f = Follow::new(loaded, sim);
    let stats = f.shared_path_stats();
    (Link::new(peer, timeout(loaded), Box::new(f)), stats)
}

/// From this many vehicles (120 pairs) on, the embedded physics simulator (without the AUV
/// interface) runs on a thread of its own: measured at W = 1 ms, 16 vehicles run 1.2× as many windows per second that way,
/// 64 vehicles 2×, while 8 vehicles run 2.8× fewer (the hand-off outweighs their work).
pub const THREADED_PHYSICS_VEHICLES: usize = 16;

/// The embedded physics simulator, serving the ZeroMQ AUV interface when the scenario has
/// thruster-driven vehicles (its counts in `out_dir/auv_interface.json`).
pub async fn embedded_physics(
    loaded: &LoadedScenario,
    out_dir: Option<&Path>,
) -> anyhow::Result<Box<dyn Service>> {
    serve_embedded(loaded, PhysicsSim::from_scenario(loaded), out_dir).await
}

/// `sim` as a service: behind the AUV interface when the scenario wants it.
async fn serve_embedded(
    loaded: &LoadedScenario,
    sim: PhysicsSim,
    out_dir: Option<&Path>,
) -> anyhow::Result<Box<dyn Service>> {
    Ok(if AuvInterfaceSim::wanted(loaded) {
        let report = out_dir.map(|d| d.join("auv_interface.json"));
        Box::new(AuvInterfaceSim::bind(loaded, sim, report).await?)
    } else {
        Box::new(sim)
    })
}

/// Gazebo as the physics simulator, through ros_gz_bridge ([`crate::io::simulators::gazebo`]).
#[cfg(feature = "gazebo")]
fn gazebo(
    loaded: &LoadedScenario,
    settings: &crate::config::GazeboSettings,
) -> anyhow::Result<(Link, Option<SharedPathStats>)> {
    let g = crate::io::simulators::gazebo::GazeboPhysics::connect(loaded, settings)?;
    Ok(follow(loaded, g))
}

#[cfg(not(feature = "gazebo"))]
fn gazebo(
    _: &LoadedScenario,
    _: &crate::config::GazeboSettings,
) -> anyhow::Result<(Link, Option<SharedPathStats>)> {
    anyhow::bail!(
        "physics simulator: Gazebo is reached through ROS 2, and this program was built without it: \
         build with `cargo build --features gazebo` (ROS 2 with ros_gz_interfaces; see docs/src/reference/gazebo.md)"
    )
}

/// The link to the network simulator the scenario chooses. The one place a [`NetworkEndpoint`] becomes a [`Link`]. An ns-3 adapter
/// is started for the run (its socket and log in `out_dir`, see [`crate::io::simulators::ns3`]) unless the
/// settings name the `endpoint` of one already running.
/// The embedded one reads the channels a physics coordinator in this process decoded from
/// `memo` (pass a new one if there is none); with it, the counters of its 802.11 media if the
/// scenario has links with `mac`.
pub async fn network_simulator(
    loaded: &LoadedScenario,
    out_dir: Option<&Path>,
    memo: ChannelMemo,
) -> anyhow::Result<(Link, Option<SharedAir>)> {
    let peer = "network simulator";
    let link = match loaded.scenario.simulators.network.clone() {
        NetworkEndpoint::Embedded => {
            let sim = NetworkSim::from_scenario(loaded).with_memo(memo);
            let air = sim.shared_air();
            return Ok((
                Link::local("embedded network simulator", Box::new(sim)),
                air,
            ));
        }
        NetworkEndpoint::Peer(endpoint) => {
            let (timeout, startup) = (timeout(loaded), startup_timeout(loaded));
            let endpoint = with_key_beside(loaded, endpoint);
            Link::connect(peer, Role::Network, &endpoint, timeout, startup).await?
        }
        NetworkEndpoint::Ns3(settings) => {
            let Some(remote) = &settings.endpoint else {
                let link = crate::io::simulators::ns3::start(loaded, &settings, out_dir).await?;
                return Ok((link, None));
            };
            // Started by someone else, maybe on another host: say how it should have been.
            let args = crate::model::ns3::adapter_args(loaded, &settings);
            tracing::info!(
                "the ns-3 adapter at {remote} should run as: {} --bind=<its endpoint> {}",
                crate::io::simulators::ns3::PROGRAM,
                args.join(" ")
            );
            Link::zeromq(
                "ns-3 adapter",
                remote.as_str(),
                timeout(loaded),
                startup_timeout(loaded),
            )
            .await?
        }
    };
    Ok((link, None))
}
