//! ZeroMQ transport: a coordinator holds a REQ socket connected to the peer; the peer (a
//! simulator, or the network coordinator) binds a REP socket and answers each request with
//! exactly one reply. One frame per message: a serialized `PhysicsUpdate`/`NetworkUpdate`.
//! Any ZeroMQ implementation interoperates (libzmq, pyzmq, JeroMQ): REQ/REP is ZMTP 3.

use super::Service;
use std::time::Duration;
use zeromq::{Socket, SocketOptions, SocketRecv, SocketSend, ZmqError, ZmqMessage};

/// Largest message accepted from a peer (a ChannelData for hundreds of vehicles fits easily).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("peer disconnected")]
    Disconnected,
    #[error("reply of {0} frames, expected 1")]
    Frames(usize),
    #[error("reply of {0} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("{0}")]
    Zmq(#[from] ZmqError),
}

/// The requesting side.
pub struct Client {
    socket: zeromq::ReqSocket,
}

impl Client {
    /// Connects, retrying until the peer is there or `timeout` passes.
    pub async fn connect_within(endpoint: &str, timeout: Duration) -> Result<Client, ZmqError> {
        let mut options = socket_options();
        options.connect_timeout(timeout);
        let mut socket = zeromq::ReqSocket::with_options(options);
        socket.connect(endpoint).await?;
        Ok(Client { socket })
    }

    /// One request, one reply.
    pub async fn request(&mut self, request: Vec<u8>) -> Result<Vec<u8>, ClientError> {
        self.socket
            .send(ZmqMessage::from(request))
            .await
            .map_err(|e| match e {
                ZmqError::ReturnToSender { .. } => ClientError::Disconnected,
                e => ClientError::Zmq(e),
            })?;
        let reply = self.socket.recv().await.map_err(|e| match e {
            ZmqError::NoMessage | ZmqError::Other("Server disconnected") => {
                ClientError::Disconnected
            }
            e => ClientError::Zmq(e),
        })?;
        single_frame(reply).map_err(|n| {
            if n > 1 {
                ClientError::Frames(n)
            } else {
                ClientError::TooLarge(n)
            }
        })
    }
}

impl super::Transport for Client {
    fn exchange<'a>(&'a mut self, request: Vec<u8>, timeout: Duration) -> super::Reply<'a> {
        Box::pin(super::transport::within(timeout, async move {
            self.request(request).await.map_err(|e| match e {
                ClientError::Disconnected => super::TransportError::Disconnected,
                e => super::TransportError::Failed(e.to_string()),
            })
        }))
    }
}

/// Socket options for window messages: reads start at 16 KiB (a whole ChannelData for dozens
/// of vehicles in one read) instead of the library's 128 bytes, which would take several
/// growing reads per message.
fn socket_options() -> SocketOptions {
    let mut options = SocketOptions::default();
    options.read_buffer(16 << 10, 1 << 20, 2);
    options
}

/// The one frame of `m`; `Err(frames)` if it has more than one, `Err(bytes)` if too large.
fn single_frame(m: ZmqMessage) -> Result<Vec<u8>, usize> {
    if m.len() != 1 {
        return Err(m.len());
    }
    let frame = m.into_vec().pop().unwrap_or_default();
    if frame.len() > MAX_MESSAGE_BYTES {
        return Err(frame.len());
    }
    Ok(frame.to_vec())
}

/// How a served peer's loop ended.
#[derive(Debug, PartialEq, Eq)]
pub enum ServeEnd {
    /// The service said it is done (e.g. it answered the last window).
    Done,
    /// No request arrived for the idle timeout.
    Idle,
}

/// Binds a REP socket at `endpoint` and answers requests with `service` until
/// [`Service::finished`] says the last reply went out, or nothing arrives for `idle`. A request the service rejects is
/// answered with an empty message (which every coordinator rejects as a protocol error) and
/// ends the loop with that error, so a broken peer never waits on a reply that never comes.
pub async fn serve(
    endpoint: &str,
    service: &mut dyn Service,
    idle: Duration,
) -> anyhow::Result<ServeEnd> {
    let mut socket = zeromq::RepSocket::with_options(socket_options());
    socket
        .bind(endpoint)
        .await
        .map_err(|e| anyhow::anyhow!("cannot bind {endpoint}: {e}"))?;
    tracing::info!(%endpoint, "serving");
    loop {
        let request = match tokio::time::timeout(idle, socket.recv()).await {
            Err(_) => return Ok(ServeEnd::Idle),
            Ok(Err(e)) => {
                tracing::warn!(%endpoint, error = %e, "receive failed; waiting for the next request");
                continue;
            }
            Ok(Ok(m)) => m,
        };
        let frames = request.len();
        let reply = match single_frame(request) {
            Err(_) => Err(format!(
                "request of {frames} frames or over {MAX_MESSAGE_BYTES} bytes"
            )),
            Ok(bytes) => service.call(bytes).await.map_err(|e| e.to_string()),
        };
        match reply {
            Ok(bytes) => socket.send(ZmqMessage::from(bytes)).await?,
            Err(reason) => anyhow::bail!("{reason}"),
        }
        if service.finished() {
            return Ok(ServeEnd::Done);
        }
    }
}
