//! Recovering an abandoned buffer's lamports: the hint after a failed deploy and
//! `--close-buffer`.

use std::{path::Path, str::FromStr};

use anyhow::{Context, Result, anyhow};
use solana_commitment_config::CommitmentConfig;
use solana_loader_v3_interface::instruction as loader;
use solana_message::{Message, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;

use super::{RPC_TIMEOUT, chain::fetch};
use crate::{
    cli::{DeployArgs, GlobalOpts, OutputMode},
    config,
    deploy::{DeployError, accounts::BufferState, sol},
    exit,
    keyfile::read_keypair,
    redact::redact_url,
    signer::{default_signer, read_signer},
};

/// After a failed or abandoned deploy: the buffer holds SOL; say how to finish or get it back.
pub(super) fn explain_recovery(buffer: &Pubkey, buffer_path: &Path, rpc: &RpcClient) {
    let held = rpc
        .get_account_with_commitment(buffer, CommitmentConfig::confirmed())
        .ok()
        .and_then(|r| r.value)
        .map(|a| a.lamports);
    let Some(lamports) = held else {
        // Never created (or already closed): nothing to recover.
        return;
    };
    say!(
        "buffer {buffer} holds {} SOL and keeps what was written.\n\
         to finish: run the same command again (it resumes from --buffer {})\n\
         to abandon and recover the SOL: txpace deploy --close-buffer {} (same --url and --keypair)",
        sol(lamports),
        buffer_path.display(),
        buffer_path.display()
    );
}

/// [`explain_recovery`] for a deploy stopped from outside (Ctrl-C, SIGTERM, a hang-up): the
/// process must end within a second or two, so the chain is not asked what the buffer holds,
/// and the hint also goes to the log, which is all anyone reads after a hang-up.
pub(super) fn explain_interrupted(buffer: &Pubkey, buffer_path: &Path) {
    let hint = format!(
        "buffer {buffer}, if it was created, keeps what was written.\n\
         to finish: run the same command again (it resumes from --buffer {})\n\
         to abandon and recover its SOL: txpace deploy --close-buffer {} (same --url and --keypair)",
        buffer_path.display(),
        buffer_path.display()
    );
    log::warn!("{hint}");
    say!("{hint}");
}

/// `--close-buffer`: return an abandoned buffer's lamports to the payer.
pub(super) fn close_buffer(global: &GlobalOpts, args: &DeployArgs, which: &str) -> Result<u8> {
    let resolved = config::resolve(&global.to_args(args.keypair.clone())).map_err(exit::usage)?;
    let signer = default_signer(resolved.keypair_path.as_deref()).map_err(exit::usage)?;
    // The lamports go to the fee payer; the buffer's authority signs.
    let payer = match &args.fee_payer {
        Some(p) => read_signer(p, "fee payer").map_err(exit::usage)?,
        None => signer.clone(),
    };
    let authority = match &args.upgrade_authority {
        Some(p) => read_signer(p, "upgrade authority").map_err(exit::usage)?,
        None => signer,
    };
    let address = if Path::new(which).exists() {
        read_keypair(Path::new(which))?.pubkey()
    } else {
        Pubkey::from_str(which).map_err(|_| {
            anyhow!("--close-buffer {which}: no such keypair file, and not a public key")
        })?
    };
    let rpc = RpcClient::new_with_timeout_and_commitment(
        resolved.rpc_url.clone(),
        RPC_TIMEOUT,
        CommitmentConfig::confirmed(),
    );
    let url = redact_url(&resolved.rpc_url);
    match BufferState::read(&address, fetch(&rpc, &address)?)? {
        BufferState::Missing => {
            say!(
                "no account at {address} on {url}: the buffer is already closed (or was never created)"
            );
            Ok(exit::USAGE)
        }
        BufferState::Found {
            authority: found,
            lamports,
            ..
        } => {
            if found != Some(authority.pubkey()) {
                return Err(DeployError::BufferAuthority {
                    buffer: address,
                    found,
                    expected: authority.pubkey(),
                }
                .into());
            }
            let ix = loader::close(&address, &payer.pubkey(), &authority.pubkey());
            let blockhash = rpc
                .get_latest_blockhash()
                .with_context(|| format!("getLatestBlockhash at {url}"))?;
            let message = Message::new_with_blockhash(&[ix], Some(&payer.pubkey()), &blockhash);
            let signers: Vec<&dyn Signer> = if authority.pubkey() == payer.pubkey() {
                vec![payer.as_ref()]
            } else {
                vec![payer.as_ref(), authority.as_ref()]
            };
            let tx = VersionedTransaction::try_new(VersionedMessage::Legacy(message), &signers)
                .map_err(|e| anyhow!("signing the close: {e}"))?;
            let sig = crate::confirmed_send::send_and_confirm(&rpc, &tx)
                .with_context(|| format!("closing buffer {address} at {url}"))?;
            if global.output.is_json() {
                let closed = serde_json::json!({
                    "closed_buffer": address.to_string(),
                    "lamports": lamports,
                    "recipient": payer.pubkey().to_string(),
                    "signature": sig.to_string(),
                });
                crate::report::print_json(&closed, global.output == OutputMode::JsonCompact)?;
            } else {
                out!(
                    "closed buffer {address}: {} SOL returned to {} (signature {sig})",
                    sol(lamports),
                    payer.pubkey()
                );
            }
            Ok(0)
        }
    }
}
