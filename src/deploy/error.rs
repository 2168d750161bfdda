//! Why a deploy stops. Each message says what was found and what to do about it; the command
//! adds how to recover the buffer's lamports when one exists.

use solana_pubkey::Pubkey;

use super::{elf::ElfError, plan::Cost};

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error(transparent)]
    Elf(#[from] ElfError),
    #[error("{address} is not a buffer account but {what}: pass another --buffer")]
    NotABuffer { address: Pubkey, what: String },
    #[error(
        "buffer {buffer} belongs to authority {}, not {expected}: pass its authority with \
         --upgrade-authority, or another --buffer",
        found.map_or("none (it is frozen)".to_string(), |a| a.to_string())
    )]
    BufferAuthority {
        buffer: Pubkey,
        found: Option<Pubkey>,
        expected: Pubkey,
    },
    #[error(
        "buffer {buffer} holds {found} program bytes but the program is {expected} bytes: it was \
         made for another build; close it (txpace deploy --close-buffer) or pass another --buffer"
    )]
    BufferSize {
        buffer: Pubkey,
        found: usize,
        expected: usize,
    },
    #[error("{address} is not an upgradeable program but {what}")]
    NotAProgram { address: Pubkey, what: String },
    #[error(
        "program {program} {}",
        match found {
            None => "is immutable (it has no upgrade authority): it cannot be upgraded".to_string(),
            Some(a) => format!(
                "has upgrade authority {a}, not {expected}: pass it with --upgrade-authority KEYPAIR"
            ),
        }
    )]
    UpgradeAuthority {
        program: Pubkey,
        found: Option<Pubkey>,
        expected: Pubkey,
    },
    #[error(
        "program {0} does not exist: to deploy a new program pass --program-id KEYPAIR (its \
         keypair signs the program account's creation)"
    )]
    NoProgramKeypair(Pubkey),
    #[error("--max-len {max_len} is smaller than the program ({len} bytes)")]
    MaxLenTooSmall { max_len: usize, len: usize },
    #[error("--max-len {0} is larger than an account can hold (10 MiB less 45 bytes)")]
    MaxLenTooLarge(usize),
    #[error(
        "payer {payer} holds {} SOL but this deploy needs {} SOL ({} for the buffer's rent, {} in \
         fees, {} for the program's accounts): fund it, e.g. `solana transfer {payer} <SOL>`",
        sol(*balance), sol(cost.total()), sol(cost.buffer_rent), sol(cost.fees), sol(cost.program_rent)
    )]
    InsufficientFunds {
        payer: Pubkey,
        balance: u64,
        cost: Cost,
    },
    #[error("a write transaction has no room for program bytes ({0} bytes without any)")]
    NoRoomForData(usize),
    #[error("signing {what}: {reason}")]
    Sign { what: String, reason: String },
    #[error("serializing a transaction: {0}")]
    Serialize(String),
    #[error("building an instruction: {0}")]
    Instruction(String),
    #[error("a transaction has no signature")]
    Unsigned,
    #[error("no transaction {0} in this phase")]
    NoSuchTransaction(usize),
    #[error("{call}: {reason}")]
    Rpc { call: String, reason: String },
    #[error("stopped by the user during the {0} phase")]
    Interrupted(&'static str),
    #[error("the {phase} phase did not complete: {detail}")]
    PhaseFailed { phase: &'static str, detail: String },
    #[error(
        "after the writes, the buffer still differs from the program in {0} chunks; run the same \
         command again to write them"
    )]
    BufferIncomplete(usize),
    #[error("the {what} transaction would fail: {err}{}", logs_text(logs))]
    Simulation {
        what: &'static str,
        err: String,
        logs: Vec<String>,
    },
    #[error("the engine task ended abnormally: {0}")]
    Engine(String),
}

impl DeployError {
    /// The exit code a deploy that stopped on this error ends with (see [`crate::exit`]): what
    /// the user can fix before anything is spent (the file, the accounts, the authority, the
    /// balance) is bad input; a phase whose transactions failed or never finished is a lost run
    /// the same command resumes; a user's stop is an unfinished run; the rest is a runtime error.
    pub fn exit_code(&self) -> u8 {
        use crate::exit;
        match self {
            DeployError::Elf(_)
            | DeployError::NotABuffer { .. }
            | DeployError::BufferAuthority { .. }
            | DeployError::BufferSize { .. }
            | DeployError::NotAProgram { .. }
            | DeployError::UpgradeAuthority { .. }
            | DeployError::NoProgramKeypair(_)
            | DeployError::MaxLenTooSmall { .. }
            | DeployError::MaxLenTooLarge(_)
            | DeployError::InsufficientFunds { .. }
            | DeployError::Simulation { .. } => exit::USAGE,
            DeployError::PhaseFailed { .. } | DeployError::BufferIncomplete(_) => exit::LOST,
            DeployError::Interrupted(_) => exit::UNFINISHED,
            DeployError::NoRoomForData(_)
            | DeployError::Sign { .. }
            | DeployError::Serialize(_)
            | DeployError::Instruction(_)
            | DeployError::Unsigned
            | DeployError::NoSuchTransaction(_)
            | DeployError::Rpc { .. }
            | DeployError::Engine(_) => exit::RUNTIME,
        }
    }

    /// A failed RPC call; the client's text can quote the endpoint with its key, so it is
    /// scrubbed here, before it reaches the dashboard, the report or stderr.
    pub fn rpc(call: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        DeployError::Rpc {
            call: call.into(),
            reason: crate::redact::scrub(reason),
        }
    }
}

fn logs_text(logs: &[String]) -> String {
    if logs.is_empty() {
        return String::new();
    }
    let tail: Vec<&str> = logs
        .iter()
        .rev()
        .take(12)
        .rev()
        .map(String::as_str)
        .collect();
    format!("\nprogram logs:\n  {}", tail.join("\n  "))
}

/// Lamports as SOL without trailing zeros.
pub fn sol(lamports: u64) -> String {
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

    #[test]
    fn sol_is_trimmed() {
        assert_eq!(sol(1_500_000_000), "1.5");
        assert_eq!(sol(2_000_000_000), "2");
        assert_eq!(sol(6_000), "0.000006");
    }
}
