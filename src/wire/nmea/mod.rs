//! NMEA 0183 sentences as the WHOI Micro-Modem speaks them: `$` + talker (2 letters) +
//! sentence type (3 letters) + `,`-separated fields + `*` + two hex digits + CRLF.
//!
//! Input (from a host driver) is accepted leniently, as a real modem does: the checksum is
//! optional and either hex case is fine; a line may end in `\r\n` or `\n`. Output always
//! carries the checksum in **upper case** (WHOI's Python driver drops lower-case ones).
//! Parsing is zero-copy and never panics; a sentence is at most [`MAX_SENTENCE`] bytes.
//!
//! On top of the framing, the catalogue of what the emulated modem speaks, one typed value per
//! sentence with `parse` and `emit`: [`Command`] (host → modem, [`command`]), [`Report`]
//! (modem → host, [`report`]) and the configuration parameters ([`param`]). Each sentence is
//! one entry of its direction's table (the language in `table.rs`), which gives its id, its
//! fields and their formats (`field.rs`) in wire order.

pub mod command;
mod field;
pub mod param;
pub mod report;
mod table;

use std::fmt;

pub use command::{Command, CommandError, CommandId, Query};
pub use field::CycleInit;
pub use param::{Param, PARAMS};
pub use report::{ErrCode, Report, ReportError};

/// Longest sentence accepted: a rate-5 frame is 256 bytes = 512 hex digits plus the fields.
pub const MAX_SENTENCE: usize = 1024;

/// One parsed sentence; `fields` borrow from the input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence<'a> {
    /// `CC` (host → modem) or `CA` (modem → host), or another talker.
    pub talker: &'a str,
    /// `CYC`, `TXD`, `CFG`, ...
    pub kind: &'a str,
    pub fields: Vec<&'a str>,
    /// Whether the input carried a checksum (it was verified if so).
    pub had_checksum: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NmeaError {
    #[error("empty line")]
    Empty,
    #[error("line of {0} bytes exceeds the {MAX_SENTENCE}-byte limit")]
    TooLong(usize),
    #[error("does not start with '$' (byte 0 is {0:#04x})")]
    NoDollar(u8),
    #[error("byte {index} is {byte:#04x}: only printable ASCII is allowed")]
    NotPrintable { index: usize, byte: u8 },
    #[error("sentence id {0:?} is not 5 letters (talker + type)")]
    BadId(String),
    #[error("checksum {0:?} is not two hex digits")]
    BadChecksumText(String),
    #[error("checksum mismatch: sentence says {given:02X}, computed {computed:02X}")]
    ChecksumMismatch { given: u8, computed: u8 },
}

/// XOR of every byte between `$` and `*`.
pub fn checksum(body: &[u8]) -> u8 {
    body.iter().fold(0, |a, b| a ^ b)
}

impl<'a> Sentence<'a> {
    /// Parses one line (with or without its line ending).
    pub fn parse(line: &'a [u8]) -> Result<Sentence<'a>, NmeaError> {
        let line = trim_line_end(line);
        if line.is_empty() {
            return Err(NmeaError::Empty);
        }
        if line.len() > MAX_SENTENCE {
            return Err(NmeaError::TooLong(line.len()));
        }
        if line[0] != b'$' {
            return Err(NmeaError::NoDollar(line[0]));
        }
        if let Some(index) = line.iter().position(|b| !(0x20..0x7f).contains(b)) {
            return Err(NmeaError::NotPrintable {
                index,
                byte: line[index],
            });
        }
        // Printable ASCII is valid UTF-8.
        let text = std::str::from_utf8(&line[1..]).map_err(|_| NmeaError::NotPrintable {
            index: 1,
            byte: line[1],
        })?;
        let (body, had_checksum) = match text.rfind('*') {
            Some(star) => {
                let given = &text[star + 1..];
                let parsed = (given.len() == 2)
                    .then(|| u8::from_str_radix(given, 16).ok())
                    .flatten();
                let given = parsed.ok_or_else(|| NmeaError::BadChecksumText(given.to_string()))?;
                let body = &text[..star];
                let computed = checksum(body.as_bytes());
                if given != computed {
                    return Err(NmeaError::ChecksumMismatch { given, computed });
                }
                (body, true)
            }
            None => (text, false),
        };
        let mut parts = body.split(',');
        let id = parts.next().unwrap_or_default();
        if id.len() != 5 || !id.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(NmeaError::BadId(id.to_string()));
        }
        Ok(Sentence {
            talker: &id[..2],
            kind: &id[2..],
            fields: parts.collect(),
            had_checksum,
        })
    }

    /// `CCCYC` etc., upper-cased letters compared case-sensitively by callers.
    pub fn id(&self) -> String {
        format!("{}{}", self.talker, self.kind)
    }

    pub fn field(&self, i: usize) -> Option<&'a str> {
        self.fields.get(i).copied()
    }
}

fn trim_line_end(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b'\r' | b'\n'] = line {
        line = rest;
    }
    line
}

/// An outgoing sentence: `$<id>,<fields>*HH\r\n` with an upper-case checksum.
pub struct Out<'a> {
    pub id: &'a str,
    pub fields: &'a [&'a str],
}

impl fmt::Display for Out<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut body =
            String::with_capacity(16 + self.fields.iter().map(|x| x.len() + 1).sum::<usize>());
        body.push_str(self.id);
        for field in self.fields {
            body.push(',');
            body.push_str(field);
        }
        write!(f, "${body}*{:02X}\r\n", checksum(body.as_bytes()))
    }
}

/// Formats a sentence with its checksum and CRLF.
pub fn emit(id: &str, fields: &[&str]) -> String {
    Out { id, fields }.to_string()
}

/// Frames per packet and bytes per frame at Micro-Modem rate `rate` (0–6).
pub fn rate_frames(rate: u8) -> Option<(u8, usize)> {
    [
        (1, 32),
        (3, 64),
        (3, 64),
        (2, 256),
        (2, 256),
        (8, 256),
        (6, 32),
    ]
    .get(rate as usize)
    .copied()
}

/// Hex → bytes, either case; None for an odd length or a non-hex digit.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

/// Bytes → lower-case hex (as Goby writes payloads).
pub fn encode_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_with_and_without_checksum_in_either_case() {
        let s = Sentence::parse(b"$CCCFG,SRC,1*31\r\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.talker, s.kind, s.fields.clone(), s.had_checksum),
            ("CC", "CFG", vec!["SRC", "1"], true)
        );
        let body = b"CCCYC,0,1,2,0,1,1";
        let lower = format!(
            "${}*{:02x}\n",
            std::str::from_utf8(body).unwrap(),
            checksum(body)
        );
        assert!(Sentence::parse(lower.as_bytes()).is_ok());
        let none = Sentence::parse(b"$CCCYC,0,1,2,0,1,1").unwrap();
        assert!(!none.had_checksum);
        assert_eq!(none.fields.len(), 6);
    }

    #[test]
    fn emits_upper_case_checksums_that_parse_back() {
        let line = emit("CACFG", &["SRC", "1"]);
        assert_eq!(line, "$CACFG,SRC,1*33\r\n");
        let s = Sentence::parse(line.as_bytes()).unwrap();
        assert_eq!(s.fields, vec!["SRC", "1"]);
        // Empty fields survive.
        let line = emit("CATXD", &["1", "2", "0", ""]);
        assert_eq!(
            Sentence::parse(line.as_bytes()).unwrap().fields,
            vec!["1", "2", "0", ""]
        );
    }

    #[test]
    fn rejects_what_a_modem_answers_with_caerr() {
        assert_eq!(
            Sentence::parse(b"CCCFG,SRC,1"),
            Err(NmeaError::NoDollar(b'C'))
        );
        assert_eq!(
            Sentence::parse(b"$CCCFG,SRC,1*00"),
            Err(NmeaError::ChecksumMismatch {
                given: 0,
                computed: 0x31
            })
        );
        assert_eq!(
            Sentence::parse(b"$CCCFG,SRC,1*5"),
            Err(NmeaError::BadChecksumText("5".into()))
        );
        assert_eq!(
            Sentence::parse(b"$CC1FG,SRC"),
            Err(NmeaError::BadId("CC1FG".into()))
        );
        assert_eq!(
            Sentence::parse(b"$CCC\xffG"),
            Err(NmeaError::NotPrintable {
                index: 4,
                byte: 0xff
            })
        );
        assert_eq!(Sentence::parse(b"\r\n"), Err(NmeaError::Empty));
        let long = vec![b'A'; MAX_SENTENCE + 1];
        assert_eq!(
            Sentence::parse(&long),
            Err(NmeaError::TooLong(MAX_SENTENCE + 1))
        );
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let seeds: [&[u8]; 3] = [
            b"$CCCYC,0,1,2,0,1,1*5D\r\n",
            b"$CCTXD,1,2,0,deadbeef\n",
            b"$CATMS,0,2026-11-21T05:00:00Z*00",
        ];
        for i in 0..50_000 {
            let mut line = seeds[i % 3].to_vec();
            crate::wire::mutate(&mut rng, &mut line, b"$*,\r\n");
            if let Ok(s) = Sentence::parse(&line) {
                // Whatever parses re-emits to a sentence that parses to the same fields.
                let fields: Vec<&str> = s.fields.clone();
                let again = emit(&s.id(), &fields);
                assert_eq!(Sentence::parse(again.as_bytes()).unwrap().fields, fields);
            }
        }
    }
}
