//! The ZeroMQ AUV simulator interface served from the embedded physics, 8 thruster-driven AUVs
//! over the default scenario's terrain, W = 1 ms, as fast as the machine goes:
//!
//! - telemetry: every AUV every window (1000 Hz each) through the real PUB socket to a SUB
//!   client in this process; messages/s sent and received, CPU time of the process per message
//!   and so the share of a core one vehicle takes at the default 20 Hz. Side by side: the same
//!   windows through the plain embedded physics (no interface), and the same messages through a
//!   bare ZeroMQ PUB socket (the transport alone);
//! - images at 320 × 240 (front and bottom, one frame): rendered and JPEG-encoded on one thread,
//!   time per frame split into raycasting and encoding, frames/s on one core and the share of a
//!   core one vehicle takes at the default 2 Hz; then the real pipeline (renderer thread, PUB,
//!   SUB client) with every vehicle asking for 50 frames/s: frames/s delivered.
//!
//! Run: `cargo bench --bench auv`. Optional env: WINDOWS (default 20000).

use netsim_cosim::{
    config::{self, LoadedScenario},
    io::simulators::auv_server::{jpeg, AuvInterfaceSim},
    lockstep::{protocol::physics_begin, Service},
    model::{camera, terrain::Terrain},
    sim::physics::PhysicsSim,
};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

const N: usize = 8;

fn cpu_s() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    assert_eq!(rc, 0, "getrusage");
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn scenario(windows: u32, base: u16, telemetry_hz: f64, camera_hz: f64) -> LoadedScenario {
    let default =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default.yaml"))
            .unwrap();
    let terrain = &default
        [default.find("  terrain:").unwrap()..default.find("  penetration_loss_db_per_m").unwrap()];
    let mut yaml = format!(
        "name: bench\nwindow_ms: 1\nduration_s: {}\nreal_time_factor: 0\nworld:\n  origin: {{lat_deg: 41.5, lon_deg: -70.7}}\n{terrain}\
         auv_interface: {{images_port: {base}, thrusters_port: {}, telemetry_port: {}, telemetry_hz: {telemetry_hz}, cameras: {{width: 320, height: 240, rate_hz: {camera_hz}}}}}\nvehicles:\n",
        f64::from(windows) / 1000.0,
        base + 1,
        base + 2
    );
    for i in 0..N {
        yaml += &format!(
            "  - {{name: auv{i}, addresses: [10.50.0.{}/24], start: {{x: {}, y: {}, z: -25, heading_deg: 90}}, motion: {{kind: thrusters, auv_id: {i}}}}}\n",
            i + 1,
            -400.0 + 100.0 * i as f64,
            -150.0 + 5.0 * i as f64
        );
    }
    config::parse_str(
        &yaml,
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("config/bench.yaml")
            .as_path(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A SUB client counting what it receives (every id).
async fn counter(endpoint: String, count: Arc<AtomicU64>) {
    let mut sub = zeromq::SubSocket::new();
    sub.connect(&endpoint).await.unwrap();
    sub.subscribe("").await.unwrap();
    while sub.recv().await.is_ok() {
        count.fetch_add(1, Ordering::Relaxed);
    }
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let windows: u32 = std::env::var("WINDOWS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(20_000);
    println!("AUV interface, {N} AUVs, W = 1 ms, {windows} windows\n");

    // Telemetry every window, through the interface.
    let loaded = scenario(windows, 29555, 1000.0, 0.0);
    let mut sim = AuvInterfaceSim::bind(&loaded, PhysicsSim::from_scenario(&loaded), None)
        .await
        .unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let client = tokio::spawn(counter("tcp://127.0.0.1:29557".into(), received.clone()));
    settle().await;
    let requests: Vec<Vec<u8>> = (0..windows).map(|k| physics_begin(k, vec![])).collect();
    let (t0, c0) = (Instant::now(), cpu_s());
    for r in &requests {
        sim.call(r.clone()).await.unwrap();
        // Let the publishing task run (as the coordinator's other awaits do in a run).
        tokio::task::yield_now().await;
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
    settle().await;
    let st = sim.stats();
    let got = received.load(Ordering::Relaxed);
    client.abort();
    drop(sim);

    // The same windows, plain.
    let mut plain = PhysicsSim::from_scenario(&loaded);
    let (p0, pc0) = (Instant::now(), cpu_s());
    for r in &requests {
        plain.call(r.clone()).await.unwrap();
    }
    let (pwall, pcpu) = (p0.elapsed().as_secs_f64(), cpu_s() - pc0);

    // The same number of 24-byte telemetry messages through a bare PUB socket.
    let mut pub_ = zeromq::PubSocket::new();
    pub_.bind("tcp://127.0.0.1:29560").await.unwrap();
    let bare_received = Arc::new(AtomicU64::new(0));
    let bare_client = tokio::spawn(counter(
        "tcp://127.0.0.1:29560".into(),
        bare_received.clone(),
    ));
    settle().await;
    let (b0, bc0) = (Instant::now(), cpu_s());
    for i in 0..st.telemetry_sent {
        let mut m = ZmqMessage::from(vec![(i % N as u64) as u8]);
        m.push_back(vec![0u8; 24].into());
        pub_.send(m).await.unwrap();
        tokio::task::yield_now().await;
    }
    let (bwall, bcpu) = (b0.elapsed().as_secs_f64(), cpu_s() - bc0);
    settle().await;
    bare_client.abort();

    let rate = st.telemetry_sent as f64 / wall;
    let per_msg_cpu = cpu / st.telemetry_sent as f64;
    println!("telemetry (every AUV every window, 1000 Hz each):");
    println!(
        "  through the interface   {:>9.0} msgs/s sent ({} sent, {} received, {} dropped at the full publishing queue), {:>7.0} windows/s, {:.2} cores, {:.2} µs CPU per message (physics included)",
        rate,
        st.telemetry_sent,
        got,
        st.messages_dropped,
        f64::from(windows) / wall,
        cpu / wall,
        per_msg_cpu * 1e6
    );
    println!(
        "  plain embedded physics  {:>9.0} windows/s, {:.2} cores (no interface)",
        f64::from(windows) / pwall,
        pcpu / pwall
    );
    println!(
        "  bare ZeroMQ PUB         {:>9.0} msgs/s sent, {} of {} received, {:.2} cores",
        st.telemetry_sent as f64 / bwall,
        bare_received.load(Ordering::Relaxed),
        st.telemetry_sent,
        bcpu / bwall
    );
    println!(
        "  ratio: interface / bare PUB messages/s {:.2}; one vehicle at the default 20 Hz takes {:.4} % of a core (its messages, at this CPU per message)",
        rate / (st.telemetry_sent as f64 / bwall),
        100.0 * 20.0 * per_msg_cpu
    );

    // Images, one thread.
    let terrain = Terrain::new(loaded.terrain.clone());
    let cams = loaded.scenario.auv_interface.cameras.clone();
    let poses: Vec<_> = loaded
        .scenario
        .vehicles
        .iter()
        .map(|v| {
            let s = v.start();
            (nalgebra::Point3::new(s.x, s.y, s.z), 0.3 * s.x.signum())
        })
        .collect();
    let frames = 4 * N;
    let (mut render_s, mut encode_s) = (0.0, 0.0);
    for i in 0..frames {
        let (p, yaw) = poses[i % N];
        let t = Instant::now();
        let f = camera::render(&terrain, &cams, &p, yaw, camera::View::Front);
        let b = camera::render(&terrain, &cams, &p, yaw, camera::View::Bottom);
        let t1 = Instant::now();
        let (jf, jb) = (
            jpeg(&f, cams.jpeg_quality).unwrap(),
            jpeg(&b, cams.jpeg_quality).unwrap(),
        );
        assert!(jf.len() > 100 && jb.len() > 100);
        render_s += (t1 - t).as_secs_f64();
        encode_s += t1.elapsed().as_secs_f64();
    }
    let per = (render_s + encode_s) / frames as f64;
    println!("\nimages at 320 × 240 (front + bottom = one frame), one thread:");
    println!(
        "  {:.1} ms per frame: {:.1} ms sphere-tracing 2 × 76,800 rays, {:.1} ms JPEG encoding; {:.1} frames/s on one core",
        per * 1e3,
        render_s / frames as f64 * 1e3,
        encode_s / frames as f64 * 1e3,
        1.0 / per
    );
    println!(
        "  one vehicle at the default 2 Hz takes {:.1} % of a core; {N} take {:.1} %",
        100.0 * 2.0 * per,
        100.0 * 2.0 * per * N as f64
    );

    // The real pipeline: 50 frames/s asked of each of the 8 vehicles.
    let seconds = 5.0;
    let loaded = scenario((seconds * 1000.0) as u32, 29565, 20.0, 50.0);
    let mut sim = AuvInterfaceSim::bind(&loaded, PhysicsSim::from_scenario(&loaded), None)
        .await
        .unwrap();
    let images = Arc::new(AtomicU64::new(0));
    let client = tokio::spawn(counter("tcp://127.0.0.1:29565".into(), images.clone()));
    settle().await;
    let (t0, c0) = (Instant::now(), cpu_s());
    let start = tokio::time::Instant::now();
    for k in 0..(seconds * 1000.0) as u32 {
        // Paced at real time, as a run at real_time_factor 1.
        tokio::time::sleep_until(start + Duration::from_millis(u64::from(k))).await;
        sim.call(physics_begin(k, vec![])).await.unwrap();
    }
    settle().await;
    let (wall, cpu) = (t0.elapsed().as_secs_f64() - 0.3, cpu_s() - c0);
    let st = sim.stats();
    client.abort();
    println!(
        "\nthe pipeline at real time, {N} vehicles asking 50 frames/s each ({} asked):",
        50 * N
    );
    println!(
        "  {:.1} frames/s delivered ({} sent, {} snapshots skipped while the renderer was busy), {:.2} cores",
        images.load(Ordering::Relaxed) as f64 / wall,
        st.images_sent,
        st.images_skipped,
        cpu / wall
    );
}
