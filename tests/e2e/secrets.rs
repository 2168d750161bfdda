//! No output of txpace quotes an endpoint's API key, whether the key is a path segment or a
//! query parameter: every subcommand that takes a URL, headless and on the dashboard, when it
//! works (the keyed URL reaches a real validator, which serves RPC and pubsub on any path) and
//! when it fails (the keyed URL is refused), with `RUST_LOG=debug` so other crates' records,
//! which quote URLs, are in the logs too. Checked: stdout, stderr, the terminal, and every file
//! the run wrote (log, journal, report). `deploy` is covered in `deploy.rs`, which has the
//! programs.
//!
//! One validator serves every scenario, one after another.

use crate::common::scenarios::Scenarios;
use crate::{common, machine};

use std::{
    path::Path,
    process::Output,
    time::{Duration, Instant},
};

use common::{
    generate,
    pty::{Terminal, txpace_in_terminal},
    run_expect,
    secrets::{assert_no_key, assert_no_key_anywhere, assert_private, keyed, refused_addr, shown},
    start_validator, txpace,
};
use txpace::validator::{LocalValidator, ValidatorOptions};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show(out: &Output) -> String {
    format!(
        "{}\n--- stdout:\n{}\n--- stderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The log file a run named on its last lines ("log: PATH").
fn log_file_of(stdout: &str) -> Option<std::path::PathBuf> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("log: "))
        .map(std::path::PathBuf::from)
}

#[test]
fn no_subcommand_ever_shows_an_api_key() {
    let _machine = machine::share();
    let v = start_validator(ValidatorOptions::default());
    let refused = format!("http://{}", refused_addr());
    let mut scenarios = Scenarios::new();
    scenarios.run("gen", || gen_with_a_keyed_url(&v, &refused));
    scenarios.run("inspect", || inspect_with_a_keyed_url(&v));
    scenarios.run("send headless", || {
        send_headless_with_a_keyed_url(&v, &refused)
    });
    scenarios.run("send on the dashboard", || {
        send_on_the_dashboard_with_a_keyed_url(&v, &refused)
    });
    scenarios.finish();
}

/// `gen` reads balances and a blockhash through the keyed URL; refused, its error quotes the
/// URL only redacted.
fn gen_with_a_keyed_url(v: &LocalValidator, refused: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_file = dir.path().join("g.b64");
    let ok = run_expect(
        txpace(dir.path())
            .env("RUST_LOG", "debug")
            .env("XDG_DATA_HOME", dir.path())
            .args([
                "gen",
                "-n",
                "20",
                "--url",
                &keyed(&v.rpc_url()),
                "--keypair",
            ])
            .arg(v.mint_keypair_path())
            .arg("--out")
            .arg(&out_file),
        0,
    );
    assert!(
        text(&ok.stdout).contains("wrote 20 transactions"),
        "{}",
        show(&ok)
    );
    assert_no_key_anywhere(&text(&ok.stdout), &text(&ok.stderr), dir.path());

    let failed = txpace(dir.path())
        .env("RUST_LOG", "debug")
        .env("XDG_DATA_HOME", dir.path())
        .args(["gen", "-n", "20", "--url", &keyed(refused), "--keypair"])
        .arg(v.mint_keypair_path())
        .arg("--out")
        .arg(dir.path().join("never.b64"))
        .output()
        .expect("running txpace gen");
    let stderr = text(&failed.stderr);
    assert_ne!(failed.status.code(), Some(0), "{}", show(&failed));
    // The client's error quoted the URL, and it was redacted.
    assert!(
        stderr.contains(&format!(
            "error sending request for url ({})",
            shown(refused)
        )),
        "{}",
        show(&failed)
    );
    assert_no_key_anywhere(&text(&failed.stdout), &stderr, dir.path());
}

/// `inspect` reads no URL, but takes the global `--url` like every subcommand: it must not echo
/// it, valid input or not.
fn inspect_with_a_keyed_url(v: &LocalValidator) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = generate(v, dir.path(), "i.b64", 3);
    let bad = dir.path().join("bad.b64");
    std::fs::write(&bad, "not base64 at all\n").expect("writing");
    for (input, code) in [(&file, 0), (&bad, 2)] {
        let out = run_expect(
            txpace(dir.path())
                .env("RUST_LOG", "debug")
                .args(["--url", &keyed(&v.rpc_url()), "inspect"])
                .arg(input),
            code,
        );
        assert_no_key("inspect stdout", &text(&out.stdout));
        assert_no_key("inspect stderr", &text(&out.stderr));
    }
}

/// `send --no-tui`: through the keyed URL (the websocket derived from it, path and query
/// included) it lands everything; against a refused one it reports the failure, redacted, until
/// stopped.
fn send_headless_with_a_keyed_url(v: &LocalValidator, refused: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = generate(v, dir.path(), "h.b64", 40);
    let report = dir.path().join("report.json");
    let out = run_expect(
        txpace(dir.path())
            .env("RUST_LOG", "debug")
            .env("XDG_DATA_HOME", dir.path())
            .args([
                "send",
                "--no-tui",
                "--rate",
                "50",
                "--url",
                &keyed(&v.rpc_url()),
            ])
            .arg("--report")
            .arg(&report)
            .arg(&file),
        0,
    );
    let stdout = text(&out.stdout);
    let log = log_file_of(&stdout).expect("a log file");
    let log_text = std::fs::read_to_string(&log).expect("log");
    assert!(
        log_text.contains(&format!("transactions to {} as", shown(&v.rpc_url()))),
        "the log names the endpoint, redacted:\n{log_text}"
    );
    assert!(
        log_text.contains("DEBUG reqwest") || log_text.contains("DEBUG hyper"),
        "RUST_LOG=debug raised the HTTP client's records"
    );
    let report_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
    assert_eq!(report_json["summary"]["confirmed"], 40, "{report_json:#}");
    assert_eq!(report_json["summary"]["rpc_url"], shown(&v.rpc_url()));
    let files = assert_no_key_anywhere(&stdout, &text(&out.stderr), dir.path());
    assert!(
        files
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "jnl"))
    );
    assert_private(&files);

    // Refused before anything is sent: preflight's RPC error names the endpoint, redacted,
    // and the run ends as a runtime error.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = generate(v, dir.path(), "p.b64", 5);
    let out = run_expect(
        txpace(dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .args(["send", "--no-tui", "--url", &keyed(refused)])
            .arg(&file),
        3,
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("preflight") && stderr.contains(&shown(refused)),
        "preflight's error names the endpoint redacted:\n{}",
        show(&out)
    );
    assert_no_key_anywhere(&text(&out.stdout), &stderr, dir.path());

    // Refused while running: the engine's RPC and websocket errors are reported, redacted,
    // until SIGTERM ends the run.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = generate(v, dir.path(), "r.b64", 5);
    let report = dir.path().join("report.json");
    let child = txpace(dir.path())
        .env("RUST_LOG", "debug")
        .env("XDG_DATA_HOME", dir.path())
        .args([
            "send",
            "--no-tui",
            "--no-preflight",
            "--url",
            &keyed(refused),
        ])
        .arg("--report")
        .arg(&report)
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawning txpace send");
    std::thread::sleep(Duration::from_secs(6));
    let term = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(term.success());
    let out = child.wait_with_output().expect("waiting for txpace send");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&shown(refused)),
        "the RPC error path ran and named the endpoint redacted:\n{}",
        show(&out)
    );
    let files = assert_no_key_anywhere(&text(&out.stdout), &stderr, dir.path());
    assert_private(&files);
}

/// The dashboard, through the keyed URL with an explicit keyed `--ws`: the header names the
/// endpoint redacted and the run lands; refused, the log pane reports it redacted. Nothing on
/// the terminal, in the log or in the report holds a key.
fn send_on_the_dashboard_with_a_keyed_url(v: &LocalValidator, refused: &str) {
    for (rpc, ws, lands) in [
        (v.rpc_url(), v.ws_url(), true),
        (refused.to_string(), refused.replace("http", "ws"), false),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = generate(v, dir.path(), "d.b64", 30);
        let report = dir.path().join("report.json");
        let (rpc_arg, ws_arg) = (keyed(&rpc), keyed(&ws));
        // The engine's own error reporting is under test: preflight would stop a refused run
        // before the dashboard opens.
        let args = [
            "send",
            "--no-preflight",
            "--rate",
            "50",
            "--url",
            &rpc_arg,
            "--ws",
            &ws_arg,
            "--report",
            report.to_str().expect("utf-8"),
            file.to_str().expect("utf-8"),
        ];
        let mut cmd = txpace_in_terminal(dir.path(), &args);
        cmd.env("RUST_LOG", "debug");
        let mut term = Terminal::spawn(cmd);
        let header = format!("cluster {}", shown(&rpc));
        if lands {
            term.wait_for("all confirmed", Duration::from_secs(90), |t| {
                t.contains(&header) && t.contains("Confirmed 30")
            });
        } else {
            let started = Instant::now();
            term.wait_for(
                "the RPC error in the log pane",
                Duration::from_secs(30),
                |t| t.contains(&header) && t.contains("unreachable"),
            );
            assert!(started.elapsed() < Duration::from_secs(30));
        }
        // q, and y for the question it asks while transactions are unfinished (with all of
        // them landed it quits at once and the y is never read).
        term.keys(b"qy");
        term.wait_exit(Duration::from_secs(15));
        std::thread::sleep(Duration::from_millis(300));
        let screen = text(&term.raw());
        assert_no_key("the terminal", &screen);
        let files = assert_no_key_anywhere("", "", dir.path());
        assert!(
            files
                .iter()
                .any(|f| f.extension().is_some_and(|e| e == "log"))
        );
        assert!(files.contains(&report), "{files:?}");
        assert_private(&files);
        assert_logs_were_verbose(dir.path());
    }
}

/// `RUST_LOG=debug` reached the dashboard's logger too: the log holds debug records.
fn assert_logs_were_verbose(dir: &Path) {
    let logs: Vec<_> = common::secrets::files_under(dir)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "log"))
        .collect();
    let all: String = logs
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect();
    assert!(all.contains(" DEBUG "), "no debug record in {logs:?}");
}
