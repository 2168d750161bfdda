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
