//! The modem frame ledger: one entry per frame copy sent to an addressed receiver, ending in one
//! [`Fate`] of the shared vocabulary ([`crate::model::fate`]), and its totals for the run
//! summary.

use serde::{Deserialize, Serialize};

use crate::model::fate::{DropReason, Fate};

/// Kind of transmission a ledger entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    Data,
    Ping,
    PingReply,
    Mini,
    Ack,
}

impl TxKind {
    /// Its serialized name: `data`, `ping`, `ping_reply`, `mini`, `ack`.
    pub fn label(self) -> &'static str {
        match self {
            TxKind::Data => "data",
            TxKind::Ping => "ping",
            TxKind::PingReply => "ping_reply",
            TxKind::Mini => "mini",
            TxKind::Ack => "ack",
        }
    }
}

/// One frame copy: who sent it to whom, when, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameLedgerEntry {
    pub tx: u64,
    pub kind: TxKind,
    /// Frame number (from 1; 1 for non-data packets).
    pub frame: u8,
    /// Modem indices (configuration order) and acoustic addresses.
    pub from: usize,
    pub to: Option<usize>,
    pub src: u8,
    pub dest: u8,
    pub rate: u8,
    pub bytes: usize,
    pub sent_ns: u64,
    pub decided_ns: u64,
    /// In-band SNR at the receiver (absent when unknown, e.g. no geometry yet).
    pub snr_db: Option<f64>,
    pub fate: Fate,
}

/// Frame ledger totals for the run summary: `sent` = the sum of the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameLedgerSummary {
    pub sent: u64,
    pub delivered: u64,
    pub out_of_range: u64,
    pub packet_error: u64,
    pub collision: u64,
    pub half_duplex: u64,
    pub no_receiver: u64,
    pub shutdown: u64,
    /// Reasons the modems never give (kept so that `sent` always balances; left out when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl FrameLedgerSummary {
    /// Frames with an outcome, whatever it was (equal to `sent` in a balanced ledger).
    pub fn ended(&self) -> u64 {
        self.delivered
            + self.out_of_range
            + self.packet_error
            + self.collision
            + self.half_duplex
            + self.no_receiver
            + self.shutdown
            + self.other
    }

    /// Every figure by its field name, in name order (`other` only when not 0, as
    /// `summary.json` has them).
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        let mut f = vec![
            ("collision", self.collision),
            ("delivered", self.delivered),
            ("half_duplex", self.half_duplex),
            ("no_receiver", self.no_receiver),
            ("other", self.other),
            ("out_of_range", self.out_of_range),
            ("packet_error", self.packet_error),
            ("sent", self.sent),
            ("shutdown", self.shutdown),
        ];
        f.retain(|(k, n)| *k != "other" || *n != 0);
        f
    }

    pub fn of(entries: &[FrameLedgerEntry]) -> FrameLedgerSummary {
        let mut s = FrameLedgerSummary::default();
        for e in entries {
            s.sent += 1;
            *match e.fate {
                Fate::Delivered => &mut s.delivered,
                Fate::Dropped(DropReason::OutOfRange) => &mut s.out_of_range,
                Fate::Dropped(DropReason::PacketError) => &mut s.packet_error,
                Fate::Dropped(DropReason::Collision) => &mut s.collision,
                Fate::Dropped(DropReason::HalfDuplex) => &mut s.half_duplex,
                Fate::Dropped(DropReason::NoReceiver) => &mut s.no_receiver,
                Fate::Dropped(DropReason::Shutdown) => &mut s.shutdown,
                Fate::Dropped(_) => &mut s.other,
            } += 1;
        }
        s
    }
}
