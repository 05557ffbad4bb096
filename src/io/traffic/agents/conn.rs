//! One connection between the network coordinator and a capture agent: TCP through the
//! secure channel between hosts ([`SecureConn`], channel [`Channel::Agents`], frames of at
//! most [`agent::MAX_FRAME_BYTES`]), the agent's Hello first, then the protocol's messages.

use crate::lockstep::secure::{self, ConnectError, DialError, SecureConn};
use crate::wire::agent;
use crate::wire::proto::agent::{from_agent, to_agent, Hello};
use crate::wire::secure::{Channel, HandshakeError, OpenError, Secret};
use anyhow::bail;
use prost::bytes::Bytes;
use prost::Message;
use std::net::SocketAddr;
use tokio::net::TcpStream;
use tokio::time::Instant;

use secure::HANDSHAKE_TIMEOUT;

/// An authenticated connection.
pub struct Conn {
    conn: SecureConn,
    /// The other end's address.
    pub peer: SocketAddr,
    /// The scenario's vehicle count (for the decoding checks).
    vehicles: usize,
    /// The message being sent (kept between messages, up to [`OUT_KEPT`] bytes of room).
    out: Vec<u8>,
}

/// Room for an outgoing message a connection keeps between messages.
const OUT_KEPT: usize = 4 << 20;

/// Why a message could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RecvError {
    #[error("closed the connection")]
    Closed,
    #[error("{0}")]
    Io(std::io::Error),
    #[error("sent {0}")]
    Open(OpenError),
    #[error("sent a message that does not decode: {0}")]
    Decode(#[from] agent::DecodeError),
}

impl From<secure::RecvError> for RecvError {
    fn from(e: secure::RecvError) -> Self {
        match e {
            secure::RecvError::Closed => RecvError::Closed,
            secure::RecvError::Io(e) => RecvError::Io(e),
            secure::RecvError::Open(e) => RecvError::Open(e),
        }
    }
}

impl Conn {
    /// The agent's side: connects to the coordinator at `addr` (retrying until `deadline`),
    /// checks that it holds the run's secret, and says who it is.
    pub async fn connect(
        addr: &str,
        name: &str,
        secret: &Secret,
        digest: [u8; 32],
        vehicles: usize,
        deadline: Instant,
    ) -> anyhow::Result<Conn> {
        let mut conn =
            match secure::dial(addr, secret, Channel::Agents, agent::MAX_FRAME_BYTES, deadline).await
            {
                Ok(c) => c,
                Err(DialError::Unreachable(e)) => {
                    bail!("cannot reach the network coordinator at {addr}: {e}")
                }
                // A coordinator closes on a handshake it cannot authenticate, saying nothing.
                Err(DialError::Refused) => bail!(
                    "the network coordinator at {addr} refused the handshake: it holds another secret (is --key the run's agent.key?)"
                ),
                Err(DialError::Failed(e)) => bail!("network coordinator at {addr}: {e}"),
            };
        let peer = conn.peer;
        let hello = Hello {
            version: agent::VERSION,
            agent: name.to_owned(),
            scenario_digest: digest.to_vec(),
        };
        conn.send(&hello.encode_to_vec()).await?;
        Ok(Conn {
            conn,
            peer,
            vehicles,
            out: Vec::new(),
        })
    }

    /// The coordinator's side of an accepted connection: the agent's name and the connection,
    /// or why the peer is refused. `admit` says whether an agent of that name may join (it
    /// names the agents the run waits for); it is asked only once the peer has shown it holds
    /// the secret.
    pub async fn accept(
        stream: TcpStream,
        secret: &Secret,
        digest: [u8; 32],
        vehicles: usize,
        admit: impl Fn(&str) -> Result<(), String>,
    ) -> anyhow::Result<(String, Conn)> {
        let peer = stream.peer_addr()?;
        let mut conn =
            match SecureConn::accept(stream, secret, Channel::Agents, agent::MAX_FRAME_BYTES).await
            {
                Ok(c) => c,
                Err(ConnectError::Handshake(HandshakeError::Refused)) => {
                    bail!("wrong secret (the handshake fails its authentication)")
                }
                Err(e) => return Err(e.into()),
            };
        let hello = match tokio::time::timeout(HANDSHAKE_TIMEOUT, conn.recv()).await {
            Err(_) => bail!("no hello within {HANDSHAKE_TIMEOUT:?}"),
            Ok(Err(e)) => bail!("hello: {}", RecvError::from(e)),
            Ok(Ok(bytes)) => agent::decode_hello(&bytes)?,
        };
        admit(&hello.agent).map_err(anyhow::Error::msg)?;
        if hello.scenario_digest != digest {
            bail!(
                "agent {:?} loaded another scenario file than this run's (SHA-256 differs)",
                hello.agent
            );
        }
        Ok((
            hello.agent,
            Conn {
                conn,
                peer,
                vehicles,
                out: Vec::new(),
            },
        ))
    }

    /// Coordinator → agent.
    pub async fn send_to_agent(&mut self, body: to_agent::Body) -> std::io::Result<()> {
        agent::encode_to_agent_in(body, &mut self.out);
        self.send_out().await
    }

    /// Agent → coordinator.
    pub async fn send_from_agent(&mut self, body: from_agent::Body) -> std::io::Result<()> {
        agent::encode_from_agent_in(body, &mut self.out);
        self.send_out().await
    }

    /// Sends the message in `out`, which keeps its room for the next unless it grew past
    /// [`OUT_KEPT`].
    async fn send_out(&mut self) -> std::io::Result<()> {
        let sent = self.conn.send(&self.out).await;
        if self.out.capacity() > OUT_KEPT {
            self.out = Vec::new();
        }
        sent
    }

    /// The agent's next message (coordinator side).
    pub async fn recv_from_agent(&mut self) -> Result<from_agent::Body, RecvError> {
        let body = Bytes::from(self.conn.recv().await?);
        Ok(agent::decode_from_agent(body, self.vehicles)?)
    }

    /// The coordinator's next message (agent side).
    pub async fn recv_to_agent(&mut self) -> Result<to_agent::Body, RecvError> {
        let body = Bytes::from(self.conn.recv().await?);
        Ok(agent::decode_to_agent(body, self.vehicles)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::proto::agent::{Open, Report};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
            format!("{e:#}").contains("refused the handshake: it holds another secret"),
            "{e:#}"
        );
        let e = task.await.unwrap().err().expect("the coordinator refuses");
        assert_eq!(
            format!("{e:#}"),
            "wrong secret (the handshake fails its authentication)"
        );
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

    /// A peer of the old plaintext protocol (a 4-byte length, then a Hello), one declaring a
    /// 4 GiB frame, and one that stalls its handshake: each refused by name.
    #[tokio::test]
    async fn a_plaintext_or_stalled_peer_is_refused_at_its_first_bytes() {
        for first in [
            &[0, 0, 0, 42, 0x08, 0x01][..],
            &[0xff, 0xff, 0xff, 0xff, 0, 1],
        ] {
            let (addr, task) = coordinator(Secret::from_bytes([1; 32])).await;
            let mut peer = TcpStream::connect(&addr).await.unwrap();
            peer.write_all(first).await.unwrap();
            let e = task.await.unwrap().err().unwrap();
            assert!(
                format!("{e:#}").contains("does not speak this secure channel"),
                "{e:#}"
            );
        }
        let (addr, task) = coordinator(Secret::from_bytes([1; 32])).await;
        let _silent = TcpStream::connect(&addr).await.unwrap();
        let e = task.await.unwrap().err().unwrap();
        assert_eq!(format!("{e:#}"), "no handshake within 5s");
    }

    /// What a relay in the middle does to the records after the agent's Hello.
    #[derive(Clone, Copy, Debug)]
    enum Tamper {
        Flip,
        Replay,
        Reorder,
    }

    /// A relay between an agent and the coordinator that passes the handshake and the first
    /// record (the Hello) and then tampers with the next two records from the agent.
    async fn relay(to: String, tamper: Tamper) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (mut agent, _) = listener.accept().await.unwrap();
            let mut coord = TcpStream::connect(&to).await.unwrap();
            let mut hello = [0u8; 52];
            agent.read_exact(&mut hello).await.unwrap();
            coord.write_all(&hello).await.unwrap();
            let mut answer = [0u8; 48];
            coord.read_exact(&mut answer).await.unwrap();
            agent.write_all(&answer).await.unwrap();
            let mut records = Vec::new();
            for _ in 0..3 {
                let mut len = [0u8; 2];
                agent.read_exact(&mut len).await.unwrap();
                let mut r = vec![0u8; usize::from(u16::from_be_bytes(len))];
                agent.read_exact(&mut r).await.unwrap();
                records.push([len.to_vec(), r].concat());
            }
            let mut out = vec![records[0].clone()];
            match tamper {
                Tamper::Flip => {
                    let mut r = records[1].clone();
                    r[9] ^= 0x20;
                    out.push(r);
                }
                Tamper::Replay => out.extend([records[1].clone(), records[1].clone()]),
                Tamper::Reorder => out.extend([records[2].clone(), records[1].clone()]),
            }
            for r in out {
                coord.write_all(&r).await.unwrap();
            }
            // Held open until the coordinator closes.
            let mut rest = Vec::new();
            let _ = coord.read_to_end(&mut rest).await;
        });
        addr
    }

    /// A record altered, replayed or reordered on its way is refused with its reason, and
    /// nothing the relay made up reaches the coordinator: a replayed report only its first,
    /// genuine time.
    #[tokio::test]
    async fn a_record_altered_replayed_or_reordered_by_a_relay_is_refused() {
        for tamper in [Tamper::Flip, Tamper::Replay, Tamper::Reorder] {
            let secret = || Secret::from_bytes([1; 32]);
            let (addr, task) = coordinator(secret()).await;
            let via = relay(addr, tamper).await;
            let mut agent = Conn::connect(&via, "hostb", &secret(), DIGEST, 3, soon())
                .await
                .unwrap();
            for window in [1, 2] {
                agent
                    .send_from_agent(from_agent::Body::Report(Report {
                        window,
                        ..Report::default()
                    }))
                    .await
                    .unwrap();
            }
            let (_, mut coord) = task.await.unwrap().unwrap();
            let mut got = Vec::new();
            let e = loop {
                match coord.recv_from_agent().await {
                    Ok(from_agent::Body::Report(r)) => got.push(r.window),
                    Ok(other) => panic!("{other:?}"),
                    Err(e) => break e,
                }
            };
            println!("{tamper:?}: received windows {got:?}, then: {e}");
            let expected: &[u32] = match tamper {
                Tamper::Replay => &[1],
                _ => &[],
            };
            assert_eq!(got, expected, "{tamper:?}");
            assert!(
                e.to_string()
                    .contains("a record that fails its authentication"),
                "{tamper:?}: {e}"
            );
        }
    }
}
