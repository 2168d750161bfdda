use std::net::SocketAddr;

use solana_pubkey::Pubkey;

use super::*;
use crate::engine::{net::StreamOutcome, snapshot::SEND_LOG_CAP};

fn one_tx() -> LoadedTx {
    LoadedTx {
        origin: "t:1".into(),
        signature: solana_signature::Signature::from([3u8; 64]),
        wire: vec![1u8; 100].into(),
        recent_blockhash: Hash::new_from_array([9; 32]),
        durable_nonce: true,
        budget: Default::default(),
    }
}

/// A durable-nonce transaction resent for hours keeps a bounded send log, yet every
/// leader it went to and the outcome of a recent stream are kept.
#[test]
fn the_send_log_is_bounded_and_keeps_what_matters() {
    let start = Instant::now();
    let mut store = TxStore::new(vec![one_tx()], start);
    let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
    let mut last = 0;
    for i in 0..10 * SEND_LOG_CAP {
        let leader = if i == 0 { a } else { b };
        last = store
            .record_send(0, start, Some(7), &[(leader, None)])
            .expect("send");
    }
    let result = |log_index, error| StreamResult {
        id: 0,
        log_index,
        send: 1,
        leader: b,
        addr: SocketAddr::from(([127, 0, 0, 1], 1)),
        sent_at: start,
        took: Duration::ZERO,
        outcome: StreamOutcome::Throttled,
        error: Some(error),
    };
    store.record_stream_result(result(last, "stopped"), start);
    // An entry long dropped is counted, not found.
    store.record_stream_result(result(0, "old"), start);
    let view = store.view(0).expect("view");
    assert!(
        view.send_log.len() <= SEND_LOG_CAP,
        "{}",
        view.send_log.len()
    );
    assert_eq!(
        view.send_log_dropped as usize + view.send_log.len(),
        10 * SEND_LOG_CAP
    );
    assert_eq!(*view.sent_to, vec![a, b]);
    assert_eq!(view.sends as usize, 10 * SEND_LOG_CAP);
    let newest = view.send_log.last().expect("an entry");
    assert_eq!(newest.error.as_deref(), Some("stopped"));
    assert!(
        view.send_log
            .iter()
            .all(|r| r.error.as_deref() != Some("old"))
    );
    assert_eq!(store.counts().streams.throttled, 2);
}

/// Every transaction of a run has a record, a million from one file: 104 bytes — the wire's
/// shared pointer (16), the blockhash (32), the queue order (8), five moments at 8 bytes each
/// ([`super::stamp::Stamp`]) and three one-byte fields. With `Option<Instant>` moments and the
/// seen slot it was 160.
#[test]
fn a_record_stays_small() {
    assert!(
        std::mem::size_of::<TxRecord>() <= 104,
        "{}",
        std::mem::size_of::<TxRecord>()
    );
}

/// And a view, the dashboard's row of it: 288 bytes. Leaders' keys are shared (two keys were 66
/// bytes of 344), the origin shares its file's name.
#[test]
fn a_view_stays_small() {
    let size = std::mem::size_of::<TxView>();
    assert!(size <= 288, "{size}");
}
