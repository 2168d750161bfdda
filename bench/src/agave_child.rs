//! Agave's TpuClient (`send_and_confirm_messages_with_spinner`) as a measured child process:
//! the child itself (`txpace-bench agave-send`, [`agave_send`], its sends counted where it makes
//! them: `agave_sends`) and [`send`], which runs it for every benchmark that meets it;
//! [`expected`] names the messages whose landings the benchmark then reads from the chain.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{Arc, atomic::Ordering},
};

use anyhow::Result;
use solana_client::{
    rpc_client::RpcClient,
    tpu_client::{TpuClient, TpuClientConfig},
};
use solana_commitment_config::CommitmentConfig;
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_keypair::{Keypair, read_keypair_file};
use solana_message::Message;
use solana_pubkey::Pubkey;
use solana_signer::Signer;

use crate::{
    agave_sends::counting_cache,
    chain::{self, MessageKey},
    child,
    measure::{self, Sends, Usage},
    workload::{CU_LIMIT, CU_PRICE, Endpoint},
};

/// One run of an Agave client (the legacy `TpuClient` here, or tpu-client-next: `next_child`).
#[derive(Debug)]
pub struct AgaveRun {
    /// Its process's wall time, CPU and memory.
    pub usage: Usage,
    /// Its sends, counted where it makes them (see `agave_sends`).
    pub sends: Option<Sends>,
    /// Why it failed, when it did: its exit and the tail of its standard error. Its landings
    /// are read from the chain whether it failed or not.
    pub failure: Option<String>,
}

/// Sends `count` self-transfers paid by `keypair`, lamport amounts from `amount_base` on (so no
/// other run's transactions repeat), with `during` run beside it (see
/// [`measure::run_during`]). What landed is the chain's to say: [`expected`] names the
/// messages to look for.
pub fn send<F>(
    ep: &Endpoint,
    keypair: &Path,
    count: usize,
    amount_base: u64,
    during: F,
) -> Result<AgaveRun>
where
    F: FnOnce(measure::Started) -> Result<()> + Send,
{
    let mut cmd = workload_command("agave-send", &ep.rpc, keypair, count, amount_base)?;
    cmd.args(["--ws", &ep.ws]);
    let done = measure::run_during(&mut cmd, during)?;
    Ok(read_run(&done))
}

/// The `key value` lines an `agave-send` child prints on standard output.
#[derive(Debug, Default, PartialEq)]
pub struct ChildOutput {
    /// What the client itself says landed (for the record: the benchmarks count from the chain).
    pub landed: Option<u64>,
    pub sends: Option<u64>,
}

impl ChildOutput {
    pub fn parse(stdout: &str) -> ChildOutput {
        let field = |key: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .map(str::trim)
        };
        ChildOutput {
            landed: field("landed").and_then(|v| v.parse().ok()),
            sends: field("sends").and_then(|v| v.parse().ok()),
        }
    }
}

/// What a finished `agave-send` child says of its run. A child that exited 0 without both of
/// its lines failed too (its output is not what this reads).
pub fn read_run(done: &measure::Finished) -> AgaveRun {
    let out = ChildOutput::parse(&done.stdout);
    let failure = measure::failure(done.status, &done.stderr, &[0]).or_else(|| {
        (out.landed.is_none() || out.sends.is_none()).then(|| {
            format!(
                "exit 0 without its landed / sends lines: {}",
                measure::stderr_tail(&done.stdout, 3)
            )
        })
    });
    AgaveRun {
        usage: done.usage,
        sends: out.sends.map(Sends::counted),
        failure,
    }
}

/// The messages of a run: `count` self-transfers of `payer` at the founding workload's price,
/// the lamport amounts from `amount_base` on. The child signs and sends these; the parent looks
/// for the same ones on chain.
pub fn messages(payer: &Pubkey, count: usize, amount_base: u64) -> Vec<Message> {
    (0..count as u64)
        .map(|i| {
            Message::new(
                &[
                    ComputeBudgetInstruction::set_compute_unit_price(CU_PRICE),
                    ComputeBudgetInstruction::set_compute_unit_limit(CU_LIMIT),
                    solana_system_interface::instruction::transfer(payer, payer, amount_base + i),
                ],
                Some(payer),
            )
        })
        .collect()
}

/// The keys of the messages [`send`] sends with these arguments, for [`chain::landed_messages`].
pub fn expected(payer: &Pubkey, count: usize, amount_base: u64) -> HashSet<MessageKey> {
    chain::message_keys(&messages(payer, count, amount_base))
}

/// Hidden child mode: Agave's TpuClient sends the workload, so it is measured as a process
/// exactly like txpace.
#[derive(clap::Args)]
pub struct AgaveArgs {
    #[command(flatten)]
    workload: Workload,
    #[arg(long)]
    ws: String,
}

/// What every Agave child is told to send, on the same flags: `count` self-transfers paid by
/// `keypair`, lamport amounts from `amount_base` on, through the node at `url`.
#[derive(clap::Args, Debug)]
pub struct Workload {
    #[arg(long)]
    pub url: String,
    #[arg(long)]
    pub keypair: PathBuf,
    #[arg(long)]
    pub count: usize,
    /// Offsets the lamport amounts so these transactions differ from every other run's.
    #[arg(long, default_value_t = 1_000_000)]
    pub amount_base: u64,
}

impl Workload {
    /// The payer and the run's messages (see [`messages`]).
    pub fn load(&self) -> Result<(Keypair, Vec<Message>)> {
        let payer = read_keypair_file(&self.keypair)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", self.keypair.display()))?;
        let messages = messages(&payer.pubkey(), self.count, self.amount_base);
        Ok((payer, messages))
    }
}

/// The parent's side of [`Workload`]: child mode `mode` of this benchmark, told to send it.
pub fn workload_command(
    mode: &str,
    url: &str,
    keypair: &Path,
    count: usize,
    amount_base: u64,
) -> Result<std::process::Command> {
    let mut cmd = child::command(std::env::current_exe()?)?;
    cmd.args([mode, "--url", url])
        .arg("--keypair")
        .arg(keypair)
        .args(["--count", &count.to_string()])
        .args(["--amount-base", &amount_base.to_string()]);
    Ok(cmd)
}

/// The name of the child's connection cache.
const AGAVE_SEND_CACHE: &str = "txpace-bench-agave-send";

/// The Agave contender: builds the same kind of messages and lets the TpuClient sign, send,
/// resend and confirm them.
pub fn agave_send(args: AgaveArgs) -> Result<()> {
    let (payer, messages) = args.workload.load()?;
    let rpc = Arc::new(RpcClient::new_with_commitment(
        args.workload.url.clone(),
        CommitmentConfig::confirmed(),
    ));
    // The default QUIC cache, each send counted where the client makes it.
    let (cache, sends) = counting_cache(AGAVE_SEND_CACHE)?;
    let client = TpuClient::new_with_connection_cache(
        rpc.clone(),
        &args.ws,
        TpuClientConfig::default(),
        cache,
    )
    .map_err(|e| anyhow::anyhow!("TpuClient: {e}"))?;
    let signers: [&Keypair; 1] = [&payer];
    let errors = client
        .send_and_confirm_messages_with_spinner(&messages, &signers)
        .map_err(|e| anyhow::anyhow!("send_and_confirm_messages_with_spinner: {e}"))?;
    let landed = errors.iter().filter(|e| e.is_none()).count();
    println!("landed {landed}");
    println!("sends {}", sends.load(Ordering::Relaxed));
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{os::unix::process::ExitStatusExt, process::ExitStatus};

    use super::*;
    use crate::measure::Finished;

    fn finished(code: i32, stdout: &str, stderr: &str) -> Finished {
        Finished {
            status: ExitStatus::from_raw(code << 8),
            usage: Usage {
                wall_s: 20.0,
                cpu_s: 2.0,
                peak_rss_mb: 25.0,
            },
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn the_childs_lines_are_parsed_by_their_keys() {
        let out = ChildOutput::parse("landed 1500\nsends 3012\n");
        assert_eq!(
            out,
            ChildOutput {
                landed: Some(1500),
                sends: Some(3012),
            }
        );
        // A key is a whole word: `landed_x 5` is not `landed`.
        assert_eq!(ChildOutput::parse("landed_x 5\n").landed, None);
        assert_eq!(ChildOutput::parse("").landed, None);
    }

    /// A run that finished: its sends as counted, its process's wall time.
    #[test]
    fn a_finished_child_gives_its_sends() {
        let run = read_run(&finished(0, "landed 1500\nsends 3012\n", ""));
        assert_eq!(run.failure, None);
        assert_eq!(run.sends, Some(Sends::counted(3012)));
        assert_eq!(run.usage.wall_s, 20.0);
    }

    /// A child that gave up after its blockhash rounds is a failure with its error, whatever
    /// it printed: never a run that landed 0.
    #[test]
    fn a_failed_child_is_a_failure_with_its_stderr_tail() {
        let run = read_run(&finished(
            1,
            "",
            "Error: send_and_confirm_messages_with_spinner: Transaction error: blockhash \
             expired after 5 rounds\n",
        ));
        assert_eq!(
            run.failure.as_deref(),
            Some(
                "exit 1: Error: send_and_confirm_messages_with_spinner: Transaction error: \
                 blockhash expired after 5 rounds"
            )
        );
        assert_eq!(run.sends, None);
        assert_eq!(run.usage.wall_s, 20.0);
    }

    #[test]
    fn a_child_that_exits_0_without_its_lines_failed() {
        let run = read_run(&finished(0, "landed 1500\n", ""));
        assert!(
            run.failure
                .as_deref()
                .is_some_and(|f| f.starts_with("exit 0 without its landed")),
            "{:?}",
            run.failure
        );
    }

    /// The parent looks for the very messages the child signs: a message re-signed with another
    /// blockhash, as it lands, has the key of the parent's.
    #[test]
    fn a_re_signed_message_on_chain_has_the_key_the_parent_expects() {
        let payer = Keypair::new();
        let expected = expected(&payer.pubkey(), 3, 7_000);
        assert_eq!(expected.len(), 3);
        let message = messages(&payer.pubkey(), 3, 7_000).remove(1);
        for blockhash in [[1u8; 32], [2u8; 32]] {
            let tx = solana_transaction::Transaction::new(
                &[&payer],
                message.clone(),
                solana_hash::Hash::new_from_array(blockhash),
            );
            let tx = solana_transaction::versioned::VersionedTransaction::from(tx);
            let key =
                chain::message_key(tx.message.static_account_keys(), tx.message.instructions());
            assert!(expected.contains(&key));
        }
        // Another run's amounts are other messages.
        let other = chain::message_keys(&messages(&payer.pubkey(), 3, 8_000));
        assert!(other.is_disjoint(&expected));
    }
}
