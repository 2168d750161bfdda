//! `scripts/cargo-test-summary.sh`, the step of `scripts/test.sh` that runs the tests and
//! closes with `tests: N passed, N failed`, run against a stand-in `cargo` that replays captured
//! output: the line counts every binary's failures, counts a binary that crashed before its
//! `test result:` line as failed, and the script's exit code is non-zero whenever anything failed.

use std::{
    os::unix::fs::PermissionsExt,
    path::Path,
    process::{Command, Output},
};

// Each captured output starts with a newline: a `\` line continuation would also strip the
// leading spaces of cargo's right-aligned `     Running` lines.

/// Two binaries pass, one fails two of its tests.
const ONE_BINARY_FAILS: &str = "
   Compiling txpace v0.1.0 (/src)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.00s
     Running unittests src/lib.rs (target/debug/deps/txpace-1)

running 3 tests
test a ... ok
test b ... ok
test c ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/e2e_send.rs (target/debug/deps/e2e_send-2)

running 4 tests
test x ... FAILED
test y ... ok
test z ... FAILED
test w ... ok

failures:
    x
    z

test result: FAILED. 2 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s

error: test failed, to rerun pass `--test e2e_send`
   Doc-tests txpace

running 1 test
test src/lib.rs - doc (line 1) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: 1 target failed:
    `--test e2e_send`
";

/// The second binary aborts mid-run: no `test result:` line.
const ONE_BINARY_CRASHES: &str = "
     Running unittests src/lib.rs (target/debug/deps/txpace-1)

running 2 tests
test a ... ok
test b ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/ui_pty.rs (target/debug/deps/ui_pty-3)

running 3 tests
test child ... ok
error: test failed, to rerun pass `--test ui_pty`

Caused by:
  process didn't exit successfully: `target/debug/deps/ui_pty-3` (signal: 6, SIGABRT: process abort signal)
     Running tests/ui_render.rs (target/debug/deps/ui_render-4)

running 1 test
test r ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: 1 target failed:
    `--test ui_pty`
";

const ALL_PASS: &str = "
     Running unittests src/lib.rs (target/debug/deps/txpace-1)

running 2 tests
test a ... ok
test b ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/scripts.rs (target/debug/deps/scripts-5)

running 1 test
test s ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

";

const BUILD_ERROR: &str = "
   Compiling txpace v0.1.0 (/src)
error[E0425]: cannot find value `x` in this scope
error: could not compile `txpace` (lib) due to 1 previous error
";

/// Runs the summary script with a `cargo` on `PATH` that prints `output` and exits `code`.
fn run_summary(output: &str, code: i32) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let captured = dir.path().join("captured.txt");
    std::fs::write(&captured, output).expect("writing the captured output");
    let cargo = dir.path().join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\ncat '{}'\nexit {code}\n", captured.display()),
    )
    .expect("writing the stand-in cargo");
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cargo-test-summary.sh");
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .arg(&script)
        .arg("--locked")
        .env("PATH", path)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e} (needs bash)", script.display()))
}

fn last_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn failures_of_one_binary_are_counted_and_the_script_fails() {
    let out = run_summary(ONE_BINARY_FAILS, 101);
    assert_eq!(last_line(&out), "tests: 6 passed, 2 failed");
    assert_eq!(out.status.code(), Some(101));
    // The test output itself is shown, not only the summary.
    assert!(String::from_utf8_lossy(&out.stdout).contains("test x ... FAILED"));
}

#[test]
fn a_crashed_binary_counts_as_failed() {
    let out = run_summary(ONE_BINARY_CRASHES, 101);
    assert_eq!(
        last_line(&out),
        "tests: 3 passed, 1 failed (1 test binaries ended without a result, counted as failed)"
    );
    assert_eq!(out.status.code(), Some(101));
}

#[test]
fn a_crash_is_a_failure_even_if_cargo_exits_zero() {
    let out = run_summary(ONE_BINARY_CRASHES, 0);
    assert!(last_line(&out).starts_with("tests: 3 passed, 1 failed"));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_build_error_is_never_reported_as_zero_failed() {
    let out = run_summary(BUILD_ERROR, 101);
    assert_eq!(
        last_line(&out),
        "tests: 0 passed, 1 failed (cargo test exited 101 before running any test)"
    );
    assert_eq!(out.status.code(), Some(101));
}

#[test]
fn a_clean_run_passes() {
    let out = run_summary(ALL_PASS, 0);
    assert_eq!(last_line(&out), "tests: 3 passed, 0 failed");
    assert_eq!(out.status.code(), Some(0));
}
