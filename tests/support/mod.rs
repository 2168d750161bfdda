//! Helpers for tests that run `txpace send` as a child and hold its report up against the chain
//! (the fault, resume, cluster and hang-up end-to-end tests, and the input-format tests of the
//! fast harness); `tests/common` holds what both harnesses share (the real binary, own-process
//! tests, landings on a real validator).
#![allow(dead_code)] // each harness uses a different subset

pub mod proxy;

use std::{
    collections::HashMap,
    fs::File,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    str::FromStr,
    time::{Duration, Instant},
};

use serde_json::Value;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signature::Signature;
use solana_transaction_status_client_types::TransactionStatus;

use crate::common::send_to;
#[allow(unused_imports)] // not every crate that includes this module uses each
pub use crate::common::{generate, read_report, start_validator};

/// A `txpace send --no-tui` command with its data directory (logs, default journals) in `dir`.
pub fn send_command(dir: &Path, url: &str, ws: &str, file: &Path, extra: &[&str]) -> Command {
    let mut cmd = send_to(dir, url, ws);
    cmd.arg(file).args(extra);
    cmd
}

/// A finished `txpace send`.
#[derive(Debug)]
pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// A `txpace send` running in the background, its output going to `<name>.out` / `<name>.err`
/// in `dir` (pipes could fill up while the test is busy hurting the validator).
pub struct Running {
    child: Child,
    started: Instant,
    out: PathBuf,
    err: PathBuf,
}

impl Running {
    pub fn spawn(mut cmd: Command, dir: &Path, name: &str) -> Self {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let started = Instant::now();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(File::create(&out).expect("stdout file"))
            .stderr(File::create(&err).expect("stderr file"))
            .spawn()
            .expect("spawning txpace send");
        Running {
            child,
            started,
            out,
            err,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sleeps until `at` after the start.
    pub fn sleep_until(&self, at: Duration) {
        if let Some(left) = at.checked_sub(self.started.elapsed()) {
            std::thread::sleep(left);
        }
    }

    /// Waits until the journal it writes at `journal` shows `ready` of its tally (confirmed,
    /// failed, expired, sent without outcome), read every 100 ms; panics with the last tally
    /// after `limit`. A state of the run, not a time: a busy machine starts a run late.
    pub fn wait_for_journal(
        &self,
        journal: &Path,
        limit: Duration,
        ready: impl Fn((usize, usize, usize, usize)) -> bool,
    ) {
        let deadline = Instant::now() + limit;
        let mut last = None;
        while Instant::now() < deadline {
            if let Ok(replay) = txpace::journal::read(journal) {
                let tally = replay.tally();
                if ready(tally) {
                    return;
                }
                last = Some(tally);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "the journal {} did not reach the state waited for in {limit:?} (last tally \
             (confirmed, failed, expired, sent): {last:?}); stderr:\n{}",
            journal.display(),
            self.stderr_now()
        );
    }

    /// What it printed so far.
    pub fn stderr_now(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// SIGKILL: no chance to flush anything.
    pub fn kill9(mut self) -> Finished {
        self.child.kill().expect("SIGKILL");
        self.wait(Duration::from_secs(10))
    }

    /// Waits for the exit, killing it after `timeout` (the test then fails on the exit code).
    pub fn wait(mut self, timeout: Duration) -> Finished {
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait().expect("waiting for txpace") {
                Some(status) => break status,
                None if Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    break self.child.wait().expect("reaping txpace");
                }
                None => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        let took = self.started.elapsed();
        let code = status.code().unwrap_or(-1);
        Finished {
            code,
            stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.err).unwrap_or_default(),
            took,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The signatures of a file of signed transactions, in its order.
pub fn signatures_of(file: &Path) -> Vec<Signature> {
    let loaded = txpace::source::load_with_progress(
        &[file.to_path_buf()],
        txpace::cli::InputFormat::Auto,
        &|_| {},
    )
    .expect("load");
    assert!(loaded.invalid.is_empty(), "{}", file.display());
    loaded.valid.iter().map(|t| t.signature).collect()
}

/// What the chain says of each signature: `None` never landed (as far as the node knows),
/// `Some(None)` landed without error, `Some(Some(e))` landed with error `e`. Uses the
/// transaction history, so it also answers after a validator restart.
pub fn chain_statuses(
    rpc: &RpcClient,
    sigs: &[Signature],
) -> HashMap<Signature, Option<Option<String>>> {
    statuses_with_history(rpc, sigs)
        .into_iter()
        .map(|(sig, st)| (sig, st.map(|s| s.err.map(|e| e.to_string()))))
        .collect()
}

/// `getSignatureStatuses` with `searchTransactionHistory`, 256 signatures per call.
pub fn statuses_with_history(
    rpc: &RpcClient,
    sigs: &[Signature],
) -> HashMap<Signature, Option<TransactionStatus>> {
    let mut out = HashMap::new();
    for chunk in sigs.chunks(256) {
        let statuses = rpc
            .get_signature_statuses_with_history(chunk)
            .expect("getSignatureStatuses");
        out.extend(chunk.iter().copied().zip(statuses.value));
    }
    out
}

/// Every report record's status matches the chain: confirmed or finalized exactly when the chain
/// has it landed without error, failed when it landed with one, expired when it never landed.
/// Returns (confirmed, failed, expired).
pub fn assert_report_agrees_with_chain(
    rpc: &RpcClient,
    report: &Value,
    n: usize,
) -> (usize, usize, usize) {
    let txs = report["transactions"].as_array().expect("transactions");
    assert_eq!(txs.len(), n, "{:#}", report["summary"]);
    let sigs: Vec<Signature> = txs
        .iter()
        .map(|t| Signature::from_str(t["signature"].as_str().unwrap_or("")).expect("signature"))
        .collect();
    let chain = chain_statuses(rpc, &sigs);
    let mut counts = (0, 0, 0);
    for (t, sig) in txs.iter().zip(&sigs) {
        let status = t["status"].as_str().unwrap_or("");
        let on_chain = chain.get(sig).cloned().flatten();
        match status {
            "confirmed" | "finalized" => {
                assert_eq!(
                    on_chain,
                    Some(None),
                    "report says {status}, chain disagrees: {t:#}"
                );
                assert!(t["landed_slot"].as_u64().is_some(), "{t:#}");
                counts.0 += 1;
            }
            "failed" => {
                assert!(
                    matches!(on_chain, Some(Some(_))),
                    "report says failed, chain: {on_chain:?}: {t:#}"
                );
                counts.1 += 1;
            }
            "expired" => {
                assert_eq!(on_chain, None, "report says expired, chain has it: {t:#}");
                counts.2 += 1;
            }
            other => panic!("unfinished status {other:?} in a finished run: {t:#}"),
        }
    }
    let s = &report["summary"];
    assert_eq!(
        (
            s["confirmed"].as_u64(),
            s["failed"].as_u64(),
            s["expired"].as_u64()
        ),
        (
            Some(counts.0 as u64),
            Some(counts.1 as u64),
            Some(counts.2 as u64)
        ),
        "{s:#}"
    );
    counts
}

/// Every file under `dir`, recursively (one helper for every test crate).
#[allow(unused_imports)] // not every crate that includes this module lists files
pub use crate::common::files_under;

/// The address in an `http://IP:PORT` or `ws://IP:PORT` URL.
pub fn socket_of(url: &str) -> SocketAddr {
    url.rsplit("//")
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {url}"))
}

/// The log file a `txpace send` named on its last lines ("log: PATH").
pub fn log_file_of(stdout: &str) -> Option<PathBuf> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("log: "))
        .map(PathBuf::from)
}
