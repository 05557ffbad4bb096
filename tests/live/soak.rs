//! Endurance: `cosim soak` (docs/src/development/scale.md, "Endurance"). Two real minutes of
//! config/soak.yaml (root; iperf3 and rclpy from `scripts/setup --run` or `--test`) through the
//! built binary, every check of its soak.json held to account and the memory series shown to
//! cover the run; that config/soak.yaml is the default scenario with only its documented
//! differences; and options the soak refuses, by name.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::common;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn yaml(p: &str) -> serde_yaml::Value {
    serde_yaml::from_str(&std::fs::read_to_string(repo(p)).unwrap()).unwrap()
}

/// config/soak.yaml = config/default.yaml with the differences its header lists, and no other.
#[test]
fn the_soak_scenario_is_the_default_one_with_its_traffic_kept_going() {
    let mut default = yaml("config/default.yaml");
    let soak = yaml("config/soak.yaml");
    // usv2's loop follows the default patrol round the headland, and comes back to its start.
    let path = soak["vehicles"][1]["motion"]["waypoints"].clone();
    let w = path.as_sequence().unwrap();
    let leg = default["vehicles"][1]["motion"]["waypoints"]
        .as_sequence()
        .unwrap();
    assert_eq!(w[..2], leg[..2]);
    assert_eq!(w.last().unwrap()[0], soak["vehicles"][1]["start"]["x"]);
    assert_eq!(w.last().unwrap()[1], soak["vehicles"][1]["start"]["y"]);

    default["name"] = "soak".into();
    default["duration_s"] = 3600.into();
    default["vehicles"][1]["motion"]["waypoints"] = path.clone();
    let client = default["programs"][2]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(client.contains(" -t 58 "), "{client}");
    default["programs"][2]["command"] = client.replace(" -t 58 ", " -t 0 ").into();
    for v in [0, 1] {
        let vehicle = default["vehicles"][v].as_mapping_mut().unwrap();
        assert!(vehicle.remove("ros").is_some(), "usv{} on sim time", v + 1);
    }
    for p in [1, 3] {
        let command = default["programs"][p]["command"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(command.ends_with(" $COSIM_ROS_ARGS"), "{command}");
        default["programs"][p]["command"] = command.trim_end_matches(" $COSIM_ROS_ARGS").into();
    }
    assert_eq!(
        serde_yaml::to_string(&default).unwrap(),
        serde_yaml::to_string(&soak).unwrap(),
        "config/soak.yaml differs from config/default.yaml in more than its header says"
    );
}

/// `cosim soak` with `args`, on a loopback of its own when run as root (the scenario's ports).
fn soak(args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosim"));
    if unsafe { libc::geteuid() } == 0 {
        common::on_own_loopback(&mut cmd);
    }
    cmd.arg("soak").args(args).output().unwrap()
}

#[test]
fn bad_options_are_refused_by_name() {
    let out = soak(&["--minutes", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--minutes 1: at least 2"), "{err}");

    let out = soak(&["--minutes", "NaN"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--minutes NaN"));

    let out = soak(&["--sample-s", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sample-s 0"));

    let out = soak(&["/nonexistent/soak.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/soak.yaml"), "{err}");

    // A program starting after the soak would end.
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late.yaml");
    let text = std::fs::read_to_string(repo("config/soak.yaml")).unwrap();
    let text = text.replace(
        "start_s: 1, command: \"iperf3",
        "start_s: 500, command: \"iperf3",
    );
    std::fs::write(&late, text).unwrap();
    let out = soak(&[late.to_str().unwrap(), "--minutes", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "late.yaml: --minutes 2: duration 120 s: program iperf3-client starts at 500 s"
        ),
        "{err}"
    );
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn two_minutes_of_the_default_traffic_keep_memory_flat_ledgers_balanced_and_leave_nothing() {
    let _one = common::require_root();
    common::require_tools(&["iperf3", "python3", "ip"], "scripts/setup --run");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("soak");
    let t0 = Instant::now();
    let run = soak(&[
        repo("config/soak.yaml").to_str().unwrap(),
        "--minutes",
        "2",
        "--sample-s",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let wall = t0.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    println!("{stdout}\n(soak took {wall:.0} s)");
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("soak.json")).unwrap_or_else(|e| {
            panic!(
                "no soak.json ({e}): {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
                run.status
            )
        }))
        .unwrap();
    assert!(
        run.status.success() && report["passed"] == true,
        "soak failed: {:?}\n{}\nstderr:\n{stderr}\nrun log:\n{}",
        run.status,
        serde_json::to_string_pretty(&report["checks"]).unwrap(),
        std::fs::read_to_string(out.join("cosim_run.stderr.log")).unwrap_or_default()
    );
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "run",
            "memory",
            "network ledger",
            "modem ledger",
            "programs",
            "traffic",
            "leftovers"
        ]
    );
    for c in report["checks"].as_array().unwrap() {
        assert_eq!(c["ok"], true, "{c}");
    }

    // The memory series covers the run: from its first seconds to its last, every second or so.
    let m = &report["memory"];
    // Two minutes of windows at real time, plus what the run reports it slipped behind the
    // wall clock (a busy machine's, not the run's), its catching up and its start.
    let run_s = f(&m["run_s"]);
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let slipped = f(&summary["slipped_seconds"]);
    assert!(
        run_s >= 118.0 && run_s < 135.0 + slipped,
        "windows ran for {run_s} s, {slipped} s slipped"
    );
    // The warm-up is a minute, or a fifth of a run that a loaded machine stretched.
    use netsim_cosim::output::soak::{WARM_UP_MIN_S, WARM_UP_SHARE};
    assert_eq!(
        f(&m["warm_up_s"]),
        WARM_UP_MIN_S.max(WARM_UP_SHARE * run_s),
        "{m}"
    );
    // Judged by the memory check above (growth under 5 % unless the run fell far behind).
    println!("memory growth {:+.2} %", f(&m["growth_percent"]));
    assert!(
        f(&m["rss_warm_up_end_mib"]) > 1.0 && f(&m["rss_end_mib"]) > 1.0,
        "{m}"
    );
    let csv = std::fs::read_to_string(out.join("soak_memory.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("t_s,phase,rss_mib,fds,threads"));
    let rows: Vec<(f64, String, f64)> = lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (
                c[0].parse().unwrap(),
                c[1].to_owned(),
                c[2].parse().unwrap(),
            )
        })
        .collect();
    let running: Vec<&(f64, String, f64)> = rows.iter().filter(|r| r.1 == "run").collect();
    assert!(
        running.len() >= 100,
        "{} samples while running",
        running.len()
    );
    assert!(
        running.first().unwrap().0 <= 3.0,
        "first sample {:?}",
        running.first()
    );
    assert!(
        running.last().unwrap().0 >= run_s - 3.0,
        "last sample {:?}",
        running.last()
    );
    for pair in running.windows(2) {
        assert!(
            pair[1].0 - pair[0].0 <= 5.0,
            "a gap in the samples: {pair:?}"
        );
    }
    assert!(running.iter().all(|r| r.2 > 1.0));
    assert_eq!(
        m["samples"].as_u64().unwrap() as usize,
        rows.len(),
        "soak.json and soak_memory.csv disagree"
    );

    // The ledgers, from the run's own summary as well as the soak's reading of it.
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let n = &summary["network"];
    assert_eq!(n["balanced"], true, "{n}");
    assert_eq!(n["in_flight"], 0, "{n}");
    assert!(n["delivered"].as_u64().unwrap() > 10_000, "{n}");
    for l in n["links"].as_array().unwrap() {
        assert_eq!(l["balanced"], true, "{l}");
        assert_eq!(l["in_flight"], 0, "{l}");
    }
    assert_eq!(report["network"]["captured"], n["captured"]);
    assert!(summary["modems"]["ledger"]["delivered"].as_u64().unwrap() > 0);
    // The traffic kept flowing: iperf3 ran on to the end (stopped by the run, not by -t).
    let iperf = summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "iperf3-client")
        .unwrap();
    assert_eq!(iperf["note"], "stopped with SIGINT", "{iperf}");

    // Nothing left: the soak's own look, and ours.
    let l = &report["leftovers"];
    for k in ["namespaces", "owner_files", "tun_devices", "processes"] {
        assert_eq!(l[k], serde_json::json!([]), "{k}: {l}");
    }
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let ns = String::from_utf8_lossy(&ns.stdout);
    for v in ["usv1", "usv2", "auv1", "auv2", "auv3"] {
        assert!(!ns.contains(&format!("ncs-{v}")), "namespace left: {ns}");
        assert!(!Path::new(&format!("/run/netsim_cosim/ncs-{v}.owner")).exists());
    }
    let left = Command::new("pgrep")
        .args([
            "-f",
            "iperf3 -c 10.30.0.1|examples/(talker|listener|auv_client).py",
        ])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    // The whole soak: its two minutes, what the run says it slipped behind the wall clock
    // (the machine's), and its start, report and clean-up.
    assert!(
        wall < 170.0 + slipped,
        "the two-minute soak took {wall:.0} s, {slipped:.1} s of it slipped"
    );
}
