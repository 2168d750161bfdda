//! The engine's face to a UI: immutable snapshots published on a watch channel.
//!
//! A snapshot is cheap to publish and to hold: per-transaction rows live in persistent vectors
//! (`imbl`), so publishing shares all unchanged rows with the previous snapshot, and a reader
//! indexes any row of any queue in O(log n) — a frame never walks every transaction.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use imbl::Vector;
use serde::Serialize;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::{
    lifecycle::{Queue, TxState},
    net::StreamOutcome,
};

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

/// Connection to one leader's TPU, as the transport sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ConnState {
    /// No connection yet and none being made.
    Idle,
    Connecting,
    Connected,
    /// The leader throttled us, refused a connection or let sends time out; no sends to it
    /// until the backoff ends.
    BackingOff {
        /// Time left in the backoff when the snapshot was taken.
        remaining_ms: u64,
        /// What started it: throttled, connection or timeout.
        kind: StreamOutcome,
        reason: String,
    },
    /// The last attempt failed; the next send will retry.
    Failed {
        reason: String,
    },
    /// Streams have waited this long with no answer at all: it gets one probe at a time until
    /// it answers (see `engine::liveness`).
    Silent {
        for_ms: u64,
    },
    /// The leader has no TPU QUIC address in `getClusterNodes`.
    NoAddress,
}

impl ConnState {
    pub fn label(&self) -> String {
        match self {
            ConnState::Idle => "idle".into(),
            ConnState::Connecting => "connecting".into(),
            ConnState::Connected => "connected".into(),
            ConnState::BackingOff {
                remaining_ms,
                kind,
                reason,
            } => {
                let why = match kind {
                    StreamOutcome::Connection => "connection failing",
                    StreamOutcome::Timeout => "sends timing out",
                    _ => "throttled",
                };
                format!("{why}, backing off {remaining_ms} ms ({reason})")
            }
            ConnState::Failed { reason } => format!("failed: {reason}"),
            ConnState::Silent { for_ms } => {
                format!("not answering for {for_ms} ms, probing one stream at a time")
            }
            ConnState::NoAddress => "no TPU address".into(),
        }
    }
}

/// A leader in the schedule window the engine sends to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeaderView {
    #[serde(serialize_with = "ser_display")]
    pub identity: Pubkey,
    pub tpu_quic: Option<SocketAddr>,
    /// First and last slot of this leader's window within the tracked range.
    pub first_slot: u64,
    pub last_slot: u64,
    pub conn: ConnState,
    /// Streams sent to it and what became of them.
    pub streams: StreamCounts,
    /// Transactions that landed in its slots.
    pub landed: u64,
}

/// Streams to leaders — one per transaction send per leader it went to — and what became of
/// them. "Sent" minus the outcomes is what is still in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StreamCounts {
    pub sent: u64,
    pub accepted: u64,
    pub throttled: u64,
    /// Connecting failed or the connection was lost.
    pub connection: u64,
    /// No answer within the send timeout.
    pub timeout: u64,
    /// Any other stream failure.
    pub other: u64,
}

impl StreamCounts {
    pub fn record(&mut self, outcome: StreamOutcome) {
        let n = match outcome {
            StreamOutcome::Accepted => &mut self.accepted,
            StreamOutcome::Throttled => &mut self.throttled,
            StreamOutcome::Connection => &mut self.connection,
            StreamOutcome::Timeout => &mut self.timeout,
            StreamOutcome::Other => &mut self.other,
        };
        *n += 1;
    }

    /// Streams that did not reach the leader, whatever the reason.
    pub fn failed(&self) -> u64 {
        self.throttled + self.connection + self.timeout + self.other
    }
}

/// One leader's figures over the whole run, for the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeaderStats {
    #[serde(serialize_with = "ser_display")]
    pub identity: Pubkey,
    /// The TPU address it was last sent to.
    pub tpu_quic: Option<SocketAddr>,
    pub streams: StreamCounts,
    /// Transactions that landed in its slots.
    pub landed: u64,
    /// Median time from handing a stream to QUIC to the leader's answer (accepted or not), in
    /// ms; null before any answer.
    pub ack_ms_p50: Option<u64>,
    /// How deep its backoff is now: 0 when it gets sends, 1 for a first backoff, each
    /// repeat within the judging window one more (the pause doubles with each).
    pub backoff_level: u32,
}

/// The longest a transaction's send log grows before its older half is dropped.
pub const SEND_LOG_CAP: usize = 256;

/// One send of one transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SendRecord {
    /// When it was handed to the wire, since the run started: when the engine chose to send it
    /// until the transport says, and for a stream that never reached the wire.
    #[serde(rename = "at_ms", serialize_with = "ser_ms")]
    pub at: Duration,
    #[serde(serialize_with = "ser_display")]
    pub leader: Pubkey,
    pub addr: Option<SocketAddr>,
    /// The slot the engine took as current when it chose to send: whose turn it was, so a
    /// landing in the next leader's first slot can be told from one sent during that turn.
    /// `None` before the first slot was known (and in reports written before it was recorded).
    pub slot: Option<u64>,
    /// What became of it; `None` while in flight (or when it was never handed to QUIC, for a
    /// leader without a TPU address).
    pub outcome: Option<StreamOutcome>,
    /// Time from handing it to QUIC to the leader's answer.
    pub ack_ms: Option<u64>,
    /// Why it failed; `None` when accepted or still in flight.
    pub error: Option<String>,
}

/// A state change of one transaction, kept for its detail view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatusRecord {
    #[serde(rename = "at_ms", serialize_with = "ser_ms")]
    pub at: Duration,
    pub state: TxState,
    pub note: Option<String>,
}

/// Everything the engine knows about one transaction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TxView {
    /// Position in the input, from 0.
    pub id: u32,
    #[serde(serialize_with = "ser_display")]
    pub signature: Signature,
    /// `FILE:LINE` (or `FILE[index]` for JSON arrays) of the input.
    pub origin: Arc<str>,
    pub state: TxState,
    /// Number of sends that went out (accepted or not), across re-signings.
    pub sends: u32,
    /// Times it was signed again with a fresh blockhash (deploys only).
    pub resigns: u32,
    #[serde(serialize_with = "ser_opt_ms")]
    pub first_sent: Option<Duration>,
    #[serde(serialize_with = "ser_opt_ms")]
    pub last_sent: Option<Duration>,
    pub landed_slot: Option<u64>,
    /// From first send to the snapshot that saw it at the requested commitment.
    #[serde(serialize_with = "ser_opt_ms")]
    pub time_to_land: Option<Duration>,
    /// Last block height at which its blockhash is valid; `None` for durable-nonce transactions
    /// and before the engine has learned it.
    pub last_valid_block_height: Option<u64>,
    /// The height above is exact (the cluster named it); otherwise it is an upper bound and
    /// is shown as an estimate.
    pub last_valid_exact: bool,
    /// Uses a durable nonce: never expires by blockhash.
    pub durable_nonce: bool,
    /// Its compute-unit price in micro-lamports, when a ComputeBudget instruction sets one.
    pub cu_price: Option<u64>,
    /// Its compute-unit limit, when a ComputeBudget instruction sets one.
    pub cu_limit: Option<u32>,
    #[serde(serialize_with = "ser_opt_display")]
    pub last_leader: Option<Pubkey>,
    /// The leader of the slot it landed in, by the cluster's schedule; `None` until final, or
    /// when the schedule for that slot was not known.
    #[serde(serialize_with = "ser_opt_display")]
    pub landed_leader: Option<Pubkey>,
    pub last_error: Option<Arc<str>>,
    /// The most recent streams sent (one per send per leader), oldest first. Bounded: a
    /// durable-nonce transaction can be resent for hours, so once the log passes
    /// [`SEND_LOG_CAP`] its older half is dropped and counted in `send_log_dropped`.
    pub send_log: Arc<Vec<SendRecord>>,
    /// Streams left out of `send_log` because it was full.
    pub send_log_dropped: u64,
    /// Every leader it was sent to, without repeats, in the order first sent to: kept whole
    /// when the send log drops old entries.
    pub sent_to: Arc<Vec<Pubkey>>,
    /// Every state change, oldest first.
    pub history: Arc<Vec<StatusRecord>>,
}

impl TxView {
    /// Blocks left before its blockhash expires, given the chain's block height.
    pub fn blocks_left(&self, block_height: u64) -> Option<u64> {
        self.last_valid_block_height
            .map(|last| last.saturating_sub(block_height))
    }
}

/// Counters by queue, kept by the engine as transitions happen (never recounted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub total: u64,
    pub pending: u64,
    pub resent: u64,
    pub confirmed: u64,
    pub failed: u64,
    pub expired: u64,
    /// Transaction sends: first sends and resends, one per transaction per pacer slot,
    /// however many leaders each went to.
    pub sends: u64,
    /// Transaction sends that reached no leader (every stream of the send failed). The same
    /// unit as `sends`.
    pub send_errors: u64,
    /// Streams to leaders (a send to two leaders is two streams) and their outcomes.
    pub streams: StreamCounts,
}

impl Counts {
    pub fn of(&self, queue: Queue) -> u64 {
        match queue {
            Queue::Pending => self.pending,
            Queue::Resent => self.resent,
            Queue::Confirmed => self.confirmed,
            Queue::Failed => self.failed,
            Queue::Expired => self.expired,
        }
    }

    pub fn finished(&self) -> u64 {
        self.confirmed + self.failed + self.expired
    }
}

/// One second of the rate chart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RatePoint {
    /// Seconds since the run started.
    pub second: u64,
    /// Transactions sent (first sends and resends) in that second.
    pub sent: u32,
    /// Transactions first seen confirmed in that second.
    pub confirmed: u32,
}

/// Send pace: what was asked for and what happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateView {
    pub target: RateTarget,
    /// The rate the pacer is holding now (equals the target when fixed, except while an outage
    /// is made up; the search's current value under `--rate max`).
    pub pacing: f64,
    /// Sends owed to an outage (time when sends were due and no leader would take them), being
    /// made up at `pacing`; 0 when nothing is owed.
    pub owed: u64,
    /// Sends per second over the last few seconds.
    pub achieved: f64,
    /// Confirmations per second over the last few seconds.
    pub landing: f64,
    /// The last 60 seconds, oldest first.
    pub history: Arc<Vec<RatePoint>>,
}

/// A distribution of durations: time from first send to confirmation, or stream
/// acknowledgement times.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencyView {
    #[serde(serialize_with = "ser_opt_ms")]
    pub p50: Option<Duration>,
    #[serde(serialize_with = "ser_opt_ms")]
    pub p90: Option<Duration>,
    #[serde(serialize_with = "ser_opt_ms")]
    pub p99: Option<Duration>,
    /// Counts per bucket; bucket `i` holds latencies in `[bounds[i-1], bounds[i])` ms.
    pub histogram: Arc<Vec<u64>>,
    /// Upper bounds of the buckets, in ms; the last bucket is open-ended.
    pub bounds_ms: Arc<Vec<u64>>,
    /// Sum of every value, in ms (with the bucket counts, a Prometheus histogram).
    pub sum_ms: u64,
}

/// The cluster as the engine last saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterView {
    /// RPC URL with user-info and query string redacted.
    pub rpc_url: String,
    pub commitment: &'static str,
    pub slot: u64,
    pub block_height: u64,
    #[serde(serialize_with = "ser_display")]
    pub identity: Pubkey,
    /// Whether our QUIC identity has stake; `None` until known.
    pub staked: Option<bool>,
    /// A problem talking to the cluster that the engine is retrying, for the header.
    pub health: Option<String>,
    /// Slots are arriving over the websocket subscription (otherwise the engine polls
    /// `getSlot`, a slot or so later).
    pub slot_feed_live: bool,
    /// Where the batch's price sits among recent fees; `None` until the cluster answered.
    pub fees: Option<FeeView>,
    /// `--via rpc`: the RPC URL (redacted) every send goes to; `None` sends over QUIC.
    pub via_rpc: Option<String>,
}

/// What recent slots charged for the accounts the batch writes most, and the batch's own
/// price, refreshed during the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FeeView {
    /// One figure per recent slot, micro-lamports per compute unit, ascending.
    pub recent: Arc<Vec<u64>>,
    /// The batch's median compute-unit price.
    pub batch_price: u64,
}

impl FeeView {
    /// Where `price` sits: the share of recent slots (in percent) it pays at least as much as.
    pub fn rank(&self, price: u64) -> u8 {
        crate::fees::rank(&self.recent, price)
    }

    pub fn median(&self) -> u64 {
        crate::fees::percentile(&self.recent, 50)
    }

    /// The batch pays less than most recent slots charged.
    pub fn below_median(&self) -> bool {
        self.batch_price < self.median()
    }
}

/// Where a multi-step job (a program deploy: buffer, writes, deploy) stands, set by the command
/// that drives the engine through its steps; plain sends have none. Bytes are the job's payload
/// (program bytes in the buffer), counted when the transaction carrying them is confirmed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PhaseView {
    pub name: Arc<str>,
    /// 1-based position of this phase and how many there are.
    pub step: u8,
    pub steps: u8,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

impl PhaseView {
    /// Whole percent of the bytes done, rounded down so 100% means all of them.
    pub fn percent(&self) -> u64 {
        if self.bytes_total == 0 {
            return 100;
        }
        (u128::from(self.bytes_done) * 100 / u128::from(self.bytes_total)) as u64
    }

    /// For progress lines: `2/3 writes 312000/615936 bytes (50%)`.
    pub fn label(&self) -> String {
        format!(
            "{}/{} {} {}/{} bytes ({}%)",
            self.step,
            self.steps,
            self.name,
            self.bytes_done,
            self.bytes_total,
            self.percent()
        )
    }
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
                achieved: 0.0,
                landing: 0.0,
                history: Arc::default(),
            },
            counts: Counts::default(),
            leaders: Arc::default(),
            txs: Vector::new(),
            queues: Default::default(),
            latency: LatencyView::default(),
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

fn ser_display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn ser_opt_display<T: std::fmt::Display, S: serde::Serializer>(
    v: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// Whole milliseconds, saturating: every figure txpace writes in ms (reports, events) goes
/// through here.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(millis(*d))
}

fn ser_opt_ms<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_u64(millis(*d)),
        None => s.serialize_none(),
    }
}
