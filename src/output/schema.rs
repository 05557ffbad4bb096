//! The run record's messages: one serde type per topic of `record.mcap`.
//!
//! The record is an MCAP file (the ROS 2 bag default; Foxglove and the `mcap` CLI read it) whose
//! messages are JSON (`message_encoding: json`, each channel with a `jsonschema` schema). Every
//! message's log and publish time is its sim time in ns. What is written grows with what
//! changes, not with windows × pairs:
//!
//! | topic            | type             | when                                                     |
//! |------------------|------------------|----------------------------------------------------------|
//! | `/run`           | [`RunInfo`]      | once, at the start                                       |
//! | `/poses`         | [`Poses`]        | every `record.pose_interval_s` of sim time               |
//! | `/channel`       | [`PairChannel`]  | per pair, every `record.channel_interval_s` and at every LOS/NLOS change (a traced pair's arrivals with it) |
//! | `/link_state`    | [`LinkState`]    | per directed pair, whenever the network simulator reports a change |
//! | `/packets`       | [`PacketRecord`] | per captured copy, when it ends (delivered or dropped)   |
//! | `/modem_frames`  | [`ModemFrame`]   | per modem frame copy, when it is decided                 |
//! | `/programs`      | [`ProgramRecord`]| per program of the scenario, when it ends                |
//! | `/metrics`       | [`MetricSample`] | per value a program reported (`COSIM_METRICS`), at its time |
//! | `/summary`       | the run summary (`summary.json`'s content) | once, at the end               |
//!
//! Names, not node indices, identify vehicles, so a record reads on its own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const TOPIC_RUN: &str = "/run";
pub const TOPIC_POSES: &str = "/poses";
pub const TOPIC_CHANNEL: &str = "/channel";
pub const TOPIC_LINK_STATE: &str = "/link_state";
pub const TOPIC_PACKETS: &str = "/packets";
pub const TOPIC_MODEM_FRAMES: &str = "/modem_frames";
pub const TOPIC_PROGRAMS: &str = "/programs";
pub const TOPIC_METRICS: &str = "/metrics";
pub const TOPIC_SUMMARY: &str = "/summary";
pub const TOPIC_EMULATION: &str = "/emulation";

// The 3D scene (`super::scene`), in Foxglove's schemas (`super::foxglove`).
pub const TOPIC_TERRAIN: &str = "/scene/terrain";
pub const TOPIC_VEHICLES: &str = "/scene/vehicles";
pub const TOPIC_TF: &str = "/tf";
pub const TOPIC_LINKS: &str = "/scene/links";
pub const TOPIC_TRAFFIC: &str = "/scene/traffic";
pub const TOPIC_EVENTS: &str = "/events";

/// The run's constants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunInfo {
    pub scenario: String,
    pub seed: u64,
    pub window_ms: f64,
    pub duration_s: f64,
    pub real_time_factor: f64,
    /// Vehicle names in node order.
    pub vehicles: Vec<String>,
    /// Sampling intervals of `/poses` and `/channel` (s of sim time).
    pub pose_interval_s: f64,
    pub channel_interval_s: f64,
}

/// Every vehicle's position at `t_s` (local ENU frame, m).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Poses {
    pub t_s: f64,
    pub poses: Vec<VehiclePose>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VehiclePose {
    pub vehicle: String,
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// One pair's channel geometry at `t_s` (a window start), as the physics side reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairChannel {
    pub t_s: f64,
    pub a: String,
    pub b: String,
    pub los: bool,
    pub distance_m: f64,
    /// Sum of the path's penetration losses (dB).
    pub loss_db: f64,
    pub hops: u32,
    /// True when written because LOS/NLOS changed (else a periodic sample).
    pub change: bool,
    /// For a pair the beam tracer traced (`propagation: beam`), the arrivals at `b` from a
    /// source at `a` that the window used, in order of delay (empty: a shadow zone, nothing
    /// arrives); absent for a pair not traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Vec<Arrival>>,
}

/// One acoustic arrival of a traced pair: the record keeps ChannelData's own.
pub use crate::wire::channel::Arrival;

/// A directed link's state as the network simulator's link model reports it, from `t_s` on
/// (until the next report for the same pair).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LinkState {
    pub t_s: f64,
    pub src: String,
    pub dst: String,
    /// False: out of range (no link).
    pub usable: bool,
    /// In-band SNR (dB); absent where the model has none (ideal, disk).
    pub snr_db: Option<f64>,
    pub rate_bps: f64,
    /// Packet error probability of a 1000-byte packet.
    pub per: f64,
    /// One-way delay (propagation + fixed), s.
    pub delay_s: f64,
}

/// How a captured copy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Delivered,
    Dropped,
}

/// One captured copy of a packet (one per receiving vehicle), when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PacketRecord {
    /// Capture sim time (s).
    pub t_s: f64,
    pub src: String,
    /// The receiving vehicle (absent: the packet named no vehicle, e.g. malformed or no route).
    pub dst: Option<String>,
    pub bytes: u32,
    pub outcome: Outcome,
    /// Drop reason label (`model::fate::DropReason`'s), absent when delivered.
    pub reason: Option<String>,
    /// Sim time it was delivered or dropped (s).
    pub end_s: f64,
    /// Delivered with flipped bits (no CRC).
    pub corrupted: bool,
    /// Delivered: what the emulator added to it (its wall time from read to write less its sim
    /// delay), ms ([`crate::net::ledger::Emulation::total_ns`]); none for a packet of the
    /// generated traffic, made and received in sim time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation_ms: Option<f64>,
}

/// The record's `/emulation`: one message per window in which copies ended or that opened
/// later than the bound.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulationWindow {
    /// Sim time of the window's start, s.
    pub t_s: f64,
    pub window: u32,
    /// How long after its due time it opened, ms.
    pub opened_late_ms: f64,
    /// Delivered copies that ended in it, and the largest error and release lateness among
    /// them, ms.
    pub copies: u32,
    pub error_max_ms: f64,
    pub release_max_ms: f64,
    /// The largest capture lag of a copy that ended in it (delivered or not), ms.
    pub capture_max_ms: f64,
    /// Delivered copies over the bound.
    pub over_bound: u32,
}

/// One emulated modem frame copy, when decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModemFrame {
    /// Sent and decided sim times (s).
    pub t_s: f64,
    pub decided_s: f64,
    pub src: String,
    /// The addressed receiver (absent: nobody, e.g. no modem with that address).
    pub dst: Option<String>,
    /// `data`, `ping`, `ping_reply`, `ack`, `mini` (the frame's kind).
    pub kind: String,
    pub frame: u8,
    pub rate: u8,
    pub bytes: u32,
    pub snr_db: Option<f64>,
    pub outcome: Outcome,
    pub reason: Option<String>,
}

/// One value a program of the scenario reported in its metrics file (`COSIM_METRICS`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricSample {
    /// The program's sim time of the value (its `t_ns`), else when the run read it (s).
    pub t_s: f64,
    pub program: String,
    /// The vehicle whose namespace the program ran in (absent: the host).
    pub vehicle: Option<String>,
    pub name: String,
    pub value: f64,
    /// The vehicle the measured thing came from, as the program said.
    pub from: Option<String>,
}

/// A program the scenario started, when it ended. In the record and `summary.json` its end is
/// the field `note` (words, [`ProgramRecord::note`]); read back, the words become the end again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ProgramRecordJson", from = "ProgramRecordJson")]
pub struct ProgramRecord {
    pub name: String,
    /// The vehicle whose namespace it ran in (absent: the host).
    pub vehicle: Option<String>,
    /// Sim times it started and ended (s); `started_s` absent when it never started.
    pub started_s: Option<f64>,
    pub ended_s: Option<f64>,
    /// Exit code, or the signal that ended it.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Why it did not start, or how the run stopped it.
    pub end: ProgramEnd,
    /// Processes left in its group at the end were killed.
    pub leftovers_killed: bool,
}

impl ProgramRecord {
    /// The record's `note`: its end and what was left of its group, in words.
    pub fn note(&self) -> Option<String> {
        const KILLED: &str = "processes left in its group were killed";
        match (self.end.text(), self.leftovers_killed) {
            (Some(n), true) => Some(format!("{n}; {KILLED}")),
            (None, true) => Some(KILLED.to_owned()),
            (n, false) => n,
        }
    }

    /// Whether the record has a note (an end other than [`ProgramEnd::Exited`], or leftovers).
    pub fn has_note(&self) -> bool {
        self.end != ProgramEnd::Exited || self.leftovers_killed
    }

    /// Its exit in words: `exit 0`, `signal 15`, or why it has none.
    pub fn exit_text(&self) -> String {
        match (self.exit_code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) if self.started_s.is_none() => "not started".into(),
            (None, None) => "unknown".into(),
        }
    }
}

/// How a program's run ended, beyond its exit status.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgramEnd {
    /// It ended by itself (its exit code or signal says how), or had not ended yet.
    Exited,
    /// Not started: its vehicle had no network namespace (live capture off).
    NoNamespace { vehicle: String },
    /// Not started: the run ended at `end_s`, before its start at `start_s`.
    RunEndedFirst { end_s: f64, start_s: f64 },
    /// It could not be started.
    CannotStart { error: String },
    /// Stopped by the run with its stop signal.
    Stopped { signal: String },
    /// It had ended by itself; processes left in its group were stopped with its stop signal.
    GroupStopped { signal: String },
    /// Stopped by the run: it did not stop within `timeout_s` of its stop signal and was killed.
    Killed { timeout_s: f64, signal: String },
    /// Still running `wait_s` after SIGKILL.
    SurvivedKill { wait_s: u64 },
    /// Its exit status was lost.
    ExitLost,
    /// Waiting for its exit failed.
    CannotWait { error: String },
    /// A note this version does not know (a record of another version), kept as it was.
    Other(String),
}

impl ProgramEnd {
    /// Whether the run stopped it (rather than it ending by itself or never starting).
    pub fn stopped_by_run(&self) -> bool {
        matches!(self, ProgramEnd::Stopped { .. } | ProgramEnd::Killed { .. })
    }

    /// The end in words (None for [`ProgramEnd::Exited`]).
    pub fn text(&self) -> Option<String> {
        Some(match self {
            ProgramEnd::Exited => return None,
            ProgramEnd::NoNamespace { vehicle } => format!(
                "not started: no network namespace for vehicle {vehicle} (live capture is off; it needs root)"
            ),
            ProgramEnd::RunEndedFirst { end_s, start_s } => {
                format!("not started: the run ended at {end_s} s, before its start at {start_s} s")
            }
            ProgramEnd::CannotStart { error } => format!("cannot start: {error}"),
            ProgramEnd::Stopped { signal } => format!("stopped with {signal}"),
            ProgramEnd::GroupStopped { signal } => {
                format!("processes left in its group were stopped with {signal}")
            }
            ProgramEnd::Killed { timeout_s, signal } => {
                format!("did not stop within {timeout_s} s of {signal}: killed")
            }
            ProgramEnd::SurvivedKill { wait_s } => format!("still running {wait_s} s after SIGKILL"),
            ProgramEnd::ExitLost => "its exit status was lost".to_owned(),
            ProgramEnd::CannotWait { error } => format!("cannot wait for it: {error}"),
            ProgramEnd::Other(text) => text.clone(),
        })
    }

    /// A note read back: the end and whether leftovers were killed. Words this version does not
    /// write (exactly) become [`ProgramEnd::Other`].
    pub fn parse(note: Option<&str>) -> (ProgramEnd, bool) {
        const KILLED: &str = "processes left in its group were killed";
        let Some(note) = note else {
            return (ProgramEnd::Exited, false);
        };
        if note == KILLED {
            return (ProgramEnd::Exited, true);
        }
        let (text, killed) = match note.strip_suffix(KILLED).and_then(|n| n.strip_suffix("; ")) {
            Some(n) => (n, true),
            None => (note, false),
        };
        let end = ProgramEnd::read(text)
            .filter(|e| e.text().as_deref() == Some(text))
            .unwrap_or_else(|| ProgramEnd::Other(text.to_owned()));
        (end, killed)
    }

    /// The end whose words are `text`, if it is one this version writes.
    fn read(text: &str) -> Option<ProgramEnd> {
        let owned = |s: &str| s.to_owned();
        if let Some(rest) = text.strip_prefix("not started: no network namespace for vehicle ") {
            let vehicle = rest.strip_suffix(" (live capture is off; it needs root)")?;
            return Some(ProgramEnd::NoNamespace {
                vehicle: owned(vehicle),
            });
        }
        if let Some(rest) = text.strip_prefix("not started: the run ended at ") {
            let (end_s, start_s) = rest
                .strip_suffix(" s")?
                .split_once(" s, before its start at ")?;
            return Some(ProgramEnd::RunEndedFirst {
                end_s: end_s.parse().ok()?,
                start_s: start_s.parse().ok()?,
            });
        }
        if let Some(error) = text.strip_prefix("cannot start: ") {
            return Some(ProgramEnd::CannotStart {
                error: owned(error),
            });
        }
        if let Some(signal) = text.strip_prefix("stopped with ") {
            return Some(ProgramEnd::Stopped {
                signal: owned(signal),
            });
        }
        if let Some(signal) = text.strip_prefix("processes left in its group were stopped with ") {
            return Some(ProgramEnd::GroupStopped {
                signal: owned(signal),
            });
        }
        if let Some(rest) = text.strip_prefix("did not stop within ") {
            let (timeout_s, signal) = rest.strip_suffix(": killed")?.split_once(" s of ")?;
            return Some(ProgramEnd::Killed {
                timeout_s: timeout_s.parse().ok()?,
                signal: owned(signal),
            });
        }
        if let Some(rest) = text.strip_prefix("still running ") {
            let wait_s = rest.strip_suffix(" s after SIGKILL")?.parse().ok()?;
            return Some(ProgramEnd::SurvivedKill { wait_s });
        }
        if let Some(error) = text.strip_prefix("cannot wait for it: ") {
            return Some(ProgramEnd::CannotWait {
                error: owned(error),
            });
        }
        (text == "its exit status was lost").then_some(ProgramEnd::ExitLost)
    }
}

/// A program the scenario started, when it ended.
#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ProgramRecord")]
struct ProgramRecordJson {
    name: String,
    /// The vehicle whose namespace it ran in (absent: the host).
    vehicle: Option<String>,
    /// Sim times it started and ended (s); `started_s` absent when it never started.
    started_s: Option<f64>,
    ended_s: Option<f64>,
    /// Exit code, or the signal that ended it.
    exit_code: Option<i32>,
    signal: Option<i32>,
    /// Why it did not start or how it was stopped, in words.
    note: Option<String>,
}

impl From<ProgramRecord> for ProgramRecordJson {
    fn from(p: ProgramRecord) -> ProgramRecordJson {
        ProgramRecordJson {
            note: p.note(),
            name: p.name,
            vehicle: p.vehicle,
            started_s: p.started_s,
            ended_s: p.ended_s,
            exit_code: p.exit_code,
            signal: p.signal,
        }
    }
}

impl From<ProgramRecordJson> for ProgramRecord {
    fn from(p: ProgramRecordJson) -> ProgramRecord {
        let (end, leftovers_killed) = ProgramEnd::parse(p.note.as_deref());
        ProgramRecord {
            name: p.name,
            vehicle: p.vehicle,
            started_s: p.started_s,
            ended_s: p.ended_s,
            exit_code: p.exit_code,
            signal: p.signal,
            end,
            leftovers_killed,
        }
    }
}

impl JsonSchema for ProgramRecord {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        ProgramRecordJson::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        ProgramRecordJson::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ProgramRecordJson::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_end_reads_back_from_its_note() {
        let s = |v: &str| v.to_owned();
        let ends = [
            ProgramEnd::Exited,
            ProgramEnd::NoNamespace { vehicle: s("usv1") },
            ProgramEnd::RunEndedFirst {
                end_s: 120.0,
                start_s: 500.5,
            },
            ProgramEnd::CannotStart {
                error: s("\"iperf3\": No such file or directory (os error 2)"),
            },
            ProgramEnd::Stopped {
                signal: s("SIGINT"),
            },
            ProgramEnd::GroupStopped {
                signal: s("SIGTERM"),
            },
            ProgramEnd::Killed {
                timeout_s: 2.5,
                signal: s("SIGINT"),
            },
            ProgramEnd::SurvivedKill { wait_s: 5 },
            ProgramEnd::ExitLost,
            ProgramEnd::CannotWait {
                error: s("interrupted"),
            },
            ProgramEnd::Other(s("a note of another version")),
        ];
        for end in ends {
            for leftovers_killed in [false, true] {
                let p = ProgramRecord {
                    name: s("p"),
                    vehicle: None,
                    started_s: Some(1.0),
                    ended_s: Some(2.0),
                    exit_code: None,
                    signal: Some(2),
                    end: end.clone(),
                    leftovers_killed,
                };
                let json = serde_json::to_value(&p).unwrap();
                assert_eq!(json["note"].as_str().map(str::to_owned), p.note());
                let back: ProgramRecord = serde_json::from_value(json).unwrap();
                assert_eq!(back, p);
            }
        }
        assert_eq!(
            ProgramEnd::parse(Some(
                "stopped with SIGINT; processes left in its group were killed"
            )),
            (
                ProgramEnd::Stopped {
                    signal: s("SIGINT")
                },
                true
            )
        );
        assert!(ProgramEnd::parse(Some("stopped with SIGINT"))
            .0
            .stopped_by_run());
        assert!(!ProgramEnd::parse(Some("its exit status was lost"))
            .0
            .stopped_by_run());
        // Words close to but not exactly a known end stay as they were.
        assert_eq!(
            ProgramEnd::parse(Some("did not stop within 1.50 s of SIGINT: killed")).0,
            ProgramEnd::Other(s("did not stop within 1.50 s of SIGINT: killed"))
        );
    }
}
