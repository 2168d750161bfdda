//! A report, read back, as the snapshot the dashboard draws: every transaction's fate, sends,
//! times and streams, the queues and counts, and each leader's figures. The rate chart and the
//! histograms are rebuilt from the report's times through the engine's own [`Meter`]; what a
//! report does not hold (resends' times without `--report-sends`, the slot each leader's window
//! began) is left out, not made up.

use std::{net::SocketAddr, str::FromStr, sync::Arc, time::Duration};

use imbl::Vector;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use super::schema::{RunReport, Transaction};
use crate::engine::{
    lifecycle::{Queue, TxState},
    meter::Meter,
    snapshot::{
        ClusterView, ConnState, Counts, LeaderStats, LeaderView, RateTarget, RateView, RunState,
        SendRecord, Snapshot, StatusRecord, TxView, WireView,
    },
};

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

pub(super) fn to_snapshot(file: RunReport) -> Result<Snapshot, (usize, String)> {
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
                link: l.link.clone(),
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
            link: l.link.clone(),
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
            via_rpc: summary.via_rpc,
        },
        rate: RateView {
            target,
            pacing: match target {
                RateTarget::Fixed(r) => r,
                RateTarget::Max => 0.0,
            },
            owed: 0,
            sent_ahead: 0,
            achieved: 0.0,
            landing: 0.0,
            history: Arc::new(meter.history(elapsed.saturating_add(Duration::from_secs(1)))),
        },
        counts,
        leaders: Arc::new(panel),
        txs,
        queues,
        latency: meter.latency(),
        // The last minute on the wire is not in a report.
        wire: WireView::default(),
        acks: meter.acks(),
        leader_totals: Arc::new(totals),
        finished_phases: Arc::default(),
        phase: None,
    })
}

/// The first slot a leader's landings were in, for the leaders panel's slot column.
fn first_landing(txs: &Vector<TxView>, leader: &Pubkey) -> Option<u64> {
    txs.iter()
        .filter(|v| v.landed_leader.as_deref() == Some(leader))
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
        (Some(f), Some(l)) => Some(f.saturating_add(ms(l))),
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
                slot: s.slot,
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
                timeline.push((s.at.saturating_add(ms(a)), Happened::Acked(ms(a))));
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
            .or(sent_to.last().copied())
            .map(Arc::new),
        landed_leader: t
            .landed_leader
            .as_deref()
            .map(key)
            .transpose()?
            .map(Arc::new),
        last_error: t.error.map(Into::into),
        send_log_dropped: t.streams_dropped.unwrap_or(0),
        send_log: Arc::new(send_log),
        sent_to: Arc::new(sent_to),
        history: Arc::new(history),
    })
}
