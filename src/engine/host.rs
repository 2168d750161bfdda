//! One engine for several batches in turn: a deploy's phases.
//!
//! A fresh engine per phase would learn the cluster again each time — slot, leader schedule,
//! TPU addresses, blockhash, finality, stake (on a real cluster `getClusterNodes` and
//! `getLeaderSchedule` are large answers) — reopen its slot feed, and forget which leaders are
//! backing off. A host keeps all of that and its connections warm between batches, so a batch
//! sends as soon as it is handed over. Each batch is still a run of its own, as if a fresh
//! engine ran it: its own transactions, figures, snapshots, events and outcome.

use std::sync::{Arc, OnceLock};

use solana_pubkey::Pubkey;
use tokio::sync::{mpsc, oneshot, watch};

use super::{
    EngineConfig, EngineHandle, Resigner, RunEvent, RunOutcome,
    command::Command,
    failed_outcome,
    net::{Chain, Transport},
    run::Engine,
    snapshot::Snapshot,
};
use crate::source::LoadedTx;

/// What differs from one batch to the next; everything else is the host's [`EngineConfig`].
pub struct Batch {
    pub txs: Vec<LoadedTx>,
    /// Signs its transactions again when their blockhash runs out.
    pub resigner: Option<Arc<dyn Resigner>>,
    /// `--events`, labelled for this batch.
    pub events: Option<mpsc::UnboundedSender<RunEvent>>,
    /// The accounts it writes most, whose recent fees are watched while it runs.
    pub fee_accounts: Vec<Pubkey>,
}

/// A batch on its way to the engine, with where its pictures and its outcome go.
pub(super) struct Queued {
    pub batch: Batch,
    pub publisher: Arc<watch::Sender<Arc<Snapshot>>>,
    pub done: oneshot::Sender<RunOutcome>,
}

/// A running engine that takes batches; dropping it ends the engine once its batch is over.
pub struct EngineHost {
    batches: mpsc::UnboundedSender<Queued>,
    commands: mpsc::UnboundedSender<Command>,
    /// The picture a batch's watchers see before it begins.
    blank: Arc<Snapshot>,
    /// Why the engine task ended early, when it crashed.
    crash: Arc<OnceLock<String>>,
}

/// Starts a host on the current tokio runtime; see [`super::spawn`] for `slot_feed`.
pub fn spawn_host(
    cfg: EngineConfig,
    chain: Arc<dyn Chain>,
    transport: Arc<dyn Transport>,
    slot_feed: Option<mpsc::UnboundedReceiver<u64>>,
) -> EngineHost {
    let (commands, cmd_rx) = mpsc::unbounded_channel();
    let (batches, batch_rx) = mpsc::unbounded_channel();
    let (engine, snapshots) = Engine::new(cfg, Vec::new(), chain, transport);
    let blank = snapshots.borrow().clone();
    let crash = Arc::new(OnceLock::new());
    let inner = tokio::spawn(engine.host(batch_rx, cmd_rx, slot_feed));
    let seen = crash.clone();
    tokio::spawn(async move {
        if let Err(err) = inner.await {
            let _ = seen.set(super::crash_reason(err));
        }
    });
    EngineHost {
        batches,
        commands,
        blank,
        crash,
    }
}

impl EngineHost {
    /// Runs `batch` once the batches handed over before it have ended. The handle is this
    /// batch's alone, as [`super::spawn`]'s is its run's: its commands reach the engine while
    /// the batch runs, its snapshots and outcome are the batch's.
    pub fn run(&self, batch: Batch) -> EngineHandle {
        let (publisher, snapshots) = watch::channel(self.blank.clone());
        let publisher = Arc::new(publisher);
        let (done, outcome) = oneshot::channel();
        let _ = self.batches.send(Queued {
            batch,
            publisher: publisher.clone(),
            done,
        });
        let crash = self.crash.clone();
        let task = tokio::spawn(async move {
            match outcome.await {
                Ok(outcome) => outcome,
                Err(_) => {
                    // The sender is dropped only when the engine task ended before the batch
                    // did; the supervisor above has recorded why by then or soon after.
                    tokio::task::yield_now().await;
                    let reason = crash
                        .get()
                        .cloned()
                        .unwrap_or_else(|| "the engine ended before the batch did".to_string());
                    failed_outcome(&publisher, reason)
                }
            }
        });
        EngineHandle {
            commands: self.commands.clone(),
            snapshots,
            task,
        }
    }
}
