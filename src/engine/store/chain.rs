//! What the chain says of a transaction: seen below the commitment, landed (and under which
//! leader), re-signed with a fresh blockhash, and its blockhash's last valid block height.

use std::{sync::Arc, time::Duration};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::time::Instant;

use super::{TxStore, stamp::Stamp};
use crate::engine::{event::RunEvent, snapshot::millis};

impl TxStore {
    /// Notes that the chain has the transaction below the requested commitment.
    pub fn record_seen(&mut self, id: u32, slot: u64, now: Instant) {
        let stamp = Stamp::at(now, self.start);
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.seen = true;
            rec.marks.seen.get_or_insert(stamp);
        }
        if let Some(view) = self.views.get_mut(id as usize) {
            view.landed_slot = Some(slot);
        }
    }

    /// The chain no longer has it (its fork was abandoned): it needs sending again.
    pub fn record_seen_cleared(&mut self, id: u32) {
        if let Some(rec) = self.records.get_mut(id as usize) {
            rec.seen = false;
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
            rec.seen = false;
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
        let latency = first.map(|f| now.saturating_duration_since(f.instant(self.start)));
        if let Some(view) = self.views.get_mut(id as usize) {
            view.landed_slot = Some(slot);
            view.time_to_land = latency;
        }
        latency
    }

    /// Names the leader of the slot it landed in.
    pub fn record_landed_leader(&mut self, id: u32, leader: Pubkey) {
        let leader = self.key(leader);
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
