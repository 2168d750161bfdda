//! `txpace demo` as the README runs it, headless and smaller: it starts its own validator,
//! generates the workload, lands every transaction, and leaves no validator or ledger behind.

use crate::{common, machine};

use common::{read_report, run_expect, txpace};

#[test]
fn demo_lands_its_workload_and_cleans_up() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("demo.json");
    let out = run_expect(
        txpace(dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .args(["demo", "--count", "300", "--no-tui", "--report"])
            .arg(&report),
        0,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("validator ready in"), "{stderr}");
    assert!(stderr.contains("signed 300 self-transfers"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("done: 300 transactions"),
        "summary missing: {stdout}"
    );
    let json = read_report(&report);
    assert_eq!(json["summary"]["confirmed"], 300, "{:#}", json["summary"]);
    assert_eq!(json["summary"]["total"], 300);
    // The validator's temporary ledger is gone with it.
    let ledger = stderr
        .lines()
        .find_map(|l| l.split(", ledger ").nth(1))
        .map(|l| l.trim().to_string())
        .expect("demo names its ledger");
    assert!(
        !std::path::Path::new(&ledger).exists(),
        "ledger {ledger} left behind"
    );
}
