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
/// `leaders::BackoffPolicy`): throttling briefly and often, connection failures and timeouts
/// longer, since each retry costs a handshake or a stalled stream.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum SendError {
    #[error("send timed out after {0:?}")]
    Timeout(Duration),
    /// The server limited us: stream opens stalled, streams were stopped, or it closed the
    /// connection for exceeding limits.
    #[error("throttled: {0}")]
    Throttled(String),
    /// Connecting failed or the connection was lost.
    #[error("connection: {0}")]
    Connection(String),
    /// Any other failure writing the stream.
    #[error("stream: {0}")]
    Stream(String),
}

impl SendError {
    /// Short label for counters and tables.
    pub fn kind(&self) -> &'static str {
        match self {
            SendError::Timeout(_) => "timeout",
            SendError::Throttled(_) => "throttled",
            SendError::Connection(_) => "connection",
            SendError::Stream(_) => "stream",
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
    /// No answer within the send timeout.
    Timeout,
    /// Any other stream failure.
    Other,
}

impl StreamOutcome {
    pub fn of(result: &Result<(), SendError>) -> Self {
        match result {
            Ok(()) => StreamOutcome::Accepted,
            Err(SendError::Throttled(_)) => StreamOutcome::Throttled,
            Err(SendError::Connection(_)) => StreamOutcome::Connection,
            Err(SendError::Timeout(_)) => StreamOutcome::Timeout,
            Err(SendError::Stream(_)) => StreamOutcome::Other,
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
#[derive(Clone, Debug, Default)]
pub struct Handoff(Arc<OnceLock<Instant>>);

impl Handoff {
    /// Marks the stream handed over now (once; a later mark is ignored).
    pub fn mark(&self) {
        let _ = self.0.set(Instant::now());
    }

    /// When it was handed over; `None` when it never got that far (no connection, no credit).
    pub fn at(&self) -> Option<Instant> {
        self.0.get().copied()
    }
}

/// Why a stream failed when its connection was given up (see [`Transport::abandon`]).
pub const ABANDONED: &str = "given up: no answer on it, reconnecting";

/// Sends one wire transaction to one TPU address.
pub trait Transport: Send + Sync + 'static {
    /// Sends `wire` on its own stream, marking `handoff` when it is written. The caller bounds
    /// the whole call with the send timeout.
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
}
