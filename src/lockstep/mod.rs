//! The lockstep window protocol (ROS-NetSim's Algorithm 1) and the transports that carry it.
//!
//! A coordinator drives a simulator through windows of W: it sends a BEGIN for window k and
//! waits for the simulator's END for the same k, then moves on. The same exchange links the
//! physics coordinator to the network coordinator. Every exchange goes through a [`Link`],
//! which names the peer in errors and holds one [`Transport`], one file per kind:
//!
//! - [`local`]: a [`Service`] (a request → response state machine) in this process, called
//!   directly — the all-in-one run;
//! - [`thread`]: a [`Service`] in this process on a thread of its own (the embedded physics
//!   simulator, so that it computes the next window on another core);
//! - [`zmq`]: a peer process reached over a ZeroMQ REQ socket (the peer binds a REP socket,
//!   see [`zmq::serve`]), on this host or a trusted network;
//! - [`rosnetsim`]: a ROS-NetSim simulator adapter reached with ROS-NetSim's own framing
//!   (length + gzip) over a Unix socket or TCP, its messages in ROS-NetSim's dialect;
//! - [`secure`]: our simulator process on another host, through the secure channel between
//!   hosts (which the capture agents' connections use too).
//!
//! A [`PeerEndpoint`] (a simulator process of either role, from the scenario or the command
//! line) picks the transport in one place, [`Link::connect`] (and [`serve`] on the peer side);
//! which simulator a coordinator links to is its role's choice (`crate::coord`'s
//! `physics_simulator` and `network_simulator`). All carry the same serialized protobuf
//! messages, so a run gives byte-identical results whichever transport carries it. A peer that
//! misses its END within the timeout, answers out of turn or disconnects ends the run with a
//! [`LinkError`] naming the peer and window.

pub mod local;
pub mod protocol;
pub mod rosnetsim;
pub mod secure;
pub mod thread;
mod transport;
pub mod zmq;

use crate::config::{PeerEndpoint, RosnetsimAddress};
use std::time::Duration;

pub use transport::{ready, Reply, Role, Service, Transport, TransportError};

/// Serves `service`, the `role` simulator, at `bind` (the peer side of [`Link::connect`])
/// until it has answered its last window, or nothing arrives for `idle`. A ZeroMQ or
/// ROS-NetSim TCP address that other hosts can reach is refused
/// ([`PeerEndpoint::exposed`]): those protocols authenticate no peer.
pub async fn serve(
    bind: &PeerEndpoint,
    role: Role,
    service: &mut dyn Service,
    idle: Duration,
) -> anyhow::Result<zmq::ServeEnd> {
    if let Some(why) = bind.exposed() {
        anyhow::bail!("{why}");
    }
    match bind {
        PeerEndpoint::Zeromq(endpoint) => zmq::serve(endpoint.as_str(), service, idle).await,
        PeerEndpoint::Rosnetsim(address) => rosnetsim::serve(address, role, service, idle).await,
        PeerEndpoint::Secure(address) => secure::serve(address, service, idle).await,
    }
}

/// Why an exchange with a peer failed. Each names the peer and the window.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("{peer} did not answer window {window} within {timeout_ms} ms")]
    Timeout {
        peer: String,
        window: u32,
        timeout_ms: u128,
    },
    #[error("{peer} disconnected during window {window}")]
    Disconnected { peer: String, window: u32 },
    #[error("{peer} failed in window {window}: {reason}")]
    Failed {
        peer: String,
        window: u32,
        reason: String,
    },
    #[error("{peer} broke the window protocol in window {window}: {reason}")]
    Protocol {
        peer: String,
        window: u32,
        reason: String,
    },
}

impl LinkError {
    /// `peer` could not be reached before window 0.
    fn cannot_connect(peer: &str, e: impl std::fmt::Display) -> LinkError {
        LinkError::Failed {
            peer: peer.to_owned(),
            window: 0,
            reason: format!("cannot connect: {e}"),
        }
    }
}

/// A coordinator's connection to one peer: a [`Transport`], named for errors.
pub struct Link {
    peer: String,
    timeout: Duration,
    transport: Box<dyn Transport>,
}

impl Link {
    /// A peer in this process.
    pub fn local(peer: impl Into<String>, service: Box<dyn Service>) -> Link {
        Link {
            peer: peer.into(),
            timeout: Duration::MAX,
            transport: Box::new(local::Local::new(service)),
        }
    }

    /// A peer in this process on a thread of its own ([`thread::Thread`]), which first runs
    /// `on_start`.
    pub fn threaded(
        peer: impl Into<String>,
        service: Box<dyn Service>,
        on_start: fn(),
    ) -> std::io::Result<Link> {
        let peer = peer.into();
        Ok(Link {
            transport: Box::new(thread::Thread::spawn(&peer, service, on_start)?),
            peer,
            timeout: Duration::MAX,
        })
    }

    /// A peer reached through `transport`, named `peer` in errors; each exchange waits at most
    /// `timeout` unless told otherwise.
    pub fn new(peer: impl Into<String>, timeout: Duration, transport: Box<dyn Transport>) -> Link {
        Link {
            peer: peer.into(),
            timeout,
            transport,
        }
    }

    /// The `role` simulator process at `endpoint`, reached by the transport its variant names,
    /// named `peer` in errors (with the endpoint). Waits up to `connect_timeout` for the peer to
    /// accept.
    pub async fn connect(
        peer: &str,
        role: Role,
        endpoint: &PeerEndpoint,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Link, LinkError> {
        match endpoint {
            PeerEndpoint::Zeromq(endpoint) => {
                Link::zeromq(peer, endpoint.as_str(), timeout, connect_timeout).await
            }
            PeerEndpoint::Rosnetsim(address) => {
                Link::rosnetsim(peer, role, address, timeout, connect_timeout).await
            }
            PeerEndpoint::Secure(address) => {
                let peer = format!("{peer} at {address}");
                let client = secure::Client::connect_within(address, connect_timeout)
                    .await
                    .map_err(|e| LinkError::cannot_connect(&peer, format!("{e:#}")))?;
                Ok(Link::new(peer, timeout, Box::new(client)))
            }
        }
    }

    /// A peer bound at a ZeroMQ endpoint (`tcp://host:port`, `ipc://path`).
    /// Waits up to `connect_timeout` for the peer to accept the connection.
    pub async fn zeromq(
        peer: impl Into<String>,
        endpoint: &str,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Link, LinkError> {
        let peer = format!("{} at {endpoint}", peer.into());
        let client = zmq::Client::connect_within(endpoint, connect_timeout)
            .await
            .map_err(|e| LinkError::cannot_connect(&peer, e))?;
        Ok(Link {
            peer,
            timeout,
            transport: Box::new(client),
        })
    }

    /// A ROS-NetSim `role` simulator listening at `address` (`unix:/path` or
    /// `tcp:host:port`). Waits up to `connect_timeout` for it to accept.
    pub async fn rosnetsim(
        peer: impl Into<String>,
        role: Role,
        address: &RosnetsimAddress,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Link, LinkError> {
        let peer = format!("{} at {address}", peer.into());
        let client = rosnetsim::Client::connect_within(address, role, connect_timeout)
            .await
            .map_err(|e| LinkError::cannot_connect(&peer, e))?;
        Ok(Link {
            peer,
            timeout,
            transport: Box::new(client),
        })
    }

    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Sends `request` for `window` and waits for the answer, at most the timeout
    /// (`timeout` overrides it, e.g. for a first window that waits for a peer to start).
    pub async fn exchange(
        &mut self,
        window: u32,
        request: Vec<u8>,
        timeout: Option<Duration>,
    ) -> Result<Vec<u8>, LinkError> {
        let timeout = timeout.unwrap_or(self.timeout);
        let peer = || self.peer.clone();
        match self.transport.exchange(request, timeout).await {
            Ok(reply) => Ok(reply),
            Err(TransportError::Timeout(t)) => Err(LinkError::Timeout {
                peer: peer(),
                window,
                timeout_ms: t.as_millis(),
            }),
            Err(TransportError::Disconnected) => Err(LinkError::Disconnected {
                peer: peer(),
                window,
            }),
            Err(TransportError::Failed(reason)) => Err(LinkError::Failed {
                peer: peer(),
                window,
                reason,
            }),
        }
    }

    /// A protocol error attributed to this link's peer.
    pub fn protocol_error(&self, window: u32, reason: impl Into<String>) -> LinkError {
        LinkError::Protocol {
            peer: self.peer.clone(),
            window,
            reason: reason.into(),
        }
    }
}
