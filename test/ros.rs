//! The ROS 2 layer against real rclpy subscribers (`.ros/bin/python test/ros/listen.py`):
//! /clock in W steps, poses, /tf, path markers, diagnostics, ChannelData, a params file, and
//! /clock inside a vehicle's network namespace. Needs the `ros` feature (so a ROS 2
//! environment: `.ros/env.sh` from `scripts/setup --ros`, or a sourced ROS 2).
#![cfg(feature = "ros")]

use netsim_cosim::wire::proto::ChannelData;
use prost::Message;
use serde_json::Value;
use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::atomic::{AtomicU32, Ordering},
    time::{Duration, Instant},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python when there is one, else the sourced ROS 2's python3.
fn python() -> PathBuf {
    match std::env::var_os("NETSIM_ROS_VENV") {
        Some(v) => Path::new(&v).join("bin/python"),
        None if repo().join(".ros/bin/python").exists() => repo().join(".ros/bin/python"),
        None => "python3".into(),
    }
}

/// A DDS domain of its own per test (tests run in parallel), discovery on loopback only.
fn domain() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    (20 + (std::process::id() % 40) * 4 + NEXT.fetch_add(1, Ordering::SeqCst) % 4).to_string()
}

fn ros_env(cmd: &mut Command, domain: &str) {
    cmd.env("ROS_DOMAIN_ID", domain).env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
}

struct Listener {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

/// Starts listen.py (optionally inside a network namespace) and waits until it subscribed.
fn listen(domain: &str, vehicles: &[&str], netns: Option<&str>) -> Listener {
    let script = repo().join("test/ros/listen.py");
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).arg(python());
            c
        }
        None => Command::new(python()),
    };
    cmd.arg(&script).args(vehicles).args(["--timeout", "60"]).stdout(Stdio::piped());
    ros_env(&mut cmd, domain);
    let mut child = cmd.spawn().expect("start listen.py");
    let (tx, lines) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let first = lines.recv_timeout(Duration::from_secs(30)).expect("listen.py says ready");
    assert_eq!(first, r#"{"ready": true}"#);
    Listener { child, lines }
}

impl Listener {
    /// Every message until the listener exits (3 s after the last /clock).
    fn collect(mut self) -> Vec<Value> {
        let mut v = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Ok(l) = self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            v.push(serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}")));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        v
    }
}

fn run_cosim(domain: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(COSIM);
    cmd.args(args).current_dir(repo());
    ros_env(&mut cmd, domain);
    let out = cmd.output().expect("run cosim");
    assert!(out.status.success(), "cosim {args:?}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    out
}

fn on<'a>(msgs: &'a [Value], topic: &str) -> Vec<&'a Value> {
    msgs.iter().filter(|m| m["topic"] == topic).collect()
}

fn clock(msgs: &[Value]) -> Vec<u64> {
    on(msgs, "/clock").iter().map(|m| m["t_ns"].as_u64().unwrap()).collect()
}

fn scenario() -> String {
    repo().join("test/ros/ridge.yaml").display().to_string()
}

#[test]
fn clock_poses_tf_markers_diagnostics_and_channel_data() {
    let d = domain();
    let l = listen(&d, &["auv1", "auv2", "auv3"], None);
    let out = tempfile::tempdir().unwrap();
    let out_s = out.path().display().to_string();
    run_cosim(&d, &["run", &scenario(), "--out", &out_s, "--ros-args", "-p", "wait_for_subscribers:=1", "-p", "real_time_factor:=5.0"]);
    let msgs = l.collect();

    // /clock: every window's start, in W = 100 ms steps.
    assert_eq!(clock(&msgs), (0..10).map(|k| k * 100_000_000).collect::<Vec<u64>>());

    // Poses: frame map, auv1 and auv2 still, auv3 heading north at 2 m/s (0.2 m per window).
    let p3 = on(&msgs, "/auv3/pose");
    assert!(p3.len() >= 5, "{} auv3 poses", p3.len());
    for p in &p3 {
        assert_eq!(p["frame"], "map");
        let t = p["t_ns"].as_u64().unwrap() as f64 / 1e9;
        let y = p["p"][1].as_f64().unwrap();
        assert!((y - (-40.0 + 2.0 * t)).abs() < 1e-6, "auv3 y {y} at {t} s");
        assert_eq!(p["p"][0].as_f64().unwrap(), 190.0);
    }
    let p1 = on(&msgs, "/auv1/pose");
    assert!(!p1.is_empty());
    assert_eq!(p1[0]["p"], serde_json::json!([0.0, -40.0, -25.0]));
    // Heading 0 (north) is yaw +90° about z: q = (cos 45°, 0, 0, sin 45°).
    let q = p1[0]["q"].as_array().unwrap();
    assert!((q[0].as_f64().unwrap() - 0.5f64.sqrt()).abs() < 1e-9 && (q[3].as_f64().unwrap() - 0.5f64.sqrt()).abs() < 1e-9);

    // /tf: map -> <vehicle>/base_link for all three, every window.
    let tf = on(&msgs, "/tf");
    assert_eq!(tf.len(), 10);
    let children: Vec<&str> = tf[0]["t"].as_array().unwrap().iter().map(|t| t["child"].as_str().unwrap()).collect();
    assert_eq!(children, ["auv1/base_link", "auv2/base_link", "auv3/base_link"]);
    assert!(tf[0]["t"].as_array().unwrap().iter().all(|t| t["parent"] == "map"));

    // /netsim/paths: per pair a LINE_STRIP (4) and a SPHERE_LIST (7); auv1-auv2 crosses the
    // ridge (red, 4 points: A, entry, exit, B), the others are LOS (green, 2 points).
    let paths = on(&msgs, "/netsim/paths");
    assert_eq!(paths.len(), 10);
    let m = paths[0]["markers"].as_array().unwrap();
    assert_eq!(m.len(), 6);
    let kinds: Vec<(i64, i64)> = m.iter().map(|k| (k["id"].as_i64().unwrap(), k["type"].as_i64().unwrap())).collect();
    assert_eq!(kinds, [(0, 4), (1, 7), (2, 4), (3, 7), (4, 4), (5, 7)]);
    let red = |k: &Value| k["color"][0].as_f64().unwrap() > 0.5 && k["color"][1].as_f64().unwrap() < 0.5;
    assert!(red(&m[0]) && red(&m[1]) && !red(&m[2]) && !red(&m[4]));
    assert_eq!(m[0]["points"].as_array().unwrap().len(), 4);
    assert_eq!(m[2]["points"].as_array().unwrap().len(), 2);
    assert_eq!(m[0]["points"][0], serde_json::json!([0.0, -40.0, -25.0]));
    assert!(m.iter().all(|k| k["frame"] == "map"));

    // /diagnostics: one status per pair with distance, LOS, loss and traffic counts.
    let diag = on(&msgs, "/diagnostics");
    assert_eq!(diag.len(), 10);
    let st = diag[0]["status"].as_array().unwrap();
    let names: Vec<&str> = st.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["netsim/link/auv1-auv2", "netsim/link/auv1-auv3", "netsim/link/auv2-auv3"]);
    assert_eq!((st[0]["level"].as_i64(), st[1]["level"].as_i64()), (Some(1), Some(0)));
    let v = &st[0]["values"];
    assert_eq!(v["distance_m"], "80");
    assert_eq!(v["los"], "false");
    assert!(v["loss_db"].as_str().unwrap().parse::<f64>().unwrap() > 0.0);
    assert_eq!((v["delivered_auv1_to_auv2"].as_str(), v["dropped_auv2_to_auv1"].as_str()), (Some("0"), Some("0")));
    assert_eq!(v["snr_db"], "n/a");
    assert_eq!(st[1]["values"]["distance_m"], "190");

    // /netsim/channel_data: the ChannelData protobuf, identical to the timeline's window.
    let cd = on(&msgs, "/netsim/channel_data");
    assert_eq!(cd.len(), 10);
    assert_eq!(cd[3]["label"], "rosnetsim.ChannelData window=3 t_ns=300000000");
    let hex = cd[3]["hex"].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let c = ChannelData::decode(bytes.as_slice()).unwrap();
    assert_eq!(c.node_list.len(), 21);
    assert_eq!(c.path_details.len(), 3);
    assert!(!c.path_details[0].los && c.path_details[1].los);
    assert!((c.node_list[15] - (-40.0 + 0.6)).abs() < 1e-9, "auv3 y at window 3");
    // The run still writes its timeline.
    assert_eq!(std::fs::read_to_string(out.path().join("timeline.jsonl")).unwrap().lines().count(), 30);
}

#[test]
fn params_file_sets_scenario_and_window() {
    let d = domain();
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params.yaml");
    let text = std::fs::read_to_string(repo().join("test/ros/params.yaml")).unwrap().replace("SCENARIO", &scenario());
    std::fs::write(&params, text).unwrap();
    let l = listen(&d, &[], None);
    let out = dir.path().join("out").display().to_string();
    let o = run_cosim(&d, &["run", "--out", &out, "--ros-args", "--params-file", &params.display().to_string()]);
    let msgs = l.collect();
    // window_ms 50 instead of the scenario's 100: 20 windows over the same second.
    assert_eq!(clock(&msgs), (0..20).map(|k| k * 50_000_000).collect::<Vec<u64>>());
    assert!(String::from_utf8_lossy(&o.stdout).contains("ros_ridge: 20 windows of 50 ms"));
}

#[test]
fn network_coordinator_node_reads_its_parameters() {
    // The scenario comes from the parameter; the node serves until its idle timeout.
    let d = domain();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_network_coordinator"));
    cmd.args(["--bind", "tcp://127.0.0.1:0", "--idle-timeout-s", "0.5", "--ros-args", "-p"])
        .arg(format!("scenario:={}", scenario()))
        .args(["-p", "window_ms:=20.0"]);
    ros_env(&mut cmd, &d);
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ROS 2 node /network_coordinator"), "{err}");
    assert!(err.contains("window_ms: Some(20.0)"), "{err}");
    assert!(err.contains("no request for 0.5 s"), "{err}");
}

/// Removes the namespace even if the test fails.
struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

#[test]
fn clock_inside_a_vehicle_namespace() {
    let can = Command::new("ip").args(["netns", "list"]).output().map(|o| o.status.success()).unwrap_or(false);
    if !can || unsafe_geteuid() != 0 {
        eprintln!("skipped: needs root and ip(8) to create a network namespace");
        return;
    }
    // The namespace of auv3 (pattern ncst<pid>-{vehicle}); auv1 and auv2 have none, so get no bridge.
    let pattern = format!("ncst{}-{{vehicle}}", std::process::id());
    let name = pattern.replace("{vehicle}", "auv3");
    assert!(Command::new("ip").args(["netns", "add", &name]).status().unwrap().success());
    let _ns = Netns(name.clone());
    assert!(Command::new("ip").args(["-n", &name, "link", "set", "lo", "up"]).status().unwrap().success());
    let d = domain();
    // The subscriber runs inside the namespace, where only auv3's bridge can reach it.
    let l = listen(&d, &["auv3"], Some(&name));
    let out = tempfile::tempdir().unwrap();
    let o = run_cosim(
        &d,
        &["run", &scenario(), "--out", &out.path().display().to_string(), "--vehicle-netns", &pattern,
          "--ros-args", "-p", "real_time_factor:=5.0", "-p", "bridge_wait_for_subscribers:=1"],
    );
    let msgs = l.collect();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("ROS bridge for auv3 in namespace {name}")), "{err}");
    assert!(err.contains("no ROS bridge for auv1"), "{err}");
    // /clock inside the namespace: every window's start, in W steps.
    assert_eq!(clock(&msgs), (0..10).map(|k| k * 100_000_000).collect::<Vec<u64>>());
    // The vehicle's own pose, and no other vehicle's.
    let p3 = on(&msgs, "/auv3/pose");
    assert!(!p3.is_empty());
    assert_eq!(p3[0]["p"][0].as_f64(), Some(190.0));
}

fn unsafe_geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}
