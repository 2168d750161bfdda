//! The hand-over between turns on the simulated cluster (tokio's paused clock, 4.0 leaders):
//! a transaction a slow leader still holds unanswered when the next leader's turn begins goes
//! to the next one too (`dispatch::handover`). `--fanout 0` with the fan-out fixed, so that
//! only the hand-over sends to the next leader.

use std::time::Duration;

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{EngineConfig, sim::SimCluster, snapshot::RateTarget};

const N: usize = 2_000;

/// `N` transactions at 100 tx/s to three leaders behind `link`, making up owed time or not
/// (`catch_up`). Returns sends, p99 time to land and the most sends made in one second of the
/// run's last minute (its rate chart).
async fn run(link: SimLink, catch_up: bool) -> (u64, Duration, usize) {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    for l in &ls {
        cluster.set_link(cluster.addr_of(l).expect("an address"), Some(link));
    }
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    cfg.fanout = 0;
    cfg.fanout_by_link = false;
    cfg.catch_up = catch_up;
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let s = cluster.run_engine(cfg, cluster.transactions(N, hash)).await;
    let p99 = s.latency.p99.unwrap_or_default();
    eprintln!(
        "{link:?}: {} sends, {:?}, p50 {:?} p99 {p99:?}, {:?}",
        s.counts.sends, s.elapsed, s.latency.p50, s.counts.streams
    );
    assert_eq!(s.counts.confirmed, N as u64);
    // The run's own count of its sends per second (first sends and resends, copies included).
    let busiest = s.rate.history.iter().map(|p| p.sent as usize).max();
    (s.counts.sends, p99, busiest.unwrap_or(0))
}

/// On a clean 320 ms link, the streams of the last 320 ms of a turn are unanswered when it
/// ends — a tenth of the sends, read after the turn by a leader that no longer leads. They go
/// to the next leader as its turn begins: every transaction lands within a second (a resend
/// interval later, 4 s, without), at most 1.2 sends each.
#[tokio::test(start_paused = true)]
async fn sends_unanswered_at_the_end_of_a_turn_go_to_the_next_leader() {
    let (sends, p99, _) = run(SimLink::new(320, 0.0), true).await;
    assert!(sends > N as u64, "no hand-over");
    assert!(sends as f64 <= 1.2 * N as f64, "{sends}");
    assert!(p99 < Duration::from_secs(1), "{p99:?}");
}

/// The same with `--no-catch-up`, the pace held strictly: the copy lane beside the pace is
/// closed (`dispatch::copies`), and the hand-over's copies take places of the pace — they
/// still go, and no second holds more sends than the pace's 100.
#[tokio::test(start_paused = true)]
async fn under_a_strict_pace_the_hand_overs_copies_go_through_it() {
    let (sends, _, busiest) = run(SimLink::new(320, 0.0), false).await;
    assert!(sends > N as u64, "no hand-over");
    assert!(busiest <= 101, "{busiest} sends in one second at 100 tx/s");
    // With the lane open, they go beside the pace.
    let (_, _, beside) = run(SimLink::new(320, 0.0), true).await;
    assert!(
        beside > 101,
        "no copy went beside the pace: {beside} in the busiest second"
    );
}
