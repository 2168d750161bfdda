//! A run's first sends on links of different lengths (tokio's paused clock, 4.0 leaders): the
//! current leader is 230 ms away, the next 85 ms, the one after them 20 ms — the `mainnet`
//! profile's three regions. Nothing is connected yet, and the near leader's handshake ends
//! first. The sends made while the others' handshakes are under way must still reach them
//! (`engine::liveness`): sent only to the near leader, they wait for its turn, two turns
//! away — on the relay's `mainnet` runs the first 13–20 transactions landed 2.5–5 s after
//! their due time, the whole p99 of the run.

use std::sync::Arc;

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{self, EngineConfig, sim::SimCluster, snapshot::RateTarget};

const N: usize = 400;

/// The first transactions, due in the first 300 ms, land in the turn of the current or the
/// next leader — not in the third leader's, which starts 3.2 s in — and no leader reads a
/// stream of ours late for our budget: what waited for a handshake reaches the leader at once
/// when it ends, within a window's budget.
#[tokio::test(start_paused = true)]
async fn sends_made_during_the_first_handshakes_reach_the_current_and_next_leader() {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    let start = cluster.slot_now();
    // The leader of `start`'s turn, the next and the third, far to near.
    let turn = |i: u64| cluster.leader_at(start + 4 * i);
    for (i, rtt) in [230, 85, 20].into_iter().enumerate() {
        let addr = cluster.addr_of(&turn(i as u64)).expect("an address");
        cluster.set_link(addr, Some(SimLink::new(rtt, 0.0)));
    }
    let third_turn = start - start % 4 + 8;
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let txs = cluster.transactions(N, hash);
    let first: Vec<_> = txs.iter().take(30).map(|t| t.signature).collect();
    let h = engine::spawn(
        cfg,
        txs,
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    );
    let s = h.task.await.expect("engine").snapshot;
    assert_eq!(s.counts.confirmed, N as u64);
    let late: Vec<(usize, u64)> = first
        .iter()
        .enumerate()
        .filter_map(|(i, sig)| {
            let slot = cluster.landed_slot(sig).expect("landed");
            (slot >= third_turn).then_some((i, slot))
        })
        .collect();
    assert!(
        late.is_empty(),
        "of the first {} transactions, these (index, slot) waited for the third leader's \
         turn at slot {third_turn}: {late:?}",
        first.len()
    );
    let delayed: u64 = ls
        .iter()
        .filter_map(|l| cluster.addr_of(l))
        .map(|a| cluster.leader_counters(a).streams_delayed)
        .sum();
    assert_eq!(delayed, 0, "streams read late for our budget");
}
