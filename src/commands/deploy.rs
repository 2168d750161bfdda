//! `txpace deploy PROGRAM.so`: what `solana program deploy` does with the upgradeable loader —
//! buffer, writes, deploy or upgrade — with the writes paced through the engine, watched on the
//! dashboard, re-signed when they expire, and resumable from the buffer when interrupted.
//!
//! This module is the command's glue: keypairs and files, reading the chain once to plan, and
//! telling the user what happened and how to finish or recover. The work is in [`crate::deploy`].

use std::{
    path::{Path, PathBuf},
    str::FromStr,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use solana_commitment_config::CommitmentConfig;
use solana_keypair::Keypair;
use solana_loader_v3_interface::{instruction as loader, state::UpgradeableLoaderState};
use solana_message::{Message, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;

use crate::{
    cli::{DeployArgs, GlobalOpts},
    commands::send::{Session, engine_config},
    config::{self, Resolved},
    deploy::{
        DeployError,
        accounts::{AccountData, BufferState, ProgramState},
        chunks::WriteSigners,
        drive::{self, Cluster, Deploy, Outcome},
        elf,
        plan::{self, Action, ChainState, Inputs, Plan, Rents},
        relay::{Relay, blank_snapshot},
        sol,
    },
    engine::{quic::QuicTransport, rpc::RpcChain},
    keyfile::{read_keypair, write_private_keypair},
    redact::redact_url,
    report::Report,
};

const RPC_TIMEOUT: Duration = Duration::from_secs(30);

pub fn run(global: &GlobalOpts, args: DeployArgs) -> Result<u8> {
    if let Some(buffer) = &args.close_buffer {
        return close_buffer(global, &args, buffer);
    }
    let Some(path) = args.program.clone() else {
        bail!("give the program's .so file (or --close-buffer KEYPAIR)");
    };
    let program = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    if let Err(e) = elf::check_program(&program) {
        eprintln!("{}: {e}", path.display());
        eprintln!("nothing was sent");
        return Ok(2);
    }
    let resolved = config::resolve(&global.to_args(args.keypair.clone()))?;
    let payer = Arc::new(payer_keypair(&resolved)?);
    let authority = match &args.upgrade_authority {
        Some(p) => Arc::new(read_keypair(p)?),
        None => payer.clone(),
    };
    let program_id = ProgramId::resolve(args.program_id.as_deref(), &path)?;
    let buffer_path = args
        .buffer
        .clone()
        .unwrap_or_else(|| sibling(&path, "buffer.json"));
    let buffer_existed = buffer_path.exists();
    let buffer = Arc::new(if buffer_existed {
        read_keypair(&buffer_path)?
    } else {
        Keypair::new()
    });

    let rpc = RpcClient::new_with_timeout_and_commitment(
        resolved.rpc_url.clone(),
        RPC_TIMEOUT,
        CommitmentConfig::confirmed(),
    );
    let url = redact_url(&resolved.rpc_url);
    let write_signers = WriteSigners {
        payer: payer.clone(),
        authority: authority.clone(),
        buffer: buffer.pubkey(),
    };
    let chunk_size = write_signers.max_chunk(&[])?;
    let inputs = Inputs {
        program: &program,
        payer: payer.pubkey(),
        authority: authority.pubkey(),
        program_id: program_id.pubkey,
        have_program_keypair: program_id.keypair.is_some(),
        buffer: buffer.pubkey(),
        max_len: args.max_len,
        chunk_size,
    };
    let chain = read_chain(&rpc, &inputs).with_context(|| format!("reading the chain at {url}"))?;
    let plan = plan::plan(&inputs, &chain)?;
    describe_plan(&path, &program, &plan, &inputs, &chain.buffer, &buffer_path);

    // Keys are on disk before anything is spent, so nothing paid for can be lost with them.
    if !buffer_existed {
        write_private_keypair(&buffer, &buffer_path)?;
        eprintln!("buffer keypair saved to {}", buffer_path.display());
    }
    if let (Some(kp), Some(p)) = (&program_id.keypair, &program_id.new_file) {
        write_private_keypair(kp, p)?;
        eprintln!("program keypair saved to {}", p.display());
    }

    let rents = chain.rent;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let title = format!(
        "deploy {name} ({} bytes) to {}",
        program.len(),
        program_id.pubkey
    );
    let started = Instant::now();
    let session = Session::start(&args.send, "deploy")?;
    let cfg = engine_config(&resolved, &args.send, &session.identity);
    let outcome = {
        let _entered = session.rt.enter();
        let transport = QuicTransport::new(&session.identity).context("setting up QUIC")?;
        let (relay, ends) = Relay::new(Arc::new(blank_snapshot(&cfg)), args.send.paused);
        let cluster = Cluster {
            engine: cfg,
            chain: Arc::new(RpcChain::new(&resolved.rpc_url)),
            transport: Arc::new(transport),
            ws_url: Some(resolved.ws_url.clone()),
            rpc: Arc::new(
                solana_rpc_client::nonblocking::rpc_client::RpcClient::new_with_timeout_and_commitment(
                    resolved.rpc_url.clone(),
                    RPC_TIMEOUT,
                    CommitmentConfig::confirmed(),
                ),
            ),
        };
        let job = Deploy {
            program: program.clone().into(),
            plan: plan.clone(),
            payer: payer.clone(),
            authority: authority.clone(),
            buffer: buffer.clone(),
            program_id: program_id.pubkey,
            program_keypair: program_id.keypair.clone(),
            max_sign_attempts: args.max_sign_attempts,
            buffer_rent: rents.buffer,
            program_rent: rents.program,
        };
        let task = session.rt.spawn(drive::run(job, cluster, relay));
        session.watch(&args.send, title, ends.snapshots, ends.commands, task)?
    };
    let elapsed = started.elapsed();
    let report = DeployReport::new(&plan, &program_id, &buffer.pubkey(), &outcome, elapsed);
    if let Some(p) = &args.send.report {
        crate::report::write_private_json(p, &report)?;
    }
    print_summary(&report, &outcome);
    let code = match &outcome.result {
        Ok(_) => {
            if args.buffer.is_none() {
                // The loader closed the buffer; its keypair opens nothing any more.
                let _ = std::fs::remove_file(&buffer_path);
            }
            0
        }
        Err(e) => {
            eprintln!("error: {}", crate::redact::scrub(e));
            explain_recovery(&buffer.pubkey(), &buffer_path, &rpc);
            if session
                .interrupted
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                130
            } else {
                1
            }
        }
    };
    if let Some(p) = &args.send.report {
        println!("report: {}", p.display());
    }
    if let Some(f) = &session.log_file {
        println!("log: {}", f.display());
    }
    log::logger().flush();
    session.rt.shutdown_timeout(Duration::from_millis(200));
    Ok(code)
}

fn payer_keypair(resolved: &Resolved) -> Result<Keypair> {
    let path = resolved
        .keypair_path
        .clone()
        .context("no payer: pass --keypair or set keypair_path in the Solana CLI config")?;
    read_keypair(&path)
}

/// `DIR/STEM-suffix` for the program file `DIR/STEM.so`.
fn sibling(program: &Path, suffix: &str) -> PathBuf {
    let stem = program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    program.with_file_name(format!("{stem}-{suffix}"))
}

/// The program's address, and its keypair when we have it.
struct ProgramId {
    pubkey: Pubkey,
    keypair: Option<Arc<Keypair>>,
    /// Where a freshly made keypair is to be saved.
    new_file: Option<PathBuf>,
}

impl ProgramId {
    fn resolve(arg: Option<&str>, program: &Path) -> Result<Self> {
        let from_file = |p: &Path| -> Result<Self> {
            let kp = read_keypair(p)?;
            Ok(ProgramId {
                pubkey: kp.pubkey(),
                keypair: Some(Arc::new(kp)),
                new_file: None,
            })
        };
        match arg {
            Some(s) if Path::new(s).exists() => from_file(Path::new(s)),
            Some(s) => match Pubkey::from_str(s) {
                Ok(pubkey) => Ok(ProgramId {
                    pubkey,
                    keypair: None,
                    new_file: None,
                }),
                Err(_) => bail!("--program-id {s}: no such keypair file, and not a public key"),
            },
            None => {
                let default = sibling(program, "keypair.json");
                if default.exists() {
                    return from_file(&default);
                }
                let kp = Keypair::new();
                Ok(ProgramId {
                    pubkey: kp.pubkey(),
                    keypair: Some(Arc::new(kp)),
                    new_file: Some(default),
                })
            }
        }
    }
}

/// What the plan needs from the chain, read once before anything is sent.
fn read_chain(rpc: &RpcClient, i: &Inputs) -> Result<ChainState> {
    let buffer = BufferState::read(&i.buffer, fetch(rpc, &i.buffer)?)?;
    let program = ProgramState::read(&i.program_id, fetch(rpc, &i.program_id)?, |pd| {
        fetch(rpc, pd).map_err(|e| DeployError::rpc("getAccountInfo", format!("{e:#}")))
    })?;
    let balance = rpc
        .get_balance(&i.payer)
        .with_context(|| format!("getBalance of {}", i.payer))?;
    let rent = |len: usize| {
        rpc.get_minimum_balance_for_rent_exemption(len)
            .context("getMinimumBalanceForRentExemption")
    };
    let max_len = i.max_len.unwrap_or(i.program.len());
    Ok(ChainState {
        buffer,
        program,
        balance,
        rent: Rents {
            buffer: rent(UpgradeableLoaderState::size_of_buffer(i.program.len()))?,
            program: rent(UpgradeableLoaderState::size_of_program())?,
            programdata: rent(UpgradeableLoaderState::size_of_programdata(max_len))?,
        },
    })
}

fn fetch(rpc: &RpcClient, address: &Pubkey) -> Result<Option<AccountData>> {
    let acc = rpc
        .get_account_with_commitment(address, CommitmentConfig::confirmed())
        .with_context(|| format!("getAccountInfo {address}"))?
        .value;
    Ok(acc.map(|a| AccountData {
        owner: a.owner,
        lamports: a.lamports,
        executable: a.executable,
        data: a.data,
    }))
}

fn describe_plan(
    path: &Path,
    program: &[u8],
    plan: &Plan,
    i: &Inputs,
    buffer: &BufferState,
    buffer_path: &Path,
) {
    let count = plan.chunks.count();
    eprintln!(
        "{}: {} bytes, {count} chunks of up to {} bytes",
        path.display(),
        program.len(),
        plan.chunks.size
    );
    match buffer {
        BufferState::Missing => eprintln!(
            "buffer {} ({}): new; {} writes",
            i.buffer,
            buffer_path.display(),
            plan.writes.len()
        ),
        BufferState::Found { .. } => eprintln!(
            "buffer {} ({}): resuming, {} of {} bytes already written; {} of {count} chunks to write",
            i.buffer,
            buffer_path.display(),
            plan.bytes_present(),
            program.len(),
            plan.writes.len()
        ),
    }
    match plan.action {
        Action::Deploy { max_len } => eprintln!(
            "then deploy program {} with room for {max_len} bytes, upgrade authority {}",
            i.program_id, i.authority
        ),
        Action::Upgrade { max_len } => eprintln!(
            "then upgrade program {} (room for {max_len} bytes) as authority {}",
            i.program_id, i.authority
        ),
    }
    eprintln!(
        "payer {} spends up to {} SOL ({} buffer rent, {} fees, {} program rent)",
        i.payer,
        sol(plan.cost.total()),
        sol(plan.cost.buffer_rent),
        sol(plan.cost.fees),
        sol(plan.cost.program_rent)
    );
}

/// The machine-readable account of a deploy (`--report`).
#[derive(Serialize)]
struct DeployReport {
    /// deployed, upgraded, interrupted or failed.
    outcome: &'static str,
    error: Option<String>,
    program_id: String,
    buffer: String,
    program_len: usize,
    chunk_size: usize,
    chunks: usize,
    /// Chunks this run had to write (all but those the buffer already held).
    chunks_to_write: usize,
    bytes_already_in_buffer: u64,
    signature: Option<String>,
    elapsed_s: f64,
    phases: Vec<PhaseReport>,
}

#[derive(Serialize)]
struct PhaseReport {
    name: &'static str,
    /// Re-signings with a fresh blockhash, over all of the phase's transactions.
    resigns: u64,
    report: Report,
}

impl DeployReport {
    fn new(
        plan: &Plan,
        program_id: &ProgramId,
        buffer: &Pubkey,
        outcome: &Outcome,
        elapsed: Duration,
    ) -> Self {
        let outcome_name = match (&outcome.result, &plan.action) {
            (Ok(_), Action::Deploy { .. }) => "deployed",
            (Ok(_), Action::Upgrade { .. }) => "upgraded",
            (Err(DeployError::Interrupted(_)), _) => "interrupted",
            (Err(_), _) => "failed",
        };
        DeployReport {
            outcome: outcome_name,
            error: outcome.result.as_ref().err().map(|e| e.to_string()),
            program_id: program_id.pubkey.to_string(),
            buffer: buffer.to_string(),
            program_len: plan.chunks.len,
            chunk_size: plan.chunks.size,
            chunks: plan.chunks.count(),
            chunks_to_write: plan.writes.len(),
            bytes_already_in_buffer: plan.bytes_present(),
            signature: outcome.result.as_ref().ok().map(|s| s.to_string()),
            elapsed_s: (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            phases: outcome
                .phases
                .iter()
                .map(|p| PhaseReport {
                    name: p.name,
                    resigns: p
                        .outcome
                        .snapshot
                        .txs
                        .iter()
                        .map(|v| u64::from(v.resigns))
                        .sum(),
                    report: Report::new(&p.outcome, &[]),
                })
                .collect(),
        }
    }
}

fn print_summary(r: &DeployReport, outcome: &Outcome) {
    for p in &r.phases {
        let s = &p.report.summary;
        println!(
            "{:<8} {} of {} confirmed in {:.1} s, {} sends ({} per landed), {} re-signed{}",
            p.name,
            s.confirmed,
            s.total,
            s.elapsed_s,
            s.sends,
            s.sends_per_landed
                .map_or("-".to_string(), |v| format!("{v:.2}")),
            p.resigns,
            if s.failed + s.expired > 0 {
                format!(", {} failed, {} expired", s.failed, s.expired)
            } else {
                String::new()
            }
        );
    }
    match &outcome.result {
        Ok(sig) => println!(
            "{} program {} in {:.1} s ({} of {} chunks written this run; signature {sig})",
            r.outcome, r.program_id, r.elapsed_s, r.chunks_to_write, r.chunks
        ),
        Err(_) => println!("{}: program {} not deployed", r.outcome, r.program_id),
    }
}

/// After a failed or abandoned deploy: the buffer holds SOL; say how to finish or get it back.
fn explain_recovery(buffer: &Pubkey, buffer_path: &Path, rpc: &RpcClient) {
    let held = rpc
        .get_account_with_commitment(buffer, CommitmentConfig::confirmed())
        .ok()
        .and_then(|r| r.value)
        .map(|a| a.lamports);
    let Some(lamports) = held else {
        // Never created (or already closed): nothing to recover.
        return;
    };
    eprintln!(
        "buffer {buffer} holds {} SOL and keeps what was written.\n\
         to finish: run the same command again (it resumes from --buffer {})\n\
         to abandon and recover the SOL: txpace deploy --close-buffer {} (same --url and --keypair)",
        sol(lamports),
        buffer_path.display(),
        buffer_path.display()
    );
}

/// `--close-buffer`: return an abandoned buffer's lamports to the payer.
fn close_buffer(global: &GlobalOpts, args: &DeployArgs, which: &str) -> Result<u8> {
    let resolved = config::resolve(&global.to_args(args.keypair.clone()))?;
    let payer = payer_keypair(&resolved)?;
    let authority = match &args.upgrade_authority {
        Some(p) => read_keypair(p)?,
        None => payer.insecure_clone(),
    };
    let address = if Path::new(which).exists() {
        read_keypair(Path::new(which))?.pubkey()
    } else {
        Pubkey::from_str(which).map_err(|_| {
            anyhow!("--close-buffer {which}: no such keypair file, and not a public key")
        })?
    };
    let rpc = RpcClient::new_with_timeout_and_commitment(
        resolved.rpc_url.clone(),
        RPC_TIMEOUT,
        CommitmentConfig::confirmed(),
    );
    let url = redact_url(&resolved.rpc_url);
    match BufferState::read(&address, fetch(&rpc, &address)?)? {
        BufferState::Missing => {
            eprintln!(
                "no account at {address} on {url}: the buffer is already closed (or was never created)"
            );
            Ok(1)
        }
        BufferState::Found {
            authority: found,
            lamports,
            ..
        } => {
            if found != Some(authority.pubkey()) {
                return Err(DeployError::BufferAuthority {
                    buffer: address,
                    found,
                    expected: authority.pubkey(),
                }
                .into());
            }
            let ix = loader::close(&address, &payer.pubkey(), &authority.pubkey());
            let blockhash = rpc
                .get_latest_blockhash()
                .with_context(|| format!("getLatestBlockhash at {url}"))?;
            let message = Message::new_with_blockhash(&[ix], Some(&payer.pubkey()), &blockhash);
            let signers: Vec<&Keypair> = if authority.pubkey() == payer.pubkey() {
                vec![&payer]
            } else {
                vec![&payer, &authority]
            };
            let tx = VersionedTransaction::try_new(VersionedMessage::Legacy(message), &signers)
                .map_err(|e| anyhow!("signing the close: {e}"))?;
            let sig = rpc
                .send_and_confirm_transaction(&tx)
                .with_context(|| format!("closing buffer {address} at {url}"))?;
            println!(
                "closed buffer {address}: {} SOL returned to {} (signature {sig})",
                sol(lamports),
                payer.pubkey()
            );
            Ok(0)
        }
    }
}
