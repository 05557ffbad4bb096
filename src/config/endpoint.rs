//! Where a simulator lives, parsed once: the scenario's `simulators.physics`/`.network` and the
//! command line's `--physics-sim`/`--network-sim`/`--bind` become a [`SimulatorEndpoint`].
//!
//! The enum is the one place that names the transports: a coordinator picks its link from the
//! variant, and a served simulator picks how to listen the same way.
//!
//! Text forms ([`SimulatorEndpoint::from_str`], for the command line): `embedded`; a ZeroMQ
//! endpoint `tcp://host:port` or `ipc://path`; a ROS-NetSim address `unix:/path` or
//! `tcp:host:port` (without `//`). In a scenario file the kind is explicit:
//! `{kind: zeromq, endpoint: tcp://…}`, `{kind: rosnetsim, address: unix:/…}`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::Deserialize;

/// Where a simulator lives.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SimulatorEndpoint {
    /// Ours, inside the coordinator's process.
    #[default]
    Embedded,
    /// Another process (ours or a third party's) reached over ZeroMQ; the simulator binds,
    /// the coordinator connects, e.g. `tcp://127.0.0.1:5601`.
    Zeromq { endpoint: ZmqEndpoint },
    /// A ROS-NetSim simulator adapter, unchanged: ROS-NetSim's framing (4-byte big-endian
    /// length + gzip of the message) over a Unix socket or TCP; the simulator listens, the
    /// coordinator connects: `unix:/tmp/net_server_socket` or `tcp:127.0.0.1:10000`.
    Rosnetsim { address: RosnetsimAddress },
}

impl FromStr for SimulatorEndpoint {
    type Err = String;

    /// `embedded`, a ZeroMQ endpoint (`tcp://…`, `ipc://…`) or a ROS-NetSim address
    /// (`unix:/path`, `tcp:host:port`).
    fn from_str(s: &str) -> Result<SimulatorEndpoint, String> {
        if s == "embedded" {
            return Ok(SimulatorEndpoint::Embedded);
        }
        if s.starts_with("tcp://") || s.starts_with("ipc://") {
            return s.parse().map(|endpoint| SimulatorEndpoint::Zeromq { endpoint });
        }
        if s.starts_with("unix:") || s.starts_with("tcp:") {
            return s.parse().map(|address| SimulatorEndpoint::Rosnetsim { address });
        }
        Err(format!(
            "{s:?} is not a simulator endpoint: `embedded`, a ZeroMQ endpoint (tcp://host:port, ipc://path) \
             or a ROS-NetSim address (unix:/path, tcp:host:port)"
        ))
    }
}

impl fmt::Display for SimulatorEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimulatorEndpoint::Embedded => f.write_str("embedded"),
            SimulatorEndpoint::Zeromq { endpoint } => endpoint.fmt(f),
            SimulatorEndpoint::Rosnetsim { address } => address.fmt(f),
        }
    }
}

/// A ZeroMQ endpoint a coordinator connects to or a simulator binds: `tcp://…` or `ipc://…`
/// (the rest is the ZeroMQ library's to interpret).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct ZmqEndpoint(String);

impl ZmqEndpoint {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ZmqEndpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<ZmqEndpoint, String> {
        if s.starts_with("tcp://") || s.starts_with("ipc://") {
            Ok(ZmqEndpoint(s.to_owned()))
        } else {
            Err(format!("{s:?} must start with tcp:// or ipc://"))
        }
    }
}

impl TryFrom<String> for ZmqEndpoint {
    type Error = String;

    fn try_from(s: String) -> Result<ZmqEndpoint, String> {
        s.parse()
    }
}

impl fmt::Display for ZmqEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a ROS-NetSim peer listens: `unix:/path` or `tcp:host:port` (`tcp://host:port` is
/// accepted too). Displayed as `unix:/path` or `tcp:host:port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String")]
pub enum RosnetsimAddress {
    Unix(PathBuf),
    /// `host:port`, resolved when connecting or binding.
    Tcp(String),
}

impl FromStr for RosnetsimAddress {
    type Err = String;

    fn from_str(s: &str) -> Result<RosnetsimAddress, String> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("{s:?}: a Unix socket address needs a path, e.g. unix:/tmp/net_server_socket"));
            }
            return Ok(RosnetsimAddress::Unix(PathBuf::from(path)));
        }
        if let Some(hp) = s.strip_prefix("tcp:") {
            let hp = hp.trim_start_matches("//");
            return match hp.rsplit_once(':') {
                Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
                    Ok(RosnetsimAddress::Tcp(hp.to_owned()))
                }
                _ => Err(format!("{s:?}: expected tcp:host:port, e.g. tcp:127.0.0.1:10000")),
            };
        }
        Err(format!("{s:?} must start with unix: or tcp: (unix:/path or tcp:host:port)"))
    }
}

impl TryFrom<String> for RosnetsimAddress {
    type Error = String;

    fn try_from(s: String) -> Result<RosnetsimAddress, String> {
        s.parse()
    }
}

impl fmt::Display for RosnetsimAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RosnetsimAddress::Unix(p) => write!(f, "unix:{}", p.display()),
            RosnetsimAddress::Tcp(hp) => write!(f, "tcp:{hp}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rosnetsim_addresses() {
        let parse = |s: &str| s.parse::<RosnetsimAddress>();
        assert_eq!(parse("unix:/tmp/x").unwrap(), RosnetsimAddress::Unix("/tmp/x".into()));
        assert_eq!(parse("tcp:127.0.0.1:10000").unwrap(), RosnetsimAddress::Tcp("127.0.0.1:10000".into()));
        assert_eq!(parse("tcp://[::1]:5").unwrap(), RosnetsimAddress::Tcp("[::1]:5".into()));
        assert_eq!(parse("tcp://[::1]:5").unwrap().to_string(), "tcp:[::1]:5");
        assert_eq!(parse("unix:/tmp/x").unwrap().to_string(), "unix:/tmp/x");
        for bad in ["unix:", "tcp:host", "tcp::5", "tcp:h:0", "tcp:h:99999", "ipc:///x", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn command_line_forms_name_each_transport() {
        let parse = |s: &str| s.parse::<SimulatorEndpoint>();
        assert_eq!(parse("embedded").unwrap(), SimulatorEndpoint::Embedded);
        for zmq in ["tcp://127.0.0.1:5601", "tcp://*:5601", "ipc:///tmp/p"] {
            let e = parse(zmq).unwrap();
            assert_eq!(e, SimulatorEndpoint::Zeromq { endpoint: ZmqEndpoint(zmq.into()) });
            assert_eq!(e.to_string(), zmq);
        }
        assert_eq!(
            parse("unix:/tmp/net_server_socket").unwrap(),
            SimulatorEndpoint::Rosnetsim { address: RosnetsimAddress::Unix("/tmp/net_server_socket".into()) }
        );
        assert_eq!(parse("tcp:127.0.0.1:10000").unwrap(), SimulatorEndpoint::Rosnetsim { address: RosnetsimAddress::Tcp("127.0.0.1:10000".into()) });
        for bad in ["", "Embedded", "udp://1.2.3.4:5", "tcp:host", "unix:", "127.0.0.1:5601"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!("udp://x".parse::<ZmqEndpoint>().unwrap_err().contains("must start with tcp:// or ipc://"));
    }
}
