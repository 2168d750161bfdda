//! A report file's shape as `txpace view` reads it back: the fields of `--report`'s JSON that
//! the dashboard needs, a deploy's report being one such run per phase. `load` parses
//! a file into these and `replay` turns them into a snapshot.

use serde::Deserialize;

use crate::engine::{
    net::StreamOutcome,
    snapshot::{LinkView, StreamCounts},
};

/// A deploy's report: one run report per phase.
#[derive(Deserialize)]
pub(super) struct DeployReport {
    pub(super) phases: Vec<DeployPhase>,
}

#[derive(Deserialize)]
pub(super) struct DeployPhase {
    pub(super) name: String,
    pub(super) report: RunReport,
}

#[derive(Deserialize)]
pub(super) struct RunReport {
    pub(super) summary: Summary,
    pub(super) leaders: Vec<Leader>,
    pub(super) transactions: Vec<Transaction>,
}

#[derive(Deserialize)]
pub(super) struct Summary {
    pub(super) outcome: String,
    pub(super) error: Option<String>,
    pub(super) rpc_url: String,
    #[serde(default)]
    pub(super) via_rpc: Option<String>,
    pub(super) commitment: String,
    #[serde(default)]
    pub(super) identity: Option<String>,
    #[serde(default)]
    pub(super) slot: Option<u64>,
    #[serde(default)]
    pub(super) block_height: Option<u64>,
    pub(super) elapsed_s: f64,
    pub(super) target_rate: Option<f64>,
    pub(super) sends: u64,
    pub(super) send_errors: u64,
    pub(super) streams: StreamCounts,
}

#[derive(Deserialize)]
pub(super) struct Leader {
    pub(super) identity: String,
    pub(super) tpu_quic: Option<String>,
    pub(super) streams: StreamCounts,
    pub(super) landed: u64,
    #[serde(default)]
    pub(super) ack_ms_p50: Option<u64>,
    /// The link as measured and its verdict (reports written before it have none).
    #[serde(default)]
    pub(super) link: LinkView,
}

#[derive(Deserialize)]
pub(super) struct Transaction {
    pub(super) signature: String,
    pub(super) origin: String,
    pub(super) status: String,
    pub(super) sends: u32,
    pub(super) first_sent_ms: Option<u64>,
    pub(super) landed_slot: Option<u64>,
    pub(super) last_valid_block_height: Option<u64>,
    pub(super) last_valid_exact: bool,
    pub(super) latency_ms: Option<u64>,
    pub(super) leaders: Vec<String>,
    #[serde(default)]
    pub(super) landed_leader: Option<String>,
    #[serde(default)]
    pub(super) cu_price: Option<u64>,
    #[serde(default)]
    pub(super) cu_limit: Option<u32>,
    pub(super) error: Option<String>,
    #[serde(default)]
    pub(super) streams: Option<Vec<Stream>>,
    #[serde(default)]
    pub(super) streams_dropped: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct Stream {
    pub(super) at_ms: u64,
    pub(super) leader: String,
    pub(super) addr: Option<String>,
    #[serde(default)]
    pub(super) slot: Option<u64>,
    pub(super) outcome: Option<StreamOutcome>,
    pub(super) ack_ms: Option<u64>,
    pub(super) error: Option<String>,
}
