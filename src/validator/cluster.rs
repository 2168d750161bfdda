//! A cluster of several staked validators (`txpace-localnet`, the `localnet` package), for what a
//! single validator cannot show: leaders rotating every 4 slots, hand-over between them, one bad
//! leader among good ones.
//!
//! `txpace-localnet` runs every node in one process; this handle starts it in a temporary
//! directory, waits for its ready line, reads `cluster.json` and the mint it names, drives the
//! TPU relays' faults over its standard input, and stops it with SIGTERM when dropped (it then
//! removes its ledgers). Its differences from `solana-test-validator` show in the API: there is
//! no faucet (fund from [`Localnet::mint_keypair`]), and fees and rent are zero.
//!
//! Blocking, like [`LocalValidator`](super::LocalValidator): not from inside a tokio runtime.

use std::{
    fs::File,
    io::{BufRead, BufReader, Write},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    str::FromStr,
    sync::mpsc::{self, Receiver, RecvTimeoutError},
    time::{Duration, Instant},
};

use serde::Deserialize;
use solana_commitment_config::CommitmentConfig;
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;

use super::{
    ValidatorError,
    files::{TempDir, read_keypair, tail_lines},
    locate::{LOCALNET, locate_program},
};

/// A 3-node start takes about half a minute on 2 cores; a debug-built test run beside other
/// tests can take several times that.
pub const DEFAULT_CLUSTER_STARTUP: Duration = Duration::from_secs(240);
/// How long a stopped cluster gets to remove its ledgers before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);
const TAIL_LINES: usize = 25;

/// One node as `cluster.json` lists it.
#[derive(Debug, Clone)]
pub struct ClusterNode {
    pub identity: Pubkey,
    pub rpc: String,
    pub ws: String,
    /// What the node advertises: its TPU relay's address when started with relays.
    pub tpu_quic: SocketAddr,
    /// The node's identity keypair file (staked), for a staked QUIC client identity.
    pub identity_keypair: PathBuf,
}

#[derive(Deserialize)]
struct Manifest {
    nodes: Vec<ManifestNode>,
    mint: PathBuf,
}

#[derive(Deserialize)]
struct ManifestNode {
    identity: String,
    rpc: String,
    ws: String,
    tpu_quic: SocketAddr,
    identity_keypair: PathBuf,
}

/// How to start a cluster.
#[derive(Debug, Clone)]
pub struct LocalnetOptions {
    pub nodes: usize,
    /// Relays in front of every TPU, so [`Localnet::blackhole`] can cut one leader.
    pub tpu_relay: bool,
    pub startup_timeout: Duration,
}

impl Default for LocalnetOptions {
    fn default() -> Self {
        LocalnetOptions {
            nodes: 3,
            tpu_relay: false,
            startup_timeout: DEFAULT_CLUSTER_STARTUP,
        }
    }
}

/// A running `txpace-localnet`, stopped (and waited for) when dropped.
#[derive(Debug)]
pub struct Localnet {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    nodes: Vec<ClusterNode>,
    mint: Keypair,
    mint_path: PathBuf,
    log: PathBuf,
    startup_time: Duration,
    /// Declared last so it is removed after the process is gone.
    temp: TempDir,
}

impl Localnet {
    pub fn start(options: LocalnetOptions) -> Result<Self, ValidatorError> {
        let program = locate_program(&LOCALNET)?;
        let temp = TempDir::new("txpace-localnet")?;
        let dir = temp.path().to_path_buf();
        let log = dir.join("localnet.log");
        let log_file = File::create(&log).map_err(|source| ValidatorError::Io {
            path: log.clone(),
            source,
        })?;
        let mut command = Command::new(&program);
        command
            .arg("--nodes")
            .arg(options.nodes.to_string())
            .arg("--dir")
            .arg(&dir)
            .arg("--startup-timeout")
            .arg(options.startup_timeout.as_secs().to_string())
            // Our end of its stdin closes when we die, however we die: it stops then.
            .arg("--stop-on-eof");
        if options.tpu_relay {
            command.arg("--tpu-relay");
        }
        let started = Instant::now();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|source| ValidatorError::Spawn { program, source })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ValidatorError::NotRunning);
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut localnet = Localnet {
            child,
            stdin,
            lines,
            nodes: Vec::new(),
            mint: Keypair::new(),
            mint_path: PathBuf::new(),
            log,
            startup_time: Duration::ZERO,
            temp,
        };
        // A margin over the cluster's own limit, so its error (the better message) comes first.
        localnet.wait_ready(started, options.startup_timeout + Duration::from_secs(30))?;
        localnet.read_manifest()?;
        localnet.startup_time = started.elapsed();
        Ok(localnet)
    }

    fn wait_ready(&mut self, started: Instant, timeout: Duration) -> Result<(), ValidatorError> {
        loop {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) if line.starts_with("txpace-localnet: ready") => return Ok(()),
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {}
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(ValidatorError::ClusterExited {
                    status,
                    log: self.log.clone(),
                    tail: self.tail(),
                });
            }
            if started.elapsed() > timeout {
                return Err(ValidatorError::ClusterNotReady {
                    timeout,
                    log: self.log.clone(),
                    tail: self.tail(),
                });
            }
        }
    }

    fn read_manifest(&mut self) -> Result<(), ValidatorError> {
        let path = self.temp.path().join("cluster.json");
        let bad = |reason: String| ValidatorError::Manifest {
            path: path.clone(),
            reason,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        self.nodes = manifest
            .nodes
            .into_iter()
            .map(|n| {
                Ok(ClusterNode {
                    identity: Pubkey::from_str(&n.identity)
                        .map_err(|e| bad(format!("identity {:?}: {e}", n.identity)))?,
                    rpc: n.rpc,
                    ws: n.ws,
                    tpu_quic: n.tpu_quic,
                    identity_keypair: n.identity_keypair,
                })
            })
            .collect::<Result<_, ValidatorError>>()?;
        if self.nodes.is_empty() {
            return Err(bad("no nodes".to_string()));
        }
        self.mint = read_keypair(&manifest.mint)?;
        self.mint_path = manifest.mint;
        Ok(())
    }

    /// Node `node`'s TPU relay drops everything both ways (needs `tpu_relay`).
    pub fn blackhole(&mut self, node: usize) -> Result<(), ValidatorError> {
        self.control(&format!("blackhole {node}"))
    }

    /// Node `node`'s TPU relay carries traffic again.
    pub fn restore(&mut self, node: usize) -> Result<(), ValidatorError> {
        self.control(&format!("restore {node}"))
    }

    fn control(&mut self, command: &str) -> Result<(), ValidatorError> {
        let failed = |reason: String| ValidatorError::Control {
            command: command.to_string(),
            reason,
        };
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| failed(e.to_string()))?;
        let deadline = Instant::now() + CONTROL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == format!("ok {command}") => return Ok(()),
                Ok(line) if line.starts_with("error:") => return Err(failed(line)),
                Ok(_) => {}
                Err(e) => return Err(failed(format!("no answer ({e})"))),
            }
        }
    }

    /// The nodes in the manifest's order (node 0 started the cluster).
    pub fn nodes(&self) -> &[ClusterNode] {
        &self.nodes
    }

    /// Node 0's RPC URL.
    pub fn rpc_url(&self) -> String {
        self.nodes[0].rpc.clone()
    }

    /// Node 0's websocket URL.
    pub fn ws_url(&self) -> String {
        self.nodes[0].ws.clone()
    }

    /// A blocking client of node 0 at `confirmed`.
    pub fn rpc_client(&self) -> RpcClient {
        RpcClient::new_with_commitment(self.rpc_url(), CommitmentConfig::confirmed())
    }

    /// The genesis mint: the cluster has no faucet, and its fees and rent are zero.
    pub fn mint_keypair(&self) -> &Keypair {
        &self.mint
    }

    pub fn mint_keypair_path(&self) -> &Path {
        &self.mint_path
    }

    /// Where the cluster's standard error (Agave's log) goes.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    pub fn startup_time(&self) -> Duration {
        self.startup_time
    }

    /// The process every node runs in (for its CPU and memory).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn tail(&self) -> String {
        tail_lines(&self.log, TAIL_LINES).unwrap_or_else(|e| format!("({e})"))
    }

    /// SIGTERM, so the cluster removes its ledgers; SIGKILL if it takes too long.
    fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let deadline = Instant::now() + STOP_GRACE;
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for Localnet {
    fn drop(&mut self) {
        self.stop();
    }
}
