//! A real `solana-test-validator` for tests, benchmarks and `txpace demo`.
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

mod error;
pub mod locate;
pub mod ports;

use std::{
    ffi::OsString,
    fs::File,
    io::{Read, Seek, SeekFrom},
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use solana_commitment_config::CommitmentConfig;
use solana_keypair::{Keypair, read_keypair_file, write_keypair_file};
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;

pub use error::ValidatorError;
pub use locate::{VALIDATOR_ENV, install_hint, locate};
use ports::PortBlock;

/// Default time allowed from spawn until `getSlot` > 0. A debug-built test run on a busy 2-core
/// machine can take tens of seconds where a laptop takes five.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// File in the working directory holding the mint keypair; for a kept ledger it lives in the
/// ledger itself so a later start on that ledger can find the keypair its genesis funded.
const MINT_FILE: &str = "txpace-mint.json";
/// Where the validator's stdout and stderr go: startup errors are printed there, not logged.
const OUTPUT_FILE: &str = "txpace-validator.out";
/// Lines of log quoted in startup errors.
const TAIL_LINES: usize = 25;
/// How long [`LocalValidator::pause`] waits for every thread to stop.
const SIGNAL_SETTLE: Duration = Duration::from_secs(10);

/// How to start a validator. `Default` gives a fresh temporary ledger.
#[derive(Debug, Clone)]
pub struct ValidatorOptions {
    /// Keep the ledger in this directory and do not `--reset` it, so a later start continues the
    /// same chain (restart tests). The directory is created if missing and never deleted.
    pub ledger: Option<PathBuf>,
    /// Appended to the command line, e.g. `["--ticks-per-slot", "16"]`.
    pub extra_args: Vec<OsString>,
    /// Time allowed until `getSlot` > 0.
    pub startup_timeout: Duration,
    /// Use this binary instead of searching ([`locate`]).
    pub program: Option<PathBuf>,
}

impl Default for ValidatorOptions {
    fn default() -> Self {
        ValidatorOptions {
            ledger: None,
            extra_args: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            program: None,
        }
    }
}

impl ValidatorOptions {
    pub fn ledger(mut self, dir: impl Into<PathBuf>) -> Self {
        self.ledger = Some(dir.into());
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.extra_args.push(arg.into());
        self
    }

    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    pub fn program(mut self, path: impl Into<PathBuf>) -> Self {
        self.program = Some(path.into());
        self
    }

    pub fn start(self) -> Result<LocalValidator, ValidatorError> {
        LocalValidator::start_with(self)
    }
}

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
    _temp: Option<TempDir>,
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
            _temp: temp,
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
        let rpc = RpcClient::new_with_timeout_and_commitment(
            self.rpc_url(),
            Duration::from_secs(5),
            CommitmentConfig::confirmed(),
        );
        let mut last;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(ValidatorError::ExitedEarly {
                    status,
                    log: self.log_path(),
                    tail: self.tails(),
                });
            }
            match rpc.get_slot() {
                Ok(slot) if slot > 0 => return Ok(()),
                Ok(slot) => last = format!("getSlot answered {slot}"),
                Err(e) => last = format!("getSlot: {e}"),
            }
            if started.elapsed() >= self.startup_timeout {
                self.kill();
                return Err(ValidatorError::NotReady {
                    timeout: self.startup_timeout,
                    last,
                    log: self.log_path(),
                    tail: self.tails(),
                });
            }
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// The node shows up in its own gossip table right after start; the loop only covers the
    /// moment before it does.
    fn wait_tpu_quic(&mut self, started: Instant) -> Result<SocketAddr, ValidatorError> {
        let rpc = self.rpc_client();
        let me = self.identity.pubkey().to_string();
        loop {
            let nodes = rpc.get_cluster_nodes().map_err(|e| ValidatorError::Rpc {
                call: "getClusterNodes",
                url: self.rpc_url(),
                source: Box::new(e),
            })?;
            if let Some(addr) = nodes
                .iter()
                .find(|n| n.pubkey == me)
                .and_then(|n| n.tpu_quic)
            {
                return Ok(addr);
            }
            if started.elapsed() >= self.startup_timeout {
                return Err(ValidatorError::NoTpuQuic);
            }
            thread::sleep(Duration::from_millis(200));
        }
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
    pub fn restart(&mut self) -> Result<(), ValidatorError> {
        self.kill();
        self.launch(false)
    }

    /// Freezes the process (SIGSTOP): its sockets stay bound but nothing answers, which is what a
    /// hung leader looks like to a client.
    ///
    /// Returns once every thread has stopped. kill(2) only wakes one thread to take the signal,
    /// and the others keep serving until that thread has run and stopped the group, which on a
    /// loaded machine was observed to take long enough for an RPC request to be answered after
    /// `kill -STOP` had returned.
    pub fn pause(&mut self) -> Result<(), ValidatorError> {
        self.signal("STOP")?;
        self.paused = true;
        let pid = self.pid().ok_or(ValidatorError::NotRunning)?;
        let deadline = Instant::now() + SIGNAL_SETTLE;
        loop {
            match all_threads_stopped(pid) {
                Ok(true) => return Ok(()),
                Ok(false) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
                Ok(false) => {
                    return Err(ValidatorError::Signal {
                        signal: "STOP",
                        pid,
                        reason: format!(
                            "some threads were still running after {} s",
                            SIGNAL_SETTLE.as_secs()
                        ),
                    });
                }
                Err(e) => {
                    return Err(ValidatorError::Signal {
                        signal: "STOP",
                        pid,
                        reason: format!("reading /proc/{pid}/task: {e}"),
                    });
                }
            }
        }
    }

    /// Undoes [`pause`](Self::pause) (SIGCONT, which the kernel applies to all threads at once).
    pub fn resume(&mut self) -> Result<(), ValidatorError> {
        self.signal("CONT")?;
        self.paused = false;
        Ok(())
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Uses kill(1) rather than a libc binding to keep the dependency list as it is.
    fn signal(&mut self, signal: &'static str) -> Result<(), ValidatorError> {
        let pid = self.pid().ok_or(ValidatorError::NotRunning)?;
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| ValidatorError::Signal {
                signal,
                pid,
                reason: e.to_string(),
            })?;
        if status.success() {
            Ok(())
        } else {
            Err(ValidatorError::Signal {
                signal,
                pid,
                reason: format!("kill exited with {status}"),
            })
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

    /// The last lines of the captured output and of the log, for error messages.
    fn tails(&self) -> String {
        let mut out = String::new();
        for (name, path) in [("output", self.output_path()), ("log", self.log_path())] {
            match tail_lines(&path, TAIL_LINES) {
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
}

impl Drop for LocalValidator {
    fn drop(&mut self) {
        self.kill();
    }
}

fn create_dir(dir: &Path) -> Result<(), ValidatorError> {
    std::fs::create_dir_all(dir).map_err(|source| ValidatorError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

fn read_keypair(path: &Path) -> Result<Keypair, ValidatorError> {
    read_keypair_file(path).map_err(|e| ValidatorError::Keypair {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Whether every live thread of `pid` is in a stopped state, from `/proc/<pid>/task/*/stat`
/// (field 3: `T` stopped, `t` tracing stop; `Z`/`X` are exiting threads and do not count).
fn all_threads_stopped(pid: u32) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let stat = match std::fs::read_to_string(entry?.path().join("stat")) {
            Ok(s) => s,
            // The thread exited between listing and reading.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        // The command name may contain spaces and parentheses; the state follows the last ')'.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        if !matches!(state, Some('T' | 't' | 'Z' | 'X')) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The last `n` lines of a file, reading at most its last 64 KiB (logs grow large).
fn tail_lines(path: &Path, n: usize) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(64 * 1024);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    Ok(lines[lines.len().saturating_sub(n)..].join("\n"))
}

/// A directory removed on drop. (`tempfile` is only a dev-dependency, and the harness is library
/// code used by `txpace demo`.)
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> Result<Self, ValidatorError> {
        use std::hash::{BuildHasher, RandomState};
        let random = RandomState::new();
        let base = std::env::temp_dir();
        for attempt in 0..16u32 {
            let tag = random.hash_one((attempt, std::process::id()));
            let path = base.join(format!("{prefix}-{tag:016x}"));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(ValidatorError::Io { path, source }),
            }
        }
        Err(ValidatorError::Io {
            path: base,
            source: std::io::Error::other("16 random directory names were all taken"),
        })
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        assert_eq!(tail_lines(&path, 3).unwrap(), "line 98\nline 99\nline 100");
        assert!(tail_lines(&dir.path().join("missing"), 3).is_err());
    }

    #[test]
    fn stopped_threads_are_seen_in_proc() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(!all_threads_stopped(pid).unwrap());
        let status = Command::new("kill")
            .args(["-STOP", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(5);
        while !all_threads_stopped(pid).unwrap() {
            assert!(
                Instant::now() < deadline,
                "sleep(1) never showed as stopped"
            );
            thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn temp_dir_is_removed_on_drop() {
        let path = {
            let t = TempDir::new("txpace-test").unwrap();
            std::fs::write(t.path().join("f"), "x").unwrap();
            t.path().to_path_buf()
        };
        assert!(!path.exists());
    }
}
