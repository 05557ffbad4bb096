//! The live viewer server: the run record's channels and messages ([`RecordTap`]) served while
//! the run goes over the Foxglove WebSocket protocol (subprotocol `foxglove.websocket.v1`), so
//! that Foxglove, Lichtblick or any client of that protocol shows the scene live.
//!
//! The run never waits for a viewer: a message goes into each subscribed client's queue under
//! a short lock, and when a queue is full (`viewer.client_queue_messages` / `_bytes`) the
//! message is dropped for that client and counted (the summary's `viewer`); each client is
//! written to by a task of its own. A client that joins late gets `/run`, the terrain and the
//! vehicles' models on subscribing, then what comes. The server listens on loopback unless
//! told otherwise; on any other address a client must give the token the run prints
//! (`?token=` in the URL). Control messages from clients are bounded (64 KiB) and only
//! `subscribe` / `unsubscribe` are taken; anything else gets a `status` message naming it.
//! Off loopback it serves only over TLS 1.3 (`wss://`, `viewer.tls`, [`super::tls`]): it refuses
//! to start without, since the token and the scene would cross the network in the clear.
//!
//! The server runs on a thread of its own at a lower priority than the run's
//! ([`crate::io::os::timer::background`]), so that framing and sending to viewers takes CPU the run
//! leaves over.
//!
//! The Foxglove SDK serves the same protocol, but its per-client queues drop silently (the
//! count is not observable), and a run must say what each viewer missed.

use crate::config::ViewerSettings;
use crate::output::record::RecordTap;
use crate::output::schema::{TOPIC_RUN, TOPIC_TERRAIN, TOPIC_VEHICLES};
use crate::output::summary::ViewerSummary;
use crate::wire::foxglove_ws::{self as ws, ChannelInfo, ClientOp, SUBPROTOCOL};
use futures_util::{SinkExt, StreamExt};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// Largest message a client may send (its control messages are small JSON).
const MAX_CLIENT_MESSAGE: usize = 64 << 10;

/// Sim time advances this much between two time messages at most once.
const TIME_STEP_NS: u64 = 50_000_000;

/// The topics a client gets the last message of when it subscribes.
const LATCHED: [&str; 3] = [TOPIC_RUN, TOPIC_TERRAIN, TOPIC_VEHICLES];

enum Out {
    Message {
        subscription: u32,
        t_ns: u64,
        data: Arc<[u8]>,
    },
    Time(u64),
    /// Server info and advertisements: never dropped, not counted against the bounds (one per
    /// channel of the record).
    Text(String),
    /// A status reply to a client's message ([`MAX_STATUS_PENDING`] at most).
    Status(String),
}

impl Out {
    fn bytes(&self) -> usize {
        match self {
            Out::Message { data, .. } => 13 + data.len(),
            Out::Time(_) => 9,
            Out::Text(t) | Out::Status(t) => t.len(),
        }
    }

    fn into_message(self) -> Message {
        match self {
            Out::Message {
                subscription,
                t_ns,
                data,
            } => Message::Binary(ws::message_data(subscription, t_ns, &data).into()),
            Out::Time(t) => Message::Binary(ws::time(t).into()),
            Out::Text(t) | Out::Status(t) => Message::Text(t.into()),
        }
    }
}

struct Client {
    id: u64,
    peer: SocketAddr,
    /// Channel → subscription id.
    subscriptions: HashMap<u16, u32>,
    queue: VecDeque<Out>,
    /// Bytes of the counted (message and time) items in `queue`.
    queued_bytes: usize,
    /// Counted items in `queue`.
    queued: usize,
    sent: u64,
    dropped: u64,
    /// Status replies waiting in `queue` (at most [`MAX_STATUS_PENDING`]).
    statuses: usize,
    wake: Arc<Notify>,
}

/// Status replies held for a client that sends what this server does not take and does not
/// read the answers; beyond them its further mistakes go unanswered.
const MAX_STATUS_PENDING: usize = 64;

impl Client {
    /// Queues a message or time item within the client's bounds; what they leave no room for
    /// is counted as dropped.
    fn push(&mut self, out: Out, max_messages: usize, max_bytes: usize) -> bool {
        let bytes = out.bytes();
        if self.queued >= max_messages || self.queued_bytes + bytes > max_bytes {
            self.dropped += 1;
            return false;
        }
        self.queued += 1;
        self.queued_bytes += bytes;
        self.queue.push_back(out);
        true
    }

    /// Queues a status reply, if fewer than [`MAX_STATUS_PENDING`] wait.
    fn status(&mut self, message: &str) {
        if self.statuses < MAX_STATUS_PENDING {
            self.statuses += 1;
            self.queue
                .push_back(Out::Status(ws::status_warning(message)));
        }
    }
}

#[derive(Default)]
struct State {
    channels: Vec<ChannelInfo>,
    /// Per latched channel: its last message and time.
    latched: HashMap<u16, (u64, Arc<[u8]>)>,
    clients: Vec<Client>,
    /// The last time message sent.
    time_ns: Option<u64>,
    summary: ViewerSummary,
    closed: bool,
}

/// The server (see the module docs); a [`RecordTap`].
pub struct Viewer {
    state: Mutex<State>,
    settings: ViewerSettings,
    address: SocketAddr,
    token: Option<String>,
    /// TLS (`viewer.tls`): every connection's handshake first.
    tls: Option<tokio_rustls::TlsAcceptor>,
    next_id: AtomicU64,
    /// The server's thread (its own runtime: the accept loop and a task per client).
    accept: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Signalled when the server stops (every client task ends).
    stop: Arc<Notify>,
}

impl Viewer {
    /// Listens on `settings.address` (port 0: any free port, see [`Viewer::address`]) and
    /// serves from a thread of its own, over TLS with `settings.tls` (its files as given:
    /// relative to the current folder). Refuses an address other hosts reach without TLS
    /// ([`ViewerSettings::exposed`]).
    pub fn start(settings: &ViewerSettings) -> anyhow::Result<Arc<Viewer>> {
        let wanted: SocketAddr = settings.address.parse().map_err(|_| {
            anyhow::anyhow!(
                "viewer.address: must be HOST:PORT with an IP address (got {:?})",
                settings.address
            )
        })?;
        if let Some(why) = settings.exposed() {
            anyhow::bail!("{why}");
        }
        let tls = match &settings.tls {
            Some(t) => Some(super::tls::acceptor(&t.cert_file, &t.key_file)?),
            None => None,
        };
        let listener = std::net::TcpListener::bind(wanted)
            .map_err(|e| anyhow::anyhow!("viewer: cannot listen on {wanted}: {e}"))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let token = match address.ip().is_loopback() {
            true => None,
            false => Some(format!("{:032x}", rand::random::<u128>())),
        };
        let viewer = Arc::new(Viewer {
            state: Mutex::new(State {
                summary: ViewerSummary {
                    address: address.to_string(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            settings: settings.clone(),
            address,
            token,
            tls,
            next_id: AtomicU64::new(0),
            accept: Mutex::new(None),
            stop: Arc::new(Notify::new()),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = {
            let viewer = viewer.clone();
            std::thread::Builder::new()
                .name("viewer".into())
                .spawn(move || {
                    crate::io::os::timer::background();
                    runtime.block_on(async move {
                        match TcpListener::from_std(listener) {
                            Ok(l) => accept_loop(viewer, l).await,
                            Err(e) => tracing::warn!("viewer: {e}"),
                        }
                    })
                })?
        };
        *viewer.accept.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread);
        tracing::info!("viewer: live on {}", viewer.url());
        Ok(viewer)
    }

    /// The address listened on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The URL a client connects to (`wss://` over TLS; with the token, when one is needed).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "wss" } else { "ws" };
        match &self.token {
            Some(t) => format!("{scheme}://{}/?token={t}", self.address),
            None => format!("{scheme}://{}", self.address),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What it did so far.
    pub fn summary(&self) -> ViewerSummary {
        let st = self.lock();
        let mut s = st.summary.clone();
        for c in &st.clients {
            s.messages_sent += c.sent;
            s.dropped_for_clients += c.dropped;
        }
        s
    }

    /// Sends each client what is queued for it (waiting up to `grace` in all), then closes
    /// every connection and stops listening.
    pub async fn stop(&self, grace: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline {
            if self.lock().clients.iter().all(|c| c.queue.is_empty()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.lock().closed = true;
        self.stop.notify_waiters();
        for c in &self.lock().clients {
            c.wake.notify_one();
        }
        // Every client task ends at `closed` (one blocked sending is given up on); the thread
        // ends with them, unwaited for.
        drop(self.accept.lock().unwrap_or_else(|p| p.into_inner()).take());
    }

    /// A client's control message: subscriptions change, anything else is answered with a
    /// status naming it.
    fn control(&self, id: u64, text: &str) {
        let mut st = self.lock();
        let State {
            clients,
            latched,
            channels,
            ..
        } = &mut *st;
        let Some(c) = clients.iter_mut().find(|c| c.id == id) else {
            return;
        };
        let (max_messages, max_bytes) = (
            self.settings.client_queue_messages,
            self.settings.client_queue_bytes,
        );
        match ClientOp::parse(text.as_bytes()) {
            Ok(ClientOp::Subscribe(subscriptions)) => {
                for (subscription, channel) in subscriptions {
                    let Some(channel) = u16::try_from(channel)
                        .ok()
                        .filter(|&c| channels.iter().any(|ch| ch.id == c))
                    else {
                        c.status(&format!("subscribe: no channel {channel}"));
                        continue;
                    };
                    c.subscriptions.insert(channel, subscription);
                    if let Some((t, data)) = latched.get(&channel) {
                        let out = Out::Message {
                            subscription,
                            t_ns: *t,
                            data: data.clone(),
                        };
                        c.push(out, max_messages, max_bytes);
                    }
                }
            }
            Ok(ClientOp::Unsubscribe(ids)) => {
                c.subscriptions.retain(|_, s| !ids.contains(s));
            }
            Err(e) => {
                let shown: String = text.chars().take(80).collect();
                c.status(&format!(
                    "not understood ({e}): {shown}; this server takes subscribe and unsubscribe"
                ));
            }
        }
        c.wake.notify_one();
    }
}

impl RecordTap for Viewer {
    fn channel(&self, id: u16, topic: &str, schema_name: &str, schema: &[u8]) {
        let mut st = self.lock();
        st.channels.push(ChannelInfo {
            id,
            topic: topic.to_string(),
            schema_name: schema_name.to_string(),
            schema: String::from_utf8_lossy(schema).into_owned(),
        });
        let text = ws::advertise(st.channels.last());
        for c in &mut st.clients {
            c.queue.push_back(Out::Text(text.clone()));
            c.wake.notify_one();
        }
    }

    fn message(&self, id: u16, t_ns: u64, data: &[u8]) {
        let mut st = self.lock();
        let latched = st
            .channels
            .iter()
            .any(|c| c.id == id && LATCHED.contains(&c.topic.as_str()));
        let mut shared: Option<Arc<[u8]>> = None;
        if latched {
            let d: Arc<[u8]> = data.into();
            st.latched.insert(id, (t_ns, d.clone()));
            shared = Some(d);
        }
        if st.clients.is_empty() {
            return;
        }
        let time = match st.time_ns {
            Some(last) if t_ns < last.saturating_add(TIME_STEP_NS) => None,
            _ => {
                st.time_ns = Some(t_ns);
                Some(t_ns)
            }
        };
        let (max_messages, max_bytes) = (
            self.settings.client_queue_messages,
            self.settings.client_queue_bytes,
        );
        for c in &mut st.clients {
            let mut woken = false;
            if let Some(t) = time {
                woken |= c.push(Out::Time(t), max_messages, max_bytes);
            }
            if let Some(&subscription) = c.subscriptions.get(&id) {
                let data = shared.get_or_insert_with(|| data.into()).clone();
                let out = Out::Message {
                    subscription,
                    t_ns,
                    data,
                };
                woken |= c.push(out, max_messages, max_bytes);
            }
            if woken {
                c.wake.notify_one();
            }
        }
    }
}

async fn accept_loop(viewer: Arc<Viewer>, listener: TcpListener) {
    let mut clients = tokio::task::JoinSet::new();
    let stop = viewer.stop.clone();
    loop {
        tokio::select! {
            _ = stop.notified() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    clients.spawn(serve(viewer.clone(), stream, peer));
                }
                Err(e) => {
                    tracing::debug!("viewer: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            Some(_) = clients.join_next(), if !clients.is_empty() => {}
        }
        if viewer.lock().closed {
            break;
        }
    }
    drop(listener);
    while clients.join_next().await.is_some() {}
}

/// Why a connection was refused at its handshake.
fn refuse(status: StatusCode, why: &str) -> ErrorResponse {
    let mut r = ErrorResponse::new(Some(why.to_string()));
    *r.status_mut() = status;
    r
}

/// The kernel's send buffer of a client's socket: with the queue, what one client can hold
/// (left to itself, Linux grows it to megabytes for a reader that stalls).
const SOCKET_SEND_BUFFER: libc::c_int = 256 << 10;

/// A connection: its TLS handshake first when the viewer has TLS, then [`serve_ws`].
async fn serve(viewer: Arc<Viewer>, stream: TcpStream, peer: SocketAddr) {
    let _ = stream.set_nodelay(true);
    {
        use std::os::fd::AsRawFd;
        let size = SOCKET_SEND_BUFFER;
        // SAFETY: a valid socket and a c_int option value of the size given.
        unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    match &viewer.tls {
        None => serve_ws(viewer.clone(), stream, peer).await,
        Some(tls) => {
            let why = match tokio::time::timeout(super::tls::HANDSHAKE_TIMEOUT, tls.accept(stream))
                .await
            {
                Ok(Ok(stream)) => return serve_ws(viewer.clone(), stream, peer).await,
                Ok(Err(e)) => format!("TLS: {e}"),
                Err(_) => format!(
                    "no TLS handshake within {} s",
                    super::tls::HANDSHAKE_TIMEOUT.as_secs()
                ),
            };
            tracing::info!("viewer: refused {peer}: {why}");
            viewer.lock().summary.refused += 1;
        }
    }
}

/// A client over `stream` (TCP or TLS): the WebSocket handshake (the token, the subprotocol,
/// room for another client), then its queue written to it until it or the run ends.
async fn serve_ws<S>(viewer: Arc<Viewer>, stream: S, peer: SocketAddr)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let full = viewer.lock().clients.len() >= viewer.settings.max_clients;
    let token = viewer.token.clone();
    // tungstenite's callback type: its error is the HTTP response refusing the connection.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        if full {
            return Err(refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many viewer clients (viewer.max_clients)",
            ));
        }
        if let Some(t) = &token {
            let given = req
                .uri()
                .query()
                .unwrap_or("")
                .split('&')
                .find_map(|kv| kv.strip_prefix("token="));
            if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), t.as_bytes())) {
                return Err(refuse(
                    StatusCode::UNAUTHORIZED,
                    "this viewer needs the token the run printed: ?token=… in its URL",
                ));
            }
        }
        let offered = req
            .headers()
            .get_all("Sec-WebSocket-Protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == SUBPROTOCOL);
        if !offered {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "ask for the WebSocket subprotocol foxglove.websocket.v1",
            ));
        }
        resp.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        Ok(resp)
    };
    let mut config = WebSocketConfig::default();
    config.max_message_size = Some(MAX_CLIENT_MESSAGE);
    config.max_frame_size = Some(MAX_CLIENT_MESSAGE);
    let ws = match tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config))
        .await
    {
        Ok(ws) => ws,
        Err(e) => {
            tracing::info!("viewer: refused {peer}: {e}");
            viewer.lock().summary.refused += 1;
            return;
        }
    };
    let id = viewer.next_id.fetch_add(1, Ordering::Relaxed);
    let wake = Arc::new(Notify::new());
    {
        let mut st = viewer.lock();
        if st.closed {
            return;
        }
        let info = ws::server_info(
            concat!("netsim_cosim ", env!("CARGO_PKG_VERSION")),
            &viewer.address.to_string(),
        );
        let advertise = ws::advertise(&st.channels);
        let mut queue = VecDeque::new();
        queue.push_back(Out::Text(info));
        queue.push_back(Out::Text(advertise));
        st.clients.push(Client {
            id,
            peer,
            subscriptions: HashMap::new(),
            queue,
            queued_bytes: 0,
            queued: 0,
            sent: 0,
            dropped: 0,
            statuses: 0,
            wake: wake.clone(),
        });
        st.summary.clients += 1;
    }
    tracing::info!("viewer: client {peer} connected");
    wake.notify_one();
    let (mut tx, mut rx) = ws.split();
    let stop = viewer.stop.clone();
    let mut batch: Vec<Out> = Vec::new();
    let why = loop {
        tokio::select! {
            _ = stop.notified() => break "the run ended",
            m = rx.next() => match m {
                Some(Ok(Message::Text(t))) => viewer.control(id, t.as_str()),
                Some(Ok(Message::Close(_))) | None => break "it closed the connection",
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::info!("viewer: client {peer}: {e}");
                    break "its connection failed";
                }
            },
            _ = wake.notified() => {
                {
                    let mut st = viewer.lock();
                    if st.closed {
                        break "the run ended";
                    }
                    let Some(c) = st.clients.iter_mut().find(|c| c.id == id) else { break "" };
                    while batch.len() < 256 {
                        let Some(out) = c.queue.pop_front() else { break };
                        match out {
                            Out::Text(_) => {}
                            Out::Status(_) => c.statuses -= 1,
                            Out::Message { .. } | Out::Time(_) => {
                                c.queued -= 1;
                                c.queued_bytes -= out.bytes();
                                c.sent += 1;
                            }
                        }
                        batch.push(out);
                    }
                    if !c.queue.is_empty() {
                        c.wake.notify_one();
                    }
                }
                let send = async {
                    for out in batch.drain(..) {
                        tx.feed(out.into_message()).await?;
                    }
                    tx.flush().await
                };
                tokio::select! {
                    sent = send => if sent.is_err() {
                        break "its connection failed";
                    },
                    _ = stop.notified() => break "the run ended",
                }
            }
        }
    };
    let close = tx.send(Message::Close(None));
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), close).await;
    let mut st = viewer.lock();
    if let Some(i) = st.clients.iter().position(|c| c.id == id) {
        let c = st.clients.remove(i);
        st.summary.messages_sent += c.sent;
        st.summary.dropped_for_clients += c.dropped;
        let level_warn = c.dropped > 0;
        let text = format!(
            "viewer: client {} left ({why}): {} messages sent, {} missed (its queue was full)",
            c.peer, c.sent, c.dropped
        );
        if level_warn {
            tracing::warn!("{text}");
        } else {
            tracing::info!("{text}");
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    async fn connect(port: u16) -> tokio_tungstenite::WebSocketStream<TcpStream> {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        tokio_tungstenite::client_async(request(&format!("ws://127.0.0.1:{port}")), stream)
            .await
            .unwrap()
            .0
    }

    fn client() -> Client {
        Client {
            id: 0,
            peer: "127.0.0.1:1".parse().unwrap(),
            subscriptions: HashMap::new(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            queued: 0,
            sent: 0,
            dropped: 0,
            statuses: 0,
            wake: Arc::new(Notify::new()),
        }
    }

    /// What one client can make the server hold is bounded: messages by count and bytes (the
    /// rest counted as dropped), status replies to its mistakes by count (the rest unanswered).
    #[test]
    fn what_a_client_can_make_the_server_hold_is_bounded() {
        let mut c = client();
        let data: Arc<[u8]> = vec![0u8; 100].into();
        let out = |t| Out::Message {
            subscription: 1,
            t_ns: t,
            data: data.clone(),
        };
        assert!(c.push(out(0), 2, 1000));
        assert!(c.push(Out::Time(1), 2, 1000));
        assert!(!c.push(out(2), 2, 1000));
        assert_eq!((c.queued, c.dropped), (2, 1));
        let mut c = client();
        assert!(c.push(out(0), 10, 200));
        assert!(!c.push(out(1), 10, 200), "113 + 113 bytes > 200");
        assert_eq!((c.queued, c.queued_bytes, c.dropped), (1, 113, 1));
        for _ in 0..200 {
            c.status("not understood");
        }
        assert_eq!(c.statuses, MAX_STATUS_PENDING);
        assert_eq!(c.queue.len(), 1 + MAX_STATUS_PENDING);
    }

    /// A late subscriber gets the latched terrain; a message this server does not take is
    /// answered with a status naming it; the summary counts what was sent.
    #[tokio::test]
    async fn a_late_subscriber_gets_the_terrain_and_a_mistake_its_answer() {
        let settings = ViewerSettings {
            live: true,
            address: "127.0.0.1:0".into(),
            ..Default::default()
        };
        let viewer = Viewer::start(&settings).unwrap();
        viewer.channel(0, TOPIC_TERRAIN, "foxglove.SceneUpdate", b"{}");
        viewer.message(0, 0, b"{\"entities\":[]}");
        let mut ws = connect(viewer.address().port()).await;
        ws.send(Message::Text("{\"op\":\"getParameters\"}".into()))
            .await
            .unwrap();
        let sub = "{\"op\":\"subscribe\",\"subscriptions\":[{\"id\":7,\"channelId\":0}]}";
        ws.send(Message::Text(sub.into())).await.unwrap();
        let (mut status, mut terrain) = (String::new(), Vec::new());
        let quiet = std::time::Duration::from_millis(500);
        while let Ok(Some(Ok(m))) = tokio::time::timeout(quiet, ws.next()).await {
            match m {
                Message::Text(t) if t.contains("\"status\"") => status = t.to_string(),
                Message::Binary(b) => terrain = b.to_vec(),
                _ => {}
            }
        }
        assert!(status.contains("getParameters"), "{status}");
        assert_eq!(terrain, ws::message_data(7, 0, b"{\"entities\":[]}"));
        assert_eq!(viewer.summary().messages_sent, 1);
        viewer.stop(std::time::Duration::from_millis(100)).await;
    }

    fn request(url: &str) -> tokio_tungstenite::tungstenite::handshake::client::Request {
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        req
    }

    /// Off loopback the viewer needs TLS: without it, it does not start; with it, a client
    /// that trusts its certificate and gives the token is served over TLS 1.3, while a plain
    /// WebSocket client and a TLS client without the token are refused and counted. A key file
    /// others may read is refused.
    #[tokio::test]
    async fn off_loopback_the_viewer_serves_only_over_tls_with_its_token() {
        use crate::config::ViewerTls;
        use std::os::unix::fs::PermissionsExt;
        let plain = ViewerSettings {
            live: true,
            address: "0.0.0.0:0".into(),
            ..Default::default()
        };
        let e = Viewer::start(&plain).err().unwrap().to_string();
        assert!(
            e.contains("viewer.tls") && e.contains("cosim viewer-cert"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let (cert, key, _) = super::super::tls::self_signed(&["localhost".into()]).unwrap();
        let (cert_file, key_file) = (dir.path().join("v.crt"), dir.path().join("v.key"));
        std::fs::write(&cert_file, &cert).unwrap();
        std::fs::write(&key_file, &key).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let settings = ViewerSettings {
            tls: Some(ViewerTls {
                cert_file,
                key_file: key_file.clone(),
            }),
            ..plain
        };
        let e = Viewer::start(&settings).err().unwrap().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let viewer = Viewer::start(&settings).unwrap();
        let port = viewer.address().port();
        let url = viewer.url();
        assert!(url.starts_with("wss://0.0.0.0:"), "{url}");
        let token = url.split_once("/?token=").unwrap().1.to_owned();

        // Plain WebSocket to the TLS port: no handshake.
        let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let plain =
            tokio_tungstenite::client_async(request(&format!("ws://127.0.0.1:{port}")), tcp);
        assert!(plain.await.is_err());

        let mut roots = rustls::RootCertStore::empty();
        use rustls::pki_types::pem::PemObject;
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(cert.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tls = || async {
            let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
            connector.connect(name, tcp).await.unwrap()
        };
        let base = format!("wss://localhost:{port}/");
        let refused = tokio_tungstenite::client_async(request(&base), tls().await).await;
        match refused {
            Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
                assert_eq!(r.status(), StatusCode::UNAUTHORIZED)
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
        let (mut ws, _) =
            tokio_tungstenite::client_async(request(&format!("{base}?token={token}")), tls().await)
                .await
                .unwrap();
        let first = tokio::time::timeout(std::time::Duration::from_secs(5), ws.next())
            .await
            .unwrap();
        assert!(
            matches!(&first, Some(Ok(Message::Text(t))) if t.contains("serverInfo")),
            "{first:?}"
        );
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while viewer.summary().refused < 2 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let summary = viewer.summary();
        assert_eq!((summary.refused, summary.clients), (2, 1), "{summary:?}");
        viewer.stop(std::time::Duration::from_millis(100)).await;
    }
}
