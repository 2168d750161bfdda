//! What a run streams to `--events` as it happens: every state change of every transaction,
//! every stream to a leader with its outcome, and every change of a leader's link verdict. A leaf like `fact`: the store emits these
//! where the change happens, so the stream cannot disagree with the snapshots.

use std::net::SocketAddr;

use serde::Serialize;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::{lifecycle::TxState, net::StreamOutcome, snapshot::LinkView};

/// One thing that happened, with its time in ms since its run (a deploy phase's batch) started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// A transaction moved from one state to another.
    State {
        at_ms: u64,
        id: u32,
        #[serde(serialize_with = "ser_display")]
        signature: Signature,
        from: TxState,
        to: TxState,
        /// Why, when there is more to say (`confirmed at slot 1234`, an error).
        note: Option<String>,
    },
    /// One stream of a send to one leader finished: `sent_ms` is when it was handed to QUIC,
    /// `ack_ms` how long the leader took to answer (or the send to fail).
    Send {
        at_ms: u64,
        id: u32,
        #[serde(serialize_with = "ser_display")]
        signature: Signature,
        /// Which send of the transaction this stream belongs to, from 1.
        send: u32,
        #[serde(serialize_with = "ser_display")]
        leader: Pubkey,
        tpu: SocketAddr,
        sent_ms: u64,
        ack_ms: u64,
        outcome: StreamOutcome,
        error: Option<String>,
    },
    /// Signed again against a fresh blockhash (deploys): its signature on chain changes.
    Resigned {
        at_ms: u64,
        id: u32,
        #[serde(serialize_with = "ser_display")]
        signature: Signature,
        #[serde(serialize_with = "ser_display")]
        previous: Signature,
    },
    /// A leader on the panel got a new link verdict (see `engine::verdict`); its link's
    /// figures as measured then.
    Link {
        at_ms: u64,
        #[serde(serialize_with = "ser_display")]
        leader: Pubkey,
        tpu: Option<SocketAddr>,
        link: LinkView,
    },
}

impl RunEvent {
    /// Time since the run (a deploy phase's batch) started.
    pub fn at_ms(&self) -> u64 {
        match self {
            RunEvent::State { at_ms, .. }
            | RunEvent::Send { at_ms, .. }
            | RunEvent::Resigned { at_ms, .. }
            | RunEvent::Link { at_ms, .. } => *at_ms,
        }
    }
}

fn ser_display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
