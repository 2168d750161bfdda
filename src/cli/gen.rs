//! The arguments of `gen` (the founding workload) and `demo` (generate it and send it to a
//! local validator).

use std::path::PathBuf;

use clap::{Args, ValueHint};

use super::{MAX_CU_LIMIT, OutputFormat, SendOpts, UnitPrice, values::parse_unit_price};

#[derive(Debug, Args)]
pub struct GenArgs {
    /// Number of transactions
    #[arg(short = 'n', long, default_value_t = 5000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Signing and funding keypair [default: the CLI config's keypair_path]
    #[arg(short = 'k', long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub keypair: Option<PathBuf>,
    /// Output file
    #[arg(short = 'o', long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub out: PathBuf,
    /// Output encoding
    #[arg(long, value_enum, default_value_t = OutputFormat::Base64)]
    pub format: OutputFormat,
    /// Compute-unit price in micro-lamports per CU, or `auto`: the --fee-percentile of recent
    /// prioritization fees for the payers' accounts
    #[arg(long = "with-compute-unit-price", visible_alias = "cu-price",
          value_name = "MICROLAMPORTS|auto", default_value = "1000000",
          allow_negative_numbers = true, value_parser = parse_unit_price)]
    pub cu_price: UnitPrice,
    /// Which percentile of recent fees `--with-compute-unit-price auto` pays
    #[arg(long, default_value_t = 75, value_name = "0-100", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub fee_percentile: u8,
    /// Compute-unit limit per transaction (at most 1400000, the most a transaction can use)
    #[arg(long = "with-compute-unit-limit", visible_alias = "cu-limit",
          default_value_t = 1_000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_CU_LIMIT)))]
    pub cu_limit: u32,
    /// Fund K fresh payer keypairs (saved next to the output) and spread the transfers over them
    #[arg(long, value_name = "K", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub payers: Option<u32>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Number of self-transfers to generate and send
    #[arg(long, default_value_t = 5000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Compute-unit price in micro-lamports per CU
    #[arg(long = "with-compute-unit-price", visible_alias = "cu-price",
          default_value_t = 1_000_000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64))]
    pub cu_price: u64,
    /// Compute-unit limit per transaction (at most 1400000)
    #[arg(long = "with-compute-unit-limit", visible_alias = "cu-limit",
          default_value_t = 1_000, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_CU_LIMIT)))]
    pub cu_limit: u32,
    /// Send with the validator's own (staked) identity instead of an unstaked ephemeral one
    /// (with --nodes, node 0's)
    #[arg(long, conflicts_with = "identity")]
    pub staked: bool,
    /// Validators to run: 1 is a solana-test-validator; 2 to 8 are an equally staked cluster
    /// (txpace-localnet), where the leader changes every 4 slots
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u8).range(1..=8))]
    pub nodes: u8,
    #[command(flatten)]
    pub send: SendOpts,
}
