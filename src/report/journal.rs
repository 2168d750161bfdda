//! A journal read as a run's report, for `txpace view` of a run that never wrote one (it was
//! killed, or ran without `--report`). The journal holds, per transaction that was ever sent,
//! its signature, origin, sends and fate (slot, error); it holds no times, leaders or streams,
//! and nothing of transactions never sent — so the view shows exactly that, and says what is
//! missing instead of making it up.

use std::{collections::BTreeMap, path::Path};

use super::{
    load::LoadError,
    replay::to_snapshot,
    schema::{RunReport, Summary, Transaction},
};
use crate::{
    config::Commitment,
    engine::{
        TxFact,
        snapshot::{Snapshot, StreamCounts},
    },
    journal::{self, Record},
};

/// What the journal knew of one transaction.
#[derive(Default)]
struct Known {
    signature: String,
    origin: String,
    sends: u32,
    status: Option<&'static str>,
    slot: Option<u64>,
    error: Option<String>,
}

/// Reads the journal at `path` as a snapshot, with a note of what it cannot show.
pub fn load_journal(path: &Path) -> Result<(Snapshot, String), LoadError> {
    let shown = path.display().to_string();
    let records = journal::read_records(path).map_err(|e| LoadError::Read {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let mut header = None;
    let mut closed = false;
    let mut txs: BTreeMap<u32, Known> = BTreeMap::new();
    for rec in records {
        match rec {
            Record::Header(h) => header = Some(h),
            Record::Session { .. } => closed = false,
            Record::Closed { .. } => closed = true,
            Record::Tx {
                id,
                signature,
                origin,
            } => {
                let k = txs.entry(id).or_default();
                k.signature = signature;
                k.origin = origin;
            }
            Record::Fact(TxFact::Resigned { id, signature, .. }) => {
                txs.entry(id).or_default().signature = signature.to_string();
            }
            Record::Fact(TxFact::Sent { id, sends }) => {
                let k = txs.entry(id).or_default();
                k.sends = k.sends.max(sends);
            }
            Record::Fact(TxFact::Confirmed {
                id,
                slot,
                commitment,
            }) => {
                let k = txs.entry(id).or_default();
                k.status = Some(if commitment == Commitment::Finalized {
                    "finalized"
                } else {
                    "confirmed"
                });
                k.slot = Some(slot);
            }
            Record::Fact(TxFact::Failed { id, slot, error }) => {
                let k = txs.entry(id).or_default();
                k.status = Some("failed");
                k.slot = Some(slot);
                k.error = Some(error);
            }
            Record::Fact(TxFact::Expired { id }) => {
                txs.entry(id).or_default().status = Some("expired")
            }
        }
    }
    let header = header.ok_or_else(|| LoadError::Phase {
        path: shown.clone(),
        reason: "a journal with no header: the run never started".into(),
    })?;
    let never_sent = header.inputs.count.saturating_sub(txs.len() as u64);
    let unfinished = txs.values().filter(|k| k.status.is_none()).count();
    let transactions: Vec<Transaction> = txs
        .into_values()
        .filter(|k| !k.signature.is_empty())
        .map(|k| Transaction {
            status: k.status.unwrap_or("unconfirmed").to_string(),
            signature: k.signature,
            origin: k.origin,
            sends: k.sends,
            first_sent_ms: None,
            landed_slot: k.slot,
            last_valid_block_height: None,
            last_valid_exact: false,
            latency_ms: None,
            leaders: Vec::new(),
            landed_leader: None,
            cu_price: None,
            cu_limit: None,
            error: k.error,
            streams: None,
            streams_dropped: None,
        })
        .collect();
    let sends = transactions.iter().map(|t| u64::from(t.sends)).sum();
    let report = RunReport {
        summary: Summary {
            outcome: if closed && unfinished == 0 && never_sent == 0 {
                "done"
            } else {
                "stopped"
            }
            .to_string(),
            error: None,
            rpc_url: header.rpc_url,
            via_rpc: None,
            commitment: "confirmed".into(),
            identity: None,
            slot: None,
            block_height: None,
            elapsed_s: 0.0,
            target_rate: None,
            sends,
            send_errors: 0,
            streams: StreamCounts::default(),
        },
        leaders: Vec::new(),
        transactions,
    };
    let snapshot = to_snapshot(report).map_err(|(index, reason)| LoadError::Field {
        path: shown,
        index,
        reason,
    })?;
    let mut note = format!(
        "journal of {} transactions; no times, leaders or streams are journaled",
        header.inputs.count
    );
    if never_sent > 0 {
        note.push_str(&format!("; {never_sent} never sent are not shown"));
    }
    if !closed {
        note.push_str("; its last run was interrupted");
    }
    Ok((snapshot, note))
}
