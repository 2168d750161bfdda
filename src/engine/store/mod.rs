//! Every transaction's record, its published view, queue membership and the counters — kept in
//! step by routing every state change through [`lifecycle::transition`].
//!
//! The records of sends and streams live in `sends`, what the chain says of a transaction
//! (seen, landed, re-signed, its blockhash's last block) in `chain`, when each step towards
//! landing first happened and the link events in `split`.

mod chain;
mod sends;
mod split;
mod stamp;
#[cfg(test)]
mod tests;

use std::{collections::HashMap, sync::Arc, time::Duration};

use imbl::Vector;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use tokio::{sync::mpsc, time::Instant};

use self::stamp::Stamp;
pub use self::{sends::StreamResult, split::Marks};
use super::{
    event::RunEvent,
    lifecycle::{self, LifecycleError, Queue, Transition, TxEvent, TxState},
    snapshot::{Counts, StatusRecord, TxView, millis},
};
use crate::source::LoadedTx;

/// The engine's private, hot part of a transaction. Held for every transaction of a run (a
/// million from one file), so kept small: moments are [`Stamp`]s, and what the chain said is
/// one flag (the slot is in the view).
pub struct TxRecord {
    pub wire: Arc<[u8]>,
    pub blockhash: Hash,
    pub durable_nonce: bool,
    pub state: TxState,
    /// Seen on chain below the requested commitment: do not resend, wait.
    pub seen: bool,
    /// Order of entry into its current queue; queues are sorted by it.
    queue_seq: u64,
    first_sent: Option<Stamp>,
    last_sent: Option<Stamp>,
    /// When each step towards landing first happened (see `split`).
    marks: Marks<Stamp>,
}

impl TxRecord {
    /// Time from the run's start to its first send, if it was sent.
    pub fn first_sent(&self) -> Option<Duration> {
        self.first_sent.map(Stamp::since_start)
    }

    /// Time from the run's start to its latest send, if it was sent.
    pub fn last_sent(&self) -> Option<Duration> {
        self.last_sent.map(Stamp::since_start)
    }
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
    /// Each leader's key, once, for the views that name it.
    keys: HashMap<Pubkey, Arc<Pubkey>>,
}

impl TxStore {
    pub fn new(mut txs: Vec<LoadedTx>, start: Instant) -> Self {
        let mut records = Vec::with_capacity(txs.len());
        let mut views = Vector::new();
        let mut pending = Vector::new();
        // One empty log of each kind, shared until a transaction's first entry (every write
        // goes through `Arc::make_mut`): a fresh `Arc<Vec>` each would be three allocations,
        // 144 bytes, per transaction not yet sent.
        let (send_log, sent_to, history) = (Arc::default(), Arc::default(), Arc::default());
        // Built from the back, the loader's list shrinking as it goes: drained from the front,
        // it stayed whole until the last transaction was in, and at a million its 160 bytes a
        // transaction were on top of everything built from it — the process's peak.
        while let Some(tx) = txs.pop() {
            let i = txs.len();
            if i < txs.capacity() / 2 {
                txs.shrink_to_fit();
            }
            let id = i as u32;
            records.push(TxRecord {
                wire: tx.wire,
                blockhash: tx.recent_blockhash,
                durable_nonce: tx.durable_nonce,
                state: TxState::Queued,
                seen: false,
                queue_seq: i as u64,
                first_sent: None,
                last_sent: None,
                marks: Marks::default(),
            });
            views.push_front(TxView {
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
                send_log: Arc::clone(&send_log),
                send_log_dropped: 0,
                sent_to: Arc::clone(&sent_to),
                history: Arc::clone(&history),
            });
            pending.push_front(id);
        }
        records.reverse();
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
            keys: HashMap::new(),
        }
    }

    /// `leader`'s key as the views share it.
    pub(super) fn key(&mut self, leader: Pubkey) -> Arc<Pubkey> {
        Arc::clone(self.keys.entry(leader).or_insert_with(|| Arc::new(leader)))
    }

    /// Streams every state change and stream outcome to `events` from now on.
    pub fn set_events(&mut self, events: mpsc::UnboundedSender<RunEvent>) {
        self.events = Some(events);
    }

    /// Hands `event` to the `--events` writer, if any. A writer that has gone away only loses
    /// the stream, never the run: events are for watching, the journal is for resuming.
    pub(super) fn emit(&self, event: impl FnOnce() -> RunEvent) {
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

    pub(super) fn since_start(&self, now: Instant) -> Duration {
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

    pub(super) fn move_queue(&mut self, id: u32, from: Queue, to: Queue) {
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
}

pub(super) fn counter(counts: &mut Counts, queue: Queue) -> &mut u64 {
    match queue {
        Queue::Pending => &mut counts.pending,
        Queue::Resent => &mut counts.resent,
        Queue::Confirmed => &mut counts.confirmed,
        Queue::Failed => &mut counts.failed,
        Queue::Expired => &mut counts.expired,
    }
}
