//! The exit codes every command answers with, in one place so `--help`, the docs
//! (`docs/commands.md`) and the code cannot disagree.
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | every transaction landed (or: the command did what was asked) |
//! | 1 | the run finished, but some transactions failed on chain or expired |
//! | 2 | bad input or usage: invalid transactions, a bad flag, a missing file, a malformed txpace.toml, a refused journal |
//! | 3 | runtime error: the RPC was never reachable, the journal could not be written, the engine crashed, an I/O error |
//! | 4 | stopped by the user (dashboard `q`) with transactions unfinished; `--resume` continues |
//! | 130 | interrupted by Ctrl-C (without a dashboard), SIGTERM, or a hang-up (SIGHUP, the terminal closed); the report is written; `--resume` continues |

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
/// Interrupted by a signal or a hang-up (128 + SIGINT), as shells expect.
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
        "Interrupted by Ctrl-C (without a dashboard), SIGTERM, or a hang-up (SIGHUP, the terminal closed); the report is written; --resume continues.",
    ),
];

/// The table above, for `--help`.
pub const HELP: &str = "Exit codes: 0 all landed; 1 some failed or expired; 2 bad input or usage; \
3 runtime error (RPC never reachable, journal unwritable, engine crash); \
4 stopped with transactions unfinished (continue with --resume); \
130 interrupted by Ctrl-C, SIGTERM or a hang-up (continue with --resume).";

/// Input or usage the user can fix: exits [`USAGE`] rather than [`RUNTIME`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Marks `err` as the user's input or usage being wrong.
pub fn usage(err: anyhow::Error) -> anyhow::Error {
    UsageError(format!("{err:#}")).into()
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
}
