//! A `txpace send` killed with SIGKILL in the middle of a batch, then resumed from its journal,
//! on a real `solana-test-validator`; one stopped with SIGTERM, its journal closed cleanly; and
//! API keys in RPC/websocket URLs kept out of every file and stream txpace writes.
//!
//! One validator serves all three scenarios, one after the other (a 2-core machine running two
//! validators would measure the machine).

use crate::common::scenarios::Scenarios;
use crate::support;
use crate::{common, machine};

use std::{
    collections::HashSet,
    os::unix::fs::PermissionsExt,
    path::Path,
    time::{Duration, Instant},
};

use support::{
    Running, assert_report_agrees_with_chain, files_under, generate, log_file_of, proxy::TcpProxy,
    read_report, send_command, socket_of, start_validator,
};
use txpace::{
    engine::{Prior, TxFact},
    journal::{self, Record},
    validator::{LocalValidator, ValidatorOptions},
};

const N: usize = 3_000;
const RATE: f64 = 100.0;
const KILL_AT: Duration = Duration::from_secs(12);
/// Startup (loading and verifying 3,000 transactions in a debug build, the first slot and QUIC
/// handshake), the on-chain check of the transactions journaled as sent, and the last
/// confirmations: what a resumed run needs besides sending what was never sent.
const RESUME_SLACK: Duration = Duration::from_secs(8);

#[test]
fn killed_and_interrupted_sends_resume_from_the_journal_and_secrets_never_reach_an_output() {
    let _machine = machine::whole();
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let mut scenarios = Scenarios::new();
    scenarios.run("kill -9 and resume", || kill_and_resume(&v, dir.path()));
    scenarios.run("SIGTERM", || {
        sigterm_stops_cleanly_with_the_journal_closed(&v, &dir.path().join("sigterm"))
    });
    scenarios.run("secrets", || {
        secrets_stay_out_of_every_output(&v, &dir.path().join("secrets"))
    });
    scenarios.finish();
}

/// SIGTERM (as Ctrl-C) stops a headless run: exit 130, the journal flushed and closed, and
/// `--resume` finishes the batch.
fn sigterm_stops_cleanly_with_the_journal_closed(v: &LocalValidator, dir: &Path) {
    std::fs::create_dir_all(dir).expect("dir");
    let file = generate(v, dir, "batch.b64", 400);
    let journal = dir.join("run.jnl");
    let j = journal.to_str().expect("utf-8 path");
    let args = ["--journal", j, "--rate", "50"];
    let running = Running::spawn(
        send_command(dir, &v.rpc_url(), &v.ws_url(), &file, &args),
        dir,
        "term",
    );
    running.sleep_until(Duration::from_secs(4));
    let status = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(running.pid().to_string())
        .status()
        .expect("kill -TERM");
    assert!(status.success());
    let stopped = running.wait(Duration::from_secs(30));
    assert_eq!(stopped.code, 130, "{}", stopped.stderr);
    assert!(
        stopped.stdout.contains(&format!("journal: {j}")),
        "{}",
        stopped.stdout
    );
    let r = journal::read(&journal).expect("journal");
    let (confirmed, failed, expired, sent) = r.tally();
    assert_eq!((r.sessions, r.closed, r.torn), (1, true, None));
    assert!(
        confirmed > 0 && confirmed + sent < 400 && failed + expired == 0,
        "{:?}",
        r.tally()
    );

    let mut resume = args.to_vec();
    resume.push("--resume");
    let done = Running::spawn(
        send_command(dir, &v.rpc_url(), &v.ws_url(), &file, &resume),
        dir,
        "term-resumed",
    )
    .wait(Duration::from_secs(120));
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(
        done.stderr
            .contains(&format!("resuming {j} (session 2): {confirmed} confirmed")),
        "{}",
        done.stderr
    );
    let r = journal::read(&journal).expect("journal");
    assert_eq!((r.sessions, r.closed, r.tally()), (2, true, (400, 0, 0, 0)));
}

/// The bar: `kill -9` 12 s into 3,000 transactions at 100 tx/s, then `--resume`: all
/// land, nothing journaled as final is sent again, and the resumed run takes what the remaining
/// work needs, not a fresh start.
///
/// All 3,000 are signed on one blockhash, valid for 150 blocks (about 60 s at 400 ms slots).
/// The budget: 12 s until the kill, about 2 s to restart, about 19 s for the ~1,900 never sent,
/// plus a few seconds of confirmation: about 35 s from signing to the last landing, well inside
/// the lifetime. (`gen` is run right before the first send for that reason; splitting the batch
/// into two files would not help, since both must exist before the first run.)
fn kill_and_resume(v: &LocalValidator, dir: &Path) {
    let file = generate(v, dir, "three-thousand.b64", N);
    let signed = Instant::now();
    let journal = dir.join("run.jnl");
    let j = journal.to_str().expect("utf-8 path");

    let first = Running::spawn(
        send_command(dir, &v.rpc_url(), &v.ws_url(), &file, &["--journal", j]),
        dir,
        "first",
    );
    first.sleep_until(KILL_AT);
    let killed = first.kill9();
    assert_eq!(killed.code, -1, "killed by a signal: {}", killed.stderr);

    let before = journal::read(&journal).expect("the killed run's journal reads");
    assert_eq!((before.sessions, before.closed), (1, false));
    let (confirmed, failed, expired, sent) = before.tally();
    let never = N - confirmed - failed - expired - sent;
    eprintln!(
        "killed at {:.1} s: journal has {confirmed} confirmed, {failed} failed, {expired} expired, \
         {sent} sent without outcome, {never} never sent ({} bytes, {} torn)",
        killed.took.as_secs_f64(),
        before.good_len,
        before.torn.map_or(0, |t| t.0),
    );
    assert_eq!((failed, expired), (0, 0));
    assert!(
        confirmed >= 300 && never >= 1_000,
        "the kill did not land mid-run: {confirmed} confirmed, {never} never sent"
    );

    // Without --resume the journal is refused, and left as it was.
    let len = std::fs::metadata(&journal).expect("journal").len();
    let refused = common::run_expect(
        &mut send_command(dir, &v.rpc_url(), &v.ws_url(), &file, &["--journal", j]),
        2,
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "error: journal {j} exists: it records an earlier run of these transactions \
             ({confirmed} confirmed, 0 failed, 0 expired, {sent} sent without an outcome); \
             pass --resume to continue it, or --journal PATH to start another"
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::metadata(&journal).expect("journal").len(), len);

    let report_path = dir.join("resumed.json");
    let r = report_path.to_str().expect("utf-8 path");
    let resumed = Running::spawn(
        send_command(
            dir,
            &v.rpc_url(),
            &v.ws_url(),
            &file,
            &["--journal", j, "--resume", "--report", r],
        ),
        dir,
        "resumed",
    )
    .wait(Duration::from_secs(240));
    eprintln!(
        "resumed run: exit {} in {:.1} s ({:.1} s after signing)\n{}",
        resumed.code,
        resumed.took.as_secs_f64(),
        signed.elapsed().as_secs_f64(),
        resumed.stdout
    );
    assert_eq!(resumed.code, 0, "{}\n{}", resumed.stdout, resumed.stderr);
    assert!(
        resumed.stderr.contains(&format!(
            "resuming {j} (session 2, the last one was interrupted): {confirmed} confirmed, \
             0 failed, 0 expired before; {sent} sent without an outcome (looked up on chain \
             before any resend); {never} never sent"
        )),
        "{}",
        resumed.stderr
    );
    assert!(!resumed.stderr.contains("panicked"), "{}", resumed.stderr);

    // The report covers all 3,000, and the chain agrees with every status.
    let report = read_report(&report_path);
    assert_eq!(report["summary"]["total"], N as u64);
    assert_eq!(
        assert_report_agrees_with_chain(&v.rpc_client(), &report, N),
        (N, 0, 0)
    );

    // Nothing the journal had as final was sent again; what was never sent was sent.
    let records = journal::read_records(&journal).expect("records");
    let split = records
        .iter()
        .position(|r| matches!(r, Record::Session { .. }))
        .expect("a second session");
    let sent_after: HashSet<u32> = records[split..]
        .iter()
        .filter_map(|r| match r {
            Record::Fact(TxFact::Sent { id, .. }) => Some(*id),
            _ => None,
        })
        .collect();
    let was_final: HashSet<u32> = before
        .priors
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Some(Prior::Confirmed { .. })))
        .map(|(id, _)| id as u32)
        .collect();
    assert!(
        sent_after.is_disjoint(&was_final),
        "sent again after landing: {:?}",
        sent_after
            .intersection(&was_final)
            .take(10)
            .collect::<Vec<_>>()
    );
    let never_ids: HashSet<u32> = before
        .priors
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_none())
        .map(|(id, _)| id as u32)
        .collect();
    assert!(never_ids.is_subset(&sent_after));
    let resent = sent_after.len() - never_ids.len();
    eprintln!(
        "resumed run sent {} transactions: {} never sent before, {resent} journaled as sent",
        sent_after.len(),
        never_ids.len()
    );
    let after = journal::read(&journal).expect("journal after the resumed run");
    assert_eq!((after.sessions, after.closed, after.torn), (2, true, None));
    assert_eq!(after.tally(), (N, 0, 0, 0));

    // It did not start over: it took what the never-sent ones need at the pace, plus slack.
    let bound = Duration::from_secs_f64(never as f64 / RATE) + RESUME_SLACK;
    assert!(
        resumed.took <= bound,
        "the resumed run took {:.1} s for {never} never-sent transactions at {RATE} tx/s (bound {:.1} s)",
        resumed.took.as_secs_f64(),
        bound.as_secs_f64()
    );
}

/// RPC and websocket URLs with user-info and an API key, through proxies that are cut for a few
/// seconds so the error paths (which quote URLs) run too: the secret appears in no output, no
/// log, no report and no journal, and those files are readable by the owner only.
fn secrets_stay_out_of_every_output(v: &LocalValidator, dir: &Path) {
    std::fs::create_dir_all(dir).expect("dir");
    let rpc = TcpProxy::start(socket_of(&v.rpc_url()));
    let ws = TcpProxy::start(socket_of(&v.ws_url()));
    let url = format!(
        "http://alice:PASSWORD-SECRET@{}/?api-key=KEY-SECRET",
        rpc.addr()
    );
    let ws_url = format!(
        "ws://alice:PASSWORD-SECRET@{}/?api-key=KEY-SECRET",
        ws.addr()
    );
    let file = generate(v, dir, "secret.b64", 300);
    let report = dir.join("report.json");
    let journal = dir.join("run.jnl");
    let running = Running::spawn(
        send_command(
            dir,
            &url,
            &ws_url,
            &file,
            &[
                "--rate",
                "50",
                "--report",
                report.to_str().expect("utf-8"),
                "--journal",
                journal.to_str().expect("utf-8"),
            ],
        ),
        dir,
        "secret",
    );
    running.sleep_until(Duration::from_secs(2));
    rpc.cut();
    ws.cut();
    running.sleep_until(Duration::from_secs(7));
    rpc.restore();
    ws.restore();
    let done = running.wait(Duration::from_secs(120));
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    read_report(&report);
    assert!(done.stderr.contains("RPC unreachable ("), "{}", done.stderr);
    // The error paths ran, and quoted the URLs redacted.
    let rpc_shown = format!("http://***@{}/?***", rpc.addr());
    let ws_shown = format!("ws://***@{}/?***", ws.addr());
    assert!(
        done.stderr.contains(&format!(
            "error sending request for url ({rpc_shown})), retrying every 0.4 s"
        )),
        "{}",
        done.stderr
    );
    // "dropped: WHY; polling …": the reason (closed, silent, refused) sits between.
    assert!(
        done.stderr.lines().any(
            |l| l.starts_with(&format!("warn: websocket {ws_shown} dropped"))
                && l.ends_with("; polling getSlot, reconnecting in 2 s")
        ),
        "{}",
        done.stderr
    );
    assert!(
        rpc.counts().0 > 0 && ws.counts().0 > 0,
        "both proxies carried traffic: {:?} {:?}",
        rpc.counts(),
        ws.counts()
    );
    // The URL is shown, redacted.
    let log = log_file_of(&done.stdout).expect("a log file");
    let log_text = std::fs::read_to_string(&log).expect("log");
    assert!(
        log_text.contains(&format!("transactions to {rpc_shown} as")),
        "{log_text}"
    );

    assert!(log.starts_with(dir), "{}", log.display());
    let files = files_under(dir);
    assert!(files.contains(&journal) && files.contains(&report) && files.contains(&log));
    for f in &files {
        let bytes = std::fs::read(f).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["SECRET", "alice"] {
            assert!(
                !text.contains(secret),
                "{secret} in {}:\n{}",
                f.display(),
                text.lines()
                    .filter(|l| l.contains(secret))
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
    for f in [&journal, &report, &log] {
        let mode = std::fs::metadata(f).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
}
