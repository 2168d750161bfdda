//! One engine host running batches in turn (a deploy's phases), on the simulated cluster under
//! tokio's paused clock: each batch is a run of its own, and what the engine knows of the
//! cluster carries over.

use crate::common;

use std::{sync::Arc, time::Duration};

use common::sim::{PanickingTransport, TRANSPORT_PANIC, config, leaders, start, unique_hash};
use tokio::time::Instant;
use txpace::engine::{
    Batch, EngineHost, RunOutcome, lifecycle::TxState, sim::SimCluster, snapshot::RunState,
    spawn_host,
};
use txpace::source::LoadedTx;

fn host(cluster: &SimCluster, rate: f64) -> EngineHost {
    spawn_host(
        config(rate),
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    )
}

fn batch(txs: Vec<LoadedTx>) -> Batch {
    Batch {
        txs,
        resigner: None,
        events: None,
        fee_accounts: Vec::new(),
    }
}

async fn run(host: &EngineHost, txs: Vec<LoadedTx>) -> RunOutcome {
    host.run(batch(txs)).task.await.expect("batch task")
}

/// When the first stream after `since` (sim time) went out.
fn first_send_after(cluster: &SimCluster, since: Duration) -> Duration {
    cluster
        .sends()
        .iter()
        .map(|s| s.at)
        .filter(|at| *at >= since)
        .min()
        .expect("a send after the hand-over")
}

/// Two batches in turn: each outcome holds only its own transactions, counts and leaders'
/// figures, and both land in full.
#[tokio::test(start_paused = true)]
async fn batches_run_in_turn_each_with_its_own_figures() {
    let cluster = SimCluster::new(leaders(3));
    let host = host(&cluster, 100.0);
    let a = cluster.transactions(50, unique_hash());
    let b = cluster.transactions(80, unique_hash());
    let b_sigs: Vec<_> = b.iter().map(|t| t.signature).collect();

    let first = run(&host, a).await;
    let second = run(&host, b).await;

    for (out, n) in [(&first, 50), (&second, 80)] {
        let s = &out.snapshot;
        assert_eq!(s.run, RunState::Done);
        assert_eq!((s.counts.total, s.counts.confirmed), (n, n));
        assert_eq!(s.counts.sends, n, "one send each");
        let leader_streams: u64 = s.leader_totals.iter().map(|l| l.streams.sent).sum();
        assert_eq!(leader_streams, s.counts.streams.sent);
        let landed: u64 = s.leader_totals.iter().map(|l| l.landed).sum();
        assert_eq!(landed, n, "landings credited within the batch");
        assert_eq!(out.commitments.len(), n as usize);
    }
    let sigs: Vec<_> = second.snapshot.txs.iter().map(|v| v.signature).collect();
    assert_eq!(sigs, b_sigs);
}

/// With RPC answers taking 200 ms, a fresh engine sends its first transaction only once it has
/// learned the slot and the leader schedule; a host's next batch sends at once.
#[tokio::test(start_paused = true)]
async fn a_batch_starts_sending_without_learning_the_cluster_again() {
    let cluster = SimCluster::new(leaders(3));
    cluster.set_rpc_latency(Duration::from_millis(200));
    let t0 = Instant::now();

    let fresh = start(
        &cluster,
        config(100.0),
        cluster.transactions(5, unique_hash()),
    );
    let fresh_out = fresh.task.await.expect("engine");
    assert_eq!(fresh_out.snapshot.counts.confirmed, 5);
    let fresh_wait = first_send_after(&cluster, Duration::ZERO);
    assert!(
        fresh_wait >= Duration::from_millis(400),
        "a fresh engine sent after {fresh_wait:?}"
    );

    let host = host(&cluster, 100.0);
    let out = run(&host, cluster.transactions(5, unique_hash())).await;
    assert_eq!(out.snapshot.counts.confirmed, 5);
    let handed = Instant::now() - t0;
    let out = run(&host, cluster.transactions(5, unique_hash())).await;
    assert_eq!(out.snapshot.counts.confirmed, 5);
    let waited = first_send_after(&cluster, handed) - handed;
    assert!(
        waited <= Duration::from_millis(20),
        "the host's second batch waited {waited:?} for its first send"
    );
}

/// A leader whose streams hang through the end of one batch answers (by timing out) while the
/// next runs: those answers name the first batch's transactions and are left out of the second
/// batch's transactions, counts and leaders' figures.
#[tokio::test(start_paused = true)]
async fn a_late_stream_of_the_last_batch_is_left_out() {
    let ids = leaders(3);
    let cluster = SimCluster::new(ids.clone());
    let hung = cluster.addr_of(&ids[1]).expect("an address");
    cluster.set_hanging(hung, true);
    let host = host(&cluster, 100.0);
    let first = run(&host, cluster.transactions(100, unique_hash())).await;
    assert_eq!(first.snapshot.counts.confirmed, 100);
    cluster.set_hanging(hung, false);

    let second = run(&host, cluster.transactions(1_000, unique_hash())).await;
    let s = &second.snapshot;
    assert_eq!(s.counts.confirmed, 1_000);
    // The first batch's streams to the hung leader time out 5 s on, inside the second batch.
    assert!(s.elapsed > Duration::from_secs(6), "{:?}", s.elapsed);
    assert_eq!(s.counts.streams.timeout, 0, "{:?}", s.counts.streams);
    let logged: usize = s.txs.iter().map(|v| v.send_log.len()).sum();
    assert_eq!(logged as u64, s.counts.streams.sent);
    assert!(
        s.txs
            .iter()
            .all(|v| v.state == TxState::Confirmed && v.send_log.iter().all(|e| e.error.is_none())),
        "a transaction of the second batch carries a stream of the first"
    );
}

/// The engine task panics during a batch: the batch's outcome and last picture say FAILED with
/// the panic's message, and keep the figures it had.
#[tokio::test(start_paused = true)]
async fn a_crash_during_a_batch_is_its_outcome() {
    let cluster = SimCluster::new(leaders(1));
    let host = spawn_host(
        config(100.0),
        Arc::new(cluster.clone()),
        Arc::new(PanickingTransport::new(&cluster)),
        None,
    );
    let handle = host.run(batch(cluster.transactions(1_000, unique_hash())));
    let snapshots = handle.snapshots.clone();
    let out = handle
        .task
        .await
        .expect("the batch's task itself never fails");
    let expect = RunState::Failed(format!("the engine crashed: {TRANSPORT_PANIC}"));
    assert_eq!(out.snapshot.run, expect);
    assert_eq!(snapshots.borrow().run, expect);
    assert!(out.snapshot.counts.sends > 0, "the last figures are kept");
}
