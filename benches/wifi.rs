//! 802.11 in the embedded network simulator (an `rf` link with `mac`) against ns-3's through
//! the adapter, side by side in one run: the same BEGINs (each window's ChannelData and the
//! packets captured in the window before: UDP datagrams of 1500 bytes (`BYTES`), capture
//! times spread over the window, more than the air carries) go to the embedded simulator in
//! this process and to `netsim-ns3`, and each row compares what comes back in the ENDs:
//!
//! - **pair**: one sender and one receiver at 8 distances, from close to the edge of range;
//! - **stations**: 2, 4, 8 and 16 senders in range of each other around one receiver, beside
//!   Bianchi's model of the DCF ([`bianchi_saturation_bps`]);
//! - **hidden**: two senders the terrain hides from each other (100 dB through the ridge),
//!   both heard by the receiver between them at the same level.
//!
//! Per row and simulator: delivered IP throughput (Mbit/s of sim time), the median one-way
//! delay of the delivered copies (capture to receipt, the lockstep's W included in both), the
//! copies lost (any reason; queue overflow at the sender counted apart), Jain's fairness index
//! over the senders, and windows per second of the simulator's own time (each BEGIN handed
//! over to its END back; not this bench's copying and bookkeeping around it). Both: 802.11a
//! (`STANDARD`), ideal rate choice (ns-3's IdealWifiManager; the embedded model picks by
//! level), 20 dBm, path loss exponent 3, queue 64 packets, W = 1 ms.
//!
//! Run: `cargo bench --bench wifi` (needs target/ns3/netsim-ns3: `scripts/setup --ns3`).
//! Optional env: WINDOWS (default 5000: 5 s of sim time per row), ROWS (`pair`, `stations`,
//! `hidden`, comma-separated; default all), BYTES (the datagrams' IP length, default 1500),
//! STANDARD (`80211a`, default, or another the adapter offers: `80211n-5` compares 802.11n's
//! A-MPDUs at the same distances; Bianchi's model, of one MPDU per access, is printed for
//! 802.11a/g only), RATE (one constant rate on both sides instead of the ideal choice:
//! `<Mbit/s>:<ns-3 data mode>`, e.g. `65:HtMcs7` or `54:OfdmRate54Mbps`), HIDDEN_M (the hidden
//! senders' distance from their receiver, default 60 m), SEEDS (each row with the scenario's
//! seeds 1 to SEEDS, ns-3's RngRun the same, then the mean and 95 % interval of throughput,
//! copies lost and Jain's index; default 1).

#[path = "common/ns3.rs"]
mod ns3;

use netsim_cosim::{
    config::{self, LoadedScenario},
    lockstep::Link,
    model::{wifi::Phy, wifi_medium::bianchi_saturation_bps},
    output::campaign::Interval,
    sim::network::NetworkSim,
    wire::proto::{ChannelData, NetworkUpdate, PathDetails},
};
use prost::Message;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

const W_NS: u64 = 1_000_000;
/// What each sender offers per window: 9,000 bytes (72 Mbit/s, more than 802.11a's 54 Mbit/s
/// and 802.11n's 65 Mbit/s PHY rates carry) in datagrams of `bytes`.
#[derive(Clone, Copy)]
struct Offer {
    bytes: u32,
    per_window: u32,
}

impl Offer {
    fn of(bytes: u32) -> Offer {
        Offer {
            bytes,
            per_window: 9_000u32.div_ceil(bytes.max(1)),
        }
    }
}

/// A row: vehicles at `at`, `senders` sending to vehicle 0, hop losses between pairs.
struct Row {
    name: String,
    at: Vec<[f64; 2]>,
    senders: Vec<usize>,
    hop_loss: Vec<((usize, usize), f64)>,
}

fn scenario(
    row: &Row,
    windows: u32,
    standard: &str,
    mode: &Option<(f64, String)>,
    seed: u64,
) -> LoadedScenario {
    let (rate, manager) = match mode {
        Some((mbps, mode)) => (
            format!(", rate_mbps: {mbps}"),
            format!("constant, data_mode: {mode}"),
        ),
        None => (String::new(), "ideal".into()),
    };
    let mut yaml = format!(
        "name: wifi\nseed: {seed}\nwindow_ms: 1\nduration_s: {}\nreal_time_factor: 0\n\
         world: {{origin: {{lat_deg: 41.5, lon_deg: -70.7}}, terrain: {{kind: procedural, size_m: [800, 800], cell_size_m: 4, base_height_m: -40}}}}\n\
         links: {{default: {{model: rf, mac: {standard}{rate}}}}}\n\
         simulators: {{network: {{kind: ns3, wifi: {{standard: {standard}, rate_manager: {manager}}}}}}}\nvehicles:\n",
        f64::from(windows) / 1000.0
    );
    for (i, [x, y]) in row.at.iter().enumerate() {
        yaml += &format!(
            "  - {{name: v{i}, addresses: [10.40.0.{}/24], start: {{x: {x}, y: {y}, z: 2}}, motion: {{kind: stationary}}}}\n",
            i + 1
        );
    }
    config::parse_str(&yaml, Path::new("wifi.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

fn channel(row: &Row) -> Vec<u8> {
    let mut c = ChannelData::default();
    for [x, y] in &row.at {
        c.node_list.extend([*x, *y, 2.0, 1.0, 0.0, 0.0, 0.0]);
    }
    let n = row.at.len();
    for a in 0..n {
        for b in a + 1..n {
            let ([xa, ya], [xb, yb]) = (row.at[a], row.at[b]);
            let loss = row
                .hop_loss
                .iter()
                .find(|(p, _)| *p == (a, b))
                .map(|(_, l)| *l);
            let (los, points) = match loss {
                None => (true, vec![xa, ya, 2.0, 0.0, xb, yb, 2.0, 0.0]),
                Some(l) => {
                    let (mx, my) = ((xa + xb) / 2.0, (ya + yb) / 2.0);
                    #[rustfmt::skip]
                    let p = vec![xa, ya, 2.0, 0.0, mx - 1.0, my, 2.0, 0.0, mx + 1.0, my, 2.0, l, xb, yb, 2.0, 0.0];
                    (false, p)
                }
            };
            c.path_details.push(PathDetails {
                ids: vec![a as u32, b as u32],
                los,
                num_hops: vec![(points.len() / 4) as u32],
                hop_points: points,
                ..Default::default()
            });
        }
    }
    c.encode_to_vec()
}

/// Each packet's sender and capture time (ns), by id.
type Sent = HashMap<u32, (usize, u64)>;

/// The BEGINs of a row, and each packet's sender and capture time by id.
fn begins(row: &Row, windows: u32, offer: Offer) -> (Vec<Vec<u8>>, Sent) {
    let channel = channel(row);
    let mut id = 0u32;
    let mut sent = HashMap::new();
    let begins = (0..windows)
        .map(|k| {
            let mut b = NetworkUpdate {
                time_val: k,
                channel_data: channel.clone().into(),
                ..Default::default()
            };
            if k > 0 {
                for j in 0..offer.per_window {
                    for (i, &src) in row.senders.iter().enumerate() {
                        id += 1;
                        // Spread over the window, the senders a little apart.
                        let t = u64::from(k - 1) * W_NS
                            + (u64::from(j) * W_NS + i as u64 * 7_919)
                                / u64::from(offer.per_window);
                        ns3::push_unicast(&mut b, id, (src, 0), offer.bytes, t);
                        sent.insert(id, (src, t));
                    }
                }
            }
            b.encode_to_vec()
        })
        .collect();
    (begins, sent)
}

/// What one simulator made of a row.
struct Result {
    mbps: f64,
    median_delay_ms: f64,
    lost: usize,
    queue_full: usize,
    jain: f64,
    windows_per_s: f64,
}

/// Drives `link` through `begins`; `bytes` a datagram.
async fn drive(link: &mut Link, row: &Row, begins: &[Vec<u8>], sent: &Sent, bytes: u32) -> Result {
    // The simulator's time: each exchange alone, not this bench's copying and bookkeeping.
    let mut busy = std::time::Duration::ZERO;
    let mut delays = Vec::new();
    let mut per_sender: HashMap<usize, u64> = HashMap::new();
    let (mut lost, mut queue_full) = (0, 0);
    let queue_full_wire = netsim_cosim::model::fate::DropReason::QueueFull.to_wire();
    for (k, b) in begins.iter().enumerate() {
        let b = b.clone();
        let t0 = Instant::now();
        let reply = link
            .exchange(k as u32, b, None)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        busy += t0.elapsed();
        let end = NetworkUpdate::decode(&reply[..]).unwrap();
        for (i, id) in end.clear_pkt_id.iter().enumerate() {
            if let Some(&(src, t)) = sent.get(id) {
                delays.push(end.rx_time_ns[i].saturating_sub(t));
                *per_sender.entry(src).or_default() += 1;
            }
        }
        for r in &end.drop_reason {
            if *r == queue_full_wire {
                queue_full += 1;
            } else {
                lost += 1;
            }
        }
    }
    let secs = begins.len() as f64 * W_NS as f64 / 1e9;
    delays.sort_unstable();
    let shares: Vec<f64> = row
        .senders
        .iter()
        .map(|s| per_sender.get(s).copied().unwrap_or(0) as f64)
        .collect();
    let sum: f64 = shares.iter().sum();
    let squares: f64 = shares.iter().map(|x| x * x).sum();
    Result {
        mbps: delays.len() as f64 * f64::from(bytes) * 8.0 / secs / 1e6,
        median_delay_ms: delays
            .get(delays.len() / 2)
            .map_or(f64::NAN, |&d| d as f64 / 1e6),
        lost,
        queue_full,
        jain: if squares > 0.0 {
            sum * sum / (shares.len() as f64 * squares)
        } else {
            0.0
        },
        windows_per_s: begins.len() as f64 / busy.as_secs_f64(),
    }
}

fn rows(which: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    if which.contains("pair") {
        // 20 dBm − 40.05 dB − 30·log10(d): −50 dBm at 10 m, −81 dBm at 108 m.
        for d in [10.0, 30.0, 50.0, 65.0, 75.0, 85.0, 95.0, 105.0] {
            rows.push(Row {
                name: format!("pair {d} m"),
                at: vec![[0.0, 0.0], [d, 0.0]],
                senders: vec![1],
                hop_loss: vec![],
            });
        }
    }
    if which.contains("stations") {
        for n in [2usize, 4, 8, 16] {
            let at = std::iter::once([0.0, 0.0])
                .chain((0..n).map(|i| {
                    let a = i as f64 * std::f64::consts::TAU / n as f64;
                    [20.0 * a.cos(), 20.0 * a.sin()]
                }))
                .collect();
            rows.push(Row {
                name: format!("{n} stations"),
                at,
                senders: (1..=n).collect(),
                hop_loss: vec![],
            });
        }
    }
    if which.contains("hidden") {
        let hidden_m = std::env::var("HIDDEN_M")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60.0);
        rows.push(Row {
            name: "hidden pair".into(),
            at: vec![[0.0, 0.0], [-hidden_m, 0.0], [hidden_m, 0.0]],
            senders: vec![1, 2],
            hop_loss: vec![((1, 2), 100.0)],
        });
    }
    rows
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    ns3::use_built_adapter();
    let windows: u32 = std::env::var("WINDOWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    let which = std::env::var("ROWS").unwrap_or_else(|_| "pair,stations,hidden".into());
    let offer = Offer::of(
        std::env::var("BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1500),
    );
    let standard = std::env::var("STANDARD").unwrap_or_else(|_| "80211a".into());
    let seeds: u64 = std::env::var("SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    // One constant rate on both sides: `RATE=65:HtMcs7` (Mbit/s for the embedded links, ns-3's
    // data mode).
    let mode = std::env::var("RATE").ok().map(|v| {
        let (mbps, mode) = v.split_once(':').expect("RATE: <Mbit/s>:<ns-3 data mode>");
        (mbps.parse::<f64>().expect("RATE: Mbit/s"), mode.to_string())
    });
    let phy = Phy::of(
        serde_yaml::from_str::<config::WifiStandard>(&standard)
            .unwrap_or_else(|e| panic!("STANDARD={standard}: {e}")),
    );
    println!(
        "{standard}, embedded (rf with mac) vs ns-3 (IdealWifiManager), W = 1 ms, {windows} windows a row, {} datagrams of {} B per sender per window",
        offer.per_window, offer.bytes
    );
    println!(
        "{:<13} | {:>7} {:>7} {:>6} {:>6} {:>6} {:>8} | {:>7} {:>7} {:>6} {:>6} {:>6} {:>8} | {:>6} {:>7} {:>7}",
        "row", "Mbit/s", "delay", "lost", "qfull", "Jain", "win/s", "Mbit/s", "delay", "lost", "qfull", "Jain", "win/s", "thr", "delay", "speed"
    );
    println!(
        "{:<13} | {:^51} | {:^51} | {:^22}",
        "", "embedded", "ns-3", "embedded / ns-3"
    );
    let dir = tempfile::tempdir().unwrap();
    for row in rows(&which) {
        // Per seed: embedded and ns-3's throughput, copies lost and Jain's index.
        let mut runs: Vec<[f64; 6]> = Vec::new();
        let (begins, sent) = begins(&row, windows, offer);
        for seed in 1..=seeds {
            let loaded = scenario(&row, windows, &standard, &mode, seed);
            let mut embedded = Link::local(
                "embedded network simulator",
                Box::new(NetworkSim::from_scenario(&loaded)),
            );
            let e = drive(&mut embedded, &row, &begins, &sent, offer.bytes).await;
            let folder = format!("{}_{seed}", row.name.replace(' ', "_"));
            let mut ns3 = ns3::start(&loaded, &dir.path().join(folder)).await;
            let s = drive(&mut ns3, &row, &begins, &sent, offer.bytes).await;
            drop(ns3);
            let line = |r: &Result| {
                format!(
                    "{:>7.2} {:>7.3} {:>6} {:>6} {:>6.3} {:>8.0}",
                    r.mbps, r.median_delay_ms, r.lost, r.queue_full, r.jain, r.windows_per_s
                )
            };
            let name = match seeds {
                1 => row.name.clone(),
                _ => format!("{} s{seed}", row.name),
            };
            println!(
                "{:<13} | {} | {} | {:>6.3} {:>7.3} {:>7.1}",
                name,
                line(&e),
                line(&s),
                e.mbps / s.mbps,
                e.median_delay_ms / s.median_delay_ms,
                e.windows_per_s / s.windows_per_s
            );
            runs.push([e.mbps, s.mbps, e.lost as f64, s.lost as f64, e.jain, s.jain]);
        }
        if seeds > 1 {
            let column = |k: usize| {
                let values: Vec<f64> = runs.iter().map(|r| r[k]).collect();
                let i = Interval::of(&values).expect("one run per seed");
                (i.mean, i.half_width.unwrap_or(0.0))
            };
            let [(em, ei), (sm, si), (el, eli), (sl, sli), (ej, eji), (sj, sji)] =
                [0, 1, 2, 3, 4, 5].map(column);
            println!(
                "{:<13} | {seeds} seeds, mean ± 95 %: Mbit/s {em:.2} ± {ei:.2} against {sm:.2} ± {si:.2}; lost {el:.1} ± {eli:.1} against {sl:.1} ± {sli:.1}; Jain {ej:.3} ± {eji:.3} against {sj:.3} ± {sji:.3}",
                row.name
            );
        }
        if let (true, Some(&[e_mbps, s_mbps, ..])) = (
            row.name.ends_with("stations") && !phy.aggregates(),
            runs.last(),
        ) {
            let n = row.senders.len();
            let rate = *phy.rates().last().unwrap();
            let mpdu = phy.mpdu_bytes(offer.bytes);
            let model = bianchi_saturation_bps(&phy, n, mpdu, rate) * f64::from(offer.bytes)
                / f64::from(mpdu);
            println!(
                "{:<13} | Bianchi at the top rate: {:.2} Mbit/s of IP; embedded / Bianchi {:.3}, ns-3 / Bianchi {:.3}",
                "",
                model / 1e6,
                e_mbps * 1e6 / model,
                s_mbps * 1e6 / model
            );
        }
    }
}
