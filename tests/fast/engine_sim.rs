//! Engine logic on the simulated cluster under tokio's paused clock: minutes of chain time in
//! milliseconds, deterministic.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::sim::{config, leaders, most_within, start, start_with_feed, unique_hash};
use solana_hash::Hash;
use tokio::time::Instant;
use txpace::engine::{
    self, EngineConfig, RunOutcome,
    command::Command,
    lifecycle::{Queue, TxState},
    sim::{self, Fate, SimCluster},
    snapshot::{ConnState, RateTarget, RunState},
};

async fn run(cluster: &SimCluster, cfg: EngineConfig, n: usize) -> RunOutcome {
    let txs = cluster.transactions(n, unique_hash());
    start(cluster, cfg, txs).task.await.expect("engine task")
}

/// Transaction sends (first send to the first target) between `from` and `to` seconds.
fn first_target_sends(cluster: &SimCluster, from: f64, to: f64) -> usize {
    let sends = cluster.sends();
    let mut seen = std::collections::HashSet::new();
    sends
        .iter()
        .filter(|s| {
            let t = s.at.as_secs_f64();
            t >= from && t < to && seen.insert((s.signature, s.at))
        })
        .count()
}

#[tokio::test(start_paused = true)]
async fn holds_100_and_1000_tx_per_s_within_2_percent_over_10_s_without_bursts() {
    for rate in [100.0, 1000.0] {
        let cluster = SimCluster::new(leaders(1));
        // Staked: a 4.0 leader holds an unstaked address to 200 streams a second.
        cluster.set_staked(true);
        let n = (rate * 14.0) as usize;
        let out = run(&cluster, config(rate), n).await;
        assert_eq!(out.snapshot.run, RunState::Done);
        assert_eq!(out.snapshot.counts.confirmed, n as u64);
        let sent = first_target_sends(&cluster, 2.0, 12.0) as f64;
        let expected = rate * 10.0;
        assert!(
            (sent - expected).abs() <= expected * 0.02,
            "rate {rate}: {sent} sends in 10 s, expected {expected} ± 2%"
        );
        // No burst: no 100 ms window of the whole run holds more than 1.5 × its share.
        let most = most_within(&cluster.sends(), Duration::from_millis(100));
        assert!(
            most as f64 <= rate * 0.1 * 1.5,
            "rate {rate}: {most} sends in one 100 ms window"
        );
    }
}

/// 200 transactions at 50 tx/s, the first 100 lost once and resent 2 s later, beside the last
/// 100's first sends, the pace strict or not (`catch_up`): every one lands, 300 sends. Returns
/// the cluster, the run, and the last transaction's signature.
async fn hundred_resent(catch_up: bool) -> (SimCluster, RunOutcome, solana_signature::Signature) {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(200, unique_hash());
    for tx in &txs[..100] {
        cluster.set_fate(
            tx.signature,
            Fate {
                drop_sends: 1,
                ..Fate::default()
            },
        );
    }
    let last = txs[199].signature;
    let mut cfg = config(50.0);
    cfg.resend_interval = Duration::from_secs(2);
    cfg.catch_up = catch_up;
    let out = start(&cluster, cfg, txs).task.await.expect("engine");
    let c = out.snapshot.counts;
    assert_eq!((c.confirmed, c.failed, c.expired), (200, 0, 0));
    assert_eq!(c.sends, 300, "100 dropped sends resent once each");
    (cluster, out, last)
}

/// With the pace held strictly (`--no-catch-up`), resends take places of the pace: never more
/// than the pace in any second, resends included.
#[tokio::test(start_paused = true)]
async fn resends_go_through_the_same_pacer() {
    let (cluster, out, _) = hundred_resent(false).await;
    // Never more than the pace allows in any one second, resends included.
    let sends = cluster.sends();
    let last = sends.last().map_or(0, |s| s.at.as_secs());
    for sec in 0..=last {
        let in_sec = sends.iter().filter(|s| s.at.as_secs() == sec).count();
        assert!(in_sec <= 51, "second {sec}: {in_sec} sends at 50 tx/s");
    }
    let resent = out
        .snapshot
        .txs
        .iter()
        .filter(|t| t.sends == 2 && t.state == TxState::Confirmed)
        .count();
    assert_eq!(resent, 100);
}

/// With catch-up (the default), the places resends take are owed and made up: the first sends
/// behind them keep their schedule. In [`hundred_resent`] the last first send, due at 3.98 s,
/// leaves by 4.3 s (taking the resends' places it would leave at about 6 s), no faster than
/// the unstaked ceiling (194 a second: at most 20 streams within any 100 ms).
#[tokio::test(start_paused = true)]
async fn the_places_resends_take_are_made_up() {
    let (cluster, _, last) = hundred_resent(true).await;
    let sends = cluster.sends();
    let last_first = sends
        .iter()
        .filter(|s| s.signature == last)
        .map(|s| s.at)
        .min()
        .expect("the last transaction was sent");
    assert!(
        last_first <= Duration::from_millis(4_300),
        "the last first send, due at 3.98 s, left at {last_first:?}"
    );
    let busiest = most_within(&sends, Duration::from_millis(100));
    assert!(busiest <= 20, "{busiest} streams within 100 ms");
}

#[tokio::test(start_paused = true)]
async fn failed_transactions_are_final_and_never_resent() {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(10, unique_hash());
    cluster.set_fate(
        txs[3].signature,
        Fate {
            fails_with: Some("Error processing Instruction 0: custom program error: 0x1".into()),
            ..Fate::default()
        },
    );
    let h = start(&cluster, config(100.0), txs);
    let out = h.task.await.expect("engine");
    let s = &out.snapshot;
    assert_eq!((s.counts.confirmed, s.counts.failed), (9, 1));
    let failed = s.queue_row(Queue::Failed, 0).expect("one failed");
    assert_eq!(failed.id, 3);
    assert_eq!(failed.sends, 1);
    assert_eq!(
        failed.last_error.as_deref(),
        Some("Error processing Instruction 0: custom program error: 0x1")
    );
}

#[tokio::test(start_paused = true)]
async fn unlanded_transactions_expire_with_their_blockhash() {
    let cluster = SimCluster::new(leaders(1));
    let hash = unique_hash();
    let expires_at = cluster.height_now() + 25; // 10 s of slots
    cluster.add_blockhash(hash, expires_at);
    let txs = cluster.transactions(20, hash);
    for tx in &txs[10..] {
        cluster.set_fate(
            tx.signature,
            Fate {
                never_lands: true,
                ..Fate::default()
            },
        );
    }
    let mut cfg = config(100.0);
    cfg.resend_interval = Duration::from_secs(2);
    let h = start(&cluster, cfg, txs);
    let out = h.task.await.expect("engine");
    let s = &out.snapshot;
    assert_eq!((s.counts.confirmed, s.counts.expired), (10, 10));
    let expired = s.queue_row(Queue::Expired, 0).expect("expired row");
    // Sent at ~0 s, resent every 2 s until the blockhash died at ~10 s: about 5 sends.
    assert!(
        (4..=6).contains(&expired.sends),
        "sends = {}",
        expired.sends
    );
    assert_eq!(expired.last_valid_block_height, Some(expires_at));
    assert!(
        expired.last_valid_exact,
        "the cluster named it as its latest"
    );
    // Dead once the finalized height (the tip less 32 blocks) passes it: 58 slots ≈ 23.2 s,
    // then one status lookup with history.
    assert!(
        s.elapsed < Duration::from_secs(25),
        "elapsed {:?}",
        s.elapsed
    );
}

#[tokio::test(start_paused = true)]
async fn pause_stops_sends_and_rate_changes_apply() {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(400, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_secs(1)).await;
    h.commands.send(Command::Pause).expect("send");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = cluster.sends().len();
    assert_eq!(h.snapshots.borrow().run, RunState::Paused);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(cluster.sends().len(), before, "no sends while paused");
    h.commands
        .send(Command::SetRate(RateTarget::Fixed(50.0)))
        .expect("send");
    h.commands.send(Command::Resume).expect("send");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = cluster.sends().len() - before;
    assert!(
        (99..=101).contains(&after),
        "{after} sends in 2 s at 50 tx/s"
    );
    assert_eq!(h.snapshots.borrow().rate.target, RateTarget::Fixed(50.0));
    h.commands.send(Command::Stop).expect("send");
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.run, RunState::Stopped);
}

/// A leader whose budget for our address is spent by another sender on it (seven connections
/// flooding it; ours, the eighth, is read a share of the 200 streams a second it grants the
/// address): the 128 streams of our credit wait unread, then our opens wait, and those waiting
/// past the link's bound count as throttled and back the leader off, while the other leader
/// gets every send. Once the flood stops every transaction lands. Nothing is refused.
#[tokio::test(start_paused = true)]
async fn a_leader_whose_budget_is_taken_is_backed_off_and_others_still_get_sends() {
    let ls = leaders(2);
    let cluster = SimCluster::new(ls.clone());
    let a = cluster.addr_of(&ls[0]).expect("addr");
    let b = cluster.addr_of(&ls[1]).expect("addr");
    let flood = common::sim::flood(&cluster, sim::DEFAULT_SENDER_IP, a, 7, 1_000.0);
    let txs = cluster.transactions(1_000, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    let mut backed_off_at = None;
    for i in 0..80 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let snap = h.snapshots.borrow().clone();
        let leader_a = snap.leaders.iter().find(|l| l.identity == ls[0]);
        if leader_a.is_some_and(|l| matches!(l.conn, ConnState::BackingOff { .. })) {
            backed_off_at.get_or_insert(i);
        }
    }
    flood.abort();
    let backed_off_at = backed_off_at.expect("the leader was never backed off");
    let out = h.task.await.expect("engine");
    let c = out.snapshot.counts;
    eprintln!(
        "backed off {} ms in; streams {:?}, sends {}",
        backed_off_at * 100,
        c.streams,
        c.sends
    );
    assert_eq!(c.confirmed, 1_000);
    let totals = |l| {
        out.snapshot
            .leader_totals
            .iter()
            .find(|t| t.identity == l)
            .expect("in the report")
            .streams
    };
    let (to_a, to_b) = (totals(ls[0]), totals(ls[1]));
    assert!(to_a.throttled >= 1, "{to_a:?}");
    assert_eq!(to_b.throttled, 0, "{to_b:?}");
    assert_eq!(to_b.sent, to_b.accepted, "{to_b:?}");
    // Delayed, never refused: no stream was given up, and B delayed none of ours.
    assert!(cluster.sends().iter().all(|s| s.accepted));
    assert!(!cluster.sends().iter().any(|s| s.addr == b && s.delayed));
}

#[tokio::test(start_paused = true)]
async fn sends_follow_leader_rotation_with_fanout() {
    let ls = leaders(3);
    let cluster = SimCluster::new(ls.clone());
    let mut cfg = config(100.0);
    cfg.fanout = 1;
    let out = run(&cluster, cfg, 600).await;
    assert_eq!(out.snapshot.counts.confirmed, 600);
    // Every send went to the leader of its slot or the next one (the engine learns of a new
    // slot up to one poll late, so the leader of the slot before counts too).
    for s in cluster.sends() {
        let slot = 1_000 + s.at.as_millis() as u64 / 400;
        let ok = [slot - 1, slot, slot + 4]
            .map(|s| cluster.leader_at(s))
            .iter()
            .any(|l| cluster.addr_of(l) == Some(s.addr));
        assert!(ok, "send at {:?} to {} off-schedule", s.at, s.addr);
    }
    let per_leader: Vec<u64> = out
        .snapshot
        .leaders
        .iter()
        .map(|l| l.streams.sent)
        .collect();
    assert!(per_leader.iter().all(|n| *n > 100), "{per_leader:?}");
}

/// A cluster with 32-slot epochs (a local or test cluster) has the leader schedule only to the
/// end of the next epoch, and refuses the engine's usual 400-slot request: the engine asks for
/// less until it is answered (down to one turn), and sends follow the rotation as on any
/// cluster.
#[tokio::test(start_paused = true)]
async fn short_epochs_shrink_the_schedule_requests_until_the_node_answers() {
    let ls = leaders(3);
    let cluster = SimCluster::new(ls.clone());
    cluster.set_epoch_slots(32);
    let txs = cluster.transactions(600, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let health = h.snapshots.borrow().cluster.health.clone();
    assert_eq!(
        health, None,
        "a refused schedule range is not an unreachable RPC"
    );
    let out = tokio::time::timeout(Duration::from_secs(60), h.task)
        .await
        .expect("the run never ended: no leader schedule?")
        .expect("engine task");
    assert_eq!(out.snapshot.counts.confirmed, 600);
    let per_leader: Vec<u64> = out
        .snapshot
        .leader_totals
        .iter()
        .map(|l| l.streams.sent)
        .collect();
    assert_eq!(per_leader.len(), 3, "{per_leader:?}");
    assert!(per_leader.iter().all(|n| *n > 100), "{per_leader:?}");
}

#[tokio::test(start_paused = true)]
async fn rpc_outage_is_shown_and_survived() {
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(500, unique_hash());
    let h = start(&cluster, config(100.0), txs);
    tokio::time::sleep(Duration::from_secs(1)).await;
    cluster.set_rpc_down(true);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let health = h
        .snapshots
        .borrow()
        .cluster
        .health
        .clone()
        .unwrap_or_default();
    assert!(
        health.starts_with("RPC unreachable (") && health.ends_with("), retrying every 0.4 s"),
        "{health}"
    );
    assert!(health.contains(": connection refused"), "{health}");
    tokio::time::sleep(Duration::from_secs(8)).await;
    cluster.set_rpc_down(false);
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.counts.confirmed, 500);
    assert_eq!(out.snapshot.cluster.health, None);
}

#[tokio::test(start_paused = true)]
async fn max_rate_climbs_while_landings_keep_up() {
    let cluster = SimCluster::new(leaders(1));
    // Staked: no budget is assumed, the loop finds the path's capacity.
    cluster.set_staked(true);
    let mut cfg = config(1.0);
    cfg.rate = RateTarget::Max;
    let out = run(&cluster, cfg, 5_000).await;
    assert_eq!(out.snapshot.counts.confirmed, 5_000);
    // At a fixed 100 tx/s this takes 50 s; the closed loop must be much faster.
    assert!(
        out.snapshot.elapsed < Duration::from_secs(20),
        "{:?}",
        out.snapshot.elapsed
    );
    assert!(
        out.snapshot.rate.pacing > 300.0,
        "{}",
        out.snapshot.rate.pacing
    );
}

/// `--rate max`, unstaked, against a 4.0 leader, which reads 200 streams a second from our
/// address in 100 ms windows and delays the rest (never refusing them): the closed loop lands
/// at least 0.9 × that budget with at most 1.1 sends per landed transaction.
#[tokio::test(start_paused = true)]
async fn max_rate_settles_under_the_unstaked_budget() {
    let ls = leaders(1);
    let cluster = SimCluster::new(ls.clone());
    let addr = cluster.addr_of(&ls[0]).expect("addr");
    let mut cfg = config(1.0);
    cfg.rate = RateTarget::Max;
    let n = 5_000;
    let out = run(&cluster, cfg, n).await;
    let s = &out.snapshot;
    assert_eq!(s.counts.confirmed, n as u64);
    let per_landed = s.counts.sends as f64 / n as f64;
    // Landed per second over the time sends went out (the last landing trails by a slot or two).
    let last_send = cluster.sends().last().map(|x| x.at).expect("sends");
    let rate = n as f64 / last_send.as_secs_f64();
    let server = cluster.leader_counters(addr);
    eprintln!(
        "sends per landed {per_landed:.3}, {rate:.1} tx/s, throttled {}, leader {server:?}",
        s.counts.streams.throttled
    );
    assert_eq!(server.read_timeouts, 0);
    assert!(per_landed <= 1.1, "{per_landed:.3} sends per landed");
    assert!(rate >= 180.0, "{rate:.1} tx/s against a budget of 200");
}

/// `--rate max`, unstaked, against a leader that reads only 100 of our streams a second (its
/// budget for our address half spent by others): the assumed 200 is too much, and the leader
/// says so only by withholding credit (it refuses nothing). The loop reads the credit waits as
/// throttling and settles near what the leader reads, with no stream given up and at most 1.1
/// sends per landed transaction.
#[tokio::test(start_paused = true)]
async fn max_rate_settles_under_a_budget_it_learns_from_credit_waits() {
    let ls = leaders(1);
    let cluster = SimCluster::new(ls.clone());
    let addr = cluster.addr_of(&ls[0]).expect("addr");
    cluster.set_stream_limit(addr, Some(100));
    let mut cfg = config(1.0);
    cfg.rate = RateTarget::Max;
    let n = 3_000;
    let out = run(&cluster, cfg, n).await;
    let s = &out.snapshot;
    assert_eq!(s.counts.confirmed, n as u64);
    let per_landed = s.counts.sends as f64 / n as f64;
    let last_send = cluster.sends().last().map(|x| x.at).expect("sends");
    let rate = n as f64 / last_send.as_secs_f64();
    let server = cluster.leader_counters(addr);
    eprintln!(
        "sends per landed {per_landed:.3}, {rate:.1} tx/s, pacing {:.1}, streams {:?}, leader {server:?}",
        s.rate.pacing, s.counts.streams
    );
    assert_eq!(server.read_timeouts, 0);
    assert!(per_landed <= 1.1, "{per_landed:.3} sends per landed");
    assert!(rate >= 80.0, "{rate:.1} tx/s against a budget of 100");
    assert!(s.rate.pacing <= 110.0, "still pacing {:.1}", s.rate.pacing);
}

/// The run's tail: once everything has gone out, the last few statuses are asked every 100 ms,
/// so the run ends within that (plus an RPC answer) of the chain confirming its last landing —
/// not up to a poll later.
#[tokio::test(start_paused = true)]
async fn the_run_ends_soon_after_its_last_landing_is_confirmed() {
    for n in [7, 20, 33] {
        let (ended, confirmed_at) = run_to_last_confirmation(n, false).await;
        assert!(
            ended <= confirmed_at + Duration::from_millis(120),
            "{n} txs: ended {ended:?}, the last landing was confirmed at {confirmed_at:?}"
        );
    }
}

/// With the websocket's slot commitments, the run's last statuses are asked the moment the
/// last landing's slot is confirmed: the run ends a lookup's round trip after it, not at the
/// next tail poll (up to 100 ms later).
#[tokio::test(start_paused = true)]
async fn a_confirmed_slot_on_the_websocket_ends_the_run_without_waiting_for_a_poll() {
    for n in [7, 20, 33] {
        let (ended, confirmed_at) = run_to_last_confirmation(n, true).await;
        assert!(
            ended <= confirmed_at + Duration::from_millis(5),
            "{n} txs: ended {ended:?}, the last landing was confirmed at {confirmed_at:?}"
        );
    }
}

/// Runs `n` transactions at 100 tx/s, with the cluster's websocket feed when `feed`, and
/// returns when the run ended and when its last landing was confirmed, both from the
/// cluster's start. The engine starts mid-slot, so its tail polls fall between the slots'
/// starts, and its regular poll is slower than a slot, so that waiting for either would show.
async fn run_to_last_confirmation(n: usize, feed: bool) -> (Duration, Duration) {
    let cluster = SimCluster::new(leaders(1));
    let (t0, slot0) = (Instant::now(), cluster.slot_now());
    let txs = cluster.transactions(n, unique_hash());
    let sigs: Vec<_> = txs.iter().map(|t| t.signature).collect();
    let mut cfg = config(100.0);
    cfg.poll_interval = Duration::from_millis(900);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let engine = if feed {
        start_with_feed(&cluster, cfg, txs)
    } else {
        start(&cluster, cfg, txs)
    };
    let out = engine.task.await.expect("engine");
    assert_eq!(out.snapshot.counts.confirmed, n as u64);
    // The sim confirms a landing once the next slot has begun.
    let last = sigs
        .iter()
        .filter_map(|s| cluster.landed_slot(s))
        .max()
        .expect("landings");
    (Instant::now() - t0, sim::SLOT * (last + 1 - slot0) as u32)
}

#[tokio::test(start_paused = true)]
async fn a_resumed_run_never_resends_what_landed() {
    use txpace::engine::{Prior, TxFact};
    let cluster = SimCluster::new(leaders(1));
    let txs = cluster.transactions(100, unique_hash());
    let mut prior = vec![None; 100];
    for (i, p) in prior.iter_mut().enumerate().take(30) {
        *p = Some(Prior::Confirmed {
            slot: 900 + i as u64,
            commitment: txpace::config::Commitment::Confirmed,
            sends: 1,
        });
    }
    for (i, p) in prior.iter_mut().enumerate().take(60).skip(30) {
        *p = Some(Prior::Sent { sends: 2 });
        // Half of those landed after the interruption.
        if i < 45 {
            cluster.land(txs[i].signature);
        }
    }
    let sigs: Vec<_> = txs.iter().map(|t| t.signature).collect();
    let (facts_tx, mut facts) = tokio::sync::mpsc::unbounded_channel();
    let mut cfg = config(100.0);
    cfg.facts = Some(facts_tx);
    let h = engine::spawn_resumed(
        cfg,
        txs,
        prior,
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    );
    let out = h.task.await.expect("engine");
    assert_eq!(out.snapshot.counts.confirmed, 100);
    let sent: std::collections::HashSet<_> = cluster.sends().iter().map(|s| s.signature).collect();
    for (i, sig) in sigs.iter().enumerate() {
        let expect_sent = i >= 45;
        assert_eq!(sent.contains(sig), expect_sent, "transaction {i}");
    }
    // Journaled sends carry over: 30 confirmed × 1 and 30 sent × 2, then 15 resends and 40
    // first sends.
    assert_eq!(out.snapshot.counts.sends, 30 + 60 + 15 + 40);
    assert!(out.snapshot.txs.iter().take(30).all(|t| t.sends == 1));
    let mut confirmed_facts = 0;
    while let Ok(f) = facts.try_recv() {
        if let TxFact::Confirmed { id, .. } = f.fact {
            assert!(id >= 30, "already-confirmed {id} reported again");
            confirmed_facts += 1;
        }
    }
    assert_eq!(confirmed_facts, 70);
}

struct SimResigner(SimCluster);

impl txpace::engine::Resigner for SimResigner {
    fn resign(
        &self,
        id: u32,
        attempt: u32,
        blockhash: Hash,
    ) -> Option<(solana_signature::Signature, Arc<[u8]>)> {
        if attempt > 2 {
            return None;
        }
        let mut sig = [0u8; 64];
        sig[..4].copy_from_slice(&id.to_le_bytes());
        sig[4] = attempt as u8;
        sig[63] = 0x5a;
        let sig = solana_signature::Signature::from(sig);
        self.0.register(sig, blockhash);
        let mut wire = vec![1u8];
        wire.extend_from_slice(sig.as_ref());
        Some((sig, wire.into()))
    }
}

#[tokio::test(start_paused = true)]
async fn expired_transactions_are_resigned_when_the_engine_holds_the_signer() {
    use txpace::engine::TxFact;
    let cluster = SimCluster::new(leaders(1));
    let old = unique_hash();
    cluster.add_blockhash(old, cluster.height_now() + 10);
    let txs = cluster.transactions(20, old);
    for tx in &txs {
        cluster.set_fate(
            tx.signature,
            Fate {
                never_lands: true,
                ..Fate::default()
            },
        );
    }
    let loaded: Vec<_> = txs.iter().map(|t| t.signature).collect();
    let fresh = unique_hash();
    let (facts_tx, mut facts) = tokio::sync::mpsc::unbounded_channel();
    let mut cfg = config(100.0);
    cfg.facts = Some(facts_tx);
    cfg.resigner = Some(Arc::new(SimResigner(cluster.clone())));
    let h = start(&cluster, cfg, txs);
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.add_blockhash(fresh, cluster.height_now() + 150);
    let out = h.task.await.expect("engine");
    let s = &out.snapshot;
    assert_eq!((s.counts.confirmed, s.counts.expired), (20, 0));
    assert!(s.txs.iter().all(|t| t.resigns == 1), "each re-signed once");
    let (mut resigned, mut named) = (0, vec![0; 20]);
    while let Ok(f) = facts.try_recv() {
        if matches!(f.fact, TxFact::Resigned { attempt: 1, .. }) {
            resigned += 1;
        }
        // The journal names each transaction once, by the signature it was loaded with.
        if let Some(ident) = f.ident {
            let id = f.fact.id() as usize;
            assert_eq!(ident.signature, loaded[id], "transaction {id}");
            named[id] += 1;
        }
    }
    assert_eq!(resigned, 20);
    assert_eq!(named, vec![1; 20]);
}
