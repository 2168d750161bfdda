//! What a journal holds, one [`Record`] per frame, as JSON: a few dozen bytes each, readable with
//! `strings` when someone needs to look, and extensible without breaking old journals.

use serde::{Deserialize, Serialize};

use super::Header;
use crate::engine::TxFact;

/// One journal record. Transaction ids are positions in the inputs' valid transactions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Record {
    /// First record of the file.
    Header(Header),
    /// A `--resume` run started appending here.
    Session { started_unix: u64, rpc_url: String },
    /// Which transaction an id is, written before the first fact about it.
    Tx {
        id: u32,
        signature: String,
        origin: String,
    },
    /// The run ended and everything before this record is on disk; a session without one was
    /// killed.
    Closed { unix: u64 },
    /// A state change of one transaction: sent, confirmed, failed, expired, re-signed. Written
    /// as the fact's own form, its tag beside the others' (`{"t":"sent",…}`), so the engine's
    /// list of facts is the journal's.
    #[serde(untagged)]
    Fact(TxFact),
}

impl Record {
    /// The transaction a record is about, if any.
    pub fn id(&self) -> Option<u32> {
        match self {
            Record::Tx { id, .. } => Some(*id),
            Record::Fact(fact) => Some(fact.id()),
            Record::Header(_) | Record::Session { .. } | Record::Closed { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use solana_signature::Signature;

    use super::*;
    use crate::config::Commitment;

    /// Each fact's record, byte for byte as journals have always held it: an old journal reads
    /// the same, and one written now reads in an older txpace.
    #[test]
    fn facts_keep_their_journal_form() {
        let sig = Signature::from([7; 64]);
        let cases = [
            (
                TxFact::Sent { id: 3, sends: 2 },
                r#"{"t":"sent","id":3,"sends":2}"#.to_string(),
            ),
            (
                TxFact::Confirmed {
                    id: 1,
                    slot: 90,
                    commitment: Commitment::Finalized,
                },
                r#"{"t":"confirmed","id":1,"slot":90,"commitment":"finalized"}"#.to_string(),
            ),
            (
                TxFact::Failed {
                    id: 0,
                    slot: 5,
                    error: "InstructionError".into(),
                },
                r#"{"t":"failed","id":0,"slot":5,"error":"InstructionError"}"#.to_string(),
            ),
            (
                TxFact::Expired { id: 9 },
                r#"{"t":"expired","id":9}"#.to_string(),
            ),
            (
                TxFact::Resigned {
                    id: 4,
                    signature: sig,
                    attempt: 2,
                },
                format!(r#"{{"t":"resigned","id":4,"signature":"{sig}","attempt":2}}"#),
            ),
        ];
        for (fact, text) in cases {
            let rec = Record::Fact(fact);
            assert_eq!(serde_json::to_string(&rec).unwrap(), text);
            assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), rec);
        }
        let closed = r#"{"t":"closed","unix":12}"#;
        assert_eq!(
            serde_json::from_str::<Record>(closed).unwrap(),
            Record::Closed { unix: 12 }
        );
    }

    #[test]
    fn a_long_error_is_cut_on_a_character_boundary_when_journaled() {
        let error = "é".repeat(1_000);
        let rec = Record::Fact(TxFact::Failed {
            id: 0,
            slot: 1,
            error,
        });
        let back: Record = serde_json::from_str(&serde_json::to_string(&rec).unwrap()).unwrap();
        let Record::Fact(TxFact::Failed { error, .. }) = back else {
            panic!("not a failure: {back:?}");
        };
        assert!(error.ends_with('…'));
        assert!(error.len() <= crate::engine::MAX_JOURNALED_ERROR + '…'.len_utf8());
    }

    #[test]
    fn a_bad_commitment_or_signature_is_a_reason_not_a_guess() {
        for text in [
            r#"{"t":"confirmed","id":1,"slot":2,"commitment":"rooted"}"#,
            r#"{"t":"resigned","id":1,"signature":"nope","attempt":1}"#,
            r#"{"t":"landed","id":1}"#,
        ] {
            assert!(serde_json::from_str::<Record>(text).is_err(), "{text}");
        }
    }
}
