//! Applying what the chain says of a transaction: confirmed or failed at the requested
//! commitment, seen below it, or gone — and expired once its blockhash is dead.

use tokio::time::Instant;

use super::{net::ChainStatus, run::Engine};

impl Engine {
    /// Applies a status to one transaction.
    pub(super) fn on_status(&mut self, id: u32, status: Option<ChainStatus>, asked: Instant) {
        let Some(rec) = self.store.record(id) else {
            return;
        };
        if rec.state.is_final() {
            self.watch.remove(&id);
            return;
        }
        let now = Instant::now();
        match status {
            Some(st) if st.commitment >= self.cfg.commitment => {
                let event = match &st.err {
                    Some(err) => super::lifecycle::TxEvent::LandedWithError(err.clone()),
                    None => super::lifecycle::TxEvent::Landed,
                };
                let note = Some(format!("{} at slot {}", st.commitment.as_str(), st.slot));
                let latency = self.store.record_landed(id, st.slot, now);
                if self.store.apply(id, event, now, note).is_ok() {
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
            }
            Some(st) => self.store.record_seen(id, st.slot),
            None => {
                let (durable_nonce, seen) = (rec.durable_nonce, rec.seen_slot.is_some());
                let expired_since = if durable_nonce {
                    self.sync.deadline_passed
                } else {
                    self.expiry.invalid_since(&rec.blockhash)
                };
                if expired_since.is_some_and(|t| t <= asked) {
                    if !durable_nonce && self.try_resign(id, now) {
                        return;
                    }
                    let note = Some(if durable_nonce {
                        "deadline passed before it landed".to_string()
                    } else {
                        "blockhash no longer valid".to_string()
                    });
                    if self
                        .store
                        .apply(id, super::lifecycle::TxEvent::Expired, now, note)
                        .is_ok()
                    {
                        self.finish(id);
                        self.fact(super::TxFact::Expired { id });
                    }
                } else if seen {
                    // Seen earlier on a fork that did not survive: send it again.
                    self.store.record_seen_cleared(id);
                }
            }
        }
    }

    pub(super) fn finish(&mut self, id: u32) {
        self.watch.remove(&id);
        if let Some(rec) = self.store.record(id)
            && !rec.durable_nonce
        {
            let hash = rec.blockhash;
            self.expiry.release(hash);
        }
    }
}
