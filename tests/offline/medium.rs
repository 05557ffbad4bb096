//! One acoustic medium, two fronts: the same schedule of transmissions (senders, times,
//! airtimes, geometry, seed) goes through the embedded network simulator (NetworkUpdate BEGIN /
//! END over acoustic links) and through the emulated Micro-Modems (`$CCCYC` / `$CCTXD` host
//! lines), and every copy gets the same verdict: delivered, out of range, packet error,
//! collision (with and without capture, by an addressed or a merely heard signal, by a
//! decodable signal below the noise) and half-duplex (before collision when both apply).

use std::collections::BTreeMap;

use netsim_cosim::config::{self, LoadedScenario};
use netsim_cosim::lockstep::protocol::{expect_network, network_begin};
use netsim_cosim::model::acoustic;
use netsim_cosim::model::fate::{DropReason, Fate};
use netsim_cosim::model::link::{Geometry, LinkSpec};
use netsim_cosim::model::modem::{self, ModemHardware, Modems};
use netsim_cosim::sim::network::NetworkSim;
use netsim_cosim::wire::channel::{Channel, ChannelView};
use netsim_cosim::wire::proto::{rosnetsim::network_update::MsgType, ChannelData, PathDetails};
use prost::Message;

const NS: u64 = 1_000_000_000;
const W: u64 = 100_000_000;
const DEPTH: f64 = 20.0;

/// Seven vehicles with modems 1–7 over acoustic links at Micro-Modem rate 0, the same
/// transducer, band, water and capture threshold on both fronts.
fn scenario(dir: &std::path::Path) -> LoadedScenario {
    let mut y = String::from(
        "name: medium\nwindow_ms: 100\nduration_s: 400\nseed: 21\n\
         world:\n  origin: {lat_deg: 41.5, lon_deg: -70.6}\n  water: {sound_speed: 1500}\n\
         \x20 terrain: {kind: procedural, size_m: [2000, 2000], cell_size_m: 40, base_height_m: -300}\n\
         links:\n  default: {model: acoustic, micromodem_rate: 0, frequency_khz: 25, bandwidth_khz: 5, source_level_db: 185, \
         spreading_factor: 1.5, absorption: thorp, capture_sir_db: 10}\n  queue_packets: 8\n  errors: drop\n\
         acoustic_modems: {epoch_utc: \"2026-11-21T05:00:00Z\", frequency_khz: 25, bandwidth_khz: 5, source_level_db: 185, \
         spreading_factor: 1.5, absorption: thorp, capture_sir_db: 10}\nvehicles:\n",
    );
    for i in 0..7 {
        y += &format!(
            "  - name: v{i}\n    addresses: [10.50.0.{}/24]\n    modem: {{tcp_port: {}, id: {}}}\n    start: {{x: {}, y: 0, z: -20}}\n    motion: {{kind: stationary}}\n",
            i + 1,
            63000 + i,
            i + 1,
            i * 10
        );
    }
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, y).unwrap();
    config::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The distance (m) at which a link's in-band SNR is `snr_db`.
fn distance_for_snr(spec: &LinkSpec, snr_db: f64) -> f64 {
    let snr = |d: f64| {
        spec.budget(&Geometry {
            distance_m: d,
            los: true,
            hop_loss_db: 0.0,
            mean_depth_m: DEPTH,
            arrivals: None,
        })
        .snr_db
    };
    let (mut lo, mut hi) = (10.0, 200_000.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if snr(mid) > snr_db {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// ChannelData with the vehicles at `positions` (x, y; all 20 m deep), every pair in LOS.
fn channel(positions: &[[f64; 2]]) -> ChannelData {
    let mut c = ChannelData::default();
    for p in positions {
        c.node_list
            .extend_from_slice(&[p[0], p[1], -DEPTH, 1.0, 0.0, 0.0, 0.0]);
    }
    for i in 0..positions.len() {
        for j in i + 1..positions.len() {
            let (a, b) = (positions[i], positions[j]);
            c.path_details.push(PathDetails {
                ids: vec![i as u32, j as u32],
                los: true,
                num_hops: vec![2],
                hop_points: vec![a[0], a[1], -DEPTH, 0.0, b[0], b[1], -DEPTH, 0.0],
                ..Default::default()
            });
        }
    }
    c
}

/// One transmission: sender, start (sim ns), receivers (vehicle indices).
struct Tx {
    from: usize,
    at: u64,
    to: Vec<usize>,
}

fn tx(from: usize, at: u64, to: &[usize]) -> Tx {
    Tx {
        from,
        at,
        to: to.to_vec(),
    }
}

#[test]
fn the_network_simulator_and_the_modems_give_every_copy_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = scenario(dir.path());
    let s = &loaded.scenario;
    // Both fronts use one link model: the scenario's acoustic link at rate 0 is the modems'.
    let hardware = ModemHardware::from_config(s.acoustic_modems.as_ref().unwrap(), &s.world.water);
    let spec = LinkSpec::from_config(&s.links.default, &s.world.water);
    assert_eq!(hardware.link_spec(0), spec);
    // One rate-0 frame of 32 bytes on a modem is as long on air as a 37-byte packet at 80 bit/s.
    let LinkSpec::Acoustic(a) = &spec else {
        panic!("acoustic")
    };
    let airtime_ns = (modem::packet_airtime_s(0, 1) * 1e9).round() as u64;
    let len = 37u32;
    assert_eq!(
        ((8 * len) as f64 / a.bit_rate_bps * 1e9).round() as u64,
        airtime_ns
    );

    // v0..v3 on a line (v3 150 m from v1, about 23 dB louder there than v0 or v2); v4 60 km
    // away; v5 where v0's signal is decodable though 2 dB below the noise in band; v6 where it
    // is barely decodable (coded Eb/N0 ≈ 2 dB: every frame fails its CRC).
    let faint = distance_for_snr(&spec, -2.0);
    let edge = distance_for_snr(&spec, -16.0);
    let check = |d: f64| {
        spec.budget(&Geometry {
            distance_m: d,
            los: true,
            hop_loss_db: 0.0,
            mean_depth_m: DEPTH,
            arrivals: None,
        })
    };
    let (bf, be) = (check(faint), check(edge));
    assert!(
        bf.usable && !bf.audible && acoustic::per(bf.ber, 8 * 37) < 1e-6,
        "{bf:?}"
    );
    assert!(
        be.usable && !be.audible && acoustic::per(be.ber, 256) > 1.0 - 1e-9,
        "{be:?}"
    );
    let positions = [
        [0.0, 0.0],
        [1500.0, 0.0],
        [3000.0, 0.0],
        [1650.0, 0.0],
        [60_000.0, 0.0],
        [-faint, 0.0],
        [0.0, -edge],
    ];
    let ch = channel(&positions);

    let phase = |i: u64| i * 40 * NS;
    let txs = vec![
        // Broadcast: delivered near, delivered below the noise, packet error at the edge, out of range far.
        tx(0, phase(0), &[1, 2, 3, 4, 5, 6]),
        // Equal levels at v1: both lost.
        tx(0, phase(1), &[1]),
        tx(2, phase(1), &[1]),
        // v3 is 23 dB louder at v1: it captures v0's copy, which is lost.
        tx(0, phase(2), &[1]),
        tx(3, phase(2) + NS / 2, &[1]),
        // v1 transmits while v0's copy arrives: half-duplex; v1's copy to v0 arrives while v0 still
        // transmits: half-duplex too.
        tx(0, phase(3), &[1]),
        tx(1, phase(3) + 2 * NS, &[0]),
        // Each copy is lost to a signal addressed to someone else: v0's (to v1) at v3, v2's (to v3) at v1.
        tx(0, phase(4), &[1]),
        tx(2, phase(4), &[3]),
        // A decodable signal below the noise is heard: v5's copy to v0 overlaps v1's (arriving
        // 0.5 s later), which captures it.
        tx(5, phase(5), &[0]),
        tx(1, phase(5) + ((faint / 1500.0 - 0.5) * 1e9) as u64, &[0]),
        // v0's copy at v1 both overlaps v2's signal (sent first) and v1's own transmission:
        // half-duplex comes first, whatever the order the transmissions were sent in.
        tx(0, phase(6), &[1]),
        tx(2, phase(6), &[3]),
        tx(1, phase(6) + 2 * NS, &[0]),
    ];
    let expected: BTreeMap<(usize, usize), Fate> = [
        ((0, 1), Fate::Delivered),
        ((0, 2), Fate::Delivered),
        ((0, 3), Fate::Delivered),
        ((0, 4), Fate::Dropped(DropReason::OutOfRange)),
        ((0, 5), Fate::Delivered),
        ((0, 6), Fate::Dropped(DropReason::PacketError)),
        ((1, 1), Fate::Dropped(DropReason::Collision)),
        ((2, 1), Fate::Dropped(DropReason::Collision)),
        ((3, 1), Fate::Dropped(DropReason::Collision)),
        ((4, 1), Fate::Delivered),
        ((5, 1), Fate::Dropped(DropReason::HalfDuplex)),
        ((6, 0), Fate::Dropped(DropReason::HalfDuplex)),
        ((7, 1), Fate::Dropped(DropReason::Collision)),
        ((8, 3), Fate::Dropped(DropReason::Collision)),
        ((9, 0), Fate::Dropped(DropReason::Collision)),
        ((10, 0), Fate::Delivered),
        ((11, 1), Fate::Dropped(DropReason::HalfDuplex)),
        ((12, 3), Fate::Dropped(DropReason::Collision)),
        ((13, 0), Fate::Dropped(DropReason::HalfDuplex)),
    ]
    .into_iter()
    .collect();

    // The embedded network simulator: packet i is entry id i + 1, handed over at the BEGIN
    // after its capture.
    let mut net = NetworkSim::from_scenario(&loaded);
    let ch_bytes = ch.encode_to_vec();
    let windows = (phase(7) / W) as u32;
    let mut network = BTreeMap::new();
    for k in 0..windows {
        let mut b = network_begin(k, ch_bytes.clone());
        for (i, t) in txs
            .iter()
            .enumerate()
            .filter(|(_, t)| t.at / W + 1 == k as u64)
        {
            for &d in &t.to {
                b.pkt_id.push(i as u32 + 1);
                b.src_ip.push(0x0a32_0001 + t.from as u32);
                b.dst_ip.push(0x0a32_0001 + d as u32);
                b.pkt_lengths.push(len);
                b.pkt_time_ns.push(t.at);
                b.src_node.push(t.from as u32);
                b.dst_node.push(d as u32);
            }
        }
        let end =
            expect_network(&net.handle(&b.encode_to_vec()).unwrap(), MsgType::End, k).unwrap();
        for (id, node) in end.clear_pkt_id.iter().zip(&end.rx_node) {
            assert!(network
                .insert((*id as usize - 1, *node as usize), Fate::Delivered)
                .is_none());
        }
        for ((id, node), r) in end
            .drop_pkt_id
            .iter()
            .zip(&end.drop_node)
            .zip(&end.drop_reason)
        {
            assert!(network
                .insert(
                    (*id as usize - 1, *node as usize),
                    Fate::Dropped(DropReason::from_wire(*r))
                )
                .is_none());
        }
    }

    // The emulated modems: each transmission is a one-frame rate-0 data cycle; broadcasts go to
    // destination 0.
    let mut modems = Modems::from_scenario(s).unwrap();
    modems.set_channel(
        0,
        &ChannelView::check(&Channel::from(&ch), positions.len()).unwrap(),
    );
    let mut order: Vec<usize> = (0..txs.len()).collect();
    order.sort_by_key(|&i| (txs[i].at, i));
    for &i in &order {
        let t = &txs[i];
        let (src, dest) = (t.from + 1, if t.to.len() > 1 { 0 } else { t.to[0] + 1 });
        modems.host_line(
            t.from,
            t.at,
            format!("$CCCYC,0,{src},{dest},0,0,1").as_bytes(),
        );
        modems.host_line(
            t.from,
            t.at,
            format!("$CCTXD,{src},{dest},0,{}", "5a".repeat(32)).as_bytes(),
        );
    }
    modems.shutdown(phase(7));
    let errors: Vec<String> = modems
        .drain()
        .into_iter()
        .map(|o| o.line)
        .filter(|l| l.starts_with("$CAERR"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let mut emulated = BTreeMap::new();
    for e in modems.ledger() {
        let i = txs
            .iter()
            .position(|t| t.from == e.from && t.at == e.sent_ns)
            .expect("a scheduled transmission");
        assert!(emulated.insert((i, e.to.unwrap()), e.fate).is_none());
    }

    assert_eq!(network, emulated);
    assert_eq!(network, expected);
}
