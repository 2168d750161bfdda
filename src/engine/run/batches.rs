//! The loop's side of `engine::host`: an engine that runs one batch after another.
//!
//! ```text
//!   idle ──batch──► begin ──► run_batch ──► outcome to the batch's handle ──► idle …
//!    │ keeps the chain view, schedule, addresses, backoffs and connections current
//!    └─ host dropped ──► end
//! ```
//!
//! A batch gets fresh parts for what is about its transactions (store, confirmer, dispatcher,
//! meter, journal sink, leaders' figures) and keeps what is about the cluster. Streams and
//! status answers of an earlier batch that arrive late carry its number and are left out.

use std::sync::Arc;

use tokio::{
    sync::{mpsc, oneshot, watch},
    time::Instant,
};

use super::{BatchParts, Engine, Timers, recv_opt};
use crate::engine::{
    command::Command,
    config::Batch,
    confirm::Confirmer,
    facts::FactSink,
    meter::Meter,
    outcome::RunOutcome,
    slots::FeedEvent,
    snapshot::{RunState, Snapshot},
    store::TxStore,
    update::Update,
    wire_meter::WireMeter,
};

/// A batch on its way to the engine, with where its pictures and its outcome go.
pub(in crate::engine) struct Queued {
    pub batch: Batch,
    pub publisher: Arc<watch::Sender<Arc<Snapshot>>>,
    pub done: oneshot::Sender<RunOutcome>,
}

impl Engine {
    /// Runs batches in the order they come until every handle to the host is gone.
    pub(in crate::engine) async fn host(
        mut self,
        mut batches: mpsc::UnboundedReceiver<Queued>,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut slot_feed: Option<mpsc::UnboundedReceiver<FeedEvent>>,
    ) {
        let Some(mut updates) = self.updates.take() else {
            return;
        };
        let mut timers = Timers::new(self.cfg.poll_interval, self.cfg.publish_interval);
        loop {
            let next = self
                .idle(
                    &mut batches,
                    &mut commands,
                    &mut slot_feed,
                    &mut updates,
                    &mut timers,
                )
                .await;
            let Some(queued) = next else {
                return;
            };
            let done = self.begin(queued);
            self.run_batch(&mut commands, &mut slot_feed, &mut updates, &mut timers)
                .await;
            let _ = done.send(self.outcome());
            self.release(Instant::now());
        }
    }

    /// Lets a finished batch's transactions go once its outcome is handed over — their wire
    /// bytes in the store, and a deploy's signers and instructions behind the confirmer's
    /// re-signer — rather than when the next batch replaces them: between its writes and its
    /// last phase a deploy reads its whole buffer back, and held the writes all the while.
    /// Nothing between batches reads them; the pace and the cluster's parts stay.
    fn release(&mut self, now: Instant) {
        self.store = TxStore::new(Vec::new(), now);
        self.confirmer = Confirmer::new(&self.cfg, &[], now);
    }

    /// Waits for the next batch while keeping the chain view and the connections current;
    /// `None` when the host is gone.
    async fn idle(
        &mut self,
        batches: &mut mpsc::UnboundedReceiver<Queued>,
        commands: &mut mpsc::UnboundedReceiver<Command>,
        slot_feed: &mut Option<mpsc::UnboundedReceiver<FeedEvent>>,
        updates: &mut mpsc::UnboundedReceiver<Update>,
        timers: &mut Timers,
    ) -> Option<Queued> {
        loop {
            tokio::select! {
                queued = batches.recv() => return queued,
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.between_batches(cmd),
                    None => return None,
                },
                Some(update) = updates.recv() => match update {
                    // The last batch's late streams: it is over, but what they say of the
                    // leaders' addresses holds for the next.
                    Update::SendDone(done) => {
                        self.leaders
                            .on_stale_result(done.addr, &done.result, Instant::now());
                    }
                    // The chain view keeps what it learns; facts about transactions wait for
                    // a batch (the latest blockhash and finality are handed to it in `begin`).
                    Update::Chain(answer) => {
                        let _ = self.sync.on_answer(answer, &mut self.leaders);
                    }
                },
                event = recv_opt(slot_feed) => match event {
                    // Between batches only the tip matters.
                    Some(FeedEvent::Slot(slot)) => self.sync.on_slot_feed(slot, &mut self.leaders),
                    Some(FeedEvent::Reached { .. }) => {}
                    None => *slot_feed = None,
                },
                _ = timers.poll.tick() => self.keep_current(Instant::now()),
            }
        }
    }

    /// A command while no batch runs applies to the next one.
    fn between_batches(&mut self, cmd: Command) {
        match cmd {
            Command::Pause => self.paused = true,
            Command::Resume => self.paused = false,
            Command::TogglePause => self.paused = !self.paused,
            Command::SetRate(target) => self.dispatcher.set_target(target, Instant::now()),
            Command::Stop => self.stop_pending = true,
        }
    }

    /// Loads a batch: fresh parts for its transactions, the cluster's parts kept, and what the
    /// chain view knows handed to its confirmer. Returns where its outcome goes.
    fn begin(&mut self, queued: Queued) -> oneshot::Sender<RunOutcome> {
        let Queued {
            batch,
            publisher,
            done,
        } = queued;
        let now = Instant::now();
        self.batch += 1;
        let mut cfg = self.cfg.clone();
        // The pace the user last chose carries over.
        cfg.rate = self.dispatcher.target();
        cfg.resigner = batch.resigner;
        cfg.events = batch.events;
        cfg.fee_accounts = batch.fee_accounts;
        let parts = BatchParts::new(
            &cfg,
            batch.txs,
            &self.transport,
            &self.updates_tx,
            now,
            self.batch,
        );
        let known = self.sync.begin(&cfg, self.batch, parts.batch_price);
        self.store = parts.store;
        self.confirmer = parts.confirmer;
        self.dispatcher = parts.dispatcher;
        self.meter = Meter::default();
        self.wire = WireMeter::default();
        self.facts = FactSink::new(&cfg);
        self.leaders.reset_stats();
        self.start = now;
        self.snapshot_tx = publisher;
        self.run = if std::mem::take(&mut self.stop_pending) {
            RunState::Stopped
        } else {
            RunState::Starting
        };
        for fact in known {
            self.on_fact(fact, now);
        }
        self.publish();
        done
    }
}
