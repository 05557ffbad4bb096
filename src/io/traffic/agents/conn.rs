//! One connection between the network coordinator and a capture agent: TCP, each frame a
//! 4-byte length and its bytes (bounded before anything is read into memory: 256 bytes until
//! the peer proved it holds the run's secret, then [`agent::MAX_FRAME_BYTES`]), the handshake,
//! and the sealed messages after it ([`agent::Session`]).

use crate::wire::agent::{self, Role, Secret, Session};
use crate::wire::proto::agent::{from_agent, to_agent, Challenge, Hello, Proof};
use anyhow::{bail, Context};
use futures_util::{SinkExt, StreamExt};
use prost::Message;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::bytes::Bytes;
use tokio_util::codec::{Framed, LengthDelimitedCodec};

/// How long a peer has for each step of the handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

fn codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .length_field_length(4)
        .max_frame_length(agent::MAX_HANDSHAKE_FRAME_BYTES)
        .new_codec()
}

/// A message's bytes as a frame to send.
trait IntoBytes {
    fn into_bytes(self) -> Bytes;
}

impl IntoBytes for Vec<u8> {
    fn into_bytes(self) -> Bytes {
        Bytes::from(self)
    }
}

/// An authenticated connection.
pub struct Conn {
    framed: Framed<TcpStream, LengthDelimitedCodec>,
    session: Session,
    /// The other end's address.
    pub peer: SocketAddr,
    /// The scenario's vehicle count (for the decoding checks).
    vehicles: usize,
}

/// Why a frame could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RecvError {
    #[error("closed the connection")]
    Closed,
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("sent a frame that fails its seal: {0}")]
    Seal(#[from] agent::SealError),
    #[error("sent a message that does not decode: {0}")]
    Decode(#[from] agent::DecodeError),
}

async fn next_frame(
    framed: &mut Framed<TcpStream, LengthDelimitedCodec>,
) -> Result<tokio_util::bytes::BytesMut, RecvError> {
    match framed.next().await {
        Some(Ok(f)) => Ok(f),
        Some(Err(e)) => Err(RecvError::Io(e)),
        None => Err(RecvError::Closed),
    }
}

async fn step<T>(
    what: &str,
    f: impl std::future::Future<Output = Result<T, RecvError>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, f).await {
        Ok(r) => r.with_context(|| what.to_owned()),
        Err(_) => bail!("no {what} within {} s", HANDSHAKE_TIMEOUT.as_secs()),
    }
}

impl Conn {
    /// The agent's side: connects to the coordinator at `addr` (retrying until `deadline`),
    /// says who it is, and checks that the coordinator holds the same secret.
    pub async fn connect(
        addr: &str,
        name: &str,
        secret: &Secret,
        digest: [u8; 32],
        vehicles: usize,
        deadline: Instant,
    ) -> anyhow::Result<Conn> {
        let stream = loop {
            match TcpStream::connect(addr).await {
                Ok(s) => break s,
                Err(e) if Instant::now() >= deadline => {
                    bail!("cannot reach the network coordinator at {addr}: {e}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        stream.set_nodelay(true)?;
        let peer = stream.peer_addr()?;
        let mut framed = Framed::new(stream, codec());
        let agent_nonce = agent::nonce();
        let hello = Hello {
            version: agent::VERSION,
            agent: name.to_owned(),
            nonce: agent_nonce.to_vec(),
            scenario_digest: digest.to_vec(),
        };
        framed.send(hello.encode_to_vec().into_bytes()).await?;
        let challenge = step("challenge from the network coordinator", async {
            Ok(agent::decode_challenge(&next_frame(&mut framed).await?)?)
        })
        .await
        .with_context(|| format!("network coordinator at {peer}"))?;
        let proof = agent::proof(secret, Role::Agent, name, &agent_nonce, &challenge.nonce);
        framed
            .send(
                Proof {
                    proof: proof.to_vec(),
                }
                .encode_to_vec()
                .into_bytes(),
            )
            .await?;
        if !agent::verify_proof(
            secret,
            Role::Coordinator,
            name,
            &agent_nonce,
            &challenge.nonce,
            &challenge.proof,
        ) {
            bail!("the network coordinator at {peer} does not hold this run's secret: is --key the run's agent.key?");
        }
        framed
            .codec_mut()
            .set_max_frame_length(agent::MAX_FRAME_BYTES);
        let session = Session::new(secret, Role::Agent, name, &agent_nonce, &challenge.nonce);
        Ok(Conn {
            framed,
            session,
            peer,
            vehicles,
        })
    }

    /// The coordinator's side of the handshake of an accepted connection: the agent's name and
    /// the connection, or why the peer is refused. `admit` says whether an agent of that name
    /// may join (it names the agents the run waits for).
    pub async fn accept(
        stream: TcpStream,
        secret: &Secret,
        digest: [u8; 32],
        vehicles: usize,
        admit: impl Fn(&str) -> Result<(), String>,
    ) -> anyhow::Result<(String, Conn)> {
        stream.set_nodelay(true)?;
        let peer = stream.peer_addr()?;
        let mut framed = Framed::new(stream, codec());
        let hello = step("hello", async {
            Ok(agent::decode_hello(&next_frame(&mut framed).await?)?)
        })
        .await?;
        admit(&hello.agent).map_err(anyhow::Error::msg)?;
        let nonce = agent::nonce();
        let proof = agent::proof(
            secret,
            Role::Coordinator,
            &hello.agent,
            &hello.nonce,
            &nonce,
        );
        framed
            .send(
                Challenge {
                    nonce: nonce.to_vec(),
                    proof: proof.to_vec(),
                }
                .encode_to_vec()
                .into_bytes(),
            )
            .await?;
        let got = step("proof", async {
            Ok(agent::decode_proof(&next_frame(&mut framed).await?)?)
        })
        .await
        .with_context(|| format!("agent {:?}", hello.agent))?;
        if !agent::verify_proof(
            secret,
            Role::Agent,
            &hello.agent,
            &hello.nonce,
            &nonce,
            &got.proof,
        ) {
            bail!("wrong secret (agent {:?})", hello.agent);
        }
        // Only a holder of the secret learns whether its scenario matches.
        if hello.scenario_digest != digest {
            bail!(
                "agent {:?} loaded another scenario file than this run's (SHA-256 differs)",
                hello.agent
            );
        }
        framed
            .codec_mut()
            .set_max_frame_length(agent::MAX_FRAME_BYTES);
        let session = Session::new(
            secret,
            Role::Coordinator,
            &hello.agent,
            &hello.nonce,
            &nonce,
        );
        Ok((
            hello.agent,
            Conn {
                framed,
                session,
                peer,
                vehicles,
            },
        ))
    }

    async fn send_sealed(&mut self, body: Vec<u8>) -> std::io::Result<()> {
        let frame = self.session.seal(&body);
        self.framed.send(frame.into_bytes()).await
    }

    async fn recv_sealed(&mut self) -> Result<Vec<u8>, RecvError> {
        let frame = next_frame(&mut self.framed).await?;
        Ok(self.session.open(&frame)?.to_vec())
    }

    /// Coordinator → agent.
    pub async fn send_to_agent(&mut self, body: to_agent::Body) -> std::io::Result<()> {
        self.send_sealed(agent::encode_to_agent(body)).await
    }

    /// Agent → coordinator.
    pub async fn send_from_agent(&mut self, body: from_agent::Body) -> std::io::Result<()> {
        self.send_sealed(agent::encode_from_agent(body)).await
    }

    /// The agent's next message (coordinator side).
    pub async fn recv_from_agent(&mut self) -> Result<from_agent::Body, RecvError> {
        let body = self.recv_sealed().await?;
        Ok(agent::decode_from_agent(&body, self.vehicles)?)
    }

    /// The coordinator's next message (agent side).
    pub async fn recv_to_agent(&mut self) -> Result<to_agent::Body, RecvError> {
        let body = self.recv_sealed().await?;
        Ok(agent::decode_to_agent(&body, self.vehicles)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::proto::agent::{Open, Report};
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    const DIGEST: [u8; 32] = [7; 32];

    /// A coordinator accepting one peer with `secret`; its handshake's outcome.
    async fn coordinator(
        secret: Secret,
    ) -> (
        String,
        tokio::task::JoinHandle<anyhow::Result<(String, Conn)>>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            Conn::accept(stream, &secret, DIGEST, 3, |name| match name {
                "hostb" => Ok(()),
                other => Err(format!("unknown agent {other:?}")),
            })
            .await
        });
        (addr, task)
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn an_agent_with_the_secret_joins_and_both_sides_talk() {
        let secret = Secret::from_bytes([1; 32]);
        let (addr, task) = coordinator(Secret::from_bytes([1; 32])).await;
        let mut agent = Conn::connect(&addr, "hostb", &secret, DIGEST, 3, soon())
            .await
            .unwrap();
        let (name, mut coord) = task.await.unwrap().unwrap();
        assert_eq!(name, "hostb");
        coord
            .send_to_agent(to_agent::Body::Open(Open {
                window: 4,
                opened_unix_ns: 9,
            }))
            .await
            .unwrap();
        match agent.recv_to_agent().await.unwrap() {
            to_agent::Body::Open(o) => assert_eq!((o.window, o.opened_unix_ns), (4, 9)),
            other => panic!("{other:?}"),
        }
        agent
            .send_from_agent(from_agent::Body::Report(Report {
                window: 4,
                ..Report::default()
            }))
            .await
            .unwrap();
        assert!(matches!(
            coord.recv_from_agent().await.unwrap(),
            from_agent::Body::Report(Report { window: 4, .. })
        ));
    }

    #[tokio::test]
    async fn a_peer_with_another_secret_is_refused_and_refuses() {
        let (addr, task) = coordinator(Secret::from_bytes([1; 32])).await;
        let wrong = Secret::from_bytes([2; 32]);
        let agent = Conn::connect(&addr, "hostb", &wrong, DIGEST, 3, soon()).await;
        let e = agent.err().expect("the agent refuses the coordinator");
        assert!(
            format!("{e:#}").contains("does not hold this run's secret"),
            "{e:#}"
        );
        let e = task.await.unwrap().err().expect("the coordinator refuses");
        assert_eq!(format!("{e:#}"), "wrong secret (agent \"hostb\")");
    }

    #[tokio::test]
    async fn an_unknown_agent_or_another_scenario_is_refused() {
        let secret = || Secret::from_bytes([1; 32]);
        let (addr, task) = coordinator(secret()).await;
        let _ = Conn::connect(&addr, "hostz", &secret(), DIGEST, 3, soon()).await;
        let e = task.await.unwrap().err().unwrap();
        assert_eq!(format!("{e:#}"), "unknown agent \"hostz\"");
        let (addr, task) = coordinator(secret()).await;
        let _ = Conn::connect(&addr, "hostb", &secret(), [8; 32], 3, soon()).await;
        let e = task.await.unwrap().err().unwrap();
        assert!(format!("{e:#}").contains("another scenario file"), "{e:#}");
    }

    /// A peer declaring a 4 GiB hello is refused at the length, nothing read or reserved.
    #[tokio::test]
    async fn a_handshake_frame_beyond_its_bound_is_refused_at_its_header() {
        let (addr, task) = coordinator(Secret::from_bytes([1; 32])).await;
        let mut peer = TcpStream::connect(&addr).await.unwrap();
        peer.write_all(&[0xff, 0xff, 0xff, 0xff, 0, 1])
            .await
            .unwrap();
        let e = task.await.unwrap().err().unwrap();
        assert!(format!("{e:#}").contains("hello"), "{e:#}");
        assert!(format!("{e:#}").contains("frame size too big"), "{e:#}");
    }
}
