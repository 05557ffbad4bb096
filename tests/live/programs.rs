//! The scenario's `programs`: real processes started by a real `cosim run`, their logs, their
//! start times, how they are stopped (stop signal, SIGKILL after the timeout, their children
//! too), programs inside a vehicle's namespace, Ctrl-C (a run without root:
//! `tests/live/rootless.rs`).
use crate::common;
use common::require_root;
use netsim_cosim::{config, io::os::netns, io::programs::Programs};
use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

/// A scenario with stationary vehicles `names` on 10.`net`.0.0/24, W = 10 ms, and `extra`
/// (e.g. a `programs:` section) appended.
fn scenario(
    dir: &Path,
    names: &[&str],
    net: u8,
    duration_s: f64,
    rtf: f64,
    extra: &str,
) -> PathBuf {
    let mut y = format!(
        "name: programs{net}\nwindow_ms: 10\nduration_s: {duration_s}\nreal_time_factor: {rtf}\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  terrain: {{kind: procedural, size_m: [200, 200], cell_size_m: 10, base_height_m: -60}}\n\
         vehicles:\n"
    );
    for (i, n) in names.iter().enumerate() {
        y += &format!(
            "  - name: {n}\n    addresses: [10.{net}.0.{h}/24]\n    start: {{x: {x}, y: 0, z: -10}}\n    motion: {{kind: stationary}}\n",
            h = i + 1,
            x = 10 * i
        );
    }
    y += extra;
    let p = dir.join("scenario.yaml");
    std::fs::write(&p, y).unwrap();
    p
}

/// `cosim run scenario --out out` to its end.
fn run(scenario: &Path, out: &Path) -> (Output, serde_json::Value) {
    let o = Command::new(COSIM)
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let summary = summary(out);
    (o, summary)
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

/// The record of program `name` in a summary.
fn program<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no program {name} in {summary}"))
}

fn log(out: &Path, name: &str, stream: &str) -> String {
    std::fs::read_to_string(out.join("programs").join(format!("{name}.{stream}.log"))).unwrap()
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                != Some("Z")
        }
        Err(_) => false,
    }
}

fn wait_for_file(path: &Path, timeout: Duration) -> String {
    let t = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s;
            }
        }
        assert!(t.elapsed() < timeout, "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_in(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_host_programs_output_lands_in_its_logs_and_its_exit_code_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    let tool = tools.join("env.sh");
    std::fs::write(
        &tool,
        "#!/bin/sh\npwd\necho \"$COSIM_OUT|$COSIM_SCENARIO_DIR|$COSIM_DURATION_S|$COSIM_REAL_TIME_FACTOR|$COSIM_PROGRAM|${COSIM_VEHICLE-none}|$N|$B|$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let s = scenario(
        dir.path(),
        &["ha"],
        90,
        1.0,
        1.0,
        "programs:\n\
         \x20 - name: hello\n    command: 'echo out-$COSIM_PROGRAM; echo err >&2; exit 3'\n\
         \x20 - name: env\n    command: [./env.sh, 42]\n    cwd: tools\n    env: {N: 5, B: true}\n",
    );
    let out = dir.path().join("out");
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));

    assert_eq!(log(&out, "hello", "stdout"), "out-hello\n");
    assert_eq!(log(&out, "hello", "stderr"), "err\n");
    let hello = program(&summary, "hello");
    assert_eq!(hello["exit_code"], 3, "{hello}");
    assert!(
        hello["signal"].is_null() && hello["note"].is_null() && hello["vehicle"].is_null(),
        "{hello}"
    );
    assert_eq!(hello["started_s"], 0.0, "{hello}");
    let ended = hello["ended_s"].as_f64().unwrap();
    // Noticed at a window opening during the run (it may be the one it started at: the next
    // program's start takes a while), not stopped at the end (1 s).
    assert!(
        (0.0..1.0).contains(&ended),
        "it ended by itself during the run: {hello}"
    );

    // The working directory is relative to the scenario's folder; so is `./env.sh` (from it).
    let abs = |p: &Path| std::path::absolute(p).unwrap().display().to_string();
    assert_eq!(
        log(&out, "env", "stdout"),
        format!(
            "{}\n{}|{}|1|1|env|none|5|true|42\n",
            abs(&tools),
            abs(&out),
            abs(dir.path())
        )
    );
    assert_eq!(program(&summary, "env")["exit_code"], 0);

    let stdout = String::from_utf8_lossy(&o.stdout);
    // The summary table's row for it, and where the logs are.
    let line = stdout
        .lines()
        .find(|l| l.contains(" hello "))
        .unwrap_or_else(|| panic!("{}", common::output_text(&o)));
    assert!(line.contains("(host)") && line.contains("exit 3"), "{line}");
    let logs = format!("program logs: {}", out.join("programs").display());
    assert!(
        stdout.lines().any(|l| l == logs),
        "{}",
        common::output_text(&o)
    );
}

/// This process's nice value (/proc/self/stat, field 19).
fn own_nice() -> i32 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(16).unwrap().parse().unwrap()
}

#[test]
fn a_paced_run_sets_its_threads_nice_value_and_its_programs_keep_the_callers() {
    let _root = require_root();
    let dir = tempfile::tempdir().unwrap();
    // The program prints its own nice value, then each distinct one of the run's threads
    // (its parent is the run) but the record's writer, then the writer's: it serves the
    // record, behind the run (a stat's fields counted after the name, which may hold spaces).
    // The writer starts with the first window and then lowers its own priority, so the program
    // waits until it has (however long a loaded machine takes; the run lasts until it has, as
    // its windows are paced from the first one on).
    let program = "programs:\n\
         \x20 - name: ni\n    command: 'nice_of() { sed \"s/.*) //\" $1/stat 2>/dev/null | cut -d\" \" -f17; }; \
         writer() { for t in /proc/$PPID/task/*; do [ \"$(cat $t/comm 2>/dev/null)\" = record-writer ] && echo $t; done; }; \
         until w=$(writer); [ -n \"$w\" ] && [ \"$(nice_of $w)\" = 10 ]; do sleep 0.01; done; \
         cut -d\" \" -f19 /proc/$$/stat; \
         for t in /proc/$PPID/task/*; do [ \"$(cat $t/comm)\" = record-writer ] || nice_of $t; \
         done | sort -u; echo writer $(nice_of $w)'\n";
    for (setting, threads) in [("", "-5"), ("nice: 5\n", "5"), ("nice: 0\n", "0")] {
        let s = scenario(
            dir.path(),
            &["na"],
            92,
            1.0,
            1.0,
            &format!("{setting}{program}"),
        );
        let out = dir.path().join(format!("out{threads}"));
        let (o, _) = run(&s, &out);
        assert!(o.status.success(), "{}", common::output_text(&o));
        assert_eq!(
            log(&out, "ni", "stdout"),
            format!("{}\n{threads}\nwriter 10\n", own_nice()),
            "{setting:?}: the program's nice value, then the run's threads'"
        );
    }
}

#[test]
fn a_paced_run_puts_its_window_path_under_the_realtime_priority_and_its_programs_not() {
    let _root = require_root();
    let dir = tempfile::tempdir().unwrap();
    // The program (in a vehicle, so the run has a release thread) waits until the run's main
    // thread, its window loop, is under SCHED_FIFO (policy 1: it goes there once the programs
    // have settled), then prints its own policy and real-time priority (/proc/<pid>/stat
    // fields 41 and 40, counted after the name), then those of the run's main thread and of
    // its release threads (each distinct pair once).
    let program = "network: {capture: tun}\nprograms:\n\
         \x20 - name: rt\n    vehicle: ra\n    command: 'pol() { sed \"s/.*) //\" $1/stat 2>/dev/null | cut -d\" \" -f39,38; }; \
         until [ \"$(pol /proc/$PPID)\" = \"7 1\" ]; do sleep 0.05; done; pol /proc/$$; pol /proc/$PPID; \
         for t in /proc/$PPID/task/*; do [ \"$(cat $t/comm)\" = release ] && pol $t; done | sort -u'\n";
    let s = scenario(
        dir.path(),
        &["ra", "rb"],
        89,
        // Seconds for the program to see the window loop's policy however loaded the machine.
        4.0,
        1.0,
        &format!("realtime_priority: 7\n{program}"),
    );
    let out = dir.path().join("out");
    let (o, _) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    assert_eq!(
        log(&out, "rt", "stdout"),
        "0 0\n7 1\n7 1\n",
        "the program's real-time priority and policy, then the run's window loop's and its \
         release thread's"
    );
}

#[test]
fn a_program_starts_at_its_start_time() {
    let dir = tempfile::tempdir().unwrap();
    // Real-time factor 2: 1 s of sim time is 0.5 s of wall time.
    let s = scenario(
        dir.path(),
        &["sa"],
        91,
        2.0,
        2.0,
        "programs:\n\
         \x20 - {name: first, command: 'date +%s.%N; echo $COSIM_START_S'}\n\
         \x20 - {name: later, start_s: 1.0, command: 'date +%s.%N; echo $COSIM_START_S'}\n\
         \x20 - {name: odd, start_s: 0.333, command: 'echo $COSIM_START_S'}\n\
         \x20 - {name: never, start_s: 1.995, command: 'echo started'}\n",
    );
    let out = dir.path().join("out");
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let read = |name: &str| -> (f64, String) {
        let log = log(&out, name, "stdout");
        let mut lines = log.lines();
        (
            lines.next().unwrap().parse().unwrap(),
            lines.next().unwrap().to_owned(),
        )
    };
    let (t_first, s_first) = read("first");
    let (t_later, s_later) = read("later");
    assert_eq!((s_first.as_str(), s_later.as_str()), ("0", "1"));
    // Each `date` runs when its shell gets a core: a wall figure, asserted when the run kept up.
    // `first` starts before window 0 opens, `later` as window 100 opens.
    let wall = t_later - t_first;
    common::assert_if_kept_pace(
        &summary,
        (0.45..0.7).contains(&wall),
        &format!("1 s of sim time at rtf 2 should be 0.5 s of wall time, got {wall}"),
    );
    assert_eq!(program(&summary, "later")["started_s"], 1.0);
    // A start between two windows waits for the next window's opening.
    assert_eq!(log(&out, "odd", "stdout"), "0.34\n");
    assert_eq!(program(&summary, "odd")["started_s"], 0.34);
    // After the last window's opening (1.99 s) nothing starts.
    let never = program(&summary, "never");
    assert!(
        never["started_s"].is_null() && never["exit_code"].is_null(),
        "{never}"
    );
    assert!(
        never["note"].as_str().unwrap().contains("not started"),
        "{never}"
    );
    assert!(!out.join("programs/never.stdout.log").exists());
}

#[test]
fn long_programs_are_stopped_at_the_end_with_their_stop_signal() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["la"],
        92,
        0.5,
        0.0,
        "programs:\n\
         \x20 - {name: int, command: [sleep, 100]}\n\
         \x20 - {name: term, command: [sleep, 100], stop_signal: TERM}\n",
    );
    let out = dir.path().join("out");
    let t = Instant::now();
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    // Stopped at once, not after their 100 s (the run's start and end on a loaded machine are
    // the machine's: the bound is the programs' own length, with a wide margin).
    println!("the run with its programs stopped took {:?}", t.elapsed());
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "the programs stop at once: {:?}",
        t.elapsed()
    );
    for (name, signal, word) in [
        ("int", libc::SIGINT, "SIGINT"),
        ("term", libc::SIGTERM, "SIGTERM"),
    ] {
        let p = program(&summary, name);
        assert_eq!(p["signal"], signal, "{p}");
        assert!(p["exit_code"].is_null(), "{p}");
        assert_eq!(p["note"], format!("stopped with {word}"), "{p}");
        assert_eq!(
            (p["started_s"].as_f64(), p["ended_s"].as_f64()),
            (Some(0.0), Some(0.5)),
            "{p}"
        );
    }
}

#[test]
fn a_program_ignoring_its_stop_signal_is_killed_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["ka"],
        93,
        0.5,
        1.0,
        "programs:\n  - {name: stubborn, command: \"trap '' INT; echo $$ > \\\"$COSIM_OUT/stubborn.pid\\\"; sleep 100\", stop_timeout_s: 1.5}\n",
    );
    let out = dir.path().join("out");
    let t = Instant::now();
    let (o, summary) = run(&s, &out);
    let took = t.elapsed();
    assert!(o.status.success(), "{}", common::output_text(&o));
    // At least the run and the grace; killed then, not after its own 100 s (the run's start on a
    // loaded machine is the machine's: the upper bound is the program's length, widely).
    println!("0.5 s run + 1.5 s of grace took {took:?}");
    assert!(
        took >= Duration::from_millis(2000) && took < Duration::from_secs(60),
        "0.5 s run + 1.5 s of grace: {took:?}"
    );
    let p = program(&summary, "stubborn");
    assert_eq!(p["signal"], libc::SIGKILL, "{p}");
    assert!(
        p["note"]
            .as_str()
            .unwrap()
            .contains("did not stop within 1.5 s of SIGINT: killed"),
        "{p}"
    );
    assert!(!alive(pid_in(&out.join("stubborn.pid"))));
}

#[test]
fn the_children_of_a_program_are_stopped_too() {
    let dir = tempfile::tempdir().unwrap();
    // In a non-interactive shell a background job ignores SIGINT: it stays after the shell
    // ended and is killed after stop_timeout_s.
    let s = scenario(
        dir.path(),
        &["ca"],
        94,
        0.5,
        1.0,
        "programs:\n\
         \x20 - name: parent\n    stop_timeout_s: 0.5\n    command: 'sleep 100 & echo $! > \"$COSIM_OUT/child.pid\"; wait'\n\
         \x20 - name: leaver\n    stop_timeout_s: 0.5\n    command: 'sleep 100 & echo $! > \"$COSIM_OUT/left.pid\"'\n\
         \x20 - name: polite\n    stop_signal: TERM\n    command: 'sh -c \"echo \\$\\$ > $COSIM_OUT/polite.pid; exec sleep 100\" & wait'\n",
    );
    let out = dir.path().join("out");
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));

    let parent = program(&summary, "parent");
    assert_eq!(parent["signal"], libc::SIGINT, "{parent}");
    assert_eq!(
        parent["note"], "stopped with SIGINT; processes left in its group were killed",
        "{parent}"
    );
    // A background job does not ignore SIGTERM: the group's stop signal reaches it.
    let polite = program(&summary, "polite");
    assert_eq!(polite["signal"], libc::SIGTERM, "{polite}");
    assert_eq!(polite["note"], "stopped with SIGTERM", "{polite}");
    // The shell that left a background job ended by itself (exit 0); its job is stopped at the end.
    let leaver = program(&summary, "leaver");
    assert_eq!(leaver["exit_code"], 0, "{leaver}");
    assert!(leaver["ended_s"].as_f64().unwrap() < 0.5, "{leaver}");
    assert!(
        leaver["note"]
            .as_str()
            .unwrap()
            .contains("processes left in its group were killed"),
        "{leaver}"
    );
    for f in ["child.pid", "left.pid", "polite.pid"] {
        let pid = pid_in(&out.join(f));
        assert!(!alive(pid), "{f}: process {pid} is still running");
    }
}

#[test]
fn dropping_the_programs_kills_what_they_started() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["da"],
        95,
        10.0,
        0.0,
        "programs:\n  - {name: sleeper, command: 'sleep 100 & echo $! > \"$COSIM_OUT/child.pid\"; echo $$ > \"$COSIM_OUT/own.pid\"; wait'}\n",
    );
    let out = dir.path().join("out");
    let loaded = config::load(&s).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pids = rt.block_on(async {
        let mut p = Programs::for_scenario(&loaded, Some(&out))
            .unwrap()
            .unwrap();
        assert_eq!(
            p.log_dir(),
            std::path::absolute(out.join("programs")).unwrap()
        );
        p.tick(0);
        let pids = tokio::task::spawn_blocking({
            let out = out.clone();
            move || {
                wait_for_file(&out.join("own.pid"), Duration::from_secs(5));
                [pid_in(&out.join("own.pid")), pid_in(&out.join("child.pid"))]
            }
        })
        .await
        .unwrap();
        assert!(pids.iter().all(|&p| alive(p)));
        drop(p);
        // The runtime reaps the leader.
        tokio::time::sleep(Duration::from_millis(300)).await;
        pids
    });
    for pid in pids {
        assert!(!alive(pid), "process {pid} is still running");
    }
}

#[test]
fn a_program_in_a_vehicle_runs_in_its_namespace() {
    let _serial = require_root();
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["pva", "pvb"],
        96,
        1.0,
        1.0,
        "network: {capture: tun}\nprograms:\n\
         \x20 - {name: inside, vehicle: pvb, command: 'ip -o addr; echo vehicle=$COSIM_VEHICLE'}\n\
         \x20 - {name: ping, vehicle: pva, command: [ping, -c, 2, -i, 0.2, 10.96.0.2]}\n\
         \x20 - {name: outside, command: 'ip -o addr'}\n",
    );
    let out = dir.path().join("out");
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let inside = log(&out, "inside", "stdout");
    let interfaces: Vec<&str> = inside
        .lines()
        .filter(|l| !l.starts_with("vehicle="))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert!(
        interfaces.iter().all(|i| *i == "lo" || *i == "cosim0"),
        "only the namespace's interfaces: {inside}"
    );
    assert!(
        inside
            .lines()
            .any(|l| l.contains("cosim0") && l.contains("inet 10.96.0.2/24")),
        "{inside}"
    );
    assert!(inside.ends_with("vehicle=pvb\n"), "{inside}");
    assert_eq!(program(&summary, "inside")["vehicle"], "pvb");
    assert_eq!(program(&summary, "inside")["exit_code"], 0);
    // Vehicle A reaches vehicle B through the coordinator.
    assert_eq!(
        program(&summary, "ping")["exit_code"],
        0,
        "{}",
        log(&out, "ping", "stdout")
    );
    assert!(
        log(&out, "ping", "stdout").contains("2 received"),
        "{}",
        log(&out, "ping", "stdout")
    );
    assert!(
        summary["network"]["delivered"].as_u64().unwrap() >= 4,
        "{}",
        summary["network"]
    );
    assert!(
        !log(&out, "outside", "stdout").contains("10.96.0."),
        "the host has no vehicle address"
    );
}

/// A program inside a vehicle gets the vehicle's ROS 2 settings from the scenario (`ros`, its
/// vehicle's own `ros` overriding it): `ROS_DOMAIN_ID` and the `COSIM_ROS_*` variables; its own
/// `env` wins; a host program gets none of them.
#[test]
fn a_vehicle_program_gets_its_ros_settings_from_the_scenario() {
    let _serial = require_root();
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["rsa", "rsb"],
        95,
        0.5,
        1.0,
        "network: {capture: tun}\n\
         ros: {domain_id: 7, namespace: /fleet, use_sim_time: false}\nprograms:\n\
         \x20 - {name: inside, vehicle: rsa, command: 'echo \"$ROS_DOMAIN_ID|$COSIM_ROS_NAMESPACE|$COSIM_ROS_USE_SIM_TIME|$COSIM_ROS_ARGS\"'}\n\
         \x20 - {name: own, vehicle: rsb, env: {ROS_DOMAIN_ID: 3}, command: 'echo \"$ROS_DOMAIN_ID\"'}\n\
         \x20 - {name: host, command: 'echo \"${COSIM_ROS_NAMESPACE-none}|${COSIM_ROS_ARGS-none}\"'}\n",
    );
    // rsb's own `ros` overrides the namespace only.
    let text_ = std::fs::read_to_string(&s).unwrap().replace(
        "  - name: rsb\n",
        "  - name: rsb\n    ros: {namespace: /b}\n",
    );
    std::fs::write(&s, text_).unwrap();
    let out = dir.path().join("out");
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    assert_eq!(
        log(&out, "inside", "stdout"),
        "7|/fleet|false|--ros-args -r __ns:=/fleet -p use_sim_time:=false\n"
    );
    assert_eq!(log(&out, "own", "stdout"), "3\n");
    assert_eq!(log(&out, "host", "stdout"), "none|none\n");
    assert_eq!(program(&summary, "inside")["exit_code"], 0);
}

/// `cosim exec` into a running run's vehicle gives the command the environment the vehicle's
/// programs get (`ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET`, `COSIM_ROS_*`), over
/// what the caller's shell set; the same with `--scenario`; a vehicle of no run, or not in the
/// scenario, is refused naming those there are.
#[test]
fn cosim_exec_gives_the_command_its_vehicles_ros_settings() {
    let _serial = require_root();
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["exa", "exb"],
        94,
        60.0,
        1.0,
        "network: {capture: tun}\nros: {domain_id: 7, use_sim_time: false}\nprograms:\n\
         \x20 - {name: inside, vehicle: exa, command: 'echo $$ > \"$COSIM_OUT/inside.pid\"; exec sleep 100'}\n",
    );
    let text_ = std::fs::read_to_string(&s).unwrap().replace(
        "  - name: exb\n",
        "  - name: exb\n    ros: {namespace: /b}\n",
    );
    std::fs::write(&s, text_).unwrap();
    let out = dir.path().join("out");
    let mut child = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&out.join("inside.pid"), Duration::from_secs(30));
    let exec = |args: &[&str]| {
        Command::new(COSIM)
            .arg("exec")
            .args(args)
            .env("ROS_DOMAIN_ID", "99")
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .output()
            .unwrap()
    };
    let show = "echo \"$ROS_DOMAIN_ID|$ROS_AUTOMATIC_DISCOVERY_RANGE|${COSIM_ROS_NAMESPACE-none}|$COSIM_ROS_ARGS\"";
    let scenario_arg = format!("--scenario={}", s.display());
    for (vehicle, want) in [
        ("exa", "7|SUBNET|none|--ros-args -p use_sim_time:=false\n"),
        (
            "exb",
            "7|SUBNET|/b|--ros-args -r __ns:=/b -p use_sim_time:=false\n",
        ),
    ] {
        for with_scenario in [false, true] {
            let mut args = vec![vehicle];
            if with_scenario {
                args.push(&scenario_arg);
            }
            args.extend(["--", "sh", "-c", show]);
            let o = exec(&args);
            assert!(o.status.success(), "{}", common::output_text(&o));
            assert_eq!(String::from_utf8_lossy(&o.stdout), want, "{args:?}");
        }
    }
    let o = exec(&["exz", "--", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no namespace ncs-exz"),
        "{err}"
    );
    assert!(err.contains("exa") && err.contains("exb"), "{err}");
    let o = exec(&["exz", &scenario_arg, "--", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("has no vehicle \"exz\" (its vehicles: exa, exb)"),
        "{err}"
    );
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The environment left for `cosim exec` goes with the namespaces.
    for v in ["exa", "exb"] {
        assert!(netns::vehicle_env(v).is_empty(), "{v}");
    }
}

#[test]
fn ctrl_c_stops_every_program_and_leaves_no_namespace() {
    let _serial = require_root();
    let names = ["pia", "pib"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        97,
        60.0,
        1.0,
        "network: {capture: tun}\nprograms:\n\
         \x20 - {name: host, command: 'echo $$ > \"$COSIM_OUT/host.pid\"; exec sleep 100'}\n\
         \x20 - {name: inside, vehicle: pib, command: 'echo $$ > \"$COSIM_OUT/inside.pid\"; exec sleep 100'}\n",
    );
    let out = dir.path().join("out");
    let mut child = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&out.join("host.pid"), Duration::from_secs(10));
    wait_for_file(&out.join("inside.pid"), Duration::from_secs(10));
    let pids = [
        pid_in(&out.join("host.pid")),
        pid_in(&out.join("inside.pid")),
    ];
    std::thread::sleep(Duration::from_millis(300));
    assert!(pids.iter().all(|&p| alive(p)));
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let summary = summary(&out);
    assert_eq!(summary["interrupted"], true);
    for name in ["host", "inside"] {
        let p = program(&summary, name);
        assert_eq!(p["signal"], libc::SIGINT, "{p}");
        assert_eq!(p["started_s"], 0.0, "{p}");
        let ended = p["ended_s"].as_f64().unwrap();
        assert!(ended > 0.0 && ended < 60.0, "{p}");
    }
    for pid in pids {
        assert!(!alive(pid), "process {pid} is still running");
    }
    let mine: Vec<String> = names.iter().map(|n| netns::ns_name(n)).collect();
    assert!(
        netns::list().iter().all(|n| !mine.contains(n)),
        "namespaces left: {:?}",
        netns::list()
    );
}

/// A program reports values of its own in the file `COSIM_METRICS` names: the run records each
/// on `/metrics` (at its `t_ns`, else when the run read it), reads a line written in two parts
/// once it ends, and counts the lines it refuses — not JSON, a bad key, a name with a blank,
/// overlong — in `summary.json`'s `metrics` with their file and line; the run ends as usual and
/// the report shows the values. (A host program, paced at 4× real time: no root needed. The
/// run lasts 5 s of wall time, far more than the script's writes and its 0.2 s pause take even
/// on a loaded machine: with 0.5 s, a loaded machine once ended the run before the script's
/// second line.)
#[test]
fn a_program_reports_its_metrics_and_bad_lines_are_counted_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(5000);
    let script = format!(
        "#!/bin/sh\nm=\"$COSIM_METRICS\"\n\
         echo '{{\"name\": \"lag_s\", \"value\": 0.25, \"t_ns\": 100000000}}' >> \"$m\"\n\
         echo 'not a metric' >> \"$m\"\n\
         echo '{{\"name\": \"lag_s\", \"value\": 0.5, \"t_ns\": 200000000, \"vlaue\": 1}}' >> \"$m\"\n\
         echo '{{\"name\": \"queue depth\", \"value\": 3}}' >> \"$m\"\n\
         echo '{long}' >> \"$m\"\n\
         printf '{{\"name\": \"lag_s\", ' >> \"$m\"\n\
         sleep 0.2\n\
         echo '\"value\": 0.75}}' >> \"$m\"\n\
         echo '{{\"name\": \"queue\", \"value\": 3}}' >> \"$m\"\n"
    );
    std::fs::write(dir.path().join("report.sh"), script).unwrap();
    let s = scenario(
        dir.path(),
        &["ma"],
        93,
        20.0,
        4.0,
        "programs:\n  - {name: reporter, command: 'sh ./report.sh'}\n",
    );
    let out = dir.path().join("out");
    let (o, summary) = run(&s, &out);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let record = netsim_cosim::output::record::Record::read(&out).unwrap();
    let values: Vec<(&str, f64, f64)> = record
        .metrics
        .iter()
        .map(|m| {
            assert_eq!(
                (m.program.as_str(), m.vehicle.as_deref()),
                ("reporter", None)
            );
            (m.name.as_str(), m.value, m.t_s)
        })
        .collect();
    assert_eq!(values.len(), 3, "{values:?}");
    assert_eq!(values[0], ("lag_s", 0.25, 0.1));
    let (name, value, t_s) = values[1];
    assert_eq!((name, value), ("lag_s", 0.75));
    assert!((0.0..=20.0).contains(&t_s), "read during the run: {t_s}");
    assert_eq!((values[2].0, values[2].1), ("queue", 3.0));
    let file = out.join("programs/reporter.metrics.jsonl");
    let m = &summary["metrics"][0];
    assert_eq!(m["program"], "reporter");
    assert_eq!(m["file"], file.to_str().unwrap());
    assert_eq!(
        (m["samples"].as_u64(), m["refused"].as_u64()),
        (Some(3), Some(4)),
        "{m}"
    );
    let errors: Vec<&str> = m["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    let f = file.display();
    assert!(
        errors[0].starts_with(&format!("{f}:2: expected ident")),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with(&format!("{f}:3: unknown field `vlaue`")),
        "{errors:?}"
    );
    assert!(
        errors[2].starts_with(&format!("{f}:4: name \"queue depth\"")),
        "{errors:?}"
    );
    assert_eq!(errors[3], format!("{f}:5: longer than 4096 bytes"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("reporter: lag_s"), "{stdout}");
}
