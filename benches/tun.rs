//! Live traffic through the network coordinator vs. the kernel's own path, in one run (root):
//! iperf3 TCP throughput, ping round-trip times, and 64-byte UDP packets/s, first between two
//! namespaces joined by a veth pair, then between two vehicles through the coordinator with
//! the embedded (ideal, 100 Gbit/s) network simulator: with `network.offload` false (the
//! simulator sees every wire packet) and true (a 64 KiB burst is one packet for it). The
//! targets: TCP ≥ 3 Gbit/s without, ≥ 0.5 of veth's with; 64-byte packets/s ≥ 0.5 of veth's;
//! added one-way latency p50 ≤ W + 100 µs.
//!
//! 64-byte UDP is measured twice, both times from an unthrottled sender: with 4 MiB socket
//! buffers (`iperf3 -w 4M`), what the path carries; and with the kernel's default buffers,
//! where the receiving socket also has to take each window's datagrams at once (a zero-delay
//! link releases what a window captured at the next window start), and overflows.
//!
//! The link's transmitter holds [`TX_QUEUE_PACKETS`] waiting, a network card's transmit queue
//! (`txqueuelen`), not the scenario's default of 64: a window's releases reach a TCP sender as a
//! bunch of acknowledgements, and the bursts it answers with (a 64 KiB burst is 45 wire
//! packets) would otherwise overflow a queue the benchmark does not mean to model: its rows
//! measure the path, and the ledger shows no drop the simulator decided.
//!
//! TCP is measured with the machine's congestion control and TCP buffer limits, and again with
//! 32 MiB limits and cubic set on the subnet's route in both namespaces (after the rest): a
//! flow through the lockstep has a round trip near 2 W, and with the kernel's default 4 MiB send
//! buffer it cannot keep the path full. Cubic set on the route, unlike one chosen with
//! `TCP_CONGESTION` on a host whose default is bbr, leaves the flow unpaced, so this second
//! figure is what each path carries when the sender's timers do not bound it. The TCP sender's
//! round trip (iperf3's, mean and minimum) is printed with it.
//!
//! The coordinator is measured as root, then as the user `nobody` in a user namespace of its
//! own (as `cosim run` goes on without root) beside root at the same priority (nice 0: a run
//! without root cannot raise it), and the two compared: TCP and packets/s within 5 %.
//!
//! `cargo bench --bench tun` as root (BENCH_SECONDS=3 by default per measurement; W via
//! BENCH_WINDOW_MS).
use netsim_cosim::config;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Packets the link's transmitter may hold waiting (`links.queue_packets`; module docs).
const TX_QUEUE_PACKETS: u32 = 1000;

/// `program` with `args`, at the nice value this process had before a coordinator raised its
/// threads' priority (the scenario's `nice`), as a run starts the vehicles' programs: iperf3 and
/// ping measure the path, not a sender that outranks everything else on the machine.
fn command(program: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args);
    netsim_cosim::io::os::timer::start_at_original_nice(&mut cmd);
    cmd
}

fn sh(args: &[&str]) -> String {
    let o = command(args[0], &args[1..]).output().expect("run");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn in_ns(ns: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec!["ip".to_string(), "netns".into(), "exec".into(), ns.into()];
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

fn run(v: Vec<String>) -> String {
    let a: Vec<&str> = v.iter().map(|s| s.as_str()).collect();
    sh(&a)
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Figures {
    tcp_bps: f64,
    /// The TCP sender's smoothed round trip, mean and minimum over the run (µs, iperf3's).
    tcp_rtt_us: (f64, f64),
    /// TCP with 32 MiB TCP buffer limits and cubic set on the route in both namespaces: what
    /// the path carries when the sender keeps a round trip's worth in flight, unpaced.
    tcp_deep_bps: f64,
    rtt_p50_us: f64,
    rtt_p99_us: f64,
    /// 64-byte datagrams/s received, with 4 MiB socket buffers.
    pps_64: f64,
    /// The same with the kernel's default socket buffers.
    pps_64_default: f64,
}

/// 64-byte IPv4 datagrams (20 IP + 8 UDP + 36 payload) received per second from an
/// unthrottled iperf3 sender in namespace `a`; `window` is iperf3's `-w` (socket buffers).
fn udp_64(a: &str, b_ip: &str, secs: &str, window: Option<&str>) -> f64 {
    let mut args = vec![
        "iperf3", "-c", b_ip, "-u", "-b", "0", "-l", "36", "-t", secs, "-J",
    ];
    if let Some(w) = window {
        args.extend(["-w", w]);
    }
    let udp: serde_json::Value = serde_json::from_str(&run(in_ns(a, &args))).unwrap_or_default();
    let sum = &udp["end"]["sum"];
    let received =
        sum["packets"].as_f64().unwrap_or(0.0) - sum["lost_packets"].as_f64().unwrap_or(0.0);
    received / sum["seconds"].as_f64().unwrap_or(1.0).max(1e-9)
}

/// Measures between namespace `a` and `b_ip` (in namespace `b`); they reach `subnet` through
/// their interfaces `devs`.
fn measure(a: &str, b: &str, b_ip: &str, subnet: &str, devs: [&str; 2], secs: u32) -> Figures {
    let mut server = command("ip", &["netns", "exec", b, "iperf3", "-s", "-B", b_ip])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let t = secs.to_string();
    let tcp = |extra: &[&str]| -> serde_json::Value {
        let args = [&["iperf3", "-c", b_ip, "-t", &t, "-J"][..], extra].concat();
        serde_json::from_str(&run(in_ns(a, &args))).unwrap_or_default()
    };
    let rate = |j: &serde_json::Value| {
        j["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .unwrap_or(0.0)
    };
    let plain = tcp(&[]);
    let tcp_bps = rate(&plain);
    let sender = &plain["end"]["streams"][0]["sender"];
    let us = |k: &str| sender[k].as_f64().unwrap_or(f64::NAN);
    let tcp_rtt_us = (us("mean_rtt"), us("min_rtt"));
    let pps_64 = udp_64(a, b_ip, &t, Some("4M"));
    let pps_64_default = udp_64(a, b_ip, &t, None);
    for (ns, dev) in [a, b].into_iter().zip(devs) {
        let limits = [
            "net.ipv4.tcp_wmem=4096 16384 33554432",
            "net.ipv4.tcp_rmem=4096 131072 33554432",
        ];
        run(in_ns(ns, &[&["sysctl", "-q", "-w"][..], &limits].concat()));
        let route = [
            "-n", ns, "route", "change", subnet, "dev", dev, "congctl", "cubic",
        ];
        let set = Command::new("ip").args(route).status();
        assert!(
            set.is_ok_and(|s| s.success()),
            "ip {} failed",
            route.join(" ")
        );
    }
    let tcp_deep_bps = rate(&tcp(&[]));
    let _ = server.kill();
    let _ = server.wait();
    let out = run(in_ns(
        a,
        &["ping", "-c", "300", "-i", "0.0033", "-W", "1", b_ip],
    ));
    let mut rtts: Vec<f64> = out
        .lines()
        .filter_map(|l| {
            l.split("time=")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .collect();
    rtts.sort_by(|x, y| x.total_cmp(y));
    let pct = |p: f64| {
        rtts.get(((rtts.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
            * 1000.0
    };
    Figures {
        tcp_bps,
        tcp_rtt_us,
        tcp_deep_bps,
        rtt_p50_us: pct(0.5),
        rtt_p99_us: pct(0.99),
        pps_64,
        pps_64_default,
    }
}

fn veth_baseline(secs: u32) -> Figures {
    let (a, b) = ("ncbench-a", "ncbench-b");
    for ns in [a, b] {
        let _ = sh(&["ip", "netns", "del", ns]);
        sh(&["ip", "netns", "add", ns]);
        sh(&["ip", "-n", ns, "link", "set", "lo", "up"]);
    }
    sh(&[
        "ip", "link", "add", "ncbv0", "netns", a, "type", "veth", "peer", "name", "ncbv1", "netns",
        b,
    ]);
    sh(&[
        "ip",
        "-n",
        a,
        "addr",
        "add",
        "10.250.0.1/24",
        "dev",
        "ncbv0",
    ]);
    sh(&[
        "ip",
        "-n",
        b,
        "addr",
        "add",
        "10.250.0.2/24",
        "dev",
        "ncbv1",
    ]);
    sh(&["ip", "-n", a, "link", "set", "ncbv0", "up"]);
    sh(&["ip", "-n", b, "link", "set", "ncbv1", "up"]);
    let f = measure(
        a,
        b,
        "10.250.0.2",
        "10.250.0.0/24",
        ["ncbv0", "ncbv1"],
        secs,
    );
    for ns in [a, b] {
        sh(&["ip", "netns", "del", ns]);
    }
    f
}

/// The coordinator's figures; `nice`: the scenario's `nice` (None: its default).
fn coordinator(dir: &Path, window_ms: f64, offload: bool, secs: u32, nice: Option<i32>) -> Figures {
    let duration = 4.0 * secs as f64 + 12.0;
    let y = format!(
        "name: bench\nwindow_ms: {window_ms}\nduration_s: {duration}\nreal_time_factor: 1\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  terrain: {{kind: procedural, size_m: [200, 200], cell_size_m: 10, base_height_m: -60}}\n\
         vehicles:\n\
         \x20 - {{name: bench1, addresses: [10.251.0.1/24], start: {{x: 0, y: 0, z: -10}}, motion: {{kind: stationary}}}}\n\
         \x20 - {{name: bench2, addresses: [10.251.0.2/24], start: {{x: 10, y: 0, z: -10}}, motion: {{kind: stationary}}}}\n\
         links:\n  default: {{model: ideal, rate_bps: 1.0e11, delay_ms: 0}}\n  queue_packets: {TX_QUEUE_PACKETS}\n\
         network: {{capture: tun, offload: {offload}, queue_limit: 65536, max_hold_windows: 1000}}\n"
    );
    let y = match nice {
        Some(n) => format!("{y}nice: {n}\n"),
        None => y,
    };
    let path = dir.join("bench.yaml");
    std::fs::write(&path, y).unwrap();
    let loaded = config::load(&path).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = netsim_cosim::coord::physics_coordinator(&loaded, None, None).await.unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let m = tokio::task::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(300));
            let f = measure(
                "ncs-bench1",
                "ncs-bench2",
                "10.251.0.2",
                "10.251.0.0/24",
                ["cosim0", "cosim0"],
                secs,
            );
            let _ = tx.send(());
            f
        });
        let report = c.run(async { let _ = rx.await; }).await.unwrap();
        if let Some(n) = &report.network {
            println!("    ledger: captured {} delivered {} dropped {} ({:?}) in flight at the end {} balanced {}", n.captured, n.delivered, n.dropped, n.drops, n.in_flight, n.balanced);
        }
        m.await.unwrap()
    })
}

fn print(name: &str, f: &Figures) {
    println!(
        "  {name:<34} TCP {:>8.1} Mbit/s   ping RTT p50 {:>6.0} µs  p99 {:>6.0} µs   64-byte UDP {:>7.0} packets/s ({:>7.0} with default buffers)",
        f.tcp_bps / 1e6,
        f.rtt_p50_us,
        f.rtt_p99_us,
        f.pps_64,
        f.pps_64_default
    );
    println!(
        "  {:<34} TCP sender's round trip mean {:>5.0} µs, min {:>5.0} µs; unpaced cubic, 32 MiB buffers {:>8.1} Mbit/s",
        "",
        f.tcp_rtt_us.0,
        f.tcp_rtt_us.1,
        f.tcp_deep_bps / 1e6
    );
}

/// Set in the unprivileged copy of this bench that measures the coordinator without root.
const UNPRIVILEGED: &str = "BENCH_TUN_UNPRIVILEGED";

/// The coordinator's figures (offload off, on) as the unprivileged user `nobody`: a copy of this
/// bench, run as nobody, goes on in a user namespace of its own as `cosim run` does.
fn without_root(secs: u32, window_ms: f64) -> Result<[Figures; 2], String> {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let exe = dir.path().join("bench-tun");
    std::fs::copy(std::env::current_exe().map_err(|e| e.to_string())?, &exe)
        .map_err(|e| e.to_string())?;
    for p in [dir.path(), exe.as_path()] {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    let o = Command::new(&exe)
        .env(UNPRIVILEGED, "1")
        // The build environment's preloaded library may be where nobody cannot read it.
        .env_remove("LD_PRELOAD")
        .env("BENCH_SECONDS", secs.to_string())
        .env("BENCH_WINDOW_MS", window_ms.to_string())
        .uid(65534)
        .gid(65534)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&o.stdout);
    let figures: Vec<Figures> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l.strip_prefix("figures ")?).ok())
        .collect();
    for l in text.lines().filter(|l| !l.starts_with("figures ")) {
        println!("{l}");
    }
    <[Figures; 2]>::try_from(figures)
        .map_err(|_| format!("the unprivileged bench ended with {:?}", o.status))
}

fn main() {
    let secs: u32 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let window_ms: f64 = std::env::var("BENCH_WINDOW_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    if std::env::var_os(UNPRIVILEGED).is_some() {
        // The copy run as nobody: before any thread, into a user namespace of its own.
        if let Err(refusal) = netsim_cosim::io::os::userns::enter() {
            eprintln!("bench tun without root: {refusal}");
            std::process::exit(1);
        }
        let dir = tempfile::tempdir().unwrap();
        for offload in [false, true] {
            let f = coordinator(dir.path(), window_ms, offload, secs, Some(0));
            println!("figures {}", serde_json::to_string(&f).unwrap());
        }
        return;
    }
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("bench tun: run it as root (it measures the kernel's veth pair as root, and the coordinator both as root and, as the user nobody, without)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    println!("live traffic, {secs} s per measurement, W = {window_ms} ms, real_time_factor 1");
    let veth = veth_baseline(secs);
    print("kernel veth pair", &veth);
    for offload in [false, true] {
        let f = coordinator(dir.path(), window_ms, offload, secs, None);
        print(
            if offload {
                "coordinator, offload on (bursts)"
            } else {
                "coordinator, offload off (packets)"
            },
            &f,
        );
        println!(
            "    ratio to veth: TCP {:.3} ({:.3} unpaced cubic, 32 MiB), packets/s {:.3} ({:.3} with default buffers); added one-way latency p50 ≈ {:.0} µs (RTT/2 minus veth's; target ≤ W + 100 µs = {:.0} µs)",
            f.tcp_bps / veth.tcp_bps.max(1.0),
            f.tcp_deep_bps / veth.tcp_deep_bps.max(1.0),
            f.pps_64 / veth.pps_64.max(1.0),
            f.pps_64_default / veth.pps_64_default.max(1.0),
            (f.rtt_p50_us - veth.rtt_p50_us) / 2.0,
            window_ms * 1000.0 + 100.0
        );
    }
    // A run without root cannot raise its threads' priority (the scenario's `nice`): the
    // comparison is with root at the same nice value, 0.
    println!("root at nice 0 (the priority a run without root has):");
    let mut as_root = Vec::new();
    for offload in [false, true] {
        let f = coordinator(dir.path(), window_ms, offload, secs, Some(0));
        print(
            if offload {
                "coordinator, offload on, nice 0"
            } else {
                "coordinator, offload off, nice 0"
            },
            &f,
        );
        as_root.push(f);
    }
    println!("without root (the user nobody, in a user namespace of its own, nice 0):");
    match without_root(secs, window_ms) {
        Ok(figures) => {
            for (offload, (f, root)) in figures.iter().zip(&as_root).enumerate() {
                print(
                    if offload == 1 {
                        "coordinator, offload on, no root"
                    } else {
                        "coordinator, offload off, no root"
                    },
                    f,
                );
                println!(
                    "    ratio to root: TCP {:.3}, packets/s {:.3} ({:.3} with default buffers), ping RTT p50 {:.3} (target: TCP and packets/s within 5 %)",
                    f.tcp_bps / root.tcp_bps.max(1.0),
                    f.pps_64 / root.pps_64.max(1.0),
                    f.pps_64_default / root.pps_64_default.max(1.0),
                    f.rtt_p50_us / root.rtt_p50_us.max(1.0)
                );
            }
        }
        Err(e) => println!("  not measured: {e}"),
    }
}
