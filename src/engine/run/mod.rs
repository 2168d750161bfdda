//! The engine's single task: one event loop that owns every part, so nothing is locked.
//! Everything that waits on the network runs in spawned tasks that report back as [`Update`]s;
//! the loop routes each to the part that owns it, hands what one part decided to the others,
//! and publishes snapshots.
//!
//! ```text
//!                                      run  (the event loop: owns every part and the TxStore)
//!       ┌──────────┬─────────┬──────────┴──────────┐
//!       ▼          ▼         ▼          ▼          ▼
//!     facts      sync     confirm ◄─ resume ─► dispatch
//!                            │                     │
//!                       ┌────┴────┐            ┌───┴───┐
//!                       ▼         ▼            ▼       ▼
//!                  blockhashes resign        pacer  maxrate
//!                       │
//!                       ▼
//!                    expiry
//!  ──────────────────────────────────────────────────────────────────────────────
//!   leaves, which the modules above import and which import none of them:
//!   update ─► net     store ─► lifecycle, snapshot, event     leaders ─► net, snapshot
//!   fee_watch ─► net, snapshot, update (sync's: recent fees for the header)
//!   meter ─► distribution ─► snapshot     wire_meter ─► snapshot, store     command ─► snapshot
//!   config ─► event, fact, snapshot     event ─► lifecycle, net     fact     outcome ─► snapshot
//! ```
//!
//! Arrows point at what a module imports; nothing imports this module but `mod.rs` and `host`
//! (which runs it batch after batch, through its child `batches`), and no arrow points up, so
//! there is no cycle. The parts: [`ChainSync`] keeps the chain view and
//! makes every RPC call; [`Confirmer`] decides each transaction's fate from the answers;
//! [`Dispatcher`] decides what to send when; `resume` carries a journal's facts over;
//! [`FactSink`] hands facts to the journal. They never reach into one another: each takes what
//! it needs as arguments (the store, the leaders, `now`) and returns what it decided, which
//! the loop hands on. A transaction's state changes only in [`TxStore::apply`].

mod batches;
mod parts;
mod publish;
mod timers;

pub(super) use batches::Queued;

use std::{sync::Arc, time::Duration};

use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::{
    sync::{mpsc, watch},
    time::{Instant, sleep_until},
};

use super::{
    command::Command,
    config::EngineConfig,
    confirm::{Confirmer, Decided},
    dispatch::{Dispatcher, Hold},
    fact::{Prior, TxFact, TxIdent},
    facts::FactSink,
    leaders::LeaderBook,
    maxrate,
    meter::Meter,
    net::{Chain, Transport},
    outcome::RunOutcome,
    resume,
    slots::FeedEvent,
    snapshot::{RateTarget, RunState, Snapshot},
    store::{TxRecord, TxStore},
    sync::ChainSync,
    update::{ChainFact, Update},
    wire_meter::{self, WireMeter},
};
use crate::source::LoadedTx;
use parts::BatchParts;
use timers::{Timers, far_future, recv_opt};

/// Updates handled per loop turn at most, so commands and sends still get their turn.
const UPDATE_BATCH: usize = 256;
/// The run's tail: once everything has gone out and this few are still unconfirmed, their
/// statuses are asked (one batched call) whenever the websocket says a slot reached the run's
/// commitment, and every [`TAIL_POLL`] besides for a server without slot updates — instead of
/// once a poll — so the run (and a deploy phase) ends a round trip after the last landing is
/// confirmed, not up to a poll later.
const TAIL_WATCH: usize = 256;
const TAIL_POLL: Duration = Duration::from_millis(100);

/// The loop's state: the parts, the store, and what the header shows.
pub(super) struct Engine {
    store: TxStore,
    leaders: LeaderBook,
    meter: Meter,
    /// The header's last minute on the wire.
    wire: WireMeter,
    sync: ChainSync,
    confirmer: Confirmer,
    dispatcher: Dispatcher,
    facts: FactSink,
    transport: Arc<dyn Transport>,
    run: RunState,
    updates: Option<mpsc::UnboundedReceiver<Update>>,
    /// For the parts a new batch needs (see `batches`).
    updates_tx: mpsc::UnboundedSender<Update>,
    /// The run's settings (a host's, for its batches): the header's cluster facts, the
    /// intervals, and what each batch's parts are built from.
    cfg: EngineConfig,
    /// The batch running (see `batches`); 0 for a lone run.
    batch: u32,
    /// A stop asked for between batches: the next one begins stopped.
    stop_pending: bool,
    paused: bool,
    /// A slot reached the run's commitment in the tail while a status lookup was out: ask
    /// again when it answers (see [`Engine::on_feed`]).
    recheck: bool,
    /// Shared with the supervisor in [`super::spawn_resumed`], which publishes FAILED if this
    /// task panics.
    snapshot_tx: Arc<watch::Sender<Arc<Snapshot>>>,
    seq: u64,
    start: Instant,
}

impl Engine {
    pub(super) fn new(
        cfg: EngineConfig,
        txs: Vec<LoadedTx>,
        chain: Arc<dyn Chain>,
        transport: Arc<dyn Transport>,
    ) -> (Self, watch::Receiver<Arc<Snapshot>>) {
        let start = Instant::now();
        let (updates, updates_rx) = mpsc::unbounded_channel();
        let parts = BatchParts::new(&cfg, txs, &transport, &updates, start, 0);
        let mut engine = Self {
            store: parts.store,
            leaders: LeaderBook::new(cfg.fanout, cfg.pinned_tpu)
                .with_pinned_identity(cfg.pinned_identity)
                .with_fanout_by_link(cfg.fanout_by_link),
            meter: Meter::default(),
            wire: WireMeter::default(),
            sync: ChainSync::new(&cfg, chain, updates.clone(), start, parts.batch_price),
            confirmer: parts.confirmer,
            dispatcher: parts.dispatcher,
            facts: FactSink::new(&cfg),
            transport,
            run: RunState::Starting,
            updates: Some(updates_rx),
            updates_tx: updates,
            batch: 0,
            stop_pending: false,
            paused: cfg.start_paused,
            recheck: false,
            cfg,
            snapshot_tx: Arc::new(
                watch::channel(Arc::new(Snapshot::blank(
                    String::new(),
                    "confirmed",
                    Pubkey::default(),
                    RateTarget::Fixed(0.0),
                )))
                .0,
            ),
            seq: 0,
            start,
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

    /// Carries over what an interrupted run's journal knew; see [`super::spawn_resumed`].
    pub(super) fn resume(&mut self, prior: Vec<Option<Prior>>) {
        let now = Instant::now();
        resume::apply_prior(
            prior,
            &mut self.store,
            &mut self.confirmer,
            &mut self.dispatcher,
            now,
        );
        if self.store.all_final() {
            self.run = RunState::Done;
        }
        self.publish();
    }

    /// Ends the run on an error it cannot continue from; the dashboard shows FAILED with
    /// `reason` and the report's outcome is `failed`.
    fn fail(&mut self, reason: String) {
        if self.run.is_over() {
            return;
        }
        log::error!("engine failed: {reason}");
        self.run = RunState::Failed(reason);
    }

    pub(super) async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut slot_feed: Option<mpsc::UnboundedReceiver<FeedEvent>>,
    ) -> RunOutcome {
        let Some(mut updates) = self.updates.take() else {
            return self.outcome();
        };
        let mut timers = Timers::new(self.cfg.poll_interval, self.cfg.publish_interval);
        self.run_batch(&mut commands, &mut slot_feed, &mut updates, &mut timers)
            .await;
        self.outcome()
    }

    /// Runs the loaded batch until it is over, and publishes its last picture.
    async fn run_batch(
        &mut self,
        commands: &mut mpsc::UnboundedReceiver<Command>,
        slot_feed: &mut Option<mpsc::UnboundedReceiver<FeedEvent>>,
        updates: &mut mpsc::UnboundedReceiver<Update>,
        timers: &mut Timers,
    ) {
        if self.store.is_empty() {
            self.run = RunState::Done;
        }
        while !self.run.is_over() {
            let send_at = if self.paused {
                None
            } else {
                self.dispatcher
                    .next_send_at(Instant::now(), &self.store, &self.leaders)
            };
            // Not biased: under load a stream of updates must not starve the pacer or the
            // snapshot publisher.
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.on_command(cmd),
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
                event = recv_opt(slot_feed) => match event {
                    Some(event) => self.on_feed(event),
                    None => *slot_feed = None,
                },
                _ = timers.poll.tick() => self.poll(),
                _ = timers.tail.tick(), if self.in_tail() => self.ask_statuses(Instant::now()),
                _ = timers.control.tick() => self.control(),
                _ = timers.publish.tick() => self.publish(),
                () = sleep_until(send_at.unwrap_or_else(far_future)), if send_at.is_some() => {
                    self.send_due();
                }
            }
            if !self.run.is_over() {
                self.run = if self.store.all_final() {
                    RunState::Done
                } else if self.paused {
                    RunState::Paused
                } else if self.store.counts().sends > 0 {
                    RunState::Running
                } else {
                    RunState::Starting
                };
            }
        }
        self.publish();
    }

    fn on_command(&mut self, cmd: Command) {
        let now = Instant::now();
        match cmd {
            Command::Pause => self.paused = true,
            Command::Resume => self.paused = false,
            Command::TogglePause => self.paused = !self.paused,
            Command::SetRate(target) => self.dispatcher.set_target(target, now),
            Command::Stop => {
                log::info!("stopping on request");
                self.run = RunState::Stopped;
            }
        }
        if !self.paused {
            self.dispatcher.restart(now);
        }
        self.publish();
    }

    /// One round of polling, about once a slot: the chain view, the leaders' connections and
    /// backoffs, the journal's and the RPC's health, the deadline, then the lookups the
    /// confirmer needs.
    fn poll(&mut self) {
        let now = Instant::now();
        self.keep_current(now);
        if let Err(why) = self.facts.check() {
            self.fail(why);
        }
        self.confirmer.check_deadline(now, &self.store);
        if let Err(why) = self.sync.check_reachable(now) {
            self.fail(why);
        }
        self.ask_statuses(now);
        if let Some(final_height) = self.sync.validity_round() {
            let (tip, finalized) = self.confirmer.validity_checks(now, final_height);
            for hash in tip {
                self.sync.ask_tip_validity(hash);
            }
            for hash in finalized {
                self.sync.ask_final_validity(hash);
            }
        }
    }

    /// The next round of status lookups, unless the last one is still out.
    fn ask_statuses(&mut self, now: Instant) {
        if !self.sync.statuses_in_flight() {
            for (ids, history) in self.confirmer.status_lookups() {
                self.sync.ask_statuses(&ids, history, &self.store, now);
            }
        }
    }

    /// What the websocket says: the tip moved, or a slot reached a commitment. In the run's
    /// tail, a slot reaching the run's commitment may have just confirmed the last
    /// transactions, so their statuses are asked at once rather than at the next tail poll —
    /// or as soon as the lookup still out answers, since it may predate the slot.
    fn on_feed(&mut self, event: FeedEvent) {
        match event {
            FeedEvent::Slot(slot) => self.sync.on_slot_feed(slot, &mut self.leaders),
            FeedEvent::Reached { commitment, .. } => {
                if commitment == self.cfg.commitment && self.in_tail() {
                    if self.sync.statuses_in_flight() {
                        self.recheck = true;
                    } else {
                        self.ask_statuses(Instant::now());
                    }
                }
            }
        }
    }

    /// In the run's tail (see [`TAIL_WATCH`]).
    fn in_tail(&self) -> bool {
        self.dispatcher.all_sent() && self.confirmer.unconfirmed() <= TAIL_WATCH
    }

    /// A new leader's turn has begun: the sends the last one still holds unanswered go to it
    /// too (see `dispatch::handover`). The dispatcher looks before each send as well; this is
    /// for turns that begin while nothing is due.
    fn hand_over(&mut self) {
        if let Some(leader) = self.leaders.take_handover()
            && !self.leaders.link_full(&leader, Instant::now())
        {
            self.dispatcher.hand_over(leader);
        }
    }

    /// The polls that keep the chain view and the connections current, batch or not.
    fn keep_current(&mut self, now: Instant) {
        self.hand_over();
        self.sync.poll(now, &self.leaders);
        self.transport.prepare(&self.leaders.prepare_list());
        for addr in self.leaders.newly_silent(now) {
            log::info!("{addr} stopped answering: giving up its connection to probe afresh");
            self.transport.abandon(addr);
        }
        self.leaders.expire_backoffs(now);
    }

    fn send_due(&mut self) {
        let tip_height = self.sync.tip_height();
        let confirmer = &self.confirmer;
        let pointless = |rec: &TxRecord| confirmer.resend_pointless(rec, tip_height);
        let lasts = |rec: &TxRecord, blocks| confirmer.lasts_to(rec, tip_height, blocks);
        let hold = Hold {
            pointless: &pointless,
            rpc_down: self.sync.health().is_some(),
            lasts: &lasts,
        };
        if self.sync.staked() == Some(false) && self.cfg.via_rpc.is_none() {
            self.dispatcher.unstaked_known();
        }
        let sent = self
            .dispatcher
            .send_due(&mut self.store, &mut self.leaders, &hold);
        for s in sent {
            self.record(TxFact::Sent {
                id: s.id,
                sends: s.sends,
            });
            self.meter.on_send(s.at - self.start);
            self.confirmer.on_sent(s.id);
        }
    }

    fn on_update(&mut self, update: Update) {
        match update {
            // A late stream of an earlier batch (see `batches`) names a transaction of that
            // batch and its figures are that batch's, but what it says of the leader's address
            // (answering, backing off) is the cluster's.
            Update::SendDone(done) if done.batch != self.batch => {
                self.leaders
                    .on_stale_result(done.addr, &done.result, Instant::now());
            }
            Update::SendDone(done) => {
                let asked = done.handed_at.is_some() || done.credit_wait.is_some();
                let waited = done.credit_wait.is_some();
                self.wire
                    .on_stream(Instant::now() - self.start, asked, waited);
                let took = self.dispatcher.on_send_done(
                    done,
                    &mut self.store,
                    &mut self.leaders,
                    Instant::now(),
                );
                self.meter.on_ack(took);
            }
            Update::Chain(answer) => {
                if let Some(fact) = self.sync.on_answer(answer, &mut self.leaders) {
                    self.on_fact(fact, Instant::now());
                }
                if self.recheck && !self.sync.statuses_in_flight() {
                    self.recheck = false;
                    if self.in_tail() {
                        self.ask_statuses(Instant::now());
                    }
                }
            }
        }
    }

    /// What the confirmer decides from one chain fact, handed to the parts it concerns.
    fn on_fact(&mut self, fact: ChainFact, now: Instant) {
        for decided in self.confirmer.on_fact(fact, &mut self.store, now) {
            match decided {
                Decided::Fact(fact) => self.record(fact),
                Decided::Landed {
                    id,
                    slot,
                    ok,
                    latency,
                } => {
                    if let Some(leader) = self.leaders.on_landed(slot) {
                        self.store.record_landed_leader(id, leader);
                    }
                    if ok {
                        self.meter.on_confirmed(now - self.start, latency);
                        if let Some((first, marks)) = self.store.marks(id) {
                            let parts = wire_meter::split(first, marks, now);
                            self.wire.on_landed(now - self.start, parts);
                        }
                    }
                }
                Decided::Resigned { id, fact, previous } => {
                    self.dispatcher.send_first(id);
                    self.record_as(fact, Some(previous));
                }
            }
        }
    }

    /// Hands a fact to the journal; one that can no longer be written ends the run.
    fn record(&mut self, fact: TxFact) {
        self.record_as(fact, None);
    }

    /// [`Self::record`], naming the transaction by `signature` rather than its current one if
    /// the journal does not name it yet (a re-signing's fact comes after the store has the new
    /// signature).
    fn record_as(&mut self, fact: TxFact, signature: Option<Signature>) {
        let view = self.store.view(fact.id());
        let ident = || {
            view.map(|v| TxIdent {
                signature: signature.unwrap_or(v.signature),
                origin: v.origin.clone(),
            })
        };
        if let Err(why) = self.facts.record(fact, ident) {
            self.fail(why);
        }
    }

    fn control(&mut self) {
        let now = Instant::now();
        // Judge the last period alone: a longer average lags a rising rate and would read as
        // "the pacer cannot keep up", stalling the climb.
        let period_ticks = (maxrate::PERIOD.as_millis() / 100) as u64;
        let (achieved, _) = self.meter.rates_over(now - self.start, period_ticks);
        let unconfirmed = self.confirmer.unconfirmed() as u64;
        // Over QUIC, an unstaked identity gets Agave's unstaked budget from every leader.
        let unstaked_quic = self.sync.staked() == Some(false) && self.cfg.via_rpc.is_none();
        self.dispatcher
            .control(unconfirmed, achieved, unstaked_quic, &self.store, now);
    }
}
