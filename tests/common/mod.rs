//! Helpers shared by both test harnesses (`tests/fast`, `tests/e2e`): running the real `txpace`
//! binary, tests that need a process of their own, and proving that
//! transactions land on a real validator.
#![allow(dead_code)] // each harness uses a different subset

pub mod budget;
pub mod metrics;
pub mod own_process;
pub mod pty;
pub mod scenarios;
pub mod schema;
pub mod secrets;
pub mod sim;
pub mod tool;

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    process::{Command, Output},
    thread,
    time::{Duration, Instant},
};

use serde_json::Value;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSendTransactionConfig;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;
use txpace::validator::{LocalValidator, ValidatorOptions};

/// The `txpace` binary built for this test run, with an empty Solana CLI config so the
/// developer's own `~/.config/solana/cli/config.yml` cannot leak into a test.
pub fn txpace(dir: &Path) -> Command {
    let config = dir.join("empty-cli-config.yml");
    if !config.exists() {
        std::fs::write(&config, "").expect("writing an empty CLI config");
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_txpace"));
    cmd.arg("--config").arg(config);
    cmd
}

/// Runs a command, panicking with its output unless it exits with `code`.
pub fn run_expect(cmd: &mut Command, code: i32) -> Output {
    let out = cmd.output().expect("running txpace");
    assert_eq!(
        out.status.code(),
        Some(code),
        "{cmd:?}\n--- stdout:\n{}\n--- stderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What became of a batch of submitted transactions.
#[derive(Debug, Default)]
pub struct Landing {
    /// Reached the commitment without error.
    pub confirmed: Vec<Signature>,
    /// Landed with an error.
    pub failed: Vec<(Signature, String)>,
    /// Not seen at the commitment before the deadline.
    pub missing: Vec<Signature>,
}

/// Submits every transaction once over RPC without preflight (preflight would check a fresh
/// `confirmed` blockhash against `finalized` state and refuse it), then polls statuses, 256
/// signatures per call, until all reach `confirmed` or `timeout` passes.
pub fn submit_and_confirm(
    rpc: &RpcClient,
    txs: &[VersionedTransaction],
    timeout: Duration,
) -> Landing {
    let config = RpcSendTransactionConfig {
        skip_preflight: true,
        ..Default::default()
    };
    for tx in txs {
        rpc.send_transaction_with_config(tx, config)
            .unwrap_or_else(|e| panic!("sendTransaction {}: {e}", tx.signatures[0]));
    }
    let confirmed = CommitmentConfig::confirmed();
    let mut pending: Vec<Signature> = txs.iter().map(|t| t.signatures[0]).collect();
    let mut landing = Landing::default();
    let mut outcome: HashMap<Signature, Option<String>> = HashMap::new();
    let deadline = Instant::now() + timeout;
    while !pending.is_empty() && Instant::now() < deadline {
        for chunk in pending.chunks(256) {
            let statuses = rpc
                .get_signature_statuses(chunk)
                .expect("getSignatureStatuses")
                .value;
            for (sig, status) in chunk.iter().zip(statuses) {
                if let Some(status) = status.filter(|s| s.satisfies_commitment(confirmed)) {
                    outcome.insert(*sig, status.err.map(|e| e.to_string()));
                }
            }
        }
        pending.retain(|s| !outcome.contains_key(s));
        if !pending.is_empty() {
            thread::sleep(Duration::from_millis(400));
        }
    }
    for tx in txs {
        let sig = tx.signatures[0];
        match outcome.remove(&sig) {
            Some(None) => landing.confirmed.push(sig),
            Some(Some(err)) => landing.failed.push((sig, err)),
            None => landing.missing.push(sig),
        }
    }
    landing
}

/// A validator with a startup allowance for a busy 2-core machine (up to three validators may
/// start at once); says where it is and how long it took.
pub fn start_validator(options: ValidatorOptions) -> LocalValidator {
    let v = options
        .startup_timeout(Duration::from_secs(180))
        .start()
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "validator at {} ready in {:.1} s (tpu_quic {}, ledger {})",
        v.rpc_url(),
        v.startup_time().as_secs_f64(),
        v.tpu_quic(),
        v.ledger_path().display()
    );
    v
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("report {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("report {} is not JSON: {e}", path.display()))
}

/// Reads the report of `txpace send` or `demo` and checks it against
/// `assets/report.schema.json`.
pub fn read_report(path: &Path) -> Value {
    let report = read_json(path);
    schema::assert_conforms(schema::Kind::Run, &report);
    report
}

/// Reads the report of `txpace deploy` and checks it against
/// `assets/deploy-report.schema.json`.
pub fn read_deploy_report(path: &Path) -> Value {
    let report = read_json(path);
    schema::assert_conforms(schema::Kind::Deploy, &report);
    report
}

/// `txpace gen` signing with the validator's mint and writing to `out`; callers add `-n` and
/// any other options.
pub fn gen_command(v: &LocalValidator, dir: &Path, out: &Path) -> Command {
    let mut cmd = txpace(dir);
    cmd.args(["gen", "--url", &v.rpc_url(), "--keypair"])
        .arg(v.mint_keypair_path())
        .arg("--out")
        .arg(out);
    cmd
}

/// `txpace send --no-tui` on `url` and `ws`, its data (logs, journal) under `dir`; callers
/// add the files and options.
pub fn send_to(dir: &Path, url: &str, ws: &str) -> Command {
    let mut cmd = txpace(dir);
    cmd.env("XDG_DATA_HOME", dir)
        .args(["send", "--no-tui", "--url", url, "--ws", ws]);
    cmd
}

/// [`send_to`] `v`'s RPC and websocket.
pub fn send_command(v: &LocalValidator, dir: &Path) -> Command {
    send_to(dir, &v.rpc_url(), &v.ws_url())
}

/// Writes `n` fresh self-transfers signed by the validator's mint, all on one fresh blockhash.
pub fn generate(v: &LocalValidator, dir: &Path, name: &str, n: usize) -> PathBuf {
    let out = dir.join(name);
    run_expect(gen_command(v, dir, &out).args(["-n", &n.to_string()]), 0);
    out
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
