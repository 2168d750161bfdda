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
//! module doc draws who imports whom. Besides one another, the parts use only the public types
//! declared here ([`EngineConfig`], [`TxFact`], [`Prior`], [`Resigner`]).

mod blockhashes;
pub mod command;
mod confirm;
mod dispatch;
pub mod expiry;
mod facts;
pub mod leaders;
pub mod lifecycle;
pub mod maxrate;
pub mod meter;
pub mod net;
pub mod pacer;
pub mod quic;
mod resign;
mod resume;
pub mod rpc;
mod run;
/// Test support, like `ui::fixtures`: only with the `test-support` feature (tests, benches).
#[cfg(any(test, feature = "test-support"))]
pub mod sim;
pub mod slots;
pub mod snapshot;
pub mod store;
mod sync;
mod update;

use std::{
    net::SocketAddr,
    sync::{Arc, OnceLock},
    time::Duration,
};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::{
    sync::{mpsc, watch},
    task::JoinHandle,
};

use crate::{config::Commitment, source::LoadedTx};
use command::Command;
use net::{Chain, Transport};
use snapshot::{LeaderStats, RateTarget, RunState, Snapshot};

/// How a run behaves; every field has a CLI flag on `txpace send`.
#[derive(Clone)]
pub struct EngineConfig {
    pub rate: RateTarget,
    /// Bound on every network send.
    pub send_timeout: Duration,
    /// Upcoming distinct leaders that get each send besides the current one.
    pub fanout: usize,
    /// How long after a send an unconfirmed transaction is sent again.
    pub resend_interval: Duration,
    pub commitment: Commitment,
    /// Send only here instead of following the leader schedule.
    pub pinned_tpu: Option<SocketAddr>,
    /// When durable-nonce transactions that have not landed are given up.
    pub deadline: Option<Duration>,
    /// Our QUIC identity, for the header's staked/unstaked.
    pub identity: Pubkey,
    /// RPC URL already redacted, for the header.
    pub rpc_url_display: String,
    /// Status, height and validity polls: about once a slot.
    pub poll_interval: Duration,
    /// Snapshot publishes: about ten a second.
    pub publish_interval: Duration,
    /// Start paused (the dashboard's user may want to look first).
    pub start_paused: bool,
    /// Every state change, as it happens, for the journal.
    pub facts: Option<mpsc::UnboundedSender<TxFact>>,
    /// Set by the journal writer when it can no longer write: the engine then stops.
    pub journal_failure: Option<Arc<OnceLock<String>>>,
    /// Signs expired transactions again (deploys, where txpace holds the signers).
    pub resigner: Option<Arc<dyn Resigner>>,
}

/// A fact about one transaction, streamed as it happens so a journal can make a run resumable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxFact {
    /// The `sends`-th send went out.
    Sent {
        id: u32,
        sends: u32,
    },
    Confirmed {
        id: u32,
        slot: u64,
        commitment: Commitment,
    },
    Failed {
        id: u32,
        slot: u64,
        error: String,
    },
    Expired {
        id: u32,
    },
    /// Signed again against a fresh blockhash; `signature` is its new id on chain.
    Resigned {
        id: u32,
        signature: Signature,
        attempt: u32,
    },
}

/// What an earlier, interrupted run knew of a transaction (from its journal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prior {
    /// Sent this many times, outcome unknown: the chain is asked before any resend.
    Sent {
        sends: u32,
    },
    Confirmed {
        slot: u64,
        commitment: Commitment,
        sends: u32,
    },
    Failed {
        slot: u64,
        error: String,
        sends: u32,
    },
    Expired {
        sends: u32,
    },
}

/// Signs a transaction again when its blockhash ran out.
pub trait Resigner: Send + Sync + 'static {
    /// A new signing of transaction `id` against `blockhash` as (first signature, wire bytes), or
    /// `None` to let it expire. `attempt` counts from 1.
    fn resign(&self, id: u32, attempt: u32, blockhash: Hash) -> Option<(Signature, Arc<[u8]>)>;
}

impl EngineConfig {
    pub fn new(identity: Pubkey, rpc_url_display: String) -> Self {
        Self {
            rate: RateTarget::Fixed(100.0),
            send_timeout: Duration::from_secs(5),
            fanout: 1,
            resend_interval: Duration::from_millis(4_000),
            commitment: Commitment::Confirmed,
            pinned_tpu: None,
            deadline: None,
            identity,
            rpc_url_display,
            poll_interval: Duration::from_millis(400),
            publish_interval: Duration::from_millis(100),
            start_paused: false,
            facts: None,
            journal_failure: None,
            resigner: None,
        }
    }
}

/// What a finished engine hands back.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub snapshot: Arc<Snapshot>,
    /// Highest commitment each transaction was seen at, by id.
    pub commitments: Vec<Option<Commitment>>,
    /// Every leader sent to, with its stream outcomes and landings.
    pub leaders: Vec<LeaderStats>,
}

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
    slot_feed: Option<mpsc::UnboundedReceiver<u64>>,
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
    slot_feed: Option<mpsc::UnboundedReceiver<u64>>,
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
    let err = match inner.await {
        Ok(outcome) => return outcome,
        Err(err) => err,
    };
    let reason = if err.is_panic() {
        let payload = err.into_panic();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        format!("the engine crashed: {msg}")
    } else {
        "the engine task was cancelled".to_string()
    };
    log::error!("{reason}");
    let mut snap = (**publisher.borrow()).clone();
    snap.seq += 1;
    snap.run = RunState::Failed(reason);
    let snapshot = Arc::new(snap);
    publisher.send_replace(snapshot.clone());
    RunOutcome {
        commitments: vec![None; snapshot.txs.len()],
        leaders: Vec::new(),
        snapshot,
    }
}
