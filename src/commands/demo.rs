//! `txpace demo`: the whole program in one command — a local `solana-test-validator`, the
//! founding workload (unique self-transfers at a priority fee), and the live dashboard sending
//! it at 100 tx/s. Quitting stops the validator and removes its temporary ledger.

use std::{path::Path, process::Command, sync::Arc, time::Instant};

use anyhow::{Context, Result, bail};
use solana_commitment_config::CommitmentConfig;

use crate::{
    cli::{DemoArgs, GlobalOpts},
    commands::send::{RunSpec, run_engine},
    config::{Commitment, Resolved},
    source::{self, LoadedTx},
    validator::{self, LocalValidator},
    workload::{build_self_transfers, wire_bytes},
};

pub fn run(global: &GlobalOpts, args: DemoArgs) -> Result<u8> {
    ensure_validator()?;
    eprintln!("starting solana-test-validator on loopback…");
    let validator = LocalValidator::start().context("starting the local validator")?;
    eprintln!(
        "validator ready in {:.1} s: RPC {}, websocket {}, TPU QUIC {}, ledger {}",
        validator.startup_time().as_secs_f64(),
        validator.rpc_url(),
        validator.ws_url(),
        validator.tpu_quic(),
        validator.ledger_path().display()
    );
    let txs = workload(&validator, &args)?;
    let mut opts = args.send;
    if args.staked {
        opts.identity = Some(validator.identity_keypair_path());
    }
    let spec = RunSpec {
        resolved: Resolved {
            rpc_url: validator.rpc_url(),
            ws_url: validator.ws_url(),
            commitment: Commitment::Confirmed,
            keypair_path: None,
        },
        opts,
        title: format!(
            "demo: {} self-transfers at {} µlamports/CU on a local validator",
            txs.len(),
            args.cu_price
        ),
        txs,
        skipped: Vec::new(),
        // The demo keeps no journal: a stopped demo is simply run again.
        resume_hint: None,
        output: global.output,
    };
    let code = run_engine(spec)?;
    drop(validator);
    Ok(code)
}

/// Signs the workload against a fresh blockhash; its 150-block lifetime (about a minute) is the
/// time the demo has to land it, as with any pre-signed file.
fn workload(validator: &LocalValidator, args: &DemoArgs) -> Result<Vec<LoadedTx>> {
    let started = Instant::now();
    let rpc = validator.rpc_client();
    let (blockhash, last_valid) = rpc
        .get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
        .context("getLatestBlockhash from the local validator")?;
    let signed = build_self_transfers(
        std::slice::from_ref(validator.mint_keypair()),
        args.count as usize,
        args.cu_price,
        args.cu_limit,
        blockhash,
    )?;
    let txs = signed
        .iter()
        .enumerate()
        .map(|(i, tx)| {
            let wire: Arc<[u8]> = wire_bytes(tx)?.into();
            let signature = *tx
                .signatures
                .first()
                .context("a signed transaction has a signature")?;
            Ok(LoadedTx {
                origin: format!("demo:{}", i + 1).into(),
                signature,
                wire,
                recent_blockhash: blockhash,
                durable_nonce: false,
                budget: source::compute_budget(tx),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    eprintln!(
        "signed {} self-transfers in {:.1} s; blockhash {blockhash} valid until block height {last_valid}",
        txs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(txs)
}

/// Installs `solana-test-validator` with the project's setup script when it is missing and the
/// checkout is at hand; otherwise explains how.
fn ensure_validator() -> Result<()> {
    if validator::locate().is_ok() {
        return Ok(());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh");
    if !script.exists() {
        bail!("{}", validator::install_hint());
    }
    eprintln!(
        "solana-test-validator is not installed; running {} (about 25 minutes on 2 cores, once)",
        script.display()
    );
    let status = Command::new("bash")
        .arg(&script)
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !status.success() {
        bail!("{} failed ({status})", script.display());
    }
    validator::locate()
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{e}"))
}
