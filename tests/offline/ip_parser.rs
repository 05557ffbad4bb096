//! The IP header parser against generated input (deterministic, seeded): it never panics,
//! every accessor of an accepted packet stays in bounds, and the headers it accepts round-trip
//! through `IpRepr::emit`.
use netsim_cosim::clock::Schedule;
use netsim_cosim::model::fate::DropReason;
use netsim_cosim::net::addr::AddressBook;
use netsim_cosim::net::traffic::{CaptureOutcome, Engine, EngineConfig, Frame};
use netsim_cosim::wire::ip::{IpPacket, IpRepr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::IpAddr;

fn random_repr(rng: &mut ChaCha8Rng) -> IpRepr {
    let (src, dst) = if rng.random_bool(0.5) {
        (
            IpAddr::from(rng.random::<[u8; 4]>()),
            IpAddr::from(rng.random::<[u8; 4]>()),
        )
    } else {
        (
            IpAddr::from(rng.random::<[u8; 16]>()),
            IpAddr::from(rng.random::<[u8; 16]>()),
        )
    };
    IpRepr {
        src,
        dst,
        protocol: rng.random(),
        hop_limit: rng.random(),
        payload_len: 0,
    }
}

fn candidate(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.random_range(0..4) {
        // Pure noise, any length (incl. empty).
        0 => (0..rng.random_range(0..120))
            .map(|_| rng.random())
            .collect(),
        // A valid packet, then a few random byte changes and a random cut or extension.
        _ => {
            let payload: Vec<u8> = (0..rng.random_range(0..200))
                .map(|_| rng.random())
                .collect();
            let mut p = random_repr(rng).packet(&payload).unwrap();
            for _ in 0..rng.random_range(0..4) {
                let i = rng.random_range(0..p.len());
                p[i] = rng.random();
            }
            match rng.random_range(0..3) {
                0 => p.truncate(rng.random_range(0..=p.len())),
                1 => p.extend((0..rng.random_range(0..8)).map(|_| rng.random::<u8>())),
                _ => {}
            }
            p
        }
    }
}

#[test]
fn never_panics_and_round_trips_what_it_accepts() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1b_ad_5e_ed);
    let (mut accepted, mut rejected) = (0, 0);
    for _ in 0..200_000 {
        let bytes = candidate(&mut rng);
        match IpPacket::new_checked(&bytes[..]) {
            Err(_) => rejected += 1,
            Ok(p) => {
                accepted += 1;
                assert!(p.total_len() <= bytes.len() && p.header_len() <= p.total_len());
                let repr = IpRepr::parse(&p);
                let _ = (p.payload(), p.protocol(), p.hop_limit(), p.version());
                let rebuilt = repr.packet(p.payload()).expect("an accepted header emits");
                let again = IpPacket::new_checked(&rebuilt[..]).expect("an emitted header parses");
                assert_eq!(IpRepr::parse(&again), repr, "round trip of {bytes:02x?}");
                assert_eq!(again.payload(), p.payload());
            }
        }
    }
    assert!(
        accepted > 20_000 && rejected > 20_000,
        "both paths exercised: {accepted} accepted, {rejected} rejected"
    );
}

#[test]
fn capture_counts_every_input_and_never_panics() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let v = |name: &str, a: &str| -> netsim_cosim::config::Vehicle {
        serde_yaml::from_str(&format!("{{name: {name}, addresses: [{a}], start: {{x: 0, y: 0, z: 0}}, motion: {{kind: stationary}}}}")).unwrap()
    };
    let book = AddressBook::new(&[v("a", "10.0.0.1/24"), v("b", "10.0.0.2/24")]);
    let mut e = Engine::new(
        book,
        EngineConfig {
            schedule: Schedule {
                window_ns: 1_000_000,
                windows: u32::MAX,
            },
            queue_limit: 64,
            max_hold_windows: 3,
            crc: true,
            seed: 0,
        },
    );
    let mut begin = Default::default();
    for i in 0..50_000u32 {
        let bytes = candidate(&mut rng);
        let valid = IpPacket::new_checked(&bytes[..]).is_ok();
        match e.capture(rng.random_range(0..3), Frame::plain(bytes), u64::from(i)) {
            CaptureOutcome::Dropped {
                reason: DropReason::Malformed,
                ..
            } => assert!(!valid),
            _ => assert!(valid),
        }
        if i % 100 == 0 {
            e.fill_begin(i / 100, &mut begin);
        }
        assert!(e.ledger.balances());
    }
    e.shutdown(50_000);
    assert!(e.ledger.balances() && e.ledger.total.in_flight == 0);
}
