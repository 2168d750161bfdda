//! The send benchmark: the founding workload (5,000 unique self-transfers at 1,000,000
//! µlamports/CU) through txpace at 100 tx/s and through Agave's
//! `TpuClient::send_and_confirm_messages_with_spinner` on the same validator in one run; then
//! txpace's pace on the wire at 100 and 1,000 tx/s and its highest landed rate with `--rate max`,
//! unstaked and with the validator's (staked) identity.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use solana_client::{
    connection_cache::ConnectionCache,
    rpc_client::RpcClient,
    tpu_client::{TpuClient, TpuClientConfig},
};
use solana_commitment_config::CommitmentConfig;
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_keypair::{Keypair, read_keypair_file};
use solana_message::Message;
use solana_signer::Signer;
use txpace::validator::{LocalValidator, Localnet, ValidatorOptions};

use crate::{
    agave_metrics::MetricsSink,
    measure::{self, Usage, txpace_bin},
    terminal,
};

const CU_PRICE: u64 = 1_000_000;
const CU_LIMIT: u32 = 1_000;

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
}

/// Hidden child mode: Agave's TpuClient sends the workload, so it is measured as a process
/// exactly like txpace.
#[derive(clap::Args)]
pub struct AgaveArgs {
    #[arg(long)]
    url: String,
    #[arg(long)]
    ws: String,
    #[arg(long)]
    keypair: PathBuf,
    #[arg(long)]
    count: usize,
    /// Offsets the lamport amounts so these transactions differ from txpace's.
    #[arg(long, default_value_t = 1_000_000)]
    amount_base: u64,
    /// Count the sends of the client's QUIC connection cache (see `agave_metrics`) and print
    /// `sent_packets N` and `metrics_wait_s S` (the wait the count takes, to be left out of the
    /// measured time).
    #[arg(long)]
    count_sends: bool,
}

/// The connection cache name whose points `--count-sends` sums.
const AGAVE_SEND_CACHE: &str = "txpace-bench-agave-send";

/// Who sent a round of the founding workload.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Sender {
    /// `txpace send --no-tui`.
    Headless,
    /// `txpace send` drawing its dashboard in a terminal.
    Dashboard,
    Agave,
}

#[derive(Debug, Serialize)]
struct Contender {
    /// Which round of the founding workload, from 1.
    round: u32,
    sender: Sender,
    name: String,
    landed: u64,
    total: u64,
    usage: Usage,
    /// Wall time over the N/rate bound.
    vs_bound: f64,
    sends_per_landed: Option<f64>,
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
    landed: u64,
    total: u64,
    wall_s: f64,
    landed_per_s: f64,
    sends_per_landed: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Figures {
    founding: Vec<Contender>,
    pacing: Vec<RateFigure>,
    max_rate: Vec<MaxFigure>,
}

/// Starts the benchmark's `solana-test-validator` with `options`, saying so first (it takes a
/// while).
pub(crate) fn start_validator(options: ValidatorOptions) -> Result<LocalValidator> {
    eprintln!("starting solana-test-validator…");
    options.start().map_err(|e| anyhow::anyhow!("{e}"))
}

/// Where a benchmark sends: an RPC node, its websocket, and a funded keypair to sign with.
pub(crate) struct Endpoint {
    pub rpc: String,
    pub ws: String,
    pub mint: PathBuf,
}

impl Endpoint {
    pub fn of_validator(v: &LocalValidator) -> Self {
        Endpoint {
            rpc: v.rpc_url(),
            ws: v.ws_url(),
            mint: v.mint_keypair_path().to_path_buf(),
        }
    }

    pub fn of_cluster(c: &Localnet) -> Self {
        Endpoint {
            rpc: c.rpc_url(),
            ws: c.ws_url(),
            mint: c.mint_keypair_path().to_path_buf(),
        }
    }
}

pub(crate) fn generate(
    v: &Endpoint,
    dir: &Path,
    name: &str,
    n: usize,
    payers: u32,
) -> Result<PathBuf> {
    let out = dir.join(name);
    let mut cmd = Command::new(txpace_bin()?);
    cmd.args(["gen", "-n", &n.to_string(), "--url", &v.rpc, "--keypair"])
        .arg(&v.mint)
        .arg("--out")
        .arg(&out);
    if payers > 1 {
        cmd.args(["--payers", &payers.to_string()]);
    }
    let done = measure::run(&mut cmd)?;
    if !done.status.success() {
        bail!("txpace gen failed: {}", done.stderr);
    }
    Ok(out)
}

/// Runs `txpace send --no-tui` and returns its measured usage and report.
pub(crate) fn txpace_send(v: &Endpoint, file: &Path, extra: &[&str]) -> Result<(Usage, Value)> {
    let run = txpace_run(v, file, extra, |_| Ok(()))?;
    Ok((run.usage, run.report))
}

/// One measured `txpace send --no-tui`.
pub(crate) struct TxpaceRun {
    pub usage: Usage,
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub report: Value,
}

/// Runs `txpace send --no-tui` with `during` beside it (see [`measure::run_during`]).
pub(crate) fn txpace_run<F>(
    v: &Endpoint,
    file: &Path,
    extra: &[&str],
    during: F,
) -> Result<TxpaceRun>
where
    F: FnOnce(std::time::Instant) -> Result<()> + Send,
{
    let (mut cmd, report) = send_command(v, file, "--no-tui", extra)?;
    let done = measure::run_during(&mut cmd, during)?;
    eprintln!("{}", done.stdout.trim_end());
    Ok(TxpaceRun {
        usage: done.usage,
        code: done.status.code(),
        report: read_report(&report, &done)?,
    })
}

/// `txpace send FILE` to `v` in `mode` (`--no-tui`, or `--exit-when-done` for the dashboard)
/// with `extra`, and where its report goes.
fn send_command(
    v: &Endpoint,
    file: &Path,
    mode: &str,
    extra: &[&str],
) -> Result<(Command, PathBuf)> {
    let report = file.with_extension("report.json");
    let mut cmd = Command::new(txpace_bin()?);
    cmd.args(["send", mode, "--url", &v.rpc, "--ws", &v.ws])
        .arg(file)
        .arg("--report")
        .arg(&report)
        .args(extra);
    Ok((cmd, report))
}

/// The report a finished `txpace send` wrote, or why there is none (its exit and messages).
fn read_report(path: &Path, done: &measure::Finished) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "no report from txpace send (exit {:?}): {}",
            done.status.code(),
            done.stderr
        )
    })?;
    Ok(serde_json::from_str(&text)?)
}

/// Runs `txpace send` with its dashboard in a terminal (see [`terminal`]) until the run is
/// done; returns its measured usage, report, and the bytes it drew.
fn txpace_dashboard(v: &Endpoint, file: &Path, extra: &[&str]) -> Result<(Usage, Value, u64)> {
    let (mut cmd, report) = send_command(v, file, "--exit-when-done", extra)?;
    cmd.env("TERM", "xterm-256color");
    let drawn = terminal::run_in_terminal(&mut cmd)?;
    let report = read_report(&report, &drawn.finished)?;
    Ok((drawn.finished.usage, report, drawn.bytes))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
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
    let n = args.count;
    let mut founding = Vec::new();
    // Each sender several times, the order alternating, so that neither always meets the
    // validator fresher (or more loaded) than the other; the dashboard run sits between.
    for round in 1..=args.rounds {
        let txpace_first = round % 2 == 1;
        if txpace_first || args.no_agave {
            founding.push(founding_txpace(&ep, &dir, n, round, Sender::Headless)?);
        }
        founding.push(founding_txpace(&ep, &dir, n, round, Sender::Dashboard)?);
        if !args.no_agave {
            founding.push(founding_agave(&ep, n, round)?);
            if !txpace_first {
                founding.push(founding_txpace(&ep, &dir, n, round, Sender::Headless)?);
            }
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
        let (_, report) = txpace_send(&ep, &file, &args)?;
        let (achieved, burst) = wire_pace(&report, target);
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
        let (usage, report) = txpace_send(&ep, &file, &extra)?;
        let s = &report["summary"];
        let landed = u(&s["confirmed"]);
        let elapsed = s["elapsed_s"].as_f64().unwrap_or(usage.wall_s);
        max_rate.push(MaxFigure {
            identity: label,
            landed,
            total: u(&s["total"]),
            wall_s: usage.wall_s,
            landed_per_s: landed as f64 / elapsed.max(0.001),
            sends_per_landed: s["sends_per_landed"].as_f64(),
        });
    }

    let figures = Figures {
        founding,
        pacing,
        max_rate,
    };
    print_table(&figures, n);
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}

/// One round of the founding workload through txpace at 100 tx/s, headless or drawing its
/// dashboard.
fn founding_txpace(
    v: &Endpoint,
    dir: &Path,
    n: usize,
    round: u32,
    sender: Sender,
) -> Result<Contender> {
    let (usage, report, name) = if sender == Sender::Dashboard {
        let file = generate(v, dir, &format!("founding-{round}-dashboard.b64"), n, 1)?;
        let (usage, report, bytes) = txpace_dashboard(v, &file, &["--rate", "100"])?;
        let name = format!(
            "txpace --rate 100, dashboard {}x{} ({} KB drawn)",
            terminal::COLS,
            terminal::ROWS,
            bytes / 1000
        );
        (usage, report, name)
    } else {
        let file = generate(v, dir, &format!("founding-{round}.b64"), n, 1)?;
        let (usage, report) = txpace_send(v, &file, &["--rate", "100"])?;
        (usage, report, "txpace --rate 100".to_string())
    };
    let s = &report["summary"];
    Ok(Contender {
        round,
        sender,
        name,
        landed: u(&s["confirmed"]),
        total: u(&s["total"]),
        vs_bound: usage.wall_s / (n as f64 / 100.0),
        sends_per_landed: s["sends_per_landed"].as_f64(),
        usage,
    })
}

/// One round of the same workload shape through Agave's TpuClient, as a measured child.
fn founding_agave(v: &Endpoint, n: usize, round: u32) -> Result<Contender> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(["agave-send", "--url", &v.rpc, "--ws", &v.ws])
        .arg("--keypair")
        .arg(&v.mint)
        .args(["--count", &n.to_string()])
        // Amounts no other round used: every round's transactions are new.
        .args(["--amount-base", &(1_000_000 * u64::from(round)).to_string()]);
    let done = measure::run(&mut cmd)?;
    let landed: u64 = done
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("landed "))
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    if !done.status.success() {
        eprintln!("agave-send failed: {}", done.stderr);
    }
    Ok(Contender {
        round,
        sender: Sender::Agave,
        name: "Agave TpuClient send_and_confirm_messages_with_spinner".into(),
        landed,
        total: n as u64,
        vs_bound: done.usage.wall_s / (n as f64 / 100.0),
        sends_per_landed: None,
        usage: done.usage,
    })
}

pub(crate) fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("txpace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// txpace / Agave per round (headless, and with the dashboard), the spread over the rounds, and
/// whether each goal held: wall time in every round (the goal says every time); CPU over the
/// run's rounds together (the goal says every run of the benchmark), since on a machine the
/// validator shares either sender's CPU varies from one round to the next by more than the
/// two differ — the worst round is printed beside it.
fn print_ratios(founding: &[Contender]) {
    let rounds: std::collections::BTreeSet<u32> = founding.iter().map(|c| c.round).collect();
    let of = |round: u32, sender: Sender| {
        founding
            .iter()
            .find(|c| c.round == round && c.sender == sender)
    };
    let ratio = |a: f64, b: f64| a / b.max(0.001);
    // (wall, CPU, memory) of headless txpace, and CPU with the dashboard, over Agave's.
    let mut headless: Vec<[f64; 3]> = Vec::new();
    let mut dashboard: Vec<f64> = Vec::new();
    for round in rounds {
        let Some(a) = of(round, Sender::Agave) else {
            continue;
        };
        let mut line = format!("round {round}: txpace / Agave");
        if let Some(t) = of(round, Sender::Headless) {
            let r = [
                ratio(t.usage.wall_s, a.usage.wall_s),
                ratio(t.usage.cpu_s, a.usage.cpu_s),
                ratio(t.usage.peak_rss_mb, a.usage.peak_rss_mb),
            ];
            line += &format!(" wall {:.3}, CPU {:.2}, memory {:.2}", r[0], r[1], r[2]);
            headless.push(r);
        }
        if let Some(d) = of(round, Sender::Dashboard) {
            let r = ratio(d.usage.cpu_s, a.usage.cpu_s);
            line += &format!("; with the dashboard CPU {r:.2}");
            dashboard.push(r);
        }
        println!("{line}");
    }
    let spread = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let column = |i: usize| headless.iter().map(|r| r[i]).collect::<Vec<_>>();
    let (wall, cpu, mem) = (spread(&column(0)), spread(&column(1)), spread(&column(2)));
    if !headless.is_empty() {
        println!(
            "over {} rounds: wall {:.3}–{:.3}, CPU {:.2}–{:.2}, memory {:.2}–{:.2}",
            headless.len(),
            wall.0,
            wall.1,
            cpu.0,
            cpu.1,
            mem.0,
            mem.1
        );
    }
    if !headless.is_empty() {
        println!(
            "goal wall ≤ 1.0 × Agave in every round: {} (worst {:.3})",
            measure::verdict(wall.1 <= 1.0),
            wall.1
        );
    }
    // CPU of every round together, where the sender and Agave both ran.
    let total = |sender: Sender| -> f64 {
        founding
            .iter()
            .filter(|c| c.sender == sender && of(c.round, Sender::Agave).is_some())
            .map(|c| c.usage.cpu_s)
            .sum()
    };
    let agave = total(Sender::Agave);
    for (sender, what, limit, per_round) in [
        (Sender::Headless, "CPU headless", 1.0, column(1)),
        (Sender::Dashboard, "CPU with the dashboard", 1.5, dashboard),
    ] {
        if per_round.is_empty() || agave <= 0.0 {
            continue;
        }
        let cpu = total(sender);
        let r = ratio(cpu, agave);
        let verdict = measure::verdict(r <= limit);
        println!(
            "goal {what} ≤ {limit:.1} × Agave over this run's rounds together: {verdict} ({cpu:.2} s / {:.2} s = {r:.3}; worst round {:.3})",
            agave,
            spread(&per_round).1
        );
    }
}

fn print_table(f: &Figures, n: usize) {
    println!(
        "\nFounding workload: {n} self-transfers at {CU_PRICE} µlamports/CU, 100 tx/s (bound N/rate = {:.1} s)",
        n as f64 / 100.0
    );
    println!(
        "{:>5} {:<58} {:>9} {:>8} {:>9} {:>7} {:>9} {:>8}",
        "round", "sender", "landed", "wall s", "x bound", "CPU s", "peak MB", "sends/tx"
    );
    for c in &f.founding {
        println!(
            "{:>5} {:<58} {:>9} {:>8.1} {:>9.3} {:>7.2} {:>9.1} {:>8}",
            c.round,
            c.name,
            format!("{}/{}", c.landed, c.total),
            c.usage.wall_s,
            c.vs_bound,
            c.usage.cpu_s,
            c.usage.peak_rss_mb,
            c.sends_per_landed
                .map_or("n/a".to_string(), |v| format!("{v:.3}"))
        );
    }
    print_ratios(&f.founding);
    println!(
        "\nPacing on the wire (streams by hand-off to QUIC; 1,000 tx/s with the staked identity)"
    );
    for p in &f.pacing {
        println!(
            "  target {:>6.0} tx/s  achieved {:>8.1} tx/s  ratio {:.4}  busiest 100 ms {:.2} x target",
            p.target, p.achieved, p.ratio, p.burst
        );
    }
    println!("\n--rate max ({n} self-transfers over 8 payers)");
    for m in &f.max_rate {
        println!(
            "  {:<9} landed {}/{} in {:.1} s = {:.0} landed tx/s, {} sends per landed",
            m.identity,
            m.landed,
            m.total,
            m.wall_s,
            m.landed_per_s,
            m.sends_per_landed
                .map_or("n/a".to_string(), |v| format!("{v:.3}"))
        );
    }
}

/// The Agave contender: builds the same kind of messages and lets the TpuClient sign, send,
/// resend and confirm them.
pub fn agave_send(args: AgaveArgs) -> Result<()> {
    let sink = if args.count_sends {
        Some(MetricsSink::install(AGAVE_SEND_CACHE)?)
    } else {
        None
    };
    let payer = read_keypair_file(&args.keypair)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", args.keypair.display()))?;
    let rpc = Arc::new(RpcClient::new_with_commitment(
        args.url.clone(),
        CommitmentConfig::confirmed(),
    ));
    // The default cache, under a name of our own so its points can be told apart.
    let cache = match ConnectionCache::new(AGAVE_SEND_CACHE) {
        ConnectionCache::Quic(c) => c,
        ConnectionCache::Udp(_) => bail!("expected a QUIC connection cache"),
    };
    let client = TpuClient::new_with_connection_cache(
        rpc.clone(),
        &args.ws,
        TpuClientConfig::default(),
        cache.clone(),
    )
    .map_err(|e| anyhow::anyhow!("TpuClient: {e}"))?;
    let me = payer.pubkey();
    let messages: Vec<Message> = (0..args.count as u64)
        .map(|i| {
            Message::new(
                &[
                    ComputeBudgetInstruction::set_compute_unit_price(CU_PRICE),
                    ComputeBudgetInstruction::set_compute_unit_limit(CU_LIMIT),
                    solana_system_interface::instruction::transfer(&me, &me, args.amount_base + i),
                ],
                Some(&me),
            )
        })
        .collect();
    let signers: [&Keypair; 1] = [&payer];
    let errors = client
        .send_and_confirm_messages_with_spinner(&messages, &signers)
        .map_err(|e| anyhow::anyhow!("send_and_confirm_messages_with_spinner: {e}"))?;
    let landed = errors.iter().filter(|e| e.is_none()).count();
    println!("landed {landed}");
    if let Some(sink) = sink {
        // The cache reports its counters at most every 2 s, when a connection is taken.
        let wait = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        let tpu = rpc
            .get_cluster_nodes()?
            .into_iter()
            .find_map(|n| n.tpu_quic)
            .context("no TPU QUIC address")?;
        let _ = cache.get_connection(&tpu);
        println!("sent_packets {}", sink.flush_and_count());
        println!("metrics_wait_s {:.3}", wait.elapsed().as_secs_f64());
    }
    Ok(())
}
