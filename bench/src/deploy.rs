//! The deploy benchmark: spl-token-2022 (615,936 bytes, from `scripts/fetch-programs.sh`)
//! deployed through `txpace deploy` and through Agave's deploy path — buffer created over RPC,
//! the same write messages through `send_and_confirm_transactions_in_parallel_v2` with a QUIC
//! TPU client, then `DeployWithMaxDataLen` — on the same validator in one run, each as a
//! measured child process.
//!
//! Sends per landed write, per transaction per leader address for both: txpace's streams (its
//! report); Agave's counted by its QUIC connection cache (`agave_metrics`; a lower bound, "≥").

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use serde_json::Value;
use solana_client::{
    connection_cache::ConnectionCache,
    nonblocking::{rpc_client::RpcClient, tpu_client::TpuClient},
    rpc_config::RpcSendTransactionConfig,
    send_and_confirm_transactions_in_parallel::{
        SendAndConfirmConfigV2, send_and_confirm_transactions_in_parallel_v2,
    },
    tpu_client::TpuClientConfig,
};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, read_keypair_file};
use solana_loader_v3_interface::{instruction as loader, state::UpgradeableLoaderState};
use solana_message::Message;
use solana_signer::Signer;
use solana_transaction::Transaction;
use txpace::{
    deploy::chunks::{Chunks, WriteSigners},
    validator::{LocalValidator, ValidatorOptions},
};

use crate::agave_metrics::MetricsSink;
use crate::child;
use crate::markdown::{self, Section};
use crate::measure::{self, Sends, Usage};
use crate::workload::start_validator;

/// Name of the Agave child's connection cache, and of the metrics points it reports.
const AGAVE_CACHE: &str = "txpace-bench-agave-deploy";

#[derive(clap::Args)]
pub struct Args {
    /// The program to deploy [default: spl_token_2022.so from scripts/fetch-programs.sh]
    #[arg(long)]
    program: Option<PathBuf>,
    /// Skip the Agave comparison
    #[arg(long)]
    no_agave: bool,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the table as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// (internal) run Agave's deploy path as the measured child, against this RPC URL
    #[arg(long, hide = true, requires_all = ["ws", "keypair"])]
    agave_child: Option<String>,
    #[arg(long, hide = true)]
    ws: Option<String>,
    #[arg(long, hide = true)]
    keypair: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Contender {
    name: &'static str,
    usage: Usage,
    /// From the first write sent to the last write confirmed.
    writes_s: f64,
    writes: u64,
    landed_writes: u64,
    sends: Option<Sends>,
    sends_per_landed: Option<f64>,
    deployed: bool,
    /// Why its process failed, when it did: its exit and the tail of its standard error.
    failure: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(url) = &args.agave_child {
        return agave_child(
            url,
            args.ws.as_deref().context("--ws")?,
            args.keypair.as_deref().context("--keypair")?,
            &program_path(&args)?,
        );
    }
    let program = program_path(&args)?;
    let bytes =
        std::fs::read(&program).with_context(|| format!("reading {}", program.display()))?;
    let dir = std::env::temp_dir().join(format!("txpace-bench-deploy-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let v = start_validator(ValidatorOptions::default())?;
    let mut contenders = vec![txpace_deploy(&v, &dir, &program, "100")?];
    if !args.no_agave {
        contenders.push(agave_deploy(&v, &program)?);
    }
    contenders.push(txpace_deploy(&v, &dir, &program, "max")?);
    markdown::emit(
        &[section(&contenders, bytes.len())],
        args.markdown.as_deref(),
    )?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&contenders)?)?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn program_path(args: &Args) -> Result<PathBuf> {
    if let Some(p) = &args.program {
        return Ok(p.clone());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the bench package sits in the txpace checkout")?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let path = target.join("programs").join("spl_token_2022.so");
    if !path.exists() {
        let status = Command::new("bash")
            .arg(root.join("scripts/fetch-programs.sh"))
            .env("PROGRAMS_DIR", target.join("programs"))
            .status()
            .context("running scripts/fetch-programs.sh")?;
        if !status.success() || !path.exists() {
            bail!(
                "scripts/fetch-programs.sh did not produce {}",
                path.display()
            );
        }
    }
    Ok(path)
}

fn txpace_deploy(v: &LocalValidator, dir: &Path, program: &Path, rate: &str) -> Result<Contender> {
    // A fresh name each time: a new program id and a new buffer.
    let so = dir.join(format!("program-{rate}.so"));
    std::fs::copy(program, &so)?;
    let report = dir.join(format!("deploy-{rate}.report.json"));
    let mut cmd = child::txpace()?;
    cmd.args([
        "deploy",
        "--no-tui",
        "--url",
        &v.rpc_url(),
        "--ws",
        &v.ws_url(),
    ])
    .arg(&so)
    .args(["--rate", rate])
    .arg("--keypair")
    .arg(v.mint_keypair_path())
    .arg("--report")
    .arg(&report);
    eprintln!("txpace deploy --rate {rate}…");
    let done = measure::run(&mut cmd)?;
    eprintln!("{}", done.stdout.trim_end());
    let text = std::fs::read_to_string(&report)
        .with_context(|| format!("no report from txpace deploy: {}", done.stderr))?;
    let r: Value = serde_json::from_str(&text)?;
    let writes = r["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "writes"))
        .map(|p| &p["report"]["summary"])
        .context("no writes phase in the report")?;
    let landed_writes = writes["confirmed"].as_u64().unwrap_or(0);
    let sends = Sends::txpace(writes);
    Ok(Contender {
        name: if rate == "max" {
            "txpace deploy --rate max"
        } else {
            "txpace deploy --rate 100"
        },
        usage: done.usage,
        writes_s: writes["elapsed_s"].as_f64().unwrap_or(0.0),
        writes: writes["total"].as_u64().unwrap_or(0),
        landed_writes,
        sends,
        sends_per_landed: measure::per_landed(sends, landed_writes),
        deployed: done.status.success() && r["outcome"] == "deployed",
        failure: measure::failure(done.status, &done.stderr, &[0]),
    })
}

fn agave_deploy(v: &LocalValidator, program: &Path) -> Result<Contender> {
    let mut cmd = child::command(std::env::current_exe()?)?;
    cmd.args(["deploy", "--agave-child", &v.rpc_url(), "--ws", &v.ws_url()])
        .arg("--keypair")
        .arg(v.mint_keypair_path())
        .arg("--program")
        .arg(program);
    eprintln!("Agave send_and_confirm_transactions_in_parallel_v2…");
    let done = measure::run(&mut cmd)?;
    let failure = measure::failure(done.status, &done.stderr, &[0]);
    let field = |name: &str| -> Option<f64> {
        done.stdout
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
    };
    let mut usage = done.usage;
    usage.wall_s -= field("metrics_wait_s ").unwrap_or(0.0);
    let writes = field("writes ").unwrap_or(0.0) as u64;
    let landed = field("landed ").unwrap_or(0.0) as u64;
    let sends = field("sent_packets ").map(|s| Sends::lower_bound(s as u64));
    Ok(Contender {
        // Its pace is its own: a send every 10 ms (`SEND_INTERVAL` in `solana-client` 4.0.0's
        // `send_and_confirm_transactions_in_parallel.rs`), 100 tx/s.
        name: "Agave send_and_confirm_transactions_in_parallel_v2 (its own 100 tx/s)",
        usage,
        writes_s: field("writes_s ").unwrap_or(0.0),
        writes,
        landed_writes: landed,
        sends,
        sends_per_landed: measure::per_landed(sends, landed),
        deployed: done.status.success() && done.stdout.lines().any(|l| l.starts_with("deployed ")),
        failure,
    })
}

fn section(c: &[Contender], len: usize) -> Section {
    let mut t = Section::new(format!(
        "Deploy of a {len}-byte program on one local validator"
    ))
    .left("deployer")
    .right("total s")
    .right("writes s")
    .right("writes")
    .right("CPU s")
    .right("peak MB")
    .right("sends")
    .right("sends/tx")
    .left("note");
    for x in c {
        t.row(vec![
            x.name.to_string(),
            format!("{:.1}", x.usage.wall_s),
            format!("{:.1}", x.writes_s),
            format!("{}/{}", x.landed_writes, x.writes),
            format!("{:.2}", x.usage.cpu_s),
            format!("{:.1}", x.usage.peak_rss_mb),
            Sends::show(x.sends),
            Sends::show_per_landed(x.sends, x.landed_writes),
            format!(
                "{}{}",
                if x.deployed { "" } else { "(NOT deployed)" },
                measure::row_note(x.failure.as_deref(), 0)
            )
            .trim()
            .to_string(),
        ]);
    }
    t.note(
        "(sends: per transaction per leader address; \"≥\": Agave's count leaves out sends its \
         own 5 s timeout dropped)",
    );
    let Some(a) = c.iter().find(|x| x.name.starts_with("Agave")) else {
        return t;
    };
    let ratio = |t: f64, a: f64| t / a.max(0.001);
    for x in c.iter().filter(|x| !x.name.starts_with("Agave")) {
        t.note(format!(
            "{} / Agave: total {:.3}, writes {:.3}, CPU {:.2}, memory {:.2}",
            x.name,
            ratio(x.usage.wall_s, a.usage.wall_s),
            ratio(x.writes_s, a.writes_s),
            ratio(x.usage.cpu_s, a.usage.cpu_s),
            ratio(x.usage.peak_rss_mb, a.usage.peak_rss_mb)
        ));
    }
    // The goal is for the default pace (`--rate max`), the deploy a user gets.
    if let Some(x) = c.iter().find(|x| x.name.ends_with("--rate max")) {
        let r = ratio(x.usage.wall_s, a.usage.wall_s);
        t.note(format!(
            "goal whole deploy ≤ 0.8 × Agave at the default pace: {} ({r:.3})",
            measure::verdict(r <= 0.8 && x.deployed)
        ));
    }
    t
}

/// Agave's deploy path, as `solana program deploy` runs it: the buffer over RPC, the writes
/// through `send_and_confirm_transactions_in_parallel_v2` with a QUIC TPU client (at most 5
/// signings), the deploy over RPC. Prints `key value` lines for the parent.
fn agave_child(url: &str, ws: &str, keypair: &Path, program: &Path) -> Result<()> {
    let program = std::fs::read(program)?;
    let payer = Arc::new(
        read_keypair_file(keypair).map_err(|e| anyhow!("reading {}: {e}", keypair.display()))?,
    );
    let sink = MetricsSink::install(AGAVE_CACHE)?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rpc = Arc::new(RpcClient::new_with_commitment(
            url.to_string(),
            CommitmentConfig::confirmed(),
        ));
        let buffer = Keypair::new();
        let program_kp = Keypair::new();
        let len = program.len();
        let rent = rpc
            .get_minimum_balance_for_rent_exemption(UpgradeableLoaderState::size_of_buffer(len))
            .await?;
        let create = loader::create_buffer(
            &payer.pubkey(),
            &buffer.pubkey(),
            &payer.pubkey(),
            rent,
            len,
        )
        .map_err(|e| anyhow!("{e}"))?;
        send_rpc(&rpc, &create, &[&*payer, &buffer]).await?;

        // The very write messages txpace sends: same chunking, same instructions.
        let w = WriteSigners {
            payer: payer.clone(),
            authority: payer.clone(),
            buffer: buffer.pubkey(),
        };
        let chunks = Chunks {
            size: w.max_chunk(&[])?,
            len,
        };
        let which = chunks.differing(&program, &[]);
        let messages: Vec<Message> = w
            .plan(&program, chunks, &which, &[])
            .iter()
            .map(|p| Message::new(&p.instructions, Some(&payer.pubkey())))
            .collect();
        let cache = match ConnectionCache::new(AGAVE_CACHE) {
            ConnectionCache::Quic(c) => c,
            ConnectionCache::Udp(_) => bail!("expected a QUIC connection cache"),
        };
        let tpu = TpuClient::new_with_connection_cache(
            rpc.clone(),
            ws,
            TpuClientConfig::default(),
            cache.clone(),
        )
        .await
        .map_err(|e| anyhow!("TpuClient: {e}"))?;
        let started = Instant::now();
        let errors = send_and_confirm_transactions_in_parallel_v2(
            rpc.clone(),
            Some(tpu),
            &messages,
            &[&*payer],
            SendAndConfirmConfigV2 {
                with_spinner: false,
                resign_txs_count: Some(5),
                rpc_send_transaction_config: RpcSendTransactionConfig {
                    skip_preflight: true,
                    ..Default::default()
                },
            },
        )
        .await
        .map_err(|e| anyhow!("send_and_confirm_transactions_in_parallel_v2: {e}"))?;
        let writes_s = started.elapsed().as_secs_f64();
        let landed = errors.iter().filter(|e| e.is_none()).count();
        println!("writes {}", messages.len());
        println!("landed {landed}");
        println!("writes_s {writes_s:.3}");

        let deploy = loader::deploy_with_max_program_len(
            &payer.pubkey(),
            &program_kp.pubkey(),
            &buffer.pubkey(),
            &payer.pubkey(),
            rpc.get_minimum_balance_for_rent_exemption(UpgradeableLoaderState::size_of_program())
                .await?,
            len,
        )
        .map_err(|e| anyhow!("{e}"))?;
        send_rpc(&rpc, &deploy, &[&*payer, &program_kp]).await?;
        println!("deployed {}", program_kp.pubkey());
        // The cache reports its counters at most every 2 s, when a connection is taken: wait
        // out the interval, take one, and flush the metrics agent. The parent takes this wait
        // off the measured time.
        let wait = Instant::now();
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        let tpu_addr = rpc
            .get_cluster_nodes()
            .await?
            .into_iter()
            .find_map(|n| n.tpu_quic)
            .context("no TPU QUIC address")?;
        let _ = cache.get_nonblocking_connection(&tpu_addr);
        println!("sent_packets {}", sink.flush_and_count());
        println!("metrics_wait_s {:.3}", wait.elapsed().as_secs_f64());

        Ok(())
    })
}

async fn send_rpc(
    rpc: &RpcClient,
    ixs: &[solana_instruction::Instruction],
    signers: &[&Keypair],
) -> Result<()> {
    let hash = rpc.get_latest_blockhash().await?;
    let tx = Transaction::new_signed_with_payer(ixs, Some(&signers[0].pubkey()), signers, hash);
    rpc.send_and_confirm_transaction(&tx).await?;
    Ok(())
}
