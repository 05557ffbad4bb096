//! The capture agents' protocol (docs/src/reference/agent-protocol.md), as pure code: the
//! checked decoding of every message (`msg/agent.proto`). No I/O; nothing here panics on any
//! input.
//!
//! Each message is one frame of the secure channel between the hosts ([`crate::wire::secure`],
//! channel [`Channel::Agents`](crate::wire::secure::Channel)): the agent's [`Hello`] first,
//! then [`ToAgent`] and [`FromAgent`] messages.

use crate::wire::proto::agent::{
    from_agent, to_agent, Capture, FromAgent, Hello, Output, Release, ToAgent,
};
use prost::bytes::Buf;
use prost::Message;
use sha2::Sha256;

/// The protocol's version, in [`Hello::version`] (1 had a handshake and sealing of its own;
/// 2 runs over the secure channel; 3 answers the Welcome once its programs settled).
pub const VERSION: u32 = 3;
/// The largest frame.
pub const MAX_FRAME_BYTES: usize = 64 << 20;
/// A scenario digest (SHA-256).
pub const DIGEST_BYTES: usize = 32;
/// The longest Hello: the first frame, read before the agent is admitted.
pub const MAX_HELLO_BYTES: usize = 256;
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

/// The SHA-256 of a scenario file's bytes, as [`Hello::scenario_digest`] carries it.
pub fn scenario_digest(scenario: &[u8]) -> [u8; DIGEST_BYTES] {
    use sha2::Digest;
    Sha256::digest(scenario).into()
}

/// Why a message was refused; every message names the message and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a valid {message}: {reason}")]
    Malformed {
        message: &'static str,
        reason: String,
    },
    #[error("{message}: {got} bytes, at most {MAX_HELLO_BYTES} before the agent is admitted")]
    Hello { message: &'static str, got: usize },
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

fn decode<M: Message + Default>(message: &'static str, bytes: impl Buf) -> Result<M, DecodeError> {
    M::decode(bytes).map_err(|e| DecodeError::Malformed {
        message,
        reason: e.to_string(),
    })
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

/// An agent's first frame: at most [`MAX_HELLO_BYTES`], this version, a valid name and a
/// 32-byte scenario digest.
pub fn decode_hello(bytes: &[u8]) -> Result<Hello, DecodeError> {
    if bytes.len() > MAX_HELLO_BYTES {
        return Err(DecodeError::Hello {
            message: "Hello",
            got: bytes.len(),
        });
    }
    let hello: Hello = decode("Hello", bytes)?;
    if hello.version != VERSION {
        return Err(DecodeError::Version(hello.version));
    }
    check_agent_name("Hello.agent", &hello.agent)?;
    check_len(
        "Hello.scenario_digest",
        &hello.scenario_digest,
        DIGEST_BYTES,
    )?;
    Ok(hello)
}

/// A coordinator's message to an agent of a run with `vehicles` vehicles: a body present;
/// releases bounded in count, each for a vehicle of the scenario with a packet of 20 to 65535
/// bytes. Decoded from [`Bytes`](prost::bytes::Bytes), each packet is a view into them (no
/// copy).
pub fn decode_to_agent(bytes: impl Buf, vehicles: usize) -> Result<to_agent::Body, DecodeError> {
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

/// An agent's message in a run with `vehicles` vehicles: a body present; every list bounded in
/// count; captures from vehicles of the scenario with packets of 20 to 65535 bytes; program
/// names of at most 64 characters. Decoded from [`Bytes`](prost::bytes::Bytes), each captured
/// packet is a view into them (no copy).
pub fn decode_from_agent(
    bytes: impl Buf,
    vehicles: usize,
) -> Result<from_agent::Body, DecodeError> {
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
        from_agent::Body::Settled(_) => {}
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
    let mut out = Vec::new();
    encode_to_agent_in(body, &mut out);
    out
}

/// The bytes of an agent's message.
pub fn encode_from_agent(body: from_agent::Body) -> Vec<u8> {
    let mut out = Vec::new();
    encode_from_agent_in(body, &mut out);
    out
}

/// The bytes of a coordinator's message in place of `out`'s (a buffer kept between messages).
pub fn encode_to_agent_in(body: to_agent::Body, out: &mut Vec<u8>) {
    encode_in(&ToAgent { body: Some(body) }, out);
}

/// The bytes of an agent's message in place of `out`'s.
pub fn encode_from_agent_in(body: from_agent::Body, out: &mut Vec<u8>) {
    encode_in(&FromAgent { body: Some(body) }, out);
}

fn encode_in(message: &impl Message, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(message.encoded_len());
    message
        .encode(out)
        .expect("a vector grows to what it is given");
}

#[cfg(test)]
mod tests;
