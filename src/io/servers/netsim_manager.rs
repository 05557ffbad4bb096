//! The NETSIM manager's TCP server (default 127.0.0.1:61999): vehicle simulators send
//! `NETSIM|netsim.protobuf.NetSimManagerRequest|<base64>` lines and get
//! `NETSIM|netsim.protobuf.NetSimManagerResponse|<base64>` back, byte-compatible with the
//! reference manager.
//!
//! Stricter than the reference, and bounded: lines longer than 64 KiB are refused (and
//! skipped to the next newline); the preamble, the message name, the base64 and every proto2
//! `required` field are checked. A bad line is answered with
//! `NETSIM|netsim_cosim.Error|<base64 of a UTF-8 explanation>` and logged; the connection stays
//! open and other clients are unaffected. At most [`MAX_CLIENTS`] clients at once; one more
//! is told so and closed. Memory per client is bounded by the line limit and the read buffer.

use crate::config::{geo::LocalFrame, LoadedScenario};
use crate::model::netsim::{nav_to_pose, NavInbox, Rules};
use crate::wire::{
    netsim_line::{self, LineError, LineReader},
    proto::{decode_checked, netsim::NetSimManagerRequest, Named, SetPose},
};
use prost::Message;
use std::{
    net::{IpAddr, SocketAddr},
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed},
        Arc,
    },
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

pub const MAX_CLIENTS: usize = 256;
pub const ERROR_NAME: &str = "netsim_cosim.Error";
const RESPONSE_NAME: &str = "netsim.protobuf.NetSimManagerResponse";

/// What the server has seen.
#[derive(Debug, Default)]
pub struct Counters {
    pub connections: AtomicU64,
    pub refused_connections: AtomicU64,
    pub requests: AtomicU64,
    pub accepted: AtomicU64,
    pub rejected: AtomicU64,
    pub bad_lines: AtomicU64,
    clients: AtomicUsize,
}

/// A running manager.
pub struct Manager {
    pub local_addr: SocketAddr,
    pub counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Manager {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Binds `addr` and serves until the returned [`Manager`] is dropped.
pub async fn start(addr: SocketAddr, rules: Rules, inbox: NavInbox) -> std::io::Result<Manager> {
    let listener = TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let counters = Arc::new(Counters::default());
    let rules = Arc::new(rules);
    let c = counters.clone();
    let task = tokio::spawn(async move {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("netsim_manager: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            c.connections.fetch_add(1, Relaxed);
            let (rules, inbox, c) = (rules.clone(), inbox.clone(), c.clone());
            tokio::spawn(async move {
                if c.clients.fetch_add(1, Relaxed) >= MAX_CLIENTS {
                    c.refused_connections.fetch_add(1, Relaxed);
                    let mut stream = stream;
                    let line = error_line(&format!(
                        "too many clients (at most {MAX_CLIENTS}); closing"
                    ));
                    let _ = stream.write_all(line.as_bytes()).await;
                } else if let Err(e) = client(stream, peer, &rules, &inbox, &c).await {
                    tracing::debug!("netsim_manager: {peer}: {e}");
                }
                c.clients.fetch_sub(1, Relaxed);
            });
        }
    });
    tracing::info!("netsim_manager listening on {local_addr}");
    Ok(Manager {
        local_addr,
        counters,
        task,
    })
}

/// The scenario's manager, if it has one, and the fixes it accepted on their way to the
/// physics simulator: the physics coordinator takes them into each window's BEGIN
/// ([`NavSource::take`]), so they move the vehicles of any physics simulator.
pub struct NavSource {
    pub manager: Manager,
    inbox: NavInbox,
    frame: LocalFrame,
}

impl NavSource {
    /// Starts the scenario's manager; `None` if the scenario has none.
    pub async fn start(loaded: &LoadedScenario) -> anyhow::Result<Option<NavSource>> {
        let (Some(rules), Some(m)) = (
            Rules::new(&loaded.scenario),
            &loaded.scenario.netsim_manager,
        ) else {
            return Ok(None);
        };
        let inbox = NavInbox::default();
        let addr = SocketAddr::new(m.bind, m.port);
        let manager = start(addr, rules, inbox.clone()).await.map_err(|e| {
            super::cannot_listen(
                &format!("{}: netsim_manager", loaded.file.display()),
                addr,
                e,
            )
        })?;
        Ok(Some(NavSource {
            manager,
            inbox,
            frame: LocalFrame::new(&loaded.scenario.world.origin),
        }))
    }

    /// The fixes accepted since the last call, newest per vehicle, in vehicle order, as the
    /// poses a BEGIN imposes.
    pub fn take(&self) -> Vec<SetPose> {
        self.inbox
            .take()
            .iter()
            .map(|(vehicle, fix)| nav_to_pose(&self.frame, *vehicle, fix))
            .collect()
    }
}

fn error_line(text: &str) -> String {
    netsim_line::emit(ERROR_NAME, text.as_bytes())
}

async fn client(
    mut stream: TcpStream,
    peer: SocketAddr,
    rules: &Rules,
    inbox: &NavInbox,
    c: &Counters,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut reader = LineReader::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut replies = String::new();
    let mut bad_lines = 0u64;
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n], |line| {
            match answer(line, peer.ip(), rules, inbox, c) {
                Some(Ok(reply)) => replies.push_str(&reply),
                Some(Err(e)) => {
                    bad_lines += 1;
                    c.bad_lines.fetch_add(1, Relaxed);
                    if bad_lines <= 3 {
                        tracing::warn!("netsim_manager: {peer}: {e}");
                    }
                    replies.push_str(&error_line(&e));
                }
                None => {}
            }
        });
        if !replies.is_empty() {
            stream.write_all(replies.as_bytes()).await?;
            replies.clear();
        }
    }
    if bad_lines > 3 {
        tracing::warn!("netsim_manager: {peer}: {bad_lines} bad lines in all");
    }
    Ok(())
}

/// The reply to one line: `None` for an empty line, else a response or an error text.
fn answer(
    line: Result<&[u8], LineError>,
    from: IpAddr,
    rules: &Rules,
    inbox: &NavInbox,
    c: &Counters,
) -> Option<Result<String, String>> {
    let line = match line {
        Ok(l) if l.is_empty() || l == b"\r" => return None,
        Ok(l) => l,
        Err(e) => return Some(Err(e.to_string())),
    };
    Some((|| {
        let parsed = netsim_line::parse(line).map_err(|e| e.to_string())?;
        if parsed.name != NetSimManagerRequest::FULL_NAME {
            return Err(format!(
                "unexpected message {:?}; this manager takes {}",
                parsed.name,
                NetSimManagerRequest::FULL_NAME
            ));
        }
        let request: NetSimManagerRequest =
            decode_checked(&parsed.payload).map_err(|e| e.to_string())?;
        c.requests.fetch_add(1, Relaxed);
        let decision = rules.decide(&request, from);
        if decision.response.status == 1 {
            c.accepted.fetch_add(1, Relaxed);
        } else {
            c.rejected.fetch_add(1, Relaxed);
        }
        inbox.deliver(&decision);
        Ok(netsim_line::emit(
            RESPONSE_NAME,
            &decision.response.encode_to_vec(),
        ))
    })())
}
