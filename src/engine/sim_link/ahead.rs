//! Sends ahead of a leader's turn (`engine::dispatch::ahead`) on simulated links under tokio's
//! paused clock: three 4.0 leaders, each reading 200 of our unstaked streams a second in
//! 100 ms windows and holding what it reads for a turn within `HOLD_SLOTS`.

use std::{collections::HashMap, time::Duration};

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{EngineConfig, sim::SimCluster, snapshot::RateTarget};

const N: usize = 2_000;

/// `--rate max`, unstaked, on three leaders 20, 85 and 230 ms away (the `mainnet` profile's
/// round trips). Sent only to the current and the next leader, every transaction is read by
/// both, so no more than one leader's budget lands a second: 200, and 2,000 take 10 s at the
/// least. With the leader after next taking sends of its own from the end of the queue (728 of
/// them), every transaction lands within 8 s (0.8 × that bound; 7.2 s with the change, 10.8 s
/// without), with at most 1.05 sends per landed transaction and no read of ours delayed by a
/// leader's budget.
#[tokio::test(start_paused = true)]
async fn at_max_rate_the_leader_after_next_drains_the_queue_from_its_end() {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    let addrs: Vec<_> = ls
        .iter()
        .map(|l| cluster.addr_of(l).expect("an address"))
        .collect();
    for (addr, rtt) in addrs.iter().zip([20, 85, 230]) {
        cluster.set_link(*addr, Some(SimLink::new(rtt, 0.0)));
    }
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Max;
    cfg.fanout_by_link = true;
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let txs = cluster.transactions(N, hash);
    let s = cluster.run_engine(cfg, txs).await;
    let sends = cluster.sends();
    let last_read = sends.iter().map(|x| x.at).max().unwrap_or_default();
    let delayed = sends.iter().filter(|x| x.delayed).count();
    // Transactions read by one leader alone: those sent ahead of its turn.
    let mut readers: HashMap<_, Vec<_>> = HashMap::new();
    for x in &sends {
        readers.entry(x.signature).or_default().push(x.addr);
    }
    let alone = readers.values().filter(|a| a.len() == 1).count();
    let per_landed = s.counts.sends as f64 / N as f64;
    eprintln!(
        "elapsed {:?}, last read {last_read:?}, sends per landed {per_landed:.3}, {alone} read \
         by one leader alone, {delayed} reads delayed, leaders {:?}",
        s.elapsed,
        addrs
            .iter()
            .map(|a| cluster.leader_counters(*a))
            .collect::<Vec<_>>()
    );
    assert_eq!(s.counts.confirmed, N as u64);
    assert!(
        s.elapsed < Duration::from_secs(8),
        "{:?}: no faster than one leader's budget",
        s.elapsed
    );
    assert!(alone > 500, "{alone} sent ahead");
    assert!(per_landed <= 1.05, "{per_landed:.3} sends per landed");
    assert_eq!(delayed, 0, "reads delayed by a leader's budget");
}
