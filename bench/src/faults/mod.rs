//! The fault benchmark: the founding workload's shape (1,500 self-transfers at 100 tx/s) through
//! txpace and through Agave's two clients at the same pace — the legacy
//! `TpuClient::send_and_confirm_messages_with_spinner` and `solana-tpu-client-next` driven as
//! Agave's send-transaction service drives it — and RPC `sendTransaction` (`rpc_child`, the
//! node's own service sending), each meeting the same fault at the same moment after its first
//! send, in one run:
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
//! Each fault's moment is counted from the sender's first send, read from its output (see
//! `first_send`; txpace runs with `--events -` for it, writing a few lines per transaction,
//! which its CPU figure includes): a sender that takes longer to start is not met earlier in
//! its sending.
//!
//! Landings come from the chain for every sender, one per unique message: the statuses of the
//! signatures in txpace's report (it never re-signs), and each Agave client's messages (paid by
//! a payer only its runs use) found in the run's blocks, a re-signed copy that landed too
//! counted once. Sends are counted per transaction per leader address for all, where each
//! sender makes them (txpace's report; the legacy client's sends through its connection cache,
//! `agave_sends`; tpu-client-next's batches handed to its workers, `next_sends`; RPC's calls are
//! not sends to leaders and are shown as not counted). Each ratio is txpace over the best Agave
//! contender of its fault and round (`versus`, RPC included), named in the line.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use crate::measure::Started;

use anyhow::{Result, anyhow};
use serde::Serialize;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use txpace::validator::{LocalValidator, Localnet, LocalnetOptions, ValidatorOptions};

mod report;

use crate::{
    agave_child,
    bound::FreezeBound,
    chain::{fund_payer, landed_messages, landed_slots, report_signatures},
    markdown,
    measure::{self, Sends},
    next_child, rpc_child,
    txpace_child::txpace_run,
    workload::{Endpoint, PACE_TPS, generate, start_validator, tempfile_dir},
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
    #[serde(rename = "Agave tpu-client-next")]
    AgaveNext,
    #[serde(rename = "Agave RPC sendTransaction")]
    AgaveRpc,
}

impl Sender {
    fn label(self) -> &'static str {
        match self {
            Sender::Txpace => "txpace",
            Sender::Agave => "Agave TpuClient",
            Sender::AgaveNext => next_child::NAME,
            Sender::AgaveRpc => rpc_child::NAME,
        }
    }
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
    /// Also write the tables as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Run {
    fault: Fault,
    round: u32,
    sender: Sender,
    /// Landed without error, from the chain.
    landed: u64,
    total: u64,
    /// How its process ended: txpace's exit code; "done" or "failed" for Agave's clients.
    outcome: String,
    /// Why its process failed, when it did: its exit and the tail of its standard error.
    failure: Option<String>,
    /// Landings beyond the first of a message (Agave's re-signed copies).
    duplicates: u64,
    /// txpace's bound through a freeze (see `bound`).
    bound: Option<FreezeBound>,
    /// From its spawn to its first send, which the fault's moment is counted from (`None`:
    /// it never said it sent, and met no fault).
    first_send_s: Option<f64>,
    wall_s: f64,
    cpu_s: f64,
    sends: Option<Sends>,
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
    /// Sleeps until the fault's moment, counted from `start`, injects it, and ends it. For a
    /// freeze, returns the validator's last processed slot before it froze.
    fn inject(&mut self, fault: Fault, start: Instant) -> Result<Option<u64>> {
        let (at, lasting) = fault.timing();
        sleep_until(start + at);
        let mut frozen_slot = None;
        match (fault, self) {
            (Fault::Freeze, Stage::Validator(v)) => {
                let slot = v
                    .rpc_client()
                    .get_slot_with_commitment(CommitmentConfig::processed())?;
                v.pause().map_err(|e| anyhow!("{e}"))?;
                frozen_slot = Some(slot);
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
        Ok(frozen_slot)
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
        let (next, next_keypair) =
            fund_payer(&v.rpc_client(), v.mint_keypair(), &dir, "next-payer.json")?;
        let (via_rpc, rpc_keypair) =
            fund_payer(&v.rpc_client(), v.mint_keypair(), &dir, "rpc-payer.json")?;
        let ctx = Ctx {
            ep: &ep,
            dir: &dir,
            payer: (&payer.pubkey(), &keypair),
            next_payer: (&next.pubkey(), &next_keypair),
            rpc_payer: (&via_rpc.pubkey(), &rpc_keypair),
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
            slots_per_epoch: Some(crate::workload::SLOTS_PER_EPOCH),
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
        let (next, next_keypair) = fund_payer(
            &cluster.rpc_client(),
            cluster.mint_keypair(),
            &dir,
            "next-payer-1.json",
        )?;
        let (via_rpc, rpc_keypair) = fund_payer(
            &cluster.rpc_client(),
            cluster.mint_keypair(),
            &dir,
            "rpc-payer-1.json",
        )?;
        let ctx = Ctx {
            ep: &ep,
            dir: &dir,
            payer: (&payer.pubkey(), &keypair),
            next_payer: (&next.pubkey(), &next_keypair),
            rpc_payer: (&via_rpc.pubkey(), &rpc_keypair),
            count: args.count,
        };
        let mut stage = Stage::Cluster(&mut cluster);
        runs.extend(every_round(&ctx, Fault::Blackout, args.rounds, &mut stage)?);
    }
    markdown::emit(
        &report::sections(&runs, args.count),
        args.markdown.as_deref(),
    )?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&runs)?)?;
    }
    Ok(())
}

/// Every round of `fault` through every sender on `stage`.
fn every_round(ctx: &Ctx, fault: Fault, rounds: u32, stage: &mut Stage) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    for round in 1..=rounds {
        for sender in order(round) {
            runs.push(one(ctx, fault, round, sender, stage)?);
        }
    }
    Ok(runs)
}

/// Every other round runs the senders in reverse, so none always meets the validator first.
fn order(round: u32) -> [Sender; 4] {
    let mut senders = [
        Sender::Txpace,
        Sender::Agave,
        Sender::AgaveNext,
        Sender::AgaveRpc,
    ];
    if round.is_multiple_of(2) {
        senders.reverse();
    }
    senders
}

/// What every run of a stage shares.
struct Ctx<'a> {
    ep: &'a Endpoint,
    dir: &'a Path,
    /// The legacy client's own payer and its keypair file.
    payer: (&'a Pubkey, &'a Path),
    /// tpu-client-next's own payer and its keypair file.
    next_payer: (&'a Pubkey, &'a Path),
    /// RPC `sendTransaction`'s own payer and its keypair file.
    rpc_payer: (&'a Pubkey, &'a Path),
    count: usize,
}

/// One sender through one fault.
fn one(ctx: &Ctx, fault: Fault, round: u32, sender: Sender, stage: &mut Stage) -> Result<Run> {
    eprintln!("{}, round {round}: {sender:?}…", fault.label());
    // The slot the freeze stopped at, and how long after its spawn the sender first sent.
    let moments = std::sync::Mutex::new((None, None));
    let during = |start: Started| {
        let Some(first) = start.first_send() else {
            eprintln!("{sender:?} ended without a first send: no fault injected");
            return Ok(());
        };
        let slot = stage.inject(fault, first)?;
        *moments.lock().unwrap_or_else(|e| e.into_inner()) =
            (slot, Some(first.duration_since(start.spawned)));
        Ok(())
    };
    let mut bound = None;
    let (usage, landed, outcome, sends) = match sender {
        Sender::Txpace => {
            let name = format!("{}-{round}.b64", fault.label());
            let file = generate(ctx.ep, ctx.dir, &name, ctx.count, 1)?;
            let run = txpace_run(ctx.ep, &file, &["--events", "-"], during)?;
            let slots = landed_slots(&ctx.rpc(), &report_signatures(&run.report)?)?;
            let (frozen, first) = *moments.lock().unwrap_or_else(|e| e.into_inner());
            let confirmation = run.report["summary"]["latency_ms"]["p50"].as_f64();
            if let (Some(frozen), Some(first), Some(ms)) = (frozen, first, confirmation) {
                let (at, lasting) = fault.timing();
                bound = Some(FreezeBound {
                    // From the spawn, as the wall time is.
                    thaw_s: (first + at + lasting).as_secs_f64(),
                    owed: FreezeBound::owed(ctx.count as u64, &slots, frozen),
                    confirmation_s: ms / 1000.0,
                });
            }
            let outcome = run
                .code
                .map_or("killed".to_string(), |c| format!("exit {c}"));
            let sends = Sends::txpace(&run.report["summary"]);
            let landed = slots.len() as u64;
            (run.usage, landed, (outcome, run.failure, 0), sends)
        }
        Sender::Agave | Sender::AgaveNext | Sender::AgaveRpc => {
            let from = ctx.rpc().get_slot()?;
            // Amounts no other run used: every run's transactions are new.
            let base = 10_000_000 * (fault as u64 + 1) + 1_000_000 * u64::from(round);
            let (run, payer) = match sender {
                Sender::AgaveNext => {
                    let keypair = ctx.next_payer.1;
                    let run = next_child::send(ctx.ep, keypair, ctx.count, base, PACE_TPS, during)?;
                    (run, ctx.next_payer.0)
                }
                Sender::AgaveRpc => {
                    let keypair = ctx.rpc_payer.1;
                    let run = rpc_child::send(ctx.ep, keypair, ctx.count, base, PACE_TPS, during)?;
                    (run, ctx.rpc_payer.0)
                }
                _ => {
                    let run = agave_child::send(ctx.ep, ctx.payer.1, ctx.count, base, during)?;
                    (run, ctx.payer.0)
                }
            };
            let expected = agave_child::expected(payer, ctx.count, base);
            let landings = landed_messages(&ctx.rpc(), from, &expected)?;
            let outcome = if run.failure.is_some() {
                "failed"
            } else {
                "done"
            };
            let landed = landings.slots.len() as u64;
            let how = (outcome.to_string(), run.failure, landings.duplicates);
            (run.usage, landed, how, run.sends)
        }
    };
    let (outcome, failure, duplicates) = outcome;
    let first_send_s = moments
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .1
        .map(|d| d.as_secs_f64());
    Ok(Run {
        fault,
        round,
        sender,
        landed,
        total: ctx.count as u64,
        outcome,
        failure,
        duplicates,
        bound,
        first_send_s,
        wall_s: usage.wall_s,
        cpu_s: usage.cpu_s,
        sends,
        sends_per_landed: measure::per_landed(sends, landed),
    })
}
