//! One network namespace per vehicle (`ncs-<vehicle>`), created and removed by the network
//! coordinator, with crash-safe ownership: before a namespace is created its owner is written
//! to `/run/netsim_cosim/<namespace>.owner` (pid and process start time). A later start removes
//! every `ncs-*` namespace whose owner is dead (or unrecorded); a live owner's namespace is an
//! error ("already in use"), never touched.

use anyhow::{bail, Context};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const STATE_DIR: &str = "/run/netsim_cosim";
pub const NETNS_DIR: &str = "/run/netns";
pub const PREFIX: &str = "ncs-";

/// The namespace of a vehicle.
pub fn ns_name(vehicle: &str) -> String {
    format!("{PREFIX}{vehicle}")
}

fn owner_file(ns: &str) -> PathBuf {
    Path::new(STATE_DIR).join(format!("{ns}.owner"))
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
/// owner files without a namespace. Returns the namespaces removed.
pub fn clean_stale() -> Vec<String> {
    let mut removed = Vec::new();
    for ns in list() {
        if owner_alive(&ns).is_none() {
            if ip(&["netns", "del", &ns]).is_ok() {
                removed.push(ns.clone());
            }
            let _ = std::fs::remove_file(owner_file(&ns));
        }
    }
    if let Ok(d) = std::fs::read_dir(STATE_DIR) {
        for e in d.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(ns) = name.strip_suffix(".owner") {
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

/// The vehicles' namespaces for the lifetime of this value; dropping it removes them.
#[derive(Debug)]
pub struct Namespaces {
    names: Vec<String>,
}

impl Namespaces {
    /// Cleans up dead runs' leftovers, then creates one namespace per vehicle with `lo` up.
    pub fn create<S: AsRef<str>>(vehicles: &[S]) -> anyhow::Result<Namespaces> {
        if unsafe { libc::geteuid() } != 0 {
            if let Some(refusal) = super::userns::refused() {
                bail!("{refusal}");
            }
            bail!("live capture (network.capture: tun) creates network namespaces and TUN devices: it needs root, or `cosim run`, which runs in a user namespace of its own without root");
        }
        std::fs::create_dir_all(STATE_DIR).with_context(|| format!("cannot create {STATE_DIR}"))?;
        clean_stale();
        let mut made = Namespaces { names: Vec::new() };
        for v in vehicles {
            let ns = ns_name(v.as_ref());
            if let Some(pid) = owner_alive(&ns) {
                bail!("network namespace {ns} is in use by a running process (pid {pid}); is another run with vehicle {:?} active?", v.as_ref());
            }
            std::fs::write(owner_file(&ns), me())?;
            made.names.push(ns.clone());
            if super::userns::inside() {
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

    /// Removes every namespace (idempotent).
    pub fn remove_all(&mut self) {
        for ns in self.names.drain(..) {
            if let Err(e) = ip(&["netns", "del", &ns]) {
                if Path::new(NETNS_DIR).join(&ns).exists() {
                    tracing::warn!("{e:#}");
                }
            }
            let _ = std::fs::remove_file(owner_file(&ns));
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        self.remove_all();
    }
}

/// `ip netns add ns` for a run in its own user namespace ([`super::userns`]), where `ip` fails
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

/// Moves the calling thread into the network namespace `ns`.
pub fn enter(ns: &str) -> std::io::Result<()> {
    let f = std::fs::File::open(Path::new(NETNS_DIR).join(ns))?;
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Runs `f` on a fresh thread inside namespace `ns` (the caller's threads stay where they are).
pub fn run_in<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let ns = ns.to_owned();
    std::thread::spawn(move || {
        enter(&ns)?;
        f()
    })
    .join()
    .map_err(|_| std::io::Error::other("namespace thread panicked"))?
}

/// Makes `cmd` enter `vehicle`'s namespace in the child, right before exec (its environment
/// and working directory are kept). The returned file is the namespace's: keep it open until
/// `cmd` has been spawned.
pub fn enter_on_exec(cmd: &mut Command, vehicle: &str) -> anyhow::Result<std::fs::File> {
    use std::os::unix::process::CommandExt;
    let path = Path::new(NETNS_DIR).join(ns_name(vehicle));
    let file = std::fs::File::open(&path)
        .with_context(|| format!("cannot open the namespace {}", path.display()))?;
    let fd = file.as_raw_fd();
    // Safety: setns is async-signal-safe; it runs in the child right before exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(file)
}

/// Replaces this process with `command` running in `vehicle`'s namespace; returns only on error.
pub fn exec_in(vehicle: &str, command: &[String]) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    let ns = ns_name(vehicle);
    if !Path::new(NETNS_DIR).join(&ns).exists() {
        if unsafe { libc::geteuid() } != 0 {
            return anyhow::anyhow!(
                "no namespace {ns} here: cosim exec joins the namespaces of a run as root; a run without root keeps them to itself (start the command as one of its scenario's programs)"
            );
        }
        return anyhow::anyhow!(
            "no namespace {ns}: is a run with network.capture: tun and vehicle {vehicle:?} active?"
        );
    }
    let Some((prog, args)) = command.split_first() else {
        return anyhow::anyhow!("no command given");
    };
    let mut cmd = Command::new(prog);
    cmd.args(args);
    let _namespace = match enter_on_exec(&mut cmd, vehicle) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let err = cmd.exec();
    anyhow::anyhow!("cannot run {prog} in {ns}: {err}")
}
