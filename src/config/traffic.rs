//! The `traffic` section's types: flows the run generates itself between vehicles, in
//! simulated time, carried by the network simulator like live packets (`net::flows`).

use schemars::JsonSchema;
use serde::Deserialize;

/// Traffic without programs: flows between vehicles, sent and received in simulated time at
/// any real-time factor, beside live programs or without them.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    /// The flows, each named. Default none.
    #[serde(default)]
    pub flows: Vec<Flow>,
}

/// One flow: what `from` sends to `to`, from `start_s` until `stop_s`.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Names the flow in the report: letters, digits, `_` and `-`, unique. Required.
    pub name: String,
    /// The sending vehicle. Required.
    pub from: String,
    /// The receiving vehicle (not the sender); required but for `heartbeat`, which goes to
    /// every other vehicle.
    #[serde(default)]
    pub to: Option<String>,
    /// When it starts sending, seconds of sim time (≥ 0, before the end). Default 0.
    #[serde(default)]
    pub start_s: f64,
    /// When it stops sending, seconds of sim time (after `start_s`); absent: at the end.
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// What it sends (`kind`). Required.
    pub send: FlowKind,
}

/// What a flow sends (`kind`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowKind {
    /// UDP datagrams of `size_bytes` at `rate_kbps` on average, spaced as `pattern` says.
    Udp {
        /// Mean offered rate, kbit/s of UDP payload (> 0). Required.
        rate_kbps: f64,
        /// UDP payload bytes of each datagram, 16 to 1472 (one IPv4 packet on a 1500-byte
        /// MTU; the first 16 bytes carry the flow's sequence number and send time). Default 1000.
        #[serde(default = "default_size_bytes")]
        size_bytes: u32,
        /// How datagrams are spaced. Default `constant`.
        #[serde(default)]
        pattern: Pattern,
        /// Destination UDP port. Default 5000.
        #[serde(default = "default_udp_port")]
        port: u16,
    },
    /// ICMP echo requests every `interval_s`, answered by the receiver as a kernel would.
    Ping {
        /// Between requests, seconds (> 0). Default 1.
        #[serde(default = "default_interval")]
        interval_s: f64,
        /// ICMP payload bytes, 16 to 1472 (as `ping -s`). Default 56.
        #[serde(default = "default_ping_bytes")]
        size_bytes: u32,
    },
    /// A UDP datagram to a multicast group every `interval_s`, received by every other
    /// vehicle: DDS discovery's participant announcements (SPDP) are such a heartbeat.
    Heartbeat {
        /// Between datagrams, seconds (> 0). Default 1.
        #[serde(default = "default_interval")]
        interval_s: f64,
        /// UDP payload bytes, 16 to 1472. Default 300 (about an SPDP announcement).
        #[serde(default = "default_heartbeat_bytes")]
        size_bytes: u32,
        /// The IPv4 multicast group. Default 239.255.0.1 (DDS's default group).
        #[serde(default = "default_group")]
        group: std::net::Ipv4Addr,
        /// Destination UDP port. Default 7400 (DDS domain 0's discovery port).
        #[serde(default = "default_heartbeat_port")]
        port: u16,
    },
    /// A TCP bulk transfer through a TCP/IP stack running in sim time (CUBIC congestion
    /// control, 1460-byte segments): `bytes` bytes, or as much as the link carries until the
    /// flow stops.
    Tcp {
        /// Bytes to transfer; absent: without end.
        #[serde(default)]
        bytes: Option<u64>,
        /// Destination TCP port. Default 5201.
        #[serde(default = "default_tcp_port")]
        port: u16,
        /// Each end's send and receive buffer, which bound the window (as `SO_SNDBUF` and
        /// `SO_RCVBUF` do), bytes: 4096 to 4 MiB. Default 65536.
        #[serde(default = "default_buffer_bytes")]
        buffer_bytes: u32,
    },
    /// Requests and responses over one TCP connection (a service call, an HTTP GET, a
    /// parameter fetch): from the start, `from` issues a request of `request_bytes` every
    /// `interval_s`, whether or not the last was answered (they queue on the connection), and
    /// `to` answers each with `response_bytes`. The report gives each exchange's time, from the
    /// request issued to its response's last byte read.
    Request {
        /// Between requests, seconds (> 0). Default 1.
        #[serde(default = "default_interval")]
        interval_s: f64,
        /// Bytes of each request, 1 to 64 MiB. Default 100.
        #[serde(default = "default_request_bytes")]
        request_bytes: u32,
        /// Bytes of each response, 1 to 64 MiB. Default 10000.
        #[serde(default = "default_response_bytes")]
        response_bytes: u32,
        /// Destination TCP port. Default 8080.
        #[serde(default = "default_request_port")]
        port: u16,
        /// Each end's send and receive buffer, bytes: 4096 to 4 MiB. Default 65536.
        #[serde(default = "default_buffer_bytes")]
        buffer_bytes: u32,
    },
}

/// How a UDP flow's datagrams are spaced in time.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Pattern {
    /// Evenly.
    #[default]
    Constant,
    /// Exponential gaps (a Poisson process), drawn from the flow's own random stream.
    Poisson,
    /// Evenly at `rate_kbps × (on_s + off_s) / on_s` for `on_s`, then silent for `off_s`.
    OnOff {
        /// Seconds of sending in each period (> 0).
        on_s: f64,
        /// Seconds of silence in each period (> 0).
        off_s: f64,
    },
}

fn default_size_bytes() -> u32 {
    1000
}
fn default_udp_port() -> u16 {
    5000
}
fn default_interval() -> f64 {
    1.0
}
fn default_ping_bytes() -> u32 {
    56
}
fn default_heartbeat_bytes() -> u32 {
    300
}
fn default_group() -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(239, 255, 0, 1)
}
fn default_heartbeat_port() -> u16 {
    7400
}
fn default_tcp_port() -> u16 {
    5201
}
fn default_buffer_bytes() -> u32 {
    65536
}
fn default_request_bytes() -> u32 {
    100
}
fn default_response_bytes() -> u32 {
    10_000
}
fn default_request_port() -> u16 {
    8080
}

impl FlowKind {
    /// The kind's name, as written in `kind`.
    pub fn name(&self) -> &'static str {
        match self {
            FlowKind::Udp { .. } => "udp",
            FlowKind::Ping { .. } => "ping",
            FlowKind::Heartbeat { .. } => "heartbeat",
            FlowKind::Tcp { .. } => "tcp",
            FlowKind::Request { .. } => "request",
        }
    }
}
