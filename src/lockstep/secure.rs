//! The secure channel between hosts on a TCP connection: [`crate::wire::secure`]'s handshake
//! and records read and written with tokio, each step of the handshake bounded in time and
//! every record in size. The capture agents (`crate::io::traffic::agents`) speak through it.
//!
//! The handshake is raw bytes of fixed sizes (the initiator's [`MAGIC`] and first message,
//! the responder's answer); every record after it is a 2-byte length and that many bytes.

use crate::wire::secure::{
    self, Channel, HandshakeError, OpenError, Secret, Session, HANDSHAKE_BYTES, MAGIC,
    MAX_RECORD_BYTES, RECORD_LENGTH_BYTES,
};
use futures_util::StreamExt;
use std::net::SocketAddr;
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
    out: Vec<u8>,
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
        let (initiating, hello) = secure::initiate(secret, channel)?;
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
        let mut magic = [0u8; MAGIC.len()];
        read_step(&mut stream, &mut magic, "handshake").await?;
        if magic != MAGIC {
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
            out: Vec::new(),
            peer,
        })
    }

    /// Sends one frame (at most the session's bound).
    pub async fn send(&mut self, frame: &[u8]) -> std::io::Result<()> {
        self.out.clear();
        self.session
            .seal(frame, &mut self.out)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        self.writer.write_all(&self.out).await?;
        if self.out.capacity() > 4 * MAX_RECORD_BYTES {
            self.out = Vec::new();
        }
        Ok(())
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
