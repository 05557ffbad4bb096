//! The ZeroMQ AUV simulator interface served from the embedded physics: the vehicles with
//! `motion: {kind: thrusters}` take thruster frames on a PULL socket and publish telemetry and
//! camera images on two PUB sockets (docs/src/reference/auv-interface.md).
//!
//! [`AuvInterfaceSim`] wraps the embedded [`PhysicsSim`] as the physics coordinator's
//! simulator. Before each window it applies the thruster frames that arrived; after it, when
//! the window's end crosses a telemetry (or camera) period of sim time, it publishes every AUV's
//! telemetry (or hands a snapshot to the renderer). Sockets live on tasks of their own and the
//! renderer on a thread of its own, so the lockstep never waits on a client:
//!
//! - the receiving task parses each frame ([`ThrusterCommand::parse`]) and queues valid ones
//!   for a known AUV (at most [`MAX_PENDING`]); malformed frames, unknown ids and a full queue
//!   are counted per reason and logged (the first few in full), never applied;
//! - the publishing task takes at most [`MAX_OUTGOING`] messages; more are dropped and counted;
//! - the renderer takes one snapshot at a time; a snapshot due while it is still busy is
//!   skipped and counted.
//!
//! The counts end up in `auv_interface.json` in the output folder and in the log.

use crate::config::{Cameras, LoadedScenario};
use crate::lockstep::{Reply, Service};
use crate::model::{auv::yaw, camera, terrain::Terrain};
use crate::sim::physics::PhysicsSim;
use crate::wire::auv::{Telemetry, ThrusterCommand};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

/// Thruster frames waiting for the next window.
pub const MAX_PENDING: usize = 1024;
/// Telemetry and image messages waiting for the PUB sockets.
pub const MAX_OUTGOING: usize = 1024;
/// Malformed frames logged in full; the rest are only counted.
const LOGGED: u64 = 20;

/// What the interface did, per reason.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct AuvStats {
    pub frames_received: u64,
    pub frames_applied: u64,
    /// Frames not applied, per reason ("4 bytes, expected 5", "unknown AUV id 9", ...).
    pub frames_rejected: BTreeMap<String, u64>,
    pub telemetry_sent: u64,
    pub images_sent: u64,
    /// Camera snapshots skipped because the renderer was still busy with the previous one.
    pub images_skipped: u64,
    /// Messages dropped because the publishing queue was full.
    pub messages_dropped: u64,
}

enum Outgoing {
    Telemetry(u8, [u8; crate::wire::auv::TELEMETRY_LEN]),
    Images(u8, Vec<u8>, Vec<u8>),
}

/// One camera snapshot: per AUV its id, position and yaw.
type Snapshot = Vec<(u8, nalgebra::Point3<f64>, f64)>;

/// The embedded physics, serving the AUV interface; see the module docs.
pub struct AuvInterfaceSim {
    sim: PhysicsSim,
    pending: Arc<Mutex<Vec<ThrusterCommand>>>,
    stats: Arc<Mutex<AuvStats>>,
    outgoing: tokio::sync::mpsc::Sender<Outgoing>,
    snapshots: Option<std::sync::mpsc::SyncSender<Snapshot>>,
    window_s: f64,
    windows_done: u32,
    telemetry_period: f64,
    image_period: Option<f64>,
    next_telemetry: f64,
    next_image: f64,
    report: Option<PathBuf>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// The ZeroMQ TCP endpoint of `host` (a name, an IPv4 or an IPv6 address) and `port`.
pub fn tcp_endpoint(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("tcp://[{host}]:{port}")
    } else {
        format!("tcp://{host}:{port}")
    }
}

impl AuvInterfaceSim {
    /// Whether `loaded` has vehicles driven through the interface.
    pub fn wanted(loaded: &LoadedScenario) -> bool {
        loaded
            .scenario
            .vehicles
            .iter()
            .any(|v| v.motion.auv_id().is_some())
    }

    /// Binds the three sockets and starts their tasks and the renderer. `report`: where to
    /// write the counts at the end (`auv_interface.json`).
    pub async fn bind(
        loaded: &LoadedScenario,
        sim: PhysicsSim,
        report: Option<PathBuf>,
    ) -> anyhow::Result<AuvInterfaceSim> {
        let a = &loaded.scenario.auv_interface;
        let ids: Vec<u8> = sim.auvs().map(|(_, _, auv)| auv.id).collect();
        let mut telemetry = zeromq::PubSocket::new();
        let mut images = zeromq::PubSocket::new();
        let mut thrusters = zeromq::PullSocket::new();
        for (socket, port, what) in [
            (&mut telemetry, a.telemetry_port, "telemetry"),
            (&mut images, a.images_port, "images"),
        ] {
            let ep = tcp_endpoint(&a.bind, port);
            socket.bind(&ep).await.with_context(|| {
                format!("AUV interface: cannot bind the {what} PUB socket at {ep}")
            })?;
        }
        let ep = tcp_endpoint(&a.bind, a.thrusters_port);
        thrusters.bind(&ep).await.with_context(|| {
            format!("AUV interface: cannot bind the thruster PULL socket at {ep}")
        })?;
        tracing::info!(
            "AUV interface: images on {}, thrusters on {ep}, telemetry on {} for AUV ids {ids:?}",
            tcp_endpoint(&a.bind, a.images_port),
            tcp_endpoint(&a.bind, a.telemetry_port)
        );
        let stats = Arc::new(Mutex::new(AuvStats::default()));
        let pending = Arc::new(Mutex::new(Vec::new()));
        let receiving = tokio::spawn(intake(thrusters, ids, pending.clone(), stats.clone()));
        let (outgoing, rx) = tokio::sync::mpsc::channel(MAX_OUTGOING);
        let publishing = tokio::spawn(publish(telemetry, images, rx, stats.clone()));
        let cams = &a.cameras;
        let snapshots = (cams.rate_hz > 0.0).then(|| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Snapshot>(1);
            let terrain = sim.terrain().clone();
            let cams = cams.clone();
            let out = outgoing.clone();
            let stats = stats.clone();
            std::thread::Builder::new()
                .name("auv-cameras".into())
                .spawn(move || render(&terrain, &cams, &rx, &out, &stats))
                .map(|_| tx)
        });
        let snapshots = snapshots
            .transpose()
            .context("AUV interface: cannot start the camera renderer")?;
        Ok(AuvInterfaceSim {
            window_s: loaded.schedule().window_s(),
            windows_done: 0,
            telemetry_period: 1.0 / a.telemetry_hz,
            image_period: (cams.rate_hz > 0.0).then(|| 1.0 / cams.rate_hz),
            next_telemetry: 0.0,
            next_image: 0.0,
            sim,
            pending,
            stats,
            outgoing,
            snapshots,
            report,
            tasks: vec![receiving, publishing],
        })
    }

    /// The counts so far.
    pub fn stats(&self) -> AuvStats {
        self.stats.lock().expect("AUV stats").clone()
    }

    fn handle(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        let commands = std::mem::take(&mut *self.pending.lock().expect("AUV pending"));
        for c in &commands {
            // Ids were checked on arrival.
            self.sim.command(c)?;
        }
        self.stats.lock().expect("AUV stats").frames_applied += commands.len() as u64;
        let reply = self.sim.handle(request)?;
        // The world is now at the end of the window just answered.
        self.windows_done += 1;
        let t = f64::from(self.windows_done) * self.window_s;
        if t + 1e-9 >= self.next_telemetry {
            self.next_telemetry = next_multiple(t, self.telemetry_period);
            for (_, state, auv) in self.sim.auvs() {
                let p = state.position;
                let msg = Telemetry {
                    x: p.x as f32,
                    y: p.y as f32,
                    z: p.z as f32,
                    yaw: yaw(state) as f32,
                    pitch: 0.0,
                    roll: 0.0,
                };
                self.send(Outgoing::Telemetry(auv.id, msg.emit()));
            }
        }
        if let (Some(period), Some(snapshots)) = (self.image_period, &self.snapshots) {
            if t + 1e-9 >= self.next_image {
                self.next_image = next_multiple(t, period);
                let snap: Snapshot = self
                    .sim
                    .auvs()
                    .map(|(_, s, a)| (a.id, s.position, yaw(s)))
                    .collect();
                if snapshots.try_send(snap).is_err() {
                    self.stats.lock().expect("AUV stats").images_skipped += 1;
                }
            }
        }
        Ok(reply)
    }

    fn send(&self, m: Outgoing) {
        if self.outgoing.try_send(m).is_err() {
            self.stats.lock().expect("AUV stats").messages_dropped += 1;
        }
    }
}

/// The first multiple of `period` after `t`.
fn next_multiple(t: f64, period: f64) -> f64 {
    ((t / period + 1e-9).floor() + 1.0) * period
}

impl Service for AuvInterfaceSim {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        crate::lockstep::ready(self.handle(&request))
    }

    fn finished(&self) -> bool {
        Service::finished(&self.sim)
    }
}

impl Drop for AuvInterfaceSim {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        let stats = self.stats();
        tracing::info!(
            "AUV interface: {} thruster frames received, {} applied, rejected {:?}; {} telemetry and {} image messages sent, {} snapshots skipped, {} messages dropped",
            stats.frames_received,
            stats.frames_applied,
            stats.frames_rejected,
            stats.telemetry_sent,
            stats.images_sent,
            stats.images_skipped,
            stats.messages_dropped
        );
        if let Some(path) = &self.report {
            if let Err(e) =
                std::fs::write(path, serde_json::to_vec_pretty(&stats).unwrap_or_default())
            {
                tracing::warn!("cannot write {}: {e}", path.display());
            }
        }
    }
}

/// Takes thruster frames off a PULL socket: valid frames for one of `ids` are queued (at most
/// [`MAX_PENDING`]), the rest counted per reason in `stats` (the first few logged in full).
pub(crate) async fn intake(
    mut socket: zeromq::PullSocket,
    ids: Vec<u8>,
    pending: Arc<Mutex<Vec<ThrusterCommand>>>,
    stats: Arc<Mutex<AuvStats>>,
) {
    loop {
        let Ok(msg) = socket.recv().await else { return };
        let verdict = match msg.len() {
            1 => ThrusterCommand::parse(msg.get(0).map_or(&[][..], |b| &b[..]))
                .map_err(|e| e.to_string())
                .and_then(|c| {
                    if ids.contains(&c.id) {
                        Ok(c)
                    } else {
                        Err(format!("unknown AUV id {}", c.id))
                    }
                }),
            n => Err(format!("{n} parts, expected 1")),
        };
        let mut st = stats.lock().expect("AUV stats");
        st.frames_received += 1;
        let rejected = match verdict {
            Ok(c) => {
                let mut p = pending.lock().expect("AUV pending");
                if p.len() < MAX_PENDING {
                    p.push(c);
                    continue;
                }
                "queue full".to_owned()
            }
            Err(reason) => reason,
        };
        let total: u64 = st.frames_rejected.values().sum();
        if total < LOGGED {
            let bytes: Vec<String> = msg
                .iter()
                .map(|b| format!("{:02x?}", &b[..b.len().min(16)]))
                .collect();
            tracing::warn!(
                "AUV interface: thruster frame rejected ({rejected}): {}",
                bytes.join(" | ")
            );
        }
        *st.frames_rejected.entry(rejected).or_default() += 1;
    }
}

/// Sends telemetry and images on their PUB sockets.
async fn publish(
    mut telemetry: zeromq::PubSocket,
    mut images: zeromq::PubSocket,
    mut rx: tokio::sync::mpsc::Receiver<Outgoing>,
    stats: Arc<Mutex<AuvStats>>,
) {
    while let Some(m) = rx.recv().await {
        let sent = match m {
            Outgoing::Telemetry(id, payload) => {
                let msg = multipart(vec![vec![id], payload.to_vec()]);
                telemetry.send(msg).await.is_ok().then_some(true)
            }
            Outgoing::Images(id, front, bottom) => {
                let msg = multipart(vec![vec![id], front, bottom]);
                images.send(msg).await.is_ok().then_some(false)
            }
        };
        let mut st = stats.lock().expect("AUV stats");
        match sent {
            Some(true) => st.telemetry_sent += 1,
            Some(false) => st.images_sent += 1,
            None => st.messages_dropped += 1,
        }
    }
}

fn multipart(parts: Vec<Vec<u8>>) -> ZmqMessage {
    let mut parts = parts.into_iter();
    let mut msg = ZmqMessage::from(parts.next().unwrap_or_default());
    for p in parts {
        msg.push_back(p.into());
    }
    msg
}

/// The renderer thread: each snapshot's front and bottom images per AUV, as JPEGs.
fn render(
    terrain: &Terrain,
    cams: &Cameras,
    rx: &std::sync::mpsc::Receiver<Snapshot>,
    out: &tokio::sync::mpsc::Sender<Outgoing>,
    stats: &Mutex<AuvStats>,
) {
    while let Ok(snap) = rx.recv() {
        for (id, position, yaw) in snap {
            let front = jpeg(
                &camera::render(terrain, cams, &position, yaw, camera::View::Front),
                cams.jpeg_quality,
            );
            let bottom = jpeg(
                &camera::render(terrain, cams, &position, yaw, camera::View::Bottom),
                cams.jpeg_quality,
            );
            match (front, bottom) {
                (Ok(f), Ok(b)) => {
                    if out.try_send(Outgoing::Images(id, f, b)).is_err() {
                        stats.lock().expect("AUV stats").messages_dropped += 1;
                    }
                }
                (Err(e), _) | (_, Err(e)) => {
                    tracing::warn!("AUV interface: JPEG for AUV {id}: {e}")
                }
            }
        }
    }
}

/// An image as a JPEG.
pub fn jpeg(img: &camera::Image, quality: u8) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    let (w, h) = (u16::try_from(img.width)?, u16::try_from(img.height)?);
    jpeg_encoder::Encoder::new(&mut out, quality).encode(
        &img.rgb,
        w,
        h,
        jpeg_encoder::ColorType::Rgb,
    )?;
    Ok(out)
}
