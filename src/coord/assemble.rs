//! A run assembled in one place: the scenario (its command-line overrides already applied at
//! loading, see `cli::load_with`) becomes the physics coordinator with its simulators and
//! participants ([`physics_coordinator`]), and the network coordinator with its simulator,
//! live traffic, generated traffic and capture agents ([`network_coordinator`]) — the one
//! `cosim run` and `physics_coordinator` run in their own process, or the one
//! `network_coordinator` serves.

use super::network::{NetworkCoordinator, SharedAgents};
use super::participants::{
    FlowParticipant, LiveParticipant, ModemParticipant, NavParticipant, ProgramParticipant,
    RecordParticipant, ReportPart, ViewerParticipant,
};
use super::physics::PhysicsCoordinator;
use super::simulators::{network_simulator, physics_simulator, startup_timeout, timeout};
use crate::clock::stages::Stages;
use crate::config::{CoordinatorEndpoint, LoadedScenario};
use crate::io::programs::Programs;
use crate::io::servers::modem_bridge::ModemBridges;
use crate::io::servers::netsim_manager::NavSource;
use crate::io::servers::viewer::Viewer;
use crate::io::traffic::agents::hub::AgentHub;
use crate::io::traffic::LiveNetwork;
use crate::lockstep::{Link, Role};
use crate::output::record::RecordTap;
use crate::output::Recorder;
use crate::sim::air::SharedAir;
use crate::sim::flows::{FlowNetwork, SharedFlows};
use crate::sim::network::ChannelMemo;
use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

/// The network side of a run: its coordinator and, with live traffic, the vehicles' traffic
/// and the capture agents it serves (the caller ends them when the run ends).
pub struct NetworkSide {
    pub coordinator: NetworkCoordinator,
    pub live: Option<Arc<LiveNetwork>>,
    pub agents: Option<SharedAgents>,
    /// The counters of the embedded network simulator's 802.11 media, if it has any.
    pub air: Option<SharedAir>,
    /// The generated traffic (`traffic.flows`), if the scenario has any.
    pub flows: Option<SharedFlows>,
}

/// The network coordinator of `loaded`'s run: its network simulator (the embedded one reads
/// the channels the physics coordinator in this process decoded from `memo`), the vehicles'
/// live traffic and the capture agents, their files in `out_dir`.
pub async fn network_coordinator(
    loaded: &LoadedScenario,
    out_dir: Option<&Path>,
    memo: ChannelMemo,
) -> anyhow::Result<NetworkSide> {
    let (sim, air) = network_simulator(loaded, out_dir, memo).await?;
    let live = LiveNetwork::for_scenario(loaded, out_dir)?;
    let agents = match &live {
        Some(l) => AgentHub::start(loaded, l, out_dir)
            .await?
            .map(|h| Arc::new(tokio::sync::Mutex::new(h))),
        None => None,
    };
    // With live traffic, the live side carries the generated flows in its own engine.
    let flows = (live.is_none())
        .then(|| FlowNetwork::for_scenario(&loaded.scenario, loaded.schedule()))
        .flatten()
        .map(|f| Arc::new(std::sync::Mutex::new(f)));
    let coordinator = NetworkCoordinator::new(sim, loaded.schedule(), startup_timeout(loaded))
        .with_live(live.clone())
        .with_agents(agents.clone())
        .with_flows(flows.clone())
        .with_stages(stages_of(live.as_ref()));
    Ok(NetworkSide {
        coordinator,
        live,
        agents,
        air,
        flows,
    })
}

/// The physics coordinator of `loaded`'s run: its physics simulator, the network coordinator
/// (in this process unless `remote_network` names the endpoint of one), and the
/// participants the scenario brings, with the run record in `out_dir` (none if `None`).
pub async fn physics_coordinator(
    loaded: &LoadedScenario,
    remote_network: Option<&CoordinatorEndpoint>,
    out_dir: Option<PathBuf>,
) -> anyhow::Result<PhysicsCoordinator> {
    let s = &loaded.scenario;
    let insecure_peers = insecure_peers(loaded, remote_network)?;
    if s.real_time_factor > 0.0 {
        crate::io::os::timer::prioritize(s.nice, s.realtime_priority);
    }
    let schedule = loaded.schedule();
    let (physics, path_stats) = physics_simulator(loaded, out_dir.as_deref()).await?;
    let nav = NavSource::start(loaded).await?;
    let channel_memo = ChannelMemo::default();
    let (network, live, agents, air, flows) = match remote_network {
        Some(ep) => {
            let link = Link::connect(
                "network coordinator",
                Role::Network,
                ep.peer(),
                timeout(loaded),
                startup_timeout(loaded),
            )
            .await?;
            (link, None, None, None, None)
        }
        None => {
            let side =
                network_coordinator(loaded, out_dir.as_deref(), channel_memo.clone()).await?;
            let link = Link::local("network coordinator", Box::new(side.coordinator));
            (link, side.live, side.agents, side.air, side.flows)
        }
    };
    let modem_bridges = ModemBridges::start(loaded).await?;
    let programs = Programs::for_scenario(loaded, out_dir.as_deref())?;
    let viewer = match (s.viewer.live, &out_dir) {
        (true, Some(_)) => Some(Viewer::start(&loaded.viewer_settings())?),
        (true, None) => anyhow::bail!(
            "viewer.live: the live view serves the run record, and this run writes none \
             (give it an output folder)"
        ),
        (false, _) => None,
    };
    let recorder = match out_dir {
        Some(dir) => Some(Recorder::for_scenario(
            &dir,
            loaded,
            viewer.clone().map(|v| v as Arc<dyn RecordTap>),
        )?),
        None => None,
    };
    if let (None, Some(l)) = (&recorder, &live) {
        l.without_copy_ends();
    }
    let collect = recorder.is_some();
    let modem_names = modem_bridges
        .as_ref()
        .map(|m| m.modem_names().to_vec())
        .unwrap_or_default();
    let mut c = PhysicsCoordinator::new(physics, network, schedule)
        .with_real_time_factor(s.real_time_factor)
        .with_startup_timeout(startup_timeout(loaded))
        .with_scenario_name(s.name.clone())
        .with_vehicles(s.vehicles.len())
        .with_stages(stages_of(live.as_ref()))
        .with_channel_memo(channel_memo);
    // The order is the record's: programs end while their namespaces exist, the live side
    // and the modems hand the recorder what ended.
    if let Some(p) = programs {
        c = c.with_participant(ProgramParticipant::new(p));
    }
    if let Some(n) = nav {
        c = c.with_participant(NavParticipant::new(n));
    }
    if let Some(l) = live {
        let bound_ms = s.network.emulation_bound_ms(schedule.window_ms());
        c = c.with_participant(
            LiveParticipant::new(l, collect, schedule.window_ns, bound_ms).with_agents(agents),
        );
    }
    if let Some(f) = flows {
        c = c.with_participant(FlowParticipant::new(f, collect));
    }
    if let Some(m) = modem_bridges {
        c = c.with_participant(ModemParticipant::new(m, collect));
    }
    if let Some(p) = path_stats {
        c = c.with_participant(ReportPart::acoustic_paths(p));
    }
    if let Some(a) = air {
        c = c.with_participant(ReportPart::air(a));
    }
    if !insecure_peers.is_empty() {
        c = c.with_participant(ReportPart::insecure_peers(insecure_peers));
    }
    if let Some(r) = recorder {
        c = c.with_participant(RecordParticipant::new(
            r,
            s.vehicles.len(),
            schedule.window_ns,
            modem_names,
        ));
    }
    if let Some(v) = viewer {
        c = c.with_participant(ViewerParticipant::new(v));
    }
    Ok(c)
}

/// The peers on other hosts the run reaches in plaintext, for its summary: the simulators the
/// scenario allows so (`simulators.insecure_peers`, checked at load), and a network coordinator
/// of its own, refused unless allowed likewise.
fn insecure_peers(
    loaded: &LoadedScenario,
    remote_network: Option<&CoordinatorEndpoint>,
) -> anyhow::Result<Vec<String>> {
    let simulators = &loaded.scenario.simulators;
    let mut peers: Vec<String> = simulators
        .plaintext_remote_peers()
        .iter()
        .map(ToString::to_string)
        .collect();
    if let Some(ep) = remote_network {
        if let Some(why) = ep.peer().insecure() {
            anyhow::ensure!(simulators.insecure_peers, "--network-coordinator: {why}");
            tracing::warn!(
                "{ep}: the network coordinator on another host reached in plaintext (insecure_peers)"
            );
            peers.push(ep.to_string());
        }
    }
    Ok(peers)
}

/// Where the wall time goes: the live side's counters when the run has live traffic in this
/// process (the network and physics coordinators add to the same ones), else counters of its own.
fn stages_of(live: Option<&Arc<LiveNetwork>>) -> Arc<Stages> {
    live.map_or_else(Arc::default, |l| l.stages())
}
