//! The arguments of `deploy`.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use super::{MAX_CU_LIMIT, SendOpts, UnitPrice, values::parse_unit_price};
use crate::deploy::elf::MAX_PROGRAM_LEN;

#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The program: the .so that `cargo build-sbf` writes to target/deploy/
    #[arg(
        value_name = "PROGRAM.so",
        required_unless_present = "close_buffer",
        value_hint = ValueHint::FilePath
    )]
    pub program: Option<PathBuf>,
    /// Default signer: the fee payer and upgrade authority unless --fee-payer or
    /// --upgrade-authority name others. Every signer is a keypair file, stdin, prompt://
    /// (a seed phrase), ASK or usb://ledger [default: the CLI config's keypair_path]
    #[arg(short = 'k', long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub keypair: Option<PathBuf>,
    /// Fee payer of every transaction (and the buffer's and program's rent), apart from the
    /// upgrade authority [default: the -k/--keypair signer]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub fee_payer: Option<PathBuf>,
    /// Compute-unit price in micro-lamports for every transaction of the deploy (buffer
    /// creation, writes, deploy or upgrade), or `auto`: the --fee-percentile of recent
    /// prioritization fees for the accounts the deploy writes
    #[arg(long, value_name = "MICROLAMPORTS|auto", allow_negative_numbers = true,
          value_parser = parse_unit_price)]
    pub with_compute_unit_price: Option<UnitPrice>,
    /// Compute-unit limit of every transaction [default: with a price, each phase's is
    /// measured by simulating its first transaction, plus a margin; without, none is set]
    #[arg(long, value_name = "UNITS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CU_LIMIT)))]
    pub with_compute_unit_limit: Option<u32>,
    /// Make the program immutable: the deploy or upgrade transaction itself removes its upgrade
    /// authority, so it can never be upgraded again
    #[arg(long = "final", conflicts_with = "buffer_only")]
    pub finalize: bool,
    /// Only create (or resume) and write the buffer; deploy or upgrade from it later, e.g. from
    /// a multisig (the Solana CLI's `program write-buffer`)
    #[arg(long, conflicts_with_all = ["program_id", "max_len"])]
    pub buffer_only: bool,
    /// Signer of the buffer's writes with --buffer-only [default: the upgrade authority]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath, requires = "buffer_only")]
    pub buffer_authority: Option<PathBuf>,
    /// With --buffer-only: once written and checked, hand the buffer to this key (a multisig's
    /// vault, say) in a last transaction
    #[arg(long, value_name = "PUBKEY", requires = "buffer_only")]
    pub new_buffer_authority: Option<String>,
    /// Which percentile of recent fees `--with-compute-unit-price auto` pays
    #[arg(long, default_value_t = 75, value_name = "0-100", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub fee_percentile: u8,
    /// The program's address: a keypair file to deploy a new program (an existing one is
    /// upgraded), or the public key of a program to upgrade [default: NAME-keypair.json next to
    /// the .so, created when missing, as `cargo build-sbf` does]
    #[arg(long, value_name = "KEYPAIR|PUBKEY")]
    pub program_id: Option<String>,
    /// Upgrade authority of the program, which also owns the buffer [default: the -k/--keypair
    /// signer]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub upgrade_authority: Option<PathBuf>,
    /// Buffer account keypair: created when no account exists at its address, resumed when one
    /// does (only the chunks missing or different are written) [default: NAME-buffer.json next
    /// to the .so, removed after a successful deploy]
    #[arg(long, value_name = "KEYPAIR", value_hint = ValueHint::FilePath)]
    pub buffer: Option<PathBuf>,
    /// Bytes reserved for the program, for later upgrades of a larger build (at most 10 MiB less
    /// the program-data header) [default: the program's size]
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_PROGRAM_LEN as u64))]
    pub max_len: Option<usize>,
    /// Signings allowed per transaction: one whose blockhash expires before it lands is signed
    /// again with a fresh blockhash and re-queued until this many signings (at most 1000)
    #[arg(long, default_value_t = 5, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_sign_attempts: u32,
    /// Close this buffer and return its lamports to the payer instead of deploying (signed by
    /// --upgrade-authority, default the payer)
    #[arg(long, value_name = "KEYPAIR|PUBKEY",
          conflicts_with_all = ["program", "program_id", "buffer", "max_len"])]
    pub close_buffer: Option<String>,
    #[command(flatten)]
    pub send: SendOpts,
}
