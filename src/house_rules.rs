//! The house rules about the shape of the code that a test can check, over txpace's `src/`
//! and the benchmark's `bench/src/`: no import cycle between modules, and no module over
//! [`MAX_LINES`] lines; and over txpace's `src/` alone, no `print` macro outside tests (they
//! panic on a terminal that hung up; `crate::console` has ones that do not). The modules are read as text from the source tree, so the check needs
//! nothing beyond `cargo test --lib`.
//!
//! A module's imports are the `crate::` and `super::` paths it names (in `use` lines or inline,
//! doc links included) before its `#[cfg(test)] mod tests`: a module and a descendant of it
//! naming each other is a parent re-exporting its parts, not a cycle, so paths to an ancestor
//! do not count.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

/// The most lines a module may have.
const MAX_LINES: usize = 500;

/// A module's path from its crate's root (`["engine", "quic"]`), from its file's.
type Module = Vec<String>;

/// Every `.rs` file below `root`, by module path.
fn modules(root: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("below the root");
                let mut parts: Module = rel
                    .with_extension("")
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    parts.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    parts.pop();
                }
                out.insert(parts, path);
            }
        }
    }
    out
}

/// The text of a module that counts for its imports: all of it before its unit tests.
fn code(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let start = from + at;
        let rest = text[start + "#[cfg(test)]".len()..].trim_start();
        if rest.starts_with("mod tests") {
            return &text[..start];
        }
        from = start + 1;
    }
    text
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module paths named after `prefix` (`crate::` or `super::`) in `text`: for `a::b::C` the
/// lower-case segments `a::b`, for `a::{b::C, d}` both `a::b` and `a::d`.
fn paths_after(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        // `super::super::x` is read once, from its first `super::`.
        let before = &text[..start];
        if before.chars().next_back().is_some_and(is_ident) || before.ends_with("::") {
            continue;
        }
        walk(&text[from..], Vec::new(), &mut out);
    }
    out
}

/// Reads one path (or a `{...}` group of them) at the start of `text`, below `base`.
fn walk(text: &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = text;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' | ',' if depth == 1 => {
                        walk(group[item_start..i].trim_start(), base.clone(), out);
                        item_start = i + 1;
                        if c == '}' {
                            break;
                        }
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            return;
        }
        let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        let ident = rest[..len].trim_start_matches("r#");
        if ident.is_empty() || !ident.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
            break;
        }
        base.push(ident.to_string());
        match rest[len..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    if !base.is_empty() {
        out.push(base);
    }
}

/// The longest leading part of `path` that is a module of the crate.
fn resolve(files: &BTreeMap<Module, PathBuf>, path: &[String]) -> Option<Module> {
    (1..=path.len())
        .rev()
        .map(|k| path[..k].to_vec())
        .find(|m| files.contains_key(m))
}

/// Each module's imports of the crate's other modules, ancestors left out.
fn imports(files: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut edges = BTreeMap::new();
    for (module, path) in files {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let text = code(&text);
        let parent = &module[..module.len().saturating_sub(1)];
        let mut named: Vec<Vec<String>> = paths_after(text, "crate::");
        for mut path in paths_after(text, "super::") {
            let mut base = parent.to_vec();
            while path.first().is_some_and(|s| s == "super") {
                path.remove(0);
                base.pop();
            }
            base.extend(path);
            named.push(base);
        }
        let targets = named
            .iter()
            .filter_map(|p| resolve(files, p))
            .filter(|t| !module.starts_with(t))
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

/// The import cycles: each a set of modules that reach one another (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a Module) {
        let i = w.index.len();
        w.index.insert(v, (i, i));
        w.stack.push(v);
        for t in &w.edges[v] {
            let low = match w.index.get(t) {
                None => {
                    visit(w, t);
                    w.index[t].1
                }
                Some(&(ti, _)) if w.stack.contains(&t) => ti,
                Some(_) => continue,
            };
            let entry = w.index.get_mut(v).expect("visited");
            entry.1 = entry.1.min(low);
        }
        if w.index[v].0 == w.index[v].1 {
            let at = w.stack.iter().position(|m| *m == v).expect("on the stack");
            let mut set: Vec<String> = w.stack.drain(at..).map(|m| m.join("::")).collect();
            set.sort();
            if set.len() > 1 {
                w.out.push(set);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.out
}

fn roots() -> [PathBuf; 2] {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    [dir.join("src"), dir.join("bench/src")]
}

#[test]
fn no_module_imports_itself_through_others() {
    let mut found = Vec::new();
    for root in roots() {
        for set in cycles(&imports(&modules(&root))) {
            found.push(format!("{}: {}", root.display(), set.join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles (each a set of modules that reach one another):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_module_is_over_the_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut over = Vec::new();
    for root in roots() {
        for path in modules(&root).values() {
            let text = std::fs::read_to_string(path).expect("a module's text");
            let lines = text.lines().count();
            let rel = path.strip_prefix(dir).expect("in the package");
            let rel = rel.to_string_lossy().replace('\\', "/");
            if lines > MAX_LINES {
                over.push(format!("{rel}: {lines} lines (split it at a seam)"));
            }
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        over.join("\n")
    );
}

/// Modules compiled only for tests: declared under a `#[cfg(...)]` naming `test` (a unit-test
/// file, the simulators), and every module below one.
fn test_only(files: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    for (module, path) in files {
        let text = std::fs::read_to_string(path).expect("a module's text");
        let mut lines = text.lines().map(str::trim).peekable();
        while let Some(line) = lines.next() {
            let gated = line.starts_with("#[cfg(") && line.contains("test");
            if let (true, Some(next)) = (gated, lines.peek()) {
                let decl = next
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ");
                if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                    let mut child = module.clone();
                    child.push(name.to_string());
                    out.insert(child);
                }
            }
        }
    }
    files
        .keys()
        .filter(|m| out.iter().any(|t| m.starts_with(t)))
        .cloned()
        .collect()
}

/// Whether `text` calls `name!(`, not as part of a longer name or a quoted one.
fn calls(text: &str, name: &str) -> bool {
    let needle = format!("{name}!(");
    text.match_indices(&needle).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| is_ident(c) || c == '`')
    })
}

#[test]
fn no_print_macro_outside_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = modules(&dir.join("src"));
    let exempt = test_only(&files);
    let mut found = Vec::new();
    for (module, path) in &files {
        if exempt.contains(module) || module == &vec!["console".to_string()] {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("a module's text");
        for name in ["println", "eprintln", "print", "eprint"] {
            if calls(code(&text), name) {
                found.push(format!(
                    "{}: {name}! (use crate::console's)",
                    path.display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "print macros that panic on a dead terminal:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_print_check_sees_a_call_and_not_a_mention() {
    assert!(calls("x; eprintln!(\"a\")", "eprintln"));
    assert!(calls("println!(\"a\")", "println"));
    assert!(!calls("say!(\"a\") // `eprintln!(`", "eprintln"));
    assert!(!calls("eprintln!(\"a\")", "println"));
}

#[test]
fn the_check_sees_a_cycle_and_paths_in_groups() {
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    let mut paths = paths_after(
        "use crate::{a::{B, c::D}, e}; x = crate::f::G; // super::h",
        "crate::",
    );
    paths.sort();
    assert_eq!(paths, vec![m("a"), m("a::c"), m("e"), m("f")]);
    let edges = BTreeMap::from([
        (m("a"), BTreeSet::from([m("b")])),
        (m("b"), BTreeSet::from([m("a")])),
        (m("c"), BTreeSet::from([m("a")])),
    ]);
    assert_eq!(cycles(&edges), vec![vec!["a".to_string(), "b".to_string()]]);
}
