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
    /// Where (`HOST:PORT`). Default `127.0.0.1:8765`; on any other than a loopback address the
    /// viewer serves over TLS (`tls`, required there) and a client must give the token the run
    /// prints (`wss://HOST:PORT/?token=…`).
    #[serde(default = "default_viewer_address")]
    pub address: String,
    /// TLS for the viewer (`wss://`): a certificate chain and its private key, PEM files
    /// relative to the scenario's folder (`cosim viewer-cert DIR` makes a self-signed pair).
    /// Required on an address other than loopback; absent: plain `ws://`.
    #[serde(default)]
    pub tls: Option<ViewerTls>,
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

/// The viewer's certificate chain and private key (PEM).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ViewerTls {
    /// The certificate chain, leaf first (PEM `CERTIFICATE` blocks).
    pub cert_file: std::path::PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1), readable by its owner only.
    pub key_file: std::path::PathBuf,
}

impl ViewerSettings {
    /// Why serving the viewer at `address` would show the run (and its token) to other hosts in
    /// the clear: an address that is not loopback without `tls`; `None` if it may.
    pub fn exposed(&self) -> Option<String> {
        let ip: std::net::IpAddr = self
            .address
            .rsplit_once(':')
            .map(|(h, _)| h.trim_start_matches('[').trim_end_matches(']'))?
            .parse()
            .ok()?;
        (self.tls.is_none() && !ip.is_loopback()).then(|| {
            format!(
                "the live viewer on {} is reachable from other hosts and would send the run and its token in the clear: \
                 give it a certificate (viewer.tls: {{cert_file: viewer.crt, key_file: viewer.key}}; \
                 `cosim viewer-cert DIR --host NAME` makes a self-signed pair), or keep it on loopback and view \
                 through `ssh -L 8765:127.0.0.1:8765`",
                self.address
            )
        })
    }
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
            tls: None,
            client_queue_messages: default_client_queue_messages(),
            client_queue_bytes: default_client_queue_bytes(),
            max_clients: default_viewer_clients(),
        }
    }
}
