//! The run record file (`record.mcap`): [`RecordWriter`] appends messages of the
//! [`schema`](super::schema) types; [`Record::read`] reads a record back for the report, and
//! [`Record::read_with`] hands its packets over one by one.
//!
//! MCAP with JSON messages: each topic is one channel with a `jsonschema` schema derived from
//! its type, chunks are zstd-compressed on the writing thread itself (a run's record has a
//! thread of its own already; zstd's worker threads would take a lock for each of the small
//! writes a message is made of), every message's log and publish time is its sim time.
//! A record is read front to back, one MCAP record at a time (so what is held is the largest
//! chunk, not the file), and accepted cut short (a run killed before it could finish the file):
//! it reads every complete record. Before the `mcap` crate parses a record, every length field
//! it would trust is checked against the bytes there are, and a chunk against its size and CRC
//! ([`crate::wire::mcap::walk`]): a damaged or hostile record is an error naming the byte, never
//! an allocation of what a field claims.

use super::schema::*;
use schemars::JsonSchema;
use serde::{de::DeserializeOwned, Serialize};
use std::{
    collections::{BTreeMap, HashMap},
    fs::File,
    io::{BufReader, BufWriter, Read},
    path::{Path, PathBuf},
};

/// File name of the record in a run folder.
pub const RECORD_FILE: &str = "record.mcap";

use crate::wire::mcap as checked;
pub use crate::wire::mcap::MAX_CHUNK_BYTES;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Mcap {
        path: PathBuf,
        source: mcap::McapError,
    },
    #[error("{path}: {what}")]
    Malformed { path: PathBuf, what: String },
    /// The record's writer thread stopped ([`super::record_queue`]).
    #[error("{what}")]
    Writer { what: String },
    #[error("{path}: message {sequence} on {topic} at {log_time} ns: {source}")]
    Message {
        path: PathBuf,
        topic: String,
        sequence: u32,
        log_time: u64,
        source: serde_path_to_error::Error<serde_json::Error>,
    },
}

/// What sees every channel and message as the record gets it: a live viewer server. Called on
/// the run's path, so it must never wait.
pub trait RecordTap: Send + Sync {
    /// Channel `id` is added: its topic, schema name and JSON schema.
    fn channel(&self, id: u16, topic: &str, schema_name: &str, schema: &[u8]);
    /// A message on channel `id` at sim time `t_ns` (its JSON bytes).
    fn message(&self, id: u16, t_ns: u64, data: &[u8]);
}

/// Appends messages to a record; [`RecordWriter::finish`] completes the file (index, summary).
pub struct RecordWriter {
    path: PathBuf,
    mcap: mcap::Writer<BufWriter<File>>,
    channels: HashMap<&'static str, u16>,
    sequence: u32,
    buf: Vec<u8>,
    tap: Option<std::sync::Arc<dyn RecordTap>>,
}

impl RecordWriter {
    pub fn create(path: &Path) -> Result<RecordWriter, RecordError> {
        let io = |source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = File::create(path).map_err(io)?;
        let mcap = mcap::WriteOptions::new()
            .profile("")
            .library(concat!("netsim_cosim ", env!("CARGO_PKG_VERSION")))
            .compression(Some(mcap::Compression::Zstd))
            .compression_threads(0)
            .create(BufWriter::with_capacity(1 << 20, file))
            .map_err(|source| RecordError::Mcap {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(RecordWriter {
            path: path.to_path_buf(),
            mcap,
            channels: HashMap::new(),
            sequence: 0,
            buf: Vec::with_capacity(1024),
            tap: None,
        })
    }

    /// Hands every channel and message from here on to `tap` as well.
    pub fn with_tap(mut self, tap: std::sync::Arc<dyn RecordTap>) -> RecordWriter {
        self.tap = Some(tap);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn mcap_err(&self, source: mcap::McapError) -> RecordError {
        RecordError::Mcap {
            path: self.path.clone(),
            source,
        }
    }

    /// The channel of `topic`, added (with `T`'s JSON schema) on first use.
    fn channel<T: JsonSchema>(&mut self, topic: &'static str) -> Result<u16, RecordError> {
        if let Some(&id) = self.channels.get(topic) {
            return Ok(id);
        }
        let schema = serde_json::to_vec(&viewer_schema::<T>()).expect("a JSON schema serializes");
        let schema_id = self
            .mcap
            .add_schema(&T::schema_name(), "jsonschema", &schema)
            .map_err(|e| self.mcap_err(e))?;
        let id = self
            .mcap
            .add_channel(schema_id, topic, "json", &BTreeMap::new())
            .map_err(|e| self.mcap_err(e))?;
        if let Some(tap) = &self.tap {
            tap.channel(id, topic, &T::schema_name(), &schema);
        }
        self.channels.insert(topic, id);
        Ok(id)
    }

    /// Appends `message` on `topic` at sim time `t_ns`.
    pub fn write<T: Serialize + JsonSchema>(
        &mut self,
        topic: &'static str,
        t_ns: u64,
        message: &T,
    ) -> Result<(), RecordError> {
        let channel_id = self.channel::<T>(topic)?;
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, message).expect("record messages serialize");
        self.sequence = self.sequence.wrapping_add(1);
        if let Some(tap) = &self.tap {
            tap.message(channel_id, t_ns, &self.buf);
        }
        let header = mcap::records::MessageHeader {
            channel_id,
            sequence: self.sequence,
            log_time: t_ns,
            publish_time: t_ns,
        };
        self.mcap
            .write_to_known_channel(&header, &self.buf)
            .map_err(|e| RecordError::Mcap {
                path: self.path.clone(),
                source: e,
            })
    }

    /// Completes the file: the last chunk, the index and the summary.
    pub fn finish(mut self) -> Result<PathBuf, RecordError> {
        self.mcap.finish().map_err(|e| self.mcap_err(e))?;
        Ok(self.path)
    }
}

/// `T`'s JSON schema in the form viewers read (Foxglove's and Lichtblick's JSON-schema reader
/// takes plain nested types only): every subschema written out in place (no `$ref`), an
/// optional field as its type (absent when absent, never `null`), an object at the top, and
/// `properties` on every object (none listed for a map or a free-form value).
pub fn viewer_schema<T: JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    plain_types(&mut schema);
    if let Some(top) = schema.as_object_mut() {
        top.remove("$defs");
        if !top.contains_key("type") {
            top.insert("type".into(), "object".into());
            top.entry("properties")
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
        }
    }
    schema
}

/// Removes `null` from every `type` list and from every `anyOf`/`oneOf` (a one-choice list
/// becomes its choice), throughout `schema`.
fn plain_types(schema: &mut serde_json::Value) {
    use serde_json::Value;
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let t = types.remove(0);
                    map.insert("type".into(), t);
                }
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(choices)) = map.get_mut(key) else {
                    continue;
                };
                choices.retain(|c| c.get("type").is_none_or(|t| t != "null"));
                if choices.len() == 1 {
                    let Some(Value::Object(only)) = choices.pop() else {
                        continue;
                    };
                    map.remove(key);
                    for (k, v) in only {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            if map.get("type").is_some_and(|t| t == "object") && !map.contains_key("properties") {
                map.insert("properties".into(), Value::Object(Default::default()));
            }
            for v in map.values_mut() {
                plain_types(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(plain_types),
        _ => {}
    }
}

/// A whole record, read back (messages in the file's order, which is time order per topic).
#[derive(Debug, Default)]
pub struct Record {
    pub run: Option<RunInfo>,
    pub poses: Vec<Poses>,
    pub channel: Vec<PairChannel>,
    pub link_states: Vec<LinkState>,
    pub packets: Vec<PacketRecord>,
    pub modem_frames: Vec<ModemFrame>,
    pub programs: Vec<ProgramRecord>,
    pub metrics: Vec<MetricSample>,
    /// The emulation error per window of a live run (`/emulation`).
    pub emulation: Vec<EmulationWindow>,
    /// The run summary (`summary.json`'s content), absent in a record cut short. Kept as
    /// written, so that a record whose summary another version wrote still reads;
    /// [`RunReport::from_value`](crate::output::summary::RunReport::from_value) types it.
    pub summary: Option<serde_json::Value>,
    /// The terrain's mesh as the scene drew it (`/scene/terrain`), if the record has it.
    pub terrain: Option<super::foxglove::SceneUpdate>,
    /// Messages on topics this version does not know (skipped).
    pub unknown_messages: u64,
}

impl Record {
    /// Reads `path` (a record, or a run folder holding `record.mcap`).
    pub fn read(path: &Path) -> Result<Record, RecordError> {
        let mut packets = Vec::new();
        let mut record = Record::read_with(path, &mut |p| packets.push(p))?;
        record.packets = packets;
        Ok(record)
    }

    /// Like [`Self::read`], but hands each `/packets` copy to `packets` as it is read instead
    /// of keeping it (`packets` of the result stays empty). The file is read one MCAP record at
    /// a time: what is held is the largest chunk, not the file.
    pub fn read_with(
        path: &Path,
        packets: &mut dyn FnMut(PacketRecord),
    ) -> Result<Record, RecordError> {
        let path = if path.is_dir() {
            path.join(RECORD_FILE)
        } else {
            path.to_path_buf()
        };
        let file = File::open(&path).map_err(|source| RecordError::Io {
            path: path.clone(),
            source,
        })?;
        Record::read_from(&mut BufReader::with_capacity(1 << 16, file), &path, packets)
    }

    /// Reads a record from its bytes; errors name `path`.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Record, RecordError> {
        let mut packets = Vec::new();
        let mut record = Record::read_from(&mut &bytes[..], path, &mut |p| packets.push(p))?;
        record.packets = packets;
        Ok(record)
    }

    fn read_from(
        input: &mut dyn Read,
        path: &Path,
        packets: &mut dyn FnMut(PacketRecord),
    ) -> Result<Record, RecordError> {
        let mut messages = Messages {
            path,
            packets,
            topics: HashMap::new(),
            record: Record::default(),
        };
        // The `mcap` parser has panicked on inputs the checks before it did not foresee: such
        // a file is an error like any other damaged one, not the end of the program.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            read_records(input, &mut messages)
        }))
        .unwrap_or_else(|_| {
            Err(RecordError::Malformed {
                path: path.to_path_buf(),
                what: "the MCAP reader could not read it (damaged file)".into(),
            })
        })?;
        Ok(messages.record)
    }
}

/// Where a record's messages go as its MCAP records are read: each topic's messages into
/// [`Record`], `/packets` to `packets`.
struct Messages<'a> {
    path: &'a Path,
    packets: &'a mut dyn FnMut(PacketRecord),
    /// Channel id → topic, from the channel records read so far.
    topics: HashMap<u16, String>,
    record: Record,
}

impl Messages<'_> {
    /// Takes a checked MCAP record, a channel or a message (in the record at byte `at`, for
    /// errors: itself, or the chunk holding it).
    fn take(&mut self, opcode: u8, body: &[u8], at: usize) -> Result<(), RecordError> {
        if opcode != checked::op::CHANNEL && opcode != checked::op::MESSAGE {
            return Ok(());
        }
        let parsed = mcap::parse_record(opcode, body).map_err(|source| RecordError::Mcap {
            path: self.path.to_path_buf(),
            source,
        })?;
        match parsed {
            mcap::records::Record::Channel(c) => {
                self.topics.insert(c.id, c.topic);
            }
            mcap::records::Record::Message { header, data } => self.message(&header, &data, at)?,
            _ => {}
        }
        Ok(())
    }

    fn message(
        &mut self,
        header: &mcap::records::MessageHeader,
        data: &[u8],
        at: usize,
    ) -> Result<(), RecordError> {
        let path = self.path;
        let Some(topic) = self.topics.get(&header.channel_id) else {
            return Err(RecordError::Malformed {
                path: path.to_path_buf(),
                what: format!(
                    "a message in the record at byte {at} is on channel {}, which no channel record before it announced",
                    header.channel_id
                ),
            });
        };
        fn parse<T: DeserializeOwned>(
            path: &Path,
            topic: &str,
            header: &mcap::records::MessageHeader,
            data: &[u8],
        ) -> Result<T, RecordError> {
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(data))
                .map_err(|source| RecordError::Message {
                    path: path.to_path_buf(),
                    topic: topic.to_owned(),
                    sequence: header.sequence,
                    log_time: header.log_time,
                    source,
                })
        }
        let r = &mut self.record;
        match topic.as_str() {
            TOPIC_RUN => r.run = Some(parse(path, topic, header, data)?),
            TOPIC_POSES => r.poses.push(parse(path, topic, header, data)?),
            TOPIC_CHANNEL => r.channel.push(parse(path, topic, header, data)?),
            TOPIC_LINK_STATE => r.link_states.push(parse(path, topic, header, data)?),
            TOPIC_PACKETS => (self.packets)(parse(path, topic, header, data)?),
            TOPIC_MODEM_FRAMES => r.modem_frames.push(parse(path, topic, header, data)?),
            TOPIC_PROGRAMS => r.programs.push(parse(path, topic, header, data)?),
            TOPIC_METRICS => r.metrics.push(parse(path, topic, header, data)?),
            TOPIC_EMULATION => r.emulation.push(parse(path, topic, header, data)?),
            TOPIC_SUMMARY => r.summary = Some(parse(path, topic, header, data)?),
            TOPIC_TERRAIN => r.terrain = Some(parse(path, topic, header, data)?),
            // Drawn by viewers, not read back.
            TOPIC_VEHICLES | TOPIC_TF | TOPIC_LINKS | TOPIC_TRAFFIC | TOPIC_EVENTS => {}
            _ => r.unknown_messages += 1,
        }
        Ok(())
    }
}

/// Reads the data section's records front to back, one at a time, each checked by
/// [`checked::walk`] before the parser sees it, and hands the channels and messages to
/// `messages`. A file cut short (a run killed before it could finish it) ends at its last whole
/// record; the data end ends it otherwise.
fn read_records(input: &mut dyn Read, messages: &mut Messages) -> Result<(), RecordError> {
    let path = messages.path;
    checked::walk(input, checked::End::DataEnd, &mut |opcode, body, at| {
        messages.take(opcode, body, at)
    })
    .map_err(|e| match e {
        checked::WalkError::Io(source) => RecordError::Io {
            path: path.to_path_buf(),
            source,
        },
        checked::WalkError::Malformed(what) => RecordError::Malformed {
            path: path.to_path_buf(),
            what,
        },
        checked::WalkError::Visit(e) => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schemas a record embeds read in Foxglove's and Lichtblick's JSON-schema reader: no
    /// reference, no `null` type, an object with `properties` everywhere an object is.
    #[test]
    fn embedded_schemas_are_plain_nested_types() {
        fn check(v: &serde_json::Value, at: &str) {
            match v {
                serde_json::Value::Object(m) => {
                    assert!(
                        !m.contains_key("$ref") && !m.contains_key("$defs"),
                        "{at}: {v}"
                    );
                    if let Some(t) = m.get("type") {
                        assert!(t.is_string(), "{at}: type {t}");
                        assert_ne!(t, "null", "{at}");
                        if t == "object" {
                            assert!(m.contains_key("properties"), "{at}: {v}");
                        }
                        if t == "array" {
                            assert!(m["items"].get("type").is_some(), "{at}: items {v}");
                        }
                    }
                    for (k, v) in m {
                        match (k.as_str(), v) {
                            // Field names, each with its schema.
                            ("properties", serde_json::Value::Object(fields)) => {
                                for (f, s) in fields {
                                    check(s, &format!("{at}.{f}"));
                                }
                            }
                            _ => check(v, &format!("{at}.{k}")),
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| check(v, at)),
                _ => {}
            }
        }
        let schemas = [
            ("/link_state", viewer_schema::<LinkState>()),
            ("/channel", viewer_schema::<PairChannel>()),
            ("/poses", viewer_schema::<Poses>()),
            ("/programs", viewer_schema::<ProgramRecord>()),
            ("/emulation", viewer_schema::<EmulationWindow>()),
            ("/summary", viewer_schema::<serde_json::Value>()),
            (
                "/scene/links",
                viewer_schema::<super::super::foxglove::SceneUpdate>(),
            ),
            (
                "/tf",
                viewer_schema::<super::super::foxglove::FrameTransforms>(),
            ),
            ("/events", viewer_schema::<super::super::foxglove::Log>()),
        ];
        for (topic, schema) in &schemas {
            assert_eq!(schema["type"], "object", "{topic}");
            check(schema, topic);
        }
        // An optional field is its type.
        assert_eq!(schemas[0].1["properties"]["snr_db"]["type"], "number");
        let arrivals = &schemas[1].1["properties"]["arrivals"];
        assert_eq!(arrivals["type"], "array");
        assert_eq!(
            arrivals["items"]["properties"]["bottom_bounces"]["type"],
            "integer"
        );
    }

    /// A channel sample without arrivals (a pair not traced, or a record of a version without
    /// them) reads as none and is written without the field; with them, they read back.
    #[test]
    fn a_channel_sample_s_arrivals_are_optional() {
        let text = r#"{"t_s":1.0,"a":"a","b":"b","los":true,"distance_m":5.0,"loss_db":0.0,"hops":2,"change":false}"#;
        let c: PairChannel = serde_json::from_str(text).unwrap();
        assert_eq!(c.arrivals, None);
        assert_eq!(serde_json::to_string(&c).unwrap(), text);
        let traced = PairChannel {
            arrivals: Some(vec![Arrival {
                delay_s: 0.1,
                amplitude: 0.01,
                phase_rad: 3.1,
                launch_deg: -5.0,
                arrival_deg: 5.0,
                path_m: 150.0,
                surface_bounces: 1,
                bottom_bounces: 0,
            }]),
            ..c
        };
        let back: PairChannel =
            serde_json::from_str(&serde_json::to_string(&traced).unwrap()).unwrap();
        assert_eq!(back, traced);
    }

    fn pose(t_s: f64) -> Poses {
        Poses {
            t_s,
            poses: vec![VehiclePose {
                vehicle: "a".into(),
                x: 1.0,
                y: 2.0,
                z: -3.0,
            }],
        }
    }

    #[test]
    fn a_record_reads_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = RecordWriter::create(&dir.path().join(RECORD_FILE)).unwrap();
        for i in 0..100 {
            w.write(TOPIC_POSES, i * 1_000_000, &pose(i as f64 * 1e-3))
                .unwrap();
        }
        let packet = PacketRecord {
            t_s: 0.5,
            src: "a".into(),
            dst: Some("b".into()),
            bytes: 1500,
            outcome: Outcome::Dropped,
            reason: Some("out of range".into()),
            end_s: 0.6,
            corrupted: false,
            emulation_ms: None,
        };
        w.write(TOPIC_PACKETS, 600_000_000, &packet).unwrap();
        w.write(
            TOPIC_SUMMARY,
            700_000_000,
            &serde_json::json!({"windows": 7}),
        )
        .unwrap();
        w.finish().unwrap();
        let r = Record::read(dir.path()).unwrap();
        assert_eq!(r.poses.len(), 100);
        assert_eq!(r.poses[42], pose(0.042));
        assert_eq!(r.packets, vec![packet.clone()]);
        assert_eq!(r.summary, Some(serde_json::json!({"windows": 7})));
        // Read with the packets handed over as they come: the same, none kept.
        let mut handed = Vec::new();
        let r = Record::read_with(dir.path(), &mut |p| handed.push(p)).unwrap();
        assert_eq!((r.poses.len(), r.packets.len()), (100, 0));
        assert_eq!(handed, vec![packet]);
    }

    #[test]
    fn a_record_cut_short_keeps_its_complete_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_FILE);
        let mut w = RecordWriter::create(&path).unwrap();
        for i in 0..20_000u64 {
            w.write(TOPIC_POSES, i * 1_000_000, &pose(i as f64 * 1e-3))
                .unwrap();
        }
        w.finish().unwrap();
        let whole = std::fs::read(&path).unwrap();
        // Cut inside the data section, as a killed run leaves it.
        std::fs::write(&path, &whole[..whole.len() * 2 / 3]).unwrap();
        let r = Record::read(&path).unwrap();
        assert!(
            !r.poses.is_empty() && r.poses.len() < 20_000,
            "{} poses",
            r.poses.len()
        );
        assert_eq!(r.poses[0], pose(0.0));
        assert!(r.summary.is_none());
    }

    /// The bytes of a record of one pose written by [`RecordWriter`] (its path: `dir`'s
    /// record), and the file offset of its first chunk: after the magic (8) and the header
    /// record (opcode, u64 length, body).
    fn one_pose_record(dir: &Path) -> (PathBuf, Vec<u8>, usize) {
        let path = dir.join(RECORD_FILE);
        let mut w = RecordWriter::create(&path).unwrap();
        w.write(TOPIC_POSES, 0, &pose(0.0)).unwrap();
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header_len = u64::from_le_bytes(bytes[9..17].try_into().unwrap()) as usize;
        let chunk = 8 + 9 + header_len;
        assert_eq!(bytes[chunk], 0x06, "a chunk follows the header");
        (path, bytes, chunk)
    }

    #[test]
    fn a_chunk_stating_a_huge_size_is_refused_before_it_is_decompressed() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut bytes, chunk) = one_pose_record(dir.path());
        // The first chunk: opcode 6, u64 length, start and end time, then its uncompressed size.
        bytes[chunk + 25..chunk + 33].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let e = Record::parse(&bytes, &path).unwrap_err().to_string();
        assert!(e.contains("record.mcap"), "{e}");
    }

    #[test]
    fn a_chunk_that_does_not_match_its_crc_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut bytes, chunk) = one_pose_record(dir.path());
        // The chunk's CRC of its records follows its start and end time and its size.
        bytes[chunk + 33] ^= 0x5a;
        let e = Record::parse(&bytes, &path).unwrap_err().to_string();
        assert!(
            e.contains("record.mcap")
                && e.contains(&format!("chunk at byte {chunk}"))
                && e.contains("CRC"),
            "{e}"
        );
    }

    #[test]
    fn a_record_stating_more_bytes_than_the_file_holds_ends_it_as_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut bytes, chunk) = one_pose_record(dir.path());
        // A terabyte: only what the file holds is read, and the chunk is not whole.
        bytes[chunk + 1..chunk + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let r = Record::parse(&bytes, &path).unwrap();
        assert!(r.poses.is_empty() && r.summary.is_none());
        // The same state of a file that does hold more than a record may: refused, named.
        bytes.resize(chunk + 9 + checked::MAX_RECORD_BYTES as usize + 1, 0);
        let e = Record::parse(&bytes, &path).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "the record at byte {chunk} states {} bytes",
                1u64 << 40
            )),
            "{e}"
        );
    }

    #[test]
    fn a_string_stating_more_bytes_than_its_record_holds_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_FILE);
        RecordWriter::create(&path).unwrap().finish().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        // The header record's first field (the profile string's length) claims almost 4 GiB.
        bytes[17..21].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        let e = Record::parse(&bytes, &path).unwrap_err().to_string();
        assert!(
            e.contains("record.mcap") && e.contains("byte 17") && e.contains("4294967280 bytes"),
            "{e}"
        );
    }

    /// The inputs fuzzing found (fuzz/corpus/run_record/): each made the `mcap` reader allocate
    /// gigabytes or panic; now each reads (what is whole of it) or is an error naming the file.
    #[test]
    fn the_damaged_records_fuzzing_found_read_or_fail_cleanly() {
        let found: [(&str, &[u8]); 4] = [
            (
                "chunk_size_claim",
                include_bytes!("../../fuzz/corpus/run_record/chunk_size_claim.mcap"),
            ),
            (
                "string_length_claim",
                include_bytes!("../../fuzz/corpus/run_record/string_length_claim.mcap"),
            ),
            (
                "chunk_index_string_claim",
                include_bytes!("../../fuzz/corpus/run_record/chunk_index_string_claim.mcap"),
            ),
            (
                "attachment_without_crc",
                include_bytes!("../../fuzz/corpus/run_record/attachment_without_crc.mcap"),
            ),
        ];
        for (name, bytes) in found {
            if let Err(e) = Record::parse(bytes, Path::new("damaged/record.mcap")) {
                assert!(
                    e.to_string().starts_with("damaged/record.mcap: "),
                    "{name}: {e}"
                );
            }
        }
    }

    #[test]
    fn a_message_that_is_not_its_topics_type_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_FILE);
        let mut w = RecordWriter::create(&path).unwrap();
        w.write(TOPIC_PACKETS, 5, &serde_json::json!({"t_s": "soon"}))
            .unwrap();
        w.finish().unwrap();
        let e = Record::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("/packets") && e.contains("record.mcap") && e.contains("t_s"),
            "{e}"
        );
    }
}
