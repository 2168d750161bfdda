//! RPC `sendTransaction` as a measured child process (`txpace-bench rpc-send`): what a user of
//! an RPC node gets, the node's own send-transaction service forwarding each transaction to the
//! leaders and retrying it (every 2 s, `maxRetries` unset: until its blockhash expires). The
//! child sends the same messages as the other Agave contenders' children
//! ([`agave_child::messages`]) at the benchmark's pace, `skipPreflight` as a sender at pace
//! would, then reads their statuses every 400 ms; a message whose blockhash expired unlanded is
//! signed again with a new one and sent again, for at most [`ROUNDS`] blockhashes (the legacy
//! client's own limit of rounds). Its landings are read from the chain as the others' are.
//!
//! Its sends are RPC calls, not streams to leaders (the node makes those, uncounted here), so
//! the benchmarks show its sends as not counted rather than in another unit.

use std::{
    collections::HashMap,
    path::Path,
    time::{Duration, Instant},
};

use anyhow::Result;
use solana_client::{rpc_client::RpcClient, rpc_config::RpcSendTransactionConfig};
use solana_commitment_config::CommitmentConfig;
use solana_signature::Signature;
use solana_transaction::Transaction;

use crate::{
    agave_child::{self, AgaveRun, Workload},
    measure,
    workload::Endpoint,
};

/// How the benchmarks name this contender.
pub const NAME: &str = "Agave RPC sendTransaction";

/// Blockhashes a message is sent under before the child gives up on it.
const ROUNDS: usize = 5;
/// How often the child reads statuses and the block height.
const POLL: Duration = Duration::from_millis(400);

/// Sends `count` self-transfers paid by `keypair` through the RPC node at `rate` tx/s, with
/// `during` beside it (see [`measure::run_during`]). Its sends are not counted in the
/// benchmarks' unit (see the module's documentation).
pub fn send<F>(
    ep: &Endpoint,
    keypair: &Path,
    count: usize,
    amount_base: u64,
    rate: f64,
    during: F,
) -> Result<AgaveRun>
where
    F: FnOnce(measure::Started) -> Result<()> + Send,
{
    let mut cmd = agave_child::workload_command("rpc-send", &ep.rpc, keypair, count, amount_base)?;
    cmd.args(["--rate", &rate.to_string()]);
    let done = measure::run_during(&mut cmd, during)?;
    let mut run = agave_child::read_run(&done);
    run.sends = None;
    Ok(run)
}

/// Hidden child mode: RPC `sendTransaction`, measured as a process like every contender.
#[derive(clap::Args)]
pub struct RpcArgs {
    #[command(flatten)]
    workload: Workload,
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
}

/// The RPC contender: sends every unlanded message at the pace under one blockhash, follows
/// them until each lands, fails or the blockhash expires, and does it again for what is left.
pub fn rpc_send(args: RpcArgs) -> Result<()> {
    let (payer, messages) = args.workload.load()?;
    let rpc =
        RpcClient::new_with_commitment(args.workload.url.clone(), CommitmentConfig::confirmed());
    let config = RpcSendTransactionConfig {
        skip_preflight: true,
        ..RpcSendTransactionConfig::default()
    };
    let mut left: Vec<usize> = (0..messages.len()).collect();
    let (mut landed, mut calls) = (0u64, 0u64);
    for _ in 0..ROUNDS {
        if left.is_empty() {
            break;
        }
        let (hash, last_valid) =
            rpc.get_latest_blockhash_with_commitment(CommitmentConfig::confirmed())?;
        let start = Instant::now();
        let mut pending: HashMap<Signature, usize> = HashMap::new();
        for (n, &i) in left.iter().enumerate() {
            let due = start + Duration::from_secs_f64(n as f64 / args.rate.max(0.001));
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            let tx = Transaction::new(&[&payer], messages[i].clone(), hash);
            crate::first_send::note(calls);
            calls += 1;
            // A refused call is a send that did not happen; the status poll settles the rest.
            if let Ok(sig) = rpc.send_transaction_with_config(&tx, config) {
                pending.insert(sig, i);
            }
        }
        let mut settled: Vec<usize> = Vec::new();
        loop {
            let sigs: Vec<Signature> = pending.keys().copied().collect();
            for chunk in sigs.chunks(256) {
                let statuses = rpc.get_signature_statuses(chunk)?.value;
                for (sig, status) in chunk.iter().zip(statuses) {
                    let Some(s) = status else { continue };
                    if s.err.is_some() {
                        settled.extend(pending.remove(sig));
                    } else if s.satisfies_commitment(CommitmentConfig::confirmed()) {
                        landed += 1;
                        settled.extend(pending.remove(sig));
                    }
                }
            }
            if pending.is_empty() || rpc.get_block_height()? > last_valid {
                break;
            }
            std::thread::sleep(POLL);
        }
        left.retain(|i| !settled.contains(i));
    }
    println!("landed {landed}");
    println!("sends {calls}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hidden subcommand takes the arguments the parent gives it.
    #[test]
    fn the_parent_s_arguments_parse_as_the_child_s() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: RpcArgs,
        }
        let cli = <Cli as clap::Parser>::try_parse_from([
            "rpc-send",
            "--url",
            "http://127.0.0.1:8899",
            "--keypair",
            "/tmp/k.json",
            "--count",
            "500",
            "--amount-base",
            "3000000",
            "--rate",
            "100",
        ])
        .expect("parses");
        let w = &cli.args.workload;
        assert_eq!((w.count, w.amount_base), (500, 3_000_000));
        assert_eq!(cli.args.rate, 100.0);
    }
}
