//! `assets/report.schema.json` against reports built in-process from the dashboard's fixture
//! snapshots (every run state, both rate modes, skipped input), so the schema is checked on
//! every test run, without a validator; and the schema is strict enough to catch a drift
//! (an unknown field, a missing one, a status it does not know). `deploy-report.schema.json`
//! is checked on a deploy report wrapping such a run report.

use crate::common;

use std::sync::Arc;

use common::schema::{Kind, assert_conforms, violations};
use serde_json::{Value, json};
use txpace::{
    config::Commitment,
    engine::{RunOutcome, snapshot::Snapshot},
    report::Report,
    source::Problem,
    ui::fixtures,
};

fn report_of(snapshot: Snapshot, commitment: Option<Commitment>, skipped: &[Problem]) -> Value {
    let commitments = vec![commitment; snapshot.txs.len()];
    let outcome = RunOutcome {
        snapshot: Arc::new(snapshot),
        commitments,
    };
    serde_json::to_value(Report::new(&outcome, skipped)).expect("a report serializes")
}

fn skipped() -> Vec<Problem> {
    vec![Problem {
        origin: "batch.b64:3".into(),
        reason: "not base64 or base58".into(),
    }]
}

#[test]
fn reports_of_every_kind_of_run_conform() {
    let cases = [
        ("done", fixtures::done(40), Some(Commitment::Confirmed)),
        (
            "done, finalized",
            fixtures::done(40),
            Some(Commitment::Finalized),
        ),
        ("failed", fixtures::failed(30, "RPC unreachable"), None),
        ("max rate", fixtures::max_rate(30, 250.0), None),
        ("nothing sent", fixtures::empty(), None),
    ];
    for (name, mut snapshot, commitment) in cases {
        // A report is written once the run is over: a run still going is one stopped early.
        if !snapshot.run.is_over() {
            snapshot.run = txpace::engine::snapshot::RunState::Stopped;
        }
        for skipped in [Vec::new(), skipped()] {
            let report = report_of(snapshot.clone(), commitment, &skipped);
            let wrong = violations(Kind::Run, &report);
            assert!(wrong.is_empty(), "{name}: {wrong:#?}\n{report:#}");
        }
    }
}

#[test]
fn failed_engine_run_conforms() {
    let report = report_of(fixtures::failed(10, "engine panicked"), None, &[]);
    assert_eq!(report["summary"]["outcome"], "failed");
    assert_conforms(Kind::Run, &report);
}

/// A change made to a conforming report.
type Drift = fn(&mut Value);

/// The schema is closed and typed: each of these drifts from src/report.rs is caught.
#[test]
fn the_schema_catches_drift() {
    let good = report_of(fixtures::done(5), None, &skipped());
    assert_conforms(Kind::Run, &good);
    assert!(
        good["leaders"].as_array().is_some_and(|l| !l.is_empty()),
        "the fixture run has leaders, so their shape is checked: {good:#}"
    );
    let drifts: [(&str, Drift); 10] = [
        ("an unknown summary field", |r| {
            r["summary"]["surprise"] = json!(1);
        }),
        ("a missing summary field", |r| {
            r["summary"].as_object_mut().map(|o| o.remove("sends"));
        }),
        ("an unknown status", |r| {
            r["transactions"][0]["status"] = json!("landed")
        }),
        ("an unknown outcome", |r| {
            r["summary"]["outcome"] = json!("running")
        }),
        ("a negative count", |r| r["summary"]["total"] = json!(-1)),
        ("a count as text", |r| {
            r["transactions"][0]["sends"] = json!("2")
        }),
        ("a leader that is no key", |r| {
            r["transactions"][0]["leaders"] = json!(["not a key!"]);
        }),
        ("a leader without stream counts", |r| {
            r["leaders"][0].as_object_mut().map(|o| o.remove("streams"));
        }),
        ("an unknown stream outcome", |r| {
            r["summary"]["streams"]["dropped"] = json!(3);
        }),
        ("an exactness that is no boolean", |r| {
            r["transactions"][0]["last_valid_exact"] = json!("yes");
        }),
    ];
    for (name, drift) in drifts {
        let mut report = good.clone();
        drift(&mut report);
        assert!(
            !violations(Kind::Run, &report).is_empty(),
            "{name} passed the schema"
        );
    }
}

/// A deploy report as `txpace deploy --report` writes it, its phase holding a real run report.
fn deploy_report(phase: Value) -> Value {
    let key = fixtures::pubkey(7).to_string();
    json!({
        "outcome": "deployed",
        "error": null,
        "program_id": key,
        "buffer": fixtures::pubkey(8).to_string(),
        "program_len": 615_936,
        "chunk_size": 1_012,
        "chunks": 609,
        "chunks_to_write": 609,
        "bytes_already_in_buffer": 0,
        "signature": fixtures::signature(9).to_string(),
        "elapsed_s": 12.5,
        "final": false,
        "compute_budget": {
            "unit_price": 1_200,
            "price_from": "recent",
            "percentile": 75,
            "fee_samples": 150,
            "unit_limit": null,
        },
        "phases": [{ "name": "writes", "resigns": 2, "unit_limit": 3_700, "report": phase }],
    })
}

#[test]
fn deploy_reports_conform_and_check_their_phase_reports() {
    let phase = report_of(fixtures::done(20), None, &[]);
    assert_conforms(Kind::Deploy, &deploy_report(phase.clone()));

    // The phase's run report is held to the run schema through the deploy schema's $ref.
    let mut bad_phase = phase;
    bad_phase["summary"]["surprise"] = json!(true);
    assert!(!violations(Kind::Deploy, &deploy_report(bad_phase)).is_empty());

    let mut no_source = deploy_report(report_of(fixtures::done(1), None, &[]));
    no_source["compute_budget"]["price_from"] = json!("guess");
    assert!(!violations(Kind::Deploy, &no_source).is_empty());

    let mut unknown_outcome = deploy_report(report_of(fixtures::done(1), None, &[]));
    unknown_outcome["outcome"] = json!("half-done");
    assert!(!violations(Kind::Deploy, &unknown_outcome).is_empty());
}
