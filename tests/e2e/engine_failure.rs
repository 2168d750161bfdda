//! An engine that cannot go on, seen from outside: the real `txpace send` pointed at an RPC that
//! never answers (a closed loopback port). Headless and on the dashboard alike, after the
//! 20 s the engine gives a new endpoint it fails the run: the reason is shown (the dashboard's
//! ENGINE FAILED banner, stderr), the terminal is handed back, the report is written with
//! outcome `failed` and the engine's reason, and txpace exits 3 (runtime error).
//!
//! No validator is needed: nothing could reach one. The transactions are real signed
//! self-transfers, so the run gets past input validation.

use crate::{common, machine};

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use common::{
    pty::{Terminal, txpace_in_terminal},
    read_report, txpace,
};
use solana_hash::Hash;
use solana_keypair::Keypair;
use txpace::{
    cli::OutputFormat,
    exit,
    workload::{build_self_transfers, write_transactions},
};

/// What the engine says when its RPC never answered.
const REASON: &str = "has not answered in 20 s";

/// An RPC URL nothing listens on: a port the kernel just handed out, closed again.
fn dead_rpc() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    format!("http://127.0.0.1:{port}/")
}

fn signed_transfers(dir: &Path, n: usize) -> PathBuf {
    let payer = Keypair::new();
    let txs = build_self_transfers(&[payer], n, 1_000, 1_000, Hash::new_from_array([5; 32]))
        .expect("signing transfers");
    let path = dir.join("batch.b64");
    write_transactions(&path, &txs, OutputFormat::Base64).expect("writing the batch");
    path
}

fn assert_failed_report(path: &Path) {
    let report = read_report(path);
    assert_eq!(report["summary"]["outcome"], "failed", "{report:#}");
    let error = report["summary"]["error"].as_str().unwrap_or_default();
    assert!(error.contains(REASON), "report error: {error:?}");
    assert_eq!(report["summary"]["confirmed"], 0);
}

fn headless(dir: &Path, file: &Path) {
    let report = dir.join("headless-report.json");
    let started = Instant::now();
    let out = txpace(dir)
        .env("XDG_DATA_HOME", dir)
        // Preflight would refuse the dead RPC up front: this is about the engine's own failure.
        .args([
            "send",
            "--no-tui",
            "--no-preflight",
            "--url",
            &dead_rpc(),
            "--report",
        ])
        .arg(&report)
        .arg(file)
        .output()
        .expect("running txpace send");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(i32::from(exit::RUNTIME)),
        "headless exit; stderr:\n{stderr}"
    );
    assert!(stderr.contains(REASON), "stderr:\n{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "took {:?}",
        started.elapsed()
    );
    assert_failed_report(&report);
}

fn dashboard(dir: &Path, file: &Path) {
    let report = dir.join("dashboard-report.json");
    let url = dead_rpc();
    let mut screen = Terminal::spawn(txpace_in_terminal(
        dir,
        &[
            "send",
            "--no-preflight",
            "--url",
            &url,
            "--report",
            report.to_str().expect("utf-8"),
            file.to_str().expect("utf-8"),
        ],
    ));
    let text = screen.wait_for("ENGINE FAILED", Duration::from_secs(45), |t| {
        t.contains("ENGINE FAILED")
    });
    assert!(
        text.contains(REASON),
        "the banner gives the reason:\n{text}"
    );
    screen.keys(b"q");
    let status = screen.wait_exit(Duration::from_secs(10));
    assert_eq!(
        status.exit_code(),
        u32::from(exit::RUNTIME),
        "dashboard exit {status:?}"
    );
    thread::sleep(Duration::from_millis(300));
    let raw = screen.raw();
    let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(4096)..]).to_string();
    assert!(tail.contains("\x1b[?1049l"), "alternate screen not left");
    assert!(tail.contains("\x1b[?25h"), "cursor not shown again");
    assert!(
        tail.contains(REASON),
        "the reason after the dashboard: {tail:?}"
    );
    assert_failed_report(&report);
}

/// Both modes at once: each waits out the same 20 s.
#[test]
fn an_rpc_that_never_answers_fails_the_run_visibly_in_both_modes() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = signed_transfers(dir.path(), 20);
    let (head_dir, dash_dir) = (dir.path().join("h"), dir.path().join("d"));
    for d in [&head_dir, &dash_dir] {
        std::fs::create_dir_all(d).expect("a directory per mode");
    }
    let f = file.clone();
    let headless_run = thread::spawn(move || headless(&head_dir, &f));
    dashboard(&dash_dir, &file);
    if let Err(panic) = headless_run.join() {
        std::panic::resume_unwind(panic);
    }
}
