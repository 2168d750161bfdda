//! Sends ahead of a leader's turn (`engine::dispatch::ahead`) on simulated links under tokio's
//! paused clock: three 4.0 leaders, each reading 200 of our unstaked streams a second in
//! 100 ms windows and holding what it reads for a turn within `HOLD_SLOTS`.

use std::collections::HashMap;

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{EngineConfig, sim::SimCluster, snapshot::RateTarget};

/// Three leaders 20, 85 and 230 ms away (the `mainnet` profile's round trips), and an engine
/// configuration at `--rate max` with the defaults otherwise.
fn mainnet() -> (SimCluster, EngineConfig) {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    for (l, rtt) in ls.iter().zip([20, 85, 230]) {
        let addr = cluster.addr_of(l).expect("an address");
        cluster.set_link(addr, Some(SimLink::new(rtt, 0.0)));
    }
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Max;
    cfg.fanout_by_link = true;
    (cluster, cfg)
}

fn a_hash() -> Hash {
    Hash::new_from_array(Pubkey::new_unique().to_bytes())
}

/// Transactions read by one leader alone: those sent ahead of its turn (every send of the
/// pace goes to two leaders at least).
fn read_by_one_alone(cluster: &SimCluster) -> usize {
    let mut readers: HashMap<_, usize> = HashMap::new();
    for x in cluster.sends() {
        *readers.entry(x.signature).or_default() += 1;
    }
    readers.values().filter(|n| **n == 1).count()
}

/// `--rate max`, unstaked, on the three leaders. Sent only to the current and the next leader,
/// every transaction is read by both, so no more than one leader's budget lands a second: 200,
/// and 2,000 take 10 s at the least. With the leader after next taking sends of its own from
/// the end of the queue (728 of them), every transaction lands within 8 s (0.8 × that bound;
/// 7.2 s with the change, 10.8 s without), with at most 1.05 sends per landed transaction and
/// no read of ours delayed by a leader's budget.
#[tokio::test(start_paused = true)]
async fn at_max_rate_the_leader_after_next_drains_the_queue_from_its_end() {
    const N: usize = 2_000;
    let (cluster, cfg) = mainnet();
    let s = cluster
        .run_engine(cfg, cluster.transactions(N, a_hash()))
        .await;
    let delayed = cluster.sends().iter().filter(|x| x.delayed).count();
    let alone = read_by_one_alone(&cluster);
    let per_landed = s.counts.sends as f64 / N as f64;
    eprintln!(
        "elapsed {:?}, sends per landed {per_landed:.3}, {alone} read by one leader alone, \
         {delayed} reads delayed",
        s.elapsed
    );
    assert_eq!(s.counts.confirmed, N as u64);
    assert!(
        s.elapsed < std::time::Duration::from_secs(8),
        "{:?}: no faster than one leader's budget",
        s.elapsed
    );
    assert!(alone > 500, "{alone} sent ahead");
    assert!(per_landed <= 1.05, "{per_landed:.3} sends per landed");
    assert_eq!(delayed, 0, "reads delayed by a leader's budget");
}

/// A transaction whose blockhash is no longer taken when the leader after next's turn ends is
/// left to the pace, which sends it sooner: on a blockhash valid for 10 more blocks none is
/// sent ahead (while on one valid for 150, as in a fresh file, some are).
#[tokio::test(start_paused = true)]
async fn a_transaction_that_would_expire_before_the_turn_is_not_sent_ahead() {
    for (blocks, ahead) in [(150, true), (10, false)] {
        let (cluster, cfg) = mainnet();
        let hash = a_hash();
        cluster.add_blockhash(hash, cluster.height_now() + blocks);
        let s = cluster
            .run_engine(cfg, cluster.transactions(1_500, hash))
            .await;
        let alone = read_by_one_alone(&cluster);
        eprintln!(
            "valid for {blocks} blocks: {alone} sent ahead, {} confirmed, {} expired",
            s.counts.confirmed, s.counts.expired
        );
        assert_eq!(
            alone > 0,
            ahead,
            "{alone} sent ahead on a {blocks}-block blockhash"
        );
    }
}
