//! The longest stretch of slots in which none of a run's transactions landed, and what the
//! chain did meanwhile: how many of those slots have no block, and which node led them. A run
//! whose wall time is far from its round's others is explained by it or not: a stall of the
//! cluster's own (slots without blocks, a dark leader's turns) is no sender's doing, and
//! contenders run one after another, so it meets only the one running then.

use anyhow::Result;
use serde::Serialize;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;

/// Slots strictly between two consecutive landing slots of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gap {
    /// The landing slots either side.
    pub after: u64,
    pub before: u64,
    /// Slots between them with no confirmed block.
    pub empty: u64,
    /// Slots between them each node led, in node order.
    pub led: Vec<u64>,
}

impl Gap {
    /// Slots between the two landings.
    pub fn slots(&self) -> u64 {
        self.before - self.after - 1
    }

    /// `20 (567–588, 9 without a block; led 8 / 8 / 4)`.
    pub fn label(&self) -> String {
        let led: Vec<String> = self.led.iter().map(u64::to_string).collect();
        format!(
            "{} ({}–{}, {} without a block; led {})",
            self.slots(),
            self.after,
            self.before,
            self.empty,
            led.join(" / ")
        )
    }
}

/// The widest gap between consecutive distinct landing slots (in any order), as the slots
/// either side; none when no two landings are more than a slot apart.
pub fn widest(slots: &[u64]) -> Option<(u64, u64)> {
    let mut sorted = slots.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|(a, b)| b - a > 1)
        .max_by_key(|(a, b)| (b - a, std::cmp::Reverse(*a)))
}

/// The run's longest gap between landings, with the chain's blocks and leaders in it.
pub fn longest(rpc: &RpcClient, slots: &[u64], nodes: &[Pubkey]) -> Result<Option<Gap>> {
    let Some((after, before)) = widest(slots) else {
        return Ok(None);
    };
    let (first, last) = (after + 1, before - 1);
    let blocks =
        rpc.get_blocks_with_commitment(first, Some(last), CommitmentConfig::confirmed())?;
    let leaders = rpc.get_slot_leaders(first, last - first + 1)?;
    let led = nodes
        .iter()
        .map(|n| leaders.iter().filter(|l| *l == n).count() as u64)
        .collect();
    Ok(Some(Gap {
        after,
        before,
        empty: (last - first + 1).saturating_sub(blocks.len() as u64),
        led,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widest_gap_is_between_consecutive_distinct_slots() {
        assert_eq!(widest(&[]), None);
        assert_eq!(widest(&[5, 5, 6, 7]), None, "no slot between landings");
        assert_eq!(widest(&[588, 567, 566, 589, 567]), Some((567, 588)));
        assert_eq!(widest(&[1, 4, 10, 13]), Some((4, 10)));
        assert_eq!(widest(&[1, 4, 7]), Some((1, 4)), "the first of equals");
    }

    #[test]
    fn a_gap_says_its_slots_the_empty_ones_and_who_led_them() {
        let gap = Gap {
            after: 567,
            before: 588,
            empty: 9,
            led: vec![8, 8, 4],
        };
        assert_eq!(gap.slots(), 20);
        assert_eq!(
            gap.label(),
            "20 (567–588, 9 without a block; led 8 / 8 / 4)"
        );
    }
}
