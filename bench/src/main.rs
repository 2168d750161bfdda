//! txpace's benchmarks on a real local validator, against Agave's own clients in the same run.
//! Figures go to stdout as a table (and `--json` for machines); the README keeps the latest.

mod deploy;
mod measure;
mod send;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "txpace-bench",
    about = "txpace benchmarks on a local solana-test-validator"
)]
struct Cli {
    #[command(subcommand)]
    command: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// The founding workload through txpace and through Agave's TpuClient; pacing accuracy;
    /// highest landed rate unstaked and staked
    Send(send::Args),
    /// A program deploy through txpace and through Agave's parallel deploy path
    Deploy(deploy::Args),
    /// (internal) Agave's TpuClient as a measured child process
    #[command(hide = true)]
    AgaveSend(send::AgaveArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Bench::Send(args) => send::run(args),
        Bench::Deploy(args) => deploy::run(args),
        Bench::AgaveSend(args) => send::agave_send(args),
    }
}
