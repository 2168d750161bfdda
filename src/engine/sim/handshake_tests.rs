//! New connections against the 4.0 leader's handshake bucket (tokio's paused clock): the
//! engine starts no more handshakes to a leader than a mainnet leader's bucket admits (8 to
//! start, one every 7.5 s), and a leader that ignores them is named `ignoring` and spared
//! (`engine::handshakes`).

use std::{sync::Arc, time::Duration};

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::{DEFAULT_SENDER_IP, SimCluster, leader::Rules};
use crate::engine::{
    self, EngineConfig,
    handshakes::NEW_PER_MINUTE,
    net::Transport,
    snapshot::{ConnState, RateTarget, Snapshot, Verdict},
};

/// Three mainnet leaders (8 new connections a minute per address) and the engine sending `n`
/// transactions at 100 tx/s.
fn start(n: usize) -> (SimCluster, Vec<Pubkey>, engine::EngineHandle) {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    for l in &ls {
        cluster.set_rules(cluster.addr_of(l).expect("an address"), Rules::mainnet());
    }
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let h = engine::spawn(
        cfg,
        cluster.transactions(n, hash),
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    );
    (cluster, ls, h)
}

/// Initials a leader saw: admitted, closed for want of a token, and ignored.
fn initials(cluster: &SimCluster, addr: std::net::SocketAddr) -> u64 {
    let c = cluster.leader_counters(addr);
    c.admitted + c.disallowed + c.ignored + c.too_many
}

/// A leader whose streams never complete: each silence gives its connection up and the next
/// probe connects again. Over the 50 s run the engine starts no more handshakes to it than a
/// mainnet bucket admits (8, and one every 7.5 s) — the mainnet leader never has to ignore
/// one — and waits, sparing it, when its bucket is empty; every transaction lands through the
/// others.
#[tokio::test(start_paused = true)]
async fn new_connections_to_a_leader_stay_under_its_limit() {
    let (cluster, ls, h) = start(5_000);
    let hung = cluster.addr_of(&ls[0]).expect("an address");
    cluster.set_hanging(hung, true);
    let mut held = None;
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        for row in snap.leaders.iter().filter(|r| r.identity == ls[0]) {
            if let ConnState::BackingOff { reason, .. } = &row.conn
                && reason.contains("no new connection")
            {
                held.get_or_insert((snap.elapsed, reason.clone()));
            }
        }
    }
    let out = h.task.await.expect("engine");
    let c = cluster.leader_counters(hung);
    eprintln!(
        "hung leader: {} Initials in {:?}, {c:?}, given up {} times; first held {held:?}",
        initials(&cluster, hung),
        out.snapshot.elapsed,
        cluster.abandons(hung)
    );
    assert_eq!(
        out.snapshot.counts.confirmed, 5_000,
        "{:?}",
        out.snapshot.counts
    );
    assert!(out.snapshot.elapsed < Duration::from_secs(60));
    let bucket = NEW_PER_MINUTE as f64 * (1.0 + out.snapshot.elapsed.as_secs_f64() / 60.0);
    assert!(initials(&cluster, hung) as f64 <= bucket, "{c:?}");
    assert_eq!(c.ignored, 0, "the leader had to ignore a handshake");
    assert!(held.is_some(), "the limit never held a handshake back");
}

/// Another sender on our address spends the leader's tokens; our connection to it is then
/// lost, and the leader ignores the handshake that replaces it. The leader is named
/// `ignoring` — the handshake timed out while it had answered us a moment before, so it is
/// there — it is backed off with no new handshake for a token's time, and every transaction
/// lands through the others.
#[tokio::test(start_paused = true)]
async fn a_leader_that_ignores_our_handshakes_is_named_and_spared() {
    let (cluster, ls, h) = start(6_000);
    let addr = cluster.addr_of(&ls[1]).expect("an address");
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Seven more connections from our address take the rest of its bucket (eight to start,
    // one a minute's eighth after); the next ones wait out their handshakes, ignored.
    let others: Vec<_> = (0..10)
        .map(|_| cluster.sender(DEFAULT_SENDER_IP, 0.0))
        .collect();
    let tries = others.iter().map(|s| {
        let s = s.clone();
        tokio::spawn(async move { s.connect(addr).await.is_ok() })
    });
    let mut connected = 0;
    for t in tries {
        connected += usize::from(t.await.expect("task"));
    }
    for s in &others {
        Transport::abandon(s, addr);
    }
    let ignored_before = cluster.leader_counters(addr).ignored;
    // Our connection is lost while the leader is taking our sends (as after an idle timeout
    // on our side, or a route change).
    while cluster.leader_at(cluster.slot_now()) != ls[1] {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Transport::abandon(&cluster, addr);
    let mut named = false;
    let mut spared: Option<String> = None;
    let mut last: Option<Arc<Snapshot>> = None;
    while !h.task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        for row in snap.leaders.iter().filter(|r| r.identity == ls[1]) {
            named |= row.link.verdict == Some(Verdict::Ignoring);
            if let ConnState::BackingOff { reason, .. } = &row.conn
                && reason.contains("no new connection")
            {
                spared.get_or_insert(reason.clone());
            }
        }
        last = Some(snap);
    }
    let out = h.task.await.expect("engine");
    let c = cluster.leader_counters(addr);
    let row = last
        .iter()
        .flat_map(|s| s.leader_totals.iter())
        .find(|r| r.identity == ls[1])
        .map(|r| r.link.clone());
    eprintln!(
        "others connected {connected}, ignored before ours {ignored_before}; leader {c:?}; \
         spared: {spared:?}; link {row:?}"
    );
    assert!(named, "the leader was never named ignoring");
    assert!(spared.is_some(), "the leader was not spared");
    assert_eq!(out.snapshot.counts.confirmed, 6_000);
    // Ours: at most the first handshake, the ignored one and those after each token's hold.
    assert!(c.ignored - ignored_before <= 3, "{c:?}");
}

/// A leader that answers no handshake of ours, current as the run starts: another sender on
/// our address spent its bucket, so it ignores our Initials (to us, a dark TPU). Its first
/// streams wait for one handshake — at most `liveness::HANDSHAKE_RIDERS` of them, each also
/// sent to a leader that answers — and fail together when it times out, rather than each
/// starting a handshake of its own in turn; every transaction lands through the others.
#[tokio::test(start_paused = true)]
async fn the_sends_waiting_for_a_handshake_that_fails_fail_with_it() {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    let dark = cluster.leader_at(cluster.slot_now());
    let addr = cluster.addr_of(&dark).expect("an address");
    cluster.set_rules(addr, Rules::mainnet());
    let other = cluster.sender(DEFAULT_SENDER_IP, 0.0);
    for _ in 0..NEW_PER_MINUTE {
        other.connect(addr).await.expect("a token left");
        Transport::abandon(&other, addr);
    }
    let before = initials(&cluster, addr);
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let h = engine::spawn(
        cfg,
        cluster.transactions(1_000, hash),
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    );
    // Past the first handshake's 2 s bound, before a backoff's probe could start another.
    tokio::time::sleep(Duration::from_millis(2_300)).await;
    let c = cluster.leader_counters(addr);
    assert_eq!(
        initials(&cluster, addr) - before,
        1,
        "one handshake for every waiting send: {c:?}"
    );
    assert_eq!(c.ignored, 1, "{c:?}");
    let snap = h.snapshots.borrow().clone();
    let row = snap
        .leaders
        .iter()
        .find(|r| r.identity == dark)
        .expect("the dark leader's row");
    let riders = u64::from(crate::engine::liveness::HANDSHAKE_RIDERS);
    assert!(
        (2..=riders).contains(&row.streams.sent),
        "{:?}",
        row.streams
    );
    assert_eq!(
        row.streams.connection, row.streams.sent,
        "every stream that waited failed with the handshake: {:?}",
        row.streams
    );
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.counts.confirmed, 1_000);
}
