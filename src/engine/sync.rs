//! Keeping the engine's view of the chain current: slot, block heights, leader schedule, TPU
//! addresses and stake — each an RPC call spawned off the loop, at most one of a kind in flight,
//! retried every poll while the RPC is unreachable. It also carries the lookups the confirmer
//! asks for (signature statuses, blockhash validity) and hands their answers back as
//! [`ChainFact`]s: this module talks to the RPC, the confirmer decides what the answers mean.

use std::{future::Future, sync::Arc, time::Duration};

use solana_hash::Hash;
use tokio::{sync::mpsc, time::Instant};

use super::{
    config::EngineConfig,
    fee_watch::FeeWatch,
    leaders::LeaderBook,
    net::{Chain, ChainError, STATUS_BATCH},
    snapshot::FeeView,
    store::TxStore,
    update::{ChainFact, ChainUpdate, Update},
};
use crate::config::Commitment;

/// An RPC that has never answered for this long fails the run: the URL is most likely wrong,
/// and a user should hear so rather than watch a run that can never start.
pub const RPC_NEVER_REACHABLE: Duration = Duration::from_secs(20);
const NODES_REFRESH: Duration = Duration::from_secs(30);
/// A websocket slot feed quieter than this is treated as down, and `getSlot` is polled.
const FEED_STALE: Duration = Duration::from_millis(1_500);

/// Which calls are out: a poll never asks again for what is still on its way.
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

/// The chain as last heard from, and the RPC calls on their way to find out more.
pub(super) struct ChainSync {
    chain: Arc<dyn Chain>,
    updates: mpsc::UnboundedSender<Update>,
    identity: solana_pubkey::Pubkey,
    poll_interval: Duration,
    rpc_url_display: String,
    start: Instant,
    /// The tip's (processed) block height, highest seen.
    tip_height: u64,
    /// The finalized block height, highest seen: expiry is decided against it.
    final_height: u64,
    /// Some RPC call has succeeded in this run.
    reached: bool,
    staked: Option<bool>,
    health: Option<String>,
    /// The last RPC failure, for the reason a run that never reached its RPC gives.
    last_error: Option<String>,
    inflight: Inflight,
    nodes_at: Option<Instant>,
    feed_at: Option<Instant>,
    fees: FeeWatch,
    /// The batch whose transactions status lookups name (see `host`).
    batch: u32,
    /// The latest blockhash and its last valid height, as last heard: a new batch's confirmer
    /// starts from it rather than waiting a poll.
    latest: Option<(Hash, u64)>,
}

impl ChainSync {
    pub(super) fn new(
        cfg: &EngineConfig,
        chain: Arc<dyn Chain>,
        updates: mpsc::UnboundedSender<Update>,
        start: Instant,
        batch_price: u64,
    ) -> Self {
        Self {
            fees: FeeWatch::new(cfg.fee_accounts.clone(), batch_price),
            chain,
            updates,
            identity: cfg.identity,
            poll_interval: cfg.poll_interval,
            rpc_url_display: cfg.rpc_url_display.clone(),
            start,
            tip_height: 0,
            final_height: 0,
            reached: false,
            staked: None,
            health: None,
            last_error: None,
            inflight: Inflight::default(),
            nodes_at: None,
            feed_at: None,
            batch: 0,
            latest: None,
        }
    }

    /// Starts batch `batch` (see `host`): its fees are watched from now on, and what the chain
    /// view already knows about blockhashes and finality is handed back for its confirmer.
    pub(super) fn begin(
        &mut self,
        cfg: &EngineConfig,
        batch: u32,
        batch_price: u64,
    ) -> Vec<ChainFact> {
        self.batch = batch;
        self.fees = FeeWatch::new(cfg.fee_accounts.clone(), batch_price);
        let mut known = Vec::new();
        if self.final_height > 0 {
            known.push(ChainFact::FinalHeight(self.final_height));
        }
        if let Some((hash, last_valid)) = self.latest {
            known.push(ChainFact::Latest { hash, last_valid });
        }
        known
    }

    /// The tip's (processed) block height, highest seen; 0 before the first answer.
    pub(super) fn tip_height(&self) -> u64 {
        self.tip_height
    }

    pub(super) fn staked(&self) -> Option<bool> {
        self.staked
    }

    /// Where the batch's price sits among recent fees, once the cluster answered.
    pub(super) fn fees(&self) -> Option<FeeView> {
        self.fees.view()
    }

    /// Why the RPC is unreachable, while it is.
    pub(super) fn health(&self) -> Option<&String> {
        self.health.as_ref()
    }

    fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ChainUpdate> + Send + 'static,
    {
        let tx = self.updates.clone();
        tokio::spawn(async move {
            let _ = tx.send(Update::Chain(fut.await));
        });
    }

    /// Slots are arriving over the websocket: the last one came within [`FEED_STALE`].
    pub(super) fn feed_live(&self, now: Instant) -> bool {
        self.feed_at
            .is_some_and(|t| now.saturating_duration_since(t) <= FEED_STALE)
    }

    /// A slot pushed by the websocket feed.
    pub(super) fn on_slot_feed(&mut self, slot: u64, leaders: &mut LeaderBook) {
        self.feed_at = Some(Instant::now());
        leaders.set_slot(slot);
        self.request_schedule(leaders);
    }

    /// Fetches more of the leader schedule as soon as the known part runs short — including
    /// right after the first slot arrives, so the first send does not wait a poll.
    fn request_schedule(&mut self, leaders: &LeaderBook) {
        // Fetched with `--tpu` and `--via rpc` too: landings are credited to their slot's leader.
        if self.inflight.schedule {
            return;
        }
        if let Some((start, limit)) = leaders.schedule_request() {
            self.inflight.schedule = true;
            let c = self.chain.clone();
            self.spawn(async move {
                let result = c.slot_leaders(start, limit).await;
                ChainUpdate::Schedule { start, result }
            });
        }
    }

    /// One round of the chain-view polls, about once a slot.
    pub(super) fn poll(&mut self, now: Instant, leaders: &LeaderBook) {
        let c = self.chain.clone();
        if !self.inflight.slot && self.feed_at.is_none_or(|t| now - t > FEED_STALE) {
            self.inflight.slot = true;
            let c = c.clone();
            self.spawn(async move { ChainUpdate::Slot(c.slot().await) });
        }
        if !self.inflight.height {
            self.inflight.height = true;
            let c = c.clone();
            self.spawn(
                async move { ChainUpdate::Height(c.block_height(Commitment::Processed).await) },
            );
        }
        if !self.inflight.final_height {
            self.inflight.final_height = true;
            let c = c.clone();
            self.spawn(async move {
                ChainUpdate::FinalHeight(c.block_height(Commitment::Finalized).await)
            });
        }
        if !self.inflight.latest {
            self.inflight.latest = true;
            let c = c.clone();
            self.spawn(async move { ChainUpdate::Latest(c.latest_blockhash().await) });
        }
        if !self.inflight.staked && self.staked.is_none() {
            self.inflight.staked = true;
            let (c, id) = (c.clone(), self.identity);
            self.spawn(async move { ChainUpdate::Staked(c.is_staked(id).await) });
        }
        self.fees.poll(now, &self.chain, &self.updates);
        self.request_schedule(leaders);
        // Also with `--tpu`: the node list names whoever is behind the pinned address.
        if !self.inflight.nodes && self.nodes_at.is_none_or(|t| now - t > NODES_REFRESH) {
            self.inflight.nodes = true;
            self.spawn(async move { ChainUpdate::Nodes(c.tpu_quic_addresses().await) });
        }
    }

    /// Why the run must fail: the RPC has never answered within [`RPC_NEVER_REACHABLE`]. An RPC
    /// that answered once and then went away is an outage, and the run waits it out.
    pub(super) fn check_reachable(&self, now: Instant) -> Result<(), String> {
        if self.reached || now - self.start < RPC_NEVER_REACHABLE {
            return Ok(());
        }
        let why = match &self.last_error {
            Some(err) => format!(" (last error: {err})"),
            None => String::new(),
        };
        Err(format!(
            "the RPC at {} has not answered in {} s{why}",
            self.rpc_url_display,
            RPC_NEVER_REACHABLE.as_secs()
        ))
    }

    /// Status lookups still out: the next round waits for them.
    pub(super) fn statuses_in_flight(&self) -> bool {
        self.inflight.statuses > 0
    }

    /// Asks the statuses of `ids`, in batches the RPC takes; `asked` is when this round began.
    pub(super) fn ask_statuses(
        &mut self,
        ids: &[u32],
        history: bool,
        store: &TxStore,
        asked: Instant,
    ) {
        for chunk in ids.chunks(STATUS_BATCH) {
            let ids = chunk.to_vec();
            let sigs = ids
                .iter()
                .filter_map(|id| store.view(*id).map(|v| v.signature))
                .collect();
            self.inflight.statuses += 1;
            let c = self.chain.clone();
            let batch = self.batch;
            self.spawn(async move {
                let result = c.signature_statuses(sigs, history).await;
                ChainUpdate::Statuses {
                    batch,
                    asked,
                    ids,
                    history,
                    result,
                }
            });
        }
    }

    /// The finalized height to judge validity checks by, when a round of them may start: the
    /// tip height is known and no check is still out.
    pub(super) fn validity_round(&self) -> Option<u64> {
        (self.tip_height > 0 && self.inflight.validity == 0).then_some(self.final_height)
    }

    /// Asks the tip (processed) bank whether it still takes `hash`.
    pub(super) fn ask_tip_validity(&mut self, hash: Hash) {
        self.inflight.validity += 1;
        let (c, height) = (self.chain.clone(), self.tip_height);
        self.spawn(async move {
            let result = c.blockhash_valid(hash, Commitment::Processed).await;
            ChainUpdate::TipValidity {
                hash,
                height,
                result,
            }
        });
    }

    /// Asks the finalized bank whether it still takes `hash`.
    pub(super) fn ask_final_validity(&mut self, hash: Hash) {
        self.inflight.validity += 1;
        let (c, final_height) = (self.chain.clone(), self.final_height);
        self.spawn(async move {
            let result = c.blockhash_valid(hash, Commitment::Finalized).await;
            ChainUpdate::FinalValidity {
                hash,
                final_height,
                result,
            }
        });
    }

    /// Takes in one RPC answer: the chain view (and the leader schedule and addresses in
    /// `leaders`) is updated here; what bears on transactions is handed back.
    pub(super) fn on_answer(
        &mut self,
        update: ChainUpdate,
        leaders: &mut LeaderBook,
    ) -> Option<ChainFact> {
        let result: Result<Option<ChainFact>, ChainError> = match update {
            // Not a health signal: some nodes refuse this call and are fine otherwise.
            ChainUpdate::Fees(r) => {
                self.fees.on_answer(r);
                return None;
            }
            ChainUpdate::Slot(r) => {
                self.inflight.slot = false;
                r.map(|slot| {
                    leaders.set_slot(slot);
                    self.request_schedule(leaders);
                    None
                })
            }
            ChainUpdate::Height(r) => {
                self.inflight.height = false;
                r.map(|h| {
                    self.tip_height = self.tip_height.max(h);
                    None
                })
            }
            ChainUpdate::FinalHeight(r) => {
                self.inflight.final_height = false;
                r.map(|h| {
                    self.final_height = self.final_height.max(h);
                    Some(ChainFact::FinalHeight(self.final_height))
                })
            }
            ChainUpdate::Latest(r) => {
                self.inflight.latest = false;
                r.map(|(hash, last_valid)| {
                    self.latest = Some((hash, last_valid));
                    Some(ChainFact::Latest { hash, last_valid })
                })
            }
            ChainUpdate::Schedule { start, result } => {
                self.inflight.schedule = false;
                match result {
                    Ok(slots) => {
                        leaders.add_schedule(start, &slots);
                        Ok(None)
                    }
                    // Not a health signal either: a node refuses a range past the next
                    // epoch's end (short epochs), and a node that is down says so in the
                    // other calls. Ask again at once for less, or at the next slot once the
                    // request is as small as it gets (a node that is down would otherwise be
                    // asked in a loop).
                    Err(e) => {
                        log::debug!("leader schedule from slot {start}: {}", e.reason);
                        if leaders.schedule_refused() {
                            self.request_schedule(leaders);
                        }
                        return None;
                    }
                }
            }
            ChainUpdate::Nodes(r) => {
                self.inflight.nodes = false;
                if r.is_err() {
                    leaders.nodes_unavailable();
                }
                r.map(|addrs| {
                    self.nodes_at = Some(Instant::now());
                    leaders.set_addresses(addrs);
                    None
                })
            }
            ChainUpdate::Staked(r) => {
                self.inflight.staked = false;
                r.map(|staked| {
                    self.staked = Some(staked);
                    None
                })
            }
            ChainUpdate::Statuses {
                batch,
                asked,
                ids,
                history,
                result,
            } => {
                self.inflight.statuses = self.inflight.statuses.saturating_sub(1);
                let current = batch == self.batch;
                result.map(|statuses| {
                    // An earlier batch's ids name other transactions: the answer still says
                    // the RPC is up, and nothing more.
                    current.then_some(ChainFact::Statuses {
                        asked,
                        ids,
                        history,
                        statuses,
                    })
                })
            }
            ChainUpdate::TipValidity {
                hash,
                height,
                result,
            } => {
                self.inflight.validity = self.inflight.validity.saturating_sub(1);
                result.map(|valid| {
                    Some(ChainFact::TipValidity {
                        hash,
                        height,
                        valid,
                    })
                })
            }
            ChainUpdate::FinalValidity {
                hash,
                final_height,
                result,
            } => {
                self.inflight.validity = self.inflight.validity.saturating_sub(1);
                result.map(|valid| {
                    Some(ChainFact::FinalValidity {
                        hash,
                        final_height,
                        valid,
                    })
                })
            }
        };
        match result {
            Ok(fact) => {
                self.chain_ok();
                fact
            }
            Err(err) => {
                self.chain_failed(&err);
                None
            }
        }
    }

    /// Records an RPC failure for the header and the log, once per change of state.
    fn chain_failed(&mut self, err: &ChainError) {
        let secs = self.poll_interval.as_secs_f64();
        let msg = format!("RPC unreachable ({err}), retrying every {secs:.1} s");
        self.last_error = Some(err.to_string());
        if self.health.is_none() {
            log::warn!("{msg}");
        }
        self.health = Some(msg);
    }

    fn chain_ok(&mut self) {
        self.reached = true;
        if self.health.take().is_some() {
            log::info!("RPC reachable again");
        }
    }
}
