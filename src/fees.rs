//! Where a compute-unit price sits among what the cluster's recent slots charged
//! (`getRecentPrioritizationFees`): the figures behind `--with-compute-unit-price auto`, the
//! preflight's fee finding, and the fee line of the dashboard and the report.

use std::collections::HashMap;

use solana_pubkey::Pubkey;

use crate::source::{LoadedTx, decode_wire};

/// The cluster takes at most this many accounts per `getRecentPrioritizationFees` call.
pub const MAX_ACCOUNTS: usize = 128;
/// Transactions read to find the most-written accounts: evenly spaced, so a million-transaction
/// batch costs what a few thousand do.
const SAMPLE: usize = 2_000;

/// The `p`-th percentile (nearest rank) of `fees`; 0 for no samples.
pub fn percentile(fees: &[u64], p: u8) -> u64 {
    if fees.is_empty() {
        return 0;
    }
    let mut sorted = fees.to_vec();
    sorted.sort_unstable();
    let p = usize::from(p.min(100));
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// Where `price` sits among `fees`: the share of them (in percent, rounded down) it is at
/// least as high as — "p35" pays at least what 35 % of recent slots charged. 100 for no
/// samples.
pub fn rank(fees: &[u64], price: u64) -> u8 {
    if fees.is_empty() {
        return 100;
    }
    let covered = fees.iter().filter(|f| **f <= price).count();
    (covered * 100 / fees.len()) as u8
}

/// The accounts `txs` write most often, most written first, at most [`MAX_ACCOUNTS`]: what
/// recent fees are asked for.
pub fn most_written(txs: &[LoadedTx]) -> Vec<Pubkey> {
    let step = txs.len().div_ceil(SAMPLE).max(1);
    let mut counts: HashMap<Pubkey, usize> = HashMap::new();
    for loaded in txs.iter().step_by(step) {
        let Ok(tx) = decode_wire(&loaded.wire) else {
            continue;
        };
        let m = &tx.message;
        for (i, key) in m.static_account_keys().iter().enumerate() {
            if m.is_maybe_writable(i, None) {
                *counts.entry(*key).or_default() += 1;
            }
        }
    }
    let mut v: Vec<(Pubkey, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(MAX_ACCOUNTS);
    v.into_iter().map(|(k, _)| k).collect()
}

/// The median compute-unit price of `txs` (0 for those that set none).
pub fn median_price(txs: &[LoadedTx]) -> u64 {
    let prices: Vec<u64> = txs.iter().map(|t| t.budget.price.unwrap_or(0)).collect();
    percentile(&prices, 50)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_is_the_share_of_fees_a_price_covers() {
        let fees = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90];
        assert_eq!(rank(&fees, 0), 10);
        assert_eq!(rank(&fees, 35), 40);
        assert_eq!(rank(&fees, 1_000), 100);
        assert_eq!(rank(&[], 5), 100);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        assert_eq!(percentile(&[], 75), 0);
        let fees = [0, 0, 10, 20, 30, 40, 50, 60, 70, 1_000];
        assert_eq!(percentile(&fees, 0), 0);
        assert_eq!(percentile(&fees, 50), 30);
        assert_eq!(percentile(&fees, 75), 60);
        assert_eq!(percentile(&fees, 100), 1_000);
        assert_eq!(percentile(&[5], 75), 5);
    }
}
