//! `txpace man [COMMAND] [--dir DIR]`: manual pages in roff, generated from the clap definition
//! like `--help`, with the sections `--help` has no room for (environment, files, exit status)
//! on txpace(1).

use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_mangen::{
    Man,
    roff::{Roff, bold, roman},
};

use crate::{cli::Cli, exit};

pub fn run(command: Option<&str>, dir: Option<&Path>) -> Result<u8> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the man page directory {}", dir.display()))
            .map_err(exit::usage)?;
        for (name, page) in all_pages()? {
            let path = dir.join(name);
            std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
            out!("{}", path.display());
        }
        return Ok(exit::OK);
    }
    match page(command)? {
        Some(page) => super::print_stdout(&page)?,
        None => {
            let names: Vec<String> = built()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .filter(|n| n != "help")
                .collect();
            say!(
                "error: txpace has no command {:?}: give one of {}",
                command.unwrap_or_default(),
                names.join(", ")
            );
            return Ok(exit::USAGE);
        }
    }
    Ok(exit::OK)
}

/// The command tree as clap completes it: subcommands named `txpace-send` for their pages and
/// `txpace send` in their synopses.
fn built() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// txpace(1) for `None`, txpace-COMMAND(1) for a command, `None` for a command txpace lacks.
pub fn page(command: Option<&str>) -> Result<Option<Vec<u8>>> {
    let root = built();
    let Some(name) = command else {
        return render(&root, true).map(Some);
    };
    match root.find_subcommand(name) {
        Some(sub) => render(sub, false).map(Some),
        None => Ok(None),
    }
}

/// Every page with its file name: txpace.1 first, then one per command.
pub fn all_pages() -> Result<Vec<(String, Vec<u8>)>> {
    let root = built();
    let mut pages = vec![("txpace.1".to_string(), render(&root, true)?)];
    for sub in root.get_subcommands() {
        let man = Man::new(sub.clone());
        pages.push((man.get_filename(), render(sub, false)?));
    }
    Ok(pages)
}

fn render(cmd: &clap::Command, top: bool) -> Result<Vec<u8>> {
    // clap_mangen would print `after_help` under a heading "EXTRA"; txpace's is the exit-code
    // line, which gets a proper EXIT STATUS section instead, and the install notes a NOTES one.
    let after = cmd.get_after_help().map(|h| h.to_string());
    let plain = cmd.clone().after_help(None::<&'static str>);
    let man = Man::new(plain).source(format!("txpace {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render(&mut out)?;
    let mut roff = Roff::default();
    if top {
        for (title, entries) in [("ENVIRONMENT", ENVIRONMENT), ("FILES", FILES)] {
            roff.control("SH", [title]);
            for (name, text) in entries {
                paragraph(&mut roff, name, text);
            }
        }
    }
    match after.as_deref() {
        Some(exit::HELP) => {
            roff.control("SH", ["EXIT STATUS"]);
            for (code, text) in exit::TABLE {
                paragraph(&mut roff, &code.to_string(), text);
            }
        }
        Some(notes) => {
            roff.control("SH", ["NOTES"]);
            for line in notes.lines() {
                roff.text([roman(line)]);
                roff.control("br", NO_ARGS);
            }
        }
        None => {}
    }
    // Before VERSION, which man pages keep last.
    let mut extra = Vec::new();
    roff.to_writer(&mut extra)?;
    let at = out
        .windows(VERSION.len())
        .position(|w| w == VERSION)
        .unwrap_or(out.len());
    out.splice(at..at, extra);
    Ok(out)
}

const NO_ARGS: [&str; 0] = [];

/// Where clap_mangen starts the VERSION section.
const VERSION: &[u8] = b".SH VERSION";

/// A tagged paragraph: `name` in bold, then its text indented below.
fn paragraph(roff: &mut Roff, name: &str, text: &str) {
    roff.control("TP", NO_ARGS);
    roff.text([bold(name)]);
    roff.text([roman(text)]);
}

/// (name, what it is) pairs of a man page section.
type Entries<'a> = &'a [(&'a str, &'a str)];

const ENVIRONMENT: Entries = &[
    ("TXPACE_URL", "As -u/--url; a flag wins over it."),
    ("TXPACE_WS", "As --ws."),
    ("TXPACE_COMMITMENT", "As --commitment."),
    (
        "TXPACE_SOLANA_CONFIG",
        "As -C/--config: the Solana CLI config file.",
    ),
    (
        "TXPACE_CONFIG",
        "As --txpace-config: txpace's own settings file.",
    ),
    (
        "TXPACE_OUTPUT",
        "As --output: display, json or json-compact.",
    ),
    (
        "RUST_LOG",
        "Log levels by target, read as env_logger reads it (e.g. debug, or info,txpace::engine=debug); -v and -q shift them.",
    ),
    (
        "NO_COLOR",
        "When set and not empty, the dashboard uses no colors: emphasis by bold and reversed text.",
    ),
    (
        "COLORFGBG",
        "Set by some terminals to FG;BG: a background of 7 or 15 makes --theme auto light.",
    ),
];

const FILES: Entries = &[
    (
        "~/.config/txpace/txpace.toml",
        "txpace's settings: endpoints, commitment, pace, fan-out, resend interval, send timeout, dashboard theme, mouse and keys. Below flags and the environment, above the Solana CLI config. txpace config show prints what is in force.",
    ),
    (
        "~/.config/solana/cli/config.yml",
        "The Solana CLI's config: RPC and websocket URL, commitment and keypair when no flag gives them (-C/--config names another).",
    ),
    (
        "~/.local/share/txpace/logs/",
        "One log file per run (KIND-UNIXSECONDS-PID.log), readable by its owner only.",
    ),
    (
        "~/.local/share/txpace/journals/",
        "The journals of send runs, for --resume.",
    ),
];
