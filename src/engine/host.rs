//! One engine for several batches in turn: a deploy's phases.
//!
//! A fresh engine per phase would learn the cluster again each time — slot, leader schedule,
//! TPU addresses, blockhash, finality, stake (on a real cluster `getClusterNodes` and
//! `getLeaderSchedule` are large answers) — reopen its slot feed, and forget which leaders are
//! backing off. A host keeps all of that and its connections warm between batches, so a batch
//! sends as soon as it is handed over. Each batch is still a run of its own, as if a fresh
//! engine ran it: its own transactions, figures, snapshots, events and outcome.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};

use super::{
    Batch, EngineConfig, EngineHandle,
    command::Command,
    net::{Chain, Transport},
    outcome,
    run::{Engine, Queued},
    slots::FeedEvent,
    snapshot::Snapshot,
};

/// Why a batch has no outcome when the engine task ended without crashing.
const ENDED_FIRST: &str = "the engine ended before the batch did";

/// A running engine that takes batches; dropping it ends the engine once its batch is over.
pub struct EngineHost {
    batches: mpsc::UnboundedSender<Queued>,
    commands: mpsc::UnboundedSender<Command>,
    /// The picture a batch's watchers see before it begins.
    blank: Arc<Snapshot>,
    /// Why the engine task ended, once it has: a batch whose outcome never came says so.
    ended: watch::Receiver<Option<String>>,
}

/// Starts a host on the current tokio runtime; see [`super::spawn`] for `slot_feed`.
pub fn spawn_host(
    cfg: EngineConfig,
    chain: Arc<dyn Chain>,
    transport: Arc<dyn Transport>,
    slot_feed: Option<mpsc::UnboundedReceiver<FeedEvent>>,
) -> EngineHost {
    let (commands, cmd_rx) = mpsc::unbounded_channel();
    let (batches, batch_rx) = mpsc::unbounded_channel();
    let (engine, snapshots) = Engine::new(cfg, Vec::new(), chain, transport);
    let blank = snapshots.borrow().clone();
    let (end_tx, ended) = watch::channel(None);
    let inner = tokio::spawn(engine.host(batch_rx, cmd_rx, slot_feed));
    tokio::spawn(async move {
        let why = match inner.await {
            Ok(()) => ENDED_FIRST.to_string(),
            Err(err) => outcome::crash_reason(err),
        };
        end_tx.send_replace(Some(why));
    });
    EngineHost {
        batches,
        commands,
        blank,
        ended,
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
        let mut ended = self.ended.clone();
        let task = tokio::spawn(async move {
            match outcome.await {
                Ok(outcome) => outcome,
                // Its outcome's sender is dropped only when the engine task ended first.
                Err(_) => {
                    let why = match ended.wait_for(Option::is_some).await {
                        Ok(why) => why.clone().unwrap_or_default(),
                        Err(_) => ENDED_FIRST.to_string(),
                    };
                    outcome::failed(&publisher, why)
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
