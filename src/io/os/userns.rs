//! Live capture without root: the run moves into a user namespace of its own, where it is root
//! over the vehicles' namespaces and TUN devices and nothing else.
//!
//! [`enter`] is called first thing in `main`. A forked child makes a user namespace that maps
//! the caller's uid and gid to root, a mount namespace and a PID namespace, and forks the run:
//! this program again (`execve`, with a mark in its environment), init of the PID namespace, in
//! the host's network namespace (so the host's loopback, the modem bridges and every peer stay
//! where they are). The process the user started waits for it through the child and passes on
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT. In the mount namespace the run sees a `/proc` of its own
//! and a `/run` of its own (a tmpfs holding the host's entries bound back, with empty
//! `/run/netns` and `/run/netsim_cosim`), so that namespaces get their usual names.
//!
//! Nothing outlives the run: each process dies with its parent (`PR_SET_PDEATHSIG`), every
//! process of the PID namespace (the vehicle programs) dies with the run, even on SIGKILL, and
//! the namespaces and TUN devices go with the last process that uses them.
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

/// Set in the environment of the run's own process image ([`enter`]).
const THE_RUN: &str = "NETSIM_COSIM_USERNS_RUN";

/// Whether this process is the run [`enter`] started: init of its PID namespace, root of its
/// user namespace, with the mark in its environment.
pub fn is_the_run() -> bool {
    std::env::var_os(THE_RUN).is_some() && unsafe { libc::getpid() } == 1 && inside()
}

/// Runs this program again as root of a user namespace of its own when it is not root (see
/// the module docs). In the process the user started, it returns only if the kernel refuses
/// (the [`Refusal`]); otherwise that process waits for the run and exits as it does. In the
/// run, it makes the run's view of the file system and returns [`Entered::Inside`].
///
/// The process may have threads (some libraries start them before `main`): the user namespace
/// is made in a forked child, which starts the run with `execve` of this program.
pub fn enter() -> Result<Entered, Refusal> {
    if is_the_run() {
        std::env::remove_var(THE_RUN);
        private_mounts().map_err(|e| Refusal(format!("live capture without root: {e}")))?;
        return Ok(Entered::Inside);
    }
    // SAFETY: plain system calls on this process.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return Ok(Entered::AlreadyRoot);
    }
    let plan = Plan::new(uid, gid).map_err(|e| {
        Refusal(format!(
            "live capture without root: cannot start the run: {e}"
        ))
    })?;
    // The children write (step, errno) here if a step fails; the end closes on `execve`.
    let mut report = [0 as libc::c_int; 2];
    if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Refusal(format!(
            "live capture without root: cannot start the run: {}",
            io::Error::last_os_error()
        )));
    }
    let me = unsafe { libc::getpid() };
    match unsafe { libc::fork() } {
        -1 => Err(Refusal(format!(
            "live capture without root: cannot start the run: {}",
            io::Error::last_os_error()
        ))),
        0 => {
            unsafe { libc::close(report[0]) };
            middle(&plan, me, report[1])
        }
        child => {
            unsafe { libc::close(report[1]) };
            let mut buf = [0u8; 8];
            let mut got = 0;
            while got < buf.len() {
                let n = unsafe {
                    libc::read(report[0], buf[got..].as_mut_ptr().cast(), buf.len() - got)
                };
                if n > 0 {
                    got += n as usize;
                } else if n == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted
                {
                    break;
                }
            }
            unsafe { libc::close(report[0]) };
            if got == buf.len() {
                let step = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
                let errno = i32::from_ne_bytes([buf[4], buf[5], buf[6], buf[7]]);
                let mut status = 0;
                unsafe { libc::waitpid(child, &mut status, 0) };
                let e = io::Error::from_raw_os_error(errno);
                return Err(match step {
                    UNSHARE => refusal(e),
                    MAP => Refusal(format!("live capture without root: cannot map uid {uid} to root in the run's user namespace: {e}")),
                    _ => Refusal(format!("live capture without root: cannot start the run in its namespaces: {e}")),
                });
            }
            forward_signals_to(child);
            wait_and_exit(child)
        }
    }
}

/// What the forked children need, made before the fork: after it they only make system calls.
struct Plan {
    exe: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    uid_map: CString,
    gid_map: CString,
}

impl Plan {
    fn new(uid: libc::uid_t, gid: libc::gid_t) -> io::Result<Plan> {
        use std::os::unix::ffi::OsStrExt;
        let c =
            |b: &[u8]| CString::new(b).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput));
        let exe = c(std::env::current_exe()?.as_os_str().as_bytes())?;
        let argv = std::env::args_os()
            .map(|a| c(a.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let mut envp = Vec::new();
        for (k, v) in std::env::vars_os() {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            envp.push(c(&kv)?);
        }
        envp.push(c(format!("{THE_RUN}=1").as_bytes())?);
        Ok(Plan {
            exe,
            argv,
            envp,
            uid_map: c(format!("0 {uid} 1").as_bytes())?,
            gid_map: c(format!("0 {gid} 1").as_bytes())?,
        })
    }
}

/// The steps a child reports failing.
const UNSHARE: i32 = 1;
const MAP: i32 = 2;
const START: i32 = 3;

/// In a forked child: only system calls from here (the parent may have had threads).
fn fail(report: libc::c_int, step: i32) -> ! {
    let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let mut buf = [0u8; 8];
    buf[..4].copy_from_slice(&step.to_ne_bytes());
    buf[4..].copy_from_slice(&errno.to_ne_bytes());
    unsafe {
        libc::write(report, buf.as_ptr().cast(), buf.len());
        libc::_exit(1)
    }
}

fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> bool {
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let bytes = text.to_bytes();
        let ok = libc::write(fd, bytes.as_ptr().cast(), bytes.len()) == bytes.len() as isize;
        libc::close(fd);
        ok
    }
}

/// The first child: makes the namespaces, starts the run in them and waits for it. Dies with
/// `parent`.
fn middle(plan: &Plan, parent: libc::pid_t, report: libc::c_int) -> ! {
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent {
            libc::_exit(1);
        }
        // Out of the terminal's process group: a Ctrl-C reaches the process the user started,
        // which passes it on once.
        libc::setpgid(0, 0);
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) != 0 {
            fail(report, UNSHARE);
        }
        if !write_file(c"/proc/self/setgroups", c"deny")
            || !write_file(c"/proc/self/uid_map", &plan.uid_map)
            || !write_file(c"/proc/self/gid_map", &plan.gid_map)
        {
            fail(report, MAP);
        }
        // The run tells this process gone (before it could ask to die with it) by this pipe's end.
        let mut alive = [0 as libc::c_int; 2];
        if libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            fail(report, START);
        }
        match libc::fork() {
            -1 => fail(report, START),
            0 => {
                libc::close(alive[1]);
                let mut end = libc::pollfd {
                    fd: alive[0],
                    events: libc::POLLIN,
                    revents: 0,
                };
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
                    || libc::poll(&mut end, 1, 0) != 0
                {
                    libc::_exit(1);
                }
                let mut argv: Vec<*const libc::c_char> =
                    plan.argv.iter().map(|a| a.as_ptr()).collect();
                argv.push(std::ptr::null());
                let mut envp: Vec<*const libc::c_char> =
                    plan.envp.iter().map(|e| e.as_ptr()).collect();
                envp.push(std::ptr::null());
                libc::execve(plan.exe.as_ptr(), argv.as_ptr(), envp.as_ptr());
                fail(report, START)
            }
            run => {
                libc::close(alive[0]);
                libc::close(report);
                forward_signals_to(run);
                wait_and_exit(run)
            }
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

/// The child signals go to ([`forward_signals_to`]).
static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn pass_on(signal: libc::c_int) {
    let child = CHILD.load(std::sync::atomic::Ordering::Relaxed);
    if child > 0 {
        unsafe { libc::kill(child, signal) };
    }
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT to this process go to `child` instead.
fn forward_signals_to(child: libc::pid_t) {
    CHILD.store(child, std::sync::atomic::Ordering::Relaxed);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: the handler only calls kill, which is async-signal-safe.
        unsafe {
            let mut action = std::mem::zeroed::<libc::sigaction>();
            action.sa_sigaction = pass_on as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Waits for `child` and exits as it did (a signal that ended it: 128 + its number).
fn wait_and_exit(child: libc::pid_t) -> ! {
    loop {
        let mut status = 0;
        let pid = unsafe { libc::waitpid(child, &mut status, 0) };
        if pid == child {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                continue;
            };
            unsafe { libc::_exit(code) };
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            unsafe { libc::_exit(1) };
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
