//! The ROS-NetSim compatibility transport against peers written here: a network simulator in
//! Rust speaking the framing by hand (4-byte big-endian length + gzip), dribbling its replies a
//! few bytes at a time; a ROS-NetSim-style coordinator in Python (`gzip`, `struct`) driving our
//! embedded network simulator; and peers that misbehave.

use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use netsim_cosim::config::RosnetsimAddress;
use netsim_cosim::sim::network::NetworkSim;
use netsim_cosim::sync::{protocol::network_begin, rosnetsim, Link, LinkError};
use netsim_cosim::wire::proto::NetworkUpdate;
use prost::Message;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::time::Duration;

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
        rosnetsim::serve(&address, &mut sim, Duration::from_secs(20)).await
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
