//! Funding the payers a spread-out workload signs with.

use anyhow::{Context, Result, anyhow, bail};
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_message::{Message, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;
use solana_system_interface::instruction as system_instruction;
use solana_transaction::versioned::VersionedTransaction;

use super::fee_per_transaction;
use crate::deploy::sol;

/// Payer funding transfers per transaction; 10 keeps it far below 1232 bytes.
const FUNDING_TRANSFERS_PER_TX: usize = 10;

/// Tops every payer up to `target` lamports from `funder` in confirmed transfers, and returns the
/// lamports sent to each (0 when it already had enough).
pub fn fund_payers(
    rpc: &RpcClient,
    funder: &dyn Signer,
    payers: &[Pubkey],
    target: u64,
    cu_price: u64,
) -> Result<Vec<u64>> {
    let mut sends = Vec::with_capacity(payers.len());
    for payer in payers {
        let balance = rpc
            .get_balance(payer)
            .with_context(|| format!("getBalance of {payer}"))?;
        sends.push(target.saturating_sub(balance));
    }
    let todo: Vec<(Pubkey, u64)> = payers
        .iter()
        .copied()
        .zip(sends.iter().copied())
        .filter(|(_, l)| *l > 0)
        .collect();
    if todo.is_empty() {
        return Ok(sends);
    }
    let chunks: Vec<&[(Pubkey, u64)]> = todo.chunks(FUNDING_TRANSFERS_PER_TX).collect();
    let fees: u64 = chunks
        .iter()
        .map(|c| fee_per_transaction(cu_price, funding_cu_limit(c.len())))
        .sum();
    let total: u64 = todo
        .iter()
        .map(|(_, l)| *l)
        .sum::<u64>()
        .saturating_add(fees);
    let rent = rpc
        .get_minimum_balance_for_rent_exemption(0)
        .context("getMinimumBalanceForRentExemption")?;
    let balance = rpc
        .get_balance(&funder.pubkey())
        .with_context(|| format!("getBalance of {}", funder.pubkey()))?;
    if balance < total.saturating_add(rent) {
        bail!(
            "{} holds {} SOL; funding {} payers needs {} SOL plus {} SOL it must keep",
            funder.pubkey(),
            sol(balance),
            todo.len(),
            sol(total),
            sol(rent)
        );
    }
    for chunk in chunks {
        let mut instructions = vec![
            ComputeBudgetInstruction::set_compute_unit_price(cu_price),
            ComputeBudgetInstruction::set_compute_unit_limit(funding_cu_limit(chunk.len())),
        ];
        instructions.extend(
            chunk
                .iter()
                .map(|(to, l)| system_instruction::transfer(&funder.pubkey(), to, *l)),
        );
        let blockhash = rpc.get_latest_blockhash().context("getLatestBlockhash")?;
        let message =
            Message::new_with_blockhash(&instructions, Some(&funder.pubkey()), &blockhash);
        let tx = VersionedTransaction::try_new(VersionedMessage::Legacy(message), &[funder])
            .map_err(|e| anyhow!("signing with {}: {e}", funder.pubkey()))?;
        crate::confirmed_send::send_and_confirm(rpc, &tx).context("sending a funding transfer")?;
    }
    Ok(sends)
}

/// 150 CU per system transfer and per compute-budget instruction, doubled for headroom.
fn funding_cu_limit(transfers: usize) -> u32 {
    300 * (transfers as u32 + 2)
}
