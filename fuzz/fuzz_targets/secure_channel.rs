//! The secure channel between hosts from a peer without the run's secret, and its records'
//! reassembly from any plaintext. The input's first byte sizes the plaintext pieces and picks
//! the suite (its parity), the rest is what the peer sends:
//! - as a responder's handshake (its first 4 bytes the magic): refused, since nothing forges
//!   the secret's authentication; as the answer to an initiator: refused too;
//! - as a record to a session: refused (and the session still opens its peer's next record);
//! - cut into pieces as record plaintexts to a frame's reassembly: whole frames within the
//!   bound, or an error, never a panic;
//! - sealed by the peer: opens to itself, once.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::wire::secure::{initiate, respond, Channel, Reassembly, Secret, Suite};

const MAX: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let Some((&piece, rest)) = data.split_first() else {
        return;
    };
    let secret = Secret::from_bytes([7; 32]);
    let suite = Suite::ALL[usize::from(piece) % Suite::ALL.len()];
    if let Some((magic, message)) = rest.split_first_chunk::<4>() {
        assert!(respond(&secret, Channel::Agents, *magic, message, MAX).is_err());
    }
    let (initiating, _) = initiate(&secret, Channel::Agents, suite).unwrap();
    assert!(initiating.finish(rest, MAX).is_err());
    let (initiating, hello) = initiate(&secret, Channel::Agents, suite).unwrap();
    let magic = hello[..4].try_into().unwrap();
    let (mut responder, answer) =
        respond(&secret, Channel::Agents, magic, &hello[4..], MAX).unwrap();
    let mut initiator = initiating.finish(&answer, MAX).unwrap();
    assert!(responder.open(rest).is_err());
    if rest.len() <= MAX {
        let mut out = Vec::new();
        out.extend_from_slice(initiator.seal(rest).unwrap());
        let mut frames = Vec::new();
        let mut at = 0;
        while at < out.len() {
            let n = usize::from(u16::from_be_bytes([out[at], out[at + 1]]));
            if let Some(f) = responder.open(&out[at + 2..at + 2 + n]).unwrap() {
                frames.push(f);
            }
            at += 2 + n;
        }
        assert_eq!(frames, vec![rest.to_vec()]);
        assert!(responder.open(&out[2..]).is_err());
    }
    let mut r = Reassembly::new(4096);
    for chunk in rest.chunks(usize::from(piece).max(1)) {
        match r.push(chunk) {
            Ok(Some(frame)) => assert!(frame.len() <= 4096),
            Ok(None) => {}
            Err(_) => break,
        }
    }
});
