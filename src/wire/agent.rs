//! The capture agents' protocol (docs/src/reference/agent-protocol.md), as pure code: the run's
//! secret, the handshake's proofs, the sealing of every later frame (HMAC-SHA256 over a
//! sequence number and the body) and the checked decoding of every message
//! (`msg/agent.proto`). No I/O; nothing here panics on any input.
//!
//! Framing (a 4-byte big-endian length, at most [`MAX_FRAME_BYTES`]) is the transport's.

use crate::wire::proto::agent::{
    from_agent, to_agent, Capture, Challenge, FromAgent, Hello, Output, Proof, Release, ToAgent,
};
use hmac::{Hmac, Mac};
use prost::Message;
use sha2::Sha256;
use std::fmt;

type HmacSha256 = Hmac<Sha256>;

/// The protocol's version, in [`Hello::version`].
pub const VERSION: u32 = 1;
/// The largest frame, its length prefix excluded.
pub const MAX_FRAME_BYTES: usize = 64 << 20;
/// The run's secret.
pub const SECRET_BYTES: usize = 32;
/// Each side's handshake nonce.
pub const NONCE_BYTES: usize = 32;
/// A proof, a frame's MAC, a scenario digest (SHA-256).
pub const MAC_BYTES: usize = 32;
/// A sealed frame's sequence number.
pub const SEQ_BYTES: usize = 8;
/// The longest frame of the handshake (Hello, Challenge, Proof): a peer not yet authenticated
/// can make the other end hold no more than this.
pub const MAX_HANDSHAKE_FRAME_BYTES: usize = 256;
/// The bytes a sealed frame carries before its body.
pub const SEAL_BYTES: usize = MAC_BYTES + SEQ_BYTES;
/// The most entries of one list (captures, releases, ids, output, programs) in one message.
pub const MAX_ITEMS: usize = 1 << 20;
/// The longest agent name, in characters (`[a-z0-9_-]`).
pub const MAX_AGENT_NAME: usize = 32;
/// The longest program name in an [`Output`], in characters.
pub const MAX_PROGRAM_NAME: usize = 64;
/// The shortest packet (an IPv4 header without options).
pub const MIN_PACKET_BYTES: usize = 20;
/// The longest packet.
pub const MAX_PACKET_BYTES: usize = 65535;
/// Longest text in a message (a reason, a program's record), bytes.
pub const MAX_TEXT_BYTES: usize = 64 << 10;

/// What every proof and session key is bound to.
const DOMAIN: &[u8] = b"netsim_cosim agent v1";

/// The run's secret, shared by the network coordinator and its agents. Its `Debug` shows no byte.
#[derive(Clone)]
pub struct Secret([u8; SECRET_BYTES]);

/// Why a text is not a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("a secret of {0} characters, expected {n} hex digits", n = 2 * SECRET_BYTES)]
    Length(usize),
    #[error("the secret's character {0} is not a hex digit")]
    NotHex(usize),
}

impl Secret {
    /// 32 bytes from `rand::rng()` (ChaCha12 seeded from the operating system).
    pub fn generate() -> Secret {
        Secret(random())
    }

    /// A secret of these bytes.
    pub fn from_bytes(bytes: [u8; SECRET_BYTES]) -> Secret {
        Secret(bytes)
    }

    /// 64 hex digits (either case); whitespace around them is ignored.
    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        let digits = text.trim();
        let count = digits.chars().count();
        if count != 2 * SECRET_BYTES {
            return Err(SecretError::Length(count));
        }
        if let Some(i) = digits.chars().position(|c| !c.is_ascii_hexdigit()) {
            return Err(SecretError::NotHex(i + 1));
        }
        // 64 ASCII hex digits from here on.
        let mut bytes = [0u8; SECRET_BYTES];
        for (byte, pair) in bytes.iter_mut().zip(digits.as_bytes().chunks_exact(2)) {
            *byte = hex_value(pair[0]) << 4 | hex_value(pair[1]);
        }
        Ok(Secret(bytes))
    }

    /// 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = String::with_capacity(2 * SECRET_BYTES);
        for b in self.0 {
            text.push(HEX[usize::from(b >> 4)] as char);
            text.push(HEX[usize::from(b & 15)] as char);
        }
        text
    }

    fn mac(&self) -> HmacSha256 {
        keyed(&self.0)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The value of an ASCII hex digit (0 for any other byte).
fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

fn random<const N: usize>() -> [u8; N] {
    use rand::RngCore;
    let mut bytes = [0u8; N];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

fn keyed(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length")
}

/// The SHA-256 of a scenario file's bytes, as [`Hello::scenario_digest`] carries it.
pub fn scenario_digest(scenario: &[u8]) -> [u8; MAC_BYTES] {
    use sha2::Digest;
    Sha256::digest(scenario).into()
}

/// A fresh handshake nonce: 32 bytes from `rand::rng()`.
pub fn nonce() -> [u8; NONCE_BYTES] {
    random()
}

/// The two ends of an agent's connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    Coordinator,
    Agent,
}

impl Role {
    /// The label a proof is bound to.
    pub fn label(self) -> &'static str {
        match self {
            Role::Coordinator => "coordinator",
            Role::Agent => "agent",
        }
    }

    /// The byte a sealed frame's MAC binds its sender to.
    pub fn byte(self) -> u8 {
        match self {
            Role::Coordinator => 1,
            Role::Agent => 2,
        }
    }

    /// The other end.
    pub fn peer(self) -> Role {
        match self {
            Role::Coordinator => Role::Agent,
            Role::Agent => Role::Coordinator,
        }
    }
}

/// Feeds `bytes` preceded by its length (4 bytes, big-endian).
fn update_prefixed(mac: &mut HmacSha256, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    mac.update(&len.to_be_bytes());
    mac.update(bytes);
}

/// HMAC(secret, DOMAIN | what | agent | agent_nonce | coordinator_nonce), the last three each
/// preceded by its length.
fn bound(
    secret: &Secret,
    what: &str,
    agent: &str,
    agent_nonce: &[u8],
    coordinator_nonce: &[u8],
) -> HmacSha256 {
    let mut mac = secret.mac();
    mac.update(DOMAIN);
    update_prefixed(&mut mac, what.as_bytes());
    update_prefixed(&mut mac, agent.as_bytes());
    update_prefixed(&mut mac, agent_nonce);
    update_prefixed(&mut mac, coordinator_nonce);
    mac
}

/// `role`'s proof that it holds `secret`, bound to this agent and both nonces:
/// HMAC-SHA256(secret, "netsim_cosim agent v1" | role label | agent name | agent_nonce |
/// coordinator_nonce), each after the first preceded by its length (4 bytes, big-endian).
pub fn proof(
    secret: &Secret,
    role: Role,
    agent: &str,
    agent_nonce: &[u8],
    coordinator_nonce: &[u8],
) -> [u8; MAC_BYTES] {
    bound(secret, role.label(), agent, agent_nonce, coordinator_nonce)
        .finalize()
        .into_bytes()
        .into()
}

/// Whether `got` is `role`'s [`proof`] for these values, compared in constant time.
pub fn verify_proof(
    secret: &Secret,
    role: Role,
    agent: &str,
    agent_nonce: &[u8],
    coordinator_nonce: &[u8],
    got: &[u8],
) -> bool {
    bound(secret, role.label(), agent, agent_nonce, coordinator_nonce)
        .verify_slice(got)
        .is_ok()
}

/// Why a sealed frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("a sealed frame of {0} bytes, shorter than its {SEAL_BYTES}-byte seal")]
    Short(usize),
    #[error("a sealed frame whose MAC does not match (altered, or not sealed by the peer of this session)")]
    BadMac,
    #[error("a sealed frame numbered {got}, expected {expected} (replayed, reordered or lost)")]
    Sequence { expected: u64, got: u64 },
}

/// One end's sealing state after the handshake. Its key is HMAC(secret, "netsim_cosim agent
/// v1" | "session" | agent | agent_nonce | coordinator_nonce) (each after the first preceded by
/// its length); every frame carries the sender's count of frames before it. Its `Debug` shows no
/// key.
#[derive(Clone)]
pub struct Session {
    me: Role,
    mac: HmacSha256,
    sent: u64,
    received: u64,
}

impl Session {
    /// The session of `me` on this agent's connection, after a handshake with these nonces.
    pub fn new(
        secret: &Secret,
        me: Role,
        agent: &str,
        agent_nonce: &[u8],
        coordinator_nonce: &[u8],
    ) -> Session {
        let key = bound(secret, "session", agent, agent_nonce, coordinator_nonce)
            .finalize()
            .into_bytes();
        Session {
            me,
            mac: keyed(&key),
            sent: 0,
            received: 0,
        }
    }

    /// This end.
    pub fn role(&self) -> Role {
        self.me
    }

    fn mac(&self, sender: Role, seq: [u8; SEQ_BYTES], body: &[u8]) -> HmacSha256 {
        let mut mac = self.mac.clone();
        mac.update(&[sender.byte()]);
        mac.update(&seq);
        mac.update(body);
        mac
    }

    /// `[MAC (32 bytes)][seq (8 bytes, big-endian)][body]`, MAC = HMAC(key, this end's role
    /// byte | seq | body); seq counts this end's frames from 0.
    pub fn seal(&mut self, body: &[u8]) -> Vec<u8> {
        let seq = self.sent.to_be_bytes();
        self.sent = self.sent.wrapping_add(1);
        let tag = self.mac(self.me, seq, body).finalize().into_bytes();
        let mut frame = Vec::with_capacity(SEAL_BYTES + body.len());
        frame.extend_from_slice(&tag);
        frame.extend_from_slice(&seq);
        frame.extend_from_slice(body);
        frame
    }

    /// The body of the peer's next frame: its MAC checked (in constant time) for the peer's
    /// role, then its sequence number for the one expected next. A refused frame leaves the
    /// session as it was; the connection is to be closed.
    pub fn open<'a>(&mut self, frame: &'a [u8]) -> Result<&'a [u8], SealError> {
        if frame.len() < SEAL_BYTES {
            return Err(SealError::Short(frame.len()));
        }
        let (tag, rest) = frame.split_at(MAC_BYTES);
        let (seq, body) = rest.split_at(SEQ_BYTES);
        let seq: [u8; SEQ_BYTES] = seq.try_into().map_err(|_| SealError::Short(frame.len()))?;
        self.mac(self.me.peer(), seq, body)
            .verify_slice(tag)
            .map_err(|_| SealError::BadMac)?;
        let got = u64::from_be_bytes(seq);
        if got != self.received {
            return Err(SealError::Sequence {
                expected: self.received,
                got,
            });
        }
        self.received = self.received.wrapping_add(1);
        Ok(body)
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("me", &self.me)
            .field("sent", &self.sent)
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

/// Why a message was refused; every message names the message and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a valid {message}: {reason}")]
    Malformed {
        message: &'static str,
        reason: String,
    },
    #[error(
        "{message}: {got} bytes, at most {MAX_HANDSHAKE_FRAME_BYTES} before the handshake ends"
    )]
    Handshake { message: &'static str, got: usize },
    #[error("{message}: no body")]
    NoBody { message: &'static str },
    #[error("Hello.version: {0}, expected {VERSION}")]
    Version(u32),
    #[error("{field}: {got} bytes, expected {expected}")]
    Length {
        field: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("{field}: empty, expected 1 to {MAX_AGENT_NAME} characters of a-z, 0-9, _ and -")]
    NameEmpty { field: &'static str },
    #[error("{field}: {got} characters, at most {MAX_AGENT_NAME}")]
    NameLong { field: &'static str, got: usize },
    #[error("{field}: character {at} ({ch:?}) is not one of a-z, 0-9, _ and -")]
    NameChar {
        field: &'static str,
        at: usize,
        ch: char,
    },
    #[error("{field}: {got} bytes, expected {MIN_PACKET_BYTES} to {MAX_PACKET_BYTES}")]
    Packet { field: String, got: usize },
    #[error("{field}: {got} bytes, at most {MAX_TEXT_BYTES}")]
    TextLong { field: String, got: usize },
    #[error("{field}: {got} entries, at most {MAX_ITEMS}")]
    TooMany { field: &'static str, got: usize },
    #[error("{field}: vehicle {vehicle}, but the scenario has {vehicles} vehicles")]
    Vehicle {
        field: String,
        vehicle: u32,
        vehicles: usize,
    },
    #[error("{field}: {got} characters, at most {MAX_PROGRAM_NAME}")]
    ProgramName { field: String, got: usize },
}

fn decode<M: Message + Default>(message: &'static str, bytes: &[u8]) -> Result<M, DecodeError> {
    M::decode(bytes).map_err(|e| DecodeError::Malformed {
        message,
        reason: e.to_string(),
    })
}

/// A handshake message: at most [`MAX_HANDSHAKE_FRAME_BYTES`], then decoded.
fn decode_handshake<M: Message + Default>(
    message: &'static str,
    bytes: &[u8],
) -> Result<M, DecodeError> {
    if bytes.len() > MAX_HANDSHAKE_FRAME_BYTES {
        return Err(DecodeError::Handshake {
            message,
            got: bytes.len(),
        });
    }
    decode(message, bytes)
}

fn check_len(field: &'static str, bytes: &[u8], expected: usize) -> Result<(), DecodeError> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(DecodeError::Length {
            field,
            got: bytes.len(),
            expected,
        })
    }
}

fn check_count<T>(field: &'static str, items: &[T]) -> Result<(), DecodeError> {
    if items.len() <= MAX_ITEMS {
        Ok(())
    } else {
        Err(DecodeError::TooMany {
            field,
            got: items.len(),
        })
    }
}

/// Whether `name` is an agent's name: 1 to 32 characters of `[a-z0-9_-]`.
pub fn check_agent_name(field: &'static str, name: &str) -> Result<(), DecodeError> {
    if name.is_empty() {
        return Err(DecodeError::NameEmpty { field });
    }
    if let Some((i, ch)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
    {
        return Err(DecodeError::NameChar {
            field,
            at: i + 1,
            ch,
        });
    }
    if name.len() > MAX_AGENT_NAME {
        return Err(DecodeError::NameLong {
            field,
            got: name.len(),
        });
    }
    Ok(())
}

fn check_packet(field: impl FnOnce() -> String, packet: &[u8]) -> Result<(), DecodeError> {
    if (MIN_PACKET_BYTES..=MAX_PACKET_BYTES).contains(&packet.len()) {
        Ok(())
    } else {
        Err(DecodeError::Packet {
            field: field(),
            got: packet.len(),
        })
    }
}

fn check_vehicle(
    field: impl FnOnce() -> String,
    vehicle: u32,
    vehicles: usize,
) -> Result<(), DecodeError> {
    if usize::try_from(vehicle).is_ok_and(|v| v < vehicles) {
        Ok(())
    } else {
        Err(DecodeError::Vehicle {
            field: field(),
            vehicle,
            vehicles,
        })
    }
}

fn check_output(field: &'static str, output: &[Output]) -> Result<(), DecodeError> {
    check_count(field, output)?;
    for (i, o) in output.iter().enumerate() {
        let got = o.program.chars().count();
        if got > MAX_PROGRAM_NAME {
            return Err(DecodeError::ProgramName {
                field: format!("{field}[{i}].program"),
                got,
            });
        }
    }
    Ok(())
}

/// An agent's first frame: at most 256 bytes, version 1, a valid name, a 32-byte nonce and scenario digest.
pub fn decode_hello(bytes: &[u8]) -> Result<Hello, DecodeError> {
    let hello: Hello = decode_handshake("Hello", bytes)?;
    if hello.version != VERSION {
        return Err(DecodeError::Version(hello.version));
    }
    check_agent_name("Hello.agent", &hello.agent)?;
    check_len("Hello.nonce", &hello.nonce, NONCE_BYTES)?;
    check_len("Hello.scenario_digest", &hello.scenario_digest, MAC_BYTES)?;
    Ok(hello)
}

/// The coordinator's answer to a Hello: at most 256 bytes, a 32-byte nonce and proof.
pub fn decode_challenge(bytes: &[u8]) -> Result<Challenge, DecodeError> {
    let challenge: Challenge = decode_handshake("Challenge", bytes)?;
    check_len("Challenge.nonce", &challenge.nonce, NONCE_BYTES)?;
    check_len("Challenge.proof", &challenge.proof, MAC_BYTES)?;
    Ok(challenge)
}

/// The agent's proof: at most 256 bytes, the proof 32.
pub fn decode_proof(bytes: &[u8]) -> Result<Proof, DecodeError> {
    let proof: Proof = decode_handshake("Proof", bytes)?;
    check_len("Proof.proof", &proof.proof, MAC_BYTES)?;
    Ok(proof)
}

/// A coordinator's message (a sealed frame's body) to an agent of a run with `vehicles`
/// vehicles: a body present; releases bounded in count, each for a vehicle of the scenario
/// with a packet of 20 to 65535 bytes.
pub fn decode_to_agent(bytes: &[u8], vehicles: usize) -> Result<to_agent::Body, DecodeError> {
    let message: ToAgent = decode("ToAgent", bytes)?;
    let body = message
        .body
        .ok_or(DecodeError::NoBody { message: "ToAgent" })?;
    match &body {
        to_agent::Body::Releases(r) => check_releases(&r.releases, vehicles)?,
        to_agent::Body::Abort(a) => check_text(|| "Abort.reason".to_owned(), &a.reason)?,
        _ => {}
    }
    Ok(body)
}

fn check_releases(releases: &[Release], vehicles: usize) -> Result<(), DecodeError> {
    check_count("Releases.releases", releases)?;
    for (i, r) in releases.iter().enumerate() {
        check_vehicle(
            || format!("Releases.releases[{i}].vehicle"),
            r.vehicle,
            vehicles,
        )?;
        check_packet(|| format!("Releases.releases[{i}].packet"), &r.packet)?;
    }
    Ok(())
}

fn check_captures(
    field: &'static str,
    captures: &[Capture],
    vehicles: usize,
) -> Result<(), DecodeError> {
    check_count(field, captures)?;
    for (i, c) in captures.iter().enumerate() {
        check_vehicle(|| format!("{field}[{i}].vehicle"), c.vehicle, vehicles)?;
        check_packet(|| format!("{field}[{i}].packet"), &c.packet)?;
    }
    Ok(())
}

/// A text of at most [`MAX_TEXT_BYTES`] (a reason, a program's record).
fn check_text(field: impl Fn() -> String, text: &str) -> Result<(), DecodeError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(DecodeError::TextLong {
            field: field(),
            got: text.len(),
        });
    }
    Ok(())
}

/// An agent's message (a sealed frame's body) in a run with `vehicles` vehicles: a body
/// present; every list bounded in count; captures from vehicles of the scenario with packets of
/// 20 to 65535 bytes; program names of at most 64 characters.
pub fn decode_from_agent(bytes: &[u8], vehicles: usize) -> Result<from_agent::Body, DecodeError> {
    let message: FromAgent = decode("FromAgent", bytes)?;
    let body = message.body.ok_or(DecodeError::NoBody {
        message: "FromAgent",
    })?;
    match &body {
        from_agent::Body::Report(r) => {
            check_captures("Report.captures", &r.captures, vehicles)?;
            check_count("Report.written", &r.written)?;
            check_count("Report.written_late_ns", &r.written_late_ns)?;
            check_count("Report.failed", &r.failed)?;
        }
        from_agent::Body::Finished(f) => {
            check_count("Finished.written", &f.written)?;
            check_count("Finished.written_late_ns", &f.written_late_ns)?;
            check_count("Finished.failed", &f.failed)?;
            check_count("Finished.unwritten", &f.unwritten)?;
            check_output("Finished.output", &f.output)?;
            check_count("Finished.programs", &f.programs)?;
            for (i, p) in f.programs.iter().enumerate() {
                check_text(|| format!("Finished.programs[{i}]"), p)?;
            }
            check_captures("Finished.captures", &f.captures, vehicles)?;
        }
        from_agent::Body::Failed(f) => check_text(|| "Failed.reason".to_owned(), &f.reason)?,
    }
    Ok(body)
}

/// The id of a released copy (`Release.id`): its packet's id in the run and its receiving
/// vehicle's index, so that each copy of a packet released to several vehicles has its own.
pub fn copy_id(pkt_id: u32, vehicle: usize) -> u64 {
    (u64::from(pkt_id) << 32) | (vehicle as u64 & 0xffff_ffff)
}

/// The bytes of a coordinator's message.
pub fn encode_to_agent(body: to_agent::Body) -> Vec<u8> {
    ToAgent { body: Some(body) }.encode_to_vec()
}

/// The bytes of an agent's message.
pub fn encode_from_agent(body: from_agent::Body) -> Vec<u8> {
    FromAgent { body: Some(body) }.encode_to_vec()
}

#[cfg(test)]
mod tests;
