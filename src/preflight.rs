//! `--preflight`: why a batch would not land, said before anything is sent.
//!
//! Five questions, each answered from the cluster in a handful of RPC calls whatever the batch's
//! size: are the blockhashes still valid; can every fee payer afford its transactions' fees; do
//! durable-nonce transactions carry their nonce account's current value; does a sample of the
//! batch succeed in `simulateTransaction` (signatures verified, blockhash not replaced, so it is
//! the transaction as signed that is judged); and where does the batch's compute-unit price
//! sit among what recent slots charged for its writable accounts. A *fatal* finding means
//! transactions cannot land as signed; the command refuses to start on one unless `--force`.

use std::collections::{BTreeMap, HashMap};

use solana_commitment_config::CommitmentConfig;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSimulateTransactionConfig;
use solana_transaction::versioned::VersionedTransaction;

use crate::{
    deploy::compute::priority_fee,
    fees::{median_price, most_written, percentile, rank},
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

fn blockhashes(
    rpc: &RpcClient,
    txs: &[Decoded<'_>],
    resuming: bool,
) -> Result<Finding, PreflightError> {
    const CHECK: &str = "blockhashes";
    let hashes = most_used(
        txs.iter()
            .filter(|d| !d.loaded.durable_nonce)
            .map(|d| d.loaded.recent_blockhash),
    );
    if hashes.is_empty() {
        return Ok(Finding::new(
            CHECK,
            Severity::Ok,
            "none (durable nonces only)",
        ));
    }
    let (latest, last_valid) = rpc
        .get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
        .map_err(rpc_err("getLatestBlockhash"))?;
    let height = rpc
        .get_block_height_with_commitment(CommitmentConfig::confirmed())
        .map_err(rpc_err("getBlockHeight"))?;
    let mut expired: Vec<(Hash, usize)> = Vec::new();
    let mut valid = 0usize;
    for (hash, n) in &hashes {
        let ok = rpc
            .is_blockhash_valid(hash, CommitmentConfig::processed())
            .map_err(rpc_err("isBlockhashValid"))?;
        if ok {
            valid += 1;
        } else {
            expired.push((*hash, *n));
        }
    }
    // How long they have: exact for the cluster's latest, otherwise at most 150 blocks from
    // when the cluster made it, which is no later than now.
    let left = if hashes.iter().all(|(h, _)| *h == latest) {
        format!("{} blocks left", last_valid.saturating_sub(height))
    } else {
        "at most 150 blocks left".to_string()
    };
    if expired.is_empty() {
        return Ok(Finding::new(
            CHECK,
            Severity::Ok,
            format!("{valid} of {} valid ({left})", hashes.len()),
        ));
    }
    let lost: usize = expired.iter().map(|(_, n)| n).sum();
    let severity = if resuming {
        Severity::Warning
    } else {
        Severity::Fatal
    };
    Ok(Finding::new(
        CHECK,
        severity,
        format!(
            "{} of {} expired ({lost} transactions can never land; e.g. {}); sign them again on a fresh blockhash",
            expired.len(),
            hashes.len(),
            expired[0].0
        ),
    ))
}

fn fee_payers(rpc: &RpcClient, txs: &[Decoded<'_>]) -> Result<Finding, PreflightError> {
    const CHECK: &str = "fee payers";
    let mut need: HashMap<Pubkey, (u64, usize)> = HashMap::new();
    for d in txs {
        if let Some(payer) = d.fee_payer() {
            let e = need.entry(payer).or_default();
            e.0 = e.0.saturating_add(d.max_fee());
            e.1 += 1;
        }
    }
    let payers: Vec<Pubkey> = need.keys().copied().collect();
    let mut short: Vec<(Pubkey, u64, u64, usize)> = Vec::new();
    for chunk in payers.chunks(100) {
        let accounts = rpc
            .get_multiple_accounts_with_commitment(chunk, CommitmentConfig::confirmed())
            .map_err(rpc_err("getMultipleAccounts"))?
            .value;
        for (payer, account) in chunk.iter().zip(accounts) {
            let balance = account.map_or(0, |a| a.lamports);
            let (fees, n) = need.get(payer).copied().unwrap_or_default();
            if balance < fees {
                short.push((*payer, balance, fees, n));
            }
        }
    }
    let total: u64 = need.values().map(|(f, _)| *f).fold(0, u64::saturating_add);
    if short.is_empty() {
        return Ok(Finding::new(
            CHECK,
            Severity::Ok,
            format!(
                "{} can pay their fees (at most {} SOL in all)",
                payers.len(),
                sol(total)
            ),
        ));
    }
    let (payer, balance, fees, n) = short[0];
    Ok(Finding::new(
        CHECK,
        Severity::Fatal,
        format!(
            "{} of {} cannot pay their fees: e.g. {payer} holds {} SOL for {n} transactions that can cost {} SOL",
            short.len(),
            payers.len(),
            sol(balance),
            sol(fees)
        ),
    ))
}

fn nonces(rpc: &RpcClient, txs: &[Decoded<'_>]) -> Result<Option<Finding>, PreflightError> {
    const CHECK: &str = "nonces";
    let uses = most_used(
        txs.iter()
            .filter(|d| d.loaded.durable_nonce)
            .filter_map(|d| Some((d.nonce_account()?, d.loaded.recent_blockhash))),
    );
    if uses.is_empty() {
        return Ok(None);
    }
    let accounts: Vec<Pubkey> = uses.iter().map(|((a, _), _)| *a).collect();
    let mut current: HashMap<Pubkey, Option<Hash>> = HashMap::new();
    for chunk in accounts.chunks(100) {
        let found = rpc
            .get_multiple_accounts_with_commitment(chunk, CommitmentConfig::confirmed())
            .map_err(rpc_err("getMultipleAccounts"))?
            .value;
        for (account, data) in chunk.iter().zip(found) {
            current.insert(*account, data.and_then(|a| nonce_value(&a.data)));
        }
    }
    let mut stale = 0usize;
    let mut example = None;
    for ((account, hash), n) in &uses {
        if current.get(account).copied().flatten() != Some(*hash) {
            stale += n;
            example.get_or_insert(*account);
        }
    }
    Ok(Some(match example {
        None => Finding::new(
            CHECK,
            Severity::Ok,
            format!("{} nonce accounts hold the values signed", accounts.len()),
        ),
        Some(account) => Finding::new(
            CHECK,
            Severity::Fatal,
            format!(
                "{stale} transactions carry a nonce their account no longer holds (e.g. {account}): they can never land"
            ),
        ),
    }))
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

fn simulation(rpc: &RpcClient, txs: &[Decoded<'_>]) -> Result<Finding, PreflightError> {
    const CHECK: &str = "simulation";
    let config = RpcSimulateTransactionConfig {
        sig_verify: true,
        replace_recent_blockhash: false,
        commitment: Some(CommitmentConfig::processed()),
        ..Default::default()
    };
    let picks = sample_indexes(txs.len());
    let mut landed_before = 0usize;
    for &i in &picks {
        let d = &txs[i];
        let result = rpc
            .simulate_transaction_with_config(&d.tx, config.clone())
            .map_err(rpc_err("simulateTransaction"))?
            .value;
        let Some(err) = result.err else { continue };
        let text = err.to_string();
        if text.contains("already been processed") {
            landed_before += 1;
            continue;
        }
        if text.contains("Blockhash not found") {
            // The blockhash check above says so for the whole batch.
            continue;
        }
        let last_log = result
            .logs
            .unwrap_or_default()
            .into_iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| format!(" (last log: {l})"))
            .unwrap_or_default();
        return Ok(Finding::new(
            CHECK,
            Severity::Fatal,
            format!(
                "{} fails: {text}{last_log}; it would land as failed and still pay its fee",
                d.loaded.origin
            ),
        ));
    }
    let detail = if landed_before > 0 {
        format!(
            "{} of {} samples succeed; {landed_before} already landed",
            picks.len() - landed_before,
            picks.len()
        )
    } else {
        format!("{} of {} samples succeed", picks.len(), picks.len())
    };
    Ok(Finding::new(CHECK, Severity::Ok, detail))
}

fn fees(rpc: &RpcClient, txs: &[LoadedTx]) -> Result<Finding, PreflightError> {
    const CHECK: &str = "fees";
    let written = most_written(txs);
    let recent: Vec<u64> = rpc
        .get_recent_prioritization_fees(&written)
        .map_err(rpc_err("getRecentPrioritizationFees"))?
        .iter()
        .map(|f| f.prioritization_fee)
        .collect();
    let batch = median_price(txs);
    if recent.is_empty() {
        return Ok(Finding::new(
            CHECK,
            Severity::Ok,
            format!("median price {batch} µlamports/CU; the cluster reported no recent fees"),
        ));
    }
    let median = percentile(&recent, 50);
    let at = rank(&recent, batch);
    let detail = format!(
        "median price {batch} µlamports/CU is p{at} of the last {} slots' fees for its writable accounts (their median {median})",
        recent.len()
    );
    Ok(if batch < median {
        Finding::new(
            CHECK,
            Severity::Warning,
            format!("{detail}: below the median, it may wait behind better-paying transactions"),
        )
    } else {
        Finding::new(CHECK, Severity::Ok, detail)
    })
}

fn sol(lamports: u64) -> String {
    format!("{:.6}", lamports as f64 / 1e9)
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
