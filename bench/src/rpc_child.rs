//! RPC `sendTransaction` as a measured child process (`txpace-bench rpc-send`): what a user of
//! an RPC node gets, the node's own send-transaction service forwarding each transaction to the
//! leaders and retrying it (every 2 s, `maxRetries` unset: until its blockhash expires). The
//! child sends the same messages as the other Agave contenders' children
//! ([`agave_child::messages`]) at the benchmark's pace, `skipPreflight` as a sender at pace
//! would, then reads their statuses every 400 ms; a message whose blockhash expired unlanded is
//! signed again with a new one and sent again, for at most [`ROUNDS`] blockhashes (the legacy
//! client's own limit of rounds). Its landings are read from the chain as the others' are.
//!
//! It outlasts its node's outages as a careful user's sender would (the fault benchmark
//! freezes and restarts the node it sends through): a call the node refused is made again,
//! at the pace, at each status poll until the node takes it, and a poll that fails is tried
//! again at the next one, rather than giving up the run or waiting out the blockhash. A call
//! the node took and then lost (its service's queue dies with it in a restart) is left to the
//! node's retries, as `maxRetries` unset promises, and so waits out its blockhash to be signed
//! again: what a sender that trusts the node's retries gets.
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
/// them until each lands, fails or the blockhash expires (making the calls the node refused
/// again at each poll), and does it again for what is left.
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
    let pace = Duration::from_secs_f64(1.0 / args.rate.max(0.001));
    for _ in 0..ROUNDS {
        if left.is_empty() {
            break;
        }
        let (hash, last_valid) = loop {
            match rpc.get_latest_blockhash_with_commitment(CommitmentConfig::confirmed()) {
                Ok(latest) => break latest,
                Err(_) => std::thread::sleep(POLL),
            }
        };
        // Each signed as its first call is due, and kept for a call made again.
        let mut signed: Vec<Option<Transaction>> = vec![None; left.len()];
        let mut pending: HashMap<Signature, usize> = HashMap::new();
        // The positions in `left` still to be called: at first all, then those the node
        // refused, made again at each poll.
        let mut refused: Vec<usize> = (0..left.len()).collect();
        let mut settled: Vec<usize> = Vec::new();
        loop {
            let start = Instant::now();
            let mut again = Vec::new();
            for (n, &k) in refused.iter().enumerate() {
                std::thread::sleep(
                    (start + pace * n as u32).saturating_duration_since(Instant::now()),
                );
                let tx = signed[k].get_or_insert_with(|| {
                    Transaction::new(&[&payer], messages[left[k]].clone(), hash)
                });
                crate::first_send::note(calls);
                calls += 1;
                match rpc.send_transaction_with_config(&*tx, config) {
                    Ok(sig) => {
                        pending.insert(sig, left[k]);
                    }
                    Err(_) => again.push(k),
                }
            }
            refused = again;
            let sigs: Vec<Signature> = pending.keys().copied().collect();
            for chunk in sigs.chunks(256) {
                let Ok(statuses) = rpc.get_signature_statuses(chunk) else {
                    break;
                };
                for (sig, status) in chunk.iter().zip(statuses.value) {
                    let Some(s) = status else { continue };
                    if s.err.is_some() {
                        settled.extend(pending.remove(sig));
                    } else if s.satisfies_commitment(CommitmentConfig::confirmed()) {
                        landed += 1;
                        settled.extend(pending.remove(sig));
                    }
                }
            }
            let expired = rpc.get_block_height().is_ok_and(|h| h > last_valid);
            if (pending.is_empty() && refused.is_empty()) || expired {
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
