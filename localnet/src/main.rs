//! `txpace-localnet`: several equally staked Agave validators in one process on loopback, so
//! txpace's leader handling (rotation every 4 slots, hand-over, per-leader backoff and
//! attribution) meets real leaders on one machine.
//!
//! ```text
//! txpace-localnet --nodes 3 --dir DIR [--link-profile mainnet] [--link 1=rtt:85ms,loss:0.5%]
//!   DIR/cluster.json   nodes (identity, rpc, ws, tpu_quic, link) and the mint's keypair file
//!   DIR/mint.json      the genesis mint: fees and rent are zero, there is no faucet
//!   DIR/node-K.json    node K's identity keypair (staked: a staked QUIC client identity)
//!   DIR/ledger/        every node's ledger, removed on SIGTERM/SIGINT
//! ```
//!
//! With relays (`--tpu-relay`, `--link`, `--link-profile`) every node's TPU is reached through a
//! UDP relay with the node's link conditions, and each client of the relays reaches the nodes
//! from a source address of its own (`txpace_relay`, the `relay` crate of this workspace).
//!
//! Exit codes: 0 after a clean stop on a signal, 1 when the cluster cannot start, 2 on bad
//! arguments, 3 when the nodes forked while starting and nothing was rooted (see
//! [`cluster::BootStalled`]: a new start usually succeeds, and txpace makes one).

mod cluster;
mod control;
mod manifest;
mod ports;
mod priority;

use std::{
    io::Write,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::ExitCode,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser};
use signal_hook::{
    consts::{SIGHUP, SIGINT, SIGTERM},
    iterator::Signals,
};
use solana_keypair::write_keypair_file;
use txpace_relay::{LinkSpec, Relays, SourceMode, counters::CounterSink, spec};

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
    /// `blackhole N` / `restore N` on standard input cut and restore node N's, `link N SPEC`
    /// changes its link, `stats` prints the relays' counters.
    #[arg(long)]
    tpu_relay: bool,
    /// Node N's link, each way, handshakes included (implies --tpu-relay): `rtt:85ms` (split
    /// evenly between the directions), `jitter:5ms` (the RTT within ±5 ms, a slowly varying
    /// delay; add `reorder` for jitter independent per datagram), `loss:0.5%` (each way),
    /// `burst:4` (losses in bursts of 4 datagrams on average), `rate:10mbit` and `queue:50ms` (a
    /// bandwidth cap and its tail-drop queue); `off` for none. Repeatable; overrides the profile.
    #[arg(long = "link", value_name = "N=SPEC", value_parser = spec::node_link)]
    links: Vec<(usize, LinkSpec)>,
    /// Every node's link from a profile (implies --tpu-relay): eu (20 ms RTT ±2, 0.1% loss),
    /// na (85 ms ±5, 0.5%), apac (230 ms ±15, 2%), hostile (320 ms ±30, 5% in bursts), mainnet
    /// (the nodes in eu, na and apac in turn).
    #[arg(long, value_name = "NAME")]
    link_profile: Option<String>,
    /// Seed of the links' random choices: the same seed makes the same choices for the same
    /// arrivals.
    #[arg(long, default_value_t = 0)]
    link_seed: u64,
    /// Put every node's RPC and websocket behind a proxy that delays each direction by half
    /// this round trip (`80ms`): a remote RPC provider. The manifest names the proxies.
    #[arg(long, value_name = "RTT", value_parser = spec::duration)]
    rpc_rtt: Option<Duration>,
    /// The source address a node sees for each client of the relays: `client`, one of its own
    /// in 127.1.0.0/16 for each client socket (a 4.0 leader gives each address its own unstaked
    /// budget, as each sender on the internet has); `host`, one for each client address; or
    /// `shared`, all on 127.0.0.1 with one budget.
    #[arg(long, default_value = "client", value_name = "MODE")]
    relay_sources: SourceMode,
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
    let links = match links(&args) {
        Ok(links) => links,
        Err(e) => Args::command()
            .error(clap::error::ErrorKind::ValueValidation, e)
            .exit(),
    };
    match run(&args, links) {
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

/// Every node's link when the nodes get relays, `None` when they do not.
fn links(args: &Args) -> Result<Option<Vec<LinkSpec>>, spec::SpecError> {
    let relays = args.tpu_relay || !args.links.is_empty() || args.link_profile.is_some();
    if !relays {
        return Ok(None);
    }
    spec::node_links(args.link_profile.as_deref(), &args.links, args.nodes).map(Some)
}

fn run(args: &Args, links: Option<Vec<LinkSpec>>) -> Result<()> {
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
    // The nodes' metrics go to this process's own sink, for their TPU servers' counters
    // (`counters` on standard input); its thread starts before the environment is written,
    // and reads none of it.
    let counters = CounterSink::start().context("starting the nodes' metrics sink")?;
    // Agave reads these when it allocates ports, creates ledgers and starts its metrics agent.
    // SAFETY: no other thread reads the environment yet: the sink's does not, and the cluster,
    // the logger and every runtime start after this.
    unsafe {
        std::env::set_var("NEXTEST_TEST_GLOBAL_SLOT", slice.index.to_string());
        std::env::set_var("FARF_DIR", &dir);
        std::env::set_var("SOLANA_METRICS_CONFIG", counters.metrics_config());
    }
    // Warnings only; cluster_slots warns every slot that 32-slot epochs' stakes far ahead
    // are unknown, which says nothing about this cluster's health. The TPU server's module at
    // info: its counters are `datapoint_info!`s, submitted only when that level is on (it logs
    // little else). RUST_LOG overrides it.
    agave_logger::setup_with_default(
        "warn,solana_core::cluster_slots_service=error,solana_streamer::quic=info",
    );
    // Registered before the start, so a stop asked for while nodes start is honoured after it.
    let mut signals =
        Signals::new([SIGTERM, SIGINT, SIGHUP]).context("installing signal handlers")?;

    let started = Instant::now();
    let share = priority::SessionShare::lower();
    let outcome = serve(
        &shape,
        &dir,
        args,
        links,
        &mut signals,
        Start {
            at: started,
            first_port: slice.first_port(),
            counters,
        },
    );
    drop(share);
    let removed = remove_state(&dir, shape.nodes);
    outcome.and(removed)
}

/// What the process set up before the cluster: when it started, its ports and its metrics sink.
struct Start {
    at: Instant,
    first_port: u16,
    counters: CounterSink,
}

fn serve(
    shape: &cluster::Shape,
    dir: &Path,
    args: &Args,
    links: Option<Vec<LinkSpec>>,
    signals: &mut Signals,
    start: Start,
) -> Result<()> {
    let Start {
        at: started,
        first_port,
        counters,
    } = start;
    let mut running = cluster::start(shape, dir)?;
    lower_pollers();
    // Without relays it stays empty, and its runtime thread idle.
    let mut relays = Relays::with_own_runtime(args.relay_sources, args.link_seed)
        .context("starting the TPU relays' runtime")?;
    if let Some(links) = links {
        cluster::front_with_relays(&mut running, &mut relays, links)?;
    }
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
    if let Some(rtt) = args.rpc_rtt {
        delay_rpc(&mut running.nodes, rtt, &relays)?;
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
    let relays = std::sync::Arc::new(relays);
    control::spawn(relays.clone(), counters.clone(), args.stop_on_eof)?;
    if let Some(signal) = signals.forever().next() {
        eprintln!(
            "txpace-localnet: signal {signal}: stopping {} nodes",
            shape.nodes
        );
    }
    // The relays' last counters, for the log: what the links dropped, and what the kernel did.
    for stats in relays.stats() {
        match serde_json::to_string(&stats) {
            Ok(json) => eprintln!("txpace-localnet: relay of node {}: {json}", stats.node),
            Err(e) => eprintln!("txpace-localnet: relay of node {}: {e}", stats.node),
        }
    }
    match serde_json::to_string(&counters.snapshot()) {
        Ok(json) => eprintln!("txpace-localnet: the nodes' TPU servers: {json}"),
        Err(e) => eprintln!("txpace-localnet: the nodes' TPU servers: {e}"),
    }
    running.cluster.close_preserve_ledgers();
    Ok(())
}

/// Puts a delaying proxy in front of each node's RPC and websocket (`--rpc-rtt`); the nodes'
/// own addresses stay as they are, only what the manifest hands to clients changes. The proxies
/// run on the relays' runtime.
fn delay_rpc(nodes: &mut [manifest::NodeEntry], rtt: Duration, relays: &Relays) -> Result<()> {
    let proxied = |url: &str, scheme: &str| -> Result<String> {
        let addr: SocketAddr = url
            .strip_prefix(scheme)
            .and_then(|a| a.parse().ok())
            .with_context(|| format!("{url} is not {scheme}ADDRESS:PORT"))?;
        let proxy = txpace_relay::tcp::delay_proxy(addr, rtt, relays.runtime())
            .with_context(|| format!("starting a delay proxy for {url}"))?;
        Ok(format!("{scheme}{proxy}"))
    };
    for node in nodes {
        node.rpc = proxied(&node.rpc, "http://")?;
        node.ws = proxied(&node.ws, "ws://")?;
    }
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
