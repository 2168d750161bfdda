//! A run interrupted by `kill -9` and resumed only after the validator's status cache has
//! forgotten its landings (about 300 slots, two minutes), on a real `solana-test-validator`:
//! `getSignatureStatuses` alone would now call those transactions unknown, and their blockhash
//! is long dead, so a monitor that trusted the cache would report them Expired although the
//! chain holds them. Every record of the resumed run's report must equal an independent
//! lookup with history.

use crate::{machine, support};

use std::time::{Duration, Instant};

use solana_signature::Signature;
use support::{
    Running, assert_report_agrees_with_chain, chain_statuses, generate, read_report, send_command,
    signatures_of, start_validator,
};
use txpace::{
    engine::Prior,
    journal,
    validator::{LocalValidator, ValidatorOptions},
};

const N: usize = 1_500;
/// The first run is killed once its journal holds this many confirmed transactions and some
/// sent without an outcome — a state, not a time, since a busy machine starts a run late.
const KILL_AFTER_CONFIRMED: usize = 300;
/// The bank's status cache keeps about 300 rooted slots; wait this many past the kill before
/// asking it whether it has forgotten the landings from before (and wait on, bounded, while it
/// has not: roots trail the tip further on a busy machine).
const FORGET_SLOTS: u64 = 330;

#[test]
fn a_resume_after_the_status_cache_forgot_reports_what_the_chain_holds() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let file = generate(&v, dir.path(), "batch.b64", N);
    let journal_path = dir.path().join("run.jnl");
    let j = journal_path.to_str().expect("utf-8 path");

    let first = Running::spawn(
        send_command(
            dir.path(),
            &v.rpc_url(),
            &v.ws_url(),
            &file,
            &["--journal", j],
        ),
        dir.path(),
        "first",
    );
    first.wait_for_journal(
        &journal_path,
        Duration::from_secs(120),
        |(confirmed, .., sent)| confirmed >= KILL_AFTER_CONFIRMED && sent > 0,
    );
    let killed = first.kill9();
    assert_eq!(killed.code, -1, "killed by a signal: {}", killed.stderr);

    let before = journal::read(&journal_path).expect("the killed run's journal reads");
    let (confirmed, failed, expired, sent) = before.tally();
    assert_eq!((failed, expired), (0, 0));
    assert!(confirmed > 0 && sent > 0, "{:?}", before.tally());
    let sent_ids: Vec<usize> = before
        .priors
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Some(Prior::Sent { .. })))
        .map(|(i, _)| i)
        .collect();

    let rpc = v.rpc_client();
    let killed_at = rpc.get_slot().expect("getSlot");
    wait_for_slot(&v, killed_at + FORGET_SLOTS);

    // The trap is set: some transactions journaled as "sent, outcome unknown" did land, and
    // the status cache no longer knows them.
    let all_sigs = signatures_of(&file);
    let journaled_sent: Vec<Signature> = sent_ids.iter().map(|&i| all_sigs[i]).collect();
    let history = chain_statuses(&rpc, &journaled_sent);
    let landed_unknown: Vec<Signature> = journaled_sent
        .iter()
        .filter(|s| matches!(history.get(s), Some(Some(None))))
        .copied()
        .collect();
    assert!(
        !landed_unknown.is_empty(),
        "none of the {} journaled-as-sent transactions landed: the test proves nothing",
        journaled_sent.len()
    );
    // The cache forgets by rooted slots, which trail the tip further on a busy machine: wait
    // (bounded) until it no longer answers for them without a history search.
    let waiting = std::time::Instant::now();
    loop {
        let cache = rpc
            .get_signature_statuses(&landed_unknown[..landed_unknown.len().min(256)])
            .expect("getSignatureStatuses")
            .value;
        if cache.iter().all(Option::is_none) {
            break;
        }
        assert!(
            waiting.elapsed() < std::time::Duration::from_secs(180),
            "the status cache still remembers them {} s after {FORGET_SLOTS} slots",
            waiting.elapsed().as_secs()
        );
        std::thread::sleep(std::time::Duration::from_secs(2));
    }

    let report_path = dir.path().join("resumed.json");
    let r = report_path.to_str().expect("utf-8 path");
    let resumed = Running::spawn(
        send_command(
            dir.path(),
            &v.rpc_url(),
            &v.ws_url(),
            &file,
            &["--journal", j, "--resume", "--report", r],
        ),
        dir.path(),
        "resumed",
    )
    .wait(Duration::from_secs(180));
    eprintln!(
        "resumed {:.0} slots after the kill: exit {} in {:.1} s; {} journaled as sent, {} of them \
         landed but gone from the status cache\n{}",
        FORGET_SLOTS,
        resumed.code,
        resumed.took.as_secs_f64(),
        journaled_sent.len(),
        landed_unknown.len(),
        resumed.stdout
    );
    assert!(!resumed.stderr.contains("panicked"), "{}", resumed.stderr);
    // The never-sent ones' blockhash died during the wait: they expire, so the exit code is 1.
    assert_eq!(resumed.code, 1, "{}\n{}", resumed.stdout, resumed.stderr);

    let report = read_report(&report_path);
    let (landed, failed, expired) = assert_report_agrees_with_chain(&rpc, &report, N);
    assert_eq!(failed, 0);
    assert!(
        landed >= confirmed + landed_unknown.len(),
        "{landed} landed"
    );
    assert_eq!(landed + expired, N);
    let by_sig = report["transactions"].as_array().expect("transactions");
    for sig in &landed_unknown {
        let rec = by_sig
            .iter()
            .find(|t| t["signature"] == sig.to_string())
            .expect("in the report");
        assert_eq!(rec["status"], "finalized", "{rec:#}");
    }
}

fn wait_for_slot(v: &LocalValidator, slot: u64) {
    let rpc = v.rpc_client();
    let deadline = Instant::now() + Duration::from_secs(400);
    loop {
        let now = rpc.get_slot().expect("getSlot");
        if now >= slot {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the validator is at slot {now}, waiting for {slot}"
        );
        std::thread::sleep(Duration::from_secs(2));
    }
}
