//! What a finished (or interrupted) run reports (`summary.json`, the record's `/summary`).

use crate::io::modem_bridge::ModemReport;
use crate::net::ledger::LedgerSummary;
use crate::output::{schema::ProgramRecord, stages::StageTime, PairSummary};
use std::{collections::BTreeMap, path::PathBuf};

/// What a finished (or interrupted) run reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    pub scenario: String,
    pub windows: u32,
    pub window_ms: f64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
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
    /// The ledger of live vehicle traffic (`network.capture: tun` with an in-process network
    /// coordinator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<LedgerSummary>,
    /// The emulated modems' frame ledger and bridge counters (scenarios with `acoustic_modems`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modems: Option<ModemReport>,
    /// The scenario's programs: when each started and ended, and how (scenario order).
    pub programs: Vec<ProgramRecord>,
    /// Where the wall time went, per stage (in this process; see [`Stages`]).
    pub stages: BTreeMap<&'static str, StageTime>,
}
