//! Emulated Micro-Modems over TCP: Goby MMDriver's start-up handshake, data at rates 0 and 5
//! with the arrival delay checked against the geometry, acks, pings, WHOI's Python driver
//! through a socat pty, range and terrain, beam-traced paths (a shadow zone the straight line
//! calls clear, sound over a bank it calls blocked), one client per port, malformed input,
//! passthrough.
//!
//! Scenarios run paced (`real_time_factor` > 1, short windows); assertions on timing are made
//! in sim time (the ledger, the modems' heartbeats); the one in wall time only when the run
//! kept up with the wall clock. A wait for a line is bounded only to end a run that hung.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{self, viewer_client::free_port};
use netsim_cosim::config::{self, LoadedScenario};
use netsim_cosim::coord::RunReport;
use netsim_cosim::model::fate::{DropReason, Fate};
use netsim_cosim::model::modem::{self, Modems, TxKind};
use netsim_cosim::wire::nmea::{emit, Sentence, PARAMS};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{tcp::OwnedWriteHalf, TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

const RTF: f64 = 5.0;

/// How long a wait for a modem's line lasts before the run is taken to have hung (wall).
const HUNG: Duration = Duration::from_secs(60);

struct Vehicle<'a> {
    name: &'a str,
    port: u16,
    id: u8,
    at: [f64; 3],
    extra: &'a str,
}

fn v<'a>(name: &'a str, port: u16, id: u8, at: [f64; 3]) -> Vehicle<'a> {
    Vehicle {
        name,
        port,
        id,
        at,
        extra: "",
    }
}

/// A paced scenario with stationary vehicles, fixed sound speed 1500 m/s, flat sea floor.
fn scenario(dir: &Path, vehicles: &[Vehicle], world: &str) -> LoadedScenario {
    load_scenario(
        dir,
        format!(
            "name: modem_test\nwindow_ms: 20\nduration_s: 600\nseed: 3\nreal_time_factor: {RTF}\n\
             world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n  water: {{sound_speed: 1500}}\n{world}\
             acoustic_modems: {{epoch_utc: \"2026-11-21T05:00:00Z\", absorption: thorp}}\n"
        ),
        vehicles,
    )
}

/// `head` (every section but `vehicles`) and the stationary `vehicles` with their modems,
/// written into `dir` and loaded.
fn load_scenario(dir: &Path, head: String, vehicles: &[Vehicle]) -> LoadedScenario {
    let mut y = head + "vehicles:\n";
    for (i, v) in vehicles.iter().enumerate() {
        y += &format!(
            "  - name: {}\n    addresses: [10.30.0.{}/24]\n    modem: {{tcp_port: {}, id: {}{}}}\n    start: {{x: {}, y: {}, z: {}}}\n    motion: {{kind: stationary}}\n",
            v.name,
            i + 1,
            v.port,
            v.id,
            v.extra,
            v.at[0],
            v.at[1],
            v.at[2]
        );
    }
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, y).unwrap();
    config::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

const FLAT: &str =
    "  terrain: {kind: procedural, size_m: [8000, 8000], cell_size_m: 40, base_height_m: -300}\n";

struct Run {
    stop: Option<oneshot::Sender<()>>,
    handle: tokio::task::JoinHandle<RunReport>,
}

async fn start(loaded: &LoadedScenario) -> Run {
    start_in(loaded, None).await
}

/// A run writing its record into `out` (none: no record).
async fn start_in(loaded: &LoadedScenario, out: Option<PathBuf>) -> Run {
    let c = netsim_cosim::coord::physics_coordinator(loaded, None, out)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let (tx, rx) = oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        c.run(async {
            let _ = rx.await;
        })
        .await
        .unwrap()
    });
    Run {
        stop: Some(tx),
        handle,
    }
}

impl Run {
    async fn finish(mut self) -> RunReport {
        let _ = self.stop.take().unwrap().send(());
        self.handle.await.unwrap()
    }
}

/// A host on one modem port: lines with their wall arrival times.
struct Host {
    w: OwnedWriteHalf,
    rx: mpsc::UnboundedReceiver<(Instant, String)>,
    seen: Vec<(Instant, String)>,
}

impl Host {
    async fn connect(port: u16) -> Host {
        let s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let (r, w) = s.into_split();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(r).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                if tx.send((Instant::now(), l)).is_err() {
                    break;
                }
            }
        });
        Host {
            w,
            rx,
            seen: Vec::new(),
        }
    }

    async fn send(&mut self, line: &str) {
        self.w
            .write_all(format!("{line}\r\n").as_bytes())
            .await
            .unwrap();
    }

    /// Sends `$<id>,<fields>*CS`.
    async fn cmd(&mut self, id: &str, fields: &[&str]) {
        self.w.write_all(emit(id, fields).as_bytes()).await.unwrap();
    }

    /// The next line, checked (a checksum, in upper case), kept in `seen`; waits as long as a
    /// run that has not hung could take ([`HUNG`]).
    async fn next_line(&mut self, waiting_for: &str) -> (Instant, String) {
        match tokio::time::timeout(HUNG, self.rx.recv()).await {
            Ok(Some((t, l))) => {
                let s = Sentence::parse(l.as_bytes()).unwrap_or_else(|e| panic!("{l:?}: {e}"));
                assert!(
                    s.had_checksum
                        && l.rsplit_once('*')
                            .unwrap()
                            .1
                            .chars()
                            .all(|c| !c.is_ascii_lowercase()),
                    "{l}"
                );
                self.seen.push((t, l.clone()));
                (t, l)
            }
            _ => panic!(
                "no {waiting_for} within {} s; saw {:#?}",
                HUNG.as_secs(),
                self.seen.iter().map(|x| &x.1).collect::<Vec<_>>()
            ),
        }
    }

    /// The next line starting with `prefix` (those before it are kept in `seen`).
    async fn expect(&mut self, prefix: &str) -> (Instant, String) {
        loop {
            let (t, l) = self.next_line(prefix).await;
            if l.starts_with(prefix) {
                return (t, l);
            }
        }
    }

    /// The lines arriving until this modem's heartbeat (`$CAREV,hhmmss,AUV`, every 10 s of sim
    /// time) says its clock reached `hhmmss`: a wait in sim time, however fast the run goes.
    /// (A modem's clock starts at the scenario's `epoch_utc`, 05:00:00, unless a host sets it.)
    async fn until_clock(&mut self, hhmmss: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let (_, l) = self.next_line(&format!("$CAREV at {hhmmss}")).await;
            let reached = l
                .strip_prefix("$CAREV,")
                .and_then(|r| r.split_once(','))
                .is_some_and(|(time, event)| event.starts_with("AUV") && time >= hhmmss);
            out.push(l);
            if reached {
                return out;
            }
        }
    }
}

fn fields(line: &str) -> Vec<String> {
    Sentence::parse(line.as_bytes())
        .unwrap()
        .fields
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Goby MMDriver's start-up (see the notes): configuration, reboot, keep-alive, clock, query.
async fn goby_startup(h: &mut Host, id: u8) {
    let id_s = id.to_string();
    for (name, value) in [
        ("ALL", "0"),
        ("CST", "1"),
        ("SRC", id_s.as_str()),
        ("REV", "1"),
        ("RXP", "1"),
    ] {
        h.cmd("CCCFG", &[name, value]).await;
        let (_, l) = h.expect("$CACFG").await;
        assert_eq!(fields(&l), vec![name, value]);
    }
    h.cmd("CCMSC", &[&id_s, &id_s, "0"]).await;
    h.expect("$CAMSC").await;
    let (_, l) = h.expect("$CAREV").await;
    assert_eq!(fields(&l)[1], "INIT");
    // The driver waits 2 s after INIT; the keep-alive then.
    h.cmd("CCCFQ", &["SRC"]).await;
    let (_, l) = h.expect("$CACFG").await;
    assert_eq!(fields(&l), vec!["SRC", id_s.as_str()]);
    // MM1 clock: echo within 1 s of what was set.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let c = modem::Civil::from_ns(now);
    let set = [
        format!("{:04}", c.year),
        format!("{:02}", c.month),
        format!("{:02}", c.day),
        format!("{:02}", c.hour),
        format!("{:02}", c.minute),
        format!("{:02}", c.second),
    ];
    let refs: Vec<&str> = set.iter().map(|s| s.as_str()).collect();
    h.cmd("CCCLK", &refs).await;
    let (_, l) = h.expect("$CACLK").await;
    let f: Vec<i64> = fields(&l).iter().map(|x| x.parse().unwrap()).collect();
    let echoed = modem::Civil {
        year: f[0],
        month: f[1],
        day: f[2],
        hour: f[3],
        minute: f[4],
        second: f[5],
        nanos: 0,
    }
    .to_ns()
    .unwrap();
    let sent = modem::Civil { nanos: 0, ..c }.to_ns().unwrap();
    assert!((echoed - sent).abs() <= 1_000_000_000, "{l} vs {set:?}");
    // MM2 clock as well.
    h.cmd("CCTMQ", &["0"]).await;
    h.expect("$CATMQ").await;
    h.cmd("CCCFQ", &["ALL"]).await;
    // One answer per parameter.
    let mut all = Vec::new();
    while all.len() < PARAMS.len() {
        all.push(h.expect("$CACFG").await.1);
    }
    for want in [
        format!("SRC,{id}"),
        "CST,1".into(),
        "REV,1".into(),
        "RXP,1".into(),
        "DTO,2".into(),
        "XST,0".into(),
    ] {
        assert!(
            all.iter()
                .any(|l| l.starts_with(&format!("$CACFG,{want}*"))),
            "{want} in {all:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goby_startup_then_rate_0_and_5_with_ack_and_ping() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (free_port(), free_port());
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [0.0, 0.0, -20.0]),
            v("bravo", pb, 2, [1500.0, 0.0, -20.0]),
        ],
        FLAT,
    );
    let run = start(&loaded).await;
    let mut a = Host::connect(pa).await;
    let mut b = Host::connect(pb).await;
    goby_startup(&mut a, 1).await;
    goby_startup(&mut b, 2).await;

    // Rate 0, one 32-byte frame, ack requested.
    let data0 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    a.cmd("CCCYC", &["0", "1", "2", "0", "1", "1"]).await;
    let (_, l) = a.expect("$CACYC").await;
    assert_eq!(fields(&l), vec!["0", "1", "2", "0", "1", "1"]);
    let (_, l) = a.expect("$CADRQ").await;
    assert_eq!(&fields(&l)[1..], &["1", "2", "1", "32", "1"]);
    a.cmd("CCTXD", &["1", "2", "1", data0]).await;
    let (_, l) = a.expect("$CATXD").await;
    assert_eq!(fields(&l), vec!["1", "2", "1", "32"]);
    a.expect("$CATXP").await;
    let (t_txf, _) = a.expect("$CATXF").await;
    let (_, l) = b.expect("$CACYC").await;
    assert_eq!(fields(&l), vec!["0", "1", "2", "0", "1", "1"]);
    let (t_rxd, l) = b.expect("$CARXD").await;
    assert_eq!(fields(&l), vec!["1", "2", "1", "1", data0]);
    // 1500 m at 1500 m/s: one second of sim time after the end of the transmission (the
    // ledger says so exactly, below; the wall clock when the run kept up).
    let wall = t_rxd.duration_since(t_txf).as_secs_f64();
    let (_, cst) = b.expect("$CACST").await;
    let c = fields(&cst);
    assert_eq!(c.len(), 28, "{cst}");
    assert_eq!(
        (
            c[0].as_str(),
            c[11].as_str(),
            c[12].as_str(),
            c[13].as_str(),
            c[16].as_str(),
            c[17].as_str()
        ),
        ("0", "0", "1", "2", "1", "0")
    );
    assert!(c[19].parse::<f64>().unwrap() > 20.0, "SNR {cst}");
    assert_eq!((c[26].as_str(), c[27].as_str()), ("25000", "5000"));
    let (_, l) = a.expect("$CAACK").await;
    assert_eq!(fields(&l), vec!["2", "1", "1", "1"]);

    // Rate 5, two 256-byte frames, no ack.
    let f1: String = (0..256).map(|i| format!("{:02x}", i as u8)).collect();
    let f2: String = (0..256).map(|i| format!("{:02X}", 255 - i as u8)).collect();
    a.cmd("CCCYC", &["0", "1", "2", "5", "0", "2"]).await;
    a.expect("$CACYC").await;
    let (_, l) = a.expect("$CADRQ").await;
    assert_eq!(&fields(&l)[4..], &["256", "1"]);
    a.cmd("CCTXD", &["1", "2", "0", &f1]).await;
    let (_, l) = a.expect("$CADRQ").await;
    assert_eq!(fields(&l)[5], "2");
    a.cmd("CCTXD", &["1", "2", "0", &f2]).await;
    a.expect("$CATXP").await;
    let (_, l) = b.expect("$CARXD").await;
    assert_eq!(fields(&l), vec!["1", "2", "0", "1", f1.as_str()]);
    let (_, l) = b.expect("$CARXD").await;
    assert_eq!(
        fields(&l),
        vec!["1", "2", "0", "2", f2.to_lowercase().as_str()]
    );

    // Two-way ping.
    a.cmd("CCMPC", &["1", "2"]).await;
    a.expect("$CAMPC").await;
    let (_, l) = b.expect("$CAMPA").await;
    assert_eq!(fields(&l), vec!["1", "2"]);
    let (_, l) = a.expect("$CAMPR").await;
    assert_eq!(fields(&l), vec!["2", "1", "1.0000"]);

    // Mini-packet.
    a.cmd("CCMUC", &["1", "2", "1abc"]).await;
    a.expect("$CAMUC").await;
    let (_, l) = b.expect("$CAMUA").await;
    assert_eq!(fields(&l), vec!["1", "2", "1ABC"]);

    let report = run.finish().await;
    common::assert_if_kept_pace(
        &serde_json::to_value(&report).unwrap(),
        (wall - 1.0 / RTF).abs() < 0.12,
        &format!(
            "a frame's wall-clock arrival {wall} s after its end, {} s expected",
            1.0 / RTF
        ),
    );
    let m = report.modems.expect("modem report");
    // Sim-time delay of every data frame: end of transmission + d/c.
    let data: Vec<_> = m
        .entries
        .iter()
        .filter(|e| e.kind == TxKind::Data)
        .collect();
    assert_eq!(data.len(), 3);
    for e in &data {
        assert_eq!(e.fate, Fate::Delivered);
        let frames = if e.rate == 0 { 1 } else { 2 };
        let arrival_s =
            (e.decided_ns - e.sent_ns) as f64 / 1e9 - modem::packet_airtime_s(e.rate, frames);
        assert!((arrival_s - 1.0).abs() < 1e-6, "{e:?}: {arrival_s}");
    }
    assert_eq!(m.ledger.sent, m.ledger.delivered, "{:?}", m.ledger);
    assert!(
        m.ledger.sent >= 7,
        "3 data frames, ack, ping, reply, mini: {:?}",
        m.ledger
    );
    assert_eq!(m.bridges.refused, 0);
    // Heartbeats came (every 10 s of sim time).
    assert!(a
        .seen
        .iter()
        .any(|(_, l)| l.starts_with("$CAREV") && l.contains(",AUV,")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoi_python_driver_through_a_socat_pty() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (free_port(), free_port());
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 5, [0.0, 0.0, -20.0]),
            v("bravo", pb, 6, [750.0, 0.0, -20.0]),
        ],
        FLAT,
    );
    let run = start(&loaded).await;
    let pty = dir.path().join("mmA");
    let mut socat = tokio::process::Command::new("socat")
        .arg(format!("pty,link={},raw,echo=0", pty.display()))
        .arg(format!("tcp:127.0.0.1:{pa}"))
        .kill_on_drop(true)
        .spawn()
        .expect("socat (scripts/setup --test installs it)");
    let t0 = Instant::now();
    while !pty.exists() {
        assert!(t0.elapsed() < Duration::from_secs(5), "socat made no pty");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-test/bin/python");
    let have_acomms = std::process::Command::new(&python)
        .args(["-c", "import acomms, serial"])
        .output()
        .is_ok_and(|o| o.status.success());
    if have_acomms {
        let script = r#"
import sys, time
from acomms import Micromodem
m = Micromodem(name='test', log_path=sys.argv[2])
m.connect_serial(sys.argv[1], 19200)
t = time.time()
while m.id == -1 and time.time() - t < 5:
    time.sleep(0.05)
print('ID', m.id, flush=True)
m.send_ping(int(sys.argv[3]))
msg = m.wait_for_nmea_type('CAMPR', timeout=10)
print('CAMPR', ','.join(msg['params']) if msg else None, flush=True)
m.disconnect()
"#;
        let out = tokio::process::Command::new(&python)
            .args([
                "-c",
                script,
                &pty.display().to_string(),
                &dir.path().join("logs").display().to_string(),
                "6",
            ])
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("ID 5"),
            "stdout {stdout}\nstderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("CAMPR 6,5,0.5000"),
            "stdout {stdout}\nstderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        eprintln!(
            "acomms not installed (scripts/setup --test): plain serial read/write through the pty"
        );
        let mut f = tokio::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&pty)
            .await
            .unwrap();
        f.write_all(b"$CCCFQ,SRC\r\n").await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&got).contains("\r\n") {
            let n = tokio::time::timeout(Duration::from_secs(5), f.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert!(String::from_utf8_lossy(&got).starts_with("$CACFG,SRC,5*"));
    }
    let _ = socat.kill().await;
    let report = run.finish().await;
    let m = report.modems.unwrap();
    assert_eq!(m.bridges.connections, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_range_and_behind_terrain_nothing_arrives_and_the_ledger_says_why() {
    // 45 km apart at 25 kHz: in-band SNR far below 0 dB.
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (free_port(), free_port());
    let wide = "  terrain: {kind: procedural, size_m: [100000, 20000], cell_size_m: 1000, base_height_m: -300}\n";
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [-22500.0, 0.0, -20.0]),
            v("bravo", pb, 2, [22500.0, 0.0, -20.0]),
        ],
        wide,
    );
    let run = start(&loaded).await;
    let mut a = Host::connect(pa).await;
    let mut b = Host::connect(pb).await;
    b.cmd("CCCFG", &["CST", "1"]).await;
    b.expect("$CACFG").await;
    a.cmd("CCCYC", &["0", "1", "2", "1", "0", "1"]).await;
    a.expect("$CADRQ").await;
    a.cmd("CCTXD", &["1", "2", "0", "cafe"]).await;
    a.expect("$CATXF").await;
    // 45 km / 1500 m/s = 30 s; nothing comes (wait 40 s of sim time).
    let heard = b.until_clock("050040").await;
    assert!(
        heard
            .iter()
            .all(|l| !l.starts_with("$CARXD") && !l.starts_with("$CACYC")),
        "{heard:?}"
    );
    let m = run.finish().await.modems.unwrap();
    assert_eq!(m.entries.len(), 1);
    let e = &m.entries[0];
    assert_eq!(e.fate, Fate::Dropped(DropReason::OutOfRange));
    assert!(e.snr_db.unwrap() < 0.0, "{e:?}");

    // Behind a ridge that rises above the path: NLOS, hundreds of dB of penetration loss.
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (free_port(), free_port());
    let ridge = "  terrain:\n    kind: procedural\n    size_m: [4000, 4000]\n    cell_size_m: 20\n    base_height_m: -300\n    ridges: [{from: [-2000, 0], to: [2000, 0], crest_height_m: -5, width_m: 600}]\n";
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [0.0, -1000.0, -60.0]),
            v("bravo", pb, 2, [0.0, 1000.0, -60.0]),
        ],
        ridge,
    );
    let run = start(&loaded).await;
    let mut a = Host::connect(pa).await;
    let mut b = Host::connect(pb).await;
    b.cmd("CCCFG", &["CST", "1"]).await;
    b.expect("$CACFG").await;
    a.cmd("CCMUC", &["1", "2", "0042"]).await;
    a.expect("$CAMUC").await;
    a.cmd("CCMPC", &["1", "2"]).await;
    // The ping may find the modem still sending the mini-packet: retry until accepted.
    loop {
        let (_, l) = a.expect("$CA").await;
        if l.starts_with("$CAMPC") {
            break;
        }
        if l.starts_with("$CAERR") {
            tokio::time::sleep(Duration::from_millis(50)).await;
            a.cmd("CCMPC", &["1", "2"]).await;
        }
    }
    // 2 km at 1500 m/s: within 10 s of sim time.
    let heard = b.until_clock("050010").await;
    assert!(
        heard
            .iter()
            .all(|l| !l.starts_with("$CAMUA") && !l.starts_with("$CAMPA")),
        "{heard:?}"
    );
    let m = run.finish().await.modems.unwrap();
    assert_eq!(m.entries.len(), 2, "{:?}", m.entries);
    assert!(
        m.entries
            .iter()
            .all(|e| e.fate == Fate::Dropped(DropReason::OutOfRange) && e.snr_db.unwrap() < 0.0),
        "{:?}",
        m.entries
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_record_gets_every_modem_frame_as_the_run_goes() {
    use netsim_cosim::output::{record::Record, schema::Outcome};
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb, pc) = (free_port(), free_port(), free_port());
    let wide = "  terrain: {kind: procedural, size_m: [100000, 20000], cell_size_m: 1000, base_height_m: -300}\n";
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [0.0, 0.0, -20.0]),
            v("bravo", pb, 2, [1500.0, 0.0, -20.0]),
            v("charlie", pc, 3, [45000.0, 0.0, -20.0]),
        ],
        wide,
    );
    let out = dir.path().join("out");
    let run = start_in(&loaded, Some(out.clone())).await;
    let mut a = Host::connect(pa).await;
    let mut b = Host::connect(pb).await;
    a.cmd("CCMPC", &["1", "2"]).await;
    a.expect("$CAMPR").await;
    // Broadcast mini-packet: bravo hears it, charlie (45 km) cannot.
    a.cmd("CCMUC", &["1", "0", "1abc"]).await;
    b.expect("$CAMUA").await;
    // Stopped as by Ctrl-C: the record keeps every frame, and the summary.
    let record = out.join("record.mcap");
    let report = run.finish().await;
    assert!(report.interrupted);
    let m = report.modems.expect("modem report");
    let r = Record::read(&record).unwrap();
    assert_eq!(
        r.modem_frames.len(),
        m.entries.len(),
        "{:?}",
        r.modem_frames
    );
    for (f, e) in r.modem_frames.iter().zip(&m.entries) {
        let names = ["alpha", "bravo", "charlie"];
        assert_eq!(
            (f.src.as_str(), f.dst.as_deref()),
            (names[e.from], e.to.map(|t| names[t]))
        );
        assert_eq!(
            (f.t_s, f.decided_s),
            (e.sent_ns as f64 / 1e9, e.decided_ns as f64 / 1e9)
        );
        assert_eq!(
            f.outcome,
            if e.fate == Fate::Delivered {
                Outcome::Delivered
            } else {
                Outcome::Dropped
            }
        );
    }
    assert!(
        r.modem_frames
            .iter()
            .any(|f| f.kind == "ping" && f.outcome == Outcome::Delivered),
        "{:?}",
        r.modem_frames
    );
    assert!(
        r.modem_frames.iter().any(|f| f.kind == "mini"
            && f.dst.as_deref() == Some("charlie")
            && f.reason.as_deref() == Some("out of range")),
        "{:?}",
        r.modem_frames
    );
    assert!(r
        .summary
        .is_some_and(|s| s["modems"]["ledger"]["sent"] == m.ledger.sent));
}

#[test]
fn penetration_loss_near_the_threshold_gives_bad_crc_and_cst_shows_the_snr() {
    use netsim_cosim::wire::channel::{Channel, ChannelView};
    use netsim_cosim::wire::proto::{ChannelData, PathDetails};
    let dir = tempfile::tempdir().unwrap();
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", 1, 1, [0.0, 0.0, -20.0]),
            v("bravo", 2, 2, [1000.0, 0.0, -20.0]),
        ],
        FLAT,
    );
    let mut modems = Modems::from_scenario(&loaded.scenario).unwrap();
    let channel = |loss: f64| ChannelData {
        node_list: vec![
            0.0, 0.0, -20.0, 1.0, 0.0, 0.0, 0.0, 1000.0, 0.0, -20.0, 1.0, 0.0, 0.0, 0.0,
        ],
        path_details: vec![PathDetails {
            ids: vec![0, 1],
            los: loss == 0.0,
            num_hops: vec![4],
            hop_points: vec![
                0., 0., 0., 0., 400., 0., -20., 0., 600., 0., -20., loss, 1000., 0., -20., 0.,
            ],
            ..Default::default()
        }],
    };
    // SNR in LOS, then a penetration loss that leaves +1 dB in band: heard, but rate-5 frames
    // (2048 bits, BER ~1e-2) fail their CRC.
    modems.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(0.0)), 2).unwrap(),
    );
    modems.host_line(1, 0, b"$CCCFG,CST,1");
    modems.host_line(0, 0, b"$CCCYC,0,1,2,5,0,1");
    modems.host_line(0, 0, b"$CCTXD,1,2,0,0102");
    modems.advance(20_000_000_000);
    let los_cst = modems
        .drain()
        .into_iter()
        .find(|o| o.line.starts_with("$CACST"))
        .unwrap()
        .line;
    let snr_los: f64 = fields(&los_cst)[19].parse().unwrap();
    let loss = snr_los - 1.0;
    modems.set_channel(
        20_000_000_000,
        &ChannelView::check(&Channel::from(&channel(loss)), 2).unwrap(),
    );
    modems.host_line(0, 20_000_000_000, b"$CCCYC,0,1,2,5,0,1");
    modems.host_line(0, 20_000_000_000, b"$CCTXD,1,2,0,0102");
    modems.advance(40_000_000_000);
    let out: Vec<String> = modems
        .drain()
        .into_iter()
        .filter(|o| o.modem == 1)
        .map(|o| o.line)
        .collect();
    assert!(out.iter().all(|l| !l.starts_with("$CARXD")), "{out:?}");
    assert!(
        out.iter().any(|l| l.starts_with("$CAMSG,BAD_CRC")),
        "{out:?}"
    );
    let cst = fields(out.iter().find(|l| l.starts_with("$CACST")).unwrap());
    assert_eq!((cst[0].as_str(), cst[17].as_str()), ("1", "1"));
    assert!(
        (cst[19].parse::<f64>().unwrap() - 1.0).abs() < 0.11,
        "{cst:?}"
    );
    let l = modems.ledger();
    assert_eq!(
        (l[0].fate, l[1].fate),
        (Fate::Delivered, Fate::Dropped(DropReason::PacketError))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_per_port_and_malformed_input_gets_caerr() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (free_port(), free_port());
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [0.0, 0.0, -20.0]),
            v("bravo", pb, 2, [500.0, 0.0, -20.0]),
        ],
        FLAT,
    );
    let run = start(&loaded).await;
    let mut a = Host::connect(pa).await;
    a.cmd("CCCFQ", &["SRC"]).await;
    a.expect("$CACFG,SRC,1").await;
    // A second client: refused with a line, then closed.
    let mut second = TcpStream::connect(("127.0.0.1", pa)).await.unwrap();
    let mut got = String::new();
    tokio::time::timeout(Duration::from_secs(3), second.read_to_string(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert!(
        got.starts_with("$CAERR,") && got.contains(",BRIDGE,") && got.contains("port busy"),
        "{got}"
    );
    // The first is untouched.
    for (bad, code) in [
        ("$CCXYZ,1,2", "2"),
        ("CCCFG,SRC,1", "1"),
        ("$CCCFG,SRC,1*00", "1"),
        ("$CCCFG,NOPE,1", "3"),
        ("$CCCYC,0,1,2,9,0,1", "3"),
        ("$CCCYC,0,1,2", "3"),
        ("$CCTXD,1,2,0,00", "5"),
        ("$CCMUC,1,2,ffff", "3"),
        ("$GPGGA,1", "2"),
    ] {
        a.send(bad).await;
        let (_, l) = a.expect("$CA").await;
        assert!(
            l.starts_with("$CAERR,") && fields(&l)[1] == "NMEA" && fields(&l)[2] == code,
            "{bad} -> {l}"
        );
    }
    // Lower-case checksum and no checksum are accepted.
    let body = "CCCFQ,CST";
    let cs = body.bytes().fold(0u8, |a, b| a ^ b);
    a.send(&format!("${body}*{cs:02x}")).await;
    a.expect("$CACFG,CST,0").await;
    // A line far over the limit, random bytes, then a valid command: still answered.
    a.w.write_all(&vec![b'A'; 5000]).await.unwrap();
    a.send("").await;
    let (_, l) = a.expect("$CAERR").await;
    assert!(l.contains("exceeds"), "{l}");
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for _ in 0..200 {
        let n = rng.random_range(0..80);
        let mut junk: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        junk.retain(|b| *b != b'\n' && *b != b'\r');
        junk.push(b'\n');
        a.w.write_all(&junk).await.unwrap();
    }
    a.cmd("CCCFQ", &["SRC"]).await;
    a.expect("$CACFG,SRC,1").await;
    drop(a);
    // Once the first client has gone, the port takes a new one at once (the bridge gives the
    // closed connection 200 ms to wind down; on a machine too loaded for that the newcomer is
    // refused as busy, and tries again).
    let mut retries = 0;
    loop {
        let mut again = Host::connect(pa).await;
        again.cmd("CCCFQ", &["SRC"]).await;
        let (_, l) = again.expect("$CA").await;
        if l.starts_with("$CACFG,SRC,1") {
            break;
        }
        assert!(l.starts_with("$CAERR") && l.contains("BRIDGE"), "{l}");
        retries += 1;
        println!("refused as busy while the last connection wound down: {l}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let m = run.finish().await.modems.unwrap();
    assert_eq!(
        (m.bridges.refused, m.bridges.connections),
        (1 + retries, 2 + retries)
    );
    assert_eq!(m.bridges.long_lines, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_relays_bytes_to_a_real_modem() {
    // The stand-in for a real modem behind a socat bridge: answers each line with its own.
    let real = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let real_addr: SocketAddr = real.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = real.accept().await {
            tokio::spawn(async move {
                let (r, mut w) = s.into_split();
                let mut lines = BufReader::new(r).lines();
                while let Ok(Some(l)) = lines.next_line().await {
                    let reply = if l.starts_with("$CCCFQ,SRC") {
                        emit("CACFG", &["SRC", "9"])
                    } else {
                        format!("REAL:{l}\r\n")
                    };
                    if w.write_all(reply.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (pa, pr) = (free_port(), free_port());
    let extra = format!(", passthrough: {{tcp: \"{real_addr}\"}}");
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [0.0, 0.0, -20.0]),
            Vehicle {
                extra: &extra,
                ..v("hil", pr, 9, [300.0, 0.0, -20.0])
            },
        ],
        FLAT,
    );
    let run = start(&loaded).await;
    let mut h = Host::connect(pr).await;
    h.cmd("CCCFQ", &["SRC"]).await;
    h.expect("$CACFG,SRC,9").await;
    // Bytes, not sentences: whatever the host writes reaches the modem unchanged.
    h.send("hello \u{7f} modem").await;
    let (_, l) = h.rx.recv().await.unwrap();
    assert_eq!(l, "REAL:hello \u{7f} modem");
    let mut second = TcpStream::connect(("127.0.0.1", pr)).await.unwrap();
    let mut got = String::new();
    tokio::time::timeout(Duration::from_secs(3), second.read_to_string(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert!(got.contains("port busy"), "{got}");
    let m = run.finish().await.modems.unwrap();
    assert_eq!(m.bridges.refused, 1);
}

#[test]
fn passthrough_and_modem_config_is_validated_with_key_paths() {
    let dir = tempfile::tempdir().unwrap();
    let base = |extra: &str, top: &str| {
        format!(
            "name: t\nwindow_ms: 20\nduration_s: 1\nworld:\n  origin: {{lat_deg: 0, lon_deg: 0}}\n{FLAT}{top}vehicles:\n  - name: a\n    addresses: [10.0.0.1/24]\n    modem: {{tcp_port: 62000, id: 1{extra}}}\n    start: {{x: 0, y: 0, z: -10}}\n    motion: {{kind: stationary}}\n"
        )
    };
    let check = |text: String| -> Result<(), String> {
        let p: PathBuf = dir.path().join("s.yaml");
        std::fs::write(&p, text).unwrap();
        config::load(&p).map(|_| ()).map_err(|e| e.to_string())
    };
    assert!(check(base(
        ", passthrough: {serial: /dev/ttyUSB0, baud: 19200}",
        "acoustic_modems: {}\n"
    ))
    .is_ok());
    assert!(check(base(", passthrough: {tcp: \"10.0.0.9:4001\"}", "")).is_ok());
    let e = check(base(
        ", passthrough: {serial: /dev/ttyUSB0, baud: 12345}",
        "",
    ))
    .unwrap_err();
    assert!(e.contains("vehicles[0].modem.passthrough.baud"), "{e}");
    let e = check(base(", passthrough: {tcp: nowhere}", "")).unwrap_err();
    assert!(e.contains("vehicles[0].modem.passthrough.tcp"), "{e}");
    let e = check(base("", "acoustic_modems: {epoch_utc: yesterday}\n")).unwrap_err();
    assert!(e.contains("acoustic_modems.epoch_utc"), "{e}");
    let e = check(base("", "acoustic_modems: {heartbeat_s: 0}\n")).unwrap_err();
    assert!(e.contains("acoustic_modems.heartbeat_s"), "{e}");
}

/// A modem port another process holds: the run does not start, and its error names the file,
/// the modem, the address and how to find who holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modem_port_in_use_is_refused_naming_it_and_how_to_find_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let loaded = scenario(dir.path(), &[v("alpha", port, 1, [0.0, 0.0, -20.0])], FLAT);
    let e = match netsim_cosim::coord::physics_coordinator(&loaded, None, None).await {
        Ok(_) => panic!("a run started on a port in use"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        e.contains("scenario.yaml: modem alpha: cannot listen on 127.0.0.1:")
            && e.contains(&format!("`ss -ltnp 'sport = :{port}'`")),
        "{e}"
    );
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passthrough_relays_to_a_serial_device() {
    // A pty pair stands in for the serial cable: the bridge opens one end raw at 19200 baud,
    // the "real modem" sits on the other.
    let dir = tempfile::tempdir().unwrap();
    let (bridge_end, modem_end) = (dir.path().join("ttyBridge"), dir.path().join("ttyModem"));
    let mut socat = tokio::process::Command::new("socat")
        .arg(format!("pty,link={},raw,echo=0", bridge_end.display()))
        .arg(format!("pty,link={},raw,echo=0", modem_end.display()))
        .kill_on_drop(true)
        .spawn()
        .expect("socat (scripts/setup --test installs it)");
    let t0 = Instant::now();
    while !(bridge_end.exists() && modem_end.exists()) {
        assert!(t0.elapsed() < Duration::from_secs(5), "socat made no ptys");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (pa, pr) = (free_port(), free_port());
    let extra = format!(
        ", passthrough: {{serial: \"{}\", baud: 19200}}",
        bridge_end.display()
    );
    let loaded = scenario(
        dir.path(),
        &[
            v("alpha", pa, 1, [0.0, 0.0, -20.0]),
            Vehicle {
                extra: &extra,
                ..v("hil", pr, 9, [300.0, 0.0, -20.0])
            },
        ],
        FLAT,
    );
    let run = start(&loaded).await;
    let mut h = Host::connect(pr).await;
    h.cmd("CCCFQ", &["SRC"]).await;
    let mut modem = tokio::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&modem_end)
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !got.ends_with(b"\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), modem.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, emit("CCCFQ", &["SRC"]).as_bytes());
    modem
        .write_all(emit("CACFG", &["SRC", "9"]).as_bytes())
        .await
        .unwrap();
    modem.flush().await.unwrap();
    h.expect("$CACFG,SRC,9").await;
    drop(h);
    let m = run.finish().await.modems.unwrap();
    assert_eq!(
        (m.bridges.connections, m.bridges.passthrough_failures),
        (1, 0)
    );
    let _ = socat.kill().await;
}

/// A host that sends its lines and half-closes (`printf … | socat -t 1 - tcp:…`, or a script
/// that shuts its sending side) still gets the answers to every line it sent, as through a
/// socat bridge, which relays the other direction for its `-t` after one side ends; and
/// reconnecting at once is not refused. Many rounds, so that the bridge often reads the end of
/// the connection before its writer has run.
#[test]
fn a_host_that_half_closes_still_gets_its_answers() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let loaded = scenario(dir.path(), &[v("alpha", port, 1, [0.0, 0.0, -20.0])], FLAT);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let bridges = netsim_cosim::io::servers::modem_bridge::ModemBridges::start(&loaded)
            .await
            .unwrap()
            .unwrap();
        for round in 0..200 {
            let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.write_all(b"$CCCFQ,SRC\r\n$CCCFQ,CST\r\n").await.unwrap();
            s.shutdown().await.unwrap();
            let mut got = String::new();
            tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut got))
                .await
                .unwrap_or_else(|_| panic!("round {round}: the bridge kept the connection open"))
                .unwrap();
            assert_eq!(
                got.lines().collect::<Vec<_>>(),
                ["$CACFG,SRC,1*33", "$CACFG,CST,0*34"],
                "round {round}"
            );
        }
        let stats = bridges.stats();
        assert_eq!((stats.connections, stats.refused), (200, 0));
        assert_eq!(stats.dropped_no_client, 0);
    });
}

/// A paced scenario of two stationary modems under `world` (terrain, water with its profile,
/// seabed) with the modems' `propagation` and `source_level_db`.
fn beam_scenario(
    dir: &Path,
    vehicles: &[Vehicle],
    world: &str,
    propagation: &str,
    source_level_db: f64,
) -> LoadedScenario {
    load_scenario(
        dir,
        format!(
            "name: modem_paths\nwindow_ms: 20\nduration_s: 600\nseed: 3\nreal_time_factor: {RTF}\n\
             world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n{world}\
             acoustic_modems: {{epoch_utc: \"2026-11-21T05:00:00Z\", absorption: thorp, \
             propagation: {propagation}, source_level_db: {source_level_db}}}\n"
        ),
        vehicles,
    )
}

/// Sends one mini-packet from modem 1 to modem 2 over `world` and returns its ledger entry
/// and whether modem 2 printed it.
async fn one_mini_packet(
    world: &str,
    at: [[f64; 3]; 2],
    propagation: &str,
    source_level_db: f64,
) -> (modem::FrameLedgerEntry, bool) {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (free_port(), free_port());
    let loaded = beam_scenario(
        dir.path(),
        &[v("alpha", pa, 1, at[0]), v("bravo", pb, 2, at[1])],
        world,
        propagation,
        source_level_db,
    );
    let run = start(&loaded).await;
    let mut a = Host::connect(pa).await;
    let mut b = Host::connect(pb).await;
    b.cmd("CCCFG", &["CST", "1"]).await;
    b.expect("$CACFG").await;
    a.cmd("CCMUC", &["1", "2", "0042"]).await;
    a.expect("$CAMUC").await;
    // 3 km at ~1500 m/s and the mini-packet's airtime: within 10 s of sim time.
    let heard = b.until_clock("050010").await;
    let m = run.finish().await.modems.unwrap();
    assert_eq!(m.entries.len(), 1, "{:?}", m.entries);
    (
        m.entries[0].clone(),
        heard.iter().any(|l| l.starts_with("$CAMUA")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_zone_the_straight_line_calls_clear_drops_the_frame() {
    // A downward-refracting summer profile (1525 m/s at the surface falling to 1494 m/s at
    // 200 m) over a soft mud bottom: two modems 10 m deep, 3 km apart over flat sea, nothing
    // but water between, a quiet 145 dB source. The straight line is clear and decodes at
    // rate 0 (in-band SNR about −3 dB, Eb/N0 about 15 dB after the 5 kHz / 80 bit/s spreading
    // gain). The beam tracer finds every ray bent down within 500 m (the surface-grazing ray
    // reaches 10 m depth 250 m past its vertex), so only refracted mud bounces reach the
    // receiver, their sum about 25 dB under the noise: coded Eb/N0 below 0 dB, not detectable.
    let world = "  terrain: {kind: procedural, size_m: [8000, 8000], cell_size_m: 20, base_height_m: -200}\n  \
                 water:\n    profile:\n      - {depth_m: 0, speed_mps: 1525}\n      - {depth_m: 50, speed_mps: 1500}\n      - {depth_m: 100, speed_mps: 1495}\n      - {depth_m: 200, speed_mps: 1494}\n  \
                 seabed: {sound_speed_mps: 1480, density_ratio: 1.2, attenuation_db_per_wavelength: 1.0}\n";
    let at = [[-1500.0, 0.0, -10.0], [1500.0, 0.0, -10.0]];
    let (straight, heard) = one_mini_packet(world, at, "straight", 145.0).await;
    assert!(heard && straight.fate == Fate::Delivered, "{straight:?}");
    let (beam, heard) = one_mini_packet(world, at, "beam", 145.0).await;
    assert!(!heard, "{beam:?}");
    assert_eq!(beam.fate, Fate::Dropped(DropReason::OutOfRange), "{beam:?}");
    // Far below 0 dB, or nothing at all arrives (no SNR to tell).
    assert!(beam.snr_db.is_none_or(|s| s < -18.0), "{beam:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sound_over_a_bank_carries_a_frame_the_straight_line_calls_blocked() {
    // A bank rising to 25 m under the surface between two modems 50 m deep, 600 m apart in
    // 60 m of isovelocity water over sand: the straight line runs through the bank (tens of
    // metres of terrain at 2 dB/m: out of range), while the paths that reflect off the surface
    // pass over the crest and carry the frame.
    let world = "  terrain:\n    kind: procedural\n    size_m: [4000, 4000]\n    cell_size_m: 10\n    base_height_m: -60\n    \
                 ridges: [{from: [0, -2000], to: [0, 2000], crest_height_m: -25, width_m: 120}]\n  \
                 water: {sound_speed: 1500, profile: [{depth_m: 0, speed_mps: 1500}, {depth_m: 60, speed_mps: 1500}]}\n";
    let at = [[-300.0, 0.0, -50.0], [300.0, 0.0, -50.0]];
    let (straight, heard) = one_mini_packet(world, at, "straight", 185.0).await;
    assert!(!heard, "{straight:?}");
    assert_eq!(
        straight.fate,
        Fate::Dropped(DropReason::OutOfRange),
        "{straight:?}"
    );
    let (beam, heard) = one_mini_packet(world, at, "beam", 185.0).await;
    assert!(heard && beam.fate == Fate::Delivered, "{beam:?}");
    assert!(beam.snr_db.unwrap() > 0.0, "{beam:?}");
}
