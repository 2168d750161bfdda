//! Sends ahead of a leader's turn (`engine::dispatch::ahead`) on simulated links under tokio's
//! paused clock: three 4.0 leaders, each reading 200 of our unstaked streams a second in
//! 100 ms windows and holding what it reads for a turn within `HOLD_SLOTS`.

use std::collections::{HashMap, HashSet};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::SimLink;
use crate::engine::{
    EngineConfig,
    sim::{SLOT, SimCluster},
    snapshot::RateTarget,
};

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

/// Transactions held by a leader for a later turn of its own and read by no other leader in
/// its turn: those sent ahead. (The pace's sends go to the current leader, which reads them in
/// its turn; its copies near a turn's end to the next leader are read by the current one too.)
fn sent_ahead(cluster: &SimCluster, start_slot: u64) -> HashSet<Signature> {
    let mut in_turn: HashMap<Signature, bool> = HashMap::new();
    for x in cluster.sends().iter().filter(|x| x.accepted) {
        let slot = start_slot + (x.at.as_millis() / SLOT.as_millis()) as u64;
        let current = cluster.addr_of(&cluster.leader_at(slot)) == Some(x.addr);
        *in_turn.entry(x.signature).or_default() |= current;
    }
    in_turn
        .into_iter()
        .filter_map(|(sig, read_in_turn)| (!read_in_turn).then_some(sig))
        .collect()
}

/// `--rate max`, unstaked, on the three leaders. Each leader reads 200 of our streams a second:
/// with every transaction sent to the current and the next leader, no more than one leader's
/// budget lands a second, and 2,000 take 10 s at the least. Spread — the pace's sends to the
/// current leader alone, and each later leader within reach taking sends of its own from the
/// end of the queue, held for its turn — every transaction lands within 6 s (5.2 s; 7.2 s
/// with only the leader after next taking sends ahead, 10.8 s with none), with at most 1.05
/// sends per landed transaction and no read of ours delayed by a leader's budget.
#[tokio::test(start_paused = true)]
async fn at_max_rate_each_later_leader_drains_the_queue_from_its_end() {
    const N: usize = 2_000;
    let (cluster, cfg) = mainnet();
    let start_slot = cluster.slot_now();
    let s = cluster
        .run_engine(cfg, cluster.transactions(N, a_hash()))
        .await;
    let delayed = cluster.sends().iter().filter(|x| x.delayed).count();
    let ahead = sent_ahead(&cluster, start_slot).len();
    let per_landed = s.counts.sends as f64 / N as f64;
    eprintln!(
        "elapsed {:?}, sends per landed {per_landed:.3}, {ahead} sent ahead ({} by the \
         engine's count), {delayed} reads delayed",
        s.elapsed, s.rate.sent_ahead
    );
    assert_eq!(s.counts.confirmed, N as u64);
    assert!(
        s.elapsed < std::time::Duration::from_secs(6),
        "{:?}: no faster than 1.7 leaders' budgets",
        s.elapsed
    );
    assert!(ahead > 1_000, "{ahead} sent ahead");
    assert!(per_landed <= 1.05, "{per_landed:.3} sends per landed");
    assert_eq!(delayed, 0, "reads delayed by a leader's budget");
}

/// A transaction whose blockhash is no longer taken when a later leader's turn ends is left to
/// the pace, which sends it sooner: every transaction sent ahead lands. On a blockhash valid
/// for 150 more blocks, as in a fresh file, most are sent ahead; for 10, some (to the next
/// leader, whose turn ends within 8 slots); for 3, none (no later turn ends that soon).
#[tokio::test(start_paused = true)]
async fn a_transaction_that_would_expire_before_the_turn_is_not_sent_ahead() {
    for (blocks, least, most) in [(150, 700, 1_500), (10, 1, 1_500), (3, 0, 0)] {
        let (cluster, cfg) = mainnet();
        let hash = a_hash();
        let start_slot = cluster.slot_now();
        cluster.add_blockhash(hash, cluster.height_now() + blocks);
        let s = cluster
            .run_engine(cfg, cluster.transactions(1_500, hash))
            .await;
        let ahead = sent_ahead(&cluster, start_slot);
        let lost = ahead
            .iter()
            .filter(|sig| cluster.landed_slot(sig).is_none())
            .count();
        eprintln!(
            "valid for {blocks} blocks: {} sent ahead, {lost} of them not landed; {} \
             confirmed, {} expired",
            ahead.len(),
            s.counts.confirmed,
            s.counts.expired
        );
        assert!(
            (least..=most).contains(&ahead.len()),
            "{} sent ahead on a {blocks}-block blockhash",
            ahead.len()
        );
        assert_eq!(
            lost, 0,
            "sent ahead and expired on a {blocks}-block blockhash"
        );
    }
}
