//! The run record end to end: a small scenario through the physics coordinator (embedded
//! physics and network simulators), `record.mcap` read back with `Record::read` and held against
//! the per-window timeline and the summary of the same run; and a run stopped half way.
use netsim_cosim::{config, output::record::Record};
use std::{
    path::{Path, PathBuf},
    time::Duration,
};

/// auv1 holds station south of a ridge; auv2 runs east north of it at 10 m/s, so their path
/// clears the ridge's western end at first and is blocked once auv2 comes round, while its path
/// to auv3 (far east, south) clears the ridge's eastern end. rf links everywhere.
fn scenario(dir: &Path, duration_s: f64, real_time_factor: f64, record: &str) -> PathBuf {
    let text = format!(
        "name: record_test
window_ms: 10
duration_s: {duration_s}
real_time_factor: {real_time_factor}
seed: 5
world:
  origin: {{lat_deg: 41.5, lon_deg: -70.6}}
  terrain:
    kind: procedural
    size_m: [600, 400]
    cell_size_m: 2
    base_height_m: -60
    ridges:
      - {{from: [-60, 0], to: [60, 0], crest_height_m: -12, width_m: 30}}
vehicles:
  - name: auv1
    addresses: [10.20.0.1/24]
    start: {{x: 0, y: -40, z: -25}}
    motion: {{kind: stationary}}
  - name: auv2
    addresses: [10.20.0.2/24]
    start: {{x: -160, y: 40, z: -25, heading_deg: 90}}
    motion:
      kind: patrol
      speed_mps: 10
      max_turn_rate_deg_s: 30
      max_depth_rate_mps: 0.5
      waypoints: [[250, 40, -25]]
  - name: auv3
    addresses: [10.20.0.3/24]
    start: {{x: 250, y: -40, z: -25}}
    motion: {{kind: stationary}}
links:
  default: {{model: rf, path_loss_exponent: 2.2}}
{record}"
    );
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The same JSON, numbers equal to 1e-12 relative (a float read back may differ in its last bit).
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::*;
    match (a, b) {
        (Number(x), Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Object(x), Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn run(scenario: &Path, out: &Path, stop_after: Option<Duration>) -> serde_json::Value {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let loaded = config::load(scenario).unwrap();
    let report = rt.block_on(async {
        let c = netsim_cosim::coord::physics_coordinator(&loaded, None, Some(out.to_path_buf()))
            .await
            .unwrap();
        match stop_after {
            Some(d) => c.run(tokio::time::sleep(d)).await.unwrap(),
            None => c.run(std::future::pending()).await.unwrap(),
        }
    });
    serde_json::to_value(&report).unwrap()
}

#[test]
fn the_record_holds_the_run_samples_and_every_los_change_of_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        8.0,
        0.0,
        "record: {pose_interval_s: 0.5, channel_interval_s: 2, timeline_jsonl: true}\n",
    );
    let out = dir.path().join("out");
    let report = run(&s, &out, None);
    assert_eq!(report["windows"], 800);
    let r = Record::read(&out).unwrap();

    let info = r.run.as_ref().expect("/run");
    assert_eq!(
        (
            info.scenario.as_str(),
            info.window_ms,
            info.pose_interval_s,
            info.channel_interval_s
        ),
        ("record_test", 10.0, 0.5, 2.0)
    );
    assert_eq!(info.vehicles, ["auv1", "auv2", "auv3"]);

    // /poses every 0.5 s of 8 s: 16, the first at 0 with the start positions.
    assert_eq!(r.poses.len(), 16);
    assert_eq!(r.poses[0].poses[1].x, -160.0);
    assert!((r.poses[15].t_s - 7.5).abs() < 1e-9);

    // The per-window timeline of the same run: every LOS flip of every pair.
    let timeline = std::fs::read_to_string(out.join("timeline.jsonl")).unwrap();
    let mut last: std::collections::HashMap<(String, String), bool> = Default::default();
    let mut flips = Vec::new();
    for line in timeline.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = (
            v["a"].as_str().unwrap().to_string(),
            v["b"].as_str().unwrap().to_string(),
        );
        let los = v["los"].as_bool().unwrap();
        if last.insert(key.clone(), los).is_some_and(|l| l != los) {
            flips.push((v["window"].as_u64().unwrap(), key.0, key.1, los));
        }
    }
    assert_eq!(timeline.lines().count(), 800 * 3);
    assert!(
        flips.iter().any(|f| f.1 == "auv1" && f.2 == "auv2" && !f.3),
        "auv1-auv2 goes NLOS in the run: {flips:?}"
    );
    let changes: Vec<(u64, String, String, bool)> = r
        .channel
        .iter()
        .filter(|c| c.change)
        .map(|c| {
            (
                (c.t_s * 100.0).round() as u64,
                c.a.clone(),
                c.b.clone(),
                c.los,
            )
        })
        .collect();
    assert_eq!(
        changes, flips,
        "a /channel change at exactly the windows where the timeline's LOS flips"
    );
    // The periodic samples: all 3 pairs at 0, 2, 4, 6 s, and nothing else.
    let periodic: Vec<u64> = r
        .channel
        .iter()
        .filter(|c| !c.change)
        .map(|c| (c.t_s * 100.0).round() as u64)
        .collect();
    assert_eq!(
        periodic,
        [0, 0, 0, 200, 200, 200, 400, 400, 400, 600, 600, 600]
    );
    let nlos = r.channel.iter().find(|c| c.change && !c.los).unwrap();
    assert!(nlos.loss_db > 0.0 && nlos.hops >= 4, "{nlos:?}");

    // Link state from the embedded network simulator: every directed pair in window 0, with a
    // finite SNR (rf), and again when auv1-auv2's path goes behind the ridge.
    let at0: Vec<_> = r.link_states.iter().filter(|l| l.t_s == 0.0).collect();
    assert_eq!(at0.len(), 6);
    assert!(
        at0.iter().all(|l| l.snr_db.is_some_and(f64::is_finite)
            && l.rate_bps > 0.0
            && (0.0..=1.0).contains(&l.per)),
        "{at0:?}"
    );
    let (nlos_window, _, _, _) = flips
        .iter()
        .find(|f| f.1 == "auv1" && f.2 == "auv2" && !f.3)
        .unwrap();
    let behind = r.link_states.iter().find(|l| {
        (l.t_s * 100.0).round() as u64 == *nlos_window && l.src == "auv1" && l.dst == "auv2"
    });
    assert!(
        behind.is_some(),
        "the link state changes with the terrain loss at window {nlos_window}"
    );
    // Reported on change only: the two stationary vehicles' link once, and every later report
    // of a pair differs from its previous one beyond the tolerances.
    assert_eq!(
        r.link_states
            .iter()
            .filter(|l| l.src == "auv1" && l.dst == "auv3")
            .count(),
        1
    );
    let mut held: std::collections::HashMap<
        (&str, &str),
        &netsim_cosim::output::schema::LinkState,
    > = Default::default();
    for l in &r.link_states {
        if let Some(h) = held.insert((l.src.as_str(), l.dst.as_str()), l) {
            let snr = match (h.snr_db, l.snr_db) {
                (Some(a), Some(b)) => (a - b).abs() >= 0.1,
                (a, b) => a.is_some() != b.is_some(),
            };
            let per = (h.per - l.per).abs() > (0.01 * h.per.max(l.per)).max(0.001);
            let delay = (h.delay_s - l.delay_s).abs() >= (h.delay_s * 1e-3).max(1e-6) - 1e-12;
            assert!(
                h.usable != l.usable || h.rate_bps != l.rate_bps || snr || per || delay,
                "{h:?} then {l:?}"
            );
        }
    }

    // /summary: the run's summary, with the pair counts the timeline gives.
    let summary = r.summary.as_ref().expect("/summary");
    assert!(same_json(summary, &report), "{summary}\n{report}");
    assert_eq!(summary["interrupted"], false);
    let pair = summary["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["a"] == "auv1" && p["b"] == "auv2")
        .unwrap();
    let nlos_lines = timeline
        .lines()
        .filter(|l| l.contains(r#""a":"auv1","b":"auv2","los":false"#))
        .count() as u64;
    assert_eq!(pair["nlos_windows"], nlos_lines);
    assert_eq!(
        pair["transitions"],
        flips
            .iter()
            .filter(|f| f.1 == "auv1" && f.2 == "auv2")
            .count() as u64
    );
    assert_eq!(r.unknown_messages, 0);
}

#[test]
fn a_run_stopped_half_way_leaves_a_complete_record_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), 30.0, 1.0, "record: {pose_interval_s: 0.1}\n");
    let out = dir.path().join("out");
    let report = run(&s, &out, Some(Duration::from_millis(1500)));
    assert_eq!(report["interrupted"], true);
    let windows = report["windows"].as_u64().unwrap();
    assert!(windows > 50 && windows < 3000, "{windows}");
    assert!(
        !out.join("timeline.jsonl").exists(),
        "no timeline unless asked"
    );
    let r = Record::read(&out.join("record.mcap")).unwrap();
    assert!(same_json(r.summary.as_ref().unwrap(), &report));
    // One pose sample per 10 completed windows, the last window's included.
    assert_eq!(r.poses.len() as u64, windows.div_ceil(10));
    let periodic = r.channel.iter().filter(|c| !c.change).count() as u64;
    assert_eq!(periodic, 3 * windows.div_ceil(100));
}

/// A network simulator that answers every window, with a link state naming vehicle 7 from
/// window 2 on.
struct StrayLinkState;
impl netsim_cosim::lockstep::Service for StrayLinkState {
    fn call(&mut self, request: Vec<u8>) -> netsim_cosim::lockstep::Reply<'_> {
        use netsim_cosim::wire::proto::{
            rosnetsim::network_update::MsgType, LinkState, NetworkUpdate,
        };
        use prost::Message;
        let r = NetworkUpdate::decode(request.as_slice())
            .map_err(|e| e.to_string())
            .map(|b| {
                let k = b.time_val;
                let state = |src, dst| LinkState {
                    src_node: src,
                    dst_node: dst,
                    usable: true,
                    snr_db: Some(10.0),
                    rate_bps: 1e6,
                    per: 0.0,
                    delay_ns: 0,
                };
                let link_state = if k >= 2 {
                    vec![state(0, 1), state(2, 7)]
                } else {
                    vec![state(0, 1)]
                };
                NetworkUpdate {
                    msg_type: MsgType::End as i32,
                    time_val: k,
                    link_state,
                    ..Default::default()
                }
                .encode_to_vec()
            });
        netsim_cosim::lockstep::ready(r)
    }
}

#[test]
fn a_link_state_naming_no_vehicle_is_a_protocol_error_naming_it() {
    use netsim_cosim::{coord::NetworkCoordinator, lockstep::Link};
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), 1.0, 0.0, "");
    let loaded = config::load(&s).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = dir.path().join("out");
    let err = rt.block_on(async {
        let c = netsim_cosim::coord::physics_coordinator(&loaded, None, Some(out.clone()))
            .await
            .unwrap();
        let sim = Link::local("scripted network simulator", Box::new(StrayLinkState));
        let c = c.with_network(Link::local(
            "network coordinator",
            Box::new(NetworkCoordinator::new(
                sim,
                loaded.schedule(),
                Duration::from_secs(5),
            )),
        ));
        c.run(std::future::pending()).await.unwrap_err()
    });
    assert_eq!(
        err.to_string(),
        "network coordinator broke the window protocol in window 2: link_state[1]: dst_node 7 is not a vehicle (there are 3)"
    );
    // The record of the windows before stays readable (no summary: the run failed).
    let r = Record::read(&out).unwrap();
    assert_eq!(r.link_states.len(), 2, "windows 0 and 1");
    assert!(r.summary.is_none());
}
