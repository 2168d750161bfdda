//! Keeping the engine's view of the chain current: slot, block height, leader schedule, TPU
//! addresses, signature statuses and blockhash validity — each an RPC call spawned off the loop,
//! at most one of a kind in flight, retried every poll while the RPC is unreachable.

use std::{collections::HashMap, net::SocketAddr, time::Duration};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{
    net::{ChainError, ChainStatus},
    run::{Engine, Update},
};

/// Largest batch `getSignatureStatuses` takes.
pub const STATUS_BATCH: usize = 256;
/// Status batches in flight per round; beyond that, the next round continues where this stopped.
const STATUS_BATCHES_PER_ROUND: usize = 8;
const VALIDITY_CHECKS_PER_ROUND: usize = 16;
const NODES_REFRESH: Duration = Duration::from_secs(30);
/// A websocket slot feed quieter than this is treated as down, and `getSlot` is polled.
const FEED_STALE: Duration = Duration::from_millis(1_500);

pub(super) enum ChainUpdate {
    Slot(Result<u64, ChainError>),
    Height(Result<u64, ChainError>),
    Latest(Result<(Hash, u64), ChainError>),
    Schedule {
        start: u64,
        result: Result<Vec<Pubkey>, ChainError>,
    },
    Nodes(Result<HashMap<Pubkey, SocketAddr>, ChainError>),
    Staked(Result<bool, ChainError>),
    Statuses {
        asked: Instant,
        ids: Vec<u32>,
        result: Result<Vec<Option<ChainStatus>>, ChainError>,
    },
    Validity {
        hash: Hash,
        asked: Instant,
        height: u64,
        result: Result<bool, ChainError>,
    },
}

#[derive(Default)]
struct Inflight {
    slot: bool,
    height: bool,
    latest: bool,
    schedule: bool,
    nodes: bool,
    staked: bool,
    statuses: usize,
    validity: usize,
}

#[derive(Default)]
pub(super) struct SyncState {
    pub block_height: u64,
    pub staked: Option<bool>,
    pub health: Option<String>,
    pub deadline_passed: Option<Instant>,
    /// The cluster's latest blockhash and its last valid height, for re-signing.
    pub latest: Option<(Hash, u64)>,
    inflight: Inflight,
    nodes_at: Option<Instant>,
    feed_at: Option<Instant>,
    status_cursor: u32,
}

impl Engine {
    fn spawn_chain<F>(&self, fut: F)
    where
        F: std::future::Future<Output = ChainUpdate> + Send + 'static,
    {
        let tx = self.updates.clone();
        tokio::spawn(async move {
            let _ = tx.send(Update::Chain(fut.await));
        });
    }

    pub(super) fn on_slot(&mut self, slot: u64) {
        self.sync.feed_at = Some(Instant::now());
        self.leaders.set_slot(slot);
        self.request_schedule();
    }

    /// Fetches more of the leader schedule as soon as the known part runs short — including
    /// right after the first slot arrives, so the first send does not wait a poll.
    fn request_schedule(&mut self) {
        if self.cfg.pinned_tpu.is_some() || self.sync.inflight.schedule {
            return;
        }
        if let Some((start, limit)) = self.leaders.schedule_request() {
            self.sync.inflight.schedule = true;
            let c = self.chain.clone();
            self.spawn_chain(async move {
                let result = c.slot_leaders(start, limit).await;
                ChainUpdate::Schedule { start, result }
            });
        }
    }

    /// One round of polling, about once a slot.
    pub(super) fn poll(&mut self) {
        let now = Instant::now();
        let chain = self.chain.clone();
        let s = &mut self.sync;
        if !s.inflight.slot && s.feed_at.is_none_or(|t| now - t > FEED_STALE) {
            s.inflight.slot = true;
            let c = chain.clone();
            self.spawn_chain(async move { ChainUpdate::Slot(c.slot().await) });
        }
        let s = &mut self.sync;
        if !s.inflight.height {
            s.inflight.height = true;
            let c = chain.clone();
            self.spawn_chain(async move { ChainUpdate::Height(c.block_height().await) });
        }
        let s = &mut self.sync;
        if !s.inflight.latest {
            s.inflight.latest = true;
            let c = chain.clone();
            self.spawn_chain(async move { ChainUpdate::Latest(c.latest_blockhash().await) });
        }
        let s = &mut self.sync;
        if !s.inflight.staked && s.staked.is_none() {
            s.inflight.staked = true;
            let (c, id) = (chain.clone(), self.cfg.identity);
            self.spawn_chain(async move { ChainUpdate::Staked(c.is_staked(id).await) });
        }
        self.request_schedule();
        // Also with `--tpu`: the node list names whoever is behind the pinned address.
        let s = &mut self.sync;
        if !s.inflight.nodes && s.nodes_at.is_none_or(|t| now - t > NODES_REFRESH) {
            s.inflight.nodes = true;
            let c = chain.clone();
            self.spawn_chain(async move { ChainUpdate::Nodes(c.tpu_quic_addresses().await) });
        }
        self.transport.prepare(&self.leaders.prepare_list());
        self.check_deadline(now);
        self.poll_statuses(now);
        self.poll_validity(now);
    }

    fn check_deadline(&mut self, now: Instant) {
        let Some(deadline) = self.cfg.deadline else {
            return;
        };
        if self.sync.deadline_passed.is_some() || now - self.start < deadline {
            return;
        }
        self.sync.deadline_passed = Some(now);
        for id in 0..self.store.len() as u32 {
            if let Some(rec) = self.store.record(id)
                && rec.durable_nonce
                && !rec.state.is_final()
            {
                self.watch.insert(id);
            }
        }
    }

    fn poll_statuses(&mut self, now: Instant) {
        if self.sync.inflight.statuses > 0 || self.watch.is_empty() {
            return;
        }
        let cap = STATUS_BATCH * STATUS_BATCHES_PER_ROUND;
        let mut ids: Vec<u32> = self
            .watch
            .range(self.sync.status_cursor..)
            .take(cap)
            .copied()
            .collect();
        if ids.len() < cap {
            let more = cap - ids.len();
            let wrap: Vec<u32> = self
                .watch
                .range(..self.sync.status_cursor)
                .take(more)
                .copied()
                .collect();
            ids.extend(wrap);
        }
        self.sync.status_cursor = ids.last().map_or(0, |l| l.wrapping_add(1));
        for chunk in ids.chunks(STATUS_BATCH) {
            let ids = chunk.to_vec();
            let sigs = ids
                .iter()
                .filter_map(|id| self.store.view(*id).map(|v| v.signature))
                .collect();
            self.sync.inflight.statuses += 1;
            let c = self.chain.clone();
            self.spawn_chain(async move {
                let result = c.signature_statuses(sigs).await;
                ChainUpdate::Statuses {
                    asked: now,
                    ids,
                    result,
                }
            });
        }
    }

    fn poll_validity(&mut self, now: Instant) {
        let height = self.sync.block_height;
        if height == 0 || self.sync.inflight.validity > 0 {
            return;
        }
        for hash in self.expiry.due(now, VALIDITY_CHECKS_PER_ROUND) {
            self.sync.inflight.validity += 1;
            let c = self.chain.clone();
            self.spawn_chain(async move {
                let result = c.blockhash_valid(hash).await;
                ChainUpdate::Validity {
                    hash,
                    asked: now,
                    height,
                    result,
                }
            });
        }
    }

    /// Records an RPC failure for the header and the log, once per change of state.
    fn chain_failed(&mut self, err: &ChainError) {
        let secs = self.cfg.poll_interval.as_secs_f64();
        let msg = format!("RPC unreachable ({err}), retrying every {secs:.1} s");
        if self.sync.health.is_none() {
            log::warn!("{msg}");
        }
        self.sync.health = Some(msg);
    }

    fn chain_ok(&mut self) {
        if self.sync.health.take().is_some() {
            log::info!("RPC reachable again");
        }
    }

    pub(super) fn on_chain(&mut self, update: ChainUpdate) {
        let result: Result<(), ChainError> = match update {
            ChainUpdate::Slot(r) => {
                self.sync.inflight.slot = false;
                r.map(|slot| {
                    self.leaders.set_slot(slot);
                    self.request_schedule();
                })
            }
            ChainUpdate::Height(r) => {
                self.sync.inflight.height = false;
                r.map(|h| self.sync.block_height = self.sync.block_height.max(h))
            }
            ChainUpdate::Latest(r) => {
                self.sync.inflight.latest = false;
                r.map(|(hash, last_valid)| {
                    self.sync.latest = Some((hash, last_valid));
                    if self.expiry.on_latest(hash, last_valid).is_some() {
                        self.set_last_valid(hash, last_valid);
                    }
                })
            }
            ChainUpdate::Schedule { start, result } => {
                self.sync.inflight.schedule = false;
                result.map(|leaders| self.leaders.add_schedule(start, &leaders))
            }
            ChainUpdate::Nodes(r) => {
                self.sync.inflight.nodes = false;
                if r.is_err() {
                    self.leaders.nodes_unavailable();
                }
                r.map(|addrs| {
                    self.sync.nodes_at = Some(Instant::now());
                    self.leaders.set_addresses(addrs);
                })
            }
            ChainUpdate::Staked(r) => {
                self.sync.inflight.staked = false;
                r.map(|staked| self.sync.staked = Some(staked))
            }
            ChainUpdate::Statuses { asked, ids, result } => {
                self.sync.inflight.statuses = self.sync.inflight.statuses.saturating_sub(1);
                result.map(|statuses| {
                    for (id, st) in ids.into_iter().zip(statuses) {
                        self.on_status(id, st, asked);
                    }
                })
            }
            ChainUpdate::Validity {
                hash,
                asked,
                height,
                result,
            } => {
                self.sync.inflight.validity = self.sync.inflight.validity.saturating_sub(1);
                result.map(|valid| self.on_validity(hash, valid, height, asked))
            }
        };
        match result {
            Ok(()) => self.chain_ok(),
            Err(err) => self.chain_failed(&err),
        }
    }

    fn on_validity(&mut self, hash: Hash, valid: bool, height: u64, asked: Instant) {
        if let Some(lv) = self.expiry.on_validity(hash, valid, height, asked) {
            self.set_last_valid(hash, lv);
        }
        if !valid && self.expiry.invalid_since(&hash).is_some() {
            log::info!("blockhash {hash} is no longer valid; checking its transactions once more");
            // Every unfinished transaction on it gets one more status check, then expires.
            if let Some(ids) = self.by_hash.get(&hash) {
                for id in ids {
                    if self.store.record(*id).is_some_and(|r| !r.state.is_final()) {
                        self.watch.insert(*id);
                    }
                }
            }
        }
    }

    fn set_last_valid(&mut self, hash: Hash, last_valid: u64) {
        let Some(ids) = self.by_hash.get(&hash) else {
            return;
        };
        for id in ids {
            self.store.set_last_valid_block_height(*id, last_valid);
        }
    }
}
