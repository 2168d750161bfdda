//! `txpace-localnet`: several equally staked Agave validators in one process on loopback, so
//! txpace's leader handling (rotation every 4 slots, hand-over, per-leader backoff and
//! attribution) meets real leaders on one machine.
//!
//! ```text
//! txpace-localnet --nodes 3 --dir DIR
//!   DIR/cluster.json   nodes (identity, rpc, ws, tpu_quic) and the mint's keypair file
//!   DIR/mint.json      the genesis mint: fees and rent are zero, there is no faucet
//!   DIR/node-K.json    node K's identity keypair (staked: a staked QUIC client identity)
//!   DIR/ledger/        every node's ledger, removed on SIGTERM/SIGINT
//! ```
//!
//! Exit codes: 0 after a clean stop on a signal, 1 when the cluster cannot start, 2 on bad
//! arguments, 3 when the nodes forked while starting and nothing was rooted (see
//! [`cluster::BootStalled`]: a new start usually succeeds, and txpace makes one).

mod cluster;
mod control;
mod manifest;
mod ports;
mod priority;
mod relay;

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use clap::Parser;
use signal_hook::{
    consts::{SIGHUP, SIGINT, SIGTERM},
    iterator::Signals,
};
use solana_keypair::write_keypair_file;

const MINT_FILE: &str = "mint.json";
/// The exit code of a start that forked and stalled ([`cluster::BootStalled`]).
const BOOT_STALLED_EXIT: u8 = 3;

/// Several staked Agave 4.0 validators on 127.0.0.1 for txpace's leader-rotation tests.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Validators to start, all staked equally and in genesis (1 to 8).
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Where cluster.json, mint.json and the ledgers go; created if missing.
    #[arg(long)]
    dir: PathBuf,
    /// Slots per epoch (at least 32): each epoch draws a new leader schedule. A node serves
    /// the schedule only up to the end of the epoch after its root's, and the root trails the
    /// tip by 32 slots or more: with 32-slot epochs the current epoch's schedule is unknown for
    /// its first slots, so the default is 64 (26 s, still a new schedule every 2,000
    /// transactions at 100 tx/s).
    #[arg(long, default_value_t = 64)]
    slots_per_epoch: u64,
    /// Ticks per slot; with 160 ticks a second, 64 gives 400 ms slots.
    #[arg(long, default_value_t = 64)]
    ticks_per_slot: u64,
    /// Port slice (0 to 17) instead of the first free one; slice K uses ports from 2000 + K × 992.
    #[arg(long)]
    port_slice: Option<u16>,
    /// Put a switchable relay in front of each node's TPU QUIC port and advertise it instead;
    /// `blackhole N` / `restore N` on standard input cut and restore node N's.
    #[arg(long)]
    tpu_relay: bool,
    /// Stop when standard input closes: a parent holding the other end (txpace's test harness)
    /// never leaves a cluster running behind it, even when it is killed.
    #[arg(long)]
    stop_on_eof: bool,
    /// Seconds allowed from the process's start until every node answers and a slot is rooted.
    #[arg(long, default_value_t = 180)]
    startup_timeout: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("txpace-localnet: {error:#}");
            if error.downcast_ref::<cluster::BootStalled>().is_some() {
                ExitCode::from(BOOT_STALLED_EXIT)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn run(args: &Args) -> Result<()> {
    let shape = cluster::Shape {
        nodes: args.nodes,
        slots_per_epoch: args.slots_per_epoch,
        ticks_per_slot: args.ticks_per_slot,
    };
    cluster::check(&shape)?;
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let dir = args
        .dir
        .canonicalize()
        .with_context(|| format!("resolving {}", args.dir.display()))?;
    let slice = ports::claim(args.port_slice)?;
    // Agave reads both when it allocates ports and creates ledgers; no other thread runs yet.
    // SAFETY: single-threaded here, before the cluster, the logger or any runtime starts.
    unsafe {
        std::env::set_var("NEXTEST_TEST_GLOBAL_SLOT", slice.index.to_string());
        std::env::set_var("FARF_DIR", &dir);
    }
    // Warnings only; cluster_slots warns every slot that 32-slot epochs' stakes far ahead
    // are unknown, which says nothing about this cluster's health. RUST_LOG overrides it.
    agave_logger::setup_with_default("warn,solana_core::cluster_slots_service=error");
    // Registered before the start, so a stop asked for while nodes start is honoured after it.
    let mut signals =
        Signals::new([SIGTERM, SIGINT, SIGHUP]).context("installing signal handlers")?;

    let started = Instant::now();
    let share = priority::SessionShare::lower();
    let outcome = serve(
        &shape,
        &dir,
        args,
        &mut signals,
        started,
        slice.first_port(),
    );
    drop(share);
    let removed = remove_state(&dir, shape.nodes);
    outcome.and(removed)
}

fn serve(
    shape: &cluster::Shape,
    dir: &Path,
    args: &Args,
    signals: &mut Signals,
    started: Instant,
    first_port: u16,
) -> Result<()> {
    let mut running = cluster::start(shape, dir)?;
    lower_pollers();
    let relays = if args.tpu_relay {
        cluster::front_with_relays(&mut running)?
    } else {
        Vec::new()
    };
    cluster::wait_ready(
        &running.nodes,
        started,
        Duration::from_secs(args.startup_timeout),
    )?;
    // Again, for any polling thread a node started after its own start.
    lower_pollers();
    if let Some(signal) = signals.pending().next() {
        eprintln!("txpace-localnet: signal {signal} during the start: stopping");
        running.cluster.close_preserve_ledgers();
        return Ok(());
    }
    let mint = dir.join(MINT_FILE);
    write_keypair_file(&running.cluster.funding_keypair, &mint)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", mint.display()))?;
    let manifest = manifest::write(
        dir,
        &manifest::Manifest {
            nodes: std::mem::take(&mut running.nodes),
            mint,
        },
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "txpace-localnet: ready: {} nodes in {:.1} s, ports from {first_port}, {}",
        shape.nodes,
        started.elapsed().as_secs_f64(),
        manifest.display()
    )?;
    out.flush()?;
    drop(out);
    control::spawn(std::sync::Arc::new(relays), args.stop_on_eof)?;
    if let Some(signal) = signals.forever().next() {
        eprintln!(
            "txpace-localnet: signal {signal}: stopping {} nodes",
            shape.nodes
        );
    }
    running.cluster.close_preserve_ledgers();
    Ok(())
}

/// See [`priority`]: without it three nodes on 2 cores starve themselves. Not fatal when `/proc`
/// cannot be read: the cluster still works, only slower.
fn lower_pollers() {
    match priority::lower_pollers() {
        Ok(n) => log::info!("{n} polling threads moved to nice 19"),
        Err(e) => log::warn!("polling threads keep their priority: /proc/self/task: {e}"),
    }
}

/// Removes what described or held the stopped cluster: the manifest first (a reader must not
/// take a stopped cluster for a ready one), the mint, and the ledgers under `DIR/ledger`
/// (Agave's `FARF_DIR`).
fn remove_state(dir: &Path, nodes: usize) -> Result<()> {
    let keypairs = (0..nodes).map(cluster::node_keypair_file);
    for file in [manifest::FILE_NAME.to_string(), MINT_FILE.to_string()]
        .into_iter()
        .chain(keypairs)
    {
        remove(&dir.join(file), |p| std::fs::remove_file(p))?;
    }
    remove(&dir.join("ledger"), |p| std::fs::remove_dir_all(p))
}

fn remove(path: &Path, how: fn(&Path) -> std::io::Result<()>) -> Result<()> {
    match how(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("removing {}", path.display())),
    }
}
