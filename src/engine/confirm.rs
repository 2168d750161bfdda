//! Applying what the chain says of a transaction: confirmed or failed at the requested
//! commitment, seen below it, or not found — and expired only when its blockhash (or deadline)
//! is past for good *and* a lookup with history, asked after that, still finds nothing.

use tokio::time::Instant;

use super::{lifecycle::TxEvent, net::ChainStatus, run::Engine};

impl Engine {
    /// Applies one status answer; `history` says whether the lookup searched the ledger too.
    pub(super) fn on_status(
        &mut self,
        id: u32,
        status: Option<ChainStatus>,
        asked: Instant,
        history: bool,
    ) {
        let Some(rec) = self.store.record(id) else {
            return;
        };
        if rec.state.is_final() {
            self.watch.remove(&id);
            self.history_watch.remove(&id);
            return;
        }
        if history {
            self.history_watch.remove(&id);
        }
        let now = Instant::now();
        match status {
            Some(st) if st.commitment >= self.cfg.commitment => self.on_landed(id, &st, now),
            Some(st) => {
                self.store.record_seen(id, st.slot);
                // Below the commitment: keep asking (the cache has it now).
                self.watch.insert(id);
            }
            None => {
                let (durable_nonce, seen) = (rec.durable_nonce, rec.seen_slot.is_some());
                if rec.first_sent.is_some() {
                    // A resumed transaction's first lookup was with history; from here on the
                    // status cache is enough.
                    self.watch.insert(id);
                }
                let past_since = if durable_nonce {
                    self.sync.deadline_passed
                } else {
                    self.expiry.dead_since(&rec.blockhash)
                };
                match past_since {
                    Some(t) if t <= asked && history => {
                        self.on_never_landed(id, durable_nonce, now)
                    }
                    // Past for good, but the status cache may have forgotten a landing: ask the
                    // ledger before calling it expired.
                    Some(_) => {
                        self.history_watch.insert(id);
                    }
                    None if seen => {
                        // Seen earlier on a fork that did not survive: send it again.
                        self.store.record_seen_cleared(id);
                    }
                    None => {}
                }
            }
        }
    }

    fn on_landed(&mut self, id: u32, st: &ChainStatus, now: Instant) {
        let event = match &st.err {
            Some(err) => TxEvent::LandedWithError(err.clone()),
            None => TxEvent::Landed,
        };
        let note = Some(format!("{} at slot {}", st.commitment.as_str(), st.slot));
        let latency = self.store.record_landed(id, st.slot, now);
        if self.store.apply(id, event, now, note).is_err() {
            return;
        }
        self.finish(id);
        self.commitments[id as usize] = Some(st.commitment);
        self.fact(match &st.err {
            Some(error) => super::TxFact::Failed {
                id,
                slot: st.slot,
                error: error.clone(),
            },
            None => super::TxFact::Confirmed {
                id,
                slot: st.slot,
                commitment: st.commitment,
            },
        });
        self.leaders.on_landed(st.slot);
        if st.err.is_none() {
            self.meter.on_confirmed(now - self.start, latency);
        }
    }

    /// Its blockhash or deadline is past and the ledger does not have it: re-sign it when the
    /// engine holds the signer, otherwise it expired.
    fn on_never_landed(&mut self, id: u32, durable_nonce: bool, now: Instant) {
        if !durable_nonce && self.try_resign(id, now) {
            return;
        }
        let note = Some(if durable_nonce {
            "deadline passed before it landed".to_string()
        } else {
            "blockhash past its last valid block height at finalized; not on chain".to_string()
        });
        if self.store.apply(id, TxEvent::Expired, now, note).is_ok() {
            self.finish(id);
            self.fact(super::TxFact::Expired { id });
        }
    }

    pub(super) fn finish(&mut self, id: u32) {
        self.watch.remove(&id);
        self.history_watch.remove(&id);
        if let Some(rec) = self.store.record(id)
            && !rec.durable_nonce
        {
            let hash = rec.blockhash;
            self.expiry.release(hash);
            if !self.expiry.tracks(&hash) {
                self.by_hash.remove(&hash);
            }
        }
    }
}
