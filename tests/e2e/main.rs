//! The end-to-end tests, in one test binary: the real `txpace` against real
//! `solana-test-validator`s and a real 3-node cluster (`txpace-localnet`) on loopback. They need
//! both programs (scripts/setup.sh installs them); without them they fail with the install
//! instructions, they are never skipped.
//!
//! libtest runs tests side by side; [`machine`] bounds how many validators that starts at once.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod machine;

mod cluster;
mod dashboard;
mod demo;
mod deploy;
mod engine_failure;
mod faults;
mod generate;
mod hangup;
mod late_status;
mod observe;
mod resume;
mod secrets;
mod send;
mod wan;

/// Every test of this harness begins by taking its part of the machine (`machine::share()` or
/// `machine::whole()`), so none starts validators beside more tests than [`machine`] allows.
#[test]
fn every_test_takes_the_machine() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let mut checked = 0;
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("reading tests/e2e") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name == "main.rs" || name == "machine.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("reading a test module");
        let mut lines = text.lines().map(str::trim);
        while let Some(line) = lines.next() {
            if line != "#[test]" {
                continue;
            }
            let signature = lines.next().unwrap_or_default();
            // rustfmt may put a long name's `{` on a line of its own.
            if !signature.ends_with('{') {
                lines.by_ref().find(|l| l.ends_with('{'));
            }
            let first = lines
                .by_ref()
                .find(|l| !l.starts_with("//"))
                .unwrap_or_default();
            checked += 1;
            if !(first.contains("machine::share()") || first.contains("machine::whole()")) {
                missing.push(format!("{name}: {signature} begins with {first:?}"));
            }
        }
    }
    assert!(
        checked >= 20,
        "found only {checked} tests in {}",
        dir.display()
    );
    assert!(
        missing.is_empty(),
        "tests that do not take the machine first:\n{}",
        missing.join("\n")
    );
}
