//! PLACEHOLDER until the protocol module lands.
use crate::wire::proto::agent::*;
use hmac::{Hmac, Mac};
use prost::Message;
use sha2::Sha256;

pub const VERSION: u32 = 1;
pub const MAX_FRAME_BYTES: usize = 64 << 20;
pub const SECRET_BYTES: usize = 32;
pub const NONCE_BYTES: usize = 32;
pub const MAC_BYTES: usize = 32;

pub struct Secret([u8; 32]);
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SecretError(String);
impl Secret {
    pub fn generate() -> Secret {
        Secret(rand::random())
    }
    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        let t = text.trim();
        if t.len() != 64 {
            return Err(SecretError("not 64 hex digits".into()));
        }
        let mut b = [0u8; 32];
        for i in 0..32 {
            b[i] = u8::from_str_radix(&t[2 * i..2 * i + 2], 16)
                .map_err(|e| SecretError(e.to_string()))?;
        }
        Ok(Secret(b))
    }
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}
pub fn nonce() -> [u8; 32] {
    rand::random()
}
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    Coordinator,
    Agent,
}
fn mac(key: &[u8], parts: &[&[u8]]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap();
    for p in parts {
        m.update(p);
    }
    m
}
pub fn proof(secret: &Secret, role: Role, agent: &str, an: &[u8], cn: &[u8]) -> [u8; 32] {
    let r: &[u8] = if role == Role::Agent {
        b"agent"
    } else {
        b"coord"
    };
    mac(&secret.0, &[r, agent.as_bytes(), an, cn])
        .finalize()
        .into_bytes()
        .into()
}
pub fn verify_proof(
    secret: &Secret,
    role: Role,
    agent: &str,
    an: &[u8],
    cn: &[u8],
    got: &[u8],
) -> bool {
    let r: &[u8] = if role == Role::Agent {
        b"agent"
    } else {
        b"coord"
    };
    mac(&secret.0, &[r, agent.as_bytes(), an, cn])
        .verify_slice(got)
        .is_ok()
}
pub struct Session {
    key: [u8; 32],
    me: Role,
    send: u64,
    recv: u64,
}
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("short")]
    Short(usize),
    #[error("bad mac")]
    BadMac,
    #[error("sequence")]
    Sequence { expected: u64, got: u64 },
}
impl Session {
    pub fn new(secret: &Secret, me: Role, agent: &str, an: &[u8], cn: &[u8]) -> Session {
        Session {
            key: mac(&secret.0, &[b"session", agent.as_bytes(), an, cn])
                .finalize()
                .into_bytes()
                .into(),
            me,
            send: 0,
            recv: 0,
        }
    }
    pub fn seal(&mut self, body: &[u8]) -> Vec<u8> {
        let r = [self.me as u8];
        let seq = self.send.to_be_bytes();
        self.send += 1;
        let m: [u8; 32] = mac(&self.key, &[&r, &seq, body])
            .finalize()
            .into_bytes()
            .into();
        [&m[..], &seq, body].concat()
    }
    pub fn open<'a>(&mut self, frame: &'a [u8]) -> Result<&'a [u8], SealError> {
        if frame.len() < 40 {
            return Err(SealError::Short(frame.len()));
        }
        let other = if self.me == Role::Agent {
            Role::Coordinator
        } else {
            Role::Agent
        };
        let r = [other as u8];
        let seq = &frame[32..40];
        let body = &frame[40..];
        mac(&self.key, &[&r, seq, body])
            .verify_slice(&frame[..32])
            .map_err(|_| SealError::BadMac)?;
        let got = u64::from_be_bytes(seq.try_into().unwrap());
        if got != self.recv {
            return Err(SealError::Sequence {
                expected: self.recv,
                got,
            });
        }
        self.recv += 1;
        Ok(body)
    }
}
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(String);
pub fn decode_hello(b: &[u8]) -> Result<Hello, DecodeError> {
    Hello::decode(b).map_err(|e| DecodeError(e.to_string()))
}
pub fn decode_challenge(b: &[u8]) -> Result<Challenge, DecodeError> {
    Challenge::decode(b).map_err(|e| DecodeError(e.to_string()))
}
pub fn decode_proof(b: &[u8]) -> Result<Proof, DecodeError> {
    Proof::decode(b).map_err(|e| DecodeError(e.to_string()))
}
pub fn decode_to_agent(b: &[u8], _vehicles: usize) -> Result<to_agent::Body, DecodeError> {
    ToAgent::decode(b)
        .map_err(|e| DecodeError(e.to_string()))?
        .body
        .ok_or(DecodeError("no body".into()))
}
pub fn decode_from_agent(b: &[u8], _vehicles: usize) -> Result<from_agent::Body, DecodeError> {
    FromAgent::decode(b)
        .map_err(|e| DecodeError(e.to_string()))?
        .body
        .ok_or(DecodeError("no body".into()))
}
