//! Logs, journals and reports are the owner's alone: files 0600 and txpace's directories 0700,
//! also when they existed before with looser modes; two runs started in the same second never
//! share a log file. One test function: it points the data directory (`XDG_DATA_HOME`) at a
//! temporary one for the whole binary.

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

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn loosen(p: &Path, m: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
}

#[test]
fn files_and_directories_are_private_even_when_they_existed() {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: the only test in this binary, so no other thread reads the environment yet.
    unsafe { std::env::set_var("XDG_DATA_HOME", home.path()) };
    let data = home.path().join("txpace");
    let logs = data.join("logs");
    let journals = data.join("journals");
    for d in [&logs, &journals] {
        fs::create_dir_all(d).unwrap();
        loosen(d, 0o755);
    }
    loosen(&data, 0o755);

    // Logs: two in the same second (same process, so the same pid too) get two files.
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

    // Journals: an existing journal and its directory in the data dir are tightened.
    let txs = vec![LoadedTx {
        origin: Arc::from("in.b64:1"),
        signature: Signature::from([1u8; 64]),
        wire: Arc::from(vec![1u8, 2, 3]),
        recent_blockhash: Hash::default(),
        durable_nonce: false,
        budget: Default::default(),
    }];
    let inputs = Inputs::of(&[PathBuf::from("in.b64")], &txs);
    let journal = journals.join("in.jnl");
    fs::write(&journal, "").unwrap();
    loosen(&journal, 0o644);
    drop(JournalFile::open(&journal, &inputs, &txs).expect("journal"));
    assert_eq!(mode(&journal), 0o600);
    assert_eq!(mode(&journals), 0o700);

    // A journal elsewhere: the directory txpace creates is 0700, the user's own is left alone.
    let elsewhere = tempfile::tempdir().unwrap();
    loosen(elsewhere.path(), 0o755);
    let nested = elsewhere.path().join("runs/today/j.jnl");
    drop(JournalFile::open(&nested, &inputs, &txs).expect("journal"));
    assert_eq!(mode(&nested), 0o600);
    assert_eq!(mode(&elsewhere.path().join("runs")), 0o700);
    assert_eq!(mode(&elsewhere.path().join("runs/today")), 0o700);
    assert_eq!(mode(elsewhere.path()), 0o755);

    // Reports: an existing one is overwritten and made private.
    let report = elsewhere.path().join("report.json");
    fs::write(&report, "old").unwrap();
    loosen(&report, 0o644);
    // Its text is scrubbed like every output: error texts end up in it.
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
}
