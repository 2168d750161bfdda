//! What a person wants to know about a transaction at a glance (for `inspect` and detail views).
//!
//! Works on any decoded transaction, sanitized or not, so that a transaction rejected for its
//! signatures can still be described: every lookup is checked.

use solana_hash::Hash;
use solana_message::VersionedMessage;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;

/// The facts `inspect` shows about one transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxSummary {
    pub signature: Option<Signature>,
    pub fee_payer: Option<Pubkey>,
    /// `"legacy"` or `"v0"`.
    pub version: &'static str,
    pub recent_blockhash: Hash,
    pub durable_nonce: bool,
    /// Micro-lamports per compute unit; `None` when no ComputeBudget instruction sets it.
    pub cu_price: Option<u64>,
    /// `None` when no ComputeBudget instruction sets it (the runtime default applies).
    pub cu_limit: Option<u32>,
    pub size: usize,
    pub instructions: usize,
}

/// ComputeBudget instruction tags (borsh enum variant indexes).
const SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const SET_COMPUTE_UNIT_PRICE: u8 = 3;

/// What a transaction's ComputeBudget instructions set; `None` where none sets it (the
/// runtime's default applies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComputeBudget {
    /// Micro-lamports per compute unit.
    pub price: Option<u64>,
    pub limit: Option<u32>,
}

/// Reads `tx`'s compute-unit price and limit.
pub fn compute_budget(tx: &VersionedTransaction) -> ComputeBudget {
    let message = &tx.message;
    let keys = message.static_account_keys();
    let mut budget = ComputeBudget::default();
    for ix in message.instructions() {
        let is_budget = keys
            .get(usize::from(ix.program_id_index))
            .is_some_and(solana_compute_budget_interface::check_id);
        if !is_budget {
            continue;
        }
        // Parsed by hand rather than through borsh, with the runtime's rule that the data is
        // exactly the tag and its value; the first setting wins, as a second one fails the
        // transaction anyway.
        match ix.data.split_first() {
            Some((&SET_COMPUTE_UNIT_PRICE, value)) if budget.price.is_none() => {
                budget.price = <[u8; 8]>::try_from(value).ok().map(u64::from_le_bytes);
            }
            Some((&SET_COMPUTE_UNIT_LIMIT, value)) if budget.limit.is_none() => {
                budget.limit = <[u8; 4]>::try_from(value).ok().map(u32::from_le_bytes);
            }
            _ => {}
        }
    }
    budget
}

/// Describes `tx`, whose wire form is `size` bytes long.
pub fn summarize(tx: &VersionedTransaction, size: usize) -> TxSummary {
    let message = &tx.message;
    let keys = message.static_account_keys();
    let budget = compute_budget(tx);
    TxSummary {
        signature: tx.signatures.first().copied(),
        fee_payer: keys.first().copied(),
        version: match message {
            VersionedMessage::Legacy(_) => "legacy",
            VersionedMessage::V0(_) => "v0",
        },
        recent_blockhash: *message.recent_blockhash(),
        durable_nonce: tx.uses_durable_nonce(),
        cu_price: budget.price,
        cu_limit: budget.limit,
        size,
        instructions: message.instructions().len(),
    }
}
