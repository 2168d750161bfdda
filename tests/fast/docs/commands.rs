//! Checking one piece of code on a page against the command lines it runs: txpace's `--help`,
//! the clap fields of `txpace-bench` and `txpace-localnet`, cargo's test and bench targets.

use std::collections::BTreeSet;
use std::path::Path;

use super::help::{Level, level};
use super::markdown::{Code, Page};
use super::shell::{ends_command, flags_in, is_flag, program, words};
use super::{Findings, ROOT, read};

/// The Rust sources of a package's command line, for the flags the pages show for it.
fn sources(dir: &str) -> String {
    let mut text = String::new();
    let mut dirs = vec![Path::new(ROOT).join(dir)];
    // Subdirectories too: a command's arguments may live in its own module directory
    // (`bench/src/wan/mod.rs`).
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("reading sources") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                text.push_str(&std::fs::read_to_string(&path).expect("reading a source"));
            }
        }
    }
    text
}

/// A flag of a clap command line written as a field (`    slots_per_epoch: u64`) or named
/// (`long = "slots-per-epoch"`) in its sources: near enough to catch a renamed or removed flag
/// without building those packages (they link Agave's whole validator or client stack).
fn clap_field(sources: &str, flag: &str) -> bool {
    let long = flag.trim_start_matches('-');
    sources.contains(&format!(" {}: ", long.replace('-', "_")))
        || sources.contains(&format!("\"{long}\""))
}

/// Whether a test filter names tests a harness has: `observe::preflight` needs the module
/// `observe` with a function starting `preflight`; `engine_outage` a module, or a function,
/// of that name.
fn test_filter_matches(harness: &Path, filter: &str) -> bool {
    let module = |name: &str| {
        std::fs::read_to_string(harness.join(format!("{name}.rs")))
            .or_else(|_| std::fs::read_to_string(harness.join(name).join("mod.rs")))
            .ok()
    };
    match filter.split_once("::") {
        Some((m, f)) => {
            module(m).is_some_and(|src| f.is_empty() || src.contains(&format!("fn {f}")))
        }
        None => {
            module(filter).is_some()
                || std::fs::read_dir(harness).is_ok_and(|dir| {
                    dir.flatten().any(|e| {
                        std::fs::read_to_string(e.path())
                            .is_ok_and(|src| src.contains(&format!("fn {filter}")))
                    })
                })
        }
    }
}

/// What the pages are checked against, read once: txpace's command lines from `--help`, the
/// sources of the other programs' command lines, and the targets cargo knows.
pub(crate) struct Context {
    pub(crate) txpace: Level,
    /// Every txpace flag of every command, for flags named without their command.
    all_flags: BTreeSet<String>,
    bench: String,
    localnet: String,
    cargo_toml: String,
}

impl Context {
    pub(crate) fn new() -> Context {
        let txpace = level(&[]);
        let mut all_flags = BTreeSet::new();
        fn collect(l: &Level, all: &mut BTreeSet<String>) {
            all.extend(l.flags.keys().cloned());
            for sub in l.commands.values() {
                collect(sub, all);
            }
        }
        collect(&txpace, &mut all_flags);
        Context {
            txpace,
            all_flags,
            bench: sources("bench/src"),
            localnet: sources("localnet/src"),
            cargo_toml: read(Path::new("Cargo.toml")),
        }
    }

    /// `txpace [global flags] COMMAND [SUBCOMMAND] [args and flags]`: each flag is checked
    /// against the level it is given at (a command's `--help` lists the global flags too).
    fn check_txpace(&self, args: &[String], page: &Page, line: usize, out: &mut Findings) {
        let mut lvl = &self.txpace;
        let mut path = vec!["txpace".to_string()];
        let mut expecting_command = true;
        let mut i = 0;
        while i < args.len() {
            let word = &args[i];
            i += 1;
            if word == "--" {
                break;
            }
            if is_flag(word) {
                for flag in flags_in(word) {
                    match lvl.flags.get(&flag) {
                        Some(takes_value) => {
                            if *takes_value && !word.contains('=') && !word.contains('/') {
                                i += 1;
                            }
                        }
                        None => out.add(
                            page,
                            line,
                            format!("`{}` has no flag {flag} (see its --help)", path.join(" ")),
                        ),
                    }
                }
                continue;
            }
            if !expecting_command {
                continue;
            }
            if let Some(sub) = lvl.commands.get(word.as_str()) {
                path.push(word.clone());
                lvl = sub;
                expecting_command = !lvl.commands.is_empty();
            } else if word.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
                out.add(
                    page,
                    line,
                    format!("`{}` has no command {word}", path.join(" ")),
                );
                return;
            } else {
                // A placeholder (COMMAND) or an argument: nothing more to check by command.
                expecting_command = false;
            }
        }
    }

    fn check_foreign(
        &self,
        prog: &str,
        args: &[String],
        page: &Page,
        line: usize,
        out: &mut Findings,
    ) {
        match prog {
            "txpace-bench" => {
                if let Some(sub) = args.first().filter(|w| !is_flag(w)) {
                    let variant: String = sub
                        .split('-')
                        .map(|p| {
                            let mut c = p.chars();
                            c.next()
                                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                                .unwrap_or_default()
                        })
                        .collect();
                    if !self.bench.contains(&format!("Bench::{variant}(")) {
                        out.add(page, line, format!("txpace-bench has no command {sub}"));
                    }
                }
                self.check_fields("txpace-bench", &self.bench, args, page, line, out);
            }
            "txpace-localnet" => {
                self.check_fields("txpace-localnet", &self.localnet, args, page, line, out)
            }
            "cargo" => {
                for (i, pair) in args.windows(2).enumerate() {
                    let (kind, dir) = match pair[0].as_str() {
                        "--test" => ("test", "tests"),
                        "--bench" => ("bench", "benches"),
                        _ => continue,
                    };
                    let name = &pair[1];
                    let file = Path::new(ROOT).join(dir).join(format!("{name}.rs"));
                    let harness = Path::new(ROOT).join(dir).join(name);
                    let declared = self.cargo_toml.contains(&format!("name = \"{name}\""));
                    if !(file.exists() || harness.join("main.rs").exists() || declared) {
                        out.add(
                            page,
                            line,
                            format!("cargo {kind} target {name} does not exist"),
                        );
                        continue;
                    }
                    let filter = args.get(i + 2).filter(|w| !w.starts_with('-'));
                    if let Some(filter) = filter
                        && !test_filter_matches(&harness, filter)
                    {
                        out.add(
                            page,
                            line,
                            format!("no test of {dir}/{name} matches the filter {filter}"),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn check_fields(
        &self,
        prog: &str,
        src: &str,
        args: &[String],
        page: &Page,
        line: usize,
        out: &mut Findings,
    ) {
        for word in args.iter().filter(|w| is_flag(w)) {
            for flag in flags_in(word).into_iter().filter(|f| f.starts_with("--")) {
                if !clap_field(src, &flag) {
                    out.add(page, line, format!("{prog} has no flag {flag}"));
                }
            }
        }
    }

    /// A flag named on its own (`--fanout K`, `-u/--url`): some txpace command takes it, or a
    /// program the same page runs (txpace-bench, txpace-localnet) does.
    fn check_bare(&self, words: &[String], page: &Page, line: usize, out: &mut Findings) {
        for word in words.iter().take_while(|w| !ends_command(w)) {
            if !word.starts_with('-') {
                continue;
            }
            for flag in flags_in(word) {
                let foreign = (page.text.contains("txpace-bench")
                    && clap_field(&self.bench, &flag))
                    || (page.text.contains("txpace-localnet") && clap_field(&self.localnet, &flag));
                if !self.all_flags.contains(&flag) && !foreign {
                    out.add(page, line, format!("no txpace command takes {flag}"));
                }
            }
        }
    }

    pub(crate) fn check_code(&self, page: &Page, code: &Code, out: &mut Findings) {
        let words = words(&code.text);
        let mut found_program = false;
        let mut i = 0;
        while i < words.len() {
            if let Some(prog) = program(&words[i]) {
                found_program = true;
                let args: Vec<String> = words[i + 1..]
                    .iter()
                    .take_while(|w| !ends_command(w))
                    .cloned()
                    .collect();
                i += 1 + args.len();
                if prog == "txpace" {
                    // "txpace · demo" in a screen capture, "txpace / Agave" in a table: prose.
                    let runs = args.first().is_some_and(|w| {
                        w.starts_with('-') || w.starts_with(|c: char| c.is_ascii_lowercase())
                    });
                    if runs {
                        self.check_txpace(&args, page, code.line, out);
                    }
                } else {
                    self.check_foreign(prog, &args, page, code.line, out);
                }
            } else {
                i += 1;
            }
        }
        if !found_program && code.inline {
            // `send --identity` and `deploy --close-buffer`: a command named without txpace.
            let first = words.first().map(String::as_str).unwrap_or("");
            if self.txpace.commands.contains_key(first) && words.iter().any(|w| is_flag(w)) {
                self.check_txpace(&words, page, code.line, out);
            } else if first.starts_with('-') {
                self.check_bare(&words, page, code.line, out);
            }
        }
    }
}
