//! The send benchmark: the founding workload (5,000 unique self-transfers at 1,000,000
//! µlamports/CU) through txpace at 100 tx/s and, at the same pace on the same validator in one
//! run, through Agave's two clients — the legacy
//! `TpuClient::send_and_confirm_messages_with_spinner` and `solana-tpu-client-next` driven as
//! Agave's send-transaction service drives it (`next_child`) — and through RPC
//! `sendTransaction`, the node's own send-transaction service (`rpc_child`); the ratios are over
//! the best of them (`report`); then
//! txpace's pace on the wire at 100 and 1,000 tx/s and its highest landed rate with `--rate max`,
//! unstaked and with the validator's (staked) identity.
//!
//! Every contender is counted in the same units from the same sources: landed transactions from
//! the chain, one per unique message (txpace's by the statuses of the signatures in its report —
//! it never re-signs; Agave's by its messages, paid by a payer of its own, found in the run's
//! blocks, a re-signed copy that landed too counted once); sends per transaction per leader
//! address, counted where each sender makes them (txpace's streams, the legacy client's sends
//! through its connection cache, `agave_sends`, tpu-client-next's batches handed to its
//! connection workers, `next_sends`); time as the process's wall time, rates included. A
//! contender whose process failed is shown as failed, and no ratio is taken with its run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use solana_client::rpc_client::RpcClient;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use txpace::validator::ValidatorOptions;

mod report;

use crate::{
    agave_child,
    chain::{fund_payer, landed_messages, landed_slots, report_signatures},
    markdown,
    measure::{self, Sends, Usage},
    next_child, rpc_child, terminal,
    txpace_child::{TxpaceRun, txpace_dashboard, txpace_send},
    workload::{Endpoint, PACE_TPS, generate, start_validator, tempfile_dir},
};

#[derive(clap::Args)]
pub struct Args {
    /// Transactions in the founding workload
    #[arg(long, default_value_t = 5000)]
    count: usize,
    /// Skip the Agave comparison (only txpace's own figures)
    #[arg(long)]
    no_agave: bool,
    /// Rounds of the founding workload through each sender, alternating which goes first
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    rounds: u32,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the tables as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<PathBuf>,
}

/// Who sent a round of the founding workload.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Sender {
    /// `txpace send --no-tui`.
    Headless,
    /// `txpace send` drawing its dashboard in a terminal.
    Dashboard,
    /// Agave's legacy `TpuClient`.
    Agave,
    /// Agave's `solana-tpu-client-next`.
    AgaveNext,
    /// RPC `sendTransaction`: the node's send-transaction service makes the streams.
    AgaveRpc,
}

impl Sender {
    fn is_agave(self) -> bool {
        matches!(self, Sender::Agave | Sender::AgaveNext | Sender::AgaveRpc)
    }

    /// Whether it sends to the leaders itself (its process does the work of sending), as
    /// txpace does: the CPU and memory goals compare with these only.
    fn is_agave_tpu(self) -> bool {
        matches!(self, Sender::Agave | Sender::AgaveNext)
    }

    /// The contender's name in ratio lines.
    fn short(self) -> &'static str {
        match self {
            Sender::Headless => "txpace",
            Sender::Dashboard => "txpace with its dashboard",
            Sender::Agave => "Agave TpuClient",
            Sender::AgaveNext => next_child::NAME,
            Sender::AgaveRpc => rpc_child::NAME,
        }
    }
}

/// The order of a round's senders: every other round reversed, so that none always meets the
/// validator fresher (or more loaded) than another.
fn order(round: u32, agave: bool) -> Vec<Sender> {
    let mut senders = vec![Sender::Headless, Sender::Dashboard];
    if agave {
        senders.extend([Sender::Agave, Sender::AgaveNext, Sender::AgaveRpc]);
    }
    if round.is_multiple_of(2) {
        senders.reverse();
    }
    senders
}

#[derive(Debug, Serialize)]
struct Contender {
    /// Which round of the founding workload, from 1.
    round: u32,
    sender: Sender,
    name: String,
    /// Unique messages landed without error, from the chain.
    landed: u64,
    total: u64,
    usage: Usage,
    /// Wall time over the N/rate bound.
    vs_bound: f64,
    sends: Option<Sends>,
    sends_per_landed: Option<f64>,
    /// Landings beyond the first of a message (Agave's re-signed copies).
    duplicates: u64,
    /// Why its process failed, when it did: its exit and the tail of its standard error.
    failure: Option<String>,
}

#[derive(Debug, Serialize)]
struct RateFigure {
    target: f64,
    /// Streams per second on the wire over the run's middle.
    achieved: f64,
    ratio: f64,
    /// The most streams any 100 ms window held, over the target's share of 100 ms.
    burst: f64,
}

#[derive(Debug, Serialize)]
struct MaxFigure {
    identity: &'static str,
    /// Unique messages landed without error, from the chain.
    landed: u64,
    total: u64,
    /// The process's wall time.
    wall_s: f64,
    /// Landed over the process's wall time.
    landed_per_s: f64,
    sends: Option<Sends>,
    sends_per_landed: Option<f64>,
    failure: Option<String>,
}

#[derive(Debug, Serialize)]
struct Figures {
    founding: Vec<Contender>,
    pacing: Vec<RateFigure>,
    max_rate: Vec<MaxFigure>,
}

/// The pace on the wire, from a report written with `--report-sends`: every stream by when it
/// was handed to QUIC, over the middle of the run (its first and last second left out: start-up
/// and the tail of resends). Returns the streams per second there, and the most streams any
/// 100 ms window of the whole run held, as a multiple of the target's share of 100 ms.
fn wire_pace(report: &Value, target: f64) -> (f64, f64) {
    let mut at: Vec<u64> = report["transactions"]
        .as_array()
        .map(|t| {
            t.iter()
                .flat_map(|t| t["streams"].as_array().cloned().unwrap_or_default())
                .filter_map(|s| s["at_ms"].as_u64())
                .collect()
        })
        .unwrap_or_default();
    at.sort_unstable();
    let (Some(&first), Some(&last)) = (at.first(), at.last()) else {
        return (0.0, 0.0);
    };
    let (from, to) = (first + 1_000, last.saturating_sub(1_000));
    let middle = at.iter().filter(|t| **t >= from && **t < to).count();
    let pace = if to > from {
        middle as f64 / ((to - from) as f64 / 1000.0)
    } else {
        0.0
    };
    // Sliding windows [t, t + 100 ms) starting at each stream.
    let mut most = 0;
    let mut j = 0;
    for i in 0..at.len() {
        while j < at.len() && at[j] < at[i] + 100 {
            j += 1;
        }
        most = most.max(j - i);
    }
    (pace, most as f64 / (target * 0.1))
}

pub fn run(args: Args) -> Result<()> {
    let dir = tempfile_dir()?;
    let v = start_validator(ValidatorOptions::default())?;
    let ep = Endpoint::of_validator(&v);
    let rpc = v.rpc_client();
    // Each Agave client's payer is its own: its landings are its messages paid by this key.
    let (legacy_payer, legacy_keypair) =
        fund_payer(&rpc, v.mint_keypair(), &dir, "agave-payer.json")?;
    let (next_payer, next_keypair) = fund_payer(&rpc, v.mint_keypair(), &dir, "next-payer.json")?;
    let (rpc_payer, rpc_keypair) = fund_payer(&rpc, v.mint_keypair(), &dir, "rpc-payer.json")?;
    let legacy = (legacy_payer.pubkey(), legacy_keypair);
    let next = (next_payer.pubkey(), next_keypair);
    let via_rpc = (rpc_payer.pubkey(), rpc_keypair);
    let n = args.count;
    let mut founding = Vec::new();
    // Each sender several times, the order alternating.
    for round in 1..=args.rounds {
        for sender in order(round, !args.no_agave) {
            founding.push(match sender {
                Sender::Headless | Sender::Dashboard => {
                    founding_txpace(&ep, &rpc, &dir, n, round, sender)?
                }
                Sender::Agave => {
                    founding_agave(&ep, &rpc, (&legacy.0, &legacy.1), n, round, sender)?
                }
                Sender::AgaveNext => {
                    founding_agave(&ep, &rpc, (&next.0, &next.1), n, round, sender)?
                }
                Sender::AgaveRpc => {
                    founding_agave(&ep, &rpc, (&via_rpc.0, &via_rpc.1), n, round, sender)?
                }
            });
        }
    }

    // Pacing on the wire, from every stream's hand-off to QUIC (--report-sends): 20 s at
    // 100 tx/s, and 10 s at 1,000 tx/s over 8 payers (no hot account) with the staked identity
    // so the server's unstaked stream budget (200 tx/s) does not cap it.
    let identity = v.identity_keypair_path();
    let identity = identity.to_str().context("identity path is not UTF-8")?;
    let mut pacing = Vec::new();
    for (target, count, payers, extra) in [
        (100.0, 2_000, 1, vec![]),
        (1000.0, 10_000, 8, vec!["--identity", identity]),
    ] {
        let file = generate(&ep, &dir, &format!("pace{target}.b64"), count, payers)?;
        let rate = target.to_string();
        let mut args = vec!["--rate", rate.as_str(), "--report-sends"];
        args.extend(extra);
        let run = txpace_send(&ep, &file, &args)?;
        if let Some(f) = &run.failure {
            eprintln!("txpace at {target} tx/s FAILED: {f}");
        }
        let (achieved, burst) = wire_pace(&run.report, target);
        pacing.push(RateFigure {
            target,
            achieved,
            ratio: achieved / target,
            burst,
        });
    }

    // Highest landed rate on the founding workload's size, unstaked and staked.
    let mut max_rate = Vec::new();
    for (label, extra) in [
        ("unstaked", vec!["--rate", "max"]),
        ("staked", vec!["--rate", "max", "--identity", identity]),
    ] {
        let file = generate(&ep, &dir, &format!("max-{label}.b64"), n, 8)?;
        let run = txpace_send(&ep, &file, &extra)?;
        let landed = landed_from_chain(&rpc, &run)?;
        let sends = Sends::txpace(&run.report["summary"]);
        max_rate.push(MaxFigure {
            identity: label,
            landed,
            total: n as u64,
            wall_s: run.usage.wall_s,
            landed_per_s: measure::landed_per_s(landed, &run.usage),
            sends,
            sends_per_landed: measure::per_landed(sends, landed),
            failure: run.failure,
        });
    }

    let figures = Figures {
        founding,
        pacing,
        max_rate,
    };
    markdown::emit(&report::sections(&figures, n), args.markdown.as_deref())?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}

/// A txpace run's landings, from the chain: the signatures in its report that landed without
/// error (txpace sends each signed transaction as it is given, so one signature is one message).
fn landed_from_chain(rpc: &RpcClient, run: &TxpaceRun) -> Result<u64> {
    Ok(landed_slots(rpc, &report_signatures(&run.report)?)?.len() as u64)
}

/// One round of the founding workload through txpace at 100 tx/s, headless or drawing its
/// dashboard.
fn founding_txpace(
    v: &Endpoint,
    rpc: &RpcClient,
    dir: &Path,
    n: usize,
    round: u32,
    sender: Sender,
) -> Result<Contender> {
    let (run, name) = if sender == Sender::Dashboard {
        let file = generate(v, dir, &format!("founding-{round}-dashboard.b64"), n, 1)?;
        let (run, bytes) = txpace_dashboard(v, &file, &["--rate", "100"])?;
        let name = format!(
            "txpace --rate 100, dashboard {}x{} ({} KB drawn)",
            terminal::COLS,
            terminal::ROWS,
            bytes / 1000
        );
        (run, name)
    } else {
        let file = generate(v, dir, &format!("founding-{round}.b64"), n, 1)?;
        let run = txpace_send(v, &file, &["--rate", "100"])?;
        (run, "txpace --rate 100".to_string())
    };
    let landed = landed_from_chain(rpc, &run)?;
    let sends = Sends::txpace(&run.report["summary"]);
    Ok(Contender {
        round,
        sender,
        name,
        landed,
        total: n as u64,
        vs_bound: run.usage.wall_s / (n as f64 / 100.0),
        sends,
        sends_per_landed: measure::per_landed(sends, landed),
        duplicates: 0,
        failure: run.failure,
        usage: run.usage,
    })
}

/// One round of the same workload shape through one of Agave's clients (`sender`), as a
/// measured child at the same pace, paid by `payer` (its pubkey and keypair file).
fn founding_agave(
    v: &Endpoint,
    rpc: &RpcClient,
    payer: (&Pubkey, &Path),
    n: usize,
    round: u32,
    sender: Sender,
) -> Result<Contender> {
    // Amounts no other round used: every round's transactions are new.
    let base = 1_000_000 * u64::from(round);
    let from = rpc.get_slot()?;
    let (run, name) = match sender {
        Sender::AgaveNext => {
            let run = next_child::send(v, payer.1, n, base, PACE_TPS, |_| Ok(()))?;
            let name = format!("{} (send-transaction service config)", next_child::NAME);
            (run, name)
        }
        Sender::AgaveRpc => {
            let run = rpc_child::send(v, payer.1, n, base, PACE_TPS, |_| Ok(()))?;
            (
                run,
                format!("{} (the node's service sends)", rpc_child::NAME),
            )
        }
        _ => {
            let run = agave_child::send(v, payer.1, n, base, |_| Ok(()))?;
            let name = "Agave TpuClient send_and_confirm_messages_with_spinner".to_string();
            (run, name)
        }
    };
    let landings = landed_messages(rpc, from, &agave_child::expected(payer.0, n, base))?;
    let landed = landings.slots.len() as u64;
    Ok(Contender {
        round,
        sender,
        name,
        landed,
        total: n as u64,
        vs_bound: run.usage.wall_s / (n as f64 / 100.0),
        sends: run.sends,
        sends_per_landed: measure::per_landed(run.sends, landed),
        duplicates: landings.duplicates,
        failure: run.failure,
        usage: run.usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Agave contender runs in every round, the order reversed every other round.
    #[test]
    fn every_other_round_runs_the_senders_in_reverse() {
        use Sender::*;
        assert_eq!(
            order(1, true),
            [Headless, Dashboard, Agave, AgaveNext, AgaveRpc]
        );
        assert_eq!(
            order(2, true),
            [AgaveRpc, AgaveNext, Agave, Dashboard, Headless]
        );
        assert_eq!(order(3, false), [Headless, Dashboard]);
    }

    /// The pace over the run's middle (its first and last second left out) and the busiest
    /// 100 ms window over the target's share of it.
    #[test]
    fn the_wire_pace_is_read_from_the_streams_hand_off_times() {
        // 100 tx/s for 5 s: a stream every 10 ms, and 5 extra at 2,000 ms.
        let mut at: Vec<u64> = (0..500).map(|i| i * 10).collect();
        at.extend([2_000; 5]);
        let report = serde_json::json!({
            "transactions": at
                .iter()
                .map(|t| serde_json::json!({"streams": [{"at_ms": t}]}))
                .collect::<Vec<_>>()
        });
        let (pace, burst) = wire_pace(&report, 100.0);
        // From 1,000 ms to before 3,990 ms (the last at 4,990 less a second): 299 + 5 streams.
        assert!((pace - 304.0 / 2.99).abs() < 1e-9, "{pace}");
        // [2,000, 2,100) holds 10 + 5 streams: 1.5 × the target's 10.
        assert_eq!(burst, 1.5);
        assert_eq!(wire_pace(&serde_json::json!({}), 100.0), (0.0, 0.0));
    }
}
