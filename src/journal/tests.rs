use std::{os::unix::fs::PermissionsExt, path::Path, sync::Arc, time::Duration};

use solana_hash::Hash;
use solana_signature::Signature;

use super::*;
use crate::{
    config::Commitment,
    engine::{JournalFact, Prior, TxFact, TxIdent},
    source::Origin,
};

fn txs(n: usize, salt: u8) -> Vec<LoadedTx> {
    (0..n)
        .map(|i| {
            let mut sig = [0u8; 64];
            sig[0] = i as u8;
            sig[1] = salt;
            LoadedTx {
                origin: Origin::line(&Arc::from("in.b64"), i as u64 + 1),
                signature: Signature::from(sig),
                wire: Arc::from(vec![salt, i as u8, 7, 7]),
                recent_blockhash: Hash::default(),
                durable_nonce: false,
                budget: Default::default(),
            }
        })
        .collect()
}

fn inputs(txs: &[LoadedTx]) -> Inputs {
    Inputs::of(&[PathBuf::from("in.b64")], txs)
}

/// What the engine hands the writer: each fact, with its transaction's identity if the journal
/// does not name it yet (`named`: the replay's).
fn naming(txs: &[LoadedTx], mut named: Vec<bool>, facts: &[TxFact]) -> Vec<JournalFact> {
    named.resize(txs.len(), false);
    facts
        .iter()
        .map(|f| {
            let i = f.id() as usize;
            let ident = (!named[i]).then(|| TxIdent {
                signature: txs[i].signature,
                origin: txs[i].origin.clone(),
            });
            named[i] = true;
            JournalFact {
                fact: f.clone(),
                ident,
            }
        })
        .collect()
}

/// Starts a journal at `path` and writes `facts` through the writer thread.
fn write_run(path: &Path, txs: &[LoadedTx], facts: &[TxFact]) -> WriterStats {
    let ins = inputs(txs);
    let (mut file, replay) = JournalFile::open(path, &ins, txs).expect("open");
    if replay.header.is_none() {
        file.start(&Header::new(ins, "http://127.0.0.1:8899/".into()))
            .expect("start");
    } else {
        file.resume(&replay, "http://127.0.0.1:8899/")
            .expect("resume");
    }
    let (tx, handle) = spawn_writer(file, Duration::from_secs(1)).expect("spawn");
    for f in naming(txs, replay.identified, facts) {
        tx.send(f).expect("writer alive");
    }
    drop(tx);
    handle.finish().expect("finish")
}

fn confirmed(id: u32, slot: u64) -> TxFact {
    TxFact::Confirmed {
        id,
        slot,
        commitment: Commitment::Confirmed,
    }
}

fn first_run() -> Vec<TxFact> {
    vec![
        TxFact::Sent { id: 0, sends: 1 },
        TxFact::Sent { id: 1, sends: 1 },
        TxFact::Sent { id: 2, sends: 1 },
        TxFact::Sent { id: 3, sends: 1 },
        confirmed(0, 41),
        TxFact::Sent { id: 1, sends: 2 },
        TxFact::Failed {
            id: 2,
            slot: 42,
            error: "InstructionError(0, Custom(1))".into(),
        },
        TxFact::Expired { id: 3 },
    ]
}

fn expected_priors() -> Vec<Option<Prior>> {
    vec![
        Some(Prior::Confirmed {
            slot: 41,
            commitment: Commitment::Confirmed,
            sends: 1,
        }),
        Some(Prior::Sent { sends: 2 }),
        Some(Prior::Failed {
            slot: 42,
            error: "InstructionError(0, Custom(1))".into(),
            sends: 1,
        }),
        Some(Prior::Expired { sends: 1 }),
        None,
    ]
}

#[test]
fn facts_round_trip_into_priors_and_the_file_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j/run.jnl");
    let txs = txs(5, 1);
    let stats = write_run(&path, &txs, &first_run());
    // 8 facts, 4 identity records, 1 closing record.
    assert_eq!(stats.records, 13);
    let r = read(&path).unwrap();
    assert_eq!(r.priors, expected_priors());
    assert_eq!(r.identified, vec![true, true, true, true, false]);
    assert_eq!((r.sessions, r.facts, r.closed, r.torn), (1, 8, true, None));
    assert_eq!(r.tally(), (1, 1, 1, 1));
    let h = r.header.unwrap();
    assert_eq!(h.inputs, inputs(&txs));
    assert_eq!(h.rpc_url, "http://127.0.0.1:8899/");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let recs = read_records(&path).unwrap();
    assert_eq!(
        recs[1],
        Record::Tx {
            id: 0,
            signature: txs[0].signature.to_string(),
            origin: "in.b64:1".into()
        }
    );
}

#[test]
fn a_resumed_session_appends_and_final_states_stay_final() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let txs = txs(5, 1);
    write_run(&path, &txs, &first_run());
    // A late "sent" for a confirmed one changes nothing; id 1 lands, id 4 is new.
    let stats = write_run(
        &path,
        &txs,
        &[
            TxFact::Sent { id: 0, sends: 9 },
            TxFact::Sent { id: 1, sends: 3 },
            confirmed(1, 50),
            TxFact::Sent { id: 4, sends: 1 },
        ],
    );
    // 4 facts, 1 new identity (id 4), closing record.
    assert_eq!(stats.records, 6);
    let r = read(&path).unwrap();
    let mut want = expected_priors();
    want[1] = Some(Prior::Confirmed {
        slot: 50,
        commitment: Commitment::Confirmed,
        sends: 3,
    });
    want[4] = Some(Prior::Sent { sends: 1 });
    assert_eq!(r.priors, want);
    assert_eq!((r.sessions, r.facts, r.closed), (2, 12, true));
    let sessions = read_records(&path)
        .unwrap()
        .into_iter()
        .filter(|r| matches!(r, Record::Session { .. }))
        .count();
    assert_eq!(sessions, 1);
}

#[test]
fn a_torn_last_record_is_ignored_and_cut_off_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let txs = txs(5, 1);
    write_run(&path, &txs, &first_run());
    let whole = std::fs::metadata(&path).unwrap().len();
    // A kill in the middle of writing a record: its head and half its payload.
    let mut torn = Vec::new();
    frame::encode(
        br#"{"t":"confirmed","id":1,"slot":60,"commitment":"confirmed"}"#,
        &mut torn,
    );
    torn.truncate(30);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&torn);
    std::fs::write(&path, &bytes).unwrap();

    let r = read(&path).unwrap();
    assert_eq!(r.priors, expected_priors());
    assert_eq!(r.torn, Some((30, "a record cut short")));
    assert_eq!(r.good_len, whole);

    write_run(&path, &txs, &[confirmed(1, 61)]);
    let r = read(&path).unwrap();
    assert_eq!(r.torn, None);
    assert_eq!(
        r.priors[1],
        Some(Prior::Confirmed {
            slot: 61,
            commitment: Commitment::Confirmed,
            sends: 2,
        })
    );
}

#[test]
fn a_damaged_record_in_the_middle_is_an_error_naming_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let txs = txs(5, 1);
    write_run(&path, &txs, &first_run());
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(6)
        .position(|w| w == b"failed")
        .expect("a failed record");
    bytes[at] = b'F';
    std::fs::write(&path, &bytes).unwrap();
    let err = read(&path).unwrap_err();
    let offset = match &err {
        JournalError::Corrupt { offset, .. } => *offset,
        other => panic!("{other}"),
    };
    assert!(
        offset < at as u64 && at as u64 - offset < 16,
        "{offset} vs {at}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "journal {} is damaged at byte {offset}: a record's checksum does not match",
            path.display()
        )
    );
    // Opening it for a run refuses too.
    let err = JournalFile::open(&path, &inputs(&txs), &txs)
        .err()
        .expect("refused");
    assert!(matches!(err, JournalError::Corrupt { .. }), "{err}");
}

#[test]
fn a_journal_for_other_inputs_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let ours = txs(5, 1);
    write_run(&path, &ours, &first_run());
    let theirs = txs(5, 2);
    let err = JournalFile::open(&path, &inputs(&theirs), &theirs)
        .err()
        .expect("refused");
    let a = inputs(&ours);
    let b = inputs(&theirs);
    assert_ne!(a.content_hash, b.content_hash);
    let name = |i: &Inputs| i.files[0].path.clone();
    assert_eq!(
        err.to_string(),
        format!(
            "journal {} belongs to other inputs: it was written for 5 transactions from {} (content {}), \
             but this run sends 5 transactions from {} (content {}); \
             pass --journal PATH to keep a separate journal for these inputs",
            path.display(),
            name(&a),
            &a.content_hash[..12],
            name(&b),
            &b.content_hash[..12],
        )
    );
    // Same transactions from another file (moved, or re-encoded) are the same inputs.
    let moved = Inputs::of(&[PathBuf::from("elsewhere.b58")], &ours);
    assert!(moved.same_transactions(&a));
}

#[test]
fn a_second_run_on_a_journal_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let txs = txs(2, 1);
    let ins = inputs(&txs);
    let (_held, _) = JournalFile::open(&path, &ins, &txs).unwrap();
    let err = JournalFile::open(&path, &ins, &txs).err().expect("locked");
    assert_eq!(
        err.to_string(),
        format!(
            "journal {} is in use by another txpace process",
            path.display()
        )
    );
}

#[test]
fn other_files_and_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "my notes, not a journal\n").unwrap();
    let err = read(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is not a txpace journal (it does not start with the journal marker)",
            path.display()
        )
    );

    let path = dir.path().join("future.jnl");
    let txs = txs(1, 1);
    let mut header = Header::new(inputs(&txs), String::new());
    header.version = 7;
    let mut bytes = MAGIC.to_vec();
    frame::encode(
        &serde_json::to_vec(&Record::Header(header)).unwrap(),
        &mut bytes,
    );
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        read(&path).unwrap_err().to_string(),
        format!(
            "journal {} has format version 7; this txpace reads version 1 only",
            path.display()
        )
    );
}

#[test]
fn an_empty_or_half_created_journal_reads_as_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.jnl");
    std::fs::write(&path, &MAGIC[..5]).unwrap();
    let r = read(&path).unwrap();
    assert!(r.header.is_none());
    assert_eq!(r.good_len, 0);
    std::fs::write(&path, b"").unwrap();
    assert!(read(&path).unwrap().header.is_none());
}

#[test]
fn facts_reach_the_disk_within_the_sync_interval_while_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let txs = txs(3, 1);
    let ins = inputs(&txs);
    let (mut file, replay) = JournalFile::open(&path, &ins, &txs).unwrap();
    file.start(&Header::new(ins, String::new())).unwrap();
    let (tx, handle) = spawn_writer(file, Duration::from_millis(50)).unwrap();
    let sent = naming(&txs, replay.identified, &[TxFact::Sent { id: 2, sends: 1 }]);
    sent.into_iter().for_each(|f| tx.send(f).unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let r = read(&path).unwrap();
        if r.facts == 1 {
            assert_eq!(r.priors[2], Some(Prior::Sent { sends: 1 }));
            assert!(!r.closed);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not written in 5 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(tx);
    let stats = handle.finish().unwrap();
    assert!(stats.syncs >= 2, "{stats:?}");
    assert!(read(&path).unwrap().closed);
}

#[test]
fn default_paths_are_named_by_file_and_content() {
    let txs = txs(2, 1);
    let ins = Inputs::of(&[PathBuf::from("/no/such/dir/my workload.b64")], &txs);
    let path = default_path(&ins).expect("a home directory");
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name, format!("my_workload-{}.jnl", &ins.content_hash[..16]));
    assert!(path.parent().unwrap().ends_with("journals"));
}

/// `txpace view JOURNAL`: every journaled transaction with its fate and sends, the one never
/// sent left out and said so, and the run shown as stopped (one is still unconfirmed).
#[test]
fn a_journal_reads_back_as_a_view_of_its_fates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jnl");
    let txs = txs(5, 3);
    write_run(&path, &txs, &first_run());
    let (snap, note) = crate::report::load_journal(&path).expect("a view");
    assert!(note.contains("journal of 5 transactions"), "{note}");
    assert!(note.contains("1 never sent are not shown"), "{note}");
    let states: Vec<(String, crate::engine::lifecycle::TxState, u32, Option<u64>)> = snap
        .txs
        .iter()
        .map(|v| (v.origin.to_string(), v.state, v.sends, v.landed_slot))
        .collect();
    use crate::engine::lifecycle::TxState as S;
    assert_eq!(
        states,
        vec![
            ("in.b64:1".into(), S::Confirmed, 1, Some(41)),
            ("in.b64:2".into(), S::Resent, 2, None),
            ("in.b64:3".into(), S::Failed, 1, Some(42)),
            ("in.b64:4".into(), S::Expired, 1, None),
        ]
    );
    assert_eq!(snap.txs[0].signature, txs[0].signature);
    assert_eq!(
        snap.txs[2].last_error.as_deref(),
        Some("InstructionError(0, Custom(1))")
    );
    assert_eq!(snap.run, crate::engine::snapshot::RunState::Stopped);
    assert_eq!(snap.counts.sends, 5);
}
