//! A transaction as the snapshot shows it (its state, sends and status changes), and the
//! counts by queue.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use serde::Serialize;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::{
    StreamCounts,
    ser::{ser_display, ser_ms, ser_opt_display, ser_opt_ms},
};
use crate::{
    engine::{
        lifecycle::{Queue, TxState},
        net::StreamOutcome,
    },
    source::Origin,
};

/// The longest a transaction's send log grows before its older half is dropped.
pub const SEND_LOG_CAP: usize = 256;

/// One send of one transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SendRecord {
    /// When it was handed to the wire, since the run started: when the engine chose to send it
    /// until the transport says, and for a stream that never reached the wire.
    #[serde(rename = "at_ms", serialize_with = "ser_ms")]
    pub at: Duration,
    #[serde(serialize_with = "ser_display")]
    pub leader: Pubkey,
    pub addr: Option<SocketAddr>,
    /// The slot the engine took as current when it chose to send: whose turn it was, so a
    /// landing in the next leader's first slot can be told from one sent during that turn.
    /// `None` before the first slot was known (and in reports written before it was recorded).
    pub slot: Option<u64>,
    /// What became of it; `None` while in flight (or when it was never handed to QUIC, for a
    /// leader without a TPU address).
    pub outcome: Option<StreamOutcome>,
    /// Time from handing it to QUIC to the leader's answer.
    pub ack_ms: Option<u64>,
    /// Why it failed; `None` when accepted or still in flight.
    pub error: Option<String>,
}

/// A state change of one transaction, kept for its detail view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatusRecord {
    #[serde(rename = "at_ms", serialize_with = "ser_ms")]
    pub at: Duration,
    pub state: TxState,
    pub note: Option<String>,
}

/// Everything the engine knows about one transaction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TxView {
    /// Position in the input, from 0.
    pub id: u32,
    #[serde(serialize_with = "ser_display")]
    pub signature: Signature,
    /// `FILE:LINE` (or `FILE[index]` for JSON arrays) of the input.
    pub origin: Origin,
    pub state: TxState,
    /// Number of sends that went out (accepted or not), across re-signings.
    pub sends: u32,
    /// Times it was signed again with a fresh blockhash (deploys only).
    pub resigns: u32,
    #[serde(serialize_with = "ser_opt_ms")]
    pub first_sent: Option<Duration>,
    #[serde(serialize_with = "ser_opt_ms")]
    pub last_sent: Option<Duration>,
    pub landed_slot: Option<u64>,
    /// From first send to the snapshot that saw it at the requested commitment.
    #[serde(serialize_with = "ser_opt_ms")]
    pub time_to_land: Option<Duration>,
    /// Last block height at which its blockhash is valid; `None` for durable-nonce transactions
    /// and before the engine has learned it.
    pub last_valid_block_height: Option<u64>,
    /// The height above is exact (the cluster named it); otherwise it is an upper bound and
    /// is shown as an estimate.
    pub last_valid_exact: bool,
    /// Uses a durable nonce: never expires by blockhash.
    pub durable_nonce: bool,
    /// Its compute-unit price in micro-lamports, when a ComputeBudget instruction sets one.
    pub cu_price: Option<u64>,
    /// Its compute-unit limit, when a ComputeBudget instruction sets one.
    pub cu_limit: Option<u32>,
    /// The leader its latest send went to first. Leaders' keys are shared by every
    /// transaction that names them: a key in each was 66 of a view's 344 bytes.
    #[serde(serialize_with = "ser_opt_display")]
    pub last_leader: Option<Arc<Pubkey>>,
    /// The leader of the slot it landed in, by the cluster's schedule; `None` until final, or
    /// when the schedule for that slot was not known.
    #[serde(serialize_with = "ser_opt_display")]
    pub landed_leader: Option<Arc<Pubkey>>,
    pub last_error: Option<Arc<str>>,
    /// The most recent streams sent (one per send per leader), oldest first. Bounded: a
    /// durable-nonce transaction can be resent for hours, so once the log passes
    /// [`SEND_LOG_CAP`] its older half is dropped and counted in `send_log_dropped`.
    pub send_log: Arc<Vec<SendRecord>>,
    /// Streams left out of `send_log` because it was full.
    pub send_log_dropped: u64,
    /// Every leader it was sent to, without repeats, in the order first sent to: kept whole
    /// when the send log drops old entries.
    pub sent_to: Arc<Vec<Pubkey>>,
    /// Every state change, oldest first.
    pub history: Arc<Vec<StatusRecord>>,
}

impl TxView {
    /// Blocks left before its blockhash expires, given the chain's block height.
    pub fn blocks_left(&self, block_height: u64) -> Option<u64> {
        self.last_valid_block_height
            .map(|last| last.saturating_sub(block_height))
    }
}

/// Counters by queue, kept by the engine as transitions happen (never recounted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub total: u64,
    pub pending: u64,
    pub resent: u64,
    pub confirmed: u64,
    pub failed: u64,
    pub expired: u64,
    /// Transaction sends: first sends and resends, one per transaction per pacer slot,
    /// however many leaders each went to.
    pub sends: u64,
    /// Transaction sends that reached no leader (every stream of the send failed). The same
    /// unit as `sends`.
    pub send_errors: u64,
    /// Streams to leaders (a send to two leaders is two streams) and their outcomes.
    pub streams: StreamCounts,
}

impl Counts {
    pub fn of(&self, queue: Queue) -> u64 {
        match queue {
            Queue::Pending => self.pending,
            Queue::Resent => self.resent,
            Queue::Confirmed => self.confirmed,
            Queue::Failed => self.failed,
            Queue::Expired => self.expired,
        }
    }

    pub fn finished(&self) -> u64 {
        self.confirmed + self.failed + self.expired
    }
}
