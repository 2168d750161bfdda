//! The founding workload: N unique, signed self-transfers with a priority fee, and what they
//! cost.
//!
//! A self-transfer (payer → payer) changes no balance except by the fee, needs no recipient
//! accounts and conflicts only with transactions of the same payer, so a file of them measures
//! landing, not program behaviour. Each one is made unique by its lamport amount (the i-th
//! transfers i + 1 lamports), so no two share a signature. Spreading them over K funded payers
//! helps because one payer's account is write-locked by every one of its transactions, which
//! serialises them inside a block at high rates.
//!
//! `txpace gen` writes them to a file, `txpace demo` and the benchmarks send them straight away,
//! and `deploy` prices its own transactions with the same fee rule.

mod encode;
mod funding;
mod transfers;

pub use encode::{OutputFormat, encode_transactions, write_transactions};
pub use funding::fund_payers;
pub use transfers::{build_self_transfers, self_transfer, wire_bytes};

/// The base fee per signature; unchanged on every cluster since launch.
pub const LAMPORTS_PER_SIGNATURE: u64 = 5_000;

/// Compute units a self-transfer with its two compute-budget instructions consumes: 150 for the
/// system transfer and 150 for each compute-budget instruction (measured on agave 4.0 by the
/// end-to-end test). The default limit of 1,000 leaves room for runtime changes while keeping the
/// priority fee at 1,000 lamports at the default price.
pub const SELF_TRANSFER_UNITS: u32 = 450;

/// Base fee plus priority fee (price × limit, rounded up to whole lamports), which is what the
/// runtime charges whatever the transaction actually consumes.
pub fn fee_per_transaction(cu_price: u64, cu_limit: u32) -> u64 {
    let priority = (u128::from(cu_price) * u128::from(cu_limit)).div_ceil(1_000_000);
    LAMPORTS_PER_SIGNATURE.saturating_add(u64::try_from(priority).unwrap_or(u64::MAX))
}

/// Lamports a payer needs for `tx_count` transactions: twice their fees (so a rerun with a new
/// blockhash still fits), the largest transfer amount (checked against the balance) and the
/// rent-exempt minimum a fee payer must keep.
pub fn payer_budget(tx_count: u64, fee: u64, max_amount: u64, rent_exempt_minimum: u64) -> u64 {
    tx_count
        .saturating_mul(fee)
        .saturating_mul(2)
        .saturating_add(max_amount)
        .saturating_add(rent_exempt_minimum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fees_round_the_priority_fee_up() {
        assert_eq!(fee_per_transaction(1_000_000, 1_000), 6_000);
        assert_eq!(fee_per_transaction(1, 1), 5_001);
        assert_eq!(fee_per_transaction(0, 1_000), 5_000);
        assert_eq!(fee_per_transaction(u64::MAX, u32::MAX), u64::MAX);
        assert_eq!(payer_budget(10, 6_000, 50, 890_880), 120_000 + 50 + 890_880);
    }
}
