//! The engine's single task: owns all state, so nothing is locked; everything that waits on the
//! network runs in spawned tasks that report back as [`Update`]s.

use std::{
    cmp::Reverse,
    collections::{BTreeSet, BinaryHeap, HashMap, VecDeque},
    net::SocketAddr,
    sync::Arc,
    time::Duration,
};

use solana_hash::Hash;
use tokio::{
    sync::{mpsc, watch},
    time::{Instant, MissedTickBehavior, interval, sleep_until},
};

use super::{
    EngineConfig, RunOutcome,
    command::Command,
    expiry::ExpiryWatch,
    leaders::LeaderBook,
    maxrate::{self, MaxRate},
    meter::Meter,
    net::{Chain, SendError, StreamOutcome, Transport},
    pacer::Pacer,
    snapshot::{ClusterView, RateTarget, RateView, RunState, Snapshot},
    store::TxStore,
};
use crate::{config::Commitment, source::LoadedTx};

/// What spawned network tasks report back to the loop.
pub(super) enum Update {
    SendDone {
        id: u32,
        /// The send-log index of this send's first stream: names the send's round.
        round: usize,
        log_index: usize,
        leader: solana_pubkey::Pubkey,
        addr: SocketAddr,
        result: Result<(), SendError>,
    },
    Chain(super::sync::ChainUpdate),
}

/// Sends made in one wake-up at most; with the pacer's 50 ms catch-up this bounds a burst.
const SENDS_PER_WAKE: usize = 64;

/// Updates handled per loop turn at most, so commands and sends still get their turn.
const UPDATE_BATCH: usize = 256;

pub(super) struct Engine {
    pub(super) cfg: EngineConfig,
    pub(super) chain: Arc<dyn Chain>,
    pub(super) transport: Arc<dyn Transport>,
    pub(super) store: TxStore,
    pub(super) leaders: LeaderBook,
    pub(super) expiry: ExpiryWatch,
    pub(super) meter: Meter,
    pub(super) pacer: Pacer,
    pub(super) maxrate: Option<MaxRate>,
    pub(super) run: RunState,
    /// Never-sent transactions, in input order.
    pub(super) fresh: VecDeque<u32>,
    /// (due, id): the next resend of each sent, unfinished transaction.
    pub(super) resends: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Sent unfinished transactions the confirmer asks the status cache about.
    pub(super) watch: BTreeSet<u32>,
    /// Transactions whose next lookup must search the ledger too: resumed ones, and those
    /// whose blockhash or deadline is past (the last word before Expired).
    pub(super) history_watch: BTreeSet<u32>,
    /// Streams of each transaction send still in flight, and whether one was accepted, by
    /// (id, round): a send reached no leader only when every stream failed.
    rounds: HashMap<(u32, usize), (usize, bool)>,
    pub(super) by_hash: HashMap<Hash, Vec<u32>>,
    pub(super) commitments: Vec<Option<Commitment>>,
    pub(super) sync: super::sync::SyncState,
    pub(super) updates: mpsc::UnboundedSender<Update>,
    updates_rx: Option<mpsc::UnboundedReceiver<Update>>,
    /// Shared with the supervisor in [`super::spawn_resumed`], which publishes FAILED if this
    /// task panics.
    snapshot_tx: Arc<watch::Sender<Arc<Snapshot>>>,
    seq: u64,
    pub(super) start: Instant,
}

impl Engine {
    pub(super) fn new(
        cfg: EngineConfig,
        txs: Vec<LoadedTx>,
        chain: Arc<dyn Chain>,
        transport: Arc<dyn Transport>,
    ) -> (Self, watch::Receiver<Arc<Snapshot>>) {
        let start = Instant::now();
        let mut expiry = ExpiryWatch::default();
        let mut by_hash: HashMap<Hash, Vec<u32>> = HashMap::new();
        for (i, tx) in txs.iter().enumerate() {
            if !tx.durable_nonce {
                expiry.track(tx.recent_blockhash);
                by_hash
                    .entry(tx.recent_blockhash)
                    .or_default()
                    .push(i as u32);
            }
        }
        let n = txs.len();
        let store = TxStore::new(txs, start);
        let (rate, maxrate) = match cfg.rate {
            RateTarget::Fixed(r) => (r, None),
            RateTarget::Max => (maxrate::START_RATE, Some(MaxRate::default())),
        };
        let (updates, updates_rx) = mpsc::unbounded_channel();
        let leaders = LeaderBook::new(cfg.fanout, cfg.pinned_tpu);
        let mut engine = Self {
            pacer: Pacer::new(rate, start),
            maxrate,
            run: RunState::Starting,
            fresh: (0..n as u32).collect(),
            resends: BinaryHeap::new(),
            watch: BTreeSet::new(),
            history_watch: BTreeSet::new(),
            rounds: HashMap::new(),
            by_hash,
            commitments: vec![None; n],
            sync: Default::default(),
            updates,
            updates_rx: Some(updates_rx),
            snapshot_tx: Arc::new(
                watch::channel(Arc::new(Snapshot::blank(
                    String::new(),
                    "confirmed",
                    solana_pubkey::Pubkey::default(),
                    RateTarget::Fixed(0.0),
                )))
                .0,
            ),
            seq: 0,
            start,
            store,
            leaders,
            expiry,
            meter: Meter::default(),
            cfg,
            chain,
            transport,
        };
        let first = engine.build_snapshot();
        let (tx, rx) = watch::channel(Arc::new(first));
        engine.snapshot_tx = Arc::new(tx);
        (engine, rx)
    }

    /// The snapshot channel, for the supervisor.
    pub(super) fn publisher(&self) -> Arc<watch::Sender<Arc<Snapshot>>> {
        self.snapshot_tx.clone()
    }

    /// Ends the run on an error it cannot continue from; the dashboard shows FAILED with
    /// `reason` and the report's outcome is `failed`.
    pub(super) fn fail(&mut self, reason: String) {
        if self.run.is_over() {
            return;
        }
        log::error!("engine failed: {reason}");
        self.run = RunState::Failed(reason);
    }

    pub(super) async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut slot_feed: Option<mpsc::UnboundedReceiver<u64>>,
    ) -> RunOutcome {
        let Some(mut updates) = self.updates_rx.take() else {
            return self.outcome();
        };
        let mut poll = interval(self.cfg.poll_interval);
        poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut publish = interval(self.cfg.publish_interval);
        publish.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut control = interval(maxrate::PERIOD);
        control.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut paused = self.cfg.start_paused;
        if self.store.is_empty() {
            self.run = RunState::Done;
        }
        while !self.run.is_over() {
            let send_at = if paused {
                None
            } else {
                self.next_send_at(Instant::now())
            };
            // Not biased: under load a stream of updates must not starve the pacer or the
            // snapshot publisher.
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.on_command(cmd, &mut paused),
                    None => self.run = RunState::Stopped,
                },
                Some(update) = updates.recv() => {
                    self.on_update(update);
                    // Take what else has queued up in one go: one loop turn per update would
                    // re-arm every timer for each of them.
                    for _ in 0..UPDATE_BATCH {
                        match updates.try_recv() {
                            Ok(update) => self.on_update(update),
                            Err(_) => break,
                        }
                    }
                }
                slot = recv_opt(&mut slot_feed) => match slot {
                    Some(slot) => self.on_slot(slot),
                    None => slot_feed = None,
                },
                _ = poll.tick() => self.poll(),
                _ = control.tick() => self.control(),
                _ = publish.tick() => self.publish(),
                () = sleep_until(send_at.unwrap_or_else(far_future)), if send_at.is_some() => {
                    self.send_due();
                }
            }
            if !self.run.is_over() {
                self.run = if self.store.all_final() {
                    RunState::Done
                } else if paused {
                    RunState::Paused
                } else if self.store.counts().sends > 0 {
                    RunState::Running
                } else {
                    RunState::Starting
                };
            }
        }
        self.publish();
        self.outcome()
    }

    fn outcome(&self) -> RunOutcome {
        RunOutcome {
            snapshot: self.snapshot_tx.borrow().clone(),
            commitments: self.commitments.clone(),
            leaders: self.leaders.all_stats(),
        }
    }

    fn on_command(&mut self, cmd: Command, paused: &mut bool) {
        let now = Instant::now();
        match cmd {
            Command::Pause => *paused = true,
            Command::Resume => *paused = false,
            Command::TogglePause => *paused = !*paused,
            Command::SetRate(RateTarget::Fixed(r)) => {
                let r = if r.is_finite() { r.max(1.0) } else { 1.0 };
                self.cfg.rate = RateTarget::Fixed(r);
                self.maxrate = None;
                self.pacer.set_rate(r, now);
                log::info!("target rate set to {r} tx/s");
            }
            Command::SetRate(RateTarget::Max) => {
                self.cfg.rate = RateTarget::Max;
                let m = MaxRate::default();
                self.pacer.set_rate(m.rate(), now);
                self.maxrate = Some(m);
                log::info!("target rate set to max (closed loop)");
            }
            Command::Stop => {
                log::info!("stopping on request");
                self.run = RunState::Stopped;
            }
        }
        if !*paused {
            self.pacer.restart(now);
        }
        self.publish();
    }

    /// When the next send is due, or `None` when there is nothing to send or nowhere to send.
    fn next_send_at(&mut self, now: Instant) -> Option<Instant> {
        let work_at = if !self.fresh.is_empty() {
            Some(now)
        } else {
            self.next_resend_due()
        }?;
        if self.leaders.all_backing_off(now) {
            // Nowhere to send: wake when a backoff ends (or on the next update).
            let until = self.leaders.next_backoff_end(now)?;
            return Some(until.max(work_at).max(self.pacer.next_at()));
        }
        Some(work_at.max(self.pacer.next_at()))
    }

    /// Drops stale heap entries and returns the earliest due resend.
    fn next_resend_due(&mut self) -> Option<Instant> {
        while let Some(Reverse((due, id))) = self.resends.peek().copied() {
            let live = self.store.record(id).is_some_and(|r| !r.state.is_final());
            if live {
                return Some(due);
            }
            self.resends.pop();
        }
        None
    }

    fn pick(&mut self, now: Instant) -> Option<u32> {
        // Resends first: they are older and closer to expiry.
        while let Some(Reverse((due, id))) = self.resends.peek().copied() {
            if due > now {
                break;
            }
            self.resends.pop();
            let Some(rec) = self.store.record(id) else {
                continue;
            };
            if rec.state.is_final() {
                continue;
            }
            let hash_dead = !rec.durable_nonce
                && self
                    .expiry
                    .resend_pointless(&rec.blockhash, self.sync.block_height);
            // Landed below the commitment, about to be declared expired, or the RPC is out so
            // nobody knows whether it landed: wait, and let first sends have the pace.
            if rec.seen_slot.is_some() || hash_dead || self.sync.health.is_some() {
                self.resends
                    .push(Reverse((now + self.cfg.resend_interval, id)));
                continue;
            }
            return Some(id);
        }
        // A never-sent transaction may have finished already (expired, or landed through
        // someone else): skip it. One whose blockhash the cluster no longer takes waits with
        // the resends instead of spending the pace (it expires once that is final).
        while let Some(id) = self.fresh.pop_front() {
            let Some(rec) = self.store.record(id) else {
                continue;
            };
            if rec.state.is_final() {
                continue;
            }
            if !rec.durable_nonce
                && self
                    .expiry
                    .resend_pointless(&rec.blockhash, self.sync.block_height)
            {
                self.resends
                    .push(Reverse((now + self.cfg.resend_interval, id)));
                continue;
            }
            return Some(id);
        }
        None
    }

    /// Hands a fact to the journal. A journal that can no longer be written ends the run: a
    /// run that carried on would not be resumable, and the user would not know.
    pub(super) fn fact(&mut self, fact: super::TxFact) {
        let sent = self
            .cfg
            .facts
            .as_ref()
            .is_none_or(|tx| tx.send(fact).is_ok());
        if !sent {
            self.journal_failed();
        }
    }

    /// Checks the journal writer's health (it may fail on a sync with no new fact to send).
    pub(super) fn check_journal(&mut self) {
        if self
            .cfg
            .journal_failure
            .as_ref()
            .is_some_and(|f| f.get().is_some())
        {
            self.journal_failed();
        }
    }

    fn journal_failed(&mut self) {
        let why = self
            .cfg
            .journal_failure
            .as_ref()
            .and_then(|f| f.get().cloned())
            .unwrap_or_else(|| "its writer stopped".to_string());
        self.fail(format!(
            "the journal can no longer be written ({why}); stopped sending so that the run stays \
             resumable from what is on disk"
        ));
    }

    /// Sends every transaction whose pacer slot has come, up to [`SENDS_PER_WAKE`]: when the
    /// task wakes late (timer granularity, a busy machine), the sends it owes go out in this
    /// turn instead of one per loop turn, which capped the pace near 650 tx/s.
    fn send_due(&mut self) {
        for _ in 0..SENDS_PER_WAKE {
            if !self.send_next() || self.pacer.next_at() > Instant::now() {
                break;
            }
        }
    }

    /// Sends the next transaction; false when there was nothing to send or nowhere to send it.
    fn send_next(&mut self) -> bool {
        let now = Instant::now();
        let targets = self.leaders.targets(now);
        if targets.is_empty() {
            return false;
        }
        let Some(id) = self.pick(now) else {
            return false;
        };
        let Ok(first_log) = self.store.record_send(id, now, &targets) else {
            return false;
        };
        let sends = self.store.view(id).map_or(0, |v| v.sends);
        self.fact(super::TxFact::Sent { id, sends });
        self.pacer.consume(now);
        self.meter.on_send(now - self.start);
        self.watch.insert(id);
        self.resends
            .push(Reverse((now + self.cfg.resend_interval, id)));
        let Some(wire) = self.store.record(id).map(|r| r.wire.clone()) else {
            return true;
        };
        let streams = targets.iter().filter(|(_, a)| a.is_some()).count();
        if streams > 0 {
            self.rounds.insert((id, first_log), (streams, false));
        }
        for (i, (leader, addr)) in targets.into_iter().enumerate() {
            let Some(addr) = addr else { continue };
            self.leaders.on_sent(leader, addr);
            self.store.record_stream_sent();
            let send = self.transport.send(addr, wire.clone());
            let timeout = self.cfg.send_timeout;
            let updates = self.updates.clone();
            tokio::spawn(async move {
                let result = match tokio::time::timeout(timeout, send).await {
                    Ok(r) => r,
                    Err(_) => Err(SendError::Timeout(timeout)),
                };
                let _ = updates.send(Update::SendDone {
                    id,
                    round: first_log,
                    log_index: first_log + i,
                    leader,
                    addr,
                    result,
                });
            });
        }
        true
    }

    fn on_update(&mut self, update: Update) {
        match update {
            Update::SendDone {
                id,
                round,
                log_index,
                leader,
                addr,
                result,
            } => {
                let now = Instant::now();
                let outcome = self.leaders.on_result(leader, addr, &result, now);
                let error = result.as_ref().err().map(|e| e.to_string());
                if let Some(err) = &error {
                    log::debug!("send to {leader} at {addr} failed: {err}");
                }
                self.store
                    .record_stream_result(id, log_index, outcome, error.as_deref());
                self.on_round_result(id, round, result.is_ok());
                if outcome == StreamOutcome::Throttled
                    && let Some(m) = self.maxrate.as_mut()
                {
                    m.on_throttle();
                }
            }
            Update::Chain(update) => self.on_chain(update),
        }
    }

    /// One stream of a send finished: when it was the send's last, and none was accepted, the
    /// send reached no leader.
    fn on_round_result(&mut self, id: u32, round: usize, accepted: bool) {
        let Some((left, any)) = self.rounds.get_mut(&(id, round)) else {
            return;
        };
        *left -= 1;
        *any |= accepted;
        if *left == 0 {
            let reached = *any;
            self.rounds.remove(&(id, round));
            if !reached {
                self.store.record_failed_send();
            }
        }
    }

    fn control(&mut self) {
        let elapsed = Instant::now() - self.start;
        // Judge the last period alone: a longer average lags a rising rate and would read as
        // "the pacer cannot keep up", stalling the climb.
        let period_ticks = (maxrate::PERIOD.as_millis() / 100) as u64;
        let (achieved, _) = self.meter.rates_over(elapsed, period_ticks);
        let unconfirmed = self.watch.len() as u64;
        if let Some(m) = self.maxrate.as_mut() {
            let rate = m.evaluate(unconfirmed, achieved);
            self.pacer.set_rate(rate, Instant::now());
        }
    }

    pub(super) fn publish(&mut self) {
        let snap = self.build_snapshot();
        self.snapshot_tx.send_replace(Arc::new(snap));
    }

    fn build_snapshot(&mut self) -> Snapshot {
        self.seq += 1;
        let now = Instant::now();
        let elapsed = now - self.start;
        let (achieved, landing) = self.meter.rates(elapsed);
        let transport = self.transport.clone();
        Snapshot {
            seq: self.seq,
            run: self.run.clone(),
            elapsed,
            cluster: ClusterView {
                rpc_url: self.cfg.rpc_url_display.clone(),
                commitment: self.cfg.commitment.as_str(),
                slot: self.leaders.slot(),
                block_height: self.sync.block_height,
                identity: self.cfg.identity,
                staked: self.sync.staked,
                health: self.sync.health.clone(),
            },
            rate: RateView {
                target: self.cfg.rate,
                pacing: self.pacer.rate(),
                achieved,
                landing,
                history: Arc::new(self.meter.history(elapsed)),
            },
            counts: self.store.counts(),
            leaders: Arc::new(self.leaders.views(now, |a| transport.link_state(a))),
            txs: self.store.views().clone(),
            queues: self.store.queues().clone(),
            latency: self.meter.latency(),
            phase: None,
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400)
}

async fn recv_opt(feed: &mut Option<mpsc::UnboundedReceiver<u64>>) -> Option<u64> {
    match feed {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
