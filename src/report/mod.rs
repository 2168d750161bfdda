//! The machine-readable account of a run: `--report PATH` writes it as JSON, with a summary and
//! one record per transaction, in input order. Its shape is checked against
//! `assets/report.schema.json` in the tests, so scripts can rely on it. `txpace view` reads it
//! back (`load`, `replay`), or a journal in its place (`journal`).

mod journal;
mod load;
mod output;
mod replay;
mod schema;

pub use journal::load_journal;
pub use load::{LoadError, load};
pub use output::{check_writable, write_or_keep};

use std::{collections::BTreeSet, path::Path, sync::Arc, time::Duration};

use serde::Serialize;
use solana_pubkey::Pubkey;

use crate::{
    config::Commitment,
    engine::{
        RunOutcome,
        lifecycle::TxState,
        snapshot::{
            LeaderStats, RateTarget, RunState, SendRecord, Snapshot, StreamCounts, TxView, millis,
        },
    },
    exit,
    source::Problem,
};

#[derive(Debug, Serialize)]
pub struct Report {
    pub summary: Summary,
    /// Every leader sent to, most streams first.
    pub leaders: Vec<LeaderStats>,
    pub transactions: Transactions,
    /// Invalid input left out with `--skip-invalid`.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    /// done, stopped or failed.
    pub outcome: String,
    /// Why the run failed, when `outcome` is `failed`.
    pub error: Option<String>,
    pub rpc_url: String,
    /// `--via rpc`: the RPC URL (redacted) every send went to through `sendTransaction`;
    /// null when sends went over QUIC to the leaders.
    pub via_rpc: Option<String>,
    pub commitment: &'static str,
    /// The QUIC identity the run sent as.
    pub identity: String,
    /// The cluster's slot and block height when the run ended, as the engine last saw them.
    pub slot: u64,
    pub block_height: u64,
    pub total: u64,
    pub confirmed: u64,
    pub failed: u64,
    pub expired: u64,
    /// Not final when the run ended (stopped early).
    pub unfinished: u64,
    pub skipped_invalid: usize,
    pub elapsed_s: f64,
    /// Tx/s, or null for `--rate max`.
    pub target_rate: Option<f64>,
    /// Transaction sends per second over the whole run.
    pub achieved_rate: f64,
    /// Transaction sends (first sends and resends), however many leaders each went to.
    pub sends: u64,
    /// Transaction sends that reached no leader: every stream of the send failed.
    pub send_errors: u64,
    /// Streams to leaders (one per send per leader) and their outcomes.
    pub streams: StreamCounts,
    /// Sends per confirmed transaction; null when none confirmed.
    pub sends_per_landed: Option<f64>,
    pub latency_ms: Latency,
    /// Where the batch's price sat among recent fees when the run ended; null when the cluster
    /// did not say.
    pub fees: Option<FeesReport>,
}

#[derive(Debug, Serialize)]
pub struct FeesReport {
    /// Recent slots the cluster reported fees for.
    pub slots: usize,
    /// Their median, micro-lamports per compute unit.
    pub median: u64,
    /// The batch's median compute-unit price.
    pub batch_price: u64,
    /// The share of those slots (percent) the batch's price pays at least as much as.
    pub batch_percentile: u8,
}

#[derive(Debug, Serialize)]
pub struct Latency {
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
}

/// One transaction's line in the report (the engine's own record of it is
/// `engine::store::TxRecord`).
#[derive(Debug, Serialize)]
pub struct TxReport {
    pub signature: String,
    pub origin: String,
    /// confirmed, finalized, failed, expired, or unconfirmed (run stopped first).
    pub status: &'static str,
    pub sends: u32,
    /// Milliseconds from the start of the run.
    pub first_sent_ms: Option<u64>,
    pub landed_slot: Option<u64>,
    /// Last block height at which its blockhash is valid (null for durable nonces or when
    /// unknown).
    pub last_valid_block_height: Option<u64>,
    /// False when that height is an upper bound rather than the cluster's own figure.
    pub last_valid_exact: bool,
    /// Milliseconds from first send to confirmation.
    pub latency_ms: Option<u64>,
    /// Identities of the leaders it was sent to, without repeats.
    pub leaders: Vec<String>,
    /// The leader of the slot it landed in, by the cluster's schedule (null when it did not
    /// land, or that slot's schedule was not known).
    pub landed_leader: Option<String>,
    /// Micro-lamports per compute unit its ComputeBudget instruction sets (null: none).
    pub cu_price: Option<u64>,
    /// The compute-unit limit its ComputeBudget instruction sets (null: none).
    pub cu_limit: Option<u32>,
    /// Where its price sat among recent fees for the batch's accounts when the run ended
    /// (percent of slots it pays at least as much as); null when the cluster did not say.
    pub fee_percentile: Option<u8>,
    pub error: Option<String>,
    /// With `--report-sends`: every stream of every send, oldest first (the most recent
    /// 128–256 of a transaction sent more often, with the rest counted in
    /// `streams_dropped`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<SendRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams_dropped: Option<u64>,
}

/// The report's transactions, in input order: each line is made from the run's last snapshot
/// as it is written, so a report never holds them all a second time (5,000 lines were 2-3 MB
/// of strings on top of the snapshot they came from).
#[derive(Debug)]
pub struct Transactions {
    snapshot: Arc<Snapshot>,
    /// Highest commitment each transaction was seen at, by id.
    commitments: Vec<Option<Commitment>>,
    /// `--report-sends`: each line lists its streams.
    streams: bool,
}

impl Transactions {
    /// Each transaction's line.
    pub fn iter(&self) -> impl Iterator<Item = TxReport> + '_ {
        self.snapshot.txs.iter().map(|v| self.line(v))
    }

    fn line(&self, v: &TxView) -> TxReport {
        let s = &self.snapshot;
        let commitment = self.commitments.get(v.id as usize).copied().flatten();
        let leaders: BTreeSet<String> = v.sent_to.iter().map(Pubkey::to_string).collect();
        TxReport {
            signature: v.signature.to_string(),
            origin: v.origin.to_string(),
            status: status_of(v, commitment),
            sends: v.sends,
            first_sent_ms: ms(v.first_sent),
            landed_slot: match v.state {
                TxState::Confirmed | TxState::Failed => v.landed_slot,
                _ => None,
            },
            last_valid_block_height: v.last_valid_block_height,
            last_valid_exact: v.last_valid_exact,
            latency_ms: ms(v.time_to_land),
            leaders: leaders.into_iter().collect(),
            landed_leader: v.landed_leader.as_ref().map(|l| l.to_string()),
            cu_price: v.cu_price,
            cu_limit: v.cu_limit,
            fee_percentile: s
                .cluster
                .fees
                .as_ref()
                .map(|f| f.rank(v.cu_price.unwrap_or(0))),
            error: v.last_error.as_deref().map(str::to_string),
            streams: self.streams.then(|| v.send_log.to_vec()),
            streams_dropped: self.streams.then_some(v.send_log_dropped),
        }
    }
}

impl Serialize for Transactions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[derive(Debug, Serialize)]
pub struct Skipped {
    pub origin: String,
    pub reason: String,
}

fn ms(d: Option<Duration>) -> Option<u64> {
    d.map(millis)
}

fn status_of(view: &TxView, commitment: Option<Commitment>) -> &'static str {
    match view.state {
        TxState::Confirmed => match commitment {
            Some(Commitment::Finalized) => "finalized",
            _ => "confirmed",
        },
        TxState::Failed => "failed",
        TxState::Expired => "expired",
        TxState::Queued | TxState::Sent | TxState::Resent => "unconfirmed",
    }
}

impl Report {
    pub fn new(outcome: &RunOutcome, skipped: &[Problem]) -> Self {
        let s: &Snapshot = &outcome.snapshot;
        let c = s.counts;
        let secs = s.elapsed.as_secs_f64();
        let transactions = Transactions {
            snapshot: outcome.snapshot.clone(),
            commitments: outcome.commitments.clone(),
            streams: false,
        };
        Report {
            summary: Summary {
                outcome: s.run.label().to_ascii_lowercase(),
                error: match &s.run {
                    RunState::Failed(why) => Some(why.clone()),
                    _ => None,
                },
                rpc_url: s.cluster.rpc_url.clone(),
                via_rpc: s.cluster.via_rpc.clone(),
                commitment: s.cluster.commitment,
                identity: s.cluster.identity.to_string(),
                slot: s.cluster.slot,
                block_height: s.cluster.block_height,
                total: c.total,
                confirmed: c.confirmed,
                failed: c.failed,
                expired: c.expired,
                unfinished: c.total - c.finished(),
                skipped_invalid: skipped.len(),
                elapsed_s: (secs * 1000.0).round() / 1000.0,
                target_rate: match s.rate.target {
                    RateTarget::Fixed(r) => Some(r),
                    RateTarget::Max => None,
                },
                achieved_rate: if secs > 0.0 {
                    (c.sends as f64 / secs * 10.0).round() / 10.0
                } else {
                    0.0
                },
                sends: c.sends,
                send_errors: c.send_errors,
                streams: c.streams,
                sends_per_landed: (c.confirmed > 0)
                    .then(|| (c.sends as f64 / c.confirmed as f64 * 1000.0).round() / 1000.0),
                latency_ms: Latency {
                    p50: ms(s.latency.p50),
                    p90: ms(s.latency.p90),
                    p99: ms(s.latency.p99),
                },
                fees: s.cluster.fees.as_ref().map(|f| FeesReport {
                    slots: f.recent.len(),
                    median: f.median(),
                    batch_price: f.batch_price,
                    batch_percentile: f.rank(f.batch_price),
                }),
            },
            leaders: s.leader_totals.to_vec(),
            transactions,
            skipped: skipped
                .iter()
                .map(|p| Skipped {
                    origin: p.origin.clone(),
                    reason: p.reason.clone(),
                })
                .collect(),
        }
    }

    /// `--report-sends`: every transaction's line gets its streams.
    pub fn add_streams(&mut self) {
        self.transactions.streams = true;
    }

    /// Writes the report, readable by the owner only (it names the endpoint and accounts).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        write_private_json(path, self)
    }

    /// See [`crate::exit`]: a failed engine is a runtime error; a run stopped with
    /// transactions unfinished says so (it can be resumed); then lost transactions; else 0. An
    /// interrupted headless run is answered with 130 by the caller, as shells expect.
    pub fn exit_code(&self) -> u8 {
        let s = &self.summary;
        if s.outcome == "failed" {
            exit::RUNTIME
        } else if s.unfinished > 0 {
            exit::UNFINISHED
        } else if s.failed + s.expired > 0 {
            exit::LOST
        } else {
            exit::OK
        }
    }
}

/// Prints `value` as JSON on standard output (`--output json|json-compact`), scrubbed like the
/// file. A reader that closed the pipe early (`| head`) is not an error.
pub fn print_json(value: &impl Serialize, compact: bool) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    // The scrubber gathers what it writes into large pieces: it is the buffer.
    let mut out = crate::redact::ScrubWriter::new(std::io::stdout().lock());
    let written = if compact {
        serde_json::to_writer(&mut out, value)
    } else {
        serde_json::to_writer_pretty(&mut out, value)
    }
    .map_err(std::io::Error::from)
    .and_then(|()| out.write_all(b"\n"))
    .and_then(|()| out.finish().map(drop));
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e)).context("writing the report to standard output")
        }
        _ => Ok(()),
    }
}

/// Writes `value` as pretty JSON to a file readable by the owner only (also when it existed
/// with a looser mode): reports name the endpoint and the accounts involved. The text passes
/// through [`crate::redact::ScrubWriter`] like every other output, since error texts end up in it.
pub fn write_private_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::{io::Write, os::unix::fs::OpenOptionsExt};
    // Encoded straight into the file, the scrubber gathering it into 64 KB pieces: held whole
    // first, the text raised a run's peak memory by its size (3 MB for 5,000 transactions);
    // written token by token, a 5,000-transaction report took a third of a second of system
    // calls.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(crate::private_fs::FILE_MODE)
        .open(path)
        .with_context(|| format!("creating report {}", path.display()))?;
    crate::private_fs::restrict(&file)
        .with_context(|| format!("restricting report {}", path.display()))?;
    let mut out = crate::redact::ScrubWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.finish().map(drop))
        .with_context(|| format!("writing report {}", path.display()))
}
