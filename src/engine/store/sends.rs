//! The records of sends: each send of a transaction and each of its streams to a leader, kept
//! in the transaction's send log (bounded, see [`SEND_LOG_CAP`]) and counted.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{TxStore, stamp::Stamp};
use crate::engine::{
    event::RunEvent,
    lifecycle::{LifecycleError, TxEvent},
    net::StreamOutcome,
    snapshot::{SEND_LOG_CAP, SendRecord, millis},
};

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
        let stamp = Stamp::at(now, self.start);
        let last_leader = targets.first().map(|(leader, _)| self.key(*leader));
        let rec = &mut self.records[id as usize];
        rec.first_sent.get_or_insert(stamp);
        rec.last_sent = Some(stamp);
        let view = self
            .views
            .get_mut(id as usize)
            .ok_or(LifecycleError::UnknownTransaction(id))?;
        view.sends += 1;
        view.first_sent.get_or_insert(at);
        view.last_sent = Some(at);
        view.last_leader = last_leader;
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
        let stamp = Stamp::at(now, self.start);
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.first_sent = Some(stamp);
            rec.last_sent = Some(stamp);
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
}
