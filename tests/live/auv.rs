//! The ZeroMQ AUV simulator interface served by `cosim run` from the embedded physics, against
//! clients written as the interface document's Python examples (`test/auv/doc_client.py`:
//! pyzmq, struct, OpenCV's imdecode) in `.venv-test` (`scripts/setup --test`).

use serde_json::Value;
use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn python() -> PathBuf {
    repo(".venv-test/bin/python")
}

/// Two thruster AUVs over a flat floor at −40 m with a north–south ridge (crest −22 m) at
/// x = 10; ports `base` (images), `base + 1` (thrusters), `base + 2` (telemetry).
fn scenario(dir: &Path, base: u16, seconds: f64, rtf: f64) -> PathBuf {
    let s = dir.join("auv.yaml");
    std::fs::write(
        &s,
        format!(
            "name: auv_doc\nwindow_ms: 10\nduration_s: {seconds}\nseed: 1\nreal_time_factor: {rtf}\n\
             world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  terrain: {{kind: procedural, size_m: [400, 400], cell_size_m: 2, base_height_m: -40, relief_m: 0, \
             ridges: [{{from: [10, -150], to: [10, 150], crest_height_m: -22, width_m: 20}}]}}\n\
             vehicles:\n  - {{name: auv0, addresses: [10.40.0.1/24], start: {{x: -100, y: -60, z: -20, heading_deg: 90}}, motion: {{kind: thrusters, auv_id: 0}}}}\n\
             \x20 - {{name: auv1, addresses: [10.40.0.2/24], start: {{x: -30, y: 60, z: -15, heading_deg: 90}}, motion: {{kind: thrusters, auv_id: 1}}}}\n\
             auv_interface: {{images_port: {base}, thrusters_port: {}, telemetry_port: {}, telemetry_hz: 20, cameras: {{width: 128, height: 96, rate_hz: 2}}}}\n",
            base + 1,
            base + 2
        ),
    )
    .unwrap();
    s
}

fn client(args: &[&str]) -> std::process::Child {
    Command::new(python())
        .arg(repo("tests/auv/doc_client.py"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test venv's python (scripts/setup --test)")
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn v(t: &Value, i: usize) -> f64 {
    t[i].as_f64().unwrap()
}

/// Telemetry reaches each client for its own id only; forward thrust moves the AUV along its
/// heading, vertical thrust changes its depth while −127 keeps the other thrusters, a left/right
/// differential turns it; both cameras decode and the bottom camera brightens over the ridge;
/// malformed frames sent meanwhile are counted per reason and change nothing.
#[test]
fn clients_written_as_the_interface_document_drive_the_embedded_auvs() {
    let dir = tempfile::tempdir().unwrap();
    let base = 25555;
    let s = scenario(dir.path(), base, 36.0, 2.0);
    let out = dir.path().join("out");
    let mut run = Command::new(COSIM)
        .arg("run")
        .arg(&s)
        .arg("--out")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let b = base.to_string();
    let motion = client(&["motion", "0", &b]);
    let ridge = client(&["ridge", "1", &b, "16"]);
    let garbage = client(&["garbage", &b]);
    let (motion, ridge, garbage) = (
        motion.wait_with_output().unwrap(),
        ridge.wait_with_output().unwrap(),
        garbage.wait_with_output().unwrap(),
    );
    let status = run.wait().unwrap();
    let (m, r) = (json(&motion), json(&ridge));
    json(&garbage);
    assert!(status.success());

    // Only our id, and the units: metres in the scenario's ENU frame, yaw in radians from east.
    assert_eq!(m["ids"], serde_json::json!([0]), "{m}");
    assert_eq!(r["ids"], serde_json::json!([1]), "{r}");
    let (start, fwd, up, still, turned) = (
        &m["start"],
        &m["forward"],
        &m["up"],
        &m["still"],
        &m["turned"],
    );
    eprintln!("telemetry [x, y, z, yaw, pitch, roll]: start {start}, after 3 s forward {fwd}, 3 s up {up}, 3 s stopped {still}, 2 s turning {turned}");
    assert!(
        v(start, 0) > -101.0 && v(start, 0) < -99.0 && (v(start, 2) + 20.0).abs() < 0.01,
        "{start}"
    );
    assert!(
        v(start, 3).abs() < 1e-3,
        "heading 90° (east) is yaw 0: {start}"
    );
    // Forward: along the heading (east), depth and yaw unchanged.
    let (dx, dy) = (v(fwd, 0) - v(start, 0), v(fwd, 1) - v(start, 1));
    assert!(
        dx > 2.0 && dy.abs() < 0.01 * dx,
        "forward moved ({dx}, {dy})"
    );
    assert!(
        (v(fwd, 2) - v(start, 2)).abs() < 0.01 && v(fwd, 3).abs() < 1e-3,
        "{fwd}"
    );
    // −127 kept left and right: it goes on east while the vertical thruster lifts it.
    assert!(v(up, 0) - v(fwd, 0) > 2.0, "still driven forward: {up}");
    assert!(v(up, 2) - v(fwd, 2) > 1.0, "rose: {up}");
    // Right harder than left: counter-clockwise, the yaw grows.
    assert!(
        v(turned, 3) - v(still, 3) > 0.5,
        "turned from {still} to {turned}"
    );
    assert_eq!(
        (v(turned, 4), v(turned, 5)),
        (0.0, 0.0),
        "pitch and roll stay 0"
    );

    // Cameras: both decode at the configured size; over the ridge (crest at x = 10, 20 m wide)
    // the floor is 7 m below instead of 25 m, so the bottom image is brighter.
    let images = r["images"].as_array().unwrap();
    assert!(images.len() >= 10, "{} images", images.len());
    for i in images {
        assert_eq!(
            (i["front_shape"].clone(), i["bottom_shape"].clone()),
            (
                serde_json::json!([96, 128, 3]),
                serde_json::json!([96, 128, 3])
            )
        );
    }
    let mean_where = |f: &dyn Fn(f64) -> bool| {
        let sel: Vec<f64> = images
            .iter()
            .filter(|i| f(i["x"].as_f64().unwrap()))
            .map(|i| i["bottom_mean"].as_f64().unwrap())
            .collect();
        (sel.iter().sum::<f64>() / sel.len().max(1) as f64, sel.len())
    };
    let (before, n_before) = mean_where(&|x| x < -15.0);
    let (over, n_over) = mean_where(&|x| (5.0..15.0).contains(&x));
    eprintln!("bottom camera mean: {before:.1} over flat floor ({n_before} images), {over:.1} over the ridge ({n_over})");
    assert!(n_before >= 2 && n_over >= 1, "{images:?}");
    assert!(over > 1.5 * before, "{before} → {over}");

    // The malformed frames: counted per reason, none applied.
    let stats: Value =
        serde_json::from_slice(&std::fs::read(out.join("auv_interface.json")).unwrap()).unwrap();
    eprintln!("{stats}");
    let rejected = &stats["frames_rejected"];
    for (reason, n) in [
        ("4 bytes, expected 5", 5),
        ("6 bytes, expected 5", 5),
        ("0 bytes, expected 5", 5),
        ("unknown AUV id 9", 5),
        (
            "left thruster power 101 (byte 1) outside [-100, 100] and not -127 (keep)",
            5,
        ),
        (
            "vertical thruster power -128 (byte 4) outside [-100, 100] and not -127 (keep)",
            5,
        ),
        ("2 parts, expected 1", 5),
    ] {
        assert_eq!(rejected[reason], n, "{reason}: {stats}");
    }
    assert_eq!(
        stats["frames_received"].as_u64().unwrap(),
        stats["frames_applied"].as_u64().unwrap() + 35,
        "{stats}"
    );
}

/// The LOS flags and auv1's position per window, from a run's timeline.jsonl (one pair).
fn timeline(out: &Path) -> Vec<(bool, [f64; 3])> {
    std::fs::read_to_string(out.join("timeline.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let b = v["path"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect::<Vec<_>>();
            (v["los"].as_bool().unwrap(), [b[0], b[1], b[2]])
        })
        .collect()
}

/// The client adapter, pointed at `cosim run` serving the interface from the embedded physics in
/// another process: a program of the client's scenario sends one thruster frame to the client's
/// forwarding port, which passes it on; the server's auv1 rises from behind the ridge. The
/// client's timeline follows the server's trajectory (every pose within 0.25 m of it: the
/// telemetry is 50 ms apart and the vehicle moves at most 0.06 m in that time) and shows the one
/// NLOS → LOS change the server's shows, at the same depth.
#[test]
fn the_client_adapter_follows_the_embedded_server_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let (base, forward) = (26555u16, 27555u16);
    let server = scenario(dir.path(), base, 30.0, 2.0);
    // auv0 at 15 m and auv1 at 35 m depth either side of the ridge (crest at 22 m): NLOS, until
    // auv1 rises.
    let text = std::fs::read_to_string(&server)
        .unwrap()
        .replace(
            "{x: -100, y: -60, z: -20, heading_deg: 90}",
            "{x: -60, y: 0, z: -15, heading_deg: 90}",
        )
        .replace(
            "{x: -30, y: 60, z: -15, heading_deg: 90}",
            "{x: 60, y: 0, z: -35, heading_deg: 90}",
        );
    std::fs::write(&server, &text).unwrap();
    let client_text = text
        .replace(&format!("images_port: {base}, thrusters_port: {}, telemetry_port: {}", base + 1, base + 2), &format!("images_port: {forward}, thrusters_port: {}, telemetry_port: {}", forward + 1, forward + 2))
        .replace("duration_s: 30", "duration_s: 20")
        + &format!(
            "simulators:\n  physics: {{kind: auv_interface, telemetry_port: {}, thrusters_port: {}}}\n\
             programs:\n  - {{name: drive, start_s: 1, command: \"{} {} drive 1 {forward} 0 0 0 100\"}}\n",
            base + 2,
            base + 1,
            python().display(),
            repo("tests/auv/doc_client.py").display()
        );
    let client = dir.path().join("client.yaml");
    std::fs::write(&client, client_text).unwrap();
    let (sout, cout) = (dir.path().join("server"), dir.path().join("client"));
    let s = Command::new(COSIM)
        .arg("run")
        .arg(&server)
        .arg("--out")
        .arg(&sout)
        .arg("--timeline")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let c = Command::new(COSIM)
        .arg("run")
        .arg(&client)
        .arg("--out")
        .arg(&cout)
        .arg("--timeline")
        .output()
        .unwrap();
    let s = s.wait_with_output().unwrap();
    assert!(
        c.status.success(),
        "client: {}",
        String::from_utf8_lossy(&c.stderr)
    );
    assert!(
        s.status.success(),
        "server: {}",
        String::from_utf8_lossy(&s.stderr)
    );

    let (st, ct) = (timeline(&sout), timeline(&cout));
    let moved = ct.last().unwrap().1[2] - ct[0].1[2];
    assert!(moved > 12.0, "the forwarded frame lifted auv1: {moved} m");
    // Each client pose lies on the server's trajectory (the nearest server pose, whose windows
    // are 10 ms and at most 2.27 m/s · 10 ms = 2.3 cm apart).
    let worst = ct
        .iter()
        .map(|(_, p)| {
            st.iter()
                .map(|(_, q)| {
                    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .fold(0.0, f64::max);
    eprintln!("client vs server trajectory: worst distance {worst:.4} m over {} windows; auv1 moved {moved:.1} m", ct.len());
    assert!(worst < 0.25, "{worst}");
    let changes = |t: &[(bool, [f64; 3])]| t.windows(2).filter(|w| w[0].0 != w[1].0).count();
    let flips: Vec<(f64, bool)> = ct
        .windows(2)
        .filter(|w| w[0].0 != w[1].0)
        .map(|w| (w[1].1[2], w[1].0))
        .collect();
    assert!(
        !ct[0].0 && ct.last().unwrap().0 && changes(&ct) == 1,
        "client: NLOS then LOS: starts {}, flips {flips:?}",
        ct[0].0
    );
    assert!(changes(&st) == 1, "server: one change");
    // The change happens at the same depth on both sides (within the 0.25 m above).
    let at = |t: &[(bool, [f64; 3])]| t.windows(2).find(|w| w[0].0 != w[1].0).unwrap()[1].1[2];
    eprintln!(
        "NLOS → LOS with auv1 at z = {:.3} m (client), {:.3} m (server)",
        at(&ct),
        at(&st)
    );
    assert!(
        (at(&ct) - at(&st)).abs() < 0.3,
        "NLOS → LOS at z = {} (client) and {} (server)",
        at(&ct),
        at(&st)
    );
    let stats: Value =
        serde_json::from_slice(&std::fs::read(cout.join("auv_interface.json")).unwrap()).unwrap();
    assert_eq!(stats["thrusters"]["frames_applied"], 1, "{stats}");
    assert!(
        stats["telemetry_received"].as_u64().unwrap() > 300,
        "{stats}"
    );
}

/// A simulator that stops publishing ends the client's run with an error naming the AUV: the
/// server's run lasts 3 s of sim time (1.5 s at real-time factor 2), the client's 20 s with
/// `stale_ms: 500`; and one that is not there ends it after `startup_timeout_ms`.
#[test]
fn a_simulator_that_falls_silent_ends_the_run_naming_the_auv() {
    let dir = tempfile::tempdir().unwrap();
    let base = 26655u16;
    let server = scenario(dir.path(), base, 3.0, 2.0);
    let text = std::fs::read_to_string(&server).unwrap();
    let client = |name: &str, telemetry_port: u16| {
        let c = dir.path().join(name);
        let t = text.replace("duration_s: 3", "duration_s: 20").replace(&format!("images_port: {base}, thrusters_port: {}", base + 1), "images_port: 26755, thrusters_port: 26756")
            + &format!("simulators:\n  physics: {{kind: auv_interface, telemetry_port: {telemetry_port}, thrusters_port: {}, stale_ms: 500}}\n  startup_timeout_ms: 3000\n", base + 1);
        std::fs::write(&c, t).unwrap();
        c
    };
    let (silent, never) = (client("silent.yaml", base + 2), client("never.yaml", 26799));
    let mut s = Command::new(COSIM)
        .arg("run")
        .arg(&server)
        .arg("--out")
        .arg(dir.path().join("s"))
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let c = Command::new(COSIM)
        .arg("run")
        .arg(&silent)
        .arg("--out")
        .arg(dir.path().join("c"))
        .output()
        .unwrap();
    let took = t0.elapsed();
    let _ = s.wait();
    let err = String::from_utf8_lossy(&c.stderr);
    assert!(!c.status.success(), "{err}");
    assert!(
        err.contains("AUV interface simulator at tcp://127.0.0.1:26657 failed in window"),
        "{err}"
    );
    assert!(
        err.contains("(stale_ms 500)") && err.contains("no telemetry from AUV id"),
        "{err}"
    );
    assert!(took < std::time::Duration::from_secs(8), "{took:?}");
    let c = Command::new(COSIM)
        .arg("run")
        .arg(&never)
        .arg("--out")
        .arg(dir.path().join("n"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&c.stderr);
    assert!(err.contains("AUV interface simulator: telemetry: nothing listens at tcp://127.0.0.1:26799: no connection within 3000 ms"), "{err}");
}
