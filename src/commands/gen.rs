//! `txpace gen`: the founding workload — N unique, signed self-transfers with a priority fee.
//!
//! A self-transfer (payer → payer) changes no balance except by the fee, needs no recipient
//! accounts and conflicts only with transactions of the same payer, so a file of them measures
//! landing, not program behaviour. Each one is made unique by its lamport amount (the i-th
//! transfers i + 1 lamports), so no two share a signature. `--payers K` spreads them over K
//! funded keypairs because one payer's account is write-locked by every one of its transactions,
//! which serialises them inside a block at high rates.
//!
//! The builders are library functions because `txpace demo` and the benchmarks make the same
//! workload against the local validator.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::{Context, Result, anyhow, bail};
use rayon::prelude::*;
use solana_commitment_config::CommitmentConfig;
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_hash::Hash;
use solana_keypair::{Keypair, read_keypair_file, write_keypair_file};
use solana_message::{Message, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;
use solana_system_interface::instruction as system_instruction;
use solana_transaction::versioned::VersionedTransaction;

use crate::{
    cli::{GenArgs, GlobalOpts, OutputFormat},
    config,
    redact::redact_url,
    source::{encode_base58, encode_base64},
};

/// The base fee per signature; unchanged on every cluster since launch.
pub const LAMPORTS_PER_SIGNATURE: u64 = 5_000;

/// Compute units a self-transfer with its two compute-budget instructions consumes: 150 for the
/// system transfer and 150 for each compute-budget instruction (measured on agave 4.0 by the
/// end-to-end test). The default limit of 1,000 leaves room for runtime changes while keeping the
/// priority fee at 1,000 lamports at the default price.
pub const SELF_TRANSFER_UNITS: u32 = 450;

/// Payer funding transfers per transaction; 10 keeps it far below 1232 bytes.
const FUNDING_TRANSFERS_PER_TX: usize = 10;

const RPC_TIMEOUT: Duration = Duration::from_secs(30);

pub fn run(global: &GlobalOpts, args: GenArgs) -> Result<u8> {
    if args.count == 0 {
        bail!("-n/--count must be at least 1");
    }
    if args.payers == Some(0) {
        bail!("--payers must be at least 1");
    }
    if args.cu_limit < SELF_TRANSFER_UNITS {
        eprintln!(
            "warning: --cu-limit {} is below the {SELF_TRANSFER_UNITS} compute units a \
             self-transfer uses; these transactions will land as failed",
            args.cu_limit
        );
    }
    let resolved = config::resolve(&global.to_args(args.keypair.clone()))?;
    let keypair_path = resolved
        .keypair_path
        .clone()
        .context("no keypair: pass --keypair or set keypair_path in the Solana CLI config")?;
    let funder = read_keypair(&keypair_path)?;
    let commitment = CommitmentConfig {
        commitment: resolved.commitment.level(),
    };
    let url = redact_url(&resolved.rpc_url);
    let rpc = RpcClient::new_with_timeout_and_commitment(
        resolved.rpc_url.clone(),
        RPC_TIMEOUT,
        commitment,
    );
    let count = args.count as usize;
    let fee = fee_per_transaction(args.cu_price, args.cu_limit);

    let payers = match args.payers {
        None => {
            let need = fee.saturating_mul(count as u64);
            match rpc.get_balance(&funder.pubkey()) {
                Ok(balance) if balance < need => eprintln!(
                    "warning: {} holds {} SOL but {count} transactions cost {} SOL in fees",
                    funder.pubkey(),
                    sol(balance),
                    sol(need)
                ),
                Ok(_) => {}
                Err(e) => return Err(anyhow!(e)).context(format!("getBalance at {url}")),
            }
            vec![funder]
        }
        Some(k) => {
            let payers = load_or_create_payers(&args.out, k as usize)?;
            let rent = rpc
                .get_minimum_balance_for_rent_exemption(0)
                .with_context(|| format!("getMinimumBalanceForRentExemption at {url}"))?;
            let per_payer = count.div_ceil(payers.len()) as u64;
            let target = payer_budget(per_payer, fee, count as u64, rent);
            let pubkeys: Vec<Pubkey> = payers.iter().map(|(kp, _)| kp.pubkey()).collect();
            let funded = fund_payers(&rpc, &funder, &pubkeys, target, args.cu_price)
                .with_context(|| format!("funding payers at {url}"))?;
            for ((kp, path), sent) in payers.iter().zip(&funded) {
                println!(
                    "payer {} ({}): {}",
                    kp.pubkey(),
                    path.display(),
                    if *sent == 0 {
                        "already funded".to_string()
                    } else {
                        format!("funded with {} SOL", sol(*sent))
                    }
                );
            }
            payers.into_iter().map(|(kp, _)| kp).collect()
        }
    };

    let (blockhash, last_valid) = rpc
        .get_latest_blockhash_with_commitment(commitment)
        .with_context(|| format!("getLatestBlockhash at {url}"))?;
    let txs = build_self_transfers(&payers, count, args.cu_price, args.cu_limit, blockhash)?;
    write_transactions(&args.out, &txs, args.format)?;
    let height = rpc.get_block_height_with_commitment(commitment).ok();

    println!(
        "wrote {} transactions ({}) to {}",
        txs.len(),
        format_name(args.format),
        args.out.display()
    );
    println!(
        "  {} payer{}, {} µlamports/CU, limit {} CU, fee {} lamports each",
        payers.len(),
        if payers.len() == 1 { "" } else { "s" },
        args.cu_price,
        args.cu_limit,
        fee
    );
    match height {
        Some(h) => println!(
            "  blockhash {blockhash} ({}), valid until block height {last_valid} (now {h}, {} blocks left)",
            resolved.commitment.as_str(),
            last_valid.saturating_sub(h)
        ),
        None => println!(
            "  blockhash {blockhash} ({}), valid until block height {last_valid}",
            resolved.commitment.as_str()
        ),
    }
    Ok(0)
}

/// Signs `count` unique self-transfers, spread over `payers` round-robin (the i-th is paid by
/// payer i mod K and moves i + 1 lamports). Signing runs on all cores: 100,000 transactions are a
/// realistic benchmark size.
pub fn build_self_transfers(
    payers: &[Keypair],
    count: usize,
    cu_price: u64,
    cu_limit: u32,
    blockhash: Hash,
) -> Result<Vec<VersionedTransaction>> {
    if payers.is_empty() {
        bail!("no payers to sign with");
    }
    (0..count)
        .into_par_iter()
        .map(|i| {
            let payer = &payers[i % payers.len()];
            self_transfer(payer, i as u64 + 1, cu_price, cu_limit, blockhash)
        })
        .collect()
}

/// One self-transfer of `lamports` with a compute-unit price and limit.
pub fn self_transfer(
    payer: &Keypair,
    lamports: u64,
    cu_price: u64,
    cu_limit: u32,
    blockhash: Hash,
) -> Result<VersionedTransaction> {
    let me = payer.pubkey();
    let instructions = [
        ComputeBudgetInstruction::set_compute_unit_price(cu_price),
        ComputeBudgetInstruction::set_compute_unit_limit(cu_limit),
        system_instruction::transfer(&me, &me, lamports),
    ];
    let message = Message::new_with_blockhash(&instructions, Some(&me), &blockhash);
    VersionedTransaction::try_new(VersionedMessage::Legacy(message), &[payer])
        .map_err(|e| anyhow!("signing with {me}: {e}"))
}

/// Base fee plus priority fee (price × limit, rounded up to whole lamports), which is what the
/// runtime charges whatever the transaction actually consumes.
pub fn fee_per_transaction(cu_price: u64, cu_limit: u32) -> u64 {
    let priority = (u128::from(cu_price) * u128::from(cu_limit)).div_ceil(1_000_000);
    LAMPORTS_PER_SIGNATURE.saturating_add(u64::try_from(priority).unwrap_or(u64::MAX))
}

/// Lamports a payer needs for `tx_count` transactions: twice their fees (so a rerun with a new
/// blockhash still fits), the largest transfer amount (checked against the balance) and the
/// rent-exempt minimum a fee payer must keep.
pub fn payer_budget(tx_count: u64, fee: u64, max_amount: u64, rent_exempt_minimum: u64) -> u64 {
    tx_count
        .saturating_mul(fee)
        .saturating_mul(2)
        .saturating_add(max_amount)
        .saturating_add(rent_exempt_minimum)
}

/// `<out>.payer-<i>.json`, i from 1.
pub fn payer_path(out: &Path, i: usize) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(format!(".payer-{i}.json"));
    PathBuf::from(name)
}

/// Reads the payer keypairs a previous run saved next to `out`, creating the missing ones, so a
/// rerun reuses (and only tops up) payers instead of stranding their lamports in lost keys.
pub fn load_or_create_payers(out: &Path, k: usize) -> Result<Vec<(Keypair, PathBuf)>> {
    (1..=k)
        .map(|i| {
            let path = payer_path(out, i);
            if path.exists() {
                return Ok((read_keypair(&path)?, path));
            }
            let kp = Keypair::new();
            write_private_keypair(&kp, &path)?;
            Ok((kp, path))
        })
        .collect()
}

/// Writes a Solana JSON keypair file readable only by its owner.
pub fn write_private_keypair(kp: &Keypair, path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    write_keypair_file(kp, path).map_err(|e| anyhow!("writing keypair {}: {e}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .with_context(|| format!("setting mode 0600 on {}", path.display()))
}

/// Tops every payer up to `target` lamports from `funder` in confirmed transfers, and returns the
/// lamports sent to each (0 when it already had enough).
pub fn fund_payers(
    rpc: &RpcClient,
    funder: &Keypair,
    payers: &[Pubkey],
    target: u64,
    cu_price: u64,
) -> Result<Vec<u64>> {
    let mut sends = Vec::with_capacity(payers.len());
    for payer in payers {
        let balance = rpc
            .get_balance(payer)
            .with_context(|| format!("getBalance of {payer}"))?;
        sends.push(target.saturating_sub(balance));
    }
    let todo: Vec<(Pubkey, u64)> = payers
        .iter()
        .copied()
        .zip(sends.iter().copied())
        .filter(|(_, l)| *l > 0)
        .collect();
    if todo.is_empty() {
        return Ok(sends);
    }
    let chunks: Vec<&[(Pubkey, u64)]> = todo.chunks(FUNDING_TRANSFERS_PER_TX).collect();
    let fees: u64 = chunks
        .iter()
        .map(|c| fee_per_transaction(cu_price, funding_cu_limit(c.len())))
        .sum();
    let total: u64 = todo
        .iter()
        .map(|(_, l)| *l)
        .sum::<u64>()
        .saturating_add(fees);
    let rent = rpc
        .get_minimum_balance_for_rent_exemption(0)
        .context("getMinimumBalanceForRentExemption")?;
    let balance = rpc
        .get_balance(&funder.pubkey())
        .with_context(|| format!("getBalance of {}", funder.pubkey()))?;
    if balance < total.saturating_add(rent) {
        bail!(
            "{} holds {} SOL; funding {} payers needs {} SOL plus {} SOL it must keep",
            funder.pubkey(),
            sol(balance),
            todo.len(),
            sol(total),
            sol(rent)
        );
    }
    for chunk in chunks {
        let mut instructions = vec![
            ComputeBudgetInstruction::set_compute_unit_price(cu_price),
            ComputeBudgetInstruction::set_compute_unit_limit(funding_cu_limit(chunk.len())),
        ];
        instructions.extend(
            chunk
                .iter()
                .map(|(to, l)| system_instruction::transfer(&funder.pubkey(), to, *l)),
        );
        let blockhash = rpc.get_latest_blockhash().context("getLatestBlockhash")?;
        let message =
            Message::new_with_blockhash(&instructions, Some(&funder.pubkey()), &blockhash);
        let tx = VersionedTransaction::try_new(VersionedMessage::Legacy(message), &[funder])
            .map_err(|e| anyhow!("signing with {}: {e}", funder.pubkey()))?;
        rpc.send_and_confirm_transaction(&tx)
            .context("sending a funding transfer")?;
    }
    Ok(sends)
}

/// 150 CU per system transfer and per compute-budget instruction, doubled for headroom.
fn funding_cu_limit(transfers: usize) -> u32 {
    300 * (transfers as u32 + 2)
}

/// The wire bytes of a transaction.
pub fn wire_bytes(tx: &VersionedTransaction) -> Result<Vec<u8>> {
    bincode::serialize(tx).context("serializing a transaction")
}

/// The file contents for `format`: base64 or base58 one per line, or a JSON array of base64.
pub fn encode_transactions(txs: &[VersionedTransaction], format: OutputFormat) -> Result<String> {
    let encoded: Vec<String> = txs
        .iter()
        .map(|tx| {
            let bytes = wire_bytes(tx)?;
            Ok(match format {
                OutputFormat::Base58 => encode_base58(&bytes),
                OutputFormat::Base64 | OutputFormat::Json => encode_base64(&bytes),
            })
        })
        .collect::<Result<_>>()?;
    Ok(match format {
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&encoded).context("encoding JSON")?;
            s.push('\n');
            s
        }
        OutputFormat::Base64 | OutputFormat::Base58 => {
            let mut s = encoded.join("\n");
            s.push('\n');
            s
        }
    })
}

/// Writes the transactions to `path` (replacing it).
pub fn write_transactions(
    path: &Path,
    txs: &[VersionedTransaction],
    format: OutputFormat,
) -> Result<()> {
    let text = encode_transactions(txs, format)?;
    let mut file =
        fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .with_context(|| format!("writing {}", path.display()))
}

fn format_name(format: OutputFormat) -> &'static str {
    match format {
        OutputFormat::Base64 => "base64, one per line",
        OutputFormat::Base58 => "base58, one per line",
        OutputFormat::Json => "JSON array of base64",
    }
}

/// Reads a Solana JSON keypair file, naming the file in errors and warning when others can read
/// the secret key.
pub fn read_keypair(path: &Path) -> Result<Keypair> {
    if !path.exists() {
        bail!(
            "keypair file {} does not exist (pass --keypair, or create one with `solana-keygen new`)",
            path.display()
        );
    }
    let kp =
        read_keypair_file(path).map_err(|e| anyhow!("reading keypair {}: {e}", path.display()))?;
    warn_if_exposed(path);
    Ok(kp)
}

fn warn_if_exposed(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o044 != 0 {
            eprintln!(
                "warning: keypair {} is readable by group or others (mode {mode:03o}); \
                 run `chmod 600 {}`",
                path.display(),
                path.display()
            );
        }
    }
}

/// Lamports as SOL without trailing zeros.
fn sol(lamports: u64) -> String {
    let s = format!(
        "{}.{:09}",
        lamports / 1_000_000_000,
        lamports % 1_000_000_000
    );
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_transaction::versioned::TransactionVersion;

    fn decode(line: &str) -> VersionedTransaction {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(line)
            .unwrap();
        bincode::deserialize(&bytes).unwrap()
    }

    #[test]
    fn self_transfers_are_unique_signed_and_round_robin() {
        let payers = [Keypair::new(), Keypair::new()];
        let hash = Hash::new_from_array([7; 32]);
        let txs = build_self_transfers(&payers, 5, 1_000_000, 1_000, hash).unwrap();
        assert_eq!(txs.len(), 5);
        let mut sigs: Vec<_> = txs.iter().map(|t| t.signatures[0]).collect();
        sigs.sort();
        sigs.dedup();
        assert_eq!(sigs.len(), 5);
        for (i, tx) in txs.iter().enumerate() {
            assert_eq!(tx.version(), TransactionVersion::LEGACY);
            assert_eq!(tx.message.static_account_keys()[0], payers[i % 2].pubkey());
            assert_eq!(*tx.message.recent_blockhash(), hash);
            assert_eq!(tx.message.instructions().len(), 3);
            assert!(tx.verify_with_results().iter().all(|ok| *ok));
            assert!(wire_bytes(tx).unwrap().len() <= 1232);
        }
    }

    #[test]
    fn fees_round_the_priority_fee_up() {
        assert_eq!(fee_per_transaction(1_000_000, 1_000), 6_000);
        assert_eq!(fee_per_transaction(1, 1), 5_001);
        assert_eq!(fee_per_transaction(0, 1_000), 5_000);
        assert_eq!(fee_per_transaction(u64::MAX, u32::MAX), u64::MAX);
        assert_eq!(payer_budget(10, 6_000, 50, 890_880), 120_000 + 50 + 890_880);
    }

    #[test]
    fn all_formats_round_trip() {
        let payer = Keypair::new();
        let txs = build_self_transfers(&[payer], 3, 7, 500, Hash::new_from_array([7; 32])).unwrap();
        let b64 = encode_transactions(&txs, OutputFormat::Base64).unwrap();
        let lines: Vec<&str> = b64.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(b64.ends_with('\n'));
        for (line, tx) in lines.iter().zip(&txs) {
            assert_eq!(decode(line), *tx);
        }
        let b58 = encode_transactions(&txs, OutputFormat::Base58).unwrap();
        for (line, tx) in b58.lines().zip(&txs) {
            let bytes = bs58::decode(line).into_vec().unwrap();
            assert_eq!(
                bincode::deserialize::<VersionedTransaction>(&bytes).unwrap(),
                *tx
            );
        }
        let json = encode_transactions(&txs, OutputFormat::Json).unwrap();
        let array: Vec<String> = serde_json::from_str(&json).unwrap();
        assert_eq!(array.len(), 3);
        for (s, tx) in array.iter().zip(&txs) {
            assert_eq!(decode(s), *tx);
        }
    }

    #[test]
    fn the_source_reader_accepts_every_output_format() {
        let dir = tempfile::tempdir().unwrap();
        let payers = [Keypair::new(), Keypair::new()];
        let txs = build_self_transfers(&payers, 4, 1_000_000, 1_000, Hash::new_from_array([9; 32]))
            .unwrap();
        for (format, name) in [
            (OutputFormat::Base64, "t.b64"),
            (OutputFormat::Base58, "t.b58"),
            (OutputFormat::Json, "t.json"),
        ] {
            let path = dir.path().join(name);
            write_transactions(&path, &txs, format).unwrap();
            let loaded = crate::source::load(&[path], crate::cli::InputFormat::Auto).unwrap();
            assert!(
                loaded.invalid.is_empty(),
                "{format:?}: {:?}",
                loaded.invalid
            );
            let sigs: Vec<_> = loaded.valid.iter().map(|t| t.signature).collect();
            let want: Vec<_> = txs.iter().map(|t| t.signatures[0]).collect();
            assert_eq!(sigs, want, "{format:?}");
        }
    }

    #[test]
    fn payer_files_are_private_and_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("txs.b64");
        let first = load_or_create_payers(&out, 2).unwrap();
        assert_eq!(first[1].1, dir.path().join("txs.b64.payer-2.json"));
        for (_, path) in &first {
            let mode = fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let again = load_or_create_payers(&out, 3).unwrap();
        assert_eq!(again[0].0.pubkey(), first[0].0.pubkey());
        assert_eq!(again[1].0.pubkey(), first[1].0.pubkey());
        assert_eq!(again.len(), 3);
    }

    #[test]
    fn missing_keypair_names_the_file() {
        let err = read_keypair(Path::new("/nonexistent/id.json"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "keypair file /nonexistent/id.json does not exist (pass --keypair, or create one with `solana-keygen new`)"
        );
    }

    #[test]
    fn sol_is_trimmed() {
        assert_eq!(sol(1_500_000_000), "1.5");
        assert_eq!(sol(2_000_000_000), "2");
        assert_eq!(sol(6_000), "0.000006");
    }
}
