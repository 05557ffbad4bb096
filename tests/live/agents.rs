//! Vehicles on more than one machine, across a simulated LAN (needs root: network namespaces,
//! a bridge, TUN devices; iperf3 and tshark from `scripts/setup --test`, rclpy from `.ros`).
//! Three "hosts" are network namespaces joined by a bridge ([`common::lan`]); the LAN's latency
//! of 0.2 ms ± 0.05 ms each way is added by a relay inside each agent's host, which the agent
//! connects to instead of the coordinator. The first tests show the LAN itself; the others run
//! the network coordinator (`cosim run`) in host 0 and a capture agent (`cosim agent`) in each
//! of hosts 1 (`hostb`) and 2 (`hostc`), two vehicles on each host, and show the traffic, the
//! records, the errors and that nothing is left on any host.

use crate::{common, ros_common};

use common::{
    lan::{enter_netns, netns_path, Lan, Relay},
    phases::assert_copies_follow_the_phases,
    require_root,
};
use netsim_cosim::output::{record::Record, soak::network_check, summary::RunReport};
use std::{
    collections::BTreeSet,
    io::{Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    os::unix::fs::{MetadataExt, PermissionsExt},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
const STATE_DIR: &str = "/run/netsim_cosim";

// ---------------------------------------------------------------------------------------------
// The simulated LAN itself.

/// A TCP echo server inside one host, until dropped.
struct Echo {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Echo {
    fn start(lan: &Lan, host: usize, port: u16) -> Echo {
        let addr = SocketAddr::new(lan.address(host).into(), port);
        let ns = lan.host(host).netns().to_owned();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                enter_netns(&ns).unwrap();
                let l = TcpListener::bind(addr).unwrap();
                l.set_nonblocking(true).unwrap();
                tx.send(()).unwrap();
                let mut conns: Vec<(TcpStream, JoinHandle<()>)> = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    match l.accept() {
                        Ok((s, _)) => {
                            s.set_nonblocking(false).unwrap();
                            s.set_nodelay(true).unwrap();
                            let mut r = s.try_clone().unwrap();
                            let t = std::thread::spawn(move || {
                                let mut buf = [0u8; 4096];
                                while let Ok(n @ 1..) = r.read(&mut buf) {
                                    if r.write_all(&buf[..n]).is_err() {
                                        break;
                                    }
                                }
                            });
                            conns.push((s, t));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
                for (s, t) in conns {
                    let _ = s.shutdown(Shutdown::Both);
                    let _ = t.join();
                }
            })
        };
        rx.recv().unwrap();
        Echo {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `n` round trips of a 64-byte message on `s`, in ms, sorted.
fn round_trips(s: &mut TcpStream, n: usize) -> Vec<f64> {
    let msg = [0x5au8; 64];
    let mut back = [0u8; 64];
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            s.write_all(&msg).unwrap();
            s.read_exact(&mut back).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// One process as /proc shows it.
struct Proc {
    pid: u32,
    ppid: u32,
    /// Start time, clock ticks after boot: with the pid, the process.
    start: u64,
    netns: Option<u64>,
    cmd: String,
}

impl Proc {
    fn show(&self) -> String {
        format!("{} {}", self.pid, self.cmd)
    }
}

/// Every process now but zombies and this test.
fn procs() -> Vec<Proc> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let f: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
            if pid == me || f.first() == Some(&"Z") {
                return None;
            }
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            Some(Proc {
                pid,
                ppid: f.get(1)?.parse().ok()?,
                start: f.get(19)?.parse().ok()?,
                netns: std::fs::metadata(format!("/proc/{pid}/ns/net"))
                    .ok()
                    .map(|m| m.ino()),
                cmd: String::from_utf8_lossy(&cmd)
                    .trim_end_matches('\0')
                    .replace('\0', " "),
            })
        })
        .collect()
}

/// Clock ticks since boot now, as a process's start time counts them.
fn ticks_now() -> u64 {
    let up: f64 = std::fs::read_to_string("/proc/uptime")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // SAFETY: sysconf has no memory-safety preconditions.
    (up * unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64) as u64
}

/// The inode of every named network namespace, with its name.
fn named_netns() -> std::collections::BTreeMap<u64, String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let ino = std::fs::metadata(e.path()).ok()?.ino();
                    Some((ino, e.file_name().to_string_lossy().into_owned()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Links of the machine's own network namespace.
fn host_links() -> BTreeSet<String> {
    std::fs::read_dir("/sys/class/net")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// What is left of a Lan dropped at `dropped` (clock ticks after boot): its namespaces' files,
/// processes in its namespaces (by the inodes noted while it lived; an inode the kernel gave
/// to a namespace made since has another name, or processes started after the drop), links
/// that appeared on the machine.
fn lan_leftovers(
    names: &[String],
    inodes: &BTreeSet<u64>,
    links: &BTreeSet<String>,
    dropped: u64,
) -> Vec<String> {
    let mut left: Vec<String> = names
        .iter()
        .filter(|n| netns_path(n).exists())
        .map(|n| format!("namespace {n}"))
        .collect();
    let named = named_netns();
    left.extend(
        procs()
            .into_iter()
            .filter(|p| {
                p.netns
                    .is_some_and(|i| inodes.contains(&i) && !named.contains_key(&i))
                    && p.start <= dropped
            })
            .map(|p| format!("process {}", p.show())),
    );
    left.extend(
        host_links()
            .difference(links)
            .map(|l| format!("link {l} on the machine")),
    );
    left
}

fn netns_inodes(names: &[String]) -> BTreeSet<u64> {
    names
        .iter()
        .filter_map(|n| std::fs::metadata(netns_path(n)).ok().map(|m| m.ino()))
        .collect()
}

#[test]
fn lan_relay_adds_the_lans_latency_each_way_a_cut_silences_a_host_and_nothing_is_left() {
    let _serial = require_root();
    let links_before = host_links();
    let lan = Lan::new(2);
    let names = lan.namespaces();
    let inodes = netns_inodes(&names);
    assert_eq!(inodes.len(), 3, "two hosts and the bridge: {names:?}");

    // Each host has its address on its veth, and reaches the other over the bridge.
    let o = lan
        .host(1)
        .command("ip")
        .args(["-o", "-4", "addr", "show", "dev", "lan0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("{}/24", lan.address(1))), "{text}");
    let ping = |from: usize, to: usize| {
        lan.host(from)
            .command("ping")
            .args(["-c", "1", "-W", "1", &lan.address(to).to_string()])
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(ping(0, 1) && ping(1, 0), "the hosts reach each other");

    // An echo server in host 1; a client in host 0 straight across the bridge, and through a
    // relay in host 0 adding 0.2 ms ± 0.05 ms each way.
    let echo = Echo::start(&lan, 1, 7000);
    let server = SocketAddr::new(lan.address(1).into(), 7000);
    let relay = Relay::start(&lan, 0, "127.0.0.1:0".parse().unwrap(), server, 200, 50).unwrap();
    let local = relay.local();
    let (direct, relayed, mut kept) = lan.host(0).run(move || {
        let mut d = TcpStream::connect(server).unwrap();
        d.set_nodelay(true).unwrap();
        round_trips(&mut d, 50);
        let direct = round_trips(&mut d, 300);
        let mut r = TcpStream::connect(local).unwrap();
        r.set_nodelay(true).unwrap();
        round_trips(&mut r, 50);
        let relayed = round_trips(&mut r, 300);
        (direct, relayed, r)
    });
    let figures = |v: &[f64]| {
        format!(
            "p1 {:.3} ms, p50 {:.3} ms, p99 {:.3} ms",
            quantile(v, 0.01),
            quantile(v, 0.5),
            quantile(v, 0.99)
        )
    };
    println!("round trips across the bridge: {}", figures(&direct));
    println!(
        "round trips through the relay (2 × 0.2 ms ± 0.05 ms added): {}",
        figures(&relayed)
    );
    // What the relay guarantees is a floor: a chunk is never written on before its drawn delay,
    // so no round trip is shorter than 2 × 0.15 ms, and half of them hold about 2 × 0.2 ms (the
    // median of the sum of two draws; 0.03 ms allowed for 300 samples of it). How far above
    // that floor they land is the machine's scheduling, printed above.
    assert!(
        quantile(&relayed, 0.01) >= 0.3,
        "no round trip shorter than 2 × 0.15 ms: {}",
        figures(&relayed)
    );
    assert!(
        quantile(&relayed, 0.5) >= 0.37,
        "half the round trips hold 2 × 0.2 ms: relayed {}, direct {}",
        figures(&relayed),
        figures(&direct)
    );

    // Cut host 1's cable: nothing crosses, without an error on either side; mended, the
    // connection goes on.
    lan.cut(1);
    assert!(!ping(0, 1), "host 1 is cut off");
    kept.set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    kept.write_all(&[7u8; 64]).unwrap();
    let mut back = [0u8; 64];
    let e = kept.read_exact(&mut back).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "silence, not an error: {e}"
    );
    lan.mend(1);
    kept.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    kept.read_exact(&mut back).unwrap();
    assert_eq!(back, [7u8; 64], "the echo arrives once the cable is back");

    drop(kept);
    drop(relay);
    drop(echo);
    drop(lan);
    let left = lan_leftovers(&names, &inodes, &links_before, ticks_now());
    assert!(left.is_empty(), "left after the Lan: {left:?}");
}

#[test]
fn lan_is_removed_after_a_panic() {
    let _serial = require_root();
    let links_before = host_links();
    let seen: Arc<Mutex<(Vec<String>, BTreeSet<u64>)>> = Arc::default();
    let s = seen.clone();
    let r = std::panic::catch_unwind(move || {
        let lan = Lan::new(3);
        let names = lan.namespaces();
        *s.lock().unwrap() = (names.clone(), netns_inodes(&names));
        let _echo = Echo::start(&lan, 2, 7001);
        let relay = Relay::start(
            &lan,
            1,
            "127.0.0.1:0".parse().unwrap(),
            SocketAddr::new(lan.address(2).into(), 7001),
            200,
            50,
        )
        .unwrap();
        let local = relay.local();
        lan.host(1).run(move || {
            let mut c = TcpStream::connect(local).unwrap();
            round_trips(&mut c, 5);
        });
        panic!("on purpose, with the Lan, a relay and an echo server up");
    });
    assert!(r.is_err());
    let dropped = ticks_now();
    let (names, inodes) = seen.lock().unwrap().clone();
    assert_eq!(names.len(), 4);
    assert_eq!(inodes.len(), 4);
    let left = lan_leftovers(&names, &inodes, &links_before, dropped);
    assert!(left.is_empty(), "left after a panic: {left:?}");
}

// ---------------------------------------------------------------------------------------------
// Capture agents across the LAN.

/// Where each vehicle lives.
const HOSTS: [(&str, Option<&str>); 6] = [
    ("c1", None),
    ("c2", None),
    ("b1", Some("hostb")),
    ("b2", Some("hostb")),
    ("d1", Some("hostc")),
    ("d2", Some("hostc")),
];
const AGENTS: [&str; 2] = ["hostb", "hostc"];

/// A scenario's numbers.
struct Setup<'a> {
    /// Prefix of the vehicles' names, distinct per test (`<tag>c1`, `<tag>b1`, …).
    tag: &'a str,
    /// Vehicle subnet 10.`net`.0.0/24.
    net: u8,
    window_ms: u32,
    duration_s: f64,
    timeout_ms: u64,
    join_timeout_s: f64,
    /// The programs, as YAML list items (after `programs:`), or empty.
    programs: String,
}

impl Setup<'_> {
    fn vehicle(&self, i: usize) -> String {
        format!("{}{}", self.tag, HOSTS[i].0)
    }

    fn vehicles(&self) -> Vec<String> {
        (0..HOSTS.len()).map(|i| self.vehicle(i)).collect()
    }

    fn ip(&self, i: usize) -> String {
        format!("10.{}.0.{}", self.net, i + 1)
    }

    /// The scenario: an `rf` link between all; `b1` (on hostb) drives east along y = -15 at
    /// 30 m/s from x = -130, `d1` (on hostc) stands at (0, 15) north of a ridge along y = 0,
    /// |x| ≤ 20 m. Their path is in sight at first (for about 2.5 s, at some 130 m), behind the
    /// ridge while b1 is within about 50 m of x = 0, in sight again, then longer than the
    /// radio's range (about 150 m at 14 dBm). The four others stand together at y = 60..70, in
    /// sight of each other. With `hosted` false every vehicle is on the coordinator's host.
    fn yaml(&self, bind: &str, hosted: bool) -> String {
        let mut y = format!(
            "name: agents{net}\nwindow_ms: {w}\nduration_s: {d}\nreal_time_factor: 1\nseed: 11\n\
             world:\n  origin: {{lat_deg: 39.95, lon_deg: -75.16}}\n  terrain:\n    kind: procedural\n    size_m: [1400, 400]\n    cell_size_m: 2\n    base_height_m: 0\n    ridges:\n      - {{from: [-20, 0], to: [20, 0], crest_height_m: 15, width_m: 10}}\n  penetration_loss_db_per_m: 5\n\
             vehicles:\n",
            net = self.net,
            w = self.window_ms,
            d = self.duration_s
        );
        let place = [
            "start: {x: -10, y: 60, z: 1.5}\n    motion: {kind: stationary}",
            "start: {x: 10, y: 60, z: 1.5}\n    motion: {kind: stationary}",
            "start: {x: -130, y: -15, z: 1.5, heading_deg: 90}\n    motion: {kind: patrol, speed_mps: 30, max_turn_rate_deg_s: 180, max_depth_rate_mps: 1, waypoints: [[650, -15, 1.5]]}",
            "start: {x: -10, y: 70, z: 1.5}\n    motion: {kind: stationary}",
            "start: {x: 0, y: 15, z: 1.5}\n    motion: {kind: stationary}",
            "start: {x: 10, y: 70, z: 1.5}\n    motion: {kind: stationary}",
        ];
        for (i, (_, host)) in HOSTS.iter().enumerate() {
            y += &format!(
                "  - name: {}\n    addresses: [{}/24]\n    {}\n",
                self.vehicle(i),
                self.ip(i),
                place[i]
            );
            if let (true, Some(h)) = (hosted, host) {
                y += &format!("    host: {h}\n");
            }
        }
        y += &format!(
            "links:\n  default: {{model: rf, frequency_ghz: 2.4, tx_power_dbm: 14, path_loss_exponent: 2.7, reference_distance_m: 1, noise_floor_dbm: -94}}\n\
             network:\n  capture: tun\n  pcap: true\n  agents: {{bind: \"{bind}\", timeout_ms: {}, join_timeout_s: {}}}\n",
            self.timeout_ms, self.join_timeout_s
        );
        if !self.programs.is_empty() {
            y += "programs:\n";
            y += &self.programs;
        }
        y
    }
}

/// Notes, while a run lives, every process of it: descended from one of its `roots` (the
/// coordinator, the agents) or in one of its namespaces (`names`: its vehicles' and hosts'),
/// each by pid and start time (so a process is still known after it left or lost its
/// namespace, and a pid used again is not taken for it).
struct RunWatch {
    stop: Arc<AtomicBool>,
    roots: Arc<Mutex<Vec<u32>>>,
    seen: Arc<Mutex<std::collections::BTreeMap<(u32, u64), String>>>,
    thread: Option<JoinHandle<()>>,
}

impl RunWatch {
    fn start(names: Vec<String>) -> RunWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let roots: Arc<Mutex<Vec<u32>>> = Arc::default();
        let seen: Arc<Mutex<std::collections::BTreeMap<(u32, u64), String>>> = Arc::default();
        let thread = {
            let (stop, roots, seen) = (stop.clone(), roots.clone(), seen.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let mine: BTreeSet<u64> = named_netns()
                        .into_iter()
                        .filter(|(_, n)| names.contains(n))
                        .map(|(i, _)| i)
                        .collect();
                    let all = procs();
                    let mut members: BTreeSet<u32> =
                        roots.lock().unwrap().iter().copied().collect();
                    // Descendants: parents before children is not guaranteed, so to a fixpoint.
                    loop {
                        let before = members.len();
                        let children: Vec<u32> = all
                            .iter()
                            .filter(|p| members.contains(&p.ppid))
                            .map(|p| p.pid)
                            .collect();
                        members.extend(children);
                        if members.len() == before {
                            break;
                        }
                    }
                    let mut seen = seen.lock().unwrap();
                    for p in &all {
                        if members.contains(&p.pid) || p.netns.is_some_and(|i| mine.contains(&i)) {
                            seen.entry((p.pid, p.start)).or_insert_with(|| p.show());
                        }
                    }
                    drop(seen);
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        RunWatch {
            stop,
            roots,
            seen,
            thread: Some(thread),
        }
    }

    fn add_root(&self, pid: u32) {
        self.roots.lock().unwrap().push(pid);
    }

    /// The processes seen that are still there.
    fn alive(&self) -> Vec<String> {
        let now: BTreeSet<(u32, u64)> = procs().iter().map(|p| (p.pid, p.start)).collect();
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| now.contains(k))
            .map(|(_, v)| v.clone())
            .collect()
    }
}

impl Drop for RunWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A run spread over the simulated LAN: the coordinator in host 0, agents `hostb` and `hostc`
/// in hosts 1 and 2, each agent reaching the coordinator through a relay in its host. Dropped,
/// it kills what it started and removes the LAN.
struct Spread {
    coordinator: Option<Child>,
    agents: Vec<Option<Child>>,
    agent_pids: Vec<u32>,
    coordinator_pid: u32,
    watch: RunWatch,
    relays: Vec<Relay>,
    lan: Lan,
    dir: tempfile::TempDir,
    scenario: PathBuf,
    out: PathBuf,
    bind: String,
    vehicles: Vec<String>,
    state_before: BTreeSet<String>,
}

fn state_entries() -> BTreeSet<String> {
    std::fs::read_dir(STATE_DIR)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn log_file(path: &Path) -> Stdio {
    std::fs::File::create(path).unwrap().into()
}

impl Spread {
    /// Writes the scenario, starts the coordinator, waits for the run's key, starts the relays
    /// and the agents (`keys`: the key file each agent is given; None: the run's own).
    fn start(setup: &Setup, keys: [Option<&Path>; 2]) -> Spread {
        let dir = tempfile::tempdir().unwrap();
        let lan = Lan::new(3);
        let bind = format!("{}:5610", lan.address(0));
        let scenario = dir.path().join("scenario.yaml");
        std::fs::write(&scenario, setup.yaml(&bind, true)).unwrap();
        let out = dir.path().join("out");
        let vehicles = setup.vehicles();
        let state_before = state_entries();
        let mut watched: Vec<String> = vehicles.iter().map(|v| format!("ncs-{v}")).collect();
        watched.extend(lan.namespaces());
        let watch = RunWatch::start(watched);
        let coordinator = lan
            .host(0)
            .command(COSIM)
            .args(["run", scenario.to_str().unwrap(), "--out"])
            .arg(&out)
            .stdout(log_file(&dir.path().join("coordinator.out")))
            .stderr(log_file(&dir.path().join("coordinator.log")))
            .spawn()
            .unwrap();
        let coordinator_pid = coordinator.id();
        watch.add_root(coordinator_pid);
        let mut spread = Spread {
            coordinator: Some(coordinator),
            agents: Vec::new(),
            agent_pids: Vec::new(),
            coordinator_pid,
            watch,
            relays: Vec::new(),
            lan,
            dir,
            scenario,
            out,
            bind,
            vehicles,
            state_before,
        };
        // The run writes its secret at start.
        let key = spread.out.join("agent.key");
        let t = Instant::now();
        while std::fs::metadata(&key).map_or(true, |m| m.len() < 64) {
            if let Some(status) = spread.coordinator.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "the run ended ({status}) before it wrote {}\n{}",
                    key.display(),
                    spread.coordinator_log()
                );
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "the run wrote no {} within 20 s: {}",
                key.display(),
                spread.coordinator_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the run's key is its owner's only");
        let to = SocketAddr::new(spread.lan.address(0).into(), 5610);
        for (i, agent) in AGENTS.iter().enumerate() {
            // hostc shares the coordinator's clock (one kernel): it opens each window at the
            // instant the run opened it; hostb at the opening's receipt.
            let clock: &[&str] = if i == 1 {
                &["--synchronized-clock"]
            } else {
                &[]
            };
            let relay = Relay::start(
                &spread.lan,
                i + 1,
                "127.0.0.1:0".parse().unwrap(),
                to,
                200,
                50,
            )
            .unwrap();
            let child = spread
                .lan
                .host(i + 1)
                .command(COSIM)
                .args(["agent", spread.scenario.to_str().unwrap(), "--name", agent])
                .args(["--coordinator", &format!("127.0.0.1:{}", relay.port())])
                .arg("--key")
                .arg(keys[i].unwrap_or(&key))
                .arg("--out")
                .arg(spread.dir.path().join(format!("agent-{agent}")))
                .args(clock)
                .stdout(log_file(&spread.dir.path().join(format!("{agent}.out"))))
                .stderr(log_file(&spread.dir.path().join(format!("{agent}.log"))))
                .spawn()
                .unwrap();
            spread.watch.add_root(child.id());
            spread.agent_pids.push(child.id());
            spread.agents.push(Some(child));
            spread.relays.push(relay);
        }
        spread
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn coordinator_log(&self) -> String {
        format!(
            "coordinator:\n{}{}",
            self.read("coordinator.out"),
            self.read("coordinator.log")
        )
    }

    fn logs(&self) -> String {
        let mut s = self.coordinator_log();
        for a in AGENTS {
            s += &format!(
                "\n{a}:\n{}{}",
                self.read(&format!("{a}.out")),
                self.read(&format!("{a}.log"))
            );
        }
        s
    }

    /// Waits until the lockstep runs across hosts: c1 (on the coordinator's host) hears the
    /// replies of b1 (on hostb) to its pings (program `ping-c1`), then `settle` more.
    fn wait_running(&self, settle: Duration) {
        let log = self.out.join("programs/ping-c1.stdout.log");
        let t = Instant::now();
        while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("bytes from")) {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "c1 heard no reply from b1 within 30 s\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(settle);
    }

    /// The coordinator's exit status, waited for up to `within`.
    fn wait_coordinator(&mut self, within: Duration) -> ExitStatus {
        let status = wait_child(self.coordinator.as_mut().unwrap(), within);
        self.coordinator = None;
        status.unwrap_or_else(|| panic!("the run did not end within {within:?}\n{}", self.logs()))
    }

    /// Agent `i`'s exit status, waited for up to `within`.
    /// Waits for the coordinator (at most 60 s) and then each agent (15 s) to end, each with
    /// success.
    fn assert_every_process_succeeds(&mut self) {
        let status = self.wait_coordinator(Duration::from_secs(60));
        assert!(
            status.success(),
            "the run failed: {status}\n{}",
            self.logs()
        );
        for (i, agent) in AGENTS.iter().enumerate() {
            let s = self.wait_agent(i, Duration::from_secs(15));
            assert!(s.success(), "agent {agent} ended with {s}\n{}", self.logs());
        }
    }

    fn wait_agent(&mut self, i: usize, within: Duration) -> ExitStatus {
        let status = wait_child(self.agents[i].as_mut().unwrap(), within);
        self.agents[i] = None;
        status.unwrap_or_else(|| {
            panic!(
                "agent {} did not end within {within:?}\n{}",
                AGENTS[i],
                self.logs()
            )
        })
    }

    /// What the run left on any host: its vehicles' namespaces, state files naming its vehicles
    /// or processes, its processes (seen while it ran, in its vehicles' or hosts' namespaces
    /// now, or naming its folder).
    fn leftovers(&self) -> Vec<String> {
        let mut left: Vec<String> = self
            .vehicles
            .iter()
            .map(|v| format!("ncs-{v}"))
            .filter(|n| netns_path(n).exists())
            .map(|n| format!("namespace {n}"))
            .collect();
        let pids: Vec<String> = self
            .agent_pids
            .iter()
            .chain([&self.coordinator_pid])
            .map(|p| p.to_string())
            .collect();
        for e in state_entries().difference(&self.state_before) {
            let text = std::fs::read_to_string(Path::new(STATE_DIR).join(e)).unwrap_or_default();
            let first = text.split_whitespace().next().unwrap_or("");
            if self.vehicles.iter().any(|v| e.contains(v.as_str()))
                || pids.iter().any(|p| p == first || e.contains(p.as_str()))
            {
                left.push(format!("{STATE_DIR}/{e}"));
            }
        }
        left.extend(
            self.watch
                .alive()
                .into_iter()
                .map(|p| format!("process {p}")),
        );
        // Also those never seen: in a namespace of the run now, or naming its folder.
        let mut names: Vec<String> = self.vehicles.iter().map(|v| format!("ncs-{v}")).collect();
        names.extend(self.lan.namespaces());
        let mine: BTreeSet<u64> = named_netns()
            .into_iter()
            .filter(|(_, n)| names.contains(n))
            .map(|(i, _)| i)
            .collect();
        let folder = self.dir.path().to_string_lossy().into_owned();
        for p in procs() {
            if p.netns.is_some_and(|i| mine.contains(&i)) || p.cmd.contains(&folder) {
                let p = format!("process {}", p.show());
                if !left.contains(&p) {
                    left.push(p);
                }
            }
        }
        left
    }

    /// Processes now in the vehicles' namespaces, but the run's own plumbing.
    fn processes_in_vehicles(&self) -> Vec<String> {
        let names: Vec<String> = self.vehicles.iter().map(|v| format!("ncs-{v}")).collect();
        let mine: BTreeSet<u64> = named_netns()
            .into_iter()
            .filter(|(_, n)| names.contains(n))
            .map(|(i, _)| i)
            .collect();
        procs()
            .into_iter()
            .filter(|p| p.netns.is_some_and(|i| mine.contains(&i)))
            // Not the run's own plumbing: `ip` in the namespace, and a child of an agent or
            // the coordinator between its fork into the namespace and its exec (it still
            // shows its parent's command line, or none while the exec replaces it).
            .filter(|p| !p.cmd.is_empty() && !p.cmd.starts_with("ip ") && !p.cmd.starts_with(COSIM))
            .map(|p| p.show())
            .collect()
    }

    /// Asserts that nothing of the run is left, giving cleanup up to `within`.
    fn assert_nothing_left(&self, within: Duration) {
        let t = Instant::now();
        loop {
            let left = self.leftovers();
            if left.is_empty() {
                return;
            }
            assert!(
                t.elapsed() < within,
                "left after the run: {left:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn summary(&self) -> serde_json::Value {
        let p = self.out.join("summary.json");
        serde_json::from_slice(
            &std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}\n{}", p.display(), self.logs())),
        )
        .unwrap()
    }

    /// Every ledger balanced: the whole network's and each link's, adding up, nothing in flight.
    fn assert_ledgers_balance(&self) {
        let r = RunReport::read(&self.out.join("summary.json")).unwrap();
        let check = network_check(&r, true);
        assert!(check.ok, "{}", check.detail);
        println!("network ledger: {}", check.detail);
    }
}

impl Drop for Spread {
    /// Whatever still runs (a test failed) is asked to stop as Ctrl-C asks it, so that it
    /// removes its namespaces, and killed 5 s later.
    fn drop(&mut self) {
        let mut left: Vec<&mut Child> = self
            .agents
            .iter_mut()
            .chain([&mut self.coordinator])
            .flatten()
            .collect();
        for c in &left {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
        }
        let t = Instant::now();
        for c in &mut left {
            let rest = Duration::from_secs(5).saturating_sub(t.elapsed());
            if wait_child(c, rest).is_none() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

fn wait_child(c: &mut Child, within: Duration) -> Option<ExitStatus> {
    let t = Instant::now();
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return Some(s);
        }
        if t.elapsed() >= within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send_signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

/// The IPv4 source of each frame in `pcap` ("" for a frame without one); fails unless tshark
/// reads the whole file without a complaint.
fn pcap_sources(pcap: &Path) -> Vec<String> {
    let o = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-T", "fields", "-e", "ip.src"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && !err.contains("cut short") && !err.contains("damaged"),
        "tshark -r {}: {err}",
        pcap.display()
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.trim().to_owned())
        .collect()
}

/// Programs for the traffic test: iperf3 TCP from b1 (hostb) to d1 (hostc) across the rf
/// phases and from c2 (the coordinator's host) to b2 (hostb), pings both ways between b1
/// and d1 every 0.1 s; the stock rclpy talker in b1, its
/// listeners in d2 (hostc) and c1 (the coordinator's host), discovering each other over DDS.
fn traffic_programs(s: &Setup) -> String {
    let py = ros_common::python();
    let examples = ros_common::repo().join("examples");
    let ros_env = format!(
        "{{ROS_DOMAIN_ID: {}, ROS_AUTOMATIC_DISCOVERY_RANGE: SUBNET}}",
        ros_common::domain()
    );
    let (b1, b2, c1, c2, d1, d2) = (
        s.vehicle(2),
        s.vehicle(3),
        s.vehicle(0),
        s.vehicle(1),
        s.vehicle(4),
        s.vehicle(5),
    );
    format!(
        "  - {{name: iperf-d1, vehicle: {d1}, command: \"iperf3 -s --forceflush\"}}\n\
         \x20 - {{name: iperf-b1, vehicle: {b1}, start_s: 0.3, command: \"{wait} iperf3 -c {ip_d1} -t 60 -i 1 --forceflush {until}\"}}\n\
         \x20 - {{name: iperf-b2, vehicle: {b2}, command: \"iperf3 -s --forceflush\"}}\n\
         \x20 - {{name: iperf-c2, vehicle: {c2}, start_s: 0.3, command: \"{wait} iperf3 -c {ip_b2} -b 4M -t 60 -i 1 --forceflush {until}\"}}\n\
         \x20 - {{name: ping-b1, vehicle: {b1}, command: \"ping -i 0.1 {ip_d1}\"}}\n\
         \x20 - {{name: ping-d1, vehicle: {d1}, command: \"ping -i 0.1 {ip_b1}\"}}\n\
         \x20 - {{name: talker, vehicle: {b1}, command: [\"{py}\", \"{ex}/talker.py\", \"0.1\"], env: {ros_env}}}\n\
         \x20 - {{name: listener-d2, vehicle: {d2}, command: [\"{py}\", \"{ex}/listener.py\"], env: {ros_env}}}\n\
         \x20 - {{name: listener-c1, vehicle: {c1}, command: [\"{py}\", \"{ex}/listener.py\"], env: {ros_env}}}\n",
        // A client tries again while its server is not yet listening (the server's start on a
        // loaded machine, or on another host, is not bounded in wall time).
        wait = "for i in $(seq 50); do",
        until = "&& break; sleep 0.2; done",
        ip_d1 = s.ip(4),
        ip_b1 = s.ip(2),
        ip_b2 = s.ip(3),
        py = py.display(),
        ex = examples.display(),
    )
}

fn program_log(out: &Path, name: &str) -> String {
    ["stdout", "stderr"]
        .iter()
        .map(|k| {
            std::fs::read_to_string(out.join(format!("programs/{name}.{k}.log")))
                .unwrap_or_default()
        })
        .collect()
}

fn traffic_setup(tag: &str, net: u8) -> Setup<'_> {
    let mut setup = Setup {
        tag,
        net,
        window_ms: 10,
        duration_s: 11.0,
        timeout_ms: 2000,
        join_timeout_s: 30.0,
        programs: String::new(),
    };
    setup.programs = traffic_programs(&setup);
    setup
}

#[test]
fn iperf3_and_ros2_cross_the_rf_link_between_vehicles_on_different_hosts() {
    let _serial = require_root();
    common::require_tools(&["iperf3", "tshark"], "scripts/setup --test");
    let setup = traffic_setup("aga", 91);
    let mut run = Spread::start(&setup, [None, None]);
    run.assert_every_process_succeeds();
    assert_eq!(run.summary()["interrupted"], false);
    run.assert_ledgers_balance();
    assert_traffic(&setup, &run.out);
    run.assert_nothing_left(Duration::from_secs(5));
}

/// The same scenario with every vehicle on one host, as a run without agents has it: what the
/// run across hosts must show holds here.
#[test]
fn iperf3_and_ros2_cross_the_rf_link_with_every_vehicle_on_one_host() {
    let _serial = require_root();
    common::require_tools(&["iperf3", "tshark"], "scripts/setup --test");
    let setup = traffic_setup("agl", 96);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.yaml");
    std::fs::write(&scenario, setup.yaml("127.0.0.1:5610", false)).unwrap();
    let out = dir.path().join("out");
    let t = Instant::now();
    let o = Command::new(COSIM)
        .args(["run", scenario.to_str().unwrap(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    println!("the run took {:.1} s", t.elapsed().as_secs_f64());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = Instant::now();
    let r = RunReport::read(&out.join("summary.json")).unwrap();
    let check = network_check(&r, true);
    assert!(check.ok, "{}", check.detail);
    assert_traffic(&setup, &out);
    println!("its checks took {:.1} s", t.elapsed().as_secs_f64());
}

/// What the traffic scenario must show in its run folder `out`: the rf link's phases between b1
/// and d1, TCP and DDS between hosts, the programs' output, each vehicle's pcap whole and
/// agreeing with the ledger.
fn assert_traffic(setup: &Setup, out: &Path) {
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    // The phases of the rf link between b1 (hostb) and d1 (hostc), both ways.
    let r = Record::read(out).unwrap();
    let (b1, d1) = (setup.vehicle(2), setup.vehicle(4));
    for (src, dst) in [(&b1, &d1), (&d1, &b1)] {
        assert_copies_follow_the_phases(&r, src, dst);
    }
    // TCP between hosts: the iperf3 clients connected and moved data.
    let link = |src: &str, dst: &str| -> serde_json::Value {
        summary["network"]["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["src"] == src && l["dst"] == dst)
            .cloned()
            .unwrap_or_else(|| panic!("no link {src} -> {dst}: {}", summary["network"]))
    };
    for (client, server, prog) in [
        (&b1, &d1, "iperf-b1"),
        (&setup.vehicle(1), &setup.vehicle(3), "iperf-c2"),
    ] {
        let log = program_log(out, prog);
        assert!(log.contains("connected to"), "{prog}: {log}");
        let bytes = link(client, server)["delivered_bytes"].as_u64().unwrap();
        println!("{prog}: {client} -> {server} delivered {bytes} bytes");
        // TCP crossed between hosts and moved data well beyond its handshake; how much is the
        // machine's (the agents benchmark measures it).
        assert!(
            bytes > 100_000,
            "{prog}: {client} -> {server} delivered {bytes} bytes"
        );
    }
    // DDS discovery and messages between hosts; the programs' output came back to the run's
    // folder from the agents' hosts.
    for listener in ["listener-d2", "listener-c1"] {
        let log = program_log(out, listener);
        let heard = log.matches("I heard").count();
        println!("{listener} heard {heard} messages");
        assert!(heard >= 10, "{listener} heard {heard}:\n{log}");
    }
    assert!(
        program_log(out, "talker").contains("Publishing"),
        "the talker's output came back from hostb"
    );

    // Each vehicle's pcap is whole and agrees with the ledger: every copy delivered to it is
    // in it, no IPv4 packet from another vehicle is in it that the ledger did not deliver, and
    // no more IPv4 packets it sent than copies captured from it.
    let links = summary["network"]["links"].as_array().unwrap().clone();
    let sum = |f: &dyn Fn(&serde_json::Value) -> bool, field: &str| -> u64 {
        links
            .iter()
            .filter(|l| f(l))
            .map(|l| l[field].as_u64().unwrap())
            .sum()
    };
    // tshark takes a while to start: one per pcap, all at once.
    let readers: Vec<JoinHandle<Vec<String>>> = setup
        .vehicles()
        .iter()
        .map(|v| {
            let pcap = out.join(format!("{v}.pcap"));
            std::thread::spawn(move || pcap_sources(&pcap))
        })
        .collect();
    for ((i, v), reader) in setup.vehicles().iter().enumerate().zip(readers) {
        let a = setup.ip(i);
        let delivered = sum(&|l| l["dst"] == v.as_str(), "delivered") as usize;
        let captured = sum(&|l| l["src"] == v.as_str(), "captured") as usize;
        let sources = reader.join().unwrap();
        let received = sources.iter().filter(|s| **s != a).count();
        let received_v4 = sources.iter().filter(|s| !s.is_empty() && **s != a).count();
        let sent_v4 = sources.iter().filter(|s| **s == a).count();
        println!(
            "{v}.pcap: {received} frames not from it ({received_v4} IPv4), {sent_v4} IPv4 from it; ledger: {delivered} delivered to it, {captured} captured from it"
        );
        assert!(
            received >= delivered,
            "{v}.pcap holds every copy delivered to it"
        );
        assert!(
            received_v4 <= delivered,
            "{v}.pcap holds no IPv4 copy the ledger did not deliver"
        );
        assert!(
            sent_v4 <= captured && sent_v4 > 0,
            "{v}.pcap: what it sent, as captured"
        );
    }
}

/// A scenario without programs long enough to be ended from outside.
fn long_setup(tag: &str, net: u8, window_ms: u32) -> Setup<'_> {
    Setup {
        tag,
        net,
        window_ms,
        duration_s: 120.0,
        timeout_ms: 2000,
        join_timeout_s: 30.0,
        programs: String::new(),
    }
}

/// With a little traffic between hosts: pings from c1 to b1, from b2 to d2 and from d1 to c2.
fn with_pings(mut s: Setup<'_>) -> Setup<'_> {
    s.programs = format!(
        "  - {{name: ping-c1, vehicle: {}, command: \"ping -i 0.05 {}\"}}\n\
         \x20 - {{name: ping-b2, vehicle: {}, command: \"ping -i 0.05 {}\"}}\n\
         \x20 - {{name: ping-d1, vehicle: {}, command: \"ping -i 0.05 {}\"}}\n",
        s.vehicle(0),
        s.ip(2),
        s.vehicle(3),
        s.ip(5),
        s.vehicle(4),
        s.ip(1)
    );
    s
}

#[test]
fn ctrl_c_to_the_coordinator_ends_the_run_on_every_host_and_leaves_nothing() {
    let _serial = require_root();
    let setup = with_pings(long_setup("agb", 92, 1));
    let mut run = Spread::start(&setup, [None, None]);
    run.wait_running(Duration::from_secs(2));
    send_signal(run.coordinator_pid, libc::SIGINT);
    let status = run.wait_coordinator(Duration::from_secs(15));
    assert_eq!(status.code(), Some(130), "{}", run.logs());
    for i in 0..AGENTS.len() {
        run.wait_agent(i, Duration::from_secs(15));
    }
    let summary = run.summary();
    assert_eq!(summary["interrupted"], true);
    run.assert_ledgers_balance();
    run.assert_nothing_left(Duration::from_secs(5));
}

/// Asserts the run ended with the error naming agent hostb (as the coordinator saw it, from host
/// 1's address), a window, and one of `what`.
fn assert_agent_error(run: &Spread, what: &[&str]) {
    let log = run.coordinator_log();
    let named = format!("agent hostb ({}:", run.lan.address(1));
    let line = log
        .lines()
        .find(|l| l.contains(&named) && l.contains("window "))
        .unwrap_or_else(|| panic!("no error naming {named}… and a window\n{}", run.logs()));
    assert!(what.iter().any(|w| line.contains(w)), "{line}");
}

#[test]
fn an_agent_killed_mid_run_ends_the_run_within_the_timeout_naming_it() {
    let _serial = require_root();
    let setup = with_pings(long_setup("agc", 93, 10));
    let mut run = Spread::start(&setup, [None, None]);
    run.wait_running(Duration::from_secs(1));
    let killed = Instant::now();
    send_signal(run.agent_pids[0], libc::SIGKILL);
    let status = run.wait_coordinator(Duration::from_secs(20));
    let took = killed.elapsed();
    println!("the run ended {took:?} after hostb was killed: {status}");
    assert!(!status.success(), "{}", run.logs());
    assert!(
        took <= Duration::from_millis(setup.timeout_ms + 3000),
        "ended {took:?} after the kill, the timeout is {} ms",
        setup.timeout_ms
    );
    assert_agent_error(
        &run,
        &["disconnected while window", "sent no report for window"],
    );
    run.wait_agent(0, Duration::from_secs(1));
    let other = run.wait_agent(1, Duration::from_secs(10));
    assert!(!other.success(), "hostc was told the run failed");
    // hostb's guardian removes its namespaces and programs.
    run.assert_nothing_left(Duration::from_secs(10));
}

#[test]
fn an_agent_cut_off_mid_run_ends_the_run_within_the_timeout_naming_it() {
    let _serial = require_root();
    let setup = with_pings(long_setup("agd", 94, 1));
    let mut run = Spread::start(&setup, [None, None]);
    run.wait_running(Duration::from_secs(1));
    let cut = Instant::now();
    run.lan.cut(1);
    let status = run.wait_coordinator(Duration::from_secs(20));
    let took = cut.elapsed();
    println!("the run ended {took:?} after hostb's cable was cut: {status}");
    assert!(!status.success(), "{}", run.logs());
    assert!(
        took <= Duration::from_millis(setup.timeout_ms + 3000),
        "ended {took:?} after the cut, the timeout is {} ms",
        setup.timeout_ms
    );
    assert_agent_error(&run, &["sent no report for window"]);
    // hostb hears nothing more from the coordinator: it ends on its own timeout.
    let b = run.wait_agent(0, Duration::from_millis(setup.timeout_ms + 15_000));
    assert!(!b.success(), "hostb lost its coordinator: {b}");
    let c = run.wait_agent(1, Duration::from_secs(10));
    assert!(!c.success(), "hostc was told the run failed: {c}");
    run.assert_nothing_left(Duration::from_secs(10));
}

#[test]
fn an_agent_with_a_wrong_key_is_refused_and_the_run_never_starts() {
    let _serial = require_root();
    let keys = tempfile::tempdir().unwrap();
    let wrong = keys.path().join("wrong.key");
    let o = Command::new(COSIM)
        .arg("agent-key")
        .arg(&wrong)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&wrong).unwrap();
    assert!(
        text.len() == 65
            && text.ends_with('\n')
            && text[..64].chars().all(|c| c.is_ascii_hexdigit()),
        "64 hex digits and a newline: {text:?}"
    );
    assert_eq!(
        std::fs::metadata(&wrong).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let again = Command::new(COSIM)
        .arg("agent-key")
        .arg(&wrong)
        .output()
        .unwrap();
    assert!(!again.status.success(), "agent-key never overwrites a key");
    assert_eq!(std::fs::read_to_string(&wrong).unwrap(), text);

    let mut setup = with_pings(long_setup("age", 95, 10));
    setup.join_timeout_s = 5.0;
    let mut run = Spread::start(&setup, [Some(wrong.as_path()), None]);
    // Until the run gives up, no program runs in any vehicle, on any host.
    let t = Instant::now();
    let mut early = BTreeSet::new();
    while run
        .coordinator
        .as_mut()
        .unwrap()
        .try_wait()
        .unwrap()
        .is_none()
        && t.elapsed() < Duration::from_secs(25)
    {
        early.extend(run.processes_in_vehicles());
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = run.wait_coordinator(Duration::from_secs(1));
    assert!(
        early.is_empty(),
        "started before every agent joined: {early:?}"
    );
    assert!(!status.success(), "{}", run.logs());
    let log = run.coordinator_log();
    let refused = log
        .lines()
        .find(|l| l.contains("refused a peer at"))
        .unwrap_or_else(|| panic!("no refusal logged\n{}", run.logs()));
    assert!(refused.contains("wrong secret"), "{refused}");
    assert!(
        refused.contains(&run.lan.address(1).to_string()),
        "the peer's address: {refused}"
    );
    let never = log
        .lines()
        .find(|l| l.contains("never joined within 5 s"))
        .unwrap_or_else(|| panic!("no \"never joined\" error\n{}", run.logs()));
    assert!(
        never.contains("hostb") && !never.contains("hostc"),
        "{never}"
    );
    assert!(
        never.contains(&format!("(listening on {}", run.bind)),
        "{never}"
    );
    let b = run.wait_agent(0, Duration::from_secs(15));
    assert!(!b.success(), "the refused agent fails: {b}");
    run.wait_agent(1, Duration::from_secs(15));
    // Nothing started early: no program ran, no packet was captured.
    let programs = std::fs::read_dir(run.out.join("programs"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(programs, 0, "no program started before every agent joined");
    if let Ok(bytes) = std::fs::read(run.out.join("summary.json")) {
        let s: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(s["network"]["captured"].as_u64().unwrap_or(0), 0, "{s}");
    }
    run.assert_nothing_left(Duration::from_secs(10));
}

/// A program due at the start on a capture agent's machine that keeps a core busy for 0.5 s
/// (then prints the wall time and sleeps): the agent waits for it to settle and says so, and the
/// run opens window 0 only after that, as after its own programs. Without the wait the
/// coordinator, which has no program of its own here, opens window 0 while the program is busy.
#[test]
fn window_0_opens_after_the_programs_on_the_agents_settled() {
    let _serial = require_root();
    let mut setup = long_setup("agf", 97, 10);
    setup.duration_s = 1.0;
    setup.programs = format!(
        "  - {{name: busy-b1, vehicle: {}, command: [\"python3\", \"-c\", \"import time\\nt = time.monotonic()\\nwhile time.monotonic() - t < 0.5: pass\\nprint(repr(time.time()), flush=True)\\ntime.sleep(30)\"]}}\n",
        setup.vehicle(2)
    );
    let mut run = Spread::start(&setup, [None, None]);
    run.assert_every_process_succeeds();
    let out =
        std::fs::read_to_string(run.out.join("programs/busy-b1.stdout.log")).unwrap_or_default();
    let busy_until: f64 = out
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("the program's output {out:?}: {e}\n{}", run.logs()));
    let started = run.summary()["started_unix_s"]
        .as_f64()
        .expect("started_unix_s");
    assert!(
        started > busy_until,
        "window 0 opened at {started}, before the program on hostb was done at {busy_until}\n{}",
        run.logs()
    );
    run.assert_nothing_left(Duration::from_secs(5));
}
