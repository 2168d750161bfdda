//! Why the local validator could not be found, started or controlled.
//!
//! Every message names the file to look at next (binary, log, keypair), because a test that fails
//! here fails before it tested anything, and the log is the only place the reason is written.

use std::{path::PathBuf, process::ExitStatus, time::Duration};

use solana_rpc_client_api::client_error::Error as ClientError;

#[derive(Debug, thiserror::Error)]
pub enum ValidatorError {
    /// A stop was requested (Ctrl-C, SIGTERM, a hang-up) while the validators started; they
    /// were stopped and their ledgers removed.
    #[error("interrupted while the local validators started")]
    Interrupted,
    /// The binary is missing; the message carries the full install instructions.
    #[error("{0}")]
    NotInstalled(String),

    #[error("cannot run {program}: {source}")]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("no free block of {size} ports in {low}-{high} after {attempts} attempts")]
    NoFreePorts {
        size: u16,
        low: u16,
        high: u16,
        attempts: u32,
    },

    #[error(
        "solana-test-validator exited ({status}) before it was ready; its log is {log}\n{tail}"
    )]
    ExitedEarly {
        status: ExitStatus,
        log: PathBuf,
        tail: String,
    },

    #[error(
        "solana-test-validator was not ready within {} s ({last}); its log is {log}\n{tail}",
        timeout.as_secs()
    )]
    NotReady {
        timeout: Duration,
        last: String,
        log: PathBuf,
        tail: String,
    },

    #[error("keypair {path}: {reason}")]
    Keypair { path: PathBuf, reason: String },

    #[error(
        "ledger {0} already holds a chain but no txpace-mint.json, so its mint keypair is \
         unknown; start with a fresh ledger directory"
    )]
    UnknownMint(PathBuf),

    #[error("RPC {call} at {url} failed: {source}")]
    Rpc {
        call: &'static str,
        url: String,
        source: Box<ClientError>,
    },

    #[error("the validator's getClusterNodes entry has no tpuQuic address")]
    NoTpuQuic,

    #[error("sending SIG{signal} to solana-test-validator (pid {pid}) failed: {reason}")]
    Signal {
        signal: &'static str,
        pid: u32,
        reason: String,
    },

    #[error("the validator is not running")]
    NotRunning,

    #[error("txpace-localnet exited ({status}) before it was ready; its log is {log}\n{tail}")]
    ClusterExited {
        status: ExitStatus,
        log: PathBuf,
        tail: String,
    },

    #[error(
        "txpace-localnet's nodes forked while starting and rooted nothing; its log is {log}\n{tail}"
    )]
    ClusterForked { log: PathBuf, tail: String },

    #[error(
        "txpace-localnet was not ready within {} s; its log is {log}\n{tail}",
        timeout.as_secs()
    )]
    ClusterNotReady {
        timeout: Duration,
        log: PathBuf,
        tail: String,
    },

    #[error("cluster manifest {path}: {reason}")]
    Manifest { path: PathBuf, reason: String },

    #[error("txpace-localnet did not do {command:?}: {reason}")]
    Control { command: String, reason: String },
}
