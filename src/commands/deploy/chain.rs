//! Reading the accounts and rents a deploy plan depends on, once, before anything is sent.

use anyhow::{Context, Result};
use solana_commitment_config::CommitmentConfig;
use solana_loader_v3_interface::state::UpgradeableLoaderState;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;

use crate::deploy::{
    DeployError,
    accounts::{AccountData, BufferState, ProgramState},
    plan::{ChainState, Inputs, Rents},
};

/// The feature gate `enable_extend_program_checked` (agave-feature-set 4.0): once active, the
/// loader takes only `ExtendProgramChecked`.
const EXTEND_PROGRAM_CHECKED_FEATURE: Pubkey =
    Pubkey::from_str_const("2oMRZEDWT2tqtYMofhmmfQ8SsjqUFzT6sYXppQDavxwz");

/// What the plan needs from the chain, read once before anything is sent.
pub(super) fn read_chain(rpc: &RpcClient, i: &Inputs) -> Result<ChainState> {
    let buffer = BufferState::read(&i.buffer, fetch(rpc, &i.buffer)?)?;
    let program = ProgramState::read(&i.program_id, fetch(rpc, &i.program_id)?, |pd| {
        fetch(rpc, pd).map_err(|e| DeployError::rpc("getAccountInfo", format!("{e:#}")))
    })?;
    let balance = rpc
        .get_balance(&i.payer)
        .with_context(|| format!("getBalance of {}", i.payer))?;
    let rent = |len: usize| {
        rpc.get_minimum_balance_for_rent_exemption(len)
            .context("getMinimumBalanceForRentExemption")
    };
    let max_len = i.max_len.unwrap_or(i.program.len());
    let extend_checked = match fetch(rpc, &EXTEND_PROGRAM_CHECKED_FEATURE)? {
        // A feature account is `Feature { activated_at: Option<u64> }`: a leading 1 is Some.
        Some(acc) => acc.data.first() == Some(&1),
        None => false,
    };
    Ok(ChainState {
        buffer,
        program,
        balance,
        rent: Rents {
            buffer: rent(UpgradeableLoaderState::size_of_buffer(i.program.len()))?,
            program: rent(UpgradeableLoaderState::size_of_program())?,
            programdata: rent(UpgradeableLoaderState::size_of_programdata(max_len))?,
        },
        extend_checked,
    })
}

pub(super) fn fetch(rpc: &RpcClient, address: &Pubkey) -> Result<Option<AccountData>> {
    let acc = rpc
        .get_account_with_commitment(address, CommitmentConfig::confirmed())
        .with_context(|| format!("getAccountInfo {address}"))?
        .value;
    Ok(acc.map(|a| AccountData {
        owner: a.owner,
        lamports: a.lamports,
        executable: a.executable,
        data: a.data,
    }))
}
