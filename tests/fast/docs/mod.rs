//! The README and `docs/` kept in step with the code. Every `txpace` command and flag the pages
//! show (in code blocks, tables and inline code) is one that command's `--help` lists, and every
//! flag `--help` lists is named somewhere in the pages; the flags shown for `txpace-bench` and
//! `txpace-localnet` are fields of their command lines, and the test and bench targets named in
//! `cargo test --test NAME` / `cargo bench --bench NAME` exist. Every repository path and
//! `crate::module` named exists, every link and anchor between the pages resolves, the README
//! links every page and stays a front page (at most 250 lines). A failure names the file and
//! line.

mod commands;
mod help;
mod markdown;
mod shell;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use commands::Context;
use help::Level;
use markdown::{Code, Page, parse, slug};
use shell::{flags_in, words};

/// The repository: the pages and the paths they name are relative to it.
pub(crate) const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The README's length budget (issue 26): a front page, the rest in `docs/`.
const README_MAX_LINES: usize = 250;

/// The pages checked: the README and every Markdown file in `docs/`, relative to the root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("reading docs/")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| PathBuf::from("docs").join(p.file_name().expect("a file name")))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A file of the repository, by its path from the root.
pub(crate) fn read(rel: &Path) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel))
        .unwrap_or_else(|e| panic!("reading {}: {e}", rel.display()))
}

/// What went wrong, as `FILE:LINE: what`.
pub(crate) struct Findings(pub(crate) Vec<String>);

impl Findings {
    pub(crate) fn add(&mut self, page: &Page, line: usize, what: String) {
        self.0
            .push(format!("{}:{line}: {what}", page.path.display()));
    }
}

#[test]
fn every_command_and_flag_the_docs_show_is_in_its_help() {
    let ctx = Context::new();
    let mut out = Findings(Vec::new());
    for page in pages().iter().map(|p| parse(p)) {
        for code in &page.code {
            ctx.check_code(&page, code, &mut out);
        }
    }
    assert!(
        out.0.is_empty(),
        "stale commands or flags:\n{}",
        out.0.join("\n")
    );
}

#[test]
fn every_command_and_flag_in_help_is_in_the_docs() {
    let ctx = Context::new();
    let all: String = pages().iter().map(|p| read(p)).collect();
    let named = |word: &str| {
        all.match_indices(word).any(|(at, _)| {
            let after = all[at + word.len()..].chars().next();
            !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    };
    let mut missing = Vec::new();
    fn walk(l: &Level, path: &str, named: &dyn Fn(&str) -> bool, missing: &mut Vec<String>) {
        for flag in l
            .flags
            .keys()
            .filter(|f| f.starts_with("--") && *f != "--help")
        {
            if !named(flag) {
                missing.push(format!("{path} {flag}"));
            }
        }
        for (name, sub) in &l.commands {
            let path = format!("{path} {name}");
            if !named(&path) {
                missing.push(path.clone());
            }
            walk(sub, &path, named, missing);
        }
    }
    walk(&ctx.txpace, "txpace", &named, &mut missing);
    assert!(
        missing.is_empty(),
        "in --help but named nowhere in README.md or docs/:\n{}",
        missing.join("\n")
    );
}

/// A repository path (`src/engine/sim.rs`, `bench/`) or module (`engine::leaders`) a page names.
fn named_path(word: &str) -> Option<PathBuf> {
    const TOP: [&str; 9] = [
        "src/",
        "tests/",
        "bench/",
        "benches/",
        "localnet/",
        "scripts/",
        "assets/",
        "docs/",
        ".ci/",
    ];
    let word = word.trim_end_matches([',', '.', ')', ':', ';']);
    if TOP.iter().any(|t| word.starts_with(t)) {
        return Some(PathBuf::from(word));
    }
    let segments: Vec<&str> = word.split("::").collect();
    let module = segments.len() > 1
        && segments
            .iter()
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
    if !module {
        return None;
    }
    let top = Path::new(ROOT).join("src");
    let is_ours =
        top.join(format!("{}.rs", segments[0])).exists() || top.join(segments[0]).is_dir();
    is_ours.then(|| PathBuf::from(format!("src/{}", segments.join("/"))))
}

#[test]
fn every_path_and_module_the_docs_name_exists() {
    let mut out = Findings(Vec::new());
    for page in pages().iter().map(|p| parse(p)) {
        for code in &page.code {
            for word in words(&code.text) {
                let Some(path) = named_path(&word) else {
                    continue;
                };
                let abs = Path::new(ROOT).join(&path);
                let exists = if word.contains("::") {
                    abs.with_extension("rs").exists() || abs.join("mod.rs").exists()
                } else {
                    abs.exists()
                };
                if !exists {
                    out.add(&page, code.line, format!("{word} does not exist"));
                }
            }
        }
    }
    assert!(out.0.is_empty(), "stale paths:\n{}", out.0.join("\n"));
}

#[test]
fn every_link_and_anchor_between_the_pages_resolves() {
    let pages: Vec<Page> = pages().iter().map(|p| parse(p)).collect();
    let anchors = |path: &Path| -> Option<BTreeSet<String>> {
        match pages.iter().find(|p| p.path == path) {
            Some(p) => Some(p.anchors.clone()),
            None => path
                .extension()
                .is_some_and(|e| e == "md")
                .then(|| parse(path).anchors),
        }
    };
    let mut out = Findings(Vec::new());
    for page in &pages {
        for (line, url) in &page.links {
            if url.contains("://") || url.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = url.split_once('#').unwrap_or((url, ""));
            let target = if file.is_empty() {
                page.path.clone()
            } else {
                let joined = page.path.parent().unwrap_or(Path::new("")).join(file);
                // Normalise `docs/../README.md` to `README.md`.
                let mut norm = PathBuf::new();
                for c in joined.components() {
                    match c {
                        std::path::Component::ParentDir => {
                            norm.pop();
                        }
                        std::path::Component::CurDir => {}
                        c => norm.push(c),
                    }
                }
                norm
            };
            if !Path::new(ROOT).join(&target).exists() {
                out.add(
                    page,
                    *line,
                    format!("{url}: {} does not exist", target.display()),
                );
                continue;
            }
            if !anchor.is_empty() && !anchors(&target).is_some_and(|a| a.contains(anchor)) {
                out.add(
                    page,
                    *line,
                    format!("{url}: no heading #{anchor} in {}", target.display()),
                );
            }
        }
    }
    assert!(out.0.is_empty(), "broken links:\n{}", out.0.join("\n"));
}

/// A page nobody links to is a page nobody finds: the README links every page of `docs/`.
#[test]
fn every_page_of_docs_is_linked_from_the_readme() {
    let readme = parse(Path::new("README.md"));
    let linked: BTreeSet<&str> = readme
        .links
        .iter()
        .map(|(_, url)| url.split('#').next().unwrap_or(url))
        .collect();
    let unlinked: Vec<String> = pages()
        .into_iter()
        .skip(1)
        .map(|p| p.display().to_string())
        .filter(|p| !linked.contains(p.as_str()))
        .collect();
    assert!(unlinked.is_empty(), "README.md links none of {unlinked:?}");
}

#[test]
fn the_readme_is_a_front_page() {
    let lines = read(Path::new("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, at most {README_MAX_LINES}: move the detail to docs/"
    );
}

/// The checks themselves: commands read as a shell reads them, anchors as GitHub makes them,
/// and a stale command, flag or test filter found with its file and line.
#[test]
fn the_checks_read_commands_as_a_shell_would() {
    assert_eq!(
        words(r#"txpace send a -u "$(jq -r '.x' f)" | jq -c 'select(.a == "b")'"#),
        ["txpace", "send", "a", "-u", "ARG", "|", "jq", "-c", "ARG"]
    );
    assert_eq!(flags_in("-u/--url"), ["-u", "--url"]);
    assert_eq!(flags_in("--via=rpc"), ["--via"]);
    assert_eq!(flags_in("-vv"), ["-v", "-v"]);
    assert!(flags_in("-").is_empty() && flags_in("--").is_empty() && flags_in("-1").is_empty());
    assert_eq!(
        slug("Sending (`txpace-bench send`)"),
        "sending-txpace-bench-send"
    );
    assert_eq!(
        slug("Configuration: txpace.toml"),
        "configuration-txpacetoml"
    );
    // A flag txpace does not have is found, with its file and line.
    let ctx = Context::new();
    let page = Page {
        path: PathBuf::from("x.md"),
        code: Vec::new(),
        links: Vec::new(),
        anchors: BTreeSet::new(),
        text: String::new(),
    };
    let mut out = Findings(Vec::new());
    for (line, text) in [
        (3, "txpace send f --rate 100 --no-such-flag"),
        (4, "txpace sned f"),
        (5, "txpace config show --rate 1"),
        (6, "--fanuot 2"),
        (7, "cargo test --test e2e observe::nope -- --nocapture"),
        (8, "cargo test --test e2e_observe"),
    ] {
        let code = Code {
            line,
            text: text.into(),
            inline: true,
        };
        ctx.check_code(&page, &code, &mut out);
    }
    assert_eq!(
        out.0,
        [
            "x.md:3: `txpace send` has no flag --no-such-flag (see its --help)",
            "x.md:4: `txpace` has no command sned",
            "x.md:5: `txpace config show` has no flag --rate (see its --help)",
            "x.md:6: no txpace command takes --fanuot",
            "x.md:7: no test of tests/e2e matches the filter observe::nope",
            "x.md:8: cargo test target e2e_observe does not exist",
        ]
    );
}
