//! [`ValidatorOptions`]: how to start a [`LocalValidator`], as a builder.

use std::{ffi::OsString, path::PathBuf, time::Duration};

use super::{DEFAULT_STARTUP_TIMEOUT, LocalValidator, ValidatorError};

/// How to start a validator. `Default` gives a fresh temporary ledger.
#[derive(Debug, Clone)]
pub struct ValidatorOptions {
    /// Keep the ledger in this directory and do not `--reset` it, so a later start continues the
    /// same chain (restart tests). The directory is created if missing and never deleted.
    pub ledger: Option<PathBuf>,
    /// Appended to the command line, e.g. `["--ticks-per-slot", "16"]`.
    pub extra_args: Vec<OsString>,
    /// Time allowed until `getSlot` > 0.
    pub startup_timeout: Duration,
    /// Use this binary instead of searching ([`locate`](super::locate)).
    pub program: Option<PathBuf>,
}

impl Default for ValidatorOptions {
    fn default() -> Self {
        ValidatorOptions {
            ledger: None,
            extra_args: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            program: None,
        }
    }
}

impl ValidatorOptions {
    pub fn ledger(mut self, dir: impl Into<PathBuf>) -> Self {
        self.ledger = Some(dir.into());
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.extra_args.push(arg.into());
        self
    }

    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    pub fn program(mut self, path: impl Into<PathBuf>) -> Self {
        self.program = Some(path.into());
        self
    }

    pub fn start(self) -> Result<LocalValidator, ValidatorError> {
        LocalValidator::start_with(self)
    }
}
