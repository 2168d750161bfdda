//! Starting the validators: Agave's `LocalCluster`, configured for txpace's leader tests.
//!
//! What differs from Agave's test defaults, and why:
//! - every node is in genesis with equal stake and warm-up skipped, so the leader schedule names
//!   every node from slot 0 and rotates every 4 slots;
//! - every node waits for a supermajority at slot 0 and all start together, so the first slots do
//!   not fork while later nodes are still catching up;
//! - block-production forwarding is off, so a transaction lands only through the leader it was
//!   sent to and landings can be attributed;
//! - RPC transaction history is on, so `getTransaction` and searched statuses work;
//! - epochs are short (64 slots by default, see `--slots-per-epoch`) so a run crosses epoch
//!   boundaries and their new schedules; proof of history sleeps instead of hashing, so 2
//!   cores carry several nodes.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use anyhow::{Result, anyhow, bail};
use solana_commitment_config::CommitmentConfig;
use solana_core::validator::ValidatorConfig;
use solana_gossip::contact_info::Protocol;
use solana_keypair::write_keypair_file;
use solana_local_cluster::{
    integration_tests::{DEFAULT_NODE_STAKE, ValidatorKeys},
    local_cluster::{ClusterConfig, DEFAULT_MINT_LAMPORTS, LocalCluster},
    validator_configs::make_identical_validator_configs,
};
use solana_net_utils::SocketAddrSpace;
use solana_poh_config::PohConfig;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;

use txpace_relay::{LinkSpec, Relays};

use crate::manifest::NodeEntry;

/// What `txpace-localnet` starts.
#[derive(Debug, Clone)]
pub struct Shape {
    pub nodes: usize,
    pub slots_per_epoch: u64,
    pub ticks_per_slot: u64,
}

/// A started cluster and its nodes, in the order their keys were made (node 0 bootstraps).
pub struct Running {
    pub cluster: LocalCluster,
    pub nodes: Vec<NodeEntry>,
    /// Node identities in manifest order.
    keys: Vec<ValidatorKeys>,
}

/// Starts the cluster; Agave panics on a node that fails to start, which comes back as an error.
pub fn start(shape: &Shape, dir: &Path) -> Result<Running> {
    let keys: Vec<ValidatorKeys> = (0..shape.nodes).map(|_| ValidatorKeys::new()).collect();
    let mut config = cluster_config(shape, &keys);
    let cluster = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        LocalCluster::new(&mut config, SocketAddrSpace::Unspecified)
    }))
    .map_err(|panic| anyhow!("a validator did not start: {}", panic_text(&panic)))?;
    check_ledgers_inside(cluster, dir).and_then(|cluster| describe(cluster, keys, dir))
}

/// Agave names each node's ledger after the source file that creates it (`file!()`), joined
/// onto `FARF_DIR`: an absolute source path (how cargo compiles registry crates) puts the
/// ledgers next to `solana-local-cluster`'s sources in cargo's registry instead. `setup.sh`
/// builds with `--remap-path-prefix` so that path is relative; a binary built otherwise is
/// stopped here, its stray ledgers removed, rather than filling the registry.
fn check_ledgers_inside(mut cluster: LocalCluster, dir: &Path) -> Result<LocalCluster> {
    let outside: Vec<PathBuf> = cluster
        .validators
        .values()
        .map(|v| v.info.ledger_path.clone())
        .filter(|p| !p.starts_with(dir))
        .collect();
    if outside.is_empty() {
        return Ok(cluster);
    }
    cluster.close_preserve_ledgers();
    for path in &outside {
        let _ = std::fs::remove_dir_all(path);
    }
    bail!(
        "Agave put the ledgers outside {} (at {}): this txpace-localnet was built without \
         `--remap-path-prefix` for cargo's registry; build it with scripts/setup.sh",
        dir.display(),
        outside[0].display()
    )
}

/// The manifest's view of each node, writing its identity keypair into `dir`.
fn describe(cluster: LocalCluster, keys: Vec<ValidatorKeys>, dir: &Path) -> Result<Running> {
    let nodes = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let pubkey = key.node_keypair.pubkey();
            let keypair_path = dir.join(node_keypair_file(i));
            write_keypair_file(&key.node_keypair, &keypair_path)
                .map_err(|e| anyhow!("writing {}: {e}", keypair_path.display()))?;
            let info = cluster
                .validators
                .get(&pubkey)
                .map(|v| &v.info.contact_info)
                .ok_or_else(|| anyhow!("node {pubkey} is missing from the started cluster"))?;
            let missing = |what: &str| anyhow!("node {pubkey} has no {what} address");
            Ok(NodeEntry::new(
                pubkey.to_string(),
                info.rpc().ok_or_else(|| missing("RPC"))?,
                info.rpc_pubsub().ok_or_else(|| missing("pubsub"))?,
                info.tpu(Protocol::QUIC)
                    .ok_or_else(|| missing("TPU QUIC"))?,
                keypair_path,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Running {
        cluster,
        nodes,
        keys,
    })
}

/// The file node `i`'s identity keypair is written to.
pub fn node_keypair_file(i: usize) -> String {
    format!("node-{i}.json")
}

/// Puts a relay in front of every node's TPU QUIC port, node K's with link `links[K]`, and has
/// the node advertise the relay (see `txpace_relay`); `relays` gets them in manifest order.
pub fn front_with_relays(
    running: &mut Running,
    relays: &mut Relays,
    links: Vec<LinkSpec>,
) -> Result<()> {
    for ((node, key), link) in running.nodes.iter_mut().zip(&running.keys).zip(links) {
        let described = link.to_string();
        let addr = relays
            .add(node.tpu_quic, link)
            .map_err(|e| anyhow!("starting {}'s TPU relay: {e}", node.identity))?;
        let validator = running
            .cluster
            .validators
            .get(&key.node_keypair.pubkey())
            .and_then(|v| v.validator.as_ref())
            .ok_or_else(|| anyhow!("node {} is not running", node.identity))?;
        validator
            .cluster_info
            .set_tpu_quic(addr)
            .map_err(|e| anyhow!("advertising {}'s relay: {e:?}", node.identity))?;
        node.tpu_quic = addr;
        node.link = Some(described);
    }
    Ok(())
}

fn cluster_config(shape: &Shape, keys: &[ValidatorKeys]) -> ClusterConfig {
    let mut validator = ValidatorConfig::default_for_test();
    validator.wait_for_supermajority = Some(0);
    validator.enable_block_production_forwarding = false;
    validator.rpc_config.enable_rpc_transaction_history = true;
    let stakes = vec![DEFAULT_NODE_STAKE; shape.nodes];
    ClusterConfig {
        mint_lamports: DEFAULT_MINT_LAMPORTS + stakes.iter().sum::<u64>(),
        validator_configs: make_identical_validator_configs(&validator, shape.nodes),
        validator_keys: Some(keys.iter().map(|k| (k.clone(), true)).collect()),
        node_stakes: stakes,
        slots_per_epoch: shape.slots_per_epoch,
        stakers_slot_offset: shape.slots_per_epoch,
        skip_warmup_slots: true,
        ticks_per_slot: shape.ticks_per_slot,
        poh_config: PohConfig {
            hashes_per_tick: None,
            ..PohConfig::default()
        },
        ..ClusterConfig::default()
    }
}

/// Slots the cluster may reach with nothing rooted before its start counts as stalled: a root
/// needs 32 votes stacked on a slot, so a healthy start roots by slot 40 or so; four times the
/// 32 leaves room for a slow machine.
pub const BOOT_STALL_SLOT: u64 = 4 * 32;
/// The same in time, for a stall in which the slots stop too: a healthy start roots a few
/// seconds after every node lists every node (its slot is then in the twenties or thirties),
/// and this leaves a slow machine many times that.
pub const BOOT_STALL_WAIT: Duration = Duration::from_secs(120);

/// The start forked and cannot recover: with three equal stakes a root needs all three nodes on
/// one fork (two are exactly 2/3, and Agave's vote threshold asks for more than 2/3), so a node
/// that began producing alone while the others were still starting can stall it for good. A new
/// cluster, whose nodes start afresh, usually comes up; `main` exits with its own code for it.
#[derive(Debug)]
pub struct BootStalled {
    pub slot: u64,
    pub waited: Duration,
}

impl std::fmt::Display for BootStalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the nodes forked while starting: {} s after they all met, node 0 is at slot {} and \
             no slot is rooted (the log shows PARTITION DETECTED); a new cluster usually starts \
             cleanly",
            self.waited.as_secs(),
            self.slot
        )
    }
}

impl std::error::Error for BootStalled {}

/// Waits until every node's RPC answers and the cluster has rooted a slot: votes land, so the
/// cluster makes progress and confirms. Gives up `limit` after `started` (the process's start,
/// so the limit covers the nodes' own start too), or with [`BootStalled`] when nothing is rooted
/// by [`BOOT_STALL_SLOT`] or [`BOOT_STALL_WAIT`].
pub fn wait_ready(nodes: &[NodeEntry], started: Instant, limit: Duration) -> Result<()> {
    let deadline = started + limit;
    let late = |what: String| anyhow!("{what} within {} s of the start", limit.as_secs());
    for node in nodes {
        let rpc = RpcClient::new_with_commitment(node.rpc.clone(), CommitmentConfig::processed());
        wait_for(deadline, || rpc.get_slot().is_ok_and(|slot| slot >= 1)).map_err(|()| {
            late(format!(
                "node {} did not answer getSlot at {}",
                node.identity, node.rpc
            ))
        })?;
    }
    // Clients learn TPU addresses from getClusterNodes: every node must list every node at the
    // address in the manifest (a relay's address takes a gossip round to spread).
    for node in nodes {
        let rpc = RpcClient::new(node.rpc.clone());
        wait_for(deadline, || {
            rpc.get_cluster_nodes().is_ok_and(|listed| {
                nodes.iter().all(|want| {
                    listed
                        .iter()
                        .any(|n| n.pubkey == want.identity && n.tpu_quic == Some(want.tpu_quic))
                })
            })
        })
        .map_err(|()| {
            late(format!(
                "node {} did not list every node's TPU QUIC address",
                node.identity
            ))
        })?;
    }
    let first = nodes.first().ok_or_else(|| anyhow!("no nodes"))?;
    let rpc = RpcClient::new(first.rpc.clone());
    let met = Instant::now();
    let mut stalled = None;
    wait_for(deadline, || {
        let rooted = rpc
            .get_slot_with_commitment(CommitmentConfig::finalized())
            .is_ok_and(|slot| slot >= 1);
        if !rooted {
            let tip = rpc
                .get_slot_with_commitment(CommitmentConfig::processed())
                .unwrap_or(0);
            let waited = met.elapsed();
            stalled = (tip >= BOOT_STALL_SLOT || waited >= BOOT_STALL_WAIT)
                .then_some(BootStalled { slot: tip, waited });
        }
        rooted || stalled.is_some()
    })
    .map_err(|()| late("the cluster rooted no slot".to_string()))?;
    match stalled {
        Some(stall) => Err(stall.into()),
        None => Ok(()),
    }
}

fn wait_for(deadline: Instant, mut ready: impl FnMut() -> bool) -> Result<(), ()> {
    while !ready() {
        if Instant::now() >= deadline {
            return Err(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Checks the shape before anything starts.
pub fn check(shape: &Shape) -> Result<()> {
    if shape.nodes == 0 || shape.nodes > 8 {
        bail!("--nodes {} is out of range: 1 to 8 nodes", shape.nodes);
    }
    if shape.slots_per_epoch < 32 {
        bail!(
            "--slots-per-epoch {} is too short: at least 32",
            shape.slots_per_epoch
        );
    }
    if shape.ticks_per_slot == 0 {
        bail!("--ticks-per-slot must be at least 1");
    }
    Ok(())
}
