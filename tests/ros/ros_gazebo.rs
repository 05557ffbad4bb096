//! The Gazebo coupling against the stand-in (`tests/ros/gazebo_standin.py`, an rclpy node that
//! keeps gz-sim's world-control semantics): the stand-in's own contract
//! (`tests/ros/gazebo_contract.py`), and, built with `--features gazebo`, `cosim run` with
//! Gazebo as the physics simulator, window by window and when Gazebo fails. Needs the `ros`
//! feature (so a ROS 2 environment: `.ros/env.sh` from `scripts/setup --ros`, or a sourced
//! ROS 2).
#![cfg(feature = "ros")]

use crate::ros_common;

#[cfg(feature = "gazebo")]
use ros_common::COSIM;
use ros_common::{domain, python, repo, ros_env};
use serde_json::Value;
#[cfg(feature = "gazebo")]
use std::time::{Duration, Instant};
use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
};

/// Starts tests/ros/gazebo_standin.py with `args` in DDS domain `domain` and waits for its
/// `ready`.
fn start_standin(domain: &str, args: &[&str]) -> Child {
    let mut s = Command::new(python());
    s.arg(repo().join("tests/ros/gazebo_standin.py"))
        .args(args)
        .stdout(Stdio::piped());
    ros_env(&mut s, domain);
    let mut standin = s.spawn().unwrap();
    let mut ready = String::new();
    BufReader::new(standin.stdout.as_mut().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "ready");
    standin
}

/// Runs tests/ros/gazebo_standin.py (`standin` extra arguments) and gazebo_contract.py against it;
/// the contract's JSON report.
fn gazebo_contract(standin: &[&str]) -> Value {
    let domain = domain();
    let fixed = [
        "--world",
        "lockstep",
        "--step",
        "0.001",
        "--model",
        "auv1,0,0,-10,1,0,0",
        "--timeout",
        "60",
    ];
    let mut standin = start_standin(&domain, &[&fixed[..], standin].concat());
    let mut c = Command::new(python());
    c.arg(repo().join("tests/ros/gazebo_contract.py"))
        .args(["--world", "lockstep", "--model", "auv1", "--step", "0.001"]);
    ros_env(&mut c, &domain);
    let out = c.output().unwrap();
    let _ = standin.kill();
    let _ = standin.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The Gazebo stand-in behaves as gz-sim documents it (the contract the Gazebo coupling is built
/// against): ControlWorld answers before stepping; pause + multi_step N runs exactly N steps and
/// pauses again, each step's /clock at its start and its pose stamped at its end; multi_step
/// without pause lets the world run; and a stand-in told to never step still answers `true`.
#[test]
fn the_gazebo_standin_keeps_gz_sims_control_semantics() {
    let r = gazebo_contract(&[]);
    assert_eq!(r["poses_while_paused_at_start"], 0, "{r}");
    assert_eq!(
        (r["reply"].as_bool(), r["reached"].as_bool()),
        (Some(true), Some(true)),
        "{r}"
    );
    assert_eq!(
        r["stamps_after_5"],
        serde_json::json!([1, 2, 3, 4, 5]),
        "five steps, then paused: {r}"
    );
    assert_eq!(
        r["clock_after_5"],
        serde_json::json!([0, 1, 2, 3, 4, 5]),
        "/clock at each step's start, then repeated while paused: {r}"
    );
    assert!(
        r["steps_when_running"].as_u64().unwrap() > 3,
        "multi_step without pause runs the world: {r}"
    );
    assert_eq!(r["poses_after_pause"], 0, "{r}");

    let never = gazebo_contract(&["--never-step"]);
    assert_eq!(
        (never["reply"].as_bool(), never["reached"].as_bool()),
        (Some(true), Some(false)),
        "{never}"
    );
}

/// A Gazebo run against the stand-in: the scenario (10 ms windows of 5 Gazebo steps of 2 ms,
/// 2 s, auv2 being the Gazebo model `sub2`), the stand-in's `extra` arguments. Returns cosim's
/// output, how long it took, the stand-in's report and the run's folder.
#[cfg(feature = "gazebo")]
fn gazebo_run(extra: &[&str]) -> (std::process::Output, Duration, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("gz.yaml");
    std::fs::write(
        &scenario,
        "name: lockstep_gz\nwindow_ms: 10\nduration_s: 2\nseed: 1\nreal_time_factor: 0\n\
         world:\n  origin: {lat_deg: 41.5, lon_deg: -70.6}\n  terrain:\n    kind: procedural\n    size_m: [600, 400]\n    cell_size_m: 2\n    base_height_m: -60\n    relief_m: 0\n    ridges:\n      - {from: [-60, 0], to: [60, 0], crest_height_m: -12, width_m: 30}\n\
         vehicles:\n  - {name: auv1, addresses: [10.10.0.1/24], start: {x: 0, y: -40, z: -25, heading_deg: 0}, motion: {kind: external}}\n  - {name: auv2, addresses: [10.10.0.2/24], start: {x: -200, y: 40, z: -25, heading_deg: 0}, motion: {kind: external}}\n\
         simulators:\n  physics: {kind: gazebo, step_ms: 2, models: {auv2: sub2}}\n  timeout_ms: 1500\n  startup_timeout_ms: 20000\n\
         record: {timeline_jsonl: true}\n",
    )
    .unwrap();
    let d = domain();
    let report = dir.path().join("standin.json");
    let report_arg = report.display().to_string();
    let fixed = [
        "--world",
        "lockstep_gz",
        "--step",
        "0.002",
        "--clock-topic",
        "/gazebo/clock",
        "--model",
        "auv1,0,-40,-25,0,0,0",
        "--model",
        "sub2,-200,40,-25,60,0,-1",
        "--timeout",
        "90",
        "--report",
        &report_arg,
    ];
    let mut standin = start_standin(&d, &[&fixed[..], extra].concat());
    let out = dir.path().join("out");
    let mut cmd = Command::new(COSIM);
    cmd.arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .arg("--timeline");
    ros_env(&mut cmd, &d);
    let t0 = Instant::now();
    let output = cmd.output().unwrap();
    let took = t0.elapsed();
    // The stand-in writes its report when told to end (or when it died by itself).
    unsafe { libc::kill(standin.id() as i32, libc::SIGTERM) };
    let _ = standin.wait();
    let r = std::fs::read(&report)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or(Value::Null);
    (output, took, r, dir)
}

/// Gazebo as the physics simulator, against the stand-in: every window's ChannelData holds the
/// stand-in's scripted poses at k·W exactly (auv2 at −200 + 60·t m east, sinking 1 m/s), the
/// ridge between them turns LOS into NLOS once, and the world was stepped one window of 5 steps
/// at a time, never while stepping, and ended at the last window's start: never ahead.
#[cfg(feature = "gazebo")]
#[test]
fn gazebo_as_the_physics_simulator_gives_the_scripted_timeline_window_by_window() {
    let (out, took, report, dir) = gazebo_run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let timeline = std::fs::read_to_string(dir.path().join("out/timeline.jsonl")).unwrap();
    let lines: Vec<Value> = timeline
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 200, "one pair, 200 windows");
    let mut los = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        assert_eq!(l["window"], k as u64);
        let t = k as f64 * 0.01;
        let path = l["path"].as_array().unwrap();
        let at = |p: &Value| -> Vec<f64> {
            p.as_array().unwrap()[..3]
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let (a, b) = (at(&path[0]), at(path.last().unwrap()));
        let want_b = [-200.0 + 60.0 * t, 40.0, -25.0 - t];
        assert!(
            a.iter()
                .zip([0.0, -40.0, -25.0])
                .all(|(x, y)| (x - y).abs() < 1e-6),
            "window {k}: auv1 at {a:?}"
        );
        assert!(
            b.iter().zip(want_b).all(|(x, y)| (x - y).abs() < 1e-6),
            "window {k}: auv2 at {b:?}, scripted {want_b:?}"
        );
        los.push(l["los"].as_bool().unwrap());
    }
    let changes = los.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        los[0] && !los[199] && changes == 1,
        "LOS, then NLOS behind the ridge: {los:?}"
    );
    assert_eq!(
        report["requests"], 199,
        "one step request per window after the first: {report}"
    );
    assert_eq!(report["max_multi_step"], 5, "{report}");
    assert_eq!(
        report["requests_while_stepping"], 0,
        "never a request while stepping: {report}"
    );
    assert_eq!(
        report["t_ns"], 1_990_000_000u64,
        "Gazebo ends at the last window's start: {report}"
    );
    eprintln!("Gazebo stand-in run: 200 windows in {took:?}; stand-in {report}");
}

/// A Gazebo that accepts the step and never steps, dies mid-run, throttles its poses coarser
/// than W, or runs by itself (started unpaused) ends the run within the timeout (1.5 s) with an error naming Gazebo, the
/// world, the window and what was missing.
#[cfg(feature = "gazebo")]
#[test]
fn a_gazebo_that_never_steps_dies_throttles_or_runs_by_itself_ends_the_run_with_its_name() {
    for (extra, window, says) in [
        (
            &["--never-step"][..],
            "window 1",
            "no pose stamped 0.010000 s",
        ),
        (
            &["--die-after-steps", "50"][..],
            "window 11",
            "did not answer pause + multi_step 5",
        ),
        (
            &["--update-frequency", "50"][..],
            "window 1",
            "update_frequency",
        ),
        (&["--running"][..], "window 1", "ahead of the lockstep"),
    ] {
        let (out, took, _, _dir) = gazebo_run(extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?}: {err}");
        for s in ["Gazebo world `lockstep_gz`", window, says] {
            assert!(err.contains(s), "{extra:?}: {s:?} not in {err}");
        }
        assert!(
            took < Duration::from_secs(15),
            "{extra:?}: ended after {took:?}"
        );
        eprintln!(
            "{extra:?}: ended after {took:?}: {}",
            err.lines().last().unwrap_or_default()
        );
    }
}
