//! The rate panel draws complete seconds only (the meter leaves out the second still filling),
//! so the first second of a run has no point: what the panel says meanwhile.

use txpace::ui::{App, fixtures};

fn screen(snap: &txpace::engine::snapshot::Snapshot) -> String {
    fixtures::render_text(&App::new("send 300 txs from txs.b64", false), snap, 160, 48)
}

/// Before the first second ends there is no point to draw; if sends have already gone out,
/// the panel says the second is under way instead of claiming there were none.
#[test]
fn the_first_second_is_under_way_not_empty() {
    let mut snap = fixtures::empty();
    assert!(screen(&snap).contains("no sends yet"));
    snap.counts.sends = 42;
    let text = screen(&snap);
    assert!(text.contains("first second under way"), "{text}");
    assert!(!text.contains("no sends yet"), "{text}");
}
