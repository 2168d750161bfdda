//! `txpace gen`: writes the founding workload ([`crate::workload`]) to a file: N unique, signed
//! self-transfers with a priority fee, signed by the keypair or by `--payers K` funded payers
//! whose keypairs are kept next to the output so a rerun reuses them.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use anyhow::{Context, Result, anyhow, bail};
use solana_commitment_config::CommitmentConfig;
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;

use crate::{
    cli::{GenArgs, GlobalOpts, OutputFormat, UnitPrice},
    commands::blocking::block_on,
    config,
    deploy::{
        compute::{PriceSource, recent_price},
        sol,
    },
    exit,
    keyfile::{read_keypair, write_private_keypair},
    redact::redact_url,
    signer::{SharedSigner, default_signer},
    workload::{
        SELF_TRANSFER_UNITS, build_self_transfers, fee_per_transaction, fund_payers, payer_budget,
        write_transactions,
    },
};

const RPC_TIMEOUT: Duration = Duration::from_secs(30);

pub fn run(global: &GlobalOpts, args: GenArgs) -> Result<u8> {
    if args.count == 0 {
        bail!("-n/--count must be at least 1");
    }
    if args.payers == Some(0) {
        bail!("--payers must be at least 1");
    }
    if args.cu_limit < SELF_TRANSFER_UNITS {
        say!(
            "warning: --cu-limit {} is below the {SELF_TRANSFER_UNITS} compute units a \
             self-transfer uses; these transactions will land as failed",
            args.cu_limit
        );
    }
    let resolved = config::resolve(&global.to_args(args.keypair.clone())).map_err(exit::usage)?;
    let funder = default_signer(resolved.keypair_path.as_deref()).map_err(exit::usage)?;
    if funder.is_interactive() && args.payers.is_none() {
        return Err(exit::usage(anyhow!(
            "{} is a hardware wallet: it would have to approve each of the {} transfers on the \
             device. Pass --payers K: it then signs only the few transactions that fund them",
            funder.pubkey(),
            args.count
        )));
    }
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
    // The payers are the only accounts the transfers write, so `auto` prices by their fees;
    // the price is known before funding, which pays it too.
    let loaded = match args.payers {
        None => None,
        Some(k) => Some(load_or_create_payers(&args.out, k as usize)?),
    };
    // Also the accounts funded, with --payers.
    let written: Vec<Pubkey> = match &loaded {
        None => vec![funder.pubkey()],
        Some(payers) => payers.iter().map(|(kp, _)| kp.pubkey()).collect(),
    };
    let (cu_price, price_source) = match args.cu_price {
        UnitPrice::Fixed(p) => (p, PriceSource::Flag),
        UnitPrice::Auto => block_on(
            &rpc,
            recent_price(rpc.get_inner_client(), &written, args.fee_percentile),
        )
        .with_context(|| {
            format!("getRecentPrioritizationFees at {url} for --with-compute-unit-price auto")
        })?,
    };
    let fee = fee_per_transaction(cu_price, args.cu_limit);

    let payers = match loaded {
        None => {
            let need = fee.saturating_mul(count as u64);
            match rpc.get_balance(&funder.pubkey()) {
                Ok(balance) if balance < need => say!(
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
        Some(payers) => {
            let rent = rpc
                .get_minimum_balance_for_rent_exemption(0)
                .with_context(|| format!("getMinimumBalanceForRentExemption at {url}"))?;
            let per_payer = count.div_ceil(payers.len()) as u64;
            let target = payer_budget(per_payer, fee, count as u64, rent);
            let funded = fund_payers(&rpc, funder.as_ref(), &written, target, cu_price)
                .with_context(|| format!("funding payers at {url}"))?;
            for ((kp, path), sent) in payers.iter().zip(&funded) {
                out!(
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
            payers
                .into_iter()
                .map(|(kp, _)| Arc::new(kp) as SharedSigner)
                .collect()
        }
    };

    let (blockhash, last_valid) = rpc
        .get_latest_blockhash_with_commitment(commitment)
        .with_context(|| format!("getLatestBlockhash at {url}"))?;
    let txs = build_self_transfers(&payers, count, cu_price, args.cu_limit, blockhash)?;
    write_transactions(&args.out, &txs, args.format)?;
    let height = rpc.get_block_height_with_commitment(commitment).ok();

    out!(
        "wrote {} transactions ({}) to {}",
        txs.len(),
        format_name(args.format),
        args.out.display()
    );
    out!(
        "  {} payer{}, {} µlamports/CU{}, limit {} CU, fee {} lamports each",
        payers.len(),
        if payers.len() == 1 { "" } else { "s" },
        cu_price,
        match price_source {
            PriceSource::Flag => String::new(),
            PriceSource::Recent {
                percentile,
                samples,
            } => format!(" (auto: p{percentile} of {samples} recent slots)"),
        },
        args.cu_limit,
        fee
    );
    match height {
        Some(h) => out!(
            "  blockhash {blockhash} ({}), valid until block height {last_valid} (now {h}, {} blocks left)",
            resolved.commitment.as_str(),
            last_valid.saturating_sub(h)
        ),
        None => out!(
            "  blockhash {blockhash} ({}), valid until block height {last_valid}",
            resolved.commitment.as_str()
        ),
    }
    Ok(0)
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

fn format_name(format: OutputFormat) -> &'static str {
    match format {
        OutputFormat::Base64 => "base64, one per line",
        OutputFormat::Base58 => "base58, one per line",
        OutputFormat::Json => "JSON array of base64",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payer_files_are_private_and_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("txs.b64");
        let first = load_or_create_payers(&out, 2).unwrap();
        assert_eq!(first[1].1, dir.path().join("txs.b64.payer-2.json"));
        for (_, path) in &first {
            let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let again = load_or_create_payers(&out, 3).unwrap();
        assert_eq!(again[0].0.pubkey(), first[0].0.pubkey());
        assert_eq!(again[1].0.pubkey(), first[1].0.pubkey());
        assert_eq!(again.len(), 3);
    }
}
