use super::*;
use crate::wire::proto::agent::{Abort, Failed, Finish, Finished, Open, Releases, Report, Welcome};

const NAME: &str = "hostb";

fn secret(byte: u8) -> Secret {
    Secret::from_bytes([byte; SECRET_BYTES])
}

fn packet(len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p
}

/// Both ends of a connection after a handshake with `agent_secret` on the agent's side:
/// the sessions if each side accepted the other's proof, else which proofs failed.
fn handshake(
    agent_secret: &Secret,
    coord_secret: &Secret,
) -> Result<(Session, Session), (bool, bool)> {
    // Agent → coordinator: Hello.
    let an = nonce();
    let hello = Hello {
        version: VERSION,
        agent: NAME.into(),
        nonce: an.to_vec(),
        scenario_digest: vec![7; MAC_BYTES],
    }
    .encode_to_vec();
    let hello = decode_hello(&hello).unwrap();
    // Coordinator → agent: Challenge.
    let cn = nonce();
    let challenge = Challenge {
        nonce: cn.to_vec(),
        proof: proof(
            coord_secret,
            Role::Coordinator,
            &hello.agent,
            &hello.nonce,
            &cn,
        )
        .to_vec(),
    }
    .encode_to_vec();
    let challenge = decode_challenge(&challenge).unwrap();
    let agent_accepts = verify_proof(
        agent_secret,
        Role::Coordinator,
        NAME,
        &an,
        &challenge.nonce,
        &challenge.proof,
    );
    // Agent → coordinator: Proof.
    let p = Proof {
        proof: proof(agent_secret, Role::Agent, NAME, &an, &challenge.nonce).to_vec(),
    }
    .encode_to_vec();
    let p = decode_proof(&p).unwrap();
    let coord_accepts = verify_proof(
        coord_secret,
        Role::Coordinator.peer(),
        &hello.agent,
        &hello.nonce,
        &cn,
        &p.proof,
    );
    if agent_accepts && coord_accepts {
        Ok((
            Session::new(coord_secret, Role::Coordinator, NAME, &an, &cn),
            Session::new(agent_secret, Role::Agent, NAME, &an, &cn),
        ))
    } else {
        Err((agent_accepts, coord_accepts))
    }
}

#[test]
fn a_handshake_between_both_roles_gives_sessions_that_talk_both_ways() {
    let s = Secret::generate();
    let (mut coord, mut agent) = handshake(&s, &s).unwrap();
    for window in 0..3 {
        let body = encode_to_agent(to_agent::Body::Open(Open {
            window,
            opened_unix_ns: 0,
        }));
        let frame = coord.seal(&body);
        assert_eq!(frame.len(), SEAL_BYTES + body.len());
        assert_eq!(agent.open(&frame).unwrap(), &body[..]);
        let reply = encode_from_agent(from_agent::Body::Report(Report {
            window,
            ..Report::default()
        }));
        assert_eq!(coord.open(&agent.seal(&reply)).unwrap(), &reply[..]);
    }
}

#[test]
fn a_wrong_secret_fails_both_proofs() {
    assert_eq!(
        handshake(&secret(1), &secret(2)).map(|_| ()),
        Err((false, false))
    );
}

#[test]
fn a_proof_is_bound_to_its_role_agent_and_nonces() {
    let s = secret(3);
    let (an, cn) = ([1u8; 32], [2u8; 32]);
    let p = proof(&s, Role::Agent, NAME, &an, &cn);
    assert!(verify_proof(&s, Role::Agent, NAME, &an, &cn, &p));
    // The coordinator's proof sent back as the agent's is refused, and so on.
    assert!(!verify_proof(&s, Role::Coordinator, NAME, &an, &cn, &p));
    assert!(!verify_proof(&s, Role::Agent, "hostc", &an, &cn, &p));
    assert!(!verify_proof(&s, Role::Agent, NAME, &cn, &an, &p));
    assert!(!verify_proof(&s, Role::Agent, NAME, &an, &[2u8; 31], &p));
    assert!(!verify_proof(&s, Role::Agent, NAME, &an, &cn, &p[..31]));
    assert!(!verify_proof(&s, Role::Agent, NAME, &an, &cn, &[]));
    let mut q = p;
    q[31] ^= 1;
    assert!(!verify_proof(&s, Role::Agent, NAME, &an, &cn, &q));
    // The nonces' boundary is part of what is proved.
    assert_ne!(
        proof(&s, Role::Agent, NAME, &[1, 2], &[3]),
        proof(&s, Role::Agent, NAME, &[1], &[2, 3])
    );
}

fn sessions() -> (Session, Session) {
    let s = secret(9);
    let (an, cn) = ([4u8; 32], [5u8; 32]);
    (
        Session::new(&s, Role::Coordinator, NAME, &an, &cn),
        Session::new(&s, Role::Agent, NAME, &an, &cn),
    )
}

#[test]
fn a_sealed_frame_altered_in_any_byte_is_refused() {
    let (mut coord, mut agent) = sessions();
    let frame = coord.seal(b"twelve bytes");
    for at in 0..frame.len() {
        for flip in [1u8, 0x80] {
            let mut altered = frame.clone();
            altered[at] ^= flip;
            let err = agent.open(&altered).unwrap_err();
            assert_eq!(err, SealError::BadMac, "byte {at}");
        }
    }
    assert_eq!(agent.open(&frame).unwrap(), b"twelve bytes");
}

#[test]
fn a_replayed_reordered_or_truncated_frame_is_refused() {
    let (mut coord, mut agent) = sessions();
    let f0 = coord.seal(b"zero");
    let f1 = coord.seal(b"one");
    let f2 = coord.seal(b"");
    // Reordered.
    assert_eq!(
        agent.open(&f1),
        Err(SealError::Sequence {
            expected: 0,
            got: 1
        })
    );
    assert_eq!(agent.open(&f0), Ok(&b"zero"[..]));
    // Replayed.
    assert_eq!(
        agent.open(&f0),
        Err(SealError::Sequence {
            expected: 1,
            got: 0
        })
    );
    assert_eq!(agent.open(&f1), Ok(&b"one"[..]));
    // Truncated: inside the seal, then inside the body.
    for len in 0..SEAL_BYTES {
        assert_eq!(agent.open(&f2[..len]), Err(SealError::Short(len)));
    }
    assert_eq!(agent.open(&f1[..f1.len() - 1]), Err(SealError::BadMac));
    assert_eq!(agent.open(&f2), Ok(&b""[..]));
    assert_eq!(
        SealError::Short(3).to_string(),
        "a sealed frame of 3 bytes, shorter than its 40-byte seal"
    );
    assert_eq!(
        SealError::Sequence {
            expected: 1,
            got: 0
        }
        .to_string(),
        "a sealed frame numbered 0, expected 1 (replayed, reordered or lost)"
    );
}

#[test]
fn a_frame_sent_back_to_its_sender_is_refused() {
    let (mut coord, mut agent) = sessions();
    let down = coord.seal(b"to the agent");
    assert_eq!(coord.open(&down), Err(SealError::BadMac));
    let up = agent.seal(b"to the coordinator");
    assert_eq!(agent.open(&up), Err(SealError::BadMac));
    assert_eq!(agent.open(&down), Ok(&b"to the agent"[..]));
    assert_eq!(coord.open(&up), Ok(&b"to the coordinator"[..]));
}

#[test]
fn a_frame_of_another_session_is_refused() {
    let s = secret(9);
    let mut coord = Session::new(&s, Role::Coordinator, NAME, &[4; 32], &[5; 32]);
    for mut other in [
        Session::new(&s, Role::Agent, NAME, &[4; 32], &[6; 32]),
        Session::new(&s, Role::Agent, "hostc", &[4; 32], &[5; 32]),
        Session::new(&secret(8), Role::Agent, NAME, &[4; 32], &[5; 32]),
    ] {
        assert_eq!(coord.open(&other.seal(b"x")), Err(SealError::BadMac));
    }
}

#[test]
fn the_scenario_digest_is_sha256() {
    assert_eq!(
        Secret::from_bytes(scenario_digest(b"abc")).to_hex(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn secrets_parse_from_hex_and_show_no_bytes() {
    let s = Secret::generate();
    let hex = s.to_hex();
    assert_eq!(hex.len(), 64);
    assert!(hex
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert_eq!(Secret::parse(&format!("  {hex}\n")).unwrap().to_hex(), hex);
    assert_eq!(Secret::parse(&hex.to_uppercase()).unwrap().to_hex(), hex);
    assert_ne!(Secret::generate().to_hex(), hex);
    assert_eq!(format!("{s:?}"), "Secret(..)");
    assert_eq!(
        Secret::parse(&hex[1..]).unwrap_err().to_string(),
        "a secret of 63 characters, expected 64 hex digits"
    );
    assert_eq!(
        Secret::parse("").unwrap_err().to_string(),
        "a secret of 0 characters, expected 64 hex digits"
    );
    let bad = format!("{}g{}", &hex[..9], &hex[10..]);
    assert_eq!(
        Secret::parse(&bad).unwrap_err().to_string(),
        "the secret's character 10 is not a hex digit"
    );
    let wide = format!("{}é{}", &hex[..9], &hex[10..]);
    assert_eq!(Secret::parse(&wide).unwrap_err(), SecretError::NotHex(10));
    let (a, b) = sessions();
    assert!(!format!("{a:?}{b:?}").contains("mac"));
}

fn hello(agent: &str, nonce: usize, digest: usize, version: u32) -> Vec<u8> {
    Hello {
        version,
        agent: agent.into(),
        nonce: vec![1; nonce],
        scenario_digest: vec![2; digest],
    }
    .encode_to_vec()
}

fn err<T: fmt::Debug>(r: Result<T, DecodeError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn hello_is_checked_field_by_field() {
    let h = decode_hello(&hello("a-0_z", 32, 32, 1)).unwrap();
    assert_eq!(h.agent, "a-0_z");
    assert_eq!(
        err(decode_hello(&hello(NAME, 7, 32, 1))),
        "Hello.nonce: 7 bytes, expected 32"
    );
    assert_eq!(
        err(decode_hello(&hello(NAME, 32, 33, 1))),
        "Hello.scenario_digest: 33 bytes, expected 32"
    );
    assert_eq!(
        err(decode_hello(&hello(NAME, 32, 32, 2))),
        "Hello.version: 2, expected 1"
    );
    assert_eq!(
        err(decode_hello(&hello("", 32, 32, 1))),
        "Hello.agent: empty, expected 1 to 32 characters of a-z, 0-9, _ and -"
    );
    assert_eq!(
        err(decode_hello(&hello(&"a".repeat(33), 32, 32, 1))),
        "Hello.agent: 33 characters, at most 32"
    );
    assert!(decode_hello(&hello(&"a".repeat(32), 32, 32, 1)).is_ok());
    assert_eq!(
        err(decode_hello(&hello("Host", 32, 32, 1))),
        "Hello.agent: character 1 ('H') is not one of a-z, 0-9, _ and -"
    );
    assert_eq!(
        err(decode_hello(&hello("ho st", 32, 32, 1))),
        "Hello.agent: character 3 (' ') is not one of a-z, 0-9, _ and -"
    );
    assert_eq!(
        err(decode_hello(&hello("hé\n", 32, 32, 1))),
        "Hello.agent: character 2 ('é') is not one of a-z, 0-9, _ and -"
    );
    assert!(err(decode_hello(&[0x0a, 0x05, b'a'])).starts_with("not a valid Hello: "));
    // Unknown fields are skipped, within the handshake's bound.
    let mut long = hello(NAME, 32, 32, 1);
    long.extend_from_slice(&[0x2a, 0x40]);
    long.extend_from_slice(&[0; 0x40]);
    assert!(long.len() <= MAX_HANDSHAKE_FRAME_BYTES);
    assert!(decode_hello(&long).is_ok());
    long.extend_from_slice(&[0x2a, 0x7f]);
    long.extend_from_slice(&[0; 0x7f]);
    assert_eq!(
        err(decode_hello(&long)),
        format!(
            "Hello: {} bytes, at most 256 before the handshake ends",
            long.len()
        )
    );
    // A name of invalid UTF-8.
    assert!(err(decode_hello(&[0x12, 0x01, 0xff])).starts_with("not a valid Hello: "));
}

#[test]
fn challenge_and_proof_are_32_bytes_each() {
    let c = |n: usize, p: usize| {
        Challenge {
            nonce: vec![0; n],
            proof: vec![0; p],
        }
        .encode_to_vec()
    };
    assert!(decode_challenge(&c(32, 32)).is_ok());
    assert_eq!(
        err(decode_challenge(&c(0, 32))),
        "Challenge.nonce: 0 bytes, expected 32"
    );
    assert_eq!(
        err(decode_challenge(&c(32, 64))),
        "Challenge.proof: 64 bytes, expected 32"
    );
    assert!(err(decode_challenge(&[0xff])).starts_with("not a valid Challenge: "));
    let p = |n: usize| Proof { proof: vec![0; n] }.encode_to_vec();
    assert!(decode_proof(&p(32)).is_ok());
    assert_eq!(
        err(decode_proof(&p(31))),
        "Proof.proof: 31 bytes, expected 32"
    );
    assert!(err(decode_proof(&[0x0a, 0x20])).starts_with("not a valid Proof: "));
    assert_eq!(
        err(decode_challenge(&[0; 257])),
        "Challenge: 257 bytes, at most 256 before the handshake ends"
    );
    assert_eq!(
        err(decode_proof(&[0; 300])),
        "Proof: 300 bytes, at most 256 before the handshake ends"
    );
}

fn release(vehicle: u32, len: usize) -> Release {
    Release {
        id: 1,
        vehicle,
        t_ns: 2,
        packet: packet(len),
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
fn releases_are_checked_against_the_scenario_and_the_bounds() {
    let ok = releases(vec![release(0, 20), release(2, 65535)]);
    assert!(decode_to_agent(&ok, 3).is_ok());
    assert_eq!(
        err(decode_to_agent(&ok, 2)),
        "Releases.releases[1].vehicle: vehicle 2, but the scenario has 2 vehicles"
    );
    assert_eq!(
        err(decode_to_agent(
            &releases(vec![release(0, 20), release(0, 19)]),
            1
        )),
        "Releases.releases[1].packet: 19 bytes, expected 20 to 65535"
    );
    assert_eq!(
        err(decode_to_agent(&releases(vec![release(0, 65536)]), 1)),
        "Releases.releases[0].packet: 65536 bytes, expected 20 to 65535"
    );
    assert_eq!(
        err(decode_to_agent(&releases(vec![Release::default()]), 1)),
        "Releases.releases[0].packet: 0 bytes, expected 20 to 65535"
    );
    assert_eq!(
        err(decode_to_agent(&releases(vec![release(u32::MAX, 20)]), 0)),
        "Releases.releases[0].vehicle: vehicle 4294967295, but the scenario has 0 vehicles"
    );
    // MAX_ITEMS + 1 empty releases: two bytes each.
    let many = releases(vec![Release::default(); MAX_ITEMS + 1]);
    assert!(many.len() < MAX_FRAME_BYTES);
    assert_eq!(
        err(decode_to_agent(&many, 1)),
        "Releases.releases: 1048577 entries, at most 1048576"
    );
}

#[test]
fn a_message_without_a_body_is_refused() {
    assert_eq!(err(decode_to_agent(&[], 1)), "ToAgent: no body");
    assert_eq!(err(decode_from_agent(&[], 1)), "FromAgent: no body");
    assert!(err(decode_to_agent(&[0x0a, 0x05], 1)).starts_with("not a valid ToAgent: "));
    assert!(err(decode_from_agent(&[0x0a, 0x05], 1)).starts_with("not a valid FromAgent: "));
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
        packet: packet(len),
    };
    let ok = report(Report {
        window: 1,
        captures: vec![capture(0, 20), capture(1, 1500)],
        written: vec![1, 2],
        written_late_ns: vec![10, 20],
        failed: vec![3],
        overflow: 4,
    });
    assert!(decode_from_agent(&ok, 2).is_ok());
    assert_eq!(
        err(decode_from_agent(&ok, 1)),
        "Report.captures[1].vehicle: vehicle 1, but the scenario has 1 vehicles"
    );
    let bad = |r: Report| err(decode_from_agent(&report(r), 2));
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
        packet: packet(40),
    };
    let bad = |f: Finished| {
        err(decode_from_agent(
            &encode_from_agent(from_agent::Body::Finished(f)),
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
        })),
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
        err(decode_from_agent(&failed, 2)),
        "Failed.reason: 65537 bytes, at most 65536"
    );
    let abort = encode_to_agent(to_agent::Body::Abort(Abort {
        reason: "x".repeat(MAX_TEXT_BYTES + 1),
    }));
    assert_eq!(
        err(decode_to_agent(&abort, 2)),
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
        assert_eq!(decode_to_agent(&encode_to_agent(body.clone()), 2), Ok(body));
    }
    let from: Vec<from_agent::Body> = vec![
        from_agent::Body::Report(Report {
            window: 9,
            captures: vec![Capture {
                vehicle: 1,
                t_ns: 123,
                packet: packet(84),
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
                packet: packet(60),
            }],
            written_late_ns: vec![11],
        }),
        from_agent::Body::Failed(Failed {
            reason: "the TUN of auv3 failed".into(),
        }),
    ];
    for body in from {
        assert_eq!(
            decode_from_agent(&encode_from_agent(body.clone()), 2),
            Ok(body)
        );
    }
}

#[test]
fn mutated_messages_decode_or_say_why() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(34);
    let seeds = [
        hello(NAME, 32, 32, 1),
        releases(vec![release(0, 40), release(1, 20)]),
        report(Report {
            captures: vec![Capture {
                vehicle: 1,
                t_ns: 1,
                packet: packet(30),
            }],
            ..Report::default()
        }),
        encode_from_agent(from_agent::Body::Finished(Finished {
            output: vec![output("x")],
            ..Finished::default()
        })),
    ];
    let (mut coord, _) = sessions();
    for _ in 0..20_000 {
        for seed in &seeds {
            let mut bytes = seed.clone();
            crate::wire::mutate(&mut rng, &mut bytes, &[0x0a, 0x12, 0x1a, 0x80]);
            let _ = decode_hello(&bytes);
            let _ = decode_challenge(&bytes);
            let _ = decode_proof(&bytes);
            if let Ok(b) = decode_to_agent(&bytes, 2) {
                assert_eq!(decode_to_agent(&encode_to_agent(b.clone()), 2), Ok(b));
            }
            if let Ok(b) = decode_from_agent(&bytes, 2) {
                assert_eq!(decode_from_agent(&encode_from_agent(b.clone()), 2), Ok(b));
            }
            assert!(coord.open(&bytes).is_err());
        }
    }
}
