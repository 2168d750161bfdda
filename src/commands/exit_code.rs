//! The exit code of an error that ended a command. It is decided here, at the edge, where every
//! domain's error type is known: [`crate::exit`] only names the codes, so that every module can
//! use them without depending on the domains.

use crate::exit;

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
        e.is::<exit::UsageError>()
            || e.is::<crate::source::SourceError>()
            || e.is::<crate::settings::SettingsError>()
            // A journal of other inputs, damaged, locked or missing is the user's to sort out;
            // one that cannot be written is a runtime error.
            || e
                .downcast_ref::<JournalError>()
                .is_some_and(|j| !matches!(j, JournalError::Io { .. }))
    });
    if input { exit::USAGE } else { exit::RUNTIME }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{LOST, RUNTIME, USAGE, usage};

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
