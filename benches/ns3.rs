//! The ns-3 adapter against the embedded network simulator, side by side in the same run:
//! windows per second and packets per second through each, driven exactly as the network
//! coordinator drives them (serialized BEGINs with the window's ChannelData and its captured
//! packets), N vehicles on one Wi-Fi / `rf` channel, W = 1 ms.
//!
//! Per row, the same pre-built BEGINs go to the embedded simulator (in this process, as in
//! `cosim run`) and to `netsim-ns3` (its own process, ZeroMQ over ipc://, started as a run
//! starts it). Packets: P per window, unicast between neighbouring vehicles 40 m apart, 200 to
//! 1400 bytes, capture times spread over the window (P = 0: the protocol and ns-3's scheduler
//! alone). "packets/s" counts copies ended (delivered or dropped) per second of wall time.
//!
//! Run: `cargo bench --bench ns3` (needs target/ns3/netsim-ns3: `scripts/setup --ns3`).
//! Optional env: WINDOWS (default 20000).

#[path = "common/ns3.rs"]
mod ns3;

use netsim_cosim::{
    config::{self, LoadedScenario},
    lockstep::Link,
    sim::network::NetworkSim,
    wire::proto::{ChannelData, NetworkUpdate, PathDetails},
};
use prost::Message;
use std::path::Path;
use std::time::Instant;

const W_NS: u64 = 1_000_000;

fn scenario(n: usize, windows: u32) -> LoadedScenario {
    let mut yaml = format!(
        "name: bench\nwindow_ms: 1\nduration_s: {}\nreal_time_factor: 0\nworld: {{origin: {{lat_deg: 41.5, lon_deg: -70.7}}, terrain: {{kind: procedural, size_m: [800, 200], cell_size_m: 4, base_height_m: -40}}}}\n\
         links: {{default: {{model: rf, path_loss_exponent: 2.2}}}}\nsimulators: {{network: {{kind: ns3}}}}\nvehicles:\n",
        f64::from(windows) / 1000.0
    );
    for i in 0..n {
        yaml += &format!("  - {{name: v{i}, addresses: [10.40.0.{}/24], start: {{x: {}, y: 0, z: 2}}, motion: {{kind: stationary}}}}\n", i + 1, i * 40);
    }
    config::parse_str(&yaml, Path::new("bench.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

fn channel(n: usize) -> Vec<u8> {
    let mut c = ChannelData::default();
    for i in 0..n {
        c.node_list
            .extend([i as f64 * 40.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0]);
    }
    for a in 0..n as u32 {
        for b in a + 1..n as u32 {
            let (xa, xb) = (f64::from(a) * 40.0, f64::from(b) * 40.0);
            c.path_details.push(PathDetails {
                ids: vec![a, b],
                los: true,
                num_hops: vec![2],
                hop_points: vec![xa, 0.0, 2.0, 0.0, xb, 0.0, 2.0, 0.0],
                ..Default::default()
            });
        }
    }
    c.encode_to_vec()
}

/// The BEGINs of a run: window k carries the P packets captured in window k-1.
fn begins(n: usize, p: u32, windows: u32) -> Vec<Vec<u8>> {
    let channel = channel(n);
    let mut id = 0u32;
    (0..windows)
        .map(|k| {
            let mut b = NetworkUpdate {
                time_val: k,
                channel_data: channel.clone().into(),
                ..Default::default()
            };
            if k > 0 {
                for j in 0..p {
                    id += 1;
                    let src = (id as usize) % n;
                    let dst = if src + 1 < n { src + 1 } else { src - 1 };
                    let t = u64::from(k - 1) * W_NS + u64::from(j) * W_NS / u64::from(p);
                    ns3::push_unicast(&mut b, id, (src, dst), 200 + (id * 397) % 1200, t);
                }
            }
            b.encode_to_vec()
        })
        .collect()
}

/// Windows/s and copies ended per second.
async fn drive(link: &mut Link, begins: &[Vec<u8>]) -> (f64, f64) {
    let t0 = Instant::now();
    let mut ended = 0usize;
    for (k, b) in begins.iter().enumerate() {
        let reply = link
            .exchange(k as u32, b.clone(), None)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let end = NetworkUpdate::decode(&reply[..]).unwrap();
        ended += end.clear_pkt_id.len() + end.drop_pkt_id.len();
    }
    let s = t0.elapsed().as_secs_f64();
    (begins.len() as f64 / s, ended as f64 / s)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    ns3::use_built_adapter();
    let windows: u32 = std::env::var("WINDOWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    println!("ns-3 adapter vs embedded network simulator, W = 1 ms, {windows} windows per row (same BEGINs to both)");
    println!(
        "{:>3} {:>5} | {:>12} {:>12} | {:>12} {:>12} | {:>9} {:>9}",
        "N", "P/win", "embedded w/s", "pkt/s", "ns-3 w/s", "pkt/s", "w/s ratio", "pkt ratio"
    );
    let dir = tempfile::tempdir().unwrap();
    for (n, p) in [(2, 0), (2, 2), (2, 10), (8, 0), (8, 10), (8, 40)] {
        let loaded = scenario(n, windows);
        let begins = begins(n, p, windows);
        let mut embedded = Link::local(
            "embedded network simulator",
            Box::new(NetworkSim::from_scenario(&loaded)),
        );
        let (ew, ep) = drive(&mut embedded, &begins).await;
        let mut ns3 = ns3::start(&loaded, &dir.path().join(format!("n{n}p{p}"))).await;
        let (nw, np) = drive(&mut ns3, &begins).await;
        drop(ns3);
        let ratio = |a: f64, b: f64| {
            if b > 0.0 {
                format!("{:.3}", a / b)
            } else {
                "–".into()
            }
        };
        println!(
            "{n:>3} {p:>5} | {ew:>12.0} {ep:>12.0} | {nw:>12.0} {np:>12.0} | {:>9} {:>9}",
            ratio(nw, ew),
            ratio(np, ep)
        );
    }
}
