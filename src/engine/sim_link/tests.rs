//! The engine on far, lossy simulated links (tokio's paused clock): the time rules derived
//! from the measured link (`engine::link`) against the ones tuned on loopback, which on a
//! 320 ms link losing 5% each way read healthy leaders as silent or timed out.

use std::{sync::Arc, time::Duration};

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::*;
use crate::engine::{
    EngineConfig,
    sim::SimCluster,
    snapshot::{ConnState, RateTarget, Snapshot},
};

const N: usize = 2_000;
const RATE: f64 = 100.0;

/// What one run showed.
struct Run {
    last: Arc<Snapshot>,
    /// Connections given up as silent, all leaders together.
    abandons: u32,
    /// Whether any snapshot showed a leader backing off.
    backed_off: bool,
    /// The most sends any snapshot showed owed once the first round trips are over (a
    /// catch-up after a hold, or of the copies sent for leader changes): the first answer
    /// from a leader nothing is known of takes a handshake and a stream's round trip (two on a
    /// 320 ms link, more with a repair), and the pace held meanwhile is owed, as on a real link.
    most_owed: u64,
    /// When the hanging leader's connection was first given up, from when it began hanging.
    given_up_after: Option<Duration>,
    /// Streams the leaders read late because our address was over its budget.
    delayed: u64,
}

/// `N` transactions at `RATE` to three leaders, each behind `link` (loopback when `None`);
/// the first leader stops answering `hang_at` into the run, when given.
async fn run(link: Option<SimLink>, hang_at: Option<Duration>) -> Run {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    let addrs: Vec<_> = ls.iter().filter_map(|l| cluster.addr_of(l)).collect();
    for a in &addrs {
        cluster.set_link(*a, link);
    }
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(RATE);
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let h = cluster.start_engine(cfg, cluster.transactions(N, hash));
    let start = tokio::time::Instant::now();
    let (mut backed_off, mut most_owed, mut hung_since, mut given_up_after) =
        (false, 0, None, None);
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let snap = h.snapshots.borrow().clone();
        backed_off |= snap
            .leaders
            .iter()
            .any(|l| matches!(l.conn, ConnState::BackingOff { .. }));
        if start.elapsed() >= Duration::from_secs(2) {
            most_owed = most_owed.max(snap.rate.owed);
        }
        if let Some(at) = hang_at
            && hung_since.is_none()
            && start.elapsed() >= at
        {
            cluster.set_hanging(addrs[0], true);
            hung_since = Some(tokio::time::Instant::now());
        }
        if let Some(since) = hung_since
            && given_up_after.is_none()
            && cluster.abandons(addrs[0]) > 0
        {
            given_up_after = Some(since.elapsed());
        }
    }
    let out = h.task.await.expect("engine");
    Run {
        last: out.snapshot,
        abandons: addrs.iter().map(|a| cluster.abandons(*a)).sum(),
        backed_off,
        most_owed,
        given_up_after,
        delayed: addrs
            .iter()
            .map(|a| cluster.leader_counters(*a).streams_delayed)
            .sum(),
    }
}

/// Alone at 100 tx/s, unstaked, on a far link that loses nothing (230 ms): no leader ever
/// reads a stream of ours late for our budget — the pace, sent to the current and the next
/// leader, stays within each one's 20 streams a window, the run's start and the hand-overs
/// included. With loss it cannot hold: a leader reads a connection's streams one at a time,
/// and those a repair held back reach it at once (the relay's `apac` runs show it for every
/// sender, Agave's clients included).
#[tokio::test(start_paused = true)]
async fn alone_at_the_pace_on_a_clean_far_link_no_stream_waits_for_the_budget() {
    let r = run(Some(SimLink::new(230, 0.0)), None).await;
    let c = r.last.counts;
    assert_eq!(c.confirmed, N as u64);
    assert_eq!(r.delayed, 0, "streams read late for our budget");
}

fn far_lossy() -> SimLink {
    SimLink::new(320, 0.05)
}

/// On one 320 ms link losing 5% each way, at 100 tx/s (the collapse of issue 27): every
/// transaction lands, no stream times out, no connection is given up, no leader backs off and,
/// after the start, no more is ever owed than the sends made beyond one per transaction (the
/// copies for leader changes are owed; a hold nobody caused would add to them); the run stays
/// within 5% of the same run on loopback, with at most 1.2 sends per landed transaction.
#[tokio::test(start_paused = true)]
async fn a_far_lossy_link_keeps_the_pace_and_blames_no_leader() {
    let clean = run(None, None).await;
    let lossy = run(Some(far_lossy()), None).await;
    let c = lossy.last.counts;
    eprintln!(
        "loopback {:?}, 320 ms 5%: {:?}, {} sends, streams {:?}, abandons {}",
        clean.last.elapsed, lossy.last.elapsed, c.sends, c.streams, lossy.abandons
    );
    assert_eq!(c.confirmed, N as u64);
    assert_eq!(c.streams.timeout, 0, "{:?}", c.streams);
    assert_eq!(c.streams.connection, 0, "{:?}", c.streams);
    assert_eq!(lossy.abandons, 0, "healthy leaders given up as silent");
    assert!(!lossy.backed_off, "a healthy leader backed off");
    // The copies made for leader changes are owed (`dispatch::streams`), and are among the
    // sends beyond one per transaction.
    let copies = c.sends.saturating_sub(N as u64);
    assert!(
        lossy.most_owed <= copies,
        "a catch-up after a hold nobody caused: {} owed, {copies} copies",
        lossy.most_owed
    );
    assert!(
        c.sends as f64 <= 1.2 * N as f64,
        "{} sends for {N} transactions",
        c.sends
    );
    assert!(
        lossy.last.elapsed.as_secs_f64() <= 1.05 * clean.last.elapsed.as_secs_f64(),
        "{:?} against {:?} on loopback",
        lossy.last.elapsed,
        clean.last.elapsed
    );
}

/// The same link carrying far fewer streams than the pace asks (a window of 8 streams, about
/// 20 a second per leader, where the current and next leader are each sent 100): streams wait
/// on our side, many longer than the 5 s send timeout. Those are not the leader's: none
/// counts as a timeout or a lost connection, no leader backs off, and every transaction still
/// lands.
#[tokio::test(start_paused = true)]
async fn streams_waiting_in_our_own_window_are_not_the_leaders_timeouts() {
    let r = run(Some(far_lossy().with_window(8)), None).await;
    let c = r.last.counts;
    eprintln!(
        "window 8: {:?}, {} sends, streams {:?}",
        r.last.elapsed, c.sends, c.streams
    );
    assert_eq!(c.confirmed, N as u64);
    assert!(
        c.streams.other > 0,
        "no stream waited past the send timeout"
    );
    assert_eq!(c.streams.timeout, 0, "{:?}", c.streams);
    assert_eq!(c.streams.connection, 0, "{:?}", c.streams);
    assert_eq!(r.abandons, 0);
    assert!(!r.backed_off, "a leader backed off for our own window");
}

/// Derived rules still find a dead leader: one that stops answering on the far, lossy link is
/// given up after three of its PTOs — well over a second (the loopback figure, which fired
/// against healthy leaders there), and within six: the PTO there is about a second and a
/// half at most (320 ms, and answers repaired up to three times lately), and the loop looks
/// for silent leaders once a poll (400 ms) — and every transaction lands through the others.
#[tokio::test(start_paused = true)]
async fn a_far_leader_that_stops_answering_is_given_up_after_three_of_its_ptos() {
    let r = run(Some(far_lossy()), Some(Duration::from_secs(8))).await;
    let after = r
        .given_up_after
        .expect("the dead leader was never given up");
    eprintln!("given up {after:?} after it stopped answering");
    assert!(after > Duration::from_millis(1_500), "{after:?}");
    assert!(after < Duration::from_secs(6), "{after:?}");
    assert_eq!(r.last.counts.confirmed, N as u64);
}

/// The `hostile` profile's kind of loss: 5% in dark spells of 300 ms (one every 6 s, both
/// ways) on the 320 ms link. Streams sent in a spell are repaired on the probe timer, answers
/// pause for about a round trip more than the spell — and no leader is given up or blamed.
#[tokio::test(start_paused = true)]
async fn a_far_link_losing_in_bursts_keeps_its_leaders() {
    let link = far_lossy().in_bursts(Duration::from_millis(300));
    let r = run(Some(link), None).await;
    let c = r.last.counts;
    eprintln!(
        "bursts: {:?}, {} sends, streams {:?}",
        r.last.elapsed, c.sends, c.streams
    );
    assert_eq!(c.confirmed, N as u64);
    assert_eq!(c.streams.timeout, 0, "{:?}", c.streams);
    assert_eq!(c.streams.connection, 0, "{:?}", c.streams);
    assert_eq!(r.abandons, 0, "a leader given up in a dark spell");
    assert!(!r.backed_off, "a leader backed off for a dark spell");
    assert!(c.sends as f64 <= 1.2 * N as f64, "{} sends", c.sends);
}

/// A dark spell holds every datagram sent in it until the probe timer, doubling, finds the
/// link lit again.
#[tokio::test(start_paused = true)]
async fn dark_spells_hold_datagrams_until_a_probe_gets_through() {
    // Dark for 100 ms of every second, from 500 ms on.
    let m = LinkModel::new(
        SimLink::new(80, 0.1).in_bursts(Duration::from_millis(100)),
        1,
    );
    assert_eq!(
        m.draw(),
        (Duration::from_millis(40), Duration::from_millis(40))
    );
    tokio::time::advance(Duration::from_millis(505)).await;
    // Sent in the dark: the first probe (90 ms later) is still in it, the second (180 ms
    // after that) is not.
    assert_eq!(
        m.draw(),
        (
            Duration::from_millis(40 + 90 + 180),
            Duration::from_millis(40)
        )
    );
}

/// The model itself: with no loss a stream takes exactly the round trip; with loss, repairs
/// of 9/8 of it, as often as the loss says; and the window holds streams back until places
/// free.
#[tokio::test(start_paused = true)]
async fn the_link_model_delays_loses_and_queues_as_configured() {
    let clean = LinkModel::new(SimLink::new(200, 0.0), 1);
    assert_eq!(
        clean.draw(),
        (Duration::from_millis(100), Duration::from_millis(100))
    );
    let lossy = LinkModel::new(SimLink::new(200, 0.05), 7);
    let repairs: u32 = (0..10_000)
        .map(|_| {
            let (there, back) = lossy.draw();
            let extra = there + back - Duration::from_millis(200);
            (extra.as_millis() / 225) as u32
        })
        .sum();
    // 20,000 datagrams losing 5%: about 1,050 repairs (losses in a row included).
    assert!((900..1_200).contains(&repairs), "{repairs} repairs");

    let narrow = LinkModel::new(SimLink::new(200, 0.0).with_window(2), 3);
    let a = narrow.enter().await;
    let _b = narrow.enter().await;
    let waiting = tokio::spawn({
        let narrow = narrow.clone();
        async move {
            let _c = narrow.enter().await;
        }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(
        !waiting.is_finished(),
        "a third stream got into a window of two"
    );
    drop(a);
    tokio::time::timeout(Duration::from_millis(10), waiting)
        .await
        .expect("a freed place lets the next stream in")
        .expect("task");
}
