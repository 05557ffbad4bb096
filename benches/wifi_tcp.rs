//! iperf3 TCP over one 802.11g pair at 8 distances, the embedded network simulator (an `rf`
//! link with `mac: 80211g`) against ns-3's through the adapter (802.11g, IdealWifiManager),
//! side by side in one run (root: live capture through TUN).
//!
//! Per distance, the same scenario runs twice with `cosim run`, once with `--network-sim
//! embedded` and once over ns-3: two stationary vessels, `iperf3 -c` from one to the other's
//! `iperf3 -s` inside their network namespaces, real time, W = 1 ms. The links are
//! `config/ns3_wifi.yaml`'s: 2.4 GHz, 16 dBm, path loss exponent 2.2, −94 dBm noise floor, so
//! the levels run from −52.7 dBm at 20 m to −81.3 dBm at 400 m, just above the −82 dBm both
//! detect from. Per run, from its record: TCP's delivered throughput and the median one-way delay
//! of its data copies, over the stream's steady part (from 3 s after the client starts to the
//! end of its stream); and whether the run kept the wall clock (late windows, slip).
//!
//! Run: `cargo bench --bench wifi_tcp` as root, with iperf3 (`scripts/setup --run`) and
//! target/ns3/netsim-ns3 (`scripts/setup --ns3`). Optional env: SECONDS (the stream's length
//! in wall seconds, default 12), RTF (the runs' real-time factor, default 1; below 1 gives ns-3,
//! which costs more per window, the time to keep up on a busy machine: the kernels' TCP then
//! sees slower wall-clock round trips, the figures stay in sim time), DISTANCES
//! (comma-separated metres, default 20,60,100,150,200,260,330,400), STANDARD (default
//! `80211g`; `80211n-2.4` for 802.11n's A-MPDUs in the same band), BENCH_KEEP (keep the runs'
//! folders and print where).

#[path = "common/figures.rs"]
#[allow(dead_code)]
mod figures;
#[path = "common/ns3.rs"]
#[allow(dead_code)]
mod ns3;

use netsim_cosim::{
    config,
    model::link::{Geometry, LinkSpec},
    output::{
        record::Record,
        schema::{Outcome, PacketRecord},
    },
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
/// When the client starts (s of sim time), and how long TCP gets to settle before measuring.
const CLIENT_START_S: f64 = 1.0;
const SETTLE_S: f64 = 3.0;

/// The scenario: vessels `a` at the origin and `b` `d_m` east of it, `b` sending to `a` for
/// `seconds` of wall time, paced at `rtf`.
fn scenario(dir: &Path, d_m: f64, seconds: f64, rtf: f64, standard: &str) -> PathBuf {
    let duration = (CLIENT_START_S + seconds * rtf + 1.0).ceil();
    let yaml = format!(
        "name: tcp_{d_m}\nwindow_ms: 1\nduration_s: {duration}\nseed: 1\nreal_time_factor: {rtf}\n\
         world: {{origin: {{lat_deg: 41.5, lon_deg: -70.7}}, terrain: {{kind: procedural, size_m: [1000, 200], cell_size_m: 4, base_height_m: -40}}}}\n\
         vehicles:\n\
         \x20 - {{name: a, addresses: [10.31.0.1/24], start: {{x: -450, y: 0, z: 2}}, motion: {{kind: stationary}}}}\n\
         \x20 - {{name: b, addresses: [10.31.0.2/24], start: {{x: {}, y: 0, z: 2}}, motion: {{kind: stationary}}}}\n\
         links: {{default: {{model: rf, mac: {standard}, frequency_ghz: 2.4, tx_power_dbm: 16, path_loss_exponent: 2.2, reference_distance_m: 1, noise_floor_dbm: -94}}, queue_packets: 64}}\n\
         simulators: {{network: {{kind: ns3, wifi: {{standard: {standard}, rate_manager: ideal}}}}, startup_timeout_ms: 30000}}\n\
         network: {{capture: tun, max_hold_windows: 2000}}\n\
         programs:\n\
         \x20 - {{name: server, vehicle: a, command: \"iperf3 -s\"}}\n\
         \x20 - {{name: client, vehicle: b, start_s: {CLIENT_START_S}, command: \"iperf3 -c 10.31.0.1 -t {seconds}\"}}\n",
        -450.0 + d_m
    );
    let path = dir.join(format!("tcp_{d_m}.yaml"));
    std::fs::write(&path, yaml).unwrap();
    path
}

/// The level (dBm) of `scenario`'s link at `d_m` in line of sight, as its model computes it.
fn level_dbm(scenario: &Path, d_m: f64) -> f64 {
    let loaded = config::load(scenario).unwrap_or_else(|e| panic!("{e}"));
    let s = &loaded.scenario;
    LinkSpec::from_config(&s.links.default, &s.world.water)
        .budget(&Geometry {
            distance_m: d_m,
            los: true,
            hop_loss_db: 0.0,
            mean_depth_m: 0.0,
            arrivals: None,
        })
        .level_db
}

/// One run's figures: Mbit/s, median one-way delay (ms) and whether it kept the wall clock.
struct Figures {
    mbps: f64,
    delay_ms: f64,
    kept_pace: bool,
}

/// Runs `scenario` into `dir/<stem>_<sim>`: over ns-3 as the scenario says (`sim` "ns3"), or
/// with `--network-sim embedded`.
fn run(dir: &Path, scenario: &Path, sim: &str, stream_s: f64) -> Option<Figures> {
    let stem = scenario.file_stem().unwrap().to_string_lossy();
    let out = dir.join(format!("{stem}_{sim}"));
    let _ = std::fs::remove_dir_all(&out);
    let log_path = dir.join(format!("{stem}_{sim}.log"));
    let log = std::fs::File::create(&log_path).unwrap();
    let mut cosim = Command::new(COSIM);
    cosim.arg("run").arg(scenario).arg("--out").arg(&out);
    if sim == "embedded" {
        cosim.args(["--network-sim", "embedded"]);
    }
    let status = cosim
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .unwrap();
    if !status.success() {
        eprintln!(
            "  {stem} over {sim}: cosim run ended with {status}, see {}",
            log_path.display()
        );
        return None;
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).ok()?).ok()?;
    let record = Record::read(&out).ok()?;
    let (from, to) = (CLIENT_START_S + SETTLE_S, CLIENT_START_S + stream_s);
    let data: Vec<&PacketRecord> = record
        .packets
        .iter()
        .filter(|p| {
            p.src == "b"
                && p.dst.as_deref() == Some("a")
                && p.outcome == Outcome::Delivered
                && p.end_s >= from
                && p.end_s < to
        })
        .collect();
    let bytes: u64 = data.iter().map(|p| u64::from(p.bytes)).sum();
    let mut delays: Vec<f64> = data
        .iter()
        .filter(|p| p.bytes > 1000)
        .map(|p| (p.end_s - p.t_s) * 1e3)
        .collect();
    delays.sort_by(f64::total_cmp);
    let windows = summary["windows"].as_u64().unwrap_or(0);
    let late = summary["late_windows"].as_u64().unwrap_or(u64::MAX);
    Some(Figures {
        mbps: bytes as f64 * 8.0 / (to - from) / 1e6,
        delay_ms: delays.get(delays.len() / 2).copied().unwrap_or(f64::NAN),
        kept_pace: summary["slipped_seconds"].as_f64() == Some(0.0)
            && late.saturating_mul(100) <= windows,
    })
}

fn main() {
    ns3::use_built_adapter();
    let seconds = figures::number("SECONDS", 12.0);
    let rtf = figures::number("RTF", 1.0);
    // The stream's length in sim time.
    let stream_s = seconds * rtf;
    let standard = std::env::var("STANDARD").unwrap_or_else(|_| "80211g".into());
    let distances: Vec<f64> = std::env::var("DISTANCES")
        .unwrap_or_else(|_| "20,60,100,150,200,260,330,400".into())
        .split(',')
        .map(|d| {
            d.trim()
                .parse()
                .expect("DISTANCES: metres, comma-separated")
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = if std::env::var_os("BENCH_KEEP").is_some() {
        let kept = tmp.keep();
        println!("runs kept in {}", kept.display());
        kept
    } else {
        tmp.path().to_owned()
    };
    println!(
        "iperf3 TCP, one {standard} pair (16 dBm, n = 2.2), W = 1 ms, real-time factor {rtf}, streams of {stream_s} s of sim time, measured from {SETTLE_S} s after their start"
    );
    println!(
        "{:>8} {:>9} | {:>8} {:>9} {:>5} | {:>8} {:>9} {:>5} | {:>6} {:>6}",
        "distance",
        "level",
        "Mbit/s",
        "delay ms",
        "pace",
        "Mbit/s",
        "delay ms",
        "pace",
        "thr",
        "delay"
    );
    println!(
        "{:>8} {:>9} | {:^24} | {:^24} | {:^13}",
        "", "", "embedded", "ns-3", "embedded/ns-3"
    );
    for &d in &distances {
        let s = scenario(&dir, d, seconds, rtf, &standard);
        let level = level_dbm(&s, d);
        let (Some(e), Some(n)) = (
            run(&dir, &s, "embedded", stream_s),
            run(&dir, &s, "ns3", stream_s),
        ) else {
            continue;
        };
        let pace = |f: &Figures| if f.kept_pace { "yes" } else { "no" };
        println!(
            "{:>6} m {:>5.1} dBm | {:>8.2} {:>9.2} {:>5} | {:>8.2} {:>9.2} {:>5} | {:>6.3} {:>6.3}",
            d,
            level,
            e.mbps,
            e.delay_ms,
            pace(&e),
            n.mbps,
            n.delay_ms,
            pace(&n),
            e.mbps / n.mbps,
            e.delay_ms / n.delay_ms
        );
    }
}
