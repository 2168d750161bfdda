//! A test that needs a process to itself (it installs the process's one logger, sets an
//! environment variable, or is the program inside a pseudo-terminal) runs its body in a fresh
//! copy of its test binary that runs only that test. The test binary holds many tests that run
//! side by side on threads; process-wide state set by one would reach the others.
//!
//! The copy is told apart from the test that started it by [`ROLE`], which names the test: the
//! same test function runs in both, the parent starting the child and judging its exit status,
//! the child doing the work. The parent alone is counted by `cargo test`.

use std::process::Command;

/// Set, to the test's name, in the copy of the test binary that runs that test's body.
pub const ROLE: &str = "TXPACE_TEST_OWN_PROCESS";

/// The running test's full name (`module::test`), the name `--exact` takes. libtest runs every
/// test on a thread named after it.
pub fn this_test() -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        other => panic!(
            "own_process needs libtest's test thread, which is named after its test; this \
             thread is named {other:?}"
        ),
    }
}

/// Whether this process is the copy that runs the current test's body.
pub fn is_child() -> bool {
    std::env::var_os(ROLE).is_some_and(|role| role == this_test().as_str())
}

/// This test binary running only the current test, with output shown and [`ROLE`] set.
pub fn command() -> Command {
    let name = this_test();
    let exe = std::env::current_exe().expect("the path of the running test binary");
    let mut cmd = Command::new(exe);
    cmd.args([&name, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, &name);
    cmd
}

/// Runs `body` in a copy of this test binary that runs only the current test, with `env` set
/// (a `None` value removes the variable), and fails unless the copy's test passes. In that copy,
/// runs `body`.
pub fn run(env: &[(&str, Option<&str>)], body: impl FnOnce()) {
    if is_child() {
        body();
        return;
    }
    // A copy started for another test never starts copies of its own.
    if let Some(role) = std::env::var_os(ROLE) {
        panic!(
            "this copy was started for {role:?}, yet runs {}",
            this_test()
        );
    }
    let mut cmd = command();
    for (key, value) in env {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the test failed in its own process ({}):\n--- stdout:\n{}\n--- stderr:\n{}",
        out.status,
        quoted(&stdout),
        quoted(&stderr)
    );
    // The copy ran the test, not zero tests (a name libtest did not match).
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the copy did not run the test:\n{}",
        quoted(&stdout)
    );
}

/// `text` with every line indented, so that the copy's own `test result:` line, shown in a
/// failure, is not taken for this binary's by scripts/cargo-test-summary.sh.
pub fn quoted(text: &str) -> String {
    text.lines().map(|l| format!("  | {l}\n")).collect()
}
