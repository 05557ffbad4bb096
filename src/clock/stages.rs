//! Where a run's wall time goes, stage by stage: counters the coordinators and the live side add
//! to as they work (lock-free, a few nanoseconds each), reported in `summary.json` as `stages`.
//! Stages overlap — the physics simulator computes the next window beside the network side, and
//! capture and release run on tasks of their own — so they need not add up to the wall time.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One stage of a window's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The physics simulator's exchange: BEGIN sent to END in hand (beside the network side).
    Physics,
    /// Decoding and checking the physics END's ChannelData.
    Channel,
    /// The network coordinator's exchange with its simulator, encoding and decoding included.
    NetworkSim,
    /// The live side's window work: the BEGIN's captured packets in, the END's deliveries out.
    LiveWindow,
    /// The generated traffic's window work (`traffic.flows`): its senders, receivers and TCP
    /// stacks run to the window's start, its packets into the BEGIN, the END's deliveries back.
    Flows,
    /// The capture agents' part of a window: opening it on each agent and waiting for their
    /// reports (a round trip to the slowest).
    Agents,
    /// Reading packets from the vehicles' TUN interfaces and stamping them (and applying the
    /// agents' reports).
    Capture,
    /// Writing deliveries into the receivers' TUN interfaces.
    Release,
    /// The run record (windows, packets, modem frames), with the live side and the modem
    /// bridges handing it their packet copies and frames.
    Record,
    /// The run's other participants' window work (the ROS 2 layer, the programs, the NETSIM nav
    /// source, the progress bar or line).
    Observers,
    /// Waiting for the next window's due time on the paced schedule.
    Pacing,
}

/// How many stages there are.
pub const STAGE_COUNT: usize = 11;

const STAGES: [(Stage, &str); STAGE_COUNT] = [
    (Stage::Physics, "physics"),
    (Stage::Channel, "channel_decode"),
    (Stage::NetworkSim, "network_simulator"),
    (Stage::LiveWindow, "live_window"),
    (Stage::Flows, "traffic"),
    (Stage::Agents, "agents"),
    (Stage::Capture, "capture"),
    (Stage::Release, "release"),
    (Stage::Record, "record"),
    (Stage::Observers, "observers"),
    (Stage::Pacing, "pacing_wait"),
];

/// The counters, shared by everything that does a stage's work.
#[derive(Debug, Default)]
pub struct Stages {
    nanos: [AtomicU64; STAGES.len()],
}

/// A stage's total in a finished run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StageTime {
    pub seconds: f64,
    pub us_per_window: f64,
}

impl Stages {
    pub fn add(&self, stage: Stage, d: Duration) {
        let i = STAGES.iter().position(|(s, _)| *s == stage).unwrap_or(0);
        self.nanos[i].fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Adds the time since `since` to `stage`.
    pub fn since(&self, stage: Stage, since: Instant) {
        self.add(stage, since.elapsed());
    }

    /// Every stage's total so far, ns, in [`Self::names`]' order (to tell a window's share by
    /// difference).
    pub fn snapshot(&self) -> [u64; STAGE_COUNT] {
        std::array::from_fn(|i| self.nanos[i].load(Ordering::Relaxed))
    }

    /// The stages' names, in [`Self::snapshot`]'s order.
    pub fn names() -> [&'static str; STAGE_COUNT] {
        STAGES.map(|(_, name)| name)
    }

    /// Every stage's total and its mean per window over `windows`, by stage name.
    pub fn summary(&self, windows: u32) -> BTreeMap<String, StageTime> {
        STAGES
            .iter()
            .zip(&self.nanos)
            .map(|((_, name), n)| {
                let seconds = n.load(Ordering::Relaxed) as f64 / 1e9;
                (
                    (*name).to_owned(),
                    StageTime {
                        seconds,
                        us_per_window: seconds * 1e6 / f64::from(windows.max(1)),
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_sums_its_own_time() {
        let s = Stages::default();
        s.add(Stage::Capture, Duration::from_micros(300));
        s.add(Stage::Capture, Duration::from_micros(200));
        s.add(Stage::Pacing, Duration::from_millis(2));
        let m = s.summary(10);
        assert_eq!(m["capture"].seconds, 0.0005);
        assert_eq!(m["capture"].us_per_window, 50.0);
        assert_eq!(m["pacing_wait"].us_per_window, 200.0);
        assert_eq!(m["physics"].seconds, 0.0);
        assert_eq!(m["agents"].seconds, 0.0);
        assert_eq!(m["traffic"].seconds, 0.0);
        assert_eq!(m.len(), 11);
    }
}
