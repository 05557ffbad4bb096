//! The benchmarks' vehicle program (`--traffic MY_ADDRESS NEIGHBOUR [PERIOD_MS [SECONDS]]`), DDS-like
//! traffic run by a scenario inside a vehicle's namespace: a 100-byte multicast heartbeat to
//! 239.255.0.1:7400 every period (100 ms by default, as DDS's participant announcements) and a
//! 100-byte unicast to the neighbour as often, each stamped with its send time (wall clock).
//! It runs until SIGINT or SIGTERM (or for SECONDS), then writes what it sent and received, the
//! one-way times it saw and their send stamps to `$COSIM_OUT/traffic/<vehicle>.json`.
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Vehicle `i`'s address (in 10.100.0.0/8 and up).
pub fn address(i: usize) -> String {
    format!(
        "10.{}.{}.{}",
        100 + i / 62_500,
        (i / 250) % 250,
        i % 250 + 1
    )
}

/// The one-way times (ms) the traffic programs wrote under `out/traffic/`: of the messages sent
/// from Unix time `from_unix_ms` on (the run's window 0) appended to `into`, of those sent
/// before it (held until the network started) to `before`.
pub fn one_way_ms(out: &Path, from_unix_ms: f64, into: &mut Vec<f64>, before: &mut Vec<f64>) {
    if let Ok(entries) = std::fs::read_dir(out.join("traffic")) {
        for e in entries.flatten() {
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(e.path()).unwrap_or_default())
                    .unwrap_or_default();
            let (Some(a), Some(sent)) = (v["one_way_ms"].as_array(), v["sent_unix_ms"].as_array())
            else {
                continue;
            };
            for (x, t) in a.iter().zip(sent) {
                let (Some(x), Some(t)) = (x.as_f64(), t.as_f64()) else {
                    continue;
                };
                if t >= from_unix_ms {
                    into.push(x);
                } else {
                    before.push(x);
                }
            }
        }
    }
}

/// The `p` quantile of sorted `v` (NaN when empty).
pub fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}

/// Runs the traffic program when this process was started as one (`args[1] == "--traffic"`);
/// false otherwise.
pub fn run_if_asked(args: &[String]) -> bool {
    if args.get(1).map(String::as_str) != Some("--traffic") {
        return false;
    }
    let period = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(100.0);
    let seconds = args.get(5).and_then(|s| s.parse().ok());
    traffic(
        args[2].parse().unwrap(),
        args[3].parse().unwrap(),
        Duration::from_secs_f64(period / 1e3),
        seconds.map(Duration::from_secs_f64),
    );
    true
}

fn traffic(me: Ipv4Addr, neighbour: Ipv4Addr, period: Duration, seconds: Option<Duration>) {
    const GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);
    const PORT: u16 = 7400;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop as *const () as libc::sighandler_t);
    }
    let rx = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, PORT)).unwrap();
    rx.join_multicast_v4(&GROUP, &me).unwrap();
    let tx = UdpSocket::bind(SocketAddrV4::new(me, 0)).unwrap();
    tx.set_multicast_loop_v4(false).unwrap();
    tx.set_multicast_ttl_v4(1).unwrap();
    let (mut sent, mut received) = (0u64, 0u64);
    let mut one_way_ms: Vec<f64> = Vec::new();
    let mut sent_ms: Vec<f64> = Vec::new();
    let mut buf = [0u8; 2048];
    let started = Instant::now();
    // Vehicles start together: spread their phases over the period.
    let phase = Duration::from_nanos(unix_ns() % period.as_nanos() as u64);
    let (mut next_hb, mut next_uc) = (Instant::now() + phase, Instant::now() + period - phase);
    while !STOP.load(Ordering::Relaxed) && seconds.is_none_or(|s| started.elapsed() < s) {
        let now = Instant::now();
        for (due, to) in [
            (&mut next_hb, SocketAddrV4::new(GROUP, PORT)),
            (&mut next_uc, SocketAddrV4::new(neighbour, PORT)),
        ] {
            if now >= *due {
                let mut payload = [b'.'; 100];
                payload[..8].copy_from_slice(&unix_ns().to_le_bytes());
                if tx.send_to(&payload, to).is_ok() {
                    sent += 1;
                }
                *due += period;
            }
        }
        let wait = next_hb
            .min(next_uc)
            .saturating_duration_since(Instant::now());
        let _ = rx.set_read_timeout(Some(wait.max(Duration::from_micros(100))));
        while let Ok(n) = rx.recv(&mut buf) {
            let t = unix_ns();
            received += 1;
            if n >= 8 && one_way_ms.len() < 100_000 {
                let sent_ns = u64::from_le_bytes(buf[..8].try_into().unwrap());
                one_way_ms.push(t.saturating_sub(sent_ns) as f64 / 1e6);
                sent_ms.push(sent_ns as f64 / 1e6);
            }
            let _ = rx.set_read_timeout(Some(Duration::from_micros(100)));
            if Instant::now() >= next_hb.min(next_uc) {
                break;
            }
        }
    }
    let out = Path::new(&std::env::var("COSIM_OUT").unwrap_or_else(|_| ".".into())).join("traffic");
    std::fs::create_dir_all(&out).unwrap();
    let name = std::env::var("COSIM_VEHICLE").unwrap_or_else(|_| me.to_string());
    std::fs::write(
        out.join(format!("{name}.json")),
        serde_json::json!({
            "sent": sent, "received": received, "one_way_ms": one_way_ms,
            "sent_unix_ms": sent_ms
        })
        .to_string(),
    )
    .unwrap();
}
