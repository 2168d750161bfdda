//! What is known of one transaction beyond this run: the facts a run streams to its journal
//! ([`TxFact`]), and what an interrupted run's journal knew ([`Prior`]).

use solana_signature::Signature;

use crate::config::Commitment;

/// A fact about one transaction, streamed as it happens so a journal can make a run resumable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxFact {
    /// The `sends`-th send went out.
    Sent {
        id: u32,
        sends: u32,
    },
    Confirmed {
        id: u32,
        slot: u64,
        commitment: Commitment,
    },
    Failed {
        id: u32,
        slot: u64,
        error: String,
    },
    Expired {
        id: u32,
    },
    /// Signed again against a fresh blockhash; `signature` is its new id on chain.
    Resigned {
        id: u32,
        signature: Signature,
        attempt: u32,
    },
}

/// What an earlier, interrupted run knew of a transaction (from its journal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prior {
    /// Sent this many times, outcome unknown: the chain is asked before any resend.
    Sent {
        sends: u32,
    },
    Confirmed {
        slot: u64,
        commitment: Commitment,
        sends: u32,
    },
    Failed {
        slot: u64,
        error: String,
        sends: u32,
    },
    Expired {
        sends: u32,
    },
}
