//! Lockstep throughput: windows per second with 8 vehicles and idle simulators (they answer
//! at once, so the figures measure the coordinators, the protocol and the transport).
//!
//! 1. in-process: physics coordinator, network coordinator and both simulators in one process;
//! 2. ZeroMQ, both coordinators here and each simulator in its own process (this binary
//!    re-executed), over TCP loopback: one round trip on the critical path of a window;
//!    and every coordinator and simulator in its own process (4 processes): two round trips
//!    (physics coordinator → network coordinator → network simulator);
//! 3. baseline: a bare ZeroMQ REQ/REP round trip (same crate, same loopback, an echo process),
//!    measured in the same run; one window over ZeroMQ costs at least one round trip;
//! 4. the secure channel (`secure://`, Noise with a key file), simulators in their own
//!    processes as in 2a, over TCP loopback: its cost per window against 2a's;
//! 5. as root: the simulators in a network namespace of their own, reached over a veth pair
//!    (as another host would be, at an address that is not loopback), through ZeroMQ and
//!    through the secure channel, side by side.
//!
//! Run: `cargo bench --bench lockstep`. Optional env: WINDOWS (default 200000 in-process).

use netsim_cosim::{
    clock::Schedule,
    config::{PeerEndpoint, SecureAddress},
    coord::{NetworkCoordinator, PhysicsCoordinator},
    lockstep::{
        protocol::{expect_physics, physics_end, WindowCounter},
        secure, zmq, Link, Reply, Role, Service,
    },
    sim::network::PassthroughNetwork,
    wire::proto::{rosnetsim::physics_update::MsgType, ChannelData, PathDetails},
};
use prost::Message;
use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

const VEHICLES: usize = 8;

/// A physics simulator with nothing to do: the same 8-vehicle ChannelData every window.
struct IdlePhysics {
    windows: WindowCounter,
    channel: Vec<u8>,
}

impl IdlePhysics {
    fn new(windows: u32) -> Self {
        let mut node_list = Vec::new();
        for i in 0..VEHICLES {
            node_list.extend_from_slice(&[i as f64 * 10.0, 0.0, -20.0, 1.0, 0.0, 0.0, 0.0]);
        }
        let mut path_details = Vec::new();
        for i in 0..VEHICLES as u32 {
            for j in i + 1..VEHICLES as u32 {
                path_details.push(PathDetails {
                    ids: vec![i, j],
                    los: true,
                    num_hops: vec![2],
                    hop_points: vec![
                        i as f64 * 10.0,
                        0.0,
                        -20.0,
                        0.0,
                        j as f64 * 10.0,
                        0.0,
                        -20.0,
                        0.0,
                    ],
                    ..Default::default()
                });
            }
        }
        IdlePhysics {
            windows: WindowCounter::new(windows),
            channel: ChannelData {
                node_list,
                path_details,
            }
            .encode_to_vec(),
        }
    }
}

impl Service for IdlePhysics {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        let r = expect_physics(&request, MsgType::Begin, self.windows.next).and_then(|b| {
            self.windows
                .begin(b.time_val)
                .map(|_| physics_end(b.time_val, self.channel.clone()))
        });
        netsim_cosim::lockstep::ready(r)
    }
    fn finished(&self) -> bool {
        self.windows.finished()
    }
}

struct Echo;
impl Service for Echo {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        Box::pin(std::future::ready(Ok(request)))
    }
}

const TIMEOUT: Duration = Duration::from_secs(10);

/// A network coordinator in this process, linked to `net_sim`.
fn local_network(net_sim: Link, windows: u32) -> Link {
    Link::local(
        "network coordinator",
        Box::new(NetworkCoordinator::new(net_sim, schedule(windows), TIMEOUT)),
    )
}

fn schedule(windows: u32) -> Schedule {
    Schedule {
        window_ns: 10_000_000,
        windows,
    }
}

async fn coordinator(physics: Link, network: Link, windows: u32) -> f64 {
    let c = PhysicsCoordinator::new(physics, network, schedule(windows))
        .with_startup_timeout(TIMEOUT)
        .with_scenario_name("bench")
        .with_vehicles(VEHICLES);
    let report = c.run(std::future::pending()).await.expect("bench run");
    assert_eq!(report.windows, windows);
    report.windows_per_second
}

/// Child-process roles: `<exe> serve <role> <endpoint> <windows> [network-sim endpoint]`.
async fn serve(role: &str, endpoint: &str, windows: u32, extra: Option<&str>) {
    let idle = Duration::from_secs(30);
    let end = match role {
        "physics" => zmq::serve(endpoint, &mut IdlePhysics::new(windows), idle).await,
        "network-sim" => zmq::serve(endpoint, &mut PassthroughNetwork::new(windows), idle).await,
        "network-coordinator" => {
            let sim = Link::zeromq(
                "network simulator",
                extra.expect("network-sim endpoint"),
                TIMEOUT,
                TIMEOUT,
            )
            .await
            .unwrap();
            zmq::serve(
                endpoint,
                &mut NetworkCoordinator::new(sim, schedule(windows), TIMEOUT),
                idle,
            )
            .await
        }
        "echo" => zmq::serve(endpoint, &mut Echo, idle).await,
        "secure-physics" | "secure-network-sim" => {
            let address = SecureAddress {
                address: endpoint.parse().unwrap(),
                key_file: extra.expect("key file").into(),
            };
            if role == "secure-physics" {
                secure::serve(&address, &mut IdlePhysics::new(windows), idle).await
            } else {
                secure::serve(&address, &mut PassthroughNetwork::new(windows), idle).await
            }
        }
        r => panic!("unknown role {r}"),
    };
    end.expect("serve");
}

struct Children(Vec<Child>);
impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn child")
}

/// A network namespace joined to this one by a veth pair: this side 10.231.0.1, its side
/// 10.231.0.2 (`ADDRESS`). Removed on drop.
struct Namespace(String);

impl Namespace {
    const ADDRESS: &'static str = "10.231.0.2";

    fn create() -> Result<Namespace, String> {
        let name = format!("lsb{}", std::process::id());
        let host_if = format!("lsh{}", std::process::id() % 100_000);
        let ns = Namespace(name.clone());
        for cmd in [
            format!("ip netns add {name}"),
            format!("ip link add {host_if} type veth peer name eth0 netns {name}"),
            format!("ip addr add 10.231.0.1/30 dev {host_if}"),
            format!("ip link set {host_if} up"),
            format!("ip -n {name} addr add {}/30 dev eth0", Self::ADDRESS),
            format!("ip -n {name} link set eth0 up"),
            format!("ip -n {name} link set lo up"),
        ] {
            let args: Vec<&str> = cmd.split(' ').collect();
            let st = Command::new(args[0]).args(&args[1..]).status();
            if !st.is_ok_and(|s| s.success()) {
                return Err(format!("`{cmd}` failed"));
            }
        }
        Ok(ns)
    }

    /// This binary re-executed inside the namespace with `args`.
    fn spawn(&self, args: &[&str]) -> Child {
        Command::new("ip")
            .args(["netns", "exec", &self.0])
            .arg(std::env::current_exe().unwrap())
            .args(args)
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn child in namespace")
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Removing the namespace removes its end of the veth pair, and so both.
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// `host:` a port from `base`, offset by this process's id (so that runs side by side differ).
fn host_port(host: &str, base: u16) -> String {
    format!("{host}:{}", base + (std::process::id() % 1000) as u16)
}

/// Windows per second with both idle simulators in processes of their own, started by `spawn`
/// to listen at `(physics, network simulator)` (`host:port`), the coordinators here: over
/// ZeroMQ, or through the secure channel with a fresh key file.
async fn simulators_apart(
    spawn: &dyn Fn(&[&str]) -> Child,
    (physics, network_sim): (&str, &str),
    windows: u32,
    secure: bool,
) -> f64 {
    let w = windows.to_string();
    let key = std::env::temp_dir().join(format!(
        "lockstep-bench-{}-{physics}.key",
        std::process::id()
    ));
    let (sims, endpoint) = if secure {
        let _ = std::fs::remove_file(&key);
        secure::write_secret(&key, &netsim_cosim::wire::secure::Secret::generate()).unwrap();
        let k = key.to_str().unwrap();
        let sims = Children(vec![
            spawn(&["serve", "secure-physics", physics, &w, k]),
            spawn(&["serve", "secure-network-sim", network_sim, &w, k]),
        ]);
        let at = |hp: &str| {
            PeerEndpoint::Secure(SecureAddress {
                address: hp.parse().unwrap(),
                key_file: key.clone(),
            })
        };
        (sims, (at(physics), at(network_sim)))
    } else {
        let (p, s) = (format!("tcp://{physics}"), format!("tcp://{network_sim}"));
        let sims = Children(vec![
            spawn(&["serve", "physics", &p, &w]),
            spawn(&["serve", "network-sim", &s, &w]),
        ]);
        (sims, (p.parse().unwrap(), s.parse().unwrap()))
    };
    let physics = Link::connect(
        "physics simulator",
        Role::Physics,
        &endpoint.0,
        TIMEOUT,
        TIMEOUT,
    )
    .await
    .unwrap();
    let net_sim = Link::connect(
        "network simulator",
        Role::Network,
        &endpoint.1,
        TIMEOUT,
        TIMEOUT,
    )
    .await
    .unwrap();
    let network = local_network(net_sim, windows);
    let rate = coordinator(physics, network, windows).await;
    drop(sims);
    if secure {
        let _ = std::fs::remove_file(&key);
    }
    rate
}

/// The secure channel's windows per second against ZeroMQ's in the same setting, and its cost
/// per window.
fn against_zmq(setting: &str, secure: f64, zmq: f64) {
    let extra_us = 1e6 / secure - 1e6 / zmq;
    println!(
        "  secure channel against ZeroMQ, {setting}: {:.2} of its windows/s, {extra_us:+.1} µs per window ({:.1} % of W = 1 ms)",
        secure / zmq,
        extra_us / 10.0
    );
}

/// A ZeroMQ endpoint on loopback, its port from `base` as [`host_port`].
fn port(base: u16) -> String {
    format!("tcp://{}", host_port("127.0.0.1", base))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("serve") {
        let windows = args[4].parse().unwrap();
        return serve(&args[2], &args[3], windows, args.get(5).map(String::as_str)).await;
    }
    let in_process_windows: u32 = std::env::var("WINDOWS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(200_000);
    let zmq_windows = (in_process_windows / 10).max(1000);

    // 1. In-process.
    let physics = Link::local(
        "idle physics",
        Box::new(IdlePhysics::new(in_process_windows)),
    );
    let net_sim = Link::local(
        "network simulator",
        Box::new(PassthroughNetwork::new(in_process_windows)),
    );
    let network = local_network(net_sim, in_process_windows);
    let in_process = coordinator(physics, network, in_process_windows).await;

    // 3. Baseline: bare REQ/REP round trips to an echo process.
    let echo_ep = port(40000);
    let _echo = Children(vec![spawn(&["serve", "echo", &echo_ep, "0"])]);
    let mut client = zmq::Client::connect_within(&echo_ep, TIMEOUT)
        .await
        .unwrap();
    let payload = vec![0u8; 64];
    for _ in 0..1000 {
        client.request(payload.clone()).await.unwrap();
    }
    let t = Instant::now();
    for _ in 0..zmq_windows {
        client.request(payload.clone()).await.unwrap();
    }
    let round_trips = zmq_windows as f64 / t.elapsed().as_secs_f64();

    // 2a. ZeroMQ: coordinators together, simulators in their own processes.
    let w = zmq_windows.to_string();
    let local = |base| host_port("127.0.0.1", base);
    let sims_apart =
        simulators_apart(&spawn, (&local(44000), &local(45000)), zmq_windows, false).await;
    // 4. The secure channel: simulators in their own processes, as 2a.
    let sims_secure =
        simulators_apart(&spawn, (&local(46000), &local(47000)), zmq_windows, true).await;

    // 2b. ZeroMQ: every coordinator and simulator in its own process.
    let (p_ep, s_ep, c_ep) = (port(41000), port(42000), port(43000));
    let children = Children(vec![
        spawn(&["serve", "physics", &p_ep, &w]),
        spawn(&["serve", "network-sim", &s_ep, &w]),
        spawn(&["serve", "network-coordinator", &c_ep, &w, &s_ep]),
    ]);
    let physics = Link::zeromq("physics simulator", &p_ep, TIMEOUT, TIMEOUT)
        .await
        .unwrap();
    let network = Link::zeromq("network coordinator", &c_ep, TIMEOUT, TIMEOUT)
        .await
        .unwrap();
    let over_zmq = coordinator(physics, network, zmq_windows).await;
    drop(children);

    // 5. Between namespaces: ZeroMQ, then the secure channel, to simulators in a namespace.
    let between = match Namespace::create() {
        Ok(ns) => {
            let spawn = |args: &[&str]| ns.spawn(args);
            let there = |base| host_port(Namespace::ADDRESS, base);
            let zmq_ns =
                simulators_apart(&spawn, (&there(48000), &there(49000)), zmq_windows, false).await;
            let secure_ns =
                simulators_apart(&spawn, (&there(50000), &there(51000)), zmq_windows, true).await;
            Ok((zmq_ns, secure_ns))
        }
        Err(e) => Err(e),
    };

    println!("lockstep, {VEHICLES} vehicles, idle simulators, W = 10 ms");
    println!("  in-process                         {in_process:>8.0} windows/s  ({in_process_windows} windows; target >= 50000)");
    println!("  ZeroMQ, simulators in 2 processes  {sims_apart:>8.0} windows/s  ({zmq_windows} windows; 1 round trip per window; target >= 10000)");
    println!("  ZeroMQ, 4 separate processes       {over_zmq:>8.0} windows/s  ({zmq_windows} windows; 2 round trips per window)");
    println!("  secure channel, sims in 2 processes {sims_secure:>7.0} windows/s  ({zmq_windows} windows; 1 round trip per window)");
    println!("  bare ZeroMQ REQ/REP round trip     {round_trips:>8.0} round trips/s ({zmq_windows} round trips, 64 B)");
    against_zmq("simulators apart", sims_secure, sims_apart);
    match between {
        Ok((zmq_ns, secure_ns)) => {
            println!("  ZeroMQ, sims in a namespace (veth)  {zmq_ns:>7.0} windows/s  ({zmq_windows} windows)");
            println!("  secure, sims in a namespace (veth)  {secure_ns:>7.0} windows/s  ({zmq_windows} windows)");
            against_zmq("between namespaces", secure_ns, zmq_ns);
        }
        Err(e) => println!("  between namespaces: not measured ({e}; needs root)"),
    }
    println!(
        "  windows/s over bare round trips/s: {:.2} (simulators apart), {:.2} (4 processes; 0.5 is the 2-round-trip bound)",
        sims_apart / round_trips,
        over_zmq / round_trips
    );
}
