//! Putting txpace.toml under the command line: a value the user gave as a flag or through a
//! `TXPACE_*` variable stays; one left to its default is taken from txpace.toml when the file
//! has it. The Solana CLI config and the defaults come after, in [`crate::config::resolve`].
//!
//! Whether a value was given is clap's to say ([`ArgMatches::value_source`]), not a comparison
//! with the default: `--rate 100` in a shell beats `rate = 200` in the file.

use clap::{ArgMatches, parser::ValueSource};

use super::Settings;
use crate::cli::{Cli, Command, RateArg, SendOpts};

/// Where a setting in force comes from, for `txpace config show`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env(&'static str),
    File,
    SolanaConfig,
    /// The websocket URL, derived from the RPC URL.
    Derived,
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => f.write_str("flag"),
            Source::Env(var) => write!(f, "environment {var}"),
            Source::File => f.write_str("txpace.toml"),
            Source::SolanaConfig => f.write_str("Solana CLI config"),
            Source::Derived => f.write_str("from the RPC URL"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// How argument `id` got its value, looked for in the deepest subcommand first: a global
/// option typed after the subcommand is recorded there.
pub fn given(matches: &ArgMatches, id: &str, env: &'static str) -> Option<Source> {
    let mut chain = vec![matches];
    while let Some((_, sub)) = chain.last().and_then(|m| m.subcommand()) {
        chain.push(sub);
    }
    chain.iter().rev().find_map(|m| {
        match m.try_get_raw(id).ok().flatten().and(m.value_source(id)) {
            Some(ValueSource::CommandLine) => Some(Source::Flag),
            Some(ValueSource::EnvVariable) => Some(Source::Env(env)),
            _ => None,
        }
    })
}

/// The run's options as the flags, the environment and txpace.toml make them.
pub fn apply(cli: &mut Cli, matches: &ArgMatches, settings: &Settings) {
    let g = &mut cli.global;
    if g.url.is_none() {
        g.url.clone_from(&settings.url);
    }
    if g.ws.is_none() {
        g.ws.clone_from(&settings.ws);
    }
    if g.commitment.is_none() {
        g.commitment = settings.commitment;
    }
    let Some((_, sub)) = matches.subcommand() else {
        return;
    };
    let deploy = matches!(cli.command, Command::Deploy(_));
    let Some(opts) = send_opts(&mut cli.command) else {
        return;
    };
    let defaulted = |id: &str| given(sub, id, "").is_none();
    if let Some(rate) = settings.rate.filter(|_| defaulted("rate")) {
        opts.rate = rate;
    } else if deploy && defaulted("rate") {
        // A deploy's writes go at the best pace the leader takes: the closed loop finds it (the
        // deploy benchmark in docs/performance.md: the same sends per write as a fixed 100 tx/s).
        opts.rate = RateArg::Max;
    }
    if let Some(k) = settings.fanout.filter(|_| defaulted("fanout")) {
        opts.fanout = k;
    }
    if let Some(r) = settings
        .resend_interval
        .filter(|_| defaulted("resend_interval"))
    {
        opts.resend_interval = r;
    }
    if let Some(t) = settings.send_timeout.filter(|_| defaulted("send_timeout")) {
        opts.send_timeout = t;
    }
    if opts.theme.is_none() {
        opts.theme = settings.theme;
    }
    if settings.mouse == Some(false) && !opts.mouse {
        opts.no_mouse = true;
    }
    if settings.catch_up == Some(false) && !opts.catch_up {
        opts.no_catch_up = true;
    }
    opts.keymap = settings.keymap.clone();
}

/// The sending options of the commands that run the engine.
fn send_opts(command: &mut Command) -> Option<&mut SendOpts> {
    match command {
        Command::Send(a) => Some(&mut a.opts),
        Command::Demo(a) => Some(&mut a.send),
        Command::Deploy(a) => Some(&mut a.send),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};

    use super::*;

    fn run(args: &[&str], toml: &str) -> Cli {
        let matches = Cli::command().try_get_matches_from(args).unwrap();
        let mut cli = Cli::from_arg_matches(&matches).unwrap();
        let settings = super::super::parse(toml, std::path::Path::new("t.toml")).unwrap();
        apply(&mut cli, &matches, &settings);
        cli
    }

    fn send(cli: Cli) -> SendOpts {
        match cli.command {
            Command::Send(a) => a.opts,
            other => panic!("{other:?}"),
        }
    }

    const FILE: &str = "url = \"devnet\"\ncommitment = \"finalized\"\n[send]\nrate = 250\nfanout = 3\ncatch_up = false\n\
                        [dashboard]\ntheme = \"light\"\nmouse = false\n";

    #[test]
    fn the_file_fills_what_flags_leave_to_defaults() {
        let cli = run(&["txpace", "send", "a.b64"], FILE);
        assert_eq!(cli.global.url.as_deref(), Some("devnet"));
        assert_eq!(
            cli.global.commitment,
            Some(crate::config::Commitment::Finalized)
        );
        let o = send(cli);
        assert_eq!(o.rate, RateArg::Fixed(250.0));
        assert_eq!(o.fanout, 3);
        assert_eq!(o.theme, Some(crate::ui::theme::ThemeName::Light));
        assert!(o.no_mouse);
        assert!(o.no_catch_up);
        // Not in the file: the flag's default.
        assert_eq!(o.resend_interval.0, std::time::Duration::from_secs(4));
    }

    #[test]
    fn flags_win_even_when_they_say_the_default() {
        let cli = run(
            &[
                "txpace", "send", "a.b64", "--rate", "100", "--fanout", "1", "-u", "l", "--theme",
                "dark",
            ],
            FILE,
        );
        assert_eq!(cli.global.url.as_deref(), Some("l"));
        let o = send(cli);
        assert_eq!(o.rate, RateArg::Fixed(100.0));
        assert_eq!(o.fanout, 1);
        assert_eq!(o.theme, Some(crate::ui::theme::ThemeName::Dark));
        let o = send(run(&["txpace", "send", "a.b64", "--mouse"], FILE));
        assert!(!o.no_mouse, "--mouse beats mouse = false");
        let o = send(run(&["txpace", "send", "a.b64", "--catch-up"], FILE));
        assert!(!o.no_catch_up, "--catch-up beats catch_up = false");
        let o = send(run(&["txpace", "send", "a.b64"], ""));
        assert!(!o.no_catch_up, "catching up is the default");
        // A global flag before the subcommand counts too.
        let cli = run(
            &["txpace", "--commitment", "processed", "send", "a.b64"],
            FILE,
        );
        assert_eq!(
            cli.global.commitment,
            Some(crate::config::Commitment::Processed)
        );
    }

    #[test]
    fn deploy_and_demo_take_the_file_too() {
        let cli = run(&["txpace", "deploy", "p.so"], FILE);
        let Command::Deploy(d) = cli.command else {
            panic!()
        };
        assert_eq!(d.send.rate, RateArg::Fixed(250.0));
        let cli = run(&["txpace", "demo"], FILE);
        let Command::Demo(d) = cli.command else {
            panic!()
        };
        assert_eq!(d.send.fanout, 3);
    }

    #[test]
    fn a_deploy_paces_at_max_unless_told() {
        let deploy = |args: &[&str], toml: &str| match run(args, toml).command {
            Command::Deploy(d) => d.send.rate,
            other => panic!("{other:?}"),
        };
        assert_eq!(deploy(&["txpace", "deploy", "p.so"], ""), RateArg::Max);
        assert_eq!(
            deploy(&["txpace", "deploy", "p.so", "--rate", "100"], ""),
            RateArg::Fixed(100.0)
        );
        assert_eq!(
            deploy(&["txpace", "deploy", "p.so"], FILE),
            RateArg::Fixed(250.0)
        );
        assert_eq!(
            send(run(&["txpace", "send", "a.b64"], "")).rate,
            RateArg::Fixed(100.0)
        );
    }
}
