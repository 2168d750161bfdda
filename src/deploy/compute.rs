//! The compute budget a deploy's transactions carry, as `solana program deploy
//! --with-compute-unit-price` gives them: on a busy cluster a buffer write without a priority fee
//! waits behind every transaction that pays one.
//!
//! The price is the user's (`N` micro-lamports per compute unit) or `auto`: a percentile of what
//! the cluster's recent blocks charged for the accounts the deploy writes
//! (`getRecentPrioritizationFees`). A priced transaction without an explicit unit limit would be
//! charged for the default limit (200,000 units per instruction), most of it unused; so, as the
//! Solana CLI does, each phase's limit is measured by simulating its first transaction, with a
//! margin.

use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_instruction::Instruction;
use solana_pubkey::Pubkey;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::client_error::Error as ClientError;

use crate::fees::percentile;

/// The most compute units a transaction may ask for.
pub const MAX_UNIT_LIMIT: u32 = 1_400_000;
/// Units a transaction is allotted per instruction when it sets no limit.
pub const DEFAULT_UNITS_PER_INSTRUCTION: u32 = 200_000;

/// How the compute-unit price is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceChoice {
    /// Micro-lamports per compute unit.
    Fixed(u64),
    /// The given percentile (0–100) of recent prioritization fees for the written accounts.
    Auto { percentile: u8 },
}

/// Where the price came from, for the header and the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceSource {
    Flag,
    /// A percentile of `samples` recent slots' fees.
    Recent {
        percentile: u8,
        samples: usize,
    },
}

/// The budget every transaction of a deploy carries — no instructions at all unless a price or
/// a limit was asked for; without an explicit limit, a priced deploy measures each phase's.
/// The same type `source` reads back from any transaction.
pub use crate::source::ComputeBudget;

impl ComputeBudget {
    /// Whether each phase's unit limit must be measured before it is signed.
    pub fn measures_limits(&self) -> bool {
        self.price.is_some() && self.limit.is_none()
    }

    /// The compute-budget instructions for a transaction, given the limit measured for its
    /// phase (ignored when an explicit limit is set).
    pub fn instructions(&self, measured: Option<u32>) -> Vec<Instruction> {
        let mut ixs = Vec::new();
        if let Some(price) = self.price {
            ixs.push(ComputeBudgetInstruction::set_compute_unit_price(price));
        }
        if let Some(limit) = self.limit.or(measured) {
            ixs.push(ComputeBudgetInstruction::set_compute_unit_limit(limit));
        }
        ixs
    }

    /// The largest set of instructions this budget may add: what a chunk's size must leave
    /// room for.
    pub fn widest_instructions(&self) -> Vec<Instruction> {
        self.instructions(self.measures_limits().then_some(MAX_UNIT_LIMIT))
    }

    /// The most priority fee (lamports) one transaction with `instructions` other instructions
    /// can cost: its limit times the price, rounded up as the runtime does. With a measured
    /// limit not yet known, the default allotment is the bound.
    pub fn max_priority_fee(&self, instructions: u32) -> u64 {
        let Some(price) = self.price else {
            return 0;
        };
        let units = self.limit.unwrap_or_else(|| {
            DEFAULT_UNITS_PER_INSTRUCTION
                .saturating_mul(instructions)
                .min(MAX_UNIT_LIMIT)
        });
        priority_fee(price, units)
    }
}

/// Lamports paid for `units` at `price` micro-lamports each, rounded up.
pub fn priority_fee(price: u64, units: u32) -> u64 {
    let micro = u128::from(price) * u128::from(units);
    u64::try_from(micro.div_ceil(1_000_000)).unwrap_or(u64::MAX)
}

/// The limit to set for a transaction that consumed `units` in simulation: a tenth more and
/// a thousand units of margin (a write into a fresh page, a different account order), within
/// the runtime's bound.
pub fn limit_for(units: u64) -> u32 {
    let with_margin = units.saturating_add(units / 10).saturating_add(1_000);
    u32::try_from(with_margin)
        .unwrap_or(MAX_UNIT_LIMIT)
        .min(MAX_UNIT_LIMIT)
}

/// `--with-compute-unit-price auto`: the `p`-th percentile of what the cluster's recent slots
/// charged for writing `written` (`getRecentPrioritizationFees`), and where it came from. On
/// the asynchronous client, the one flavour the deploy driver reads the chain with.
pub async fn recent_price(
    rpc: &RpcClient,
    written: &[Pubkey],
    p: u8,
) -> Result<(u64, PriceSource), ClientError> {
    let fees: Vec<u64> = rpc
        .get_recent_prioritization_fees(written)
        .await?
        .iter()
        .map(|f| f.prioritization_fee)
        .collect();
    Ok((
        percentile(&fees, p),
        PriceSource::Recent {
            percentile: p,
            samples: fees.len(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_budget_adds_nothing_and_costs_nothing() {
        let none = ComputeBudget::default();
        assert!(none.instructions(None).is_empty());
        assert!(none.widest_instructions().is_empty());
        assert_eq!(none.max_priority_fee(2), 0);
        assert!(!none.measures_limits());
    }

    #[test]
    fn a_price_alone_measures_limits_and_is_bounded_by_the_default_allotment() {
        let priced = ComputeBudget {
            price: Some(1_000),
            limit: None,
        };
        assert!(priced.measures_limits());
        assert_eq!(priced.instructions(None).len(), 1);
        assert_eq!(priced.instructions(Some(4_000)).len(), 2);
        assert_eq!(priced.widest_instructions().len(), 2);
        // One write instruction: 200,000 units at 1,000 micro-lamports = 200 lamports.
        assert_eq!(priced.max_priority_fee(1), 200);
        assert_eq!(
            priced.max_priority_fee(100),
            priority_fee(1_000, MAX_UNIT_LIMIT)
        );
    }

    #[test]
    fn an_explicit_limit_wins_over_a_measured_one() {
        let fixed = ComputeBudget {
            price: Some(3),
            limit: Some(7_000),
        };
        assert!(!fixed.measures_limits());
        assert_eq!(
            fixed.instructions(Some(99)),
            vec![
                ComputeBudgetInstruction::set_compute_unit_price(3),
                ComputeBudgetInstruction::set_compute_unit_limit(7_000),
            ]
        );
        // 21,000 micro-lamports round up to 1 lamport.
        assert_eq!(fixed.max_priority_fee(1), 1);
    }

    #[test]
    fn fees_round_up_and_never_overflow() {
        assert_eq!(priority_fee(1, 1), 1);
        assert_eq!(priority_fee(1_000_000, 1_000), 1_000);
        assert_eq!(priority_fee(u64::MAX, MAX_UNIT_LIMIT), u64::MAX);
        assert_eq!(limit_for(2_000), 3_200);
        assert_eq!(limit_for(u64::MAX), MAX_UNIT_LIMIT);
    }
}
