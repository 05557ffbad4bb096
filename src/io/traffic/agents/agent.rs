//! The capture agent (`cosim agent`): owns the vehicles of one machine (`vehicles[].host`) —
//! their namespaces and TUN interfaces ([`Ports`]) and their programs — and joins the run's
//! lockstep through the network coordinator. On each window's opening it opens the window on
//! its own clock at the message's receipt and reports what its vehicles sent since, stamped on
//! that clock; it writes each release at its sim time on the same clock. No clock
//! synchronisation between machines is needed: the agent's windows start later than the
//! coordinator's by the opening's one-way transit, so its captures are stamped early and its
//! releases written late by that much, never early. The transit it takes is the least seen in
//! the last second ([`OpeningClock`]): an opening that arrives late (the coordinator catching up
//! after a late window) opens its window where the coordinator's schedule put it, not at its
//! arrival, so that lateness does not add up from window to window. With `synchronized_clock`
//! (PTP, chrony) it opens each window at the wall time the physics coordinator opened it
//! instead.
//!
//! Nothing outlives it: a normal end, an error, the coordinator gone, SIGINT and SIGTERM stop
//! its programs and remove its namespaces; after a SIGKILL its guardian (a child waiting for
//! the agent's end on a pipe) kills what runs in them and removes them.

use super::conn::Conn;
use super::key::scenario_digest;
use crate::config::LoadedScenario;
use crate::io::os::netns;
use crate::io::programs::{Programs, SETTLE_LIMIT};
use crate::io::traffic::vehicle_tuns::{Ports, PortsConfig, Sink};
use crate::net::addr::AddressBook;
use crate::net::traffic::{Delivery, Frame, Stamp};
use crate::wire::agent::{copy_id, MAX_FRAME_BYTES};
use crate::wire::proto::agent::{
    from_agent, to_agent, Capture, Failed, Finished, Output, Release, Report, Settled,
};
use crate::wire::secure::Secret;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Bytes of captured packets one report carries at most (what does not fit waits for the
/// next window unless the queue is full too).
const MAX_REPORT_BYTES: usize = MAX_FRAME_BYTES / 2;
/// Bytes of each program log sent back at the end, at most (the rest stays on this machine).
const MAX_LOG_BYTES: usize = 4 << 20;

/// What the agent's vehicles sent and what became of the releases, until the next report.
struct Outbox {
    captures: Vec<Capture>,
    bytes: usize,
    /// Packets dropped because `captures` was full, since the last report.
    overflow: u64,
    /// At most this many captures between two reports.
    limit: usize,
    written: Vec<u64>,
    /// Per id in `written`: [`crate::net::ledger::Emulation::release_late_ns`].
    written_late_ns: Vec<u64>,
    failed: Vec<u64>,
}

impl Sink for Outbox {
    fn capture(&mut self, node: usize, frame: Frame, stamp: Stamp) {
        let t_ns = stamp.t_ns;
        let len = frame.ip().len();
        if self.captures.len() >= self.limit || self.bytes + len > MAX_REPORT_BYTES {
            self.overflow += 1;
            return;
        }
        self.bytes += len;
        self.captures.push(Capture {
            vehicle: node as u32,
            t_ns,
            packet: frame.ip_bytes(),
        });
    }

    fn delivered(&mut self, d: &Delivery, ok: bool) {
        if ok {
            self.written.push(copy_id(d.pkt_id, d.node));
            self.written_late_ns
                .push(d.emulation.map_or(0, |e| e.release_late_ns));
        } else {
            self.failed.push(copy_id(d.pkt_id, d.node));
        }
    }
}

impl Outbox {
    fn report(&mut self, window: u32) -> Report {
        self.bytes = 0;
        Report {
            window,
            captures: std::mem::take(&mut self.captures),
            written: std::mem::take(&mut self.written),
            written_late_ns: std::mem::take(&mut self.written_late_ns),
            failed: std::mem::take(&mut self.failed),
            overflow: std::mem::take(&mut self.overflow),
        }
    }
}

/// How an agent is started (`cosim agent`).
pub struct AgentConfig<'a> {
    pub loaded: &'a LoadedScenario,
    /// Its name: the `host` its vehicles name.
    pub name: &'a str,
    /// The network coordinator's `ADDRESS:PORT` (its `network.agents.bind`).
    pub coordinator: &'a str,
    pub secret: Secret,
    /// Where its programs' logs go.
    pub out: PathBuf,
    /// Open each window at the wall time the physics coordinator opened it (this machine's
    /// clock synchronised with the coordinator's), not at the opening's receipt.
    pub synchronized_clock: bool,
}

/// Runs the agent until the run ends (Ok), fails, or `stop` resolves (SIGINT/SIGTERM: an
/// error saying so); cleans up in every case.
pub async fn run(
    cfg: AgentConfig<'_>,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let s = &cfg.loaded.scenario;
    let here: Vec<bool> = (s.vehicles.iter())
        .map(|v| v.host.as_deref() == Some(cfg.name))
        .collect();
    if !here.contains(&true) {
        bail!(
            "{}: no vehicle lives on agent {:?} (vehicles[].host)",
            cfg.loaded.file.display(),
            cfg.name
        );
    }
    // Its capture and release threads, as the network coordinator's.
    crate::io::os::timer::prioritize(s.nice, s.realtime_priority);
    let digest = scenario_digest(cfg.loaded)?;
    let schedule = cfg.loaded.schedule();
    let book = AddressBook::new(&s.vehicles);
    let mine = here.iter().filter(|h| **h).count();
    let ports = Ports::open(
        PortsConfig {
            vehicles: &s.vehicles,
            addresses: &book.addresses,
            here: here.clone(),
            clock: crate::clock::WindowClock::new(schedule, s.real_time_factor),
            release_limit: s.network.queue_limit.saturating_mul(mine),
            split: true,
            pcaps: Vec::new(),
            env: s.vehicles_ros_env(),
        },
        Outbox {
            captures: Vec::new(),
            bytes: 0,
            overflow: 0,
            limit: s.network.queue_limit.saturating_mul(mine),
            written: Vec::new(),
            written_late_ns: Vec::new(),
            failed: Vec::new(),
        },
    )?;
    let own: Vec<String> = (s.vehicles.iter().zip(&here))
        .filter(|(v, h)| **h && v.attach.is_none())
        .map(|(v, _)| netns::ns_name(&v.name))
        .collect();
    let _guardian = guardian(&own)?;
    let mut programs = Programs::for_host(cfg.loaded, Some(&cfg.out), Some(cfg.name))?;
    tracing::info!(
        agent = cfg.name,
        vehicles = mine,
        "namespaces ready; joining the network coordinator at {}",
        cfg.coordinator
    );
    let mut window = None;
    let result = tokio::select! {
        r = serve(&cfg, digest, &ports, &mut programs, &mut window) => r,
        _ = stop => Err(anyhow::anyhow!("stopped by a signal")),
    };
    ports.stop();
    if let Some(p) = &mut programs {
        let end = window.map_or(0, |k: u32| schedule.start_ns(k.saturating_add(1)));
        p.stop_all(end).await;
    }
    ports.close();
    result
}

/// The agent's part of the run, from joining to the end.
async fn serve(
    cfg: &AgentConfig<'_>,
    digest: [u8; 32],
    ports: &Ports<Outbox>,
    programs: &mut Option<Programs>,
    window: &mut Option<u32>,
) -> anyhow::Result<()> {
    let s = &cfg.loaded.scenario;
    let schedule = cfg.loaded.schedule();
    let join = Duration::from_secs_f64(s.network.agents.join_timeout_s);
    let mut conn = Conn::connect(
        cfg.coordinator,
        cfg.name,
        &cfg.secret,
        digest,
        s.vehicles.len(),
        tokio::time::Instant::now() + join,
    )
    .await?;
    let peer = conn.peer;
    tracing::info!("agent {}: joined the run at {peer}", cfg.name);
    // Until window 0 the run may wait for other agents; then a window's wall time and the
    // coordinator's own timeout bound the silence.
    let window_wall = Duration::from_secs_f64(schedule.window_s() / s.real_time_factor.max(1e-9));
    let silence = Duration::from_millis(s.network.agents.timeout_ms) * 2 + window_wall;
    // The window whose report was sent before its opening arrived (see `early_report`).
    let mut reported: Option<u32> = None;
    let mut openings = OpeningClock::default();
    // The early report's wake-up, on a thread of its own: the releases that arrive meanwhile
    // are scheduled as they come, not after it.
    let alarm = crate::io::os::timer::Alarm::new("cosim-report")?;
    loop {
        let wait = if window.is_none() {
            join + silence
        } else {
            silence
        };
        let early = early_report(ports, *window, reported, window_wall);
        alarm.set(early);
        let received = tokio::select! {
            r = tokio::time::timeout(wait, conn.recv_to_agent()) => r,
            _ = alarm.rung(), if early.is_some() => {
                if early.is_some_and(|e| Instant::now() < e) {
                    // An earlier instant's ring.
                    continue;
                }
                let next = window.map_or(0, |k| k.saturating_add(1));
                let report = ports.lock().sink.report(next);
                reported = Some(next);
                conn.send_from_agent(from_agent::Body::Report(report))
                    .await
                    .with_context(|| format!("network coordinator at {peer}"))?;
                continue;
            }
        };
        let msg = match received {
            Err(_) => bail!(
                "no word from the network coordinator at {peer} for {} ms{}",
                wait.as_millis(),
                after(*window)
            ),
            Ok(Err(e)) => bail!("the network coordinator at {peer} {e}{}", after(*window)),
            Ok(Ok(m)) => m,
        };
        match msg {
            // Every agent joined and the run is about to start: the programs due at the start
            // now, not inside window 0, where they would make this agent's first report late,
            // and waited for until they settle, which the coordinator waits for before it
            // anchors window 0 (as for its own); never before every agent joined, since a run
            // that never starts runs no program.
            to_agent::Body::Welcome(_) => {
                let (waited, settled) = match programs.as_mut() {
                    Some(p) => {
                        p.tick(0);
                        tokio::task::block_in_place(|| p.settle(SETTLE_LIMIT))
                    }
                    None => (Duration::ZERO, true),
                };
                let settled = Settled {
                    waited_ms: u32::try_from(waited.as_millis()).unwrap_or(u32::MAX),
                    settled,
                };
                conn.send_from_agent(from_agent::Body::Settled(settled))
                    .await
                    .with_context(|| format!("network coordinator at {peer}"))?;
            }
            to_agent::Body::Open(o) => {
                let report = {
                    let mut st = ports.lock();
                    let now = Instant::now();
                    let anchor = match (cfg.synchronized_clock, o.opened_unix_ns) {
                        (true, ns) if ns > 0 => crate::io::os::timer::instant_of_unix_ns(ns),
                        (false, ns) if ns > 0 => crate::io::os::timer::instant_of_unix_ns(
                            openings.anchor(ns, crate::io::os::timer::unix_ns_of(now)),
                        ),
                        _ => None,
                    };
                    st.clock.open(o.window, anchor.map_or(now, |a| a.min(now)));
                    // Sent already when the window before it ended here.
                    (reported != Some(o.window)).then(|| st.sink.report(o.window))
                };
                *window = Some(o.window);
                if let Some(p) = programs.as_mut() {
                    p.tick(schedule.start_ns(o.window));
                }
                if let Some(report) = report {
                    conn.send_from_agent(from_agent::Body::Report(report))
                        .await
                        .with_context(|| format!("network coordinator at {peer}"))?;
                }
            }
            to_agent::Body::Releases(r) => {
                if let Err(e) = schedule_releases(ports, r.window, r.releases) {
                    let reason = format!("agent {}: {e}", cfg.name);
                    let _ = conn
                        .send_from_agent(from_agent::Body::Failed(Failed {
                            reason: reason.clone(),
                        }))
                        .await;
                    bail!(reason);
                }
            }
            to_agent::Body::Finish(f) => {
                ports.stop();
                let finished = finish(ports, programs, f.end_ns, &cfg.out).await;
                conn.send_from_agent(from_agent::Body::Finished(finished))
                    .await
                    .with_context(|| format!("network coordinator at {peer}"))?;
                tracing::info!("agent {}: the run ended", cfg.name);
                return Ok(());
            }
            to_agent::Body::Abort(a) => bail!("the run failed: {}", a.reason),
        }
    }
}

/// When to report window `window + 1` before its opening arrives: a twentieth of a window after
/// the open window's wall end on this machine's clock, when the captures the network
/// coordinator describes in the next window's BEGIN (those stamped before its start) are in;
/// `None` before window 0 and once that report went. Reporting then, not on the opening's
/// arrival, saves the coordinator half a round trip per window; what is read after it (a
/// reader behind) goes in the next report, as a capture read after an opening always did.
fn early_report(
    ports: &Ports<Outbox>,
    window: Option<u32>,
    reported: Option<u32>,
    window_wall: Duration,
) -> Option<Instant> {
    let k = window?;
    if reported == Some(k.saturating_add(1)) {
        return None;
    }
    let (open, _, wall) = ports.lock().clock.open?;
    (open == k).then(|| wall + window_wall + window_wall / 20)
}

/// How long [`OpeningClock`] remembers an opening's transit: clocks that drift apart by tens of
/// parts per million move the offset by tens of microseconds in that time.
const TRANSIT_MEMORY_NS: u64 = 1_000_000_000;

/// Where a window opens on this machine's clock without synchronized clocks: at the
/// coordinator's opening (`opened_unix_ns`, on its clock) plus the least difference between an
/// opening's arrival here and its time there seen over the last [`TRANSIT_MEMORY_NS`] of
/// openings — the clocks' offset plus the fastest transit. Never after the opening's arrival,
/// and never before the coordinator's opening (a transit is never negative), so captures are
/// stamped early and releases written late by at most the transit, as at the arrival; but an
/// opening that arrives late opens its window where the coordinator's schedule put it.
#[derive(Default)]
struct OpeningClock {
    /// (coordinator's opening, arrival − opening), the differences increasing from the front:
    /// the front holds the least of the memory.
    seen: std::collections::VecDeque<(u64, i128)>,
}

impl OpeningClock {
    /// The opening at `opened_unix_ns` (the coordinator's clock) arrived at `arrival_unix_ns`
    /// (this one's): where its window opens on this clock, as Unix ns.
    fn anchor(&mut self, opened_unix_ns: u64, arrival_unix_ns: u64) -> u64 {
        let d = i128::from(arrival_unix_ns) - i128::from(opened_unix_ns);
        while self.seen.back().is_some_and(|&(_, b)| b >= d) {
            self.seen.pop_back();
        }
        self.seen.push_back((opened_unix_ns, d));
        let oldest = opened_unix_ns.saturating_sub(TRANSIT_MEMORY_NS);
        while self.seen.front().is_some_and(|&(t, _)| t < oldest) {
            self.seen.pop_front();
        }
        let least = self.seen.front().map_or(d, |&(_, f)| f);
        (i128::from(opened_unix_ns) + least).clamp(0, i128::from(u64::MAX)) as u64
    }
}

fn after(window: Option<u32>) -> String {
    match window {
        Some(k) => format!(" (after window {k})"),
        None => " (before window 0)".to_owned(),
    }
}

/// Schedules window `k`'s releases on this machine's clock; one the agent cannot hold (its
/// queue full) is reported as failed. A release to a vehicle not on this machine is an error.
fn schedule_releases(ports: &Ports<Outbox>, k: u32, releases: Vec<Release>) -> anyhow::Result<()> {
    let mut st = ports.lock();
    for r in releases {
        let d = Delivery {
            pkt_id: (r.id >> 32) as u32,
            src: 0,
            captured_ns: 0,
            node: r.vehicle as usize,
            t_ns: r.t_ns,
            // A view into the message (no copy), which it keeps until written in this window.
            frame: Frame::plain(r.packet),
            corrupted: r.corrupted,
            emulation: Some(Default::default()),
            read: None,
        };
        if copy_id(d.pkt_id, d.node) != r.id {
            bail!(
                "release {:#x} names vehicle {} in its id and {} in its field",
                r.id,
                r.id & 0xffff_ffff,
                r.vehicle
            );
        }
        if let Err(e) = st.schedule(k, d) {
            let (d, _) = *e;
            st.sink.failed.push(copy_id(d.pkt_id, d.node));
        }
    }
    drop(st);
    ports.notify();
    Ok(())
}

/// The end of the run: what became of the releases (those still scheduled were not due), the
/// captures since the last report, the programs stopped, their records and logs.
async fn finish(
    ports: &Ports<Outbox>,
    programs: &mut Option<Programs>,
    end_ns: u64,
    out: &Path,
) -> Finished {
    let (unwritten, report) = {
        let mut st = ports.lock();
        let unwritten: Vec<u64> = st
            .take_scheduled()
            .iter()
            .map(|d| copy_id(d.pkt_id, d.node))
            .collect();
        (unwritten, st.sink.report(u32::MAX))
    };
    let mut finished = Finished {
        written: report.written,
        written_late_ns: report.written_late_ns,
        failed: report.failed,
        unwritten,
        output: Vec::new(),
        programs: Vec::new(),
        overflow: report.overflow,
        captures: report.captures,
    };
    if let Some(p) = programs.take().as_mut() {
        let records = p.stop_all(end_ns).await;
        for r in &records {
            for stderr in [false, true] {
                let file = out.join("programs").join(format!(
                    "{}.{}.log",
                    r.name,
                    if stderr { "stderr" } else { "stdout" }
                ));
                if let Some(data) = read_log(&file) {
                    finished.output.push(Output {
                        program: r.name.clone(),
                        stderr,
                        data,
                    });
                }
            }
            if let Ok(json) = serde_json::to_string(r) {
                finished.programs.push(json);
            }
        }
    }
    finished
}

/// A program's log, its first [`MAX_LOG_BYTES`] and a line saying where the rest is.
fn read_log(file: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(file).ok()?;
    let len = f.metadata().ok()?.len();
    let mut data = Vec::new();
    f.take(MAX_LOG_BYTES as u64).read_to_end(&mut data).ok()?;
    if len > MAX_LOG_BYTES as u64 {
        data.extend_from_slice(
            format!(
                "\n[{} more bytes in {} on the agent's machine]\n",
                len - MAX_LOG_BYTES as u64,
                file.display()
            )
            .as_bytes(),
        );
    }
    Some(data)
}

/// Starts the guardian of `namespaces` (`cosim agent-guard`): it waits for this process to
/// end — its stdin, a pipe only this process holds, reaches its end — and then kills what
/// still runs in them and removes them. In a process group of its own, so a terminal's
/// Ctrl-C reaches only the agent. When the agent ends normally there is nothing left to do.
fn guardian(namespaces: &[String]) -> anyhow::Result<Option<Child>> {
    use std::os::unix::process::CommandExt;
    if namespaces.is_empty() || crate::io::os::userns::inside() {
        // Inside its own user namespace everything goes with the agent already.
        return Ok(None);
    }
    let exe = std::env::current_exe().context("cannot find this program to start its guardian")?;
    let child = std::process::Command::new(exe)
        .arg("agent-guard")
        .arg("--owner")
        .arg(std::process::id().to_string())
        .args(namespaces)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .context("cannot start the agent's guardian")?;
    Ok(Some(child))
}

/// The guardian's work (`cosim agent-guard`): waits until stdin ends (its agent is gone), then
/// for each of `namespaces` still owned by `owner`: kills the processes in it and removes it.
pub fn guard(owner: u32, namespaces: &[String]) {
    use std::io::Read;
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    for ns in namespaces {
        if netns::owner_pid(ns) != Some(owner) {
            continue;
        }
        netns::kill_inside(ns);
        netns::remove_owned(ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_opens_at_the_coordinators_opening_plus_the_least_recent_transit() {
        let mut c = OpeningClock::default();
        // This clock is 5 s ahead of the coordinator's; transits of 300, 200 and 900 µs.
        let ahead = 5_000_000_000u64;
        let ms = 1_000_000u64;
        assert_eq!(
            c.anchor(10 * ms, 10 * ms + ahead + 300_000),
            10 * ms + ahead + 300_000
        );
        assert_eq!(
            c.anchor(11 * ms, 11 * ms + ahead + 200_000),
            11 * ms + ahead + 200_000
        );
        // A late arrival (the coordinator catching up): its window opens where the schedule
        // put it, 200 µs after the coordinator's opening, not 900 µs.
        assert_eq!(
            c.anchor(12 * ms, 12 * ms + ahead + 900_000),
            12 * ms + ahead + 200_000
        );
        // A second on, the 200 µs transit is forgotten: only what the last second saw counts.
        let later = 12 * ms + TRANSIT_MEMORY_NS + 1;
        assert_eq!(
            c.anchor(later, later + ahead + 400_000),
            later + ahead + 400_000
        );
        // A clock behind the coordinator's (a negative difference) works the same way.
        let mut c = OpeningClock::default();
        assert_eq!(c.anchor(ahead, 250_000), 250_000);
        assert_eq!(c.anchor(ahead + ms, ms + 700_000), ms + 250_000);
    }
}
