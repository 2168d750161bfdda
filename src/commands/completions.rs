//! `txpace completions [SHELL]`: the completion script for a shell, on stdout, so it can be
//! piped or redirected wherever that shell looks for completions (see [`INSTALL`]).

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::{cli::Cli, exit};

/// Where each shell's script goes, for `txpace completions --help` and the README.
pub const INSTALL: &str = "Install:
  bash  txpace completions bash > ~/.local/share/bash-completion/completions/txpace
  zsh   txpace completions zsh > ~/.zfunc/_txpace   (with fpath+=~/.zfunc before compinit in ~/.zshrc)
  fish  txpace completions fish > ~/.config/fish/completions/txpace.fish
  elvish, powershell: source the output from the shell's startup file";

pub fn run(shell: Option<Shell>) -> Result<u8> {
    let Some(shell) = shell.or_else(Shell::from_env) else {
        eprintln!(
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
