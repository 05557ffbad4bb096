//! What the embedded network simulator's 802.11 media did over a run, per medium and link: the
//! counters it keeps current window by window ([`SharedAir`], only the links that changed are
//! copied) and their summary for `summary.json`'s `air` and the report ([`AirSummary`]).

use crate::config::WifiStandard;
use crate::model::wifi_medium::{LinkAir, WifiMedium};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// The media's counters, shared between the network simulator (which writes them after each
/// window) and whoever reports them at the run's end.
pub type SharedAir = Arc<Mutex<AirCounters>>;

/// Every 802.11 medium's counters, with the vehicles' names.
#[derive(Debug, Clone, Default)]
pub struct AirCounters {
    names: Vec<String>,
    media: Vec<MediumCounters>,
}

/// One medium's counters: `links[s * n + r]` as [`WifiMedium::link`] gives them.
#[derive(Debug, Clone)]
struct MediumCounters {
    standard: WifiStandard,
    channel: u16,
    links: Vec<LinkAir>,
    busy_ns: u64,
    now_ns: u64,
}

impl AirCounters {
    /// Counters for the vehicles `names` and no medium yet.
    pub fn new(names: Vec<String>) -> AirCounters {
        AirCounters {
            names,
            media: Vec::new(),
        }
    }

    /// Adds the medium of `standard` and `channel` (the `x`-th added is the network
    /// simulator's `x`-th medium).
    pub fn add_medium(&mut self, standard: WifiStandard, channel: u16) {
        let n = self.names.len();
        self.media.push(MediumCounters {
            standard,
            channel,
            links: vec![LinkAir::default(); n * n],
            busy_ns: 0,
            now_ns: 0,
        });
    }

    /// Takes what changed in `medium`, the `x`-th.
    pub fn update<T: Clone>(&mut self, x: usize, medium: &mut WifiMedium<T>) {
        let n = self.names.len();
        let Some(m) = self.media.get_mut(x) else {
            return;
        };
        medium.take_changed(|s, r, l| {
            if let Some(slot) = m.links.get_mut(s * n + r) {
                *slot = *l;
            }
        });
        m.busy_ns = medium.stats().busy_ns;
        m.now_ns = medium.now();
    }

    /// Each medium's summary, its links in (sender, receiver) order, only those that carried
    /// anything.
    pub fn summary(&self) -> Vec<AirSummary> {
        let n = self.names.len();
        self.media
            .iter()
            .map(|m| {
                let share = |ns: u64| match m.now_ns {
                    0 => 0.0,
                    now => ns as f64 / now as f64,
                };
                let links = (0..n * n)
                    .filter(|&i| m.links[i].attempts > 0)
                    .map(|i| {
                        let (s, r, l) = (i / n, i % n, &m.links[i]);
                        AirLinkSummary {
                            src: self.names[s].clone(),
                            dst: (r != s).then(|| self.names[r].clone()),
                            frames: l.frames,
                            attempts: l.attempts,
                            retries: l.retries,
                            collided: l.collided,
                            retry_limit: l.retry_limit,
                            airtime_share: share(l.airtime_ns),
                            mean_service_ms: (l.frames > 0)
                                .then(|| l.service_ns as f64 / l.frames as f64 / 1e6),
                        }
                    })
                    .collect();
                AirSummary {
                    standard: m.standard.name().to_string(),
                    channel: m.channel,
                    busy_share: share(m.busy_ns),
                    links,
                }
            })
            .collect()
    }
}

/// One 802.11 medium over a run (`summary.json`'s `air`): the links with `mac` on one
/// standard and channel share it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AirSummary {
    /// The standard, as `links.*.mac` names it (`80211a`, …).
    pub standard: String,
    pub channel: u16,
    /// Share of the run's time with at least one transmission (data or ACK) on the air.
    pub busy_share: f64,
    /// The links that put a frame on the air, in (sender, receiver) order.
    pub links: Vec<AirLinkSummary>,
}

/// One link on an 802.11 medium over a run: how many attempts its frames took and what the
/// contention cost them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AirLinkSummary {
    pub src: String,
    /// Absent: the sender's group-addressed frames (sent once, unacknowledged).
    pub dst: Option<String>,
    /// Frames done with: received, or dropped after their last attempt.
    pub frames: u64,
    /// Data frames put on the air, first attempts and retries; the retries among them.
    pub attempts: u64,
    pub retries: u64,
    /// Attempts lost while another transmission overlapped them at the receiver, the
    /// receiver's own included.
    pub collided: u64,
    /// Frames dropped after their last attempt (the ledger's `retry limit`, or `out of
    /// range` where the link was).
    pub retry_limit: u64,
    /// Share of the run's time its data frames were on the air, every attempt.
    pub airtime_share: f64,
    /// Mean MAC service time of its frames: from the head of the sender's queue to the end of
    /// the exchange (deferral, backoff, every attempt and its ACK or wait), ms.
    pub mean_service_ms: Option<f64>,
}
