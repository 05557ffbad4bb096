//! The lockstep window protocol (ROS-NetSim's Algorithm 1) and its transports.
//!
//! A coordinator drives a simulator through windows of W: it sends a BEGIN for window k and
//! waits for the simulator's END for the same k, then moves on. The same exchange links the
//! physics coordinator to the network coordinator. Every exchange goes through a [`Link`]:
//!
//! - [`Link::local`]: a [`Service`] (a request → response state machine) in this process,
//!   called directly — the all-in-one run;
//! - [`Link::zeromq`]: a peer process reached over a ZeroMQ REQ socket (the peer binds a REP
//!   socket, see [`zmq::serve`]), possibly on another host;
//! - [`Link::rosnetsim`]: a ROS-NetSim simulator adapter reached with ROS-NetSim's own framing
//!   (length + gzip) over a Unix socket or TCP ([`rosnetsim`]).
//!
//! Both carry the same serialized protobuf messages, so a run gives byte-identical results
//! whichever transport carries it. A peer that misses its END within the timeout, answers
//! out of turn or disconnects ends the run with a [`LinkError`] naming the peer and window.

pub mod protocol;
pub mod rosnetsim;
pub mod zmq;

use std::{future::Future, pin::Pin, time::Duration};

/// Sim time in integer nanoseconds.
pub type SimNanos = u64;

/// The windows of a run: window k covers `[k·W, (k+1)·W)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub window_ns: SimNanos,
    pub windows: u32,
}

impl Schedule {
    /// W in milliseconds (rounded to whole nanoseconds) and a duration covered by whole windows.
    pub fn new(window_ms: f64, duration_s: f64) -> Schedule {
        let window_ns = ((window_ms * 1e6).round() as u64).max(1);
        let duration_ns = (duration_s * 1e9).round() as u64;
        let windows = duration_ns.div_ceil(window_ns).clamp(1, u32::MAX as u64) as u32;
        Schedule { window_ns, windows }
    }

    pub fn start_ns(&self, window: u32) -> SimNanos {
        window as u64 * self.window_ns
    }

    pub fn window_s(&self) -> f64 {
        self.window_ns as f64 / 1e9
    }

    pub fn duration_ns(&self) -> SimNanos {
        self.start_ns(self.windows)
    }
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    #[test]
    fn whole_windows_cover_the_duration_without_float_drift() {
        assert_eq!(Schedule::new(10.0, 60.0), Schedule { window_ns: 10_000_000, windows: 6000 });
        assert_eq!(Schedule::new(0.1, 0.3).windows, 3000);
        assert_eq!(Schedule::new(7.0, 0.1).windows, 15, "a partial last window is run whole");
        assert_eq!(Schedule::new(10.0, 60.0).start_ns(6000) as f64 / 1e9, 60.0);
    }
}

/// A request → response state machine living in the caller's process (a simulator or a
/// coordinator). It sees serialized messages, exactly as a remote peer would.
pub trait Service: Send {
    /// Answers one request. Pure state machines answer at once (`Box::pin(ready(..))`);
    /// a coordinator may await its own peers first.
    fn call<'a>(&'a mut self, request: &'a [u8]) -> Reply<'a>;

    /// True once the service has answered its last request (a simulator after the last
    /// window of its scenario); a served peer then exits.
    fn finished(&self) -> bool {
        false
    }
}

/// A service's pending answer: the reply bytes, or why there is none.
pub type Reply<'a> = Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>>;

/// Why an exchange with a peer failed. Each names the peer and the window.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("{peer} did not answer window {window} within {timeout_ms} ms")]
    Timeout { peer: String, window: u32, timeout_ms: u128 },
    #[error("{peer} disconnected during window {window}")]
    Disconnected { peer: String, window: u32 },
    #[error("{peer} failed in window {window}: {reason}")]
    Failed { peer: String, window: u32, reason: String },
    #[error("{peer} broke the window protocol in window {window}: {reason}")]
    Protocol { peer: String, window: u32, reason: String },
}

/// A coordinator's connection to one peer.
pub struct Link {
    peer: String,
    timeout: Duration,
    kind: LinkKind,
}

enum LinkKind {
    Local(Box<dyn Service>),
    Zmq(zmq::Client),
    Rosnetsim(rosnetsim::Client),
}

impl Link {
    /// A peer in this process.
    pub fn local(peer: impl Into<String>, service: Box<dyn Service>) -> Link {
        Link { peer: peer.into(), timeout: Duration::MAX, kind: LinkKind::Local(service) }
    }

    /// A peer bound at a ZeroMQ endpoint (`tcp://host:port`, `ipc://path`).
    /// Waits up to `connect_timeout` for the peer to accept the connection.
    pub async fn zeromq(peer: impl Into<String>, endpoint: &str, timeout: Duration, connect_timeout: Duration) -> Result<Link, LinkError> {
        let peer = format!("{} at {endpoint}", peer.into());
        let client = zmq::Client::connect_within(endpoint, connect_timeout)
            .await
            .map_err(|e| LinkError::Failed { peer: peer.clone(), window: 0, reason: format!("cannot connect: {e}") })?;
        Ok(Link { peer, timeout, kind: LinkKind::Zmq(client) })
    }

    /// A ROS-NetSim simulator listening at `address` (`unix:/path` or `tcp:host:port`).
    /// Waits up to `connect_timeout` for it to accept.
    pub async fn rosnetsim(
        peer: impl Into<String>,
        address: &crate::config::RosnetsimAddress,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Link, LinkError> {
        let peer = format!("{} at {address}", peer.into());
        let client = rosnetsim::Client::connect_within(address, connect_timeout)
            .await
            .map_err(|e| LinkError::Failed { peer: peer.clone(), window: 0, reason: format!("cannot connect: {e}") })?;
        Ok(Link { peer, timeout, kind: LinkKind::Rosnetsim(client) })
    }

    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Sends `request` for `window` and waits for the answer, at most the timeout
    /// (`timeout` overrides it, e.g. for a first window that waits for a peer to start).
    pub async fn exchange(&mut self, window: u32, request: Vec<u8>, timeout: Option<Duration>) -> Result<Vec<u8>, LinkError> {
        let timeout = timeout.unwrap_or(self.timeout);
        let peer = &self.peer;
        match &mut self.kind {
            LinkKind::Local(service) => service
                .call(&request)
                .await
                .map_err(|reason| LinkError::Failed { peer: peer.clone(), window, reason }),
            LinkKind::Zmq(client) => match tokio::time::timeout(timeout, client.request(request)).await {
                Err(_) => Err(LinkError::Timeout { peer: peer.clone(), window, timeout_ms: timeout.as_millis() }),
                Ok(Err(zmq::ClientError::Disconnected)) => Err(LinkError::Disconnected { peer: peer.clone(), window }),
                Ok(Err(e)) => Err(LinkError::Failed { peer: peer.clone(), window, reason: e.to_string() }),
                Ok(Ok(reply)) => Ok(reply),
            },
            LinkKind::Rosnetsim(client) => match tokio::time::timeout(timeout, client.request(&request)).await {
                Err(_) => Err(LinkError::Timeout { peer: peer.clone(), window, timeout_ms: timeout.as_millis() }),
                Ok(Err(rosnetsim::FrameError::Disconnected)) => Err(LinkError::Disconnected { peer: peer.clone(), window }),
                Ok(Err(e)) => Err(LinkError::Failed { peer: peer.clone(), window, reason: e.to_string() }),
                Ok(Ok(reply)) => Ok(reply),
            },
        }
    }

    /// A protocol error attributed to this link's peer.
    pub fn protocol_error(&self, window: u32, reason: impl Into<String>) -> LinkError {
        LinkError::Protocol { peer: self.peer.clone(), window, reason: reason.into() }
    }
}
