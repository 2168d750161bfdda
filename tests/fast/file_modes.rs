//! Logs, journals and reports are the owner's alone: files 0600 and txpace's directories 0700,
//! also when they existed before with looser modes; two runs started in the same second never
//! share a log file. The tests of the data directory run in a process of their own: they point
//! `XDG_DATA_HOME` at a temporary directory for the whole process.

use std::{
    fs,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    sync::Arc,
};

use solana_hash::Hash;
use solana_signature::Signature;
use txpace::{
    journal::{Inputs, JournalFile},
    logging::new_log_file,
    report::write_private_json,
    source::LoadedTx,
};

use crate::common::own_process;

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn loosen(p: &Path, m: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
}

/// Points the data directory (`XDG_DATA_HOME`) at a new temporary one holding txpace's
/// `logs` and `journals` directories, each (and `txpace` itself) made 0755; returns the temporary
/// directory, which lives as long as the value, and `txpace`'s path in it. Only in a process of
/// the test's own.
fn loose_data_dir() -> (tempfile::TempDir, PathBuf) {
    assert!(
        own_process::is_child(),
        "changes the environment of the whole process"
    );
    let home = tempfile::tempdir().unwrap();
    // SAFETY: this process runs this test alone (`own_process::run`), and nothing of it reads
    // the environment on another thread.
    unsafe { std::env::set_var("XDG_DATA_HOME", home.path()) };
    let data = home.path().join("txpace");
    for d in [data.join("logs"), data.join("journals")] {
        fs::create_dir_all(&d).unwrap();
        loosen(&d, 0o755);
    }
    loosen(&data, 0o755);
    (home, data)
}

/// One made-up transaction and the inputs it came from, for a journal.
fn one_tx() -> (Inputs, Vec<LoadedTx>) {
    let txs = vec![LoadedTx {
        origin: "in.b64:1".into(),
        signature: Signature::from([1u8; 64]),
        wire: Arc::from(vec![1u8, 2, 3]),
        recent_blockhash: Hash::default(),
        durable_nonce: false,
        budget: Default::default(),
    }];
    (Inputs::of(&[PathBuf::from("in.b64")], &txs), txs)
}

#[test]
fn log_files_are_private_and_two_in_one_second_differ() {
    own_process::run(&[], || {
        let (_home, data) = loose_data_dir();
        let logs = data.join("logs");
        // Two in the same second (same process, so the same pid too) get two files.
        let (a, _) = new_log_file("send").unwrap().expect("a data dir");
        let (b, _) = new_log_file("send").unwrap().expect("a data dir");
        assert_ne!(a, b);
        let pid = std::process::id().to_string();
        for p in [&a, &b] {
            assert_eq!(p.parent(), Some(logs.as_path()));
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("send-") && name.contains(&pid), "{name}");
            assert_eq!(mode(p), 0o600, "{}", p.display());
        }
        assert_eq!(mode(&logs), 0o700);
        assert_eq!(mode(&data), 0o700);
    });
}

#[test]
fn an_existing_journal_in_the_data_dir_is_tightened_with_its_directory() {
    own_process::run(&[], || {
        let (_home, data) = loose_data_dir();
        let journals = data.join("journals");
        let (inputs, txs) = one_tx();
        let journal = journals.join("in.jnl");
        fs::write(&journal, "").unwrap();
        loosen(&journal, 0o644);
        drop(JournalFile::open(&journal, &inputs, &txs).expect("journal"));
        assert_eq!(mode(&journal), 0o600);
        assert_eq!(mode(&journals), 0o700);
    });
}

/// A journal elsewhere: the directories txpace creates are 0700, the user's own is left alone.
#[test]
fn a_journal_elsewhere_gets_private_directories_only_where_txpace_made_them() {
    let (inputs, txs) = one_tx();
    let elsewhere = tempfile::tempdir().unwrap();
    loosen(elsewhere.path(), 0o755);
    let nested = elsewhere.path().join("runs/today/j.jnl");
    drop(JournalFile::open(&nested, &inputs, &txs).expect("journal"));
    assert_eq!(mode(&nested), 0o600);
    assert_eq!(mode(&elsewhere.path().join("runs")), 0o700);
    assert_eq!(mode(&elsewhere.path().join("runs/today")), 0o700);
    assert_eq!(mode(elsewhere.path()), 0o755);
}

/// An existing report is overwritten and made private, and its text is scrubbed like every
/// output (error texts end up in it). In a process of its own: the endpoint it registers as
/// secret would be scrubbed from every other test's output too.
#[test]
fn an_existing_report_is_overwritten_private_and_scrubbed() {
    own_process::run(&[], || {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        fs::write(&report, "old").unwrap();
        loosen(&report, 0o644);
        txpace::redact::register_url("https://h.example/ReportKey42/");
        write_private_json(
            &report,
            &serde_json::json!({"error": "url (https://h.example/ReportKey42/)"}),
        )
        .unwrap();
        assert_eq!(mode(&report), 0o600);
        assert_eq!(
            fs::read_to_string(&report).unwrap(),
            "{\n  \"error\": \"url (https://h.example/***)\"\n}\n"
        );
    });
}
