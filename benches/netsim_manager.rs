//! NETSIM manager throughput and latency over loopback TCP, the server in this process.
//! 1. one connection, one request at a time (ping-pong), and pipelined (64 in flight);
//! 2. 64 concurrent clients at 10 Hz each for 10 s: every response must arrive, in order.
//! Run: `cargo bench --bench netsim_manager`.
use netsim_cosim::{
    config,
    io::servers::netsim_manager,
    model::netsim::{NavInbox, Rules},
    wire::{
        netsim_line,
        proto::{
            decode_checked,
            netsim::{NavUpdate, NetSimManagerRequest, NetSimManagerResponse},
        },
    },
};
use prost::Message;
use std::time::{Duration, Instant};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpStream,
};

fn line(id: i32) -> String {
    let nav = NavUpdate {
        modem_tcp_port: 62000 + id % 4,
        time: 1.7e9,
        lat: 71.2,
        lon: -142.4,
        depth: 20.0,
        speed: 1.5,
        heading: 90.0,
    };
    netsim_line::emit(
        "netsim.protobuf.NetSimManagerRequest",
        &NetSimManagerRequest {
            id,
            nav: vec![nav],
            stats: vec![],
        }
        .encode_to_vec(),
    )
}

fn response_id(l: &str) -> i32 {
    let parsed = netsim_line::parse(l.trim_end().as_bytes()).expect("response line");
    let r: NetSimManagerResponse = decode_checked(&parsed.payload).expect("response");
    assert_eq!(r.status, 1, "accepted");
    r.request_id
}

async fn connect(
    addr: std::net::SocketAddr,
) -> (
    BufReader<tokio::net::tcp::OwnedReadHalf>,
    tokio::net::tcp::OwnedWriteHalf,
) {
    let s = TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let (r, w) = s.into_split();
    (BufReader::new(r), w)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let loaded = config::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/netsim_manager.yaml"
    )))
    .unwrap();
    let rules = Rules::new(&loaded.scenario).unwrap();
    let inbox = NavInbox::default();
    let server = netsim_manager::start("127.0.0.1:0".parse().unwrap(), rules, inbox.clone())
        .await
        .unwrap();
    let addr = server.local_addr;

    // 1a. Ping-pong.
    let (mut r, mut w) = connect(addr).await;
    let n = 20_000;
    let mut buf = String::new();
    let t = Instant::now();
    for id in 0..n {
        w.write_all(line(id).as_bytes()).await.unwrap();
        buf.clear();
        r.read_line(&mut buf).await.unwrap();
        assert_eq!(response_id(&buf), id);
    }
    let ping_pong = n as f64 / t.elapsed().as_secs_f64();

    // 1b. Pipelined, 64 in flight.
    let t = Instant::now();
    let writer = tokio::spawn(async move {
        for id in 0..n {
            w.write_all(line(id).as_bytes()).await.unwrap();
        }
        w
    });
    for id in 0..n {
        buf.clear();
        r.read_line(&mut buf).await.unwrap();
        assert_eq!(response_id(&buf), id, "in order");
    }
    let _ = writer.await.unwrap();
    let pipelined = n as f64 / t.elapsed().as_secs_f64();

    // 2. 64 clients at 10 Hz for 10 s.
    let clients = 64;
    let per_client = 100;
    let t = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        tasks.push(tokio::spawn(async move {
            let (mut r, mut w) = connect(addr).await;
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            let mut latencies = Vec::with_capacity(per_client);
            let mut buf = String::new();
            for k in 0..per_client as i32 {
                tick.tick().await;
                let id = c * 1000 + k;
                let sent = Instant::now();
                w.write_all(line(id).as_bytes()).await.unwrap();
                buf.clear();
                r.read_line(&mut buf).await.unwrap();
                assert_eq!(
                    response_id(&buf),
                    id,
                    "client {c}: lost or misordered response"
                );
                latencies.push(sent.elapsed().as_secs_f64() * 1e6);
            }
            latencies
        }));
    }
    let mut latencies: Vec<f64> = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let wall = t.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let c = &server.counters;
    use std::sync::atomic::Ordering::Relaxed;
    println!("NETSIM manager, loopback TCP, one NavUpdate per request");
    println!("  one connection, ping-pong        {ping_pong:>9.0} requests/s ({n} requests)");
    println!(
        "  one connection, pipelined        {pipelined:>9.0} requests/s ({n} requests, in order)"
    );
    println!(
        "  {clients} clients x 10 Hz x {per_client}      {:>9.0} requests/s over {wall:.1} s; {} responses, 0 lost, 0 misordered; latency p50 {:.0} us, p99 {:.0} us, max {:.0} us",
        latencies.len() as f64 / wall,
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().unwrap()
    );
    println!(
        "  server counters: requests {}, accepted {}, bad lines {}; fixes delivered {}",
        c.requests.load(Relaxed),
        c.accepted.load(Relaxed),
        c.bad_lines.load(Relaxed),
        inbox.counts().fixes
    );
}
