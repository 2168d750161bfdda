//! Failures that stop loading altogether.
//!
//! A bad transaction is never one of these: it becomes a [`super::Problem`] so that one typo in a
//! million-line file costs the user one line of output, not the whole run.

use std::{io, path::PathBuf};

/// The input as a whole cannot be read.
///
/// The OS reason is part of the message (not only a `source`) so the file and the cause reach
/// the user however the error is printed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot open {}: {err}", path.display())]
    Open { path: PathBuf, err: io::Error },
    #[error("cannot read {}: {err}", name)]
    Read { name: String, err: io::Error },
    #[error("standard input (-) is given more than once")]
    StdinTwice,
    #[error("no input files")]
    NoInput,
}
