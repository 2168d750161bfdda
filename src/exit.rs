//! The exit codes every command answers with, in one place so `--help`, the README and the
//! code cannot disagree.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | every transaction landed (or: the command did what was asked) |
//! | 1 | the run finished, but some transactions failed on chain or expired |
//! | 2 | bad input or usage: invalid transactions, a bad flag, a missing file, a malformed txpace.toml, a refused journal |
//! | 3 | runtime error: the RPC was never reachable, the journal could not be written, the engine crashed, an I/O error |
//! | 4 | stopped by the user (dashboard `q`) with transactions unfinished; `--resume` continues |
//! | 130 | interrupted by Ctrl-C or SIGTERM without a dashboard; `--resume` continues |

/// Every transaction landed.
pub const OK: u8 = 0;
/// Some transactions failed on chain or expired.
pub const LOST: u8 = 1;
/// Bad input or usage (clap's own usage errors exit 2 too).
pub const USAGE: u8 = 2;
/// The run could not go on: RPC never reachable, journal unwritable, engine crash, I/O.
pub const RUNTIME: u8 = 3;
/// The user stopped the run with transactions unfinished.
pub const UNFINISHED: u8 = 4;
/// Interrupted by a signal (128 + SIGINT), as shells expect.
pub const INTERRUPTED: u8 = 130;

/// The table above, for the man page's EXIT STATUS section.
pub const TABLE: &[(u8, &str)] = &[
    (
        OK,
        "Every transaction landed (or: the command did what was asked).",
    ),
    (
        LOST,
        "The run finished, but some transactions failed on chain or expired.",
    ),
    (
        USAGE,
        "Bad input or usage: invalid transactions, a bad flag, a missing file, a malformed txpace.toml, a refused journal.",
    ),
    (
        RUNTIME,
        "Runtime error: the RPC was never reachable, the journal could not be written, the engine crashed, an I/O error.",
    ),
    (
        UNFINISHED,
        "Stopped by the user (dashboard q) with transactions unfinished; --resume continues.",
    ),
    (
        INTERRUPTED,
        "Interrupted by Ctrl-C or SIGTERM without a dashboard; --resume continues.",
    ),
];

/// The table above, for `--help`.
pub const HELP: &str = "Exit codes: 0 all landed; 1 some failed or expired; 2 bad input or usage; \
3 runtime error (RPC never reachable, journal unwritable, engine crash); \
4 stopped with transactions unfinished (continue with --resume); \
130 interrupted by Ctrl-C/SIGTERM (continue with --resume).";

/// Input or usage the user can fix: exits [`USAGE`] rather than [`RUNTIME`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Marks `err` as the user's input or usage being wrong.
pub fn usage(err: anyhow::Error) -> anyhow::Error {
    UsageError(format!("{err:#}")).into()
}

/// The exit code for an error that ended a command.
pub fn for_error(err: &anyhow::Error) -> u8 {
    use crate::journal::JournalError;
    if let Some(deploy) = err
        .chain()
        .find_map(|e| e.downcast_ref::<crate::deploy::DeployError>())
    {
        return deploy.exit_code();
    }
    let input = err.chain().any(|e| {
        e.is::<UsageError>()
            || e.is::<crate::source::SourceError>()
            || e.is::<crate::settings::SettingsError>()
            // A journal of other inputs, damaged, locked or missing is the user's to sort out;
            // one that cannot be written is a runtime error.
            || e
                .downcast_ref::<JournalError>()
                .is_some_and(|j| !matches!(j, JournalError::Io { .. }))
    });
    if input { USAGE } else { RUNTIME }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_line_and_the_table_name_the_same_codes() {
        for (code, _) in TABLE {
            assert!(
                HELP.contains(&format!("{code} ")),
                "{code} missing from HELP"
            );
        }
        assert_eq!(HELP.matches(';').count() + 1, TABLE.len());
    }

    #[test]
    fn input_errors_are_usage_and_the_rest_runtime() {
        let e = usage(anyhow::anyhow!("keypair file k.json does not exist"));
        assert_eq!(for_error(&e), USAGE);
        let e = anyhow::Error::new(crate::source::SourceError::NoInput).context("loading");
        assert_eq!(for_error(&e), USAGE);
        assert_eq!(for_error(&anyhow::anyhow!("disk full")), RUNTIME);
        let io = crate::journal::JournalError::Io {
            path: "j".into(),
            err: std::io::Error::other("read-only file system"),
        };
        assert_eq!(for_error(&io.into()), RUNTIME);
    }

    #[test]
    fn deploy_errors_say_whose_to_fix() {
        use crate::deploy::DeployError;
        let key = solana_pubkey::Pubkey::new_unique();
        let wrong = DeployError::UpgradeAuthority {
            program: key,
            found: Some(key),
            expected: key,
        };
        let e = anyhow::Error::new(wrong).context("reading the chain");
        assert_eq!(for_error(&e), USAGE);
        let e = anyhow::Error::new(DeployError::rpc("getAccountInfo", "timed out"));
        assert_eq!(for_error(&e), RUNTIME);
        let e = anyhow::Error::new(DeployError::BufferIncomplete(3));
        assert_eq!(for_error(&e), LOST);
    }
}
