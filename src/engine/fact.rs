//! What is known of one transaction beyond this run: the facts a run streams to its journal
//! ([`TxFact`]), and what an interrupted run's journal knew ([`Prior`]).
//!
//! A fact's serde form *is* its journal record (`{"t":"sent","id":3,"sends":2}`, one JSON frame
//! each), so the list of facts is written once, here, and the journal embeds it
//! (`journal::Record::Fact`): adding a fact is one change, and an old journal reads the same.

use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use solana_signature::Signature;

use crate::{config::Commitment, source::Origin};

/// Chain errors are short; a longer one is cut when journaled, so a record stays far below the
/// journal's frame limit.
pub const MAX_JOURNALED_ERROR: usize = 1024;

/// Which transaction an id is, as it was loaded: the journal's identity record, which goes
/// before the first fact it keeps of the transaction (replay checks it against the inputs,
/// and `txpace report` names transactions by it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxIdent {
    pub signature: Signature,
    pub origin: Origin,
}

/// A fact as the journal's writer receives it: with the transaction's identity when the
/// journal does not name the transaction yet. The engine, which holds every transaction,
/// attaches it, so the writer keeps no copy of a run's signatures and origins (88 bytes a
/// transaction: 88 MB at a million).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalFact {
    pub fact: TxFact,
    pub ident: Option<TxIdent>,
}

/// A fact about one transaction, streamed as it happens so a journal can make a run resumable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
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
        #[serde(serialize_with = "ser_cut")]
        error: String,
    },
    Expired {
        id: u32,
    },
    /// Signed again against a fresh blockhash; `signature` is its new id on chain.
    Resigned {
        id: u32,
        #[serde(serialize_with = "ser_signature", deserialize_with = "de_signature")]
        signature: Signature,
        attempt: u32,
    },
}

impl TxFact {
    /// The transaction the fact is about.
    pub fn id(&self) -> u32 {
        match self {
            TxFact::Sent { id, .. }
            | TxFact::Confirmed { id, .. }
            | TxFact::Failed { id, .. }
            | TxFact::Expired { id }
            | TxFact::Resigned { id, .. } => *id,
        }
    }
}

/// `error`, cut at [`MAX_JOURNALED_ERROR`] bytes (on a character boundary) with a `…`.
fn cut_error(error: &str) -> String {
    if error.len() <= MAX_JOURNALED_ERROR {
        return error.to_string();
    }
    let mut end = MAX_JOURNALED_ERROR;
    while !error.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &error[..end])
}

fn ser_cut<S: Serializer>(error: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&cut_error(error))
}

/// Signatures as their base-58 text, as everywhere users see them.
fn ser_signature<S: Serializer>(sig: &Signature, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(sig)
}

fn de_signature<'de, D: Deserializer<'de>>(d: D) -> Result<Signature, D::Error> {
    let text = String::deserialize(d)?;
    Signature::from_str(&text)
        .map_err(|_| serde::de::Error::custom(format!("{text:?} is not a signature")))
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
