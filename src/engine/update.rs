//! The messages between the engine's parts: what spawned network tasks report back to the run
//! loop ([`Update`]), and what the chain's answers mean once `sync` has read them
//! ([`ChainFact`]). A leaf: it imports no part of the engine that handles these messages, so
//! every part can speak it without importing another.

use std::{collections::HashMap, net::SocketAddr, time::Duration};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::net::{ChainError, ChainStatus, SendError};

/// What spawned network tasks report back to the loop.
pub(super) enum Update {
    SendDone(SendDone),
    Chain(ChainUpdate),
}

/// One stream of a send finished.
pub(super) struct SendDone {
    /// The batch it belongs to (see `host`): a stream of an earlier batch that answers late
    /// names a transaction of that batch, not of the running one.
    pub batch: u32,
    pub id: u32,
    /// The send-log index of this send's first stream: names the send's round.
    pub round: usize,
    pub log_index: usize,
    /// Which send of the transaction, from 1.
    pub send: u32,
    pub leader: Pubkey,
    pub addr: SocketAddr,
    /// When the engine chose to send it.
    pub sent_at: Instant,
    /// When the transport handed it to the wire; `None` when it never got that far. Its
    /// acknowledgement time runs from here.
    pub handed_at: Option<Instant>,
    /// How long it waited for stream credit, when it had to.
    pub credit_wait: Option<Duration>,
    pub result: Result<(), SendError>,
}

/// An RPC call's answer, as it came back.
pub(super) enum ChainUpdate {
    Slot(Result<u64, ChainError>),
    Height(Result<u64, ChainError>),
    FinalHeight(Result<u64, ChainError>),
    Latest(Result<(Hash, u64), ChainError>),
    Schedule {
        start: u64,
        result: Result<Vec<Pubkey>, ChainError>,
    },
    Nodes(Result<HashMap<Pubkey, SocketAddr>, ChainError>),
    Staked(Result<bool, ChainError>),
    Statuses {
        /// The batch whose transactions `ids` name.
        batch: u32,
        asked: Instant,
        ids: Vec<u32>,
        /// Asked with `searchTransactionHistory`.
        history: bool,
        result: Result<Vec<Option<ChainStatus>>, ChainError>,
    },
    /// The tip's (processed) view of a blockhash; `height` is the highest tip height seen when
    /// asked.
    TipValidity {
        hash: Hash,
        height: u64,
        result: Result<bool, ChainError>,
    },
    /// What recent slots charged for the batch's most-written accounts.
    Fees(Result<Vec<u64>, ChainError>),
    /// The finalized bank's view; `final_height` is the finalized height known when asked.
    FinalValidity {
        hash: Hash,
        final_height: u64,
        result: Result<bool, ChainError>,
    },
}

/// A successful answer that bears on transactions' fates, for `confirm`. The answers
/// that only keep the chain view current (slot, schedule, nodes, tip height, stake) stay in
/// `sync`.
pub(super) enum ChainFact {
    /// The finalized block height, highest seen so far (it is re-judged even when unchanged).
    FinalHeight(u64),
    /// The cluster's latest blockhash and its last valid block height.
    Latest { hash: Hash, last_valid: u64 },
    Statuses {
        asked: Instant,
        ids: Vec<u32>,
        history: bool,
        statuses: Vec<Option<ChainStatus>>,
    },
    TipValidity {
        hash: Hash,
        height: u64,
        valid: bool,
    },
    FinalValidity {
        hash: Hash,
        final_height: u64,
        valid: bool,
    },
}
