//! `scripts/cargo-test-summary.sh`, the step of `scripts/test.sh` that runs the tests and
//! closes with `tests: N passed, N failed`, run against a stand-in `cargo` that replays captured
//! output: the line counts every binary's failures, counts a binary that crashed before its
//! `test result:` line as failed, and the script's exit code is non-zero whenever anything failed.
//! And `scripts/check-test-binaries.sh`, the step after it, on made-up output naming made-up
//! executables: it fails, saying why, on a seventh integration-test binary or over 1 GB of test
//! executables, and counts only the executables the run named.

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

     Running tests/e2e/main.rs (target/debug/deps/e2e-2)

running 4 tests
test x ... FAILED
test y ... ok
test z ... FAILED
test w ... ok

failures:
    x
    z

test result: FAILED. 2 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s

error: test failed, to rerun pass `--test e2e`
   Doc-tests txpace

running 1 test
test src/lib.rs - doc (line 1) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: 1 target failed:
    `--test e2e`
";

/// The second binary aborts mid-run: no `test result:` line.
const ONE_BINARY_CRASHES: &str = "
     Running unittests src/lib.rs (target/debug/deps/txpace-1)

running 2 tests
test a ... ok
test b ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/fast/main.rs (target/debug/deps/fast-3)

running 3 tests
test child ... ok
error: test failed, to rerun pass `--test fast`

Caused by:
  process didn't exit successfully: `target/debug/deps/fast-3` (signal: 6, SIGABRT: process abort signal)
     Running tests/e2e/main.rs (target/debug/deps/e2e-4)

running 1 test
test r ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: 1 target failed:
    `--test fast`
";

const ALL_PASS: &str = "
     Running unittests src/lib.rs (target/debug/deps/txpace-1)

running 2 tests
test a ... ok
test b ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/fast/main.rs (target/debug/deps/fast-5)

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

/// Runs `scripts/check-test-binaries.sh` on a `cargo test` output that names a unit-test
/// executable and `integration` integration-test executables, each `bytes` long (sparse files),
/// in a directory that also holds an earlier build's 2 GB executable the output does not name.
fn run_check(integration: usize, bytes: u64) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = |name: &str, len: u64| {
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .and_then(|f| f.set_len(len))
            .expect("a made-up executable");
        path.display().to_string()
    };
    exe("fast-0ld", 2_000_000_000);
    let mut output = format!(
        "\n     Running unittests src/lib.rs ({})\n\ntest result: ok. 1 passed; 0 failed\n",
        exe("txpace-1", bytes)
    );
    for i in 0..integration {
        output += &format!(
            "     Running tests/h{i}/main.rs ({})\n\ntest result: ok. 1 passed; 0 failed\n",
            exe(&format!("h{i}-2"), bytes)
        );
    }
    output += "   Doc-tests txpace\n\ntest result: ok. 1 passed; 0 failed\n";
    let log = dir.path().join("cargo-test.log");
    std::fs::write(&log, output).expect("writing the made-up output");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-test-binaries.sh");
    Command::new("bash")
        .arg(&script)
        .arg(&log)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e} (needs bash)", script.display()))
}

#[test]
fn six_harnesses_within_a_gigabyte_pass_and_earlier_builds_do_not_count() {
    let out = run_check(6, 100_000_000);
    assert_eq!(
        last_line(&out),
        "test binaries: 6 integration (at most 6), 7 in all, 700 MB on disk (at most 1000 MB)"
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn a_seventh_integration_binary_fails_and_says_why() {
    let out = run_check(7, 1_000);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("7 integration-test binaries, more than 6: put new tests in a harness"),
        "{stderr}"
    );
}

#[test]
fn over_a_gigabyte_fails_and_says_why() {
    let out = run_check(2, 400_000_000);
    assert_eq!(out.status.code(), Some(1));
    assert!(last_line(&out).contains("1200 MB on disk"), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1200000000 bytes on disk, more than 1000000000"),
        "{stderr}"
    );
}
