//! An outage on the simulated cluster (tokio's paused clock): the only leader stops answering for
//! 10 s in the middle of 1,500 transactions at 100 tx/s, as a frozen validator or a cut link
//! does. The sends it held back are owed and made up once it answers again, at up to twice the
//! pace (within the unstaked budget) and never in a burst; `--no-catch-up` holds the pace
//! strictly, so the outage adds its whole length to the run.

use crate::common;

use std::time::Duration;

use common::sim::{config, leaders, most_within, start, unique_hash};
use txpace::engine::sim::SimCluster;

const N: usize = 1_500;
const OUTAGE_AT: Duration = Duration::from_secs(5);
const OUTAGE_FOR: Duration = Duration::from_secs(10);

/// What one run through the outage showed.
struct Outage {
    elapsed: Duration,
    confirmed: u64,
    /// The most sends owed any snapshot showed while the outage lasted: the probes of an
    /// outage must not start a catch-up that nothing takes.
    owed_during: u64,
    /// Sends owed in the last snapshot: never more than what is left.
    owed_at_end: u64,
    /// The most sends owed, and the fastest pace, any snapshot showed.
    most_owed: u64,
    fastest_pacing: f64,
    /// The most streams any 100 ms window held.
    busiest_window: usize,
    /// From the outage's end to the first stream the leader took again.
    resumed_after: Duration,
}

async fn through_outage(catch_up: bool) -> Outage {
    let ls = leaders(1);
    let cluster = SimCluster::new(ls.clone());
    let addr = cluster.addr_of(&ls[0]).expect("addr");
    let mut cfg = config(100.0);
    cfg.catch_up = catch_up;
    let h = start(&cluster, cfg, cluster.transactions(N, unique_hash()));
    tokio::time::sleep(OUTAGE_AT).await;
    cluster.set_hanging(addr, true);
    let mut owed_during = 0;
    for _ in 0..OUTAGE_FOR.as_millis() / 100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        owed_during = owed_during.max(h.snapshots.borrow().rate.owed);
    }
    cluster.set_hanging(addr, false);
    let (mut most_owed, mut fastest_pacing) = (0, 0.0_f64);
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        most_owed = most_owed.max(snap.rate.owed);
        fastest_pacing = fastest_pacing.max(snap.rate.pacing);
    }
    let out = h.task.await.expect("engine");
    let back = OUTAGE_AT + OUTAGE_FOR;
    let resumed_after = cluster
        .sends()
        .iter()
        .filter(|s| s.accepted && s.at >= back)
        .map(|s| s.at - back)
        .min()
        .expect("a stream taken after the outage");
    let busiest_window = most_within(&cluster.sends(), Duration::from_millis(100));
    Outage {
        owed_during,
        owed_at_end: out.snapshot.rate.owed,
        elapsed: out.snapshot.elapsed,
        confirmed: out.snapshot.counts.confirmed,
        most_owed,
        fastest_pacing,
        busiest_window,
        resumed_after,
    }
}

/// With catch-up (the default) the backlog clears at the unstaked ceiling (194 tx/s, 97% of a
/// leader's 200 streams/s) and the run ends seconds sooner than the strict pace's; without it,
/// nothing is owed and the outage adds its length. Nothing is owed until a leader takes sends
/// again, nor more than is left to send. Neither ever bursts: no 100 ms window holds
/// more than 1.5 × the pace it was sending at.
#[tokio::test(start_paused = true)]
async fn an_outage_is_made_up_after_it_unless_the_pace_is_strict() {
    let strict = through_outage(false).await;
    let caught_up = through_outage(true).await;
    eprintln!(
        "strict {:?} (resumed after {:?}, busiest 100 ms {}), catch-up {:?} (owed up to {}, pacing up to {:.0}, busiest 100 ms {})",
        strict.elapsed,
        strict.resumed_after,
        strict.busiest_window,
        caught_up.elapsed,
        caught_up.most_owed,
        caught_up.fastest_pacing,
        caught_up.busiest_window
    );
    assert_eq!(strict.confirmed, N as u64);
    assert_eq!(caught_up.confirmed, N as u64);
    // Streams left hanging are given up after a second without an answer, so the probes go on
    // through the outage and one soon finds the leader back, not a 5 s send timeout later.
    for run in [&strict, &caught_up] {
        assert!(
            run.resumed_after <= Duration::from_secs(2),
            "resumed {:?} after the outage",
            run.resumed_after
        );
    }

    assert_eq!(strict.most_owed, 0);
    assert!(strict.fastest_pacing <= 100.0 + 1e-9);
    assert!(
        strict.elapsed >= Duration::from_secs(15) + OUTAGE_FOR,
        "{:?}",
        strict.elapsed
    );
    assert!(strict.busiest_window <= 15);

    assert!(caught_up.most_owed >= 800, "owed {}", caught_up.most_owed);
    assert_eq!(caught_up.owed_during, 0, "owed while nothing was taken");
    assert_eq!(caught_up.owed_at_end, 0, "owed with nothing left to send");
    assert!(
        (caught_up.fastest_pacing - 194.0).abs() < 0.5,
        "pacing {}",
        caught_up.fastest_pacing
    );
    assert!(
        caught_up.elapsed + Duration::from_secs(4) <= strict.elapsed,
        "catch-up {:?} against strict {:?}",
        caught_up.elapsed,
        strict.elapsed
    );
    assert!(
        caught_up.busiest_window <= 29,
        "{}",
        caught_up.busiest_window
    );
}

/// A node that restarted says no blockhash is valid at its tip while it replays its ledger.
/// The queue keeps its place meanwhile — first sends stay in input order, none is pushed behind a
/// resend interval — and the time is made up once the node takes the blockhash again.
#[tokio::test(start_paused = true)]
async fn a_replaying_node_holds_the_queue_in_place_and_the_time_is_made_up() {
    const TXS: usize = 1_000;
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(TXS, unique_hash());
    let order: Vec<_> = txs.iter().map(|t| t.signature).collect();
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_secs(3)).await;
    cluster.set_replaying(true);
    tokio::time::sleep(Duration::from_secs(3)).await;
    cluster.set_replaying(false);
    let mut most_owed = 0;
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        most_owed = most_owed.max(h.snapshots.borrow().rate.owed);
    }
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.counts.confirmed, TXS as u64);
    let mut first_sent = Vec::new();
    for s in cluster.sends() {
        if !first_sent.contains(&s.signature) {
            first_sent.push(s.signature);
        }
    }
    assert_eq!(first_sent, order, "first sends left input order");
    assert!(most_owed >= 150, "owed {most_owed}");
    // 10 s of pace, a 3 s hold made up at 1.94 x: about 11.6 s and the last confirmation.
    eprintln!("replay run: {:?}", out.snapshot.elapsed);
    assert!(
        out.snapshot.elapsed <= Duration::from_secs(12),
        "{:?}",
        out.snapshot.elapsed
    );
}

/// One leader of three leads three turns in a row (12 slots, 4.8 s) and is dark through all of
/// them, as `txpace-bench wan`'s `mainnet-dark` node is: what is sent meanwhile goes to the next
/// leader, which holds it for its turn (a 4.0 leader holds what it reads while its turn is fewer
/// than 20 slots away). Sending it that leader again before its turn would be a resend nobody
/// needs, and would take the pace from first sends: none is, and the run keeps the pace.
#[tokio::test(start_paused = true)]
async fn what_a_later_leader_holds_for_its_turn_is_not_resent_to_it_before_the_turn() {
    const TXS: usize = 1_500;
    let ls = leaders(3);
    // Turns of 4 slots in this order, from slot 1,000 (a multiple of the 5 turns' 20 slots).
    let cluster = SimCluster::new(vec![ls[0], ls[1], ls[1], ls[1], ls[2]]);
    let dark = cluster.addr_of(&ls[1]).expect("an address");
    let next = cluster.addr_of(&ls[2]).expect("an address");
    cluster.set_hanging(dark, true);
    let out = start(
        &cluster,
        config(100.0),
        cluster.transactions(TXS, unique_hash()),
    )
    .task
    .await
    .expect("engine");
    let s = &out.snapshot;
    assert_eq!(s.counts.confirmed, TXS as u64);
    // The next leader's turns begin 6.4 s into each 8 s round of turns.
    let turn = |at: Duration| (at + Duration::from_millis(1_600)).as_millis() / 8_000;
    let mut held: std::collections::HashMap<_, Vec<u128>> = Default::default();
    for send in cluster
        .sends()
        .iter()
        .filter(|x| x.addr == next && x.accepted)
    {
        held.entry(send.signature).or_default().push(turn(send.at));
    }
    let again = held
        .values()
        .filter(|turns| turns.windows(2).any(|w| w[0] == w[1]))
        .count();
    eprintln!(
        "dark turns: {again} held again before their turn, {} sends, {:?}",
        s.counts.sends, s.elapsed
    );
    assert_eq!(again, 0, "sent again to the leader holding them");
    // The pace's 15 s and the last landing: 16.8 s when the resends of what the next leader
    // held took places of the pace, 160 sends more.
    assert!(
        s.counts.sends <= TXS as u64 + 10,
        "{} sends",
        s.counts.sends
    );
    assert!(
        s.elapsed <= Duration::from_millis(15_500),
        "{:?}",
        s.elapsed
    );
}
