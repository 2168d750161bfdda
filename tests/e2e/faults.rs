//! Faults between txpace and a real `solana-test-validator`, each in the middle of 1,500
//! transactions at 100 tx/s: the RPC and websocket cut for 10 s (a loopback TCP proxy), the QUIC
//! path cut for 10 s (a loopback UDP proxy with `--tpu`), the validator frozen for 10 s
//! (SIGSTOP/SIGCONT), and the validator killed and restarted on its ledger. In each, txpace keeps
//! going, says what is wrong, and ends with every transaction confirmed or expired exactly as the
//! chain says, with an exit code that tells which; after the freeze it says it is catching up.
//!
//! One validator (keeping its ledger, for the restart) serves every scenario in turn: several
//! validators on a 2-core machine would measure the machine. The restart goes last because it is
//! the most disruptive.

use crate::common::scenarios::Scenarios;
use crate::{machine, support};

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use solana_commitment_config::CommitmentConfig;
use txpace::cli::InputFormat;

use serde_json::Value;
use support::{
    Finished, Running, assert_report_agrees_with_chain, generate, log_file_of,
    proxy::{TcpProxy, UdpProxy},
    read_report, send_command, socket_of, start_validator,
};
use txpace::validator::{LocalValidator, ValidatorOptions};

const N: usize = 1_500;
const FAULT_AT: Duration = Duration::from_secs(5);
const FAULT_FOR: Duration = Duration::from_secs(10);
/// Every scenario must be over by then; a hang is a failure, not a stuck test.
const RUN_LIMIT: Duration = Duration::from_secs(300);

#[test]
fn sends_survive_rpc_websocket_and_quic_cuts_a_frozen_and_a_restarted_validator() {
    let _machine = machine::whole();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut v = start_validator(ValidatorOptions::default().ledger(dir.path().join("ledger")));
    eprintln!("validator up in {:.1} s", v.startup_time().as_secs_f64());
    let mut scenarios = Scenarios::new();
    scenarios.run("RPC and websocket cut", || {
        rpc_and_websocket_cut(&v, &dir.path().join("rpc"))
    });
    scenarios.run("QUIC cut", || quic_cut(&v, &dir.path().join("quic")));
    scenarios.run("validator frozen", || {
        validator_frozen(&mut v, &dir.path().join("freeze"))
    });
    scenarios.run("validator restarted", || {
        validator_restarted(&mut v, &dir.path().join("restart"))
    });
    scenarios.finish();
}

/// Generates the scenario's batch and starts sending it at the default 100 tx/s.
fn start(v: &LocalValidator, dir: &Path, url: &str, ws: &str, extra: &[&str]) -> (Running, Batch) {
    std::fs::create_dir_all(dir).expect("scenario dir");
    let file = generate(v, dir, "batch.b64", N);
    let report = dir.join("report.json");
    let mut args = vec!["--report", report.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    let running = Running::spawn(send_command(dir, url, ws, &file, &args), dir, "send");
    (running, Batch { file, report })
}

/// A scenario's input and report.
struct Batch {
    file: PathBuf,
    report: PathBuf,
}

/// Common checks of a finished scenario; returns the report.
fn finish(name: &str, v: &LocalValidator, done: &Finished, batch: &Batch) -> Value {
    let report = read_report(&batch.report);
    let s = &report["summary"];
    eprintln!(
        "{name}: exit {} in {:.1} s; {} confirmed, {} expired, {} failed; sends {} ({} per landed), send errors {}",
        done.code,
        done.took.as_secs_f64(),
        s["confirmed"],
        s["expired"],
        s["failed"],
        s["sends"],
        s["sends_per_landed"],
        s["send_errors"],
    );
    assert!(!done.stderr.contains("panicked"), "{name}: {}", done.stderr);
    let (confirmed, failed, expired) = assert_report_agrees_with_chain(&v.rpc_client(), &report, N);
    if expired > 0 {
        // "Expired" is final: the chain must agree that these can no longer land.
        let loaded = txpace::source::load(std::slice::from_ref(&batch.file), InputFormat::Auto)
            .expect("the batch loads");
        let hash = loaded.valid[0].recent_blockhash;
        let valid = v
            .rpc_client()
            .is_blockhash_valid(&hash, CommitmentConfig::processed())
            .expect("isBlockhashValid");
        assert!(
            !valid,
            "{name}: {expired} reported expired, but their blockhash {hash} is still valid"
        );
    }
    let want = if failed + expired == 0 { 0 } else { 1 };
    assert_eq!(
        done.code, want,
        "{name}: exit code for {confirmed} confirmed, {failed} failed, {expired} expired\n{}\n{}",
        done.stdout, done.stderr
    );
    report
}

fn log_text(done: &Finished) -> String {
    log_file_of(&done.stdout)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// RPC and websocket through TCP proxies, both cut for 10 s: the engine says "RPC unreachable"
/// (warning and progress line), falls back from the websocket to polling, reconnects, and every
/// transaction lands.
fn rpc_and_websocket_cut(v: &LocalValidator, dir: &Path) {
    let rpc = TcpProxy::start(socket_of(&v.rpc_url()));
    let ws = TcpProxy::start(socket_of(&v.ws_url()));
    let (running, batch) = start(v, dir, &rpc.http_url(), &ws.ws_url(), &[]);
    running.sleep_until(FAULT_AT);
    rpc.cut();
    ws.cut();
    running.sleep_until(FAULT_AT + FAULT_FOR);
    let during = running.stderr_now();
    rpc.restore();
    ws.restore();
    let done = running.wait(RUN_LIMIT);
    let report = finish("rpc+websocket cut", v, &done, &batch);
    assert_eq!(report["summary"]["confirmed"], N as u64, "{}", done.stderr);
    assert!(
        rpc.counts().1 > 0,
        "no RPC call met the cut: {:?}",
        rpc.counts()
    );
    // Said while it happened: a warning and the progress lines.
    assert!(during.contains("warn: RPC unreachable ("), "{during}");
    assert!(during.contains("retrying every 0.4 s"), "{during}");
    assert!(
        during
            .lines()
            .any(|l| l.starts_with('[') && l.contains("| RPC unreachable (")),
        "no progress line shows the outage:\n{during}"
    );
    let ws_shown = format!("websocket ws://{}/", ws.addr());
    // "dropped: WHY; polling …": the reason (closed, silent, refused) sits between.
    assert!(
        during
            .lines()
            .any(|l| l.starts_with(&format!("warn: {ws_shown} dropped"))
                && l.ends_with("; polling getSlot, reconnecting in 2 s")),
        "{during}"
    );
    let log = log_text(&done);
    assert!(log.contains("RPC reachable again"), "{log}");
    assert!(log.contains(&format!("{ws_shown} reconnected")), "{log}");
}

/// QUIC to the pinned TPU address through a UDP proxy that drops everything for 10 s and then
/// carries the client's packets from a new address: sends fail or time out, the address is
/// backed off, the connection is re-established, and every transaction lands.
fn quic_cut(v: &LocalValidator, dir: &Path) {
    let quic = UdpProxy::start(v.tpu_quic());
    let tpu = quic.addr().to_string();
    let (running, batch) = start(v, dir, &v.rpc_url(), &v.ws_url(), &["--tpu", &tpu]);
    running.sleep_until(FAULT_AT);
    quic.cut();
    running.sleep_until(FAULT_AT + FAULT_FOR);
    quic.restore();
    let done = running.wait(RUN_LIMIT);
    let report = finish("quic cut", v, &done, &batch);
    assert_eq!(report["summary"]["confirmed"], N as u64, "{}", done.stderr);
    let (forwarded, dropped) = quic.counts();
    assert!(
        forwarded > 0 && dropped > 0,
        "{forwarded} forwarded, {dropped} dropped"
    );
    assert!(
        report["summary"]["send_errors"].as_u64().unwrap_or(0) > 0,
        "the cut went unnoticed: {:#}",
        report["summary"]
    );
}

/// The validator stopped with SIGSTOP for 10 s: RPC calls time out ("RPC unreachable"), QUIC
/// sends time out, and after SIGCONT everything lands: exit 0.
fn validator_frozen(v: &mut LocalValidator, dir: &Path) {
    let (running, batch) = start(v, dir, &v.rpc_url(), &v.ws_url(), &[]);
    running.sleep_until(FAULT_AT);
    v.pause().expect("SIGSTOP");
    running.sleep_until(FAULT_AT + FAULT_FOR);
    v.resume().expect("SIGCONT");
    let done = running.wait(RUN_LIMIT);
    let report = finish("validator frozen", v, &done, &batch);
    assert_eq!(done.code, 0);
    assert_eq!(report["summary"]["confirmed"], N as u64, "{}", done.stderr);
    assert!(
        done.stderr.contains("warn: RPC unreachable ("),
        "{}",
        done.stderr
    );
    // The sends the freeze held back are made up above the pace once the validator is back.
    assert!(done.stderr.contains(" (catching up "), "{}", done.stderr);
}

/// The validator killed and started again on its ledger. Transactions whose blockhash outlives
/// the outage land after the restart; any that cannot are reported expired, and the report
/// agrees with the chain either way (checked in `finish`, with the exit code).
fn validator_restarted(v: &mut LocalValidator, dir: &Path) {
    let (running, batch) = start(v, dir, &v.rpc_url(), &v.ws_url(), &[]);
    running.sleep_until(FAULT_AT);
    let down = Instant::now();
    v.restart().expect("restarting the validator on its ledger");
    eprintln!(
        "validator restarted: down for {:.1} s",
        down.elapsed().as_secs_f64()
    );
    let done = running.wait(RUN_LIMIT);
    finish("validator restarted", v, &done, &batch);
    assert!(
        done.stderr.contains("warn: RPC unreachable ("),
        "{}",
        done.stderr
    );
}
