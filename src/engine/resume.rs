//! Continuing from what came before: an interrupted run's journaled states, and transactions
//! signed again after their blockhash ran out (deploys).

use std::cmp::Reverse;

use tokio::time::Instant;

use super::{lifecycle::TxState, run::Engine, snapshot::RunState};

impl Engine {
    /// Carries over what an interrupted run's journal knew; see [`super::spawn_resumed`].
    pub(super) fn apply_prior(&mut self, prior: Vec<Option<super::Prior>>) {
        use super::{Prior, lifecycle::TxEvent};
        let now = Instant::now();
        for (id, p) in prior.into_iter().enumerate() {
            let id = id as u32;
            let Some(p) = p else { continue };
            let note = Some("before resume".to_string());
            match p {
                Prior::Sent { sends } => {
                    if self.store.restore_sends(id, sends, now).is_ok() {
                        // Its landing may be older than the status cache reaches: the first
                        // lookup searches the ledger too.
                        self.history_watch.insert(id);
                        self.resends
                            .push(Reverse((now + self.cfg.resend_interval, id)));
                    }
                }
                Prior::Confirmed {
                    slot,
                    commitment,
                    sends,
                } => {
                    self.restore_final_sends(id, sends, now);
                    self.store.record_landed(id, slot, now);
                    if self.store.apply(id, TxEvent::Landed, now, note).is_ok() {
                        self.commitments[id as usize] = Some(commitment);
                        self.finish(id);
                    }
                }
                Prior::Failed { slot, error, sends } => {
                    self.restore_final_sends(id, sends, now);
                    self.store.record_landed(id, slot, now);
                    if self
                        .store
                        .apply(id, TxEvent::LandedWithError(error), now, note)
                        .is_ok()
                    {
                        self.finish(id);
                    }
                }
                Prior::Expired { sends } => {
                    self.restore_final_sends(id, sends, now);
                    if self.store.apply(id, TxEvent::Expired, now, note).is_ok() {
                        self.finish(id);
                    }
                }
            }
        }
        let store = &self.store;
        self.fresh.retain(|id| {
            store
                .record(*id)
                .is_some_and(|r| r.state == TxState::Queued)
        });
        if self.store.all_final() {
            self.run = RunState::Done;
        }
        self.publish();
    }

    /// A final transaction's sends from before the resume still count in its record and in
    /// the run's sends-per-landed.
    fn restore_final_sends(&mut self, id: u32, sends: u32, now: Instant) {
        if sends > 0 {
            let _ = self.store.restore_sends(id, sends, now);
        }
    }

    /// Signs an expired transaction again against the latest blockhash, when a resigner is
    /// configured and agrees; it goes to the front of the queue as a new transaction.
    pub(super) fn try_resign(&mut self, id: u32, now: Instant) -> bool {
        let (Some(resigner), Some((hash, last_valid))) =
            (self.cfg.resigner.clone(), self.sync.latest)
        else {
            return false;
        };
        let Some(old) = self.store.record(id).map(|r| r.blockhash) else {
            return false;
        };
        if old == hash {
            return false;
        }
        let attempt = self.store.view(id).map_or(0, |v| v.resigns) + 1;
        let Some((signature, wire)) = resigner.resign(id, attempt, hash) else {
            return false;
        };
        let note = Some(format!(
            "re-signed (attempt {attempt}) with blockhash {hash}"
        ));
        if self
            .store
            .apply(id, super::lifecycle::TxEvent::Resigned, now, note)
            .is_err()
        {
            return false;
        }
        self.store.replace_signing(id, signature, wire, hash);
        self.expiry.release(old);
        if !self.expiry.tracks(&old) {
            self.by_hash.remove(&old);
        }
        self.expiry.track(hash);
        self.by_hash.entry(hash).or_default().push(id);
        self.expiry.on_latest(hash, last_valid);
        self.store.set_last_valid_block_height(id, last_valid, true);
        self.watch.remove(&id);
        self.history_watch.remove(&id);
        self.fresh.push_front(id);
        self.fact(super::TxFact::Resigned {
            id,
            signature,
            attempt,
        });
        true
    }
}
