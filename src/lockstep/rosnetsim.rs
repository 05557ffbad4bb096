//! ROS-NetSim compatibility transport: ROS-NetSim's own framing, so its simulator adapters
//! (ns-3, Gazebo, ... written for ROS-NetSim and its descendants) connect unchanged.
//!
//! **Framing.** Each message is a 4-byte big-endian length followed by that many bytes: the
//! gzip of the serialized `PhysicsUpdate`/`NetworkUpdate` (`struct.pack('!I', len)` +
//! `gzip.compress(msg.SerializeToString())` in ROS-NetSim's Python; boost's gzip filter in its
//! C++ adapters). Exchanges are strictly request → reply, one frame each way.
//!
//! **Who listens.** As in ROS-NetSim, the *simulator* accepts and the *coordinator* connects:
//! the simulator adapters `accept()` on `phy_uds_server_address`/`net_uds_server_address` (Unix
//! socket) or on an IP address and port, and the coordinators connect with retries
//! (`try_connecting`). So `simulators.network: {kind: rosnetsim, address: unix:/tmp/net_server_socket}`
//! makes our network coordinator connect to a ROS-NetSim network simulator listening there, and
//! [`serve`] lets our embedded simulators stand in for one (`cosim network-sim --bind unix:/path`).
//!
//! **Dialect.** ROS-NetSim's components write some fields their own way: `channel_data` holds
//! the gzip of the ChannelData, path ids count vehicles from 1, a pair may come in either order,
//! more than once or with several paths, and a network END lists its deliveries in `pkt_id`.
//! Every message this transport carries is translated between that dialect and ours
//! ([`crate::wire::rosnetsim`]), on both sides, so the bytes on the socket are ROS-NetSim's and
//! the coordinators and simulators on our side see ours. Which messages a connection carries
//! is its [`Role`]: PhysicsUpdate to a physics simulator, NetworkUpdate to a network simulator.
//!
//! **Robustness.** Reads loop until the whole frame is in (ROS-NetSim's C++ adapters read a
//! frame with a single `read_some` and break on partial reads); a frame over
//! [`MAX_FRAME_BYTES`], or one that gunzips to more than [`MAX_MESSAGE_BYTES`] (a gzip bomb),
//! is refused without allocating it; every error names the peer's address. [`decode_frame`]
//! is the same decoder on a byte slice, with the same bounds.

use super::{Role, Service};
use crate::config::RosnetsimAddress as Address;
use crate::wire::rosnetsim as dialect;
use flate2::{read::MultiGzDecoder, write::GzEncoder, Compression};
use std::io::{Read, Write};
use std::pin::Pin;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest frame (compressed) accepted from a peer.
pub const MAX_FRAME_BYTES: usize = 64 << 20;
/// Largest message a frame may gunzip to.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("peer disconnected")]
    Disconnected,
    #[error("frame of {0} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("message inflates beyond the {MAX_MESSAGE_BYTES}-byte limit")]
    InflatesTooLarge,
    #[error("frame is not valid gzip: {0}")]
    Gzip(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// gzip of `message`, behind its 4-byte big-endian length.
pub fn encode_frame(message: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(
        Vec::with_capacity(message.len() / 2 + 32),
        Compression::fast(),
    );
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(message);
    let body = gz.finish().unwrap_or_default();
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    frame
}

/// The message inside a frame's body, at most [`MAX_MESSAGE_BYTES`].
pub fn decode_body(body: &[u8]) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    MultiGzDecoder::new(body)
        .take(MAX_MESSAGE_BYTES as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| FrameError::Gzip(e.to_string()))?;
    if out.len() > MAX_MESSAGE_BYTES {
        return Err(FrameError::InflatesTooLarge);
    }
    Ok(out)
}

/// The body length a frame's 4-byte big-endian header states; over [`MAX_FRAME_BYTES`] is an error.
pub fn frame_len(header: [u8; 4]) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(header) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(len));
    }
    Ok(len)
}

/// Decodes the frame at the start of `bytes`: its message and the bytes after the frame, or
/// `Ok(None)` while `bytes` does not hold the whole frame yet.
pub fn decode_frame(bytes: &[u8]) -> Result<Option<(Vec<u8>, &[u8])>, FrameError> {
    let Some((header, rest)) = bytes.split_first_chunk::<4>() else {
        return Ok(None);
    };
    let Some((body, rest)) = rest.split_at_checked(frame_len(*header)?) else {
        return Ok(None);
    };
    Ok(Some((decode_body(body)?, rest)))
}

/// Reads one whole frame (however the bytes arrive) and returns its message.
/// `Ok(None)`: the peer closed cleanly before a new frame.
pub async fn read_frame<R: AsyncRead + Unpin + ?Sized>(
    r: &mut R,
) -> Result<Option<Vec<u8>>, FrameError> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]).await? {
            0 if got == 0 => return Ok(None),
            0 => return Err(FrameError::Disconnected),
            n => got += n,
        }
    }
    let len = frame_len(len)?;
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => FrameError::Disconnected,
        _ => FrameError::Io(e),
    })?;
    decode_body(&body).map(Some)
}

pub async fn write_frame<W: AsyncWrite + Unpin + ?Sized>(
    w: &mut W,
    message: &[u8],
) -> Result<(), FrameError> {
    w.write_all(&encode_frame(message)).await?;
    w.flush().await?;
    Ok(())
}

/// A message of ours for `role`'s link, in ROS-NetSim's dialect.
fn to_rosnetsim(role: Role, message: Vec<u8>) -> Result<Vec<u8>, String> {
    match role {
        Role::Physics => dialect::physics_to_rosnetsim(message),
        Role::Network => dialect::network_to_rosnetsim(message),
    }
}

/// A message from `role`'s link, in ours.
fn from_rosnetsim(role: Role, message: Vec<u8>) -> Result<Vec<u8>, String> {
    match role {
        Role::Physics => dialect::physics_from_rosnetsim(message),
        Role::Network => dialect::network_from_rosnetsim(message),
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The coordinator's side: a connection to a listening ROS-NetSim simulator.
pub struct Client {
    stream: Pin<Box<dyn Io>>,
    role: Role,
}

impl Client {
    /// Connects to the `role` simulator at `address`, retrying every 100 ms until it listens or
    /// `timeout` passes.
    pub async fn connect_within(
        addr: &Address,
        role: Role,
        timeout: Duration,
    ) -> Result<Client, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let attempt: std::io::Result<Pin<Box<dyn Io>>> = match addr {
                Address::Unix(path) => tokio::net::UnixStream::connect(path)
                    .await
                    .map(|s| Box::pin(s) as Pin<Box<dyn Io>>),
                Address::Tcp(hp) => tokio::net::TcpStream::connect(hp.as_str()).await.map(|s| {
                    let _ = s.set_nodelay(true);
                    Box::pin(s) as Pin<Box<dyn Io>>
                }),
            };
            match attempt {
                Ok(stream) => return Ok(Client { stream, role }),
                Err(e) if tokio::time::Instant::now() >= deadline => {
                    return Err(format!(
                        "nobody accepted at {addr} within {} ms ({e})",
                        timeout.as_millis()
                    ))
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// One request frame, one reply frame: the bytes as they cross the socket (ROS-NetSim's
    /// dialect).
    pub async fn request(&mut self, request: &[u8]) -> Result<Vec<u8>, FrameError> {
        write_frame(&mut self.stream, request)
            .await
            .map_err(|e| match e {
                FrameError::Io(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                    ) =>
                {
                    FrameError::Disconnected
                }
                e => e,
            })?;
        read_frame(&mut self.stream)
            .await?
            .ok_or(FrameError::Disconnected)
    }
}

impl super::Transport for Client {
    fn exchange<'a>(&'a mut self, request: Vec<u8>, timeout: Duration) -> super::Reply<'a> {
        Box::pin(super::transport::within(timeout, async move {
            let request =
                to_rosnetsim(self.role, request).map_err(super::TransportError::Failed)?;
            let reply = self.request(&request).await.map_err(|e| match e {
                FrameError::Disconnected => super::TransportError::Disconnected,
                e => super::TransportError::Failed(e.to_string()),
            })?;
            from_rosnetsim(self.role, reply).map_err(super::TransportError::Failed)
        }))
    }
}

/// Listens at `address` (a stale Unix socket file is replaced), accepts one coordinator and
/// answers its frames with `service`, the `role` simulator, until [`Service::finished`], the
/// coordinator hangs up, or nothing arrives for `idle`. A request the service rejects ends the
/// loop with that error (the coordinator then sees the connection close).
pub async fn serve(
    addr: &Address,
    role: Role,
    service: &mut dyn Service,
    idle: Duration,
) -> anyhow::Result<super::zmq::ServeEnd> {
    use super::zmq::ServeEnd;
    let mut stream: Pin<Box<dyn Io>> = match addr {
        Address::Unix(path) => {
            let _ = std::fs::remove_file(path);
            let l = tokio::net::UnixListener::bind(path)
                .map_err(|e| anyhow::anyhow!("cannot bind {addr}: {e}"))?;
            tracing::info!(%addr, "serving (ROS-NetSim framing)");
            match tokio::time::timeout(idle, l.accept()).await {
                Err(_) => return Ok(ServeEnd::Idle),
                Ok(r) => Box::pin(r.map_err(|e| anyhow::anyhow!("accept on {addr}: {e}"))?.0),
            }
        }
        Address::Tcp(hp) => {
            let l = tokio::net::TcpListener::bind(hp.as_str())
                .await
                .map_err(|e| anyhow::anyhow!("cannot bind {addr}: {e}"))?;
            tracing::info!(%addr, "serving (ROS-NetSim framing)");
            match tokio::time::timeout(idle, l.accept()).await {
                Err(_) => return Ok(ServeEnd::Idle),
                Ok(r) => {
                    let s = r.map_err(|e| anyhow::anyhow!("accept on {addr}: {e}"))?.0;
                    let _ = s.set_nodelay(true);
                    Box::pin(s)
                }
            }
        }
    };
    loop {
        let request = match tokio::time::timeout(idle, read_frame(&mut stream)).await {
            Err(_) => return Ok(ServeEnd::Idle),
            Ok(Ok(None)) => anyhow::bail!("coordinator at {addr} hung up before the last window"),
            Ok(Err(e)) => anyhow::bail!("coordinator at {addr}: {e}"),
            Ok(Ok(Some(m))) => m,
        };
        let request = from_rosnetsim(role, request)
            .map_err(|e| anyhow::anyhow!("coordinator at {addr}: {e}"))?;
        let reply = service
            .call(request)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let reply = to_rosnetsim(role, reply).map_err(|e| anyhow::anyhow!("{e}"))?;
        write_frame(&mut stream, &reply)
            .await
            .map_err(|e| anyhow::anyhow!("coordinator at {addr}: {e}"))?;
        if service.finished() {
            return Ok(ServeEnd::Done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bombs_are_refused() {
        let msg = b"hello hello hello".repeat(100);
        let frame = encode_frame(&msg);
        assert_eq!(
            u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize,
            frame.len() - 4
        );
        assert_eq!(decode_body(&frame[4..]).unwrap(), msg);
        // 65 MiB of zeros gzip to ~65 KiB: refused after inflating one byte past the limit.
        let bomb = encode_frame(&vec![0u8; MAX_MESSAGE_BYTES + 1]);
        assert!(bomb.len() < 1 << 20);
        assert!(matches!(
            decode_body(&bomb[4..]),
            Err(FrameError::InflatesTooLarge)
        ));
        assert!(matches!(decode_body(b"not gzip"), Err(FrameError::Gzip(_))));
    }

    #[test]
    fn frames_decode_from_a_byte_slice() {
        let (one, two) = (b"first".repeat(50), b"second".to_vec());
        let mut bytes = encode_frame(&one);
        bytes.extend_from_slice(&encode_frame(&two));
        let (m, rest) = decode_frame(&bytes).unwrap().unwrap();
        assert_eq!(m, one);
        let (m, rest) = decode_frame(rest).unwrap().unwrap();
        assert_eq!((m, rest), (two, &[][..]));
        // Every strict prefix of a frame is incomplete, not an error.
        let frame = encode_frame(&one);
        for cut in 0..frame.len() {
            assert!(
                decode_frame(&frame[..cut]).unwrap().is_none(),
                "cut at {cut}"
            );
        }
        let mut huge = (MAX_FRAME_BYTES as u32 + 1).to_be_bytes().to_vec();
        huge.extend_from_slice(&[0; 16]);
        assert!(
            matches!(decode_frame(&huge), Err(FrameError::TooLarge(n)) if n == MAX_FRAME_BYTES + 1)
        );
        assert!(matches!(
            decode_frame(&[0, 0, 0, 3, 1, 2, 3]),
            Err(FrameError::Gzip(_))
        ));
    }

    #[tokio::test]
    async fn partial_reads_and_limits() {
        let msg = b"window".repeat(1000);
        let frame = encode_frame(&msg);
        let (mut a, mut b) = tokio::io::duplex(7);
        let writer = tokio::spawn(async move {
            for chunk in frame.chunks(3) {
                a.write_all(chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
            a
        });
        assert_eq!(read_frame(&mut b).await.unwrap().unwrap(), msg);
        drop(writer.await.unwrap());
        assert!(
            read_frame(&mut b).await.unwrap().is_none(),
            "clean EOF between frames"
        );

        let (mut a, mut b) = tokio::io::duplex(64);
        a.write_all(&(MAX_FRAME_BYTES as u32 + 1).to_be_bytes())
            .await
            .unwrap();
        assert!(matches!(
            read_frame(&mut b).await,
            Err(FrameError::TooLarge(_))
        ));
        let (mut a, mut b) = tokio::io::duplex(64);
        a.write_all(&[0, 0, 0, 10, 1, 2]).await.unwrap();
        drop(a);
        assert!(matches!(
            read_frame(&mut b).await,
            Err(FrameError::Disconnected)
        ));
    }
}
