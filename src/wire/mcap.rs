//! The records of an MCAP file read with every length checked: the `mcap` crate's parser
//! allocates what a string, map or byte array's length field states before it sees whether the
//! bytes are there, so every record goes through [`check_record`] first. [`walk`] reads a
//! stream record by record (a run record's reader hands it the channels and messages; a track
//! log's reader checks a whole bag before the crate reads it).

use std::io::Read;

/// Largest uncompressed chunk a file may state (bytes); a larger one is refused unread.
pub const MAX_CHUNK_BYTES: u64 = 64 << 20;

/// MCAP opcodes whose records [`check_record`] reads.
pub mod op {
    pub const HEADER: u8 = 0x01;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const MESSAGE: u8 = 0x05;
    pub const CHUNK: u8 = 0x06;
    pub const MESSAGE_INDEX: u8 = 0x07;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const ATTACHMENT: u8 = 0x09;
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    pub const STATISTICS: u8 = 0x0B;
    pub const METADATA: u8 = 0x0C;
    pub const METADATA_INDEX: u8 = 0x0D;
    pub const DATA_END: u8 = 0x0F;
}
/// The magic bytes that open (and close) an MCAP file.
pub const MAGIC: &[u8] = b"\x89MCAP0\r\n";

/// Largest MCAP record read (bytes): a chunk of at most [`MAX_CHUNK_BYTES`], compressed or
/// not, with room to spare for its header.
pub const MAX_RECORD_BYTES: u64 = 2 * MAX_CHUNK_BYTES;

/// Where [`walk`] stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// At the data end record: the messages end there (a run record's reader).
    DataEnd,
    /// At the file's end: the summary section checked too, and a file cut inside a record
    /// refused (for a reader that reads on to the end whatever it meets).
    File,
}

/// Why [`walk`] stopped early.
#[derive(Debug)]
pub enum WalkError<E> {
    /// Reading the input failed.
    Io(std::io::Error),
    /// A record is malformed: what and at which byte.
    Malformed(String),
    /// The visitor refused a record.
    Visit(E),
}

/// Walks an MCAP stream's records front to back, one at a time, and hands each to `visit`
/// (opcode, body, file offset of the record or of the chunk holding it) once [`check_record`]
/// has checked every length field the `mcap` crate's parser trusts (a chunk's records too,
/// after decompressing it; a chunk is visited as its records). `end` says whether the data end
/// record ends the walk, and whether a stream cut inside a record ends at its last whole record
/// ([`End::DataEnd`]) or is refused ([`End::File`]). Memory follows the
/// bytes there are, not what a length field states.
pub fn walk<E>(
    input: &mut dyn Read,
    end: End,
    visit: &mut dyn FnMut(u8, &[u8], usize) -> Result<(), E>,
) -> Result<(), WalkError<E>> {
    let malformed = WalkError::Malformed;
    let mut magic = [0u8; MAGIC.len()];
    if read_up_to(input, &mut magic).map_err(WalkError::Io)? < magic.len() || magic != MAGIC {
        return Err(malformed("not an MCAP file (no magic at byte 0)".into()));
    }
    let mut at = MAGIC.len();
    let mut body = Vec::new();
    loop {
        let mut head = [0u8; 9];
        if read_up_to(input, &mut head).map_err(WalkError::Io)? < head.len() {
            return Ok(());
        }
        let opcode = head[0];
        let len = u64::from_le_bytes(head[1..].try_into().expect("8 bytes"));
        body.clear();
        // Read what there is, up to one byte more than the largest record: memory follows the
        // bytes there are, not what the length field states.
        let got = input
            .take(len.min(MAX_RECORD_BYTES + 1))
            .read_to_end(&mut body)
            .map_err(WalkError::Io)?;
        if (got as u64) < len {
            if got as u64 > MAX_RECORD_BYTES {
                return Err(malformed(format!(
                    "the record at byte {at} states {len} bytes (at most {MAX_RECORD_BYTES})"
                )));
            }
            if end == End::File {
                // A reader that goes on to the file's end must not meet a record unchecked.
                return Err(malformed(format!(
                    "the record at byte {at} states {len} bytes; the file ends {got} bytes \
                     into it"
                )));
            }
            return Ok(());
        }
        let chunk = check_record(opcode, &body, at, true).map_err(malformed)?;
        match (opcode, chunk) {
            (op::CHUNK, Some(inner)) => {
                let records = chunk_records(&inner)
                    .map_err(|e| malformed(format!("chunk at byte {at}: {e}")))?;
                for (opcode, record) in records {
                    visit(opcode, record, at).map_err(WalkError::Visit)?;
                }
            }
            (op::DATA_END, _) if end == End::DataEnd => return Ok(()),
            (opcode, _) => visit(opcode, &body, at).map_err(WalkError::Visit)?,
        }
        at += 9 + body.len();
    }
}

/// Fills `buf` from `input` as far as it goes; returns how many bytes were read.
fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The records of a chunk (decompressed), each framed within it and checked.
fn chunk_records(mut b: &[u8]) -> Result<Vec<(u8, &[u8])>, String> {
    let mut records = Vec::new();
    let mut at = 0;
    while !b.is_empty() {
        let body = (b.len() >= 9)
            .then(|| u64::from_le_bytes(b[1..9].try_into().expect("8 bytes")))
            .and_then(|len| b.get(9..usize::try_from(len).ok()?.checked_add(9)?))
            .ok_or_else(|| {
                format!("the record at byte {at} of a chunk runs past the chunk's end")
            })?;
        check_record(b[0], body, at, false)?;
        records.push((b[0], body));
        at += 9 + body.len();
        b = &b[9 + body.len()..];
    }
    Ok(records)
}

/// Checks every length field the parser trusts in one record (`body` after its opcode and
/// length, at file offset `at`): strings, maps, byte arrays, a chunk's sizes. A chunk at the
/// top level comes back decompressed (into at most [`MAX_CHUNK_BYTES`], its CRC checked when it
/// states one), for [`chunk_records`].
fn check_record(opcode: u8, body: &[u8], at: usize, top: bool) -> Result<Option<Vec<u8>>, String> {
    let mut f = Fields {
        b: body,
        at: at + 9,
    };
    match opcode {
        op::HEADER => f.strings(2)?,
        op::SCHEMA => {
            f.skip(2)?;
            f.strings(2)?;
            f.bytes()?;
        }
        op::CHANNEL => {
            f.skip(4)?;
            f.strings(2)?;
            f.map()?;
        }
        op::METADATA => {
            f.strings(1)?;
            f.map()?;
        }
        op::ATTACHMENT => {
            f.skip(16)?;
            f.strings(2)?;
            f.skip_u64_len()?;
            // Its CRC: the parser slices it off the end before checking the lengths.
            f.skip(4)?;
        }
        op::MESSAGE_INDEX => {
            f.skip(2)?;
            f.entries(16)?;
        }
        op::CHUNK_INDEX => {
            f.skip(32)?;
            // Its map<u16, u64>: the parser reads whole entries, so a length between them
            // would shift the fields after it.
            f.entries(10)?;
            f.skip(8)?;
            f.strings(1)?;
        }
        op::ATTACHMENT_INDEX => {
            f.skip(40)?;
            f.strings(2)?;
        }
        op::STATISTICS => {
            f.skip(8 + 2 + 4 * 4 + 16)?;
            f.entries(10)?;
        }
        op::METADATA_INDEX => {
            f.skip(16)?;
            f.strings(1)?;
        }
        op::CHUNK if top => {
            f.skip(16)?;
            let uncompressed = f.u64()?;
            let crc = f.u32()?;
            let compression = f.string()?;
            let compressed = f.skip_u64_len()?;
            if uncompressed > MAX_CHUNK_BYTES {
                return Err(format!("chunk at byte {at} states {uncompressed} bytes uncompressed (at most {MAX_CHUNK_BYTES})"));
            }
            let inner = match compression {
                b"" => compressed.to_vec(),
                b"zstd" => zstd::bulk::decompress(compressed, uncompressed as usize)
                    .map_err(|e| format!("chunk at byte {at}: {e}"))?,
                other => {
                    return Err(format!(
                        "chunk at byte {at}: compression {:?} is not read here",
                        String::from_utf8_lossy(other)
                    ))
                }
            };
            if inner.len() as u64 != uncompressed {
                return Err(format!(
                    "chunk at byte {at} states {uncompressed} bytes uncompressed and holds {}",
                    inner.len()
                ));
            }
            if crc != 0 && crc32fast::hash(&inner) != crc {
                return Err(format!(
                    "chunk at byte {at}: its records do not match its CRC (damaged)"
                ));
            }
            return Ok(Some(inner));
        }
        _ => {}
    }
    Ok(None)
}

/// The fields of one record, read front to back; `at` is the file offset, for errors.
struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], String> {
        match usize::try_from(n).ok().filter(|&n| n <= self.b.len()) {
            Some(n) => {
                let (head, rest) = self.b.split_at(n);
                self.b = rest;
                self.at += n;
                Ok(head)
            }
            None => Err(format!(
                "a field at byte {} states {n} bytes; its record has {} left",
                self.at,
                self.b.len()
            )),
        }
    }
    fn skip(&mut self, n: u64) -> Result<(), String> {
        self.take(n).map(|_| ())
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// `n` bytes stated by the length field at byte `start`.
    fn stated(&mut self, n: u64, start: usize) -> Result<&'a [u8], String> {
        let left = self.b.len();
        self.take(n).map_err(|_| {
            format!("the length at byte {start} states {n} bytes; its record has {left} left")
        })
    }
    fn string(&mut self) -> Result<&'a [u8], String> {
        let start = self.at;
        let n = self.u32()?;
        self.stated(n.into(), start)
    }
    fn strings(&mut self, n: usize) -> Result<(), String> {
        (0..n).try_for_each(|_| self.string().map(|_| ()))
    }
    fn bytes(&mut self) -> Result<(), String> {
        self.string().map(|_| ())
    }
    /// An array or map of fixed-size entries (`size` bytes each) after its u32 byte length.
    fn entries(&mut self, size: usize) -> Result<(), String> {
        let start = self.at;
        let n = self.string()?.len();
        if n % size != 0 {
            return Err(format!(
                "the length at byte {start} states {n} bytes, not a whole number of its \
                 {size}-byte entries"
            ));
        }
        Ok(())
    }
    fn skip_u64_len(&mut self) -> Result<&'a [u8], String> {
        let start = self.at;
        let n = self.u64()?;
        self.stated(n, start)
    }
    /// A map<string, string>: its byte length, then key-value pairs filling it.
    fn map(&mut self) -> Result<(), String> {
        let start = self.at;
        let n = self.u32()?;
        let mut m = Fields {
            b: self.stated(n.into(), start)?,
            at: start + 4,
        };
        while !m.b.is_empty() {
            m.strings(2)?;
        }
        Ok(())
    }
}
