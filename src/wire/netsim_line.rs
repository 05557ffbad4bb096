//! The NETSIM manager's line protocol: `NETSIM|<full protobuf name>|<base64>\n`.
//!
//! [`LineReader`] frames a byte stream into lines with a hard length bound: a line longer than
//! [`MAX_LINE`] is reported once as [`LineError::TooLong`] and its bytes are skipped up to the
//! next newline, so one bad client costs bounded memory and never desynchronises the stream.
//! [`parse`] checks the preamble, the message name and the base64; [`emit`] writes a line.

use base64::{engine::general_purpose::STANDARD, Engine};

/// Longest line accepted (a request with nav and stats for dozens of vehicles fits easily).
pub const MAX_LINE: usize = 64 * 1024;
pub const PREAMBLE: &str = "NETSIM";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("line longer than {MAX_LINE} bytes (skipped up to the next newline)")]
    TooLong,
    #[error("line is not UTF-8 text (byte {0})")]
    NotText(usize),
    #[error("expected 3 '|'-separated parts (NETSIM|name|base64), found {0}")]
    Parts(usize),
    #[error("preamble is {0:?}, expected \"NETSIM\"")]
    Preamble(String),
    #[error("message name is empty")]
    NoName,
    #[error("base64: {0}")]
    Base64(String),
}

/// A parsed line: the message's full name and its serialized bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub name: String,
    pub payload: Vec<u8>,
}

/// Parses one line without its newline (a trailing `\r` is tolerated, as by the reference).
pub fn parse(line: &[u8]) -> Result<Line, LineError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| LineError::NotText(e.valid_up_to()))?;
    let parts: Vec<&str> = text.split('|').collect();
    let [preamble, name, b64] = parts[..] else {
        return Err(LineError::Parts(parts.len()));
    };
    if preamble != PREAMBLE {
        return Err(LineError::Preamble(preamble.chars().take(32).collect()));
    }
    if name.is_empty() {
        return Err(LineError::NoName);
    }
    let payload = STANDARD
        .decode(b64.trim_end())
        .map_err(|e| LineError::Base64(e.to_string()))?;
    Ok(Line {
        name: name.to_string(),
        payload,
    })
}

/// `NETSIM|<name>|<base64>\n`.
pub fn emit(name: &str, payload: &[u8]) -> String {
    format!("{PREAMBLE}|{name}|{}\n", STANDARD.encode(payload))
}

/// Splits a byte stream into bounded lines.
#[derive(Debug, Default)]
pub struct LineReader {
    buf: Vec<u8>,
    /// Inside an over-long line: drop bytes until the next newline.
    skipping: bool,
}

impl LineReader {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; calls `on_line` for every complete line (without `\n`) or framing error.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_line: impl FnMut(Result<&[u8], LineError>)) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (chunk, rest, complete) = match newline {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            bytes = rest;
            if self.skipping {
                if complete {
                    self.skipping = false;
                }
                continue;
            }
            if self.buf.len() + chunk.len() > MAX_LINE {
                self.buf.clear();
                on_line(Err(LineError::TooLong));
                self.skipping = !complete;
                continue;
            }
            if complete {
                if self.buf.is_empty() {
                    on_line(Ok(chunk));
                } else {
                    self.buf.extend_from_slice(chunk);
                    on_line(Ok(&self.buf));
                    self.buf.clear();
                }
            } else {
                self.buf.extend_from_slice(chunk);
            }
        }
    }

    /// Bytes held for an incomplete line (bounded by [`MAX_LINE`]).
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: &str = "NETSIM|netsim.protobuf.NetSimManagerRequest|CEISOgiz5AMRQ4tUIbbq10EZQUDRT0vLUUAhQylH7tbMYcApMzMzMzMz0z8x65lyHNEpUj85AAAAAAAALkA=";

    #[test]
    fn parses_the_reference_line_and_emits_it_back() {
        let line = parse(REQUEST.as_bytes()).unwrap();
        assert_eq!(line.name, "netsim.protobuf.NetSimManagerRequest");
        assert_eq!(line.payload.len(), 62);
        assert_eq!(emit(&line.name, &line.payload), format!("{REQUEST}\n"));
        assert!(parse(format!("{REQUEST}\r").as_bytes()).is_ok());
    }

    #[test]
    fn each_malformation_has_its_error() {
        assert_eq!(parse(b"NETSIM|x"), Err(LineError::Parts(2)));
        assert_eq!(parse(b"NETSIM|a|b|c"), Err(LineError::Parts(4)));
        assert_eq!(
            parse(b"GOBY|x|CEE="),
            Err(LineError::Preamble("GOBY".into()))
        );
        assert_eq!(parse(b"NETSIM||CEE="), Err(LineError::NoName));
        assert!(matches!(
            parse(b"NETSIM|x|not base64!"),
            Err(LineError::Base64(_))
        ));
        assert_eq!(parse(b"NETSIM|\xff|x"), Err(LineError::NotText(7)));
    }

    #[test]
    fn reader_bounds_lines_and_resynchronises() {
        let mut r = LineReader::new();
        let mut got = Vec::new();
        let mut collect = |x: Result<&[u8], LineError>| got.push(x.map(|l| l.to_vec()));
        r.feed(b"one\ntw", &mut collect);
        r.feed(b"o\n", &mut collect);
        // 10 MB without a newline, in chunks, then a good line.
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            r.feed(&chunk, &mut collect);
            assert!(r.pending() <= MAX_LINE);
        }
        r.feed(b"tail\nthree\n", &mut collect);
        assert_eq!(
            got,
            vec![
                Ok(b"one".to_vec()),
                Ok(b"two".to_vec()),
                Err(LineError::TooLong),
                Ok(b"three".to_vec())
            ]
        );
    }

    #[test]
    fn parser_and_reader_never_panic_and_round_trip_what_they_accept() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for i in 0..50_000 {
            let mut line = REQUEST.as_bytes().to_vec();
            crate::wire::mutate(&mut rng, &mut line, b"|\r\n=");
            if let Ok(parsed) = parse(&line) {
                let again = emit(&parsed.name, &parsed.payload);
                assert_eq!(parse(again.trim_end_matches('\n').as_bytes()), Ok(parsed));
            }
            // Framing the same bytes in random chunks yields the same lines as framing them whole.
            let mut stream = line.clone();
            stream.push(b'\n');
            let (mut whole, mut chunked) = (Vec::new(), Vec::new());
            LineReader::new().feed(&stream, |l| whole.push(l.map(|x| x.to_vec())));
            let mut r = LineReader::new();
            let mut rest = &stream[..];
            while !rest.is_empty() {
                let n = rng.random_range(1..=rest.len().min(1 + i % 97));
                r.feed(&rest[..n], |l| chunked.push(l.map(|x| x.to_vec())));
                rest = &rest[n..];
            }
            assert_eq!(whole, chunked);
        }
    }
}
