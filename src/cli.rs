//! The command line: global options as Solana users type them, one subcommand per job.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{Commitment, GlobalArgs};

#[derive(Debug, Parser)]
#[command(
    name = "txpace",
    version,
    about = "Paced Solana TPU sender with a live dashboard of every transaction's fate"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand understands.
#[derive(Debug, Args, Clone)]
pub struct GlobalOpts {
    /// RPC URL or moniker: m/mainnet-beta, d/devnet, t/testnet, l/localhost
    #[arg(short = 'u', long = "url", global = true, value_name = "URL_OR_MONIKER")]
    pub url: Option<String>,
    /// Websocket URL [default: from the RPC URL: http→ws, https→wss, port + 1]
    #[arg(long = "ws", global = true, value_name = "URL")]
    pub ws: Option<String>,
    /// Commitment at which a transaction counts as confirmed [default: confirmed]
    #[arg(long, global = true, value_enum)]
    pub commitment: Option<Commitment>,
    /// Solana CLI config file [default: ~/.config/solana/cli/config.yml when it exists]
    #[arg(short = 'C', long = "config", global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

impl GlobalOpts {
    pub fn to_args(&self, keypair: Option<PathBuf>) -> GlobalArgs {
        GlobalArgs {
            url: self.url.clone(),
            ws: self.ws.clone(),
            commitment: self.commitment,
            config: self.config.clone(),
            keypair,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode and validate signed transactions and show one row per transaction
    Inspect(InspectArgs),
    /// Generate the founding workload: N unique signed self-transfers
    Gen(GenArgs),
}

/// How input files are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Detect per file
    Auto,
    Base64,
    Base58,
    Json,
    Binary,
}

/// Input files shared by every command that reads transactions.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Files of signed transactions, read in order; `-` reads standard input
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Input encoding
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub format: InputFormat,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// Output encodings of `gen`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Base64,
    Base58,
    Json,
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// Number of transactions
    #[arg(short = 'n', long, default_value_t = 5000)]
    pub count: u32,
    /// Signing and funding keypair [default: the CLI config's keypair_path]
    #[arg(short = 'k', long, value_name = "KEYPAIR")]
    pub keypair: Option<PathBuf>,
    /// Output file
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: PathBuf,
    /// Output encoding
    #[arg(long, value_enum, default_value_t = OutputFormat::Base64)]
    pub format: OutputFormat,
    /// Compute-unit price in micro-lamports per CU
    #[arg(long, default_value_t = 1_000_000)]
    pub cu_price: u64,
    /// Compute-unit limit per transaction
    #[arg(long, default_value_t = 1_000)]
    pub cu_limit: u32,
    /// Fund K fresh payer keypairs (saved next to the output) and spread the transfers over them
    #[arg(long, value_name = "K")]
    pub payers: Option<u32>,
}
