//! The scenario's `programs`: each started at its sim time (on the host, or inside its
//! vehicle's network namespace) in a process group of its own, its stdout and stderr written
//! straight to `<out>/programs/<name>.{stdout,stderr}.log`, stopped at the end of the run with
//! its stop signal (then SIGKILL), its exit recorded as a [`ProgramRecord`]. A program of a
//! vehicle in a container (`vehicles[].attach.container`) enters the container's network, file
//! system, hostname and IPC namespaces and starts in its `/`; it stays a child of the run (in
//! the host's PID namespace), so it is stopped as every other.
//!
//! A program inside a vehicle gets the vehicle's ROS 2 settings (`ros`, `vehicles[].ros`) as
//! `ROS_DOMAIN_ID`, `COSIM_ROS_NAMESPACE`, `COSIM_ROS_USE_SIM_TIME` and `COSIM_ROS_ARGS`
//! (`--ros-args -r __ns:=<namespace> -p use_sim_time:=<bool>`). ROS 2 takes a node's namespace
//! and `use_sim_time` only from its arguments (ROS 1's `ROS_NAMESPACE` is not read), so they are
//! handed over as variables for the program's own command line (`talker $COSIM_ROS_ARGS`)
//! rather than written into arguments the run does not own. The program's own `env` wins.
//!
//! Every program gets `COSIM_METRICS`, its metrics file ([`crate::io::programs::metrics`]):
//! [`Programs::read_metrics`] reads what the programs appended, [`Programs::finish_metrics`]
//! the rest once they have stopped.

pub mod metrics;

use crate::config::{Capture, LoadedScenario, Program, ProgramCommand};
use crate::io::os::netns;
use crate::output::schema::{MetricSample, ProgramEnd, ProgramRecord};
use crate::output::summary::MetricsFileReport;
use anyhow::Context;
use metrics::{MetricsFile, READ_PER_CALL};
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// The longest a run (and each capture agent) waits before window 0 for the programs due at
/// the start to settle ([`Programs::settle`]).
pub const SETTLE_LIMIT: Duration = Duration::from_secs(5);
/// How often [`Programs::settle`] looks at the programs' processes.
pub const SETTLE_POLL: Duration = Duration::from_millis(10);
/// How many looks in a row must find none of them running for the programs to have settled.
pub const SETTLED_SAMPLES: u32 = 3;

/// How long a group still has after SIGKILL before it is given up on.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How often a group whose leader is gone is checked for members left, while stopping.
const LEFTOVER_CHECK: Duration = Duration::from_millis(20);

/// Where a program is in its life.
enum State {
    /// Waiting for its start time.
    Waiting,
    /// Never to run (the record's note says why).
    Skipped,
    /// Its leader runs; `exit` resolves when the leader has been reaped.
    Running {
        pgid: i32,
        exit: oneshot::Receiver<std::io::Result<ExitStatus>>,
    },
    /// Its leader ended; members of its group may still run.
    Ended { pgid: i32 },
    /// Stopped and recorded.
    Done,
}

struct Entry {
    program: Program,
    start_ns: u64,
    state: State,
    record: ProgramRecord,
    /// Its vehicle's ROS 2 environment (`ROS_DOMAIN_ID`, `COSIM_ROS_*`), from the scenario's
    /// `ros` and the vehicle's own.
    ros_env: Vec<(String, String)>,
    /// The namespace its vehicle attaches to (`vehicles[].attach`), if any.
    attach: Option<crate::config::Attach>,
    /// Its metrics file, from its start on.
    metrics: Option<MetricsFile>,
}

/// The programs of a run: [`Programs::tick`] at every window opening, [`Programs::stop_all`]
/// at the end; dropping it kills every group still running.
pub struct Programs {
    entries: Vec<Entry>,
    /// The `COSIM_*` variables every program gets.
    env: Vec<(String, String)>,
    scenario_dir: PathBuf,
    logs: PathBuf,
    /// The namespaces of the vehicles with programs that attach to a container or an existing
    /// namespace (`vehicles[].attach`), found once at the start: asking a container engine
    /// takes a good part of a second, too long for a window opening.
    attached: Vec<netns::VehicleNs>,
    /// What a metrics file is read into ([`READ_PER_CALL`] bytes, allocated once).
    read_buf: Vec<u8>,
}

impl Programs {
    /// For a scenario with `programs` (`None` without): their log folder `<out_dir>/programs`
    /// is created now. Programs inside vehicles are marked not started when the run has no
    /// namespaces (`network.capture` is not `tun`, e.g. turned off for want of root).
    pub fn for_scenario(
        loaded: &LoadedScenario,
        out_dir: Option<&Path>,
    ) -> anyhow::Result<Option<Programs>> {
        Programs::for_host(loaded, out_dir, None)
    }

    /// The programs that run on capture agent `host`'s machine (those of its vehicles), or
    /// with `None` on the network coordinator's (every other).
    pub fn for_host(
        loaded: &LoadedScenario,
        out_dir: Option<&Path>,
        host: Option<&str>,
    ) -> anyhow::Result<Option<Programs>> {
        let s = &loaded.scenario;
        let host_of = |p: &Program| {
            p.vehicle
                .as_deref()
                .and_then(|name| s.vehicles.iter().find(|v| v.name == name))
                .and_then(|v| v.host.as_deref())
        };
        let programs: Vec<&Program> = s.programs.iter().filter(|p| host_of(p) == host).collect();
        if programs.is_empty() {
            return Ok(None);
        }
        let out_dir =
            out_dir.context("the scenario's programs need an output folder for their logs")?;
        let out = std::path::absolute(out_dir)
            .with_context(|| format!("output folder {}", out_dir.display()))?;
        let logs = out.join("programs");
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create {}", logs.display()))?;
        let dir = match loaded.file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let scenario_dir = std::path::absolute(dir)
            .with_context(|| format!("scenario folder {}", dir.display()))?;
        let env = vec![
            ("COSIM_OUT".to_owned(), out.to_string_lossy().into_owned()),
            (
                "COSIM_SCENARIO_DIR".to_owned(),
                scenario_dir.to_string_lossy().into_owned(),
            ),
            ("COSIM_DURATION_S".to_owned(), s.duration_s.to_string()),
            (
                "COSIM_REAL_TIME_FACTOR".to_owned(),
                s.real_time_factor.to_string(),
            ),
        ];
        let namespaces = s.network.capture == Capture::Tun;
        let entries = programs
            .iter()
            .map(|&p| {
                let mut record = ProgramRecord {
                    name: p.name.clone(),
                    vehicle: p.vehicle.clone(),
                    started_s: None,
                    ended_s: None,
                    exit_code: None,
                    signal: None,
                    end: ProgramEnd::Exited,
                    leftovers_killed: false,
                };
                let state = match &p.vehicle {
                    Some(v) if !namespaces => {
                        record.end = ProgramEnd::NoNamespace { vehicle: v.clone() };
                        State::Skipped
                    }
                    _ => State::Waiting,
                };
                let vehicle = p
                    .vehicle
                    .as_deref()
                    .and_then(|name| s.vehicles.iter().find(|v| v.name == name));
                let ros_env = vehicle.map(|v| s.vehicle_ros(v).env()).unwrap_or_default();
                let attach = vehicle.and_then(|v| v.attach.clone());
                Entry {
                    program: p.clone(),
                    start_ns: (p.start_s * 1e9).round() as u64,
                    state,
                    record,
                    ros_env,
                    attach,
                    metrics: None,
                }
            })
            .collect();
        let mut attached = Vec::new();
        if namespaces {
            for v in &s.vehicles {
                let has_programs = programs
                    .iter()
                    .any(|p| p.vehicle.as_deref() == Some(v.name.as_str()));
                if let (Some(a), true) = (&v.attach, has_programs) {
                    attached.push(netns::VehicleNs::attach(&v.name, a)?);
                }
            }
        }
        Ok(Some(Programs {
            entries,
            env,
            scenario_dir,
            logs,
            attached,
            read_buf: vec![0; READ_PER_CALL],
        }))
    }

    /// The folder of the log files.
    pub fn log_dir(&self) -> &Path {
        &self.logs
    }

    /// At the opening of the window starting at `sim_ns`: starts every program whose start
    /// time has come, and records the exit of those that ended since (`ended_s` = `sim_ns`,
    /// at most one window after the exit). Needs a tokio runtime.
    pub fn tick(&mut self, sim_ns: u64) {
        for i in 0..self.entries.len() {
            if matches!(self.entries[i].state, State::Waiting) && self.entries[i].start_ns <= sim_ns
            {
                let started = self.start(i, sim_ns);
                let e = &mut self.entries[i];
                match started {
                    Ok((pgid, exit, metrics)) => {
                        e.metrics = Some(metrics);
                        e.record.started_s = Some(sim_ns as f64 / 1e9);
                        e.state = State::Running { pgid, exit };
                        tracing::info!(program = %e.program.name, pid = pgid, "started{}", where_(&e.program, e.attach.as_ref()));
                    }
                    Err(err) => {
                        tracing::error!(program = %e.program.name, "cannot start: {err:#}");
                        e.record.end = ProgramEnd::CannotStart {
                            error: format!("{err:#}"),
                        };
                        e.state = State::Skipped;
                    }
                }
            }
        }
        self.reap(sim_ns);
    }

    /// Waits until the running programs have settled: none of their processes running or
    /// waiting for a CPU in [`SETTLED_SAMPLES`] looks [`SETTLE_POLL`] apart, for at most
    /// `limit`. Called after the programs due at the start were started and before window 0
    /// opens: dozens of programs loading their libraries and opening their sockets would
    /// otherwise take the cores from the first windows. Returns how long it waited and whether
    /// they settled (a program that keeps a core busy never does).
    pub fn settle(&self, limit: Duration) -> (Duration, bool) {
        let started = std::time::Instant::now();
        let pgids: Vec<i32> = self
            .entries
            .iter()
            .filter_map(|e| match e.state {
                State::Running { pgid, .. } => Some(pgid),
                _ => None,
            })
            .collect();
        if pgids.is_empty() {
            return (Duration::ZERO, true);
        }
        let mut quiet = 0;
        while quiet < SETTLED_SAMPLES {
            if started.elapsed() >= limit {
                return (started.elapsed(), false);
            }
            std::thread::sleep(SETTLE_POLL);
            let runnable = crate::io::os::procfs::runnable_in_groups(&pgids);
            quiet = if runnable == 0 { quiet + 1 } else { 0 };
        }
        (started.elapsed(), true)
    }

    /// Reads what the programs appended to their metrics files since the last call (at most
    /// [`READ_PER_CALL`] bytes of each) into `out`; values without their own time are at
    /// `sim_ns`.
    pub fn read_metrics(&mut self, sim_ns: u64, out: &mut Vec<MetricSample>) {
        for e in &mut self.entries {
            if let Some(m) = &mut e.metrics {
                m.read(sim_ns, &mut self.read_buf, out);
            }
        }
    }

    /// After [`Self::stop_all`]: reads the rest of every metrics file into `out` and says what
    /// the run made of each file that had anything in it.
    pub fn finish_metrics(
        &mut self,
        sim_ns: u64,
        out: &mut Vec<MetricSample>,
    ) -> Vec<MetricsFileReport> {
        let mut reports = Vec::new();
        for e in &mut self.entries {
            if let Some(m) = e.metrics.take() {
                reports.extend(m.finish(sim_ns, &mut self.read_buf, out));
            }
        }
        reports
    }

    /// Records the exit of every program whose leader ended since the last call (at `sim_ns`).
    fn reap(&mut self, sim_ns: u64) {
        for e in &mut self.entries {
            let State::Running { pgid, exit } = &mut e.state else {
                continue;
            };
            let pgid = *pgid;
            match exit.try_recv() {
                Err(oneshot::error::TryRecvError::Empty) => continue,
                Ok(status) => record_exit(&mut e.record, status, sim_ns),
                Err(oneshot::error::TryRecvError::Closed) => {
                    e.record.ended_s = Some(sim_ns as f64 / 1e9);
                    e.record.end = ProgramEnd::ExitLost;
                }
            }
            tracing::info!(program = %e.program.name, "ended by itself: {}", outcome(&e.record));
            e.state = State::Ended { pgid };
        }
    }

    /// Spawns entry `i` in a process group of its own (inside its vehicle's namespace if it
    /// has one); returns the group id, the leader's exit and its metrics file.
    fn start(
        &self,
        i: usize,
        sim_ns: u64,
    ) -> anyhow::Result<(
        i32,
        oneshot::Receiver<std::io::Result<ExitStatus>>,
        MetricsFile,
    )> {
        use std::os::unix::process::CommandExt as _;
        let p = &self.entries[i].program;
        let cwd = match &p.cwd {
            Some(d) => self.scenario_dir.join(d),
            None => self.scenario_dir.clone(),
        };
        let mut cmd = match &p.command {
            ProgramCommand::Shell(line) => {
                let mut c = std::process::Command::new("sh");
                c.arg("-c").arg(line);
                c
            }
            ProgramCommand::Argv(argv) => {
                // A relative path to the program resolves from its working directory.
                let prog = Path::new(&argv[0]);
                let prog = if prog.is_relative() && argv[0].contains('/') {
                    cwd.join(prog)
                } else {
                    prog.to_path_buf()
                };
                let mut c = std::process::Command::new(prog);
                c.args(&argv[1..]);
                c
            }
        };
        cmd.current_dir(&cwd);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.env("COSIM_PROGRAM", &p.name);
        cmd.env("COSIM_START_S", (sim_ns as f64 / 1e9).to_string());
        let metrics_path = metrics::path(&self.logs, &p.name);
        let metrics = MetricsFile::create(&metrics_path, &p.name, p.vehicle.as_deref())
            .with_context(|| format!("cannot create {}", metrics_path.display()))?;
        cmd.env("COSIM_METRICS", &metrics_path);
        if let Some(v) = &p.vehicle {
            cmd.env("COSIM_VEHICLE", v);
        }
        cmd.envs(self.entries[i].ros_env.iter().map(|(k, v)| (k, v)));
        cmd.envs(&p.env);
        let log = |ext: &str| {
            let path = self.logs.join(format!("{}.{ext}.log", p.name));
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))
        };
        cmd.stdin(Stdio::null())
            .stdout(log("stdout")?)
            .stderr(log("stderr")?);
        cmd.process_group(0);
        crate::io::os::timer::start_at_original_nice(&mut cmd);
        // The namespace files stay open until the child has been spawned.
        let mut netns = None;
        if let Some(v) = &p.vehicle {
            match self.attached.iter().find(|ns| ns.vehicle() == v) {
                Some(ns) => ns.enter_on_exec(&mut cmd),
                None => netns
                    .insert(netns::VehicleNs::created(v)?)
                    .enter_on_exec(&mut cmd),
            }
        }
        let mut child = tokio::process::Command::from(cmd)
            .spawn()
            .with_context(|| {
                format!(
                    "{}{}",
                    describe(&p.command),
                    where_(p, self.entries[i].attach.as_ref())
                )
            })?;
        drop(netns);
        let pgid = child.id().context("the started program has no pid")? as i32;
        let (tx, rx) = oneshot::channel();
        tokio::spawn(async move {
            let _ = tx.send(child.wait().await);
        });
        Ok((pgid, rx, metrics))
    }

    /// Stops every program at the end of the run (`now_sim_ns`): each group gets its stop
    /// signal, then SIGKILL after `stop_timeout_s`; a group whose leader ended by itself is
    /// stopped the same way if members of it still run. Returns one record per program, in
    /// scenario order.
    pub async fn stop_all(&mut self, now_sim_ns: u64) -> Vec<ProgramRecord> {
        let now_s = now_sim_ns as f64 / 1e9;
        self.reap(now_sim_ns);
        let t0 = Instant::now();
        // Every group is signalled at once, so waiting for them one after the other gives
        // each its whole timeout.
        for e in &mut self.entries {
            match e.state {
                State::Running { pgid, .. } => {
                    signal_group(pgid, e.program.stop_signal.number());
                    e.record.end = ProgramEnd::Stopped {
                        signal: e.program.stop_signal.name().to_owned(),
                    };
                }
                State::Ended { pgid } => {
                    if group_alive(pgid) {
                        signal_group(pgid, e.program.stop_signal.number());
                        e.record.end = ProgramEnd::GroupStopped {
                            signal: e.program.stop_signal.name().to_owned(),
                        };
                    }
                }
                State::Waiting => {
                    e.record.end = ProgramEnd::RunEndedFirst {
                        end_s: now_s,
                        start_s: e.program.start_s,
                    };
                    e.state = State::Skipped;
                }
                State::Skipped | State::Done => {}
            }
        }
        for e in &mut self.entries {
            let deadline = t0 + Duration::from_secs_f64(e.program.stop_timeout_s);
            let timeout = e.program.stop_timeout_s;
            let signal = e.program.stop_signal.name();
            let state = std::mem::replace(&mut e.state, State::Done);
            let stopped = matches!(state, State::Running { .. })
                || e.record.has_note() && matches!(state, State::Ended { .. });
            match state {
                State::Running { pgid, mut exit } => {
                    let status = match tokio::time::timeout_at(deadline, &mut exit).await {
                        Ok(status) => Some(status),
                        Err(_) => {
                            signal_group(pgid, libc::SIGKILL);
                            e.record.end = ProgramEnd::Killed {
                                timeout_s: timeout,
                                signal: signal.to_owned(),
                            };
                            tokio::time::timeout(KILL_WAIT, &mut exit).await.ok()
                        }
                    };
                    match status {
                        Some(Ok(s)) => record_exit(&mut e.record, s, now_sim_ns),
                        Some(Err(_)) => {
                            e.record.ended_s = Some(now_s);
                            e.record.end = ProgramEnd::ExitLost;
                        }
                        None => {
                            e.record.end = ProgramEnd::SurvivedKill {
                                wait_s: KILL_WAIT.as_secs(),
                            };
                        }
                    }
                    stop_leftovers(pgid, deadline, &mut e.record).await;
                }
                State::Ended { pgid } => stop_leftovers(pgid, deadline, &mut e.record).await,
                State::Waiting | State::Skipped | State::Done => {}
            }
            if stopped {
                tracing::info!(program = %e.program.name, "{}", outcome(&e.record));
            }
        }
        self.entries.iter().map(|e| e.record.clone()).collect()
    }
}

impl Drop for Programs {
    /// Kills every group still running (a run that ended with an error).
    fn drop(&mut self) {
        for e in &self.entries {
            if let State::Running { pgid, .. } | State::Ended { pgid } = e.state {
                signal_group(pgid, libc::SIGKILL);
            }
        }
    }
}

/// Waits until no process of group `pgid` is left, at most until `deadline`; then kills what
/// is left.
async fn stop_leftovers(pgid: i32, deadline: Instant, record: &mut ProgramRecord) {
    while group_alive(pgid) {
        if Instant::now() >= deadline {
            signal_group(pgid, libc::SIGKILL);
            record.leftovers_killed = true;
            return;
        }
        tokio::time::sleep(LEFTOVER_CHECK.min(deadline - Instant::now())).await;
    }
}

/// Sends `signal` to every process of group `pgid` (a gone group is no error).
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    // Safety: killpg has no memory-safety preconditions; a gone group is ESRCH.
    unsafe { libc::killpg(pgid, signal) };
}

/// Whether a process (other than a zombie) of group `pgid` still exists.
pub(crate) fn group_alive(pgid: i32) -> bool {
    // Safety: signal 0 checks for existence only.
    (unsafe { libc::killpg(pgid, 0) }) == 0 && !only_zombies(pgid)
}

/// Whether every process left in group `pgid` is a zombie (ended, not yet reaped by its
/// parent): those are gone for our purpose.
fn only_zombies(pgid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command's closing parenthesis: state, ppid, pgrp, ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let (Some(state), Some(_ppid), Some(pgrp)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if pgrp.parse::<i32>() == Ok(pgid) && state != "Z" {
            return false;
        }
    }
    true
}

fn record_exit(record: &mut ProgramRecord, status: std::io::Result<ExitStatus>, sim_ns: u64) {
    record.ended_s = Some(sim_ns as f64 / 1e9);
    match status {
        Ok(s) => {
            record.exit_code = s.code();
            record.signal = s.signal();
        }
        Err(e) => {
            record.end = ProgramEnd::CannotWait {
                error: e.to_string(),
            }
        }
    }
}

/// How a record's program ended, in words: `exit 0`, `signal 2 (stopped with SIGINT)`, ...
pub fn outcome(r: &ProgramRecord) -> String {
    let how = match (r.started_s, r.exit_code, r.signal) {
        (None, ..) => "not started".to_owned(),
        (_, Some(c), _) => format!("exit {c}"),
        (_, None, Some(s)) => format!("signal {s}"),
        _ => "running".to_owned(),
    };
    match r.note() {
        Some(n) if r.started_s.is_some() => format!("{how} ({n})"),
        Some(n) => n,
        None => how,
    }
}

fn where_(p: &Program, attach: Option<&crate::config::Attach>) -> String {
    match (&p.vehicle, attach.and_then(|a| a.target())) {
        (Some(v), Some(to)) => format!(" in vehicle {v}'s {to}"),
        (Some(v), None) => format!(" in vehicle {v}'s namespace {}", netns::ns_name(v)),
        (None, _) => String::new(),
    }
}

fn describe(c: &ProgramCommand) -> String {
    match c {
        ProgramCommand::Shell(line) => format!("sh -c {line:?}"),
        ProgramCommand::Argv(argv) => format!("{:?}", argv[0]),
    }
}
