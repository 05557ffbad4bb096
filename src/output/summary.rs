//! The run summary: what a finished (or interrupted) run reports, in `summary.json` and the
//! record's `/summary`. One set of types, written by the run and read back by the report, the
//! terminal tables, `cosim soak` and `cosim compare`; `schema/summary.schema.json` is its JSON
//! Schema (a test keeps the two equal).

use crate::clock::stages::StageTime;
use crate::model::modem::{FrameLedgerEntry, FrameLedgerSummary};
use crate::net::ledger::LedgerSummary;
use crate::output::{
    emulation::EmulationSummary, record_policy::PairSummary, schema::ProgramRecord,
};
use crate::sim::acoustic_paths::PathStats;
use crate::sim::air::AirSummary;
use crate::sim::flows::FlowSummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::{collections::BTreeMap, path::PathBuf};

/// What a finished (or interrupted) run reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunReport {
    pub scenario: String,
    pub windows: u32,
    pub window_ms: f64,
    pub sim_seconds: f64,
    /// Wall time (s) from window 0's opening to the end of the last window: the programs'
    /// start before it (and their settling) is not counted.
    pub wall_seconds: f64,
    /// The Unix time (s) window 0 opened at: sim time 0 on the wall clock, what the programs'
    /// own time stamps compare with (0 in a run that opened no window).
    #[serde(default)]
    pub started_unix_s: f64,
    /// With pacing (`real_time_factor > 0`): how far the schedule moved behind the wall clock
    /// in all (a window more than [`crate::clock::CATCH_UP`] late moves it; later windows
    /// within that are caught up).
    pub slipped_seconds: f64,
    /// With pacing: how many windows opened after their due time (caught up or not), and the
    /// latest of them, ms.
    pub late_windows: u64,
    pub max_late_ms: f64,
    pub windows_per_second: f64,
    pub interrupted: bool,
    /// The run record (`record.mcap`), written by every run with an output folder.
    pub record: Option<PathBuf>,
    pub timeline: Option<PathBuf>,
    pub pairs: Vec<PairSummary>,
    /// The ledger of the vehicles' packets, live (`network.capture: tun`) or generated
    /// (`traffic.flows`), with an in-process network coordinator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<LedgerSummary>,
    /// The generated flows (`traffic.flows`): what each sent and what arrived, its
    /// throughput and delays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic: Vec<FlowSummary>,
    /// What the emulator added to the live traffic's packets (runs with live traffic whose
    /// copies this process follows): see [`crate::output::emulation`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
    /// The emulated modems' frame ledger and bridge counters (scenarios with `acoustic_modems`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modems: Option<ModemReport>,
    /// The scenario's programs: when each started and ended, and how (scenario order).
    pub programs: Vec<ProgramRecord>,
    /// The programs' metrics files (`COSIM_METRICS`) that had anything in them: what the run
    /// recorded of each and what it refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricsFileReport>,
    /// The live viewer server (`viewer.live`): its clients and what they were sent and missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer: Option<ViewerSummary>,
    /// The run record's writer thread: how far behind the run it fell, and whether the run
    /// had to wait for it ([`crate::output::record_queue`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_queue: Option<RecordQueueSummary>,
    /// The beam-traced acoustic paths (pairs with `propagation: beam`, traced by a physics
    /// simulator in this process): what tracing them cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acoustic_paths: Option<PathStats>,
    /// The 802.11 media of the links with `mac` (an embedded network simulator in this
    /// process): per medium its busy share, per link its attempts, retries, collisions and
    /// MAC service time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub air: Vec<AirSummary>,
    /// The peers on other hosts this run reached over ZeroMQ or ROS-NetSim's framing, neither
    /// authenticated nor encrypted, as `insecure_peers` allowed (simulators, a network
    /// coordinator of its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insecure_peers: Vec<String>,
    /// Where the wall time went, per stage (in this process; see
    /// [`Stages`](crate::clock::stages::Stages)).
    pub stages: BTreeMap<String, StageTime>,
}

/// What the live viewer server did over a run (until the run's end).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerSummary {
    /// The address it listened on.
    pub address: String,
    /// Clients that connected (refused ones not included).
    pub clients: u64,
    /// Connections refused: bad or missing token, no Foxglove subprotocol, too many clients.
    pub refused: u64,
    /// Messages sent to clients, all clients together.
    pub messages_sent: u64,
    /// Messages a client missed because it read slower than the run wrote and its queue was
    /// full (`viewer.client_queue_*`), all clients together.
    pub dropped_for_clients: u64,
}

/// The run record's queue of windows for its writer thread, over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordQueueSummary {
    /// Windows it holds before the run waits for the writer.
    pub capacity_windows: u64,
    /// The most windows it held at once (written after their window ended).
    pub most_queued: u64,
    /// Hand-overs (a batch of windows each) that had to wait because the queue was full, and
    /// for how long in all (s of wall time).
    pub waits: u64,
    pub waited_s: f64,
}

impl RunReport {
    /// `summary.json`'s text → [`RunReport`]; the error names the field
    /// (`network.links[2].captured: invalid type …`).
    pub fn parse(bytes: &[u8]) -> Result<RunReport, String> {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        serde_path_to_error::deserialize(de).map_err(|e| located(e.path(), e.inner()))
    }

    /// The record's `/summary` message → [`RunReport`]; the error names the field.
    pub fn from_value(value: serde_json::Value) -> Result<RunReport, String> {
        serde_path_to_error::deserialize(value).map_err(|e| located(e.path(), e.inner()))
    }

    /// Reads `summary.json`; the error names the file and the field.
    pub fn read(path: &std::path::Path) -> anyhow::Result<RunReport> {
        use anyhow::Context;
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        RunReport::parse(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// The JSON Schema of `summary.json` (`schema/summary.schema.json`), as text.
    pub fn schema_text() -> String {
        let mut text = serde_json::to_string_pretty(&schemars::schema_for!(RunReport))
            .expect("a derived JSON schema serializes");
        text.push('\n');
        text
    }
}

fn located(path: &serde_path_to_error::Path, e: &serde_json::Error) -> String {
    let path = path.to_string();
    if path.is_empty() || path == "." {
        e.to_string()
    } else {
        format!("{path}: {e}")
    }
}

/// What the run read of one program's metrics file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricsFileReport {
    pub program: String,
    pub file: PathBuf,
    /// Values written to the record's `/metrics`.
    pub samples: u64,
    /// Lines that are not metric lines (malformed JSON, a bad name, a value not finite, a line
    /// longer than the longest allowed).
    pub refused: u64,
    /// Metric lines beyond the most the run records of one program.
    pub dropped: u64,
    /// Bytes left unread at the end (beyond the most the run reads of one file).
    pub unread_bytes: u64,
    /// The first refused lines, as `<file>:<line>: <why>`.
    pub errors: Vec<String>,
}

/// What the modems did over a run, for the run summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModemReport {
    pub ledger: FrameLedgerSummary,
    pub bridges: BridgeStats,
    /// Every frame copy (written to `modem_ledger.jsonl`, not to the summary).
    #[serde(skip)]
    pub entries: Vec<FrameLedgerEntry>,
    /// How many of `entries` (the first ones) the coordinator already handed to the record
    /// (`ModemBridges::drain_frames`).
    #[serde(skip)]
    pub drained: usize,
}

/// Counters of the modem bridges.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeStats {
    pub connections: u64,
    pub refused: u64,
    pub lines_in: u64,
    pub lines_out: u64,
    /// Output lines with no client connected.
    pub dropped_no_client: u64,
    /// Output lines dropped because the client's queue was full.
    pub dropped_queue_full: u64,
    /// Host lines longer than the bridge's longest line.
    pub long_lines: u64,
    /// Passthrough connections whose far end could not be opened.
    pub passthrough_failures: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modem_ledger_fields_are_those_of_summary_json_in_its_order() {
        let mut l = FrameLedgerSummary {
            sent: 9,
            delivered: 1,
            out_of_range: 2,
            packet_error: 3,
            collision: 1,
            half_duplex: 1,
            no_receiver: 0,
            shutdown: 1,
            other: 0,
        };
        for other in [0, 4] {
            l.other = other;
            let json = serde_json::to_value(&l).unwrap();
            let keys: Vec<(&str, u64)> = json
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(l.fields(), keys);
        }
    }

    /// Where the committed schema lives, from the crate's root.
    const SCHEMA_FILE: &str = "schema/summary.schema.json";

    #[test]
    fn the_committed_schema_is_the_summary_types_schema() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_FILE);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let current = RunReport::schema_text();
        if std::env::var_os("COSIM_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &current).unwrap();
            return;
        }
        assert!(
            committed == current,
            "{SCHEMA_FILE} is not the schema of the summary types (output::summary::RunReport): \
             a field of summary.json was added, renamed, retyped or removed. If that is meant, \
             regenerate it with `COSIM_WRITE_SCHEMA=1 cargo test --lib output::summary` and \
             commit it (readers of summary.json elsewhere change with it)."
        );
    }
}
