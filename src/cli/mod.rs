//! The command line: global options as Solana users type them, one subcommand per job. Each
//! command's arguments live in a module of their own; the values several commands share
//! (paces, intervals, prices, routes) in `values`, their numeric parsers in [`numeric`].

mod deploy;
mod r#gen;
mod global;
pub mod numeric;
mod send;
mod values;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueHint};

pub use self::{
    deploy::DeployArgs,
    r#gen::{DemoArgs, GenArgs},
    global::{GlobalOpts, OutputMode},
    send::{InputArgs, InspectArgs, SendArgs, SendOpts},
    values::{
        MAX_CU_LIMIT, MAX_FANOUT, MAX_RATE, MAX_RESEND_INTERVAL, RateArg, ResendInterval, Route,
        SLOT_MS, UnitPrice,
    },
};
pub use crate::{source::InputFormat, workload::OutputFormat};

/// Where each shell's completion script goes, for `txpace completions --help` and docs/commands.md.
pub const COMPLETIONS_INSTALL: &str = "Install:
  bash  txpace completions bash > ~/.local/share/bash-completion/completions/txpace
  zsh   txpace completions zsh > ~/.zfunc/_txpace   (with fpath+=~/.zfunc before compinit in ~/.zshrc)
  fish  txpace completions fish > ~/.config/fish/completions/txpace.fish
  elvish, powershell: source the output from the shell's startup file";

/// Where the manual pages go, for `txpace man --help` and docs/commands.md.
pub const MAN_INSTALL: &str = "Install:
  txpace man --dir ~/.local/share/man/man1   (then: man txpace, man txpace-send)
  txpace man send | man -l -                 (read one page without installing)";

#[derive(Debug, Parser)]
#[command(
    name = "txpace",
    version,
    about = "Paced Solana TPU sender with a live dashboard of every transaction's fate",
    after_help = crate::exit::HELP
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode and validate signed transactions and show one row per transaction
    #[command(after_help = crate::exit::HELP)]
    Inspect(InspectArgs),
    /// Generate the founding workload: N unique signed self-transfers
    #[command(after_help = crate::exit::HELP)]
    Gen(GenArgs),
    /// Send signed transactions at a steady pace over QUIC (or an RPC node's sendTransaction,
    /// --via rpc) and watch every one land
    #[command(after_help = crate::exit::HELP)]
    Send(SendArgs),
    /// Start a local validator, generate the founding workload and send it with the dashboard
    #[command(after_help = crate::exit::HELP)]
    Demo(DemoArgs),
    /// Deploy or upgrade a program with the upgradeable BPF loader, its buffer writes paced
    /// through the engine and watched on the dashboard; an interrupted deploy resumes
    #[command(after_help = crate::exit::HELP)]
    Deploy(DeployArgs),
    /// Open the dashboard on a finished run's report (--report) or journal, read-only: queues,
    /// leaders, latency, and every transaction's detail — to look at a headless run later
    #[command(after_help = crate::exit::HELP)]
    View(ViewArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(after_help = COMPLETIONS_INSTALL)]
    Completions(CompletionsArgs),
    /// Print the manual page of txpace or of one of its commands, or write them all to a directory
    #[command(after_help = MAN_INSTALL)]
    Man(ManArgs),
    /// Where txpace.toml is, and the settings in force with where each comes from
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A report written by `send --report` or `demo --report`, a deploy's report (one phase at
    /// a time, see --phase), or a send's journal (for a run that wrote no report: its
    /// transactions' fates, without times)
    #[arg(value_hint = ValueHint::FilePath)]
    pub report: PathBuf,
    /// Which phase of a deploy's report to show [default: the writes, else the last phase]
    #[arg(long, value_name = "NAME")]
    pub phase: Option<String>,
    /// Dashboard colors [default: auto, or txpace.toml's theme]
    #[arg(long, value_enum)]
    pub theme: Option<crate::ui::theme::ThemeName>,
    /// Leave the mouse to the terminal
    #[arg(long)]
    pub no_mouse: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of txpace.toml (whether or not it exists yet)
    Path,
    /// Print every setting in force as txpace.toml would write it, each with where it comes
    /// from: flag, environment, txpace.toml, Solana CLI config or default
    Show,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for [default: the one $SHELL names]
    #[arg(value_enum)]
    pub shell: Option<clap_complete::Shell>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`send` prints txpace-send(1)) [default: txpace(1)]
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write every page (txpace.1, txpace-send.1, ...) into this directory instead, creating it
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!("100".parse::<RateArg>(), Ok(RateArg::Fixed(100.0)));
        assert_eq!("MAX".parse::<RateArg>(), Ok(RateArg::Max));
        assert_eq!(
            "0.5".parse::<RateArg>(),
            Err("\"0.5\" is not a rate: give transactions per second (at least 1) or `max`".into())
        );
        assert!("fast".parse::<RateArg>().is_err());
    }

    #[test]
    fn resend_intervals_parse_as_slots_or_time() {
        let d = |s: &str| s.parse::<ResendInterval>().map(|r| r.0);
        assert_eq!(d("10"), Ok(Duration::from_millis(4_000)));
        assert_eq!(d("5slots"), Ok(Duration::from_millis(2_000)));
        assert_eq!(d("1 slot"), Ok(Duration::from_millis(400)));
        assert_eq!(d("4s"), Ok(Duration::from_secs(4)));
        assert_eq!(d("1500ms"), Ok(Duration::from_millis(1_500)));
        assert_eq!(
            d("-1"),
            Err("\"-1\" is not an interval: give slots (`10`) or a time (`4s`, `1500ms`)".into())
        );
    }

    #[test]
    fn rates_and_intervals_have_upper_bounds() {
        assert_eq!("1000000".parse::<RateArg>(), Ok(RateArg::Fixed(1e6)));
        assert!("1000001".parse::<RateArg>().is_err());
        assert!("inf".parse::<RateArg>().is_err());
        let d = |s: &str| s.parse::<ResendInterval>().map(|r| r.0);
        assert_eq!(d("3600s"), Ok(Duration::from_secs(3600)));
        assert!(d("3601s").is_err());
        // A count of slots too large for a Duration is an error, not a panic.
        assert!(d("99999999999999999999999").is_err());
    }

    #[test]
    fn seconds_flags_take_their_range_only() {
        assert_eq!(numeric::send_timeout("0.05"), Ok(0.05));
        assert_eq!(numeric::send_timeout("600"), Ok(600.0));
        for bad in ["0.01", "601", "NaN", "inf", "-1", "1e400", "x"] {
            assert!(numeric::send_timeout(bad).is_err(), "{bad}");
        }
        assert_eq!(numeric::deadline("30"), Ok(30.0));
        for bad in ["0", "-0.5", "NaN", "-inf", "1e30"] {
            assert!(numeric::deadline(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn integer_flags_keep_their_bounds() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|c| c.command);
        let Ok(Command::Send(send)) = parse(&["txpace", "send", "--fanout", "16", "a"]) else {
            panic!("--fanout 16 is accepted");
        };
        assert_eq!(send.opts.fanout, 16);
        assert!(parse(&["txpace", "send", "--fanout", "17", "a"]).is_err());
        assert!(parse(&["txpace", "gen", "-o", "x", "-n", "0"]).is_err());
        assert!(parse(&["txpace", "gen", "-o", "x", "--payers", "0"]).is_err());
        assert!(parse(&["txpace", "gen", "-o", "x", "--cu-limit", "1400001"]).is_err());
        assert!(parse(&["txpace", "deploy", "p.so", "--max-len", "10485761"]).is_err());
    }

    #[test]
    fn send_defaults() {
        let cli = Cli::try_parse_from(["txpace", "send", "a.b64"]).expect("parses");
        let Command::Send(args) = cli.command else {
            panic!("not send");
        };
        assert_eq!(args.opts.rate, RateArg::Fixed(100.0));
        assert_eq!(args.opts.fanout, 1);
        assert_eq!(args.opts.send_timeout, 5.0);
        assert_eq!(args.opts.resend_interval.0, Duration::from_secs(4));
        assert!(!args.skip_invalid);
    }
}
