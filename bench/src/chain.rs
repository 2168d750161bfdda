//! What the chain says of a run, asked of a node independently of the sender: which of its
//! transactions landed, in which slots, and under which leaders; and a fee payer of Agave's own,
//! whose transactions in the blocks of its run are Agave's landings (its client does not report
//! signatures, and re-signs a message when its blockhash ages, so one message can land twice:
//! landings are counted per unique message, [`landed_messages`]).

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use serde_json::Value;
use solana_client::{rpc_client::RpcClient, rpc_config::RpcBlockConfig};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, write_keypair_file};
use solana_message::{Message, compiled_instruction::CompiledInstruction};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction_status_client_types::{TransactionDetails, UiTransactionEncoding};

/// A new keypair funded by `mint` and written to `dir/name`: a payer that pays only for the
/// transactions of the runs that use it.
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
    txpace::confirmed_send::send_and_confirm(rpc, &tx)
        .with_context(|| format!("funding the payer {name}"))?;
    let path = dir.join(name);
    write_keypair_file(&payer, &path)
        .map_err(|e| anyhow::anyhow!("writing the payer {name}: {e}"))?;
    Ok((payer, path))
}

/// The landed slot of each of `signatures` that landed without error, from the node's status
/// cache and transaction history (`getSignatureStatuses` with `searchTransactionHistory`).
pub fn landed_slots(rpc: &RpcClient, signatures: &[Signature]) -> Result<Vec<u64>> {
    Ok(landed_slot_each(rpc, signatures)?
        .into_iter()
        .flatten()
        .collect())
}

/// [`landed_slots`] kept in the order of `signatures`: `None` for each that did not land
/// without error (so a transaction's slot can be set beside the moment it was due to be sent).
pub fn landed_slot_each(rpc: &RpcClient, signatures: &[Signature]) -> Result<Vec<Option<u64>>> {
    let mut slots = Vec::with_capacity(signatures.len());
    for chunk in signatures.chunks(256) {
        let statuses = rpc.get_signature_statuses_with_history(chunk)?.value;
        slots.extend(statuses.into_iter().map(|s| {
            s.filter(|s| s.err.is_none() && s.satisfies_commitment(CommitmentConfig::confirmed()))
                .map(|s| s.slot)
        }));
    }
    Ok(slots)
}

/// How long the node the chain is read on may take to confirm what the contender's node has.
const CATCH_UP: Duration = Duration::from_secs(60);

/// Waits until `chain` (the node the chain is read on) has confirmed the slot `sender` (the
/// node the contenders use) has confirmed now, so a landing the contender saw confirmed is not
/// read as missing on a node a few slots behind (at most [`CATCH_UP`]); whether it caught up.
pub fn caught_up(chain: &RpcClient, sender: &RpcClient) -> Result<bool> {
    let target = sender.get_slot_with_commitment(CommitmentConfig::confirmed())?;
    let deadline = Instant::now() + CATCH_UP;
    while Instant::now() < deadline {
        if chain.get_slot_with_commitment(CommitmentConfig::confirmed())? >= target {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(false)
}

/// Waits (see [`caught_up`]) for `chain` to confirm what the node at `sender_url` has
/// confirmed now, saying so on standard error when it did not within the wait.
pub fn catch_up(chain: &RpcClient, sender_url: &str) -> Result<()> {
    let sender =
        RpcClient::new_with_commitment(sender_url.to_string(), CommitmentConfig::confirmed());
    if !caught_up(chain, &sender)? {
        eprintln!(
            "the node the chain is read on did not confirm the senders' node's latest confirmed slot within {CATCH_UP:?}"
        );
    }
    Ok(())
}

/// What a message is apart from its blockhash and signatures: its account keys and compiled
/// instructions. A message re-signed with a new blockhash has the same key.
pub type MessageKey = Vec<u8>;

/// The [`MessageKey`] of a message with account `keys` and `instructions`.
pub fn message_key(keys: &[Pubkey], instructions: &[CompiledInstruction]) -> MessageKey {
    let mut key = Vec::new();
    for k in keys {
        key.extend_from_slice(k.as_ref());
    }
    for ix in instructions {
        key.push(ix.program_id_index);
        key.extend_from_slice(&(ix.accounts.len() as u32).to_le_bytes());
        key.extend_from_slice(&ix.accounts);
        key.extend_from_slice(&(ix.data.len() as u32).to_le_bytes());
        key.extend_from_slice(&ix.data);
    }
    key
}

/// The keys of `messages`, as they are compiled for signing.
pub fn message_keys(messages: &[Message]) -> HashSet<MessageKey> {
    messages
        .iter()
        .map(|m| message_key(&m.account_keys, &m.instructions))
        .collect()
}

/// What the chain holds of a set of messages.
#[derive(Debug, Default, PartialEq)]
pub struct Landings {
    /// The slot each message that landed without error first landed in, one per message.
    pub slots: Vec<u64>,
    /// Landings beyond the first of a message (a re-signed copy that landed too).
    pub duplicates: u64,
}

/// Files the successful transactions of a stretch of blocks, each given as its message key,
/// under the `expected` messages: the first landing of each is counted with its slot, a later
/// one as a duplicate, and any other transaction is left out.
pub fn file_landings(
    expected: &HashSet<MessageKey>,
    landed: impl IntoIterator<Item = (u64, MessageKey)>,
) -> Landings {
    let (first, duplicates) = first_landings(expected, landed);
    let mut slots: Vec<u64> = first.into_values().collect();
    slots.sort_unstable();
    Landings { slots, duplicates }
}

/// [`file_landings`] by message: the slot each expected message first landed in, and the
/// landings beyond the first.
pub fn first_landings(
    expected: &HashSet<MessageKey>,
    landed: impl IntoIterator<Item = (u64, MessageKey)>,
) -> (HashMap<MessageKey, u64>, u64) {
    let mut first: HashMap<MessageKey, u64> = HashMap::new();
    let mut duplicates = 0;
    for (slot, key) in landed {
        if !expected.contains(&key) {
            continue;
        }
        match first.get_mut(&key) {
            Some(s) => {
                duplicates += 1;
                *s = (*s).min(slot);
            }
            None => {
                first.insert(key, slot);
            }
        }
    }
    (first, duplicates)
}

/// Which of `expected` landed without error from slot `from` to the node's latest confirmed
/// slot, read from every confirmed block in that range (`getBlocks`, then `getBlock` with the
/// transactions in full): every contender's landings are counted from the chain this way or by
/// [`landed_slots`], per unique message.
pub fn landed_messages(
    rpc: &RpcClient,
    from: u64,
    expected: &HashSet<MessageKey>,
) -> Result<Landings> {
    Ok(file_landings(expected, block_messages(rpc, from)?))
}

/// Every transaction that landed without error from slot `from` to the node's latest confirmed
/// slot, as its slot and [`MessageKey`].
pub fn block_messages(rpc: &RpcClient, from: u64) -> Result<Vec<(u64, MessageKey)>> {
    let to = rpc.get_slot_with_commitment(CommitmentConfig::confirmed())?;
    let blocks = rpc.get_blocks_with_commitment(from, Some(to), CommitmentConfig::confirmed())?;
    let mut landed = Vec::new();
    for slot in blocks {
        let block = rpc
            .get_block_with_config(
                slot,
                RpcBlockConfig {
                    encoding: Some(UiTransactionEncoding::Base64),
                    transaction_details: Some(TransactionDetails::Full),
                    rewards: Some(false),
                    commitment: Some(CommitmentConfig::confirmed()),
                    max_supported_transaction_version: Some(0),
                },
            )
            .with_context(|| format!("reading block {slot}"))?;
        for tx in block.transactions.unwrap_or_default() {
            if tx.meta.as_ref().is_none_or(|m| m.err.is_some()) {
                continue;
            }
            let tx = tx
                .transaction
                .decode()
                .with_context(|| format!("a transaction of block {slot} does not decode"))?;
            let key = message_key(tx.message.static_account_keys(), tx.message.instructions());
            landed.push((slot, key));
        }
    }
    Ok(landed)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> MessageKey {
        vec![n; 4]
    }

    /// Each expected message is counted once, at its first landing; a re-signed copy that
    /// landed too is a duplicate; anything else in the blocks is left out.
    #[test]
    fn landings_count_each_expected_message_once() {
        let expected: HashSet<MessageKey> = [key(1), key(2), key(3)].into_iter().collect();
        let landed = vec![
            (12, key(2)),
            (10, key(1)),
            (11, key(9)),
            (15, key(2)),
            (9, key(2)),
        ];
        assert_eq!(
            file_landings(&expected, landed),
            Landings {
                slots: vec![9, 10],
                duplicates: 2,
            }
        );
        assert_eq!(file_landings(&expected, vec![]), Landings::default());
    }

    #[test]
    fn the_signatures_of_a_report_are_read_and_a_bad_one_is_an_error() {
        let sig = solana_signature::Signature::from([7u8; 64]);
        let report = serde_json::json!({"transactions": [{"signature": sig.to_string()}]});
        assert_eq!(report_signatures(&report).unwrap(), vec![sig]);
        let bad = serde_json::json!({"transactions": [{"signature": "not base58 0OIl"}]});
        assert!(report_signatures(&bad).is_err());
        assert!(report_signatures(&serde_json::json!({})).is_err());
    }
}
