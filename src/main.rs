use std::process::ExitCode;

use clap::Parser;
use txpace::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<u8> = match cli.command {
        Command::Inspect(_) | Command::Gen(_) => Ok(0),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}
