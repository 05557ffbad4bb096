//! The secure channel every connection between hosts goes through, as pure code: the run's
//! secret, the Noise handshake that proves both ends hold it, and the records that carry each
//! frame after it, encrypted and authenticated (docs/src/explanation/threat-model.md). No I/O;
//! nothing here panics on any input.
//!
//! - **Handshake.** `Noise_NNpsk0_25519_AESGCM_BLAKE2s` or `…_ChaChaPoly_…` ([`Suite`]: the
//!   initiator's choice, by its own hardware) through the `snow` crate, the run's secret as the
//!   pre-shared key, the channel's name ([`Channel`]) in the prologue: the initiator sends its
//!   suite's magic bytes and its ephemeral key, the responder its own; both messages are
//!   authenticated under the secret, so a peer without it fails at the first message it
//!   receives, and the keys that follow come from a fresh Diffie-Hellman (forward secrecy, no
//!   replay of an earlier connection). The initiator is known to hold the secret once its first
//!   record opens: a responder admits nothing before that.
//! - **Records.** Each Noise message after the handshake travels as a 2-byte big-endian length
//!   and that many bytes ([`MAX_RECORD_BYTES`] at most, its 16-byte tag included). A frame of
//!   the protocol above is one or more records: the first record's plaintext starts with the
//!   frame's length (4 bytes, big-endian, checked against the session's bound before anything
//!   is reserved), the frame's bytes follow in order. Noise numbers the records implicitly, so a
//!   record altered, replayed, reordered or dropped fails to open, and the connection is over.

use snow::params::NoiseParams;
use std::fmt;

/// The first bytes an initiator sends, in the clear, before the byte naming its [`Suite`]: a
/// peer speaking anything else is refused by name.
pub const MAGIC_PREFIX: [u8; 3] = *b"NCS";
/// The magic bytes: [`MAGIC_PREFIX`] and the suite's byte.
pub const MAGIC_BYTES: usize = 4;
/// The run's secret.
pub const SECRET_BYTES: usize = 32;
/// The longest record, its tag included (Noise's limit).
pub const MAX_RECORD_BYTES: usize = 65535;
/// The authentication tag of every record.
pub const TAG_BYTES: usize = 16;
/// A handshake message: an ephemeral key and an empty payload's tag.
pub const HANDSHAKE_BYTES: usize = 32 + TAG_BYTES;
/// A record's length field (big-endian, before the record).
pub const RECORD_LENGTH_BYTES: usize = 2;
/// A frame's length field (big-endian, at the start of its first record's plaintext).
pub const FRAME_LENGTH_BYTES: usize = 4;
/// The plaintext one record carries.
const RECORD_PLAINTEXT: usize = MAX_RECORD_BYTES - TAG_BYTES;

/// The run's secret, shared by the hosts of one run. Its `Debug` shows no byte.
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
        use rand::RngCore;
        let mut bytes = [0u8; SECRET_BYTES];
        rand::rng().fill_bytes(&mut bytes);
        Secret(bytes)
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

/// The Noise protocol of a connection. Both are the same handshake and record layer; they
/// differ in the cipher. The initiator picks ([`Suite::preferred`]) and says which in its
/// magic bytes' last byte; the responder follows. The protocol's name enters the handshake's
/// hash, so a suite byte altered on the way fails the handshake's authentication.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Suite {
    /// ChaCha20-Poly1305: constant time in software, the choice without AES instructions.
    ChaChaPoly,
    /// AES-256-GCM: with AES and carry-less multiply instructions, several times as fast as
    /// ChaCha20-Poly1305, which matters for the capture agents' traffic, sealed and opened
    /// twice on its way through the network coordinator.
    AesGcm,
}

impl Suite {
    /// Every suite, in the order of their bytes.
    pub const ALL: [Suite; 2] = [Suite::ChaChaPoly, Suite::AesGcm];

    /// The Noise protocol's name.
    pub fn pattern(self) -> &'static str {
        match self {
            Suite::ChaChaPoly => "Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s",
            Suite::AesGcm => "Noise_NNpsk0_25519_AESGCM_BLAKE2s",
        }
    }

    /// The magic bytes an initiator of this suite sends first.
    pub fn magic(self) -> [u8; MAGIC_BYTES] {
        let [a, b, c] = MAGIC_PREFIX;
        match self {
            Suite::ChaChaPoly => [a, b, c, 1],
            Suite::AesGcm => [a, b, c, 2],
        }
    }

    /// The suite these magic bytes name.
    pub fn of_magic(magic: [u8; MAGIC_BYTES]) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.magic() == magic)
    }

    /// AES-256-GCM where this machine has AES and carry-less multiply instructions (x86-64:
    /// AES-NI and PCLMULQDQ; Armv8: AES and PMULL), ChaCha20-Poly1305 elsewhere.
    pub fn preferred() -> Suite {
        #[cfg(target_arch = "x86_64")]
        let hardware = std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq");
        #[cfg(target_arch = "aarch64")]
        let hardware = std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull");
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let hardware = false;
        if hardware {
            Suite::AesGcm
        } else {
            Suite::ChaChaPoly
        }
    }

    fn params(self) -> NoiseParams {
        // Constants the crate parses: checked by a test.
        let pattern = self.pattern();
        pattern
            .parse()
            .unwrap_or_else(|_| unreachable!("{pattern} parses"))
    }
}

/// What a connection carries, bound into its handshake: a secret's handshake for one channel
/// fails on another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Channel {
    /// The network coordinator and its capture agents.
    Agents,
    /// The window protocol between a coordinator and a simulator process or the other
    /// coordinator.
    Windows,
}

impl Channel {
    fn prologue(self) -> &'static [u8] {
        match self {
            Channel::Agents => b"netsim_cosim secure channel 1: agents",
            Channel::Windows => b"netsim_cosim secure channel 1: windows",
        }
    }
}

/// Why a handshake failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("the peer does not speak this secure channel (its first bytes are {0:02x?}, expected {MAGIC_PREFIX:02x?} and a suite's byte, 01 or 02): a plaintext peer, or an older version")]
    NotSecure([u8; MAGIC_BYTES]),
    #[error("a handshake message of {0} bytes, expected {HANDSHAKE_BYTES}")]
    Length(usize),
    #[error("the peer's handshake fails its authentication: it holds another secret (or is not a peer of this channel)")]
    Refused,
    #[error("the Noise handshake failed: {0}")]
    Noise(String),
}

fn builder<'a>(
    secret: &'a Secret,
    channel: Channel,
    suite: Suite,
) -> Result<snow::Builder<'a>, HandshakeError> {
    let noise = |e: snow::Error| HandshakeError::Noise(e.to_string());
    snow::Builder::new(suite.params())
        .psk(0, &secret.0)
        .map_err(noise)?
        .prologue(channel.prologue())
        .map_err(noise)
}

/// The initiator's side between its first message and the responder's answer.
pub struct Initiating {
    state: snow::HandshakeState,
}

impl fmt::Debug for Initiating {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Initiating(..)")
    }
}

/// The initiator's opening in `suite`: its magic bytes and its first handshake message, to
/// send as they are.
pub fn initiate(
    secret: &Secret,
    channel: Channel,
    suite: Suite,
) -> Result<(Initiating, Vec<u8>), HandshakeError> {
    let noise = |e: snow::Error| HandshakeError::Noise(e.to_string());
    let mut state = builder(secret, channel, suite)?
        .build_initiator()
        .map_err(noise)?;
    let mut out = vec![0u8; MAGIC_BYTES + HANDSHAKE_BYTES];
    out[..MAGIC_BYTES].copy_from_slice(&suite.magic());
    let n = state
        .write_message(&[], &mut out[MAGIC_BYTES..])
        .map_err(noise)?;
    out.truncate(MAGIC_BYTES + n);
    Ok((Initiating { state }, out))
}

impl Initiating {
    /// The responder's answer (exactly [`HANDSHAKE_BYTES`]): the session, or why not.
    pub fn finish(mut self, answer: &[u8], max_frame: usize) -> Result<Session, HandshakeError> {
        if answer.len() != HANDSHAKE_BYTES {
            return Err(HandshakeError::Length(answer.len()));
        }
        let mut payload = [0u8; HANDSHAKE_BYTES];
        self.state
            .read_message(answer, &mut payload)
            .map_err(|_| HandshakeError::Refused)?;
        Session::new(self.state, max_frame)
    }
}

/// The responder's side: checks the initiator's magic bytes (`magic`, its first
/// [`MAGIC_BYTES`], naming the suite it follows) and first message (the next
/// [`HANDSHAKE_BYTES`]) and returns the session with the answer to send. The initiator is not
/// known to hold the secret until its first record opens.
pub fn respond(
    secret: &Secret,
    channel: Channel,
    magic: [u8; MAGIC_BYTES],
    message: &[u8],
    max_frame: usize,
) -> Result<(Session, Vec<u8>), HandshakeError> {
    let suite = Suite::of_magic(magic).ok_or(HandshakeError::NotSecure(magic))?;
    if message.len() != HANDSHAKE_BYTES {
        return Err(HandshakeError::Length(message.len()));
    }
    let noise = |e: snow::Error| HandshakeError::Noise(e.to_string());
    let mut state = builder(secret, channel, suite)?
        .build_responder()
        .map_err(noise)?;
    let mut payload = [0u8; HANDSHAKE_BYTES];
    state
        .read_message(message, &mut payload)
        .map_err(|_| HandshakeError::Refused)?;
    let mut answer = vec![0u8; HANDSHAKE_BYTES];
    let n = state.write_message(&[], &mut answer).map_err(noise)?;
    answer.truncate(n);
    Ok((Session::new(state, max_frame)?, answer))
}

/// Why a record was refused. After any of these the connection is to be closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("a record that fails its authentication (altered, replayed, reordered, or not from this session's peer)")]
    Authentication,
    #[error("a record of {0} bytes, longer than {MAX_RECORD_BYTES}")]
    Record(usize),
    #[error("a frame's first record of {0} bytes, shorter than the frame's length")]
    Short(usize),
    #[error("a frame stating {stated} bytes, more than the {max} allowed")]
    Frame { stated: u64, max: usize },
    #[error("a record carrying {extra} bytes past its frame's stated length")]
    Overrun { extra: usize },
    #[error("a frame of {0} bytes, more than this end may send")]
    TooLong(usize),
}

/// A frame being put together from its records.
#[derive(Debug, Default)]
pub struct Reassembly {
    /// The frame's bytes so far and its stated length (None: between frames).
    frame: Vec<u8>,
    stated: Option<usize>,
    max_frame: usize,
}

impl Reassembly {
    /// Frames of at most `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        Reassembly {
            frame: Vec::new(),
            stated: None,
            max_frame,
        }
    }

    /// One record's plaintext: the whole frame once its last record is in.
    pub fn push(&mut self, plain: &[u8]) -> Result<Option<Vec<u8>>, OpenError> {
        let mut bytes = plain;
        let stated = match self.stated {
            Some(n) => n,
            None => {
                let Some((len, rest)) = bytes.split_first_chunk::<FRAME_LENGTH_BYTES>() else {
                    return Err(OpenError::Short(plain.len()));
                };
                let stated = u32::from_be_bytes(*len);
                let n = usize::try_from(stated)
                    .ok()
                    .filter(|&n| n <= self.max_frame)
                    .ok_or(OpenError::Frame {
                        stated: u64::from(stated),
                        max: self.max_frame,
                    })?;
                bytes = rest;
                // Reserved up to what one record can carry; the rest once the next comes.
                self.frame = Vec::with_capacity(n.min(RECORD_PLAINTEXT));
                self.stated = Some(n);
                n
            }
        };
        let room = stated - self.frame.len();
        if bytes.len() > room {
            return Err(OpenError::Overrun {
                extra: bytes.len() - room,
            });
        }
        self.frame.extend_from_slice(bytes);
        Ok(self.complete())
    }

    /// The frame, once all its stated bytes are in (and the next record starts another).
    fn complete(&mut self) -> Option<Vec<u8>> {
        if self.stated.is_some_and(|stated| self.frame.len() < stated) {
            return None;
        }
        self.stated = None;
        Some(std::mem::take(&mut self.frame))
    }

    /// Inside a frame: room for `n` more of its bytes at its end, where it is (`None` between
    /// frames, where a record starts with the frame's length).
    fn tail(&mut self, n: usize) -> Result<Option<(usize, &mut [u8])>, OpenError> {
        let Some(stated) = self.stated else {
            return Ok(None);
        };
        let at = self.frame.len();
        let room = stated - at;
        if n > room {
            return Err(OpenError::Overrun { extra: n - room });
        }
        // The frame's first record has opened: its peer is known, the whole frame reserved.
        self.frame.reserve_exact(stated - at);
        self.frame.resize(at + n, 0);
        Ok(Some((at, &mut self.frame[at..])))
    }

    /// The room [`Self::tail`] gave at `at` holds `written` bytes (or nothing, on an error):
    /// the whole frame once its last bytes are in.
    fn filled(
        &mut self,
        at: usize,
        written: Result<usize, OpenError>,
    ) -> Result<Option<Vec<u8>>, OpenError> {
        let n = written.inspect_err(|_| self.frame.truncate(at))?;
        self.frame.truncate(at + n);
        Ok(self.complete())
    }
}

/// One end of a channel after its handshake: seals this end's frames into records and opens
/// the peer's. Its `Debug` shows no key.
pub struct Session {
    transport: snow::TransportState,
    reassembly: Reassembly,
    max_frame: usize,
    /// A record's plaintext: the one just opened, or the first of a frame being sealed.
    buf: Vec<u8>,
    /// The records of the frame sealed last ([`Session::seal`] hands them out from here, so a
    /// frame's records are written once, in place); kept at its size, up to [`SEALED_KEPT`].
    sealed: Vec<u8>,
}

/// Bytes of sealed records a [`Session`] keeps between frames (more, after a longer frame,
/// are given back at the next).
const SEALED_KEPT: usize = 4 << 20;

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Session(..)")
    }
}

impl Session {
    fn new(state: snow::HandshakeState, max_frame: usize) -> Result<Session, HandshakeError> {
        let transport = state
            .into_transport_mode()
            .map_err(|e| HandshakeError::Noise(e.to_string()))?;
        Ok(Session {
            transport,
            reassembly: Reassembly::new(max_frame),
            max_frame,
            buf: vec![0u8; MAX_RECORD_BYTES],
            sealed: Vec::new(),
        })
    }

    /// `frame` as records, each behind its 2-byte length: the bytes to send, valid until the
    /// next call.
    pub fn seal(&mut self, frame: &[u8]) -> Result<&[u8], OpenError> {
        if frame.len() > self.max_frame || u32::try_from(frame.len()).is_err() {
            return Err(OpenError::TooLong(frame.len()));
        }
        let plain = FRAME_LENGTH_BYTES + frame.len();
        let records = plain.div_ceil(RECORD_PLAINTEXT);
        let need = plain + records * (RECORD_LENGTH_BYTES + TAG_BYTES);
        if self.sealed.len() > need.max(SEALED_KEPT) {
            self.sealed.truncate(need.max(SEALED_KEPT));
            self.sealed.shrink_to_fit();
        }
        if self.sealed.len() < need {
            self.sealed.resize(need, 0);
        }
        let first = frame.len().min(RECORD_PLAINTEXT - FRAME_LENGTH_BYTES);
        let head = FRAME_LENGTH_BYTES + first;
        self.buf[..FRAME_LENGTH_BYTES].copy_from_slice(&(frame.len() as u32).to_be_bytes());
        self.buf[FRAME_LENGTH_BYTES..head].copy_from_slice(&frame[..first]);
        let mut at = record(&mut self.transport, &self.buf[..head], &mut self.sealed)?;
        for chunk in frame[first..].chunks(RECORD_PLAINTEXT) {
            at += record(&mut self.transport, chunk, &mut self.sealed[at..])?;
        }
        Ok(&self.sealed[..at])
    }

    /// One record from the peer (its length field taken off): a whole frame once its last
    /// record is in.
    pub fn open(&mut self, record: &[u8]) -> Result<Option<Vec<u8>>, OpenError> {
        if record.len() > MAX_RECORD_BYTES {
            return Err(OpenError::Record(record.len()));
        }
        // A record inside a frame opens straight into the frame.
        let plain = record.len().saturating_sub(TAG_BYTES);
        if let Some((at, tail)) = self.reassembly.tail(plain)? {
            let n = self.transport.read_message(record, tail);
            return self
                .reassembly
                .filled(at, n.map_err(|_| OpenError::Authentication));
        }
        let n = self
            .transport
            .read_message(record, &mut self.buf)
            .map_err(|_| OpenError::Authentication)?;
        let (reassembly, buf) = (&mut self.reassembly, &self.buf);
        reassembly.push(&buf[..n])
    }
}

/// `plain` sealed as one record at the start of `out`, behind its length: how many bytes it took.
fn record(
    transport: &mut snow::TransportState,
    plain: &[u8],
    out: &mut [u8],
) -> Result<usize, OpenError> {
    let (len, rest) = out
        .split_first_chunk_mut::<RECORD_LENGTH_BYTES>()
        .ok_or(OpenError::TooLong(plain.len()))?;
    let n = transport
        .write_message(plain, rest)
        .map_err(|_| OpenError::TooLong(plain.len()))?;
    *len = (n as u16).to_be_bytes();
    Ok(RECORD_LENGTH_BYTES + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 1 << 20;

    fn pair(channel: Channel) -> (Session, Session) {
        pair_in(channel, Suite::preferred())
    }

    fn pair_in(channel: Channel, suite: Suite) -> (Session, Session) {
        let secret = Secret::from_bytes([5; 32]);
        let (initiating, hello) = initiate(&secret, channel, suite).unwrap();
        let magic = hello[..4].try_into().unwrap();
        let (responder, answer) = respond(&secret, channel, magic, &hello[4..], MAX).unwrap();
        let initiator = initiating.finish(&answer, MAX).unwrap();
        (initiator, responder)
    }

    /// The records of `out` (each with its 2-byte length).
    fn records(mut out: &[u8]) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        while let Some((len, rest)) = out.split_first_chunk::<2>() {
            let n = usize::from(u16::from_be_bytes(*len));
            v.push(rest[..n].to_vec());
            out = &rest[n..];
        }
        v
    }

    fn open_all(s: &mut Session, out: &[u8]) -> Result<Vec<Vec<u8>>, OpenError> {
        let mut frames = Vec::new();
        for r in records(out) {
            if let Some(f) = s.open(&r)? {
                frames.push(f);
            }
        }
        Ok(frames)
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
        let (a, b) = pair(Channel::Agents);
        assert_eq!(format!("{a:?}{b:?}"), "Session(..)Session(..)");
    }

    #[test]
    fn each_suite_parses_and_both_ends_carry_frames_of_any_size_both_ways() {
        for suite in Suite::ALL {
            assert!(suite.pattern().parse::<NoiseParams>().is_ok());
            assert_eq!(Suite::of_magic(suite.magic()), Some(suite));
            carry_frames(pair_in(Channel::Agents, suite));
        }
    }

    fn carry_frames((mut a, mut b): (Session, Session)) {
        for size in [0, 1, 65_000, 65_515, 65_516, 200_000, MAX] {
            let frame: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let mut out = Vec::new();
            out.extend_from_slice(a.seal(&frame).unwrap());
            // No byte of the frame in the clear.
            if size >= 64 {
                assert!(!out.windows(32).any(|w| w == &frame[..32]));
            }
            assert_eq!(open_all(&mut b, &out).unwrap(), vec![frame.clone()]);
            let mut back = Vec::new();
            back.extend_from_slice(b.seal(&frame).unwrap());
            assert_eq!(open_all(&mut a, &back).unwrap(), vec![frame]);
        }
        assert_eq!(a.seal(&vec![0; MAX + 1]), Err(OpenError::TooLong(MAX + 1)));
    }

    #[test]
    fn another_secret_or_channel_or_a_plaintext_peer_is_refused_at_the_first_message() {
        let secret = Secret::from_bytes([5; 32]);
        let other = Secret::from_bytes([6; 32]);
        let (_, hello) = initiate(&secret, Channel::Agents, Suite::AesGcm).unwrap();
        let magic: [u8; 4] = hello[..4].try_into().unwrap();
        let refused = |s: &Secret, c| respond(s, c, magic, &hello[4..], MAX).err();
        assert_eq!(
            refused(&other, Channel::Agents),
            Some(HandshakeError::Refused)
        );
        assert_eq!(
            refused(&secret, Channel::Windows),
            Some(HandshakeError::Refused)
        );
        // A responder with another secret answers nothing; one that answered wrongly is
        // refused by the initiator.
        let (initiating, hello) = initiate(&secret, Channel::Agents, Suite::AesGcm).unwrap();
        let (_, answer_to_other) = {
            let (_, h2) = initiate(&other, Channel::Agents, Suite::AesGcm).unwrap();
            respond(&other, Channel::Agents, magic, &h2[4..], MAX).unwrap()
        };
        assert_eq!(
            initiating.finish(&answer_to_other, MAX).err(),
            Some(HandshakeError::Refused)
        );
        // A peer of the old plaintext protocol: a 4-byte length, then a protobuf.
        let e = respond(&secret, Channel::Agents, [0, 0, 0, 42], &hello[4..], MAX).err();
        assert_eq!(e, Some(HandshakeError::NotSecure([0, 0, 0, 42])));
        assert!(e.unwrap().to_string().contains("plaintext peer"));
        assert_eq!(
            respond(&secret, Channel::Agents, magic, &hello[4..20], MAX).err(),
            Some(HandshakeError::Length(16))
        );
        // The suite's byte altered on the way: the responder follows another protocol, whose
        // name enters the handshake's hash, and the initiator's message fails to open.
        assert_eq!(
            respond(
                &secret,
                Channel::Agents,
                Suite::ChaChaPoly.magic(),
                &hello[4..],
                MAX
            )
            .err(),
            Some(HandshakeError::Refused)
        );
    }

    #[test]
    fn a_record_altered_inside_a_frame_fails_to_open() {
        let (mut a, mut b) = pair(Channel::Agents);
        let frame: Vec<u8> = (0..150_000).map(|i| (i % 241) as u8).collect();
        let mut r = records(a.seal(&frame).unwrap());
        assert_eq!(r.len(), 3);
        r[1][100] ^= 1;
        assert_eq!(b.open(&r[0]), Ok(None));
        assert_eq!(b.open(&r[1]), Err(OpenError::Authentication));
    }

    #[test]
    fn the_records_of_a_long_frame_are_given_back_at_the_next() {
        let secret = Secret::from_bytes([5; 32]);
        let max = 3 * SEALED_KEPT;
        let (initiating, hello) = initiate(&secret, Channel::Agents, Suite::preferred()).unwrap();
        let magic = hello[..4].try_into().unwrap();
        let (mut b, answer) = respond(&secret, Channel::Agents, magic, &hello[4..], max).unwrap();
        let mut a = initiating.finish(&answer, max).unwrap();
        for size in [2 * SEALED_KEPT, 100, SEALED_KEPT, 0] {
            let frame: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
            let out = a.seal(&frame).unwrap().to_vec();
            assert!(a.sealed.len() <= SEALED_KEPT.max(out.len()), "{size}");
            assert_eq!(open_all(&mut b, &out).unwrap(), vec![frame]);
        }
    }

    #[test]
    fn a_record_altered_replayed_reordered_or_dropped_fails_to_open() {
        let (mut a, mut b) = pair(Channel::Windows);
        let mut sealed = Vec::new();
        for i in 0..3u8 {
            let mut out = Vec::new();
            out.extend_from_slice(a.seal(&[i; 100]).unwrap());
            sealed.push(records(&out).remove(0));
        }
        // Altered: one bit of the ciphertext, or of the tag; or sealed in another session.
        let mut flipped = sealed[0].clone();
        flipped[20] ^= 0x80;
        assert_eq!(b.open(&flipped), Err(OpenError::Authentication));
        let mut tag = sealed[0].clone();
        *tag.last_mut().unwrap() ^= 1;
        assert_eq!(b.open(&tag), Err(OpenError::Authentication));
        let (mut c, _) = pair(Channel::Windows);
        let mut other = Vec::new();
        other.extend_from_slice(c.seal(&[0; 100]).unwrap());
        assert_eq!(b.open(&records(&other)[0]), Err(OpenError::Authentication));
        // The genuine first record still opens (a refused record changed nothing) ...
        assert_eq!(b.open(&sealed[0]), Ok(Some(vec![0; 100])));
        // ... replayed, it does not; the third before the second does not either.
        assert_eq!(b.open(&sealed[0]), Err(OpenError::Authentication));
        assert_eq!(b.open(&sealed[2]), Err(OpenError::Authentication));
        assert_eq!(b.open(&sealed[1]), Ok(Some(vec![1; 100])));
    }

    #[test]
    fn a_frame_is_bounded_before_anything_is_reserved_and_must_end_where_it_says() {
        let mut r = Reassembly::new(1000);
        assert_eq!(
            r.push(&u32::MAX.to_be_bytes()),
            Err(OpenError::Frame {
                stated: u64::from(u32::MAX),
                max: 1000
            })
        );
        assert_eq!(r.push(&[0, 0]), Err(OpenError::Short(2)));
        let mut r = Reassembly::new(1000);
        assert_eq!(r.push(&[0, 0, 0, 3, 1]), Ok(None));
        assert_eq!(r.push(&[2, 3, 4]), Err(OpenError::Overrun { extra: 1 }));
        let mut r = Reassembly::new(1000);
        assert_eq!(r.push(&[0, 0, 0, 3, 1]), Ok(None));
        assert_eq!(r.push(&[2, 3]), Ok(Some(vec![1, 2, 3])));
        assert_eq!(r.push(&[0, 0, 0, 0]), Ok(Some(vec![])));
    }
}
