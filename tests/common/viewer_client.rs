//! A client of the live view (Foxglove WebSocket protocol) on a thread of its own, for the tests
//! and `benches/record.rs`: it subscribes to every channel advertised and reads until the server
//! closes, optionally with a small receive window and a pause. Each includes what it uses.
#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::{client::IntoClientRequest, Message};

/// How the client reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reading {
    /// Its socket's receive buffer (bytes; default: the kernel's, which grows).
    pub receive_buffer: Option<u32>,
    /// Stop reading for `.1` once `.0` has passed since it connected.
    pub stall: Option<(Duration, Duration)>,
}

/// What the client got.
#[derive(Debug, Default)]
pub struct Received {
    /// Binary messages (message data and time) and their bytes.
    pub messages: u64,
    pub bytes: u64,
    /// Its thread's CPU time, s.
    pub cpu_s: f64,
}

/// A port free on loopback now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Connects to `127.0.0.1:port` (waiting up to 30 s for the server) and reads as `reading` says.
pub fn spawn(port: u16, reading: Reading) -> std::thread::JoinHandle<Received> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut got = rt.block_on(read(port, reading));
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        got.cpu_s = ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        got
    })
}

async fn read(port: u16, reading: Reading) -> Received {
    let deadline = Instant::now() + Duration::from_secs(30);
    let stream = loop {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        if let Some(size) = reading.receive_buffer {
            socket.set_recv_buffer_size(size).unwrap();
        }
        match socket.connect(([127, 0, 0, 1], port).into()).await {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("no live view on port {port}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let mut req = format!("ws://127.0.0.1:{port}")
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "foxglove.websocket.v1".parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::client_async(req, stream).await.unwrap();
    let mut got = Received::default();
    let mut next = 0u32;
    let connected = Instant::now();
    let mut stall = reading.stall;
    while let Some(Ok(m)) = ws.next().await {
        match m {
            Message::Text(t) => {
                let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
                if v["op"] == "advertise" {
                    let subs: Vec<serde_json::Value> = v["channels"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| {
                            next += 1;
                            serde_json::json!({"id": next, "channelId": c["id"]})
                        })
                        .collect();
                    let sub = serde_json::json!({"op": "subscribe", "subscriptions": subs});
                    ws.send(Message::Text(sub.to_string().into()))
                        .await
                        .unwrap();
                }
            }
            Message::Binary(b) => {
                got.messages += 1;
                got.bytes += b.len() as u64;
            }
            Message::Close(_) => break,
            _ => {}
        }
        if let Some((after, pause)) = stall {
            if connected.elapsed() >= after {
                stall = None;
                // Not reading: the socket's buffers and the server's queue for it fill.
                std::thread::sleep(pause);
            }
        }
    }
    got
}
