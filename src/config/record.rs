//! The `record` and `viewer` sections' types: what the run record samples, and the live
//! view that serves the record's channels while the run goes.

use schemars::JsonSchema;
use serde::Deserialize;

use super::network::default_true;

/// The run record's sampling. Intervals are sim time; one shorter than the window W means
/// every window.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecordSettings {
    /// Every vehicle's position is written this often (`/poses`). Default 0.1 s.
    #[serde(default = "default_pose_interval")]
    pub pose_interval_s: f64,
    /// Every pair's channel geometry is written this often (`/channel`), and a pair's at every
    /// LOS/NLOS change. Default 1 s.
    #[serde(default = "default_channel_interval")]
    pub channel_interval_s: f64,
    /// Also write `timeline.jsonl`: one line per pair per window (large). Default false.
    #[serde(default)]
    pub timeline_jsonl: bool,
    /// Write the 3D scene (`/scene/*`, `/tf`, `/events`) for Foxglove-compatible viewers.
    /// Default true.
    #[serde(default = "default_true")]
    pub scene: bool,
}

fn default_pose_interval() -> f64 {
    0.1
}
fn default_channel_interval() -> f64 {
    1.0
}

impl Default for RecordSettings {
    fn default() -> Self {
        RecordSettings {
            pose_interval_s: default_pose_interval(),
            channel_interval_s: default_channel_interval(),
            timeline_jsonl: false,
            scene: true,
        }
    }
}

/// The live viewer server: what it listens on and how much it holds for each client.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ViewerSettings {
    /// Serve the run live over the Foxglove WebSocket protocol. Default false.
    #[serde(default)]
    pub live: bool,
    /// Where (`HOST:PORT`). Default `127.0.0.1:8765`; on any other than a loopback address a
    /// client must give the token the run prints (`ws://HOST:PORT/?token=…`).
    #[serde(default = "default_viewer_address")]
    pub address: String,
    /// Messages held for one client that reads slower than the run writes; beyond them a
    /// client's messages are dropped and counted. Default 4096.
    #[serde(default = "default_client_queue_messages")]
    pub client_queue_messages: usize,
    /// Bytes held for one client, likewise. Default 64 MiB.
    #[serde(default = "default_client_queue_bytes")]
    pub client_queue_bytes: usize,
    /// Clients served at once; more are refused. Default 8.
    #[serde(default = "default_viewer_clients")]
    pub max_clients: usize,
}

fn default_viewer_address() -> String {
    "127.0.0.1:8765".into()
}
fn default_client_queue_messages() -> usize {
    4096
}
fn default_client_queue_bytes() -> usize {
    64 << 20
}
fn default_viewer_clients() -> usize {
    8
}

impl Default for ViewerSettings {
    fn default() -> Self {
        ViewerSettings {
            live: false,
            address: default_viewer_address(),
            client_queue_messages: default_client_queue_messages(),
            client_queue_bytes: default_client_queue_bytes(),
            max_clients: default_viewer_clients(),
        }
    }
}
