//! The streams of each send: one per target leader, those of one wake-up written together in
//! one spawned task (see [`SEND_TICK`](super::SEND_TICK)), and each outcome fed back to the
//! leaders' figures, the transaction's send log, the closed loop and the outage's account.

use std::{borrow::Cow, time::Duration};

use futures::{StreamExt, future::BoxFuture, stream::FuturesUnordered};
use tokio::time::Instant;

use super::{CATCH_UP_AFTER, Dispatcher, Hold, Round, SENDS_PER_WAKE, Sent, queue::Picked};
use crate::engine::{
    follow::follow,
    leaders::{LeaderBook, Target},
    net::{Handoff, StreamOutcome},
    store::{StreamResult, TxStore},
    update::{SendDone, Update},
};

impl Dispatcher {
    /// Sends every transaction whose pacer slot has come, up to [`SENDS_PER_WAKE`]: when the
    /// task wakes late (timer granularity, a busy machine), the sends it owes go out in this
    /// turn instead of one per loop turn, which capped the pace near 650 tx/s.
    pub(in crate::engine) fn send_due(
        &mut self,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        hold: &Hold,
    ) -> Vec<Sent> {
        // Before any send goes to a leader whose turn has just begun (see `handover`).
        if let Some(leader) = leaders.take_handover()
            && !leaders.link_full(&leader, Instant::now())
        {
            self.hand_over(leader);
        }
        self.release_missed(leaders, Instant::now());
        leaders.set_spread(self.spreads());
        let mut streams = Vec::new();
        let mut sent = self.send_copies(store, leaders, hold, &mut streams);
        if let Some(s) = sent.last() {
            self.last_sent_at = Some(s.at);
        }
        for _ in 0..SENDS_PER_WAKE {
            match self.send_next(store, leaders, hold, &mut streams) {
                Some(s) => {
                    self.last_sent_at = Some(s.at);
                    sent.push(s);
                }
                None => break,
            }
            if self.pacer.next_at() > Instant::now() {
                break;
            }
        }
        let ahead = self.send_ahead(store, leaders, hold, &mut streams);
        if let Some(s) = ahead.last() {
            self.last_sent_at = Some(s.at);
        }
        sent.extend(ahead);
        if !streams.is_empty() {
            // One task writes every stream of this wake-up before the connection's driver runs,
            // which then packs them into as few datagrams as fit; each stream's outcome is
            // reported as soon as it is known.
            let updates = self.updates.clone();
            tokio::spawn(async move {
                let mut streams: FuturesUnordered<_> = streams.into_iter().collect();
                while let Some(done) = streams.next().await {
                    let _ = updates.send(done);
                }
            });
        }
        sent
    }

    /// Sends the next transaction, its streams added to `streams`; `None` when there was
    /// nothing to send or nowhere to send it.
    fn send_next(
        &mut self,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        hold: &Hold,
        streams: &mut Vec<BoxFuture<'static, Update>>,
    ) -> Option<Sent> {
        let now = Instant::now();
        let targets = leaders.targets(now);
        if targets.is_empty() {
            return None;
        }
        let (id, picked) = self.pick(now, store, hold, &targets, leaders)?;
        // A resend leaves out a leader that holds it for its turn (see `holders`).
        let fewer = store.record(id).and_then(|rec| {
            let lasts = |blocks| (hold.lasts)(rec, blocks);
            match self
                .holders
                .resend_targets(id, &targets, leaders, now, lasts)
            {
                Some(Cow::Owned(fewer)) => Some(fewer),
                _ => None,
            }
        });
        let targets = fewer.unwrap_or(targets);
        let sent = self.launch(id, &targets, now, store, leaders, streams)?;
        self.note_missed(id, &targets, leaders);
        self.pacer.consume(now);
        // A resend took a first send's place: that place is owed, so that transactions that
        // did not land (a dark leader's, a lossy link's) do not hold back the ones behind them.
        // Behind a dark node on `txpace-bench wan`'s `mainnet-dark` 109 resends put the last
        // first send 0.94 s past its due time. Not during an outage (a hold): what it held up
        // is owed once it ends, the probes' places with it.
        if picked == Picked::Resend && self.held.is_none() {
            self.pacer.owe_place();
        }
        if let Some(held) = self.held.as_mut() {
            held.sent(now);
        }
        // What is owed never exceeds what is left to send.
        self.pacer.cap_owed(self.fresh.len());
        self.resend_later(id, now);
        Some(sent)
    }

    /// Sends `id` to `targets`, one stream each added to `streams`: its send is logged and
    /// each stream's outcome will come back as an [`Update::SendDone`]. `None` when the store
    /// does not take the send. The pace and the next resend are the caller's.
    pub(super) fn launch(
        &mut self,
        id: u32,
        targets: &[Target],
        now: Instant,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        streams: &mut Vec<BoxFuture<'static, Update>>,
    ) -> Option<Sent> {
        let slot = Some(leaders.slot()).filter(|&s| s > 0);
        let first_log = store.record_send(id, now, slot, targets).ok()?;
        let sends = store.view(id).map_or(0, |v| v.sends);
        let sent = Sent { id, sends, at: now };
        log::trace!(
            "send {id} (its {sends}) at slot {slot:?} to {:?}",
            targets.iter().map(|(_, a)| *a).collect::<Vec<_>>()
        );
        let Some(wire) = store.record(id).map(|r| r.wire.clone()) else {
            return Some(sent);
        };
        let stream_count = targets.iter().filter(|(_, a)| a.is_some()).count();
        if stream_count > 0 {
            let round = Round {
                left: stream_count,
                accepted: false,
                leaders: targets
                    .iter()
                    .filter(|(_, a)| a.is_some())
                    .map(|(l, _)| *l)
                    .collect(),
            };
            self.rounds.insert((id, first_log), round);
        }
        for (i, &(leader, addr)) in targets.iter().enumerate() {
            let Some(addr) = addr else { continue };
            let handoff = Handoff::default();
            leaders.on_sent(leader, addr, handoff.clone());
            store.record_stream_sent();
            let send = self.transport.send(addr, wire.clone(), handoff.clone());
            let timeout = self.send_timeout;
            let deadline = leaders.timing(addr).stream_deadline();
            let batch = self.batch;
            let handed = handoff.clone();
            streams.push(Box::pin(async move {
                let result = follow(send, handed, timeout, deadline).await;
                Update::SendDone(SendDone {
                    batch,
                    id,
                    round: first_log,
                    log_index: first_log + i,
                    send: sends,
                    leader,
                    addr,
                    sent_at: now,
                    handed_at: handoff.at(),
                    credit_wait: handoff.credit_wait(),
                    result,
                })
            }));
        }
        Some(sent)
    }

    /// One stream of a send finished: the leader's figures, the transaction's send log, the
    /// send's round, and the closed loop (throttling) hear of it. Returns how long the leader
    /// took to answer, for the meter.
    pub(in crate::engine) fn on_send_done(
        &mut self,
        done: SendDone,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        now: Instant,
    ) -> Duration {
        let SendDone {
            batch: _,
            id,
            round,
            log_index,
            send,
            leader,
            addr,
            sent_at,
            handed_at,
            credit_wait,
            result,
        } = done;
        // On the wire from the hand-off: waiting for a connection or stream credit before it
        // is the transport's time, not the leader's.
        let on_wire = handed_at.unwrap_or(sent_at);
        let took = now.saturating_duration_since(on_wire);
        // Our side of the stream: to its hand-off (or to now, never handed), less the wait for
        // credit, which is the leader's.
        let own = handed_at
            .unwrap_or(now)
            .saturating_duration_since(sent_at)
            .saturating_sub(credit_wait.unwrap_or_default());
        leaders.on_own_wait(addr, own, now);
        let outcome = leaders.on_result(leader, addr, &result, took, now);
        leaders.on_credit(leader, addr, handed_at.is_some(), credit_wait, now);
        let accepted = (outcome == StreamOutcome::Accepted).then_some(now);
        store.note_stream(id, handed_at, accepted);
        if accepted.is_some() {
            self.holders.taken(id, leader, leaders);
        }
        // Accepted, but only after the leader withheld credit for longer than its reading at
        // its budget's pace explains: it is behind on our streams — a 4.0 leader's throttling,
        // which refuses nothing.
        let behind = outcome == StreamOutcome::Accepted
            && credit_wait.is_some_and(|w| leaders.on_credit_wait(addr, w, now));
        let error = result.as_ref().err().map(|e| e.to_string());
        log::trace!(
            "stream of send {id} to {addr}: {outcome:?} {took:?} on the wire, {own:?} ours, credit {credit_wait:?}"
        );
        if let Some(err) = &error {
            log::debug!("send to {leader} at {addr} failed: {err}");
        }
        let stream = StreamResult {
            id,
            log_index,
            send,
            leader,
            addr,
            sent_at: on_wire,
            took,
            outcome,
            error: error.as_deref(),
        };
        store.record_stream_result(stream, now);
        self.on_round_result(id, round, result.is_ok(), store);
        if let Some(m) = self.maxrate.as_mut()
            && let Some(rate) = m.on_stream(outcome == StreamOutcome::Throttled || behind)
        {
            self.pacer.set_rate(rate, now);
        }
        match outcome {
            // Throttled, or behind on our streams: the leader takes no more than this, and
            // catching up would only be throttled or queue more streams it has not read.
            _ if behind || outcome == StreamOutcome::Throttled => {
                self.pacer.forgive();
                if let Some(held) = self.held.as_mut() {
                    held.throttled = true;
                }
            }
            // A leader takes sends again: the outage is over, and its time is owed.
            StreamOutcome::Accepted => {
                if let Some(held) = self.held.take() {
                    let throttled = held.throttled;
                    let held = held.total(now);
                    // A hold within the pacer's own slack is made up by the pacer itself. At
                    // 500 ms (before 96421c9), the quarter second the pace waited at a run's
                    // start while every leader was 320 ms away (a first handshake and its
                    // stream credit take two round trips, longer than the first connection's
                    // riders last: see `engine::liveness`) was never made up, and
                    // `txpace-bench wan`'s `hostile` runs ended that much later.
                    if !throttled && held > self.pacer.slack() {
                        self.pacer.owe_after(held, now + CATCH_UP_AFTER);
                        self.pacer.cap_owed(self.fresh.len());
                    }
                }
            }
            _ => {}
        }
        took
    }

    /// When this was the send's last stream and none was accepted, the send reached no leader.
    fn on_round_result(&mut self, id: u32, round: usize, accepted: bool, store: &mut TxStore) {
        let Some(r) = self.rounds.get_mut(&(id, round)) else {
            return;
        };
        r.left -= 1;
        r.accepted |= accepted;
        if r.left == 0 {
            let reached = r.accepted;
            self.rounds.remove(&(id, round));
            if !reached {
                store.record_failed_send();
            }
        }
    }
}
