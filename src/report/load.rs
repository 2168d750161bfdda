//! Reading a report back (`txpace view`): the JSON `--report` wrote, turned into the snapshot
//! the dashboard draws, so a run from a headless server can be looked at later.
//!
//! A report holds each transaction's fate, sends, first send and time to land, its leaders
//! and (with `--report-sends`) every stream; the rate chart and the latency histogram are
//! rebuilt from those times through the engine's own [`Meter`], so they are drawn as the
//! live run drew them. What a report does not hold (resends' times without
//! `--report-sends`, the slot each leader's window began) is left out, not made up.

use std::{net::SocketAddr, path::Path, str::FromStr, sync::Arc, time::Duration};

use imbl::Vector;
use serde::Deserialize;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use crate::engine::{
    lifecycle::{Queue, TxState},
    meter::Meter,
    net::StreamOutcome,
    snapshot::{
        ClusterView, ConnState, Counts, LeaderStats, LeaderView, RateTarget, RateView, RunState,
        SendRecord, Snapshot, StatusRecord, StreamCounts, TxView,
    },
};

/// Why a report could not be read: the file, and the line and column of the problem.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read it: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}:{line}:{column}: not a txpace report: {reason}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Phase { path: String, reason: String },
    #[error("{path}: transaction {index}: {reason}")]
    Field {
        path: String,
        index: usize,
        reason: String,
    },
}

/// A deploy's report: one run report per phase.
#[derive(Deserialize)]
struct DeployReport {
    phases: Vec<DeployPhase>,
}

#[derive(Deserialize)]
struct DeployPhase {
    name: String,
    report: RunReport,
}

#[derive(Deserialize)]
struct RunReport {
    summary: Summary,
    leaders: Vec<Leader>,
    transactions: Vec<Transaction>,
}

#[derive(Deserialize)]
struct Summary {
    outcome: String,
    error: Option<String>,
    rpc_url: String,
    commitment: String,
    #[serde(default)]
    identity: Option<String>,
    #[serde(default)]
    slot: Option<u64>,
    #[serde(default)]
    block_height: Option<u64>,
    elapsed_s: f64,
    target_rate: Option<f64>,
    sends: u64,
    send_errors: u64,
    streams: StreamCounts,
}

#[derive(Deserialize)]
struct Leader {
    identity: String,
    tpu_quic: Option<String>,
    streams: StreamCounts,
    landed: u64,
    #[serde(default)]
    ack_ms_p50: Option<u64>,
}

#[derive(Deserialize)]
struct Transaction {
    signature: String,
    origin: String,
    status: String,
    sends: u32,
    first_sent_ms: Option<u64>,
    landed_slot: Option<u64>,
    last_valid_block_height: Option<u64>,
    last_valid_exact: bool,
    latency_ms: Option<u64>,
    leaders: Vec<String>,
    #[serde(default)]
    landed_leader: Option<String>,
    #[serde(default)]
    cu_price: Option<u64>,
    #[serde(default)]
    cu_limit: Option<u32>,
    error: Option<String>,
    #[serde(default)]
    streams: Option<Vec<Stream>>,
    #[serde(default)]
    streams_dropped: Option<u64>,
}

#[derive(Deserialize)]
struct Stream {
    at_ms: u64,
    leader: String,
    addr: Option<String>,
    outcome: Option<StreamOutcome>,
    ack_ms: Option<u64>,
    error: Option<String>,
}

/// Reads the report at `path` as a finished run's snapshot. A deploy's report holds one run
/// per phase: `phase` names the one to show (default: the writes, else the last); the name
/// shown comes back with the snapshot.
pub fn load(path: &Path, phase: Option<&str>) -> Result<(Snapshot, Option<String>), LoadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::Read {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let (file, name) = match serde_json::from_str::<DeployReport>(&text) {
        Ok(deploy) => {
            let names: Vec<String> = deploy.phases.iter().map(|p| p.name.clone()).collect();
            let wanted = phase.map(str::to_string).or_else(|| {
                names
                    .iter()
                    .find(|n| *n == "writes")
                    .or(names.last())
                    .cloned()
            });
            let Some(p) = deploy
                .phases
                .into_iter()
                .find(|p| Some(&p.name) == wanted.as_ref())
            else {
                return Err(LoadError::Phase {
                    path: shown,
                    reason: format!(
                        "no phase {:?} in this deploy report; it has: {}",
                        wanted.unwrap_or_default(),
                        names.join(", ")
                    ),
                });
            };
            (p.report, Some(p.name))
        }
        Err(_) => {
            let file: RunReport = serde_json::from_str(&text).map_err(|e| {
                // The position is given in front, as FILE:LINE:COLUMN.
                let text = e.to_string();
                let reason = text
                    .rsplit_once(" at line ")
                    .map_or(text.as_str(), |(r, _)| r)
                    .to_string();
                LoadError::Parse {
                    path: shown.clone(),
                    line: e.line(),
                    column: e.column(),
                    reason,
                }
            })?;
            if phase.is_some() {
                return Err(LoadError::Phase {
                    path: shown,
                    reason: "--phase is for a deploy's report; this is a run's".into(),
                });
            }
            (file, None)
        }
    };
    let snap = to_snapshot(file).map_err(|(index, reason)| LoadError::Field {
        path: shown,
        index,
        reason,
    })?;
    Ok((snap, name))
}

fn key(s: &str) -> Result<Pubkey, String> {
    Pubkey::from_str(s).map_err(|_| format!("{s:?} is not a public key"))
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn state_of(status: &str, sends: u32) -> Result<TxState, String> {
    Ok(match status {
        "confirmed" | "finalized" => TxState::Confirmed,
        "failed" => TxState::Failed,
        "expired" => TxState::Expired,
        "unconfirmed" => match sends {
            0 => TxState::Queued,
            1 => TxState::Sent,
            _ => TxState::Resent,
        },
        other => return Err(format!("unknown status {other:?}")),
    })
}

fn run_state(outcome: &str, error: Option<String>) -> RunState {
    match outcome {
        "done" => RunState::Done,
        "failed" => RunState::Failed(error.unwrap_or_else(|| "failed".into())),
        _ => RunState::Stopped,
    }
}

fn to_snapshot(file: RunReport) -> Result<Snapshot, (usize, String)> {
    let RunReport {
        summary,
        leaders,
        transactions,
    } = file;
    // Never shorter than the last thing the report saw happen.
    let mut elapsed = Duration::from_secs_f64(summary.elapsed_s.clamp(0.0, 1e9));
    let mut timeline = Vec::new();
    let mut txs = Vector::new();
    let mut queues: [Vector<u32>; 5] = Default::default();
    let mut counts = Counts {
        total: transactions.len() as u64,
        sends: summary.sends,
        send_errors: summary.send_errors,
        streams: summary.streams,
        ..Counts::default()
    };
    for (i, t) in transactions.into_iter().enumerate() {
        let view = tx_view(i, t, &mut timeline).map_err(|e| (i, e))?;
        if let Some(last) = view.history.last() {
            elapsed = elapsed.max(last.at);
        }
        let queue = view.state.queue();
        *match queue {
            Queue::Pending => &mut counts.pending,
            Queue::Resent => &mut counts.resent,
            Queue::Confirmed => &mut counts.confirmed,
            Queue::Failed => &mut counts.failed,
            Queue::Expired => &mut counts.expired,
        } += 1;
        queues[queue as usize].push_back(i as u32);
        txs.push_back(view);
    }
    // The meter expects time to move forward, as it does in a live run.
    timeline.sort_by_key(|(at, _)| *at);
    let mut meter = Meter::default();
    for (at, happened) in timeline {
        match happened {
            Happened::Sent => meter.on_send(at),
            Happened::Acked(took) => meter.on_ack(took),
            Happened::Landed(latency) => meter.on_confirmed(at, Some(latency)),
        }
    }
    let totals: Vec<LeaderStats> = leaders
        .iter()
        .map(|l| {
            Ok(LeaderStats {
                identity: key(&l.identity)?,
                tpu_quic: l.tpu_quic.as_deref().and_then(|a| a.parse().ok()),
                streams: l.streams,
                landed: l.landed,
                ack_ms_p50: l.ack_ms_p50,
                backoff_level: 0,
            })
        })
        .collect::<Result<_, String>>()
        .map_err(|e| (0, format!("leaders: {e}")))?;
    let panel = totals
        .iter()
        .map(|l| LeaderView {
            identity: l.identity,
            tpu_quic: l.tpu_quic,
            first_slot: first_landing(&txs, &l.identity).unwrap_or(0),
            last_slot: first_landing(&txs, &l.identity).unwrap_or(0),
            conn: ConnState::Idle,
            streams: l.streams,
            landed: l.landed,
        })
        .collect();
    let target = match summary.target_rate {
        Some(r) => RateTarget::Fixed(r),
        None => RateTarget::Max,
    };
    Ok(Snapshot {
        seq: 1,
        run: run_state(&summary.outcome, summary.error),
        elapsed,
        cluster: ClusterView {
            rpc_url: summary.rpc_url,
            commitment: if summary.commitment == "finalized" {
                "finalized"
            } else if summary.commitment == "processed" {
                "processed"
            } else {
                "confirmed"
            },
            // Reports before these fields: the last landing's slot, and no height or identity.
            slot: summary
                .slot
                .or_else(|| txs.iter().filter_map(|v| v.landed_slot).max())
                .unwrap_or(0),
            block_height: summary.block_height.unwrap_or(0),
            identity: summary
                .identity
                .as_deref()
                .map(key)
                .transpose()
                .map_err(|e| (0, format!("summary: {e}")))?
                .unwrap_or_default(),
            staked: None,
            health: None,
            slot_feed_live: false,
            fees: None,
        },
        rate: RateView {
            target,
            pacing: match target {
                RateTarget::Fixed(r) => r,
                RateTarget::Max => 0.0,
            },
            achieved: 0.0,
            landing: 0.0,
            history: Arc::new(meter.history(elapsed + Duration::from_secs(1))),
        },
        counts,
        leaders: Arc::new(panel),
        txs,
        queues,
        latency: meter.latency(),
        acks: meter.acks(),
        leader_totals: Arc::new(totals),
        phase: None,
    })
}

/// The first slot a leader's landings were in, for the leaders panel's slot column.
fn first_landing(txs: &Vector<TxView>, leader: &Pubkey) -> Option<u64> {
    txs.iter()
        .filter(|v| v.landed_leader.as_ref() == Some(leader))
        .filter_map(|v| v.landed_slot)
        .min()
}

/// What the rate chart and the histograms are rebuilt from.
enum Happened {
    Sent,
    Acked(Duration),
    Landed(Duration),
}

fn tx_view(
    i: usize,
    t: Transaction,
    timeline: &mut Vec<(Duration, Happened)>,
) -> Result<TxView, String> {
    let signature = Signature::from_str(&t.signature)
        .map_err(|_| format!("{:?} is not a signature", t.signature))?;
    let state = state_of(&t.status, t.sends)?;
    let first = t.first_sent_ms.map(ms);
    let landed_at = match (first, t.latency_ms) {
        (Some(f), Some(l)) => Some(f + ms(l)),
        _ => None,
    };
    let mut history = Vec::new();
    if let Some(f) = first {
        history.push(StatusRecord {
            at: f,
            state: TxState::Sent,
            note: None,
        });
    }
    if state.is_final() {
        history.push(StatusRecord {
            at: landed_at.or(first).unwrap_or_default(),
            state,
            note: t.landed_slot.map(|s| format!("at slot {s}")),
        });
    }
    let sent_to = t
        .leaders
        .iter()
        .map(|l| key(l))
        .collect::<Result<Vec<_>, _>>()?;
    let send_log: Vec<SendRecord> = t
        .streams
        .unwrap_or_default()
        .into_iter()
        .map(|s| {
            Ok(SendRecord {
                at: ms(s.at_ms),
                leader: key(&s.leader)?,
                addr: s.addr.as_deref().and_then(|a| a.parse::<SocketAddr>().ok()),
                outcome: s.outcome,
                ack_ms: s.ack_ms,
                error: s.error,
            })
        })
        .collect::<Result<_, String>>()?;
    // The rate chart: first sends (every send's time with --report-sends) and landings.
    if send_log.is_empty() {
        if let Some(f) = first {
            timeline.push((f, Happened::Sent));
        }
    } else {
        let mut last = None;
        for s in &send_log {
            // The streams of one send share its time.
            if last != Some(s.at) {
                timeline.push((s.at, Happened::Sent));
                last = Some(s.at);
            }
            if let Some(a) = s.ack_ms {
                timeline.push((s.at + ms(a), Happened::Acked(ms(a))));
            }
        }
    }
    if state == TxState::Confirmed
        && let (Some(at), Some(latency)) = (landed_at, t.latency_ms)
    {
        timeline.push((at, Happened::Landed(ms(latency))));
    }
    Ok(TxView {
        id: i as u32,
        signature,
        origin: t.origin.into(),
        state,
        sends: t.sends,
        resigns: 0,
        first_sent: first,
        last_sent: send_log.last().map(|s| s.at).or(first),
        landed_slot: t.landed_slot,
        time_to_land: t.latency_ms.map(ms),
        last_valid_block_height: t.last_valid_block_height,
        last_valid_exact: t.last_valid_exact,
        durable_nonce: false,
        cu_price: t.cu_price,
        cu_limit: t.cu_limit,
        last_leader: send_log
            .last()
            .map(|s| s.leader)
            .or(sent_to.last().copied()),
        landed_leader: t.landed_leader.as_deref().map(key).transpose()?,
        last_error: t.error.map(Into::into),
        send_log_dropped: t.streams_dropped.unwrap_or(0),
        send_log: Arc::new(send_log),
        sent_to: Arc::new(sent_to),
        history: Arc::new(history),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{engine::RunOutcome, report::Report, ui::fixtures};

    fn written(snap: Snapshot, sends: bool) -> tempfile::NamedTempFile {
        let outcome = RunOutcome {
            commitments: vec![None; snap.txs.len()],
            snapshot: Arc::new(snap),
        };
        let mut report = Report::new(&outcome, &[]);
        if sends {
            report.add_streams(&outcome);
        }
        let file = tempfile::NamedTempFile::new().expect("temp file");
        report.write(file.path()).expect("write");
        file
    }

    /// What a report holds comes back as the run had it: every transaction's fate, sends,
    /// times, leaders and streams, the queues and counts, and each leader's figures.
    #[test]
    fn a_report_reads_back_as_the_run_it_describes() {
        let run = fixtures::done(200);
        let file = written(run.clone(), true);
        let (back, phase) = load(file.path(), None).expect("load");
        assert_eq!(phase, None);
        assert_eq!(back.run, RunState::Done);
        assert_eq!(back.counts, run.counts);
        assert_eq!(back.queues, run.queues);
        assert_eq!(*back.leader_totals, *run.leader_totals);
        for (b, r) in back.txs.iter().zip(run.txs.iter()) {
            assert_eq!(
                (
                    b.signature,
                    b.state,
                    b.sends,
                    b.first_sent,
                    b.landed_slot,
                    b.time_to_land
                ),
                (
                    r.signature,
                    r.state,
                    r.sends,
                    r.first_sent,
                    r.landed_slot,
                    r.time_to_land
                ),
                "tx {}",
                r.id
            );
            assert_eq!(
                (b.cu_price, b.cu_limit, b.landed_leader),
                (r.cu_price, r.cu_limit, r.landed_leader)
            );
            assert_eq!(b.send_log, r.send_log);
            let mut sent_to = r.sent_to.to_vec();
            sent_to.sort_by_key(|k| k.to_string());
            assert_eq!(*b.sent_to, sent_to, "the report lists leaders by name");
        }
        let landed = run
            .txs
            .iter()
            .filter(|v| v.state == TxState::Confirmed)
            .count() as u64;
        assert_eq!(back.latency.histogram.iter().sum::<u64>(), landed);
    }

    /// Bad input names the file and where: a truncated file, a field of the wrong kind, a
    /// missing phase.
    #[test]
    fn a_broken_report_is_refused_with_file_line_and_reason() {
        let file = written(fixtures::done(3), false);
        let text = std::fs::read_to_string(file.path()).expect("read");
        std::fs::write(file.path(), &text[..text.len() / 2]).expect("truncate");
        let err = load(file.path(), None).expect_err("truncated").to_string();
        assert!(
            err.starts_with(&format!("{}:", file.path().display())),
            "{err}"
        );
        assert!(err.contains("not a txpace report"), "{err}");
        std::fs::write(
            file.path(),
            text.replacen("\"sends\":", "\"sends\": \"x\", \"_\":", 1),
        )
        .expect("write");
        let err = load(file.path(), None).expect_err("wrong kind").to_string();
        assert!(err.contains("not a txpace report"), "{err}");
        std::fs::write(file.path(), &text).expect("write");
        let err = load(file.path(), Some("writes"))
            .expect_err("not a deploy")
            .to_string();
        assert!(err.contains("--phase is for a deploy's report"), "{err}");
    }
}
