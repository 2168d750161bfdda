use std::process::ExitCode;

use clap::Parser;
use txpace::{
    cli::{Cli, Command},
    commands, exit,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => commands::inspect::run(&cli.global, args),
        Command::Gen(args) => commands::r#gen::run(&cli.global, args),
        Command::Send(args) => commands::send::run(&cli.global, args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Deploy(args) => commands::deploy::run(&cli.global, args),
        Command::Completions(args) => commands::completions::run(args.shell),
        Command::Man(args) => commands::man::run(args.command.as_deref(), args.dir.as_deref()),
    };
    // Log lines are written on a thread of their own: let the last ones out before exiting.
    log::logger().flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // Client errors deep in the chain can quote an endpoint with its key.
            eprintln!("error: {}", txpace::redact::scrub(format!("{err:#}")));
            ExitCode::from(exit::for_error(&err))
        }
    }
}
