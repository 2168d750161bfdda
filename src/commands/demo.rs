//! `txpace demo`: the whole program in one command — a local `solana-test-validator` (or, with
//! `--nodes N`, a cluster of N validators whose leaders rotate), the founding workload (unique
//! self-transfers at a priority fee), and the live dashboard sending it at 100 tx/s. Quitting
//! stops the validators and removes their temporary ledgers.

use std::{path::Path, process::Command, sync::Arc, time::Instant};

use anyhow::{Context, Result, bail};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::Keypair;
use solana_rpc_client::rpc_client::RpcClient;

use crate::{
    cli::{DemoArgs, GlobalOpts},
    commands::send::{RunSpec, run_engine},
    config::{Commitment, Resolved},
    source::{self, LoadedTx},
    validator::{
        LocalValidator, Localnet, LocalnetOptions, ValidatorError,
        locate::{LOCALNET, Program, TEST_VALIDATOR, locate_program},
    },
    workload::{build_self_transfers, wire_bytes},
};

/// What the demo runs on.
enum Chain {
    Single(Box<LocalValidator>),
    Cluster(Box<Localnet>),
}

impl Chain {
    fn start(nodes: u8) -> Result<Chain> {
        if nodes <= 1 {
            ensure(&TEST_VALIDATOR)?;
            say!("starting solana-test-validator on loopback…");
            let v = LocalValidator::start().context("starting the local validator")?;
            say!(
                "validator ready in {:.1} s: RPC {}, websocket {}, TPU QUIC {}, ledger {}",
                v.startup_time().as_secs_f64(),
                v.rpc_url(),
                v.ws_url(),
                v.tpu_quic(),
                v.ledger_path().display()
            );
            return Ok(Chain::Single(Box::new(v)));
        }
        ensure(&LOCALNET)?;
        say!("starting {nodes} validators on loopback (txpace-localnet)…");
        let cluster = Localnet::start(LocalnetOptions {
            nodes: usize::from(nodes),
            ..LocalnetOptions::default()
        })
        .context("starting the local cluster")?;
        if let Some(log) = cluster.forked_start() {
            say!(
                "the first start's nodes forked and rooted nothing (log {}); started a new cluster",
                log.display()
            );
        }
        say!(
            "cluster ready in {:.1} s; sending through node 0's RPC {} (log {}):",
            cluster.startup_time().as_secs_f64(),
            cluster.rpc_url(),
            cluster.log_path().display()
        );
        for (i, node) in cluster.nodes().iter().enumerate() {
            say!("  node {i} {} TPU QUIC {}", node.identity, node.tpu_quic);
        }
        Ok(Chain::Cluster(Box::new(cluster)))
    }

    fn rpc_url(&self) -> String {
        match self {
            Chain::Single(v) => v.rpc_url(),
            Chain::Cluster(c) => c.rpc_url(),
        }
    }

    fn ws_url(&self) -> String {
        match self {
            Chain::Single(v) => v.ws_url(),
            Chain::Cluster(c) => c.ws_url(),
        }
    }

    fn mint(&self) -> &Keypair {
        match self {
            Chain::Single(v) => v.mint_keypair(),
            Chain::Cluster(c) => c.mint_keypair(),
        }
    }

    /// A staked identity keypair file: the validator's, or node 0's.
    fn staked_identity(&self) -> std::path::PathBuf {
        match self {
            Chain::Single(v) => v.identity_keypair_path(),
            Chain::Cluster(c) => c.nodes()[0].identity_keypair.clone(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Chain::Single(_) => "a local validator".to_string(),
            Chain::Cluster(c) => format!("{} local validators", c.nodes().len()),
        }
    }
}

pub fn run(global: &GlobalOpts, args: DemoArgs) -> Result<u8> {
    // From the first validator's start to the last one's removal, Ctrl-C, SIGTERM and a
    // hang-up stop the demo the way `q` does: no validator or ledger is left behind.
    let _signals = crate::interrupt::handle();
    let chain = match Chain::start(args.nodes) {
        Err(e)
            if e.chain()
                .any(|c| matches!(c.downcast_ref(), Some(ValidatorError::Interrupted))) =>
        {
            // Whatever the stop was called (a SIGTERM may come before the hang-up is seen).
            crate::interrupt::detach_dead_outputs();
            say!("demo: {e:#}; nothing was sent");
            return Ok(crate::exit::INTERRUPTED);
        }
        other => other?,
    };
    let txs = workload(&chain, &args)?;
    let mut opts = args.send;
    if args.staked {
        opts.identity = Some(chain.staked_identity());
    }
    let spec = RunSpec {
        resolved: Resolved {
            rpc_url: chain.rpc_url(),
            ws_url: chain.ws_url(),
            commitment: Commitment::Confirmed,
            keypair_path: None,
        },
        opts,
        title: format!(
            "demo: {} self-transfers at {} µlamports/CU on {}",
            txs.len(),
            args.cu_price,
            chain.describe()
        ),
        txs,
        skipped: Vec::new(),
        // The demo keeps no journal: a stopped demo is simply run again.
        resume_hint: None,
        output: global.output,
    };
    let code = run_engine(spec)?;
    drop(chain);
    Ok(code)
}

/// Signs the workload against a fresh blockhash; its 150-block lifetime (about a minute) is the
/// time the demo has to land it, as with any pre-signed file.
fn workload(chain: &Chain, args: &DemoArgs) -> Result<Vec<LoadedTx>> {
    let started = Instant::now();
    let rpc = RpcClient::new_with_commitment(chain.rpc_url(), CommitmentConfig::confirmed());
    let (blockhash, last_valid) = rpc
        .get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())
        .context("getLatestBlockhash from the local validator")?;
    let signed = build_self_transfers(
        std::slice::from_ref(chain.mint()),
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
    say!(
        "signed {} self-transfers in {:.1} s; blockhash {blockhash} valid until block height {last_valid}",
        txs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(txs)
}

/// Installs `program` (and the other Agave binary: one build serves both) with the project's
/// setup script when it is missing and the checkout is at hand; otherwise explains how.
fn ensure(program: &Program) -> Result<()> {
    if locate_program(program).is_ok() {
        return Ok(());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh");
    if !script.exists() {
        bail!("{}", (program.install_hint)());
    }
    say!(
        "{} is not installed; running {} (about 25 minutes on 2 cores, once)",
        program.bin,
        script.display()
    );
    let status = Command::new("bash")
        .arg(&script)
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !status.success() {
        bail!("{} failed ({status})", script.display());
    }
    locate_program(program)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{e}"))
}
