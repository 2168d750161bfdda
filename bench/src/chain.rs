//! What the chain says of a run, asked of a node independently of the sender: which of its
//! transactions landed, in which slots, and under which leaders; and a fee payer of Agave's own,
//! whose history lists Agave's landings (its client does not report signatures).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;
use solana_client::rpc_client::{GetConfirmedSignaturesForAddress2Config, RpcClient};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, write_keypair_file};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;

/// A new keypair funded by `mint` and written to `dir/name`: a payer whose history
/// (`getSignaturesForAddress`) holds only the transactions of the runs that use it.
pub fn fund_payer(
    rpc: &RpcClient,
    mint: &Keypair,
    dir: &Path,
    name: &str,
) -> Result<(Keypair, PathBuf)> {
    let payer = Keypair::new();
    let hash = rpc.get_latest_blockhash()?;
    let tx = solana_transaction::Transaction::new_signed_with_payer(
        &[solana_system_interface::instruction::transfer(
            &mint.pubkey(),
            &payer.pubkey(),
            1_000_000_000_000,
        )],
        Some(&mint.pubkey()),
        &[mint],
        hash,
    );
    rpc.send_and_confirm_transaction(&tx)
        .with_context(|| format!("funding the payer {name}"))?;
    let path = dir.join(name);
    write_keypair_file(&payer, &path)
        .map_err(|e| anyhow::anyhow!("writing the payer {name}: {e}"))?;
    Ok((payer, path))
}

/// The landed slot of each of `signatures` that landed without error, from the node's status
/// cache and transaction history (`getSignatureStatuses` with `searchTransactionHistory`).
pub fn landed_slots(rpc: &RpcClient, signatures: &[Signature]) -> Result<Vec<u64>> {
    let mut slots = Vec::with_capacity(signatures.len());
    for chunk in signatures.chunks(256) {
        let statuses = rpc.get_signature_statuses_with_history(chunk)?.value;
        slots.extend(
            statuses
                .into_iter()
                .flatten()
                .filter(|s| {
                    s.err.is_none() && s.satisfies_commitment(CommitmentConfig::confirmed())
                })
                .map(|s| s.slot),
        );
    }
    Ok(slots)
}

/// Signatures of transactions paid by `payer` that landed from slot `from` on, from the node's
/// transaction history (`getSignaturesForAddress`, newest first, a page at a time).
pub fn signatures_since(rpc: &RpcClient, payer: &Pubkey, from: u64) -> Result<Vec<Signature>> {
    let mut out = Vec::new();
    let mut before = None;
    loop {
        let page = rpc.get_signatures_for_address_with_config(
            payer,
            GetConfirmedSignaturesForAddress2Config {
                before,
                until: None,
                limit: Some(1000),
                commitment: Some(CommitmentConfig::confirmed()),
            },
        )?;
        let Some(last) = page.last() else { break };
        before = Some(last.signature.parse()?);
        let done = last.slot < from;
        out.extend(
            page.iter()
                .filter(|s| s.slot >= from && s.err.is_none())
                .map(|s| s.signature.parse())
                .collect::<Result<Vec<Signature>, _>>()?,
        );
        if done {
            break;
        }
    }
    Ok(out)
}

/// Landed transactions per node, each counted for the schedule's leader of its landed slot
/// (`getSlotLeaders`), in `nodes` order.
pub fn per_leader(rpc: &RpcClient, slots: &[u64], nodes: &[Pubkey]) -> Result<Vec<u64>> {
    let mut per_node = vec![0; nodes.len()];
    let (Some(&first), Some(&last)) = (slots.iter().min(), slots.iter().max()) else {
        return Ok(per_node);
    };
    let leaders = rpc.get_slot_leaders(first, last - first + 1)?;
    for slot in slots {
        let leader = leaders
            .get((slot - first) as usize)
            .with_context(|| format!("no leader for slot {slot}"))?;
        if let Some(i) = nodes.iter().position(|n| n == leader) {
            per_node[i] += 1;
        }
    }
    Ok(per_node)
}

/// The signatures in a txpace report.
pub fn report_signatures(report: &Value) -> Result<Vec<Signature>> {
    report["transactions"]
        .as_array()
        .context("the report has no transactions")?
        .iter()
        .map(|t| {
            t["signature"]
                .as_str()
                .context("a transaction without a signature")?
                .parse()
                .context("a malformed signature")
        })
        .collect()
}
