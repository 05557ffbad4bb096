use super::*;
use crate::wire::channel::Channel;
use crate::wire::nmea::{emit, Sentence};
use crate::wire::proto::{ChannelData, PathDetails};

fn front(n: usize) -> Modems {
    let water = Water {
        sound_speed: crate::config::SoundSpeed::Fixed(1500.0),
        ..Water::default()
    };
    let fe = ModemHardware {
        epoch_ns: parse_iso_utc_ns("2026-11-21T05:00:00Z").unwrap(),
        frequency_khz: 25.0,
        bandwidth_hz: 5000.0,
        source_level_db: 185.0,
        spreading_factor: 1.5,
        absorption: crate::config::Absorption::Thorp,
        capture_sir_db: None,
        heartbeat_ns: 10 * NS,
        water,
        propagation: crate::config::Propagation::Straight,
        multipath_window_ms: None,
    };
    let specs = (0..n)
        .map(|i| ModemSpec {
            vehicle: i,
            name: format!("v{i}"),
            id: i as u8 + 1,
            tcp_port: 62000 + i as u16,
        })
        .collect();
    Modems::new(fe, specs, 7)
}

/// Vehicles on the x axis at the given positions, 10 m deep, all LOS.
fn channel(xs: &[f64], losses: &[((u32, u32), f64)]) -> ChannelData {
    let mut c = ChannelData::default();
    for x in xs {
        c.node_list
            .extend_from_slice(&[*x, 0.0, -10.0, 1.0, 0.0, 0.0, 0.0]);
    }
    for i in 0..xs.len() as u32 {
        for j in i + 1..xs.len() as u32 {
            let loss = losses.iter().find(|l| l.0 == (i, j)).map_or(0.0, |l| l.1);
            c.path_details.push(PathDetails {
                ids: vec![i, j],
                los: loss == 0.0,
                num_hops: vec![2],
                hop_points: vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, loss],
                ..Default::default()
            });
        }
    }
    c
}

fn lines(f: &mut Modems, modem: usize) -> Vec<String> {
    f.drain()
        .into_iter()
        .filter(|o| o.modem == modem)
        .map(|o| o.line)
        .collect()
}

#[test]
fn config_echo_query_and_reset() {
    let mut f = front(2);
    f.host_line(0, 0, b"$CCCFG,CST,1");
    assert_eq!(lines(&mut f, 0), vec![emit("CACFG", &["CST", "1"])]);
    f.host_line(0, 0, b"$cccfq,cst\r\n");
    // Lower-case ids are accepted; the answer is upper case.
    assert_eq!(lines(&mut f, 0), vec![emit("CACFG", &["CST", "1"])]);
    f.host_line(0, 0, b"$CCCFQ,ALL");
    assert_eq!(lines(&mut f, 0).len(), PARAMS.len());
    f.host_line(0, 0, b"$CCCFG,ALL,0");
    assert_eq!(lines(&mut f, 0), vec![emit("CACFG", &["ALL", "0"])]);
    assert_eq!(f.param(0, "CST"), Some(0));
    assert_eq!(f.param(0, "SRC"), Some(1));
    f.host_line(0, 0, b"$CCCFG,SRC,200");
    assert!(lines(&mut f, 0)[0].starts_with("$CAERR,050000,NMEA,3,"));
}

#[test]
fn clocks_mm1_and_mm2() {
    let mut f = front(1);
    f.host_line(0, 3 * NS, b"$CCTMQ,0");
    assert_eq!(
        lines(&mut f, 0),
        vec![emit("CATMQ", &["2026-11-21T05:00:03.0000Z", "0", "0"])]
    );
    f.host_line(0, 3 * NS, b"$CCCLK,2027,01,02,03,04,05");
    assert_eq!(
        lines(&mut f, 0),
        vec![emit("CACLK", &["2027", "01", "02", "03", "04", "05"])]
    );
    f.host_line(0, 5 * NS, b"$CCTMS,2027-01-02T03:04:05Z,0");
    assert_eq!(
        lines(&mut f, 0),
        vec![emit("CATMS", &["0", "2027-01-02T03:04:05.0000Z"])]
    );
    f.host_line(0, 6 * NS + NS / 2, b"$CCTMQ,0");
    assert_eq!(
        lines(&mut f, 0),
        vec![emit("CATMQ", &["2027-01-02T03:04:06.5000Z", "0", "0"])]
    );
}

#[test]
fn data_cycle_arrives_after_d_over_c() {
    let mut f = front(2);
    f.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 1500.0], &[])), 2).unwrap(),
    );
    f.host_line(0, 0, b"$CCCFG,XST,1");
    f.drain();
    f.host_line(0, 0, b"$CCCYC,0,1,2,0,1,1");
    let out = lines(&mut f, 0);
    assert_eq!(out[0], emit("CACYC", &["0", "1", "2", "0", "1", "1"]));
    assert_eq!(out[1], emit("CADRQ", &["050000", "1", "2", "1", "32", "1"]));
    f.host_line(0, NS / 10, b"$CCTXD,1,2,1,DEADbeef");
    let out = lines(&mut f, 0);
    assert_eq!(
        out,
        vec![emit("CATXD", &["1", "2", "1", "4"]), emit("CATXP", &["4"])]
    );
    let airtime = ns(packet_airtime_s(0, 1));
    f.advance(NS / 10 + airtime + NS + 10 * NS / 100);
    let out = f.drain();
    let rxd = out
        .iter()
        .find(|o| o.line.starts_with("$CARXD"))
        .expect("received");
    assert_eq!(rxd.modem, 1);
    assert_eq!(rxd.at_ns, NS / 10 + airtime + NS);
    assert_eq!(rxd.line, emit("CARXD", &["1", "2", "1", "1", "deadbeef"]));
    let txf = out
        .iter()
        .position(|o| o.modem == 0 && o.line.starts_with("$CATXF"))
        .expect("TXF");
    let xst = out
        .iter()
        .position(|o| o.modem == 0 && o.line.starts_with("$CAXST,6,20261121,050000.1000,"))
        .expect("XST");
    assert!(xst > txf && out[txf].at_ns == NS / 10 + airtime);
    // The ack comes back after the turnaround, a mini-packet and another second.
    f.advance(20 * NS);
    let ack = f
        .drain()
        .into_iter()
        .find(|o| o.line.starts_with("$CAACK"))
        .expect("acked");
    assert_eq!(ack.modem, 0);
    assert_eq!(ack.line, emit("CAACK", &["2", "1", "1", "1"]));
    assert_eq!(
        ack.at_ns,
        NS / 10 + airtime + NS + ns(TURNAROUND_S) + ns(MINI_PACKET_S) + NS
    );
    let s = f.ledger_summary();
    assert_eq!((s.sent, s.delivered), (2, 2));
}

#[test]
fn ping_reports_one_way_travel_time() {
    let mut f = front(2);
    f.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 750.0], &[])), 2).unwrap(),
    );
    f.host_line(0, 0, b"$CCMPC,1,2");
    f.advance(10 * NS);
    let out = f.drain();
    assert!(out
        .iter()
        .any(|o| o.modem == 1 && o.line == emit("CAMPA", &["1", "2"])));
    let mpr = out.iter().find(|o| o.line.starts_with("$CAMPR")).unwrap();
    assert_eq!(mpr.line, emit("CAMPR", &["2", "1", "0.5000"]));
}

#[test]
fn a_ping_asked_for_before_the_first_window_travels_in_that_windows_world() {
    let mut f = front(2);
    // A host that spoke as the run was starting: no world yet, no copy decided.
    f.host_line(0, 0, b"$CCMPC,1,2");
    assert!(f.ledger().is_empty(), "{:?}", f.ledger());
    f.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 750.0], &[])), 2).unwrap(),
    );
    f.advance(10 * NS);
    let out = f.drain();
    let mpr = out.iter().find(|o| o.line.starts_with("$CAMPR"));
    assert_eq!(
        mpr.map(|o| o.line.as_str()),
        Some(emit("CAMPR", &["2", "1", "0.5000"]).as_str()),
        "{out:?}"
    );
    assert!(
        f.ledger().iter().all(|e| e.fate == Fate::Delivered),
        "{:?}",
        f.ledger()
    );
}

#[test]
fn collision_half_duplex_range_and_drop_reasons() {
    let mut f = front(3);
    f.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 1500.0, 3000.0], &[])), 3).unwrap(),
    );
    // 0 and 2 both send to 1 at once: both collide there.
    f.host_line(0, 0, b"$CCMUC,1,2,0123");
    f.host_line(2, 0, b"$CCMUC,3,2,0456");
    f.advance(10 * NS);
    let s = f.ledger_summary();
    assert_eq!((s.sent, s.collision), (2, 2), "{:?}", f.ledger());
    // 0 sends to 1 while 1 transmits: half-duplex.
    f.host_line(0, 20 * NS, b"$CCMUC,1,2,0001");
    f.host_line(1, 20 * NS + NS, b"$CCMUC,2,3,0002");
    f.advance(30 * NS);
    assert!(f
        .ledger()
        .iter()
        .any(|e| e.fate == Fate::Dropped(DropReason::HalfDuplex) && e.to == Some(1)));
    // Out of range: 200 km.
    f.set_channel(
        40 * NS,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 200_000.0, 3000.0], &[])), 3).unwrap(),
    );
    f.host_line(0, 40 * NS, b"$CCMUC,1,2,0003");
    f.host_line(0, 50 * NS, b"$CCMUC,1,9,0003");
    f.host_line(0, 60 * NS, b"$CCCYC,0,1,3,5,0,1");
    f.host_line(0, 60 * NS, b"$CCTXD,1,3,0,00");
    f.shutdown(60 * NS + NS / 2);
    let l = f.ledger();
    assert!(l
        .iter()
        .any(|e| e.fate == Fate::Dropped(DropReason::OutOfRange) && e.to == Some(1)));
    assert!(l
        .iter()
        .any(|e| e.fate == Fate::Dropped(DropReason::NoReceiver) && e.dest == 9));
    assert!(l
        .iter()
        .any(|e| e.fate == Fate::Dropped(DropReason::Shutdown) && e.to == Some(2)));
    let s = f.ledger_summary();
    assert_eq!(
        s.sent,
        s.delivered
            + s.out_of_range
            + s.packet_error
            + s.collision
            + s.half_duplex
            + s.no_receiver
            + s.shutdown
    );
}

#[test]
fn data_timeout_and_unexpected_txd() {
    let mut f = front(2);
    f.host_line(0, 0, b"$CCTXD,1,2,0,00");
    assert!(lines(&mut f, 0)[0].starts_with("$CAERR,050000,NMEA,5,"));
    f.host_line(0, 0, b"$CCCYC,0,1,2,1,0,3");
    f.drain();
    f.advance(3 * NS);
    let out = lines(&mut f, 0);
    assert_eq!(out.len(), 1);
    assert!(
        out[0].starts_with("$CAERR,050002,DATA_TIMEOUT,1,"),
        "{out:?}"
    );
}

#[test]
fn airtimes() {
    assert!((packet_airtime_s(0, 1) - (0.5 + 3.2)).abs() < 1e-12);
    assert!((packet_airtime_s(5, 8) - (1.0 + 8.0 * 2048.0 / 5300.0 + 7.0 * 0.05)).abs() < 1e-12);
}

/// Printable ASCII, what a host driver normally sends.
const PRINTABLE: &[u8] = b" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
#[test]
fn random_and_mutated_lines_never_panic_and_always_answer() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let seeds: [&[u8]; 12] = [
        b"$CCCYC,0,1,2,5,1,8",
        b"$CCTXD,1,2,1,00ff",
        b"$CCCFG,SRC,1",
        b"$CCCFQ,ALL",
        b"$CCCLK,2026,1,1,0,0,0",
        b"$CCTMS,2026-01-01T00:00:00Z,0",
        b"$CCMPC,1,2",
        b"$CCMUC,1,2,1fff",
        b"$CCMSC,1,1,0",
        b"$CCTMQ,0",
        b"$CCCFG,ALL,0",
        b"$CCXXX,1",
    ];
    let mut f = front(3);
    f.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 500.0, 1000.0], &[])), 3).unwrap(),
    );
    let mut t = 0;
    for i in 0..30_000 {
        let mut line = seeds[i % seeds.len()].to_vec();
        crate::wire::mutate(&mut rng, &mut line, PRINTABLE);
        t += rng.random_range(0..NS / 5);
        let m = i % 3;
        f.host_line(m, t, &line);
        let out = f.drain();
        if !line.iter().all(|b| b.is_ascii_whitespace()) {
            assert!(
                out.iter().any(|o| o.modem == m && o.at_ns == t),
                "no answer to {:?}",
                String::from_utf8_lossy(&line)
            );
        }
        for o in out {
            let s = Sentence::parse(o.line.as_bytes()).expect("own output parses");
            assert!(s.had_checksum && o.line.ends_with("\r\n"));
        }
    }
    f.shutdown(t + 100 * NS);
}

/// Every refusal path of the host interface, answered at 05:00:00 by modem 0 (SRC 1).
const REFUSED: &[&str] = &[
    "CCCFG,SRC,1",
    "$CCCFG,SRC,1*00",
    "$CC1FG,SRC",
    "$CCCFG,SRC,1*5",
    "$GPGGA,1",
    "$CCXXX,1",
    "$cafoo",
    "$CCCFG",
    "$CCCFG,,1",
    "$CCCFG,ALL,1",
    "$CCCFG,ALL",
    "$CCCFG,FOO,1",
    "$CCCFG,SRC,200",
    "$CCCFG,src,x",
    "$CCCFG, dto , 31",
    "$CCCFQ",
    "$CCCFQ, ",
    "$CCCFQ,FOO",
    "$CCCLK,1969,1,1,0,0,0",
    "$CCCLK,2026,2,30,0,0,0",
    "$CCCLK,2026,1",
    "$CCCLK,2026,1,1,24,0,0",
    "$CCCLK,2026,1,1,0,0,61",
    "$CCTMS",
    "$CCTMS,2026-13-01T00:00:00Z,0",
    "$CCTMS,2026-01-01T00:00:00Z,x",
    "$CCTMS,2026-01-01T00:00:00Z,300",
    "$CCMSC,1",
    "$CCMSC,128,1,0",
    "$CCMSC,1,-1,0",
    "$CCCYC,0,1,2,7,0,1",
    "$CCCYC,0,1,2,0,0,2",
    "$CCCYC,0,1,2,5,0,9",
    "$CCCYC,0,5,2,0,0,1",
    "$CCCYC,128,1,2,0,0,1",
    "$CCCYC,0,1,2,1,2,1",
    "$CCCYC,0,1,2",
    "$CCTXD,x",
    "$CCTXD,1,2,0,00",
    "$CCMPC,1",
    "$CCMPC,1,300",
    "$CCMUC,1,2,",
    "$CCMUC,1,2,12345",
    "$CCMUC,1,2,2000",
    "$CCMUC,1,2,xyz",
    "$CCMUC,1",
];

/// Refusals that depend on the modem's state: a cycle in progress.
const REFUSED_IN_CYCLE: &[&str] = &[
    "$CCTXD,1,2,0,abc",
    "$CCTXD,1,2,0,0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021",
    "$CCTXD,1,2,2,00",
    "$CCTXD,x,2,0,00",
    "$CCCYC,0,1,2,0,0,1",
    "$CCMPC,1,2",
    "$CCMUC,1,2,0001",
];

#[test]
fn refused_commands_answer_with_their_code_and_text() {
    let mut f = front(2);
    let mut got = Vec::new();
    for l in REFUSED {
        f.host_line(0, 0, l.as_bytes());
        got.extend(lines(&mut f, 0));
    }
    f.host_line(0, 0, b"$CCCYC,0,1,2,0,0,1");
    assert_eq!(
        lines(&mut f, 0),
        vec![
            emit("CACYC", &["0", "1", "2", "0", "0", "1"]),
            emit("CADRQ", &["050000", "1", "2", "0", "32", "1"])
        ]
    );
    for l in REFUSED_IN_CYCLE {
        f.host_line(0, 0, l.as_bytes());
        got.extend(lines(&mut f, 0));
    }
    let want: &[&str] = &[
        "$CAERR,050000,NMEA,1,does not start with ' ' (byte 0 is 0x43)*30\r\n",
        "$CAERR,050000,NMEA,1,checksum mismatch: sentence says 00  computed 31*6D\r\n",
        "$CAERR,050000,NMEA,1,sentence id \"CC1FG\" is not 5 letters (talker + type)*68\r\n",
        "$CAERR,050000,NMEA,1,checksum \"5\" is not two hex digits*3E\r\n",
        "$CAERR,050000,NMEA,2,unknown sentence GPGGA*48\r\n",
        "$CAERR,050000,NMEA,2,unknown command CCXXX*20\r\n",
        "$CAERR,050000,NMEA,2,unknown sentence CAFOO*5A\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: parameter name missing*24\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: parameter name missing*24\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: ALL value 1 outside 0-0*6D\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: ALL value missing or not a number*6A\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: unknown parameter FOO*69\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: SRC 200 outside 0-127*22\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: SRC missing or not a number*22\r\n",
        "$CAERR,050000,NMEA,3,CCCFG: DTO 31 outside 1-30*39\r\n",
        "$CAERR,050000,NMEA,3,CCCFQ: parameter name missing*32\r\n",
        "$CAERR,050000,NMEA,3,CCCFQ: parameter name missing*32\r\n",
        "$CAERR,050000,NMEA,3,CCCFQ: unknown parameter FOO*7F\r\n",
        "$CAERR,050000,NMEA,3,CCCLK: year 1969 outside 1970-2200*57\r\n",
        "$CAERR,050000,NMEA,3,CCCLK: not a valid date*7E\r\n",
        "$CAERR,050000,NMEA,3,CCCLK: day missing or not a number*1A\r\n",
        "$CAERR,050000,NMEA,3,CCCLK: hour 24 outside 0-23*67\r\n",
        "$CAERR,050000,NMEA,3,CCCLK: second 61 outside 0-60*71\r\n",
        "$CAERR,050000,NMEA,3,CCTMS: time is not YYYY-MM-DDThh:mm:ssZ*72\r\n",
        "$CAERR,050000,NMEA,3,CCTMS: time is not YYYY-MM-DDThh:mm:ssZ*72\r\n",
        "$CAERR,050000,NMEA,3,CCTMS: mode is not a number*28\r\n",
        "$CAERR,050000,NMEA,3,CCTMS: mode is not a number*28\r\n",
        "$CAERR,050000,NMEA,3,CCMSC: dest missing or not a number*79\r\n",
        "$CAERR,050000,NMEA,3,CCMSC: src 128 outside 0-127*14\r\n",
        "$CAERR,050000,NMEA,3,CCMSC: dest -1 outside 0-127*57\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: rate 7 outside 0-6*7E\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: nframes 2 outside 1-1*1F\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: nframes 9 outside 1-8*1D\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: src 5 is not this modem (1); remote-initiated cycles are not emulated*05\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: command 128 outside 0-127*15\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: ack 2 outside 0-1*17\r\n",
        "$CAERR,050000,NMEA,3,CCCYC: rate missing or not a number*79\r\n",
        "$CAERR,050000,NMEA,5,CCTXD without a data request*54\r\n",
        "$CAERR,050000,NMEA,5,CCTXD without a data request*54\r\n",
        "$CAERR,050000,NMEA,3,CCMPC: dest missing or not a number*7A\r\n",
        "$CAERR,050000,NMEA,3,CCMPC: dest 300 outside 0-127*7B\r\n",
        "$CAERR,050000,NMEA,3,CCMUC: value is not 1-4 hex digits*4A\r\n",
        "$CAERR,050000,NMEA,3,CCMUC: value is not 1-4 hex digits*4A\r\n",
        "$CAERR,050000,NMEA,3,CCMUC: value exceeds 13 bits*1B\r\n",
        "$CAERR,050000,NMEA,3,CCMUC: value is not 1-4 hex digits*4A\r\n",
        "$CAERR,050000,NMEA,3,CCMUC: dest missing or not a number*7F\r\n",
        "$CAERR,050000,NMEA,3,CCTXD: data is not hex*0E\r\n",
        "$CAERR,050000,NMEA,3,CCTXD: 33 bytes exceed the frame's 32*36\r\n",
        "$CAERR,050000,NMEA,3,CCTXD: ack 2 outside 0-1*06\r\n",
        "$CAERR,050000,NMEA,3,CCTXD: src missing or not a number*08\r\n",
        "$CAERR,050000,NMEA,4,modem busy*22\r\n",
        "$CAERR,050000,NMEA,4,modem busy*22\r\n",
        "$CAERR,050000,NMEA,4,modem busy*22\r\n",
    ];
    assert_eq!(got, want);
}

/// Found by fuzzing (`fuzz/fuzz_targets/channel_data.rs`): positions from an outside physics
/// simulator so far apart (1e150 m) that the propagation delay exceeds u64
/// nanoseconds overflowed the copy's arrival time. The copy is out of range.
#[test]
fn an_astronomical_distance_is_out_of_range_not_an_overflow() {
    let mut f = front(2);
    f.set_channel(
        0,
        &ChannelView::check(&Channel::from(&channel(&[0.0, 1e150], &[])), 2).unwrap(),
    );
    f.host_line(0, 0, b"$CCMPC,1,2");
    f.host_line(0, 5 * NS, b"$CCMUC,1,2,1abc");
    f.shutdown(60 * NS);
    let fates: Vec<Fate> = f.ledger().iter().map(|e| e.fate).collect();
    assert_eq!(
        fates,
        vec![
            Fate::Dropped(DropReason::OutOfRange),
            Fate::Dropped(DropReason::OutOfRange)
        ]
    );
}
