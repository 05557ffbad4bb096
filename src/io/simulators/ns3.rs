//! The ns-3 adapter `netsim-ns3` as a child process of the coordinator: found, started with the
//! scenario's arguments ([`crate::model::ns3::adapter_args`]) on a ZeroMQ `ipc://` endpoint of
//! its own, waited for (`listening on ENDPOINT` on its stdout), reached through a [`Link`], and
//! stopped with the link.
//!
//! - **Finding it**: the scenario's `simulators.network.program` (relative to the scenario's
//!   folder), else `$NETSIM_NS3`, else `<folder of the running executable>/../ns3/netsim-ns3`
//!   (`target/ns3/netsim-ns3` beside `target/release/cosim`, where `scripts/setup --ns3` puts
//!   it), else `netsim-ns3` on `PATH`. Not found: an error saying how to build it.
//! - **Running it**: `--bind=ipc://<output folder>/ns3.sock` (a temporary path when there is no
//!   output folder or the path is too long for a Unix socket), stderr to
//!   `<output folder>/ns3.log` (the command line first), in a process group of its own (a
//!   Ctrl-C at the terminal reaches the coordinator, which ends the run, not the adapter), and
//!   killed by the kernel if the coordinator dies (`PR_SET_PDEATHSIG`).
//! - **Failing**: an exchange that ends because the adapter exited (or times out or disconnects
//!   after it did) fails with its exit status, e.g. `netsim-ns3 exited with signal 11 (SIGSEGV)`,
//!   and the end of its log. The [`Link`] names it `ns-3 adapter (netsim-ns3, pid N)`.
//! - **Stopping it**: dropping the link (the run's end, an error, Ctrl-C) sends SIGTERM to its
//!   group, once it has exited or after [`STOP_TIMEOUT`] SIGKILL to whatever is left of the
//!   group, reaps it and waits (at most [`STOP_TIMEOUT`] again) until nothing of the group is
//!   left; its socket file is removed. One that ended by itself is left alone.

use crate::config::{LoadedScenario, Ns3Settings};
use crate::io::programs::{group_alive, signal_group};
use crate::lockstep::{zmq, Link, Reply, Transport, TransportError};
use anyhow::Context;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::AsyncBufReadExt;

/// The adapter's program name.
pub const PROGRAM: &str = "netsim-ns3";
/// The environment variable naming the program.
pub const PROGRAM_ENV: &str = "NETSIM_NS3";
/// How long a stopped adapter has between SIGTERM and SIGKILL.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a reply the adapter sent just before it exited may still take to arrive.
const REPLY_GRACE: Duration = Duration::from_millis(200);
/// Longest `ipc://` path used in the output folder (a Unix socket path holds 107 bytes).
const MAX_SOCKET_PATH: usize = 100;
/// Lines of the adapter's log quoted in an error.
const LOG_TAIL_LINES: usize = 3;

/// Where the program is looked for, in order (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// `simulators.network.program`, resolved against the scenario's folder.
    pub setting: Option<PathBuf>,
    /// `$NETSIM_NS3`.
    pub env: Option<OsString>,
    /// The running executable.
    pub exe: Option<PathBuf>,
    /// `$PATH`.
    pub path: Option<OsString>,
}

impl Lookup {
    /// The places for `settings` of the scenario `loaded`, from this process's environment.
    pub fn new(loaded: &LoadedScenario, settings: &Ns3Settings) -> Lookup {
        let dir = loaded.file.parent().unwrap_or(Path::new(""));
        Lookup {
            setting: settings.program.as_ref().map(|p| dir.join(p)),
            env: std::env::var_os(PROGRAM_ENV).filter(|v| !v.is_empty()),
            exe: std::env::current_exe().ok(),
            path: std::env::var_os("PATH"),
        }
    }

    /// `<folder of the executable>/../ns3/netsim-ns3` (`target/ns3/netsim-ns3` for
    /// `target/release/cosim`).
    fn beside_exe(&self) -> Option<PathBuf> {
        Some(
            self.exe
                .as_ref()?
                .parent()?
                .parent()?
                .join("ns3")
                .join(PROGRAM),
        )
    }
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

const HOW_TO_BUILD: &str = "build it with `scripts/setup --ns3` (installs ns-3 and builds ns3/ into target/ns3/netsim-ns3), \
     or set simulators.network.endpoint to an adapter already running";

/// The adapter program `lookup` finds (see the module docs); an error says where it looked
/// and how to build it. A program named by the scenario or `$NETSIM_NS3` must be there: the
/// search does not go on past it.
pub fn find_program(lookup: &Lookup) -> anyhow::Result<PathBuf> {
    let named = |p: PathBuf, by: &str| {
        if is_executable(&p) {
            Ok(p)
        } else {
            let what = if p.exists() {
                "is not an executable file"
            } else {
                "does not exist"
            };
            Err(anyhow::anyhow!(
                "the ns-3 adapter {} ({by}) {what}; {HOW_TO_BUILD}",
                p.display()
            ))
        }
    };
    if let Some(p) = &lookup.setting {
        return named(p.clone(), "simulators.network.program");
    }
    if let Some(v) = &lookup.env {
        return named(PathBuf::from(v), PROGRAM_ENV);
    }
    let beside = lookup.beside_exe();
    if let Some(p) = beside.as_ref().filter(|p| is_executable(p)) {
        return Ok(p.clone());
    }
    if let Some(p) = lookup
        .path
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(PROGRAM))
        .find(|p| is_executable(p))
    {
        return Ok(p);
    }
    let beside = beside
        .map(|p| format!("{}, ", p.display()))
        .unwrap_or_default();
    anyhow::bail!("the ns-3 adapter {PROGRAM} was not found (looked at ${PROGRAM_ENV}, {beside}and PATH); {HOW_TO_BUILD}")
}

/// How a process ended, as a phrase: `exited with status 1`, `exited with signal 11 (SIGSEGV)`.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => match signal_name(sig) {
            Some(name) => format!("exited with signal {sig} ({name})"),
            None => format!("exited with signal {sig}"),
        },
        (None, None) => "exited".to_owned(),
    }
}

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

/// The last `n` non-empty lines of the adapter's log at `path` (at most 64 KiB read), joined
/// by ` | `, without the command line at its top.
fn log_tail(path: &Path, n: usize) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(64 << 10))).ok()?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // Its own lines: not the command line written before it.
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with("$ "))
        .collect();
    (!lines.is_empty()).then(|| lines[lines.len().saturating_sub(n)..].join(" | "))
}

/// A running adapter process (see the module docs); stopped and reaped when dropped.
pub struct Adapter {
    child: tokio::process::Child,
    pid: u32,
    name: String,
    endpoint: String,
    log: PathBuf,
    /// The `ipc://` socket file, removed with the adapter.
    socket: PathBuf,
    status: Option<ExitStatus>,
}

impl Adapter {
    /// Starts `program` with `--bind=<its endpoint>` and `args`, its socket and log in `dir`
    /// (created if need be; none: a temporary folder), and waits up to `startup` for it to say
    /// `listening on`. An adapter that exits first, or stays silent, is an error quoting its
    /// log (and a silent one is stopped).
    pub async fn spawn(
        program: &Path,
        args: &[String],
        dir: Option<&Path>,
        startup: Duration,
    ) -> anyhow::Result<Adapter> {
        use std::os::unix::process::CommandExt as _;
        let name = program
            .file_name()
            .map_or_else(|| PROGRAM.to_owned(), |n| n.to_string_lossy().into_owned());
        let unique = format!("netsim-ns3-{}-{}", std::process::id(), next_serial());
        let (socket, log) = match dir {
            Some(d) => {
                std::fs::create_dir_all(d)
                    .with_context(|| format!("cannot create {}", d.display()))?;
                let socket = d.join("ns3.sock");
                let socket = if socket.as_os_str().len() <= MAX_SOCKET_PATH {
                    socket
                } else {
                    std::env::temp_dir().join(format!("{unique}.sock"))
                };
                (socket, d.join("ns3.log"))
            }
            None => (
                std::env::temp_dir().join(format!("{unique}.sock")),
                std::env::temp_dir().join(format!("{unique}.log")),
            ),
        };
        remove_socket(&socket);
        let endpoint = format!("ipc://{}", socket.display());
        let bind = format!("--bind={endpoint}");

        let mut log_file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let shown: Vec<String> = std::iter::once(program.display().to_string())
            .chain(std::iter::once(bind.clone()))
            .chain(args.iter().cloned())
            .collect();
        writeln!(log_file, "$ {}", shown.join(" "))
            .with_context(|| format!("cannot write {}", log.display()))?;

        let mut cmd = std::process::Command::new(program);
        cmd.arg(&bind)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file);
        cmd.process_group(0);
        crate::io::os::child::die_with_parent(&mut cmd, libc::SIGKILL, "the coordinator is gone");
        let mut child = tokio::process::Command::from(cmd)
            .spawn()
            .with_context(|| format!("cannot start the ns-3 adapter {}", program.display()))?;
        let pid = child.id().unwrap_or(0);
        let stdout = child.stdout.take().context("the adapter's stdout")?;
        let mut adapter = Adapter {
            child,
            pid,
            name,
            endpoint,
            log,
            socket,
            status: None,
        };
        tracing::info!(pid, log = %adapter.log.display(), "started the ns-3 adapter: {}", shown.join(" "));

        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let listening = tokio::time::timeout(startup, async {
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) if line.trim_start().starts_with("listening on ") => {
                        return Ok(line)
                    }
                    Ok(Some(line)) => tracing::warn!(
                        pid,
                        "{} printed on stdout before listening: {line}",
                        adapter.name
                    ),
                    Ok(None) => return Err(None),
                    Err(e) => return Err(Some(e)),
                }
            }
        })
        .await;
        match listening {
            Ok(Ok(line)) => {
                let said = line.trim().trim_start_matches("listening on ").to_owned();
                if said != adapter.endpoint {
                    tracing::warn!(
                        pid,
                        "{} says it listens on {said}, asked for {}",
                        adapter.name,
                        adapter.endpoint
                    );
                }
                // Nothing more is expected on stdout; whatever comes goes to the log.
                let name = adapter.name.clone();
                tokio::spawn(async move {
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::debug!(pid, "{name} stdout: {line}");
                    }
                });
                Ok(adapter)
            }
            Ok(Err(read)) => {
                // Its stdout closed: it is exiting (or has).
                let status = tokio::time::timeout(STOP_TIMEOUT, adapter.wait())
                    .await
                    .ok();
                let how = match (status, read) {
                    (Some(s), _) => describe_exit(s),
                    (None, Some(e)) => format!("stopped writing to stdout ({e})"),
                    (None, None) => "closed its stdout".to_owned(),
                };
                anyhow::bail!(
                    "the ns-3 adapter {} (pid {pid}) {how} before listening{}",
                    program.display(),
                    adapter.log_note()
                )
            }
            Err(_) => anyhow::bail!(
                "the ns-3 adapter {} (pid {pid}) did not say `listening on {}` within {} ms{}",
                program.display(),
                adapter.endpoint,
                startup.as_millis(),
                adapter.log_note()
            ),
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The program's file name (`netsim-ns3`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ZeroMQ endpoint it listens on.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Its stderr.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Its exit status, once it has exited (it is reaped then).
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits for it to exit (forever if it cannot be waited for).
    async fn wait(&mut self) -> ExitStatus {
        if let Some(s) = self.status {
            return s;
        }
        match self.child.wait().await {
            Ok(s) => {
                self.status = Some(s);
                s
            }
            Err(_) => std::future::pending().await,
        }
    }

    /// `; its log <path> ends: <lines>` (or `; its log: <path>` when empty).
    fn log_note(&self) -> String {
        match log_tail(&self.log, LOG_TAIL_LINES) {
            Some(tail) => format!("; its log {} ends: {tail}", self.log.display()),
            None => format!("; its log: {}", self.log.display()),
        }
    }

    /// How it ended, for an error: `netsim-ns3 exited with signal 11 (SIGSEGV); its log ...`.
    fn exit_note(&self, status: ExitStatus) -> String {
        format!("{} {}{}", self.name, describe_exit(status), self.log_note())
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        if self.exit_status().is_none() && self.pid > 0 {
            let group = self.pid as libc::pid_t;
            signal_group(group, libc::SIGTERM);
            self.reaped_within(STOP_TIMEOUT);
            // Whatever is left of its group (a stopped process ignores SIGTERM until continued),
            // until none of it is left: the run ends after what it started.
            signal_group(group, libc::SIGKILL);
            self.reaped_within(STOP_TIMEOUT);
            let until = Instant::now() + STOP_TIMEOUT;
            while group_alive(group) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            match self.status {
                Some(s) => tracing::debug!(
                    pid = self.pid,
                    "stopped the ns-3 adapter: {}",
                    describe_exit(s)
                ),
                None => {
                    tracing::warn!(pid = self.pid, "the ns-3 adapter did not end after SIGKILL")
                }
            }
        }
        remove_socket(&self.socket);
    }
}

impl Adapter {
    /// Polls for its exit for at most `limit`; true once reaped.
    fn reaped_within(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        loop {
            if self.exit_status().is_some() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Removes a Unix socket file at `path`, if that is what is there.
fn remove_socket(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(path);
    }
}

fn next_serial() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// The ZeroMQ link to an adapter this process started: each exchange also watches the process,
/// so one that exits mid-window fails the window at once with its exit status.
pub struct AdapterTransport {
    client: zmq::Client,
    adapter: Adapter,
}

/// `r`, or when `adapter` has exited meanwhile (or does within [`REPLY_GRACE`] of a failed
/// exchange: a disconnect may be seen before the exit), a failure saying how it ended.
async fn explain(
    adapter: &mut Adapter,
    r: Result<Vec<u8>, TransportError>,
) -> Result<Vec<u8>, TransportError> {
    let Err(e) = r else { return r };
    let status = match adapter.exit_status() {
        Some(s) => Some(s),
        None => tokio::time::timeout(REPLY_GRACE, adapter.wait()).await.ok(),
    };
    match status {
        Some(status) => Err(TransportError::Failed(format!(
            "{e}, and {}",
            adapter.exit_note(status)
        ))),
        None => Err(e),
    }
}

impl Transport for AdapterTransport {
    fn exchange<'a>(&'a mut self, request: Vec<u8>, timeout: Duration) -> Reply<'a> {
        Box::pin(async move {
            let exchange = self.client.exchange(request, timeout);
            tokio::pin!(exchange);
            let status = tokio::select! {
                biased;
                r = &mut exchange => return explain(&mut self.adapter, r).await,
                s = self.adapter.wait() => s,
            };
            // A reply it sent just before exiting still counts.
            match tokio::time::timeout(REPLY_GRACE, &mut exchange).await {
                Ok(Ok(reply)) => Ok(reply),
                _ => Err(TransportError::Failed(self.adapter.exit_note(status))),
            }
        })
    }
}

/// Starts the adapter for `loaded` with `settings` (arguments from the scenario, socket and log
/// in `out_dir`) and connects to it: the link to the network simulator of the run, named
/// `ns-3 adapter (netsim-ns3, pid N)`. Dropping it stops the adapter.
pub async fn start(
    loaded: &LoadedScenario,
    settings: &Ns3Settings,
    out_dir: Option<&Path>,
) -> anyhow::Result<Link> {
    let args = crate::model::ns3::adapter_args(loaded, settings);
    let program = find_program(&Lookup::new(loaded, settings))?;
    let sims = &loaded.scenario.simulators;
    let (timeout, startup) = (
        Duration::from_millis(sims.timeout_ms),
        Duration::from_millis(sims.startup_timeout_ms),
    );
    let adapter = Adapter::spawn(&program, &args, out_dir, startup).await?;
    let peer = format!("ns-3 adapter ({}, pid {})", adapter.name(), adapter.pid());
    let client = zmq::Client::connect_within(adapter.endpoint(), startup)
        .await
        .with_context(|| format!("{peer}: cannot connect to {}", adapter.endpoint()))?;
    Ok(Link::new(
        peer,
        timeout,
        Box::new(AdapterTransport { client, adapter }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An executable shell script `name` in `dir` running `body`.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// The process exists and is no zombie.
    fn alive(pid: u32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    }

    #[test]
    fn a_missing_program_is_an_error_saying_how_to_build_it() {
        let dir = tempfile::tempdir().unwrap();
        let nowhere = Lookup {
            exe: Some(dir.path().join("release/cosim")),
            path: Some(dir.path().as_os_str().to_owned()),
            ..Default::default()
        };
        let e = find_program(&nowhere).unwrap_err().to_string();
        assert!(
            e.starts_with("the ns-3 adapter netsim-ns3 was not found (looked at $NETSIM_NS3, "),
            "{e}"
        );
        assert!(
            e.contains(&format!(
                "{}, and PATH",
                dir.path().join("ns3/netsim-ns3").display()
            )),
            "{e}"
        );
        assert!(e.contains("build it with `scripts/setup --ns3`"), "{e}");

        let named = Lookup {
            setting: Some(dir.path().join("bin/netsim-ns3")),
            ..nowhere.clone()
        };
        let e = find_program(&named).unwrap_err().to_string();
        assert!(e.contains("bin/netsim-ns3 (simulators.network.program) does not exist; build it with `scripts/setup --ns3`"), "{e}");
        std::fs::write(dir.path().join("netsim-ns3"), "not executable").unwrap();
        let env = Lookup {
            env: Some(dir.path().join("netsim-ns3").into_os_string()),
            ..nowhere.clone()
        };
        let e = find_program(&env).unwrap_err().to_string();
        assert!(
            e.contains("netsim-ns3 (NETSIM_NS3) is not an executable file"),
            "{e}"
        );
        assert!(
            find_program(&nowhere).is_err(),
            "a file on PATH that is not executable is not the program"
        );
    }

    #[test]
    fn the_program_is_looked_for_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("target/release")).unwrap();
        std::fs::create_dir_all(d.join("target/ns3")).unwrap();
        std::fs::create_dir_all(d.join("bin")).unwrap();
        let on_path = script(&d.join("bin"), PROGRAM, "exit 0");
        let mut l = Lookup {
            exe: Some(d.join("target/release/cosim")),
            path: Some(d.join("bin").into_os_string()),
            ..Default::default()
        };
        assert_eq!(find_program(&l).unwrap(), on_path);
        script(&d.join("target/ns3"), PROGRAM, "exit 0");
        assert_eq!(
            find_program(&l).unwrap(),
            d.join("target/ns3/netsim-ns3"),
            "beside the executable before PATH"
        );
        let by_env = script(d, "from-env", "exit 0");
        l.env = Some(by_env.clone().into_os_string());
        assert_eq!(find_program(&l).unwrap(), by_env);
        let by_setting = script(d, "from-scenario", "exit 0");
        l.setting = Some(by_setting.clone());
        assert_eq!(find_program(&l).unwrap(), by_setting);
    }

    #[test]
    fn exits_are_described_with_their_signal() {
        let status = |raw: i32| ExitStatus::from_raw(raw);
        assert_eq!(describe_exit(status(1 << 8)), "exited with status 1");
        assert_eq!(describe_exit(status(0)), "exited with status 0");
        assert_eq!(
            describe_exit(status(libc::SIGSEGV)),
            "exited with signal 11 (SIGSEGV)"
        );
        assert_eq!(
            describe_exit(status(libc::SIGKILL)),
            "exited with signal 9 (SIGKILL)"
        );
        assert_eq!(describe_exit(status(40)), "exited with signal 40");
    }

    #[tokio::test]
    async fn an_adapter_is_waited_for_then_stopped_and_reaped_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let prog = script(
            dir.path(),
            "fake-ns3",
            r#"echo "started with $*" >&2; echo "listening on ${1#--bind=}"; exec sleep 60"#,
        );
        let out = dir.path().join("out");
        let a = Adapter::spawn(
            &prog,
            &["--nodes=2".into()],
            Some(&out),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        let (pid, socket) = (a.pid(), out.join("ns3.sock"));
        assert_eq!(a.endpoint(), format!("ipc://{}", socket.display()));
        assert_eq!(a.name(), "fake-ns3");
        assert!(alive(pid));
        let t = Instant::now();
        drop(a);
        assert!(
            t.elapsed() < STOP_TIMEOUT,
            "SIGTERM is enough for it: {:?}",
            t.elapsed()
        );
        assert!(!alive(pid), "stopped and reaped");
        let log = std::fs::read_to_string(out.join("ns3.log")).unwrap();
        assert!(
            log.starts_with(&format!(
                "$ {} --bind=ipc://{} --nodes=2\n",
                prog.display(),
                socket.display()
            )),
            "{log}"
        );
        assert!(
            log.contains(&format!(
                "started with --bind=ipc://{} --nodes=2",
                socket.display()
            )),
            "{log}"
        );
    }

    #[tokio::test]
    async fn an_adapter_ignoring_sigterm_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let prog = script(
            dir.path(),
            "stubborn",
            r#"trap '' TERM; echo "listening on ${1#--bind=}"; while :; do sleep 0.05; done"#,
        );
        let a = Adapter::spawn(&prog, &[], Some(dir.path()), Duration::from_secs(10))
            .await
            .unwrap();
        let pid = a.pid();
        drop(a);
        assert!(!alive(pid));
    }

    #[tokio::test]
    async fn an_adapter_that_exits_or_stays_silent_is_an_error_quoting_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let bad_args = script(
            dir.path(),
            "bad-args",
            r#"echo "unknown option --bogus" >&2; exit 2"#,
        );
        let e = Adapter::spawn(
            &bad_args,
            &["--bogus=1".into()],
            Some(dir.path()),
            Duration::from_secs(10),
        )
        .await
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.contains("bad-args (pid ")
                && e.contains(") exited with status 2 before listening; its log "),
            "{e}"
        );
        assert!(e.ends_with("ns3.log ends: unknown option --bogus"), "{e}");

        let crash = script(dir.path(), "crash", "kill -SEGV $$");
        let e = Adapter::spawn(&crash, &[], None, Duration::from_secs(10))
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("exited with signal 11 (SIGSEGV) before listening"),
            "{e}"
        );

        let silent = script(
            dir.path(),
            "silent",
            "echo 'loading the world' >&2; exec sleep 60",
        );
        let t = Instant::now();
        let e = Adapter::spawn(
            &silent,
            &[],
            Some(&dir.path().join("s")),
            Duration::from_millis(300),
        )
        .await
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.contains("did not say `listening on ipc://")
                && e.contains("within 300 ms; its log ")
                && e.ends_with("ns3.log ends: loading the world"),
            "{e}"
        );
        assert!(t.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_long_output_folder_puts_the_socket_in_the_temporary_folder() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("x".repeat(60)).join("y".repeat(60));
        let prog = script(
            dir.path(),
            "fake",
            r#"echo "listening on ${1#--bind=}"; exec sleep 60"#,
        );
        let a = rt
            .block_on(Adapter::spawn(
                &prog,
                &[],
                Some(&deep),
                Duration::from_secs(10),
            ))
            .unwrap();
        assert!(
            a.endpoint().starts_with(&format!(
                "ipc://{}",
                std::env::temp_dir().join("netsim-ns3-").display()
            )),
            "{}",
            a.endpoint()
        );
        assert_eq!(a.log(), deep.join("ns3.log"));
    }
}
