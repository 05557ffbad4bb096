//! One network namespace per vehicle (`ncs-<vehicle>`), created and removed by the network
//! coordinator, with crash-safe ownership: before a namespace is created its owner is written
//! to `/run/netsim_cosim/<namespace>.owner` (pid and process start time). A later start removes
//! every `ncs-*` namespace whose owner is dead (or unrecorded); a live owner's namespace is an
//! error ("already in use"), never touched.
//!
//! A vehicle may instead attach to a namespace the run does not own (`vehicles[].attach`): a
//! running container's or an existing one given by path. Such a namespace is held open as a
//! file descriptor for the run ([`VehicleNs`]), never removed, and never taken for a dead
//! run's leftover (its name is not `ncs-*`, nor is it one of theirs). Every namespace, created
//! or attached, is entered the same way: `setns` on its file descriptor ([`ip_in`],
//! [`run_in`], [`VehicleNs::enter_on_exec`]).

use crate::config::{Attach, AttachTo};
use anyhow::{bail, Context};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const STATE_DIR: &str = "/run/netsim_cosim";
pub const NETNS_DIR: &str = "/run/netns";
pub const PREFIX: &str = crate::config::OWN_NETNS_PREFIX;

/// The namespace of a vehicle.
pub fn ns_name(vehicle: &str) -> String {
    format!("{PREFIX}{vehicle}")
}

fn owner_file(ns: &str) -> PathBuf {
    Path::new(STATE_DIR).join(format!("{ns}.owner"))
}

/// The environment a command run in `ns` gets ([`Namespaces::note_env`]).
fn env_file(ns: &str) -> PathBuf {
    Path::new(STATE_DIR).join(format!("{ns}.env"))
}

/// The environment the running run left for `vehicle`'s namespace ([`Namespaces::note_env`]):
/// `KEY=value` pairs, none if it left none.
pub fn vehicle_env(vehicle: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(env_file(&ns_name(vehicle)))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Start time of a process (field 22 of /proc/<pid>/stat), to tell a reused pid apart.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(19)?.parse().ok()
}

fn me() -> String {
    let pid = std::process::id();
    format!("{pid} {}", start_time(pid).unwrap_or(0))
}

/// Writes `text` to `path` so that a reader sees the whole text or no file, never a part: a
/// run starting beside another reads the other's owner files while it writes them, and would
/// take a half-written one for a dead owner's.
fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Whether the owner recorded for `ns` is a live process (other than a dead one with our pid).
fn owner_alive(ns: &str) -> Option<u32> {
    let text = std::fs::read_to_string(owner_file(ns)).ok()?;
    let mut it = text.split_whitespace();
    let pid: u32 = it.next()?.parse().ok()?;
    let started: u64 = it.next()?.parse().ok()?;
    (start_time(pid) == Some(started)).then_some(pid)
}

/// Runs `ip` with `args`; an error quotes the command and its stderr.
pub fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .context("cannot run ip (install iproute2)")?;
    if !out.status.success() {
        bail!(
            "ip {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The pid recorded as the owner of `ns`, alive or not.
pub fn owner_pid(ns: &str) -> Option<u32> {
    let text = std::fs::read_to_string(owner_file(ns)).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Kills (SIGKILL) every process in the named namespace `ns`.
pub fn kill_inside(ns: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() else {
        return;
    };
    for pid in String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Removes the named namespace `ns` and its owner file.
pub fn remove_owned(ns: &str) {
    let _ = ip(&["netns", "del", ns]);
    let _ = std::fs::remove_file(owner_file(ns));
}

/// Every `ncs-*` namespace that exists.
pub fn list() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(NETNS_DIR)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Removes the leftovers of dead runs: `ncs-*` namespaces whose owner is dead or unknown, and
/// owner and environment files without a namespace. Returns the namespaces removed.
pub fn clean_stale() -> Vec<String> {
    let mut removed = Vec::new();
    for ns in list() {
        if owner_alive(&ns).is_none() {
            if ip(&["netns", "del", &ns]).is_ok() {
                removed.push(ns.clone());
            }
            let _ = std::fs::remove_file(owner_file(&ns));
            let _ = std::fs::remove_file(env_file(&ns));
        }
    }
    if let Ok(d) = std::fs::read_dir(STATE_DIR) {
        for e in d.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(ns) = name
                .strip_suffix(".owner")
                .or_else(|| name.strip_suffix(".env"))
            {
                if !Path::new(NETNS_DIR).join(ns).exists() && owner_alive(ns).is_none() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    if !removed.is_empty() {
        tracing::warn!(namespaces = ?removed, "removed namespaces left by a run that died");
    }
    removed
}

/// The vehicles' namespaces for the lifetime of this value: those it created, which dropping
/// it removes, and those it attached to ([`Namespaces::attach`]), which it only lets go of.
#[derive(Debug)]
pub struct Namespaces {
    names: Vec<String>,
    attached: Vec<VehicleNs>,
}

impl Namespaces {
    /// Cleans up dead runs' leftovers, then creates one namespace per vehicle with `lo` up.
    pub fn create<S: AsRef<str>>(vehicles: &[S]) -> anyhow::Result<Namespaces> {
        if unsafe { libc::geteuid() } != 0 {
            if let Some(refusal) = crate::io::os::userns::refused() {
                bail!("{refusal}");
            }
            bail!("live capture (network.capture: tun) creates network namespaces and TUN devices: it needs root, or `cosim run`, which runs in a user namespace of its own without root");
        }
        std::fs::create_dir_all(STATE_DIR).with_context(|| format!("cannot create {STATE_DIR}"))?;
        clean_stale();
        let mut made = Namespaces {
            names: Vec::new(),
            attached: Vec::new(),
        };
        for v in vehicles {
            let ns = ns_name(v.as_ref());
            if let Some(pid) = owner_alive(&ns) {
                bail!("network namespace {ns} is in use by a running process (pid {pid}); is another run with vehicle {:?} active?", v.as_ref());
            }
            write_whole(&owner_file(&ns), &me())?;
            made.names.push(ns.clone());
            if crate::io::os::userns::inside() {
                add_inside_user_namespace(&ns)?;
            } else {
                ip(&["netns", "add", &ns])?;
            }
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(made)
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Leaves `env`, the environment the scenario gives `vehicle`'s programs, beside the
    /// namespace this run created for it, where `cosim exec` finds it; removed with the
    /// namespace. Nothing for a namespace it did not create, or an empty `env`.
    pub fn note_env(&self, vehicle: &str, env: &[(String, String)]) -> anyhow::Result<()> {
        let ns = ns_name(vehicle);
        if env.is_empty() || !self.names.contains(&ns) {
            return Ok(());
        }
        let text: String = env.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let path = env_file(&ns);
        write_whole(&path, &text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Adds `vehicle`'s namespace that the run does not own: a running container's or an
    /// existing one's ([`VehicleNs::attach`]), held until [`Self::remove_all`].
    pub fn attach(&mut self, vehicle: &str, to: &Attach) -> anyhow::Result<()> {
        if crate::io::os::userns::inside() {
            // A namespace the host's user namespace owns is closed to a run's own.
            bail!("vehicle {vehicle}: attaching to a container or an existing namespace needs a run as root (a run without root can only enter the namespaces it makes)");
        }
        let ns = VehicleNs::attach(vehicle, to)?;
        if let Some(other) = self.attached.iter().find(|o| o.same_as(&ns)) {
            bail!(
                "vehicle {vehicle}: {} is the network namespace of vehicle {} ({}) too",
                ns.what,
                other.vehicle,
                other.what
            );
        }
        self.attached.push(ns);
        Ok(())
    }

    /// `vehicle`'s namespace, held open: the one it attached to, or else the one created for it.
    pub fn vehicle(&self, vehicle: &str) -> anyhow::Result<VehicleNs> {
        match self.attached.iter().find(|a| a.vehicle == vehicle) {
            Some(a) => a.try_clone(),
            None => VehicleNs::created(vehicle),
        }
    }

    /// Removes every namespace it created and lets go of those it attached to (idempotent).
    pub fn remove_all(&mut self) {
        self.attached.clear();
        for ns in self.names.drain(..) {
            if let Err(e) = ip(&["netns", "del", &ns]) {
                if Path::new(NETNS_DIR).join(&ns).exists() {
                    tracing::warn!("{e:#}");
                }
            }
            let _ = std::fs::remove_file(owner_file(&ns));
            let _ = std::fs::remove_file(env_file(&ns));
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        self.remove_all();
    }
}

/// `ip netns add ns` for a run in its own user namespace ([`crate::io::os::userns`]), where `ip` fails
/// returning to the host's network namespace (owned by the host's user namespace): a thread
/// makes the namespace, binds it to its name, and ends there.
fn add_inside_user_namespace(ns: &str) -> anyhow::Result<()> {
    let path = Path::new(NETNS_DIR).join(ns);
    let at = path.clone();
    std::thread::spawn(move || -> std::io::Result<()> {
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        std::fs::File::create(&at)?;
        let target = std::ffi::CString::new(at.as_os_str().as_encoded_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: NUL-terminated paths that live across the call.
        if unsafe {
            libc::mount(
                c"/proc/thread-self/ns/net".as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the thread making namespace {ns} panicked"))?
    .with_context(|| format!("cannot make network namespace {}", path.display()))
}

/// A vehicle's network namespace held open as a file descriptor: one the run created
/// (`/run/netns/ncs-<vehicle>`) or one it attached to (a container's, an existing one). For a
/// container, also its mount, UTS and IPC namespaces, which the vehicle's programs enter too.
#[derive(Debug)]
pub struct VehicleNs {
    vehicle: String,
    /// The namespace in messages: `namespace ncs-auv1`, `container v1 (podman)`, ...
    what: String,
    net: File,
    /// A container's other namespaces (file, `CLONE_NEW*` type), entered after `net`.
    others: Vec<(File, libc::c_int)>,
}

impl VehicleNs {
    /// The namespace the run created for `vehicle`.
    pub fn created(vehicle: &str) -> anyhow::Result<VehicleNs> {
        let ns = ns_name(vehicle);
        let path = Path::new(NETNS_DIR).join(&ns);
        let net = File::open(&path)
            .with_context(|| format!("cannot open the namespace {}", path.display()))?;
        Ok(VehicleNs {
            vehicle: vehicle.to_owned(),
            what: format!("namespace {ns}"),
            net,
            others: Vec::new(),
        })
    }

    /// The namespace `vehicle` attaches to: the network namespace of the container's process
    /// (`<engine> container inspect -f '{{.State.Pid}}' NAME`) with its mount, UTS and IPC
    /// namespaces, or the one at the path. A missing or stopped container, a missing path, the
    /// run's own host namespace and a namespace of the runs' own (`ncs-*`) are errors naming
    /// the vehicle and the container or path.
    pub fn attach(vehicle: &str, to: &Attach) -> anyhow::Result<VehicleNs> {
        let Some(target) = to.target() else {
            bail!("vehicle {vehicle}: attach needs exactly one of container and netns");
        };
        let what = target.to_string();
        let fail = |e: anyhow::Error| anyhow::anyhow!("vehicle {vehicle}: {what}: {e:#}");
        let (net, others) = match target {
            AttachTo::Container { engine, name } => {
                let pid = container_pid(engine.command(), name).map_err(fail)?;
                let open = |kind: &str| {
                    let path = format!("/proc/{pid}/ns/{kind}");
                    File::open(&path).with_context(|| format!("cannot open {path}"))
                };
                let net = open("net").map_err(fail)?;
                let mut others = Vec::new();
                for (kind, flag) in [
                    ("uts", libc::CLONE_NEWUTS),
                    ("ipc", libc::CLONE_NEWIPC),
                    ("mnt", libc::CLONE_NEWNS),
                ] {
                    others.push((open(kind).map_err(fail)?, flag));
                }
                (net, others)
            }
            AttachTo::Netns(path) => {
                let net = File::open(path)
                    .with_context(|| format!("cannot open {path}"))
                    .map_err(fail)?;
                (net, Vec::new())
            }
        };
        let ns = VehicleNs {
            vehicle: vehicle.to_owned(),
            what: what.clone(),
            net,
            others,
        };
        ns.not_the_runs_own().map_err(fail)?;
        Ok(ns)
    }

    /// An error if this is not a network namespace, or is the run's own (the host's: a
    /// container with `--network host`) or one a run created (`ncs-*`).
    fn not_the_runs_own(&self) -> anyhow::Result<()> {
        let id = inode(&self.net)?;
        // Safety: ioctl NS_GET_NSTYPE takes no argument; a file that is no namespace is an error.
        let kind = unsafe { libc::ioctl(self.net.as_raw_fd(), NS_GET_NSTYPE) };
        if kind != libc::CLONE_NEWNET {
            bail!("is not a network namespace");
        }
        let host = File::open("/proc/self/ns/net").and_then(|f| inode(&f))?;
        if id == host {
            bail!("is the host's network namespace (the run's own): the run would route the host's traffic through its TUN (a container needs a network of its own, e.g. --network none)");
        }
        for ns in list() {
            if let Ok(m) = std::fs::metadata(Path::new(NETNS_DIR).join(&ns)) {
                if (m.dev(), m.ino()) == id {
                    bail!("is {ns}, a namespace a run created and removes");
                }
            }
        }
        Ok(())
    }

    /// Whether both hold the same namespace.
    fn same_as(&self, other: &VehicleNs) -> bool {
        matches!((inode(&self.net), inode(&other.net)), (Ok(a), Ok(b)) if a == b)
    }

    fn try_clone(&self) -> anyhow::Result<VehicleNs> {
        let mut others = Vec::new();
        for (f, flag) in &self.others {
            others.push((f.try_clone()?, *flag));
        }
        Ok(VehicleNs {
            vehicle: self.vehicle.clone(),
            what: self.what.clone(),
            net: self.net.try_clone()?,
            others,
        })
    }

    /// The vehicle's name.
    pub fn vehicle(&self) -> &str {
        &self.vehicle
    }

    /// The namespace in words: `namespace ncs-auv1`, `container v1 (podman)`,
    /// `namespace /run/netns/lab`.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// Makes `cmd` enter this namespace in the child, right before exec (with a container's,
    /// its file system too, where it starts in `/`); its environment is kept. `self` must stay
    /// open until `cmd` has been spawned.
    pub fn enter_on_exec(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        let mut fds = vec![(self.net.as_raw_fd(), libc::CLONE_NEWNET)];
        fds.extend(self.others.iter().map(|(f, flag)| (f.as_raw_fd(), *flag)));
        // Safety: setns is async-signal-safe and `fds` is not touched but read; it runs in the
        // child right before exec.
        unsafe {
            cmd.pre_exec(move || {
                for &(fd, flag) in &fds {
                    if libc::setns(fd, flag) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

/// `ioctl` asking a namespace file its type (`_IO(0xb7, 0x3)`).
const NS_GET_NSTYPE: libc::c_ulong = 0xb703;

/// (device, inode) of a namespace file: a namespace's identity.
fn inode(f: &File) -> std::io::Result<(u64, u64)> {
    let m = f.metadata()?;
    Ok((m.dev(), m.ino()))
}

/// The process of a running container (`<engine> container inspect -f '{{.State.Pid}}'`).
fn container_pid(engine: &str, name: &str) -> anyhow::Result<u32> {
    let out = Command::new(engine)
        .args(["container", "inspect", "-f", "{{.State.Pid}}", name])
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {engine} (is it installed?)"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!("{engine} container inspect {name} failed: {}", line.trim());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().parse::<u32>() {
        Ok(0) => bail!("is not running"),
        Ok(pid) => Ok(pid),
        Err(_) => bail!(
            "{engine} container inspect {name} gave no process id (got {:?})",
            text.trim()
        ),
    }
}

/// Runs `ip` with `args` inside `ns`; an error names the namespace, the command and its stderr.
pub fn ip_in(ns: &VehicleNs, args: &[&str]) -> anyhow::Result<()> {
    ip_output(ns, args).map(|_| ())
}

/// What `ip` with `args` prints inside `ns`; an error names the namespace, the command and
/// its stderr.
pub fn ip_output(ns: &VehicleNs, args: &[&str]) -> anyhow::Result<String> {
    let mut cmd = Command::new("ip");
    cmd.args(args).stdin(std::process::Stdio::null());
    // Only the network namespace: `ip` stays the host's.
    let fd = ns.net.as_raw_fd();
    // Safety: setns is async-signal-safe; it runs in the child right before exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().context("cannot run ip (install iproute2)")?;
    if !out.status.success() {
        bail!(
            "ip {} in {} failed: {}",
            args.join(" "),
            ns.what,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `f` on a fresh thread inside `ns`'s network namespace (the caller's threads stay
/// where they are).
pub fn run_in<T: Send>(
    ns: &VehicleNs,
    f: impl FnOnce() -> std::io::Result<T> + Send,
) -> std::io::Result<T> {
    let fd = ns.net.as_raw_fd();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                // Safety: setns moves only this thread, which ends with `f`.
                if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                f()
            })
            .join()
            .map_err(|_| std::io::Error::other("namespace thread panicked"))?
    })
}

/// The namespace `vehicle`'s programs run in: the one it attaches to (`attach`), or else
/// `ncs-<vehicle>`.
pub fn for_vehicle(vehicle: &str, attach: Option<&Attach>) -> anyhow::Result<VehicleNs> {
    match attach {
        Some(a) => VehicleNs::attach(vehicle, a),
        None => VehicleNs::created(vehicle),
    }
}

/// Replaces this process with `command` running in `vehicle`'s namespace (the one it
/// attaches to, with `attach`; in a container, runs it as a child and exits with its exit
/// code), `env` added to its environment; returns only on error.
pub fn exec_in(
    vehicle: &str,
    attach: Option<&Attach>,
    env: &[(String, String)],
    command: &[String],
) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    let ns = ns_name(vehicle);
    if attach.is_none() && !Path::new(NETNS_DIR).join(&ns).exists() {
        if unsafe { libc::geteuid() } != 0 {
            return anyhow::anyhow!(
                "no namespace {ns} here: cosim exec joins the namespaces of a run as root; a run without root keeps them to itself (start the command as one of its scenario's programs)"
            );
        }
        let running: Vec<String> = list()
            .iter()
            .filter_map(|n| n.strip_prefix(PREFIX).map(str::to_owned))
            .collect();
        return anyhow::anyhow!(
            "no namespace {ns}: is a run with network.capture: tun and vehicle {vehicle:?} active? ({})",
            if running.is_empty() {
                "no run's vehicle has a namespace here now".to_owned()
            } else {
                format!("vehicles with a namespace here now: {}", running.join(", "))
            }
        );
    }
    let Some((prog, args)) = command.split_first() else {
        return anyhow::anyhow!("no command given");
    };
    let ns = match for_vehicle(vehicle, attach) {
        Ok(ns) => ns,
        Err(e) => return e,
    };
    let mut cmd = Command::new(prog);
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
    ns.enter_on_exec(&mut cmd);
    if ns.others.is_empty() {
        let err = cmd.exec();
        return anyhow::anyhow!("cannot run {prog} in {}: {err}", ns.what);
    }
    // A mount namespace takes only a process whose file system information no other thread
    // shares: a child (this process has threads) enters it, and its exit is this one's.
    match cmd.status() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            std::process::exit(
                status
                    .code()
                    .or(status.signal().map(|s| 128 + s))
                    .unwrap_or(1),
            )
        }
        Err(err) => anyhow::anyhow!("cannot run {prog} in {}: {err}", ns.what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader beside the writer sees an owner file whole or not at all (`std::fs::write`
    /// truncates first: a reader there finds it empty, and would take its owner for dead).
    #[test]
    fn an_owner_file_is_never_seen_half_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ncs-x.owner");
        let text = format!("{} 123456789", std::process::id());
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (path, text, stop) = (path.clone(), text.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(got) = std::fs::read_to_string(&path) {
                        assert_eq!(got, text, "read {seen} whole ones before");
                        seen += 1;
                    }
                }
                seen
            })
        };
        for _ in 0..20_000 {
            write_whole(&path, &text).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
    }
}
