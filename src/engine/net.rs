//! The two narrow doors between the engine and the network. Everything the engine needs from a
//! cluster goes through [`Chain`] (RPC reads) and [`Transport`] (sending wire bytes to a TPU), so
//! the same engine logic runs against a real validator and against the simulator in tests.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, OnceLock},
    time::Duration,
};

use futures::future::BoxFuture;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::time::Instant;

use crate::config::Commitment;

/// A failure talking to the RPC node; the engine retries and shows it, never gives up on it.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{call}: {reason}")]
pub struct ChainError {
    pub call: &'static str,
    pub reason: String,
}

impl ChainError {
    pub fn new(call: &'static str, reason: impl std::fmt::Display) -> Self {
        Self {
            call,
            reason: reason.to_string(),
        }
    }
}

/// What `getSignatureStatuses` says of one signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainStatus {
    pub slot: u64,
    /// The highest commitment the transaction has reached.
    pub commitment: Commitment,
    /// The transaction landed but its execution failed.
    pub err: Option<String>,
}

/// Largest batch [`Chain::signature_statuses`] takes (`getSignatureStatuses`' limit).
pub const STATUS_BATCH: usize = 256;

/// RPC reads the engine makes.
pub trait Chain: Send + Sync + 'static {
    fn slot(&self) -> BoxFuture<'static, Result<u64, ChainError>>;
    /// The block height of the bank at `commitment`: `Processed` for the tip the header shows,
    /// `Finalized` for expiry decisions, which no fork can undo.
    fn block_height(&self, commitment: Commitment) -> BoxFuture<'static, Result<u64, ChainError>>;
    /// Leaders of `limit` consecutive slots from `start`.
    fn slot_leaders(
        &self,
        start: u64,
        limit: u64,
    ) -> BoxFuture<'static, Result<Vec<Pubkey>, ChainError>>;
    /// TPU QUIC address of every node that advertises one.
    fn tpu_quic_addresses(
        &self,
    ) -> BoxFuture<'static, Result<HashMap<Pubkey, SocketAddr>, ChainError>>;
    /// Statuses of at most [`STATUS_BATCH`] signatures, in order. Without `history` the node
    /// answers from its status cache alone (about the last 300 slots); with it
    /// (`searchTransactionHistory`) it also searches its ledger, which is slower but sees older
    /// landings.
    fn signature_statuses(
        &self,
        signatures: Vec<Signature>,
        history: bool,
    ) -> BoxFuture<'static, Result<Vec<Option<ChainStatus>>, ChainError>>;
    /// Whether the bank at `commitment` still accepts `hash`.
    fn blockhash_valid(
        &self,
        hash: Hash,
        commitment: Commitment,
    ) -> BoxFuture<'static, Result<bool, ChainError>>;
    /// The newest blockhash and the last block height at which it is valid.
    fn latest_blockhash(&self) -> BoxFuture<'static, Result<(Hash, u64), ChainError>>;
    /// Whether `identity` has stake (for the header); `None` when unknown.
    fn is_staked(&self, identity: Pubkey) -> BoxFuture<'static, Result<bool, ChainError>>;
    /// What recent slots charged, in micro-lamports per compute unit, to write all of
    /// `accounts` (`getRecentPrioritizationFees`), one figure per slot.
    fn recent_fees(
        &self,
        accounts: Vec<Pubkey>,
    ) -> BoxFuture<'static, Result<Vec<u64>, ChainError>>;
}

/// Why a send did not reach the leader. Each kind backs the leader off in its own way (see
/// `backoff_base` in `leaders/backoff.rs`): throttling briefly and often, connection failures and timeouts
/// longer, since each retry costs a handshake or a stalled stream.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SendError {
    /// The leader did not answer a stream handed to the wire within its link's deadline
    /// (see `follow`); the figure is how long it had, from the hand-off.
    #[error("send timed out after {0:?}")]
    Timeout(Duration),
    /// The server limited us: stream opens stalled, streams were stopped, or it closed the
    /// connection for exceeding limits.
    #[error("throttled: {0}")]
    Throttled(String),
    /// The server granted no stream credit within the link's bound: a 4.0 leader over our
    /// budget has stopped reading us — or a frozen one. Counted and backed off as throttling,
    /// but it is no answer: it does not show the leader alive (see `Liveness`).
    #[error("throttled: {0}")]
    Stalled(String),
    /// Connecting failed or the connection was lost.
    #[error("connection: {0}")]
    Connection(String),
    /// Any other failure writing the stream.
    #[error("stream: {0}")]
    Stream(String),
    /// The stream never reached the wire within the send timeout: it waited on our side, for
    /// a connection, room in its congestion window or stream credit (see `follow`). It says
    /// nothing of the leader: no backoff, and the leader's figures do not count it against it.
    #[error("not handed to the leader within {0:?}: waited on txpace's side")]
    Unsent(Duration),
    /// No connection to the leader was open and no new one may start for this long: the
    /// leader's per-address limit of new connections (see `engine::handshakes`), counted on
    /// our side, or a hold after it ignored our last handshake. Not the leader's doing to
    /// count against it: the leader is spared until then.
    #[error("no new connection to it for {} ms (the leader admits 8 a minute per address; none for 7.5 s after one it ignored)", .0.as_millis())]
    HandshakeHeld(Duration),
}

impl SendError {
    /// The server closed the connection with an application close: a 4.0 leader does so to a
    /// key over its connection limit (code 4, "too_many"), to a key evicted from a full table
    /// (1, "dropped"), to an address over its handshake rate (2, "disallowed") and to an invalid
    /// stream (5). Each is the leader limiting us: throttling. The QUIC transport and the
    /// simulator name it alike.
    pub fn closed_by_server(code: u64, reason: &[u8]) -> Self {
        SendError::Throttled(format!(
            "connection closed by server (code {code}{})",
            if reason.is_empty() {
                String::new()
            } else {
                format!(": {}", String::from_utf8_lossy(reason))
            }
        ))
    }

    /// The server stopped the stream (a 4.0 leader does when it gave up reading it: its data
    /// did not come within 2 s): throttling, as the QUIC transport and the simulator name it.
    pub fn stopped_by_server(code: u64) -> Self {
        SendError::Throttled(format!("stream stopped by server (code {code})"))
    }

    /// A stream open waited longer than the link's bound for stream credit: the leader has
    /// not read our earlier streams (a 4.0 leader over our budget, or a frozen one).
    pub fn open_stalled(bound: Duration) -> Self {
        SendError::Stalled(format!("stream open stalled over {} ms", bound.as_millis()))
    }

    /// The handshake did not finish within `bound`: a 4.0 leader ignores the handshakes of an
    /// address over its new-connection rate, and the client only ever sees this.
    pub fn handshake_timed_out(bound: Duration) -> Self {
        SendError::Connection(format!(
            "handshake timed out after {} ms",
            bound.as_millis()
        ))
    }

    /// Short label for counters and tables.
    pub fn kind(&self) -> &'static str {
        match self {
            SendError::Timeout(_) => "timeout",
            SendError::Throttled(_) | SendError::Stalled(_) => "throttled",
            SendError::Connection(_) => "connection",
            SendError::Stream(_) => "stream",
            SendError::Unsent(_) => "unsent",
            SendError::HandshakeHeld(_) => "held",
        }
    }
}

/// What became of one stream to one leader: the unit of the per-leader figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamOutcome {
    /// The server acknowledged the whole stream.
    Accepted,
    /// The server limited us (stalled open, stopped stream, closed for exceeding limits).
    Throttled,
    /// Connecting failed or the connection was lost.
    Connection,
    /// No answer within the leader's deadline, counted from the hand-off (see `follow`).
    Timeout,
    /// Any other stream failure, or one on our side of the stream (never handed to the
    /// leader): it says nothing of the server.
    Other,
}

impl StreamOutcome {
    pub fn of(result: &Result<(), SendError>) -> Self {
        match result {
            Ok(()) => StreamOutcome::Accepted,
            Err(SendError::Throttled(_) | SendError::Stalled(_)) => StreamOutcome::Throttled,
            Err(SendError::Connection(_)) => StreamOutcome::Connection,
            Err(SendError::Timeout(_)) => StreamOutcome::Timeout,
            Err(SendError::Stream(_) | SendError::Unsent(_) | SendError::HandshakeHeld(_)) => {
                StreamOutcome::Other
            }
        }
    }
}

/// Connection-level state the transport reports for the leaders panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    Idle,
    Connecting,
    Connected,
    Failed(String),
}

/// When a stream was handed to the wire: marked by the transport the moment it writes the
/// transaction (QUIC: on an opened stream; RPC: the POST), read by the engine once the send has
/// ended, however it ended — a timed-out send's future is dropped, its mark is not. The pace on
/// the wire and a leader's acknowledgement time run from it, not from when the pacer chose to
/// send: waiting for a connection or for stream credit is the transport's time, not the wire's.
///
/// With it, how long the stream's open waited for stream credit (`open_uni`), when it had to: a 4.0 leader over our budget
/// refuses nothing, it reads late and returns credit late, and this wait is the only sign of
/// it a sender gets before opens stall altogether (see `LeaderBook::on_credit_wait`).
#[derive(Clone, Debug, Default)]
pub struct Handoff(Arc<HandoffMarks>);

#[derive(Debug, Default)]
struct HandoffMarks {
    at: OnceLock<Instant>,
    credit_wait: OnceLock<Duration>,
}

impl Handoff {
    /// Marks the stream handed over now (once; a later mark is ignored).
    pub fn mark(&self) {
        let _ = self.0.at.set(Instant::now());
    }

    /// The stream waited `waited` for stream credit (marked once, by the transport, only when
    /// credit was not there at once: a stream that never waited has no wait, not a zero one).
    pub fn credit_waited(&self, waited: Duration) {
        let _ = self.0.credit_wait.set(waited);
    }

    /// A hand-off already marked at `at` (for tests of what reads it).
    #[cfg(any(test, feature = "test-support"))]
    pub fn marked(at: Instant) -> Self {
        let h = Self::default();
        let _ = h.0.at.set(at);
        h
    }

    /// When it was handed over; `None` when it never got that far (no connection, no credit).
    pub fn at(&self) -> Option<Instant> {
        self.0.at.get().copied()
    }

    /// How long its open waited for stream credit; `None` when it did not have to (or the
    /// transport has no credit, as RPC).
    pub fn credit_wait(&self) -> Option<Duration> {
        self.0.credit_wait.get().copied()
    }
}

/// Why a stream failed when its connection was given up (see [`Transport::abandon`]).
pub const ABANDONED: &str = "given up: no answer on it, reconnecting";

/// Sends one wire transaction to one TPU address.
pub trait Transport: Send + Sync + 'static {
    /// Sends `wire` on its own stream, marking `handoff` when it is written. The caller follows
    /// the call (see `follow`): the send timeout bounds its wait to reach the wire, the
    /// leader's link deadline the answer after.
    fn send(
        &self,
        addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> BoxFuture<'static, Result<(), SendError>>;
    /// Starts connecting to upcoming leaders so their first send does not pay the handshake.
    fn prepare(&self, addrs: &[SocketAddr]);
    fn link_state(&self, addr: SocketAddr) -> LinkState;
    /// `addr` stopped answering on its connection: give that connection up, ending the streams
    /// still waiting on it, so the next send finds out afresh with a new handshake. A restarted
    /// validator never answers its predecessor's connection, which otherwise held every probe
    /// until the idle timeout; a frozen one answers a new handshake as soon as it thaws.
    /// Transports without connections have nothing to give up.
    fn abandon(&self, _addr: SocketAddr) {}
    /// What the transport measured of its link to `addr` (see [`PathFigures`]); `None` when it
    /// measured nothing (never connected, or a transport without connections).
    fn path_figures(&self, _addr: SocketAddr) -> Option<PathFigures> {
        None
    }
}

/// What the transport measured of its link to one leader address, summed over every connection
/// it opened to it since it first did (QUIC: quinn's `Connection::stats()` path statistics
/// and the pool's own counts). Never estimated: a figure not measured is `None` or 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathFigures {
    /// Quinn's smoothed round trip (`PathStats::rtt`), the mean over the live connections;
    /// with none live, the last connection's as it closed (the link was measured, and a
    /// leader whose turn is over is not unjudged); `None` until a connection was up.
    pub srtt: Option<Duration>,
    /// Datagrams sent, counted lost, and congestion events (`PathStats`), over every
    /// connection, closed ones included.
    pub sent_packets: u64,
    pub lost_packets: u64,
    pub congestion_events: u64,
    /// How long the last handshake that finished took.
    pub handshake: Option<Duration>,
    /// Handshakes started in the last minute (a 4.0 leader admits 8 a minute per address).
    pub new_last_minute: u32,
    /// Handshakes that timed out, in all.
    pub handshake_timeouts: u64,
    /// How long ago a handshake timed out while another connection to the address was up.
    pub ignored_ago: Option<Duration>,
    /// Application close codes the leader closed our connections with, and how many times
    /// each, lowest code first.
    pub closes: Vec<(u64, u64)>,
    /// How long ago the leader last closed a connection with code 1 ("dropped": evicted).
    pub evicted_ago: Option<Duration>,
    /// Live connections now.
    pub connections: u32,
}
