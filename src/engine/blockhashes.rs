//! The blockhashes unfinished transactions ride on: what is known of each one's life (the
//! [`ExpiryWatch`]) and which transactions use it, kept together so a blockhash's news reaches
//! its transactions and a blockhash nobody uses any more is forgotten in both.

use std::collections::HashMap;

use solana_hash::Hash;
use tokio::time::Instant;

use super::{
    expiry::{ExpiryWatch, LastValid},
    store::TxStore,
};
use crate::source::LoadedTx;

/// Validity checks per round, at the tip and at finalized each.
const VALIDITY_CHECKS_PER_ROUND: usize = 16;

/// Owned by the confirmer, the only part that reads blockhash news.
pub(super) struct Blockhashes {
    expiry: ExpiryWatch,
    /// Transactions by blockhash (durable-nonce ones have none that expires). A re-signed
    /// transaction stays listed under its old blockhash too: check the record's.
    by_hash: HashMap<Hash, Vec<u32>>,
}

impl Blockhashes {
    /// Tracks every transaction of the run whose blockhash can expire.
    pub(super) fn new(txs: &[LoadedTx]) -> Self {
        let mut book = Self {
            expiry: ExpiryWatch::default(),
            by_hash: HashMap::new(),
        };
        for (i, tx) in txs.iter().enumerate() {
            if !tx.durable_nonce {
                book.track(tx.recent_blockhash, i as u32);
            }
        }
        book
    }

    fn track(&mut self, hash: Hash, id: u32) {
        self.expiry.track(hash);
        self.by_hash.entry(hash).or_default().push(id);
    }

    /// One transaction on `hash` became final or moved on.
    pub(super) fn release(&mut self, hash: Hash) {
        self.expiry.release(hash);
        if !self.expiry.tracks(&hash) {
            self.by_hash.remove(&hash);
        }
    }

    /// `id` was signed again: it moves from `old` to `hash`, the cluster's latest blockhash,
    /// whose last valid height is known exactly.
    pub(super) fn moved(&mut self, id: u32, old: Hash, hash: Hash, last_valid: u64) {
        self.release(old);
        self.track(hash, id);
        self.expiry.on_latest(hash, last_valid);
    }

    /// The tip no longer takes `hash`: a send on it would most likely be wasted.
    pub(super) fn resend_pointless(&self, hash: &Hash, tip_height: u64) -> bool {
        self.expiry.resend_pointless(hash, tip_height)
    }

    /// Whether `hash` may still be taken at block `height`: past its last valid height (or the
    /// bound on it) it is not; unknown, it is taken to be.
    pub(super) fn taken_at(&self, hash: &Hash, height: u64) -> bool {
        self.expiry
            .last_valid(hash)
            .is_none_or(|lv| height <= lv.height)
    }

    /// Since when no bank that can still come takes `hash`.
    pub(super) fn dead_since(&self, hash: &Hash) -> Option<Instant> {
        self.expiry.dead_since(hash)
    }

    /// Blockhashes due a check at the tip, then — once a finalized height is known — those the
    /// tip calls invalid and no height bounds yet, for the finalized bank.
    pub(super) fn validity_checks(
        &mut self,
        now: Instant,
        final_height: u64,
    ) -> (Vec<Hash>, Vec<Hash>) {
        let tip = self.expiry.due(now, VALIDITY_CHECKS_PER_ROUND);
        let finalized = if final_height == 0 {
            Vec::new()
        } else {
            self.expiry
                .final_check_candidates(final_height, VALIDITY_CHECKS_PER_ROUND)
        };
        (tip, finalized)
    }

    /// The cluster's latest blockhash: its transactions learn their exact last valid height.
    pub(super) fn on_latest(&mut self, hash: Hash, last_valid: u64, store: &mut TxStore) {
        if let Some(lv) = self.expiry.on_latest(hash, last_valid) {
            self.set_last_valid(hash, lv, store);
        }
    }

    pub(super) fn on_tip_validity(
        &mut self,
        hash: Hash,
        valid: bool,
        height: u64,
        store: &mut TxStore,
    ) {
        if let Some(lv) = self.expiry.on_tip_validity(hash, valid, height) {
            self.set_last_valid(hash, lv, store);
        }
    }

    /// The unfinished transactions on blockhashes the finalized `height` is now past.
    pub(super) fn on_finalized_height(
        &mut self,
        height: u64,
        now: Instant,
        store: &TxStore,
    ) -> Vec<u32> {
        let dead = self.expiry.on_finalized_height(height, now);
        dead.into_iter()
            .flat_map(|hash| self.dead(hash, store))
            .collect()
    }

    /// The unfinished transactions on `hash`, when the finalized bank's answer makes it dead.
    pub(super) fn on_final_validity(
        &mut self,
        hash: Hash,
        valid: bool,
        final_height: u64,
        now: Instant,
        store: &TxStore,
    ) -> Vec<u32> {
        if self
            .expiry
            .on_final_validity(hash, valid, final_height, now)
        {
            self.dead(hash, store)
        } else {
            Vec::new()
        }
    }

    /// No bank that can still come accepts `hash`: its unfinished transactions.
    fn dead(&self, hash: Hash, store: &TxStore) -> Vec<u32> {
        log::info!(
            "blockhash {hash} is past its last valid block height at finalized; looking its \
             transactions up once more"
        );
        let Some(ids) = self.by_hash.get(&hash) else {
            return Vec::new();
        };
        // A re-signed transaction has moved on to another blockhash.
        ids.iter()
            .copied()
            .filter(|id| {
                store
                    .record(*id)
                    .is_some_and(|r| !r.state.is_final() && r.blockhash == hash)
            })
            .collect()
    }

    fn set_last_valid(&self, hash: Hash, lv: LastValid, store: &mut TxStore) {
        let Some(ids) = self.by_hash.get(&hash) else {
            return;
        };
        for id in ids {
            if store.record(*id).is_some_and(|r| r.blockhash == hash) {
                store.set_last_valid_block_height(*id, lv.height, lv.exact);
            }
        }
    }
}
