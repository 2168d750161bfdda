//! An outage on the simulated cluster (tokio's paused clock): the only leader stops answering for
//! 10 s in the middle of 1,500 transactions at 100 tx/s, as a frozen validator or a cut link
//! does. The sends it held back are owed and made up once it answers again, at up to twice the
//! pace (within the unstaked budget) and never in a burst; `--no-catch-up` holds the pace
//! strictly, so the outage adds its whole length to the run.

mod common;

use std::time::Duration;

use common::sim::{config, leaders, start, unique_hash};
use txpace::engine::sim::SimCluster;

const N: usize = 1_500;
const OUTAGE_AT: Duration = Duration::from_secs(5);
const OUTAGE_FOR: Duration = Duration::from_secs(10);

/// What one run through the outage showed.
struct Outage {
    elapsed: Duration,
    confirmed: u64,
    /// The most sends owed, and the fastest pace, any snapshot showed.
    most_owed: u64,
    fastest_pacing: f64,
    /// The most streams any 100 ms window held.
    busiest_window: usize,
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
    tokio::time::sleep(OUTAGE_FOR).await;
    cluster.set_hanging(addr, false);
    let (mut most_owed, mut fastest_pacing) = (0, 0.0_f64);
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        most_owed = most_owed.max(snap.rate.owed);
        fastest_pacing = fastest_pacing.max(snap.rate.pacing);
    }
    let out = h.task.await.expect("engine");
    let mut at: Vec<u128> = cluster.sends().iter().map(|s| s.at.as_millis()).collect();
    at.sort_unstable();
    let busiest_window = (0..at.len())
        .map(|i| at[i..].iter().take_while(|t| **t < at[i] + 100).count())
        .max()
        .unwrap_or(0);
    Outage {
        elapsed: out.snapshot.elapsed,
        confirmed: out.snapshot.counts.confirmed,
        most_owed,
        fastest_pacing,
        busiest_window,
    }
}

/// With catch-up (the default) the backlog clears at the unstaked ceiling (194 tx/s, 97% of a
/// leader's 200 streams/s) and the run ends seconds sooner than the strict pace's; without it,
/// nothing is owed and the outage adds its length. Neither ever bursts: no 100 ms window holds
/// more than 1.5 × the pace it was sending at.
#[tokio::test(start_paused = true)]
async fn an_outage_is_made_up_after_it_unless_the_pace_is_strict() {
    let strict = through_outage(false).await;
    let caught_up = through_outage(true).await;
    eprintln!(
        "strict {:?} (busiest 100 ms {}), catch-up {:?} (owed up to {}, pacing up to {:.0}, busiest 100 ms {})",
        strict.elapsed,
        strict.busiest_window,
        caught_up.elapsed,
        caught_up.most_owed,
        caught_up.fastest_pacing,
        caught_up.busiest_window
    );
    assert_eq!(strict.confirmed, N as u64);
    assert_eq!(caught_up.confirmed, N as u64);

    assert_eq!(strict.most_owed, 0);
    assert!(strict.fastest_pacing <= 100.0 + 1e-9);
    assert!(
        strict.elapsed >= Duration::from_secs(15) + OUTAGE_FOR,
        "{:?}",
        strict.elapsed
    );
    assert!(strict.busiest_window <= 15);

    assert!(caught_up.most_owed >= 800, "owed {}", caught_up.most_owed);
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
