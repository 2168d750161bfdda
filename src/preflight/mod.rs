//! `--preflight`: why a batch would not land, said before anything is sent.
//!
//! Five questions, each answered from the cluster in a handful of RPC calls whatever the batch's
//! size: are the blockhashes still valid; can every fee payer afford its transactions' fees; do
//! durable-nonce transactions carry their nonce account's current value; does a sample of the
//! batch succeed in `simulateTransaction` (signatures verified, blockhash not replaced, so it is
//! the transaction as signed that is judged); and where does the batch's compute-unit price
//! sit among what recent slots charged for its writable accounts. A *fatal* finding means
//! transactions cannot land as signed; the command refuses to start on one unless `--force`.

use std::collections::BTreeMap;

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_transaction::versioned::VersionedTransaction;

mod checks;

use checks::{blockhashes, fee_payers, fees, nonces, simulation};

use crate::{
    deploy::compute::priority_fee,
    source::{ComputeBudget, LoadedTx, decode_wire},
};

/// Lamports per signature the base fee charges (the clusters' `lamports_per_signature`).
pub const LAMPORTS_PER_SIGNATURE: u64 = 5_000;
/// Transactions simulated at most: the first, the last and evenly spaced ones between.
pub const SAMPLE: usize = 5;
/// Distinct blockhashes and nonce accounts asked about at most; the most used come first.
const MAX_LOOKUPS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Ok,
    /// Something that slows or costs, not something that stops landing.
    Warning,
    /// Transactions cannot land as signed.
    Fatal,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Fatal => "FATAL",
        }
    }
}

/// One answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub check: &'static str,
    pub severity: Severity,
    pub detail: String,
}

impl Finding {
    fn new(check: &'static str, severity: Severity, detail: impl Into<String>) -> Self {
        Self {
            check,
            severity,
            detail: detail.into(),
        }
    }
}

/// The RPC call that failed, and why (already scrubbed of URL secrets by the client's error).
#[derive(Debug, thiserror::Error)]
#[error("preflight: {call} failed: {reason}")]
pub struct PreflightError {
    pub call: &'static str,
    pub reason: String,
}

fn rpc_err(
    call: &'static str,
) -> impl Fn(solana_rpc_client_api::client_error::Error) -> PreflightError {
    move |e| PreflightError {
        call,
        reason: crate::redact::scrub(e),
    }
}

/// What preflight needs of each transaction, decoded once.
struct Decoded<'a> {
    loaded: &'a LoadedTx,
    tx: VersionedTransaction,
}

impl Decoded<'_> {
    fn fee_payer(&self) -> Option<Pubkey> {
        self.tx.message.static_account_keys().first().copied()
    }

    /// The most this transaction can cost its payer: the base fee and its priority fee at its
    /// limit (or the default allotment when it sets none).
    fn max_fee(&self) -> u64 {
        let sigs = u64::from(self.tx.message.header().num_required_signatures);
        let budget: ComputeBudget = self.loaded.budget;
        let others = self.tx.message.instructions().len() as u32;
        let priority = match budget.limit {
            Some(limit) => priority_fee(budget.price.unwrap_or(0), limit),
            None => budget.max_priority_fee(others),
        };
        sigs.saturating_mul(LAMPORTS_PER_SIGNATURE)
            .saturating_add(priority)
    }

    /// The nonce account a durable-nonce transaction advances (its first instruction's first
    /// account).
    fn nonce_account(&self) -> Option<Pubkey> {
        let ix = self.tx.message.instructions().first()?;
        let index = *ix.accounts.first()?;
        self.tx
            .message
            .static_account_keys()
            .get(usize::from(index))
            .copied()
    }
}

/// Runs every check on `txs`. `resuming`: a continued run whose blockhashes may rightly have
/// expired (what landed is looked up, not resent) — expiry is then only a warning.
pub fn check(
    rpc: &RpcClient,
    txs: &[LoadedTx],
    resuming: bool,
) -> Result<Vec<Finding>, PreflightError> {
    let decoded: Vec<Decoded<'_>> = txs
        .iter()
        .filter_map(|loaded| {
            decode_wire(&loaded.wire)
                .ok()
                .map(|tx| Decoded { loaded, tx })
        })
        .collect();
    let mut findings = vec![
        blockhashes(rpc, &decoded, resuming)?,
        fee_payers(rpc, &decoded)?,
    ];
    findings.extend(nonces(rpc, &decoded)?);
    findings.push(simulation(rpc, &decoded)?);
    findings.push(fees(rpc, txs)?);
    Ok(findings)
}

/// The worst severity among `findings`.
pub fn worst(findings: &[Finding]) -> Severity {
    findings
        .iter()
        .map(|f| f.severity)
        .max()
        .unwrap_or(Severity::Ok)
}

/// The findings as a short table for people.
pub fn table(findings: &[Finding]) -> String {
    let mut out = String::from("preflight:\n");
    for f in findings {
        out.push_str(&format!(
            "  {:<12} {:<8} {}\n",
            f.check,
            f.severity.label(),
            f.detail
        ));
    }
    out
}

/// Keys counted by how many transactions use them, most used first, at most [`MAX_LOOKUPS`].
fn most_used<K: Copy + Ord>(keys: impl Iterator<Item = K>) -> Vec<(K, usize)> {
    let mut counts: BTreeMap<K, usize> = BTreeMap::new();
    for k in keys {
        *counts.entry(k).or_default() += 1;
    }
    let mut v: Vec<(K, usize)> = counts.into_iter().collect();
    v.sort_by_key(|k| std::cmp::Reverse(k.1));
    v.truncate(MAX_LOOKUPS);
    v
}

/// The durable nonce a nonce account holds, if it is an initialized nonce account.
pub fn nonce_value(data: &[u8]) -> Option<Hash> {
    let versions: solana_nonce::versions::Versions = bincode::deserialize(data).ok()?;
    match versions.state() {
        solana_nonce::state::State::Initialized(d) => Some(d.blockhash()),
        solana_nonce::state::State::Uninitialized => None,
    }
}

/// Indexes of the sample: the first, the last and evenly spaced ones between.
pub fn sample_indexes(len: usize) -> Vec<usize> {
    if len <= SAMPLE {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..SAMPLE).map(|k| k * (len - 1) / (SAMPLE - 1)).collect();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_spans_the_batch() {
        assert_eq!(sample_indexes(0), Vec::<usize>::new());
        assert_eq!(sample_indexes(3), vec![0, 1, 2]);
        assert_eq!(sample_indexes(101), vec![0, 25, 50, 75, 100]);
        assert_eq!(sample_indexes(6), vec![0, 1, 2, 3, 5]);
    }

    /// An initialized nonce account's value is read; anything else holds none.
    #[test]
    fn nonce_values_are_read_from_account_data() {
        use solana_nonce::{
            state::{Data, DurableNonce, State},
            versions::Versions,
        };
        let durable = DurableNonce::from_blockhash(&Hash::new_from_array([7; 32]));
        let data = Data::new(Pubkey::new_unique(), durable, 5_000);
        let bytes = bincode::serialize(&Versions::new(State::Initialized(data))).expect("encode");
        assert_eq!(nonce_value(&bytes), Some(*durable.as_hash()));
        let empty = bincode::serialize(&Versions::new(State::Uninitialized)).expect("encode");
        assert_eq!(nonce_value(&empty), None);
        assert_eq!(nonce_value(&[1, 2, 3]), None);
    }

    #[test]
    fn the_worst_finding_decides() {
        let f = |s| Finding::new("x", s, "");
        assert_eq!(worst(&[]), Severity::Ok);
        assert_eq!(
            worst(&[f(Severity::Ok), f(Severity::Fatal), f(Severity::Warning)]),
            Severity::Fatal
        );
    }
}
