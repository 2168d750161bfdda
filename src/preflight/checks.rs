//! The five checks behind [`super::check`], each a handful of RPC calls whatever the batch's
//! size, each answering with one [`Finding`].

use std::collections::HashMap;

use solana_commitment_config::CommitmentConfig;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSimulateTransactionConfig;

use super::{
    Decoded, Finding, PreflightError, Severity, most_used, nonce_value, rpc_err, sample_indexes,
};
use crate::{
    fees::{median_price, most_written, percentile, rank},
    source::LoadedTx,
};

pub(super) fn blockhashes(
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

pub(super) fn fee_payers(rpc: &RpcClient, txs: &[Decoded<'_>]) -> Result<Finding, PreflightError> {
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

pub(super) fn nonces(
    rpc: &RpcClient,
    txs: &[Decoded<'_>],
) -> Result<Option<Finding>, PreflightError> {
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
                "{stale} {} a nonce their account no longer holds (e.g. {account}): never lands as signed",
                if stale == 1 {
                    "transaction carries"
                } else {
                    "transactions carry"
                }
            ),
        ),
    }))
}

pub(super) fn simulation(rpc: &RpcClient, txs: &[Decoded<'_>]) -> Result<Finding, PreflightError> {
    const CHECK: &str = "simulation";
    let config = RpcSimulateTransactionConfig {
        sig_verify: true,
        replace_recent_blockhash: false,
        commitment: Some(CommitmentConfig::processed()),
        ..Default::default()
    };
    let picks = sample_indexes(txs.len());
    let mut landed_before = 0usize;
    let mut unjudged = 0usize;
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
            // An expired blockhash or a stale nonce: the checks above say so for the batch.
            unjudged += 1;
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
    let mut detail = format!(
        "{} of {} samples succeed",
        picks.len() - landed_before - unjudged,
        picks.len()
    );
    if landed_before > 0 {
        detail.push_str(&format!("; {landed_before} already landed"));
    }
    if unjudged > 0 {
        detail.push_str(&format!(
            "; {unjudged} not judged: the node does not know their blockhash or nonce"
        ));
    }
    Ok(Finding::new(CHECK, Severity::Ok, detail))
}

pub(super) fn fees(rpc: &RpcClient, txs: &[LoadedTx]) -> Result<Finding, PreflightError> {
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
