//! Signing self-transfers.

use anyhow::{Context, Result, anyhow, bail};
use rayon::prelude::*;
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_hash::Hash;
use solana_message::{Message, VersionedMessage};
use solana_signer::Signer;
use solana_system_interface::instruction as system_instruction;
use solana_transaction::versioned::VersionedTransaction;

/// Signs `count` unique self-transfers, spread over `payers` round-robin (the i-th is paid by
/// payer i mod K and moves i + 1 lamports). Signing runs on all cores: 100,000 transactions are a
/// realistic benchmark size.
pub fn build_self_transfers<S: Signer + Sync>(
    payers: &[S],
    count: usize,
    cu_price: u64,
    cu_limit: u32,
    blockhash: Hash,
) -> Result<Vec<VersionedTransaction>> {
    if payers.is_empty() {
        bail!("no payers to sign with");
    }
    (0..count)
        .into_par_iter()
        .map(|i| {
            let payer = &payers[i % payers.len()];
            self_transfer(
                payer as &dyn Signer,
                i as u64 + 1,
                cu_price,
                cu_limit,
                blockhash,
            )
        })
        .collect()
}

/// One self-transfer of `lamports` with a compute-unit price and limit.
pub fn self_transfer(
    payer: &dyn Signer,
    lamports: u64,
    cu_price: u64,
    cu_limit: u32,
    blockhash: Hash,
) -> Result<VersionedTransaction> {
    let me = payer.pubkey();
    let instructions = [
        ComputeBudgetInstruction::set_compute_unit_price(cu_price),
        ComputeBudgetInstruction::set_compute_unit_limit(cu_limit),
        system_instruction::transfer(&me, &me, lamports),
    ];
    let message = Message::new_with_blockhash(&instructions, Some(&me), &blockhash);
    VersionedTransaction::try_new(VersionedMessage::Legacy(message), &[payer])
        .map_err(|e| anyhow!("signing with {me}: {e}"))
}

/// The wire bytes of a transaction.
pub fn wire_bytes(tx: &VersionedTransaction) -> Result<Vec<u8>> {
    bincode::serialize(tx).context("serializing a transaction")
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_keypair::Keypair;
    use solana_transaction::versioned::TransactionVersion;

    #[test]
    fn self_transfers_are_unique_signed_and_round_robin() {
        let payers = [Keypair::new(), Keypair::new()];
        let hash = Hash::new_from_array([7; 32]);
        let txs = build_self_transfers(&payers, 5, 1_000_000, 1_000, hash).unwrap();
        assert_eq!(txs.len(), 5);
        let mut sigs: Vec<_> = txs.iter().map(|t| t.signatures[0]).collect();
        sigs.sort();
        sigs.dedup();
        assert_eq!(sigs.len(), 5);
        for (i, tx) in txs.iter().enumerate() {
            assert_eq!(tx.version(), TransactionVersion::LEGACY);
            assert_eq!(tx.message.static_account_keys()[0], payers[i % 2].pubkey());
            assert_eq!(*tx.message.recent_blockhash(), hash);
            assert_eq!(tx.message.instructions().len(), 3);
            assert!(tx.verify_with_results().iter().all(|ok| *ok));
            assert!(wire_bytes(tx).unwrap().len() <= 1232);
        }
    }
}
