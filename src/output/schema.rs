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
//! | `/channel`       | [`PairChannel`]  | per pair, every `record.channel_interval_s` and at every LOS/NLOS change |
//! | `/link_state`    | [`LinkState`]    | per directed pair, whenever the network simulator reports a change |
//! | `/packets`       | [`PacketRecord`] | per captured copy, when it ends (delivered or dropped)   |
//! | `/modem_frames`  | [`ModemFrame`]   | per modem frame copy, when it is decided                 |
//! | `/programs`      | [`ProgramRecord`]| per program of the scenario, when it ends                |
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
pub const TOPIC_SUMMARY: &str = "/summary";

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
}

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

/// A program the scenario started, when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// Why it did not start or how it was stopped, in words.
    pub note: Option<String>,
}
