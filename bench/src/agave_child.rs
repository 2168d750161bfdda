//! Agave's TpuClient (`send_and_confirm_messages_with_spinner`) as a measured child process
//! (`txpace-bench agave-send`), counting its sends, for the benchmarks that meet it on a cluster
//! or through a fault.

use std::{path::Path, process::Command, time::Instant};

use anyhow::Result;

use crate::{
    measure::{self, Usage},
    send::Endpoint,
};

/// One run of Agave's client.
pub struct AgaveRun {
    /// Its wall time less the wait its send count took (see `agave_metrics`).
    pub usage: Usage,
    /// Transactions sent per leader address (its connection cache's packets), when counted.
    pub sends: Option<u64>,
    /// Why it gave up, when it did: the client's own error.
    pub error: Option<String>,
}

/// Sends `count` self-transfers paid by `keypair`, lamport amounts from `amount_base` on (so no
/// other run's transactions repeat), with `during` run beside it (see
/// [`measure::run_during`]).
pub fn send<F>(
    ep: &Endpoint,
    keypair: &Path,
    count: usize,
    amount_base: u64,
    during: F,
) -> Result<AgaveRun>
where
    F: FnOnce(Instant) -> Result<()> + Send,
{
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args([
        "agave-send",
        "--count-sends",
        "--url",
        &ep.rpc,
        "--ws",
        &ep.ws,
    ])
    .arg("--keypair")
    .arg(keypair)
    .args(["--count", &count.to_string()])
    .args(["--amount-base", &amount_base.to_string()]);
    let done = measure::run_during(&mut cmd, during)?;
    let field = |key: &str| {
        done.stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    let sends = field("sent_packets ").and_then(|v| v.parse().ok());
    let wait: f64 = field("metrics_wait_s ")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let mut usage = done.usage;
    usage.wall_s -= wait;
    let error = (!done.status.success()).then(|| {
        let last = done.stderr.trim().lines().last().unwrap_or("no output");
        format!("exit {}: {last}", done.status)
    });
    Ok(AgaveRun {
        usage,
        sends,
        error,
    })
}
