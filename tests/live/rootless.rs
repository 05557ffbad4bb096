//! Live capture without root: `cosim run` as the unprivileged user `nobody` (uid 65534) runs
//! in a user namespace of its own, carries vehicle traffic through TUN devices in vehicle
//! namespaces, and leaves no process, namespace or TUN device behind — after a normal end,
//! after SIGINT, after SIGKILL of the process started or of the run itself; a capture agent without
//! root joins such a run the same way. A kernel that refuses user
//! namespaces gets one line naming the setting and a non-zero exit.
//!
//! The tests start as root (to become `nobody`, and to make the refusing user namespace); the
//! `cosim` binary is copied where `nobody` can run it, wherever the build tree is, and the
//! build environment's `LD_PRELOAD` (a library `nobody` may not read) is left out.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const NOBODY: u32 = 65534;

/// A folder `nobody` may write, holding a copy of `cosim` and a two-vehicle scenario (`net`:
/// the 10.`net`.0.0/24 subnet) whose `a` pings `b` and whose programs run `programs`.
struct Setup {
    dir: tempfile::TempDir,
    cosim: PathBuf,
    scenario: PathBuf,
}

fn setup(net: u8, duration_s: f64, programs: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path, m| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    mode(dir.path(), 0o777);
    let cosim = dir.path().join("cosim");
    std::fs::copy(env!("CARGO_BIN_EXE_cosim"), &cosim).unwrap();
    mode(&cosim, 0o755);
    let y = format!(
        "name: rootless{net}\nwindow_ms: 10\nduration_s: {duration_s}\nreal_time_factor: 1\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  terrain: {{kind: procedural, size_m: [200, 200], cell_size_m: 10, base_height_m: -60}}\n\
         vehicles:\n\
         \x20 - {{name: rl{net}a, addresses: [10.{net}.0.1/24], start: {{x: 0, y: 0, z: -10}}, motion: {{kind: stationary}}}}\n\
         \x20 - {{name: rl{net}b, addresses: [10.{net}.0.2/24], start: {{x: 10, y: 0, z: -10}}, motion: {{kind: stationary}}}}\n\
         network: {{capture: tun}}\nprograms:\n{programs}"
    );
    let scenario = dir.path().join("scenario.yaml");
    std::fs::write(&scenario, y).unwrap();
    Setup {
        dir,
        cosim,
        scenario,
    }
}

impl Setup {
    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// `cosim run` as `nobody`, its output piped.
    fn start(&self) -> Child {
        Command::new(&self.cosim)
            .args(["run", self.scenario.to_str().unwrap(), "--out"])
            .arg(self.out())
            .uid(NOBODY)
            .gid(NOBODY)
            .env("HOME", self.dir.path())
            .env_remove("LD_PRELOAD")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

fn ns_of(pid: u32, kind: &str) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/ns/{kind}"))
        .ok()
        .map(|l| l.to_string_lossy().into_owned())
}

/// Every process (pid) whose user namespace is `userns` (`user:[inode]`).
fn processes_in(userns: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| ns_of(pid, "user").as_deref() == Some(userns) && common::alive(pid))
        .collect()
}

/// Where network namespaces are bound in the host's mount namespace (`ip netns add`'s).
fn bound_namespaces() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(" - nsfs "))
        .filter_map(|l| l.split_whitespace().nth(4).map(str::to_owned))
        .collect()
}

/// The run (the process inside the PID namespace, a grandchild of the one started) and its
/// user namespace, once the run has started its programs.
fn run_processes(child: &Child) -> (u32, String) {
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let run = children(child.id())
            .first()
            .and_then(|&c| children(c).first().copied());
        if let Some(run) = run {
            if let Some(userns) = ns_of(run, "user") {
                if processes_in(&userns).len() >= 3 {
                    return (run, userns);
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "the run did not start its programs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Nothing of the run is left: no process in its user namespace (so no vehicle namespace or
/// TUN device either: they live as long as a process or a binding holds them), and none of its
/// vehicles' namespaces (`ncs-rl<net>…`) bound in the host's mount namespace.
fn assert_nothing_left(userns: &str, net: u8) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_in(userns).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes_in(userns);
    assert!(left.is_empty(), "processes of the run left: {left:?}");
    let mine = format!("ncs-rl{net}");
    let bound: Vec<String> = bound_namespaces()
        .into_iter()
        .filter(|m| m.contains(&mine))
        .collect();
    assert!(bound.is_empty(), "namespaces of the run bound: {bound:?}");
}

#[test]
fn a_run_without_root_carries_live_traffic_and_leaves_nothing() {
    let _one = common::require_root();
    common::require_tools(&["ping"], "scripts/setup --test");
    let s = setup(
        91,
        3.0,
        "  - {name: host, command: 'id -u'}\n\
         \x20 - {name: ping, vehicle: rl91a, command: 'ping -c 10 -i 0.2 10.91.0.2'}\n",
    );
    let child = s.start();
    let (_, userns) = run_processes(&child);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("packets: captured") && stdout.contains("(balanced)"),
        "{stdout}"
    );
    let out = s.out();
    let ping = std::fs::read_to_string(out.join("programs/ping.stdout.log")).unwrap();
    assert!(
        ping.contains("10 packets transmitted, 10 received"),
        "{ping}"
    );
    // The run and its programs are root of the run's user namespace only.
    let id = std::fs::read_to_string(out.join("programs/host.stdout.log")).unwrap();
    assert_eq!(id, "0\n");
    // What the run wrote belongs to the user who ran it.
    let meta = std::fs::metadata(out.join("summary.json")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), NOBODY);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let network = &summary["network"];
    assert_eq!(network["balanced"], true, "{network}");
    assert!(network["delivered"].as_u64().unwrap() >= 20, "{network}");
    assert_nothing_left(&userns, 91);
}

/// SIGINT (as a terminal's Ctrl-C or `kill -INT`) to the process the user started ends the run
/// as at its end: record, summary and report written, programs stopped.
#[test]
fn sigint_ends_a_run_without_root_cleanly() {
    let _one = common::require_root();
    let s = setup(
        92,
        60.0,
        "  - {name: host, command: 'sleep 600'}\n\
         \x20 - {name: inside, vehicle: rl92a, command: 'sleep 600'}\n",
    );
    let child = s.start();
    let (_, userns) = run_processes(&child);
    std::thread::sleep(Duration::from_millis(500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", common::output_text(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.out().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true, "{summary}");
    assert!(s.out().join("report/report.html").exists());
    assert_nothing_left(&userns, 92);
}

/// SIGKILL of the process the user started, or of the run inside the PID namespace: every
/// program dies with it, and with them the vehicles' namespaces and TUN devices. (The three
/// processes: the one started, the one that made the namespaces, the run.)
#[test]
fn sigkill_of_either_process_leaves_nothing() {
    let _one = common::require_root();
    for victim in ["started", "run"] {
        let s = setup(
            93,
            60.0,
            "  - {name: host, command: 'sleep 600'}\n\
             \x20 - {name: inside, vehicle: rl93a, command: 'sleep 600'}\n\
             \x20 - {name: inside2, vehicle: rl93b, command: 'sleep 600'}\n",
        );
        let mut child = s.start();
        let (inner, userns) = run_processes(&child);
        let pid = if victim == "started" {
            child.id()
        } else {
            inner
        };
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let status = child.wait().unwrap();
        assert!(!status.success(), "{victim}: {status:?}");
        assert_nothing_left(&userns, 93);
    }
}

/// A kernel that refuses user namespaces: here a user namespace whose parent allows none
/// (`user.max_user_namespaces` = 0 there), the machine's own setting untouched. The run says
/// why in one line, exits non-zero, and has made nothing.
#[test]
fn a_refused_user_namespace_is_one_line_and_a_non_zero_exit() {
    let _one = common::require_root();
    common::require_tools(&["unshare"], "apt install util-linux");
    let s = setup(
        94,
        2.0,
        "  - {name: inside, vehicle: rl94a, command: 'true'}\n",
    );
    let go = s.dir.path().join("go");
    let made = Command::new("mkfifo").arg(&go).status().unwrap();
    assert!(made.success());
    // The outer namespace maps root; in it, an inner one maps uid 1000 to that root (so the run
    // reads this folder as its owner) and waits on `go` until the outer has set its own limit
    // to 0, which binds every namespace below it.
    let inner = format!(
        "read x < {go}; exec {cosim} run {scenario} --out {out}",
        go = go.display(),
        cosim = s.cosim.display(),
        scenario = s.scenario.display(),
        out = s.out().display()
    );
    let outer = format!(
        "unshare --user --map-user=1000 --map-group=1000 sh -c '{inner}' & \
         sleep 0.3; echo 0 > /proc/sys/user/max_user_namespaces && echo go > {go}; wait $!",
        go = go.display()
    );
    let o = Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c", &outer])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", common::output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{}", common::output_text(&o));
    assert!(
        errors[0].contains("user namespace")
            && errors[0].contains("user.max_user_namespaces")
            && errors[0].contains("`sudo sysctl -w user.max_user_namespaces=")
            && errors[0].ends_with("or run as root"),
        "{}",
        errors[0]
    );
    assert!(!s.out().exists(), "the refused run made its output folder");
}

/// `cosim exec` without root cannot join a run's namespaces, and says what to do instead.
#[test]
fn cosim_exec_without_root_says_where_the_command_belongs() {
    let _one = common::require_root();
    let s = setup(95, 1.0, "  - {name: host, command: 'true'}\n");
    let o = Command::new(&s.cosim)
        .args(["exec", "rl95a", "--", "true"])
        .env_remove("LD_PRELOAD")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr.trim(),
        "error: no namespace ncs-rl95a here: cosim exec joins the namespaces of a run as root; a run without root keeps them to itself (start the command as one of its scenario's programs)"
    );
}

/// A vehicle attaching to an existing namespace cannot be run without root: one line says so.
#[test]
fn attaching_without_root_is_refused_in_one_line() {
    let _one = common::require_root();
    let s = setup(96, 1.0, "  - {name: host, command: 'true'}\n");
    let text = std::fs::read_to_string(&s.scenario).unwrap().replace(
        "name: rl96b, addresses",
        "name: rl96b, attach: {netns: /run/netns/rl96-lab}, addresses",
    );
    std::fs::write(&s.scenario, text).unwrap();
    let child = s.start();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", common::output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.lines().any(|l| l == "error: vehicle rl96b: attaching to a container or an existing namespace needs a run as root (a run without root can only enter the namespaces it makes)"),
        "{stderr}"
    );
}

/// A capture agent without root (`cosim agent` as `nobody`, in a user namespace of its own)
/// joins a run without root over loopback: the run's vehicle pings the agent's, every copy is
/// accounted for, and neither leaves anything behind.
#[test]
fn an_agent_without_root_carries_its_vehicle_s_traffic_and_leaves_nothing() {
    let _one = common::require_root();
    common::require_tools(&["ping"], "scripts/setup --test");
    let s = setup(
        92,
        4.0,
        "  - {name: ping, vehicle: rl92a, start_s: 0.5, command: 'ping -c 10 -i 0.2 10.92.0.2'}\n",
    );
    let yaml = std::fs::read_to_string(&s.scenario).unwrap();
    let yaml = yaml
        .replace("{name: rl92b, ", "{name: rl92b, host: agentb, ")
        .replace(
            "network: {capture: tun}",
            "network: {capture: tun, agents: {bind: \"127.0.0.1:5692\", join_timeout_s: 20}}",
        );
    std::fs::write(&s.scenario, yaml).unwrap();
    let run = s.start();
    let key = s.out().join("agent.key");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !key.exists() {
        assert!(Instant::now() < deadline, "the run wrote no agent.key");
        std::thread::sleep(Duration::from_millis(20));
    }
    let agent = Command::new(&s.cosim)
        .args(["agent", s.scenario.to_str().unwrap(), "--name", "agentb"])
        .args(["--coordinator", "127.0.0.1:5692", "--key"])
        .arg(&key)
        .arg("--out")
        .arg(s.dir.path().join("agent-out"))
        .uid(NOBODY)
        .gid(NOBODY)
        .env("HOME", s.dir.path())
        .env_remove("LD_PRELOAD")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, agent_userns) = {
        // The agent's own run process, inside its user namespace.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let inner = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", agent.id()))
                .unwrap_or_default();
            let userns = inner
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .find_map(|c| ns_of(c, "user"));
            if let Some(u) = userns.filter(|u| Some(u) != ns_of(agent.id(), "user").as_ref()) {
                break (agent.id(), u);
            }
            assert!(
                Instant::now() < deadline,
                "the agent made no user namespace"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let a = agent.wait_with_output().unwrap();
    let o = run.wait_with_output().unwrap();
    assert!(a.status.success(), "agent: {}", common::output_text(&a));
    assert!(o.status.success(), "run: {}", common::output_text(&o));
    let ping = std::fs::read_to_string(s.out().join("programs/ping.stdout.log")).unwrap();
    assert!(
        ping.contains("10 packets transmitted, 10 received"),
        "{ping}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.out().join("summary.json")).unwrap()).unwrap();
    let network = &summary["network"];
    assert_eq!(network["balanced"], true, "{network}");
    assert!(network["delivered"].as_u64().unwrap() >= 20, "{network}");
    assert!(
        processes_in(&agent_userns).is_empty(),
        "the agent left processes"
    );
    let bound: Vec<String> = bound_namespaces()
        .into_iter()
        .filter(|m| m.contains("ncs-rl92"))
        .collect();
    assert!(bound.is_empty(), "namespaces bound: {bound:?}");
}
