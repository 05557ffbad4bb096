//! The NETSIM manager over real TCP, served by a real `cosim run`: the interface document's
//! request vector, the four statuses, nav updates moving a vehicle in the physics side, and
//! hostile input (bad lines, a 10 MB line, 10,000 garbage lines) while another client keeps
//! being served, with the server's memory checked.
use base64::{engine::general_purpose::STANDARD, Engine};
use netsim_cosim::{
    config::geo::LocalFrame,
    config::GeoOrigin,
    wire::{
        netsim_line,
        proto::{
            decode_checked,
            netsim::{
                net_sim_manager_response::Status, NavUpdate, NetSimManagerRequest,
                NetSimManagerResponse,
            },
        },
    },
};
use prost::Message;
use std::{
    io::{BufRead, BufReader, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
const REQUEST_VECTOR: &str =
    "CEISOgiz5AMRQ4tUIbbq10EZQUDRT0vLUUAhQylH7tbMYcApMzMzMzMz0z8x65lyHNEpUj85AAAAAAAALkA=";
const REQUEST_NAME: &str = "netsim.protobuf.NetSimManagerRequest";
const RESPONSE_NAME: &str = "netsim.protobuf.NetSimManagerResponse";

struct Server {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `cosim run config/netsim_manager.yaml` on a free port, waiting until it listens.
    fn start() -> Server {
        Server::start_with(&[])
    }

    /// As [`Server::start`], with more `cosim run` arguments.
    fn start_with(more: &[&str]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/netsim_manager.yaml"
        ))
        .unwrap();
        let mut v: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        v["netsim_manager"]["port"] = port.into();
        let dir = tempfile::tempdir().unwrap();
        let scenario = dir.path().join("scenario.yaml");
        std::fs::write(&scenario, serde_yaml::to_string(&v).unwrap()).unwrap();
        let out = dir.path().join("out");
        let child = Command::new(COSIM)
            .args([
                "run",
                scenario.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--timeline",
            ])
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "manager never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, addr, dir }
    }

    fn client(&self) -> Client {
        Client::new(TcpStream::connect(self.addr).unwrap())
    }

    /// Peak resident memory of the server process, KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Waits for the run to end by itself and returns its timeline.
    fn wait(mut self) -> String {
        let status = self.child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
        std::fs::read_to_string(self.dir.path().join("out/timeline.jsonl")).unwrap()
    }
}

struct Client {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Client {
    fn new(s: TcpStream) -> Client {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Client {
            writer: s.try_clone().unwrap(),
            reader: BufReader::new(s),
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.reader.read_line(&mut l).unwrap();
        l
    }

    fn request(&mut self, req: &NetSimManagerRequest) -> NetSimManagerResponse {
        self.send_raw(netsim_line::emit(REQUEST_NAME, &req.encode_to_vec()).as_bytes());
        let line = self.line();
        let parsed = netsim_line::parse(line.trim_end_matches('\n').as_bytes()).unwrap();
        assert_eq!(parsed.name, RESPONSE_NAME, "{line}");
        decode_checked(&parsed.payload).unwrap()
    }

    /// Expects an error line and returns its text.
    fn error(&mut self) -> String {
        let line = self.line();
        let parsed = netsim_line::parse(line.trim_end_matches('\n').as_bytes())
            .unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(parsed.name, "netsim_cosim.Error", "{line}");
        String::from_utf8(parsed.payload).unwrap()
    }
}

fn nav(port: i32, lat: f64, lon: f64, depth: f64) -> NavUpdate {
    NavUpdate {
        modem_tcp_port: port,
        time: 1.7e9,
        lat,
        lon,
        depth,
        speed: 1.5,
        heading: 90.0,
    }
}

#[test]
fn the_interface_documents_request_gets_the_reference_response_bytes() {
    let server = Server::start();
    let mut c = server.client();
    c.send_raw(format!("NETSIM|{REQUEST_NAME}|{REQUEST_VECTOR}\n").as_bytes());
    // request_id 66, UPDATE_ACCEPTED: the same encoding as the document's `CEEQAQ==` for id 65.
    assert_eq!(c.line(), format!("NETSIM|{RESPONSE_NAME}|CEIQAQ==\n"));
    // A trailing \r is tolerated, as by the reference.
    c.send_raw(format!("NETSIM|{REQUEST_NAME}|{REQUEST_VECTOR}\r\n").as_bytes());
    assert_eq!(c.line(), format!("NETSIM|{RESPONSE_NAME}|CEIQAQ==\n"));
    assert_eq!(
        STANDARD.decode("CEIQAQ==").unwrap(),
        NetSimManagerResponse {
            request_id: 66,
            status: 1
        }
        .encode_to_vec()
    );
}

#[test]
fn each_status_is_produced() {
    let server = Server::start();
    let mut c = server.client();
    let req = |id, nav| NetSimManagerRequest {
        id,
        nav,
        stats: vec![],
    };
    assert_eq!(
        c.request(&req(1, vec![nav(62000, 71.2, -142.4, 20.0)]))
            .status(),
        Status::UpdateAccepted
    );
    assert_eq!(
        c.request(&req(2, vec![nav(62007, 71.2, -142.4, 20.0)]))
            .status(),
        Status::UpdateFailedInvalidModemTcpPort
    );
    assert_eq!(
        c.request(&req(3, vec![nav(62000, 72.5, -142.4, 20.0)]))
            .status(),
        Status::UpdateFailedOutOfDefinedRegion
    );
    assert_eq!(
        c.request(&req(4, vec![nav(62000, 71.2, -142.4, 250.0)]))
            .status(),
        Status::UpdateFailedOutOfDefinedRegion
    );
    // From another source address than the configured 127.0.0.1.
    let other = connect_from("127.0.0.2", server.addr);
    let mut c2 = Client::new(other);
    let r = c2.request(&req(5, vec![nav(62000, 71.2, -142.4, 20.0)]));
    assert_eq!(
        (r.request_id, r.status()),
        (5, Status::UpdateFailedInvalidSourceAddress)
    );
}

/// A TCP connection whose source address is `from` (any 127/8 address works on Linux);
/// std cannot bind before connecting, tokio's TcpSocket can.
fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let s = rt.block_on(async {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.bind(format!("{from}:0").parse().unwrap()).unwrap();
        s.connect(to).await.unwrap().into_std().unwrap()
    });
    s.set_nonblocking(false).unwrap();
    s
}

#[test]
fn accepted_nav_updates_move_the_vehicle_in_the_physics_side() {
    // A run of 5 s of sim time that ends by itself: the update accepted at its start is applied
    // at the next window, however late the machine runs the windows (a run stopped a fixed
    // wall time after the update may have run none since).
    let server = Server::start_with(&["--duration-s", "5"]);
    let frame = LocalFrame::new(&GeoOrigin {
        lat_deg: 71.17,
        lon_deg: -142.40,
        alt_m: 0.0,
    });
    // Put auv1 at (1000, 200, -30) in the local frame.
    let (lat, lon, _) = frame.to_lat_lon_depth(&nalgebra::Point3::new(1000.0, 200.0, 0.0));
    let mut c = server.client();
    let r = c.request(&NetSimManagerRequest {
        id: 7,
        nav: vec![nav(62000, lat, lon, 30.0)],
        stats: vec![],
    });
    assert_eq!(r.status(), Status::UpdateAccepted);
    let timeline = server.wait();
    let last = timeline
        .lines()
        .rev()
        .find(|l| l.contains(r#""a":"auv1","b":"auv2""#))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    let a = &v["path"][0];
    let (x, y, z) = (
        a[0].as_f64().unwrap(),
        a[1].as_f64().unwrap(),
        a[2].as_f64().unwrap(),
    );
    // 30 m below the ellipsoid at that lat/lon: the tangent plane's z there is -30 m less the
    // Earth's curvature over 1 km (d²/2R ≈ 8 cm).
    let expect = frame.from_lat_lon_depth(lat, lon, 30.0);
    assert!(
        (x - expect.x).abs() < 1e-6 && (y - expect.y).abs() < 1e-6 && (z - expect.z).abs() < 1e-6,
        "{last} vs {expect}"
    );
    assert!(
        (x - 1000.0).abs() < 0.01 && (y - 200.0).abs() < 0.01 && (z + 30.08).abs() < 0.01,
        "{last}"
    );
    // auv2 stays at its start (500, 0, -20).
    let d = ((x - 500.0).powi(2) + y.powi(2) + (z + 20.0).powi(2)).sqrt();
    assert!((v["distance_m"].as_f64().unwrap() - d).abs() < 1e-9);
}

#[test]
fn hostile_input_gets_errors_while_other_clients_are_served_and_memory_stays_bounded() {
    let server = Server::start();
    // A well-behaved client at 10 Hz throughout, in its own thread: every response, in order.
    let addr = server.addr;
    let good = std::thread::spawn(move || {
        let mut c = Client::new(TcpStream::connect(addr).unwrap());
        for id in 0..40 {
            let r = c.request(&NetSimManagerRequest {
                id,
                nav: vec![nav(62001, 71.2, -142.4, 10.0)],
                stats: vec![],
            });
            assert_eq!((r.request_id, r.status()), (id, Status::UpdateAccepted));
            std::thread::sleep(Duration::from_millis(100));
        }
    });

    let mut c = server.client();
    c.send_raw(format!("NETSIM|{REQUEST_NAME}|not*base64\n").as_bytes());
    assert!(c.error().starts_with("base64:"));
    c.send_raw(
        format!(
            "NETSIM|{REQUEST_NAME}|{}\n",
            STANDARD.encode(b"\xff\xff\xff")
        )
        .as_bytes(),
    );
    assert!(c
        .error()
        .contains("not a valid netsim.protobuf.NetSimManagerRequest"));
    c.send_raw(format!("NETSIM|{REQUEST_NAME}|\n").as_bytes());
    assert!(c.error().contains("required field `id` is missing"));
    c.send_raw(format!("NETSIM|{RESPONSE_NAME}|CEEQAQ==\n").as_bytes());
    assert!(c.error().contains("unexpected message"));
    c.send_raw(format!("NETSIM {REQUEST_NAME} {REQUEST_VECTOR}\n").as_bytes());
    assert!(c.error().contains("expected 3 '|'-separated parts"));
    c.send_raw(format!("GOBY|{REQUEST_NAME}|{REQUEST_VECTOR}\n").as_bytes());
    assert!(c.error().contains("preamble"));

    // 10 MB without a newline, then a good request on the same connection.
    let chunk = vec![b'A'; 1 << 20];
    for _ in 0..10 {
        c.send_raw(&chunk);
    }
    c.send_raw(b"\n");
    assert!(c.error().contains("line longer than"));
    c.send_raw(format!("NETSIM|{REQUEST_NAME}|{REQUEST_VECTOR}\n").as_bytes());
    assert_eq!(c.line(), format!("NETSIM|{RESPONSE_NAME}|CEIQAQ==\n"));

    // 10,000 garbage lines: 10,000 error lines, then still served.
    let mut garbage = Vec::new();
    for i in 0..10_000 {
        garbage.extend_from_slice(format!("garbage {i} |||\n").as_bytes());
    }
    let writer = {
        let mut w = c.writer.try_clone().unwrap();
        std::thread::spawn(move || w.write_all(&garbage).unwrap())
    };
    for _ in 0..10_000 {
        c.error();
    }
    writer.join().unwrap();
    c.send_raw(format!("NETSIM|{REQUEST_NAME}|{REQUEST_VECTOR}\n").as_bytes());
    assert_eq!(c.line(), format!("NETSIM|{RESPONSE_NAME}|CEIQAQ==\n"));

    good.join().unwrap();
    let peak = server.peak_rss_kib();
    assert!(
        peak < 96 * 1024,
        "peak RSS {peak} KiB after 10 MB of hostile input"
    );
    eprintln!("server peak RSS: {peak} KiB");
}
