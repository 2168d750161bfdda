//! txpace's command line as its `--help` shows it, command by command.

use std::collections::BTreeMap;
use std::process::Command;

/// One level of txpace's command line, read from its `--help`.
#[derive(Default)]
pub(crate) struct Level {
    /// Long and short flags (`--rate`, `-u`), aliases included; true when it takes a value.
    pub(crate) flags: BTreeMap<String, bool>,
    /// Subcommands, each with its own level.
    pub(crate) commands: BTreeMap<String, Level>,
}

fn help(path: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .args(path)
        .arg("--help")
        .output()
        .expect("running txpace --help");
    assert!(out.status.success(), "txpace {path:?} --help: {out:?}");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// Reads a `--help` text: option lines are `  -k, --keypair <KEYPAIR>` or `      --rate <…>`
/// (descriptions are indented further), aliases `[alias: --cu-price]`, subcommands the
/// lines under `Commands:`.
pub(crate) fn level(path: &[&str]) -> Level {
    let text = help(path);
    let mut lvl = Level::default();
    let mut in_commands = false;
    let mut current_takes_value = false;
    let mut names = Vec::new();
    for line in text.lines() {
        if line == "Commands:" {
            in_commands = true;
            continue;
        }
        if in_commands {
            match line
                .strip_prefix("  ")
                .and_then(|l| l.split_whitespace().next())
            {
                Some(word) if !line.starts_with("   ") && word != "help" => {
                    names.push(word.to_string())
                }
                _ if line.is_empty() => in_commands = false,
                _ => {}
            }
            continue;
        }
        let option = line
            .strip_prefix("      --")
            .map(|rest| (None, rest))
            .or_else(|| {
                let rest = line.strip_prefix("  -")?;
                let (short, rest) = rest.split_once(", --")?;
                (short.len() == 1).then_some((Some(short), rest))
            });
        if let Some((short, rest)) = option {
            let long: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            let after = &rest[long.len()..];
            current_takes_value = after.starts_with(" <") || after.starts_with("=<");
            lvl.flags.insert(format!("--{long}"), current_takes_value);
            if let Some(s) = short {
                lvl.flags.insert(format!("-{s}"), current_takes_value);
            }
        }
        for marker in ["[alias: ", "[aliases: "] {
            if let Some(at) = line.find(marker) {
                let list = &line[at + marker.len()..];
                let list = &list[..list.find(']').unwrap_or(list.len())];
                for alias in list.split(", ") {
                    lvl.flags
                        .insert(alias.trim().to_string(), current_takes_value);
                }
            }
        }
    }
    for name in names {
        let mut sub: Vec<&str> = path.to_vec();
        sub.push(&name);
        lvl.commands.insert(name.clone(), level(&sub));
    }
    lvl
}
