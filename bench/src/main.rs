//! txpace's benchmarks on real local validators (a solana-test-validator; a txpace-localnet
//! cluster for `cluster` and some of `faults`), against Agave's own clients in the same run.
//! Figures go to stdout as tables (`--json` for machines; `--markdown PATH` writes the tables
//! as the Markdown docs/performance.md is made of).

mod agave_child;
mod agave_metrics;
mod agave_sends;
mod bound;
mod chain;
mod child;
mod cluster;
mod deploy;
mod faults;
mod first_send;
mod gap;
mod load;
mod markdown;
mod measure;
mod next_child;
mod next_sends;
mod profile;
mod routes;
mod rpc_child;
mod send;
mod terminal;
mod txpace_child;
mod versus;
mod wan;
mod workload;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "txpace-bench",
    about = "txpace benchmarks on local validators (solana-test-validator, txpace-localnet)"
)]
struct Cli {
    #[command(subcommand)]
    command: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// The founding workload through txpace and through Agave's TpuClient and tpu-client-next;
    /// pacing accuracy; highest landed rate unstaked and staked
    Send(send::Args),
    /// A program deploy through txpace and through Agave's parallel deploy path
    Deploy(deploy::Args),
    /// The same workload through txpace's two routes: QUIC to the leaders (--via tpu) and the
    /// RPC node's sendTransaction (--via rpc)
    Routes(routes::Args),
    /// The founding workload on a cluster of several validators (txpace-localnet) through
    /// txpace and Agave's TpuClient and tpu-client-next, healthy and with one leader's TPU
    /// blackholed
    Cluster(cluster::Args),
    /// The founding workload's shape through a frozen validator, a cut TPU link and a restart,
    /// through txpace and Agave's TpuClient and tpu-client-next
    Faults(faults::Args),
    /// txpace against Agave's TPU clients on a 3-node cluster through far and lossy links
    /// (link profiles eu, na, apac, hostile, mainnet), alone and with competing senders, with a
    /// node dark, and at --rate max
    Wan(wan::Args),
    /// Where txpace's CPU goes on the founding workload, from `perf record` (needs perf)
    Profile(profile::Args),
    /// (internal) Agave's TpuClient as a measured child process
    #[command(hide = true)]
    AgaveSend(agave_child::AgaveArgs),
    /// (internal) Agave's tpu-client-next, driven as its send-transaction service drives it,
    /// as a measured child process
    #[command(hide = true)]
    NextSend(next_child::NextArgs),
    /// (internal) RPC sendTransaction, the node's send-transaction service retrying, as a
    /// measured child process
    #[command(hide = true)]
    RpcSend(rpc_child::RpcArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Bench::Send(args) => send::run(args),
        Bench::Deploy(args) => deploy::run(args),
        Bench::Routes(args) => routes::run(args),
        Bench::Cluster(args) => cluster::run(args),
        Bench::Faults(args) => faults::run(args),
        Bench::Wan(args) => wan::run(args),
        Bench::Profile(args) => profile::run(args),
        Bench::AgaveSend(args) => agave_child::agave_send(args),
        Bench::NextSend(args) => next_child::next_send(args),
        Bench::RpcSend(args) => rpc_child::rpc_send(args),
    }
}
