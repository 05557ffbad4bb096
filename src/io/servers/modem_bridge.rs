//! Modem bridges: one TCP listener per configured modem (`vehicles[].modem.tcp_port` on
//! `acoustic_modems.bind`), serving either an emulated Micro-Modem ([`crate::model::modem`])
//! or, with `modem.passthrough`, a byte-for-byte relay to a real modem on a serial device or a
//! TCP address.
//!
//! Like the `socat` bridge it replaces, a port serves **one client at a time**: a second
//! connection gets `$CAERR,hhmmss,BRIDGE,1,port busy …` and is closed. Host lines (ended by
//! `\n` or `\r`, at most [`MAX_LINE`] bytes; longer ones are cut there and answered with
//! `$CAERR`) are stamped with the current sim time and fed to the state machine; the lines it
//! schedules are written when the sim clock reaches them. Output waiting for a slow client is
//! bounded ([`OUT_QUEUE`] lines); lines with no client or a full queue are dropped and counted
//! ([`BridgeStats`]), as a serial port with nothing attached loses them. A host that ends its
//! side of the connection (`printf '$CCCFQ,SRC\r\n' | socat - tcp:…`) gets the answers to the
//! lines it sent before the bridge closes the connection.
//!
//! # Sim clock
//! [`ModemBridges::on_window`] is the hook the coordinator calls once per window k with the
//! window's start time and ChannelData (the world at `k·W`). Between calls the bridges read sim
//! time off the wall clock as the live network side does ([`crate::clock::WindowClock`]):
//! `t = k·W + (wall − wall at the window's opening) · real_time_factor`, held inside the current
//! window so the modems never run ahead of the channel they have (nor behind the window the
//! coordinator is in). With `real_time_factor = 0` (as fast as possible) sim time
//! jumps from window start to window start; modem traffic then has no meaningful timing, so
//! scenarios with modems should be paced.

use crate::clock::WindowClock;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::{LoadedScenario, ModemPassthrough};
use crate::model::modem::{FrameLedgerEntry, FrameLedgerSummary, Modems};
use crate::output::summary::{BridgeStats, ModemReport};
use crate::wire::channel::ChannelView;
use crate::wire::nmea::{Report, MAX_SENTENCE};
use crate::wire::utc::{Civil, TimeOfDay};

/// Longest host line passed on (bytes, without its ending).
pub const MAX_LINE: usize = MAX_SENTENCE;
/// Lines queued for one client before further ones are dropped.
pub const OUT_QUEUE: usize = 4096;
/// Most frame ledger entries [`ModemBridges::drain_frames`] hands out in one call; the rest
/// wait for the next call.
pub const MAX_FRAMES_PER_DRAIN: usize = 65_536;
/// How often scheduled output is released (wall time).
const TICK: Duration = Duration::from_millis(2);
/// Longest a closing connection spends writing what is queued for its host.
const FLUSH: Duration = Duration::from_secs(1);
/// Longest a newcomer waits for the previous connection to wind down before it is refused.
const WIND_DOWN: Duration = Duration::from_millis(200);

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    refused: AtomicU64,
    lines_in: AtomicU64,
    lines_out: AtomicU64,
    dropped_no_client: AtomicU64,
    dropped_queue_full: AtomicU64,
    long_lines: AtomicU64,
    passthrough_failures: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> BridgeStats {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        BridgeStats {
            connections: g(&self.connections),
            refused: g(&self.refused),
            lines_in: g(&self.lines_in),
            lines_out: g(&self.lines_out),
            dropped_no_client: g(&self.dropped_no_client),
            dropped_queue_full: g(&self.dropped_queue_full),
            long_lines: g(&self.long_lines),
            passthrough_failures: g(&self.passthrough_failures),
        }
    }
}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

struct Shared {
    modems: Mutex<Modems>,
    clock: Mutex<WindowClock>,
    clients: Vec<Mutex<Option<mpsc::Sender<String>>>>,
    counters: Counters,
}

impl Shared {
    fn sim_now(&self) -> u64 {
        self.clock
            .lock()
            .map(|c| c.sim_at(Instant::now()))
            .unwrap_or(0)
    }

    /// Advances the modems to the current sim time and hands their output to the clients.
    fn pump(&self) {
        let now = self.sim_now();
        let out = match self.modems.lock() {
            Ok(mut f) => {
                f.advance(now);
                f.drain()
            }
            Err(_) => return,
        };
        self.deliver(out);
    }

    fn deliver(&self, out: Vec<crate::model::modem::Output>) {
        for o in out {
            let Some(slot) = self.clients.get(o.modem) else {
                continue;
            };
            let sender = slot.lock().ok().and_then(|s| s.clone());
            match sender {
                None => bump(&self.counters.dropped_no_client),
                Some(tx) => match tx.try_send(o.line) {
                    Ok(()) => bump(&self.counters.lines_out),
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        bump(&self.counters.dropped_queue_full)
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => {
                        bump(&self.counters.dropped_no_client)
                    }
                },
            }
        }
    }

    fn host_line(&self, modem: usize, line: &[u8]) {
        bump(&self.counters.lines_in);
        let now = self.sim_now();
        let out = match self.modems.lock() {
            Ok(mut f) => {
                f.host_line(modem, now, line);
                f.drain()
            }
            Err(_) => return,
        };
        self.deliver(out);
    }
}

/// Every modem bridge of a scenario and the emulated modems behind them.
/// Dropping it stops the bridges (connections included).
pub struct ModemBridges {
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
    addrs: Vec<(String, SocketAddr)>,
    /// Names of the emulated modems' vehicles, in modem order (the ledger's `from`/`to`).
    names: Vec<String>,
    /// Ledger entries already handed out by [`Self::drain_frames`].
    drained: usize,
}

impl ModemBridges {
    /// Binds every bridge of the scenario; None when `acoustic_modems` is absent.
    pub async fn start(loaded: &LoadedScenario) -> anyhow::Result<Option<ModemBridges>> {
        let s = &loaded.scenario;
        let (Some(cfg), Some(modems)) = (&s.acoustic_modems, Modems::from_scenario(s)) else {
            return Ok(None);
        };
        let specs = modems.modems();
        let names = specs.iter().map(|m| m.name.clone()).collect();
        let shared = Arc::new(Shared {
            modems: Mutex::new(modems),
            clock: Mutex::new(WindowClock::new(loaded.schedule(), s.real_time_factor)),
            clients: specs.iter().map(|_| Mutex::new(None)).collect(),
            counters: Counters::default(),
        });
        let mut tasks = Vec::new();
        let mut addrs = Vec::new();
        let file = loaded.file.display();
        for (i, spec) in specs.iter().enumerate() {
            let addr = SocketAddr::new(cfg.bind, spec.tcp_port);
            let listener = TcpListener::bind(addr).await.map_err(|e| {
                super::cannot_listen(&format!("{file}: modem {}", spec.name), addr, e)
            })?;
            addrs.push((spec.name.clone(), addr));
            tasks.push(tokio::spawn(serve_emulated(listener, shared.clone(), i)));
        }
        for v in &s.vehicles {
            let Some(m) = &v.modem else { continue };
            let Some(p) = &m.passthrough else { continue };
            let addr = SocketAddr::new(cfg.bind, m.tcp_port);
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|e| super::cannot_listen(&format!("{file}: modem {}", v.name), addr, e))?;
            addrs.push((v.name.clone(), addr));
            tasks.push(tokio::spawn(serve_passthrough(
                listener,
                shared.clone(),
                p.clone(),
            )));
        }
        let ticker = shared.clone();
        tasks.push(tokio::spawn(async move {
            let mut every = tokio::time::interval(TICK);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                every.tick().await;
                ticker.pump();
            }
        }));
        Ok(Some(ModemBridges {
            shared,
            tasks,
            addrs,
            names,
            drained: 0,
        }))
    }

    /// **The coordinator's hook**: call once per window, in order, when the window starts,
    /// with the window's index, its start (sim ns, `k·W`), the wall instant it opened at (not
    /// later than now) and the checked ChannelData that describes the world at that time. It updates the
    /// modems' channel, moves the sim clock into the window and releases whatever became due.
    pub fn on_window(
        &mut self,
        window: u32,
        start_ns: u64,
        opened: Instant,
        channel: &ChannelView,
    ) {
        if let Ok(mut c) = self.shared.clock.lock() {
            c.open(window, opened.min(Instant::now()));
        }
        if let Ok(mut f) = self.shared.modems.lock() {
            f.set_channel(start_ns, channel);
        }
        self.shared.pump();
    }

    /// Appends to `out` the frame ledger entries decided since the last call (at most
    /// [`MAX_FRAMES_PER_DRAIN`]; any beyond wait for the next call, none is lost); returns how
    /// many. [`ModemReport::drained`] tells [`Self::finish`]'s caller where the rest start.
    pub fn drain_frames(&mut self, out: &mut Vec<FrameLedgerEntry>) -> usize {
        let Ok(f) = self.shared.modems.lock() else {
            return 0;
        };
        let ledger = f.ledger();
        let from = self.drained.min(ledger.len());
        let to = ledger.len().min(from + MAX_FRAMES_PER_DRAIN);
        out.extend_from_slice(&ledger[from..to]);
        self.drained = to;
        to - from
    }

    /// The emulated modems' vehicle names in modem order (what a ledger entry's `from` and `to`
    /// index).
    pub fn modem_names(&self) -> &[String] {
        &self.names
    }

    /// Current sim time as the bridges see it (ns).
    pub fn sim_now_ns(&self) -> u64 {
        self.shared.sim_now()
    }

    /// `(vehicle name, listening address)` of every bridge.
    pub fn addresses(&self) -> &[(String, SocketAddr)] {
        &self.addrs
    }

    pub fn stats(&self) -> BridgeStats {
        self.shared.counters.snapshot()
    }

    /// Ends the run at sim time `end_ns`: copies still in the water are dropped with
    /// `shutdown`, the bridges close, and the ledger is returned.
    pub fn finish(self, end_ns: u64) -> ModemReport {
        for t in &self.tasks {
            t.abort();
        }
        let (ledger, entries) = match self.shared.modems.lock() {
            Ok(mut f) => {
                f.shutdown(end_ns);
                (f.ledger_summary(), f.ledger().to_vec())
            }
            Err(_) => (FrameLedgerSummary::default(), Vec::new()),
        };
        for c in &self.shared.clients {
            if let Ok(mut c) = c.lock() {
                c.take();
            }
        }
        let drained = self.drained.min(entries.len());
        ModemReport {
            ledger,
            bridges: self.shared.counters.snapshot(),
            entries,
            drained,
        }
    }
}

impl Drop for ModemBridges {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

fn busy_line() -> String {
    let now = Civil::from_ns(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64),
    );
    Report::BridgeBusy {
        time: TimeOfDay::seconds(&now),
    }
    .emit()
}

async fn refuse(mut sock: TcpStream) {
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        sock.write_all(busy_line().as_bytes()),
    )
    .await;
    let _ = sock.shutdown().await;
}

/// Accepts clients on `listener` one at a time, as a real `socat` bridge does: while the
/// current client's task runs, a newcomer is refused with a clear line and closed.
async fn one_client_at_a_time(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut start: impl FnMut(TcpStream) -> JoinHandle<()>,
) {
    let mut current: Option<JoinHandle<()>> = None;
    loop {
        let Ok((sock, _peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // A host that has just closed may reconnect before its connection has wound down.
        let busy = match current.as_mut() {
            Some(h) if !h.is_finished() => tokio::time::timeout(WIND_DOWN, h).await.is_err(),
            _ => false,
        };
        if busy {
            bump(&shared.counters.refused);
            tokio::spawn(refuse(sock));
            continue;
        }
        bump(&shared.counters.connections);
        let _ = sock.set_nodelay(true);
        current = Some(start(sock));
    }
}

async fn serve_emulated(listener: TcpListener, shared: Arc<Shared>, modem: usize) {
    let s = shared.clone();
    one_client_at_a_time(listener, shared, move |sock| {
        let (tx, rx) = mpsc::channel(OUT_QUEUE);
        if let Ok(mut slot) = s.clients[modem].lock() {
            *slot = Some(tx);
        }
        tokio::spawn(connection(sock, s.clone(), modem, rx))
    })
    .await
}

async fn connection(
    sock: TcpStream,
    shared: Arc<Shared>,
    modem: usize,
    mut rx: mpsc::Receiver<String>,
) {
    let (mut r, mut w) = sock.into_split();
    let mut writer = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if w.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let mut buf = [0u8; 4096];
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut too_long = false;
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' || b == b'\r' {
                if !line.is_empty() || too_long {
                    if too_long {
                        bump(&shared.counters.long_lines);
                        // The parser answers an over-long line with `$CAERR`.
                        line.push(b'X');
                    }
                    shared.host_line(modem, &line);
                }
                line.clear();
                too_long = false;
            } else if line.len() < MAX_LINE {
                line.push(b);
            } else {
                too_long = true;
            }
        }
    }
    // The host has ended its side (or gone): no further output is queued for it, and what is
    // queued — the answers to every line it sent — is written before the connection closes.
    if let Ok(mut slot) = shared.clients[modem].lock() {
        slot.take();
    }
    if tokio::time::timeout(FLUSH, &mut writer).await.is_err() {
        writer.abort();
    }
}

async fn serve_passthrough(listener: TcpListener, shared: Arc<Shared>, target: ModemPassthrough) {
    let s = shared.clone();
    one_client_at_a_time(listener, shared, move |sock| {
        let target = target.clone();
        let shared = s.clone();
        tokio::spawn(async move {
            let result = match &target {
                ModemPassthrough::Tcp { tcp } => match TcpStream::connect(tcp.as_str()).await {
                    Ok(mut far) => {
                        let _ = far.set_nodelay(true);
                        let mut sock = sock;
                        tokio::io::copy_bidirectional(&mut sock, &mut far)
                            .await
                            .map(|_| ())
                    }
                    Err(e) => Err(e),
                },
                ModemPassthrough::Serial { serial, baud } => match serial::open(serial, *baud) {
                    Ok(file) => serial::relay(sock, file).await,
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = result {
                bump(&shared.counters.passthrough_failures);
                tracing::warn!("modem passthrough to {target:?}: {e}");
            }
        })
    })
    .await
}

mod serial {
    use std::fs::File;
    use std::io::{self, Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;

    use tokio::io::unix::AsyncFd;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    fn speed(baud: u32) -> Option<libc::speed_t> {
        Some(match baud {
            1200 => libc::B1200,
            2400 => libc::B2400,
            4800 => libc::B4800,
            9600 => libc::B9600,
            19200 => libc::B19200,
            38400 => libc::B38400,
            57600 => libc::B57600,
            115200 => libc::B115200,
            230400 => libc::B230400,
            _ => return None,
        })
    }

    /// Opens a serial device raw (8N1, no echo, no flow control) at `baud`, non-blocking.
    pub fn open(path: &str, baud: u32) -> io::Result<File> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(path)?;
        let fd = file.as_raw_fd();
        let speed = speed(baud).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unsupported baud {baud}"),
            )
        })?;
        // SAFETY: fd is open for the lifetime of `file`; termios is plain data filled by tcgetattr.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut t) != 0 {
                return Err(io::Error::last_os_error());
            }
            libc::cfmakeraw(&mut t);
            t.c_cflag |= libc::CLOCAL | libc::CREAD;
            t.c_cflag &= !libc::CRTSCTS;
            if libc::cfsetispeed(&mut t, speed) != 0
                || libc::cfsetospeed(&mut t, speed) != 0
                || libc::tcsetattr(fd, libc::TCSANOW, &t) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(file)
    }

    /// Copies bytes both ways between a TCP client and a serial device until either closes.
    pub async fn relay(sock: TcpStream, file: File) -> io::Result<()> {
        // SAFETY: `file` owns its descriptor and nothing else closes or replaces it while the
        // AsyncFd holds it.
        let fd = unsafe { AsyncFd::register(file) }.map_err(|e| io::Error::other(e.to_string()))?;
        let (mut r, mut w) = sock.into_split();
        let mut up = [0u8; 4096];
        let mut down = [0u8; 4096];
        loop {
            tokio::select! {
                n = r.read(&mut up) => {
                    let n = n?;
                    if n == 0 {
                        return Ok(());
                    }
                    let mut data = &up[..n];
                    while !data.is_empty() {
                        let mut g = fd.writable().await?;
                        match g.try_io(|f| f.get_ref().write(data)) {
                            Ok(Ok(k)) => data = &data[k..],
                            Ok(Err(e)) => return Err(e),
                            Err(_) => continue,
                        }
                    }
                }
                g = fd.readable() => {
                    let mut g = g?;
                    match g.try_io(|f| f.get_ref().read(&mut down)) {
                        Ok(Ok(0)) => return Ok(()),
                        Ok(Ok(k)) => w.write_all(&down[..k]).await?,
                        Ok(Err(e)) => return Err(e),
                        Err(_) => {}
                    }
                }
            }
        }
    }
}
