//! txpace's benchmarks on a real local validator, against Agave's own clients in the same run.
//! Figures go to stdout as a table (and `--json` for machines); the README keeps the latest.

mod agave_child;
mod agave_metrics;
mod chain;
mod cluster;
mod deploy;
mod faults;
mod measure;
mod profile;
mod routes;
mod send;
mod terminal;

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
    /// The same workload through txpace's two routes: QUIC to the leaders (--via tpu) and the
    /// RPC node's sendTransaction (--via rpc)
    Routes(routes::Args),
    /// The founding workload on a cluster of several validators (txpace-localnet) through
    /// txpace and Agave's TpuClient, healthy and with one leader's TPU blackholed
    Cluster(cluster::Args),
    /// The founding workload's shape through a frozen validator, a cut TPU link and a restart,
    /// through txpace and Agave's TpuClient
    Faults(faults::Args),
    /// Where txpace's CPU goes on the founding workload, from `perf record` (needs perf)
    Profile(profile::Args),
    /// (internal) Agave's TpuClient as a measured child process
    #[command(hide = true)]
    AgaveSend(send::AgaveArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Bench::Send(args) => send::run(args),
        Bench::Deploy(args) => deploy::run(args),
        Bench::Routes(args) => routes::run(args),
        Bench::Cluster(args) => cluster::run(args),
        Bench::Faults(args) => faults::run(args),
        Bench::Profile(args) => profile::run(args),
        Bench::AgaveSend(args) => send::agave_send(args),
    }
}
