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
use crate::config::Commitment;

/// Largest batch `getSignatureStatuses` takes.
pub const STATUS_BATCH: usize = 256;
/// Status batches in flight per round; beyond that, the next round continues where this stopped.
const STATUS_BATCHES_PER_ROUND: usize = 8;
const VALIDITY_CHECKS_PER_ROUND: usize = 16;
/// History lookups are slower for the node (they read its ledger): fewer per round.
const HISTORY_BATCHES_PER_ROUND: usize = 2;
/// An RPC that has never answered for this long fails the run: the URL is most likely wrong,
/// and a user should hear so rather than watch a run that can never start.
pub const RPC_NEVER_REACHABLE: Duration = Duration::from_secs(20);
const NODES_REFRESH: Duration = Duration::from_secs(30);
/// A websocket slot feed quieter than this is treated as down, and `getSlot` is polled.
const FEED_STALE: Duration = Duration::from_millis(1_500);

pub(super) enum ChainUpdate {
    Slot(Result<u64, ChainError>),
    Height(Result<u64, ChainError>),
    FinalHeight(Result<u64, ChainError>),
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
        /// Asked with `searchTransactionHistory`.
        history: bool,
        result: Result<Vec<Option<ChainStatus>>, ChainError>,
    },
    /// The tip's (processed) view of a blockhash; `height` is the highest tip height seen when
    /// asked.
    TipValidity {
        hash: Hash,
        height: u64,
        result: Result<bool, ChainError>,
    },
    /// The finalized bank's view; `final_height` is the finalized height known when asked.
    FinalValidity {
        hash: Hash,
        final_height: u64,
        result: Result<bool, ChainError>,
    },
}

#[derive(Default)]
struct Inflight {
    slot: bool,
    height: bool,
    final_height: bool,
    latest: bool,
    schedule: bool,
    nodes: bool,
    staked: bool,
    statuses: usize,
    validity: usize,
}

#[derive(Default)]
pub(super) struct SyncState {
    /// The tip's (processed) block height, highest seen.
    pub block_height: u64,
    /// The finalized block height, highest seen: expiry is decided against it.
    pub final_height: u64,
    /// Some RPC call has succeeded in this run.
    pub reached: bool,
    pub staked: Option<bool>,
    pub health: Option<String>,
    /// The last RPC failure, for the reason a run that never reached its RPC gives.
    pub last_error: Option<String>,
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
            self.spawn_chain(async move {
                ChainUpdate::Height(c.block_height(Commitment::Processed).await)
            });
        }
        let s = &mut self.sync;
        if !s.inflight.final_height {
            s.inflight.final_height = true;
            let c = chain.clone();
            self.spawn_chain(async move {
                ChainUpdate::FinalHeight(c.block_height(Commitment::Finalized).await)
            });
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
        self.leaders.expire_backoffs(now);
        self.check_journal();
        self.check_deadline(now);
        self.check_reachable(now);
        self.poll_statuses(now);
        self.poll_validity(now);
    }

    /// Fails the run when the RPC has never answered within [`RPC_NEVER_REACHABLE`]. An RPC that
    /// answered once and then went away is an outage, and the run waits it out.
    fn check_reachable(&mut self, now: Instant) {
        if self.sync.reached || now - self.start < RPC_NEVER_REACHABLE {
            return;
        }
        let why = match &self.sync.last_error {
            Some(err) => format!(" (last error: {err})"),
            None => String::new(),
        };
        self.fail(format!(
            "the RPC at {} has not answered in {} s{why}",
            self.cfg.rpc_url_display,
            RPC_NEVER_REACHABLE.as_secs()
        ));
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
                self.history_watch.insert(id);
            }
        }
    }

    fn poll_statuses(&mut self, now: Instant) {
        if self.sync.inflight.statuses > 0 {
            return;
        }
        // Lookups with history first: they decide expiries and resumed transactions.
        let ids: Vec<u32> = self
            .history_watch
            .iter()
            .take(STATUS_BATCH * HISTORY_BATCHES_PER_ROUND)
            .copied()
            .collect();
        self.ask_statuses(ids, true, now);
        if self.watch.is_empty() {
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
        self.ask_statuses(ids, false, now);
    }

    fn ask_statuses(&mut self, ids: Vec<u32>, history: bool, now: Instant) {
        for chunk in ids.chunks(STATUS_BATCH) {
            let ids = chunk.to_vec();
            let sigs = ids
                .iter()
                .filter_map(|id| self.store.view(*id).map(|v| v.signature))
                .collect();
            self.sync.inflight.statuses += 1;
            let c = self.chain.clone();
            self.spawn_chain(async move {
                let result = c.signature_statuses(sigs, history).await;
                ChainUpdate::Statuses {
                    asked: now,
                    ids,
                    history,
                    result,
                }
            });
        }
    }

    /// Asks the tip about blockhashes due a check, and the finalized bank about those the tip
    /// calls invalid and no height bounds yet.
    fn poll_validity(&mut self, now: Instant) {
        let height = self.sync.block_height;
        if height == 0 || self.sync.inflight.validity > 0 {
            return;
        }
        for hash in self.expiry.due(now, VALIDITY_CHECKS_PER_ROUND) {
            self.sync.inflight.validity += 1;
            let c = self.chain.clone();
            self.spawn_chain(async move {
                let result = c.blockhash_valid(hash, Commitment::Processed).await;
                ChainUpdate::TipValidity {
                    hash,
                    height,
                    result,
                }
            });
        }
        let final_height = self.sync.final_height;
        if final_height == 0 {
            return;
        }
        for hash in self
            .expiry
            .final_check_candidates(final_height, VALIDITY_CHECKS_PER_ROUND)
        {
            self.sync.inflight.validity += 1;
            let c = self.chain.clone();
            self.spawn_chain(async move {
                let result = c.blockhash_valid(hash, Commitment::Finalized).await;
                ChainUpdate::FinalValidity {
                    hash,
                    final_height,
                    result,
                }
            });
        }
    }

    /// Records an RPC failure for the header and the log, once per change of state.
    fn chain_failed(&mut self, err: &ChainError) {
        let secs = self.cfg.poll_interval.as_secs_f64();
        let msg = format!("RPC unreachable ({err}), retrying every {secs:.1} s");
        self.sync.last_error = Some(err.to_string());
        if self.sync.health.is_none() {
            log::warn!("{msg}");
        }
        self.sync.health = Some(msg);
    }

    fn chain_ok(&mut self) {
        self.sync.reached = true;
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
            ChainUpdate::FinalHeight(r) => {
                self.sync.inflight.final_height = false;
                r.map(|h| self.on_final_height(h))
            }
            ChainUpdate::Latest(r) => {
                self.sync.inflight.latest = false;
                r.map(|(hash, last_valid)| {
                    self.sync.latest = Some((hash, last_valid));
                    if let Some(lv) = self.expiry.on_latest(hash, last_valid) {
                        self.set_last_valid(hash, lv);
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
            ChainUpdate::Statuses {
                asked,
                ids,
                history,
                result,
            } => {
                self.sync.inflight.statuses = self.sync.inflight.statuses.saturating_sub(1);
                result.map(|statuses| {
                    for (id, st) in ids.into_iter().zip(statuses) {
                        self.on_status(id, st, asked, history);
                    }
                })
            }
            ChainUpdate::TipValidity {
                hash,
                height,
                result,
            } => {
                self.sync.inflight.validity = self.sync.inflight.validity.saturating_sub(1);
                result.map(|valid| {
                    if let Some(lv) = self.expiry.on_tip_validity(hash, valid, height) {
                        self.set_last_valid(hash, lv);
                    }
                })
            }
            ChainUpdate::FinalValidity {
                hash,
                final_height,
                result,
            } => {
                self.sync.inflight.validity = self.sync.inflight.validity.saturating_sub(1);
                result.map(|valid| {
                    let now = Instant::now();
                    if self
                        .expiry
                        .on_final_validity(hash, valid, final_height, now)
                    {
                        self.on_blockhash_dead(hash);
                    }
                })
            }
        };
        match result {
            Ok(()) => self.chain_ok(),
            Err(err) => self.chain_failed(&err),
        }
    }

    /// Also re-judged when the height stands still: a bound learned since (a latest blockhash,
    /// a first validity answer) may already be behind it.
    fn on_final_height(&mut self, height: u64) {
        self.sync.final_height = self.sync.final_height.max(height);
        let final_height = self.sync.final_height;
        for hash in self
            .expiry
            .on_finalized_height(final_height, Instant::now())
        {
            self.on_blockhash_dead(hash);
        }
    }

    /// No bank that can still come accepts `hash`: each unfinished transaction on it gets one
    /// last status lookup, with history (the status cache may have forgotten an old landing),
    /// and only then expires.
    fn on_blockhash_dead(&mut self, hash: Hash) {
        log::info!(
            "blockhash {hash} is past its last valid block height at finalized; looking its \
             transactions up once more"
        );
        if let Some(ids) = self.by_hash.get(&hash) {
            for id in ids {
                // A re-signed transaction has moved on to another blockhash.
                if self
                    .store
                    .record(*id)
                    .is_some_and(|r| !r.state.is_final() && r.blockhash == hash)
                {
                    self.history_watch.insert(*id);
                }
            }
        }
    }

    fn set_last_valid(&mut self, hash: Hash, lv: super::expiry::LastValid) {
        let Some(ids) = self.by_hash.get(&hash) else {
            return;
        };
        for id in ids {
            if self.store.record(*id).is_some_and(|r| r.blockhash == hash) {
                self.store
                    .set_last_valid_block_height(*id, lv.height, lv.exact);
            }
        }
    }
}
