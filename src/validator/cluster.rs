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
    io::{BufRead, BufReader},
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
    files::{TempDir, keep_beside, read_keypair, tail_lines},
    locate::{LOCALNET, locate_program},
};

/// A 3-node start takes about half a minute on 2 cores; a debug-built test run beside other
/// tests can take several times that.
pub const DEFAULT_CLUSTER_STARTUP: Duration = Duration::from_secs(240);
/// How long a stopped cluster gets to remove its ledgers before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);
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
    /// Every node's link from a named profile (`eu`, `na`, `apac`, `hostile`, `mainnet`:
    /// `txpace-localnet --link-profile`), through relays even without `tpu_relay`.
    pub link_profile: Option<String>,
    /// Slots per epoch (`txpace-localnet --slots-per-epoch`); `None` keeps its default of 64,
    /// short so tests cross epoch boundaries. A node serves the leader schedule only to the end
    /// of the epoch after its root's, so on short epochs a client asking far ahead of the tip
    /// is refused for seconds at a time; a benchmark wants a mainnet-like wire instead.
    pub slots_per_epoch: Option<u64>,
    pub startup_timeout: Duration,
    /// The `txpace-localnet` to run; `None` finds it as [`locate_program`] does.
    pub program: Option<PathBuf>,
}

impl Default for LocalnetOptions {
    fn default() -> Self {
        LocalnetOptions {
            nodes: 3,
            tpu_relay: false,
            link_profile: None,
            slots_per_epoch: None,
            startup_timeout: DEFAULT_CLUSTER_STARTUP,
            program: None,
        }
    }
}

/// The exit code with which `txpace-localnet` says its nodes forked while starting and rooted
/// nothing (three equal stakes need all three nodes on one fork to root); a new start usually
/// comes up, so [`Localnet::start`] makes one.
const FORKED_AT_START: i32 = 3;

/// A running `txpace-localnet`, stopped (and waited for) when dropped.
#[derive(Debug)]
pub struct Localnet {
    child: Child,
    pub(super) stdin: ChildStdin,
    pub(super) lines: Receiver<String>,
    nodes: Vec<ClusterNode>,
    mint: Keypair,
    mint_path: PathBuf,
    log: PathBuf,
    startup_time: Duration,
    /// The kept log of a first start that forked and was replaced by this one.
    forked_start: Option<PathBuf>,
    /// Declared last so it is removed after the process is gone.
    temp: TempDir,
}

impl Localnet {
    /// Starts a cluster and waits until it is ready. A start whose nodes forked (see
    /// [`FORKED_AT_START`]) is replaced by one more; [`Localnet::forked_start`] then names the
    /// first one's log, and the startup time counts both.
    pub fn start(options: LocalnetOptions) -> Result<Self, ValidatorError> {
        let started = Instant::now();
        let mut localnet = match Self::start_once(&options) {
            Err(ValidatorError::ClusterForked { log, .. }) => match Self::start_once(&options) {
                Ok(mut second) => {
                    second.forked_start = Some(log);
                    second
                }
                Err(e) => {
                    // The second start's error names its own log, which tells the same.
                    let _ = std::fs::remove_file(log);
                    return Err(e);
                }
            },
            other => other?,
        };
        localnet.startup_time = started.elapsed();
        Ok(localnet)
    }

    fn start_once(options: &LocalnetOptions) -> Result<Self, ValidatorError> {
        let program = match &options.program {
            Some(program) => program.clone(),
            None => locate_program(&LOCALNET)?,
        };
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
        if let Some(profile) = &options.link_profile {
            command.arg("--link-profile").arg(profile);
        }
        if let Some(slots) = options.slots_per_epoch {
            command.arg("--slots-per-epoch").arg(slots.to_string());
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
            forked_start: None,
            temp,
        };
        // A margin over the cluster's own limit (counted from its start too), so its error,
        // which names what it was waiting for, comes first.
        localnet.wait_ready(started, options.startup_timeout + Duration::from_secs(30))?;
        localnet.read_manifest()?;
        Ok(localnet)
    }

    fn wait_ready(&mut self, started: Instant, timeout: Duration) -> Result<(), ValidatorError> {
        loop {
            // The caller drops the half-started cluster, which stops it and removes its ledgers.
            if crate::interrupt::requested().is_some() {
                return Err(ValidatorError::Interrupted);
            }
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) if line.starts_with("txpace-localnet: ready") => return Ok(()),
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {}
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let (log, tail) = self.keep_log();
                return Err(if status.code() == Some(FORKED_AT_START) {
                    ValidatorError::ClusterForked { log, tail }
                } else {
                    ValidatorError::ClusterExited { status, log, tail }
                });
            }
            if started.elapsed() > timeout {
                let (log, tail) = self.keep_log();
                return Err(ValidatorError::ClusterNotReady { timeout, log, tail });
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

    /// The log of a start that failed, copied beside the cluster's directory (which goes when
    /// this handle does) so the path an error names still exists; and its last lines.
    fn keep_log(&self) -> (PathBuf, String) {
        let log = keep_beside(&self.temp, &self.log, "log");
        let tail = tail_lines(&log, TAIL_LINES).unwrap_or_else(|e| format!("({e})"));
        (log, tail)
    }

    /// The kept log of a first start that forked while starting and was replaced by this
    /// cluster, if there was one.
    pub fn forked_start(&self) -> Option<&Path> {
        self.forked_start.as_deref()
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use solana_keypair::write_keypair_file;
    use solana_signer::Signer;

    use super::*;

    /// A stand-in for `txpace-localnet` whose first start forks (exit 3, as the real one exits
    /// when its nodes fork while starting) and whose second is ready with `manifest`.
    fn forks_once(dir: &Path, manifest: &Path) -> PathBuf {
        let marker = dir.join("started-once");
        let script = format!(
            "#!/bin/sh\n\
             while [ \"$1\" != --dir ]; do shift; done; dir=\"$2\"\n\
             if [ ! -e {marker} ]; then\n\
               touch {marker}\n\
               echo 'txpace-localnet: the nodes forked while starting' >&2\n\
               exit 3\n\
             fi\n\
             cp {manifest} \"$dir/cluster.json\"\n\
             echo 'txpace-localnet: ready: 1 nodes'\n\
             exec cat > /dev/null\n",
            marker = marker.display(),
            manifest = manifest.display(),
        );
        let path = dir.join("txpace-localnet");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_start_that_forks_is_replaced_and_its_log_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mint = Keypair::new();
        let mint_path = dir.path().join("mint.json");
        write_keypair_file(&mint, &mint_path).unwrap();
        let manifest = dir.path().join("manifest.json");
        let node = serde_json::json!({
            "identity": mint.pubkey().to_string(),
            "rpc": "http://127.0.0.1:1",
            "ws": "ws://127.0.0.1:2",
            "tpu_quic": "127.0.0.1:3",
            "identity_keypair": mint_path,
        });
        let text = serde_json::json!({ "nodes": [node], "mint": mint_path });
        std::fs::write(&manifest, text.to_string()).unwrap();

        let cluster = Localnet::start(LocalnetOptions {
            nodes: 1,
            program: Some(forks_once(dir.path(), &manifest)),
            ..LocalnetOptions::default()
        })
        .unwrap();
        assert_eq!(cluster.nodes()[0].identity, mint.pubkey());
        let first = cluster
            .forked_start()
            .expect("the first start is named")
            .to_path_buf();
        assert!(!first.starts_with(cluster.log_path().parent().unwrap()));
        drop(cluster);
        let log = std::fs::read_to_string(&first).unwrap();
        assert!(log.contains("forked while starting"), "{log}");
        std::fs::remove_file(first).unwrap();
    }

    #[test]
    fn a_start_that_fails_otherwise_is_not_retried() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("txpace-localnet");
        std::fs::write(&program, "#!/bin/sh\necho 'cannot bind' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let error = Localnet::start(LocalnetOptions {
            nodes: 1,
            program: Some(program),
            ..LocalnetOptions::default()
        })
        .unwrap_err();
        let ValidatorError::ClusterExited { log, tail, .. } = error else {
            panic!("{error}");
        };
        assert!(tail.contains("cannot bind"), "{tail}");
        assert!(log.exists(), "{}", log.display());
        std::fs::remove_file(log).unwrap();
    }
}
