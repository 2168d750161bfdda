//! `txpace config path|show`: where txpace.toml is, and every setting in force with where it
//! comes from, in txpace.toml's own format so a line can be copied into the file. URLs are
//! shown as `redact_url` shows them: an API key in a URL never reaches the screen.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use clap::ArgMatches;

use crate::{
    cli::{ConfigCommand, GlobalOpts, RateArg, SLOT_MS},
    config, exit,
    redact::redact_url,
    settings::{
        self, Settings,
        apply::{Source, given},
    },
};

pub fn run(
    cmd: &ConfigCommand,
    global: &GlobalOpts,
    matches: &ArgMatches,
    settings: &Settings,
) -> Result<u8> {
    match cmd {
        ConfigCommand::Path => path(global),
        ConfigCommand::Show => {
            out_part!("{}", show(global, matches, settings)?);
            Ok(exit::OK)
        }
    }
}

/// `txpace config path`: the file named by `--txpace-config`/`TXPACE_CONFIG`, or the default
/// one, whether or not it exists (it is where to create it).
pub fn path(global: &GlobalOpts) -> Result<u8> {
    let path = match &global.txpace_config {
        Some(p) => p.clone(),
        None => settings::default_path()
            .context("no config directory (no home directory?): pass --txpace-config PATH")?,
    };
    out!("{}", path.display());
    Ok(exit::OK)
}

/// Lines of `key = value  # source`, aligned.
struct Out {
    text: String,
}

impl Out {
    fn line(&mut self, key: &str, value: String, source: impl std::fmt::Display) {
        let kv = format!("{key} = {value}");
        let _ = writeln!(self.text, "{kv:<40} # {source}");
    }

    fn section(&mut self, name: &str) {
        let _ = writeln!(self.text, "\n[{name}]");
    }
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// What `txpace config show` prints.
pub fn show(global: &GlobalOpts, matches: &ArgMatches, s: &Settings) -> Result<String> {
    let args = global.to_args(None);
    let resolved = config::resolve(&args).map_err(exit::usage)?;
    let solana = config::cli_config_gives(&args).map_err(exit::usage)?;
    let mut out = Out {
        text: String::new(),
    };
    let file = match (&s.path, settings::default_path()) {
        (Some(p), _) => p.display().to_string(),
        (None, Some(p)) => format!("{} (not found)", p.display()),
        (None, None) => "(no config directory)".to_string(),
    };
    let solana_file = match &solana.path {
        Some(p) => p.display().to_string(),
        None => "(not found)".to_string(),
    };
    let _ = writeln!(
        out.text,
        "# txpace.toml: {file}\n# Solana CLI config: {solana_file}\n\
         # Precedence: flag > environment > txpace.toml > Solana CLI config > default.\n"
    );

    // Each global: flag or environment, else txpace.toml, else the Solana config, else default.
    let source = |id: &str, env: &'static str, in_file: bool, in_solana: bool| {
        given(matches, id, env).unwrap_or(if in_file {
            Source::File
        } else if in_solana {
            Source::SolanaConfig
        } else {
            Source::Default
        })
    };
    let url_src = source("url", "TXPACE_URL", s.url.is_some(), solana.url);
    out.line("url", quoted(&redact_url(&resolved.rpc_url)), url_src);
    let ws_src = match source("ws", "TXPACE_WS", s.ws.is_some(), false) {
        // A URL from anywhere above the Solana config makes its websocket the derived one.
        Source::Default
            if solana.ws && !matches!(url_src, Source::Flag | Source::Env(_) | Source::File) =>
        {
            Source::SolanaConfig
        }
        Source::Default => Source::Derived,
        other => other,
    };
    out.line("ws", quoted(&redact_url(&resolved.ws_url)), ws_src);
    out.line(
        "commitment",
        quoted(resolved.commitment.as_str()),
        source(
            "commitment",
            "TXPACE_COMMITMENT",
            s.commitment.is_some(),
            solana.commitment,
        ),
    );

    // The sending options: txpace.toml or the flags' defaults (flags belong to a command).
    let from = |set: bool| if set { Source::File } else { Source::Default };
    out.section("send");
    let rate = match s.rate.unwrap_or(RateArg::Fixed(100.0)) {
        RateArg::Fixed(r) => format!("{r}"),
        RateArg::Max => quoted("max"),
    };
    out.line("rate", rate, from(s.rate.is_some()));
    out.line(
        "fanout",
        s.fanout.unwrap_or(1).to_string(),
        from(s.fanout.is_some()),
    );
    let ms = s
        .resend_interval
        .map_or(10 * SLOT_MS as u128, |r| r.0.as_millis());
    let resend = if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    };
    let resend_src = match s.resend_interval {
        Some(_) => Source::File.to_string(),
        None => "default (10 slots)".to_string(),
    };
    out.line("resend_interval", quoted(&resend), resend_src);
    out.line(
        "send_timeout",
        format!("{:?}", s.send_timeout.unwrap_or(5.0)),
        from(s.send_timeout.is_some()),
    );
    out.line(
        "catch_up",
        s.catch_up.unwrap_or(true).to_string(),
        from(s.catch_up.is_some()),
    );

    out.section("dashboard");
    let theme = s.theme.unwrap_or_default();
    out.line("theme", quoted(theme.as_str()), from(s.theme.is_some()));
    out.line(
        "mouse",
        s.mouse.unwrap_or(true).to_string(),
        from(s.mouse.is_some()),
    );

    out.section("keys");
    for row in s.keymap.rows() {
        if row.name == "jump_queue" {
            continue;
        }
        let keys: Vec<String> = row
            .keys
            .iter()
            .map(|k| quoted(&crate::ui::keymap::name(*k)))
            .collect();
        let set = s.keys.iter().any(|(a, _)| a == row.name);
        out.line(row.name, format!("[{}]", keys.join(", ")), from(set));
    }
    Ok(out.text)
}
