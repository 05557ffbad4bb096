//! The run as Foxglove-compatible viewers see it, checked with tools of their ecosystem rather
//! than this crate's own readers: every `foxglove.*` message of `record.mcap` against the JSON
//! Schemas of npm `@foxglove/schemas` (tests/viewer/validate_record.py), and a live run through
//! a Foxglove WebSocket client on PyPI's `websockets` (tests/viewer/ws_client.py), held against
//! the record the same run wrote. The runs are `config/default.yaml` without its live traffic
//! (no capture, programs or modems), so no root is needed. Python, its packages and the npm
//! package come from `scripts/setup --test` (.venv-test/, .npm-test/).

use crate::common::{self, viewer_client};

use netsim_cosim::output::record::Record;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use viewer_client::free_port;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The test environment's Python with its packages (and node with @foxglove/schemas), or a
/// failure naming the set-up that installs them.
fn python() -> PathBuf {
    let python = repo(".venv-test/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import jsonschema, mcap, websockets"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} with jsonschema, mcap and websockets is missing: scripts/setup --test",
        python.display()
    );
    python
}

fn foxglove_schemas() {
    common::require_tools(&["node"], "scripts/setup --test");
    let package = repo(".npm-test/node_modules/@foxglove/schemas/package.json");
    assert!(
        package.is_file(),
        "{} is missing: scripts/setup --test installs @foxglove/schemas",
        package.display()
    );
}

/// `config/default.yaml` without what needs root or other processes: no live capture, no
/// programs, no modems or NETSIM manager (the AUVs hold their start positions), sim time not
/// served; paced at `real_time_factor`; top-level keys replaced by `keys` (YAML values).
fn default_without_traffic(dir: &Path, real_time_factor: f64, keys: &[(&str, &str)]) -> PathBuf {
    let text = std::fs::read_to_string(repo("config/default.yaml")).unwrap();
    let mut s: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let m = s.as_mapping_mut().unwrap();
    for key in ["programs", "acoustic_modems", "netsim_manager"] {
        m.remove(key);
    }
    m.insert(
        "network".into(),
        serde_yaml::from_str("{capture: none}").unwrap(),
    );
    m.insert("real_time_factor".into(), real_time_factor.into());
    for (key, value) in keys {
        m.insert((*key).into(), serde_yaml::from_str(value).unwrap());
    }
    for v in m
        .get_mut("vehicles")
        .unwrap()
        .as_sequence_mut()
        .unwrap()
        .iter_mut()
    {
        let v = v.as_mapping_mut().unwrap();
        v.remove("ros");
        v.remove("modem");
        if v["motion"]["kind"] == "external" {
            v.insert(
                "motion".into(),
                serde_yaml::from_str("{kind: stationary}").unwrap(),
            );
        }
    }
    let path = dir.join(format!("default{}.yaml", keys.len()));
    std::fs::write(&path, serde_yaml::to_string(&s).unwrap()).unwrap();
    path
}

fn cosim_run(scenario: &Path, out: &Path, duration_s: f64, extra: &[&str]) -> Command {
    let mut cmd = Command::new(COSIM);
    cmd.arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(["--duration-s", &duration_s.to_string()])
        .args(extra);
    cmd
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn validate(record: &Path, args: &[&str]) -> Output {
    Command::new(python())
        .arg(repo("tests/viewer/validate_record.py"))
        .arg(record)
        .args(args)
        .output()
        .unwrap()
}

/// Messages validated per schema, from the validator's report lines.
fn validated(out: &Output) -> BTreeMap<String, u64> {
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(": ")?;
            let n = rest.split_once(" messages valid")?.0.parse().ok()?;
            Some((name.to_string(), n))
        })
        .collect()
}

/// A run of the default scenario's geometry writes only messages Foxglove's own JSON Schemas
/// take (also closed: no field they do not name, none left out), on every scene topic; a
/// message broken on purpose — the first and the last — is refused with its topic, index, log
/// time and the schema's complaint; a record without the scene has nothing to validate.
#[test]
fn the_record_validates_against_foxglove_schemas_and_a_broken_message_does_not() {
    foxglove_schemas();
    let dir = tempfile::tempdir().unwrap();
    let scenario = default_without_traffic(dir.path(), 0.0, &[]);
    let out = dir.path().join("run");
    let run = cosim_run(&scenario, &out, 25.0, &[]).output().unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let record = out.join("record.mcap");

    let mut counts = None;
    for args in [&[][..], &["--strict"][..]] {
        let v = validate(&record, args);
        assert!(
            v.status.success(),
            "validate_record.py {args:?}: {}{}",
            text(&v.stdout),
            text(&v.stderr)
        );
        let c = validated(&v);
        for (name, topic) in [
            ("foxglove.SceneUpdate", "/scene/terrain 1"),
            ("foxglove.SceneUpdate", "/scene/vehicles 1"),
            ("foxglove.SceneUpdate", "/scene/links "),
            ("foxglove.FrameTransforms", "/tf "),
            ("foxglove.Log", "/events "),
        ] {
            assert!(c.get(name).is_some_and(|&n| n > 0), "{c:?}");
            assert!(
                text(&v.stdout)
                    .lines()
                    .any(|l| l.starts_with(name) && l.contains(topic)),
                "{name} on {topic}: {}",
                text(&v.stdout)
            );
        }
        // 25 s of pose samples every 0.1 s: 250 transforms messages.
        assert_eq!(c["foxglove.FrameTransforms"], 250, "{c:?}");
        counts = Some(c);
    }
    let total: u64 = counts.unwrap().values().sum();

    for n in [1, total] {
        let v = validate(&record, &["--break", &n.to_string()]);
        let (stdout, stderr) = (text(&v.stdout), text(&v.stderr));
        assert_eq!(v.status.code(), Some(1), "--break {n}: {stdout}{stderr}");
        let broke = stdout
            .lines()
            .find_map(|l| l.strip_prefix("broke "))
            .unwrap_or_else(|| panic!("--break {n}: {stdout}"));
        // "broke /tf message 1 (log time 0 ns): /transforms/0/timestamp/nsec 0 -> "0""
        let (where_, what) = broke.split_once(": ").unwrap();
        assert!(what.contains("/nsec "), "{broke}");
        let at = what.split(' ').next().unwrap();
        assert!(
            stderr.contains(&format!("{where_} does not validate against foxglove."))
                && stderr.contains(&format!("at {at}: '"))
                && stderr.contains("is not of type 'integer'"),
            "--break {n}: {broke}\n{stderr}"
        );
        assert!(where_.contains(" message ") && where_.contains("(log time "));
    }
    let v = validate(&record, &["--break", &(total + 1).to_string()]);
    assert_eq!(v.status.code(), Some(2), "{}", text(&v.stderr));
    assert!(
        text(&v.stderr).contains(&format!("only {total} foxglove.* messages")),
        "{}",
        text(&v.stderr)
    );

    // Without the scene there is nothing to validate: a failure, not a pass.
    let plain = default_without_traffic(dir.path(), 0.0, &[("record", "{scene: false}")]);
    let out2 = dir.path().join("plain");
    let run = cosim_run(&plain, &out2, 1.0, &[]).output().unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let v = validate(&out2, &[]);
    assert_eq!(v.status.code(), Some(1));
    assert!(
        text(&v.stderr).contains("has no message on a foxglove.* channel"),
        "{}",
        text(&v.stderr)
    );
}

/// What ws_client.py printed: messages per topic `(log time, message)` in arrival order, and
/// the time messages.
#[derive(Default)]
struct Received {
    topics: BTreeMap<String, Vec<(u64, serde_json::Value)>>,
    times: Vec<u64>,
}

fn received(stdout: &[u8]) -> Received {
    let mut r = Received::default();
    for line in text(stdout).lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:.200}"));
        if let Some(t) = v.get("time_ns") {
            r.times.push(t.as_u64().unwrap());
            continue;
        }
        let topic = v["topic"].as_str().unwrap().to_string();
        let t = v["log_time_ns"].as_u64().unwrap();
        r.topics
            .entry(topic)
            .or_default()
            .push((t, v["message"].clone()));
    }
    r
}

fn ns(t_s: f64) -> u64 {
    (t_s * 1e9).round() as u64
}

/// A `{sec, nsec}` as ns.
fn stamp(v: &serde_json::Value) -> u64 {
    v["sec"].as_u64().unwrap() * 1_000_000_000 + v["nsec"].as_u64().unwrap()
}

/// `cosim run --live` and ws_client.py side by side: the client's output and status, the run's
/// output.
fn live_run(
    scenario: &Path,
    out: &Path,
    duration_s: f64,
    address: &str,
    client_args: &[&str],
) -> (Output, Output) {
    let run = cosim_run(scenario, out, duration_s, &["--live", address])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut procs = common::Procs(vec![run]);
    let client = Command::new(python())
        .arg(repo("tests/viewer/ws_client.py"))
        .arg(format!("ws://{address}"))
        .args(client_args)
        .output()
        .unwrap();
    let run = procs.0.pop().unwrap().wait_with_output().unwrap();
    (client, run)
}

/// A live client subscribed to the scene gets, in non-decreasing log time per topic: the
/// terrain mesh as the record has it (triangles), every vehicle's frame where the record's
/// `/poses` has it at that time (moving), and the usv1–usv2 line in one colour while the
/// record's `/channel` says line of sight and another once it says NLOS.
#[test]
fn a_live_client_receives_the_scene_as_the_record_has_it() {
    let dir = tempfile::tempdir().unwrap();
    // Paced: the client is connected well before usv2 goes behind the headland (~21 s).
    let scenario = default_without_traffic(dir.path(), 4.0, &[]);
    let out = dir.path().join("run");
    let address = format!("127.0.0.1:{}", free_port());
    let (client, run) = live_run(
        &scenario,
        &out,
        24.0,
        &address,
        &[
            "--topics",
            "/scene/terrain,/scene/vehicles,/scene/links,/tf",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        client.status.success(),
        "ws_client.py: {}",
        text(&client.stderr)
    );
    assert!(
        text(&client.stderr).contains("the server closed the connection"),
        "{}",
        text(&client.stderr)
    );
    let got = received(&client.stdout);
    let record = Record::read(&out).unwrap();
    let summary = record.summary.as_ref().unwrap();
    assert_eq!(summary["viewer"]["clients"], 1, "{}", summary["viewer"]);
    assert_eq!(
        summary["viewer"]["dropped_for_clients"], 0,
        "{}",
        summary["viewer"]
    );

    // Sim-time order on every topic, time messages included.
    for (topic, msgs) in &got.topics {
        assert!(
            msgs.windows(2).all(|w| w[0].0 <= w[1].0),
            "{topic}: log times out of order"
        );
    }
    assert!(!got.times.is_empty());
    assert!(got.times.windows(2).all(|w| w[0] <= w[1]));

    // The terrain: one mesh of triangles, the record's.
    let terrain = &got.topics["/scene/terrain"];
    assert_eq!(terrain.len(), 1);
    let mesh = &terrain[0].1;
    let tri = &mesh["entities"][0]["triangles"][0];
    let points = tri["points"].as_array().unwrap().len();
    let indices = tri["indices"].as_array().unwrap().len();
    assert!(
        points >= 3 && indices >= 3 && indices % 3 == 0,
        "{points} {indices}"
    );
    assert_eq!(
        mesh,
        &serde_json::to_value(record.terrain.as_ref().unwrap()).unwrap()
    );
    assert!(!got.topics["/scene/vehicles"].is_empty());

    // The frames: where /poses has each vehicle at the same sim time.
    let poses: BTreeMap<u64, _> = record.poses.iter().map(|p| (ns(p.t_s), p)).collect();
    let tf = &got.topics["/tf"];
    assert!(tf.len() >= 50, "{} /tf messages", tf.len());
    let mut usv2 = Vec::new();
    for (t, m) in tf {
        let sample = poses
            .get(t)
            .unwrap_or_else(|| panic!("/tf at {t} ns: no /poses sample then"));
        let transforms = m["transforms"].as_array().unwrap();
        assert_eq!(transforms.len(), sample.poses.len(), "/tf at {t} ns");
        for tr in transforms {
            assert_eq!(stamp(&tr["timestamp"]), *t);
            assert_eq!(tr["parent_frame_id"], "world");
            let name = tr["child_frame_id"].as_str().unwrap();
            let p = sample.poses.iter().find(|p| p.vehicle == name).unwrap();
            let at = &tr["translation"];
            for (axis, want) in [("x", p.x), ("y", p.y), ("z", p.z)] {
                let have = at[axis].as_f64().unwrap();
                assert!(
                    (have - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "/tf at {t} ns: {name}.{axis} {have}, /poses {want}"
                );
            }
            if name == "usv2" {
                usv2.push((at["x"].as_f64().unwrap(), at["y"].as_f64().unwrap()));
            }
        }
    }
    let (first, last) = (usv2[0], usv2[usv2.len() - 1]);
    assert!(
        (last.0 - first.0).hypot(last.1 - first.1) > 50.0,
        "usv2's frame hardly moved: {first:?} → {last:?}"
    );

    // The usv1–usv2 line: its colour follows the pair's LOS flag in /channel (while the link
    // is usable either way: out of range has a colour of its own).
    let pair = |a: &str, b: &str| (a == "usv1" && b == "usv2") || (a == "usv2" && b == "usv1");
    let los_at = |t: u64| {
        record
            .channel
            .iter()
            .rev()
            .find(|c| pair(&c.a, &c.b) && ns(c.t_s) <= t)
            .map(|c| c.los)
    };
    let usable_at = |t: u64| {
        ["usv1", "usv2"].iter().any(|src| {
            record
                .link_states
                .iter()
                .rev()
                .find(|l| l.src == *src && pair(&l.src, &l.dst) && ns(l.t_s) <= t)
                .is_some_and(|l| l.usable)
        })
    };
    let change = record
        .channel
        .iter()
        .find(|c| pair(&c.a, &c.b) && c.change && !c.los)
        .expect("usv1–usv2 goes NLOS in /channel");
    let mut colours: BTreeMap<bool, BTreeSet<String>> = BTreeMap::new();
    let mut lines = 0;
    for (t, m) in &got.topics["/scene/links"] {
        for e in m["entities"].as_array().unwrap() {
            let id = e["id"].as_str().unwrap();
            if !(id.contains("usv1") && id.contains("usv2")) {
                continue;
            }
            assert_eq!(stamp(&e["timestamp"]), *t, "{id}");
            lines += 1;
            let Some(los) = los_at(*t).filter(|_| usable_at(*t)) else {
                continue;
            };
            let line = &e["lines"][0];
            assert!(line["points"].as_array().unwrap().len() >= 2, "{id} at {t}");
            colours
                .entry(los)
                .or_default()
                .insert(line["color"].to_string());
        }
    }
    assert!(lines > 0, "no usv1–usv2 line received");
    assert!(
        got.topics["/scene/links"]
            .iter()
            .any(|(t, _)| *t >= ns(change.t_s)),
        "no line after the NLOS change at {} s",
        change.t_s
    );
    let (los, nlos) = (&colours[&true], &colours[&false]);
    assert_eq!(los.len(), 1, "line-of-sight colours {los:?}");
    assert_eq!(nlos.len(), 1, "NLOS colours {nlos:?}");
    assert_ne!(los, nlos);
}

/// A client that stops reading for 12 s (its socket's buffers fill, then its queue of 64
/// messages) misses what its queue cannot hold, counted in the summary and in the run's log,
/// and still gets what it was sent, in order, and the server's close at the end; the run is
/// the same as one without it, beside it. With the scene every 10 ms, far more than the
/// buffers hold comes while it stalls; paced, the run outlasts the stall.
#[test]
fn a_stalled_live_client_changes_nothing_in_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = default_without_traffic(
        dir.path(),
        1.0,
        &[
            ("viewer", "{client_queue_messages: 64}"),
            ("record", "{pose_interval_s: 0.01}"),
        ],
    );
    let out = dir.path().join("live");
    let plain = dir.path().join("plain");
    let beside = cosim_run(&scenario, &plain, 30.0, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut beside = common::Procs(vec![beside]);
    let address = format!("127.0.0.1:{}", free_port());
    let (client, run) = live_run(
        &scenario,
        &out,
        30.0,
        &address,
        &[
            "--topics",
            "/scene/links,/tf",
            "--stall-after",
            "0.5",
            "--stall-for",
            "12",
            // Left to itself, Linux grows a stalled reader's receive buffer to megabytes: a
            // client that connected late on a loaded machine could then hold the rest of the
            // run without its queue ever filling.
            "--recv-buffer",
            "65536",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stderr = text(&client.stderr);
    assert!(
        client.status.success()
            && stderr.contains("stalling")
            && stderr.contains("the server closed the connection"),
        "ws_client.py: {stderr}"
    );
    let got = received(&client.stdout);
    for (topic, msgs) in &got.topics {
        assert!(
            msgs.windows(2).all(|w| w[0].0 <= w[1].0),
            "{topic}: log times out of order"
        );
    }
    let lines = text(&client.stdout).lines().count() as u64;

    let run2 = beside.0.pop().unwrap().wait_with_output().unwrap();
    assert!(run2.status.success(), "{}", text(&run2.stderr));
    let (live, plain) = (Record::read(&out).unwrap(), Record::read(&plain).unwrap());
    let (ls, ps) = (live.summary.unwrap(), plain.summary.unwrap());
    let viewer = &ls["viewer"];
    assert_eq!(viewer["clients"], 1, "{viewer}");
    let dropped = viewer["dropped_for_clients"].as_u64().unwrap();
    assert!(dropped > 0, "{viewer}");
    // The summary is written before the last queued messages go out.
    assert!(
        lines >= viewer["messages_sent"].as_u64().unwrap(),
        "{lines} {viewer}"
    );
    assert!(
        text(&run.stderr).contains(&format!("{dropped} missed (its queue was full)")),
        "{}",
        text(&run.stderr)
    );
    assert!(ps.get("viewer").is_none_or(|v| v.is_null()), "{ps}");
    assert_eq!(ls["pairs"], ps["pairs"]);
    assert_eq!(live.poses, plain.poses);
    assert_eq!(live.channel, plain.channel);
    assert_eq!(live.link_states, plain.link_states);
}

/// On an address other than loopback the viewer serves only over TLS (`viewer.tls`, a
/// certificate `cosim viewer-cert` made) and wants the token the run prints: `--live 0.0.0.0:…`
/// without TLS is refused before the run; with it, a client without the token is refused (HTTP
/// 401), one that does not trust the certificate too, and one with both served over `wss://`.
/// The client connects over loopback.
#[test]
fn a_live_run_off_loopback_serves_only_clients_with_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let live = ["--live".to_owned(), format!("0.0.0.0:{port}")];
    let live: Vec<&str> = live.iter().map(String::as_str).collect();
    let plain = default_without_traffic(dir.path(), 1.0, &[]);
    let refused = cosim_run(&plain, &dir.path().join("plain"), 15.0, &live)
        .output()
        .unwrap();
    assert!(
        !refused.status.success()
            && text(&refused.stderr).contains("--live: the live viewer on 0.0.0.0:")
            && text(&refused.stderr).contains("cosim viewer-cert"),
        "{}",
        text(&refused.stderr)
    );
    let certs = dir.path().join("certs");
    let made = Command::new(COSIM)
        .args([
            "viewer-cert",
            certs.to_str().unwrap(),
            "--host",
            "viewer.test",
        ])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert!(text(&made.stdout).contains("SHA-256 fingerprint: "));
    let again = Command::new(COSIM)
        .args(["viewer-cert", certs.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!again.status.success(), "viewer-cert overwrote its files");
    let scenario = default_without_traffic(
        dir.path(),
        1.0,
        &[(
            "viewer",
            "{tls: {cert_file: certs/viewer.crt, key_file: certs/viewer.key}}",
        )],
    );
    let out = dir.path().join("run");
    let mut run = cosim_run(&scenario, &out, 15.0, &live)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = run.stderr.take().unwrap();
    let mut procs = common::Procs(vec![run]);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut log = String::new();
    let token = loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no viewer URL in the run's log:\n{log}"));
        log += &line;
        log.push('\n');
        if let Some((_, t)) = line.split_once("/?token=") {
            break t.split_whitespace().next().unwrap().to_string();
        }
    };
    assert!(token.len() >= 16, "{token}");
    assert!(
        log.contains(&format!("wss://0.0.0.0:{port}/?token=")),
        "{log}"
    );
    let cafile = certs.join("viewer.crt");
    let client = |url: String| {
        Command::new(python())
            .arg(repo("tests/viewer/ws_client.py"))
            .arg(url)
            .args(["--topics", "/tf", "--seconds", "1.5", "--cafile"])
            .arg(&cafile)
            .output()
            .unwrap()
    };
    let untrusted = Command::new(python())
        .arg(repo("tests/viewer/ws_client.py"))
        .arg(format!("wss://localhost:{port}/?token={token}"))
        .args(["--topics", "/tf", "--seconds", "1.5"])
        .output()
        .unwrap();
    assert_eq!(
        untrusted.status.code(),
        Some(2),
        "{}",
        text(&untrusted.stderr)
    );
    assert!(
        text(&untrusted.stderr).contains("TLS refused"),
        "{}",
        text(&untrusted.stderr)
    );
    let refused = client(format!("wss://localhost:{port}"));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("HTTP 401"),
        "{}",
        text(&refused.stderr)
    );
    let first = if token.starts_with('0') { '1' } else { '0' };
    let wrong = client(format!(
        "wss://localhost:{port}/?token={first}{}",
        &token[1..]
    ));
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong.stderr));
    let served = client(format!("wss://localhost:{port}/?token={token}"));
    assert!(served.status.success(), "{}", text(&served.stderr));
    assert!(
        !received(&served.stdout).topics["/tf"].is_empty(),
        "{}",
        text(&served.stderr)
    );
    let status = procs.0[0].wait().unwrap();
    assert!(status.success());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    // Without the token (twice) and without trusting the certificate.
    assert_eq!(summary["viewer"]["refused"], 3, "{}", summary["viewer"]);
    assert_eq!(summary["viewer"]["clients"], 1, "{}", summary["viewer"]);
}

/// The client itself: a message data frame cut short is a protocol error naming the opcode
/// and the length (status 1); a server closing normally ends it with status 0, every message
/// before the close printed.
#[test]
fn the_client_names_a_frame_cut_short_and_ends_cleanly_on_a_close() {
    for (mode, code) in [("close", 0), ("cut", 1)] {
        let port = free_port();
        let mut server = Command::new(python())
            .arg(repo("tests/viewer/fake_server.py"))
            .arg(port.to_string())
            .arg(mode)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "listening");
        let _server = common::Procs(vec![server]);
        let client = Command::new(python())
            .arg(repo("tests/viewer/ws_client.py"))
            .arg(format!("ws://127.0.0.1:{port}"))
            .args(["--topics", "/a"])
            .output()
            .unwrap();
        let stderr = text(&client.stderr);
        assert_eq!(client.status.code(), Some(code), "{mode}: {stderr}");
        assert_eq!(
            text(&client.stdout),
            "{\"time_ns\":1500000000}\n{\"topic\":\"/a\",\"log_time_ns\":2000000000,\"message\":{\"x\":1}}\n",
            "{mode}"
        );
        match mode {
            "close" => assert!(stderr.contains("the server closed the connection (code 1000)"), "{stderr}"),
            _ => assert!(
                stderr.contains("binary frame cut short: opcode 0x01 (message data) needs 13 header bytes (opcode, u32 subscription, u64 log time), the frame has 5"),
                "{stderr}"
            ),
        }
    }
}

/// The record opens in Foxglove Studio (npm @foxglove/studio-base, in headless Chromium) with
/// the shipped layout: the player reports no problem with any channel, the scene's topics are
/// listed with their foxglove.* schemas, and the 3D panel draws (tests/viewer/studio_check.py).
#[test]
fn the_record_opens_in_foxglove_studio_and_its_3d_panel_draws() {
    common::require_tools(&["chromium"], "scripts/setup --test");
    let dir = tempfile::tempdir().unwrap();
    let scenario = default_without_traffic(dir.path(), 0.0, &[]);
    let out = dir.path().join("run");
    let run = cosim_run(&scenario, &out, 15.0, &[]).output().unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let shot = dir.path().join("studio.png");
    let check = Command::new(python())
        .arg(repo("tests/viewer/studio_check.py"))
        .arg(&out)
        .arg("--layout")
        .arg(repo("config/foxglove-layout.json"))
        .arg("--screenshot")
        .arg(&shot)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&check.stdout), text(&check.stderr));
    assert!(check.status.success(), "studio_check.py: {stdout}{stderr}");
    for topic in [
        "topic /scene/terrain foxglove.SceneUpdate",
        "topic /scene/vehicles foxglove.SceneUpdate",
        "topic /scene/links foxglove.SceneUpdate",
        "topic /tf foxglove.FrameTransforms",
        "topic /events foxglove.Log",
    ] {
        assert!(stdout.lines().any(|l| l == topic), "{topic}: {stdout}");
    }
    assert!(shot.is_file());
}
