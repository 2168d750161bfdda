//! Deciding what to send when: the pacer (and the closed-loop [`MaxRate`] above it) sets the
//! pace, never-sent transactions go in input order, resends come due on a heap, and each send
//! goes to the leaders' current targets as one stream per leader, off the loop: the streams of
//! one wake-up together in one spawned task, so they are all written before QUIC sends (see
//! [`SEND_TICK`]).

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap, VecDeque},
    sync::Arc,
    time::Duration,
};

use futures::{StreamExt, future::BoxFuture, stream::FuturesUnordered};
use tokio::{sync::mpsc, time::Instant};

use super::{
    config::EngineConfig,
    leaders::LeaderBook,
    lifecycle::TxState,
    maxrate::{self, MaxRate},
    net::{Handoff, SendError, StreamOutcome, Transport},
    pacer::Pacer,
    snapshot::RateTarget,
    store::{StreamResult, TxRecord, TxStore},
    update::{SendDone, Update},
};

/// Sends made in one wake-up at most; with the pacer's 50 ms catch-up this bounds a burst.
const SENDS_PER_WAKE: usize = 64;
/// Sends fall due at most this often: those due in between go out together on the next
/// wake-up (the pacer keeps its deadlines, so the rate holds). Their streams leave in one
/// datagram, acknowledged in one: at 100 tx/s that halves the packets each way and the
/// engine's wake-ups, which were most of its CPU time, for 10 ms more on the wire on average.
/// Well under the 100 ms windows a leader counts a peer's streams in.
const SEND_TICK: Duration = Duration::from_millis(20);
/// Never-sent transactions looked at per pick, at most, past those whose blockhash the node
/// does not take now (they keep their place): bounds the work of a pick on a long queue.
const FRESH_SCAN: usize = 256;
/// How soon queued transactions the node refused (blockhash not taken now) are looked at again.
const REFUSED_RECHECK: Duration = Duration::from_millis(100);
/// The shortest hold that counts as an outage: shorter ones are a first connection's round trip
/// or a leader's brief backoff, and making them up would only flicker "catching up".
const MIN_OUTAGE: Duration = Duration::from_millis(500);
/// How much faster than the pace an outage's owed sends are made up (see [`Pacer::owe`]), at
/// most: twice the pace, so the outage's backlog clears in as long as the outage lasted.
const CATCH_UP: f64 = 2.0;

/// What holds a send back, as the rest of the engine knows it.
pub(super) struct Hold<'a> {
    /// The transaction's blockhash is no longer taken: a send would be wasted.
    pub pointless: &'a dyn Fn(&TxRecord) -> bool,
    /// The RPC is out, so nobody knows whether earlier sends landed.
    pub rpc_down: bool,
}

/// A send that went out.
pub(super) struct Sent {
    pub id: u32,
    /// How many times it has been sent now.
    pub sends: u32,
    pub at: Instant,
}

/// Owns the pace and the send queues; the loop asks it when to wake and what went out.
pub(super) struct Dispatcher {
    /// The batch whose transactions it sends (see `host`); its streams carry it back.
    batch: u32,
    transport: Arc<dyn Transport>,
    updates: mpsc::UnboundedSender<Update>,
    send_timeout: Duration,
    resend_interval: Duration,
    target: RateTarget,
    pacer: Pacer,
    /// The closed loop, when the target is [`RateTarget::Max`].
    maxrate: Option<MaxRate>,
    /// Whether an outage's owed sends are made up (`--no-catch-up` says not).
    catch_up: bool,
    /// The leaders give us an unstaked peer's budget (as the last control step heard).
    unstaked: bool,
    /// Since when sends have been due with no leader to take them, and whether a leader
    /// throttled us meanwhile (then nothing is owed: it told us its limit). It ends when a
    /// leader accepts a stream again, not when a probe goes out: the probes of a long outage
    /// must not each start a catch-up that nothing takes.
    held: Option<(Instant, bool)>,
    /// Until when the queue's head is not looked at again: the node took none of its
    /// blockhashes at the last look.
    refused_until: Option<Instant>,
    /// Never-sent transactions, in input order.
    fresh: VecDeque<u32>,
    /// (due, id): the next resend of each sent, unfinished transaction.
    resends: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Streams of each transaction send still in flight, and whether one was accepted, by
    /// (id, round): a send reached no leader only when every stream failed.
    rounds: HashMap<(u32, usize), (usize, bool)>,
    /// The last wake-up that sent (see [`SEND_TICK`]).
    last_sent_at: Option<Instant>,
}

impl Dispatcher {
    pub(super) fn new(
        cfg: &EngineConfig,
        txs: usize,
        transport: Arc<dyn Transport>,
        updates: mpsc::UnboundedSender<Update>,
        start: Instant,
        batch: u32,
    ) -> Self {
        let (rate, maxrate) = match cfg.rate {
            RateTarget::Fixed(r) => (r, None),
            RateTarget::Max => (maxrate::START_RATE, Some(MaxRate::default())),
        };
        let mut dispatcher = Self {
            batch,
            transport,
            updates,
            send_timeout: cfg.send_timeout,
            resend_interval: cfg.resend_interval,
            target: cfg.rate,
            pacer: Pacer::new(rate, start),
            maxrate,
            catch_up: cfg.catch_up,
            unstaked: false,
            held: None,
            refused_until: None,
            fresh: (0..txs as u32).collect(),
            resends: BinaryHeap::new(),
            rounds: HashMap::new(),
            last_sent_at: None,
        };
        dispatcher.apply_catch_up();
        dispatcher
    }

    /// Every transaction has gone out at least once: what is left is waiting on the chain.
    pub(super) fn all_sent(&self) -> bool {
        self.fresh.is_empty()
    }

    /// The rate asked for.
    pub(super) fn target(&self) -> RateTarget {
        self.target
    }

    /// The rate the pacer is sending at: above a fixed target while an outage is made up.
    pub(super) fn pacing(&self) -> f64 {
        self.pacer.pacing()
    }

    /// Sends owed to an outage and not made up yet.
    pub(super) fn owed_sends(&self) -> u64 {
        self.pacer.owed_sends()
    }

    pub(super) fn set_target(&mut self, target: RateTarget, now: Instant) {
        match target {
            RateTarget::Fixed(r) => {
                let r = if r.is_finite() { r.max(1.0) } else { 1.0 };
                self.target = RateTarget::Fixed(r);
                self.maxrate = None;
                self.pacer.set_rate(r, now);
                self.apply_catch_up();
                log::info!("target rate set to {r} tx/s");
            }
            RateTarget::Max => {
                self.target = RateTarget::Max;
                let m = MaxRate::default();
                self.pacer.set_rate(m.rate(), now);
                self.maxrate = Some(m);
                self.apply_catch_up();
                log::info!("target rate set to max (closed loop)");
            }
        }
    }

    /// Starts pacing afresh from `now` (after a pause, so no catch-up burst follows; a pause is
    /// the user's, not an outage, so nothing is owed for it).
    pub(super) fn restart(&mut self, now: Instant) {
        self.pacer.restart(now);
        self.held = None;
    }

    /// One closed-loop step: `achieved` is the send rate over the last period alone, and
    /// `unconfirmed` the sent transactions not yet final. `unstaked_quic`: the leaders are
    /// known to give us an unstaked peer's budget, which caps the search from the start.
    pub(super) fn control(
        &mut self,
        unconfirmed: u64,
        achieved: f64,
        unstaked_quic: bool,
        now: Instant,
    ) {
        if let Some(m) = self.maxrate.as_mut() {
            if unstaked_quic {
                m.assume_ceiling(maxrate::UNSTAKED_BUDGET);
            }
            let rate = m.evaluate(unconfirmed, achieved);
            self.pacer.set_rate(rate, now);
        }
        self.unstaked = unstaked_quic;
        self.apply_catch_up();
    }

    /// Tells the pacer how much faster than the pace owed sends are made up now: not at all
    /// under `--no-catch-up` or the closed loop (which sends as fast as the leaders take
    /// anyway), else [`CATCH_UP`] — for an unstaked peer no faster than the plateau the closed
    /// loop keeps under a leader's budget, above which catching up would only buy refused
    /// streams.
    fn apply_catch_up(&mut self) {
        let factor = if !self.catch_up || self.maxrate.is_some() {
            1.0
        } else if self.unstaked {
            let ceiling = maxrate::UNSTAKED_BUDGET * maxrate::PLATEAU;
            CATCH_UP.min(ceiling / self.pacer.rate())
        } else {
            CATCH_UP
        };
        self.pacer.set_catch_up(factor);
    }

    /// `id` was sent by an earlier run: it is due again one resend interval from now.
    pub(super) fn resend_later(&mut self, id: u32, now: Instant) {
        self.resends.push(Reverse((now + self.resend_interval, id)));
    }

    /// `id` was signed again: it goes first, as a new transaction.
    pub(super) fn send_first(&mut self, id: u32) {
        self.fresh.push_front(id);
    }

    /// Forgets never-sent transactions that are no longer queued (final from the journal).
    pub(super) fn keep_queued(&mut self, store: &TxStore) {
        self.fresh.retain(|id| {
            store
                .record(*id)
                .is_some_and(|r| r.state == TxState::Queued)
        });
    }

    /// When the next send is due, or `None` when there is nothing to send or nowhere to send.
    pub(super) fn next_send_at(
        &mut self,
        now: Instant,
        store: &TxStore,
        leaders: &LeaderBook,
    ) -> Option<Instant> {
        let work_at = if self.fresh.is_empty() {
            self.next_resend_due(store)
        } else {
            // Queued transactions the node refused a moment ago are looked at again shortly,
            // not on every turn of the loop; a due resend goes meanwhile.
            match self.refused_until.filter(|t| *t > now) {
                None => Some(now),
                Some(t) => Some(self.next_resend_due(store).map_or(t, |r| r.min(t))),
            }
        }?;
        let due = work_at.max(self.pacer.next_at());
        if leaders.nowhere_to_send(now) {
            // Sends are due and no leader takes them: an outage, owed once it ends.
            if due <= now {
                self.held.get_or_insert((now, false));
            }
            // Nowhere to send: wake when a backoff ends (or on the next update).
            let until = leaders.next_backoff_end(now)?;
            return Some(until.max(due));
        }
        Some(self.last_sent_at.map_or(due, |t| due.max(t + SEND_TICK)))
    }

    /// Drops stale heap entries and returns the earliest due resend.
    fn next_resend_due(&mut self, store: &TxStore) -> Option<Instant> {
        while let Some(Reverse((due, id))) = self.resends.peek().copied() {
            let live = store.record(id).is_some_and(|r| !r.state.is_final());
            if live {
                return Some(due);
            }
            self.resends.pop();
        }
        None
    }

    fn pick(&mut self, now: Instant, store: &TxStore, hold: &Hold) -> Option<u32> {
        // Resends first: they are older and closer to expiry.
        while let Some(Reverse((due, id))) = self.resends.peek().copied() {
            if due > now {
                break;
            }
            self.resends.pop();
            let Some(rec) = store.record(id) else {
                continue;
            };
            if rec.state.is_final() {
                continue;
            }
            // Landed below the commitment, about to be declared expired, or the RPC is out so
            // nobody knows whether it landed: wait, and let first sends have the pace.
            if rec.seen_slot.is_some() || (hold.pointless)(rec) || hold.rpc_down {
                self.resend_later(id, now);
                continue;
            }
            return Some(id);
        }
        // A never-sent transaction may have finished already (expired, or landed through
        // someone else): drop it. One whose blockhash the node does not take now keeps its
        // place without spending the pace: a node that restarted says so of every blockhash
        // while it replays its ledger, and moving the whole queue behind a resend interval
        // then cost seconds; one whose blockhash is gone for good expires once that is final.
        let mut refused = false;
        let mut i = 0;
        while i < self.fresh.len() && i < FRESH_SCAN {
            let id = self.fresh[i];
            match store.record(id) {
                Some(rec) if !rec.state.is_final() => {
                    if (hold.pointless)(rec) {
                        refused = true;
                        i += 1;
                        continue;
                    }
                    self.fresh.remove(i);
                    return Some(id);
                }
                _ => {
                    self.fresh.remove(i);
                }
            }
        }
        // Sends were due and the node took none of their blockhashes. If a leader takes sends
        // again afterwards, that was an outage like any other (see `held`).
        if refused {
            self.held.get_or_insert((now, false));
            self.refused_until = Some(now + REFUSED_RECHECK);
        }
        None
    }

    /// Sends every transaction whose pacer slot has come, up to [`SENDS_PER_WAKE`]: when the
    /// task wakes late (timer granularity, a busy machine), the sends it owes go out in this
    /// turn instead of one per loop turn, which capped the pace near 650 tx/s.
    pub(super) fn send_due(
        &mut self,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        hold: &Hold,
    ) -> Vec<Sent> {
        let mut sent = Vec::new();
        let mut streams = Vec::new();
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
        let id = self.pick(now, store, hold)?;
        let slot = Some(leaders.slot()).filter(|&s| s > 0);
        let first_log = store.record_send(id, now, slot, &targets).ok()?;
        let sends = store.view(id).map_or(0, |v| v.sends);
        let sent = Sent { id, sends, at: now };
        self.pacer.consume(now);
        // What is owed never exceeds what is left to send.
        self.pacer.cap_owed(self.fresh.len());
        self.resend_later(id, now);
        let Some(wire) = store.record(id).map(|r| r.wire.clone()) else {
            return Some(sent);
        };
        let stream_count = targets.iter().filter(|(_, a)| a.is_some()).count();
        if stream_count > 0 {
            self.rounds.insert((id, first_log), (stream_count, false));
        }
        for (i, (leader, addr)) in targets.into_iter().enumerate() {
            let Some(addr) = addr else { continue };
            leaders.on_sent(leader, addr, now);
            store.record_stream_sent();
            let handoff = Handoff::default();
            let send = self.transport.send(addr, wire.clone(), handoff.clone());
            let timeout = self.send_timeout;
            let batch = self.batch;
            streams.push(Box::pin(async move {
                let result = match tokio::time::timeout(timeout, send).await {
                    Ok(r) => r,
                    Err(_) => Err(SendError::Timeout(timeout)),
                };
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
                    result,
                })
            }));
        }
        Some(sent)
    }

    /// One stream of a send finished: the leader's figures, the transaction's send log, the
    /// send's round, and the closed loop (throttling) hear of it. Returns how long the leader
    /// took to answer, for the meter.
    pub(super) fn on_send_done(
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
            result,
        } = done;
        // On the wire from the hand-off: waiting for a connection or stream credit before it
        // is the transport's time, not the leader's.
        let on_wire = handed_at.unwrap_or(sent_at);
        let took = now.saturating_duration_since(on_wire);
        let outcome = leaders.on_result(leader, addr, &result, took, now);
        let error = result.as_ref().err().map(|e| e.to_string());
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
            && let Some(rate) = m.on_stream(outcome == StreamOutcome::Throttled)
        {
            self.pacer.set_rate(rate, now);
        }
        match outcome {
            StreamOutcome::Throttled => {
                // The leader takes no more than this: catching up would only be refused.
                self.pacer.forgive();
                if let Some((_, throttled)) = self.held.as_mut() {
                    *throttled = true;
                }
            }
            // A leader takes sends again: the outage is over, and its time is owed.
            StreamOutcome::Accepted => {
                if let Some((since, throttled)) = self.held.take() {
                    let held = now.saturating_duration_since(since);
                    if !throttled && held >= MIN_OUTAGE {
                        self.pacer.owe(held);
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
        let Some((left, any)) = self.rounds.get_mut(&(id, round)) else {
            return;
        };
        *left -= 1;
        *any |= accepted;
        if *left == 0 {
            let reached = *any;
            self.rounds.remove(&(id, round));
            if !reached {
                store.record_failed_send();
            }
        }
    }
}
