//! The dark scenario's bound on slots to land: what no sender can beat while one node's TPU is
//! cut.
//!
//! While the dark node's TPU is cut, a transaction due in one of its slots can land no sooner
//! than the first slot after it led by a live node: on 3 nodes leading 4 slots each, up to 4
//! slots later. Each transaction's least slots to land are counted as `wire::slots_to_land`
//! counts its slots to land (from the slot sampled at its due moment), so the p99 of them is a
//! floor under any sender's p99. A slot is dark when the dark node leads it and it began (the
//! first sample showing it) inside the window its TPU was cut.
//!
//! The floor holds only if no transaction lands sooner than it allows: were the node to take
//! transactions by another way (another node forwarding them past the cut), it would not be
//! one. So the run counts those that did, and a floor is used only where that count is zero.
//! (Transactions the node took before the cut may land in its dark slots: they were due
//! before them, and the floor asks nothing of them. In the first matrix with these figures, at
//! e04bbe2, 24 of txpace's did.)

use std::{
    collections::HashSet,
    time::{Duration, Instant},
};

use serde::Serialize;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use txpace::cli::SLOT_MS;

use super::{
    scenario::{DARK_CANDIDATES, DARK_FOR},
    wire::{percentile, slot_at},
};

/// The dark scenario's figures of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DarkFigures {
    /// The node cut (`dark::node_to_cut`).
    pub node: usize,
    /// Slots led by the dark node while its TPU was cut.
    pub dark_slots: u64,
    /// p99 of each transaction's least slots to land: the floor under any sender's p99.
    pub p99_bound: u64,
    /// This run's transactions that landed in a dark slot.
    pub landed_in_dark: u64,
    /// This run's transactions that landed sooner than the floor allows them: 0 if it is one.
    pub under_floor: u64,
}

/// The slots `dark` leads (`leaders[k]` leads slot `first + k`) whose first sample falls in
/// `[from, to)`.
pub fn dark_slots(
    first: u64,
    leaders: &[Pubkey],
    dark: &Pubkey,
    samples: &[(Instant, u64)],
    (from, to): (Instant, Instant),
) -> HashSet<u64> {
    leaders
        .iter()
        .enumerate()
        .filter(|(_, l)| *l == dark)
        .map(|(k, _)| first + k as u64)
        .filter(|slot| {
            samples
                .iter()
                .find(|(_, s)| s >= slot)
                .is_some_and(|(at, _)| *at >= from && *at < to)
        })
        .collect()
}

/// The node to cut now: of [`DARK_CANDIDATES`], the one the leader schedule has leading the
/// most of the next [`DARK_FOR`]'s slots from the slot being processed, counted at `slot_s`
/// seconds a slot — as this run measured them so far, for a cluster's slots run longer than
/// the nominal 400 ms (about 0.5 s on this machine's clusters: 20 slots in the window, not 25,
/// and the five past it could decide the choice). The nominal length when nothing was
/// measured. The first candidate when the schedule cannot be read (said on standard error).
pub fn node_to_cut(chain: &RpcClient, identities: &[Pubkey], slot_s: Option<f64>) -> usize {
    let slots = slots_in(DARK_FOR, slot_s);
    let upcoming = chain
        .get_slot_with_commitment(CommitmentConfig::processed())
        .and_then(|slot| chain.get_slot_leaders(slot, slots));
    let candidates: Vec<_> = DARK_CANDIDATES
        .filter_map(|k| identities.get(k).map(|id| (k, *id)))
        .collect();
    match upcoming {
        Ok(upcoming) => busiest(&candidates, &upcoming).unwrap_or(DARK_CANDIDATES.start),
        Err(e) => {
            eprintln!(
                "reading the leader schedule to pick the dark node: {e}; cutting node {}",
                DARK_CANDIDATES.start
            );
            DARK_CANDIDATES.start
        }
    }
}

/// Slots in `window` at `slot_s` seconds a slot (the nominal [`SLOT_MS`] when `None` or not a
/// positive length), at least one.
fn slots_in(window: Duration, slot_s: Option<f64>) -> u64 {
    let slot_s = slot_s
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(SLOT_MS as f64 / 1e3);
    ((window.as_secs_f64() / slot_s).ceil() as u64).max(1)
}

/// Of `candidates` (node index, identity), the one that leads the most of `upcoming` — the
/// slot leaders of the window about to be cut — the first of them on a tie.
pub fn busiest(candidates: &[(usize, Pubkey)], upcoming: &[Pubkey]) -> Option<usize> {
    let led = |id: &Pubkey| upcoming.iter().filter(|l| *l == id).count();
    candidates
        .iter()
        .enumerate()
        .max_by_key(|(k, (_, id))| (led(id), std::cmp::Reverse(*k)))
        .map(|(_, (node, _))| *node)
}

/// The figures of a run whose transactions were due at `dues` and landed in `landed`.
pub fn figures(
    node: usize,
    dues: &[Instant],
    landed: &[Option<u64>],
    samples: &[(Instant, u64)],
    dark: &HashSet<u64>,
) -> DarkFigures {
    // Each transaction's slot when due, and the first live slot from there.
    let due_and_live: Vec<(u64, u64)> = dues
        .iter()
        .filter_map(|due| slot_at(samples, *due))
        .map(|due| {
            let mut slot = due;
            while dark.contains(&slot) {
                slot += 1;
            }
            (due, slot)
        })
        .collect();
    let least: Vec<u64> = due_and_live.iter().map(|(due, live)| live - due).collect();
    let under_floor = due_and_live
        .iter()
        .zip(landed)
        .filter(|((due, live), slot)| slot.is_some_and(|s| s >= *due && s < *live))
        .count() as u64;
    DarkFigures {
        node,
        dark_slots: dark.len() as u64,
        p99_bound: percentile(&least, 99.0).unwrap_or(0),
        landed_in_dark: landed.iter().flatten().filter(|s| dark.contains(s)).count() as u64,
        under_floor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots 10–21 in turns of 4: A, B (dark), A. B's slots began 400 ms apart from 1.6 s; the
    /// window cut it from 1.7 s to 3.0 s, so slot 14 (begun 1.6 s) was still live.
    fn setting() -> (Instant, Vec<(Instant, u64)>, HashSet<u64>) {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let samples: Vec<_> = (0..12).map(|k| (at(k * 400), 10 + k)).collect();
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let leaders = [a, a, a, a, b, b, b, b, a, a, a, a];
        let dark = dark_slots(10, &leaders, &b, &samples, (at(1700), at(3000)));
        (t0, samples, dark)
    }

    #[test]
    fn the_node_cut_is_the_one_leading_most_of_the_window_the_first_on_a_tie() {
        let (a, b, c) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let candidates = [(1, b), (2, c)];
        assert_eq!(busiest(&candidates, &[a, a, a, a, c, c, c, c, b]), Some(2));
        assert_eq!(busiest(&candidates, &[a, a, a, a, c, c, b, b]), Some(1));
        // Neither leads: the first, as before the choice existed.
        assert_eq!(busiest(&candidates, &[a; 8]), Some(1));
        assert_eq!(busiest(&[], &[a]), None);
    }

    /// The window is counted in the run's measured slots: 10 s are 20 slots of 0.5 s, 25 of
    /// the nominal 0.4 s, and never none.
    #[test]
    fn the_window_is_counted_in_measured_slots_else_nominal_ones() {
        let ten = Duration::from_secs(10);
        assert_eq!(slots_in(ten, Some(0.5)), 20);
        assert_eq!(slots_in(ten, None), 25);
        assert_eq!(slots_in(ten, Some(0.0)), 25);
        assert_eq!(slots_in(ten, Some(f64::NAN)), 25);
        assert_eq!(slots_in(ten, Some(1e9)), 1);
    }

    #[test]
    fn dark_slots_are_the_dark_node_s_begun_inside_the_window() {
        let (_, _, dark) = setting();
        let mut got: Vec<_> = dark.into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, [15, 16, 17]);
    }

    /// Due in slot 15 a transaction lands in 18 at the soonest: 3 slots; in 17, 1; elsewhere 0.
    /// One due in slot 15 that landed in 16 beat the floor; one due in 10 that landed in 15, a
    /// dark slot, was taken before the cut and did not.
    #[test]
    fn each_transaction_s_least_slots_run_to_the_first_live_slot() {
        let (t0, samples, dark) = setting();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let dues = [at(0), at(2000), at(2900), at(4000)];
        let f = figures(
            2,
            &dues,
            &[Some(15), Some(16), None, Some(21)],
            &samples,
            &dark,
        );
        assert_eq!(
            f,
            DarkFigures {
                node: 2,
                dark_slots: 3,
                p99_bound: 3,
                landed_in_dark: 2,
                under_floor: 1,
            }
        );
        let none = figures(1, &dues, &[], &samples, &HashSet::new());
        assert_eq!((none.p99_bound, none.dark_slots), (0, 0));
    }
}
