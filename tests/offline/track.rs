//! Logged tracks (`motion: {kind: track}`) through `cosim run` and `cosim check`: a CSV log in
//! metres and one in degrees replayed, every recorded pose within 0.01 m of the log's own
//! linear interpolation (computed here from the file's numbers); `at_end: end_run` ending the
//! run with the log; bad logs refused at the scenario's line with the log's file and line.

use netsim_cosim::config::{geo::LocalFrame, GeoOrigin};
use netsim_cosim::output::record::Record;
use std::path::Path;
use std::process::Command;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

/// A scenario of a stationary vehicle `a` and the vehicles `tracked` (YAML list items) over a
/// flat sea floor at −50 m, W = 10 ms, every pose recorded every window.
fn scenario(dir: &Path, duration_s: f64, tracked: &str) -> std::path::PathBuf {
    let text = format!(
        "name: tracks\nwindow_ms: 10\nduration_s: {duration_s}\nseed: 1\nreal_time_factor: 0\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6, alt_m: 0}}\n  terrain: {{kind: procedural, size_m: [800, 800], cell_size_m: 10, base_height_m: -50, relief_m: 0}}\n\
         record: {{pose_interval_s: 0.01}}\n\
         vehicles:\n\
         \x20 - {{name: a, addresses: [10.9.0.1/24], start: {{x: 0, y: 0, z: -5}}, motion: {{kind: stationary}}}}\n{tracked}"
    );
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Linear interpolation of `samples` (time, [x, y, z]) at `t`, clamped to their span.
fn interpolate(samples: &[(f64, [f64; 3])], t: f64) -> [f64; 3] {
    let t = t.clamp(samples[0].0, samples[samples.len() - 1].0);
    let i = samples
        .windows(2)
        .position(|w| w[0].0 <= t && t <= w[1].0)
        .unwrap();
    let ((ta, a), (tb, b)) = (samples[i], samples[i + 1]);
    let f = (t - ta) / (tb - ta);
    [0, 1, 2].map(|k| a[k] + f * (b[k] - a[k]))
}

fn run(scenario: &Path, out: &Path) -> (serde_json::Value, Record) {
    let o = Command::new(COSIM)
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", crate::common::output_text(&o));
    let summary =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    (summary, Record::read(out).unwrap())
}

/// Every recorded pose of `vehicle` against `expected(t_s)`; returns the largest error, m.
fn largest_error(record: &Record, vehicle: &str, expected: impl Fn(f64) -> [f64; 3]) -> f64 {
    let mut worst: f64 = 0.0;
    let mut n = 0;
    for p in &record.poses {
        let v = p.poses.iter().find(|v| v.vehicle == vehicle).unwrap();
        let e = expected(p.t_s);
        let d = ((v.x - e[0]).powi(2) + (v.y - e[1]).powi(2) + (v.z - e[2]).powi(2)).sqrt();
        if d > 0.01 && worst <= 0.01 {
            println!(
                "{vehicle} at {} s: recorded ({}, {}, {}), expected {e:?}",
                p.t_s, v.x, v.y, v.z
            );
        }
        worst = worst.max(d);
        n += 1;
    }
    assert!(n >= 100, "{n} poses of {vehicle}");
    worst
}

#[test]
fn logged_tracks_in_metres_and_degrees_are_replayed_within_a_centimetre_at_every_window() {
    let dir = tempfile::tempdir().unwrap();
    // b: a log in metres, irregular sample times (logged from 1000 s), speeds and depths,
    // replayed from 2 s into it and held at its end.
    let b: Vec<(f64, [f64; 3])> = vec![
        (1000.0, [-100.0, 0.0, -10.0]),
        (1001.3, [-98.0, 1.0, -10.5]),
        (1003.0, [-90.0, 4.0, -12.0]),
        (1004.1, [-90.0, 4.0, -12.0]),
        (1007.9, [-70.0, -20.0, -8.0]),
        (1010.0, [-60.0, -25.0, -8.0]),
        (1013.5, [-40.0, -10.0, -20.0]),
    ];
    let mut csv = String::from("# logged by a test\ntimestamp,x,y,z,battery\n");
    for (t, p) in &b {
        csv += &format!("{t},{},{},{},12.1\n", p[0], p[1], p[2]);
    }
    std::fs::write(dir.path().join("b.csv"), csv).unwrap();
    // c: a log in degrees with depths, looping.
    let origin = GeoOrigin {
        lat_deg: 41.5,
        lon_deg: -70.6,
        alt_m: 0.0,
    };
    let c_geo = [
        (0.0, 41.5005, -70.6, 3.0),
        (4.0, 41.5010, -70.6005, 6.0),
        (9.0, 41.5005, -70.6010, 4.0),
    ];
    let mut csv = String::from("lat,lon,depth,time\n");
    for (t, lat, lon, depth) in c_geo {
        csv += &format!("{lat},{lon},{depth},{t}\n");
    }
    std::fs::write(dir.path().join("c.csv"), csv).unwrap();
    let frame = LocalFrame::new(&origin);
    let c: Vec<(f64, [f64; 3])> = c_geo
        .iter()
        .map(|&(t, lat, lon, depth)| {
            let p = frame.from_lat_lon_depth(lat, lon, depth);
            (t, [p.x, p.y, p.z])
        })
        .collect();
    let s = scenario(
        dir.path(),
        20.0,
        "  - {name: b, addresses: [10.9.0.2/24], motion: {kind: track, file: b.csv, offset_s: 2}}\n\
         \x20 - {name: c, addresses: [10.9.0.3/24], motion: {kind: track, file: c.csv, at_end: loop}}\n",
    );
    let o = Command::new(COSIM).arg("check").arg(&s).output().unwrap();
    let text = crate::common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("track b: ")
            && text.contains("(7 samples, x/y over 13.5 s), from 2 s, then holds"),
        "{text}"
    );
    assert!(
        text.contains("(3 samples, latitude/longitude over 9 s), from 0 s, then loops"),
        "{text}"
    );

    let (summary, record) = run(&s, &dir.path().join("out"));
    assert_eq!(summary["sim_seconds"], 20.0);
    let b_err = largest_error(&record, "b", |t| interpolate(&b, 1000.0 + 2.0 + t));
    let c_err = largest_error(&record, "c", |t| interpolate(&c, t % 9.0));
    println!("largest error: b {b_err:.2e} m, c {c_err:.2e} m");
    assert!(b_err < 0.01, "b {b_err} m");
    assert!(c_err < 0.01, "c {c_err} m");
    // b holds its last sample after 11.5 s of the run; c went round twice.
    let last = record.poses.last().unwrap();
    let b_last = last.poses.iter().find(|v| v.vehicle == "b").unwrap();
    assert_eq!((b_last.x, b_last.y, b_last.z), (-40.0, -10.0, -20.0));
}

#[test]
fn tracks_from_a_ros_2_bag_and_a_gpx_file_are_replayed_within_a_centimetre_at_every_window() {
    let dir = tempfile::tempdir().unwrap();
    // The bag, written by Foxglove's ROS 2 MCAP writer: PoseStamped, Odometry and NavSatFix.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv-test/bin/python");
    let o = Command::new(&python)
        .arg(root.join("tests/track/write_bag.py"))
        .arg(dir.path().join("mission.mcap"))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup --test)", python.display()));
    assert!(o.status.success(), "{}", crate::common::output_text(&o));
    let written: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let samples = |topic: &str| -> Vec<(f64, [f64; 3])> {
        (written[topic].as_array().unwrap().iter())
            .map(|r| {
                let v: Vec<f64> = r
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                (v[0], [v[1], v[2], v[3]])
            })
            .collect()
    };
    let origin = GeoOrigin {
        lat_deg: 41.5,
        lon_deg: -70.6,
        alt_m: 0.0,
    };
    let frame = LocalFrame::new(&origin);
    let (b, c) = (samples("/b/pose"), samples("/c/odom"));
    let d: Vec<(f64, [f64; 3])> = samples("/d/fix")
        .into_iter()
        .map(|(t, [lat, lon, alt])| {
            let p = frame.from_lat_lon_depth(lat, lon, -alt);
            (t, [p.x, p.y, p.z])
        })
        .collect();
    assert_eq!(
        (b.len(), d.len()),
        (12, 11),
        "the fix-less message is not a sample"
    );
    // A GPX track of two segments (a surface vessel: no elevation, so 0 m).
    let e_geo = [
        ("2026-11-03T10:00:00Z", 41.5002, -70.6001),
        ("2026-11-03T10:00:02.5Z", 41.5004, -70.6003),
        ("2026-11-03T10:00:06Z", 41.5001, -70.6006),
        ("2026-11-03T10:00:07Z", 41.5000, -70.6006),
    ];
    let mut gpx = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"a test\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><name>e</name>\n",
    );
    for segment in [&e_geo[..2], &e_geo[2..]] {
        gpx += "<trkseg>\n";
        for (time, lat, lon) in segment.iter() {
            gpx += &format!("<trkpt lat=\"{lat}\" lon=\"{lon}\"><time>{time}</time></trkpt>\n");
        }
        gpx += "</trkseg>\n";
    }
    gpx += "</trk>\n</gpx>\n";
    std::fs::write(dir.path().join("e.gpx"), gpx).unwrap();
    let secs = [0.0, 2.5, 6.0, 7.0];
    let e: Vec<(f64, [f64; 3])> = (e_geo.iter().zip(secs))
        .map(|(&(_, lat, lon), t)| {
            let p = frame.from_lat_lon_depth(lat, lon, 0.0);
            (t, [p.x, p.y, p.z])
        })
        .collect();
    let s = scenario(
        dir.path(),
        10.0,
        "  - {name: b, addresses: [10.9.0.2/24], motion: {kind: track, file: mission.mcap, topic: /b/pose}}\n\
         \x20 - {name: c, addresses: [10.9.0.3/24], motion: {kind: track, file: mission.mcap, topic: /c/odom, offset_s: 1}}\n\
         \x20 - {name: d, addresses: [10.9.0.4/24], motion: {kind: track, file: mission.mcap, topic: /d/fix}}\n\
         \x20 - {name: e, addresses: [10.9.0.5/24], motion: {kind: track, file: e.gpx, at_end: loop}}\n",
    );
    let o = Command::new(COSIM).arg("check").arg(&s).output().unwrap();
    let text = crate::common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("mission.mcap /b/pose (12 samples, x/y over 8.25 s, headings)"),
        "{text}"
    );
    assert!(
        text.contains("mission.mcap /d/fix (11 samples, latitude/longitude over 8.25 s)"),
        "{text}"
    );
    assert!(
        text.contains("e.gpx (4 samples, latitude/longitude over 7 s), from 0 s, then loops"),
        "{text}"
    );

    // A topic the bag does not have is named beside the ones it has.
    let wrong = std::fs::read_to_string(&s)
        .unwrap()
        .replace("topic: /d/fix", "topic: /d/gps");
    let bad = dir.path().join("wrong.yaml");
    std::fs::write(&bad, wrong).unwrap();
    let o = Command::new(COSIM).arg("check").arg(&bad).output().unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(
        text.contains("vehicles[3].motion.file: ")
            && text.contains(
                "mission.mcap: no message on /d/gps (its topics: /b/pose, /c/odom, /d/fix)"
            ),
        "{text}"
    );

    let (_, record) = run(&s, &dir.path().join("out"));
    let t0 = b[0].0;
    let err = [
        largest_error(&record, "b", |t| interpolate(&b, t0 + t)),
        largest_error(&record, "c", |t| interpolate(&c, t0 + 1.0 + t)),
        largest_error(&record, "d", |t| interpolate(&d, t0 + t)),
        largest_error(&record, "e", |t| interpolate(&e, t % 7.0)),
    ];
    println!("largest errors b, c, d, e: {err:?} m");
    assert!(err.iter().all(|&m| m < 0.01), "{err:?}");
}

#[test]
fn a_track_that_ends_the_run_cuts_it_to_its_last_whole_window() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("b.csv"),
        "t,x,y,depth\n0,0,10,5\n3.456,10,10,5\n",
    )
    .unwrap();
    let s = scenario(
        dir.path(),
        60.0,
        "  - {name: b, addresses: [10.9.0.2/24], motion: {kind: track, file: b.csv, offset_s: 1, at_end: end_run}}\n",
    );
    let (summary, record) = run(&s, &dir.path().join("out"));
    // 2.456 s of log after the offset: 245 windows of 10 ms.
    assert_eq!(summary["sim_seconds"], 2.45, "{}", summary["sim_seconds"]);
    assert!(record.poses.last().unwrap().t_s < 2.45);
}

#[test]
fn bad_logs_are_refused_at_the_scenarios_line_with_the_logs_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // (log, the vehicle's motion, what the error says)
        ("t,x,y,z\n0,0,0,-5\n2,1,0,-5\n1,2,0,-5\n", "{kind: track, file: b.csv}", "b.csv:4: time 1 is not after the previous sample's 2 (line 3)"),
        ("t,x,y,z\n0,0,0,-5\n30,1,0,-5\n", "{kind: track, file: b.csv}", "b.csv:3: 30.000 s since the previous sample (line 2), more than max_gap_s (10 s)"),
        ("t,x,y,z\n0,0,0,-5\n1,500,0,-5\n", "{kind: track, file: b.csv}", "b.csv:3: (500.00, 0.00) is outside the world"),
        ("t,x,y,z\n0,0,0,-5\n1,0,0,-60\n", "{kind: track, file: b.csv}", "b.csv:3: z = -60.00 m is at or below the terrain there (-50.00 m)"),
        ("t,x,y,z\n0,0,0,-5\n1,0,0,-5\n", "{kind: track, file: b.csv, offset_s: 1}", "must be before the log's last sample"),
        ("t,x,y,z\n0,0,0,-5\n1,0,0,-5\n", "{kind: track, file: missing.csv}", "missing.csv: cannot open"),
        ("t,east,north,z\n0,0,0,-5\n1,0,0,-5\n", "{kind: track, file: b.csv}", "no position: columns x and y (metres) or lat and lon (degrees): the header has t, east, north, z"),
        ("t,x,y,z\n0,0,0,-5\n1,0,0,-5\n", "{kind: track, file: b.csv, topic: /pose}", "`topic` is for an MCAP log"),
        ("t,x,y,z\n0,0,0,-5\n1,0,0,-5\n", "{kind: track, file: b.txt}", "a track is a .csv, .gpx or .mcap file"),
    ];
    for (log, motion, says) in cases {
        std::fs::write(dir.path().join("b.csv"), log).unwrap();
        let s = scenario(
            dir.path(),
            10.0,
            &format!("  - {{name: b, addresses: [10.9.0.2/24], motion: {motion}}}\n"),
        );
        let o = Command::new(COSIM).arg("check").arg(&s).output().unwrap();
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{log:?} passed");
        // The vehicle's line (the 10th of the scenario file) and the track's key path.
        assert!(text.contains("scenario.yaml:12:"), "{text}");
        assert!(text.contains("vehicles[1].motion."), "{text}");
        assert!(text.contains(says), "{log:?} {motion}: {text}");
    }
    // A start given with a track, and none without one.
    std::fs::write(dir.path().join("b.csv"), "t,x,y,z\n0,0,0,-5\n1,0,0,-5\n").unwrap();
    for (vehicle, says) in [
        ("{name: b, addresses: [10.9.0.2/24], start: {x: 0, y: 0, z: -5}, motion: {kind: track, file: b.csv}}", "vehicles[1].start: leave `start` out"),
        ("{name: b, addresses: [10.9.0.2/24], motion: {kind: stationary}}", "vehicles[1]: needs `start`"),
    ] {
        let s = scenario(dir.path(), 10.0, &format!("  - {vehicle}\n"));
        let o = Command::new(COSIM).arg("check").arg(&s).output().unwrap();
        let text = String::from_utf8_lossy(&o.stderr);
        assert!(text.contains(says), "{text}");
    }
}
