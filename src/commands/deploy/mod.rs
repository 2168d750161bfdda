//! `txpace deploy PROGRAM.so`: what `solana program deploy` does with the upgradeable loader —
//! buffer, writes, deploy or upgrade — with the writes paced through the engine, watched on the
//! dashboard, re-signed when they expire, and resumable from the buffer when interrupted.
//!
//! This module is the command's glue: keypairs and files, reading the chain once to plan, and
//! telling the user what happened and how to finish or recover. The work is in [`crate::deploy`].
//! Here: the run itself and the plan's description; `program_id` picks the program's address,
//! `chain` reads what the plan needs, `report` is the `--report` and summary, `close` recovers
//! an abandoned buffer.

use std::{
    path::{Path, PathBuf},
    str::FromStr,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;

use crate::{
    cli::{DeployArgs, GlobalOpts, OutputMode},
    commands::{
        send::{engine_config, route, transport},
        session::{Session, print_aside},
    },
    config,
    deploy::{
        chunks::WriteSigners,
        drive::{self, Cluster, Deploy},
        elf,
        plan::{self, Action, Inputs},
        relay::{Relay, blank_snapshot},
    },
    engine::rpc::RpcChain,
    exit,
    keyfile::{read_keypair, write_private_keypair},
    redact::redact_url,
    signer::{default_signer, read_signer},
};

mod approvals;
mod budget;
mod chain;
mod close;
mod describe;
mod program_id;
mod report;

use budget::Budget;
use chain::read_chain;
use close::{close_buffer, explain_interrupted, explain_recovery};
use describe::{describe_plan, explain_buffer};
use program_id::ProgramId;
use report::{DeployReport, print_summary};

const RPC_TIMEOUT: Duration = Duration::from_secs(30);

pub fn run(global: &GlobalOpts, args: DeployArgs) -> Result<u8> {
    if let Some(buffer) = &args.close_buffer {
        return close_buffer(global, &args, buffer);
    }
    let Some(path) = args.program.clone() else {
        return Err(exit::usage(anyhow!(
            "give the program's .so file (or --close-buffer KEYPAIR)"
        )));
    };
    let program = std::fs::read(&path)
        .with_context(|| format!("reading {}", path.display()))
        .map_err(exit::usage)?;
    if let Err(e) = elf::check_program(&program) {
        say!("{}: {e}", path.display());
        say!("nothing was sent");
        return Ok(exit::USAGE);
    }
    let resolved = config::resolve(&global.to_args(args.keypair.clone())).map_err(exit::usage)?;
    // As the Solana CLI: -k is the default signer; --fee-payer and --upgrade-authority name
    // others.
    let signer = default_signer(resolved.keypair_path.as_deref()).map_err(exit::usage)?;
    let payer = match &args.fee_payer {
        Some(p) => read_signer(p, "fee payer").map_err(exit::usage)?,
        None => signer.clone(),
    };
    let authority = match args
        .buffer_authority
        .as_ref()
        .or(args.upgrade_authority.as_ref())
    {
        Some(p) => read_signer(p, "authority").map_err(exit::usage)?,
        None => signer.clone(),
    };
    let hand_to = match &args.new_buffer_authority {
        Some(key) => Some(Pubkey::from_str(key).map_err(|e| {
            exit::usage(anyhow!(
                "--new-buffer-authority {key}: not a public key ({e})"
            ))
        })?),
        None => None,
    };
    let program_id = ProgramId::resolve(args.program_id.as_deref(), &path).map_err(exit::usage)?;
    let buffer_path = args
        .buffer
        .clone()
        .unwrap_or_else(|| sibling(&path, "buffer.json"));
    let buffer_existed = buffer_path.exists();
    let buffer = Arc::new(if buffer_existed {
        read_keypair(&buffer_path).map_err(exit::usage)?
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
    let budget = Budget::resolve(&rpc, &args, &[payer.pubkey(), buffer.pubkey()])
        .with_context(|| format!("reading recent fees at {url}"))?;
    let chunk_size = write_signers.max_chunk(&budget.budget.widest_instructions())?;
    let inputs = Inputs {
        program: &program,
        payer: payer.pubkey(),
        authority: authority.pubkey(),
        program_id: program_id.pubkey,
        have_program_keypair: program_id.keypair.is_some(),
        buffer: buffer.pubkey(),
        max_len: args.max_len,
        chunk_size,
        budget: budget.budget,
        buffer_only: args.buffer_only.then_some(hand_to),
    };
    let chain = read_chain(&rpc, &inputs).with_context(|| format!("reading the chain at {url}"))?;
    let plan = plan::plan(&inputs, &chain)?;
    let authority_source = args
        .buffer_authority
        .as_ref()
        .or(args.upgrade_authority.as_ref())
        .or(resolved.keypair_path.as_ref())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    approvals::check(
        &plan,
        &path,
        payer.as_ref(),
        authority.as_ref(),
        &authority_source,
    )
    .map_err(exit::usage)?;
    describe_plan(&path, &program, &plan, &inputs, &chain.buffer, &buffer_path);
    if let Some(b) = budget.describe() {
        say!("every transaction: {b}");
    }
    if args.finalize {
        let last = if matches!(plan.action, Action::Upgrade { .. }) {
            "upgrade"
        } else {
            "deploy"
        };
        say!(
            "--final: the {last} transaction also removes the upgrade authority; program {} can never be upgraded again",
            program_id.pubkey
        );
    }

    // Keys are on disk before anything is spent, so nothing paid for can be lost with them.
    if !buffer_existed {
        write_private_keypair(&buffer, &buffer_path)?;
        say!("buffer keypair saved to {}", buffer_path.display());
    }
    if let (Some(kp), Some(p), false) =
        (&program_id.keypair, &program_id.new_file, args.buffer_only)
    {
        write_private_keypair(kp, p)?;
        say!("program keypair saved to {}", p.display());
    }

    let rents = chain.rent;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut title = format!(
        "deploy {name} ({} bytes) to {}",
        program.len(),
        program_id.pubkey
    );
    if let Some(b) = budget.describe() {
        title.push_str(&format!(" · {b}"));
    }
    let started = Instant::now();
    let session = Session::start(&args.send, "deploy", global.output)?;
    let mut cfg = engine_config(&resolved, &args.send, &session.identity);
    let via_rpc = route(&resolved, &args.send, &mut cfg)?;
    let outcome = {
        let _entered = session.rt.enter();
        let transport = transport(via_rpc, &session.identity, args.send.bind)?;
        let (relay, ends) = Relay::new(Arc::new(blank_snapshot(&cfg)), args.send.paused);
        let cluster = Cluster {
            engine: cfg,
            chain: Arc::new(RpcChain::new(&resolved.rpc_url)),
            transport,
            ws_url: Some(resolved.ws_url.clone()),
            events: session.event_tap(),
            // The same asynchronous flavour as the plan's reads, but a client of its own, made
            // inside the session's runtime: an HTTP client's pooled connections are driven by
            // the runtime that opened them, and the blocking client's runtime sits idle while
            // the session runs — sharing its inner client left the driver's requests unanswered.
            rpc: Arc::new(
                solana_rpc_client::nonblocking::rpc_client::RpcClient::new_with_timeout_and_commitment(
                    resolved.rpc_url.clone(),
                    RPC_TIMEOUT,
                    CommitmentConfig::confirmed(),
                ),
            ),
        };
        let job = Deploy {
            // Moved, not copied: the engine's transactions hold the program's bytes too.
            program: program.into(),
            plan: plan.clone(),
            payer: payer.clone(),
            authority: authority.clone(),
            buffer: buffer.clone(),
            program_id: program_id.pubkey,
            program_keypair: program_id.keypair.clone(),
            max_sign_attempts: args.max_sign_attempts,
            budget: budget.budget,
            finalize: args.finalize,
            extend_checked: chain.extend_checked,
            buffer_rent: rents.buffer,
            program_rent: rents.program,
        };
        let task = session.rt.spawn(drive::run(job, cluster, relay));
        session.watch(&args.send, title, ends.snapshots, ends.commands, task)?
    };
    // The driver and its engine have ended: every event is with the writer.
    let events_file = session.finish_events();
    let elapsed = started.elapsed();
    let mut report = DeployReport::new(
        &plan,
        &program_id,
        &buffer.pubkey(),
        &budget,
        args.finalize,
        &outcome,
        elapsed,
    );
    if args.send.report_sends {
        report.add_streams();
    }
    let report_path = match &args.send.report {
        Some(p) => Some(crate::report::write_or_keep(p, &report, None)?),
        None => None,
    };
    let json = global.output.is_json();
    // Standard output carries data (the report, or the event lines): people's lines go aside.
    let aside = json || session.events_on_stdout();
    if json {
        crate::report::print_json(&report, global.output == OutputMode::JsonCompact)?;
    } else {
        print_summary(&report, &outcome, aside);
    }
    let code = match &outcome.result {
        Ok(_) if args.buffer_only => {
            print_aside(
                aside,
                &explain_buffer(&buffer.pubkey(), &buffer_path, &path, hand_to),
            );
            exit::OK
        }
        Ok(_) => {
            if args.buffer.is_none() {
                // The loader closed the buffer; its keypair opens nothing any more.
                let _ = std::fs::remove_file(&buffer_path);
            }
            exit::OK
        }
        Err(e) => {
            say!("error: {}", crate::redact::scrub(e));
            if session
                .interrupted
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                explain_interrupted(&buffer.pubkey(), &buffer_path);
                exit::INTERRUPTED
            } else {
                explain_recovery(&buffer.pubkey(), &buffer_path, &rpc);
                e.exit_code()
            }
        }
    };
    if let Some(p) = &report_path {
        print_aside(aside, &format!("report: {}", p.display()));
    }
    if let Some(f) = &session.log_file {
        print_aside(aside, &format!("log: {}", f.display()));
    }
    if let Some(line) = events_file {
        print_aside(aside, &line);
    }
    session.linger_metrics(args.send.metrics_linger);
    log::logger().flush();
    session.rt.shutdown_timeout(Duration::from_millis(200));
    Ok(code)
}

/// `DIR/STEM-suffix` for the program file `DIR/STEM.so`.
pub(super) fn sibling(program: &Path, suffix: &str) -> PathBuf {
    let stem = program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    program.with_file_name(format!("{stem}-{suffix}"))
}
