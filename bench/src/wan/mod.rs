//! The wide-area benchmark (issue 24 §4): txpace against Agave's best TPU clients on a 3-node
//! `txpace-localnet` whose relays give each node the link of a named profile (`eu`, `na`,
//! `apac`, `hostile`, and `mainnet`: the three nodes in eu, na and apac), each profile alone
//! and with competing senders beside (`load`), the `mainnet` profile with one node's TPU dark
//! for the middle 10 s of each run, and txpace at `--rate max` on `mainnet`.
//!
//! Contenders, each a measured child process on the same cluster, the order alternating between
//! rounds: txpace with its defaults (a clean, explicit configuration: `child`); Agave's legacy
//! `TpuClient` (`agave_child`); `solana-tpu-client-next` 4.0.0 driven as Agave's
//! send-transaction service drives it (`next_child`); and RPC `sendTransaction` on node 0, its
//! own send-transaction service retrying (`rpc_child`), shown beside them but not one of the
//! "Agave TPU contenders" txpace's goals are judged against.
//!
//! Every figure comes from the chain, the relays or the nodes, the same way for every
//! contender (`wire`): landed transactions, one per unique message, read on node 2, which no
//! contender talks to; slots from each transaction's due moment at its pace to its landed slot;
//! the relays' datagrams and link drops over the run; the nodes' own TPU server counters over
//! the run (summed over the nodes, the load's streams included); and the load's own counts.

use std::{
    path::PathBuf,
    sync::Mutex,
    time::{Duration, Instant},
};

use anyhow::{Result, anyhow};
use serde::Serialize;
use serde_json::Value;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use txpace::validator::{Localnet, LocalnetOptions};

mod agree;
mod dark;
mod goals;
mod report;
mod scenario;
mod sender;
mod wire;

use crate::{
    agave_child,
    chain::{block_messages, first_landings, fund_payer, landed_slot_each, report_signatures},
    load::{Load, LoadFigures, LoadSpec, UNSTAKED_BUDGET_TPS},
    markdown,
    measure::{Sends, Started, Usage},
    next_child, rpc_child,
    txpace_child::txpace_run,
    workload::{Endpoint, PACE_TPS, generate, tempfile_dir},
};
use scenario::Scenario;
pub(crate) use sender::Sender;
use sender::order;
use wire::{CounterDelta, RelayDelta, SlotClock, settled_counters, slots_to_land};

/// The nodes of the cluster: the `mainnet` profile puts one in each region.
const NODES: usize = 3;

/// How long before a contender the load starts, so it meets the load from its first send.
const HEAD_START: Duration = Duration::from_secs(2);
/// How long the load's senders may take to reach the relays (each starts a txpace process).
const LOAD_ON_THE_WIRE: Duration = Duration::from_secs(20);

#[derive(clap::Args)]
pub struct Args {
    /// Transactions per run
    #[arg(long, default_value_t = 2000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    count: usize,
    /// Rounds of each scenario through each contender, alternating which goes first
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    rounds: u32,
    /// Only these scenarios, by name: eu, eu+4, na, …, mainnet+4, mainnet-dark, mainnet-max
    /// (default: all)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Only these contenders, by name: txpace, legacy, next, rpc (default: all four). Goals
    /// that compare with an Agave TPU contender say "not judged" without one: for tracing
    /// txpace alone, a quarter of a scenario's time
    #[arg(long, value_delimiter = ',', value_parser = sender::parse)]
    senders: Vec<Sender>,
    /// Competing unstaked senders in the scenarios with competitors
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=16))]
    competitors: u64,
    /// Each competitor's pace, tx/s (an unstaked sender's budget per source address is 200)
    #[arg(long, default_value_t = UNSTAKED_BUDGET_TPS)]
    competitor_rate: u32,
    /// Also a staked flood beside the competitors at this pace, tx/s: a txpace sending with
    /// node 0's identity keypair as its QUIC identity (off by default)
    #[arg(long, value_name = "TX_PER_S")]
    staked_flood: Option<u32>,
    /// tpu-client-next's pace in the `--rate max` scenario, tx/s (it has no "max"; the
    /// legacy TpuClient keeps its own 100 tx/s)
    #[arg(long, default_value_t = 200.0)]
    next_max_rate: f64,
    /// Passed to each measured txpace run as `-v` (once) or `-vv` (twice): its log file, named
    /// on standard error after its run, then has each send, each stream's answer and each
    /// slot's leaders (trace level), to trace a tail or a stall. Logging costs CPU: the
    /// figures of such a matrix are for tracing, not for quoting
    #[arg(long, action = clap::ArgAction::Count)]
    txpace_verbose: u8,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the tables as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<PathBuf>,
}

/// One contender's run of one scenario.
#[derive(Debug, Serialize)]
pub(crate) struct Run {
    pub scenario: String,
    /// Leaders rotate across different links or competitors share the wire (the 0.8× goal).
    pub demanding: bool,
    /// The share of the best Agave p99 slots to land txpace's may be (`Scenario::p99_share`).
    pub p99_share: f64,
    pub alone_at_pace: bool,
    pub profile: &'static str,
    pub round: u32,
    pub sender: Sender,
    /// Its pace, as the row names it.
    pub pace: String,
    pub landed: u64,
    pub total: u64,
    /// N/rate at its pace: the last transaction is due then, so no sender finishes sooner;
    /// `None` at `--rate max`.
    pub pace_bound_s: Option<f64>,
    pub wall_s: f64,
    pub slots_p50: Option<u64>,
    pub slots_p99: Option<u64>,
    /// Seconds a slot took over the run, from the harness's samples of the node's slot.
    pub slot_s: Option<f64>,
    /// Streams per leader address, the one unit of every contender (`measure::Sends`).
    pub sends: Option<Sends>,
    /// txpace's own sends (its report's `sends`: a transaction handed to its leaders once).
    pub txpace_sends: Option<u64>,
    pub duplicates: u64,
    pub failure: Option<String>,
    pub counters: CounterDelta,
    pub relays: RelayDelta,
    pub load: Option<LoadFigures>,
    /// txpace's runs: each node's link as set, counted and measured (`agree`); empty for
    /// the others.
    pub links: Vec<agree::NodeLink>,
    /// In the dark scenario: the dark node's slots while cut, and the floor they put under
    /// slots to land (`dark`).
    pub dark: Option<dark::DarkFigures>,
}

/// What every run shares.
struct Ctx {
    ep: Endpoint,
    dir: PathBuf,
    /// Node 2's RPC: the chain is read where no contender sends.
    chain: RpcClient,
    legacy: (Pubkey, PathBuf),
    next: (Pubkey, PathBuf),
    rpc: (Pubkey, PathBuf),
    count: usize,
    load: LoadSpec,
    next_max_rate: f64,
    /// `-v`/`-vv` for the measured txpace runs (`--txpace-verbose`), or nothing.
    txpace_verbose: Option<&'static str>,
    /// Runs of Agave's clients so far: each gets lamport amounts no other run used.
    agave_runs: u64,
}

pub fn run(args: Args) -> Result<()> {
    let k = args.competitors as usize;
    let scenarios = scenario::select(k, &args.only).map_err(|e| anyhow!(e))?;
    let dir = tempfile_dir()?;
    eprintln!("starting {NODES} validators (txpace-localnet) behind linked relays…");
    let mut cluster = Localnet::start(LocalnetOptions {
        nodes: NODES,
        tpu_relay: true,
        link_profile: Some(scenarios[0].profile.to_string()),
        slots_per_epoch: Some(crate::workload::SLOTS_PER_EPOCH),
        ..LocalnetOptions::default()
    })
    .map_err(|e| anyhow!("{e}"))?;
    let ep = Endpoint::of_cluster(&cluster);
    let mint = cluster.mint_keypair();
    let (legacy, legacy_file) = fund_payer(&cluster.rpc_client(), mint, &dir, "legacy.json")?;
    let (next, next_file) = fund_payer(&cluster.rpc_client(), mint, &dir, "next.json")?;
    let (rpc, rpc_file) = fund_payer(&cluster.rpc_client(), mint, &dir, "rpc.json")?;
    let mut ctx = Ctx {
        chain: RpcClient::new_with_commitment(
            cluster.nodes()[2].rpc.clone(),
            CommitmentConfig::confirmed(),
        ),
        ep,
        dir,
        legacy: (legacy.pubkey(), legacy_file),
        next: (next.pubkey(), next_file),
        rpc: (rpc.pubkey(), rpc_file),
        count: args.count,
        load: LoadSpec {
            unstaked: k,
            rate: args.competitor_rate,
            staked: args
                .staked_flood
                .map(|rate| (cluster.nodes()[0].identity_keypair.clone(), rate)),
        },
        next_max_rate: args.next_max_rate,
        txpace_verbose: match args.txpace_verbose {
            0 => None,
            1 => Some("-v"),
            _ => Some("-vv"),
        },
        agave_runs: 0,
    };
    let (mut counters, _) = settled_counters(&mut cluster, Instant::now())?;
    let mut runs = Vec::new();
    for s in &scenarios {
        cluster.set_profile(s.profile).map_err(|e| anyhow!("{e}"))?;
        for round in 1..=args.rounds {
            for sender in order(round) {
                if !args.senders.is_empty() && !args.senders.contains(&sender) {
                    continue;
                }
                let run = one(&mut ctx, &mut cluster, s, round, sender, &mut counters)?;
                runs.push(run);
            }
        }
    }
    let load_label = ctx.load.label();
    markdown::emit(
        &report::sections(&runs, args.count, &load_label),
        args.markdown.as_deref(),
    )?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&runs)?)?;
    }
    Ok(())
}

/// What a contender's child did, before the chain is read.
struct Sent {
    /// txpace's report, for its link figures.
    report: Option<Value>,
    usage: Usage,
    failure: Option<String>,
    sends: Option<Sends>,
    txpace_sends: Option<u64>,
    /// Each transaction's landed slot in the order it was due, `None` where it did not land.
    landed: Vec<Option<u64>>,
    duplicates: u64,
}

/// One contender through one scenario, with the load beside it where the scenario has one and
/// the dark node cut for the middle of its run where it has one.
fn one(
    ctx: &mut Ctx,
    cluster: &mut Localnet,
    s: &Scenario,
    round: u32,
    sender: Sender,
    counters: &mut Value,
) -> Result<Run> {
    let name = s.name();
    eprintln!("{name}, round {round}: {}…", sender.label());
    let err = |e| anyhow!("{e}");
    // The contender's pace: `None` at max.
    let rate = match (sender, s.max) {
        (Sender::Txpace, true) => None,
        (Sender::Next, true) => Some(ctx.next_max_rate),
        _ => Some(PACE_TPS),
    };
    let pace = match (sender, rate) {
        (_, None) => "max".to_string(),
        (Sender::Legacy, _) => "100 tx/s (its own)".to_string(),
        (_, Some(r)) => format!("{r} tx/s"),
    };
    let tag = format!("{name}-{round}-{}", sender.label().replace(' ', "_"));
    let file = match sender {
        Sender::Txpace => Some(generate(
            &ctx.ep,
            &ctx.dir,
            &format!("{tag}.b64"),
            ctx.count,
            1,
        )?),
        _ => None,
    };
    let relays_before = cluster.relay_stats().map_err(err)?;
    let expected_s = ctx.count as f64 / rate.unwrap_or(2.0 * PACE_TPS);
    let load = if s.competitors > 0 {
        let load = Load::start(&ctx.ep, &ctx.dir, &tag, &ctx.load, expected_s * 1.5 + 20.0)?;
        std::thread::sleep(HEAD_START);
        load_on_the_wire(cluster, &relays_before, ctx.load.senders())?;
        Some(load)
    } else {
        None
    };
    let clock = SlotClock::start(ctx.ep.rpc.clone());
    let started = Mutex::new(None);
    let cut = Mutex::new(None);
    let dark = s.dark;
    let identities: Vec<_> = cluster.nodes().iter().map(|n| n.identity).collect();
    let chain = &ctx.chain;
    let during = |start: Started| -> Result<()> {
        *started.lock().unwrap_or_else(|e| e.into_inner()) = Some(start.spawned);
        if dark {
            // Timed from the contender's first send (see `first_send`), as in `faults`.
            let Some(start) = start.first_send() else {
                eprintln!("{sender:?} ended without a first send: the node was not darkened");
                return Ok(());
            };
            let (from, to) = Scenario::dark_window(Duration::from_secs_f64(expected_s));
            sleep_until(start + from);
            let node = dark::node_to_cut(chain, &identities, clock.slot_seconds_so_far());
            cluster.blackhole(node).map_err(err)?;
            let cut_at = Instant::now();
            sleep_until(start + to);
            cluster.restore(node).map_err(err)?;
            // Restored after the call returns: the window is from the cut to here.
            *cut.lock().unwrap_or_else(|e| e.into_inner()) = Some((node, (cut_at, Instant::now())));
        }
        Ok(())
    };
    let sent = match (sender, &file) {
        (Sender::Txpace, Some(file)) => {
            let mut extra = Vec::new();
            if s.max {
                extra.extend(["--rate", "max"]);
            }
            if dark {
                // Its first send, for the dark window's moment (see `first_send`).
                extra.extend(["--events", "-"]);
            }
            extra.extend(ctx.txpace_verbose);
            let run = txpace_run(&ctx.ep, file, &extra, during)?;
            catch_up(ctx)?;
            let summary = &run.report["summary"];
            Sent {
                report: Some(run.report.clone()),
                usage: run.usage,
                failure: run.failure.clone(),
                sends: Sends::txpace(summary),
                txpace_sends: summary["sends"].as_u64(),
                landed: landed_slot_each(&ctx.chain, &report_signatures(&run.report)?)?,
                duplicates: 0,
            }
        }
        _ => {
            let from = ctx.chain.get_slot()?;
            ctx.agave_runs += 1;
            let base = 1_000_000 * ctx.agave_runs;
            let r = rate.unwrap_or(PACE_TPS);
            let (payer, run) = match sender {
                Sender::Next => {
                    let run = next_child::send(&ctx.ep, &ctx.next.1, ctx.count, base, r, during)?;
                    (&ctx.next.0, run)
                }
                Sender::Rpc => {
                    let run = rpc_child::send(&ctx.ep, &ctx.rpc.1, ctx.count, base, r, during)?;
                    (&ctx.rpc.0, run)
                }
                _ => {
                    let run = agave_child::send(&ctx.ep, &ctx.legacy.1, ctx.count, base, during)?;
                    (&ctx.legacy.0, run)
                }
            };
            catch_up(ctx)?;
            let messages = agave_child::messages(payer, ctx.count, base);
            let keys: Vec<_> = messages
                .iter()
                .map(|m| crate::chain::message_key(&m.account_keys, &m.instructions))
                .collect();
            let expected = keys.iter().cloned().collect();
            let (first, duplicates) = first_landings(&expected, block_messages(&ctx.chain, from)?);
            Sent {
                report: None,
                usage: run.usage,
                failure: run.failure,
                sends: run.sends,
                txpace_sends: None,
                landed: keys.iter().map(|k| first.get(k).copied()).collect(),
                duplicates,
            }
        }
    };
    // The contender has exited (and its landings were read): its streams are all sent.
    let contender_done = Instant::now();
    let samples = clock.stop();
    let start = started
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or_else(|| anyhow!("the run never started"))?;
    let relays_after = cluster.relay_stats().map_err(err)?;
    let links = sent.report.as_ref().map_or_else(Vec::new, |report| {
        agree::node_links(&identities, &relays_before, &relays_after, report)
    });
    let load = load.map(|l| l.stop(&ctx.chain)).transpose()?;
    // The run's last stream: the contender's, or the load's once it is stopped.
    let quiet_since = if load.is_some() {
        Instant::now()
    } else {
        contender_done
    };
    let (after, settled) = settled_counters(cluster, quiet_since)?;
    let delta = CounterDelta::between(counters, &after, settled);
    *counters = after;
    // One schedule for every contender of a scenario: its pace, or in the `--rate max`
    // scenario the fastest pace a contender is asked for (tpu-client-next's), so a slower
    // sender falls behind it as its users would wait. Each on its own schedule (txpace at max
    // from its start), the figures measured different things: txpace's p99 the run's length,
    // tpu-client-next's its latency at 200 tx/s (23 slots against 4 in one run).
    let schedule = if s.max { Some(ctx.next_max_rate) } else { rate };
    let to_land = slots_to_land(&sent.landed, start, schedule, &samples);
    let cut = cut.into_inner().unwrap_or_else(|e| e.into_inner());
    let dark = match (cut, samples.first(), samples.last()) {
        (Some((node, window)), Some((_, first)), Some((_, last))) => {
            let leaders = ctx.chain.get_slot_leaders(*first, last - first + 1)?;
            let dark = dark::dark_slots(*first, &leaders, &identities[node], &samples, window);
            let dues = wire::dues(sent.landed.len(), start, schedule);
            Some(dark::figures(node, &dues, &sent.landed, &samples, &dark))
        }
        _ => None,
    };
    Ok(Run {
        scenario: name,
        demanding: s.demanding(),
        p99_share: s.p99_share(),
        alone_at_pace: s.alone_at_pace(),
        profile: s.profile,
        round,
        sender,
        pace,
        landed: sent.landed.iter().flatten().count() as u64,
        total: ctx.count as u64,
        pace_bound_s: rate.map(|r| ctx.count as f64 / r),
        wall_s: sent.usage.wall_s,
        slots_p50: wire::percentile(&to_land, 50.0),
        slots_p99: wire::percentile(&to_land, 99.0),
        slot_s: wire::slot_seconds(&samples),
        sends: sent.sends,
        txpace_sends: sent.txpace_sends,
        duplicates: sent.duplicates,
        failure: sent.failure,
        counters: delta,
        relays: RelayDelta::between(&relays_before, &relays_after),
        load,
        links,
        dark,
    })
}

/// Waits until the relays see `senders` source addresses they did not see `before` (each of
/// the load's senders has its own), so the contender meets the whole load from its first send;
/// at most [`LOAD_ON_THE_WIRE`], then says how many it saw.
fn load_on_the_wire(cluster: &mut Localnet, before: &Value, senders: usize) -> Result<()> {
    let old = wire::sources(before);
    let deadline = Instant::now() + LOAD_ON_THE_WIRE;
    loop {
        let stats = cluster.relay_stats().map_err(|e| anyhow!("{e}"))?;
        let new = wire::sources(&stats).difference(&old).count();
        if new >= senders {
            return Ok(());
        }
        if Instant::now() >= deadline {
            eprintln!("the relays see {new} of the load's {senders} senders; the run goes on");
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Waits for the node the chain is read on to confirm what node 0 has (`chain::catch_up`).
fn catch_up(ctx: &Ctx) -> Result<()> {
    crate::chain::catch_up(&ctx.chain, &ctx.ep.rpc)
}

fn sleep_until(t: Instant) {
    std::thread::sleep(t.saturating_duration_since(Instant::now()));
}
