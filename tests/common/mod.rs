//! What the test crates (`tests/offline/`, `tests/live/`, `tests/ros/`) share: root and tools
//! checked, throughput measured, processes watched and killed; a simulated LAN of network
//! namespaces ([`lan`]); the phases of a link read back from a run's record ([`phases`]); the
//! BELLHOP cases ([`bellhop_case`]); a client of the live view ([`viewer_client`]).

pub mod bellhop_case;
pub mod lan;
pub mod phases;
pub mod viewer_client;

/// Checks for root, and runs the tests that use network namespaces one at a time within their
/// test crate, whichever of its modules they are in: each paces windows to the wall clock (two
/// at once on a 2-core machine would measure each other), and the same vehicle names cannot run
/// twice at once. A failed test poisons nothing: the guard is taken again.
#[must_use = "the tests run one at a time while the guard lives"]
#[allow(dead_code)]
pub fn require_root() -> std::sync::MutexGuard<'static, ()> {
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test creates network namespaces and TUN devices: run it as root"
    );
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Has `cmd` (run as root) start in a network namespace of its own, its loopback up: the
/// scenarios the project ships listen on their documented ports (the NETSIM manager on 61999,
/// the modems from 62000), which another program on the machine may hold. In a namespace of
/// its own a run has every port free; the vehicles' namespaces it creates are its own either
/// way, and its files and processes are the machine's as before.
#[allow(dead_code)]
pub fn on_own_loopback(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only system calls (unshare, socket, ioctl, close), no
    // allocation or lock.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut req: libc::ifreq = std::mem::zeroed();
            req.ifr_name[..2].copy_from_slice(&[b'l' as libc::c_char, b'o' as libc::c_char]);
            let up = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0 && {
                req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
                libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) == 0
            };
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if up {
                Ok(())
            } else {
                Err(err)
            }
        })
    }
}

/// `podman` with runc (Debian's podman defaults to crun, which refuses this machine's hybrid
/// cgroups).
#[allow(dead_code)]
pub fn podman() -> std::process::Command {
    let mut c = std::process::Command::new("podman");
    c.args(["--runtime", "runc"]);
    c
}

/// The limits a container gets here: podman's default nofile limit is refused (20000 is this
/// machine's hard limit).
#[allow(dead_code)]
pub const PODMAN_LIMITS: [&str; 4] = [
    "--ulimit",
    "nofile=20000:20000",
    "--ulimit",
    "nproc=4096:4096",
];

/// A finished process's exit status, stdout and stderr, for an assertion's message.
#[allow(dead_code)]
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The `summary.json` in run folder `dir` without what the wall clock decides: the run's wall
/// time and speed, each stage's time, the record queue's waits, the lateness figures, and the
/// output folder (what two runs of one scenario and seed may differ in).
#[allow(dead_code)]
pub fn summary_without_wall_clock(dir: &std::path::Path) -> serde_json::Value {
    let mut s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let m = s.as_object_mut().unwrap();
    for wall in [
        "wall_seconds",
        "started_unix_s",
        "windows_per_second",
        "stages",
        "record_queue",
        "late_windows",
        "max_late_ms",
        "slipped_seconds",
        "record",
    ] {
        m.remove(wall);
    }
    s
}

/// Fails unless every one of `tools` is on the PATH, naming the set-up that installs it
/// (`setup`: e.g. "scripts/setup --test").
#[allow(dead_code)]
pub fn require_tools(tools: &[&str], setup: &str) {
    for tool in tools {
        assert!(
            std::process::Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .status()
                .unwrap()
                .success(),
            "{tool} is missing: {setup}"
        );
    }
}

/// Mbit/s delivered from `src` to `dst` by the copies in `packets` (a run record's) delivered in
/// [from_s, to_s).
#[allow(dead_code)]
pub fn mbps(
    packets: &[netsim_cosim::output::schema::PacketRecord],
    src: &str,
    dst: &str,
    from_s: f64,
    to_s: f64,
) -> f64 {
    use netsim_cosim::output::schema::Outcome;
    let bytes: u64 = packets
        .iter()
        .filter(|p| {
            p.src == src
                && p.dst.as_deref() == Some(dst)
                && p.outcome == Outcome::Delivered
                && p.end_s >= from_s
                && p.end_s < to_s
        })
        .map(|p| u64::from(p.bytes))
        .sum();
    bytes as f64 * 8.0 / (to_s - from_s) / 1e6
}

/// Whether a paced run kept up with the wall clock, from its summary: nothing slipped and at
/// most 1 % of its windows opened late. `Err` says what the run reported instead.
///
/// A figure that depends on the machine's speed (a throughput's floor, a wall-clock delay's
/// ceiling) is a test's to assert only when the run kept up: a run that fell behind says so in
/// its summary, and what it delivered late is the machine's, not the model's. The tests print
/// such figures either way; the benchmarks measure them.
#[allow(dead_code)]
pub fn kept_pace(summary: &serde_json::Value) -> Result<(), String> {
    let windows = summary["windows"].as_u64().unwrap_or(0);
    let late = summary["late_windows"].as_u64().unwrap_or(u64::MAX);
    let slipped = summary["slipped_seconds"].as_f64().unwrap_or(f64::INFINITY);
    if slipped == 0.0 && late.saturating_mul(100) <= windows {
        Ok(())
    } else {
        Err(format!(
            "the run fell behind the wall clock: {late} of {windows} windows late (at most {} ms), \
             {slipped} s slipped",
            summary["max_late_ms"]
        ))
    }
}

/// Asserts `ok` when the run whose summary is `summary` kept up with the wall clock
/// ([`kept_pace`]); otherwise prints why the machine-dependent check `what` was not asserted.
#[allow(dead_code)]
#[track_caller]
pub fn assert_if_kept_pace(summary: &serde_json::Value, ok: bool, what: &str) {
    match kept_pace(summary) {
        Ok(()) => assert!(ok, "{what}"),
        Err(why) if !ok => println!("not asserted, {why}: {what}"),
        Err(_) => {}
    }
}

/// Whether process `pid` (a number, or its text as a pid file holds it) exists and is no zombie.
#[allow(dead_code)]
pub fn alive(pid: impl std::fmt::Display) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.to_string().trim()))
        .unwrap_or_default();
    stat.rsplit_once(") ")
        .is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// Children are killed when the test ends, whatever happens.
#[allow(dead_code)]
pub struct Procs(pub Vec<std::process::Child>);
impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A command running `program` as the user `nobody` (uid 65534), as a user without root runs
/// it, in a private mount namespace where the directories on the way to `needed` that other
/// users may not search (`/root` holding the build tree, or the Python of the build
/// environment) are searchable: each is covered by a tmpfs holding its own entries bound back.
/// The machine's directories are untouched; `keep` (an empty folder) holds the originals'
/// view while the command runs. Arguments added to the command go to `program`.
#[allow(dead_code)]
pub fn as_nobody(
    program: &std::path::Path,
    needed: &[std::path::PathBuf],
    keep: &std::path::Path,
) -> std::process::Command {
    use std::os::unix::fs::PermissionsExt;
    let mut blocked: Vec<std::path::PathBuf> = Vec::new();
    for path in needed {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        for dir in path.ancestors().skip(1) {
            let mode = std::fs::metadata(dir).map(|m| m.permissions().mode());
            if mode.is_ok_and(|m| m & 0o001 == 0) && !blocked.iter().any(|b| b == dir) {
                blocked.push(dir.to_path_buf());
            }
        }
    }
    blocked.sort_by_key(|d| d.components().count());
    // The build environment's LD_PRELOAD may be under a directory being covered: set aside
    // while the mounts are made.
    let script = r#"set -e
preload=${LD_PRELOAD-}; unset LD_PRELOAD
keep=$1; shift
while [ "$1" != -- ]; do
  d=$1; shift
  mkdir -p "$keep$d"; mount --rbind "$d" "$keep$d"
  mount -t tmpfs -o mode=755 tmpfs "$d"
  for e in "$keep$d"/* "$keep$d"/.[!.]* "$keep$d"/..?*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    n=${e##*/}
    if [ -L "$e" ]; then cp -P "$e" "$d/$n"; continue; fi
    if [ -d "$e" ]; then mkdir "$d/$n"; else : > "$d/$n"; fi
    mount --rbind "$e" "$d/$n"
  done
done
shift
[ -n "$preload" ] && export LD_PRELOAD="$preload"
exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
"#;
    let mut cmd = std::process::Command::new("unshare");
    cmd.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
    ])
    .arg(keep)
    .args(&blocked)
    .arg("--")
    .arg(program);
    cmd
}
