//! The send engine: pacer, QUIC sender, leader tracker, confirmer and expiry watch. It knows
//! nothing of terminals; a UI reads [`snapshot::Snapshot`]s and sends [`command::Command`]s.
//!
//! ```text
//!  LoadedTx ─► store ─► pacer ─► targets (leaders) ─► transport (QUIC) ─┐
//!               ▲                                                       │ outcomes
//!               └── statuses / validity / schedule (chain, RPC) ◄───────┘
//!  commands (mpsc) ─► run loop ─► snapshots (watch)
//! ```
//!
//! Inside, one event loop (`run`) owns every part and routes each message to its owner; its
//! module doc draws who imports whom. `host` runs that loop for several batches in turn (a
//! deploy's phases), keeping what it knows of the cluster between them. The types every part
//! shares live in leaf modules (`config`, `event`, `fact`, `outcome`, `update`) that import no
//! part, so nothing below `run` or `host` imports this module, `run` or `host`: no cycle.

mod blockhashes;
pub mod command;
mod config;
mod confirm;
mod dispatch;
mod distribution;
mod event;
pub mod expiry;
mod fact;
mod facts;
mod fee_watch;
mod follow;
pub mod handshakes;
pub mod host;
pub mod leaders;
pub mod lifecycle;
pub mod link;
mod liveness;
pub mod maxrate;
pub mod meter;
pub mod net;
mod outcome;
pub mod pacer;
pub mod quic;
mod resign;
mod resume;
pub mod rpc;
pub mod rpc_send;
mod run;
/// Test support, like `ui::fixtures`: only with the `test-support` feature (tests, benches).
#[cfg(any(test, feature = "test-support"))]
pub mod sim;
/// Link conditions for the simulator: compiled with it only.
#[cfg(any(test, feature = "test-support"))]
pub mod sim_link;
pub mod slots;
pub mod snapshot;
pub mod store;
mod sync;
mod update;
pub mod verdict;
mod wire_meter;

use std::sync::Arc;

use tokio::{
    sync::{mpsc, watch},
    task::JoinHandle,
};

pub use config::{Batch, EngineConfig, Resigner};
pub use event::RunEvent;
pub use fact::{JournalFact, MAX_JOURNALED_ERROR, Prior, TxFact, TxIdent};
pub use host::{EngineHost, spawn_host};
pub use outcome::RunOutcome;

use crate::source::LoadedTx;
use command::Command;
use net::{Chain, Transport};
use slots::FeedEvent;
use snapshot::Snapshot;

/// A running engine: send it commands, watch its snapshots, await its outcome.
pub struct EngineHandle {
    pub commands: mpsc::UnboundedSender<Command>,
    pub snapshots: watch::Receiver<Arc<Snapshot>>,
    pub task: JoinHandle<RunOutcome>,
}

/// Starts the engine on the current tokio runtime. `slot_feed` carries slots pushed by a
/// websocket subscription; without it (or when it goes quiet) the engine polls `getSlot`.
pub fn spawn(
    cfg: EngineConfig,
    txs: Vec<LoadedTx>,
    chain: Arc<dyn Chain>,
    transport: Arc<dyn Transport>,
    slot_feed: Option<mpsc::UnboundedReceiver<FeedEvent>>,
) -> EngineHandle {
    spawn_resumed(cfg, txs, Vec::new(), chain, transport, slot_feed)
}

/// [`spawn`], continuing an interrupted run: `prior[i]` is what the journal knew of `txs[i]`
/// (missing entries mean never sent). Final transactions stay final and are never sent again;
/// sent ones are checked on chain before any resend.
pub fn spawn_resumed(
    cfg: EngineConfig,
    txs: Vec<LoadedTx>,
    prior: Vec<Option<Prior>>,
    chain: Arc<dyn Chain>,
    transport: Arc<dyn Transport>,
    slot_feed: Option<mpsc::UnboundedReceiver<FeedEvent>>,
) -> EngineHandle {
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (mut engine, snapshots) = run::Engine::new(cfg, txs, chain, transport);
    engine.resume(prior);
    let publisher = engine.publisher();
    let inner = tokio::spawn(engine.run(cmd_rx, slot_feed));
    let task = tokio::spawn(supervise(inner, publisher));
    EngineHandle {
        commands: cmd_tx,
        snapshots,
        task,
    }
}

/// Awaits the engine task. Should it panic, the last snapshot is published again as FAILED with
/// the panic's message, so the dashboard never freezes on RUNNING and the report still says
/// what happened to every transaction up to then.
async fn supervise(
    inner: JoinHandle<RunOutcome>,
    publisher: Arc<watch::Sender<Arc<Snapshot>>>,
) -> RunOutcome {
    match inner.await {
        Ok(outcome) => outcome,
        Err(err) => outcome::failed(&publisher, outcome::crash_reason(err)),
    }
}
