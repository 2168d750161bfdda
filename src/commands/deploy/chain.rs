//! Reading the accounts and rents a deploy plan depends on, once, before anything is sent.

use anyhow::{Context, Result};
use solana_loader_v3_interface::state::UpgradeableLoaderState;
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;

use crate::{
    commands::blocking::block_on,
    deploy::{
        DeployError,
        accounts::{AccountData, BufferState, ProgramState},
        fetch::fetch_account,
        plan::{ChainState, Inputs, Rents},
    },
};

/// The feature gate `enable_extend_program_checked` (agave-feature-set 4.0): once active, the
/// loader takes only `ExtendProgramChecked`.
const EXTEND_PROGRAM_CHECKED_FEATURE: Pubkey =
    Pubkey::from_str_const("2oMRZEDWT2tqtYMofhmmfQ8SsjqUFzT6sYXppQDavxwz");

/// What the plan needs from the chain, read once before anything is sent.
pub(super) fn read_chain(rpc: &RpcClient, i: &Inputs) -> Result<ChainState> {
    let buffer = BufferState::read(&i.buffer, fetch(rpc, &i.buffer)?)?;
    let program = ProgramState::read(&i.program_id, fetch(rpc, &i.program_id)?, |pd| {
        fetch(rpc, pd)
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

/// Reads one account at `confirmed` through the driver's own read ([`fetch_account`]) on the
/// asynchronous client the blocking one wraps: one getAccountInfo for the whole deploy.
pub(super) fn fetch(rpc: &RpcClient, address: &Pubkey) -> Result<Option<AccountData>, DeployError> {
    block_on(rpc, fetch_account(rpc.get_inner_client(), address))
}
