//! The load contender of `txpace-bench wan`: other senders on the same leaders while a measured
//! contender runs, so the wire is busy as mainnet's is. K unstaked senders, each a `txpace send`
//! of its own at an unstaked peer's budget (200 streams a second per source address), each
//! reaching the nodes through the relays from a source address of its own (a relay gives every
//! client its own address in 127.1.0.0/16), so each has a budget of its own as distinct hosts
//! do; and optionally one staked flood, a `txpace send` with a node's identity keypair as its
//! QUIC identity (the cluster's stake is the nodes').
//!
//! The benchmark starts the load before a contender's run and stops it (SIGTERM, on which
//! txpace writes its report and exits) when that run ends. Its own counts come from its reports
//! and from the chain: transactions sent at least once, streams, and landed (their signatures'
//! statuses on a node's RPC).

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use solana_client::rpc_client::RpcClient;

use crate::{
    chain::{landed_slots, report_signatures},
    child,
    workload::{Endpoint, generate},
};

/// An unstaked peer's stream budget per source address, per second (Agave 4.0: 20 streams per
/// 100 ms window).
pub const UNSTAKED_BUDGET_TPS: u32 = 200;

/// Fresh payers each sender's transactions are spread over (`txpace gen --payers`).
const PAYERS: u32 = 2;

/// How long a stopped sender may take to write its report and exit before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// What load to put beside a run.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadSpec {
    /// Unstaked senders, each from its own source address.
    pub unstaked: usize,
    /// Each unstaked sender's pace, tx/s.
    pub rate: u32,
    /// The staked flood: a node's identity keypair and its pace, tx/s.
    pub staked: Option<(PathBuf, u32)>,
}

impl LoadSpec {
    /// Its senders: the unstaked ones and the staked flood.
    pub fn senders(&self) -> usize {
        self.unstaked + usize::from(self.staked.is_some())
    }

    /// The words a table says the load with: "4 × 200 tx/s unstaked + staked 1000 tx/s".
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.unstaked > 0 {
            parts.push(format!("{} × {} tx/s unstaked", self.unstaked, self.rate));
        }
        if let Some((_, rate)) = &self.staked {
            parts.push(format!("staked flood {rate} tx/s"));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" + ")
        }
    }
}

/// One running sender of the load.
struct Sender {
    child: Child,
    report: PathBuf,
    staked: bool,
}

/// The load, running.
pub struct Load {
    senders: Vec<Sender>,
}

/// What the load did while it ran, from its reports and the chain.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LoadFigures {
    pub senders: usize,
    /// Transactions sent at least once (its reports' transactions with a first send).
    pub sent: u64,
    /// Streams to leaders (its reports' `streams.sent`).
    pub streams: u64,
    /// Of those sent, landed without error (from the chain).
    pub landed: u64,
    /// Senders that left no report, with why.
    pub failures: Vec<String>,
}

impl LoadFigures {
    /// The cell beside a scenario's row: "sent 9120, landed 8800 (4 senders)".
    pub fn show(&self) -> String {
        let mut s = format!(
            "sent {}, landed {} ({} senders)",
            self.sent, self.landed, self.senders
        );
        if !self.failures.is_empty() {
            s += &format!("; {} left no report", self.failures.len());
        }
        s
    }
}

impl Load {
    /// Generates each sender's transactions (enough for `seconds` at its pace, signed now so
    /// their blockhash is fresh) and starts them. `tag` keeps the files of runs apart.
    pub fn start(
        ep: &Endpoint,
        dir: &Path,
        tag: &str,
        spec: &LoadSpec,
        seconds: f64,
    ) -> Result<Load> {
        let mut senders = Vec::new();
        let mut plan: Vec<(String, u32, Option<&Path>)> = (0..spec.unstaked)
            .map(|k| (format!("load-{tag}-{k}"), spec.rate, None))
            .collect();
        if let Some((identity, rate)) = &spec.staked {
            plan.push((
                format!("load-{tag}-staked"),
                *rate,
                Some(identity.as_path()),
            ));
        }
        for (name, rate, identity) in plan {
            let n = (f64::from(rate) * seconds).ceil().max(1.0) as usize;
            // Fresh payers of its own: files signed from one payer under one blockhash would be
            // the same transactions (and one journal), so the senders would be one.
            let file = generate(ep, dir, &format!("{name}.b64"), n, PAYERS)?;
            let report = dir.join(format!("{name}.report.json"));
            let mut cmd = child::txpace()?;
            cmd.args(["send", "--no-tui", "--url", &ep.rpc, "--ws", &ep.ws])
                .arg(&file)
                .arg("--report")
                .arg(&report)
                .args(["--rate", &rate.to_string()]);
            if let Some(identity) = identity {
                cmd.arg("--identity").arg(identity);
            }
            let log = File::create(dir.join(format!("{name}.log")))?;
            cmd.stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log);
            let child = cmd
                .spawn()
                .with_context(|| format!("starting the load's sender {name}"))?;
            senders.push(Sender {
                child,
                report,
                staked: identity.is_some(),
            });
        }
        Ok(Load { senders })
    }

    /// Stops every sender (SIGTERM: txpace writes its report and exits), waits for them, and
    /// counts what they did; landings from the chain on `rpc`.
    pub fn stop(mut self, rpc: &RpcClient) -> Result<LoadFigures> {
        let senders = std::mem::take(&mut self.senders);
        for s in &senders {
            // SAFETY: kill has no memory preconditions; the pid is our own running child.
            unsafe {
                libc::kill(s.child.id() as libc::pid_t, libc::SIGTERM);
            }
        }
        let mut figures = LoadFigures {
            senders: senders.len(),
            ..LoadFigures::default()
        };
        for mut s in senders {
            let deadline = Instant::now() + STOP_GRACE;
            while s.child.try_wait()?.is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            if s.child.try_wait()?.is_none() {
                s.child.kill()?;
                s.child.wait()?;
            }
            let who = if s.staked { "staked flood" } else { "unstaked" };
            match read(&s.report) {
                Ok(report) => {
                    let (sent, streams) = sent_of(&report);
                    figures.sent += sent;
                    figures.streams += streams;
                    let sigs = report_signatures(&report)?;
                    figures.landed += landed_slots(rpc, &sigs)?.len() as u64;
                }
                Err(e) => figures.failures.push(format!("{who}: {e:#}")),
            }
        }
        Ok(figures)
    }
}

/// A load not stopped (the benchmark failed mid-run) is killed, so no sender outlives it.
impl Drop for Load {
    fn drop(&mut self) {
        for s in &mut self.senders {
            let _ = s.child.kill();
            let _ = s.child.wait();
        }
    }
}

fn read(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("no report {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Transactions a report says were sent at least once, and its streams.
fn sent_of(report: &Value) -> (u64, u64) {
    let sent = report["transactions"].as_array().map_or(0, |txs| {
        txs.iter()
            .filter(|t| t["first_sent_ms"].as_u64().is_some())
            .count()
    }) as u64;
    let streams = report["summary"]["streams"]["sent"].as_u64().unwrap_or(0);
    (sent, streams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_s_sent_transactions_are_those_with_a_first_send() {
        let report = serde_json::json!({
            "summary": {"streams": {"sent": 7}},
            "transactions": [
                {"signature": "a", "first_sent_ms": 3},
                {"signature": "b", "first_sent_ms": null},
                {"signature": "c"},
                {"signature": "d", "first_sent_ms": 0},
            ]
        });
        assert_eq!(sent_of(&report), (2, 7));
        assert_eq!(sent_of(&serde_json::json!({})), (0, 0));
    }

    #[test]
    fn the_load_is_named_by_what_it_is() {
        let mut spec = LoadSpec {
            unstaked: 4,
            rate: UNSTAKED_BUDGET_TPS,
            staked: None,
        };
        assert_eq!(spec.label(), "4 × 200 tx/s unstaked");
        assert_eq!(spec.senders(), 4);
        spec.staked = Some(("/k.json".into(), 1000));
        assert_eq!(
            spec.label(),
            "4 × 200 tx/s unstaked + staked flood 1000 tx/s"
        );
        assert_eq!(spec.senders(), 5);
        spec.unstaked = 0;
        spec.staked = None;
        assert_eq!(spec.label(), "none");
    }

    #[test]
    fn the_figures_say_a_sender_without_a_report() {
        let f = LoadFigures {
            senders: 4,
            sent: 9120,
            streams: 18000,
            landed: 8800,
            failures: vec!["unstaked: no report".into()],
        };
        assert_eq!(
            f.show(),
            "sent 9120, landed 8800 (4 senders); 1 left no report"
        );
    }
}
