//! A run's first sends on links of different lengths (tokio's paused clock, 4.0 leaders).
//! Nothing is connected yet when the pace starts; the near leader's handshake ends first. The
//! sends made while the far leaders' handshakes are under way must still reach them
//! (`engine::liveness`): sent only to the near leader, they wait for its turn, two turns
//! away — on the relay's `mainnet` runs the first 13–20 transactions landed 2.5–5 s after
//! their due time, the whole p99 of the run — and, once released, they must reach each
//! leader within its budget (`engine::handshakes::Release`).

use std::sync::Arc;

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{
    EngineConfig,
    sim::SimCluster,
    snapshot::{RateTarget, Snapshot},
};

const N: usize = 400;

/// Runs `txs` at 100 tx/s on `cluster` until all are final; every one must land.
async fn paced_run(cluster: &SimCluster, txs: Vec<crate::source::LoadedTx>) -> Arc<Snapshot> {
    let n = txs.len() as u64;
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    let s = cluster.run_engine(cfg, txs).await;
    assert_eq!(s.counts.confirmed, n);
    s
}

/// A blockhash for a run's transactions.
fn a_hash() -> Hash {
    Hash::new_from_array(Pubkey::new_unique().to_bytes())
}

/// Those of `sigs` that landed in `slot` or later: (index, slot).
fn landed_from(
    cluster: &SimCluster,
    sigs: &[solana_signature::Signature],
    slot: u64,
) -> Vec<(usize, u64)> {
    sigs.iter()
        .enumerate()
        .filter_map(|(i, sig)| {
            let landed = cluster.landed_slot(sig).expect("landed");
            (landed >= slot).then_some((i, landed))
        })
        .collect()
}

/// Runs N transactions at 100 tx/s with the leaders of the first three turns at `rtts` (ms),
/// and returns those of the first `first` that landed in the third turn or later (index,
/// slot), and the streams the leaders read late for our budget.
async fn first_sends(rtts: [u64; 3], first: usize) -> (Vec<(usize, u64)>, u64) {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    let start = cluster.slot_now();
    let turn = |i: u64| cluster.leader_at(start + 4 * i);
    for (i, rtt) in rtts.into_iter().enumerate() {
        let addr = cluster.addr_of(&turn(i as u64)).expect("an address");
        cluster.set_link(addr, Some(SimLink::new(rtt, 0.0)));
    }
    let third_turn = start - start % 4 + 8;
    let txs = cluster.transactions(N, a_hash());
    let firsts: Vec<_> = txs.iter().take(first).map(|t| t.signature).collect();
    paced_run(&cluster, txs).await;
    let late = landed_from(&cluster, &firsts, third_turn);
    let delayed = ls
        .iter()
        .filter_map(|l| cluster.addr_of(l))
        .map(|a| cluster.leader_counters(a).streams_delayed)
        .sum();
    (late, delayed)
}

/// `mainnet`'s three regions, far to near (230, 85 and 20 ms): the first transactions, due in
/// the first 300 ms, land in the turn of the current or the next leader — not in the third
/// leader's, which starts 3.2 s in — and no leader reads a stream of ours late for our budget.
#[tokio::test(start_paused = true)]
async fn sends_made_during_the_first_handshakes_reach_the_current_and_next_leader() {
    let (late, delayed) = first_sends([230, 85, 20], 30).await;
    assert!(
        late.is_empty(),
        "waited for the third leader's turn: {late:?}"
    );
    assert_eq!(delayed, 0, "streams read late for our budget");
}

/// The current and the next leader both far (320 and 230 ms), the near one third: every send
/// of the first 350 ms waits for a far leader's handshake, more than a 100 ms window's budget
/// of them. They reach the two far leaders — none waits for the near leader's turn — spaced so
/// that, with the pace's own streams, no leader reads one late for our budget.
#[tokio::test(start_paused = true)]
async fn a_handshakes_worth_of_sends_reach_the_far_leaders_within_their_budget() {
    let (late, delayed) = first_sends([320, 230, 20], 35).await;
    assert!(
        late.is_empty(),
        "waited for the third leader's turn: {late:?}"
    );
    assert_eq!(delayed, 0, "streams read late for our budget");
}

/// Each transaction's first send, from the engine's start, of `n` at 100 tx/s with every
/// leader behind `link`; all must land.
async fn first_sends_behind(link: SimLink, n: usize) -> Vec<std::time::Duration> {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    for l in &ls {
        let addr = cluster.addr_of(l).expect("an address");
        cluster.set_link(addr, Some(link));
    }
    let s = paced_run(&cluster, cluster.transactions(n, a_hash())).await;
    s.txs.iter().map(|t| t.first_sent.expect("sent")).collect()
}

/// From the `from`th on, each first send's index and its time past its due moment at 100 tx/s
/// counted from the first (ms; negative when ahead of it).
fn off_schedule(
    sent: &[std::time::Duration],
    from: usize,
) -> impl Iterator<Item = (usize, i128)> + '_ {
    sent.iter().enumerate().skip(from).map(move |(i, at)| {
        let due = sent[0] + std::time::Duration::from_millis(10 * i as u64);
        (i, at.as_millis() as i128 - due.as_millis() as i128)
    })
}

/// Every leader far (320 ms, `hostile`'s round trip): the sends after the first handshake's
/// riders wait for it, and the time they waited is made up afterwards — but only that time.
/// The wait ends when sending resumes, not when a leader first answers a round trip later: at
/// e04bbe2 the whole wait to the first answer was owed, and `txpace-bench wan`'s `hostile` run
/// sent its 2,000 transactions in 19.3 s, 0.7 s ahead of its 100 tx/s.
#[tokio::test(start_paused = true)]
async fn the_time_a_first_handshake_held_is_made_up_and_no_more() {
    let sent = first_sends_behind(SimLink::new(320, 0.0), N).await;
    let ahead: Vec<(usize, i128)> = off_schedule(&sent, 0)
        .filter(|(_, off)| *off < -20)
        .collect();
    assert!(
        ahead.is_empty(),
        "{} sent ahead of the pace (index, ms past due): {:?}",
        ahead.len(),
        &ahead[..ahead.len().min(8)]
    );
}

/// Every leader 230 ms away losing 2% each way (`apac`): once the first handshakes are done
/// the pace never stops — no first send more than 100 ms after the one before it — as it did
/// for 312 ms in `txpace-bench wan`'s `apac` run at 90e0dd1 (not traced; this says the engine
/// on such links does not hold the pace by itself).
#[tokio::test(start_paused = true)]
async fn on_far_lossy_links_the_pace_does_not_stop_after_the_first_handshakes() {
    let sent = first_sends_behind(SimLink::new(230, 0.02), 1000).await;
    let stops: Vec<(usize, u128)> = (50..sent.len())
        .map(|i| (i, sent[i].saturating_sub(sent[i - 1]).as_millis()))
        .filter(|(_, gap)| *gap > 100)
        .collect();
    assert!(stops.is_empty(), "the pace stopped (index, ms): {stops:?}");
}

/// The current leader far (900 ms) and leading two turns, the next ones near: the sends made
/// while its first handshake holds as many as may wait for it pass it by, to the near leaders
/// whose turns come after; once it answers, still in its turn, they go to it too
/// (`dispatch::missed`) — none of the first 150 waits for a later leader's turn. Without that,
/// the 50 or so made between the 40th and the handshake's end landed in the next turn.
#[tokio::test(start_paused = true)]
async fn sends_that_passed_the_current_leader_by_for_its_handshake_reach_it_in_its_turn() {
    const FIRST: usize = 150;
    let (far, b, c) = (
        Pubkey::new_unique(),
        Pubkey::new_unique(),
        Pubkey::new_unique(),
    );
    // The run starts at slot 1,000, turn 250, the list's third: `far` leads 1,000–1,007.
    let cluster = SimCluster::new(vec![b, c, far, far]);
    let start = cluster.slot_now();
    assert_eq!(cluster.leader_at(start), far);
    let turn_end = start - start % 4 + 8;
    assert_eq!(cluster.leader_at(turn_end - 1), far);
    let addr = cluster.addr_of(&far).expect("an address");
    cluster.set_link(addr, Some(SimLink::new(900, 0.0)));
    let txs = cluster.transactions(N, a_hash());
    let firsts: Vec<_> = txs.iter().take(FIRST).map(|t| t.signature).collect();
    paced_run(&cluster, txs).await;
    let late = landed_from(&cluster, &firsts, turn_end);
    assert!(
        late.is_empty(),
        "{} of the first {FIRST} landed after the far leader's turn (index, slot): {:?}",
        late.len(),
        &late[..late.len().min(8)]
    );
}

/// Every leader 320 ms away losing 5% (`hostile`): the copies made for the leader changes at
/// a run's start (the sends that passed the current leader by while its handshake held as many
/// as may wait, once it answers: `dispatch::missed`; those still unanswered at each hand-over)
/// go in a lane beside the pace (`dispatch::copies`), so that no first send of the run is more
/// than 30 ms past its due time or 20 ms ahead of it. At 51e3b36 the 27 copies of this run's
/// start took places the pace had planned for first sends and pushed every later one 270 ms
/// past its due time, to the end of the run; at 96421c9, made up afterwards, they still held
/// the 100th to the 200th up to 280 ms late, and on the relay's `hostile+4` the 155 copies
/// for a leader whose first handshake took 1.5 s held the first sends for 1.56 s.
#[tokio::test(start_paused = true)]
async fn on_far_lossy_links_the_start_s_copies_do_not_delay_first_sends() {
    let sent = first_sends_behind(SimLink::new(320, 0.05), 1000).await;
    let off: Vec<(usize, i128)> = off_schedule(&sent, 0)
        .filter(|(_, off)| !(-20..=30).contains(off))
        .collect();
    assert!(
        off.is_empty(),
        "{} first sends more than 30 ms past their due time or 20 ms ahead of it (index, \
         ms past due): {:?}",
        off.len(),
        &off[..off.len().min(8)]
    );
}
