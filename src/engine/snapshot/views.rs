//! The run-wide views of a snapshot: the pace, the latency distributions, the cluster, the
//! fees, and the phase of a multi-step job.

use std::{sync::Arc, time::Duration};

use serde::Serialize;
use solana_pubkey::Pubkey;

use super::{
    RateTarget,
    ser::{ser_display, ser_opt_ms},
};

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
    /// Sends owed to an outage (time when sends were due and no leader would take them, a
    /// first handshake's hold included), made up at `pacing` once that is above the target
    /// (once the streams that waited for the first handshake have gone, 0.8 s after the hold
    /// ended); 0 when nothing is owed.
    pub owed: u64,
    /// Transactions sent ahead of a later leader's turn so far, on top of the pace (under
    /// `--rate max`, unstaked, on three leaders or more: see `engine::dispatch::ahead`).
    pub sent_ahead: u64,
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
