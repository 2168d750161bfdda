//! What a deploy tells the user before it spends anything (the plan) and after a
//! `--buffer-only` run (how to deploy from the buffer).

use std::path::Path;

use solana_pubkey::Pubkey;

use crate::deploy::{
    accounts::BufferState,
    plan::{Action, Inputs, Plan},
    sol,
};

pub(super) fn describe_plan(
    path: &Path,
    program: &[u8],
    plan: &Plan,
    i: &Inputs,
    buffer: &BufferState,
    buffer_path: &Path,
) {
    let count = plan.chunks.count();
    say!(
        "{}: {} bytes, {count} chunks of up to {} bytes",
        path.display(),
        program.len(),
        plan.chunks.size
    );
    match buffer {
        BufferState::Missing => say!(
            "buffer {} ({}): new; {} writes",
            i.buffer,
            buffer_path.display(),
            plan.writes.len()
        ),
        BufferState::Found { .. } => say!(
            "buffer {} ({}): resuming, {} of {} bytes already written; {} of {count} chunks to write",
            i.buffer,
            buffer_path.display(),
            plan.bytes_present(),
            program.len(),
            plan.writes.len()
        ),
    }
    match plan.action {
        Action::Deploy { max_len } => say!(
            "then deploy program {} with room for {max_len} bytes, upgrade authority {}",
            i.program_id,
            i.authority
        ),
        Action::Upgrade { max_len, extend: 0 } => say!(
            "then upgrade program {} (room for {max_len} bytes) as authority {}",
            i.program_id,
            i.authority
        ),
        Action::Upgrade { max_len, extend } => say!(
            "then extend program {} by {extend} bytes to {max_len} (ExtendProgram), and upgrade it as authority {}",
            i.program_id,
            i.authority
        ),
        Action::BufferOnly { hand_to: None } => say!(
            "--buffer-only: the buffer stays, with authority {}, for a deploy or upgrade from it",
            i.authority
        ),
        Action::BufferOnly { hand_to: Some(new) } => say!(
            "--buffer-only: then hand the buffer from authority {} to {new}",
            i.authority
        ),
    }
    say!(
        "payer {} spends up to {} SOL ({} buffer rent, {} fees, {} program rent)",
        i.payer,
        sol(plan.cost.total()),
        sol(plan.cost.buffer_rent),
        sol(plan.cost.fees),
        sol(plan.cost.program_rent)
    );
}

/// What to do with a buffer written by `--buffer-only`.
pub(super) fn explain_buffer(
    buffer: &Pubkey,
    keypair: &Path,
    program: &Path,
    hand_to: Option<Pubkey>,
) -> String {
    match hand_to {
        Some(new) => format!(
            "buffer {buffer} holds {} and now belongs to {new}: deploy or upgrade from it with \
             that authority (e.g. a multisig's program upgrade, or `solana program deploy \
             --buffer {buffer}`)",
            program.display()
        ),
        None => format!(
            "buffer {buffer} holds {}: deploy from it with `txpace deploy {} --buffer {}` \
             (or `solana program deploy --buffer {buffer}`)",
            program.display(),
            program.display(),
            keypair.display()
        ),
    }
}
