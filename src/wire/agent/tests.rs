use super::*;
use crate::wire::proto::agent::{
    Abort, Failed, Finish, Finished, Open, Releases, Report, Settled, Welcome,
};

const NAME: &str = "hostb";

fn packet(len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p
}

#[test]
fn the_scenario_digest_is_sha256() {
    assert_eq!(
        crate::wire::secure::Secret::from_bytes(scenario_digest(b"abc")).to_hex(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

fn hello(agent: &str, digest: usize, version: u32) -> Vec<u8> {
    Hello {
        version,
        agent: agent.into(),
        scenario_digest: vec![2; digest],
    }
    .encode_to_vec()
}

fn err<T: std::fmt::Debug>(r: Result<T, DecodeError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn hello_is_checked_field_by_field() {
    let h = decode_hello(&hello("a-0_z", 32, VERSION)).unwrap();
    assert_eq!(h.agent, "a-0_z");
    assert_eq!(
        err(decode_hello(&hello(NAME, 33, VERSION))),
        "Hello.scenario_digest: 33 bytes, expected 32"
    );
    assert_eq!(
        err(decode_hello(&hello(NAME, 32, 2))),
        "Hello.version: 2, expected 3"
    );
    assert_eq!(
        err(decode_hello(&hello("", 32, VERSION))),
        "Hello.agent: empty, expected 1 to 32 characters of a-z, 0-9, _ and -"
    );
    assert_eq!(
        err(decode_hello(&hello(&"a".repeat(33), 32, VERSION))),
        "Hello.agent: 33 characters, at most 32"
    );
    assert!(decode_hello(&hello(&"a".repeat(32), 32, VERSION)).is_ok());
    assert_eq!(
        err(decode_hello(&hello("Host", 32, VERSION))),
        "Hello.agent: character 1 ('H') is not one of a-z, 0-9, _ and -"
    );
    assert_eq!(
        err(decode_hello(&hello("ho st", 32, VERSION))),
        "Hello.agent: character 3 (' ') is not one of a-z, 0-9, _ and -"
    );
    assert_eq!(
        err(decode_hello(&hello("hé\n", 32, VERSION))),
        "Hello.agent: character 2 ('é') is not one of a-z, 0-9, _ and -"
    );
    assert!(err(decode_hello(&[0x0a, 0x05, b'a'])).starts_with("not a valid Hello: "));
    // Unknown fields (version 1's nonce among them) are skipped, within the Hello's bound.
    let mut long = hello(NAME, 32, VERSION);
    long.extend_from_slice(&[0x1a, 0x20]);
    long.extend_from_slice(&[1; 0x20]);
    long.extend_from_slice(&[0x2a, 0x40]);
    long.extend_from_slice(&[0; 0x40]);
    assert!(long.len() <= MAX_HELLO_BYTES);
    assert!(decode_hello(&long).is_ok());
    long.extend_from_slice(&[0x2a, 0x7f]);
    long.extend_from_slice(&[0; 0x7f]);
    assert_eq!(
        err(decode_hello(&long)),
        format!(
            "Hello: {} bytes, at most 256 before the agent is admitted",
            long.len()
        )
    );
    // A name of invalid UTF-8.
    assert!(err(decode_hello(&[0x12, 0x01, 0xff])).starts_with("not a valid Hello: "));
}

fn release(vehicle: u32, len: usize) -> Release {
    Release {
        id: 1,
        vehicle,
        t_ns: 2,
        packet: packet(len).into(),
        corrupted: false,
    }
}

fn releases(list: Vec<Release>) -> Vec<u8> {
    encode_to_agent(to_agent::Body::Releases(Releases {
        window: 3,
        releases: list,
    }))
}

#[test]
fn packets_decoded_from_bytes_are_views_into_them() {
    use prost::bytes::Bytes;
    let sent = Bytes::from(packet(1500));
    let capture = Capture {
        vehicle: 1,
        t_ns: 5,
        packet: sent.clone(),
    };
    let wire = Bytes::from(encode_from_agent(from_agent::Body::Report(Report {
        window: 0,
        captures: vec![capture],
        ..Report::default()
    })));
    let Ok(from_agent::Body::Report(r)) = decode_from_agent(wire.clone(), 2) else {
        panic!("a report")
    };
    let got = &r.captures[0].packet;
    assert_eq!(got, &sent);
    assert!(wire.as_ptr_range().contains(&got.as_ptr()));
    let wire = Bytes::from(releases(vec![release(0, 1500)]));
    let Ok(to_agent::Body::Releases(r)) = decode_to_agent(wire.clone(), 1) else {
        panic!("releases")
    };
    assert!(wire.as_ptr_range().contains(&r.releases[0].packet.as_ptr()));
}

#[test]
fn releases_are_checked_against_the_scenario_and_the_bounds() {
    let ok = releases(vec![release(0, 20), release(2, 65535)]);
    assert!(decode_to_agent(&ok[..], 3).is_ok());
    assert_eq!(
        err(decode_to_agent(&ok[..], 2)),
        "Releases.releases[1].vehicle: vehicle 2, but the scenario has 2 vehicles"
    );
    assert_eq!(
        err(decode_to_agent(
            &releases(vec![release(0, 20), release(0, 19)])[..],
            1
        )),
        "Releases.releases[1].packet: 19 bytes, expected 20 to 65535"
    );
    assert_eq!(
        err(decode_to_agent(&releases(vec![release(0, 65536)])[..], 1)),
        "Releases.releases[0].packet: 65536 bytes, expected 20 to 65535"
    );
    assert_eq!(
        err(decode_to_agent(&releases(vec![Release::default()])[..], 1)),
        "Releases.releases[0].packet: 0 bytes, expected 20 to 65535"
    );
    assert_eq!(
        err(decode_to_agent(
            &releases(vec![release(u32::MAX, 20)])[..],
            0
        )),
        "Releases.releases[0].vehicle: vehicle 4294967295, but the scenario has 0 vehicles"
    );
    // MAX_ITEMS + 1 empty releases: two bytes each.
    let many = releases(vec![Release::default(); MAX_ITEMS + 1]);
    assert!(many.len() < MAX_FRAME_BYTES);
    assert_eq!(
        err(decode_to_agent(&many[..], 1)),
        "Releases.releases: 1048577 entries, at most 1048576"
    );
}

#[test]
fn a_message_without_a_body_is_refused() {
    assert_eq!(err(decode_to_agent(&[][..], 1)), "ToAgent: no body");
    assert_eq!(err(decode_from_agent(&[][..], 1)), "FromAgent: no body");
    assert!(err(decode_to_agent(&[0x0a, 0x05][..], 1)).starts_with("not a valid ToAgent: "));
    assert!(err(decode_from_agent(&[0x0a, 0x05][..], 1)).starts_with("not a valid FromAgent: "));
}

fn report(r: Report) -> Vec<u8> {
    encode_from_agent(from_agent::Body::Report(r))
}

fn output(program: &str) -> Output {
    Output {
        program: program.into(),
        stderr: true,
        data: b"hi\n".to_vec(),
    }
}

#[test]
fn reports_are_checked_against_the_scenario_and_the_bounds() {
    let capture = |vehicle, len| Capture {
        vehicle,
        t_ns: 5,
        packet: packet(len).into(),
    };
    let ok = report(Report {
        window: 1,
        captures: vec![capture(0, 20), capture(1, 1500)],
        written: vec![1, 2],
        written_late_ns: vec![10, 20],
        failed: vec![3],
        overflow: 4,
    });
    assert!(decode_from_agent(&ok[..], 2).is_ok());
    assert_eq!(
        err(decode_from_agent(&ok[..], 1)),
        "Report.captures[1].vehicle: vehicle 1, but the scenario has 1 vehicles"
    );
    let bad = |r: Report| err(decode_from_agent(&report(r)[..], 2));
    assert_eq!(
        bad(Report {
            captures: vec![capture(0, 1500), capture(1, 3)],
            ..Report::default()
        }),
        "Report.captures[1].packet: 3 bytes, expected 20 to 65535"
    );
    assert_eq!(
        bad(Report {
            written: vec![0; MAX_ITEMS + 1],
            ..Report::default()
        }),
        "Report.written: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Report {
            failed: vec![0; MAX_ITEMS + 1],
            ..Report::default()
        }),
        "Report.failed: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Report {
            captures: vec![Capture::default(); MAX_ITEMS + 1],
            ..Report::default()
        }),
        "Report.captures: 1048577 entries, at most 1048576"
    );
}

#[test]
fn finished_is_checked_against_the_bounds() {
    let capture = |vehicle| Capture {
        vehicle,
        t_ns: 5,
        packet: packet(40).into(),
    };
    let bad = |f: Finished| {
        err(decode_from_agent(
            &encode_from_agent(from_agent::Body::Finished(f))[..],
            1,
        ))
    };
    let many = vec![0u64; MAX_ITEMS + 1];
    assert_eq!(
        bad(Finished {
            written: many.clone(),
            ..Finished::default()
        }),
        "Finished.written: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Finished {
            failed: many.clone(),
            ..Finished::default()
        }),
        "Finished.failed: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Finished {
            unwritten: many,
            ..Finished::default()
        }),
        "Finished.unwritten: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Finished {
            programs: vec![String::new(); MAX_ITEMS + 1],
            ..Finished::default()
        }),
        "Finished.programs: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Finished {
            output: vec![output(&"x".repeat(65))],
            ..Finished::default()
        }),
        "Finished.output[0].program: 65 characters, at most 64"
    );
    assert_eq!(
        bad(Finished {
            output: vec![output("a"), output(&"é".repeat(65))],
            ..Finished::default()
        }),
        "Finished.output[1].program: 65 characters, at most 64"
    );
    assert!(decode_from_agent(
        &encode_from_agent(from_agent::Body::Finished(Finished {
            output: vec![output(&"é".repeat(64))],
            ..Finished::default()
        }))[..],
        1
    )
    .is_ok());
    assert_eq!(
        bad(Finished {
            output: vec![Output::default(); MAX_ITEMS + 1],
            ..Finished::default()
        }),
        "Finished.output: 1048577 entries, at most 1048576"
    );
    assert_eq!(
        bad(Finished {
            captures: vec![capture(0), capture(1)],
            ..Finished::default()
        }),
        "Finished.captures[1].vehicle: vehicle 1, but the scenario has 1 vehicles"
    );
    assert_eq!(
        bad(Finished {
            programs: vec!["x".repeat(MAX_TEXT_BYTES + 1)],
            ..Finished::default()
        }),
        "Finished.programs[0]: 65537 bytes, at most 65536"
    );
    let failed = encode_from_agent(from_agent::Body::Failed(Failed {
        reason: "x".repeat(MAX_TEXT_BYTES + 1),
    }));
    assert_eq!(
        err(decode_from_agent(&failed[..], 2)),
        "Failed.reason: 65537 bytes, at most 65536"
    );
    let abort = encode_to_agent(to_agent::Body::Abort(Abort {
        reason: "x".repeat(MAX_TEXT_BYTES + 1),
    }));
    assert_eq!(
        err(decode_to_agent(&abort[..], 2)),
        "Abort.reason: 65537 bytes, at most 65536"
    );
}

#[test]
fn every_body_round_trips() {
    let to: Vec<to_agent::Body> = vec![
        to_agent::Body::Welcome(Welcome {}),
        to_agent::Body::Open(Open {
            window: u32::MAX,
            opened_unix_ns: 1_700_000_000_000_000_000,
        }),
        to_agent::Body::Releases(Releases {
            window: 7,
            releases: vec![
                Release {
                    corrupted: true,
                    ..release(1, 20)
                },
                release(0, 65535),
            ],
        }),
        to_agent::Body::Releases(Releases::default()),
        to_agent::Body::Finish(Finish { end_ns: u64::MAX }),
        to_agent::Body::Abort(Abort {
            reason: "the physics simulator stopped".into(),
        }),
    ];
    for body in to {
        assert_eq!(
            decode_to_agent(&encode_to_agent(body.clone())[..], 2),
            Ok(body)
        );
    }
    let from: Vec<from_agent::Body> = vec![
        from_agent::Body::Settled(Settled {
            waited_ms: 5000,
            settled: false,
        }),
        from_agent::Body::Report(Report {
            window: 9,
            captures: vec![Capture {
                vehicle: 1,
                t_ns: 123,
                packet: packet(84).into(),
            }],
            written: vec![1, u64::MAX],
            written_late_ns: vec![0, 7],
            failed: vec![2],
            overflow: 3,
        }),
        from_agent::Body::Report(Report::default()),
        from_agent::Body::Finished(Finished {
            written: vec![4],
            failed: vec![5],
            unwritten: vec![6, 7],
            output: vec![output("listener")],
            programs: vec!["{\"name\":\"talker\"}".into()],
            overflow: 8,
            captures: vec![Capture {
                vehicle: 1,
                t_ns: 9,
                packet: packet(60).into(),
            }],
            written_late_ns: vec![11],
        }),
        from_agent::Body::Failed(Failed {
            reason: "the TUN of auv3 failed".into(),
        }),
    ];
    for body in from {
        assert_eq!(
            decode_from_agent(&encode_from_agent(body.clone())[..], 2),
            Ok(body)
        );
    }
}

#[test]
fn mutated_messages_decode_or_say_why() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(34);
    let seeds = [
        hello(NAME, 32, VERSION),
        releases(vec![release(0, 40), release(1, 20)]),
        report(Report {
            captures: vec![Capture {
                vehicle: 1,
                t_ns: 1,
                packet: packet(30).into(),
            }],
            ..Report::default()
        }),
        encode_from_agent(from_agent::Body::Finished(Finished {
            output: vec![output("x")],
            ..Finished::default()
        })),
    ];
    for _ in 0..20_000 {
        for seed in &seeds {
            let mut bytes = seed.clone();
            crate::wire::mutate(&mut rng, &mut bytes, &[0x0a, 0x12, 0x1a, 0x80]);
            let _ = decode_hello(&bytes);
            if let Ok(b) = decode_to_agent(&bytes[..], 2) {
                assert_eq!(decode_to_agent(&encode_to_agent(b.clone())[..], 2), Ok(b));
            }
            if let Ok(b) = decode_from_agent(&bytes[..], 2) {
                assert_eq!(
                    decode_from_agent(&encode_from_agent(b.clone())[..], 2),
                    Ok(b)
                );
            }
        }
    }
}
