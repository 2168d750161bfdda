//! What a journal holds, one [`Record`] per frame, as JSON: a few dozen bytes each, readable with
//! `strings` when someone needs to look, and extensible without breaking old journals.

use serde::{Deserialize, Serialize};

use super::Header;
use crate::{config::Commitment, engine::TxFact};

/// Chain errors are short; a longer one is cut so a record stays far below the frame limit.
const MAX_ERROR: usize = 1024;

/// One journal record. Transaction ids are positions in the inputs' valid transactions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Record {
    /// First record of the file.
    Header(Header),
    /// A `--resume` run started appending here.
    Session {
        started_unix: u64,
        rpc_url: String,
    },
    /// Which transaction an id is, written before the first fact about it.
    Tx {
        id: u32,
        signature: String,
        origin: String,
    },
    Sent {
        id: u32,
        sends: u32,
    },
    Confirmed {
        id: u32,
        slot: u64,
        commitment: String,
    },
    Failed {
        id: u32,
        slot: u64,
        error: String,
    },
    Expired {
        id: u32,
    },
    Resigned {
        id: u32,
        signature: String,
        attempt: u32,
    },
    /// The run ended and everything before this record is on disk; a session without one was
    /// killed.
    Closed {
        unix: u64,
    },
}

impl Record {
    /// The transaction a record is about, if any.
    pub fn id(&self) -> Option<u32> {
        match self {
            Record::Tx { id, .. }
            | Record::Sent { id, .. }
            | Record::Confirmed { id, .. }
            | Record::Failed { id, .. }
            | Record::Expired { id }
            | Record::Resigned { id, .. } => Some(*id),
            Record::Header(_) | Record::Session { .. } | Record::Closed { .. } => None,
        }
    }
}

impl From<&TxFact> for Record {
    fn from(fact: &TxFact) -> Self {
        match fact {
            TxFact::Sent { id, sends } => Record::Sent {
                id: *id,
                sends: *sends,
            },
            TxFact::Confirmed {
                id,
                slot,
                commitment,
            } => Record::Confirmed {
                id: *id,
                slot: *slot,
                commitment: commitment.as_str().to_string(),
            },
            TxFact::Failed { id, slot, error } => Record::Failed {
                id: *id,
                slot: *slot,
                error: cut(error),
            },
            TxFact::Expired { id } => Record::Expired { id: *id },
            TxFact::Resigned {
                id,
                signature,
                attempt,
            } => Record::Resigned {
                id: *id,
                signature: signature.to_string(),
                attempt: *attempt,
            },
        }
    }
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_ERROR {
        return s.to_string();
    }
    let mut end = MAX_ERROR;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The commitment named in a record.
pub(crate) fn parse_commitment(s: &str) -> Option<Commitment> {
    match s {
        "processed" => Some(Commitment::Processed),
        "confirmed" => Some(Commitment::Confirmed),
        "finalized" => Some(Commitment::Finalized),
        _ => None,
    }
}
