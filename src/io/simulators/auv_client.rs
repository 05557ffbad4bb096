//! An external simulator that speaks the ZeroMQ AUV simulator interface, followed as the
//! physics simulator ([`AuvClient`], [`Followed`]).
//!
//! The interface has no step and no pause: the simulator runs free in real time. The client
//! subscribes to its telemetry (every id) on a task of its own and keeps the newest message per
//! AUV with its arrival time. Each window's ChannelData takes every vehicle's newest pose, so a
//! pose is at most one telemetry period plus W old when the window opens (plus the transport's
//! latency), and the network side sees it a window later at most, as with any physics simulator.
//! Window 0 waits (up to `startup_timeout_ms`) until every vehicle has sent telemetry, which
//! absorbs PUB/SUB's loss of the first messages; afterwards a vehicle silent for `stale_ms` of
//! wall time ends the run with an error naming it.
//!
//! Thruster frames that arrive on this scenario's `auv_interface` thruster port (the scenario's
//! programs and the ROS 2 bridge send there) are checked as the embedded server checks them and
//! forwarded to the simulator at the next window.

use crate::config::{AuvClientSettings, LoadedScenario};
use crate::io::simulators::auv_server::{intake, tcp_endpoint, AuvStats};
use crate::sim::followed::Followed;
use crate::sim::physics::Placement;
use crate::wire::auv::{Telemetry, ThrusterCommand};
use anyhow::Context;
use nalgebra::{Point3, UnitQuaternion};

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

/// What the client saw.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ClientStats {
    pub telemetry_received: u64,
    /// Telemetry messages not used, per reason ("unknown AUV id 4", "23 bytes, expected 24").
    pub telemetry_rejected: BTreeMap<String, u64>,
}

/// What the client writes at the end (`auv_interface.json`).
#[derive(serde::Serialize)]
struct Report {
    #[serde(flatten)]
    telemetry: ClientStats,
    /// Thruster frames taken on the forwarding port; `frames_applied` counts those forwarded.
    thrusters: AuvStats,
}

type Newest = Arc<Mutex<HashMap<u8, (Telemetry, Instant)>>>;

/// The physics simulator that is an external AUV interface simulator; see the module docs.
pub struct AuvClient {
    endpoint: String,
    /// Per vehicle, its AUV id and name.
    vehicles: Vec<(u8, String)>,
    stale: Duration,
    newest: Newest,
    stats: Arc<Mutex<ClientStats>>,
    thrusters: Arc<Mutex<AuvStats>>,
    pending: Arc<Mutex<Vec<ThrusterCommand>>>,
    push: zeromq::PushSocket,
    report: Option<PathBuf>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Connects `socket` to `endpoint`: the socket retries (it connects only to a peer already
/// listening) up to its `connect_timeout`, the startup timeout given in its options.
async fn connect(socket: &mut impl Socket, endpoint: &str, within: Duration) -> anyhow::Result<()> {
    socket.connect(endpoint).await.map_err(|e| match e {
        zeromq::ZmqError::ConnectTimeout(_) => anyhow::anyhow!(
            "nothing listens at {endpoint}: no connection within {} ms (startup_timeout_ms)",
            within.as_millis()
        ),
        e => anyhow::anyhow!("cannot connect to {endpoint}: {e}"),
    })
}

/// Socket options that make `connect` give up after `within`.
fn options(within: Duration) -> zeromq::SocketOptions {
    let mut o = zeromq::SocketOptions::default();
    o.connect_timeout(within);
    o
}

impl AuvClient {
    /// Subscribes to the simulator's telemetry, connects to its thruster port and binds the
    /// forwarding port. `report`: where to write the counts at the end.
    pub async fn connect(
        loaded: &LoadedScenario,
        settings: &AuvClientSettings,
        report: Option<PathBuf>,
    ) -> anyhow::Result<AuvClient> {
        let s = &loaded.scenario;
        let startup = Duration::from_millis(s.simulators.startup_timeout_ms);
        let vehicles: Vec<(u8, String)> = s
            .vehicles
            .iter()
            .filter_map(|v| Some((v.motion.auv_id()?, v.name.clone())))
            .collect();
        let endpoint = tcp_endpoint(&settings.host, settings.telemetry_port);
        let mut sub = zeromq::SubSocket::with_options(options(startup));
        connect(&mut sub, &endpoint, startup)
            .await
            .context("AUV interface simulator: telemetry")?;
        sub.subscribe("")
            .await
            .context("AUV interface simulator: subscribe")?;
        let mut push = zeromq::PushSocket::with_options(options(startup));
        let thrusters = tcp_endpoint(&settings.host, settings.thrusters_port);
        connect(&mut push, &thrusters, startup)
            .await
            .context("AUV interface simulator: thrusters")?;
        let newest: Newest = Arc::default();
        let stats = Arc::new(Mutex::new(ClientStats::default()));
        let pending = Arc::new(Mutex::new(Vec::new()));
        let thruster_stats = Arc::new(Mutex::new(AuvStats::default()));
        let ids: Vec<u8> = vehicles.iter().map(|(id, _)| *id).collect();
        let mut tasks = vec![tokio::spawn(telemetry(
            sub,
            ids.clone(),
            newest.clone(),
            stats.clone(),
        ))];
        if settings.forward_thrusters {
            let a = &s.auv_interface;
            let ep = tcp_endpoint(&a.bind, a.thrusters_port);
            let mut pull = zeromq::PullSocket::new();
            pull.bind(&ep).await.with_context(|| {
                format!("AUV interface: cannot bind the thruster forwarding port {ep}")
            })?;
            tasks.push(tokio::spawn(intake(
                pull,
                ids,
                pending.clone(),
                thruster_stats.clone(),
            )));
            tracing::info!("AUV interface: thruster frames on {ep} are forwarded to {thrusters}");
        }
        tracing::info!("AUV interface simulator: telemetry from {endpoint}, AUVs {vehicles:?}");
        Ok(AuvClient {
            endpoint,
            vehicles,
            stale: Duration::from_millis(settings.stale_ms),
            newest,
            stats,
            thrusters: thruster_stats,
            pending,
            push,
            report,
            tasks,
        })
    }

    /// Window 0: waits until every vehicle has sent telemetry.
    async fn first_telemetry(&self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let missing: Vec<String> = {
                let newest = self.newest.lock().expect("telemetry");
                self.vehicles
                    .iter()
                    .filter(|(id, _)| !newest.contains_key(id))
                    .map(|(id, name)| format!("AUV id {id} ({name})"))
                    .collect()
            };
            if missing.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "no telemetry from {} within {} ms of the start",
                    missing.join(", "),
                    timeout.as_millis()
                ));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Every vehicle's newest pose, each fresher than `stale`.
    fn newest_poses(&self) -> Result<Vec<Placement>, String> {
        let newest = self.newest.lock().expect("telemetry");
        let now = Instant::now();
        self.vehicles
            .iter()
            .map(|(id, name)| {
                let Some((t, at)) = newest.get(id) else {
                    return Err(format!("no telemetry from AUV id {id} ({name})"));
                };
                let age = now.duration_since(*at);
                if age > self.stale {
                    return Err(format!(
                        "no telemetry from AUV id {id} ({name}) for {} ms (stale_ms {})",
                        age.as_millis(),
                        self.stale.as_millis()
                    ));
                }
                let q = UnitQuaternion::from_euler_angles(
                    f64::from(t.roll),
                    f64::from(t.pitch),
                    f64::from(t.yaw),
                );
                Ok((
                    Point3::new(f64::from(t.x), f64::from(t.y), f64::from(t.z)),
                    q,
                ))
            })
            .collect()
    }

    /// Sends the thruster frames that arrived since the last window.
    async fn forward(&mut self, timeout: Duration) -> Result<(), String> {
        let frames = std::mem::take(&mut *self.pending.lock().expect("AUV pending"));
        for f in &frames {
            tokio::time::timeout(timeout, self.push.send(ZmqMessage::from(f.emit().to_vec())))
                .await
                .map_err(|_| {
                    format!(
                        "its thruster port took no frame within {} ms",
                        timeout.as_millis()
                    )
                })?
                .map_err(|e| format!("thruster frame: {e}"))?;
        }
        self.thrusters.lock().expect("AUV stats").frames_applied += frames.len() as u64;
        Ok(())
    }

    /// The counts so far.
    pub fn stats(&self) -> ClientStats {
        self.stats.lock().expect("client stats").clone()
    }
}

/// Keeps the newest telemetry per known AUV.
async fn telemetry(
    mut sub: zeromq::SubSocket,
    ids: Vec<u8>,
    newest: Newest,
    stats: Arc<Mutex<ClientStats>>,
) {
    loop {
        let msg = match sub.recv().await {
            Ok(m) => m,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let parts: Vec<&[u8]> = msg.iter().map(|b| &b[..]).collect();
        let verdict = Telemetry::parse_message(&parts)
            .map_err(|e| e.to_string())
            .and_then(|(id, t)| {
                if ids.contains(&id) {
                    Ok((id, t))
                } else {
                    Err(format!("unknown AUV id {id}"))
                }
            });
        let mut st = stats.lock().expect("client stats");
        st.telemetry_received += 1;
        match verdict {
            Ok((id, t)) => {
                newest
                    .lock()
                    .expect("telemetry")
                    .insert(id, (t, Instant::now()));
            }
            Err(reason) => {
                if st.telemetry_rejected.values().sum::<u64>() < 20 {
                    tracing::warn!("AUV interface simulator: telemetry not used: {reason}");
                }
                *st.telemetry_rejected.entry(reason).or_default() += 1;
            }
        }
    }
}

impl Followed for AuvClient {
    fn mover(&self) -> &str {
        "the AUV interface simulator"
    }

    fn peer(&self) -> String {
        format!("AUV interface simulator at {}", self.endpoint)
    }

    /// The newest telemetry of every vehicle (window 0 waits for each one's first), then the
    /// thruster frames that arrived meanwhile forwarded.
    async fn poses(&mut self, k: u32, timeout: Duration) -> Result<Vec<Placement>, String> {
        if k == 0 {
            self.first_telemetry(timeout).await?;
        }
        let poses = self.newest_poses()?;
        self.forward(timeout).await?;
        Ok(poses)
    }
}

impl Drop for AuvClient {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        let report = Report {
            telemetry: self.stats(),
            thrusters: self.thrusters.lock().expect("AUV stats").clone(),
        };
        tracing::info!(
            "AUV interface simulator: {} telemetry messages, not used {:?}; thruster frames: {} forwarded, rejected {:?}",
            report.telemetry.telemetry_received,
            report.telemetry.telemetry_rejected,
            report.thrusters.frames_applied,
            report.thrusters.frames_rejected
        );
        if let Some(path) = &self.report {
            if let Err(e) =
                std::fs::write(path, serde_json::to_vec_pretty(&report).unwrap_or_default())
            {
                tracing::warn!("cannot write {}: {e}", path.display());
            }
        }
    }
}
