//! The engine against the unkind parts of real clusters, on the simulated cluster under tokio's
//! paused clock: partial throttling, sends that hang, a status cache that forgets, expiry that
//! only the finalized bank may decide, an RPC that never answers, a journal that stops writing
//! and an engine that crashes.

use crate::common;

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use common::sim::{PanickingTransport, config, leaders, start, unique_hash};
use tokio::time::Instant;
use txpace::engine::{
    self, Prior,
    lifecycle::TxState,
    net::Transport,
    sim::{self, Fate, SimCluster},
    snapshot::{ConnState, RunState, StreamCounts},
};
use txpace::source::LoadedTx;

fn never_lands(cluster: &SimCluster, txs: &[LoadedTx]) {
    for tx in txs {
        cluster.set_fate(
            tx.signature,
            Fate {
                never_lands: true,
                ..Fate::default()
            },
        );
    }
}

/// A leader that reads 200 streams a second from our address (Agave's unstaked budget) while
/// we push 1,000: the 128 streams of our credit queue unread, later opens wait for credit (a
/// second's worth is absorbed: 400 transactions would all be accepted, the last read a second
/// late), and those waiting past the link's bound count as throttled. The streams read now and then (as
/// credit comes back) must not reset the backoff, so it deepens and few opens stall. Nothing is
/// refused: the leader delays reads (its own count), and reads every stream it acknowledged.
#[tokio::test(start_paused = true)]
async fn partial_throttling_deepens_the_backoff() {
    let ls = leaders(1);
    let cluster = SimCluster::new(ls.clone());
    let addr = cluster.addr_of(&ls[0]).expect("addr");
    let txs = cluster.transactions(2_000, unique_hash());
    let h = start(&cluster, config(1_000.0), txs);
    let mut deepest = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        if let Some(ConnState::BackingOff { remaining_ms, .. }) =
            snap.leaders.first().map(|l| &l.conn)
        {
            deepest = deepest.max(*remaining_ms);
        }
    }
    let out = h.task.await.expect("engine");
    let s = out.snapshot.counts.streams;
    let server = cluster.leader_counters(addr);
    eprintln!("streams {s:?}, deepest backoff {deepest} ms, leader {server:?}");
    assert_eq!(out.snapshot.counts.confirmed, 2_000);
    assert!(
        s.throttled <= 40,
        "{} stalled opens in 10 s: the backoff did not deepen",
        s.throttled
    );
    assert!(deepest >= 1_000, "deepest backoff seen {deepest} ms");
    assert_eq!(s.sent, s.accepted + s.throttled);
    assert!(server.streams_delayed > 0, "{server:?}");
    assert_eq!(server.read_timeouts, 0);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        cluster.leader_counters(addr).streams_read,
        s.accepted,
        "every acknowledged stream is read in the end"
    );
}

/// A leader whose sends hang: once its streams have waited a second without an answer its
/// connection is given up (long before the 5 s send timeout), they count as connection failures
/// (not throttling, not timeouts), the leader backs off, and every transaction lands through the
/// other leader — so no transaction send "reached no leader". Its handshake is answered, so
/// until that first second is out its streams ride along with the pace (counted on by no send:
/// see `engine::liveness`); from then until it answers it gets one stream at a time (a probe),
/// not the pace: a handful over the rest of the run.
#[tokio::test(start_paused = true)]
async fn a_hanging_leader_is_given_up_and_backed_off() {
    let ls = leaders(2);
    let cluster = SimCluster::new(ls.clone());
    let a = cluster.addr_of(&ls[0]).expect("addr");
    cluster.set_hanging(a, true);
    let txs = cluster.transactions(1_000, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_millis(5_300)).await;
    let snap = h.snapshots.borrow().clone();
    let la = snap
        .leaders
        .iter()
        .find(|l| l.identity == ls[0])
        .expect("leader a listed");
    assert!(la.streams.connection >= 1, "{:?}", la.streams);
    assert_eq!(la.streams.timeout, 0, "{:?}", la.streams);
    assert!(
        cluster.abandons(a) >= 1,
        "its connection was never given up"
    );
    let out = h.task.await.expect("engine");
    let c = out.snapshot.counts;
    assert_eq!(c.confirmed, 1_000);
    assert_eq!(c.send_errors, 0, "every send reached the other leader");
    assert!(c.streams.connection > 0);
    assert_eq!((c.streams.throttled, c.streams.timeout), (0, 0));
    let stats = out
        .snapshot
        .leader_totals
        .iter()
        .find(|l| l.identity == ls[0])
        .expect("in the report");
    assert_eq!(stats.streams.connection, c.streams.connection);
    assert_eq!(stats.streams.accepted, 0);
    eprintln!("streams to the hanging leader: {}", stats.streams.sent);
    // The pace for its first second (100), then one probe at a time, each given up after a
    // second without an answer and followed by a backoff of at least 500 ms: at most one per
    // 1.5 s of the ~10 s run.
    assert!(
        stats.streams.sent <= 100 + 8,
        "{} streams to a leader that never answered",
        stats.streams.sent
    );
}

/// `sends` counts transaction sends and `send_errors` those of them that reached no leader: the
/// same unit. Streams (one per leader per send) are counted apart.
#[tokio::test(start_paused = true)]
async fn sends_and_send_errors_count_the_same_unit() {
    let ls = leaders(1);
    let cluster = SimCluster::new(ls.clone());
    let a = cluster.addr_of(&ls[0]).expect("addr");
    // The leader reads nothing for 3 s: the streams of our credit wait unread, later opens
    // stall and are throttled.
    cluster.set_reading(a, false);
    let txs = cluster.transactions(200, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_secs(3)).await;
    cluster.set_reading(a, true);
    let out = h.task.await.expect("engine");
    let c = out.snapshot.counts;
    assert_eq!(c.confirmed, 200);
    // One leader: one stream per send, so every throttled stream is a send that reached none.
    assert_eq!(c.streams.sent, c.sends);
    assert_eq!(c.send_errors, c.streams.throttled);
    assert!(c.send_errors > 0 && c.send_errors < c.sends);
    assert_eq!(
        c.sends,
        c.send_errors + 200,
        "each landed on its first accepted send"
    );
}

/// Landings older than the status cache's span (here 20 slots) are found by a lookup with
/// history: a resumed run reports them Confirmed with their slot, never Expired; what never
/// landed expires.
#[tokio::test(start_paused = true)]
async fn a_forgetful_status_cache_never_turns_a_landing_into_an_expiry() {
    let cluster = SimCluster::new(leaders(1));
    cluster.set_status_cache_slots(20);
    let hash = unique_hash();
    cluster.add_blockhash(hash, cluster.height_now() + 20);
    let txs = cluster.transactions(50, hash);
    for tx in &txs[..30] {
        cluster.land(tx.signature);
    }
    never_lands(&cluster, &txs[30..]);
    let landed_at = cluster.landed_slot(&txs[0].signature).expect("landed");
    // The interrupted run is resumed much later: the cache has forgotten, the blockhash died.
    tokio::time::sleep(Duration::from_secs(60)).await;
    let prior: Vec<Option<Prior>> = (0..50).map(|_| Some(Prior::Sent { sends: 1 })).collect();
    let sigs: Vec<_> = txs.iter().map(|t| t.signature).collect();
    let h = engine::spawn_resumed(
        config(100.0),
        txs,
        prior,
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    );
    let out = h.task.await.expect("engine");
    let s = &out.snapshot;
    assert_eq!((s.counts.confirmed, s.counts.expired), (30, 20));
    for (i, tx) in s.txs.iter().enumerate() {
        let chain = cluster.landed_slot(&sigs[i]);
        match tx.state {
            TxState::Confirmed => assert_eq!(tx.landed_slot, chain, "tx {i}"),
            TxState::Expired => assert_eq!(chain, None, "tx {i} is on chain"),
            other => panic!("tx {i} ended {other:?}"),
        }
    }
    assert_eq!(s.txs[0].landed_slot, Some(landed_at));
    assert!(cluster.sends().is_empty(), "nothing needed sending again");
}

/// A blockhash the cluster never named (not its latest) gets an upper-bound last valid height,
/// shown as an estimate. It expires when the finalized bank — not the tip, not a clock — says
/// it is dead: the tip calls it invalid ~13 s (32 blocks) earlier.
#[tokio::test(start_paused = true)]
async fn expiry_waits_for_the_finalized_bank() {
    let cluster = SimCluster::new(leaders(1));
    let h0 = cluster.height_now();
    let old = unique_hash();
    cluster.add_blockhash(old, h0 + 100);
    cluster.add_blockhash(unique_hash(), h0 + 150); // the cluster's latest
    let txs = cluster.transactions(10, old);
    never_lands(&cluster, &txs);
    let mut cfg = config(100.0);
    cfg.resend_interval = Duration::from_secs(2);
    let t0 = Instant::now();
    let h = start(&cluster, cfg, txs);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let tx = h.snapshots.borrow().txs[0].clone();
    assert!(!tx.last_valid_exact, "an estimate");
    let est = tx.last_valid_block_height.expect("bounded");
    assert!(est >= h0 + 100, "an upper bound: {est}");
    // The tip passes h0 + 100 at 40.4 s; the finalized bank 32 blocks later, at 53.2 s.
    tokio::time::sleep(Duration::from_secs(45)).await;
    let snap = h.snapshots.borrow().clone();
    assert_eq!(snap.counts.expired, 0, "the tip alone decides nothing");
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.counts.expired, 10);
    let took = Instant::now() - t0;
    assert!(
        took >= Duration::from_millis(53_200) && took < Duration::from_secs(56),
        "expired after {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_rpc_that_never_answers_fails_the_run() {
    let cluster = SimCluster::new(leaders(1));
    cluster.set_rpc_down(true);
    let txs = cluster.transactions(10, unique_hash());
    let out = start(&cluster, config(100.0), txs)
        .task
        .await
        .expect("engine");
    match &out.snapshot.run {
        RunState::Failed(why) => {
            assert!(why.contains("http://sim/"), "{why}");
            assert!(why.contains("has not answered in 20 s"), "{why}");
            assert!(why.contains("connection refused"), "{why}");
        }
        other => panic!("run ended {other:?}"),
    }
    assert!(out.snapshot.elapsed < Duration::from_secs(21));
}

/// An RPC that answered once and then goes away for longer than the never-reachable limit is an
/// outage: the run waits it out.
#[tokio::test(start_paused = true)]
async fn an_rpc_outage_after_a_first_answer_is_waited_out() {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(500, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_secs(1)).await;
    cluster.set_rpc_down(true);
    tokio::time::sleep(Duration::from_secs(30)).await;
    cluster.set_rpc_down(false);
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.run, RunState::Done);
    assert_eq!(out.snapshot.counts.confirmed, 500);
}

#[tokio::test(start_paused = true)]
async fn a_journal_that_cannot_be_written_stops_sending() {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(1_000, unique_hash());
    let (facts_tx, facts_rx) = tokio::sync::mpsc::unbounded_channel();
    let failure = Arc::new(OnceLock::new());
    let mut cfg = config(100.0);
    cfg.facts = Some(facts_tx);
    cfg.journal_failure = Some(failure.clone());
    let h = start(&cluster, cfg, txs);
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The writer thread hits a full disk and exits, dropping its end.
    let _ = failure.set("journal /j: No space left on device (os error 28)".into());
    drop(facts_rx);
    let out = h.task.await.expect("engine");
    match &out.snapshot.run {
        RunState::Failed(why) => assert!(why.contains("No space left on device"), "{why}"),
        other => panic!("run ended {other:?}"),
    }
    let sent = cluster.sends().len();
    assert!(
        sent < 250,
        "{sent} sends: sending went on after the journal failed"
    );
}

#[tokio::test(start_paused = true)]
async fn an_engine_crash_is_published_as_failed_with_its_reason() {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(1_000, unique_hash());
    let transport = PanickingTransport::new(&cluster);
    let h = engine::spawn(
        config(100.0),
        txs,
        Arc::new(cluster.clone()),
        Arc::new(transport),
        None,
    );
    let snapshots = h.snapshots.clone();
    let out = h.task.await.expect("the supervisor itself never fails");
    let expect = format!("the engine crashed: {}", common::sim::TRANSPORT_PANIC);
    assert_eq!(out.snapshot.run, RunState::Failed(expect.clone()));
    assert_eq!(snapshots.borrow().run, RunState::Failed(expect));
    assert!(out.snapshot.counts.sends > 0, "the last figures are kept");
}

/// `leader`'s stream figures in the run's report.
fn totals_of(out: &engine::RunOutcome, leader: solana_pubkey::Pubkey) -> StreamCounts {
    out.snapshot
        .leader_totals
        .iter()
        .find(|t| t.identity == leader)
        .map(|t| t.streams)
        .unwrap_or_default()
}

/// A leader whose 8 connections for our address are held by eight other senders on it closes
/// ours with code 4 ("too_many") as soon as it is made: the engine counts the stream
/// throttled and backs the leader off, and every transaction lands through the other leader.
#[tokio::test(start_paused = true)]
async fn a_connection_closed_as_one_too_many_is_throttling() {
    let ls = leaders(2);
    let cluster = SimCluster::new(ls.clone());
    let a = cluster.addr_of(&ls[0]).expect("addr");
    let others: Vec<_> = (0..8)
        .map(|_| cluster.sender(sim::DEFAULT_SENDER_IP, 0.0))
        .collect();
    for o in &others {
        o.connect(a).await.expect("another sender's connection");
    }
    let txs = cluster.transactions(300, unique_hash());
    let out = start(&cluster, config(100.0), txs)
        .task
        .await
        .expect("engine");
    let to_a = totals_of(&out, ls[0]);
    let server = cluster.leader_counters(a);
    eprintln!("to a {to_a:?}, leader {server:?}");
    assert_eq!(out.snapshot.counts.confirmed, 300);
    assert!(to_a.throttled >= 1, "{to_a:?}");
    assert_eq!(to_a.accepted, 0, "{to_a:?}");
    assert!(server.too_many >= 1, "{server:?}");
    assert!(to_a.sent <= 20, "the leader was not backed off: {to_a:?}");
    let to_b = totals_of(&out, ls[1]);
    assert_eq!(to_b.sent, to_b.accepted, "{to_b:?}");
}

/// Another sender on our address has spent its handshake tokens on a mainnet leader (8 new
/// connections in a moment, a minute's worth; a token comes back every 7.5 s): the leader
/// ignores our handshakes, and the engine sees only that they time out after 2 s —
/// connection failures, which back the leader off — while every transaction lands through the
/// other leader.
#[tokio::test(start_paused = true)]
async fn ignored_handshakes_are_connection_failures() {
    let ls = leaders(2);
    let cluster = SimCluster::new(ls.clone());
    let a = cluster.addr_of(&ls[0]).expect("addr");
    cluster.set_rules(a, sim::leader::Rules::mainnet());
    let other = cluster.sender(sim::DEFAULT_SENDER_IP, 0.0);
    for _ in 0..8 {
        other.connect(a).await.expect("within the rate");
        Transport::abandon(&other, a);
    }
    let txs = cluster.transactions(300, unique_hash());
    let out = start(&cluster, config(100.0), txs)
        .task
        .await
        .expect("engine");
    let to_a = totals_of(&out, ls[0]);
    let server = cluster.leader_counters(a);
    eprintln!("to a {to_a:?}, leader {server:?}");
    assert_eq!(out.snapshot.counts.confirmed, 300);
    assert!(to_a.connection >= 1, "{to_a:?}");
    assert_eq!((to_a.accepted, to_a.throttled), (0, 0), "{to_a:?}");
    assert!(server.ignored >= 1, "{server:?}");
    assert_eq!(server.admitted, 8, "ours never got in");
    let to_b = totals_of(&out, ls[1]);
    assert_eq!(to_b.sent, to_b.accepted, "{to_b:?}");
}
