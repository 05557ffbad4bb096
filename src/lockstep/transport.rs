//! What every transport shares: a [`Service`] answering requests in this process, the
//! [`Transport`] trait one file per kind of peer implements, the [`Role`] of a peer, and why
//! an exchange failed.

use std::{future::Future, pin::Pin, time::Duration};

/// A request → response state machine living in the caller's process (a simulator or a
/// coordinator). It sees serialized messages, exactly as a remote peer would.
pub trait Service: Send {
    /// Answers one request. Pure state machines answer at once ([`ready`]); a coordinator
    /// may await its own peers first.
    fn call(&mut self, request: Vec<u8>) -> Reply<'_>;

    /// True once the service has answered its last request (a simulator after the last
    /// window of its scenario); a served peer then exits.
    fn finished(&self) -> bool {
        false
    }
}

/// A service's pending answer: the reply bytes, or why there is none.
/// The same type as a [`Transport`]'s pending reply, so a service in this process is reached
/// without another layer.
pub type Reply<'a> = Pin<Box<dyn Future<Output = Result<Vec<u8>, TransportError>> + Send + 'a>>;

/// A service's answer that is ready at once; a refusal is [`TransportError::Failed`].
pub fn ready(answer: Result<Vec<u8>, String>) -> Reply<'static> {
    Box::pin(std::future::ready(answer.map_err(TransportError::Failed)))
}

/// How a coordinator reaches a peer: one implementation per kind of peer (in-process
/// [`super::local::Local`], [`super::zmq::Client`], [`super::rosnetsim::Client`]). A new transport is one new file
/// implementing this, plus its variant in [`crate::config::PeerEndpoint`]; a physics simulator a run
/// follows (Gazebo, the AUV interface) implements `crate::sim::followed::Followed` instead.
pub trait Transport: Send {
    /// Sends one request and waits for its one reply, at most `timeout` (a peer in this
    /// process answers without one).
    fn exchange<'a>(&'a mut self, request: Vec<u8>, timeout: Duration) -> Reply<'a>;
}

/// Which simulator a peer is, and so which messages its link carries: PhysicsUpdate or
/// NetworkUpdate (a transport that translates them, [`super::rosnetsim`], needs to know).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Physics,
    Network,
}

/// Why a peer returned no reply (a service in this process only ever fails); [`super::Link`] adds
/// the peer and the window.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("no reply within {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("disconnected")]
    Disconnected,
    #[error("{0}")]
    Failed(String),
}

/// Waits for `reply` at most `timeout`.
pub(super) async fn within<T>(
    timeout: Duration,
    reply: impl Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    tokio::time::timeout(timeout, reply)
        .await
        .unwrap_or(Err(TransportError::Timeout(timeout)))
}
