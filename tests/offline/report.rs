//! The report against its record: a synthetic but realistic record (two surface vessels on an
//! RF link through LOS → NLOS → out of range with a TCP-like stream and its ACKs, three AUVs
//! whose modem frames end in every outcome, programs, a run summary) written with
//! `RecordWriter`; the report's series must carry exactly the record's bytes and frames (and
//! the summary's ledger), every plot must decode, `report.html` must load in headless
//! Chromium with every image decoded, and `cosim report` must regenerate it all.

use netsim_cosim::config::HeightGrid;
use netsim_cosim::model::modem::FrameLedgerSummary;
use netsim_cosim::net::ledger::{LedgerSummary, LinkSummary};
use netsim_cosim::output::emulation::{EmulationSpan, EmulationSummary, LinkEmulation, Quantiles};
use netsim_cosim::output::foxglove::SceneUpdate;
use netsim_cosim::output::record::{Record, RecordWriter, RECORD_FILE};
use netsim_cosim::output::report::{self, map, ReportFiles};
use netsim_cosim::output::scene;
use netsim_cosim::output::schema::*;
use netsim_cosim::output::summary::{ModemReport, RunReport};
use netsim_cosim::output::PairSummary;
use netsim_cosim::sim::air::{AirLinkSummary, AirSummary};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
const VEHICLES: [&str; 5] = ["usv1", "usv2", "auv1", "auv2", "auv3"];
const END_S: f64 = 60.0;
/// The RF pair's phases: LOS until 20.3 s, NLOS until 40 s, then out of range.
const NLOS_FROM: f64 = 20.3;
const OUT_FROM: f64 = 40.0;
const DATA_BYTES: u32 = 1448;
/// Capture times of copies sent after the last window (while the programs were being stopped).
const AFTER_END: [f64; 3] = [60.0015, 60.05, 60.208];
const ACK_BYTES: u32 = 66;

fn ns(t: f64) -> u64 {
    (t * 1e9).round() as u64
}

/// What the generator put in the record, counted as it went (independently of the report).
#[derive(Default, Debug)]
struct Truth {
    /// (src, dst) → (delivered copies, delivered bytes)
    delivered: BTreeMap<(String, String), (u64, u64)>,
    /// (src, dst) → dropped copies by reason
    dropped: BTreeMap<(String, String), BTreeMap<String, u64>>,
    /// modem outcome (`delivered` or reason label) → frames
    frames: BTreeMap<String, u64>,
}

fn pair_geometry(a: usize, b: usize, t: f64) -> (bool, f64) {
    match (VEHICLES[a], VEHICLES[b]) {
        ("usv1", "usv2") => (t < NLOS_FROM, 100.0 + 10.0 * t),
        ("auv1", "auv2") => (t < 30.0, 500.0 + 15.0 * t),
        _ => (true, 200.0 + 50.0 * (a + b) as f64 + t * (a + 1) as f64),
    }
}

/// `/scene/terrain` of a seafloor at -30 m with a mound rising to +5 m at (5, 35), as a run
/// writes it.
fn mound_terrain() -> SceneUpdate {
    let (cols, rows, cell) = (101, 61, 4.0);
    let heights = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (r, c)))
        .map(|(r, c)| {
            let (x, y) = (-200.0 + c as f64 * cell, 120.0 - r as f64 * cell);
            let d = ((x - 5.0).powi(2) + (y - 35.0).powi(2)).sqrt();
            if d < 40.0 {
                -30.0 + 35.0 * (0.5 + 0.5 * (std::f64::consts::PI * d / 40.0).cos())
            } else {
                -30.0
            }
        })
        .collect();
    let grid = HeightGrid::new("mound", heights, cols, rows, cell).unwrap();
    SceneUpdate {
        deletions: Vec::new(),
        entities: vec![scene::terrain_mesh(&grid, scene::MESH_SIDE)],
    }
}

/// Writes the record (and returns what is in it); `summary`: whether the run got to write
/// its `/summary`.
fn write_record(dir: &Path, summary: bool) -> Truth {
    let mut truth = Truth::default();
    let mut w = RecordWriter::create(&dir.join(RECORD_FILE)).unwrap();
    // Messages go in time order, as a run writes them.
    let mut messages: Vec<(f64, u8, Value)> = Vec::new();
    let run = RunInfo {
        scenario: "report-test".into(),
        seed: 7,
        window_ms: 1.0,
        duration_s: END_S,
        real_time_factor: 1.0,
        vehicles: VEHICLES.iter().map(|v| v.to_string()).collect(),
        pose_interval_s: 0.5,
        channel_interval_s: 1.0,
    };
    w.write(TOPIC_RUN, 0, &run).unwrap();
    w.write(TOPIC_TERRAIN, 0, &mound_terrain()).unwrap();

    for k in 0..(END_S / 0.5) as u32 {
        let t = k as f64 * 0.5;
        let poses = Poses {
            t_s: t,
            poses: VEHICLES
                .iter()
                .enumerate()
                .map(|(i, v)| VehiclePose {
                    vehicle: v.to_string(),
                    x: i as f64 * 10.0 + t,
                    y: -40.0 + 20.0 * i as f64,
                    z: if i >= 2 { -20.0 } else { 0.0 },
                })
                .collect(),
        };
        messages.push((t, 0, serde_json::to_value(poses).unwrap()));
    }
    // Channel: every pair each second, and at each LOS/NLOS change.
    for (a, va) in VEHICLES.iter().enumerate() {
        for (b, vb) in VEHICLES.iter().enumerate().skip(a + 1) {
            let mut times: Vec<(f64, bool)> =
                (0..END_S as u32).map(|s| (s as f64, false)).collect();
            if (*va, *vb) == ("usv1", "usv2") {
                times.push((NLOS_FROM, true));
            }
            times.sort_by(|x, y| x.0.total_cmp(&y.0));
            for (t, change) in times {
                let (los, distance_m) = pair_geometry(a, b, t);
                let c = PairChannel {
                    t_s: t,
                    a: va.to_string(),
                    b: vb.to_string(),
                    los,
                    distance_m,
                    loss_db: if los { 0.0 } else { 14.5 },
                    hops: if los { 0 } else { 2 },
                    change,
                    arrivals: None,
                };
                messages.push((t, 1, serde_json::to_value(c).unwrap()));
            }
        }
    }
    // Link states of the RF pair, both ways, and of one acoustic link.
    for (src, dst) in [("usv1", "usv2"), ("usv2", "usv1")] {
        for (t, usable, snr, rate, per) in [
            (0.0, true, Some(28.0), 24e6, 0.001),
            (NLOS_FROM, true, Some(9.0), 6e6, 0.1),
            (OUT_FROM, false, None, 0.0, 1.0),
        ] {
            let s = LinkState {
                t_s: t,
                src: src.into(),
                dst: dst.into(),
                usable,
                snr_db: snr,
                rate_bps: rate,
                per,
                delay_s: if usable { 4e-4 } else { 0.0 },
            };
            messages.push((t, 2, serde_json::to_value(s).unwrap()));
        }
    }
    for (t, usable, snr) in [
        (0.0, true, Some(15.0)),
        (30.0, true, Some(3.5)),
        (50.0, false, None),
    ] {
        let s = LinkState {
            t_s: t,
            src: "auv1".into(),
            dst: "auv2".into(),
            usable,
            snr_db: snr,
            rate_bps: 80.0,
            per: 0.05,
            delay_s: 0.6,
        };
        messages.push((t, 2, serde_json::to_value(s).unwrap()));
    }

    // Packets: a bulk stream usv1 → usv2 (1 ms apart in LOS, 10 ms in NLOS, retries every
    // 200 ms out of range) and an ACK back for every delivered segment.
    let mut packets = Vec::new();
    let mut packet = |t: f64,
                      src: &str,
                      dst: &str,
                      bytes: u32,
                      fate: Result<(f64, bool), &str>,
                      truth: &mut Truth| {
        let key = (src.to_string(), dst.to_string());
        let (outcome, reason, end_s, corrupted) = match fate {
            Ok((end, corrupted)) => {
                let d = truth.delivered.entry(key).or_default();
                d.0 += 1;
                d.1 += u64::from(bytes);
                (Outcome::Delivered, None, end, corrupted)
            }
            Err(reason) => {
                *truth
                    .dropped
                    .entry(key)
                    .or_default()
                    .entry(reason.to_string())
                    .or_default() += 1;
                // In flight at the end: dropped then; captured after it: dropped as captured.
                let end = match reason {
                    "shutdown" => END_S,
                    "after end" => t,
                    _ => t + 0.001,
                };
                (Outcome::Dropped, Some(reason.to_string()), end, false)
            }
        };
        packets.push(PacketRecord {
            t_s: t,
            src: src.into(),
            dst: Some(dst.into()),
            bytes,
            outcome,
            reason,
            end_s,
            corrupted,
            emulation_ms: None,
        });
    };
    let mut i = 0u64;
    let mut t = 1.0;
    while t < END_S {
        i += 1;
        let fate = if t < NLOS_FROM {
            Ok((t + 0.0009 + (i % 7) as f64 * 1e-4, false))
        } else if t < OUT_FROM {
            if i % 10 == 0 {
                Err("packet error")
            } else if i % 37 == 0 {
                Err("queue full")
            } else {
                Ok((t + 0.003 + (i % 11) as f64 * 5e-4, i % 50 == 1))
            }
        } else if t > END_S - 0.2 {
            Err("shutdown")
        } else {
            Err("out of range")
        };
        packet(t, "usv1", "usv2", DATA_BYTES, fate, &mut truth);
        if let Ok((end, _)) = fate {
            packet(
                end,
                "usv2",
                "usv1",
                ACK_BYTES,
                Ok((end + 0.0006, false)),
                &mut truth,
            );
        }
        t += if t < NLOS_FROM {
            0.001
        } else if t < OUT_FROM {
            0.01
        } else {
            0.2
        };
    }
    // Copies captured after the last window, while the programs were being stopped.
    for t in AFTER_END {
        packet(t, "usv1", "usv2", DATA_BYTES, Err("after end"), &mut truth);
    }
    for p in packets {
        messages.push((p.end_s, 3, serde_json::to_value(p).unwrap()));
    }

    // Modem frames: data auv1 → auv2 every 4 s, its acks, pings auv1 → auv3 and replies,
    // minis to no modem; every outcome occurs.
    let mut frame = |t: f64,
                     src: &str,
                     dst: Option<&str>,
                     kind: &str,
                     bytes: u32,
                     outcome: Result<(), &str>,
                     truth: &mut Truth| {
        let label = match outcome {
            Ok(()) => "delivered".to_string(),
            Err(r) => r.to_string(),
        };
        *truth.frames.entry(label).or_default() += 1;
        let decided_s = if outcome == Err("shutdown") {
            END_S
        } else {
            t + 0.6
        };
        let f = ModemFrame {
            t_s: t,
            decided_s,
            src: src.into(),
            dst: dst.map(str::to_string),
            kind: kind.into(),
            frame: 1,
            rate: if kind == "data" { 1 } else { 0 },
            bytes,
            snr_db: dst.map(|_| 12.0),
            outcome: if outcome.is_ok() {
                Outcome::Delivered
            } else {
                Outcome::Dropped
            },
            reason: outcome.err().map(str::to_string),
        };
        messages.push((decided_s, 4, serde_json::to_value(f).unwrap()));
    };
    for k in 0..15 {
        let t = 2.0 + 4.0 * k as f64;
        let outcome = if t < 30.0 {
            Ok(())
        } else if t < 50.0 {
            if k % 2 == 0 {
                Err("packet error")
            } else {
                Ok(())
            }
        } else if t > 57.0 {
            Err("shutdown")
        } else {
            Err("out of range")
        };
        frame(t, "auv1", Some("auv2"), "data", 64, outcome, &mut truth);
        if outcome.is_ok() {
            frame(t + 1.0, "auv2", Some("auv1"), "ack", 0, Ok(()), &mut truth);
        }
    }
    for t in [5.0, 15.0, 25.0, 35.0, 45.0, 55.0] {
        let outcome = match t as u32 {
            25 => Err("collision"),
            45 => Err("half-duplex"),
            _ => Ok(()),
        };
        frame(t, "auv1", Some("auv3"), "ping", 0, outcome, &mut truth);
        if outcome.is_ok() {
            frame(
                t + 1.2,
                "auv3",
                Some("auv1"),
                "ping_reply",
                0,
                Ok(()),
                &mut truth,
            );
        }
    }
    for t in [10.0, 40.0] {
        frame(t, "auv3", None, "mini", 2, Err("no receiver"), &mut truth);
    }

    let programs = [
        ProgramRecord {
            name: "iperf3-server".into(),
            vehicle: Some("usv2".into()),
            started_s: Some(0.5),
            ended_s: Some(END_S),
            exit_code: None,
            signal: Some(15),
            end: ProgramEnd::Other("stopped at the end of the run".into()),
            leftovers_killed: false,
        },
        ProgramRecord {
            name: "iperf3-client".into(),
            vehicle: Some("usv1".into()),
            started_s: Some(1.0),
            ended_s: Some(59.9),
            exit_code: Some(0),
            signal: None,
            end: ProgramEnd::Exited,
            leftovers_killed: false,
        },
        ProgramRecord {
            name: "auv1 client <nav>".into(),
            vehicle: Some("auv1".into()),
            started_s: Some(0.0),
            ended_s: Some(58.0),
            exit_code: Some(3),
            signal: None,
            end: ProgramEnd::Exited,
            leftovers_killed: false,
        },
        ProgramRecord {
            name: "logger".into(),
            vehicle: None,
            started_s: None,
            ended_s: None,
            exit_code: None,
            signal: None,
            end: ProgramEnd::Other("not found: /usr/bin/nothing".into()),
            leftovers_killed: false,
        },
    ];
    for p in programs {
        let t = p.ended_s.unwrap_or(END_S);
        messages.push((t, 5, serde_json::to_value(p).unwrap()));
    }

    // The emulation error per 10 ms: 0.05 ms, and 30 ms in the stall of 25.0–25.5 s.
    for i in 0..(END_S * 100.0) as u32 {
        let t = f64::from(i) / 100.0;
        let stalled = (25.0..=25.5).contains(&t);
        let w = EmulationWindow {
            t_s: t,
            window: i * 10,
            opened_late_ms: if stalled { 28.0 } else { 0.0 },
            copies: 10,
            error_max_ms: if stalled { 30.0 } else { 0.05 },
            release_max_ms: if stalled { 30.0 } else { 0.04 },
            capture_max_ms: 0.01,
            over_bound: if stalled { 10 } else { 0 },
        };
        messages.push((t, 6, serde_json::to_value(w).unwrap()));
    }

    messages.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (t, topic, m) in &messages {
        let topic = [
            TOPIC_POSES,
            TOPIC_CHANNEL,
            TOPIC_LINK_STATE,
            TOPIC_PACKETS,
            TOPIC_MODEM_FRAMES,
            TOPIC_PROGRAMS,
            TOPIC_EMULATION,
        ][*topic as usize];
        w.write(topic, ns(*t), m).unwrap();
    }
    if summary {
        w.write(TOPIC_SUMMARY, ns(END_S), &summary_json(&truth, 0))
            .unwrap();
    }
    w.finish().unwrap();
    truth
}

/// The run summary as a run writes it, its ledger from `truth`; `skew` is added to the first
/// link's delivered bytes (a summary that disagrees with the record).
fn summary_json(truth: &Truth, skew: u64) -> Value {
    let links: Vec<LinkSummary> = truth
        .delivered
        .iter()
        .enumerate()
        .map(|(i, ((src, dst), (n, bytes)))| LinkSummary {
            src: src.clone(),
            dst: Some(dst.clone()),
            captured: *n,
            delivered: *n,
            dropped: 0,
            in_flight: 0,
            balanced: true,
            drops: BTreeMap::new(),
            delivered_corrupted: 0,
            captured_bytes: *bytes,
            delivered_bytes: bytes + if i == 0 { skew } else { 0 },
        })
        .collect();
    let delivered: u64 = truth.delivered.values().map(|d| d.0).sum();
    let mut drops: BTreeMap<String, u64> = BTreeMap::new();
    for by_reason in truth.dropped.values() {
        for (r, n) in by_reason {
            *drops.entry(r.clone()).or_default() += n;
        }
    }
    let dropped: u64 = drops.values().sum();
    let f = |k: &str| truth.frames.get(k).copied().unwrap_or(0);
    let report = RunReport {
        scenario: "report-test".into(),
        windows: 60000,
        window_ms: 1.0,
        sim_seconds: END_S,
        wall_seconds: 60.4,
        started_unix_s: 0.0,
        slipped_seconds: 0.0,
        late_windows: 0,
        max_late_ms: 0.0,
        windows_per_second: 993.0,
        interrupted: false,
        record: None,
        timeline: None,
        pairs: vec![PairSummary {
            a: "usv1".into(),
            b: "usv2".into(),
            los_windows: 20300,
            nlos_windows: 39700,
            transitions: 1,
        }],
        traffic: Vec::new(),
        emulation: Some(emulation_summary()),
        network: Some(LedgerSummary {
            captured: delivered + dropped,
            delivered,
            dropped,
            in_flight: 0,
            balanced: true,
            drops,
            delivered_corrupted: 0,
            captured_bytes: 0,
            delivered_bytes: links.iter().map(|l| l.delivered_bytes).sum(),
            unknown_releases: 0,
            links,
            packet_records_dropped: 0,
        }),
        modems: Some(ModemReport {
            ledger: FrameLedgerSummary {
                sent: truth.frames.values().sum::<u64>(),
                delivered: f("delivered"),
                out_of_range: f("out of range"),
                packet_error: f("packet error"),
                collision: f("collision"),
                half_duplex: f("half-duplex"),
                no_receiver: f("no receiver"),
                shutdown: f("shutdown"),
                other: 0,
            },
            bridges: Default::default(),
            entries: Vec::new(),
            drained: 0,
        }),
        programs: Vec::new(),
        metrics: Vec::new(),
        viewer: None,
        record_queue: None,
        acoustic_paths: None,
        air: vec![AirSummary {
            standard: "80211a".into(),
            channel: 36,
            busy_share: 0.412,
            links: vec![
                AirLinkSummary {
                    src: "usv1".into(),
                    dst: Some("usv2".into()),
                    frames: 5000,
                    attempts: 5321,
                    retries: 321,
                    collided: 207,
                    retry_limit: 4,
                    airtime_share: 0.1875,
                    mean_service_ms: Some(0.734),
                },
                AirLinkSummary {
                    src: "usv2".into(),
                    dst: None,
                    frames: 60,
                    attempts: 60,
                    retries: 0,
                    collided: 3,
                    retry_limit: 0,
                    airtime_share: 0.0021,
                    mean_service_ms: None,
                },
            ],
        }],
        insecure_peers: Vec::new(),
        stages: BTreeMap::new(),
    };
    serde_json::to_value(report).unwrap()
}

/// The summary's emulation error, as the record's `/emulation` windows show it.
fn emulation_summary() -> EmulationSummary {
    let q = |p50_ms, p99_ms, max_ms, over_bound| Quantiles {
        copies: 60_000,
        p50_ms,
        p99_ms,
        max_ms,
        over_bound,
    };
    EmulationSummary {
        bound_ms: 0.5,
        error: q(0.05, 30.0, 30.0, 0.0085),
        release: q(0.04, 30.0, 30.0, 0.0085),
        capture: q(0.01, 0.01, 0.01, 0.0),
        links: vec![LinkEmulation {
            src: "usv1".into(),
            dst: "usv2".into(),
            error: q(0.05, 30.0, 30.0, 0.0085),
        }],
        spans: vec![EmulationSpan {
            from_s: 25.0,
            to_s: 25.5,
            copies_over_bound: 510,
            windows_late: 51,
            worst_ms: 30.0,
            stage: Some("physics".into()),
            stage_ms_per_window: 28.0,
            usual_ms_per_window: 0.4,
        }],
        spans_left_out: 0,
        warning: Some("emulation added more than the bound of 0.500 ms (network.emulation_bound_ms) to 0.85 % of the packets (p99 30.0 ms, max 30.0 ms); most from 25.000 s to 25.500 s of sim time (510 copies over it), where the physics stage took 28.0 ms per window against 0.400 ms over the run".into()),
    }
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// One record and its report, made once for the tests that only read them.
struct Shared {
    dir: PathBuf,
    truth: Truth,
    files: ReportFiles,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-shared");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let truth = write_record(&dir, true);
        let files = report::generate(&dir).unwrap();
        Shared { dir, truth, files }
    })
}

/// Per link, (delivered packets, delivered bytes) summed over `throughput.csv`.
fn throughput_sums(report_dir: &Path) -> BTreeMap<(String, String), (u64, u64)> {
    let (h, rows) = read_csv(&report_dir.join("series/throughput.csv"));
    let mut sums: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for r in rows {
        let s = sums
            .entry((r[col(&h, "src")].clone(), r[col(&h, "dst")].clone()))
            .or_default();
        s.0 += r[col(&h, "delivered_packets")].parse::<u64>().unwrap();
        s.1 += r[col(&h, "delivered_bytes")].parse::<u64>().unwrap();
    }
    sums
}

#[test]
fn throughput_series_carry_every_delivered_byte_of_the_record_and_the_summary() {
    let Shared { dir, truth, files } = shared();
    assert!(files.notes.is_empty(), "{:?}", files.notes);
    // The record, read back on its own.
    let record = Record::read(dir).unwrap();
    let mut from_record: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for p in record
        .packets
        .iter()
        .filter(|p| p.outcome == Outcome::Delivered)
    {
        let e = from_record
            .entry((p.src.clone(), p.dst.clone().unwrap_or_default()))
            .or_default();
        e.0 += 1;
        e.1 += u64::from(p.bytes);
    }
    let sums = throughput_sums(&files.dir);
    assert_eq!(sums, from_record);
    assert_eq!(&sums, &truth.delivered);
    // The summary's per-link ledger says the same, and the report checked it.
    let links = record.summary.as_ref().unwrap()["network"]["links"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(links.len(), 2);
    for l in links {
        let key = (
            l["src"].as_str().unwrap().to_string(),
            l["dst"].as_str().unwrap().to_string(),
        );
        assert_eq!(
            sums[&key].1,
            l["delivered_bytes"].as_u64().unwrap(),
            "{key:?}"
        );
    }
    assert!(
        files.analysis.checks.len() >= 4 + 8,
        "{:?}",
        files.analysis.checks
    );
    assert!(
        files.analysis.checks.iter().all(|c| c.ok()),
        "{:?}",
        files.analysis.checks
    );
    // The numbers themselves: every LOS segment arrived (1 ms apart from t = 1 s).
    let data = &sums[&("usv1".to_string(), "usv2".to_string())];
    assert!(
        data.0 > 19_000 && data.1 == data.0 * u64::from(DATA_BYTES),
        "{data:?}"
    );
    assert_eq!(
        sums[&("usv2".to_string(), "usv1".to_string())].0,
        data.0,
        "one ACK per delivered segment"
    );

    // The phases show: high in LOS, lower in NLOS, nothing out of range.
    let (h, rows) = read_csv(&files.dir.join("series/throughput.csv"));
    let rate = |from: f64, to: f64| {
        let r: Vec<f64> = rows
            .iter()
            .filter(|r| r[0] == "usv1" && r[1] == "usv2")
            .filter(|r| {
                r[col(&h, "bin_start_s")].parse::<f64>().unwrap() >= from
                    && r[col(&h, "bin_end_s")].parse::<f64>().unwrap() <= to
            })
            .map(|r| r[col(&h, "mbit_per_s")].parse::<f64>().unwrap())
            .collect();
        assert!(!r.is_empty());
        r.iter().sum::<f64>() / r.len() as f64
    };
    let (los, nlos, out) = (rate(2.0, 20.0), rate(21.0, 40.0), rate(41.0, 60.0));
    assert!(
        (los - 11.584).abs() < 0.1,
        "LOS {los} Mbit/s (1448 B per ms)"
    );
    assert!(nlos > 0.5 && nlos < 1.2, "NLOS {nlos} Mbit/s");
    assert_eq!(out, 0.0);
    assert_eq!(files.analysis.bin_s, 1.0);
}

#[test]
fn delays_channel_states_and_ledger_follow_the_record() {
    let Shared { dir, truth, files } = shared();
    let record = Record::read(dir).unwrap();
    // One delay row per delivered copy, each its delivery less its capture time.
    let (h, rows) = read_csv(&files.dir.join("series/delay.csv"));
    let delivered: Vec<&PacketRecord> = record
        .packets
        .iter()
        .filter(|p| p.outcome == Outcome::Delivered)
        .collect();
    assert_eq!(rows.len(), delivered.len());
    let max_delay = rows
        .iter()
        .map(|r| r[col(&h, "delay_s")].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert!(
        (max_delay - (0.003 + 10.0 * 5e-4)).abs() < 1e-9,
        "{max_delay}"
    );
    let corrupted = rows
        .iter()
        .filter(|r| r[col(&h, "corrupted")] == "true")
        .count();
    assert_eq!(corrupted, delivered.iter().filter(|p| p.corrupted).count());
    assert!(corrupted > 0);

    // The RF pair: LOS, NLOS, then out of range (both directions unusable).
    let (h, rows) = read_csv(&files.dir.join("series/channel_states.csv"));
    let rf: Vec<(f64, f64, String)> = rows
        .iter()
        .filter(|r| r[col(&h, "a")] == "usv1" && r[col(&h, "b")] == "usv2")
        .map(|r| {
            (
                r[col(&h, "start_s")].parse().unwrap(),
                r[col(&h, "end_s")].parse().unwrap(),
                r[col(&h, "state")].clone(),
            )
        })
        .collect();
    assert_eq!(
        rf,
        vec![
            (0.0, NLOS_FROM, "los".to_string()),
            (NLOS_FROM, OUT_FROM, "nlos".to_string()),
            (OUT_FROM, END_S, "out_of_range".to_string())
        ]
    );
    let pair = files
        .analysis
        .pairs
        .iter()
        .find(|p| p.a == "usv1" && p.b == "usv2")
        .unwrap();
    assert_eq!(pair.changes, 1);
    assert_eq!(files.analysis.pairs.len(), 10);

    // ledger.csv: per link and reason, the copies of the record.
    let (h, rows) = read_csv(&files.dir.join("series/ledger.csv"));
    let mut dropped: BTreeMap<(String, String), BTreeMap<String, u64>> = BTreeMap::new();
    let mut frames: BTreeMap<String, u64> = BTreeMap::new();
    for r in &rows {
        let n: u64 = r[col(&h, "copies")].parse().unwrap();
        match (r[col(&h, "kind")].as_str(), r[col(&h, "outcome")].as_str()) {
            ("packets", "delivered") => {}
            ("packets", reason) => {
                *dropped
                    .entry((r[1].clone(), r[2].clone()))
                    .or_default()
                    .entry(reason.to_string())
                    .or_default() += n;
            }
            ("modem_frames", outcome) => *frames.entry(outcome.to_string()).or_default() += n,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(&dropped, &truth.dropped);
    assert_eq!(&frames, &truth.frames);
    for reason in [
        "packet error",
        "queue full",
        "out of range",
        "shutdown",
        "after end",
    ] {
        assert!(
            truth.dropped[&("usv1".to_string(), "usv2".to_string())][reason] > 0,
            "{reason}"
        );
    }

    // The SNR series: the link states as recorded.
    let (_, rows) = read_csv(&files.dir.join("series/link_states.csv"));
    assert_eq!(rows.len(), record.link_states.len());
}

#[test]
fn the_run_ends_at_its_last_window_though_copies_were_captured_after_it() {
    let Shared { dir, truth, files } = shared();
    let record = Record::read(dir).unwrap();
    let latest = record
        .packets
        .iter()
        .map(|p| p.t_s.max(p.end_s))
        .fold(0.0, f64::max);
    assert_eq!(latest, AFTER_END[2]);
    let rf = ("usv1".to_string(), "usv2".to_string());
    assert_eq!(truth.dropped[&rf]["after end"], AFTER_END.len() as u64);
    // The run's end is the summary's windows × W, 60000 × 1 ms, not the latest capture.
    assert_eq!(files.analysis.end_s, END_S);
    let table = files.table();
    assert!(
        table.starts_with("report-test: 60000 windows of 1 ms = 60.00 s simulated in"),
        "{table}"
    );
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(
        html.contains("<td>simulated</td><td class=\"n\">60.000 s</td>"),
        "{html}"
    );
    // The pair's LOS share is the summary's (20300 of 60000 windows), the same in every table.
    let summary = RunReport::from_value(record.summary.clone().unwrap()).unwrap();
    let s = &summary.pairs[0];
    let los = s.los_windows as f64 / (s.los_windows + s.nlos_windows) as f64;
    let pair = files
        .analysis
        .pairs
        .iter()
        .find(|p| (p.a.as_str(), p.b.as_str()) == ("usv1", "usv2"))
        .unwrap();
    let share = pair.share(report::series::ChannelState::Los).unwrap();
    assert!((share - los).abs() < 1e-12, "{share} against {los}");
    assert!(table.contains("33.8 %"), "{table}");
    let json: Value = serde_json::from_slice(&std::fs::read(&files.json).unwrap()).unwrap();
    assert_eq!(json["end_s"], END_S);
    // The copies captured after the end are in the ledger, under a reason of their own.
    assert_eq!(
        summary.network.as_ref().unwrap().drops["after end"],
        AFTER_END.len() as u64
    );
    assert!(table.contains("after end 3"), "{table}");
}

#[test]
fn modem_series_count_every_frame_of_the_record_and_the_summary_ledger() {
    let Shared { dir, truth, files } = shared();
    let record = Record::read(dir).unwrap();
    let (h, rows) = read_csv(&files.dir.join("series/modem_frames.csv"));
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for r in &rows {
        for (i, name) in h.iter().enumerate().skip(2) {
            *sums.entry(name.clone()).or_default() += r[i].parse::<u64>().unwrap();
        }
    }
    let sent = sums.remove("sent").unwrap();
    assert_eq!(sent, record.modem_frames.len() as u64);
    let mut from_record: BTreeMap<String, u64> = BTreeMap::new();
    for f in &record.modem_frames {
        *from_record
            .entry(f.reason.clone().unwrap_or_else(|| "delivered".into()))
            .or_default() += 1;
    }
    assert_eq!(sums, from_record);
    assert_eq!(&sums, &truth.frames);
    for outcome in [
        "delivered",
        "out of range",
        "packet error",
        "collision",
        "half-duplex",
        "no receiver",
        "shutdown",
    ] {
        assert!(
            sums.get(outcome).copied().unwrap_or(0) > 0,
            "{outcome} occurs"
        );
    }
    // The summary's modem ledger, key by key.
    let ledger = record.summary.as_ref().unwrap()["modems"]["ledger"]
        .as_object()
        .unwrap()
        .clone();
    for (key, n) in ledger {
        let label = match key.as_str() {
            "sent" => {
                assert_eq!(sent, n.as_u64().unwrap());
                continue;
            }
            "half_duplex" => "half-duplex".to_string(),
            k => k.replace('_', " "),
        };
        assert_eq!(
            sums.get(&label).copied().unwrap_or(0),
            n.as_u64().unwrap(),
            "{key}"
        );
    }
}

fn png_size(bytes: &[u8]) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    // Pixels that are not white: something was drawn.
    let inked = px.chunks(3).filter(|p| p.iter().any(|&c| c < 200)).count();
    (info.width, info.height, inked)
}

#[test]
fn the_emulation_error_is_stated_its_span_listed_and_binned_from_the_record() {
    let shared = shared();
    let html = std::fs::read_to_string(&shared.files.html).unwrap();
    assert!(
        html.contains(
            "Emulation added at most 30.0 ms to 99 % of the packets (60000 delivered copies"
        ) && html.contains("25.000 – 25.500")
            && html.contains("physics (28.000 ms per window, 0.400 over the run)")
            && html.contains("Warning: emulation added more than the bound"),
        "the emulation section"
    );
    let record = Record::read(&shared.dir).unwrap();
    assert_eq!(record.emulation.len(), 6000);
    let summary = RunReport::from_value(record.summary.clone().unwrap()).unwrap();
    let a = report::series::Analysis::of(&record, Some(summary));
    let stalled: Vec<usize> = (a.emulation.iter().enumerate())
        .filter(|(_, b)| b.error_max_ms >= 30.0)
        .map(|(i, _)| i)
        .collect();
    assert_eq!((a.bin_s, stalled), (1.0, vec![25]));
    assert_eq!(a.emulation[25].over_bound, 510);
    assert!(report::table::terminal(&a).contains("warning: emulation added"));
}

#[test]
fn the_80211_media_list_each_links_attempts_retries_collisions_and_service_time() {
    let shared = shared();
    let html = std::fs::read_to_string(&shared.files.html).unwrap();
    let record = Record::read(&shared.dir).unwrap();
    let summary = RunReport::from_value(record.summary.clone().unwrap()).unwrap();
    let a = report::series::Analysis::of(&record, Some(summary));
    let table = report::table::terminal(&a);
    for text in [&html, &table] {
        for needle in [
            "802.11 medium 80211a channel 36: busy 41.2 %",
            "usv1 → usv2",
            "5321",
            "321",
            "207",
            "18.8 %",
            "0.73 ms",
            "usv2 → (group)",
        ] {
            assert!(text.contains(needle), "{needle} in\n{text}");
        }
    }
    assert!(html.contains("<a href=\"#air\">") && html.contains("<h2 id=\"air\">"));
}

#[test]
fn every_plot_decodes_and_the_page_embeds_each_one() {
    let files = &shared().files;
    let mut names: Vec<String> = files
        .plots
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "channel.png",
            "emulation.png",
            "ledger_modem.png",
            "ledger_packets.png",
            "link_00_usv1_usv2.png",
            "link_00_usv1_usv2_stats.png",
            "link_01_usv2_usv1.png",
            "link_01_usv2_usv1_stats.png",
            "map.png",
            "map_pairs.png",
            "modem_frames.png",
            "snr.png"
        ]
    );
    let html = std::fs::read_to_string(&files.html).unwrap();
    let embedded: Vec<&str> = html
        .split("src=\"data:image/png;base64,")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(embedded.len(), files.plots.len());
    use base64::Engine;
    let embedded: Vec<Vec<u8>> = embedded
        .iter()
        .map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap())
        .collect();
    for p in &files.plots {
        let bytes = std::fs::read(p).unwrap();
        let (w, h, inked) = png_size(&bytes);
        assert!(w >= 600 && h >= 300, "{}: {w}×{h}", p.display());
        assert!(
            inked as f64 > 0.02 * (w * h) as f64,
            "{}: only {inked} pixels drawn",
            p.display()
        );
        assert!(embedded.contains(&bytes), "{} is on the page", p.display());
    }
    // Nothing loads from elsewhere.
    for needle in ["http://", "https://", "<script", "src=\"file:", "@import"] {
        assert!(!html.contains(needle), "report.html contains {needle}");
    }
    // The page shows the ledger and programs, names escaped.
    assert!(
        html.contains("auv1 client &lt;nav&gt;")
            && html.contains("exit 3")
            && html.contains("signal 15")
            && html.contains("not started")
    );
    assert!(
        html.contains("packet error")
            && html.contains("half-duplex")
            && html.contains("no receiver")
    );
    assert!(!html.contains("DIFFERENT"));
}

#[test]
fn a_summary_that_disagrees_with_the_record_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write_record(dir.path(), false);
    // No /summary in the record: the report reads summary.json, here off by 100 bytes.
    std::fs::write(
        dir.path().join("summary.json"),
        serde_json::to_vec(&summary_json(&truth, 100)).unwrap(),
    )
    .unwrap();
    let files = report::generate(dir.path()).unwrap();
    let bad: Vec<_> = files.analysis.checks.iter().filter(|c| !c.ok()).collect();
    assert_eq!(bad.len(), 1, "{:?}", files.analysis.checks);
    assert_eq!(bad[0].summary, bad[0].record + 100);
    assert!(std::fs::read_to_string(&files.html)
        .unwrap()
        .contains("DIFFERENT"));
    assert!(files.table().contains("MISMATCH"), "{}", files.table());
}

#[test]
fn a_record_cut_short_still_gets_a_consistent_report() {
    let dir = tempfile::tempdir().unwrap();
    write_record(dir.path(), true);
    let path = dir.path().join(RECORD_FILE);
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let record = Record::read(dir.path()).unwrap();
    assert!(record.summary.is_none() && !record.packets.is_empty());
    let files = report::generate(dir.path()).unwrap();
    let mut from_record: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for p in record
        .packets
        .iter()
        .filter(|p| p.outcome == Outcome::Delivered)
    {
        let e = from_record
            .entry((p.src.clone(), p.dst.clone().unwrap_or_default()))
            .or_default();
        e.0 += 1;
        e.1 += u64::from(p.bytes);
    }
    assert_eq!(throughput_sums(&files.dir), from_record);
    assert!(files.table().contains("cut short"), "{}", files.table());
    assert!(files.html.is_file() && !files.plots.is_empty());
}

#[test]
fn a_record_without_traffic_draws_what_it_has_and_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = RecordWriter::create(&dir.path().join(RECORD_FILE)).unwrap();
    let run = RunInfo {
        scenario: "quiet".into(),
        seed: 0,
        window_ms: 10.0,
        duration_s: 5.0,
        real_time_factor: 0.0,
        vehicles: vec!["a".into(), "b".into()],
        pose_interval_s: 1.0,
        channel_interval_s: 1.0,
    };
    w.write(TOPIC_RUN, 0, &run).unwrap();
    w.finish().unwrap();
    let files = report::generate(dir.path()).unwrap();
    assert!(files.plots.is_empty(), "{:?}", files.plots);
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(
        html.contains("No packet crossed")
            && html.contains("No modem frame")
            && html.contains("No 802.11 medium")
    );
    // Every series file exists, with its header.
    for f in &files.series {
        let (header, _) = read_csv(f);
        assert!(!header.is_empty(), "{}", f.display());
    }
}

#[test]
fn cosim_report_regenerates_the_report_from_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write_record(dir.path(), true);
    // A stale file of an earlier report goes; the user's own files stay.
    std::fs::create_dir_all(dir.path().join("report/plots")).unwrap();
    std::fs::write(dir.path().join("report/plots/old.png"), b"stale").unwrap();
    std::fs::write(dir.path().join("report/notes.txt"), b"mine").unwrap();
    let out = Command::new(COSIM)
        .args(["report", dir.path().to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("usv1 → usv2")
            && stdout.contains("report-test")
            && stdout.contains("report.html"),
        "{stdout}"
    );
    assert!(
        stdout.contains("iperf3-client") && stdout.contains("no receiver"),
        "{stdout}"
    );
    assert!(!dir.path().join("report/plots/old.png").exists());
    assert!(dir.path().join("report/notes.txt").exists());
    assert_eq!(throughput_sums(&dir.path().join("report")), truth.delivered);
    // A folder without a record: an error naming the file.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(COSIM)
        .args(["report", empty.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("record.mcap"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `cosim report` on a path that does not exist and on a folder without a record: one line
/// each, naming what is missing, with no cause said twice.
#[test]
fn cosim_report_names_a_missing_folder_and_a_folder_without_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let report = |p: &Path| {
        let out = Command::new(COSIM)
            .args(["report", p.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("os error"), "{stderr}");
        stderr
    };
    let nowhere = dir.path().join("nowhere");
    let e = report(&nowhere);
    assert!(
        e.starts_with(&format!(
            "error: {}: no such run folder or record",
            nowhere.display()
        )),
        "{e}"
    );
    let e = report(dir.path());
    assert!(
        e.starts_with(&format!(
            "error: {}: no {RECORD_FILE} in this folder, so no run to report: a run folder holds",
            dir.path().display()
        )),
        "{e}"
    );
    // A record that cannot be read: its cause once.
    std::fs::create_dir(dir.path().join(RECORD_FILE)).unwrap();
    let out = Command::new(COSIM)
        .args(["report", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert_eq!(e.matches("os error").count(), 1, "{e}");
}

/// A PNG's width, height and RGB pixels.
fn decode_rgb(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// `map.png` of a report, decoded, and where the world is on it.
struct MapImage {
    w: u32,
    px: Vec<u8>,
    frame: map::MapFrame,
    origin: (i32, i32),
}

impl MapImage {
    fn of(files: &ReportFiles) -> MapImage {
        let (w, h, px) = decode_rgb(&std::fs::read(files.dir.join("plots/map.png")).unwrap());
        assert_eq!((w, h), map::MAP_SIZE);
        let frame = map::frame(&files.analysis.map).unwrap();
        let ((pw, ph), origin) = map::plot_area();
        assert_eq!((frame.w, frame.h), (pw, ph));
        MapImage {
            w,
            px,
            frame,
            origin,
        }
    }

    /// The image pixel at world (x, y).
    fn at(&self, x: f64, y: f64) -> (i32, i32) {
        let (u, v) = self.frame.pixel(x, y);
        (
            self.origin.0 + u.floor() as i32,
            self.origin.1 + v.floor() as i32,
        )
    }

    fn rgb(&self, (i, j): (i32, i32)) -> [u8; 3] {
        let k = 3 * (j as usize * self.w as usize + i as usize);
        [self.px[k], self.px[k + 1], self.px[k + 2]]
    }

    /// Whether a pixel of `colour` is within `r` pixels of world (x, y).
    fn near(&self, x: f64, y: f64, r: i32, colour: [u8; 3]) -> bool {
        let (i, j) = self.at(x, y);
        (-r..=r).any(|dj| (-r..=r).any(|di| self.rgb((i + di, j + dj)) == colour))
    }

    /// Every vehicle's track: the share of its sampled positions with its colour close by.
    fn tracks_found(&self, a: &report::series::Analysis) -> Vec<(String, f64)> {
        a.map
            .tracks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let c = map::vehicle_colour(i);
                let points: Vec<_> = t.points.iter().step_by(5).collect();
                let found = points
                    .iter()
                    .filter(|p| self.near(p.x, p.y, 7, [c.0, c.1, c.2]))
                    .count();
                (t.vehicle.clone(), found as f64 / points.len() as f64)
            })
            .collect()
    }

    /// The colours at the highest and the lowest ground of `terrain` inside the map, each
    /// taken where no track is within 12 m.
    fn high_and_low(
        &self,
        terrain: &SceneUpdate,
        a: &report::series::Analysis,
    ) -> ([u8; 3], [u8; 3]) {
        let f = &self.frame;
        let clear = |x: f64, y: f64| {
            a.map
                .tracks
                .iter()
                .flat_map(|t| &t.points)
                .all(|p| (p.x - x).hypot(p.y - y) > 12.0)
        };
        let inside = |x: f64, y: f64| {
            x > f.x0 + 10.0 && x < f.x1() - 10.0 && y > f.y0() + 10.0 && y < f.y1 - 10.0
        };
        let mut points: Vec<_> = terrain.entities[0].triangles[0]
            .points
            .iter()
            .filter(|p| inside(p.x, p.y) && clear(p.x, p.y))
            .collect();
        points.sort_by(|p, q| p.z.total_cmp(&q.z));
        let (low, high) = (points[0], points[points.len() - 1]);
        assert!(high.z > 0.0 && low.z < -20.0, "{high:?} {low:?}");
        (
            self.rgb(self.at(high.x, high.y)),
            self.rgb(self.at(low.x, low.y)),
        )
    }
}

#[test]
fn the_map_shows_the_terrain_high_and_low_and_every_track_in_its_colour() {
    let files = &shared().files;
    let m = MapImage::of(files);
    let record = Record::read(&shared().dir).unwrap();
    let (high, low) = m.high_and_low(record.terrain.as_ref().unwrap(), &files.analysis);
    // Land above the waterline is tinted warm, the deep floor blue; far apart.
    assert!(
        high[0] > high[2] && low[2] > low[0] + 40,
        "{high:?} {low:?}"
    );
    let distance: i32 = (0..3)
        .map(|k| (i32::from(high[k]) - i32::from(low[k])).abs())
        .sum();
    assert!(distance > 100, "{high:?} {low:?}");
    let found = m.tracks_found(&files.analysis);
    assert_eq!(found.len(), 5);
    for (v, share) in &found {
        assert!(*share >= 0.9, "{v}: {found:?}");
    }
    // The pairs' map: its layout's size, every state's colour drawn.
    let (pairs, left_out) = map::map_pairs(&files.analysis);
    assert_eq!((pairs.len(), left_out), (10, 0));
    let (size, _) = map::pairs_layout(&files.analysis.map, pairs.len()).unwrap();
    let (w, h, px) = decode_rgb(&std::fs::read(files.dir.join("plots/map_pairs.png")).unwrap());
    assert_eq!((w, h), size);
    for s in report::series::ChannelState::ALL {
        let c = map::state_colour(s);
        let n = px.chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count();
        assert!(n > 200, "{s:?}: {n} pixels");
    }
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(html.contains("<h2 id=\"map\">Map</h2>") && html.contains("contour lines every"));
    assert!(html.find("id=\"map\"").unwrap() < html.find("id=\"channel\"").unwrap());
}

#[test]
fn a_record_without_terrain_gets_a_map_of_its_tracks_on_a_plain_background() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = RecordWriter::create(&dir.path().join(RECORD_FILE)).unwrap();
    let run = RunInfo {
        scenario: "plain".into(),
        seed: 0,
        window_ms: 10.0,
        duration_s: 10.0,
        real_time_factor: 0.0,
        vehicles: vec!["a".into(), "b".into()],
        pose_interval_s: 1.0,
        channel_interval_s: 1.0,
    };
    w.write(TOPIC_RUN, 0, &run).unwrap();
    for k in 0..=10 {
        let t = k as f64;
        let poses = Poses {
            t_s: t,
            poses: vec![
                VehiclePose {
                    vehicle: "a".into(),
                    x: 30.0 * t,
                    y: 0.0,
                    z: 0.0,
                },
                VehiclePose {
                    vehicle: "b".into(),
                    x: -50.0,
                    y: -20.0 * t,
                    z: -5.0,
                },
            ],
        };
        w.write(TOPIC_POSES, ns(t), &poses).unwrap();
    }
    w.finish().unwrap();
    let files = report::generate(dir.path()).unwrap();
    let m = MapImage::of(&files);
    assert!(files.analysis.map.terrain.is_none());
    // Away from the tracks: the plain background.
    assert_eq!(m.rgb(m.at(200.0, -150.0)), [244, 244, 240]);
    for (v, share) in m.tracks_found(&files.analysis) {
        assert!(share >= 0.9, "{v}: {share}");
    }
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(html.contains("The record has no terrain"), "{html}");
    // No channel samples: no pairs' map.
    assert!(!dir.path().join("report/plots/map_pairs.png").exists());
}

#[test]
fn the_map_of_the_default_scenario_shows_its_headland_and_its_five_tracks() {
    let scenario = netsim_cosim::config::load(Path::new("config/default.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut w = RecordWriter::create(&dir.path().join(RECORD_FILE)).unwrap();
    let names = ["usv1", "usv2", "auv1", "auv2", "auv3"];
    let run = RunInfo {
        scenario: "default".into(),
        seed: 42,
        window_ms: 1.0,
        duration_s: 60.0,
        real_time_factor: 1.0,
        vehicles: names.iter().map(|v| v.to_string()).collect(),
        pose_interval_s: 0.5,
        channel_interval_s: 1.0,
    };
    w.write(TOPIC_RUN, 0, &run).unwrap();
    let terrain = SceneUpdate {
        deletions: Vec::new(),
        entities: vec![scene::terrain_mesh(&scenario.terrain, scene::MESH_SIDE)],
    };
    w.write(TOPIC_TERRAIN, 0, &terrain).unwrap();
    // The paths the scenario describes: usv1 holds (-60, 0); usv2 runs east along y = 60, south
    // behind the headland to (150, -10), then east; auv1 patrols along x = -40, auv2 along
    // x = 150, auv3 works west at (-200, 60).
    let usv2 = |t: f64| {
        if t < 23.3 {
            (-20.0 + 6.0 * t, 60.0)
        } else if t < 36.0 {
            let f = (t - 23.3) / 12.7;
            (120.0 + 30.0 * f, 60.0 - 70.0 * f)
        } else {
            (150.0 + 6.0 * (t - 36.0), -10.0)
        }
    };
    for k in 0..=120 {
        let t = k as f64 * 0.5;
        let at = [
            (-60.0, 0.0),
            usv2(t),
            (-40.0, -100.0 + 1.5 * t),
            (150.0, -60.0 - t),
            (-200.0 + t, 60.0),
        ];
        let poses = Poses {
            t_s: t,
            poses: names
                .iter()
                .zip(at)
                .map(|(v, (x, y))| VehiclePose {
                    vehicle: v.to_string(),
                    x,
                    y,
                    z: 0.0,
                })
                .collect(),
        };
        w.write(TOPIC_POSES, ns(t), &poses).unwrap();
    }
    w.finish().unwrap();
    let files = report::generate(dir.path()).unwrap();
    let m = MapImage::of(&files);
    // The headland's crest (60, 0) above the water, the floor west of it at -40 m.
    let crest = m.rgb(m.at(60.0, 0.0));
    let deep = m.rgb(m.at(-120.0, -60.0));
    assert!(
        crest[0] > crest[2] && deep[2] > deep[0] + 40,
        "{crest:?} {deep:?}"
    );
    let found = m.tracks_found(&files.analysis);
    assert_eq!(
        found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        names
    );
    for (v, share) in &found {
        assert!(*share >= 0.9, "{v}: {found:?}");
    }
}

/// Loads `page` in headless Chromium with a probe that writes, once the page has loaded, how
/// many images it has, how many decoded (naturalWidth > 0), how many decoded to their last
/// pixel (drawn on a canvas, the bottom-right pixel is opaque: the plots have no transparency,
/// an image cut short leaves it blank) and every error event; returns the probe's line and
/// Chromium's console lines.
fn load_in_chromium(page: &Path) -> (String, Vec<String>) {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = "<script>window.__errors=[];window.addEventListener('error',function(e){window.__errors.push(String(e.message||('failed to load '+(e.target&&e.target.tagName))))},true);\
                 window.addEventListener('load',function(){var im=document.images,ok=0,whole=0;for(var i=0;i<im.length;i++){var m=im[i];if(!(m.complete&&m.naturalWidth>0))continue;ok++;\
                 try{var c=document.createElement('canvas');c.width=m.naturalWidth;c.height=m.naturalHeight;var x=c.getContext('2d');x.drawImage(m,0,0);\
                 if(x.getImageData(c.width-1,c.height-1,1,1).data[3]===255)whole++}catch(e){window.__errors.push('canvas: '+e)}}\
                 var p=document.createElement('pre');p.id='probe';p.textContent='PROBE images='+im.length+' decoded='+ok+' whole='+whole+' errors='+window.__errors.length+' '+window.__errors.join('|');document.body.appendChild(p)});</script>";
    let probed = html.replacen("<head>", &format!("<head>{probe}"), 1);
    assert_ne!(probed, html, "report.html has a <head>");
    let probed_path = page.with_file_name("probed.html");
    std::fs::write(&probed_path, probed).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
        ])
        .arg(format!("file://{}", probed_path.display()))
        .output()
        .unwrap_or_else(|e| {
            panic!("chromium: {e} (scripts/setup --test installs Debian's chromium)")
        });
    let dom = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    // The probe's element, not the script that makes it.
    let at = dom
        .find("<pre id=\"probe\">")
        .unwrap_or_else(|| panic!("no probe output in the DOM:\n{dom}\n{stderr}"))
        + "<pre id=\"probe\">".len();
    let line = &dom[at..at + dom[at..].find("</pre>").unwrap()];
    let console = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect();
    (line.to_string(), console)
}

#[test]
fn report_html_loads_in_chromium_with_every_image_decoded() {
    let files = &shared().files;
    let n = files.plots.len();
    assert!(n >= 9);
    let (probe, console) = load_in_chromium(&files.html);
    assert!(
        probe.starts_with(&format!("PROBE images={n} decoded={n} whole={n} errors=0")),
        "{probe}"
    );
    assert!(console.is_empty(), "console messages: {console:#?}");

    // The same checks fail on a page with a broken image, and on one with an image cut short.
    let html = std::fs::read_to_string(&files.html).unwrap();
    let at = html.find("data:image/png;base64,").unwrap() + "data:image/png;base64,".len();
    let end = at + html[at..].find('"').unwrap();
    let broken = format!("{}iVBORw0KGgoAAAAAbroken{}", &html[..at], &html[at + 40..]);
    let cut_short = format!("{}{}", &html[..end - (end - at) / 2], &html[end..]);
    for (name, page, expect) in [
        (
            "broken",
            broken,
            format!("PROBE images={n} decoded={} whole={} ", n - 1, n - 1),
        ),
        (
            "cut_short",
            cut_short,
            format!("PROBE images={n} decoded={n} whole={} ", n - 1),
        ),
    ] {
        let path = files.dir.join(format!("{name}.html"));
        std::fs::write(&path, page).unwrap();
        let (probe, _) = load_in_chromium(&path);
        assert!(probe.starts_with(&expect), "{name}: {probe}");
    }
}

/// `cosim compare`: one link of two runs side by side, and each kind of bad input named.
#[test]
fn cosim_compare_tables_a_link_of_runs_and_names_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let truth = write_record(dir.path(), true);
    let run = dir.path().to_str().unwrap();
    let compare = |args: &[&str]| {
        Command::new(COSIM)
            .arg("compare")
            .args(args)
            .output()
            .unwrap()
    };
    let out = compare(&[
        &format!("first={run}"),
        &format!("second={run}"),
        "--link",
        "usv1:usv2",
        "--phase",
        "all=0-1000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (packets, bytes) = truth.delivered[&("usv1".to_owned(), "usv2".to_owned())];
    assert!(packets > 0, "the record has traffic on usv1 → usv2");
    let mbps = format!("{:.2} Mbit/s", bytes as f64 * 8.0 / 1000.0 / 1e6);
    assert!(
        stdout.starts_with("usv1 → usv2")
            && stdout.contains("| first")
            && stdout.contains("| second"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches(&mbps).count(),
        2,
        "{mbps} in both columns:\n{stdout}"
    );

    // Without --phase: one phase from 0 to the run's end, its windows × W (the summary's
    // simulated seconds), though copies were captured after it and the link's own copies end
    // earlier.
    let record = Record::read(dir.path()).unwrap();
    let all = &record.packets;
    let latest = |src: Option<&str>, dst: Option<&str>| {
        all.iter()
            .filter(|p| {
                src.is_none_or(|s| p.src == s) && dst.is_none_or(|d| p.dst.as_deref() == Some(d))
            })
            .map(|p| p.end_s)
            .fold(0.0, f64::max)
    };
    let end = record.summary.as_ref().unwrap()["sim_seconds"]
        .as_f64()
        .unwrap();
    assert!(latest(None, None) > end, "copies after the run's end");
    let ((src, dst), &(_, bytes)) = truth
        .delivered
        .iter()
        .find(|((s, d), _)| latest(Some(s), Some(d)) < end)
        .expect("a link whose copies end before the run's end");
    let out = compare(&[run, "--link", &format!("{src}:{dst}")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mbps = format!("{:.2} Mbit/s", bytes as f64 * 8.0 / end / 1e6);
    assert!(
        out.status.success() && stdout.contains(&format!("run (0–{end} s)")),
        "{stdout}"
    );
    assert!(stdout.contains(&mbps), "{mbps}:\n{stdout}");

    let err = |args: &[&str]| {
        let out = compare(args);
        assert!(!out.status.success(), "{args:?} passed");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(err(&[run, "--link", "usv1"]).contains("--link \"usv1\": expected SRC:DST"));
    assert!(err(&[run, "--link", "usv1:usv2", "--phase", "LOS=5"])
        .contains("\"LOS=5\": expected NAME=FROM-TO in seconds"));
    let e = err(&[run, "--link", "usv1:nobody"]);
    assert!(
        e.contains("no packet from usv1 to nobody in the record (its links: ")
            && e.contains("usv1:usv2")
            && e.contains("usv2:usv1"),
        "{e}"
    );
    let empty = tempfile::tempdir().unwrap();
    assert!(err(&[empty.path().to_str().unwrap(), "--link", "usv1:usv2"]).contains("record.mcap"));
}
