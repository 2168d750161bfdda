//! Every transaction's record, its published view, queue membership and the counters — kept in
//! step by routing every state change through [`lifecycle::transition`].

use std::{net::SocketAddr, sync::Arc, time::Duration};

use imbl::Vector;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::{sync::mpsc, time::Instant};

use super::{
    event::RunEvent,
    lifecycle::{self, LifecycleError, Queue, Transition, TxEvent, TxState},
    net::StreamOutcome,
    snapshot::{Counts, SEND_LOG_CAP, SendRecord, StatusRecord, TxView, millis},
};
use crate::source::LoadedTx;

/// The engine's private, hot part of a transaction.
pub struct TxRecord {
    pub wire: Arc<[u8]>,
    pub blockhash: Hash,
    pub durable_nonce: bool,
    pub state: TxState,
    /// Order of entry into its current queue; queues are sorted by it.
    queue_seq: u64,
    pub first_sent: Option<Instant>,
    pub last_sent: Option<Instant>,
    /// Seen on chain below the requested commitment: do not resend, wait.
    pub seen_slot: Option<u64>,
}

/// All transactions of a run.
pub struct TxStore {
    records: Vec<TxRecord>,
    views: Vector<TxView>,
    queues: [Vector<u32>; 5],
    next_seq: u64,
    counts: Counts,
    start: Instant,
    /// `--events`: every state change and stream outcome, as it happens.
    events: Option<mpsc::UnboundedSender<RunEvent>>,
}

/// One finished stream of a send, as the dispatcher saw it.
pub struct StreamResult<'a> {
    pub id: u32,
    /// Its entry in the transaction's send log (dropped entries counted).
    pub log_index: usize,
    /// Which send of the transaction it belonged to, from 1.
    pub send: u32,
    pub leader: Pubkey,
    pub addr: SocketAddr,
    /// When it was handed to the wire; when the engine chose to send it, for a stream that
    /// never got that far.
    pub sent_at: Instant,
    /// How long the leader took to answer.
    pub took: Duration,
    pub outcome: StreamOutcome,
    /// Why it failed; `None` when accepted.
    pub error: Option<&'a str>,
}

impl TxStore {
    pub fn new(txs: Vec<LoadedTx>, start: Instant) -> Self {
        let mut records = Vec::with_capacity(txs.len());
        let mut views = Vector::new();
        let mut pending = Vector::new();
        for (i, tx) in txs.into_iter().enumerate() {
            let id = i as u32;
            records.push(TxRecord {
                wire: tx.wire,
                blockhash: tx.recent_blockhash,
                durable_nonce: tx.durable_nonce,
                state: TxState::Queued,
                queue_seq: i as u64,
                first_sent: None,
                last_sent: None,
                seen_slot: None,
            });
            views.push_back(TxView {
                id,
                signature: tx.signature,
                origin: tx.origin,
                state: TxState::Queued,
                sends: 0,
                resigns: 0,
                first_sent: None,
                last_sent: None,
                landed_slot: None,
                time_to_land: None,
                last_valid_block_height: None,
                last_valid_exact: false,
                durable_nonce: tx.durable_nonce,
                cu_price: tx.budget.price,
                cu_limit: tx.budget.limit,
                last_leader: None,
                landed_leader: None,
                last_error: None,
                send_log: Arc::new(Vec::new()),
                send_log_dropped: 0,
                sent_to: Arc::new(Vec::new()),
                history: Arc::new(Vec::new()),
            });
            pending.push_back(id);
        }
        let total = records.len() as u64;
        Self {
            next_seq: total,
            records,
            views,
            queues: [
                pending,
                Vector::new(),
                Vector::new(),
                Vector::new(),
                Vector::new(),
            ],
            counts: Counts {
                total,
                pending: total,
                ..Counts::default()
            },
            start,
            events: None,
        }
    }

    /// Streams every state change and stream outcome to `events` from now on.
    pub fn set_events(&mut self, events: mpsc::UnboundedSender<RunEvent>) {
        self.events = Some(events);
    }

    /// Hands `event` to the `--events` writer, if any. A writer that has gone away only loses
    /// the stream, never the run: events are for watching, the journal is for resuming.
    fn emit(&self, event: impl FnOnce() -> RunEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event());
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn record(&self, id: u32) -> Option<&TxRecord> {
        self.records.get(id as usize)
    }

    pub fn view(&self, id: u32) -> Option<&TxView> {
        self.views.get(id as usize)
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    pub fn views(&self) -> &Vector<TxView> {
        &self.views
    }

    pub fn queues(&self) -> &[Vector<u32>; 5] {
        &self.queues
    }

    pub fn all_final(&self) -> bool {
        self.counts.finished() == self.counts.total
    }

    fn since_start(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.start)
    }

    /// Applies one lifecycle event; the only place a transaction's state changes.
    pub fn apply(
        &mut self,
        id: u32,
        event: TxEvent,
        now: Instant,
        note: Option<String>,
    ) -> Result<Transition, LifecycleError> {
        let Some(rec) = self.records.get_mut(id as usize) else {
            return Err(LifecycleError::UnknownTransaction(id));
        };
        let t = lifecycle::transition(rec.state, &event)?;
        rec.state = t.to;
        let at = now.saturating_duration_since(self.start);
        if t.from != t.to
            && let Some(view) = self.views.get_mut(id as usize)
        {
            view.state = t.to;
            Arc::make_mut(&mut view.history).push(StatusRecord {
                at,
                state: t.to,
                note: note.clone(),
            });
            if let TxEvent::LandedWithError(err) = &event {
                view.last_error = Some(err.as_str().into());
            }
            let signature = view.signature;
            self.emit(|| RunEvent::State {
                at_ms: millis(at),
                id,
                signature,
                from: t.from,
                to: t.to,
                note,
            });
        }
        let (from_q, to_q) = (t.from.queue(), t.to.queue());
        if from_q != to_q {
            self.move_queue(id, from_q, to_q);
        }
        Ok(t)
    }

    fn move_queue(&mut self, id: u32, from: Queue, to: Queue) {
        let records = &self.records;
        let Some(seq) = records.get(id as usize).map(|r| r.queue_seq) else {
            return;
        };
        let q = &mut self.queues[from as usize];
        if let Ok(pos) = q.binary_search_by(|other| {
            records
                .get(*other as usize)
                .map_or(0, |r| r.queue_seq)
                .cmp(&seq)
        }) {
            q.remove(pos);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.queue_seq = seq;
        }
        self.queues[to as usize].push_back(id);
        *counter(&mut self.counts, from) -= 1;
        *counter(&mut self.counts, to) += 1;
    }

    /// Records that a send of `id` went out to `targets`; returns the index of the first new
    /// send-log entry so outcomes can be filled in later.
    pub fn record_send(
        &mut self,
        id: u32,
        now: Instant,
        slot: Option<u64>,
        targets: &[(Pubkey, Option<SocketAddr>)],
    ) -> Result<usize, LifecycleError> {
        self.apply(id, TxEvent::Sent, now, None)?;
        let at = self.since_start(now);
        self.counts.sends += 1;
        let rec = &mut self.records[id as usize];
        rec.first_sent.get_or_insert(now);
        rec.last_sent = Some(now);
        let view = self
            .views
            .get_mut(id as usize)
            .ok_or(LifecycleError::UnknownTransaction(id))?;
        view.sends += 1;
        view.first_sent.get_or_insert(at);
        view.last_sent = Some(at);
        view.last_leader = targets.first().map(|(leader, _)| *leader);
        for (leader, _) in targets {
            if !view.sent_to.contains(leader) {
                Arc::make_mut(&mut view.sent_to).push(*leader);
            }
        }
        let log = Arc::make_mut(&mut view.send_log);
        // Indices handed out count every stream ever logged, dropped ones included.
        let first = view.send_log_dropped as usize + log.len();
        log.extend(targets.iter().map(|(leader, addr)| SendRecord {
            at,
            leader: *leader,
            addr: *addr,
            slot,
            outcome: None,
            ack_ms: None,
            error: None,
        }));
        if log.len() > SEND_LOG_CAP {
            let drop = log.len() - SEND_LOG_CAP / 2;
            log.drain(..drop);
            view.send_log_dropped += drop as u64;
        }
        Ok(first)
    }

    /// Marks a transaction as sent `sends` times by an earlier run (resume).
    pub fn restore_sends(
        &mut self,
        id: u32,
        sends: u32,
        now: Instant,
    ) -> Result<(), LifecycleError> {
        let note = Some("sent before resume".to_string());
        for _ in 0..sends.clamp(1, 2) {
            self.apply(id, TxEvent::Sent, now, note.clone())?;
        }
        let at = self.since_start(now);
        self.counts.sends += u64::from(sends);
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.first_sent = Some(now);
            rec.last_sent = Some(now);
        }
        if let Some(view) = self.views.get_mut(id as usize) {
            view.sends = sends;
            view.first_sent = Some(at);
            view.last_sent = Some(at);
        }
        Ok(())
    }

    /// Counts one stream handed to the transport (a send to one leader).
    pub fn record_stream_sent(&mut self) {
        self.counts.streams.sent += 1;
    }

    /// Records one stream's outcome, which came at `now`: its outcome, acknowledgement time and
    /// any failure's reason go into the send log, and an event to `--events`.
    pub fn record_stream_result(&mut self, r: StreamResult<'_>, now: Instant) {
        let StreamResult {
            id,
            log_index,
            outcome,
            error,
            ..
        } = r;
        self.counts.streams.record(outcome);
        if let Some(view) = self.views.get(id as usize) {
            let signature = view.signature;
            self.emit(|| RunEvent::Send {
                at_ms: millis(self.since_start(now)),
                id,
                signature,
                send: r.send,
                leader: r.leader,
                tpu: r.addr,
                sent_ms: millis(self.since_start(r.sent_at)),
                ack_ms: millis(r.took),
                outcome,
                error: error.map(str::to_string),
            });
        }
        let on_wire = self.since_start(r.sent_at);
        if let Some(view) = self.views.get_mut(id as usize) {
            // An entry already dropped from a full log keeps only its count.
            let kept = log_index.checked_sub(view.send_log_dropped as usize);
            if let Some(entry) = kept.and_then(|i| Arc::make_mut(&mut view.send_log).get_mut(i)) {
                entry.at = on_wire;
                entry.outcome = Some(outcome);
                entry.ack_ms = Some(millis(r.took));
                entry.error = error.map(str::to_string);
            }
            if let Some(error) = error
                && !view.state.is_final()
            {
                view.last_error = Some(error.into());
            }
        }
    }

    /// A transaction send none of whose streams was accepted.
    pub fn record_failed_send(&mut self) {
        self.counts.send_errors += 1;
    }

    /// Notes that the chain has the transaction below the requested commitment.
    pub fn record_seen(&mut self, id: u32, slot: u64) {
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.seen_slot = Some(slot);
        }
        if let Some(view) = self.views.get_mut(id as usize) {
            view.landed_slot = Some(slot);
        }
    }

    /// The chain no longer has it (its fork was abandoned): it needs sending again.
    pub fn record_seen_cleared(&mut self, id: u32) {
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.seen_slot = None;
        }
        if let Some(view) = self.views.get_mut(id as usize) {
            view.landed_slot = None;
        }
    }

    /// Swaps in a fresh signing of the same transaction (after [`TxEvent::Resigned`]).
    pub fn replace_signing(
        &mut self,
        id: u32,
        signature: Signature,
        wire: Arc<[u8]>,
        blockhash: Hash,
        now: Instant,
    ) {
        if let Some(previous) = self.views.get(id as usize).map(|v| v.signature) {
            self.emit(|| RunEvent::Resigned {
                at_ms: millis(self.since_start(now)),
                id,
                signature,
                previous,
            });
        }
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.wire = wire;
            rec.blockhash = blockhash;
            rec.seen_slot = None;
        }
        if let Some(view) = self.views.get_mut(id as usize) {
            view.signature = signature;
            view.resigns += 1;
            view.last_valid_block_height = None;
            view.last_valid_exact = false;
            view.landed_slot = None;
        }
    }

    /// Marks a landing (confirmed or failed) with its slot and latency.
    pub fn record_landed(&mut self, id: u32, slot: u64, now: Instant) -> Option<Duration> {
        let first = self.records.get(id as usize)?.first_sent;
        let latency = first.map(|f| now.saturating_duration_since(f));
        if let Some(view) = self.views.get_mut(id as usize) {
            view.landed_slot = Some(slot);
            view.time_to_land = latency;
        }
        latency
    }

    /// Names the leader of the slot it landed in.
    pub fn record_landed_leader(&mut self, id: u32, leader: Pubkey) {
        if let Some(view) = self.views.get_mut(id as usize) {
            view.landed_leader = Some(leader);
        }
    }

    pub fn set_last_valid_block_height(&mut self, id: u32, height: u64, exact: bool) {
        if let Some(view) = self.views.get_mut(id as usize)
            && (view.last_valid_block_height, view.last_valid_exact) != (Some(height), exact)
        {
            view.last_valid_block_height = Some(height);
            view.last_valid_exact = exact;
        }
    }
}

fn counter(counts: &mut Counts, queue: Queue) -> &mut u64 {
    match queue {
        Queue::Pending => &mut counts.pending,
        Queue::Resent => &mut counts.resent,
        Queue::Confirmed => &mut counts.confirmed,
        Queue::Failed => &mut counts.failed,
        Queue::Expired => &mut counts.expired,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_tx() -> LoadedTx {
        LoadedTx {
            origin: "t:1".into(),
            signature: solana_signature::Signature::from([3u8; 64]),
            wire: vec![1u8; 100].into(),
            recent_blockhash: Hash::new_from_array([9; 32]),
            durable_nonce: true,
            budget: Default::default(),
        }
    }

    /// A durable-nonce transaction resent for hours keeps a bounded send log, yet every
    /// leader it went to and the outcome of a recent stream are kept.
    #[test]
    fn the_send_log_is_bounded_and_keeps_what_matters() {
        let start = Instant::now();
        let mut store = TxStore::new(vec![one_tx()], start);
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let mut last = 0;
        for i in 0..10 * SEND_LOG_CAP {
            let leader = if i == 0 { a } else { b };
            last = store
                .record_send(0, start, Some(7), &[(leader, None)])
                .expect("send");
        }
        let result = |log_index, error| StreamResult {
            id: 0,
            log_index,
            send: 1,
            leader: b,
            addr: SocketAddr::from(([127, 0, 0, 1], 1)),
            sent_at: start,
            took: Duration::ZERO,
            outcome: StreamOutcome::Throttled,
            error: Some(error),
        };
        store.record_stream_result(result(last, "stopped"), start);
        // An entry long dropped is counted, not found.
        store.record_stream_result(result(0, "old"), start);
        let view = store.view(0).expect("view");
        assert!(
            view.send_log.len() <= SEND_LOG_CAP,
            "{}",
            view.send_log.len()
        );
        assert_eq!(
            view.send_log_dropped as usize + view.send_log.len(),
            10 * SEND_LOG_CAP
        );
        assert_eq!(*view.sent_to, vec![a, b]);
        assert_eq!(view.sends as usize, 10 * SEND_LOG_CAP);
        let newest = view.send_log.last().expect("an entry");
        assert_eq!(newest.error.as_deref(), Some("stopped"));
        assert!(
            view.send_log
                .iter()
                .all(|r| r.error.as_deref() != Some("old"))
        );
        assert_eq!(store.counts().streams.throttled, 2);
    }
}
