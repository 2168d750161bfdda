//! Each rule of the 4.0 leader, one test each, through the simulated senders (tokio's paused
//! clock).

use std::net::Ipv4Addr;

use solana_hash::Hash;

use super::*;
use crate::engine::{
    net::{Handoff, SendError, Transport},
    sim::{SimCluster, SimSender},
    sim_link::SimLink,
};

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

/// A one-leader cluster and its leader's address.
fn cluster() -> (SimCluster, std::net::SocketAddr) {
    let c = SimCluster::new(vec![Pubkey::new_unique()]);
    let addr = c.addr_of(&c.leader_at(c.slot_now())).expect("address");
    (c, addr)
}

fn wires(c: &SimCluster, n: usize) -> Vec<Arc<[u8]>> {
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    c.transactions(n, hash)
        .into_iter()
        .map(|t| t.wire)
        .collect()
}

/// Sends `n` streams from `s` to `addr`, evenly at `per_second`; each send's result.
async fn paced(
    c: &SimCluster,
    s: &SimSender,
    addr: std::net::SocketAddr,
    n: usize,
    per_second: f64,
) -> Vec<Result<(), SendError>> {
    let gap = Duration::from_secs_f64(1.0 / per_second);
    let mut tasks = Vec::new();
    for w in wires(c, n) {
        tasks.push(tokio::spawn(Transport::send(
            s,
            addr,
            w,
            Handoff::default(),
        )));
        tokio::time::sleep(gap).await;
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.expect("send task"));
    }
    out
}

/// Whether the reads of streams from `from` keep to `per_window` a window (21 for a budget of
/// 20: the stream that waited out a window is counted in it, as `throttle_stream` counts it,
/// and the next one starts a new window — 210 streams a second for a key over budget). Windows
/// start at
/// a read at least 100 ms after the last one started, so by any time no more than
/// `per_window` for each 100 ms since the first read (and one window more) can have been read.
fn reads_keep_to(c: &SimCluster, from: IpAddr, per_window: usize) -> bool {
    let reads: Vec<Duration> = c
        .sends()
        .iter()
        .filter(|s| s.from == from && s.accepted)
        .map(|s| s.at)
        .collect();
    let Some(first) = reads.first().copied() else {
        return true;
    };
    reads.iter().enumerate().all(|(i, t)| {
        let windows = ((*t - first).as_nanos() / Duration::from_millis(100).as_nanos()) as usize;
        i < per_window * (windows + 2)
    })
}

/// 400 streams in a second from one unstaked sender: every one is read and answered (none
/// refused), at 20 a window (and the one that waited it out) — so the last is read about two
/// seconds in, and the leader counts streams delayed by the budget.
#[tokio::test(start_paused = true)]
async fn over_budget_streams_are_delayed_never_refused() {
    let (c, addr) = cluster();
    let s = c.sender(ip(1), 0.0);
    let results = paced(&c, &s, addr, 400, 400.0).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reads = c.sends();
    assert_eq!(reads.iter().filter(|r| r.accepted).count(), 400);
    assert!(reads_keep_to(&c, ip(1), 21));
    let last = reads.iter().map(|r| r.at).max().expect("reads");
    assert!(last >= Duration::from_millis(1_900), "{last:?}");
    let counters = c.leader_counters(addr);
    assert!(counters.streams_delayed > 0, "{counters:?}");
    assert!(reads.iter().any(|r| r.delayed));
}

/// Unstaked senders are keyed by address: two on one address, 150 streams a second each,
/// share one budget and are delayed; the same two on two addresses are not.
#[tokio::test(start_paused = true)]
async fn unstaked_senders_on_one_address_share_one_budget() {
    for (a, b, shared) in [(1, 1, true), (1, 2, false)] {
        let (c, addr) = cluster();
        let (s1, s2) = (c.sender(ip(a), 0.0), c.sender(ip(b), 0.0));
        let (c1, c2) = (c.clone(), c.clone());
        let one = tokio::spawn(async move { paced(&c1, &s1, addr, 150, 150.0).await });
        let two = tokio::spawn(async move { paced(&c2, &s2, addr, 150, 150.0).await });
        let (one, two) = (one.await.expect("one"), two.await.expect("two"));
        assert!(one.iter().chain(&two).all(Result::is_ok));
        let delayed = c.leader_counters(addr).streams_delayed;
        if shared {
            assert!(delayed > 0, "one address, one budget");
            // 20 a window, and the stream each of the two connections waited it out with.
            assert!(reads_keep_to(&c, ip(1), 22));
        } else {
            assert_eq!(delayed, 0, "two addresses, two budgets");
        }
    }
}

/// A staked sender is keyed by its identity and has no practical budget: 400 streams in a
/// second, none delayed.
#[tokio::test(start_paused = true)]
async fn staked_senders_are_keyed_by_identity_and_not_held_to_the_unstaked_budget() {
    let (c, addr) = cluster();
    let s = c.sender(ip(1), 0.01);
    let results = paced(&c, &s, addr, 400, 400.0).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(c.leader_counters(addr).streams_delayed, 0);
}

/// Credit: 128 concurrent streams per unstaked connection, 128–512 staked by stake, both scaled
/// by the RTT measured at admission. A leader that reads nothing lets 128 streams open; the
/// 129th waits for credit until the open is given up as stalled.
#[tokio::test(start_paused = true)]
async fn credit_is_128_streams_an_unstaked_connection_scaled_by_rtt() {
    let peer = |share| Peer {
        ip: ip(1),
        identity: Pubkey::new_unique(),
        stake_share: share,
    };
    let ms = Duration::from_millis;
    assert_eq!(max_streams(&peer(0.0), ms(2)), 128);
    assert_eq!(max_streams(&peer(0.0), ms(200)), 512);
    assert_eq!(max_streams(&peer(0.0), ms(1_000)), 128 * 7);
    assert_eq!(max_streams(&peer(1e-9), ms(2)), 128, "too little stake");
    assert_eq!(max_streams(&peer(0.001), ms(2)), 227);
    assert_eq!(max_streams(&peer(0.1), ms(2)), 512);
    assert_eq!(max_streams(&peer(0.1), ms(100)), 1_024);

    let (c, addr) = cluster();
    c.set_reading(addr, false);
    let s = c.sender(ip(1), 0.0);
    let start = Instant::now();
    let results = paced(&c, &s, addr, 129, 1_000.0).await;
    assert!(results[..128].iter().all(Result::is_ok));
    assert!(
        matches!(&results[128], Err(SendError::Stalled(_))),
        "{:?}",
        results[128]
    );
    assert!(start.elapsed() >= Duration::from_secs(1), "the open waited");
    assert_eq!(c.leader_counters(addr).streams_read, 0);
}

/// At most 8 connections per unstaked key (address) and 16 per staked key (identity): one
/// more is closed with code 4, and its sender's stream fails with it.
#[tokio::test(start_paused = true)]
async fn a_key_holds_8_connections_unstaked_16_staked_then_code_4() {
    let (c, addr) = cluster();
    let identity = Pubkey::new_unique();
    for (senders, limit) in [
        ((0..9).map(|_| c.sender(ip(1), 0.0)).collect::<Vec<_>>(), 8),
        (
            (0..17)
                .map(|i| c.sender_with(ip(100 + i), identity, 0.1))
                .collect(),
            16,
        ),
    ] {
        let before = c.leader_counters(addr).too_many;
        for (i, s) in senders.iter().enumerate() {
            let w = wires(&c, 1).remove(0);
            let r = Transport::send(s, addr, w, Handoff::default()).await;
            if i < limit {
                assert_eq!(r, Ok(()), "connection {i}");
            } else {
                let e = r.expect_err("one connection too many");
                assert!(matches!(e, SendError::Throttled(_)), "{e}");
                assert!(e.to_string().contains("code 4: too_many"), "{e}");
            }
        }
        assert_eq!(c.leader_counters(addr).too_many, before + 1);
    }
}

/// New connections from one address: a bucket of 32 a minute in the test configuration (a new
/// address starts with a minute's worth). The 33rd handshake in a moment is ignored: the
/// client sees only its handshake time out, after 2 s; another address is not affected, and
/// a token later the address connects again. Mainnet's 8 a minute saves up to 80.
#[tokio::test(start_paused = true)]
async fn handshakes_over_the_per_address_rate_are_silently_ignored() {
    let (c, addr) = cluster();
    let s = c.sender(ip(1), 0.0);
    for i in 0..32 {
        s.connect(addr).await.unwrap_or_else(|e| panic!("{i}: {e}"));
        s.abandon(addr);
    }
    let start = Instant::now();
    let e = s.connect(addr).await.expect_err("over the rate");
    assert_eq!(e, SendError::handshake_timed_out(Duration::from_secs(2)));
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert_eq!(c.leader_counters(addr).ignored, 1);
    assert!(c.sender(ip(2), 0.0).connect(addr).await.is_ok());
    // 32 a minute: a token every 1.875 s, and 2 s have passed.
    assert!(s.connect(addr).await.is_ok());

    let (c, addr) = cluster();
    c.set_rules(addr, Rules::mainnet());
    let s = c.sender(ip(1), 0.0);
    s.connect(addr).await.expect("first");
    s.abandon(addr);
    // Idle for a quarter of an hour: the bucket fills to ten minutes' worth, no more.
    tokio::time::sleep(Duration::from_secs(900)).await;
    for i in 0..80 {
        s.connect(addr).await.unwrap_or_else(|e| panic!("{i}: {e}"));
        s.abandon(addr);
    }
    assert!(s.connect(addr).await.is_err(), "the 81st in a moment");
    assert_eq!(c.leader_counters(addr).ignored, 1);
}

/// When the unstaked table is full, a new connection evicts the least recently active keys
/// (down to 90%), closing their connections with code 1. Activity is a finished stream: a
/// connection made later but idle since goes before an older one that carried a stream.
#[tokio::test(start_paused = true)]
async fn the_least_recently_active_key_is_evicted_when_the_table_is_full() {
    let (c, addr) = cluster();
    c.set_rules(
        addr,
        Rules {
            unstaked_table: 4,
            ..Rules::default()
        },
    );
    let senders: Vec<SimSender> = (1..=5).map(|i| c.sender(ip(i), 0.0)).collect();
    let send = |s: &SimSender| Transport::send(s, addr, wires(&c, 1).remove(0), Handoff::default());
    senders[0].connect(addr).await.expect("a");
    tokio::time::sleep(Duration::from_millis(10)).await;
    let b = senders[1].connect(addr).await.expect("b: idle from now on");
    tokio::time::sleep(Duration::from_millis(10)).await;
    send(&senders[0]).await.expect("a carries a stream");
    send(&senders[2]).await.expect("c");
    send(&senders[3]).await.expect("d");
    tokio::time::sleep(Duration::from_millis(10)).await;
    send(&senders[4]).await.expect("e: the table was full");
    assert_eq!(c.leader_counters(addr).evicted, 1);
    let closed = b.closed().expect("b was evicted");
    let e = closed.error().to_string();
    assert!(e.contains("code 1: dropped"), "{e}");
    send(&senders[0]).await.expect("a kept its connection");
}

/// The server gives up a handshake not done within 2 s (a link of 2.5 s round trip): nothing
/// is admitted, and the client sees a handshake timeout.
#[tokio::test(start_paused = true)]
async fn a_handshake_not_done_in_2_s_is_dropped() {
    let (c, addr) = cluster();
    c.set_link(addr, Some(SimLink::new(2_500, 0.0)));
    let e = c
        .sender(ip(1), 0.0)
        .connect(addr)
        .await
        .expect_err("too slow");
    assert!(matches!(e, SendError::Connection(_)), "{e}");
    let counters = c.leader_counters(addr);
    assert_eq!((counters.handshake_timeouts, counters.admitted), (1, 0));
}

/// A connection's streams are read one at a time, in order: a stream whose datagram comes a
/// second late (lost, then repaired) holds back the one behind it, which came at once. A
/// stream the leader started on (a later one had come) whose data does not come within 2 s
/// is given up, and the one behind it read then.
#[tokio::test(start_paused = true)]
async fn a_late_stream_holds_back_the_streams_behind_it_on_its_connection() {
    let (c, addr) = cluster();
    let s = c.sender(ip(1), 0.0);
    let conn = s.connect(addr).await.expect("connect");
    let w = wires(&c, 4);
    let t0 = Instant::now();
    let stall = Duration::from_secs(1);
    for (wire, after) in [(&w[0], 1_000), (&w[1], 10), (&w[2], 3_500), (&w[3], 1_100)] {
        let at = t0 + Duration::from_millis(after);
        conn.open(stall, || (at, wire.clone()))
            .await
            .expect("credit");
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let log = c.sends();
    let at: Vec<(Duration, bool)> = log.iter().map(|r| (r.at, r.accepted)).collect();
    let started = at[0].0 - Duration::from_millis(1_000);
    assert_eq!(
        at,
        vec![
            (started + Duration::from_millis(1_000), true),
            (started + Duration::from_millis(1_000), true),
            (started + Duration::from_millis(3_100), false),
            (started + Duration::from_millis(3_100), true),
        ]
    );
    assert_eq!(c.leader_counters(addr).read_timeouts, 1);
}
