//! The fault benchmark: the founding workload's shape (1,500 self-transfers at 100 tx/s) through
//! txpace and through Agave's `TpuClient::send_and_confirm_messages_with_spinner`, each meeting
//! the same fault at the same moment of its run, in one run:
//!
//! - **freeze**: the validator stopped (SIGSTOP) 5 s in, for 10 s — a hung leader;
//! - **blackout**: the TPU's UDP dropped both ways 4 s in, for 10 s — a link cut while the node
//!   runs on. A `solana-test-validator` advertises its own TPU port to every client, so this case
//!   runs on a one-node `txpace-localnet` whose advertised TPU is a relay that can drop
//!   everything (Agave's client takes its addresses from the node list, so a proxy handed to
//!   txpace alone would not cut Agave);
//! - **restart**: the validator killed 5 s in and started again on its ledger, its RPC and
//!   websocket gone until it is back.
//!
//! Landings come from the chain for both senders: the statuses of the signatures in txpace's
//! report, and the history of a payer only Agave's runs use. Sends are counted per transaction
//! per leader address for both (txpace's report, Agave's connection-cache packets).

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use anyhow::{Result, anyhow};
use serde::Serialize;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use txpace::validator::{LocalValidator, Localnet, LocalnetOptions, ValidatorOptions};

use crate::{
    agave_child,
    chain::{fund_payer, landed_slots, report_signatures, signatures_since},
    measure::{self, Usage},
    send::{Endpoint, generate, start_validator, tempfile_dir, txpace_run},
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fault {
    Freeze,
    Blackout,
    Restart,
}

impl Fault {
    /// When it strikes, from the sender's start, and for how long (a restart lasts as long as
    /// the validator takes to come back).
    fn timing(self) -> (Duration, Duration) {
        match self {
            Fault::Freeze | Fault::Restart => (Duration::from_secs(5), Duration::from_secs(10)),
            Fault::Blackout => (Duration::from_secs(4), Duration::from_secs(10)),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Fault::Freeze => "freeze",
            Fault::Blackout => "blackout",
            Fault::Restart => "restart",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
enum Sender {
    #[serde(rename = "txpace")]
    Txpace,
    #[serde(rename = "Agave TpuClient")]
    Agave,
}

#[derive(clap::Args)]
pub struct Args {
    /// Transactions per run
    #[arg(long, default_value_t = 1500)]
    count: usize,
    /// Rounds of each fault through each sender, alternating which goes first
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    rounds: u32,
    /// Only these faults (default: all three; the restart goes last)
    #[arg(long, value_delimiter = ',')]
    only: Vec<Fault>,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Run {
    fault: Fault,
    round: u32,
    sender: Sender,
    /// Landed without error, from the chain.
    landed: u64,
    total: u64,
    /// txpace's exit code, or Agave's client's error when it gave up.
    outcome: String,
    wall_s: f64,
    cpu_s: f64,
    sends: Option<u64>,
    sends_per_landed: Option<f64>,
}

/// Where the faults are injected.
enum Stage<'a> {
    Validator(&'a mut LocalValidator),
    Cluster(&'a mut Localnet),
}

impl Ctx<'_> {
    /// A new client for each lookup: one made before a restart holds pooled connections to the
    /// process that is gone, and its next request fails.
    fn rpc(&self) -> RpcClient {
        RpcClient::new_with_commitment(self.ep.rpc.clone(), CommitmentConfig::confirmed())
    }
}

impl Stage<'_> {
    /// Sleeps until the fault's moment, counted from `start`, injects it, and ends it.
    fn inject(&mut self, fault: Fault, start: Instant) -> Result<()> {
        let (at, lasting) = fault.timing();
        sleep_until(start + at);
        match (fault, self) {
            (Fault::Freeze, Stage::Validator(v)) => {
                v.pause().map_err(|e| anyhow!("{e}"))?;
                sleep_until(start + at + lasting);
                v.resume().map_err(|e| anyhow!("{e}"))?;
            }
            (Fault::Restart, Stage::Validator(v)) => {
                let down = Instant::now();
                v.restart().map_err(|e| anyhow!("{e}"))?;
                eprintln!("validator back after {:.1} s", down.elapsed().as_secs_f64());
            }
            (Fault::Blackout, Stage::Cluster(c)) => {
                c.blackhole(0).map_err(|e| anyhow!("{e}"))?;
                sleep_until(start + at + lasting);
                c.restore(0).map_err(|e| anyhow!("{e}"))?;
            }
            (f, _) => return Err(anyhow!("{} is not injected on this stage", f.label())),
        }
        Ok(())
    }
}

fn sleep_until(t: Instant) {
    std::thread::sleep(t.saturating_duration_since(Instant::now()));
}

pub fn run(args: Args) -> Result<()> {
    let wanted = |f: Fault| args.only.is_empty() || args.only.contains(&f);
    let dir = tempfile_dir()?;
    let mut runs = Vec::new();
    if wanted(Fault::Freeze) || wanted(Fault::Restart) {
        let mut v = start_validator(ValidatorOptions::default().ledger(dir.join("ledger")))?;
        let ep = Endpoint::of_validator(&v);
        let (payer, keypair) =
            fund_payer(&v.rpc_client(), v.mint_keypair(), &dir, "agave-payer.json")?;
        let ctx = Ctx {
            ep: &ep,
            dir: &dir,
            payer: (&payer.pubkey(), &keypair),
            count: args.count,
        };
        let mut stage = Stage::Validator(&mut v);
        for fault in [Fault::Freeze, Fault::Restart]
            .into_iter()
            .filter(|f| wanted(*f))
        {
            runs.extend(every_round(&ctx, fault, args.rounds, &mut stage)?);
        }
    }
    if wanted(Fault::Blackout) {
        eprintln!("starting a one-node txpace-localnet with a relay in front of its TPU…");
        let mut cluster = Localnet::start(LocalnetOptions {
            nodes: 1,
            tpu_relay: true,
            ..LocalnetOptions::default()
        })
        .map_err(|e| anyhow!("{e}"))?;
        let ep = Endpoint::of_cluster(&cluster);
        let (payer, keypair) = fund_payer(
            &cluster.rpc_client(),
            cluster.mint_keypair(),
            &dir,
            "agave-payer-1.json",
        )?;
        let ctx = Ctx {
            ep: &ep,
            dir: &dir,
            payer: (&payer.pubkey(), &keypair),
            count: args.count,
        };
        let mut stage = Stage::Cluster(&mut cluster);
        runs.extend(every_round(&ctx, Fault::Blackout, args.rounds, &mut stage)?);
    }
    print_table(&runs, args.count);
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&runs)?)?;
    }
    Ok(())
}

/// Every round of `fault` through both senders on `stage`.
fn every_round(ctx: &Ctx, fault: Fault, rounds: u32, stage: &mut Stage) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    for round in 1..=rounds {
        for sender in order(round) {
            runs.push(one(ctx, fault, round, sender, stage)?);
        }
    }
    Ok(runs)
}

/// Each round starts with the other sender, so neither always meets the validator first.
fn order(round: u32) -> [Sender; 2] {
    if round % 2 == 1 {
        [Sender::Txpace, Sender::Agave]
    } else {
        [Sender::Agave, Sender::Txpace]
    }
}

/// What every run of a stage shares.
struct Ctx<'a> {
    ep: &'a Endpoint,
    dir: &'a Path,
    /// Agave's own payer and its keypair file.
    payer: (&'a Pubkey, &'a Path),
    count: usize,
}

/// One sender through one fault.
fn one(ctx: &Ctx, fault: Fault, round: u32, sender: Sender, stage: &mut Stage) -> Result<Run> {
    eprintln!("{}, round {round}: {sender:?}…", fault.label());
    let during = |start: Instant| stage.inject(fault, start);
    let (usage, landed, outcome, sends): (Usage, u64, String, Option<u64>) = match sender {
        Sender::Txpace => {
            let name = format!("{}-{round}.b64", fault.label());
            let file = generate(ctx.ep, ctx.dir, &name, ctx.count, 1)?;
            let run = txpace_run(ctx.ep, &file, &[], during)?;
            let landed = landed_slots(&ctx.rpc(), &report_signatures(&run.report)?)?.len() as u64;
            let outcome = run
                .code
                .map_or("killed".to_string(), |c| format!("exit {c}"));
            let sends = run.report["summary"]["streams"]["sent"].as_u64();
            (run.usage, landed, outcome, sends)
        }
        Sender::Agave => {
            let from = ctx.rpc().get_slot()?;
            // Amounts no other run used: every run's transactions are new.
            let base = 10_000_000 * (fault as u64 + 1) + 1_000_000 * u64::from(round);
            let run = agave_child::send(ctx.ep, ctx.payer.1, ctx.count, base, during)?;
            let rpc = ctx.rpc();
            let signatures = signatures_since(&rpc, ctx.payer.0, from)?;
            let landed = landed_slots(&rpc, &signatures)?.len() as u64;
            let outcome = run.error.unwrap_or_else(|| "done".to_string());
            (run.usage, landed, outcome, run.sends)
        }
    };
    Ok(Run {
        fault,
        round,
        sender,
        landed,
        total: ctx.count as u64,
        outcome,
        wall_s: usage.wall_s,
        cpu_s: usage.cpu_s,
        sends,
        sends_per_landed: measure::per_landed(sends, landed),
    })
}

fn print_table(runs: &[Run], n: usize) {
    println!(
        "\nFaults: {n} self-transfers at 100 tx/s (bound N/rate = {:.1} s without the fault)",
        n as f64 / 100.0
    );
    println!(
        "{:<9} {:>5} {:<16} {:>11} {:>7} {:>6} {:>8}  outcome",
        "fault", "round", "sender", "landed", "wall s", "CPU s", "sends/tx"
    );
    for r in runs {
        println!(
            "{:<9} {:>5} {:<16} {:>11} {:>7.1} {:>6.2} {:>8}  {}",
            r.fault.label(),
            r.round,
            match r.sender {
                Sender::Txpace => "txpace",
                Sender::Agave => "Agave TpuClient",
            },
            format!("{}/{}", r.landed, r.total),
            r.wall_s,
            r.cpu_s,
            r.sends_per_landed
                .map_or("n/a".into(), |v| format!("{v:.3}")),
            r.outcome
        );
    }
    for t in runs.iter().filter(|r| r.sender == Sender::Txpace) {
        let Some(a) = runs
            .iter()
            .find(|a| a.sender == Sender::Agave && a.fault == t.fault && a.round == t.round)
        else {
            continue;
        };
        println!(
            "{}, round {}: txpace / Agave wall {:.3}{}{}",
            t.fault.label(),
            t.round,
            t.wall_s / a.wall_s.max(0.001),
            landing_note(t),
            landing_note(a)
        );
    }
}

/// What a run's landings say beside its time: nothing when exactly its batch landed. More than
/// its batch (Agave's runs count their payer's transactions on chain) is shown as found, with no
/// cause claimed: the benchmark does not look at what the extra ones are.
fn landing_note(r: &Run) -> String {
    let who = match r.sender {
        Sender::Txpace => "txpace",
        Sender::Agave => "Agave",
    };
    match r.landed.cmp(&r.total) {
        std::cmp::Ordering::Equal => String::new(),
        std::cmp::Ordering::Less => format!(
            " ({who}: {} of {} landed, so the times are not like for like)",
            r.landed, r.total
        ),
        std::cmp::Ordering::Greater => format!(
            " ({who}: {} of its payer's transactions found on chain for {} given)",
            r.landed, r.total
        ),
    }
}
