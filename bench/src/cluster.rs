//! The cluster benchmark: the founding workload on equally staked validators whose leader changes
//! every 4 slots (`txpace-localnet`, each node's TPU behind a relay), through txpace (with
//! `--rate 100`, Agave's pace, and with no `--rate`) and through Agave's two clients at the
//! same pace — `TpuClient::send_and_confirm_messages_with_spinner` and `solana-tpu-client-next`
//! driven as Agave's send-transaction service drives it — and RPC `sendTransaction` on node 0
//! (`rpc_child`: the node's own service forwards to the leaders), healthy and with one leader's TPU
//! blackholed, in one run; and what the cluster itself costs on this machine (start time, CPU
//! and memory of its nodes while idle).
//!
//! Every sender is counted the same way: landed transactions, one per unique message, and the
//! leader of each one's slot come from the chain (txpace's by the status and slot of each
//! signature in its report — it never re-signs; Agave's by its messages found in the run's
//! blocks, a re-signed copy that landed too counted once — and `getSlotLeaders`), not from the
//! sender's word; sends are counted per transaction per leader address for all: the streams
//! in txpace's report and Agave's sends counted where each client makes them (`agave_sends`,
//! `next_sends`; RPC's calls are not sends to leaders and are shown as not counted). A sender
//! whose process failed is shown as failed. Each ratio is txpace over the best Agave contender
//! of its case and round (`versus`, RPC included), named in the line. The workload is 2,000 transactions rather
//! than 5,000: three validators and a sender share 2 cores.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use txpace::validator::{Localnet, LocalnetOptions};

use crate::{
    agave_child,
    chain::{catch_up, fund_payer, landed_messages, landed_slots, per_leader, report_signatures},
    gap::{self, Gap},
    markdown::{self, Section},
    measure::{self, Sends, Usage},
    next_child, rpc_child,
    txpace_child::txpace_send,
    versus::{self, Finish},
    workload::{Endpoint, PACE_TPS, generate, tempfile_dir},
};

/// The contenders: txpace held to Agave's pace (its TpuClient sends one transaction every
/// 10 ms), txpace with no `--rate` (its default pace: also 100 tx/s; the child is given an
/// empty txpace.toml, see `child`), Agave's two clients, tpu-client-next at 100 tx/s too, and
/// RPC `sendTransaction` at 100 tx/s.
const SENDERS: [&str; 5] = [
    "txpace --rate 100",
    "txpace",
    "Agave TpuClient",
    next_child::NAME,
    rpc_child::NAME,
];

/// The node whose TPU is blackholed in the bad-leader case (not node 0, whose RPC both use).
const BAD_NODE: usize = 1;

#[derive(clap::Args)]
pub struct Args {
    /// Transactions per run
    #[arg(long, default_value_t = 2000)]
    count: usize,
    /// Validators in the cluster
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=8))]
    nodes: u8,
    /// Rounds of each case through each sender, alternating which goes first
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    rounds: u32,
    /// Seconds the idle cluster is watched for its CPU and memory
    #[arg(long, default_value_t = 20)]
    idle_s: u64,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Also write the tables as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<std::path::PathBuf>,
}

#[derive(Debug, Serialize)]
struct ClusterCost {
    nodes: u8,
    startup_s: f64,
    /// CPU cores the idle cluster's process kept busy (user + system time over wall time).
    idle_cpu_cores: f64,
    rss_mb: f64,
    peak_rss_mb: f64,
}

#[derive(Debug, Serialize)]
struct Run {
    case: &'static str,
    round: u32,
    sender: &'static str,
    landed: u64,
    total: u64,
    wall_s: f64,
    cpu_s: f64,
    sends: Option<Sends>,
    sends_per_landed: Option<f64>,
    /// Landed transactions by the leader of their slot, in node order.
    landed_per_node: Vec<u64>,
    /// The longest stretch of slots without one of its landings (see `gap`).
    gap: Option<Gap>,
    /// Landings beyond the first of a message (Agave's re-signed copies).
    duplicates: u64,
    /// Why its process failed, when it did: its exit and the tail of its standard error.
    failure: Option<String>,
}

#[derive(Debug, Serialize)]
struct Figures {
    cluster: ClusterCost,
    runs: Vec<Run>,
}

pub fn run(args: Args) -> Result<()> {
    let dir = tempfile_dir()?;
    eprintln!("starting {} validators (txpace-localnet)…", args.nodes);
    let mut cluster = Localnet::start(LocalnetOptions {
        nodes: usize::from(args.nodes),
        tpu_relay: true,
        slots_per_epoch: Some(crate::workload::SLOTS_PER_EPOCH),
        ..LocalnetOptions::default()
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(log) = cluster.forked_start() {
        eprintln!(
            "the first start's nodes forked (log {}); the cluster is a second start",
            log.display()
        );
    }
    let cost = cluster_cost(&cluster, args.nodes, Duration::from_secs(args.idle_s))?;
    let ep = Endpoint::of_cluster(&cluster);
    let rpc = RpcClient::new_with_commitment(
        cluster.nodes()[2 % cluster.nodes().len()].rpc.clone(),
        CommitmentConfig::confirmed(),
    );
    let nodes: Vec<Pubkey> = cluster.nodes().iter().map(|n| n.identity).collect();
    let (agave_payer, agave_keypair) = fund_payer(
        &cluster.rpc_client(),
        cluster.mint_keypair(),
        &dir,
        "agave-payer.json",
    )?;
    let (next_payer, next_keypair) = fund_payer(
        &cluster.rpc_client(),
        cluster.mint_keypair(),
        &dir,
        "next-payer.json",
    )?;
    let (rpc_payer, rpc_keypair) = fund_payer(
        &cluster.rpc_client(),
        cluster.mint_keypair(),
        &dir,
        "rpc-payer.json",
    )?;

    let mut runs = Vec::new();
    for case in ["healthy", "bad leader"] {
        if case == "bad leader" {
            cluster
                .blackhole(BAD_NODE)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        for round in 1..=args.rounds {
            // Each round starts with the next sender, so none always runs first.
            let first = (round as usize - 1) % SENDERS.len();
            for i in 0..SENDERS.len() {
                let sender = SENDERS[(first + i) % SENDERS.len()];
                let run = if let Some(pace) = sender.strip_prefix("txpace") {
                    let name = format!("{case}-{round}-{i}.b64");
                    let file = generate(&ep, &dir, &name, args.count, 1)?;
                    let pace: Vec<&str> = pace.split_whitespace().collect();
                    let run = txpace_send(&ep, &file, &pace)?;
                    // Streams, not sends: a send goes to the current and the next leader, and
                    // Agave's packets are counted per leader address too.
                    let sends = Sends::txpace(&run.report["summary"]);
                    // Node 2 may be a slot behind: a run's last slot of landings was read as
                    // missing (47 of 2,000 once) before it confirmed what node 0 had.
                    catch_up(&rpc, &ep.rpc)?;
                    let slots = landed_slots(&rpc, &report_signatures(&run.report)?)?;
                    let per_node = per_leader(&rpc, &slots, &nodes)?;
                    let mut r =
                        contender(case, round, sender, &run.usage, sends, per_node, args.count);
                    r.gap = gap::longest(&rpc, &slots, &nodes)?;
                    r.failure = run.failure;
                    r
                } else {
                    let from = rpc.get_slot()?;
                    // Amounts no other run used: every run's transactions are new.
                    let base =
                        1_000_000 * u64::from(round) + if case == "healthy" { 0 } else { 500_000 };
                    let (agave, payer) = if sender == next_child::NAME {
                        let run = next_child::send(
                            &ep,
                            &next_keypair,
                            args.count,
                            base,
                            PACE_TPS,
                            |_| Ok(()),
                        )?;
                        (run, next_payer.pubkey())
                    } else if sender == rpc_child::NAME {
                        let run =
                            rpc_child::send(&ep, &rpc_keypair, args.count, base, PACE_TPS, |_| {
                                Ok(())
                            })?;
                        (run, rpc_payer.pubkey())
                    } else {
                        let run =
                            agave_child::send(&ep, &agave_keypair, args.count, base, |_| Ok(()))?;
                        (run, agave_payer.pubkey())
                    };
                    let expected = agave_child::expected(&payer, args.count, base);
                    catch_up(&rpc, &ep.rpc)?;
                    let landings = landed_messages(&rpc, from, &expected)?;
                    let per_node = per_leader(&rpc, &landings.slots, &nodes)?;
                    let mut r = contender(
                        case,
                        round,
                        sender,
                        &agave.usage,
                        agave.sends,
                        per_node,
                        args.count,
                    );
                    r.duplicates = landings.duplicates;
                    r.gap = gap::longest(&rpc, &landings.slots, &nodes)?;
                    r.failure = agave.failure;
                    r
                };
                runs.push(run);
            }
        }
        if case == "bad leader" {
            cluster
                .restore(BAD_NODE)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    let figures = Figures {
        cluster: cost,
        runs,
    };
    markdown::emit(
        &sections(&figures, &nodes, args.count),
        args.markdown.as_deref(),
    )?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}

fn contender(
    case: &'static str,
    round: u32,
    sender: &'static str,
    usage: &Usage,
    sends: Option<Sends>,
    landed_per_node: Vec<u64>,
    total: usize,
) -> Run {
    let landed: u64 = landed_per_node.iter().sum();
    Run {
        case,
        round,
        sender,
        landed,
        total: total as u64,
        wall_s: usage.wall_s,
        cpu_s: usage.cpu_s,
        sends,
        sends_per_landed: measure::per_landed(sends, landed),
        landed_per_node,
        gap: None,
        duplicates: 0,
        failure: None,
    }
}

/// Start time, and the idle cluster's CPU and memory from `/proc`.
fn cluster_cost(cluster: &Localnet, nodes: u8, idle: Duration) -> Result<ClusterCost> {
    let pid = cluster.pid();
    let ticks = clock_ticks();
    let before = cpu_ticks(pid)?;
    let started = Instant::now();
    std::thread::sleep(idle);
    let used = (cpu_ticks(pid)? - before) as f64 / ticks;
    let (rss_mb, peak_rss_mb) = memory(pid)?;
    Ok(ClusterCost {
        nodes,
        startup_s: cluster.startup_time().as_secs_f64(),
        idle_cpu_cores: used / started.elapsed().as_secs_f64(),
        rss_mb,
        peak_rss_mb,
    })
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) may hold spaces; fields are counted after its ')'.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .context("odd /proc stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .context("odd /proc stat")
    };
    // After ')': field 3 is index 0, so utime (14) is index 11 and stime (15) index 12.
    Ok(field(11)? + field(12)?)
}

/// VmRSS and VmHWM of a process, in MB.
fn memory(pid: u32) -> Result<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb = |key: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    Ok((kb("VmRSS:") / 1024.0, kb("VmHWM:") / 1024.0))
}

/// The best Agave run of a case and round (`versus::best`), if one finished.
fn best_agave<'a>(runs: &'a [Run], case: &str, round: u32) -> Option<&'a Run> {
    versus::best(
        runs.iter()
            .filter(|a| a.case == case && a.round == round && a.sender.starts_with("Agave")),
        |a| Finish {
            wall_s: a.wall_s,
            landed: a.landed,
            total: a.total,
            failed: a.failure.is_some(),
        },
    )
}

/// The ratio lines: each txpace run's wall time over the best Agave run of its case and round.
fn ratio_lines(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .filter(|t| t.sender.starts_with("txpace"))
        .map(|t| {
            let best = best_agave(runs, t.case, t.round).map(|a| (a.sender, a.wall_s));
            format!(
                "{}, round {}: {} / the best Agave contender, wall {}",
                t.case,
                t.round,
                t.sender,
                versus::ratio_words(t.wall_s, t.failure.is_some(), best)
            )
        })
        .collect()
}

fn sections(f: &Figures, nodes: &[Pubkey], n: usize) -> Vec<Section> {
    let c = &f.cluster;
    let cost = Section::new(format!(
        "Cluster: {} validators (txpace-localnet), ready in {:.1} s; idle {:.2} CPU cores, \
         RSS {:.0} MB (peak {:.0} MB)",
        c.nodes, c.startup_s, c.idle_cpu_cores, c.rss_mb, c.peak_rss_mb
    ));
    let names: Vec<String> = (0..nodes.len()).map(|i| format!("node {i}")).collect();
    let mut table = Section::new(format!(
        "Founding workload on the cluster: {n} self-transfers (at 100 tx/s the bound N/rate is \
         {:.1} s); node {BAD_NODE}'s TPU blackholed in the bad-leader case",
        n as f64 / 100.0
    ))
    .left("case")
    .right("round")
    .left("sender")
    .right("landed")
    .right("wall s")
    .right("CPU s")
    .right("sends")
    .right("sends/tx")
    .left(&format!("landed per leader ({})", names.join(", ")))
    .left("longest gap, slots")
    .left("note");
    for r in &f.runs {
        table.row(vec![
            r.case.to_string(),
            r.round.to_string(),
            r.sender.to_string(),
            format!("{}/{}", r.landed, r.total),
            format!("{:.1}", r.wall_s),
            format!("{:.2}", r.cpu_s),
            Sends::show(r.sends),
            Sends::show_per_landed(r.sends, r.landed),
            r.landed_per_node
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" / "),
            r.gap.as_ref().map_or_else(|| "–".to_string(), Gap::label),
            measure::row_note(r.failure.as_deref(), r.duplicates)
                .trim()
                .to_string(),
        ]);
    }
    table.note(
        "(sends: per transaction per leader address, counted where each sender makes them — n/a \
         for RPC sendTransaction, whose node makes its streams)",
    );
    table.note(
        "(longest gap: the most slots between two of the run's landing slots, how many of them \
         have no confirmed block, and how many each node led; a stall no sender can land \
         through meets only the run under way)",
    );
    for line in ratio_lines(&f.runs) {
        table.note(line);
    }
    vec![cost, table]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(case: &'static str, sender: &'static str, wall_s: f64, failed: bool) -> Run {
        let usage = Usage {
            wall_s,
            cpu_s: 1.0,
            peak_rss_mb: 30.0,
        };
        let mut r = contender(case, 1, sender, &usage, None, vec![2000], 2000);
        r.failure = failed.then(|| "exit 1: gave up".into());
        r
    }

    /// Each txpace run over the best Agave run of its case and round, named; none when
    /// every Agave run of that case failed.
    #[test]
    fn each_ratio_is_over_the_best_agave_run_of_its_case() {
        let runs = [
            run("healthy", "txpace", 20.4, false),
            run("healthy", "Agave TpuClient", 24.0, false),
            run("healthy", next_child::NAME, 20.2, false),
            run("bad leader", "txpace", 21.0, false),
            run("bad leader", "Agave TpuClient", 30.0, true),
            run("bad leader", next_child::NAME, 22.0, true),
        ];
        assert_eq!(
            ratio_lines(&runs),
            vec![
                format!(
                    "healthy, round 1: txpace / the best Agave contender, wall {:.3} (vs {})",
                    20.4 / 20.2,
                    next_child::NAME
                ),
                "bad leader, round 1: txpace / the best Agave contender, wall none (every Agave \
                 run failed)"
                    .to_string(),
            ]
        );
    }

    /// RPC `sendTransaction` is an Agave contender too: quicker than both TPU clients, it is
    /// the one compared with.
    #[test]
    fn rpc_send_transaction_is_compared_with_when_it_is_quickest() {
        let runs = [
            run("healthy", "txpace", 20.4, false),
            run("healthy", "Agave TpuClient", 24.0, false),
            run("healthy", next_child::NAME, 20.9, false),
            run("healthy", rpc_child::NAME, 20.3, false),
        ];
        assert_eq!(
            ratio_lines(&runs),
            vec![format!(
                "healthy, round 1: txpace / the best Agave contender, wall {:.3} (vs {})",
                20.4 / 20.3,
                rpc_child::NAME
            )]
        );
    }
}
