//! The engine's face to a UI: immutable snapshots published on a watch channel.
//!
//! A snapshot is cheap to publish and to hold: per-transaction rows live in persistent vectors
//! (`imbl`), so publishing shares all unchanged rows with the previous snapshot, and a reader
//! indexes any row of any queue in O(log n) — a frame never walks every transaction.
//!
//! Its parts: each leader's row and figures (`leader`), its link as measured (`link`), each
//! transaction's row and the counts by queue (`tx`), the run-wide views (`views`: pace,
//! latency, cluster, fees, phase), and how they serialize (`ser`).

mod leader;
mod link;
mod ser;
mod tx;
mod views;

use std::{sync::Arc, time::Duration};

use imbl::Vector;
use serde::Serialize;
use solana_pubkey::Pubkey;

use self::ser::ser_ms;
pub use self::{
    leader::{ConnState, LeaderStats, LeaderView, StreamCounts},
    link::{CloseCount, LandParts, LinkView, Verdict, WireView},
    ser::millis,
    tx::{Counts, SEND_LOG_CAP, SendRecord, StatusRecord, TxView},
    views::{ClusterView, FeeView, LatencyView, PhaseView, RatePoint, RateView},
};
use super::lifecycle::Queue;

/// Whether the engine is sending, and why not when it isn't.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum RunState {
    /// Fetching the leader schedule and connecting before the first send.
    Starting,
    Running,
    /// Paused by the user: no sends, confirmation tracking continues.
    Paused,
    /// Every transaction is final.
    Done,
    /// Stopped by the user before every transaction was final.
    Stopped,
    /// The engine hit an error it cannot continue from.
    Failed(String),
}

impl RunState {
    pub fn label(&self) -> &'static str {
        match self {
            RunState::Starting => "STARTING",
            RunState::Running => "RUNNING",
            RunState::Paused => "PAUSED",
            RunState::Done => "DONE",
            RunState::Stopped => "STOPPED",
            RunState::Failed(_) => "FAILED",
        }
    }

    /// The engine will not change any transaction any more.
    pub fn is_over(&self) -> bool {
        matches!(
            self,
            RunState::Done | RunState::Stopped | RunState::Failed(_)
        )
    }
}

/// The pace the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "mode", content = "tx_per_s")]
pub enum RateTarget {
    /// A fixed number of transactions per second.
    Fixed(f64),
    /// Closed loop: the engine searches for the highest rate the leaders accept and land.
    Max,
}

/// An immutable picture of the whole engine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Snapshot {
    /// Increments with every publish.
    pub seq: u64,
    pub run: RunState,
    #[serde(serialize_with = "ser_ms")]
    pub elapsed: Duration,
    pub cluster: ClusterView,
    pub rate: RateView,
    pub counts: Counts,
    /// The current leader first, then the upcoming ones the engine fans out to.
    pub leaders: Arc<Vec<LeaderView>>,
    /// Every transaction, indexed by `TxView::id`.
    #[serde(skip)]
    pub txs: Vector<TxView>,
    /// Members of each queue as transaction ids, in the order they entered it; indexed by
    /// `Queue as usize`.
    #[serde(skip)]
    pub queues: [Vector<u32>; 5],
    pub latency: LatencyView,
    /// The last minute on the wire: credit waits and where the time to land went.
    pub wire: WireView,
    /// Time from handing a stream to QUIC to the leader's answer, over every stream.
    pub acks: LatencyView,
    /// Every leader sent to in this run, with its figures over the whole run, most streams
    /// first (`leaders` holds only the window around now).
    pub leader_totals: Arc<Vec<LeaderStats>>,
    /// A deploy's phases that have ended, each as its last picture (set by the relay; empty
    /// from the engine itself): what watches the run from outside (`--metrics`) keeps every
    /// phase's final figures even when it did not wake up for that picture.
    #[serde(skip)]
    pub finished_phases: Arc<Vec<Arc<Snapshot>>>,
    /// `None` from the engine itself; see [`PhaseView`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<PhaseView>,
}

impl Snapshot {
    /// What a UI shows before an engine has published anything: the cluster and the pace asked
    /// for, no transactions.
    pub fn blank(
        rpc_url: String,
        commitment: &'static str,
        identity: Pubkey,
        target: RateTarget,
    ) -> Self {
        Snapshot {
            seq: 0,
            run: RunState::Starting,
            elapsed: Duration::ZERO,
            cluster: ClusterView {
                rpc_url,
                commitment,
                slot: 0,
                block_height: 0,
                identity,
                staked: None,
                health: None,
                slot_feed_live: false,
                fees: None,
                via_rpc: None,
            },
            rate: RateView {
                target,
                pacing: 0.0,
                owed: 0,
                sent_ahead: 0,
                achieved: 0.0,
                landing: 0.0,
                history: Arc::default(),
            },
            counts: Counts::default(),
            leaders: Arc::default(),
            txs: Vector::new(),
            queues: Default::default(),
            latency: LatencyView::default(),
            wire: WireView::default(),
            acks: LatencyView::default(),
            leader_totals: Arc::default(),
            finished_phases: Arc::default(),
            phase: None,
        }
    }

    /// The `row`-th member of `queue`, in O(log n).
    pub fn queue_row(&self, queue: Queue, row: usize) -> Option<&TxView> {
        let id = *self.queues[queue as usize].get(row)?;
        self.txs.get(id as usize)
    }

    pub fn queue_len(&self, queue: Queue) -> usize {
        self.queues[queue as usize].len()
    }
}
