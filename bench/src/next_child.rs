//! Agave's `solana-tpu-client-next` as a measured child process, the strongest Agave contender:
//! the child itself (`txpace-bench next-send`, [`next_send`]; the client driven as Agave's
//! send-transaction service drives it: `next_sends`) and [`send`], which runs it for every
//! benchmark that meets it. It sends the same messages as the legacy client's child
//! ([`agave_child::messages`]), so the benchmark reads its landings from the chain the same way
//! ([`agave_child::expected`]), paid by a payer of its own.

use std::path::Path;

use anyhow::{Context, Result};

use crate::{
    agave_child::{self, AgaveRun, Workload},
    measure::{self, Sends},
    next_sends::{self, Params},
    workload::Endpoint,
};

/// How the benchmarks name this contender.
pub const NAME: &str = "Agave tpu-client-next";

/// Sends `count` self-transfers paid by `keypair` at `rate` tx/s, lamport amounts from
/// `amount_base` on, with `during` run beside it (see [`measure::run_during`]). What landed
/// is the chain's to say: [`agave_child::expected`] names the messages to look for.
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
    let mut cmd = agave_child::workload_command("next-send", &ep.rpc, keypair, count, amount_base)?;
    cmd.args(["--ws", &ep.ws])
        .args(["--rate", &rate.to_string()]);
    let done = measure::run_during(&mut cmd, during)?;
    Ok(read_run(&done))
}

/// The `key value` lines a `next-send` child prints on standard output.
#[derive(Debug, Default, PartialEq)]
pub struct ChildOutput {
    /// What the client itself saw confirmed (for the record: the benchmarks count from the
    /// chain).
    pub landed: Option<u64>,
    /// Transactions handed to a leader's connection worker, one per leader.
    pub sends: Option<u64>,
    /// Transactions no worker took (its channel full, or no worker for that leader).
    pub dropped: Option<u64>,
    /// Given up with their blockhash expired, never seen by the node.
    pub expired: Option<u64>,
}

impl ChildOutput {
    pub fn parse(stdout: &str) -> ChildOutput {
        let field = |key: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
                .and_then(|v| v.trim().parse().ok())
        };
        ChildOutput {
            landed: field("landed"),
            sends: field("sends"),
            dropped: field("dropped"),
            expired: field("expired"),
        }
    }
}

/// What a finished `next-send` child says of its run. A child that exited 0 without its landed
/// and sends lines failed too: its landings are still read from the chain, but it is never
/// taken for a run that landed 0.
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

/// Hidden child mode: tpu-client-next sends the workload, so it is measured as a process
/// exactly like txpace and the legacy client.
#[derive(clap::Args)]
pub struct NextArgs {
    #[command(flatten)]
    workload: Workload,
    #[arg(long)]
    ws: String,
    /// New transactions per second (the pace of every contender of the benchmark).
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
}

/// The tpu-client-next contender: signs the messages, sends them at the pace and resends them
/// until each is settled, then prints its counts.
pub fn next_send(args: NextArgs) -> Result<()> {
    let (payer, messages) = args.workload.load()?;
    let params = Params {
        url: args.workload.url,
        ws: args.ws,
        rate: args.rate,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    let out = runtime.block_on(next_sends::send_all(&params, &payer, messages))?;
    println!("landed {}", out.book.confirmed);
    println!("sends {}", out.sends);
    println!("dropped {}", out.dropped);
    println!("expired {}", out.book.expired);
    println!("failed {}", out.book.failed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{os::unix::process::ExitStatusExt, process::ExitStatus};

    use super::*;
    use crate::measure::{Finished, Usage};

    fn finished(code: i32, stdout: &str, stderr: &str) -> Finished {
        Finished {
            status: ExitStatus::from_raw(code << 8),
            usage: Usage {
                wall_s: 15.2,
                cpu_s: 1.5,
                peak_rss_mb: 40.0,
            },
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn the_childs_lines_are_parsed_by_their_keys() {
        let out = ChildOutput::parse("landed 1500\nsends 3004\ndropped 2\nexpired 0\nfailed 0\n");
        assert_eq!(
            out,
            ChildOutput {
                landed: Some(1500),
                sends: Some(3004),
                dropped: Some(2),
                expired: Some(0),
            }
        );
        // A key is a whole word, a value a number.
        assert_eq!(
            ChildOutput::parse("sends_x 5\nlanded many\n"),
            ChildOutput::default()
        );
    }

    #[test]
    fn a_finished_child_gives_its_sends_counted_at_attempt() {
        let run = read_run(&finished(0, "landed 1500\nsends 3004\ndropped 0\n", ""));
        assert_eq!(run.failure, None);
        assert_eq!(run.sends, Some(Sends::counted(3004)));
        assert_eq!(run.usage.wall_s, 15.2);
    }

    /// A child that failed is a failure with its error, never a run that landed 0; one that
    /// exited 0 without its lines failed too.
    #[test]
    fn a_failed_child_is_never_read_as_0_landed() {
        let run = read_run(&finished(
            1,
            "",
            "Error: tpu-client-next's leader updater: RPC unreachable\n",
        ));
        assert_eq!(
            run.failure.as_deref(),
            Some("exit 1: Error: tpu-client-next's leader updater: RPC unreachable")
        );
        assert_eq!(run.sends, None);
        let run = read_run(&finished(0, "sends 10\n", ""));
        assert!(
            run.failure
                .as_deref()
                .is_some_and(|f| f.starts_with("exit 0 without its landed")),
            "{:?}",
            run.failure
        );
        let run = read_run(&finished(0, "landed 0\nsends 0\n", ""));
        assert_eq!(run.failure, None, "a finished run that landed 0 says so");
    }

    /// The hidden subcommand takes the arguments the parent gives it.
    #[test]
    fn the_parent_s_arguments_parse_as_the_child_s() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: NextArgs,
        }
        let cli = <Cli as clap::Parser>::try_parse_from([
            "next-send",
            "--url",
            "http://127.0.0.1:8899",
            "--ws",
            "ws://127.0.0.1:8900",
            "--keypair",
            "/tmp/k.json",
            "--count",
            "1500",
            "--amount-base",
            "3000000",
            "--rate",
            "100",
        ])
        .expect("parses");
        let w = &cli.args.workload;
        assert_eq!((w.count, w.amount_base), (1500, 3_000_000));
        assert_eq!(cli.args.rate, 100.0);
    }
}
