//! The small request/response protocol our simulated clients and brokers
//! speak over the runtime's simulated TCP (`crate::rt::net`): length-prefixed JSON frames, one request in flight
//! per connection (clients open one connection per purpose, as librdkafka
//! keeps separate coordinator and partition-leader connections).

use std::time::Duration;

use crate::rt::net::TcpStream;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::clock::Gate;

pub const PORT: u16 = 9092;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    /// Join (or rejoin) the group; answered when the rebalance completes.
    Join {
        member_id: Option<String>,
        client: String,
        session_ms: u64,
        rebalance_ms: u64,
        /// The cooperative-sticky protocol (else eager range).
        #[serde(default)]
        cooperative: bool,
        /// Cooperative: the partitions the member owns, and the generation
        /// it got them in (the sticky assignor's user data).
        #[serde(default)]
        owned: Vec<u32>,
        #[serde(default)]
        owned_generation: u64,
        /// Static membership (KIP-345): `group.instance.id`.
        #[serde(default)]
        instance_id: Option<String>,
    },
    Heartbeat {
        member_id: String,
        generation: u64,
    },
    Leave {
        member_id: String,
    },
    /// Generation-checked offset commit: the membership proof.
    Commit {
        member_id: String,
        generation: u64,
    },
    Produce {
        partition: u32,
        payload: Vec<u8>,
        create_time: u64,
        /// Who sent it: the simulator's ground truth for the per-rule
        /// oracles (no Kafka request carries this; the broker never acts on it).
        author: String,
    },
    /// `from: None` asks for the log end (Kafka `auto.offset.reset=latest`).
    Fetch {
        partition: u32,
        from: Option<u64>,
        max_wait_ms: u64,
    },
    Metadata,
    /// Creates the election topic with the broker's partition count; a
    /// no-op when it exists (the Kafka backend recreates a lost topic).
    CreateTopic,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupError {
    UnknownMember,
    /// KIP-394: a JoinGroup without a member id (profile
    /// `member_id_required`; answered only where it changes what the
    /// client does: a cooperative member that still owns partitions).
    MemberIdRequired,
    IllegalGeneration,
    RebalanceInProgress,
    NotCoordinator,
    /// KIP-345: a newer process joined with this member's instance id.
    FencedInstanceId,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireRecord {
    pub offset: u64,
    pub timestamp: u64,
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Response {
    Joined {
        member_id: String,
        generation: u64,
        assignment: Vec<u32>,
    },
    Ok,
    Error(GroupError),
    Produced {
        offset: u64,
    },
    Fetched {
        records: Vec<WireRecord>,
        next: u64,
    },
    Metadata {
        partitions: u32,
    },
    NotLeader,
    /// The election topic does not exist (the broker lost its state).
    UnknownTopic,
}

pub async fn write_frame<T: Serialize>(stream: &mut TcpStream, msg: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    let len = u32::try_from(bytes.len()).map_err(std::io::Error::other)?;
    let mut frame = Vec::with_capacity(bytes.len() + 4);
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(&bytes);
    stream.write_all(&frame).await
}

pub async fn read_frame<T: for<'de> Deserialize<'de>>(stream: &mut TcpStream) -> std::io::Result<T> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await?;
    let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut buf).await?;
    serde_json::from_slice(&buf).map_err(std::io::Error::other)
}

/// A client connection to one broker that reconnects after any failure.
/// The simulated TCP never retransmits, so a dropped segment stalls the stream:
/// every call has a timeout, after which the connection is thrown away.
pub struct Conn {
    addr: String,
    stream: Option<TcpStream>,
    gate: Gate,
}

/// Why a request got no answer. Its text is what traces print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The connection failed or broke, or the frame did not decode (the
    /// I/O error's own text).
    #[error("{0}")]
    Io(String),
    /// No answer within the request's timeout.
    #[error("request timed out")]
    TimedOut,
}

impl Conn {
    pub fn new(host: &str, gate: Gate) -> Conn {
        Conn { addr: format!("{host}:{PORT}"), stream: None, gate }
    }

    pub async fn call(&mut self, req: &Request, timeout: Duration) -> Result<Response, CallError> {
        self.exchange(req, timeout).await
    }

    /// One request and its answer in any of the simulator's protocols (the
    /// brokers', the harness store's).
    pub async fn exchange<Q: Serialize, A: for<'de> Deserialize<'de>>(
        &mut self,
        req: &Q,
        timeout: Duration,
    ) -> Result<A, CallError> {
        let addr = self.addr.clone();
        // Taken out for the exchange and put back only once its answer is
        // read: an exchange whose future is dropped half-way (its caller
        // gave up on it) takes the connection with it, so the answer it
        // left unread is never read as the answer to the next request.
        let mut stream = self.stream.take();
        let work = async {
            if stream.is_none() {
                stream = Some(TcpStream::connect(addr.as_str()).await.map_err(|e| CallError::Io(e.to_string()))?);
            }
            let s = stream.as_mut().expect("connected above");
            write_frame(s, req).await.map_err(|e| CallError::Io(e.to_string()))?;
            read_frame::<A>(s).await.map_err(|e| CallError::Io(e.to_string()))
        };
        let result = match tokio::time::timeout(timeout, work).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(CallError::TimedOut),
        };
        if result.is_ok() {
            self.stream = stream;
        }
        // A paused process handles the answer only when it resumes.
        self.gate.pass().await;
        result
    }
}
