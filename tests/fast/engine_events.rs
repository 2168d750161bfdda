//! The engine's event stream (`--events`) and whole-run figures (report, metrics) agree with
//! the snapshots and with the simulated cluster, under tokio's paused clock.

use crate::common;

use std::collections::HashMap;

use common::sim::{config, leaders, start, unique_hash};
use tokio::sync::mpsc;
use txpace::engine::{
    RunEvent, RunOutcome,
    lifecycle::TxState,
    net::StreamOutcome,
    sim::SimCluster,
    snapshot::{RunState, StreamCounts},
};

/// One run of 400 transactions on three simulated leaders, one of which stops reading (so the
/// outcomes are not all alike: its opens stall once our credit is used up), with recent fees known and the event stream on:
/// the cluster, the run's outcome and every event it sent.
async fn run_with_events() -> (SimCluster, RunOutcome, Vec<RunEvent>) {
    let ls = leaders(3);
    let cluster = SimCluster::new(ls.clone());
    let throttler = cluster.addr_of(&ls[1]).expect("address");
    // It reads nothing (frozen): once the credit of our connection is used up, our opens
    // stall, and count as throttled.
    cluster.set_reading(throttler, false);
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
    (cluster, out, events)
}

/// The recent fees the cluster reported are in the snapshot, sorted, against the batch's price
/// (none set: 0).
#[tokio::test(start_paused = true)]
async fn recent_fees_are_in_the_snapshot_against_the_batch_price() {
    let (_cluster, out, _events) = run_with_events().await;
    let fees = out
        .snapshot
        .cluster
        .fees
        .as_ref()
        .expect("recent fees known");
    assert_eq!(*fees.recent, vec![0, 100, 200, 300]);
    assert_eq!(fees.batch_price, 0);
    assert_eq!(fees.rank(fees.batch_price), 25);
    assert!(fees.below_median());
}

/// Events arrive in time order; every state change arrives as an event, chained (each starts
/// where the last ended) and ending in the transaction's final state; nothing is re-signed.
#[tokio::test(start_paused = true)]
async fn state_events_chain_to_every_final_state() {
    let (_cluster, out, events) = run_with_events().await;
    let snap = &out.snapshot;
    let mut last_state: HashMap<u32, TxState> = HashMap::new();
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
            RunEvent::Send { .. } | RunEvent::Link { .. } => {}
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
}

/// Every finished stream arrives once, with its leader, send number and acknowledgement time,
/// and the per-leader tallies of the events equal the run's own.
#[tokio::test(start_paused = true)]
async fn stream_events_add_up_to_the_run_and_each_leader() {
    let (cluster, out, events) = run_with_events().await;
    let snap = &out.snapshot;
    let mut per_leader: HashMap<_, StreamCounts> = HashMap::new();
    let mut streams = 0u64;
    for e in &events {
        let RunEvent::Send {
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
        } = e
        else {
            continue;
        };
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
    let c = snap.counts.streams;
    let finished = c.accepted + c.failed();
    assert_eq!(streams, finished, "one event per finished stream");
    // The run ends once every transaction is final: streams still waiting for the frozen
    // leader's credit then have not finished.
    eprintln!("streams {c:?}");
    assert!(
        c.sent >= finished && c.sent - finished <= 20,
        "{} streams unfinished",
        c.sent - finished
    );
    assert!(c.throttled > 0, "the throttling leader throttled");
    assert_eq!(
        snap.acks.histogram.iter().sum::<u64>(),
        finished,
        "an acknowledgement time per finished stream"
    );
    for l in snap.leader_totals.iter() {
        let mine = per_leader.get(&l.identity).copied().unwrap_or_default();
        assert_eq!(
            (l.streams.accepted, l.streams.throttled, l.streams.failed()),
            (mine.accepted, mine.throttled, mine.failed()),
            "leader {}",
            l.identity
        );
        assert!(l.ack_ms_p50.is_some(), "leader {} answered", l.identity);
    }
}

/// Every landing names the schedule's leader of its slot, one it was sent to, and the leaders'
/// landed counts add up to the run's.
#[tokio::test(start_paused = true)]
async fn every_landing_names_its_slots_leader() {
    let (cluster, out, _events) = run_with_events().await;
    let snap = &out.snapshot;
    let landed: u64 = snap.leader_totals.iter().map(|l| l.landed).sum();
    assert_eq!(landed, snap.counts.confirmed + snap.counts.failed);
    for v in snap.txs.iter() {
        let slot = v.landed_slot.expect("every transaction landed");
        let leader = *v.landed_leader.clone().expect("its slot's leader is known");
        assert_eq!(leader, cluster.leader_at(slot), "tx {}", v.id);
        assert!(
            v.sent_to.contains(&leader),
            "tx {} landed with a leader it was sent to",
            v.id
        );
    }
}

/// A leader's link verdict goes to the event stream when it changes, with the figures behind
/// it: a leader behind a far link is named `far`, with its measured round trip, once.
#[tokio::test(start_paused = true)]
async fn a_far_leader_is_named_in_the_event_stream() {
    let ls = leaders(3);
    let cluster = SimCluster::new(ls.clone());
    let far = cluster.addr_of(&ls[1]).expect("address");
    cluster.set_link(far, Some(txpace::engine::sim_link::SimLink::new(320, 0.0)));
    let txs = cluster.transactions(200, unique_hash());
    let mut cfg = config(100.0);
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    cfg.events = Some(events_tx);
    let out = start(&cluster, cfg, txs).task.await.expect("engine");
    assert_eq!(out.snapshot.run, RunState::Done);
    let mut links = Vec::new();
    while let Ok(e) = events_rx.try_recv() {
        if let RunEvent::Link {
            leader, tpu, link, ..
        } = e
        {
            links.push((leader, tpu, link));
        }
    }
    // The loopback leaders have no link figures in the simulator: no verdict, no event.
    assert_eq!(links.len(), 1, "{links:?}");
    let (leader, tpu, link) = &links[0];
    assert_eq!((*leader, *tpu), (ls[1], Some(far)));
    assert_eq!(link.verdict, Some(txpace::engine::snapshot::Verdict::Far));
    assert_eq!(link.srtt_ms, Some(320));
    let line = serde_json::to_string(&RunEvent::Link {
        at_ms: 1,
        leader: *leader,
        tpu: *tpu,
        link: link.clone(),
    })
    .expect("serializes");
    assert!(line.contains(r#""event":"link""#), "{line}");
    assert!(line.contains(r#""verdict":"far""#), "{line}");
    assert!(line.contains(r#""srtt_ms":320"#), "{line}");
}
