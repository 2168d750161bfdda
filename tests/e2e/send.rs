//! `txpace send` end to end on a real `solana-test-validator`, through its real QUIC TPU.
//!
//! One validator serves every scenario in this file, one after another: several validators on a
//! 2-core machine would measure the machine, not txpace.

use crate::{common, machine};

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    process::Command,
    str::FromStr,
    time::{Duration, Instant},
};

use common::{generate, read_report, run_expect, send_command, start_validator, txpace};
use serde_json::Value;
use solana_signature::Signature;
use solana_signer::Signer;
use txpace::validator::{LocalValidator, ValidatorOptions};

fn send(v: &LocalValidator, dir: &Path, file: &Path, extra: &[&str]) -> (i32, Value, Duration) {
    let report = report_path(dir, file);
    let started = Instant::now();
    let out = send_file(v, dir, file)
        .args(extra)
        .output()
        .expect("running txpace send");
    let took = started.elapsed();
    let code = out.status.code().unwrap_or(-1);
    eprintln!(
        "txpace send {} {extra:?}: exit {code} in {:.1} s\n{}",
        file.display(),
        took.as_secs_f64(),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        report.exists(),
        "no report; stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = read_report(&report);
    (code, json, took)
}

/// Where [`send_file`] has the report of `file` written.
fn report_path(dir: &Path, file: &Path) -> PathBuf {
    dir.join(format!(
        "{}.report.json",
        file.file_name().and_then(|f| f.to_str()).unwrap_or("x")
    ))
}

/// `txpace send --no-tui FILE --report REPORT` on `v`, its data (logs, journal) under `dir`.
fn send_file(v: &LocalValidator, dir: &Path, file: &Path) -> Command {
    let mut cmd = send_command(v, dir);
    cmd.arg(file).arg("--report").arg(report_path(dir, file));
    cmd
}

/// Every transaction in the report is confirmed or finalized, and the chain agrees.
fn assert_all_landed(v: &LocalValidator, report: &Value, n: u64) {
    let s = &report["summary"];
    assert_eq!(s["total"], n, "{s:#}");
    assert_eq!(s["confirmed"], n, "{s:#}");
    assert_eq!(
        (s["failed"].as_u64(), s["expired"].as_u64()),
        (Some(0), Some(0))
    );
    let txs = report["transactions"].as_array().expect("transactions");
    assert_eq!(txs.len() as u64, n);
    let sigs: Vec<Signature> = txs
        .iter()
        .map(|t| Signature::from_str(t["signature"].as_str().unwrap_or("")).expect("signature"))
        .collect();
    let rpc = v.rpc_client();
    let mut chain: HashMap<Signature, bool> = HashMap::new();
    for chunk in sigs.chunks(256) {
        let statuses = rpc
            .get_signature_statuses(chunk)
            .expect("getSignatureStatuses");
        for (sig, st) in chunk.iter().zip(statuses.value) {
            chain.insert(*sig, st.is_some_and(|st| st.err.is_none()));
        }
    }
    for t in txs {
        let status = t["status"].as_str().unwrap_or("");
        assert!(
            status == "confirmed" || status == "finalized",
            "report says {status} for {t:#}"
        );
        assert!(t["sends"].as_u64().unwrap_or(0) >= 1);
        assert!(t["landed_slot"].as_u64().is_some(), "{t:#}");
        let sig = Signature::from_str(t["signature"].as_str().unwrap_or("")).expect("sig");
        assert_eq!(chain.get(&sig), Some(&true), "chain disagrees on {sig}");
    }
}

#[test]
fn send_lands_everything_through_quic_and_the_report_agrees_with_the_chain() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());

    // 500 at the default pace: all land, and the report matches getSignatureStatuses.
    let file = generate(&v, dir.path(), "five-hundred.b64", 500);
    let (code, report, _) = send(&v, dir.path(), &file, &[]);
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert_all_landed(&v, &report, 500);
    let per_landed = report["summary"]["sends_per_landed"]
        .as_f64()
        .unwrap_or(9.9);
    assert!(per_landed <= 1.1, "sends per landed {per_landed}");

    // The bar: 2,000 at 200 tx/s within 1.1 × N/rate + 5 s.
    let file = generate(&v, dir.path(), "two-thousand.b64", 2000);
    let (code, report, took) = send(&v, dir.path(), &file, &["--rate", "200"]);
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert_all_landed(&v, &report, 2000);
    let bound = 1.1 * 2000.0 / 200.0 + 5.0;
    assert!(
        took.as_secs_f64() <= bound,
        "2000 at 200 tx/s took {:.1} s > {bound} s",
        took.as_secs_f64()
    );

    // A staked identity (the validator's own) works.
    let file = generate(&v, dir.path(), "staked.b64", 200);
    let identity = v.identity_keypair_path();
    let identity = identity.to_str().expect("utf-8 path");
    let (code, report, _) = send(&v, dir.path(), &file, &["--identity", identity]);
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert_all_landed(&v, &report, 200);

    // `--output json-compact`: standard output is the report, on one line, and nothing else;
    // the file names go to standard error.
    let file = generate(&v, dir.path(), "json.b64", 100);
    let out = send_file(&v, dir.path(), &file)
        .args(["--output", "json-compact"])
        .output()
        .expect("running txpace send");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let printed: Value = serde_json::from_str(&stdout).expect("the report as one JSON line");
    assert_eq!(printed, read_report(&report_path(dir.path(), &file)));
    assert_all_landed(&v, &printed, 100);
    assert!(stderr.contains("report: "), "{stderr}");

    // Pinned to one TPU address instead of following the schedule.
    let file = generate(&v, dir.path(), "pinned.b64", 200);
    let tpu = v.tpu_quic().to_string();
    let (code, report, _) = send(&v, dir.path(), &file, &["--tpu", &tpu]);
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert_all_landed(&v, &report, 200);
    // Every send is attributed to the node behind the pinned address, the first ones too.
    let node = serde_json::json!([v.identity_keypair().pubkey().to_string()]);
    for t in report["transactions"].as_array().expect("transactions") {
        assert_eq!(t["leaders"], node, "{t:#}");
    }
}

#[test]
fn invalid_input_is_refused_before_anything_is_sent_unless_skipped() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let file = generate(&v, dir.path(), "mixed.b64", 20);
    let mut text = std::fs::read_to_string(&file).expect("read");
    text.push_str("this is not a transaction\n");
    std::fs::write(&file, &text).expect("write");

    let out = run_expect(
        txpace(dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .args(["send", "--no-tui", "--url", &v.rpc_url()])
            .arg(&file),
        2,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = file.display().to_string();
    assert!(
        stderr.contains(&format!("{shown}:21: not base64 or base58")),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 of 21 transactions are invalid: nothing was sent"),
        "{stderr}"
    );
    // Nothing reached the chain.
    let rpc = v.rpc_client();
    let loaded = txpace::source::load(std::slice::from_ref(&file), txpace::cli::InputFormat::Auto)
        .expect("load");
    let sigs: Vec<Signature> = loaded.valid.iter().map(|t| t.signature).collect();
    let statuses = rpc.get_signature_statuses(&sigs).expect("statuses");
    assert!(statuses.value.iter().all(Option::is_none));

    let (code, report, _) = send(&v, dir.path(), &file, &["--skip-invalid"]);
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert_all_landed(&v, &report, 20);
    assert_eq!(report["summary"]["skipped_invalid"], 1);
    assert_eq!(
        report["skipped"][0]["origin"],
        format!("{shown}:21").as_str()
    );
    assert_eq!(report["skipped"][0]["reason"], "not base64 or base58");
}
