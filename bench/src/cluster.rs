//! The cluster benchmark: the founding workload on equally staked validators whose leader changes
//! every 4 slots (`txpace-localnet`, each node's TPU behind a relay), through txpace (at
//! Agave's 100 tx/s and at its own default pace) and through Agave's
//! `TpuClient::send_and_confirm_messages_with_spinner`, healthy and with one leader's TPU
//! blackholed, in one run; and what the cluster itself costs on this machine (start time, CPU
//! and memory of its nodes while idle).
//!
//! Every sender is counted the same way: landed transactions and the leader of each one's slot
//! come from the chain (each signature's status and slot — txpace's from its report, Agave's
//! from its payer's history — and `getSlotLeaders`), not from the sender's word; sends are
//! counted per transaction per leader address for both: the streams in txpace's report and
//! Agave's connection-cache packets (see `agave_metrics`). The workload is 2,000 transactions rather than 5,000: three
//! validators and a sender share 2 cores.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use txpace::validator::{Localnet, LocalnetOptions};

use crate::{
    agave_child,
    chain::{fund_payer, landed_slots, per_leader, report_signatures, signatures_since},
    measure::{self, Usage},
    send::{Endpoint, generate, tempfile_dir, txpace_send},
};

/// The contenders: txpace held to Agave's pace (its TpuClient sends one transaction every
/// 10 ms), txpace at its default pace (the closed loop), and Agave.
const SENDERS: [&str; 3] = ["txpace --rate 100", "txpace", "Agave TpuClient"];

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
    sends: Option<u64>,
    sends_per_landed: Option<f64>,
    /// Landed transactions by the leader of their slot, in node order.
    landed_per_node: Vec<u64>,
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
                    let (usage, report) = txpace_send(&ep, &file, &pace)?;
                    // Streams, not sends: a send goes to the current and the next leader, and
                    // Agave's packets are counted per leader address too.
                    let sends = report["summary"]["streams"]["sent"].as_u64();
                    let slots = landed_slots(&rpc, &report_signatures(&report)?)?;
                    let per_node = per_leader(&rpc, &slots, &nodes)?;
                    contender(case, round, sender, &usage, sends, per_node, args.count)
                } else {
                    let from = rpc.get_slot()?;
                    // Amounts no other run used: every run's transactions are new.
                    let base =
                        1_000_000 * u64::from(round) + if case == "healthy" { 0 } else { 500_000 };
                    let agave =
                        agave_child::send(&ep, &agave_keypair, args.count, base, |_| Ok(()))?;
                    if let Some(e) = agave.error {
                        bail!("agave-send failed: {e}");
                    }
                    let (usage, sends) = (agave.usage, agave.sends);
                    let signatures = signatures_since(&rpc, &agave_payer.pubkey(), from)?;
                    let slots = landed_slots(&rpc, &signatures)?;
                    let per_node = per_leader(&rpc, &slots, &nodes)?;
                    contender(case, round, sender, &usage, sends, per_node, args.count)
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
    print_table(&figures, &nodes, args.count);
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
    sends: Option<u64>,
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

fn print_table(f: &Figures, nodes: &[Pubkey], n: usize) {
    let c = &f.cluster;
    println!(
        "\nCluster: {} validators (txpace-localnet), ready in {:.1} s; idle {:.2} CPU cores, \
         RSS {:.0} MB (peak {:.0} MB)",
        c.nodes, c.startup_s, c.idle_cpu_cores, c.rss_mb, c.peak_rss_mb
    );
    println!(
        "\nFounding workload on the cluster: {n} self-transfers (at 100 tx/s the bound N/rate is \
         {:.1} s); node {BAD_NODE}'s TPU blackholed in the bad-leader case",
        n as f64 / 100.0
    );
    let names: Vec<String> = (0..nodes.len()).map(|i| format!("node {i}")).collect();
    println!(
        "{:<11} {:>5} {:<18} {:>11} {:>7} {:>6} {:>7} {:>8}  landed per leader ({})",
        "case",
        "round",
        "sender",
        "landed",
        "wall s",
        "CPU s",
        "sends",
        "sends/tx",
        names.join(", ")
    );
    for r in &f.runs {
        println!(
            "{:<11} {:>5} {:<18} {:>11} {:>7.1} {:>6.2} {:>7} {:>8}  {}",
            r.case,
            r.round,
            r.sender,
            format!("{}/{}", r.landed, r.total),
            r.wall_s,
            r.cpu_s,
            r.sends.map_or("n/a".into(), |s| s.to_string()),
            r.sends_per_landed
                .map_or("n/a".into(), |v| format!("{v:.3}")),
            r.landed_per_node
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" / ")
        );
    }
    for t in f.runs.iter().filter(|r| r.sender.starts_with("txpace")) {
        if let Some(a) = f
            .runs
            .iter()
            .find(|a| a.case == t.case && a.round == t.round && a.sender.starts_with("Agave"))
        {
            println!(
                "{}, round {}: {} / Agave wall {:.3}",
                t.case,
                t.round,
                t.sender,
                t.wall_s / a.wall_s.max(0.001)
            );
        }
    }
}
