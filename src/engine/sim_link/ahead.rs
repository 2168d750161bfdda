//! Sends ahead of a leader's turn (`engine::dispatch::ahead`) on simulated links under tokio's
//! paused clock: three 4.0 leaders, each reading 200 of our unstaked streams a second in
//! 100 ms windows and holding what it reads for a turn within `HOLD_SLOTS`.

use std::{collections::HashMap, net::SocketAddr};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::SimLink;
use crate::engine::{
    EngineConfig,
    leaders::SLOTS_PER_LEADER,
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

/// Transactions read by one leader alone, out of its turn, and held for its own: those sent
/// ahead, each with the leader that read it and the slot it read it in. (The pace's sends go
/// to the current leader, which reads them in its turn; its copies near a turn's end to the
/// next leader are read by two, the current one sometimes just after its turn.)
fn sent_ahead(cluster: &SimCluster, start_slot: u64) -> HashMap<Signature, (SocketAddr, u64)> {
    let mut reads: HashMap<Signature, Vec<(SocketAddr, u64, bool)>> = HashMap::new();
    for x in cluster.sends().iter().filter(|x| x.accepted) {
        let slot = start_slot + (x.at.as_millis() / SLOT.as_millis()) as u64;
        let in_turn = cluster.addr_of(&cluster.leader_at(slot)) == Some(x.addr);
        reads
            .entry(x.signature)
            .or_default()
            .push((x.addr, slot, in_turn));
    }
    reads
        .into_iter()
        .filter_map(|(sig, r)| {
            let (addr, slot, _) = *r.first()?;
            let alone = r.iter().all(|(a, _, in_turn)| *a == addr && !in_turn);
            alone.then_some((sig, (addr, slot)))
        })
        .collect()
}

/// The last slot of the turn of the leader at `addr` that begins at `slot` or after it.
fn turn_end(cluster: &SimCluster, addr: SocketAddr, slot: u64) -> u64 {
    let first = (slot..slot + 100)
        .find(|s| cluster.addr_of(&cluster.leader_at(*s)) == Some(addr))
        .expect("the leader leads within 100 slots");
    first / SLOTS_PER_LEADER * SLOTS_PER_LEADER + SLOTS_PER_LEADER - 1
}

/// `--rate max`, unstaked, on the three leaders. Each leader reads 200 of our streams a second:
/// with every transaction sent to the current and the next leader, no more than one leader's
/// budget lands a second, and 2,000 take 10 s at the least. Spread — the pace's sends to the
/// current leader alone, and each later leader within reach taking sends of its own from the
/// end of the queue, held for its turn — every transaction lands within 6 s (5.2 s; 7.2 s
/// with only the leader after next taking sends ahead, 10.8 s with none), every leader takes
/// sends ahead, four in five of them from the queue's later half, the leaders' reads agree
/// with the engine's count within 5% (one sent ahead and resent later is read twice), with at
/// most 1.05 sends per landed transaction and no read of ours delayed by a leader's budget.
#[tokio::test(start_paused = true)]
async fn at_max_rate_each_later_leader_drains_the_queue_from_its_end() {
    const N: usize = 2_000;
    let (cluster, cfg) = mainnet();
    let start_slot = cluster.slot_now();
    let txs = cluster.transactions(N, a_hash());
    let place: HashMap<Signature, usize> = txs
        .iter()
        .enumerate()
        .map(|(i, tx)| (tx.signature, i))
        .collect();
    let s = cluster.run_engine(cfg, txs).await;
    let delayed = cluster.sends().iter().filter(|x| x.delayed).count();
    let ahead = sent_ahead(&cluster, start_slot);
    let mut by_leader: HashMap<SocketAddr, usize> = HashMap::new();
    for (addr, _) in ahead.values() {
        *by_leader.entry(*addr).or_default() += 1;
    }
    let later_half = ahead.keys().filter(|sig| place[*sig] >= N / 2).count();
    let per_landed = s.counts.sends as f64 / N as f64;
    eprintln!(
        "elapsed {:?}, sends per landed {per_landed:.3}, {} sent ahead ({} by the engine's \
         count; by leader {by_leader:?}; {later_half} from the later half), {delayed} reads \
         delayed",
        s.elapsed,
        ahead.len(),
        s.rate.sent_ahead
    );
    assert_eq!(s.counts.confirmed, N as u64);
    assert!(
        s.elapsed < std::time::Duration::from_secs(6),
        "{:?}: no faster than 1.7 leaders' budgets",
        s.elapsed
    );
    assert!(ahead.len() > 1_000, "{} sent ahead", ahead.len());
    assert!(
        ahead.len().abs_diff(s.rate.sent_ahead as usize) * 20 <= ahead.len(),
        "the engine counts {} sent ahead, the leaders read {}",
        s.rate.sent_ahead,
        ahead.len()
    );
    assert_eq!(
        by_leader.len(),
        3,
        "leaders taking sends ahead: {by_leader:?}"
    );
    assert!(
        by_leader.values().all(|n| *n >= 100),
        "sends ahead by leader: {by_leader:?}"
    );
    assert!(
        later_half * 5 >= ahead.len() * 4,
        "{later_half} of {} sent ahead from the queue's later half",
        ahead.len()
    );
    assert!(per_landed <= 1.05, "{per_landed:.3} sends per landed");
    assert_eq!(delayed, 0, "reads delayed by a leader's budget");
}

/// A transaction whose blockhash is no longer taken when a later leader's turn ends is left to
/// the pace, which sends it sooner: no transaction is sent ahead to a leader whose turn ends
/// past its blockhash's last valid block, and every one sent ahead lands. On a blockhash valid
/// for 150 more blocks, as in a fresh file, more than a third go ahead and none expires; for 10,
/// some do (to leaders whose turn ends within 10 slots); for 3, none (no later turn ends that
/// soon).
#[tokio::test(start_paused = true)]
async fn a_transaction_that_would_expire_before_the_turn_is_not_sent_ahead() {
    const N: usize = 1_500;
    for (blocks, least) in [(150, N / 3), (10, 1), (3, 0)] {
        let (cluster, cfg) = mainnet();
        let hash = a_hash();
        let start_slot = cluster.slot_now();
        let last_valid = cluster.height_now() + blocks;
        cluster.add_blockhash(hash, last_valid);
        let s = cluster.run_engine(cfg, cluster.transactions(N, hash)).await;
        let ahead = sent_ahead(&cluster, start_slot);
        let lost = ahead
            .keys()
            .filter(|sig| cluster.landed_slot(sig).is_none())
            .count();
        // Heights track slots one-to-one in the simulator.
        let past_expiry = ahead
            .values()
            .filter(|(addr, slot)| turn_end(&cluster, *addr, *slot) > last_valid)
            .count();
        eprintln!(
            "valid for {blocks} blocks: {} sent ahead, {past_expiry} to a turn past its expiry, \
             {lost} not landed; {} confirmed, {} expired",
            ahead.len(),
            s.counts.confirmed,
            s.counts.expired
        );
        assert!(
            ahead.len() >= least && (least > 0 || ahead.is_empty()),
            "{} sent ahead on a {blocks}-block blockhash",
            ahead.len()
        );
        assert_eq!(past_expiry, 0, "sent ahead past a {blocks}-block blockhash");
        assert_eq!(
            lost, 0,
            "sent ahead and expired on a {blocks}-block blockhash"
        );
        if blocks == 150 {
            assert_eq!(s.counts.expired, 0, "expired on a fresh blockhash");
        }
    }
}
