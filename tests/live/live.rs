//! Live vehicle traffic through the network coordinator (needs root: namespaces and TUN
//! devices; `scripts/setup --test` installs ping, iperf3, socat, tshark). Each test uses its own
//! vehicle names and subnet, so they run in parallel without touching each other.
use crate::common;
use common::require_root;
use netsim_cosim::{
    config, coord,
    io::os::netns,
    lockstep::{zmq, Reply, Service},
    output::{record::Record, schema::Outcome},
    wire::proto::{rosnetsim::network_update::MsgType, NetworkUpdate},
};
use prost::Message;
use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// A scenario with stationary vehicles `names` on subnet 10.`net`.0.0/24 (and fd`net`::/64).
pub(super) fn scenario(
    dir: &Path,
    names: &[&str],
    net: u8,
    duration_s: f64,
    window_ms: f64,
    extra: &str,
) -> PathBuf {
    let mut y = format!(
        "name: live{net}\nwindow_ms: {window_ms}\nduration_s: {duration_s}\nreal_time_factor: 1\nseed: 3\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  terrain: {{kind: procedural, size_m: [200, 200], cell_size_m: 10, base_height_m: -60}}\n\
         vehicles:\n"
    );
    for (i, n) in names.iter().enumerate() {
        y += &format!(
            "  - name: {n}\n    addresses: [10.{net}.0.{h}/24, fd{net:02x}::{h}/64]\n    start: {{x: {x}, y: 0, z: -10}}\n    motion: {{kind: stationary}}\n",
            h = i + 1,
            x = 10 * i
        );
    }
    y += extra;
    let p = dir.join("scenario.yaml");
    std::fs::write(&p, y).unwrap();
    p
}

pub(super) fn ip_of(net: u8, i: usize) -> String {
    format!("10.{net}.0.{}", i + 1)
}

fn namespaces_of(names: &[&str]) -> Vec<String> {
    let mine: Vec<String> = names.iter().map(|n| netns::ns_name(n)).collect();
    netns::list()
        .into_iter()
        .filter(|n| mine.contains(n))
        .collect()
}

fn owner_files_of(names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| format!("{}/{}.owner", netns::STATE_DIR, netns::ns_name(n)))
        .filter(|p| Path::new(p).exists())
        .collect()
}

fn wait_for_namespaces(names: &[&str], timeout: Duration) {
    let t = Instant::now();
    while namespaces_of(names).len() < names.len() || !tun_up(names) {
        assert!(t.elapsed() < timeout, "namespaces {names:?} did not appear");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn tun_up(names: &[&str]) -> bool {
    names.iter().all(|n| {
        Command::new("ip")
            .args([
                "-n",
                &netns::ns_name(n),
                "-o",
                "addr",
                "show",
                "dev",
                "cosim0",
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("inet "))
            .unwrap_or(false)
    })
}

/// `cosim exec <vehicle> -- args`.
pub(super) fn exec(vehicle: &str, args: &[&str]) -> Output {
    Command::new(COSIM)
        .arg("exec")
        .arg(vehicle)
        .arg("--")
        .args(args)
        .output()
        .unwrap()
}

/// A one-off iperf3 server in `vehicle`, bound to `ip`, listening when this returns (a loaded
/// machine may take seconds to start it; a client started before would be refused).
fn iperf3_server(vehicle: &str, ip: &str) -> std::process::Child {
    let mut server = Command::new(COSIM)
        .args(["exec", vehicle, "--", "iperf3", "-s", "-1", "-B", ip])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    loop {
        let listening = exec(vehicle, &["ss", "-ltnH", "sport", "= :5201"]);
        if String::from_utf8_lossy(&listening.stdout).contains(ip) {
            return server;
        }
        if t0.elapsed() > Duration::from_secs(60) || server.try_wait().unwrap().is_some() {
            let _ = server.kill();
            panic!(
                "iperf3 -s in {vehicle} not listening on {ip}:5201 after {:?}",
                t0.elapsed()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

pub(super) fn assert_balanced(net: &serde_json::Value) {
    let n = |k: &str| net[k].as_u64().unwrap();
    assert_eq!(
        n("captured"),
        n("delivered") + n("dropped") + n("in_flight"),
        "ledger: {net}"
    );
    assert_eq!(net["balanced"], true, "{net}");
    let by_reason: u64 = net["drops"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_reason, n("dropped"), "{net}");
}

fn send_signal(pid: u32, sig: i32) {
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

#[test]
fn namespaces_are_removed_after_a_normal_end_sigint_and_a_killed_run() {
    let _serial = require_root();
    let names = ["lca", "lcb"];
    let dir = tempfile::tempdir().unwrap();
    // Normal end.
    let s = scenario(
        dir.path(),
        &names,
        61,
        1.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let out = dir.path().join("out");
    let o = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        namespaces_of(&names).is_empty() && owner_files_of(&names).is_empty(),
        "left after a normal end"
    );
    assert_balanced(&summary(&out)["network"]);

    // SIGINT (Ctrl-C) in the middle of a run: exit 130, nothing left.
    let s = scenario(
        dir.path(),
        &names,
        61,
        60.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let mut child = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_namespaces(&names, Duration::from_secs(10));
    assert_eq!(owner_files_of(&names).len(), 2);
    send_signal(child.id(), libc::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        namespaces_of(&names).is_empty() && owner_files_of(&names).is_empty(),
        "left after SIGINT"
    );
    assert_eq!(summary(&out)["interrupted"], true);

    // SIGTERM likewise.
    let mut child = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_namespaces(&names, Duration::from_secs(10));
    send_signal(child.id(), libc::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(namespaces_of(&names).is_empty(), "left after SIGTERM");

    // kill -9: the namespaces stay behind, owned by a dead pid; the next start removes them.
    let mut child = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_namespaces(&names, Duration::from_secs(10));
    send_signal(child.id(), libc::SIGKILL);
    child.wait().unwrap();
    assert_eq!(
        namespaces_of(&names).len(),
        2,
        "a killed run cannot clean up"
    );
    let short = scenario(
        dir.path(),
        &names,
        61,
        0.5,
        10.0,
        "network: {capture: tun}\n",
    );
    let o = Command::new(COSIM)
        .args([
            "run",
            short.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("removed namespaces left by a run that died")
    );
    assert!(
        namespaces_of(&names).is_empty() && owner_files_of(&names).is_empty(),
        "left after the run following kill -9"
    );
}

#[test]
fn a_live_owner_namespace_is_never_taken_over() {
    let _serial = require_root();
    let names = ["owa", "owb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        62,
        30.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let out = dir.path().join("out");
    let mut first = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_namespaces(&names, Duration::from_secs(10));
    let o = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("in use by a running process"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        namespaces_of(&names).len(),
        2,
        "the live run keeps its namespaces"
    );
    send_signal(first.id(), libc::SIGINT);
    first.wait().unwrap();
    assert!(namespaces_of(&names).is_empty());
}

#[test]
fn capture_needs_real_time_pacing() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &["rta", "rtb"],
        63,
        1.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let text = std::fs::read_to_string(&s)
        .unwrap()
        .replace("real_time_factor: 1", "real_time_factor: 0");
    std::fs::write(&s, text).unwrap();
    let err = config::load(&s).unwrap_err().to_string();
    assert!(
        err.contains("network.capture") && err.contains("real_time_factor"),
        "{err}"
    );
}

/// Runs a scenario in this process (optionally against a network simulator served here over
/// ZeroMQ), calls `during` once the namespaces are up, and returns the run's summary.
pub(super) fn live_run(
    scenario: &Path,
    out: &Path,
    sim: Option<Box<dyn Service + Send>>,
    during: impl FnOnce() + Send + 'static,
) -> serde_json::Value {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut loaded = config::load(scenario).unwrap();
    // A simulator of the test's own: the network simulator at its endpoint, as
    // `--network-sim` chooses it.
    let endpoint = sim.as_ref().map(|_| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())
    });
    if let Some(ep) = &endpoint {
        let overrides = netsim_cosim::cli::args::Overrides {
            network_sim: Some(ep.parse().unwrap()),
            ..Default::default()
        };
        netsim_cosim::cli::overrides::apply(&mut loaded, &overrides).unwrap();
    }
    let report = rt.block_on(async {
        if let (Some(mut sim), Some(bind)) = (sim, endpoint) {
            tokio::spawn(
                async move { zmq::serve(&bind, sim.as_mut(), Duration::from_secs(60)).await },
            );
        }
        let c = coord::physics_coordinator(&loaded, None, Some(out.to_path_buf()))
            .await
            .unwrap();
        let helper = tokio::task::spawn_blocking(during);
        let report = c.run(std::future::pending()).await.unwrap();
        helper.await.unwrap();
        report
    });
    let text = serde_json::to_value(&report).unwrap();
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_vec_pretty(&text).unwrap(),
    )
    .unwrap();
    text
}

pub(super) fn ping_replies(o: &Output) -> usize {
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines().filter(|l| l.contains("bytes from")).count()
}

#[test]
fn ping_and_udp_cross_only_through_the_coordinator() {
    let _serial = require_root();
    let names = ["pga", "pgb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        64,
        5.0,
        10.0,
        "network: {capture: tun, pcap: true}\n",
    );
    let out = dir.path().join("out");
    let summary = live_run(&s, &out, None, move || {
        let o = exec(
            "pga",
            &["ping", "-c", "10", "-i", "0.1", "-W", "5", &ip_of(64, 1)],
        );
        assert_eq!(
            ping_replies(&o),
            10,
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let o = exec(
            "pgb",
            &["ping", "-6", "-c", "5", "-i", "0.1", "-W", "5", "fd40::1"],
        );
        assert_eq!(
            ping_replies(&o),
            5,
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        // UDP with socat: a datagram from a to b.
        let mut rx = Command::new(COSIM)
            .args([
                "exec",
                "pgb",
                "--",
                "socat",
                "-u",
                "UDP4-RECV:7777",
                "STDOUT",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let o = exec(
            "pga",
            &[
                "socat",
                "-u",
                "STDIN",
                &format!("UDP4-SENDTO:{}:7777", ip_of(64, 1)),
            ],
        );
        assert!(o.status.success());
        let o = Command::new(COSIM)
            .args([
                "exec",
                "pga",
                "--",
                "sh",
                "-c",
                &format!(
                    "echo hello-udp | socat -u STDIN UDP4-SENDTO:{}:7777",
                    ip_of(64, 1)
                ),
            ])
            .output()
            .unwrap();
        assert!(o.status.success());
        std::thread::sleep(Duration::from_millis(300));
        let _ = rx.kill();
        let got = rx.wait_with_output().unwrap();
        assert!(String::from_utf8_lossy(&got.stdout).contains("hello-udp"));
    });
    let net = &summary["network"];
    assert_balanced(net);
    assert!(net["delivered"].as_u64().unwrap() >= 31, "{net}");
    // The pcaps hold what left and what arrived, with sim timestamps; tshark reads them.
    let o = Command::new("tshark")
        .args(["-r", out.join("pga.pcap").to_str().unwrap(), "-Y", "icmp"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("Echo (ping) request").count(), 10, "{text}");
    assert_eq!(text.matches("Echo (ping) reply").count(), 10, "{text}");
    // In the receiver's pcap each request, written into its TUN, comes before the reply the
    // kernel sent at once, although the two are recorded by different threads.
    let o = Command::new("tshark")
        .args(["-r", out.join("pgb.pcap").to_str().unwrap(), "-Y", "icmp"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let kinds: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            if l.contains("Echo (ping) request") {
                Some("request")
            } else if l.contains("Echo (ping) reply") {
                Some("reply")
            } else {
                None
            }
        })
        .collect();
    assert_eq!(kinds, ["request", "reply"].repeat(10), "{text}");
}

/// Counts the packets of `pcap` that match the display filter `filter` (tshark).
fn pcap_count(pcap: &Path, filter: &str) -> usize {
    let o = Command::new("tshark")
        .args(["-r", pcap.to_str().unwrap(), "-Y", filter])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().count()
}

/// Generated flows beside a live program in one run: the generated packets cross the same
/// network simulator, ledger, record and pcaps as the live ones, but reach the flows' ends in
/// sim time and never a vehicle's kernel (which would answer a datagram to a closed port with
/// an ICMP error and a connection request with a reset); the emulation error counts the live
/// copies alone.
#[test]
fn generated_flows_run_beside_live_programs_and_never_reach_a_vehicles_kernel() {
    let _serial = require_root();
    let names = ["gfa", "gfb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        86,
        6.0,
        10.0,
        "network: {capture: tun, pcap: true}\n\
         traffic:\n  flows:\n\
         \x20   - {name: cbr, from: gfa, to: gfb, send: {kind: udp, rate_kbps: 80, size_bytes: 1000}}\n\
         \x20   - {name: rpc, from: gfb, to: gfa, send: {kind: request, interval_s: 0.2, response_bytes: 5000}}\n",
    );
    let out = dir.path().join("out");
    let to = ip_of(86, 1);
    let summary = live_run(&s, &out, None, move || {
        let o = exec("gfa", &["ping", "-c", "10", "-i", "0.2", "-W", "5", &to]);
        assert!(ping_replies(&o) > 0, "{}", common::output_text(&o));
    });
    let net = &summary["network"];
    assert_balanced(net);
    let flow = |name: &str| {
        summary["traffic"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no flow {name}: {}", summary["traffic"]))
            .clone()
    };
    let count = |v: &serde_json::Value| v.as_u64().unwrap();
    // 10 datagrams a second for 6 s; a request every 0.2 s, each answered in 5000 bytes.
    let cbr = flow("cbr");
    println!("{cbr}\n{}", flow("rpc"));
    assert_eq!(count(&cbr["sent_packets"]), 60, "{cbr}");
    assert!(count(&cbr["received_packets"]) >= 50, "{cbr}");
    let rpc = flow("rpc");
    assert_eq!(count(&rpc["sent_packets"]), 30, "{rpc}");
    assert!(count(&rpc["received_packets"]) >= 25, "{rpc}");
    assert_eq!(
        count(&rpc["received_bytes"]),
        5000 * count(&rpc["received_packets"]),
        "{rpc}"
    );

    // The pcaps: every datagram its sender sent and its receiver received, and no answer of
    // a kernel to a packet meant for the flows.
    let (a, b) = (out.join("gfa.pcap"), out.join("gfb.pcap"));
    assert_eq!(pcap_count(&a, "udp.dstport == 5000"), 60);
    assert_eq!(
        pcap_count(&b, "udp.dstport == 5000") as u64,
        count(&cbr["received_packets"])
    );
    assert!(pcap_count(&b, "tcp.dstport == 8080") > 0, "the requests");
    for p in [&a, &b] {
        assert_eq!(pcap_count(p, "icmp.type == 3 || tcp.flags.reset == 1"), 0);
        assert!(
            pcap_count(p, "icmp.type == 0 || icmp.type == 8") > 0,
            "the pings"
        );
    }

    // The emulation error counts the live copies, each with its figure in the record; the
    // generated copies have none.
    let emulated = count(&summary["emulation"]["error"]["copies"]);
    let r = Record::read(&out).unwrap();
    let delivered: Vec<_> = (r.packets.iter())
        .filter(|p| p.outcome == Outcome::Delivered)
        .collect();
    let live = delivered
        .iter()
        .filter(|p| p.emulation_ms.is_some())
        .count() as u64;
    println!("{} copies delivered, {live} live", delivered.len());
    assert_eq!(emulated, live);
    assert!(live >= 2 && live < delivered.len() as u64);
    assert_eq!(delivered.len() as u64, count(&net["delivered"]));
}

/// A network simulator that drops every copy as out of range.
struct DropAll(u32);
impl Service for DropAll {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        let r = NetworkUpdate::decode(request.as_slice())
            .map_err(|e| e.to_string())
            .map(|b| {
                self.0 = b.time_val + 1;
                NetworkUpdate {
                    msg_type: MsgType::End as i32,
                    time_val: b.time_val,
                    drop_pkt_id: b.pkt_id.clone(),
                    drop_node: b.dst_node.clone(),
                    drop_reason: vec![1; b.pkt_id.len()],
                    ..Default::default()
                }
                .encode_to_vec()
            });
        netsim_cosim::lockstep::ready(r)
    }
}

#[test]
fn nothing_crosses_when_the_simulator_drops_and_the_ledger_says_why() {
    let _serial = require_root();
    let names = ["dra", "drb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        65,
        3.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let out = dir.path().join("out");
    let summary = live_run(&s, &out, Some(Box::new(DropAll(0))), move || {
        let o = exec(
            "dra",
            &["ping", "-c", "5", "-i", "0.1", "-W", "5", &ip_of(65, 1)],
        );
        assert_eq!(ping_replies(&o), 0);
    });
    let net = &summary["network"];
    assert_balanced(net);
    assert_eq!(net["delivered"], 0, "{net}");
    assert!(net["drops"]["out of range"].as_u64().unwrap() >= 5, "{net}");
}

#[test]
fn malformed_packets_are_counted_and_dropped_without_disturbing_others() {
    let _serial = require_root();
    let names = ["mfa", "mfb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        66,
        4.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let out = dir.path().join("out");
    // Crafted frames written straight into a's TUN through a packet socket (no IP stack in
    // between): truncated, bad version, IPv4 length past the end, IHL < 5, a short IPv6 one,
    // and a well-formed packet to an address no vehicle has.
    let script = r#"
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
s.bind(("cosim0", 0x0800))
def v4(total, ihl=5, dst=bytes([10,66,0,2])):
    return bytes([0x40 | ihl, 0]) + total.to_bytes(2, "big") + bytes(8) + bytes([10,66,0,1]) + dst
frames = [bytes([0x45, 0, 0]), bytes([0x55]) + bytes(39), v4(200) + bytes(10), v4(20, ihl=3), bytes([0x60]) + bytes(20)]
for f in frames:
    s.sendto(f, ("cosim0", 0x0800))
s.sendto(v4(28, dst=bytes([192,0,2,9])) + bytes(8), ("cosim0", 0x0800))
print("sent")
"#;
    let summary = live_run(&s, &out, None, move || {
        let o = exec("mfa", &["ping", "-c", "3", "-i", "0.1", &ip_of(66, 1)]);
        assert_eq!(ping_replies(&o), 3);
        let o = exec("mfa", &["python3", "-c", script]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = exec("mfa", &["ping", "-c", "3", "-i", "0.1", &ip_of(66, 1)]);
        assert_eq!(ping_replies(&o), 3, "others unaffected");
    });
    let net = &summary["network"];
    assert_balanced(net);
    assert_eq!(net["drops"]["malformed"], 5, "{net}");
    assert!(net["drops"]["no route"].as_u64().unwrap() >= 1, "{net}");
    assert!(net["delivered"].as_u64().unwrap() >= 12, "{net}");
}

#[test]
fn iperf3_tcp_between_two_vehicles_is_capped_near_the_ideal_link_rate() {
    let _serial = require_root();
    let names = ["ipa", "ipb"];
    let dir = tempfile::tempdir().unwrap();
    let rate_bps = 20e6;
    let s = scenario(
        dir.path(),
        &names,
        67,
        8.0,
        2.0,
        &format!("links:\n  default: {{model: ideal, rate_bps: {rate_bps}, delay_ms: 0}}\nnetwork: {{capture: tun, queue_limit: 20000, max_hold_windows: 2000}}\n"),
    );
    let out = dir.path().join("out");
    let result = std::sync::Arc::new(std::sync::Mutex::new(None));
    let r = result.clone();
    let summary = live_run(&s, &out, None, move || {
        let mut server = iperf3_server("ipb", &ip_of(67, 1));
        std::thread::sleep(Duration::from_millis(500));
        let o = exec("ipa", &["iperf3", "-c", &ip_of(67, 1), "-t", "4", "-J"]);
        let _ = server.kill();
        let _ = server.wait();
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        *r.lock().unwrap() = j["end"]["sum_received"]["bits_per_second"].as_f64();
    });
    let bps = result
        .lock()
        .unwrap()
        .expect("iperf3 ran and reported a rate");
    eprintln!(
        "iperf3 through the coordinator: {:.2} Mbit/s over an ideal {:.0} Mbit/s link",
        bps / 1e6,
        rate_bps / 1e6
    );
    // Capped by the link (TCP headers and ramp-up cost a little) and not far below it.
    assert!(
        bps <= rate_bps * 1.02,
        "{bps} exceeds the configured {rate_bps}"
    );
    common::assert_if_kept_pace(
        &summary,
        bps >= rate_bps * 0.6,
        &format!("{bps} is far below the configured {rate_bps}"),
    );
    assert_balanced(&summary["network"]);
}

#[test]
fn bulk_tcp_both_ways_at_once_arrives_byte_for_byte_in_bursts() {
    // With offloads a long burst stays in the buffer it was read into until its last copy is
    // done, and the buffer is then read into again: two bulk transfers at once, one each way,
    // arrive byte for byte only if no buffer is reused too early.
    let _serial = require_root();
    let names = ["bta", "btb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        74,
        10.0,
        1.0,
        "links:\n  default: {model: ideal, rate_bps: 1.0e11, delay_ms: 0}\nnetwork: {capture: tun, offload: true, queue_limit: 65536, max_hold_windows: 1000}\n",
    );
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut files = Vec::new();
    for i in 0..2 {
        let data: Vec<u8> = (0..48 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let sent = dir.path().join(format!("sent{i}"));
        std::fs::write(&sent, &data).unwrap();
        files.push((sent, dir.path().join(format!("received{i}"))));
    }
    let out = dir.path().join("out");
    let transfers = files.clone();
    let summary = live_run(&s, &out, None, move || {
        // Transfer 0 from bta to btb, transfer 1 back; each end gives up after 20 s idle.
        let ends = [("btb", ip_of(74, 1), "bta"), ("bta", ip_of(74, 0), "btb")];
        let mut listeners = Vec::new();
        for (i, (to, ip, _)) in ends.iter().enumerate() {
            let listen = format!("TCP-LISTEN:{},bind={ip}", 7100 + i);
            let file = format!("OPEN:{},creat,trunc", transfers[i].1.display());
            listeners.push(
                Command::new(COSIM)
                    .args(["exec", to, "--", "socat", "-u", "-T", "20", &listen, &file])
                    .spawn()
                    .unwrap(),
            );
        }
        std::thread::sleep(Duration::from_millis(500));
        let senders: Vec<_> = ends
            .iter()
            .enumerate()
            .map(|(i, (_, ip, from))| {
                let file = format!("OPEN:{}", transfers[i].0.display());
                let to = format!("TCP:{ip}:{}", 7100 + i);
                let from = from.to_string();
                std::thread::spawn(move || {
                    exec(
                        &from,
                        &["socat", "-u", "-T", "20", "-b", "131072", &file, &to],
                    )
                })
            })
            .collect();
        for s in senders {
            let o = s.join().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        for mut l in listeners {
            assert!(l.wait().unwrap().success());
        }
    });
    for (sent, received) in &files {
        let (a, b) = (
            std::fs::read(sent).unwrap(),
            std::fs::read(received).unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{}", received.display());
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        assert_eq!(
            first,
            None,
            "{} differs from byte {first:?}",
            received.display()
        );
    }
    let net = &summary["network"];
    assert_balanced(net);
    for link in net["links"].as_array().unwrap() {
        // The kernel handed over bursts (with an ACK of the other transfer about every one), so
        // the long ones stayed in their read buffers.
        let mean = link["captured_bytes"].as_f64().unwrap() / link["captured"].as_f64().unwrap();
        assert!(mean > 16384.0, "{link}");
    }
}

/// `ip -s -j link show` of the TUN of `vehicle`: its settings and counters.
fn tun_link(vehicle: &str) -> serde_json::Value {
    let o = Command::new("ip")
        .args([
            "-n",
            &netns::ns_name(vehicle),
            "-s",
            "-j",
            "link",
            "show",
            "cosim0",
        ])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    j[0].clone()
}

/// Packets the TUN of `vehicle` received (the coordinator's writes into it).
fn tun_rx_packets(vehicle: &str) -> u64 {
    tun_link(vehicle)["stats64"]["rx"]["packets"]
        .as_u64()
        .unwrap()
}

#[test]
fn without_offloads_the_simulator_sees_wire_packets_and_the_receiver_gets_bursts() {
    // The sender's kernel hands the coordinator 64 KiB TCP bursts (the TUN has its
    // offloads); without `network.offload` each is split into its wire packets before the
    // simulator, the ledger and the record see it, and the segments due at the same instant
    // go into the receiver's TUN coalesced again. Over a fast ideal link nearly everything is
    // due at a window's start, so the receiver's TUN takes far fewer writes than copies. The
    // same for a flood of small UDP datagrams, which are no burst on capture but go in as one
    // UDP GSO datagram per flow and release. The TUNs queue 4096 packets before capture.
    let _serial = require_root();
    let names = ["gra", "grb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        73,
        7.0,
        1.0,
        "links:\n  default: {model: ideal, rate_bps: 1.0e11, delay_ms: 0}\nnetwork: {capture: tun, queue_limit: 65536, max_hold_windows: 1000}\n",
    );
    let out = dir.path().join("out");
    let rx = std::sync::Arc::new(std::sync::Mutex::new((0, 0, 0, 0)));
    let seen = rx.clone();
    let summary = live_run(&s, &out, None, move || {
        let mut server = iperf3_server("grb", &ip_of(73, 1));
        std::thread::sleep(Duration::from_millis(500));
        let o = exec("gra", &["iperf3", "-c", &ip_of(73, 1), "-t", "2"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let _ = server.wait();
        let after_tcp = tun_rx_packets("grb");
        // An unthrottled flood of small datagrams now and then ends iperf3's one-off server
        // ("select failed"), and its client then never ends: each try is bounded (30 s, a
        // hang guard: a 1 s stream on a loaded machine can take several) and made again with
        // a fresh server, up to three times.
        let udp = ["-u", "-b", "0", "-l", "36", "-w", "4M", "-t", "1", "-J"];
        let server_ip = ip_of(73, 1);
        let client = [
            &["timeout", "-k", "2", "30", "iperf3", "-c", &server_ip][..],
            &udp,
        ]
        .concat();
        let mut o = None;
        for _ in 0..3 {
            server = iperf3_server("grb", &server_ip);
            std::thread::sleep(Duration::from_millis(500));
            let tried = exec("gra", &client);
            if tried.status.success() {
                o = Some(tried);
                break;
            }
            eprintln!(
                "iperf3 UDP try failed ({}): {}",
                tried.status,
                String::from_utf8_lossy(&tried.stderr)
            );
            let _ = server.kill();
            let _ = server.wait();
        }
        let o = o.expect("iperf3's UDP flood failed three times");
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let sum = &j["end"]["sum"];
        let count = |k: &str| {
            sum[k]
                .as_u64()
                .unwrap_or_else(|| panic!("iperf3 said: {j}"))
        };
        let received = count("packets") - count("lost_packets");
        let _ = server.kill();
        let _ = server.wait();
        *seen.lock().unwrap() = (
            after_tcp,
            tun_rx_packets("grb") - after_tcp,
            received,
            tun_link("gra")["txqlen"].as_u64().unwrap_or(0),
        );
    });
    let net = &summary["network"];
    assert_balanced(net);
    let link = net["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["src"] == "gra" && l["dst"] == "grb")
        .unwrap()
        .clone();
    let (copies, bytes) = (
        link["delivered"].as_u64().unwrap(),
        link["delivered_bytes"].as_u64().unwrap(),
    );
    assert!(bytes > 1_000_000, "iperf3's stream: {link}");
    common::assert_if_kept_pace(
        &summary,
        bytes > 50_000_000,
        &format!("iperf3's stream over a 100 Gbit/s link: {link}"),
    );
    let r = Record::read(&out).unwrap();
    let largest = r.packets.iter().map(|p| p.bytes).max().unwrap();
    assert!(
        largest <= 1500,
        "every packet the simulator saw fits the 1500-byte MTU; the largest: {largest} bytes"
    );
    let (writes, udp_writes, datagrams, queue) = *rx.lock().unwrap();
    eprintln!(
        "gra -> grb: {copies} packets ({bytes} bytes) delivered in {writes} writes into grb's \
         TUN, then {datagrams} 64-byte datagrams received through {udp_writes} writes"
    );
    assert!(
        writes * 5 < copies,
        "{writes} writes for {copies} delivered packets: not coalesced"
    );
    assert!(
        datagrams > 10_000,
        "the UDP flood: {datagrams} datagrams received"
    );
    assert!(
        udp_writes * 5 < datagrams,
        "{udp_writes} writes for {datagrams} datagrams received: not coalesced"
    );
    assert_eq!(queue, u64::from(netsim_cosim::io::os::tun::TX_QUEUE_LEN));
}

#[test]
fn the_record_has_one_packet_per_copy_and_its_delivered_bytes_match_the_per_link_ledger() {
    let _serial = require_root();
    let names = ["rca", "rcb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        71,
        7.0,
        5.0,
        "links:\n  default: {model: ideal, rate_bps: 20.0e6, delay_ms: 1}\nnetwork: {capture: tun, queue_limit: 20000, max_hold_windows: 2000}\n",
    );
    let out = dir.path().join("out");
    let summary = live_run(&s, &out, None, move || {
        let o = exec(
            "rca",
            &["ping", "-c", "5", "-i", "0.1", "-W", "5", &ip_of(71, 1)],
        );
        assert_eq!(
            ping_replies(&o),
            5,
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let mut server = iperf3_server("rcb", &ip_of(71, 1));
        std::thread::sleep(Duration::from_millis(500));
        let o = exec("rca", &["iperf3", "-c", &ip_of(71, 1), "-t", "2"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let _ = server.kill();
        let _ = server.wait();
        // Something that names no vehicle: no route, a copy without a receiver.
        let _ = exec("rca", &["ping", "-c", "1", "-W", "1", "10.71.0.99"]);
    });
    let net = &summary["network"];
    assert_balanced(net);
    let links = net["links"].as_array().unwrap();
    for l in links {
        assert_balanced(l);
    }
    let total = |k: &str| links.iter().map(|l| l[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(
        (
            total("captured"),
            total("delivered"),
            total("delivered_bytes")
        ),
        (
            net["captured"].as_u64().unwrap(),
            net["delivered"].as_u64().unwrap(),
            net["delivered_bytes"].as_u64().unwrap()
        )
    );
    assert_eq!(net["packet_records_dropped"], 0);

    let r = Record::read(&out).unwrap();
    assert!(
        r.summary
            .as_ref()
            .is_some_and(|s| s["network"]["captured"] == net["captured"]),
        "the record ends with the run's summary"
    );
    assert_eq!(
        r.packets.len() as u64,
        net["captured"].as_u64().unwrap() - net["in_flight"].as_u64().unwrap(),
        "one /packets message per copy that ended"
    );
    for l in links {
        let (src, dst) = (l["src"].as_str().unwrap(), l["dst"].as_str());
        let of_link = || {
            r.packets
                .iter()
                .filter(move |p| p.src == src && p.dst.as_deref() == dst)
        };
        let delivered: u64 = of_link()
            .filter(|p| p.outcome == Outcome::Delivered)
            .map(|p| p.bytes as u64)
            .sum();
        assert_eq!(
            delivered,
            l["delivered_bytes"].as_u64().unwrap(),
            "delivered bytes {src} -> {dst:?}: {l}"
        );
        assert_eq!(
            of_link().count() as u64,
            l["captured"].as_u64().unwrap() - l["in_flight"].as_u64().unwrap(),
            "{l}"
        );
        let dropped = of_link().filter(|p| p.outcome == Outcome::Dropped).count() as u64;
        assert_eq!(dropped, l["dropped"].as_u64().unwrap(), "{l}");
        assert!(
            of_link().all(|p| p.end_s >= p.t_s),
            "a copy ends after its capture"
        );
    }
    let ab = links
        .iter()
        .find(|l| l["src"] == "rca" && l["dst"] == "rcb")
        .unwrap();
    let ba = links
        .iter()
        .find(|l| l["src"] == "rcb" && l["dst"] == "rca")
        .unwrap();
    assert!(
        ab["delivered_bytes"].as_u64().unwrap() > 1_000_000,
        "iperf3's stream: {ab}"
    );
    assert!(
        ba["delivered"].as_u64().unwrap() >= 5,
        "ping replies and TCP acks: {ba}"
    );
    assert!(
        links.iter().any(|l| l["src"] == "rca"
            && l["dst"].is_null()
            && l["drops"]["no route"].as_u64() >= Some(1)),
        "{links:?}"
    );
    // Link state from the embedded simulator: the ideal link, once per direction.
    assert_eq!(r.link_states.len(), 2);
    assert!(r
        .link_states
        .iter()
        .all(|l| l.usable && l.snr_db.is_none() && l.rate_bps == 20e6 && l.delay_s == 1e-3));
}

/// Round-trip times in ms from ping's output.
fn ping_rtts_ms(o: &Output) -> Vec<f64> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|t| t.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn the_added_delay_is_the_ideal_links_delay_within_one_window() {
    let _serial = require_root();
    let names = ["dla", "dlb"];
    let dir = tempfile::tempdir().unwrap();
    let (delay_ms, window_ms) = (40.0, 2.0);
    let s = scenario(
        dir.path(),
        &names,
        69,
        6.0,
        window_ms,
        &format!("links:\n  default: {{model: ideal, rate_bps: 1.0e9, delay_ms: {delay_ms}}}\nnetwork: {{capture: tun}}\n"),
    );
    let out = dir.path().join("out");
    let rtts = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let r = rtts.clone();
    let summary = live_run(&s, &out, None, move || {
        let o = exec(
            "dla",
            &["ping", "-c", "10", "-i", "0.2", "-W", "5", &ip_of(69, 1)],
        );
        *r.lock().unwrap() = ping_rtts_ms(&o);
    });
    let rtts = rtts.lock().unwrap().clone();
    eprintln!("ping RTTs over a {delay_ms} ms ideal link, W = {window_ms} ms: {rtts:?}");
    assert!(rtts.len() >= 8, "{rtts:?}");
    // Each direction: the link's delay, plus at most one window of capture-to-report wait.
    // Paced windows never run ahead of the wall clock, and the live side anchors each window at
    // the instant the coordinator opened it (not when its BEGIN arrived), so no one-way time is
    // below the delay (ping prints these RTTs to 0.1 ms: 0.03 ms of rounding allowed one way).
    // A window that opens late (the machine busy) delays what it carries in wall time only, so
    // the wall-clock upper bound is checked on the median; the exact bound, every copy within one
    // window of the delay, is checked in sim time on the run's record.
    let mut one_way: Vec<f64> = rtts.iter().map(|r| r / 2.0).collect();
    one_way.sort_by(f64::total_cmp);
    assert!(
        one_way[0] >= delay_ms - 0.03,
        "a one-way time below the link's {delay_ms} ms delay: {rtts:?}"
    );
    let median = one_way[one_way.len() / 2];
    common::assert_if_kept_pace(
        &summary,
        median <= delay_ms + window_ms + 0.5,
        &format!(
            "median one-way {median} ms for a {delay_ms} ms link, W = {window_ms} ms: {rtts:?}"
        ),
    );
    let r = Record::read(&out).unwrap();
    let delivered: Vec<f64> = r
        .packets
        .iter()
        .filter(|p| p.outcome == Outcome::Delivered)
        .map(|p| (p.end_s - p.t_s) * 1e3)
        .collect();
    assert!(
        delivered.len() >= 16,
        "ping's requests and replies: {delivered:?}"
    );
    assert!(
        delivered
            .iter()
            .all(|&d| d >= delay_ms - 1e-6 && d <= delay_ms + window_ms + 1e-6),
        "sim-time delays (ms) outside [{delay_ms}, {}]: {delivered:?}",
        delay_ms + window_ms
    );
    assert_balanced(&summary["network"]);
}

/// The ROS 2 Python environment (`.ros`, docs/src/reference/ros.md, "Set-up without a ROS 2
/// installation"): created if missing. Idempotent.
fn ros_python() -> PathBuf {
    let venv = repo(".ros");
    let python = venv.join("bin/python");
    let ready = || {
        Command::new(&python)
            .args(["-c", "import rclpy, std_msgs"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !ready() {
        let ok = Command::new("python3")
            .args(["-m", "venv", venv.to_str().unwrap()])
            .status()
            .unwrap()
            .success()
            && Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "-q",
                    "ros-jazzy-rclpy[fastrtps]",
                    "ros-jazzy-std-msgs",
                ])
                .status()
                .unwrap()
                .success();
        assert!(
            ok && ready(),
            "cannot set up the ROS 2 Python environment in {}",
            venv.display()
        );
    }
    python
}

#[test]
fn ros2_talker_and_listener_in_two_vehicles_talk_only_through_the_coordinator() {
    let _serial = require_root();
    let python = ros_python();
    let names = ["rsa", "rsb"];
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &names,
        68,
        30.0,
        10.0,
        "network: {capture: tun}\n",
    );
    let out = dir.path().join("out");
    let talker = r#"
import rclpy, time
from std_msgs.msg import String
rclpy.init()
n = rclpy.create_node("talker")
p = n.create_publisher(String, "chatter", 10)
end = time.time() + 14
i = 0
while time.time() < end:
    m = String(); m.data = f"hello {i}"; p.publish(m); i += 1
    rclpy.spin_once(n, timeout_sec=0.1)
print("published", i)
"#;
    let listener = r#"
import rclpy, time
from std_msgs.msg import String
rclpy.init()
n = rclpy.create_node("listener")
got = []
n.create_subscription(String, "chatter", lambda m: got.append(m.data), 10)
end = time.time() + 18
while time.time() < end:
    rclpy.spin_once(n, timeout_sec=0.1)
print("received", len(got))
"#;
    let py = python.to_str().unwrap().to_owned();
    let received = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let r = received.clone();
    let summary = live_run(&s, &out, None, move || {
        let env = [
            ("ROS_DOMAIN_ID", "68"),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
        ];
        let l = Command::new(COSIM)
            .args(["exec", "rsb", "--", &py, "-c", listener])
            .envs(env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(1));
        let t = Command::new(COSIM)
            .args(["exec", "rsa", "--", &py, "-c", talker])
            .envs(env)
            .output()
            .unwrap();
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        let o = l.wait_with_output().unwrap();
        *r.lock().unwrap() =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    });
    let text = received.lock().unwrap().clone();
    let n: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("received ")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("listener said: {text}"));
    eprintln!(
        "ROS 2 listener received {n} messages; ledger {}",
        summary["network"]
    );
    assert!(
        n >= 20,
        "the listener heard the talker through the coordinator: {n}"
    );
    assert_balanced(&summary["network"]);
}

#[test]
fn ros2_listener_behind_terrain_under_rf_hears_nothing_and_resumes_in_sight() {
    let _serial = require_root();
    let python = ros_python();
    let dir = tempfile::tempdir().unwrap();
    // A ridge along y = 0 (|x| <= 60 m plus rounded ends, crest 15 m) between the stationary
    // listener at (0, 40) and the talker, which drives along y = -40 from x = -490 to x = 0 and
    // back at 20 m/s. The straight path crosses y = 0 at x = x_talker / 2, so it is blocked while
    // the talker is east of about x = -146: from t ≈ 17 s to t ≈ 32 s. 5 dB per metre of rock
    // puts the rf link far below its lowest rate's SNR threshold while blocked; in sight, 30 dBm
    // keeps it well above it over the whole 500 m.
    let yaml = r#"name: rfblock
window_ms: 10
duration_s: 44
real_time_factor: 1
seed: 5
world:
  origin: {lat_deg: 39.95, lon_deg: -75.16}
  terrain:
    kind: procedural
    size_m: [1000, 400]
    cell_size_m: 2
    base_height_m: 0
    ridges:
      - {from: [-60, 0], to: [60, 0], crest_height_m: 15, width_m: 30}
  penetration_loss_db_per_m: 5
vehicles:
  - name: rft
    addresses: [10.70.0.1/24]
    start: {x: -490, y: -40, z: 1.5, heading_deg: 90}
    motion: {kind: patrol, speed_mps: 20, max_turn_rate_deg_s: 180, max_depth_rate_mps: 1, waypoints: [[0, -40, 1.5], [-490, -40, 1.5]]}
  - name: rfl
    addresses: [10.70.0.2/24]
    start: {x: 0, y: 40, z: 1.5}
    motion: {kind: stationary}
links:
  default: {model: rf, frequency_ghz: 2.4, tx_power_dbm: 30, path_loss_exponent: 2.7, reference_distance_m: 1, noise_floor_dbm: -94}
network: {capture: tun}
"#;
    let s = dir.path().join("scenario.yaml");
    std::fs::write(&s, yaml).unwrap();
    let out = dir.path().join("out");
    let talker = r#"
import rclpy, time
from std_msgs.msg import String
rclpy.init()
n = rclpy.create_node("talker")
p = n.create_publisher(String, "chatter", 10)
end = time.time() + 41
i = 0
while time.time() < end:
    m = String(); m.data = str(i); p.publish(m); i += 1
    rclpy.spin_once(n, timeout_sec=0.1)
"#;
    let listener = r#"
import rclpy, time
from std_msgs.msg import String
rclpy.init()
n = rclpy.create_node("listener")
t0 = time.time()
n.create_subscription(String, "chatter", lambda m: print(f"{time.time() - t0:.2f}", flush=True), 10)
while time.time() < t0 + 42:
    rclpy.spin_once(n, timeout_sec=0.1)
"#;
    let py = python.to_str().unwrap().to_owned();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let h = heard.clone();
    let summary = live_run(&s, &out, None, move || {
        let env = [
            ("ROS_DOMAIN_ID", "70"),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
        ];
        let l = Command::new(COSIM)
            .args(["exec", "rfl", "--", &py, "-c", listener])
            .envs(env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t = Command::new(COSIM)
            .args(["exec", "rft", "--", &py, "-c", talker])
            .envs(env)
            .output()
            .unwrap();
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        let o = l.wait_with_output().unwrap();
        *h.lock().unwrap() = String::from_utf8_lossy(&o.stdout).into_owned();
    });
    let times: Vec<f64> = heard
        .lock()
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    let count = |a: f64, b: f64| times.iter().filter(|&&t| t >= a && t < b).count();
    let (before, blocked, after) = (count(0.0, 16.0), count(19.0, 30.0), count(34.0, 50.0));
    eprintln!("listener heard {} messages: {before} in sight (0-16 s), {blocked} behind the ridge (19-30 s), {after} back in sight (34-42 s); ledger {}", times.len(), summary["network"]);
    assert!(before >= 30, "heard the talker while in sight: {before}");
    assert_eq!(blocked, 0, "nothing crosses the ridge");
    assert!(after >= 10, "hears it again once in sight: {after}");
    assert!(
        summary["network"]["drops"]["out of range"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{}",
        summary["network"]
    );
    assert_balanced(&summary["network"]);
}

/// Forwards each BEGIN to the network coordinator after a known jitter (0 to `max` µs, a fixed
/// pseudo-random sequence), as a loaded host or a network path would.
struct JitterProxy {
    to: zmq::Client,
    state: u64,
    max_us: u64,
    delays_us: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
}

impl Service for JitterProxy {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        Box::pin(async move {
            self.state = self
                .state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let us = (self.state >> 33) % (self.max_us + 1);
            self.delays_us.lock().unwrap().push(us);
            netsim_cosim::io::os::timer::sleep_until(Instant::now() + Duration::from_micros(us))
                .await;
            self.to
                .request(request)
                .await
                .map_err(|e| netsim_cosim::lockstep::TransportError::Failed(e.to_string()))
        })
    }
}

#[test]
fn late_begins_to_a_network_coordinator_of_its_own_never_release_a_packet_early() {
    let _serial = require_root();
    let names = ["jta", "jtb"];
    let dir = tempfile::tempdir().unwrap();
    let (delay_ms, window_ms, jitter_us) = (20.0, 5.0, 4_000);
    let s = scenario(
        dir.path(),
        &names,
        71,
        9.0,
        window_ms,
        &format!("links:\n  default: {{model: ideal, rate_bps: 1.0e9, delay_ms: {delay_ms}}}\nnetwork: {{capture: tun}}\n"),
    );
    let free = || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let (coordinator_ep, proxy_ep) = (free(), free());
    let net_out = dir.path().join("net");
    let mut coordinator = Command::new(env!("CARGO_BIN_EXE_network_coordinator"))
        .arg(&s)
        .args(["--bind", &coordinator_ep, "--idle-timeout-s", "20", "--out"])
        .arg(&net_out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let loaded = config::load(&s).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let delays = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let one_way = std::sync::Arc::new(std::sync::Mutex::new(Vec::<f64>::new()));
    let (d, ow) = (delays.clone(), one_way.clone());
    let report = rt.block_on(async move {
        let to = zmq::Client::connect_within(&coordinator_ep, Duration::from_secs(10))
            .await
            .unwrap();
        let mut proxy = JitterProxy {
            to,
            state: 7,
            max_us: jitter_us,
            delays_us: d,
        };
        let bind = proxy_ep.clone();
        tokio::spawn(async move { zmq::serve(&bind, &mut proxy, Duration::from_secs(20)).await });
        let proxy: netsim_cosim::config::CoordinatorEndpoint = proxy_ep.parse().unwrap();
        let c = coord::physics_coordinator(&loaded, Some(&proxy), None)
            .await
            .unwrap();
        // One-way times of timestamped UDP datagrams (both namespaces read one system clock).
        let helper = tokio::task::spawn_blocking(move || {
            wait_for_namespaces(&["jta", "jtb"], Duration::from_secs(10));
            let receiver = Command::new(COSIM)
                .args(["exec", "jtb", "--", "python3", "-c"])
                .arg(
                    "import socket,time\n\
                     s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(('10.71.0.2',9000)); s.settimeout(4)\n\
                     try:\n  while True:\n    b=s.recv(64); print((time.time_ns()-int(b))/1e6, flush=True)\n\
                     except socket.timeout: pass\n",
                )
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(300));
            let sent = exec(
                "jta",
                &["python3", "-c",
                  "import socket,time\n\
                   s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
                   for i in range(150):\n  s.sendto(str(time.time_ns()).encode(),('10.71.0.2',9000)); time.sleep(0.0237)\n"],
            );
            assert!(sent.status.success(), "{sent:?}");
            let got = receiver.wait_with_output().unwrap();
            *ow.lock().unwrap() = String::from_utf8_lossy(&got.stdout)
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
        });
        let report = c.run(std::future::pending()).await.unwrap();
        helper.await.unwrap();
        report
    });
    let status = coordinator.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(coordinator.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "network_coordinator: {stderr}");
    let delays = delays.lock().unwrap().clone();
    let mut one_way = one_way.lock().unwrap().clone();
    one_way.sort_by(f64::total_cmp);
    let late = delays.iter().filter(|&&us| us > 1_000).count();
    eprintln!(
        "{} BEGINs late by 0–{jitter_us} µs ({late} by more than 1 ms); one-way times (ms) over a \
         {delay_ms} ms link, W = {window_ms} ms: min {:.3} median {:.3} max {:.3}; slipped {:.3} s",
        delays.len(),
        one_way[0],
        one_way[one_way.len() / 2],
        one_way[one_way.len() - 1],
        report.slipped_seconds
    );
    assert!(late > delays.len() / 2, "the jitter was applied");
    assert!(one_way.len() >= 140, "{} datagrams arrived", one_way.len());
    assert!(
        one_way[0] >= delay_ms,
        "a datagram arrived {:.3} ms early: {one_way:?}",
        delay_ms - one_way[0]
    );
    let net: serde_json::Value =
        serde_json::from_slice(&std::fs::read(net_out.join("network_summary.json")).unwrap())
            .unwrap();
    assert_balanced(&net);
    assert!(!tun_up(&names));
}

#[test]
fn packets_sent_while_the_programs_stop_end_as_after_end_and_the_run_ends_at_its_last_window() {
    let _serial = require_root();
    let names = ["aea", "aeb"];
    let dir = tempfile::tempdir().unwrap();
    // A program in aea that sends five 100-byte datagrams to aeb only once it is told to stop
    // (SIGINT at the end of the run), 20 ms apart, then exits.
    let script = dir.path().join("at_stop.py");
    std::fs::write(
        &script,
        format!(
            "import signal, socket, sys, time\n\
             s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
             def stop(*_):\n    for _ in range(5):\n        s.sendto(b'x' * 100, ('{}', 9))\n        time.sleep(0.02)\n    sys.exit(0)\n\
             signal.signal(signal.SIGINT, stop)\n\
             print('ready', flush=True)\n\
             while True:\n    time.sleep(1)\n",
            ip_of(76, 1)
        ),
    )
    .unwrap();
    let s = scenario(
        dir.path(),
        &names,
        76,
        1.0,
        5.0,
        &format!(
            "links:\n  default: {{model: ideal, rate_bps: 1.0e6, delay_ms: 1}}\nnetwork: {{capture: tun}}\n\
             programs:\n  - {{name: at-stop, vehicle: aea, command: [python3, \"{}\"]}}\n",
            script.display()
        ),
    );
    let out = dir.path().join("out");
    let summary = live_run(&s, &out, None, || {});
    assert_eq!(summary["sim_seconds"], 1.0);
    let net = &summary["network"];
    assert_balanced(net);
    let r = Record::read(&out).unwrap();
    let after: Vec<_> = r
        .packets
        .iter()
        .filter(|p| p.src == "aea" && p.dst.as_deref() == Some("aeb") && p.bytes == 128)
        .collect();
    assert_eq!(after.len(), 5, "{:?}", r.packets);
    for p in &after {
        assert_eq!(p.reason.as_deref(), Some("after end"), "{p:?}");
        assert!(p.t_s >= 1.0 && p.end_s == p.t_s, "{p:?}");
    }
    assert!(
        net["drops"]["after end"].as_u64() >= Some(5),
        "the ledger counts them: {net}"
    );
    // Every copy that ended as `shutdown` was in flight at the end of the last window.
    for p in r
        .packets
        .iter()
        .filter(|p| p.reason.as_deref() == Some("shutdown"))
    {
        assert!(p.t_s < 1.0 && p.end_s == 1.0, "{p:?}");
    }
    // The report's run ends at the last window, not at the latest capture.
    let files = netsim_cosim::output::report::generate(&out).unwrap();
    assert_eq!(files.analysis.end_s, 1.0);
}
