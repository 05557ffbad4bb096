//! Vehicles in a podman container and in an existing network namespace
//! (`vehicles[].attach`): their traffic with a vehicle in a namespace of the run's own crosses
//! the simulated rf link through line of sight, behind a ridge and out of range; afterwards the
//! container runs on with only its own interfaces, and the namespace stays. Needs root, podman
//! (with runc), Debian's static busybox, socat and tshark (`scripts/setup --test`).
use crate::common;
use common::phases::assert_copies_follow_the_phases;
use common::{require_root, require_tools};
use netsim_cosim::output::{
    record::Record,
    schema::{Outcome, ProgramEnd},
};
use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
const SETUP: &str = "scripts/setup --test installs it";
/// The local image: `FROM scratch` and Debian's static busybox.
const IMAGE: &str = "localhost/netsim-test-busybox";
const BUSYBOX: &str = "/bin/busybox";

fn run(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// This machine's host name.
fn host_name() -> String {
    text(&run(Command::new(BUSYBOX).arg("hostname")))
        .trim()
        .to_owned()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The tests' busybox image under a tag of their own, built each time (from podman's cache
/// when it has it), so that an image of the same name built otherwise never stands in for it.
fn busybox_image() {
    let ctx = tempfile::tempdir().unwrap();
    std::fs::copy(BUSYBOX, ctx.path().join("busybox")).unwrap();
    std::fs::write(
        ctx.path().join("Containerfile"),
        "FROM scratch\nCOPY busybox /bin/busybox\nCMD [\"/bin/busybox\", \"sleep\", \"1000000\"]\n",
    )
    .unwrap();
    run(common::podman()
        .args(["build", "-q", "-t", IMAGE])
        .arg(ctx.path()));
}

/// `cosim run scenario --out out`, which must fail: the line of its output naming `vehicle`.
fn refused(scenario: &Path, out: &Path, vehicle: &str) -> String {
    let o = Command::new(COSIM)
        .args(["run", scenario.to_str().unwrap(), "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    stderr
        .lines()
        .find(|l| l.contains(vehicle))
        .unwrap_or_else(|| panic!("no line names the vehicle: {stderr}"))
        .to_owned()
}

/// What a test made, removed when it ends (also when it fails).
#[derive(Default)]
struct Made {
    container: Option<String>,
    netns: Option<String>,
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(c) = &self.container {
            let _ = common::podman().args(["rm", "-f", "-t", "0", c]).output();
        }
        if let Some(n) = &self.netns {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

/// A running container of the busybox image with no network of its own (only `lo`).
fn start_container(made: &mut Made, name: &str) {
    busybox_image();
    let _ = common::podman()
        .args(["rm", "-f", "-t", "0", name])
        .output();
    made.container = Some(name.to_owned());
    run(common::podman()
        .args(["run", "-d", "--name", name, "--network", "none"])
        .args(common::PODMAN_LIMITS)
        .arg(IMAGE));
}

/// `ip ARGS` inside the attached namespace (for the container, with its own busybox).
fn ip_inside(made: &Made, args: &[&str]) -> String {
    let o = match (&made.container, &made.netns) {
        (Some(c), _) => run(common::podman().args(["exec", c, BUSYBOX, "ip"]).args(args)),
        (None, Some(n)) => run(Command::new("ip").args(["-n", n]).args(args)),
        (None, None) => unreachable!(),
    };
    text(&o)
}

/// The scenario: vehicle `att` (attached as `attach`) stationary at (0, 40) north of an east-west
/// ridge, vehicle `own` (in a namespace the run creates) driving east along y = -40 at 40 m/s
/// from x = -300. The path between them is in sight at first, behind the ridge while `own` is
/// within about 150 m of x = 0, in sight again and then longer than the radio's range (about
/// 390 m at 25 dBm). Both ping each other every 0.2 s; `att` sends DNS queries (UDP) to `own`,
/// `own` sends UDP datagrams to `att`'s port 5000; a program of `att` tells its host name and
/// whether it sees the host's file system.
fn scenario(dir: &Path, att: &str, own: &str, net: u8, attach: &str) -> PathBuf {
    let (a, b) = (format!("10.{net}.0.1"), format!("10.{net}.0.2"));
    let yaml = format!(
        r#"name: attach{net}
window_ms: 10
duration_s: 22
real_time_factor: 1
seed: 9
world:
  origin: {{lat_deg: 39.95, lon_deg: -75.16}}
  terrain:
    kind: procedural
    size_m: [1400, 400]
    cell_size_m: 2
    base_height_m: 0
    ridges:
      - {{from: [-60, 0], to: [60, 0], crest_height_m: 15, width_m: 30}}
  penetration_loss_db_per_m: 5
vehicles:
  - name: {att}
    addresses: [{a}/24]
    start: {{x: 0, y: 40, z: 1.5}}
    motion: {{kind: stationary}}
    attach: {attach}
  - name: {own}
    addresses: [{b}/24]
    start: {{x: -300, y: -40, z: 1.5, heading_deg: 90}}
    motion: {{kind: patrol, speed_mps: 40, max_turn_rate_deg_s: 180, max_depth_rate_mps: 1, waypoints: [[650, -40, 1.5]]}}
links:
  default: {{model: rf, frequency_ghz: 2.4, tx_power_dbm: 25, path_loss_exponent: 2.7, reference_distance_m: 1, noise_floor_dbm: -94}}
network: {{capture: tun, pcap: true}}
programs:
  - name: att-ping
    vehicle: {att}
    command: [{BUSYBOX}, ping, -i, "0.2", {b}]
  - name: att-udp
    vehicle: {att}
    command: [{BUSYBOX}, sh, -c, "while :; do {BUSYBOX} timeout 1 {BUSYBOX} nslookup -type=a probe.test {b}; {BUSYBOX} sleep 0.2; done"]
  - name: att-where
    vehicle: {att}
    command: [{BUSYBOX}, sh, -c, "{BUSYBOX} hostname; if [ -e /usr ]; then echo host-fs; else echo own-fs; fi; exec {BUSYBOX} sleep 100"]
  - name: own-ping
    vehicle: {own}
    command: [ping, -i, "0.2", {a}]
  - name: own-udp
    vehicle: {own}
    command: "i=0; while :; do echo $i; i=$((i+1)); sleep 0.2; done | socat -u - UDP-SENDTO:{a}:5000"
"#
    );
    let p = dir.join("scenario.yaml");
    std::fs::write(&p, yaml).unwrap();
    p
}

/// Packets in `vehicle`'s pcap that the display filter `filter` matches.
fn pcap_count(out: &Path, vehicle: &str, filter: &str) -> usize {
    let pcap = out.join(format!("{vehicle}.pcap"));
    let o = run(Command::new("tshark").args(["-r", pcap.to_str().unwrap(), "-Y", filter]));
    text(&o).lines().count()
}

/// Runs the scenario with `att` attached as `attach` (its namespace prepared in `made`) and
/// checks the traffic, the phases, and what is left afterwards.
fn attached_vehicle_crosses_the_rf_link(
    made: &Made,
    att: &str,
    own: &str,
    net: u8,
    attach: &str,
    inside: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), att, own, net, attach);
    let out = dir.path().join("out");
    let links_before = ip_inside(made, &["-o", "link"]);
    let o = Command::new(COSIM)
        .args(["run", s.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cosim run: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (a, b) = (format!("10.{net}.0.1"), format!("10.{net}.0.2"));

    let r = Record::read(&out).unwrap();
    let summary = r
        .summary
        .as_ref()
        .expect("the record ends with the summary");
    let netw = &summary["network"];
    assert_eq!(netw["balanced"], true, "{netw}");
    for (src, dst) in [(att, own), (own, att)] {
        assert_copies_follow_the_phases(&r, src, dst);
    }
    // Both programs of each vehicle sent through the link the whole run, and were stopped by
    // the run (the stop signal reached the container's processes).
    assert_eq!(r.programs.len(), 5);
    for p in &r.programs {
        assert!(
            matches!(p.end, ProgramEnd::Stopped { .. }) && !p.leftovers_killed,
            "{} ran to the end and its stop signal ended it: {p:?}",
            p.name
        );
    }

    // The attached vehicle's programs ran where it lives.
    let whereabouts = std::fs::read_to_string(out.join("programs/att-where.stdout.log")).unwrap();
    assert_eq!(whereabouts, inside, "att-where: host name and file system");

    // The pcaps: what each vehicle sent and what reached it, ICMP and UDP both ways.
    let echo =
        |src: &str, dst: &str| format!("icmp.type == 8 && ip.src == {src} && ip.dst == {dst}");
    let reply =
        |src: &str, dst: &str| format!("icmp.type == 0 && ip.src == {src} && ip.dst == {dst}");
    for (vehicle, filter, at_least) in [
        (att, echo(&a, &b), 60),
        (own, echo(&a, &b), 20),
        (own, reply(&b, &a), 20),
        (att, reply(&b, &a), 20),
        (own, echo(&b, &a), 60),
        (att, echo(&b, &a), 20),
        (att, format!("dns && ip.src == {a} && ip.dst == {b}"), 10),
        (own, format!("dns && ip.src == {a} && ip.dst == {b}"), 5),
        (own, format!("udp.dstport == 5000 && ip.dst == {a}"), 60),
        (att, format!("udp.dstport == 5000 && ip.dst == {a}"), 20),
    ] {
        let n = pcap_count(&out, vehicle, &filter);
        assert!(
            n >= at_least,
            "{vehicle}.pcap: {n} packets of {filter:?}, expected at least {at_least}"
        );
    }
    // Each vehicle's pcap holds what it received: as many as the ledger delivered to it.
    let delivered_to = |v: &str| {
        r.packets
            .iter()
            .filter(|p| p.dst.as_deref() == Some(v) && p.outcome == Outcome::Delivered)
            .count()
    };
    for v in [att, own] {
        let received = pcap_count(
            &out,
            v,
            &format!("ip.dst == {}", if v == att { &a } else { &b }),
        );
        assert!(
            received >= delivered_to(v),
            "{v}.pcap holds every copy delivered to it ({} delivered, {received} in the pcap)",
            delivered_to(v)
        );
    }

    // Afterwards: the namespace holds exactly what it held before (no cosim0, no route).
    assert_eq!(ip_inside(made, &["-o", "link"]), links_before);
    assert_eq!(ip_inside(made, &["-4", "route"]).trim(), "");
    assert_eq!(ip_inside(made, &["-6", "route"]).trim(), "");
    assert!(
        !ip_inside(made, &["-o", "addr"]).contains(&a),
        "no address of the run is left"
    );
}

#[test]
fn a_podman_container_as_a_vehicle_talks_over_the_rf_link_and_keeps_running_untouched() {
    let _serial = require_root();
    require_tools(
        &["podman", "runc", "tshark", "socat", "ping", BUSYBOX],
        SETUP,
    );
    let mut made = Made::default();
    let name = format!("cosim-test-{}", std::process::id());
    start_container(&mut made, &name);
    let before = ip_inside(&made, &["-o", "link"]);
    let hostname = text(&run(common::podman().args([
        "container",
        "inspect",
        "-f",
        "{{.Config.Hostname}}",
        &name,
    ])));
    let hostname = hostname.trim();
    assert!(
        before.lines().count() == 1 && before.contains("lo"),
        "a container with --network none has only lo: {before}"
    );
    attached_vehicle_crosses_the_rf_link(
        &made,
        "ctra",
        "ctrb",
        91,
        &format!("{{container: {name}}}"),
        &format!("{hostname}\nown-fs\n"),
    );
    let running = text(&run(common::podman().args([
        "container",
        "inspect",
        "-f",
        "{{.State.Running}}",
        &name,
    ])));
    assert_eq!(running.trim(), "true", "the container still runs");
    assert_eq!(
        ip_inside(&made, &["-o", "link"]),
        before,
        "only its own interfaces"
    );
}

#[test]
fn an_existing_namespace_as_a_vehicle_talks_over_the_rf_link_and_stays() {
    let _serial = require_root();
    require_tools(&["tshark", "socat", "ping", BUSYBOX], SETUP);
    let mut made = Made::default();
    let name = format!("cosim-test-{}", std::process::id());
    made.netns = Some(name.clone());
    run(Command::new("ip").args(["netns", "add", &name]));
    run(Command::new("ip").args(["-n", &name, "link", "set", "lo", "up"]));
    attached_vehicle_crosses_the_rf_link(
        &made,
        "nsxa",
        "nsxb",
        92,
        &format!("{{netns: /run/netns/{name}}}"),
        &format!("{}\nhost-fs\n", host_name()),
    );
    assert!(
        Path::new("/run/netns").join(&name).exists(),
        "the namespace stays"
    );
}

#[test]
fn a_missing_or_stopped_container_or_namespace_is_one_line_naming_the_vehicle_and_nothing_is_left()
{
    let _serial = require_root();
    require_tools(&["podman", "runc"], SETUP);
    let mut made = Made::default();
    let stopped = format!("cosim-test-stopped-{}", std::process::id());
    start_container(&mut made, &stopped);
    run(common::podman().args(["stop", "-t", "0", &stopped]));
    let dir = tempfile::tempdir().unwrap();
    for (attach, says) in [
        (
            "{container: cosim-test-none}".to_owned(),
            "vehicle msa: container cosim-test-none (podman): podman container inspect cosim-test-none failed: ".to_owned(),
        ),
        (
            format!("{{container: {stopped}}}"),
            format!("vehicle msa: container {stopped} (podman): is not running"),
        ),
        (
            "{netns: /run/netns/cosim-test-none}".to_owned(),
            "vehicle msa: namespace /run/netns/cosim-test-none: cannot open /run/netns/cosim-test-none: No such file or directory".to_owned(),
        ),
        (
            "{netns: /proc/self/ns/net}".to_owned(),
            "vehicle msa: namespace /proc/self/ns/net: is the host's network namespace (the run's own)".to_owned(),
        ),
    ] {
        let s = scenario(dir.path(), "msa", "msb", 93, &attach);
        let line = refused(&s, &dir.path().join("out"), "msa");
        assert!(line.contains(&says), "{attach}: {line}");
        assert!(
            !Path::new("/run/netns/ncs-msb").exists(),
            "the namespace created for the other vehicle is removed"
        );
    }
}

/// An existing namespace that already has one of the vehicle's addresses, or a route the run
/// would add, is refused with a line naming the vehicle, the namespace and what is there, and is
/// left as it was.
#[test]
fn an_address_or_route_already_in_the_namespace_is_refused_and_left_alone() {
    let _serial = require_root();
    let mut made = Made::default();
    let name = format!("cosim-test-taken-{}", std::process::id());
    made.netns = Some(name.clone());
    run(Command::new("ip").args(["netns", "add", &name]));
    run(Command::new("ip").args(["-n", &name, "link", "set", "lo", "up"]));
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        "tka",
        "tkb",
        94,
        &format!("{{netns: /run/netns/{name}}}"),
    );
    let ns = format!("vehicle tka: namespace /run/netns/{name}: ");
    for (setup, undo, says) in [
        (
            vec!["addr", "add", "10.94.0.1/32", "dev", "lo"],
            vec!["addr", "del", "10.94.0.1/32", "dev", "lo"],
            "address 10.94.0.1 is there already, on interface lo",
        ),
        (
            vec!["route", "add", "default", "dev", "lo"],
            vec!["route", "del", "default", "dev", "lo"],
            "a route to default (dev lo) is there already",
        ),
        (
            vec!["route", "add", "10.94.0.0/24", "dev", "lo"],
            vec!["route", "del", "10.94.0.0/24", "dev", "lo"],
            "a route to 10.94.0.0/24 (dev lo) is there already",
        ),
    ] {
        run(Command::new("ip").args(["-n", &name]).args(&setup));
        let before = (
            ip_inside(&made, &["-o", "link"]),
            ip_inside(&made, &["-o", "addr"]),
            ip_inside(&made, &["route"]),
        );
        let line = refused(&s, &dir.path().join("out"), "tka");
        assert!(
            line.contains(&ns) && line.contains(says),
            "{setup:?}: {line}"
        );
        let after = (
            ip_inside(&made, &["-o", "link"]),
            ip_inside(&made, &["-o", "addr"]),
            ip_inside(&made, &["route"]),
        );
        assert_eq!(after, before, "the namespace is left as it was");
        run(Command::new("ip").args(["-n", &name]).args(&undo));
    }
}

/// The live side's shutdown takes its TUN out of an attached namespace at once, while the
/// process (and its runtime, whose reader tasks held the TUN) still runs.
#[test]
fn shutdown_takes_the_tun_out_of_an_attached_namespace_at_once() {
    let _serial = require_root();
    let mut made = Made::default();
    let name = format!("cosim-test-shut-{}", std::process::id());
    made.netns = Some(name.clone());
    run(Command::new("ip").args(["netns", "add", &name]));
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        "sha",
        "shb",
        95,
        &format!("{{netns: /run/netns/{name}}}"),
    );
    let before = ip_inside(&made, &["-o", "link"]);
    let loaded = netsim_cosim::config::load(&s).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let live = netsim_cosim::io::traffic::LiveNetwork::for_scenario(&loaded, None)
            .unwrap()
            .unwrap();
        assert!(ip_inside(&made, &["-o", "link"]).contains("cosim0"));
        assert!(ip_inside(&made, &["-o", "addr"]).contains("10.95.0.1/24"));
        live.shutdown();
        assert_eq!(ip_inside(&made, &["-o", "link"]), before);
        assert_eq!(ip_inside(&made, &["route"]).trim(), "");
        assert!(!Path::new("/run/netns/ncs-shb").exists());
        drop(live);
    });
}

/// `cosim exec VEHICLE --scenario FILE` enters the container a vehicle attaches to (its file
/// system too), and its exit code is the command's.
#[test]
fn cosim_exec_enters_the_container_of_an_attached_vehicle() {
    let _serial = require_root();
    require_tools(&["podman", "runc", BUSYBOX], SETUP);
    let mut made = Made::default();
    let name = format!("cosim-test-exec-{}", std::process::id());
    start_container(&mut made, &name);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        "exa",
        "exb",
        96,
        &format!("{{container: {name}}}"),
    );
    let exec = |script: &str| {
        Command::new(COSIM)
            .args(["exec", "exa", "--scenario", s.to_str().unwrap(), "--"])
            .args([BUSYBOX, "sh", "-c", script])
            .output()
            .unwrap()
    };
    let o = exec("/bin/busybox ls /; exit 3");
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let listing = text(&o);
    assert!(
        listing.contains("bin") && !listing.contains("usr"),
        "the container's own /: {listing}"
    );
}
