//! The network coordinator's live side: the vehicles' TUN interfaces on this machine
//! ([`Ports`]) feeding the packet [`Engine`], each END's deliveries written at the sim time the
//! simulator chose, and the vehicles on other machines reached through their capture agents:
//! what an agent reports goes into the same engine and pcaps, and the deliveries for its
//! vehicles are handed to it ([`LiveNetwork::take_releases`]) and stay in the ledger's flight
//! until it says what became of them. The generated flows (`traffic.flows`) run beside the
//! captured traffic in the same engine: their packets join each BEGIN, their deliveries go back
//! to them in sim time, never into a TUN.

pub mod agents;
pub mod vehicle_tuns;

use crate::clock::stages::{Stage, Stages};
use crate::clock::{SimNanos, WindowClock};
use crate::config::{Capture, LoadedScenario};
use crate::model::fate::DropReason;
use crate::net::{
    addr::AddressBook,
    ledger::{CopyEnd, CopyEnds, Ledger, LedgerSummary},
    traffic::{Delivery, Engine, EngineConfig, Frame, Stamp},
};
use crate::sim::flows::{FlowSummary, Flows};
use crate::wire::agent::copy_id;
use crate::wire::pcap::PcapWriter;
use crate::wire::proto::agent::{Capture as AgentCapture, Finished, Release, Report};
use crate::wire::proto::NetworkUpdate;
use crate::wire::update::NetworkView;
use anyhow::Context;
use foldhash::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use vehicle_tuns::{Ports, PortsConfig, Sink};

/// The coordinator's side of the ports: the packet engine, the generated traffic it carries
/// beside the captured, and the copies with the agents.
pub struct Network {
    pub engine: Engine,
    /// The generated traffic (`traffic.flows`), if any: its packets go into the same engine
    /// and come back to it, never into a TUN.
    flows: Option<Flows>,
    /// Per vehicle: the agent (index into [`LiveNetwork::agents`]) it lives with; `None`: here.
    agent_of: Vec<Option<usize>>,
    /// Per agent: the ids of the copies of the last END to hand over.
    outbox: Vec<Vec<u64>>,
    /// Copies handed to an agent (or about to be), by id, until it says what became of them.
    at_agents: HashMap<u64, Delivery>,
    /// At most this many copies with the agents (more are dropped, "queue full").
    agent_limit: usize,
}

impl Sink for Network {
    fn capture(&mut self, node: usize, frame: Frame, stamp: Stamp) {
        self.engine.capture_stamped(node, frame, stamp);
    }

    fn delivered(&mut self, d: &Delivery, ok: bool) {
        self.engine.delivered(d, ok);
    }
}

/// What an agent reported, for [`LiveNetwork::apply_report`].
pub struct AgentNews<'a> {
    pub captures: &'a [AgentCapture],
    /// Ids of copies written into their receiver's TUN.
    pub written: &'a [u64],
    /// Per id in `written`: how late it was written on the agent's clock, ns (empty from an
    /// agent that does not measure it).
    pub written_late_ns: &'a [u64],
    /// Ids of copies whose write failed.
    pub failed: &'a [u64],
}

impl<'a> AgentNews<'a> {
    /// What a window's report says.
    pub fn report(r: &'a Report) -> Self {
        AgentNews {
            captures: &r.captures,
            written: &r.written,
            written_late_ns: &r.written_late_ns,
            failed: &r.failed,
        }
    }

    /// What the agent's last word at the end of the run says.
    pub fn finished(f: &'a Finished) -> Self {
        AgentNews {
            captures: &f.captures,
            written: &f.written,
            written_late_ns: &f.written_late_ns,
            failed: &f.failed,
        }
    }
}

/// A vehicle network in namespaces, captured through TUN interfaces here and on the agents'
/// machines.
pub struct LiveNetwork {
    ports: Ports<Network>,
    /// The capture agents' names (the scenario's `vehicles[].host`, in order of appearance).
    agents: Vec<String>,
    summary: Mutex<Option<LedgerSummary>>,
    /// Every generated flow's summary, once shut down.
    traffic: Mutex<Vec<FlowSummary>>,
    /// Whether the vehicles' packets are written to pcaps (the generated ones too).
    pcaps: bool,
    pub offload: bool,
}

impl LiveNetwork {
    /// For a scenario with `network.capture: tun`: `None` otherwise. Needs root and a tokio runtime.
    pub fn for_scenario(
        loaded: &LoadedScenario,
        out_dir: Option<&Path>,
    ) -> anyhow::Result<Option<Arc<LiveNetwork>>> {
        let s = &loaded.scenario;
        if s.network.capture != Capture::Tun {
            return Ok(None);
        }
        // Always paced (validated); in a network coordinator of its own, this is where it starts.
        crate::io::os::timer::prioritize(s.nice, s.realtime_priority);
        let schedule = loaded.schedule();
        let book = AddressBook::new(&s.vehicles);
        let n = book.len();
        let cfg = EngineConfig {
            schedule,
            queue_limit: s.network.queue_limit,
            max_hold_windows: s.network.max_hold_windows,
            crc: s.network.crc,
            seed: s.seed,
        };
        let agents = s.agents();
        let agent_of: Vec<Option<usize>> = s
            .vehicles
            .iter()
            .map(|v| {
                v.host
                    .as_ref()
                    .and_then(|h| agents.iter().position(|a| a == h))
            })
            .collect();
        let mut pcaps = Vec::new();
        for name in &book.names {
            pcaps.push(match (s.network.pcap, out_dir) {
                (true, Some(dir)) => {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                    let path = dir.join(format!("{name}.pcap"));
                    let f = File::create(&path)
                        .with_context(|| format!("cannot create {}", path.display()))?;
                    Some(PcapWriter::with_snaplen(
                        BufWriter::with_capacity(1 << 16, f),
                        s.network.pcap_snaplen,
                    )?)
                }
                _ => None,
            });
        }
        let release_limit = s.network.queue_limit.saturating_mul(n.max(1));
        let addresses = book.addresses.clone();
        let flows = Flows::for_scenario(s, &book, schedule.duration_ns());
        let network = Network {
            engine: Engine::new(book, cfg),
            flows,
            outbox: vec![Vec::new(); agents.len()],
            agent_of: agent_of.clone(),
            at_agents: HashMap::default(),
            agent_limit: release_limit,
        };
        let offload = s.network.offload;
        let ports = Ports::open(
            PortsConfig {
                vehicles: &s.vehicles,
                addresses: &addresses,
                here: agent_of.iter().map(Option::is_none).collect(),
                clock: WindowClock::new(schedule, s.real_time_factor),
                release_limit,
                split: !offload,
                pcaps,
                env: s.vehicles_ros_env(),
            },
            network,
        )?;
        tracing::info!(
            vehicles = n,
            attached = s.vehicles.iter().filter(|v| v.attach.is_some()).count(),
            on_agents = agent_of.iter().filter(|a| a.is_some()).count(),
            offload,
            "live capture: one namespace and TUN per vehicle (ip netns exec ncs-<vehicle> ..., or the container or namespace a vehicle attaches to)"
        );
        Ok(Some(Arc::new(LiveNetwork {
            ports,
            agents,
            summary: Mutex::new(None),
            traffic: Mutex::new(Vec::new()),
            pcaps: s.network.pcap && out_dir.is_some(),
            offload,
        })))
    }

    /// The counters the live side adds its capture, release and window work to.
    pub fn stages(&self) -> Arc<Stages> {
        self.ports.stages()
    }

    /// The vehicles' names, in node order.
    pub fn names(&self) -> Vec<String> {
        self.ports.lock().sink.engine.book.names.clone()
    }

    /// The capture agents' names, in the order of their index.
    pub fn agents(&self) -> &[String] {
        &self.agents
    }

    /// Per vehicle: the index of the agent it lives with (`None`: this machine).
    pub fn agent_of(&self) -> Vec<Option<usize>> {
        self.ports.lock().sink.agent_of.clone()
    }

    /// How many copies `agent` holds (handed over, fate not yet reported).
    pub fn held_by(&self, agent: usize) -> usize {
        let st = self.ports.lock();
        let net = &st.sink;
        (net.at_agents.values())
            .filter(|d| net.agent_of.get(d.node).copied().flatten() == Some(agent))
            .count()
    }

    /// Window `k`'s BEGIN: the window opens at the wall instant the physics coordinator opened
    /// it at (`window_opened_unix_ns`, never later than now), or now if the BEGIN gives none;
    /// so the time the BEGIN took to get here, and its jitter, neither stamp captures nor
    /// release deliveries early. Describes the packets captured since the last BEGIN in `begin`
    /// (the agents' reports of this window applied before), and those the generated flows sent
    /// up to the window's start.
    pub fn begin(&self, k: u32, begin: &mut NetworkUpdate) {
        let anchor = match begin.window_opened_unix_ns {
            0 => None,
            ns => crate::io::os::timer::instant_of_unix_ns(ns),
        };
        let mut st = self.ports.lock();
        let now = Instant::now();
        st.clock.open(k, anchor.map_or(now, |a| a.min(now)));
        let start = st.clock.schedule.start_ns(k);
        let mut sent = Vec::new();
        let net = &mut st.sink;
        if let Some(f) = &mut net.flows {
            f.send_into(&mut net.engine, start, |node, ip, t| {
                if self.pcaps {
                    sent.push((node, t, ip.to_vec()));
                }
            });
        }
        net.engine.fill_begin(k, begin);
        drop(st);
        self.record(&sent);
        self.ports.stages().since(Stage::LiveWindow, now);
    }

    /// Writes generated packets (vehicle, sim time, IP bytes) into their vehicles' pcaps.
    fn record(&self, packets: &[(usize, SimNanos, Vec<u8>)]) {
        for (node, t, ip) in packets {
            if let Some(mut pcap) = self.ports.pcap(*node) {
                pcap.record(*node, *t, ip);
            }
        }
    }

    /// The simulator's END of window `k`: hands the generated traffic's deliveries back to the
    /// flows, schedules the others to the vehicles here, and puts those to the agents' vehicles
    /// in their outboxes.
    pub fn end(&self, k: u32, end: &NetworkView) {
        let started = Instant::now();
        let mut st = self.ports.lock();
        let deliveries = st.sink.engine.apply_end(k, end);
        let mut generated = Vec::new();
        for d in deliveries {
            let net = &mut st.sink;
            if let (None, Some(f)) = (d.emulation, &mut net.flows) {
                // Generated: it reaches the flows' receiver in sim time, wherever the vehicle is.
                f.take_delivery(&mut net.engine, &d);
                if self.pcaps {
                    generated.push((d.node, d.t_ns, d.frame.ip().to_vec()));
                }
                continue;
            }
            if let Some(agent) = st.sink.agent_of.get(d.node).copied().flatten() {
                let net = &mut st.sink;
                if net.at_agents.len() >= net.agent_limit {
                    net.engine.drop_delivery(&d, DropReason::QueueFull, d.t_ns);
                    continue;
                }
                let id = copy_id(d.pkt_id, d.node);
                net.outbox[agent].push(id);
                net.at_agents.insert(id, d);
                continue;
            }
            if let Err(e) = st.schedule(k, d) {
                let (d, reason) = *e;
                st.sink.engine.drop_delivery(&d, reason, d.t_ns);
            }
        }
        drop(st);
        self.ports.notify();
        self.record(&generated);
        self.ports.stages().since(Stage::LiveWindow, started);
    }

    /// The copies of the last END for `agent`'s vehicles (for its Releases message).
    pub fn take_releases(&self, agent: usize) -> Vec<Release> {
        let mut st = self.ports.lock();
        let net = &mut st.sink;
        let Some(ids) = net.outbox.get_mut(agent).map(std::mem::take) else {
            return Vec::new();
        };
        ids.iter()
            .filter_map(|id| {
                net.at_agents.get(id).map(|d| Release {
                    id: *id,
                    vehicle: d.node as u32,
                    t_ns: d.t_ns,
                    packet: d.frame.ip_bytes(),
                    corrupted: d.corrupted,
                })
            })
            .collect()
    }

    /// What `agent` reported: its vehicles' captures go into the engine (and their pcaps), as a
    /// TUN read here would; the copies it wrote or failed to write end. An id the agent was not
    /// given, or a capture of a vehicle not its own, is an error naming it.
    pub fn apply_report(&self, agent: usize, news: &AgentNews<'_>) -> Result<(), String> {
        let started = Instant::now();
        let mut ended = Vec::with_capacity(news.written.len() + news.failed.len());
        {
            let mut st = self.ports.lock();
            let net = &mut st.sink;
            if !news.written_late_ns.is_empty() && news.written_late_ns.len() != news.written.len()
            {
                return Err(format!(
                    "{} release delays for {} written copies",
                    news.written_late_ns.len(),
                    news.written.len()
                ));
            }
            for c in news.captures {
                let node = c.vehicle as usize;
                if net.agent_of.get(node).copied().flatten() != Some(agent) {
                    return Err(format!(
                        "a capture of vehicle {node}, which is not one of this agent's"
                    ));
                }
            }
            for (ids, ok) in [(news.written, true), (news.failed, false)] {
                for (i, id) in ids.iter().enumerate() {
                    let Some(mut d) = net.at_agents.remove(id) else {
                        return Err(format!("the fate of copy {id:#x}, which it was not given"));
                    };
                    if let (true, Some(e)) = (ok, &mut d.emulation) {
                        e.release_late_ns = news.written_late_ns.get(i).copied().unwrap_or(0);
                        e.total_ns = e.release_late_ns + e.capture_lag_ns;
                    }
                    net.engine.delivered(&d, ok);
                    if ok {
                        ended.push(d);
                    }
                }
            }
        }
        for d in &ended {
            if let Some(mut pcap) = self.ports.pcap(d.node) {
                pcap.record(d.node, d.t_ns, d.frame.ip());
            }
        }
        for c in news.captures {
            let node = c.vehicle as usize;
            if let Some(mut pcap) = self.ports.pcap(node) {
                pcap.record(node, c.t_ns, &c.packet);
            }
        }
        let mut st = self.ports.lock();
        for c in news.captures {
            let stamp = Stamp {
                t_ns: c.t_ns,
                lag_ns: st.clock.capture_lag_ns(c.t_ns),
                read: None,
            };
            // A view into the report, until the engine keeps it past its first END.
            st.sink.engine.capture_stamped(
                c.vehicle as usize,
                Frame::plain(c.packet.clone()),
                stamp,
            );
        }
        drop(st);
        self.ports.stages().since(Stage::Capture, started);
        Ok(())
    }

    /// Every generated flow's summary (`summary.json`'s `traffic`), after [`Self::shutdown_at`];
    /// empty before, or without flows.
    pub fn traffic(&self) -> Vec<FlowSummary> {
        self.traffic
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn ledger(&self) -> Ledger {
        self.ports.lock().sink.engine.ledger.clone()
    }

    /// Moves the ends of the copies that ended since the last call (delivered or dropped, one
    /// per copy, in the order they ended) to the back of `out`. They are held in a bounded
    /// buffer until taken ([`crate::net::ledger::MAX_COPY_ENDS`]; the summary counts what it
    /// could not hold); after [`Self::shutdown`] the last ones, the copies it dropped, remain.
    pub fn drain_copy_ends(&self, out: &mut Vec<CopyEnd>) {
        let mut st = self.ports.lock();
        if !st.sink.engine.ends.is_empty() {
            st.sink.engine.ends.drain_into(out);
        }
    }

    /// Keeps no copy ends (for a network coordinator whose run record is written elsewhere).
    pub fn without_copy_ends(&self) {
        self.ports.lock().sink.engine.ends = CopyEnds::new(0);
    }

    /// Copies with the simulator, queued for the next window, and scheduled for release (here
    /// or with an agent).
    pub fn in_flight_parts(&self) -> (usize, usize, usize) {
        let st = self.ports.lock();
        (
            st.sink.engine.queued(),
            st.sink.engine.held_copies(),
            st.scheduled() + st.sink.at_agents.len(),
        )
    }

    /// Ends the live side after the last window it opened: [`Self::shutdown_at`] the end of
    /// that window (sim time 0 if none opened).
    pub fn shutdown(&self) -> LedgerSummary {
        self.shutdown_at(self.end_ns())
    }

    /// The end of the last window opened (sim time 0 if none opened).
    pub fn end_ns(&self) -> SimNanos {
        let st = self.ports.lock();
        st.clock.open.map_or(0, |(k, _, _)| {
            st.clock.schedule.start_ns(k.saturating_add(1))
        })
    }

    /// Ends the live side of a run whose last window ended at sim time `end_ns`: stops the
    /// readers and the release thread, drops whatever is in flight (`shutdown`, at `end_ns`:
    /// also the copies with agents that did not say what became of them) and what was captured
    /// after that end while the programs were being stopped (`after_end`, at its capture time),
    /// flushes the pcaps, closes the TUNs and removes the namespaces it created (those attached
    /// to stay). Idempotent (the first call's end counts); returns the ledger.
    pub fn shutdown_at(&self, end_ns: SimNanos) -> LedgerSummary {
        if let Some(s) = self
            .summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return s;
        }
        self.ports.stop();
        let summary = {
            let mut st = self.ports.lock();
            let mut left = st.take_scheduled();
            left.extend(st.sink.at_agents.drain().map(|(_, d)| d));
            for d in &left {
                st.sink
                    .engine
                    .drop_delivery(d, DropReason::Shutdown, end_ns.max(d.captured_ns));
            }
            st.sink.engine.shutdown(end_ns);
            if let Some(f) = &st.sink.flows {
                *self.traffic.lock().unwrap_or_else(|p| p.into_inner()) = f.finish(end_ns);
            }
            st.sink.engine.summary()
        };
        self.ports.close();
        *self.summary.lock().unwrap_or_else(|p| p.into_inner()) = Some(summary.clone());
        summary
    }
}

impl Drop for LiveNetwork {
    fn drop(&mut self) {
        self.shutdown();
    }
}
