//! The QUIC transport through a far, lossy link (a user-space relay, real time): on one
//! 320 ms link losing 5% each way, 100 tx/s is carried — every stream accepted, none waiting
//! anywhere near the 5 s that was read as the leader's timeout, on at most 8 connections; and
//! on an `apac` link, a leader reading as a 4.0 leader does (one stream at a time per
//! connection, a budget per window) delays them rarely once the pool has spread: a burst
//! that follows a repair whose retransmission was lost too, not one every second.
//!
//! What each part buys, printed by this test (`cargo test --lib wan_tests -- --nocapture`)
//! with `STREAMS` at 2,000 (20 s), send time p50 / p99 and wall: quinn's default controller on
//! one connection 7.0 s / 31 s / 36.7 s — the collapse; BBR alone 0.33 s / 1.56 s / 20.4 s;
//! the pool alone (6 connections) 0.35 s / 1.73 s / 21.0 s; both (2 connections) 0.33 s /
//! 1.45 s / 20.6 s.

use std::time::Duration;

use super::{relay::Loss, tests::tpu_server, *};
use crate::engine::sim::leader::Rules;

const RTT: Duration = Duration::from_millis(320);
const LOSS: f64 = 0.05;
const STREAMS: u32 = 300;
const RATE: u32 = 100;

#[tokio::test]
async fn a_far_lossy_link_carries_the_pace() {
    let (server, _events) = tpu_server();
    let relay = super::relay::start(server, RTT, LOSS).await;
    let t = QuicTransport::new(&Keypair::new()).expect("client endpoint");
    let start = tokio::time::Instant::now();
    let mut sends = Vec::new();
    for i in 0..STREAMS {
        tokio::time::sleep_until(start + Duration::from_secs(1) * i / RATE).await;
        let handoff = Handoff::default();
        let send = t.send(relay, Arc::from(&[7u8; 200][..]), handoff.clone());
        sends.push(tokio::spawn(async move {
            let sent = tokio::time::Instant::now();
            let result = send.await;
            let done = tokio::time::Instant::now();
            let on_wire = handoff.at().map(|h| done.saturating_duration_since(h));
            (result, done - sent, on_wire)
        }));
    }
    let mut whole = Vec::new();
    let mut wire = Vec::new();
    for s in sends {
        let (result, took, on_wire) = s.await.expect("send task");
        result.expect("every stream accepted");
        whole.push(took);
        wire.push(on_wire.expect("handed off"));
    }
    whole.sort_unstable();
    wire.sort_unstable();
    let q = |v: &[Duration], p: f64| v[((v.len() - 1) as f64 * p) as usize];
    let peer = lock(&t.inner.peers).get(&relay).cloned().expect("the peer");
    let connections = peer.pool.len();
    let timing = peer.pool.timing().expect("measured");
    eprintln!(
        "{STREAMS} streams at {RATE}/s over {RTT:?} / {LOSS}: send p50 {:?} p99 {:?} max {:?}; \
         on the wire p50 {:?} p99 {:?}; {connections} connection(s); measured {timing:?}, \
         stream deadline {:?}, wall {:?}",
        q(&whole, 0.5),
        q(&whole, 0.99),
        whole[whole.len() - 1],
        q(&wire, 0.5),
        q(&wire, 0.99),
        timing.stream_deadline(),
        start.elapsed(),
    );
    assert!(connections <= pool::MAX_CONNECTIONS);
    assert!(
        whole[whole.len() - 1] < timing.stream_deadline(),
        "a stream took {:?}",
        whole[whole.len() - 1]
    );
    // Without BBR or the pool the median was 7 s (2,000 streams: p99 31 s); the bound leaves
    // room for a machine busy with other work, which stretches every real-time wait here.
    assert!(
        q(&whole, 0.5) < Duration::from_secs(2),
        "median {:?}",
        q(&whole, 0.5)
    );
}

/// A 4.0 leader's reading of one unstaked key (`solana-streamer` 4.0.0, `nonblocking/quic.rs`
/// and `stream_throttle.rs`): each connection's streams are accepted and read one at a time,
/// and every accepted stream counts against one budget shared by all the key's connections,
/// 20 in a 100 ms window (the simulator's leader's rules, [`Rules`]) that starts with the
/// first stream after the last window ended; a stream over it waits for the window's end. As a
/// 4.0 leader, it grants a connection no stream credit in the handshake, and 128 once it has
/// admitted it. Returns the server's address and when it delayed a stream so.
fn budget_server() -> (SocketAddr, Arc<Mutex<Vec<tokio::time::Instant>>>) {
    let endpoint = super::tests::server_endpoint_granting(Some(0));
    let addr = endpoint.local_addr().expect("server address");
    let delayed: Arc<Mutex<Vec<tokio::time::Instant>>> = Arc::default();
    let window: Arc<Mutex<(tokio::time::Instant, u64)>> =
        Arc::new(Mutex::new((tokio::time::Instant::now(), 0)));
    let count = delayed.clone();
    let Rules {
        unstaked_per_window: budget,
        window: length,
        ..
    } = Rules::default();
    tokio::spawn(async move {
        while let Some(incoming) = endpoint.accept().await {
            let (delayed, window) = (count.clone(), window.clone());
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                conn.set_max_concurrent_uni_streams(quinn::VarInt::from_u32(128));
                while let Ok(mut stream) = conn.accept_uni().await {
                    let wait = {
                        let mut w = lock(&window);
                        let now = tokio::time::Instant::now();
                        if now.duration_since(w.0) > length {
                            *w = (now, 0);
                        }
                        let over = w.1 >= budget;
                        w.1 += 1;
                        over.then(|| length.saturating_sub(now.duration_since(w.0)))
                    };
                    if let Some(wait) = wait.filter(|w| !w.is_zero()) {
                        lock(&delayed).push(tokio::time::Instant::now());
                        tokio::time::sleep(wait).await;
                    }
                    let _ = stream.read_to_end(1232).await;
                }
            });
        }
    });
    (addr, delayed)
}

/// An `apac` link (230 ms, 2% loss each way) at 100 tx/s, half the budget of a 4.0 leader:
/// a lost datagram holds every later stream of its connection until it is repaired, and the
/// leader then reads them at once, more than its window allows. A leader that delays one
/// stream stops reading that connection meanwhile, so what queues behind it is read at once in
/// the next window, over the budget again: one burst is an episode of a few windows
/// ([`episodes`]). Once the pool has spread over enough connections, what one repair holds
/// back stays under the budget, and after the first 3 s (`SETTLE`) at most two episodes come
/// in the 5 s left, where one connection had one every second. Before them, the streams queued
/// behind the first handshake reach the leader at once, and the loss that shows the link lossy
/// is the first repair.
///
/// Not none: a repair whose retransmission is lost too holds its connection for a probe
/// timeout, about a second here, more than any pool the leader allows keeps under its budget
/// (at 2% loss each way, about once in five seconds). In 28 runs at 40cb04d (22 with the rest
/// of the library's tests beside it), 6 had one episode after `SETTLE` and none had two (so
/// about one run in forty would have two, and the test asks for at most two); on one
/// connection (before the pool spread on loss) 13 of 500 streams were delayed, in episodes
/// every second. Those runs gave each stream to the least loaded connection; in 6 runs since
/// the pool gives runs of five (`runs`), 2 had one episode after `SETTLE`, none two.
#[tokio::test]
async fn a_lossy_link_spreads_streams_so_a_repair_stays_within_the_budget() {
    const SETTLE: Duration = Duration::from_secs(3);
    const STREAMS: u32 = 800;
    let BudgetRun {
        connections,
        delayed,
        ..
    } = budget_run(Duration::from_millis(230), Loss::independent(0.02), STREAMS).await;
    eprintln!(
        "{STREAMS} streams at {RATE}/s over 230 ms / 2%: {connections} connection(s), delayed at {delayed:?}"
    );
    assert!(connections > 1, "one connection carried every stream");
    let late: Vec<Duration> = delayed.iter().copied().filter(|d| *d > SETTLE).collect();
    assert!(
        episodes(&late) <= 2,
        "more than two episodes of streams delayed by the budget after {SETTLE:?}: at {late:?}"
    );
}

/// The streams sent while the first handshake is under way on an `apac`-like link (230 ms, no
/// loss), 40 at 100 tx/s, reach a leader that counts a 4.0 leader's budget within it: it
/// grants a connection's first credit a round trip after our side of the handshake ended,
/// and every stream waiting for it then opened and went at once, over a window's 20 (spaced
/// at the handshake's end, they waited for that credit all the same). They go a rider gap
/// apart from the credit on (`Release`), and none is delayed.
#[tokio::test]
async fn the_streams_that_waited_for_admission_reach_the_leader_within_its_budget() {
    let run = budget_run(Duration::from_millis(230), Loss::independent(0.0), 100).await;
    eprintln!(
        "100 streams at {RATE}/s over 230 ms from the first handshake: delayed at {:?}, \
         acknowledged p50 {:?} max {:?}",
        run.delayed,
        run.took(0.5),
        run.took(1.0)
    );
    assert!(run.delayed.is_empty(), "delayed at {:?}", run.delayed);
}

/// The same through `apac`'s loss (2% each way), over four patterns of losses: a repair
/// releases at once the streams a lost datagram held back on its connection, beside the
/// riders and the pace on the others. With one connection until the first loss showed the
/// link lossy and the riders 12.5 ms apart, what the first repair released went over a
/// window's 20 in three or four of the four patterns (2–4 streams delayed in each), as the
/// leaders of the relay's `apac` profile delayed 9–12 of a run's streams at its start (see
/// `first`). With the first connections opened side by side (`first`) and the riders 20 ms
/// apart, none was delayed in sixteen; more than one pattern of four with a delay fails
/// (timers on a loaded machine bunch streams too).
#[tokio::test]
async fn the_streams_that_waited_for_admission_leave_room_for_a_repair() {
    let mut delayed = Vec::new();
    for seed in 0..4 {
        let run = budget_run_seeded(
            Duration::from_millis(230),
            Loss::independent(0.02),
            100,
            seed,
        )
        .await;
        eprintln!(
            "seed {seed}: 100 streams at {RATE}/s over 230 ms / 2% from the first handshake, \
             {} connection(s): delayed at {:?}",
            run.connections, run.delayed
        );
        if !run.delayed.is_empty() {
            delayed.push((seed, run.delayed));
        }
    }
    assert!(
        delayed.len() <= 1,
        "streams delayed in {} patterns of losses of 4: {delayed:?}",
        delayed.len()
    );
}

/// What a [`budget_run`] showed.
struct BudgetRun {
    /// Connections in the pool at the end.
    connections: usize,
    /// When (since the first send) the server delayed a stream for its budget.
    delayed: Vec<Duration>,
    /// Each stream's time from its send to the server's acknowledgment, sorted.
    took: Vec<Duration>,
}

impl BudgetRun {
    /// The `q` quantile of the streams' times to acknowledgment.
    fn took(&self, q: f64) -> Duration {
        let i = ((self.took.len() as f64 * q) as usize).min(self.took.len().saturating_sub(1));
        self.took.get(i).copied().unwrap_or_default()
    }
}

/// `streams` streams at [`RATE`] through a link of `rtt` losing as `loss` says, to a
/// [`budget_server`], each accepted.
async fn budget_run(rtt: Duration, loss: Loss, streams: u32) -> BudgetRun {
    budget_run_seeded(rtt, loss, streams, 0x5eed).await
}

/// [`budget_run`] with the link's losses drawn from `seed`.
async fn budget_run_seeded(rtt: Duration, loss: Loss, streams: u32, seed: u64) -> BudgetRun {
    let (server, delayed) = budget_server();
    let relay = super::relay::start_seeded(server, rtt, loss, 0, seed).await;
    let t = QuicTransport::new(&Keypair::new()).expect("client endpoint");
    let start = tokio::time::Instant::now();
    let mut sends = Vec::new();
    for i in 0..streams {
        tokio::time::sleep_until(start + Duration::from_secs(1) * i / RATE).await;
        let send = t.send(relay, Arc::from(&[7u8; 200][..]), Handoff::default());
        sends.push(tokio::spawn(async move {
            let sent = tokio::time::Instant::now();
            send.await.map(|()| sent.elapsed())
        }));
    }
    let mut took = Vec::new();
    for s in sends {
        took.push(s.await.expect("send task").expect("every stream accepted"));
    }
    took.sort();
    let peer = lock(&t.inner.peers).get(&relay).cloned().expect("the peer");
    let delayed = lock(&delayed)
        .iter()
        .map(|d| d.duration_since(start))
        .collect();
    BudgetRun {
        connections: peer.pool.len(),
        delayed,
        took,
    }
}

/// How many episodes the sorted moments of delayed streams make: a delay more than
/// [`EPISODE_GAP`] after the one before starts a new one.
fn episodes(delayed: &[Duration]) -> usize {
    let new_ones = delayed
        .windows(2)
        .filter(|w| w[1].saturating_sub(w[0]) > EPISODE_GAP)
        .count();
    usize::from(!delayed.is_empty()) + new_ones
}

/// How long a leader's delays cascade after one burst: the delayed stream's window (100 ms),
/// the next window that reads what queued behind it, and a repair's half round trip more.
const EPISODE_GAP: Duration = Duration::from_millis(500);

#[test]
fn delays_close_together_are_one_episode() {
    let ms = Duration::from_millis;
    assert_eq!(episodes(&[]), 0);
    assert_eq!(episodes(&[ms(3_007)]), 1);
    assert_eq!(episodes(&[ms(3_007), ms(3_478), ms(3_900)]), 1);
    assert_eq!(episodes(&[ms(3_007), ms(3_600)]), 2);
}

/// A handshake whose first Initial is lost is re-sent three of its starting round trips
/// later ([`handshake_rtt`]: 100 ms before anything is measured), not after quinn's default
/// second: on a 60 ms link the first stream is accepted about 0.5 s after it was sent (3 ×
/// 100 ms, the handshake's round trip, the stream's), where it took 1.2 s before.
#[tokio::test]
async fn a_lost_first_initial_is_re_sent_within_a_third_of_a_second() {
    let (server, _events) = super::tests::tpu_server();
    let relay = super::relay::start_losing_first(server, Duration::from_millis(60), 0.0, 1).await;
    let t = QuicTransport::new(&Keypair::new()).expect("client endpoint");
    let start = tokio::time::Instant::now();
    t.send(relay, Arc::from(&[7u8; 200][..]), Handoff::default())
        .await
        .expect("the stream accepted");
    let took = start.elapsed();
    // 0.5 s expected; a second and more with quinn's 333 ms. The bound leaves room for a busy
    // machine without admitting the old figure.
    assert!(
        took < Duration::from_millis(850),
        "the first stream took {took:?}"
    );
}

#[test]
fn a_handshake_starts_from_the_link_measured_never_under_the_floor() {
    let ms = Duration::from_millis;
    let link = |srtt| LinkTiming {
        srtt: ms(srtt),
        rttvar: ms(srtt / 4),
        peak: ms(0),
    };
    assert_eq!(handshake_rtt(None), UNMEASURED_HANDSHAKE_RTT);
    assert_eq!(handshake_rtt(Some(link(230))), ms(230));
    assert_eq!(handshake_rtt(Some(link(1))), HANDSHAKE_RTT_FLOOR);
}

/// A `hostile` link (320 ms, 5% lost each way in bursts of 4 on average) at 100 tx/s, against
/// a server reading as a 4.0 leader does: every stream is accepted and the pool spreads over
/// several connections. Prints the streams' times to the server's acknowledgment (the
/// figures `probe` cites) and the streams the server delayed for its budget, in all and after
/// the pool's first 3 s (the figures `runs` cites: there, 17 runs each with `RUN_STREAMS` at 5
/// and at 1, which is least-loaded for every stream, before the probes).
#[tokio::test]
async fn through_bursts_of_loss_the_pool_spreads_and_every_stream_is_accepted() {
    const SETTLE: Duration = Duration::from_secs(3);
    const STREAMS: u32 = 1000;
    let run = budget_run(Duration::from_millis(320), Loss::bursty(0.05, 4.0), STREAMS).await;
    let late: Vec<Duration> = run
        .delayed
        .iter()
        .copied()
        .filter(|d| *d > SETTLE)
        .collect();
    eprintln!(
        "{STREAMS} streams at {RATE}/s over 320 ms / 5% in bursts of 4: {} connection(s); \
         acknowledged p50 {:?} p99 {:?} max {:?}; {} delayed, {} after {SETTLE:?} in {} \
         episode(s): at {:?}",
        run.connections,
        run.took(0.5),
        run.took(0.99),
        run.took(1.0),
        run.delayed.len(),
        late.len(),
        episodes(&late),
        run.delayed
    );
    assert!(run.connections > 1, "one connection carried every stream");
}
