//! The exit codes are documented where users look — `--help` of txpace and of every
//! subcommand, and the table in docs/commands.md — and both say what `src/exit.rs` returns.

use std::process::Command;

use txpace::exit;

/// Every code `src/exit.rs` defines, with a word its description must contain.
const CODES: [(u8, &str); 6] = [
    (exit::OK, "landed"),
    (exit::LOST, "failed"),
    (exit::USAGE, "usage"),
    (exit::RUNTIME, "runtime"),
    (exit::UNFINISHED, "unfinished"),
    (exit::INTERRUPTED, "interrupted"),
];

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_txpace"))
        .args(args)
        .arg("--help")
        .output()
        .expect("running txpace --help");
    assert!(out.status.success(), "{args:?} --help: {:?}", out.status);
    let text = String::from_utf8(out.stdout).expect("help is UTF-8");
    // clap may wrap long help: compare words, not line breaks.
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn help_of_every_command_lists_the_exit_codes() {
    for args in [
        &[][..],
        &["send"],
        &["deploy"],
        &["demo"],
        &["gen"],
        &["inspect"],
    ] {
        let text = help(args);
        assert!(text.contains("Exit codes:"), "{args:?}:\n{text}");
        for (code, word) in CODES {
            let said = text
                .split(';')
                .any(|part| part.contains(&format!(" {code} ")) && part.contains(word));
            assert!(
                said,
                "{args:?} --help does not explain exit {code} ({word}):\n{text}"
            );
        }
    }
}

#[test]
fn the_docs_table_lists_the_same_exit_codes() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md"))
        .expect("reading docs/commands.md");
    let table: Vec<&str> = page
        .split("\n## Exit codes\n")
        .nth(1)
        .expect("docs/commands.md has an Exit codes section")
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("| code") && !l.starts_with("| ---"))
        .collect();
    let listed: Vec<u8> = table
        .iter()
        .filter_map(|l| l.trim_start_matches("| ").split(' ').next()?.parse().ok())
        .collect();
    let defined: Vec<u8> = CODES.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        listed,
        defined,
        "docs/commands.md rows:\n{}",
        table.join("\n")
    );
}
