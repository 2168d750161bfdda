use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use txpace::say;
use txpace::{
    cli::{Cli, Command, ConfigCommand},
    commands, exit, logging, settings,
};

fn main() -> ExitCode {
    txpace::malloc::use_one_arena();
    // Before any thread starts: whether SIGHUP was ignored (nohup) is read from what the process
    // inherited.
    if let Err(e) = txpace::interrupt::install() {
        say!("error: installing the signal handlers: {e}");
        return ExitCode::from(exit::RUNTIME);
    }
    // A panic's message goes to standard error, which after a hang-up is a closed terminal:
    // the log file gets it too, so a run that ended with exit 101 can say why.
    let print_panic = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        log::error!("panic: {info}");
        log::logger().flush();
        print_panic(info);
    }));
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    logging::set_verbosity(cli.global.verbosity());
    let result = run(cli, &matches);
    // Log lines are written on a thread of their own: let the last ones out before exiting.
    log::logger().flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // Client errors deep in the chain can quote an endpoint with its key.
            say!("error: {}", txpace::redact::scrub(format!("{err:#}")));
            ExitCode::from(commands::exit_code::for_error(&err))
        }
    }
}

fn run(mut cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<u8> {
    // Completions and man pages describe txpace, and `config path` says where the settings
    // file goes: a missing or broken txpace.toml must not stop them.
    match &cli.command {
        Command::Config(ConfigCommand::Path) => {
            return commands::config::path(&cli.global);
        }
        Command::Completions(args) => return commands::completions::run(args.shell),
        Command::Man(args) => {
            return commands::man::run(args.command.as_deref(), args.dir.as_deref());
        }
        _ => {}
    }
    let settings = settings::load(cli.global.txpace_config.as_deref())?;
    settings::apply::apply(&mut cli, matches, &settings);
    match cli.command {
        Command::Inspect(args) => commands::inspect::run(&cli.global, args),
        Command::Gen(args) => commands::r#gen::run(&cli.global, args),
        Command::Send(args) => commands::send::run(&cli.global, args),
        Command::Demo(args) => commands::demo::run(&cli.global, args),
        Command::Deploy(args) => commands::deploy::run(&cli.global, args),
        Command::Config(cmd) => commands::config::run(&cmd, &cli.global, matches, &settings),
        Command::View(args) => commands::view::run(args, &settings),
        Command::Completions(_) | Command::Man(_) => Ok(exit::OK),
    }
}
