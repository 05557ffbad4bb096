//! The lockstep run end to end with the real binaries: the patrol scenario, determinism
//! across reruns and across transports (in-process vs. separate processes over ZeroMQ), and
//! a simulator that dies or misbehaves.
use netsim_cosim::{
    clock::Schedule,
    coord::PhysicsCoordinator,
    lockstep::{protocol::physics_end, zmq, Link, LinkError, Reply, Service},
    sim::network::PassthroughNetwork,
};
use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use crate::common;
use common::Procs;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
const PHYSICS_COORDINATOR: &str = env!("CARGO_BIN_EXE_physics_coordinator");
const NETWORK_COORDINATOR: &str = env!("CARGO_BIN_EXE_network_coordinator");

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn free_endpoint() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())
}

fn spawn(bin: &str, args: &[&str]) -> Child {
    Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run_ok(bin: &str, args: &[&str]) -> Output {
    let out = Command::new(bin).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{bin} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every served peer exits by itself, successfully, within 10 s of the run's last window.
fn assert_served_peers_exit(procs: &mut Procs) {
    for child in &mut procs.0 {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "a served peer outlived the run");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success());
    }
}

fn in_process_run(scenario: &Path, out: &Path) -> Vec<u8> {
    run_ok(
        COSIM,
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--timeline",
        ],
    );
    std::fs::read(out.join("timeline.jsonl")).unwrap()
}

#[test]
fn patrol_scenario_patrols_60_s_with_los_and_nlos_periods() {
    let dir = tempfile::tempdir().unwrap();
    let timeline = in_process_run(&repo("config/patrol.yaml"), dir.path());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["windows"], 6000);
    assert_eq!(summary["sim_seconds"], 60.0);
    let pairs = summary["pairs"].as_array().unwrap();
    assert!(pairs.len() >= 3, "at least 3 vehicles");
    let changing = pairs
        .iter()
        .filter(|p| p["los_windows"].as_u64() > Some(0) && p["nlos_windows"].as_u64() > Some(0))
        .count();
    assert!(
        changing >= 1,
        "some pair goes through LOS and NLOS periods: {pairs:?}"
    );
    // One line per pair per window, each a well-formed record.
    let text = String::from_utf8(timeline).unwrap();
    assert_eq!(text.lines().count(), 6000 * pairs.len());
    let nlos = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["los"] == false)
        .unwrap();
    let path = nlos["path"].as_array().unwrap();
    assert_eq!(nlos["hops"].as_u64().unwrap() as usize, path.len());
    assert!(
        path.len() >= 4 && path.len() % 2 == 0,
        "A, entry, exit, ..., B: {nlos}"
    );
    assert!(nlos["loss_db"].as_f64().unwrap() > 0.0);
}

#[test]
fn same_scenario_and_seed_give_identical_timelines_in_process_and_over_zeromq() {
    let scenario = repo("config/patrol.yaml");
    let s = scenario.to_str().unwrap();
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let first = in_process_run(&scenario, a.path());
    let second = in_process_run(&scenario, b.path());
    assert!(first == second, "rerun differs");

    let (p_ep, s_ep, n_ep) = (free_endpoint(), free_endpoint(), free_endpoint());
    let mut procs = Procs(vec![
        spawn(COSIM, &["physics-sim", s, "--bind", &p_ep]),
        spawn(COSIM, &["network-sim", s, "--bind", &s_ep]),
        spawn(
            NETWORK_COORDINATOR,
            &[s, "--bind", &n_ep, "--network-sim", &s_ep],
        ),
    ]);
    // The physics simulator reached at this host's own LAN address through a relay: a peer on
    // "another host" in plaintext, refused without --insecure-peers, named in the summary with.
    let lan = format!("tcp://{}:{}", lan_address(), free_port());
    let relay = Procs(vec![Command::new("socat")
        .arg(format!(
            "TCP-LISTEN:{},bind={},reuseaddr,fork",
            lan.rsplit(':').next().unwrap(),
            lan_address()
        ))
        .arg(format!("TCP:{}", p_ep.trim_start_matches("tcp://")))
        .spawn()
        .unwrap()]);
    // The relay connects on to the simulator only once each is listening.
    for ep in [&p_ep, &lan] {
        wait_listening(ep.trim_start_matches("tcp://"));
    }
    let out = c.path().to_str().unwrap();
    let mut args = vec![
        s,
        "--physics-sim",
        &lan,
        "--network-coordinator",
        &n_ep,
        "--out",
        out,
        "--timeline",
    ];
    let refused = Command::new(PHYSICS_COORDINATOR)
        .args(&args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && text.contains(&format!("--physics-sim: {lan} is on another host"))
            && text.contains("--insecure-peers"),
        "{text}"
    );
    args.push("--insecure-peers");
    let o = run_ok(PHYSICS_COORDINATOR, &args);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        log.contains(&format!(
            "{lan}: a simulator on another host reached in plaintext"
        )),
        "{log}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["insecure_peers"], serde_json::json!([lan]));
    let over_zmq = std::fs::read(c.path().join("timeline.jsonl")).unwrap();
    assert!(
        first == over_zmq,
        "separate processes over ZeroMQ differ from the in-process run"
    );
    assert_served_peers_exit(&mut procs);
    drop(relay);
}

/// This host's first IPv4 address other than loopback.
fn lan_address() -> String {
    let o = Command::new("ip")
        .args(["-4", "-o", "addr", "show", "scope", "global"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let addr = text
        .split_whitespace()
        .skip_while(|w| *w != "inet")
        .nth(1)
        .unwrap_or_else(|| panic!("this test needs an IPv4 address other than loopback: {text}"));
    addr.split('/').next().unwrap().to_owned()
}

/// Waits (at most 10 s) until something accepts TCP connections at `addr`.
fn wait_listening(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "nothing listens at {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Both simulators as processes of their own reached through the secure channel (`secure://`
/// with one key file): the same timeline as in one process. A coordinator with another key is
/// refused by the served simulator, which goes on waiting; binding ZeroMQ or ROS-NetSim's TCP
/// to an address other hosts reach is refused before anything listens, saying how to serve
/// securely.
#[test]
fn simulators_through_the_secure_channel_give_the_same_timeline_and_plaintext_stays_local() {
    let scenario = repo("config/patrol.yaml");
    let s = scenario.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (key, other) = (dir.path().join("run.key"), dir.path().join("other.key"));
    for k in [&key, &other] {
        run_ok(COSIM, &["agent-key", k.to_str().unwrap()]);
    }
    let first = in_process_run(&scenario, &dir.path().join("in-process"));
    let secure = |ep: &str, key: &Path| {
        format!(
            "secure://{}?key={}",
            ep.trim_start_matches("tcp://"),
            key.display()
        )
    };
    let (p_ep, s_ep, n_ep) = (
        secure(&free_endpoint(), &key),
        secure(&free_endpoint(), &key),
        secure(&free_endpoint(), &key),
    );
    let mut procs = Procs(vec![
        spawn(COSIM, &["physics-sim", s, "--bind", &p_ep]),
        spawn(COSIM, &["network-sim", s, "--bind", &s_ep]),
        spawn(
            NETWORK_COORDINATOR,
            &[s, "--bind", &n_ep, "--network-sim", &s_ep],
        ),
    ]);
    // Another key first: refused, and the simulator stays up for the right one.
    let wrong = p_ep.replace(key.to_str().unwrap(), other.to_str().unwrap());
    let out = dir.path().join("wrong");
    let refused = Command::new(COSIM)
        .args([
            "run",
            s,
            "--physics-sim",
            &wrong,
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(text.contains("refused the handshake"), "{text}");
    // Every link through the channel: the physics simulator, the network coordinator, and its
    // network simulator.
    let out = dir.path().join("secure");
    run_ok(
        PHYSICS_COORDINATOR,
        &[
            s,
            "--physics-sim",
            &p_ep,
            "--network-coordinator",
            &n_ep,
            "--out",
            out.to_str().unwrap(),
            "--timeline",
        ],
    );
    let through = std::fs::read(out.join("timeline.jsonl")).unwrap();
    assert!(
        first == through,
        "simulators through the secure channel differ from the in-process run"
    );
    assert_served_peers_exit(&mut procs);
    let mut log = String::new();
    if let Some(mut err) = procs.0[0].stderr.take() {
        std::io::Read::read_to_string(&mut err, &mut log).unwrap();
    }
    assert!(log.contains("refused a peer at 127.0.0.1"), "{log}");
    for (bin, bind) in [
        (COSIM, "tcp://0.0.0.0:5601"),
        (COSIM, "tcp://*:5601"),
        (COSIM, "tcp:0.0.0.0:10000"),
        (NETWORK_COORDINATOR, "tcp://0.0.0.0:5600"),
    ] {
        let mut args = vec![s, "--bind", bind];
        if bin == COSIM {
            args.insert(0, "physics-sim");
        }
        let o = Command::new(bin).args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{bind}");
        assert!(
            text.contains("is reachable from other hosts") && text.contains("secure://"),
            "{bind}: {text}"
        );
    }
    // Connecting out in plaintext to another host is refused before anything starts.
    let o = Command::new(PHYSICS_COORDINATOR)
        .args([s, "--network-coordinator", "tcp://192.0.2.77:5600"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && text.contains("--network-coordinator: tcp://192.0.2.77:5600 is on another host")
            && text.contains("--insecure-peers"),
        "{text}"
    );
}

/// The patrol scenario paced at real time with a 1 s timeout, written next to the original.
fn real_time_scenario(dir: &Path, timeout_ms: u64) -> PathBuf {
    let mut v: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(repo("config/patrol.yaml")).unwrap())
            .unwrap();
    v["real_time_factor"] = 1.0.into();
    v["simulators"]["timeout_ms"] = timeout_ms.into();
    let path = dir.join("realtime.yaml");
    std::fs::write(&path, serde_yaml::to_string(&v).unwrap()).unwrap();
    path
}

#[test]
fn killing_the_physics_simulator_ends_the_run_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = real_time_scenario(dir.path(), 1000);
    let s = scenario.to_str().unwrap();
    let p_ep = free_endpoint();
    let mut procs = Procs(vec![spawn(COSIM, &["physics-sim", s, "--bind", &p_ep])]);
    let out = dir.path().join("out");
    let mut coordinator = spawn(
        PHYSICS_COORDINATOR,
        &[s, "--physics-sim", &p_ep, "--out", out.to_str().unwrap()],
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        coordinator.try_wait().unwrap().is_none(),
        "the 60 s real-time run is still going"
    );
    procs.0[0].kill().unwrap(); // SIGKILL
    let killed = Instant::now();
    let status = loop {
        if let Some(st) = coordinator.try_wait().unwrap() {
            break st;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "coordinator still running 5 s after the simulator died"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let waited = killed.elapsed();
    let stderr = String::from_utf8(coordinator.wait_with_output().unwrap().stderr).unwrap();
    assert!(
        waited <= Duration::from_millis(1000 + 500),
        "took {waited:?}, timeout is 1 s"
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    let expected = format!("physics simulator at {p_ep}");
    assert!(
        stderr.contains(&expected) && stderr.contains("window"),
        "error names the simulator and the window:\n{stderr}"
    );
}

/// The run is told to stop once it is under way: a program it starts as window 0 opens marks
/// that (how long a loaded machine takes to get there is its own business).
#[test]
fn a_coordinator_interrupted_by_sigterm_stops_cleanly_with_exit_130() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = real_time_scenario(dir.path(), 1000);
    let mark = dir.path().join("under_way");
    let mut v: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&scenario).unwrap()).unwrap();
    v["programs"] = serde_yaml::from_str(&format!(
        "[{{name: mark, command: 'touch {}'}}]",
        mark.display()
    ))
    .unwrap();
    std::fs::write(&scenario, serde_yaml::to_string(&v).unwrap()).unwrap();
    let out = dir.path().join("out");
    let child = spawn(
        COSIM,
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--timeline",
        ],
    );
    let hung = Instant::now() + Duration::from_secs(60);
    while !mark.exists() {
        assert!(
            Instant::now() < hung,
            "the run did not start its program in 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true);
    let windows = summary["windows"].as_u64().unwrap();
    println!("interrupted after {windows} windows");
    assert!(windows < 6000, "{windows}");
    let lines = std::fs::read_to_string(out.join("timeline.jsonl"))
        .unwrap()
        .lines()
        .count() as u64;
    assert_eq!(
        lines,
        windows * 3,
        "the timeline holds exactly the completed windows"
    );
}

#[test]
fn broken_scenarios_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(repo("config/patrol.yaml"))
        .unwrap()
        .replacen("window_ms:", "window_msec:", 1);
    std::fs::write(&path, text).unwrap();
    let out = Command::new(COSIM)
        .args([
            "run",
            path.to_str().unwrap(),
            "--out",
            dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.yaml:") && err.contains("window_msec"),
        "{err}"
    );
    assert!(!dir.path().join("timeline.jsonl").exists());
}

// ---- protocol errors, with the library's own links ----

/// A physics simulator that answers with the wrong window from window 3 on.
struct OffByOne(u32);
impl Service for OffByOne {
    fn call(&mut self, _request: Vec<u8>) -> Reply<'_> {
        let k = self.0;
        self.0 += 1;
        let answer = if k >= 3 { k + 1 } else { k };
        Box::pin(std::future::ready(Ok(physics_end(answer, empty_channel()))))
    }
}

fn empty_channel() -> Vec<u8> {
    Vec::new() // a ChannelData with no nodes: valid for a run without a timeline
}

fn coordinator(physics: Link, windows: u32) -> PhysicsCoordinator {
    let schedule = Schedule {
        window_ns: 10_000_000,
        windows,
    };
    let net = Link::local(
        "network simulator",
        Box::new(PassthroughNetwork::new(windows)),
    );
    let network = Link::local(
        "network coordinator",
        Box::new(netsim_cosim::coord::NetworkCoordinator::new(
            net,
            schedule,
            Duration::from_secs(5),
        )),
    );
    PhysicsCoordinator::new(physics, network, schedule)
        .with_startup_timeout(Duration::from_secs(5))
        .with_scenario_name("test")
}

#[tokio::test]
async fn an_out_of_turn_answer_is_a_protocol_error_naming_the_window() {
    let err = coordinator(
        Link::local("scripted physics simulator", Box::new(OffByOne(0))),
        10,
    )
    .run(std::future::pending())
    .await
    .unwrap_err();
    let err = err.downcast::<LinkError>().unwrap();
    assert_eq!(
        err.to_string(),
        "scripted physics simulator broke the window protocol in window 3: expected END for window 3, got END for window 4"
    );
}

/// A physics simulator for 2 vehicles whose ChannelData, from window 2 on, has a path to a
/// third vehicle that does not exist.
struct StrayPath(u32);
impl Service for StrayPath {
    fn call(&mut self, _request: Vec<u8>) -> Reply<'_> {
        use netsim_cosim::wire::proto::{ChannelData, PathDetails};
        use prost::Message;
        let k = self.0;
        self.0 += 1;
        let path = |ids: Vec<u32>| PathDetails {
            ids,
            los: true,
            num_hops: vec![2],
            hop_points: vec![0.0; 8],
            ..Default::default()
        };
        let mut c = ChannelData {
            node_list: vec![0.0; 14],
            path_details: vec![path(vec![0, 1])],
        };
        if k >= 2 {
            c.path_details.push(path(vec![1, 2]));
        }
        Box::pin(std::future::ready(Ok(physics_end(k, c.encode_to_vec()))))
    }
}

#[tokio::test]
async fn a_channel_naming_an_unknown_vehicle_is_a_protocol_error_naming_the_window_and_field() {
    let c = coordinator(
        Link::local("scripted physics simulator", Box::new(StrayPath(0))),
        10,
    )
    .with_vehicles(2);
    let err = c.run(std::future::pending()).await.unwrap_err();
    let err = err.downcast::<LinkError>().unwrap();
    assert_eq!(
        err.to_string(),
        "scripted physics simulator broke the window protocol in window 2: channel_data: \
         path_details[1]: ids [1, 2]: expected two vehicle indices a < b < 2"
    );
}

/// Answers windows 0..stall, then never again.
struct Stalls {
    next: u32,
    stall: u32,
}
impl Service for Stalls {
    fn call(&mut self, _request: Vec<u8>) -> Reply<'_> {
        let k = self.next;
        self.next += 1;
        if k >= self.stall {
            return Box::pin(std::future::pending());
        }
        Box::pin(std::future::ready(Ok(physics_end(k, empty_channel()))))
    }
}

#[tokio::test]
async fn a_silent_simulator_over_zeromq_times_out_with_its_name_and_window() {
    let ep = free_endpoint();
    let served = ep.clone();
    tokio::spawn(async move {
        let _ = zmq::serve(
            &served,
            &mut Stalls { next: 0, stall: 5 },
            Duration::from_secs(10),
        )
        .await;
    });
    let physics = Link::zeromq(
        "physics simulator",
        &ep,
        Duration::from_millis(300),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let started = Instant::now();
    let err = coordinator(physics, 100)
        .run(std::future::pending())
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let err = err.downcast::<LinkError>().unwrap();
    assert_eq!(
        err.to_string(),
        format!("physics simulator at {ep} did not answer window 5 within 300 ms")
    );
}

#[tokio::test]
async fn a_simulator_that_never_comes_up_fails_the_connection_within_the_startup_timeout() {
    let ep = free_endpoint();
    let started = Instant::now();
    let err = Link::zeromq(
        "physics simulator",
        &ep,
        Duration::from_millis(300),
        Duration::from_millis(500),
    )
    .await
    .err()
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        err.to_string().starts_with(&format!(
            "physics simulator at {ep} failed in window 0: cannot connect"
        )),
        "{err}"
    );
}

// ---- an ns-3 adapter started by the coordinator, played by a stand-in ----
// (The real netsim-ns3 runs in test/ns3.rs; these check the coordinator's side of it.)

/// patrol.yaml as ns-3 can build it (rf links), choosing ns-3 as the network simulator.
fn ns3_scenario(dir: &Path, real_time_factor: f64, timeout_ms: u64) -> PathBuf {
    let mut v: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(repo("config/patrol.yaml")).unwrap())
            .unwrap();
    v["links"]["default"] = serde_yaml::from_str("{model: rf}").unwrap();
    v["simulators"]["network"] = serde_yaml::from_str("{kind: ns3}").unwrap();
    v["simulators"]["timeout_ms"] = timeout_ms.into();
    v["real_time_factor"] = real_time_factor.into();
    let path = dir.join("ns3.yaml");
    std::fs::write(&path, serde_yaml::to_string(&v).unwrap()).unwrap();
    path
}

/// A stand-in for netsim-ns3 at `dir/fake-ns3`: records its pid and arguments in `fake.args` and
/// its server's pid in `fake.server`, serves the embedded network simulator of `scenario` on its
/// `--bind` endpoint (`cosim network-sim`), says it listens, then runs `then` (`$!` is the server).
fn fake_adapter(dir: &Path, scenario: &Path, then: &str) -> PathBuf {
    let d = dir.display();
    let body = format!(
        r#"#!/bin/sh
for a; do case "$a" in --bind=*) ep="${{a#--bind=}}";; esac; done
echo "$$ $*" > "{d}/fake.args"
"{COSIM}" network-sim "{}" --bind "$ep" --idle-timeout-s 20 &
echo $! > "{d}/fake.server"
echo "listening on $ep"
{then}
"#,
        scenario.display()
    );
    let path = dir.join("fake-ns3");
    std::fs::write(&path, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `cosim run scenario --out out` with the stand-in as the adapter; waits at most `limit`.
fn run_with_adapter(
    adapter: &Path,
    scenario: &Path,
    out: &Path,
    extra: &[&str],
    limit: Duration,
) -> (Option<i32>, String, Duration) {
    let mut child = Command::new(COSIM)
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(extra)
        .env("NETSIM_NS3", adapter)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = started.elapsed();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        took,
    )
}

#[test]
fn an_adapter_started_by_the_coordinator_carries_the_windows_and_ends_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = ns3_scenario(dir.path(), 0.0, 2000);
    let adapter = fake_adapter(dir.path(), &scenario, "wait");
    let out = dir.path().join("out");
    let (code, stderr, _) = run_with_adapter(
        &adapter,
        &scenario,
        &out,
        &["--timeline"],
        Duration::from_secs(120),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let args = std::fs::read_to_string(dir.path().join("fake.args")).unwrap();
    let (pid, args) = args.trim().split_once(' ').unwrap();
    let socket = out.join("ns3.sock");
    for expected in [
        format!("--bind=ipc://{}", socket.display()),
        "--nodes=3".into(),
        "--windowNs=10000000".into(),
        "--windows=6000".into(),
        "--seed=42".into(),
    ] {
        assert!(
            args.split(' ').any(|a| a == expected),
            "{expected} in {args}"
        );
    }
    assert!(
        args.split(' ').any(|a| a == "--wifiNodes=0,1,2") && !args.contains("--uanNodes"),
        "{args}"
    );
    assert!(!common::alive(pid), "the adapter ended with the run");
    assert!(!common::alive(
        &std::fs::read_to_string(dir.path().join("fake.server")).unwrap()
    ));
    assert!(!socket.exists(), "its socket is removed");
    assert!(std::fs::read_to_string(out.join("ns3.log"))
        .unwrap()
        .starts_with(&format!("$ {} --bind=ipc://", adapter.display())));

    // The same windows as the embedded simulator in the coordinator's own process.
    let embedded = dir.path().join("embedded");
    run_ok(
        COSIM,
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            embedded.to_str().unwrap(),
            "--timeline",
            "--network-sim",
            "embedded",
        ],
    );
    let (a, b) = (
        std::fs::read(out.join("timeline.jsonl")).unwrap(),
        std::fs::read(embedded.join("timeline.jsonl")).unwrap(),
    );
    assert!(a == b && !a.is_empty(), "timelines differ");
}

#[test]
fn an_adapter_that_crashes_mid_run_ends_the_run_with_its_signal_and_window() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = ns3_scenario(dir.path(), 1.0, 1000);
    let adapter = fake_adapter(
        dir.path(),
        &scenario,
        "sleep 1.5; kill -9 $!; kill -SEGV $$",
    );
    let (code, stderr, took) = run_with_adapter(
        &adapter,
        &scenario,
        &dir.path().join("out"),
        &[],
        Duration::from_secs(10),
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        took < Duration::from_millis(1500 + 1000 + 1500),
        "took {took:?}: the crash at 1.5 s, the timeout 1 s"
    );
    let pid = std::fs::read_to_string(dir.path().join("fake.args"))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    let named = format!("ns-3 adapter (fake-ns3, pid {pid}) failed in window ");
    assert!(
        stderr.contains(&named),
        "names the adapter and the window:\n{stderr}"
    );
    assert!(
        stderr.contains("fake-ns3 exited with signal 11 (SIGSEGV); its log "),
        "{stderr}"
    );
}

#[test]
fn an_adapter_that_hangs_mid_run_times_out_and_is_stopped_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = ns3_scenario(dir.path(), 1.0, 1000);
    let adapter = fake_adapter(dir.path(), &scenario, "sleep 1.5; kill -STOP $!; wait");
    let (code, stderr, took) = run_with_adapter(
        &adapter,
        &scenario,
        &dir.path().join("out"),
        &[],
        Duration::from_secs(10),
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        took < Duration::from_millis(1500 + 1000 + 2500),
        "took {took:?}"
    );
    let pid = std::fs::read_to_string(dir.path().join("fake.args"))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    assert!(
        stderr.contains(&format!(
            "ns-3 adapter (fake-ns3, pid {pid}) did not answer window "
        )) && stderr.contains(" within 1000 ms"),
        "{stderr}"
    );
    assert!(!common::alive(&pid), "the adapter is stopped");
    assert!(
        !common::alive(&std::fs::read_to_string(dir.path().join("fake.server")).unwrap()),
        "and its stopped server with it"
    );
}

#[test]
fn ctrl_c_stops_the_run_and_the_adapter_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = ns3_scenario(dir.path(), 1.0, 1000);
    let adapter = fake_adapter(dir.path(), &scenario, "wait");
    let out = dir.path().join("out");
    let child = Command::new(COSIM)
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("NETSIM_NS3", &adapter)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true);
    let pid = std::fs::read_to_string(dir.path().join("fake.args"))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    assert!(!common::alive(&pid), "the adapter is stopped with the run");
    assert!(!common::alive(
        &std::fs::read_to_string(dir.path().join("fake.server")).unwrap()
    ));
    assert!(!out.join("ns3.sock").exists());
}

#[test]
fn switching_to_ns3_on_the_command_line_checks_the_links_and_finds_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let run = |scenario: &Path, env: &str| {
        let out = Command::new(COSIM)
            .args([
                "run",
                scenario.to_str().unwrap(),
                "--out",
                dir.path().join("out").to_str().unwrap(),
                "--network-sim",
                "ns3",
            ])
            .env("NETSIM_NS3", env)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    // patrol.yaml's links are `ideal`: ns-3 has none.
    let (code, err) = run(&repo("config/patrol.yaml"), "/nonexistent/netsim-ns3");
    assert_eq!(code, Some(1));
    assert!(err.contains("config/patrol.yaml:109:5: links.default.model: auv1 - auv2: ns-3 has no `ideal` link; use rf, acoustic or none"), "{err}");
    // With rf links, the missing program.
    let scenario = ns3_scenario(dir.path(), 0.0, 2000);
    let (code, err) = run(&scenario, "/nonexistent/netsim-ns3");
    assert_eq!(code, Some(1));
    assert!(
        err.trim_end().ends_with(
            "error: the ns-3 adapter /nonexistent/netsim-ns3 (NETSIM_NS3) does not exist; build it with `scripts/setup --ns3` \
             (installs ns-3 and builds ns3/ into target/ns3/netsim-ns3), or set simulators.network.endpoint to an adapter already running"
        ),
        "{err}"
    );
}

// ---- participants ----

/// Logs every call it gets; as `producer` it adds one copy end per window.
struct Logged {
    name: &'static str,
    producer: bool,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Logged {
    fn note(&self, what: String) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {what}", self.name));
    }
}

impl netsim_cosim::coord::Participant for Logged {
    fn prepare(&mut self) -> anyhow::Result<()> {
        self.note("prepare".into());
        Ok(())
    }

    fn open(&mut self, w: &netsim_cosim::coord::WindowOpen<'_>) -> anyhow::Result<()> {
        self.note(format!("open {} at {} ns", w.window, w.start_ns));
        Ok(())
    }

    fn window(
        &mut self,
        view: &netsim_cosim::coord::WindowView<'_>,
        ended: &mut netsim_cosim::coord::Ended,
    ) -> anyhow::Result<()> {
        self.note(format!(
            "window {} sees {}",
            view.open.window,
            ended.copy_ends.len()
        ));
        if self.producer {
            ended.copy_ends.push(netsim_cosim::net::ledger::CopyEnd {
                captured_ns: view.open.start_ns,
                src: 0,
                dst: None,
                bytes: 1,
                fate: netsim_cosim::model::fate::Fate::Delivered,
                end_ns: view.open.start_ns,
                corrupted: false,
                emulation: Default::default(),
            });
        }
        Ok(())
    }

    fn stop(&mut self) {
        self.note("stop".into());
    }

    fn finish<'a>(
        &'a mut self,
        end: netsim_cosim::coord::RunEnd<'a>,
    ) -> netsim_cosim::coord::Finishing<'a> {
        self.note(format!("finish after {} windows", end.windows));
        end.report.scenario.push_str(self.name);
        Box::pin(std::future::ready(Ok(())))
    }

    fn report(&mut self, report: &mut netsim_cosim::coord::RunReport) -> anyhow::Result<()> {
        self.note(format!("report {}", report.scenario));
        Ok(())
    }
}

/// Notes when its preparation ended (after a slow start: 300 ms) and when each window opened.
struct SlowToPrepare {
    prepared: std::sync::Arc<std::sync::Mutex<Option<Instant>>>,
    opened: std::sync::Arc<std::sync::Mutex<Vec<Instant>>>,
}

impl netsim_cosim::coord::Participant for SlowToPrepare {
    fn prepare(&mut self) -> anyhow::Result<()> {
        std::thread::sleep(Duration::from_millis(300));
        *self.prepared.lock().unwrap() = Some(Instant::now());
        Ok(())
    }

    fn open(&mut self, w: &netsim_cosim::coord::WindowOpen<'_>) -> anyhow::Result<()> {
        self.opened.lock().unwrap().push(w.opened);
        Ok(())
    }
}

/// What a participant prepares (the programs due at the start) is done before window 0 opens,
/// and the paced schedule starts from there: window k opens k·W after window 0, not k·W after
/// the run started (which would make the first windows late by the preparation and run them
/// back to back to catch up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_preparation_is_done_before_window_0_and_the_schedule_starts_after_it() {
    let prepared = std::sync::Arc::default();
    let opened = std::sync::Arc::default();
    let started = Instant::now();
    coordinator(
        // Right for windows 0 to 2.
        Link::local("scripted physics simulator", Box::new(OffByOne(0))),
        3,
    )
    .with_real_time_factor(1.0)
    .with_participant(SlowToPrepare {
        prepared: std::sync::Arc::clone(&prepared),
        opened: std::sync::Arc::clone(&opened),
    })
    .run(std::future::pending())
    .await
    .unwrap();
    let prepared = prepared.lock().unwrap().expect("prepared");
    let opened = opened.lock().unwrap().clone();
    assert!(prepared >= started + Duration::from_millis(300));
    assert_eq!(opened.len(), 3);
    assert!(
        opened[0] >= prepared,
        "window 0 opened before the preparation ended"
    );
    for (k, at) in opened.iter().enumerate().skip(1) {
        // A window opens at its due time, or later if the one before ran long (never earlier).
        assert!(
            *at >= opened[0] + Duration::from_millis(10 * k as u64),
            "window {k} opened {:?} after window 0, before its due time",
            *at - opened[0]
        );
    }
}

#[tokio::test]
async fn participants_take_part_in_the_order_added_and_see_what_those_before_produced() {
    let log = std::sync::Arc::default();
    let logged = |name, producer| Logged {
        name,
        producer,
        log: std::sync::Arc::clone(&log),
    };
    let report = coordinator(
        Link::local("scripted physics simulator", Box::new(OffByOne(0))),
        2,
    )
    .with_participant(logged("a", true))
    .with_participant(logged("b", false))
    .run(std::future::pending())
    .await
    .unwrap();
    assert_eq!(report.scenario, "testab");
    let expected = [
        "a prepare",
        "b prepare",
        "a open 0 at 0 ns",
        "b open 0 at 0 ns",
        "a window 0 sees 0",
        "b window 0 sees 1",
        "a open 1 at 10000000 ns",
        "b open 1 at 10000000 ns",
        "a window 1 sees 0",
        "b window 1 sees 1",
        "a stop",
        "b stop",
        "a finish after 2 windows",
        "b finish after 2 windows",
        "a report testab",
        "b report testab",
    ];
    assert_eq!(*log.lock().unwrap(), expected);
}
