//! `txpace completions [SHELL]`: the completion script for a shell, on stdout, so it can be
//! piped or redirected wherever that shell looks for completions (see [`crate::cli::COMPLETIONS_INSTALL`]).

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::{cli::Cli, exit};

pub fn run(shell: Option<Shell>) -> Result<u8> {
    let Some(shell) = shell.or_else(Shell::from_env) else {
        say!(
            "error: name the shell: txpace completions bash|zsh|fish|elvish|powershell \
             ($SHELL does not name one of them)"
        );
        return Ok(exit::USAGE);
    };
    super::print_stdout(&script(shell))?;
    Ok(exit::OK)
}

/// The completion script for `shell`, generated from the same clap definition that parses the
/// command line, so it cannot offer a flag txpace does not take.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "txpace", &mut out);
    out
}
