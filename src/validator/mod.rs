//! A real `solana-test-validator` for tests, benchmarks and `txpace demo`, and a real cluster of
//! several validators ([`Localnet`]) where leaders must rotate.
//!
//! Everything txpace claims about landing transactions is proven against a real validator, not a
//! mock, so starting one must be cheap, isolated and loud when it fails: each [`LocalValidator`]
//! gets its own temporary ledger and its own block of loopback ports (see [`ports`]), so any
//! number can run in parallel from threads and separate test processes; a missing binary is an
//! error with install instructions, never a skipped test; a validator that does not come up is an
//! error that names its log and quotes its last lines.
//!
//! The API is blocking. It uses the blocking [`RpcClient`], which runs its own tokio runtime:
//! calling it from inside a current-thread tokio runtime (the default of `#[tokio::test]`) panics,
//! and inside a multi-thread runtime it blocks a worker. From async code, start and control the
//! validator in `tokio::task::spawn_blocking` or before entering the runtime.

mod cluster;
mod cluster_control;
mod error;
mod files;
pub mod locate;
mod options;
pub mod ports;
mod signal;

use std::{
    ffi::OsString,
    fs::File,
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, write_keypair_file};
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;

pub use cluster::{ClusterNode, DEFAULT_CLUSTER_STARTUP, Localnet, LocalnetOptions};
pub use error::ValidatorError;
use files::{TempDir, create_dir, keep_beside, read_keypair, tail_lines};
pub use locate::{VALIDATOR_ENV, install_hint, locate};
pub use options::ValidatorOptions;
use ports::PortBlock;

/// Default time allowed from spawn until `getSlot` > 0. A debug-built test run on a busy 2-core
/// machine can take tens of seconds where a laptop takes five.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// File in the working directory holding the mint keypair; for a kept ledger it lives in the
/// ledger itself so a later start on that ledger can find the keypair its genesis funded.
/// How long one call of the start's readiness polls may take (see `polling_client`): far
/// above a loopback answer even on a loaded machine; a call that times out is just asked again.
const POLL_TIMEOUT: Duration = Duration::from_secs(1);
const MINT_FILE: &str = "txpace-mint.json";
/// Where the validator's stdout and stderr go: startup errors are printed there, not logged.
const OUTPUT_FILE: &str = "txpace-validator.out";
/// Lines of log quoted in startup errors.
const TAIL_LINES: usize = 25;

/// A running `solana-test-validator` on 127.0.0.1, killed (and waited for) when dropped.
///
/// Blocking: do not call its methods from inside a tokio runtime (see the module docs).
#[derive(Debug)]
pub struct LocalValidator {
    child: Option<Child>,
    program: PathBuf,
    /// Arguments for a start that keeps the ledger (no `--reset`).
    args: Vec<OsString>,
    ports: PortBlock,
    ledger: PathBuf,
    work_dir: PathBuf,
    mint: Keypair,
    mint_path: PathBuf,
    identity: Keypair,
    tpu_quic: SocketAddr,
    startup_timeout: Duration,
    startup_time: Duration,
    paused: bool,
    /// Declared last so it is removed after the process is gone.
    temp: Option<TempDir>,
}

impl LocalValidator {
    /// Starts a validator on a fresh temporary ledger with the default options.
    pub fn start() -> Result<Self, ValidatorError> {
        Self::start_with(ValidatorOptions::default())
    }

    pub fn builder() -> ValidatorOptions {
        ValidatorOptions::default()
    }

    pub fn start_with(options: ValidatorOptions) -> Result<Self, ValidatorError> {
        let program = match &options.program {
            Some(p) => p.clone(),
            None => locate()?,
        };
        let ports = PortBlock::claim()?;
        let (temp, work_dir, ledger, reset) = match &options.ledger {
            Some(dir) => {
                create_dir(dir)?;
                (None, dir.clone(), dir.clone(), false)
            }
            None => {
                let temp = TempDir::new("txpace-validator")?;
                let work = temp.path().to_path_buf();
                // The ledger is a subdirectory because `--reset` empties the ledger directory,
                // which would delete the mint keypair and the output file.
                let ledger = work.join("ledger");
                (Some(temp), work, ledger, true)
            }
        };
        let mint_path = work_dir.join(MINT_FILE);
        let mint = if mint_path.exists() {
            read_keypair(&mint_path)?
        } else if ledger.join("genesis.bin").exists() {
            return Err(ValidatorError::UnknownMint(ledger));
        } else {
            let mint = Keypair::new();
            write_keypair_file(&mint, &mint_path).map_err(|e| ValidatorError::Keypair {
                path: mint_path.clone(),
                reason: e.to_string(),
            })?;
            mint
        };

        let (dyn_lo, dyn_hi) = ports.dynamic_range();
        let mut args: Vec<OsString> = vec![
            "--ledger".into(),
            ledger.clone().into(),
            "--quiet".into(),
            "--mint".into(),
            mint.pubkey().to_string().into(),
            "--bind-address".into(),
            "127.0.0.1".into(),
            "--rpc-port".into(),
            ports.rpc().to_string().into(),
            "--faucet-port".into(),
            ports.faucet().to_string().into(),
            "--gossip-port".into(),
            ports.gossip().to_string().into(),
            "--dynamic-port-range".into(),
            format!("{dyn_lo}-{dyn_hi}").into(),
        ];
        args.extend(options.extra_args.iter().cloned());

        let mut validator = LocalValidator {
            child: None,
            program,
            args,
            ports,
            ledger,
            work_dir,
            mint,
            mint_path,
            // Replaced once the validator has written its identity.
            identity: Keypair::new(),
            tpu_quic: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            startup_timeout: options.startup_timeout,
            startup_time: Duration::ZERO,
            paused: false,
            temp,
        };
        validator.launch(reset)?;
        Ok(validator)
    }

    /// Spawns the process and waits until it serves slots, then learns its identity and TPU.
    fn launch(&mut self, reset: bool) -> Result<(), ValidatorError> {
        let output_path = self.output_path();
        let output = File::options()
            .create(true)
            .append(true)
            .open(&output_path)
            .map_err(|source| ValidatorError::Io {
                path: output_path.clone(),
                source,
            })?;
        let output_err = output.try_clone().map_err(|source| ValidatorError::Io {
            path: output_path.clone(),
            source,
        })?;
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if reset {
            command.arg("--reset");
        }
        command
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(output_err);
        let started = Instant::now();
        let child = command.spawn().map_err(|source| ValidatorError::Spawn {
            program: self.program.clone(),
            source,
        })?;
        self.child = Some(child);
        self.paused = false;
        self.wait_ready(started)?;
        let identity_path = self.ledger.join("validator-keypair.json");
        self.identity = read_keypair(&identity_path)?;
        self.tpu_quic = self.wait_tpu_quic(started)?;
        self.startup_time = started.elapsed();
        Ok(())
    }

    fn wait_ready(&mut self, started: Instant) -> Result<(), ValidatorError> {
        let rpc = self.polling_client();
        let mut last;
        loop {
            if crate::interrupt::requested().is_some() {
                self.kill();
                return Err(ValidatorError::Interrupted);
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                let (log, tail) = self.failed_start_record();
                return Err(ValidatorError::ExitedEarly { status, log, tail });
            }
            match rpc.get_slot() {
                Ok(slot) if slot > 0 => return Ok(()),
                Ok(slot) => last = format!("getSlot answered {slot}"),
                Err(e) => last = format!("getSlot: {e}"),
            }
            if started.elapsed() >= self.startup_timeout {
                self.kill();
                let (log, tail) = self.failed_start_record();
                return Err(ValidatorError::NotReady {
                    timeout: self.startup_timeout,
                    last,
                    log,
                    tail,
                });
            }
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// The node shows up in its own gossip table right after start; the loop only covers the
    /// moment before it does.
    fn wait_tpu_quic(&mut self, started: Instant) -> Result<SocketAddr, ValidatorError> {
        let rpc = self.polling_client();
        let me = self.identity.pubkey().to_string();
        loop {
            if crate::interrupt::requested().is_some() {
                self.kill();
                return Err(ValidatorError::Interrupted);
            }
            // A call that timed out is asked again, until the start's own deadline.
            let nodes = rpc.get_cluster_nodes();
            if let Some(addr) = nodes.as_ref().ok().and_then(|nodes| {
                nodes
                    .iter()
                    .find(|n| n.pubkey == me)
                    .and_then(|n| n.tpu_quic)
            }) {
                return Ok(addr);
            }
            if started.elapsed() >= self.startup_timeout {
                return Err(match nodes {
                    Err(e) => ValidatorError::Rpc {
                        call: "getClusterNodes",
                        url: self.rpc_url(),
                        source: Box::new(e),
                    },
                    Ok(_) => ValidatorError::NoTpuQuic,
                });
            }
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// The client the start's waits poll with. Its calls time out after [`POLL_TIMEOUT`]: a
    /// starting validator can accept a connection and not answer for seconds, and the waits
    /// look for a stop request (Ctrl-C, a hang-up) only between calls — with the 5 s it had, a
    /// hung-up `demo` could outlive the 3 s it has to be gone.
    fn polling_client(&self) -> RpcClient {
        RpcClient::new_with_timeout_and_commitment(
            self.rpc_url(),
            POLL_TIMEOUT,
            CommitmentConfig::confirmed(),
        )
    }

    /// Kills the process and waits for it. Idempotent.
    pub fn stop(&mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGKILL also ends a SIGSTOPped process.
            let _ = child.kill();
            let _ = child.wait();
        }
        self.paused = false;
    }

    /// Stops the validator and starts it again on the same ledger and ports, keeping its chain,
    /// mint and identity (the first start's `--reset` is not repeated).
    ///
    /// Its vote tower is not kept: a validator killed mid-slot can come back on a ledger without
    /// the slot its tower last voted on, and then, alone in its cluster, it never has the stake
    /// to switch forks and never votes again (the e2e restart test once waited 180 s on
    /// "Waiting to switch vote … FailedSwitchThreshold"). A one-node cluster has no other
    /// voter its tower could protect.
    pub fn restart(&mut self) -> Result<(), ValidatorError> {
        self.kill();
        self.forget_tower();
        self.launch(false)
    }

    /// Removes the ledger's vote tower files (`tower-1_9-<identity>.bin`, as `solana-core`'s
    /// file tower storage names them); one that cannot be removed is left to the validator.
    fn forget_tower(&self) {
        let Ok(entries) = std::fs::read_dir(&self.ledger) else {
            return;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("tower-")
                && let Err(e) = std::fs::remove_file(entry.path())
            {
                log::warn!("removing {}: {e}", entry.path().display());
            }
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn rpc_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports.rpc())
    }

    pub fn ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.ports.pubsub())
    }

    /// A blocking client at `confirmed` (see the module docs about tokio).
    pub fn rpc_client(&self) -> RpcClient {
        RpcClient::new_with_commitment(self.rpc_url(), CommitmentConfig::confirmed())
    }

    /// The TPU QUIC address from `getClusterNodes`.
    pub fn tpu_quic(&self) -> SocketAddr {
        self.tpu_quic
    }

    pub fn faucet_addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.ports.faucet()))
    }

    /// The keypair funded by genesis (500,000,000 SOL).
    pub fn mint_keypair(&self) -> &Keypair {
        &self.mint
    }

    /// The mint keypair as a Solana JSON keypair file, for `--keypair`.
    pub fn mint_keypair_path(&self) -> &Path {
        &self.mint_path
    }

    /// The validator's identity (staked in genesis), for staked-identity QUIC tests.
    pub fn identity_keypair(&self) -> &Keypair {
        &self.identity
    }

    pub fn identity_keypair_path(&self) -> PathBuf {
        self.ledger.join("validator-keypair.json")
    }

    pub fn ledger_path(&self) -> &Path {
        &self.ledger
    }

    /// The validator's log (`validator.log`, a symlink the validator points at its current log).
    pub fn log_path(&self) -> PathBuf {
        self.ledger.join("validator.log")
    }

    /// The validator's captured stdout and stderr, where it prints fatal startup errors.
    pub fn output_path(&self) -> PathBuf {
        self.work_dir.join(OUTPUT_FILE)
    }

    /// From spawn to ready (slot > 0, identity and TPU address known), for the last (re)start.
    pub fn startup_time(&self) -> Duration {
        self.startup_time
    }

    /// The log and the last lines of the captured output and of the log, for a failed start's
    /// error; copied beside a temporary ledger first, which goes with this handle.
    fn failed_start_record(&self) -> (PathBuf, String) {
        let (log, output) = match &self.temp {
            Some(temp) => (
                keep_beside(temp, &self.log_path(), "log"),
                keep_beside(temp, &self.output_path(), "output"),
            ),
            None => (self.log_path(), self.output_path()),
        };
        (log.clone(), tails(&output, &log))
    }
}

/// The last lines of a validator's captured output and of its log.
fn tails(output: &Path, log: &Path) -> String {
    let mut out = String::new();
    for (name, path) in [("output", output), ("log", log)] {
        match tail_lines(path, TAIL_LINES) {
            Ok(t) if t.trim().is_empty() => {
                out.push_str(&format!("--- {} ({name}) is empty\n", path.display()))
            }
            Ok(t) => out.push_str(&format!(
                "--- last lines of {} ({name}):\n{t}\n",
                path.display()
            )),
            Err(e) => out.push_str(&format!("--- {} ({name}): {e}\n", path.display())),
        }
    }
    out
}

impl Drop for LocalValidator {
    fn drop(&mut self) {
        self.kill();
    }
}
