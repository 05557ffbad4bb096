//! Live capture without root: the run moves into a user namespace of its own, where it is root
//! over the vehicles' namespaces and TUN devices and nothing else.
//!
//! [`enter`] is called first thing in `main`, while the process has one thread (the kernel
//! refuses a user namespace to a threaded process). It makes a user namespace that maps the
//! caller's uid and gid to root, a mount namespace and a PID namespace, then forks: the child is
//! the run, init of the PID namespace, in the host's network namespace (so the host's loopback,
//! the modem bridges and every peer stay where they are); the parent waits for it and passes on
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT. In the mount namespace the run sees a `/proc` of its own
//! and a `/run` of its own (a tmpfs holding the host's entries bound back, with empty
//! `/run/netns` and `/run/netsim_cosim`), so that namespaces get their usual names.
//!
//! Nothing outlives the run: the child dies with the parent (`PR_SET_PDEATHSIG`), every process
//! of the PID namespace (the vehicle programs) dies with the child, even on SIGKILL, and the
//! namespaces and TUN devices go with the last process that uses them.
//!
//! Where the kernel refuses a user namespace, [`Refusal`] is one line naming the setting that
//! refused it and the command that changes it.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// What [`enter`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Entered {
    /// The process is root already: nothing changed.
    AlreadyRoot,
    /// This process is the run inside its user namespace (root there).
    Inside,
}

/// The kernel refused the user namespace: the one-line explanation.
#[derive(Debug)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

static REFUSED: std::sync::OnceLock<Refusal> = std::sync::OnceLock::new();

/// Keeps `refusal` for [`refused`]: the process goes on without a user namespace.
pub fn remember(refusal: Refusal) {
    let _ = REFUSED.set(refusal);
}

/// Why this process has no user namespace of its own, if [`enter`] was refused.
pub fn refused() -> Option<&'static Refusal> {
    REFUSED.get()
}

/// Whether this process runs inside a user namespace [`enter`] made (or one like it: its uid 0
/// is not the host's root).
pub fn inside() -> bool {
    std::fs::read_to_string("/proc/self/uid_map")
        .map(|m| !is_initial_map(&m))
        .unwrap_or(false)
}

/// The initial user namespace maps every uid to itself: `0 0 4294967295`.
fn is_initial_map(map: &str) -> bool {
    let fields: Vec<&str> = map.split_whitespace().collect();
    fields == ["0", "0", "4294967295"]
}

/// Runs the rest of this process as root of a user namespace of its own when it is not root
/// (see the module docs). Returns in the run (the child); the parent process never returns: it
/// exits with the run's status. Call it before any thread starts.
pub fn enter() -> Result<Entered, Refusal> {
    // SAFETY: plain system calls on this process.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return Ok(Entered::AlreadyRoot);
    }
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) } != 0 {
        return Err(refusal(io::Error::last_os_error()));
    }
    map_ids(uid, gid).map_err(|e| {
        Refusal(format!(
            "live capture without root: cannot map uid {uid} to root in the run's user namespace: {e}"
        ))
    })?;
    // The parent holds the write end until it exits: the child tells a parent gone by its end.
    let mut alive = [0 as libc::c_int; 2];
    if unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Refusal(format!(
            "live capture without root: cannot start the run: {}",
            io::Error::last_os_error()
        )));
    }
    // Signals the parent passes on wait in its mask instead of being delivered.
    let forwarded = signal_set(&[
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGCHLD,
    ]);
    let mut old = unsafe { std::mem::zeroed::<libc::sigset_t>() };
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &forwarded, &mut old) };
    match unsafe { libc::fork() } {
        -1 => Err(Refusal(format!(
            "live capture without root: cannot start the run in its PID namespace: {}",
            io::Error::last_os_error()
        ))),
        0 => {
            unsafe { libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
            // The run dies with the parent; if the parent is already gone, it stops here.
            unsafe { libc::close(alive[1]) };
            let mut end = libc::pollfd {
                fd: alive[0],
                events: libc::POLLIN,
                revents: 0,
            };
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0
                || unsafe { libc::poll(&mut end, 1, 0) } != 0
            {
                std::process::exit(1);
            }
            unsafe { libc::close(alive[0]) };
            // Its own process group: a terminal's Ctrl-C reaches the parent, which passes it
            // on once.
            unsafe { libc::setpgid(0, 0) };
            if let Err(e) = private_mounts() {
                eprintln!("error: live capture without root: {e}");
                std::process::exit(1);
            }
            Ok(Entered::Inside)
        }
        child => {
            unsafe { libc::close(alive[0]) };
            wait_and_exit(child, &forwarded)
        }
    }
}

/// The one line for an `unshare(CLONE_NEWUSER)` that failed with `e`.
fn refusal(e: io::Error) -> Refusal {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    let head =
        "live capture without root needs an unprivileged user namespace, which this kernel refuses";
    let tail = "or run as root";
    let setting = |key: &str, value: &str, wanted: &str| {
        format!("{head} ({key} = {value}): allow them with `sudo sysctl -w {key}={wanted}`, {tail}")
    };
    let line = match e.raw_os_error() {
        Some(libc::ENOSPC) => {
            let key = "user.max_user_namespaces";
            match read("/proc/sys/user/max_user_namespaces").as_deref() {
                Some("0") => setting(key, "0", "15000"),
                _ => format!("{head} ({key} is used up, here or in an enclosing namespace): raise it with `sudo sysctl -w {key}=15000`, {tail}"),
            }
        }
        Some(libc::EPERM) => {
            if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref()
                == Some("1")
            {
                setting("kernel.apparmor_restrict_unprivileged_userns", "1", "0")
            } else if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
                setting("kernel.unprivileged_userns_clone", "0", "1")
            } else {
                format!(
                    "{head} (unshare: {e}; a container or a seccomp filter may forbid it), {tail}"
                )
            }
        }
        _ => format!("{head} (unshare: {e}), {tail}"),
    };
    Refusal(line)
}

/// Maps `uid` and `gid` to 0 in this process's fresh user namespace (an unprivileged process
/// may map only its own ids, and only after giving up `setgroups`).
fn map_ids(uid: libc::uid_t, gid: libc::gid_t) -> io::Result<()> {
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("0 {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    Ok(())
}

fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// The parent: passes signals on to the run until it ends, then exits as it did.
fn wait_and_exit(child: libc::pid_t, set: &libc::sigset_t) -> ! {
    loop {
        let mut status = 0;
        match unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) } {
            0 => {}
            pid if pid == child => {
                let code = if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else if libc::WIFSIGNALED(status) {
                    128 + libc::WTERMSIG(status)
                } else {
                    1
                };
                std::process::exit(code);
            }
            _ => std::process::exit(1),
        }
        let mut sig = 0;
        // SAFETY: `set` is initialised; sigwait stores the signal taken.
        if unsafe { libc::sigwait(set, &mut sig) } == 0 && sig != libc::SIGCHLD {
            unsafe { libc::kill(child, sig) };
        }
    }
}

/// The run's own view of the file system: mounts private, `/proc` of its PID namespace, `/run`
/// of its own with the host's entries bound back.
fn private_mounts() -> io::Result<()> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE)
        .map_err(|e| ctx("make / private", e))?;
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    )
    .map_err(|e| ctx("mount /proc", e))?;
    let old = std::fs::File::open("/run").map_err(|e| ctx("open /run", e))?;
    let entries: Vec<_> = std::fs::read_dir("/run")
        .map_err(|e| ctx("read /run", e))?
        .flatten()
        .collect();
    mount(
        Some("tmpfs"),
        "/run",
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
    )
    .map_err(|e| ctx("mount a tmpfs on /run", e))?;
    let fd = old.as_raw_fd();
    for e in entries {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name == "netns" || name == "netsim_cosim" {
            continue;
        }
        let from = format!("/proc/self/fd/{fd}/{name}");
        let to = Path::new("/run").join(&*name);
        let Ok(kind) = e.file_type() else { continue };
        // What cannot be bound back stays out of the run's view (and is said in the log).
        let bound = if kind.is_symlink() {
            std::fs::read_link(&from).and_then(|t| std::os::unix::fs::symlink(t, &to))
        } else {
            let made = if kind.is_dir() {
                std::fs::create_dir(&to)
            } else {
                std::fs::File::create(&to).map(drop)
            };
            made.and_then(|()| {
                mount(
                    Some(&from),
                    &to.to_string_lossy(),
                    None,
                    libc::MS_BIND | libc::MS_REC,
                )
            })
        };
        if let Err(err) = bound {
            tracing::debug!("/run/{name} is not in the run's view: {err}");
        }
    }
    drop(old);
    for dir in ["/run/netns", "/run/netsim_cosim"] {
        std::fs::create_dir(dir).map_err(|e| ctx(dir, e))?;
    }
    Ok(())
}

fn ctx(what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput));
    let source = source.map(c).transpose()?;
    let target = c(target)?;
    let fstype = fstype.map(c).transpose()?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: NUL-terminated strings that live across the call; no data argument.
    if unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initial_map_is_told_from_a_run_s_own() {
        assert!(is_initial_map("         0          0 4294967295\n"));
        assert!(!is_initial_map("         0       1000          1\n"));
        assert!(!is_initial_map(""));
    }

    #[test]
    fn each_refusal_names_its_setting_and_the_command() {
        let r = refusal(io::Error::from_raw_os_error(libc::ENOSPC)).0;
        assert!(
            r.contains("user.max_user_namespaces")
                && r.contains("`sudo sysctl -w user.max_user_namespaces=15000`"),
            "{r}"
        );
        assert!(!r.contains('\n'), "{r}");
        let r = refusal(io::Error::from_raw_os_error(libc::EINVAL)).0;
        assert!(r.ends_with("or run as root"), "{r}");
    }
}
