//! The ROS-NetSim compatibility transport against peers written here: a network simulator in
//! Rust speaking the framing by hand (4-byte big-endian length + gzip), dribbling its replies a
//! few bytes at a time; a ROS-NetSim-style coordinator in Python (`gzip`, `struct`) driving our
//! embedded network simulator; and peers that misbehave.
//!
//! And against ROS-NetSim's own dialect, with Python peers in `tests/rosnetsim/` that answer as
//! ROS-NetSim's example simulators and its coordinator do (gzip `channel_data`, ids from 1,
//! random hop points, a pair repeated, deliveries in `pkt_id`): whole `cosim run`s with their
//! physics and network simulators, with either one beside ours, and their coordinator driving
//! `cosim physics-sim` and `cosim network-sim`.

use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use netsim_cosim::config::RosnetsimAddress;
use netsim_cosim::lockstep::{protocol::network_begin, rosnetsim, Link, LinkError, Role};
use netsim_cosim::sim::network::NetworkSim;
use netsim_cosim::wire::proto::NetworkUpdate;
use prost::Message;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common;
use common::Procs;

fn read_frame(s: &mut impl Read) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).ok()?;
    let mut out = Vec::new();
    GzDecoder::new(&body[..]).read_to_end(&mut out).ok()?;
    Some(out)
}

fn frame(msg: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(msg).unwrap();
    let body = gz.finish().unwrap();
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend(body);
    f
}

#[tokio::test]
async fn a_rosnetsim_simulator_over_a_unix_socket_with_partial_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net_server_socket");
    let listener = UnixListener::bind(&path).unwrap();
    // The simulator: releases every packet of a BEGIN in its END, written 3 bytes at a time.
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut windows = 0;
        while let Some(req) = read_frame(&mut s) {
            let b = NetworkUpdate::decode(&req[..]).unwrap();
            let end = netsim_cosim::sim::passthrough::release_all(b);
            for chunk in frame(&end.encode_to_vec()).chunks(3) {
                s.write_all(chunk).unwrap();
                s.flush().unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
            windows += 1;
        }
        windows
    });
    let address: RosnetsimAddress = format!("unix:{}", path.display()).parse().unwrap();
    let mut link = Link::rosnetsim(
        "network simulator",
        Role::Network,
        &address,
        Duration::from_secs(5),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    for k in 0..3u32 {
        let mut b = network_begin(k, vec![]);
        b.pkt_id = vec![k, k + 100];
        b.src_ip = vec![0x0a0a0001; 2];
        b.dst_ip = vec![0x0a0a0002; 2];
        b.pkt_lengths = vec![10, 20];
        let reply = link.exchange(k, b.encode_to_vec(), None).await.unwrap();
        let end = NetworkUpdate::decode(&reply[..]).unwrap();
        assert_eq!((end.time_val, end.clear_pkt_id), (k, vec![k, k + 100]));
    }
    drop(link);
    assert_eq!(peer.join().unwrap(), 3);
}

#[tokio::test]
async fn a_python_rosnetsim_coordinator_drives_our_network_simulator_over_tcp() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let scenario = netsim_cosim::config::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/patrol.yaml"),
    )
    .unwrap();
    let mut sim = NetworkSim::from_scenario(&scenario);
    let address: RosnetsimAddress = format!("tcp:127.0.0.1:{port}").parse().unwrap();
    // ROS-NetSim's coordinator side: connect with retries, send_one_message(gzip(msg)), read the
    // reply with a loop over recv. BEGIN(k) for k = 0, 1, 2 is the protobuf b"\x10" + k (msg_type
    // BEGIN = 0 is the default); the reply must be END (b"\x08\x01") for the same window.
    let script = format!(
        r#"
import gzip, socket, struct, sys, time
s = socket.socket()
for _ in range(100):
    try:
        s.connect(("127.0.0.1", {port})); break
    except OSError:
        time.sleep(0.05)
def recvall(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: sys.exit("closed")
        b += c
    return b
for k in range(3):
    msg = b"" if k == 0 else bytes([0x10, k])
    body = gzip.compress(msg)
    s.sendall(struct.pack("!I", len(body)) + body)
    (n,) = struct.unpack("!I", recvall(4))
    reply = gzip.decompress(recvall(n))
    expect = b"\x08\x01" + (b"" if k == 0 else bytes([0x10, k]))
    assert reply.startswith(expect), (k, reply)
print("ok")
"#
    );
    let python = tokio::process::Command::new("python3")
        .args(["-c", &script])
        .output();
    let served = async {
        // The scenario has 6000 windows; the Python coordinator runs 3 and hangs up.
        rosnetsim::serve(&address, Role::Network, &mut sim, Duration::from_secs(20)).await
    };
    let (out, served) = tokio::join!(python, served);
    let out = out.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    let err = served.unwrap_err().to_string();
    assert!(
        err.contains(&format!("coordinator at tcp:127.0.0.1:{port} hung up")),
        "{err}"
    );
    assert_eq!(sim.stats().transmissions, 0);
}

#[tokio::test]
async fn misbehaving_peers_are_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    // A frame announcing 1 GiB.
    let path = dir.path().join("big");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = read_frame(&mut s);
        s.write_all(&(1u32 << 30).to_be_bytes()).unwrap();
        std::thread::sleep(Duration::from_secs(1));
    });
    let address: RosnetsimAddress = format!("unix:{}", path.display()).parse().unwrap();
    let mut link = Link::rosnetsim(
        "network simulator",
        Role::Network,
        &address,
        Duration::from_secs(5),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let err = link
        .exchange(4, network_begin(4, vec![]).encode_to_vec(), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("network simulator at {address} failed in window 4: frame of 1073741824 bytes exceeds the 67108864-byte limit")
    );

    // A peer that accepts and never answers: a timeout naming it.
    let path = dir.path().join("silent");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        let (_s, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(2));
    });
    let address: RosnetsimAddress = format!("unix:{}", path.display()).parse().unwrap();
    let mut link = Link::rosnetsim(
        "physics simulator",
        Role::Physics,
        &address,
        Duration::from_millis(200),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let err = link.exchange(0, vec![], None).await.unwrap_err();
    assert!(matches!(err, LinkError::Timeout { window: 0, .. }), "{err}");
    assert!(err.to_string().starts_with(&format!(
        "physics simulator at {address} did not answer window 0 within 200 ms"
    )));

    // A peer that hangs up mid-frame.
    let path = dir.path().join("hangup");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = read_frame(&mut s);
        s.write_all(&[0, 0, 0, 50, 1, 2, 3]).unwrap();
    });
    let address: RosnetsimAddress = format!("unix:{}", path.display()).parse().unwrap();
    let mut link = Link::rosnetsim(
        "network simulator",
        Role::Network,
        &address,
        Duration::from_secs(5),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let err = link.exchange(2, vec![], None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("network simulator at {address} disconnected during window 2")
    );

    // Nobody listening: the connection fails within the startup timeout.
    let address: RosnetsimAddress = format!("unix:{}", dir.path().join("nobody").display())
        .parse()
        .unwrap();
    let err = Link::rosnetsim(
        "network simulator",
        Role::Network,
        &address,
        Duration::from_secs(1),
        Duration::from_millis(300),
    )
    .await
    .err()
    .unwrap();
    assert!(
        err.to_string()
            .contains("cannot connect: nobody accepted at"),
        "{err}"
    );
}

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rosnetsim")
}

fn venv_python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-test/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import numpy, yaml, google.protobuf"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} cannot import numpy, yaml and google.protobuf: scripts/setup --test",
        python.display()
    );
    python
}

/// A ROS-NetSim config `name` (its keys, as in its example config) for two nodes at 192.168.0.1 and
/// .2 with both simulators on Unix sockets in `dir` under ROS-NetSim's socket names, plus the
/// test peers' own keys (`seed`, `report`, `packets`).
fn rosnetsim_config(dir: &Path, name: &str, extra: &str) -> PathBuf {
    rosnetsim_config_with(dir, name, None, extra)
}

/// [`rosnetsim_config`], with the network simulator on TCP at 127.0.0.1:`port` if given.
fn rosnetsim_config_with(dir: &Path, name: &str, net_port: Option<u16>, extra: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "ip_list: [192.168.0.1, 192.168.0.2]\n\
             mac_list: [a1, a2]\n\
             phy_use_uds: true\n\
             net_use_uds: {uds}\n\
             netsim_ip_server_address: 127.0.0.1\n\
             netsim_ip_server_port: {port}\n\
             phy_uds_server_address: {d}/phy_server_socket\n\
             netsim_uds_server_address: {d}/net_server_socket\n\
             do_driver_transfer: false\n\
             seed: 7\n\
             {extra}\n",
            d = dir.display(),
            uds = net_port.is_none(),
            port = net_port.unwrap_or(10000),
        ),
    )
    .unwrap();
    path
}

/// A ROS-NetSim-like peer (`phy_sim.py`, `net_sim.py`) started with `config`.
fn peer(script: &str, config: &Path) -> Child {
    Command::new(venv_python())
        .arg(peers_dir().join(script))
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Two vehicles (the nodes of [`rosnetsim_config`]), 100 windows of 10 ms as fast as possible,
/// with the given simulators.
fn scenario(dir: &Path, physics: &str, network: &str) -> PathBuf {
    let path = dir.join("scenario.yaml");
    std::fs::write(
        &path,
        format!(
            r#"name: rosnetsim_peers
window_ms: 10
duration_s: 1
seed: 42
real_time_factor: 0
world:
  origin: {{lat_deg: 41.5265, lon_deg: -70.6731}}
  terrain: {{kind: procedural, size_m: [400, 400], cell_size_m: 2, base_height_m: -60, relief_m: 2}}
vehicles:
  - name: auv1
    addresses: [192.168.0.1/24]
    start: {{x: -20, y: 0, z: -25, heading_deg: 90}}
    motion: {{kind: patrol, speed_mps: 1.5, max_turn_rate_deg_s: 15, max_depth_rate_mps: 0.5, waypoints: [[20, 0, -25], [-20, 0, -25]]}}
  - name: auv2
    addresses: [192.168.0.2/24]
    start: {{x: 0, y: 40, z: -25, heading_deg: 90}}
    motion: {{kind: external}}
simulators:
  physics: {physics}
  network: {network}
  timeout_ms: 5000
  startup_timeout_ms: 20000
"#
        ),
    )
    .unwrap();
    path
}

fn run(scenario: &Path, out: &Path) -> Output {
    Command::new(COSIM)
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap()
}

/// The peer's report, once it has exited (it writes it when the coordinator hangs up).
fn report_of(mut child: Child, report: &Path) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(
        report.exists(),
        "no report from the peer: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(report)
}

fn assert_ran(out: &Output, dir: &Path) -> serde_json::Value {
    assert!(
        out.status.success(),
        "cosim run failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = json(&dir.join("out/summary.json"));
    assert_eq!(summary["windows"], 100, "{summary}");
    summary
}

/// What the ROS-NetSim-like physics simulator sent over a run: every window, and each of its
/// dialect's traits at least once (seed 7 over 100 windows).
fn assert_every_trait_sent(phy: &serde_json::Value) {
    assert_eq!(phy["windows"], 100, "{phy}");
    for t in [
        "reversed_pairs",
        "multipath_entries",
        "pathless_entries",
        "repeated_pairs",
    ] {
        assert!(phy[t].as_u64() > Some(0), "{t}: {phy}");
    }
}

#[test]
fn a_run_with_rosnetsims_physics_and_network_simulators_completes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let phy_cfg = rosnetsim_config(d, "phy.yaml", &format!("report: {}/phy.json", d.display()));
    let phy = peer("phy_sim.py", &phy_cfg);
    let net_cfg = rosnetsim_config(d, "net.yaml", &format!("report: {}/net.json", d.display()));
    let net = peer("net_sim.py", &net_cfg);
    let s = scenario(
        d,
        &format!(
            "{{kind: rosnetsim, address: unix:{}/phy_server_socket}}",
            d.display()
        ),
        &format!(
            "{{kind: rosnetsim, address: unix:{}/net_server_socket}}",
            d.display()
        ),
    );
    let out = run(&s, &d.join("out"));
    assert_ran(&out, d);
    assert_every_trait_sent(&report_of(phy, &d.join("phy.json")));
    let net = report_of(net, &d.join("net.json"));
    assert_eq!(net["error"], serde_json::Value::Null, "{net}");
    assert_eq!(
        (&net["windows"], &net["channels"], &net["nodes"]),
        (&100.into(), &100.into(), &2.into()),
        "every network BEGIN carried the window's channel, gzip, ids from 1: {net}"
    );
}

#[test]
fn their_physics_simulator_with_our_network_simulator_completes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = rosnetsim_config(d, "phy.yaml", &format!("report: {}/phy.json", d.display()));
    let phy = peer("phy_sim.py", &cfg);
    let s = scenario(
        d,
        &format!(
            "{{kind: rosnetsim, address: unix:{}/phy_server_socket}}",
            d.display()
        ),
        "{kind: embedded}",
    );
    let out = run(&s, &d.join("out"));
    let summary = assert_ran(&out, d);
    assert_every_trait_sent(&report_of(phy, &d.join("phy.json")));
    // One pair, seen by the record in each window.
    let pairs = summary["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{summary}");
    assert_eq!(
        pairs[0]["los_windows"].as_u64().unwrap() + pairs[0]["nlos_windows"].as_u64().unwrap(),
        100,
        "{summary}"
    );
}

#[test]
fn our_physics_simulator_with_their_network_simulator_over_tcp_completes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let report = format!("report: {}/net.json", d.display());
    let cfg = rosnetsim_config_with(d, "net.yaml", Some(port), &report);
    let net = peer("net_sim.py", &cfg);
    let s = scenario(
        d,
        "{kind: embedded}",
        &format!("{{kind: rosnetsim, address: 'tcp:127.0.0.1:{port}'}}"),
    );
    let out = run(&s, &d.join("out"));
    assert_ran(&out, d);
    let net = report_of(net, &d.join("net.json"));
    assert_eq!(net["error"], serde_json::Value::Null, "{net}");
    assert_eq!(
        (
            &net["windows"],
            &net["channels"],
            &net["nodes"],
            &net["paths"]
        ),
        (&100.into(), &100.into(), &2.into(), &100.into()),
        "one path, ids [1, 2], per window: {net}"
    );
}

#[test]
fn rosnetsims_coordinator_drives_our_served_simulators() {
    let python = venv_python();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = rosnetsim_config(d, "coordinator.yaml", "packets: 5");
    let s = scenario(d, "{kind: embedded}", "{kind: embedded}");
    let serve = |cmd: &str, socket: &str| {
        Command::new(COSIM)
            .args([
                cmd,
                s.to_str().unwrap(),
                "--bind",
                &format!("unix:{}/{socket}", d.display()),
                "--idle-timeout-s",
                "20",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let _procs = Procs(vec![
        serve("physics-sim", "phy_server_socket"),
        serve("network-sim", "net_server_socket"),
    ]);
    let out = Command::new(python)
        .arg(peers_dir().join("coordinator.py"))
        .arg(&cfg)
        .arg("50")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&seen["windows"], &seen["channels"], &seen["nodes"]),
        (&50.into(), &50.into(), &2.into()),
        "every physics END held a gzip channel with ids from 1: {seen}"
    );
    assert!(seen["paths"].as_u64() >= Some(50), "{seen}");
    assert_eq!(
        (&seen["sent"], &seen["delivered"], &seen["freed"]),
        (&5.into(), &5.into(), &5.into()),
        "each packet delivered in pkt_id, then freed: {seen}"
    );
    for d in seen["deliveries"].as_array().unwrap() {
        assert_eq!(d[2], "192.168.0.2", "{seen}");
    }
}

#[tokio::test]
async fn a_rosnetsim_network_simulators_deliveries_and_channel_read_as_ours() {
    use netsim_cosim::wire::proto::{ChannelData, PathDetails};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = rosnetsim_config(d, "net.yaml", &format!("report: {}/net.json", d.display()));
    let net = peer("net_sim.py", &cfg);
    let address: RosnetsimAddress = format!("unix:{}/net_server_socket", d.display())
        .parse()
        .unwrap();
    let mut link = Link::rosnetsim(
        "network simulator",
        Role::Network,
        &address,
        Duration::from_secs(5),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    let channel = ChannelData {
        node_list: vec![0.0; 14],
        path_details: vec![PathDetails {
            ids: vec![0, 1],
            los: true,
            num_hops: vec![0],
            hop_points: vec![],
            ..Default::default()
        }],
    };
    let (a, b) = (0xc0a8_0001u32, 0xc0a8_0002u32);
    for k in 0..3u32 {
        let mut begin = network_begin(k, channel.encode_to_vec());
        begin.pkt_id = vec![10 + k, 20 + k];
        begin.src_ip = vec![a, b];
        begin.dst_ip = vec![b, a];
        begin.pkt_lengths = vec![84, 84];
        begin.pkt_time_ns = vec![5, 6];
        begin.src_node = vec![0, 1];
        begin.dst_node = vec![1, 0];
        let reply = link.exchange(k, begin.encode_to_vec(), None).await.unwrap();
        let end = netsim_cosim::lockstep::protocol::expect_network(
            reply,
            netsim_cosim::wire::proto::rosnetsim::network_update::MsgType::End,
            k,
        )
        .unwrap();
        let releases: Vec<_> = end.releases().map(|r| (r.pkt_id, r.rx_ip)).collect();
        assert_eq!(releases, vec![(10 + k, b), (20 + k, a)]);
        assert!(end.releases().all(|r| r.ber == 1e-9));
        assert_eq!(end.packets().len(), 0);
    }
    drop(link);
    let net = report_of(net, &d.join("net.json"));
    assert_eq!(net["error"], serde_json::Value::Null, "{net}");
    assert_eq!(
        (&net["channels"], &net["paths"]),
        (&3.into(), &3.into()),
        "{net}"
    );
}

/// A physics simulator in Rust answering each BEGIN with an END whose `channel_data` is `field`.
fn physics_peer(path: &Path, field: Vec<u8>) {
    use netsim_cosim::lockstep::protocol::physics_end;
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        while read_frame(&mut s).is_some() {
            let _ = s.write_all(&frame(&physics_end(0, field.clone())));
        }
    });
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[tokio::test]
async fn a_channel_from_a_rosnetsim_peer_that_cannot_be_used_is_refused_naming_the_field() {
    use netsim_cosim::wire::proto::{ChannelData, PathDetails};
    let dir = tempfile::tempdir().unwrap();
    let channel = |ids: Vec<u32>| ChannelData {
        node_list: vec![0.0; 14],
        path_details: vec![PathDetails {
            ids,
            los: true,
            num_hops: vec![1],
            hop_points: vec![0.5; 4],
            ..Default::default()
        }],
    };
    let cases = [
        (
            gzip(&channel(vec![1, 2]).encode_to_vec()),
            None,
        ),
        (
            gzip(&channel(vec![0, 1]).encode_to_vec()),
            Some("channel_data: path_details[0].ids [0, 1]: vehicle number 0; ROS-NetSim numbers vehicles from 1"),
        ),
        (
            gzip(&channel(vec![1, 3]).encode_to_vec()),
            Some("channel_data: path_details[0].ids [1, 3]: there is no vehicle 3 (node_list holds 2, numbered from 1)"),
        ),
        (
            gzip(&vec![0u8; (64 << 20) + 1]),
            Some("channel_data: inflates beyond the 67108864-byte limit"),
        ),
    ];
    for (i, (field, expected)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("phy{i}"));
        physics_peer(&path, field);
        let address: RosnetsimAddress = format!("unix:{}", path.display()).parse().unwrap();
        let mut link = Link::rosnetsim(
            "physics simulator",
            Role::Physics,
            &address,
            Duration::from_secs(5),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        let got = link
            .exchange(
                0,
                netsim_cosim::lockstep::protocol::physics_begin(0, vec![]),
                None,
            )
            .await;
        match expected {
            None => {
                let end =
                    netsim_cosim::wire::proto::PhysicsUpdate::decode(&got.unwrap()[..]).unwrap();
                let ours = ChannelData::decode(&end.channel_data[..]).unwrap();
                assert_eq!(
                    ours.path_details[0].ids,
                    vec![0, 1],
                    "numbered from 0 on our side"
                );
            }
            Some(reason) => assert_eq!(
                got.unwrap_err().to_string(),
                format!("physics simulator at {address} failed in window 0: {reason}")
            ),
        }
    }
}

#[test]
fn our_simulators_served_over_rosnetsim_give_the_in_process_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = scenario(d, "{kind: embedded}", "{kind: embedded}");
    let timeline = |out: &Path, extra: &[&str]| {
        let run = Command::new(COSIM)
            .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .arg("--timeline")
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        std::fs::read(out.join("timeline.jsonl")).unwrap()
    };
    let in_process = timeline(&d.join("a"), &[]);
    let (phy, net) = (
        format!("unix:{}/phy_server_socket", d.display()),
        format!("unix:{}/net_server_socket", d.display()),
    );
    let serve = |cmd: &str, bind: &str| {
        Command::new(COSIM)
            .args([cmd, s.to_str().unwrap(), "--bind", bind])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let _procs = Procs(vec![serve("physics-sim", &phy), serve("network-sim", &net)]);
    let served = timeline(
        &d.join("b"),
        &["--physics-sim", &phy, "--network-sim", &net],
    );
    assert!(!in_process.is_empty());
    assert!(
        in_process == served,
        "the ROS-NetSim dialect round trip changed the run"
    );
}
