//! The `network` section's types: live vehicle traffic (capture through TUN interfaces,
//! release, CRC, pcap, offload) and where the network coordinator meets its capture agents.

use schemars::JsonSchema;
use serde::Deserialize;

/// The network coordinator's live side: vehicle traffic captured from one TUN interface per
/// vehicle (each in its own network namespace) and released as the network simulator decides.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// `none` (default): no live traffic; `tun`: a namespace and TUN interface per vehicle.
    #[serde(default)]
    pub capture: Capture,
    /// A copy the simulator has neither released nor dropped after this many windows is
    /// dropped ("held too long"). Default 100.
    #[serde(default = "default_max_hold_windows")]
    pub max_hold_windows: u32,
    /// Packets waiting for the next window, at most (more are dropped, "queue full"). Default 4096.
    #[serde(default = "default_queue_limit")]
    pub queue_limit: usize,
    /// Links check a CRC: a packet with any flipped bit is dropped ("bit errors"). With
    /// `false` the corrupted bytes are delivered. Default true.
    #[serde(default = "default_true")]
    pub crc: bool,
    /// Write `<vehicle>.pcap` per vehicle (what it sent and what it received, sim timestamps).
    #[serde(default)]
    pub pcap: bool,
    /// Bytes of each packet kept in the pcap files (as `tcpdump -s`); the headers fit in 128.
    /// Default 262144 (whole packets).
    #[serde(default = "default_pcap_snaplen")]
    pub pcap_snaplen: u32,
    /// TUN segmentation offload (IFF_VNET_HDR): the kernel hands over TCP bursts of up to
    /// 64 KiB as one packet, which is much faster; per-packet link models then see fewer,
    /// larger packets. Default false (one entry per IP packet on the wire).
    #[serde(default)]
    pub offload: bool,
    /// The emulation error a run may add to its packets (ms, > 0): a live run whose p99
    /// (capture lag plus lateness of the write, per delivered copy) exceeds it ends with a
    /// warning naming it, the stage that ran long and the span of sim time affected. Default
    /// half a window.
    #[serde(default)]
    pub emulation_bound_ms: Option<f64>,
    /// Where the network coordinator meets the capture agents of the vehicles on other
    /// machines (`vehicles[].host`). Default: loopback only.
    #[serde(default)]
    pub agents: Agents,
}

/// The network coordinator's side of the capture agents (`network.agents`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    /// `ADDRESS:PORT` the network coordinator listens on for its agents (TCP). Default
    /// `127.0.0.1:5610`: set the address of the network that reaches the agents' machines.
    #[serde(default = "default_agents_bind")]
    pub bind: String,
    /// A file holding the run's secret (64 hex digits, readable by its owner only), made by
    /// `cosim agent-key`. Absent: every run makes a fresh one, `<out>/agent.key`.
    #[serde(default)]
    pub key_file: Option<String>,
    /// How long (ms, > 0) a window waits for every agent's report before the run ends with an
    /// error naming the agent. Default 2000.
    #[serde(default = "default_agents_timeout_ms")]
    pub timeout_ms: u64,
    /// How long (s, > 0) the run waits for every agent to join before window 0. Default 120.
    #[serde(default = "default_agents_join_timeout_s")]
    pub join_timeout_s: f64,
}

impl Default for Agents {
    fn default() -> Agents {
        Agents {
            bind: default_agents_bind(),
            key_file: None,
            timeout_ms: default_agents_timeout_ms(),
            join_timeout_s: default_agents_join_timeout_s(),
        }
    }
}

fn default_agents_bind() -> String {
    "127.0.0.1:5610".into()
}

fn default_agents_timeout_ms() -> u64 {
    2000
}

fn default_agents_join_timeout_s() -> f64 {
    120.0
}

/// Whether the vehicles' own traffic is captured.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Capture {
    /// No live traffic.
    #[default]
    None,
    /// A network namespace `ncs-<vehicle>` and a TUN interface per vehicle (needs root).
    Tun,
}

fn default_max_hold_windows() -> u32 {
    100
}
fn default_queue_limit() -> usize {
    4096
}
fn default_pcap_snaplen() -> u32 {
    crate::wire::pcap::SNAPLEN
}
pub(super) fn default_true() -> bool {
    true
}

impl Network {
    /// [`Self::emulation_bound_ms`] or its default, half of `window_ms`.
    pub fn emulation_bound_ms(&self, window_ms: f64) -> f64 {
        self.emulation_bound_ms.unwrap_or(window_ms / 2.0)
    }
}

impl Default for Network {
    fn default() -> Self {
        Network {
            capture: Capture::None,
            max_hold_windows: default_max_hold_windows(),
            queue_limit: default_queue_limit(),
            crc: true,
            pcap: false,
            pcap_snaplen: default_pcap_snaplen(),
            offload: false,
            emulation_bound_ms: None,
            agents: Agents::default(),
        }
    }
}
