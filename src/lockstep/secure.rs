//! The secure channel between hosts on a TCP connection: [`crate::wire::secure`]'s handshake
//! and records read and written with tokio, each step of the handshake bounded in time and
//! every record in size; the run's key file on disk; and the window protocol through it (a
//! [`Client`] a coordinator links with, [`serve`] for a simulator process). The capture agents
//! (`crate::io::traffic::agents`) speak through it too.
//!
//! The handshake is raw bytes of fixed sizes (the initiator's magic bytes and first message,
//! the responder's answer); every record after it is a 2-byte length and that many bytes.

use crate::config::SecureAddress;
use crate::wire::secure::{
    self, Channel, HandshakeError, OpenError, Secret, Session, Suite, HANDSHAKE_BYTES, MAGIC_BYTES,
    MAX_RECORD_BYTES, RECORD_LENGTH_BYTES,
};
use anyhow::{bail, Context};
use futures_util::StreamExt;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio_util::codec::{FramedRead, LengthDelimitedCodec};

/// How long a peer has for each step of the handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a handshake did not give a connection.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no {0} within {HANDSHAKE_TIMEOUT:?}")]
    Timeout(&'static str),
    #[error("closed the connection during the handshake")]
    Closed,
    #[error("{0}")]
    Handshake(#[from] HandshakeError),
}

/// Why a frame could not be had. After any of these the connection is over.
#[derive(Debug, thiserror::Error)]
pub enum RecvError {
    #[error("closed the connection")]
    Closed,
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("sent {0}")]
    Open(#[from] OpenError),
}

/// One end of an authenticated, encrypted connection.
pub struct SecureConn {
    reader: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
    writer: OwnedWriteHalf,
    session: Session,
    /// The other end's address.
    pub peer: SocketAddr,
}

impl std::fmt::Debug for SecureConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecureConn({})", self.peer)
    }
}

/// Reads exactly `buf.len()` bytes within the handshake's timeout.
async fn read_step(
    stream: &mut TcpStream,
    buf: &mut [u8],
    what: &'static str,
) -> Result<(), ConnectError> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, stream.read_exact(buf)).await {
        Err(_) => Err(ConnectError::Timeout(what)),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(ConnectError::Closed),
        Ok(Err(e)) => Err(e.into()),
        Ok(Ok(_)) => Ok(()),
    }
}

impl SecureConn {
    /// The initiator's side on a connected `stream`: succeeds only if the peer holds `secret`
    /// for `channel`. Frames of at most `max_frame` bytes either way.
    pub async fn connect(
        mut stream: TcpStream,
        secret: &Secret,
        channel: Channel,
        max_frame: usize,
    ) -> Result<SecureConn, ConnectError> {
        stream.set_nodelay(true)?;
        let (initiating, hello) = secure::initiate(secret, channel, Suite::preferred())?;
        stream.write_all(&hello).await?;
        let mut answer = [0u8; HANDSHAKE_BYTES];
        read_step(&mut stream, &mut answer, "handshake answer").await?;
        let session = initiating.finish(&answer, max_frame)?;
        Ok(SecureConn::new(stream, session)?)
    }

    /// The responder's side on an accepted `stream`. The peer is known to hold the secret
    /// once its first frame has been received ([`SecureConn::recv`]): admit nothing before.
    pub async fn accept(
        mut stream: TcpStream,
        secret: &Secret,
        channel: Channel,
        max_frame: usize,
    ) -> Result<SecureConn, ConnectError> {
        stream.set_nodelay(true)?;
        let mut magic = [0u8; MAGIC_BYTES];
        read_step(&mut stream, &mut magic, "handshake").await?;
        if Suite::of_magic(magic).is_none() {
            return Err(HandshakeError::NotSecure(magic).into());
        }
        let mut hello = [0u8; HANDSHAKE_BYTES];
        read_step(&mut stream, &mut hello, "handshake").await?;
        let (session, answer) = secure::respond(secret, channel, magic, &hello, max_frame)?;
        stream.write_all(&answer).await?;
        Ok(SecureConn::new(stream, session)?)
    }

    fn new(stream: TcpStream, session: Session) -> std::io::Result<SecureConn> {
        let peer = stream.peer_addr()?;
        let (read, writer) = stream.into_split();
        let codec = LengthDelimitedCodec::builder()
            .length_field_length(RECORD_LENGTH_BYTES)
            .max_frame_length(MAX_RECORD_BYTES)
            .new_codec();
        Ok(SecureConn {
            reader: FramedRead::new(read, codec),
            writer,
            session,
            peer,
        })
    }

    /// Sends one frame (at most the session's bound).
    pub async fn send(&mut self, frame: &[u8]) -> std::io::Result<()> {
        let records = (self.session.seal(frame))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        self.writer.write_all(records).await
    }

    /// The peer's next frame.
    pub async fn recv(&mut self) -> Result<Vec<u8>, RecvError> {
        loop {
            let record = match self.reader.next().await {
                Some(Ok(r)) => r,
                Some(Err(e)) => return Err(e.into()),
                None => return Err(RecvError::Closed),
            };
            if let Some(frame) = self.session.open(&record)? {
                return Ok(frame);
            }
        }
    }
}

/// Writes `secret` to a file that did not exist, readable by its owner only.
pub fn write_secret(path: &Path, secret: &Secret) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(f, "{}", secret.to_hex()).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a secret's file, refusing one that others than its owner may read or write.
pub fn read_secret(path: &Path) -> anyhow::Result<Secret> {
    crate::config::files::owner_only(path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Secret::parse(&text).with_context(|| format!("{}", path.display()))
}

/// The largest window message either way (as over ZeroMQ).
pub const MAX_MESSAGE_BYTES: usize = super::zmq::MAX_MESSAGE_BYTES;

/// A coordinator's side of the window protocol through the secure channel: one request
/// frame, one reply frame.
pub struct Client {
    conn: SecureConn,
}

impl Client {
    /// Connects to the simulator at `address` with its key file, retrying until it accepts or
    /// `timeout` passes; fails if the peer does not hold the same secret.
    pub async fn connect_within(
        address: &SecureAddress,
        timeout: Duration,
    ) -> anyhow::Result<Client> {
        let secret = read_secret(&address.key_file)?;
        let deadline = tokio::time::Instant::now() + timeout;
        let addr = address.address.as_str();
        match dial(addr, &secret, Channel::Windows, MAX_MESSAGE_BYTES, deadline).await {
            Ok(conn) => Ok(Client { conn }),
            Err(DialError::Unreachable(e)) => bail!("cannot reach {address}: {e}"),
            Err(DialError::Refused) => bail!(
                "{address} refused the handshake: it holds another secret than {}",
                address.key_file.display()
            ),
            Err(DialError::Failed(e)) => bail!("{address}: {e}"),
        }
    }
}

/// Why [`dial`] gave no connection.
#[derive(Debug, thiserror::Error)]
pub enum DialError {
    #[error("{0}")]
    Unreachable(std::io::Error),
    /// The peer closed during the handshake or answered with one that fails its
    /// authentication: it holds another secret (a responder without it says nothing).
    #[error("the peer refused the handshake")]
    Refused,
    #[error("{0}")]
    Failed(ConnectError),
}

/// Connects to `addr`, retrying while nothing accepts there until `deadline`, and runs the
/// initiator's handshake ([`SecureConn::connect`]).
pub async fn dial(
    addr: &str,
    secret: &Secret,
    channel: Channel,
    max_frame: usize,
    deadline: tokio::time::Instant,
) -> Result<SecureConn, DialError> {
    let stream = loop {
        match TcpStream::connect(addr).await {
            Ok(s) => break s,
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(DialError::Unreachable(e))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    SecureConn::connect(stream, secret, channel, max_frame)
        .await
        .map_err(|e| match e {
            ConnectError::Closed | ConnectError::Handshake(HandshakeError::Refused) => {
                DialError::Refused
            }
            e => DialError::Failed(e),
        })
}

impl super::Transport for Client {
    fn exchange<'a>(&'a mut self, request: Vec<u8>, timeout: Duration) -> super::Reply<'a> {
        Box::pin(super::transport::within(timeout, async move {
            let failed = |e: String| super::TransportError::Failed(e);
            self.conn.send(&request).await.map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidInput => failed(e.to_string()),
                _ => super::TransportError::Disconnected,
            })?;
            self.conn.recv().await.map_err(|e| match e {
                RecvError::Closed | RecvError::Io(_) => super::TransportError::Disconnected,
                e => failed(e.to_string()),
            })
        }))
    }
}

/// Listens at `address` and answers the window protocol through the secure channel with
/// `service`, one coordinator at a time, until [`super::Service::finished`] says the last
/// reply went out or nothing arrives for `idle`. A peer that fails the handshake, or whose
/// first frame does not open, is refused (logged at WARN with why) and the next one accepted.
pub async fn serve(
    address: &SecureAddress,
    service: &mut dyn super::Service,
    idle: Duration,
) -> anyhow::Result<super::zmq::ServeEnd> {
    use super::zmq::ServeEnd;
    let secret = read_secret(&address.key_file)?;
    let listener = tokio::net::TcpListener::bind(address.address.as_str())
        .await
        .with_context(|| format!("cannot bind {address}"))?;
    tracing::info!(endpoint = %address, "serving");
    loop {
        let (stream, peer) = match tokio::time::timeout(idle, listener.accept()).await {
            Err(_) => return Ok(ServeEnd::Idle),
            Ok(Err(e)) => {
                tracing::warn!("{address}: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            Ok(Ok(x)) => x,
        };
        let mut conn =
            match SecureConn::accept(stream, &secret, Channel::Windows, MAX_MESSAGE_BYTES).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("{address}: refused a peer at {peer}: {e}");
                    continue;
                }
            };
        loop {
            let request = match tokio::time::timeout(idle, conn.recv()).await {
                Err(_) => return Ok(ServeEnd::Idle),
                Ok(Err(e)) => {
                    tracing::warn!("{address}: the peer at {peer} {e}; waiting for the next");
                    break;
                }
                Ok(Ok(r)) => r,
            };
            let reply = service
                .call(request)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            conn.send(&reply).await?;
            if service.finished() {
                return Ok(ServeEnd::Done);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A listener on loopback and its address.
    async fn listen() -> (TcpListener, SocketAddr) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
    }

    #[tokio::test]
    async fn both_ends_talk_and_a_frame_larger_than_a_record_arrives_whole() {
        let (l, addr) = listen().await;
        let server = tokio::spawn(async move {
            let (s, _) = l.accept().await.unwrap();
            let mut c =
                SecureConn::accept(s, &Secret::from_bytes([1; 32]), Channel::Windows, 1 << 20)
                    .await
                    .unwrap();
            let f = c.recv().await.unwrap();
            c.send(&f).await.unwrap();
        });
        let s = TcpStream::connect(addr).await.unwrap();
        let mut c = SecureConn::connect(s, &Secret::from_bytes([1; 32]), Channel::Windows, 1 << 20)
            .await
            .unwrap();
        let frame: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        c.send(&frame).await.unwrap();
        assert_eq!(c.recv().await.unwrap(), frame);
        server.await.unwrap();
    }
}
