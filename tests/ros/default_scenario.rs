//! The default scenario end to end, as `scripts/run` runs it (root, real namespaces and TUNs,
//! iperf3, rclpy, the example AUV clients against the modems and the NETSIM manager): one real
//! minute. What it must show: the 802.11 link's throughput goes through the LOS / NLOS /
//! out-of-range phases, the talker's messages reach the listener, the AUVs' frames are delivered
//! or dropped with a reason, every ledger balances, and the report is written from the record.
//! The vessels run on sim time, which needs a build with the `ros` feature: the listener's
//! latency of each message, stamp to receipt in sim time, is in the record and the report beside
//! the link's one-way delay, and no shorter than the packets that carried it. A build without it
//! interrupts the soak scenario (the default one on the wall clock) instead.

use netsim_cosim::output::{record::Record, schema::Outcome};
use serde_json::Value;
use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use crate::common;
#[cfg(feature = "ros")]
use crate::common::viewer_client;

fn repo(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

#[cfg(feature = "ros")]
#[test]
fn the_default_scenario_shows_every_part_of_the_mission() {
    let _one = common::require_root();
    common::require_tools(&["iperf3", "python3"], "scripts/setup --run");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosim"));
    let run = common::on_own_loopback(&mut cmd)
        .args([
            "run",
            repo("config/default.yaml").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_the_mission(&run, &out);
}

/// The user namespaces of every process now.
#[cfg(feature = "ros")]
fn user_namespaces() -> std::collections::BTreeSet<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| std::fs::read_link(e.path().join("ns/user")).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .collect()
}

/// The same run as the user `nobody`, as a user without root runs it (in a user namespace of
/// the run's own): the same assertions, then no process of the run left (no process in a user
/// namespace that was not there before, so no namespace or TUN device of the run either). The
/// build tree and the build environment's Python stay readable for `nobody` wherever they are
/// ([`common::as_nobody`]).
#[cfg(feature = "ros")]
#[test]
fn the_default_scenario_without_root_shows_the_same() {
    let _one = common::require_root();
    common::require_tools(
        &["iperf3", "python3", "unshare", "setpriv"],
        "scripts/setup --run",
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let keep = dir.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    let out = dir.path().join("run");
    let mut needed = vec![
        repo("config/default.yaml"),
        std::path::PathBuf::from(env!("CARGO_BIN_EXE_cosim")),
    ];
    let python = Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .unwrap();
    needed.push(String::from_utf8_lossy(&python.stdout).trim().into());
    needed.extend(std::env::split_paths(
        &std::env::var_os("LD_PRELOAD").unwrap_or_default(),
    ));
    let before = user_namespaces();
    let run = common::as_nobody(Path::new(env!("CARGO_BIN_EXE_cosim")), &needed, &keep)
        .args([
            "run",
            repo("config/default.yaml").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert_the_mission(&run, &out);
    let meta = std::fs::metadata(out.join("summary.json")).unwrap();
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&meta),
        65534,
        "the run's files are nobody's"
    );
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<String> = user_namespaces().difference(&before).cloned().collect();
    assert!(
        left.is_empty(),
        "processes in user namespaces of the run left: {left:?}"
    );
}

/// What `config/default.yaml` must show, from `run` (its output) and `out` (its folder).
#[cfg(feature = "ros")]
fn assert_the_mission(run: &std::process::Output, out: &Path) {
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "cosim run failed: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        run.status
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], false);

    // Every ledger balances: the whole network's and each link's.
    let network = &summary["network"];
    assert_eq!(network["balanced"], true, "{network}");
    assert_eq!(network["in_flight"], 0, "{network}");
    for link in network["links"].as_array().unwrap() {
        assert_eq!(link["balanced"], true, "{link}");
    }

    // The 802.11g link: high in LOS (0-21 s, 54 Mbit/s), lower behind the headland (NLOS,
    // 23-38 s, 24 Mbit/s), near zero out of range (from 41 s). TCP needs a few seconds to find
    // each new rate.
    let record = Record::read(&out).unwrap();
    let los = common::mbps(&record.packets, "usv2", "usv1", 3.0, 20.0);
    let nlos = common::mbps(&record.packets, "usv2", "usv1", 26.0, 37.0);
    let oor = common::mbps(&record.packets, "usv2", "usv1", 43.0, 60.0);
    println!(
        "usv2 → usv1: LOS {los:.2} Mbit/s, NLOS {nlos:.2} Mbit/s, out of range {oor:.3} Mbit/s"
    );
    // The model's decisions are the machine's no matter what: behind the headland the link's
    // rate falls, and no phase carries more than the rate the link had in it. How close TCP
    // comes to those rates is asserted only when the run kept up with the wall clock.
    let rate = |from: f64, to: f64| -> f64 {
        let states: Vec<_> = record
            .link_states
            .iter()
            .filter(|l| l.src == "usv2" && l.dst == "usv1")
            .collect();
        let before = states.iter().rev().find(|l| l.t_s <= from);
        before
            .into_iter()
            .chain(states.iter().filter(|l| l.t_s > from && l.t_s < to))
            .filter(|l| l.usable)
            .map(|l| l.rate_bps / 1e6)
            .fold(0.0, f64::max)
    };
    let (los_rate, nlos_rate) = (rate(3.0, 20.0), rate(26.0, 37.0));
    println!("usv2 → usv1 link rate: LOS up to {los_rate:.1} Mbit/s, NLOS up to {nlos_rate:.1}");
    assert!(
        nlos_rate < los_rate,
        "the headland leaves the rate at {nlos_rate} Mbit/s (LOS {los_rate})"
    );
    assert!(
        los <= los_rate * 1.02 && nlos <= nlos_rate * 1.02,
        "more than the link's rate: LOS {los} of {los_rate} Mbit/s, NLOS {nlos} of {nlos_rate}"
    );
    assert!(
        los > 0.1,
        "TCP moved nothing in line of sight: {los} Mbit/s"
    );
    assert!(oor < 0.05, "out of range {oor} Mbit/s");
    // How much TCP gets through depends on how closely the run kept the wall clock. Behind
    // the headland the rate falls to less than half; 802.11's overhead per frame, the same at
    // every rate, keeps TCP's loss smaller than that.
    common::assert_if_kept_pace(
        &summary,
        los > 10.0 && nlos > 0.5 && nlos < 0.8 * los,
        &format!("LOS {los} Mbit/s, NLOS {nlos} Mbit/s"),
    );
    // The vessels share one 802.11g medium: the summary counts its MAC's work per link, every
    // attempt a first one or a retry. TCP's data one way and its ACKs the other contend for it,
    // so some attempts collide and are retried; how much TCP sends, and so how busy the medium
    // is, depends on how closely the run kept the wall clock.
    let air = summary["air"].as_array().unwrap();
    assert_eq!(air.len(), 1, "{air:?}");
    assert_eq!(air[0]["standard"], "80211g", "{}", air[0]);
    let air_link = |src: &str, dst: &str| {
        air[0]["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["src"] == src && l["dst"] == dst)
            .unwrap_or_else(|| panic!("no 802.11 link {src} → {dst}: {}", air[0]))
            .clone()
    };
    let (data, acks) = (air_link("usv2", "usv1"), air_link("usv1", "usv2"));
    let n = |l: &Value, k: &str| l[k].as_u64().unwrap();
    for l in [&data, &acks] {
        // Every attempt is a frame's first or a retry; a frame on the air or waiting for its
        // retry when the run ended has had its attempts but is not yet done with (802.11g:
        // one at a time per sender).
        let (attempts, done) = (n(l, "attempts"), n(l, "frames") + n(l, "retries"));
        assert!(done <= attempts && attempts <= done + 1, "{l}");
        assert!(n(l, "collided") <= n(l, "attempts"), "{l}");
    }
    assert!(
        n(&data, "frames") > 0 && n(&acks, "frames") > 0,
        "TCP over the air: {data} {acks}"
    );
    common::assert_if_kept_pace(
        &summary,
        n(&data, "frames") > 10_000
            && n(&data, "collided") > 0
            && air[0]["busy_share"].as_f64().unwrap() > 0.1,
        &format!(
            "TCP's data over the air, some of it collided, the medium busy: {}",
            air[0]
        ),
    );
    let changes: Vec<_> = record
        .channel
        .iter()
        .filter(|c| c.a == "usv1" && c.b == "usv2" && c.change)
        .collect();
    assert!(
        changes
            .iter()
            .any(|c| !c.los && (18.0..26.0).contains(&c.t_s)),
        "{changes:?}"
    );
    assert!(
        record
            .link_states
            .iter()
            .any(|l| l.src == "usv2" && l.dst == "usv1" && !l.usable && l.t_s > 35.0),
        "the link state never went out of range"
    );
    // No copy captured while the link was out of range is delivered. How many there were
    // depends on what TCP and DDS sent then, and so on the run's pace (a loaded machine's run
    // may have sent none): that some were, and were dropped as out of range, is asserted of a
    // run that kept pace.
    let usv = network["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["src"] == "usv2" && l["dst"] == "usv1")
        .unwrap();
    let usable_at = |t: f64| {
        (record.link_states.iter())
            .filter(|l| l.src == "usv2" && l.dst == "usv1" && l.t_s <= t)
            .last()
            .is_none_or(|l| l.usable)
    };
    let unusable: Vec<_> = (record.packets.iter())
        .filter(|p| p.src == "usv2" && p.dst.as_deref() == Some("usv1") && !usable_at(p.t_s))
        .collect();
    for p in &unusable {
        assert!(p.reason.is_some(), "delivered while out of range: {p:?}");
    }
    let out_of_range = usv["drops"]["out of range"].as_u64().unwrap_or(0);
    println!(
        "usv2 → usv1: {} copies captured out of range, {out_of_range} dropped as out of range",
        unusable.len()
    );
    common::assert_if_kept_pace(
        &summary,
        !unusable.is_empty() && out_of_range > 0,
        &format!("copies out of range dropped as such: {usv}"),
    );

    // The programs: iperf3 and the talker/listener ran in the vessels, the clients on the host.
    let programs = summary["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 7, "{programs:?}");
    for p in programs {
        assert!(p["started_s"].is_number(), "{p}");
        assert!(p["exit_code"] == 0 || p["signal"] == 2, "{p}");
    }
    let log = |name: &str| {
        std::fs::read_to_string(out.join(format!("programs/{name}.stdout.log"))).unwrap()
            + &std::fs::read_to_string(out.join(format!("programs/{name}.stderr.log"))).unwrap()
    };
    let heard = log("listener").matches("I heard: \"Hello World").count();
    println!("listener heard {heard} messages");
    assert!(heard >= 50, "listener heard {heard}:\n{}", log("listener"));
    assert!(
        log("iperf3-client").contains("Mbits/sec"),
        "{}",
        log("iperf3-client")
    );
    listener_latency(&record, &log("listener"));

    // The AUVs: every client's nav was accepted, frames were delivered and lost behind terrain.
    for auv in ["auv1", "auv2", "auv3"] {
        let text = log(&format!("{auv}-client"));
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("summary "))
            .unwrap_or_else(|| panic!("{auv}: no summary:\n{text}"));
        let s: Value = serde_json::from_str(line).unwrap();
        assert!(
            s["nav_accepted"].as_u64().unwrap() >= 30 && s["nav_rejected"] == 0,
            "{auv}: {s}"
        );
        assert!(s["data_sent"].as_u64().unwrap() >= 2, "{auv}: {s}");
    }
    let modems = &summary["modems"]["ledger"];
    assert!(modems["out_of_range"].as_u64().unwrap() > 0, "{modems}");
    // The clients are processes of their own: when the run falls far behind the wall clock
    // their frames meet in the water (collisions, half duplex) more than they do on time.
    common::assert_if_kept_pace(
        &summary,
        modems["delivered"].as_u64().unwrap() > 0,
        &format!("a modem frame delivered: {modems}"),
    );
    let frames = record.modem_frames.len() as u64;
    assert_eq!(
        frames,
        modems["sent"].as_u64().unwrap(),
        "every modem frame is in the record"
    );

    // The AUVs' paths are beam-traced: the summary counts the traces, none made a window wait,
    // the record keeps each AUV pair's arrivals (multipath: more than one at some sample), and
    // the report draws the arrival patterns and, at the richest moment, the transmission-loss
    // field and the rays.
    let paths = &summary["acoustic_paths"];
    assert_eq!(paths["pairs"], 3, "{paths}");
    assert!(paths["traces"].as_u64().unwrap() >= 3, "{paths}");
    // A trace runs beside the windows; one that outlasts its window on a loaded machine makes
    // that window wait (counted): asserted when the run kept up.
    common::assert_if_kept_pace(
        &summary,
        paths["windows_waited"] == 0,
        &format!("no window waited for a trace: {paths}"),
    );
    let most = record
        .channel
        .iter()
        .filter_map(|c| c.arrivals.as_ref().map(Vec::len))
        .max()
        .expect("traced AUV pairs in the record");
    assert!(most > 1, "at most {most} arrivals");
    let plots: Vec<String> = std::fs::read_dir(out.join("report/plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for end in ["_tl_field.png", "_rays.png"] {
        let name = plots
            .iter()
            .find(|p| p.ends_with(end))
            .unwrap_or_else(|| panic!("no *{end} in {plots:?}"));
        let png = png::Decoder::new(std::io::Cursor::new(
            std::fs::read(out.join("report/plots").join(name)).unwrap(),
        ))
        .read_info()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(png.info().width >= 600, "{name}");
    }
    assert!(
        plots.iter().any(|p| p.starts_with("arrivals_auv")),
        "{plots:?}"
    );

    // The report, from the record.
    let report = out.join("report/report.html");
    assert!(
        std::fs::metadata(&report)
            .map(|m| m.len() > 10_000)
            .unwrap_or(false),
        "{}",
        report.display()
    );
    // The report shows the listener's latency beside the link's one-way delay in the same span.
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("chatter_latency_s") && html.contains("one-way delay usv2 → usv1"),
        "{}",
        report.display()
    );
    // ... and the 802.11 medium's counters per link; the terminal's table too.
    assert!(
        html.contains("802.11 media") && html.contains("80211g"),
        "{}",
        report.display()
    );
    assert!(stdout.contains("802.11 medium 80211g"), "{stdout}");
    assert!(
        stdout.contains("listener: chatter_latency_s")
            && stdout.contains("one-way delay usv2 → usv1"),
        "{stdout}"
    );
    let a = netsim_cosim::output::report::generate(&out)
        .unwrap()
        .analysis;
    let m = a
        .metrics
        .iter()
        .find(|m| m.program == "listener" && m.name == "chatter_latency_s")
        .unwrap_or_else(|| panic!("{:?}", a.metrics));
    let delay = m.link_delay.expect("the link's delay beside the latency");
    println!(
        "listener latency {:?}, usv2 → usv1 one-way delay {delay:?}",
        m.values
    );
    assert!(
        m.values.median >= delay.median,
        "median latency {:?} below the link's median one-way delay {delay:?}",
        m.values
    );
    // pcaps per vehicle.
    for v in ["usv1", "usv2"] {
        assert!(
            std::fs::metadata(out.join(format!("{v}.pcap")))
                .unwrap()
                .len()
                > 1000
        );
    }
}

/// The listener's sim-time latency of every message it reported (`chatter_latency_s`, from
/// usv2's talker): each is no shorter than a copy of usv2 → usv1 that can have carried the
/// message (captured at or after the stamp, delivered by the receipt), and there is one. A
/// node's clock is the last `/clock` its executor took, one per window of 1 ms, so stamp and
/// receipt each read behind the run's sim time: up to `LAG`. Alone on this machine the
/// receipt needed at most 1.4 ms of it (185 latencies); in a run of the whole suite on two
/// cores, with iperf3 beside it, one receipt read more than 5 ms behind, hence 50 ms. A stamp
/// taken on another clock than the receipt (or in the wrong unit) is off by seconds and finds
/// no copy between them.
#[cfg(feature = "ros")]
fn listener_latency(record: &Record, log: &str) {
    const LAG: f64 = 50e-3;
    let latencies: Vec<_> = record
        .metrics
        .iter()
        .filter(|m| m.program == "listener" && m.name == "chatter_latency_s")
        .collect();
    assert!(
        latencies.len() >= 50,
        "{} latencies reported:\n{log}",
        latencies.len()
    );
    let copies: Vec<(f64, f64)> = record
        .packets
        .iter()
        .filter(|p| {
            p.src == "usv2" && p.dst.as_deref() == Some("usv1") && p.outcome == Outcome::Delivered
        })
        .map(|p| (p.t_s, p.end_s))
        .collect();
    for m in &latencies {
        assert_eq!(
            (m.vehicle.as_deref(), m.from.as_deref()),
            (Some("usv1"), Some("usv2")),
            "{m:?}"
        );
        let (stamp, receipt) = (m.t_s - m.value, m.t_s);
        // Both clocks may lag the run's: a latency reads short by up to both lags.
        assert!(
            m.value > -2.0 * LAG && stamp > 0.5 && receipt <= 60.0,
            "stamp and receipt in the run's sim time: {m:?}"
        );
        let shortest = copies
            .iter()
            .filter(|(t, e)| *t >= stamp - LAG && *e <= receipt + LAG)
            .map(|(t, e)| e - t)
            .fold(f64::INFINITY, f64::min);
        assert!(
            m.value + 2.0 * LAG >= shortest,
            "latency {m:?} shorter than every copy usv2 → usv1 between its stamp and its receipt ({shortest} s)"
        );
    }
}

/// Ctrl-C half way: a consistent partial record and report, every program stopped, no namespace
/// or TUN left. The default scenario in a build with the `ros` feature (its /clock bridges
/// stopped too), else the soak scenario, the default one on the wall clock.
#[test]
fn ctrl_c_leaves_a_consistent_record_and_report() {
    let _one = common::require_root();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let scenario = match cfg!(feature = "ros") {
        true => "config/default.yaml",
        false => "config/soak.yaml",
    };
    let mut child = common::on_own_loopback(&mut Command::new(env!("CARGO_BIN_EXE_cosim")))
        .args([
            "run",
            repo(scenario).to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Well into the LOS phase: the run's progress line (every 2 s of wall time) says 10 s of
    // sim time are done, however long a loaded machine took for them.
    let (progress, sim_done) = std::sync::mpsc::channel::<f64>();
    let lines = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(lines)).map_while(Result::ok) {
            if let Some(sim) = line
                .split("  sim ")
                .nth(1)
                .and_then(|r| r.split('/').next())
            {
                let _ = progress.send(sim.parse().unwrap_or(0.0));
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(600) {
        match sim_done.recv_timeout(Duration::from_secs(1)) {
            Ok(sim) if sim >= 10.0 => break,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            _ => {}
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = child.wait_with_output().unwrap();
    let stderr = reader.join().unwrap();
    assert_eq!(run.status.code(), Some(130), "{stderr}");

    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true);
    let sim_s = summary["sim_seconds"].as_f64().unwrap();
    assert!(sim_s > 5.0 && sim_s < 30.0, "stopped at {sim_s} s");
    assert_eq!(
        summary["network"]["balanced"], true,
        "{}",
        summary["network"]
    );
    assert_eq!(summary["network"]["in_flight"], 0, "{}", summary["network"]);
    // Every started program was stopped (SIGINT) and reported.
    for p in summary["programs"].as_array().unwrap() {
        assert!(
            p["started_s"].is_number() && (p["signal"] == 2 || p["exit_code"].is_number()),
            "{p}"
        );
    }
    // The record is whole (its summary included) and agrees with summary.json.
    let record = Record::read(&out).unwrap();
    let recorded = record
        .summary
        .as_ref()
        .expect("the record of an interrupted run ends with its summary");
    assert_eq!(recorded["interrupted"], true);
    let delivered: u64 = record
        .packets
        .iter()
        .filter(|p| p.outcome == Outcome::Delivered)
        .count() as u64;
    assert_eq!(delivered, summary["network"]["delivered"].as_u64().unwrap());
    assert_eq!(
        record.packets.len() as u64,
        summary["network"]["captured"].as_u64().unwrap()
    );
    assert!(
        std::fs::metadata(out.join("report/report.html"))
            .unwrap()
            .len()
            > 10_000
    );
    // Nothing left behind: no namespace, no program.
    let ns = String::from_utf8(
        Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        !ns.lines()
            .any(|l| l.starts_with("ncs-usv") || l.starts_with("ncs-auv")),
        "{ns}"
    );
    // This run's programs: another test of this binary may run the same examples meanwhile, so
    // a process counts only if its `COSIM_OUT` is this run's folder.
    let found = Command::new("pgrep")
        .args([
            "-f",
            "auv_client.py|examples/talker.py|examples/listener.py|iperf3 -c 10.30.0.1",
        ])
        .output()
        .unwrap();
    let this_run = format!("COSIM_OUT={}", out.display());
    let left: Vec<String> = String::from_utf8_lossy(&found.stdout)
        .split_whitespace()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == this_run.as_bytes()))
        })
        .map(str::to_owned)
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

/// An output folder holds one run: a second run into the folder of a first removes the first's
/// files before it starts (its timeline, which the second run does not write, included) and
/// says so in one log line; a folder holding a file no run writes is refused, naming the file,
/// and nothing in it is removed. (The patrol scenario, one second, unpaced: no root needed.)
#[test]
fn an_output_folder_holds_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let run = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_cosim"))
            .args([
                "run",
                repo("config/patrol.yaml").to_str().unwrap(),
                "--duration-s",
                "1",
                "--out",
                out.to_str().unwrap(),
            ])
            .args(extra)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--timeline"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(out.join("timeline.jsonl").exists());
    assert!(!stderr.contains("held a run"), "{stderr}");
    let (code, stderr) = run(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !out.join("timeline.jsonl").exists(),
        "a file of the earlier run is left"
    );
    assert!(out.join("record.mcap").exists() && out.join("summary.json").exists());
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("held a run"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("removed its ") && said[0].contains("timeline.jsonl"),
        "{stderr}"
    );
    let mine = out.join("notes.txt");
    std::fs::write(&mine, "mine").unwrap();
    let (code, stderr) = run(&[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{} is not a file a run writes", mine.display())),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    assert!(out.join("record.mcap").exists(), "nothing is removed");
}

/// A viewer that stops reading for 10 s changes nothing in the run: the same windows and LOS/NLOS
/// changes as a run without it, a slip and a recording time per window within noise of it, every
/// ledger balanced with as large a share delivered; what the viewer missed is counted in the
/// summary (it subscribes to every topic, `/packets` included: thousands of messages a second).
#[cfg(feature = "ros")]
#[test]
fn a_viewer_that_stops_reading_changes_nothing_in_the_run() {
    let _one = common::require_root();
    common::require_tools(&["iperf3", "python3"], "scripts/setup --run");
    let dir = tempfile::tempdir().unwrap();
    let port = viewer_client::free_port();
    // Each run with a viewer on a slow link (a small receive window): one that reads all the
    // time, one that stops reading for 10 s. Both cost the run the same encoding; only the
    // stall differs.
    let run = |name: &str, stall: bool| -> Value {
        let out = dir.path().join(name);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosim"));
        cmd.args([
            "run",
            repo("config/default.yaml").to_str().unwrap(),
            "--duration-s",
            "30",
            "--out",
            out.to_str().unwrap(),
        ]);
        cmd.arg(format!("--live=127.0.0.1:{port}"));
        let reading = viewer_client::Reading {
            receive_buffer: Some(64 << 10),
            stall: stall.then(|| (Duration::from_secs(8), Duration::from_secs(10))),
        };
        let client = viewer_client::spawn(port, reading);
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            client.join().unwrap().messages > 0,
            "the viewer got nothing"
        );
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
    };
    let without = run("reading", false);
    let with = run("stalled", true);
    for (name, s) in [
        ("with a viewer reading all along", &without),
        ("with the stalled viewer", &with),
    ] {
        println!(
            "{name}: slip {} s, {} late windows, recording {:.2} s, delivered {} of {} copies, viewer {}",
            s["slipped_seconds"],
            s["late_windows"],
            s["stages"]["record"]["seconds"].as_f64().unwrap_or(0.0),
            s["network"]["delivered"],
            s["network"]["captured"],
            s.get("viewer").map_or("none".into(), |v| v.to_string())
        );
    }
    let viewer = &with["viewer"];
    assert_eq!(viewer["clients"], 1, "{viewer}");
    assert!(viewer["messages_sent"].as_u64().unwrap() > 1000, "{viewer}");
    // How much a stalled client misses depends on how many messages the run made meanwhile:
    // a run that kept up makes more in 10 s than its queue and socket hold.
    common::assert_if_kept_pace(
        &with,
        viewer["dropped_for_clients"].as_u64().unwrap() > 0,
        &format!("a client that stopped reading for 10 s missed nothing: {viewer}"),
    );
    assert_eq!(without["viewer"]["clients"], 1, "{}", without["viewer"]);
    assert_eq!(with["windows"], without["windows"]);
    // The vessels follow their scripts: the same LOS/NLOS windows. The AUVs are driven by
    // their clients on the wall clock: the same changes, a few windows apart, when both runs
    // kept up with it (a run that fell behind met them at other sim times).
    let pairs = |v: &Value| v["pairs"].as_array().unwrap().clone();
    assert_eq!(pairs(&with)[0], pairs(&without)[0], "usv1–usv2");
    assert_eq!(pairs(&with)[0]["b"], "usv2");
    let auv = |p: &Value| {
        ["a", "b"]
            .iter()
            .any(|k| p[k].as_str().unwrap().starts_with("auv"))
    };
    for (a, b) in pairs(&with).iter().zip(pairs(&without).iter()) {
        let same = a["transitions"] == b["transitions"];
        if auv(a) {
            common::assert_if_kept_pace(
                &with,
                same || common::kept_pace(&without).is_err(),
                &format!("{a} / {b}"),
            );
        } else {
            assert!(same, "{a} / {b}");
        }
    }
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    // Had the run waited for the stalled viewer, it would have slipped by its 10 s, all of
    // them in the recording stage (the viewer is fed from the record's writer, behind a queue
    // the run waits on when full). On a machine too busy for either run to keep the wall
    // clock, two runs' slips differ by whatever else it did meanwhile (by 20 s in 30 s on a
    // loaded two-core machine, viewer or not): then the figures are printed, not asserted.
    let rec = |v: &Value| v["stages"]["record"]["seconds"].as_f64().unwrap();
    let both_kept_pace = common::kept_pace(&without).and(common::kept_pace(&with));
    common::assert_if_kept_pace(
        &without,
        both_kept_pace.is_err()
            || (f(&with, "slipped_seconds") <= f(&without, "slipped_seconds") + 0.2
                && rec(&with) < rec(&without) * 2.0 + 1.0),
        &format!(
            "slip {} s and recording {} s with the stalled viewer, {} s and {} s with one reading",
            with["slipped_seconds"],
            rec(&with),
            without["slipped_seconds"],
            rec(&without)
        ),
    );
    for s in [&with, &without] {
        let n = &s["network"];
        assert_eq!(n["balanced"], true, "{n}");
        assert_eq!(n["in_flight"], 0, "{n}");
    }
    let share = |v: &Value| f(&v["network"], "delivered") / f(&v["network"], "captured").max(1.0);
    common::assert_if_kept_pace(
        &without,
        share(&with) >= share(&without) - 0.05,
        &format!(
            "delivered {:.3} of the captured copies with the stalled viewer, {:.3} without",
            share(&with),
            share(&without)
        ),
    );
}
