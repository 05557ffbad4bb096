//! The network coordinator: NetworkUpdate BEGIN(k) → END(k) through its network simulator,
//! with the live side's captured packets and the generated traffic's added to each BEGIN and
//! each END's releases handed back.

use crate::clock::stages::{Stage, Stages};
use crate::clock::Schedule;
use crate::io::traffic::agents::hub::AgentHub;
use crate::io::traffic::LiveNetwork;
use crate::lockstep::{
    protocol::{expect_network_into, WindowCounter},
    Link, Reply, Service,
};
use crate::sim::flows::{lock, SharedFlows};
use crate::wire::proto::rosnetsim::network_update;
use crate::wire::proto::NetworkUpdate;
use prost::Message;
use std::{
    sync::Arc,
    time::{Duration, Instant},
};

/// The network coordinator: serves NetworkUpdate BEGIN(k) → END(k) using its simulator.
/// With a [`LiveNetwork`] it adds the packets captured since the last BEGIN to each BEGIN
/// and hands each END's releases to the live side, which writes them into the receivers'
/// TUN interfaces at the delivery times the simulator chose.
pub struct NetworkCoordinator {
    sim: Link,
    schedule: Schedule,
    windows: WindowCounter,
    startup: Duration,
    live: Option<Arc<LiveNetwork>>,
    /// The capture agents of the vehicles on other machines, if any.
    agents: Option<SharedAgents>,
    /// The generated traffic (`traffic.flows`), if any.
    flows: Option<SharedFlows>,
    stages: Arc<Stages>,
    /// The last window's BEGIN and END, for the next window's to be decoded into: their lists
    /// keep their memory (a window's hundreds of entries are not grown again each window).
    spare_begin: NetworkUpdate,
    spare_end: NetworkUpdate,
}

/// The capture agents, shared by the network coordinator (every window) and the live side's
/// participant (the end of the run).
pub type SharedAgents = Arc<tokio::sync::Mutex<AgentHub>>;

impl NetworkCoordinator {
    pub fn new(sim: Link, schedule: Schedule, startup: Duration) -> Self {
        NetworkCoordinator {
            sim,
            schedule,
            windows: WindowCounter::new(schedule.windows),
            startup,
            live: None,
            agents: None,
            flows: None,
            stages: Arc::default(),
            spare_begin: NetworkUpdate::default(),
            spare_end: NetworkUpdate::default(),
        }
    }

    /// Adds its simulator's time to `stages` (the live side adds its own).
    pub fn with_stages(mut self, stages: Arc<Stages>) -> Self {
        self.stages = stages;
        self
    }

    /// Captures and releases live traffic through `live`.
    pub fn with_live(mut self, live: Option<Arc<LiveNetwork>>) -> Self {
        self.live = live;
        self
    }

    /// Opens each window on the capture agents too, and hands them their vehicles' releases.
    pub fn with_agents(mut self, agents: Option<SharedAgents>) -> Self {
        self.agents = agents;
        self
    }

    /// Carries the generated traffic of `flows` in every window.
    pub fn with_flows(mut self, flows: Option<SharedFlows>) -> Self {
        self.flows = flows;
        self
    }

    /// Sim time at the end of the last window it opened.
    pub fn end_ns(&self) -> u64 {
        self.schedule.start_ns(self.windows.next)
    }

    pub fn live(&self) -> Option<&Arc<LiveNetwork>> {
        self.live.as_ref()
    }

    async fn window(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
        let spare = std::mem::take(&mut self.spare_begin);
        let begin = expect_network_into(
            request,
            network_update::MsgType::Begin,
            self.windows.next,
            spare,
        )?
        .into_inner();
        let k = begin.time_val;
        self.windows.begin(k)?;
        let result = self.exchange(k, begin).await;
        if let (Err(e), Some(agents)) = (&result, &self.agents) {
            agents.lock().await.abort(e).await;
        }
        result
    }

    async fn exchange(&mut self, k: u32, mut begin: NetworkUpdate) -> Result<Vec<u8>, String> {
        if let (Some(live), Some(agents)) = (&self.live, &self.agents) {
            let started = Instant::now();
            agents
                .lock()
                .await
                .open(k, begin.window_opened_unix_ns, live)
                .await
                .map_err(|e| format!("{e:#}"))?;
            self.stages.since(Stage::Agents, started);
        }
        if let Some(live) = &self.live {
            live.begin(k, &mut begin);
        }
        if let Some(flows) = &self.flows {
            let started = Instant::now();
            lock(flows).begin(k, &mut begin);
            self.stages.since(Stage::Flows, started);
        }
        let first = (k == 0).then_some(self.startup);
        let started = Instant::now();
        let request = begin.encode_to_vec();
        self.spare_begin = begin;
        let reply = self
            .sim
            .exchange(k, request, first)
            .await
            .map_err(|e| e.to_string())?;
        let spare = std::mem::take(&mut self.spare_end);
        let end = expect_network_into(&reply, network_update::MsgType::End, k, spare)
            .map_err(|e| self.sim.protocol_error(k, e).to_string())?;
        self.stages.since(Stage::NetworkSim, started);
        if let Some(flows) = &self.flows {
            let started = Instant::now();
            lock(flows).end(k, &end);
            self.stages.since(Stage::Flows, started);
        }
        if let Some(live) = &self.live {
            live.end(k, &end);
            if let Some(agents) = &self.agents {
                agents
                    .lock()
                    .await
                    .release(k, live)
                    .await
                    .map_err(|e| format!("{e:#}"))?;
            }
        }
        self.spare_end = end.into_inner();
        Ok(reply)
    }
}

impl Service for NetworkCoordinator {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        Box::pin(async move {
            self.window(request)
                .await
                .map_err(crate::lockstep::TransportError::Failed)
        })
    }

    fn finished(&self) -> bool {
        self.windows.finished()
    }
}
