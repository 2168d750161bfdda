//! The founding workload and where it goes: a local validator, its endpoints and funded mint,
//! and `txpace gen` writing the workload's file.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use txpace::validator::{LocalValidator, Localnet, ValidatorOptions};

use crate::{child, measure};

/// The founding workload's compute-unit price (µlamports) and limit: `txpace gen`'s defaults,
/// which Agave's contender builds its messages with too.
pub(crate) const CU_PRICE: u64 = 1_000_000;
pub(crate) const CU_LIMIT: u32 = 1_000;

/// The pace every contender of `send`, `cluster` and `faults` is held to, in tx/s: the legacy
/// TpuClient's (it sleeps 10 ms between sends), txpace's default, and tpu-client-next's
/// (`next-send --rate`).
pub(crate) const PACE_TPS: f64 = 100.0;

/// Slots per epoch of the benchmark's clusters (`txpace-localnet` defaults to 64, for tests).
/// A node serves the leader schedule only to the end of the epoch after its root's, and the
/// root trails the tip by 32 slots or more; tpu-client-next asks for the next 200 slots' leaders
/// (`min(200, slots in the epoch)`) and fails while any of them is unknown. On 64-slot epochs
/// that is half the time, in spells of some 12 s: its start gave up ("Failed to initialize
/// LeaderTpuCacheService") in 3 of 5 scenarios of one run, and a running client finds no
/// leader to send to. Mainnet's epochs are 432,000 slots; with 1,024 every 200-slot range
/// ahead is served while the root trails by under 825 slots, and a long benchmark still
/// crosses epochs.
pub(crate) const SLOTS_PER_EPOCH: u64 = 1_024;
/// tpu-client-next's look-ahead (`2 × MAX_FANOUT_SLOTS` in its leader cache) and a generous
/// bound on the root's lag behind the tip on a loaded 2-core machine.
const NEXT_LOOKAHEAD_SLOTS: u64 = 200;
const ROOT_LAG_SLOTS: u64 = 256;
// Every range of the next 200 slots lies within the root's epoch and the one after it.
const _: () = assert!(SLOTS_PER_EPOCH >= NEXT_LOOKAHEAD_SLOTS + ROOT_LAG_SLOTS);

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
    let mut cmd = child::txpace()?;
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

/// The benchmark process's scratch directory (defined beside the children's sandbox, which
/// lives in it).
pub(crate) use crate::child::tempfile_dir;
