//! The physical bound after a validator freeze: what no unstaked sender can beat, so that
//! txpace is judged against it rather than against another client. Until the thaw nothing
//! lands; then every transaction still owed (not landed when the validator froze) must pass
//! the leader's stream budget for an unstaked peer, 200 a second (`MAX_UNSTAKED_TPS` in
//! Agave 4.0's `solana-streamer`), and the last of them needs one confirmation more.

use serde::Serialize;

/// The leader's stream budget for an unstaked peer, streams per second.
pub const UNSTAKED_BUDGET_TPS: f64 = 200.0;

/// How far over the bound txpace's wall time may be and still meet the goal: its exit and the
/// rounding of the parts above.
pub const FREEZE_SLACK_S: f64 = 0.5;

/// The freeze bound's parts, each measured in the run it judges.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FreezeBound {
    /// From the sender's start to the validator's thaw.
    pub thaw_s: f64,
    /// Transactions of the run that had not landed when the validator froze.
    pub owed: u64,
    /// One confirmation: the run's median time from first send to landing.
    pub confirmation_s: f64,
}

impl FreezeBound {
    /// Transactions owed: of `total`, all but those that landed in a slot no later than
    /// `frozen_slot`, the validator's last processed slot before it froze. One landed in the
    /// slot being made at that moment counts as owed, so the bound errs a slot's worth of
    /// transactions (about 0.2 s at 100 tx/s) in the sender's favour.
    pub fn owed(total: u64, landed_slots: &[u64], frozen_slot: u64) -> u64 {
        let before = landed_slots.iter().filter(|s| **s <= frozen_slot).count() as u64;
        total.saturating_sub(before)
    }

    /// thaw + owed / 200 + one confirmation, in seconds from the sender's start.
    pub fn total_s(&self) -> f64 {
        self.thaw_s + self.owed as f64 / UNSTAKED_BUDGET_TPS + self.confirmation_s
    }

    /// Whether a run that took `wall_s` met the goal: at most [`FREEZE_SLACK_S`] over the
    /// bound.
    pub fn met(&self, wall_s: f64) -> bool {
        wall_s <= self.total_s() + FREEZE_SLACK_S
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owed_are_those_not_landed_by_the_frozen_slot() {
        assert_eq!(FreezeBound::owed(1500, &[10, 11, 12, 13], 12), 1497);
        assert_eq!(FreezeBound::owed(3, &[1, 2, 3], 5), 0);
        assert_eq!(FreezeBound::owed(1500, &[], 12), 1500);
    }

    /// The doc's freeze: thawed 15 s in, 1,000 owed at 200/s, a 1.1 s confirmation: 21.1 s,
    /// and the goal allows 0.5 s more.
    #[test]
    fn the_bound_is_thaw_plus_owed_over_the_budget_plus_one_confirmation() {
        let b = FreezeBound {
            thaw_s: 15.0,
            owed: 1000,
            confirmation_s: 1.1,
        };
        assert!((b.total_s() - 21.1).abs() < 1e-9);
        assert!(b.met(21.6));
        assert!(!b.met(21.7));
    }
}
