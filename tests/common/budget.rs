//! What a landed transaction paid for compute, read back from the chain independently of
//! txpace: its compute-budget instructions, fee payer and fee.

use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcTransactionConfig;
use solana_sdk_ids::compute_budget;
use solana_signature::Signature;
use solana_transaction_status_client_types::UiTransactionEncoding;

/// One landed transaction's compute budget and fee.
#[derive(Debug)]
pub struct Landed {
    /// `SetComputeUnitPrice`, micro-lamports per unit.
    pub price: Option<u64>,
    /// `SetComputeUnitLimit`.
    pub limit: Option<u32>,
    pub fee_payer: Pubkey,
    pub signatures: usize,
    /// Lamports charged, from the transaction's status meta.
    pub fee: u64,
}

/// Reads `sig` from the ledger (`getTransaction`) and decodes its compute-budget instructions.
pub fn landed(rpc: &RpcClient, sig: &Signature) -> Landed {
    let config = RpcTransactionConfig {
        encoding: Some(UiTransactionEncoding::Base64),
        commitment: Some(CommitmentConfig::confirmed()),
        max_supported_transaction_version: Some(0),
    };
    let got = rpc
        .get_transaction_with_config(sig, config)
        .unwrap_or_else(|e| panic!("getTransaction {sig}: {e}"));
    let fee = got
        .transaction
        .meta
        .as_ref()
        .map(|m| m.fee)
        .unwrap_or_else(|| panic!("{sig} has no status meta"));
    let tx = got
        .transaction
        .transaction
        .decode()
        .unwrap_or_else(|| panic!("{sig} does not decode"));
    let keys = tx.message.static_account_keys();
    let (mut price, mut limit) = (None, None);
    for ix in tx.message.instructions() {
        if keys.get(usize::from(ix.program_id_index)) != Some(&compute_budget::id()) {
            continue;
        }
        match ix.data.split_first() {
            Some((2, rest)) => {
                limit = Some(u32::from_le_bytes(rest[..4].try_into().expect("u32")));
            }
            Some((3, rest)) => {
                price = Some(u64::from_le_bytes(rest[..8].try_into().expect("u64")));
            }
            _ => {}
        }
    }
    Landed {
        price,
        limit,
        fee_payer: keys[0],
        signatures: tx.signatures.len(),
        fee,
    }
}
