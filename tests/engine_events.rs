//! The engine's event stream (`--events`) and whole-run figures (report, metrics) agree with
//! the snapshots and with the simulated cluster, under tokio's paused clock.

mod common;

use std::collections::HashMap;

use common::sim::{config, leaders, start, unique_hash};
use tokio::sync::mpsc;
use txpace::engine::{
    RunEvent,
    lifecycle::TxState,
    net::StreamOutcome,
    sim::SimCluster,
    snapshot::{RunState, StreamCounts},
};

/// Every state change arrives as an event, chained (each starts where the last ended) and
/// ending in the final state; every finished stream arrives once, with its leader, send
/// number and acknowledgement time; per-leader tallies of the events equal the run's own; and
/// every landing names the schedule's leader of its slot, one it was sent to; and the recent
/// fees the cluster reported are in the snapshot, against the batch's price.
#[tokio::test(start_paused = true)]
async fn events_and_leader_figures_match_the_run_and_the_cluster() {
    let ls = leaders(3);
    let cluster = SimCluster::new(ls.clone());
    // One leader throttles part of what it gets, so the outcomes are not all alike.
    let throttler = cluster.addr_of(&ls[1]).expect("address");
    cluster.set_stream_limit(throttler, Some(40));
    cluster.set_recent_fees(vec![300, 100, 200, 0]);
    let txs = cluster.transactions(400, unique_hash());
    let mut cfg = config(100.0);
    cfg.fee_accounts = vec![solana_pubkey::Pubkey::new_unique()];
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    cfg.events = Some(events_tx);
    let out = start(&cluster, cfg, txs).task.await.expect("engine");
    assert_eq!(out.snapshot.run, RunState::Done);
    let mut events = Vec::new();
    while let Ok(e) = events_rx.try_recv() {
        events.push(e);
    }

    let snap = &out.snapshot;
    // Recent fees were watched: sorted, against the batch's median price (none set: 0).
    let fees = snap.cluster.fees.as_ref().expect("recent fees known");
    assert_eq!(*fees.recent, vec![0, 100, 200, 300]);
    assert_eq!(fees.batch_price, 0);
    assert_eq!(fees.rank(fees.batch_price), 25);
    assert!(fees.below_median());
    let mut last_state: HashMap<u32, TxState> = HashMap::new();
    let mut per_leader: HashMap<_, StreamCounts> = HashMap::new();
    let mut streams = 0u64;
    let mut at = 0;
    for e in &events {
        assert!(e.at_ms() >= at, "events in time order");
        at = e.at_ms();
        match e {
            RunEvent::State {
                id,
                signature,
                from,
                to,
                ..
            } => {
                let prev = last_state.insert(*id, *to).unwrap_or(TxState::Queued);
                assert_eq!(
                    *from, prev,
                    "tx {id}: a state change starts where the last ended"
                );
                assert_eq!(*signature, snap.txs[*id as usize].signature);
            }
            RunEvent::Send {
                id,
                send,
                leader,
                tpu,
                sent_ms,
                ack_ms,
                at_ms,
                outcome,
                error,
                ..
            } => {
                streams += 1;
                let view = &snap.txs[*id as usize];
                assert!(
                    *send >= 1 && *send <= view.sends,
                    "send {send} of {}",
                    view.sends
                );
                assert_eq!(sent_ms + ack_ms, *at_ms);
                assert_eq!(Some(*tpu), cluster.addr_of(leader));
                assert_eq!(error.is_none(), *outcome == StreamOutcome::Accepted);
                per_leader.entry(*leader).or_default().record(*outcome);
            }
            RunEvent::Resigned { .. } => panic!("nothing is re-signed without a re-signer"),
        }
    }
    for v in snap.txs.iter() {
        assert_eq!(
            last_state.get(&v.id),
            Some(&v.state),
            "tx {}'s last event",
            v.id
        );
    }
    let c = snap.counts.streams;
    assert_eq!(streams, c.sent, "one event per stream");
    assert_eq!(c.sent, c.accepted + c.failed(), "every stream finished");
    assert!(c.throttled > 0, "the throttling leader throttled");
    assert_eq!(
        snap.acks.histogram.iter().sum::<u64>(),
        c.sent,
        "an acknowledgement time per stream"
    );

    let mut landed = 0;
    for l in snap.leader_totals.iter() {
        let mine = per_leader.get(&l.identity).copied().unwrap_or_default();
        assert_eq!(
            (l.streams.accepted, l.streams.throttled, l.streams.failed()),
            (mine.accepted, mine.throttled, mine.failed()),
            "leader {}",
            l.identity
        );
        assert!(l.ack_ms_p50.is_some(), "leader {} answered", l.identity);
        landed += l.landed;
    }
    assert_eq!(landed, snap.counts.confirmed + snap.counts.failed);
    for v in snap.txs.iter() {
        let slot = v.landed_slot.expect("every transaction landed");
        let leader = v.landed_leader.expect("its slot's leader is known");
        assert_eq!(leader, cluster.leader_at(slot), "tx {}", v.id);
        assert!(
            v.sent_to.contains(&leader),
            "tx {} landed with a leader it was sent to",
            v.id
        );
    }
}
