//! The network coordinator's side of the capture agents: it listens on `network.agents.bind`,
//! admits the agents the scenario names (each proving it holds the run's secret) and refuses
//! every other peer (logged; it gets nothing), waits for all of them before window 0, and in
//! every window opens the window on each agent, applies each agent's report to the
//! [`LiveNetwork`] and hands each agent the releases for its vehicles. An agent that does not
//! report within `network.agents.timeout_ms`, closes its connection or says it failed ends the
//! run with an error naming it, its address, the window and what was missing.

use super::conn::{Conn, RecvError};
use crate::config::LoadedScenario;
use crate::io::programs::SETTLE_LIMIT;
use crate::io::traffic::{AgentNews, LiveNetwork};
use crate::output::schema::ProgramRecord;
use crate::wire::proto::agent::{from_agent, to_agent, Finish, Open, Releases};
use anyhow::{bail, Context};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Handshakes under way at once, at most (more connections wait in the kernel's backlog).
const MAX_PENDING: usize = 16;

/// The agent's command line for a scenario (what `cosim check` prints and a run logs): the
/// coordinator's address is `network.agents.bind`'s, a placeholder where that is unspecified.
pub fn command_line(loaded: &LoadedScenario, agent: &str, key: &str) -> String {
    let bind = &loaded.scenario.network.agents.bind;
    let coordinator = match bind.parse::<std::net::SocketAddr>() {
        Ok(a) if a.ip().is_unspecified() => format!("<ADDRESS-OF-THIS-MACHINE>:{}", a.port()),
        _ => bind.clone(),
    };
    format!(
        "cosim agent {} --name {agent} --coordinator {coordinator} --key {key}",
        loaded.file.display()
    )
}

/// One joined agent.
struct Joined {
    name: String,
    /// Its index among the live network's agents.
    index: usize,
    conn: Conn,
    /// Its vehicles' names.
    vehicles: Vec<String>,
}

/// The capture agents of a run.
pub struct AgentHub {
    agents: Vec<Joined>,
    timeout: Duration,
    /// Where the agents' program logs go (`<out>/programs`).
    logs: Option<PathBuf>,
    /// Keeps refusing whoever else connects, until dropped.
    listener: JoinHandle<()>,
}

impl Joined {
    /// Applies what the agent reported to `live`; an error names the agent.
    fn apply(&self, live: &LiveNetwork, news: &AgentNews<'_>) -> anyhow::Result<()> {
        live.apply_report(self.index, news)
            .map_err(|e| anyhow::anyhow!("agent {} ({}) reported {e}", self.name, self.conn.peer))
    }
}

impl Drop for AgentHub {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl AgentHub {
    /// For a live run whose vehicles name agents (`vehicles[].host`): listens, logs each
    /// agent's command line and waits up to `network.agents.join_timeout_s` for all of them.
    /// `None` without such vehicles.
    pub async fn start(
        loaded: &LoadedScenario,
        live: &LiveNetwork,
        out_dir: Option<&Path>,
    ) -> anyhow::Result<Option<AgentHub>> {
        let names = live.agents().to_vec();
        if names.is_empty() {
            return Ok(None);
        }
        let s = &loaded.scenario;
        let cfg = &s.network.agents;
        let (secret, key_path) = super::key::run_secret(loaded, out_dir)?;
        let digest = super::key::scenario_digest(loaded)?;
        let listener = TcpListener::bind(&cfg.bind)
            .await
            .with_context(|| format!("network.agents.bind: cannot listen on {}", cfg.bind))?;
        for name in &names {
            tracing::info!(
                "waiting for agent {name}: on its machine run `{}`",
                command_line(loaded, name, &key_path.display().to_string())
            );
        }
        let vehicles = s.vehicles.len();
        let agent_of = live.agent_of();
        let vehicles_of = |a: usize| -> Vec<String> {
            (s.vehicles.iter().zip(&agent_of))
                .filter(|(_, o)| **o == Some(a))
                .map(|(v, _)| v.name.clone())
                .collect()
        };
        let joined: Arc<Mutex<HashMap<String, Conn>>> = Arc::default();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(names.len().max(1));
        let secret = Arc::new(secret);
        let wanted = Arc::new(names.clone());
        let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let listener = {
            let (joined, started) = (joined.clone(), started.clone());
            tokio::spawn(async move {
                let pending = Arc::new(tokio::sync::Semaphore::new(MAX_PENDING));
                loop {
                    let Ok(permit) = pending.clone().acquire_owned().await else {
                        return;
                    };
                    let (stream, peer) = match listener.accept().await {
                        Ok(x) => x,
                        Err(e) => {
                            tracing::warn!("agents: accept failed: {e}");
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        }
                    };
                    let (joined, secret, wanted, tx, started) = (
                        joined.clone(),
                        secret.clone(),
                        wanted.clone(),
                        tx.clone(),
                        started.clone(),
                    );
                    tokio::spawn(async move {
                        let _permit = permit;
                        let admit = |name: &str| -> Result<(), String> {
                            if started.load(std::sync::atomic::Ordering::SeqCst) {
                                return Err(format!("the run has started (agent {name:?})"));
                            }
                            if !wanted.iter().any(|w| w == name) {
                                return Err(format!(
                                    "unknown agent {name:?} (this run's: {})",
                                    wanted.join(", ")
                                ));
                            }
                            if joined
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .contains_key(name)
                            {
                                return Err(format!("agent {name:?} already joined"));
                            }
                            Ok(())
                        };
                        match Conn::accept(stream, &secret, digest, vehicles, admit).await {
                            Ok((name, conn)) => {
                                let mut j = joined.lock().unwrap_or_else(|p| p.into_inner());
                                if started.load(std::sync::atomic::Ordering::SeqCst) {
                                    tracing::warn!("refused a peer at {peer}: the run has started (agent {name:?})");
                                    return;
                                }
                                if j.contains_key(&name) {
                                    tracing::warn!(
                                        "refused a peer at {peer}: agent {name:?} already joined"
                                    );
                                    return;
                                }
                                tracing::info!("agent {name} joined from {peer}");
                                j.insert(name, conn);
                                let _ = tx.try_send(());
                            }
                            Err(e) => tracing::warn!("refused a peer at {peer}: {e:#}"),
                        }
                    });
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs_f64(cfg.join_timeout_s);
        loop {
            let missing: Vec<&String> = {
                let j = joined.lock().unwrap_or_else(|p| p.into_inner());
                names.iter().filter(|n| !j.contains_key(*n)).collect()
            };
            if missing.is_empty() {
                break;
            }
            if tokio::time::timeout_at(deadline, rx.recv()).await.is_err() {
                listener.abort();
                bail!(
                    "agent{} {} never joined within {} s (listening on {}; on {} run the command line logged above)",
                    if missing.len() > 1 { "s" } else { "" },
                    join_names(&missing),
                    cfg.join_timeout_s,
                    cfg.bind,
                    if missing.len() > 1 { "their machines" } else { "its machine" },
                );
            }
        }
        started.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut conns = std::mem::take(&mut *joined.lock().unwrap_or_else(|p| p.into_inner()));
        let mut agents = Vec::new();
        for (a, name) in names.iter().enumerate() {
            let Some(mut conn) = conns.remove(name) else {
                bail!("agent {name} left before the run started");
            };
            conn.send_to_agent(to_agent::Body::Welcome(Default::default()))
                .await
                .with_context(|| format!("agent {name} ({})", conn.peer))?;
            agents.push(Joined {
                name: name.clone(),
                index: a,
                conn,
                vehicles: vehicles_of(a),
            });
        }
        let timeout = Duration::from_millis(cfg.timeout_ms);
        settled(&mut agents, SETTLE_LIMIT + timeout).await?;
        Ok(Some(AgentHub {
            agents,
            timeout,
            logs: out_dir.map(|d| d.join("programs")),
            listener,
        }))
    }

    /// Opens window `k` on every agent and applies their reports to `live` (before its BEGIN).
    pub async fn open(
        &mut self,
        k: u32,
        opened_unix_ns: u64,
        live: &LiveNetwork,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + self.timeout;
        let open = to_agent::Body::Open(Open {
            window: k,
            opened_unix_ns,
        });
        for a in &mut self.agents {
            send(a, open.clone(), deadline, k).await?;
        }
        let timeout = self.timeout;
        for (a, r) in answers(&mut self.agents, deadline).await {
            let what = || -> String {
                let held = live.held_by(a.index);
                format!(
                    "the captures of {}{}",
                    a.vehicles.join(", "),
                    if held > 0 {
                        format!(" and the fate of {held} copies it was handed")
                    } else {
                        String::new()
                    }
                )
            };
            match r {
                Err(_) => bail!(
                    "agent {} ({}) sent no report for window {k} within {} ms: missing {}",
                    a.name,
                    a.conn.peer,
                    timeout.as_millis(),
                    what()
                ),
                Ok(Err(e)) => bail!(failed(a, k, e, &what())),
                Ok(Ok(from_agent::Body::Report(r))) => {
                    if r.window != k {
                        bail!(
                            "agent {} ({}) reported window {} when window {k} was open",
                            a.name,
                            a.conn.peer,
                            r.window
                        );
                    }
                    if r.overflow > 0 {
                        tracing::warn!(
                            "agent {}: {} packets its vehicles sent were dropped there (its queue full)",
                            a.name,
                            r.overflow
                        );
                    }
                    a.apply(live, &AgentNews::report(&r))?;
                }
                Ok(Ok(from_agent::Body::Failed(f))) => {
                    bail!(
                        "agent {} ({}) failed in window {k}: {}",
                        a.name,
                        a.conn.peer,
                        f.reason
                    )
                }
                Ok(Ok(other)) => bail!(
                    "agent {} ({}) answered window {k}'s opening with {}",
                    a.name,
                    a.conn.peer,
                    body_name(&other)
                ),
            }
        }
        Ok(())
    }

    /// Hands every agent the releases of window `k`'s END for its vehicles.
    pub async fn release(&mut self, k: u32, live: &LiveNetwork) -> anyhow::Result<()> {
        let deadline = Instant::now() + self.timeout;
        for a in &mut self.agents {
            let releases = live.take_releases(a.index);
            if releases.is_empty() {
                continue;
            }
            send(
                a,
                to_agent::Body::Releases(Releases {
                    window: k,
                    releases,
                }),
                deadline,
                k,
            )
            .await?;
        }
        Ok(())
    }

    /// The run ended at `end_ns`: every agent stops its programs and says what became of the
    /// copies it held; their captures since the last report are applied, their program logs
    /// written to `<out>/programs/`. Returns the agents' programs' records.
    pub async fn finish(
        &mut self,
        end_ns: u64,
        live: &LiveNetwork,
    ) -> anyhow::Result<Vec<ProgramRecord>> {
        // The agents stop their programs first, which may take their stop timeouts.
        let deadline = Instant::now() + self.timeout + Duration::from_secs(30);
        for a in &mut self.agents {
            send(
                a,
                to_agent::Body::Finish(Finish { end_ns }),
                deadline,
                u32::MAX,
            )
            .await?;
        }
        let mut records = Vec::new();
        let logs = self.logs.clone();
        for a in &mut self.agents {
            let f = loop {
                let r = tokio::time::timeout_at(deadline, a.conn.recv_from_agent()).await;
                break match r {
                    Err(_) => bail!(
                        "agent {} ({}) did not answer the end of the run within {} s",
                        a.name,
                        a.conn.peer,
                        (self.timeout + Duration::from_secs(30)).as_secs()
                    ),
                    Ok(Err(e)) => bail!(failed(a, u32::MAX, e, "the fate of the copies it held")),
                    Ok(Ok(from_agent::Body::Finished(f))) => f,
                    // The report of a window the run abandoned (SIGINT while it was open).
                    Ok(Ok(from_agent::Body::Report(r))) => {
                        a.apply(live, &AgentNews::report(&r))?;
                        continue;
                    }
                    Ok(Ok(from_agent::Body::Failed(f))) => {
                        bail!(
                            "agent {} ({}) failed at the end: {}",
                            a.name,
                            a.conn.peer,
                            f.reason
                        )
                    }
                    Ok(Ok(other)) => bail!(
                        "agent {} ({}) answered the end of the run with {}",
                        a.name,
                        a.conn.peer,
                        body_name(&other)
                    ),
                };
            };
            a.apply(live, &AgentNews::finished(&f))?;
            if let Some(dir) = &logs {
                std::fs::create_dir_all(dir)?;
                for o in &f.output {
                    let name = format!(
                        "{}.{}.log",
                        o.program,
                        if o.stderr { "stderr" } else { "stdout" }
                    );
                    std::fs::write(dir.join(&name), &o.data)
                        .with_context(|| format!("cannot write {}", dir.join(&name).display()))?;
                }
            }
            for p in &f.programs {
                match serde_json::from_str::<ProgramRecord>(p) {
                    Ok(r) => records.push(r),
                    Err(e) => {
                        tracing::warn!("agent {}: a program record that does not read: {e}", a.name)
                    }
                }
            }
        }
        Ok(records)
    }

    /// Tells every agent the run failed (best effort: it stops and cleans up either way once
    /// its connection closes).
    pub async fn abort(&mut self, reason: &str) {
        let deadline = Instant::now() + Duration::from_millis(200);
        for a in &mut self.agents {
            let abort = to_agent::Body::Abort(crate::wire::proto::agent::Abort {
                reason: reason.to_owned(),
            });
            let _ = tokio::time::timeout_at(deadline, a.conn.send_to_agent(abort)).await;
        }
    }
}

async fn send(
    a: &mut Joined,
    body: to_agent::Body,
    deadline: Instant,
    k: u32,
) -> anyhow::Result<()> {
    match tokio::time::timeout_at(deadline, a.conn.send_to_agent(body)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => bail!("agent {} ({}): cannot send window {k}'s messages: {e}", a.name, a.conn.peer),
        Err(_) => bail!(
            "agent {} ({}) took none of window {k}'s messages within the timeout (its connection stalled)",
            a.name,
            a.conn.peer
        ),
    }
}

fn failed(a: &Joined, k: u32, e: RecvError, missing: &str) -> String {
    let when = if k == u32::MAX {
        "at the end of the run".to_owned()
    } else {
        format!("while window {k} waited for its report")
    };
    match e {
        RecvError::Closed | RecvError::Io(_) => format!(
            "agent {} ({}) disconnected {when} ({e}): missing {missing}",
            a.name, a.conn.peer
        ),
        e => format!("agent {} ({}) {e} {when}", a.name, a.conn.peer),
    }
}

fn body_name(b: &from_agent::Body) -> &'static str {
    match b {
        from_agent::Body::Report(_) => "a report",
        from_agent::Body::Finished(_) => "its end",
        from_agent::Body::Failed(_) => "a failure",
        from_agent::Body::Settled(_) => "its programs settled",
    }
}

/// Every agent's next message, received side by side until `deadline` (`Err`: none by then).
async fn answers(
    agents: &mut [Joined],
    deadline: Instant,
) -> Vec<(
    &Joined,
    Result<Result<from_agent::Body, RecvError>, tokio::time::error::Elapsed>,
)> {
    futures_util::future::join_all(agents.iter_mut().map(|a| async move {
        let r = tokio::time::timeout_at(deadline, a.conn.recv_from_agent()).await;
        (&*a, r)
    }))
    .await
}

/// Waits (at most `wait`) for every agent to say that the programs due at the start on its
/// machine settled, so that the run anchors window 0 after them, as after its own.
async fn settled(agents: &mut [Joined], wait: Duration) -> anyhow::Result<()> {
    for (a, r) in answers(agents, Instant::now() + wait).await {
        let who = format!("agent {} ({})", a.name, a.conn.peer);
        match r {
            Err(_) => bail!(
                "{who} did not say its programs started within {} ms",
                wait.as_millis()
            ),
            Ok(Err(e)) => bail!("{who} {e} before window 0"),
            Ok(Ok(from_agent::Body::Settled(s))) if s.settled => {
                tracing::debug!("{who}: its programs settled in {} ms", s.waited_ms)
            }
            Ok(Ok(from_agent::Body::Settled(s))) => tracing::warn!(
                "{who}: its programs were still busy {} ms after their start: window 0 opens \
                 anyway, and its first windows may be late",
                s.waited_ms
            ),
            Ok(Ok(from_agent::Body::Failed(f))) => {
                bail!("{who} failed before window 0: {}", f.reason)
            }
            Ok(Ok(other)) => bail!("{who} answered the run's start with {}", body_name(&other)),
        }
    }
    Ok(())
}

fn join_names(names: &[&String]) -> String {
    names
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
