//! Reading an account's data a slice at a time: a buffer or program-data account holds a whole
//! program (up to 10 MiB), and one `getAccountInfo` of it is held four times over while it is
//! answered — the HTTP body, its base64 text, the decoded bytes and the copy kept — which made
//! the read-back at the end of a 616 KB deploy the deploy's peak memory (4 MB of it). Callers
//! that need the whole account take [`fetch_account`]; the read-back takes [`read_slices`] and
//! keeps none of them.

use solana_account_decoder_client_types::{UiAccountEncoding, UiDataSliceConfig};
use solana_commitment_config::CommitmentConfig;
use solana_pubkey::Pubkey;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcAccountInfoConfig;

use super::{DeployError, accounts::AccountData};

/// Bytes of account data asked for per call. An account up to this size takes one call, as
/// before; a 616 KB program three, each a round trip to the RPC.
pub const SLICE: usize = 256 * 1024;

/// Reads one account at `confirmed`: the deploy's account reads, for the driver and for the
/// plan (`commands::deploy`, on its blocking client's runtime). `None` when there is no account.
pub async fn fetch_account(
    rpc: &RpcClient,
    address: &Pubkey,
) -> Result<Option<AccountData>, DeployError> {
    let mut found: Option<AccountData> = None;
    let exists = read_slices(rpc, address, |_, slice| {
        match found.as_mut() {
            None => found = Some(slice),
            Some(acc) => acc.data.extend_from_slice(&slice.data),
        }
        Ok(())
    })
    .await?;
    Ok(found.filter(|_| exists))
}

/// Reads one account at `confirmed` a slice at a time, handing each to `each` with its offset
/// in the account's data (each slice's `data` holds only its own bytes), so a caller that
/// needs only to look at the bytes never holds them all. `false` when there is no account,
/// also when it was closed between two slices: what `each` saw then is of no account.
pub async fn read_slices(
    rpc: &RpcClient,
    address: &Pubkey,
    mut each: impl FnMut(usize, AccountData) -> Result<(), DeployError>,
) -> Result<bool, DeployError> {
    let mut offset = 0;
    loop {
        let config = RpcAccountInfoConfig {
            encoding: Some(UiAccountEncoding::Base64),
            data_slice: Some(UiDataSliceConfig {
                offset,
                length: SLICE,
            }),
            commitment: Some(CommitmentConfig::confirmed()),
            min_context_slot: None,
        };
        let call = || format!("getAccountInfo {address}");
        let slice = rpc
            .get_ui_account_with_config(address, config)
            .await
            .map_err(|e| DeployError::rpc(call(), e))?
            .value;
        let Some(slice) = slice else {
            return Ok(false);
        };
        let data = slice
            .data
            .decode()
            .ok_or_else(|| DeployError::rpc(call(), "the account data is not base64"))?;
        let owner = slice
            .owner
            .parse()
            .map_err(|e| DeployError::rpc(call(), format!("owner {:?}: {e}", slice.owner)))?;
        let len = data.len();
        each(
            offset,
            AccountData {
                owner,
                lamports: slice.lamports,
                executable: slice.executable,
                data,
            },
        )?;
        if len < SLICE {
            return Ok(true);
        }
        offset += len;
    }
}
