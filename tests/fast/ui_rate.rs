//! The rate panel draws complete seconds only (the meter leaves out the second still filling),
//! so the first second of a run has no point: what the panel says meanwhile; and what it says
//! beside the target when the sending figure is above it on purpose.

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

/// After an outage a fixed target is followed by the faster pace that makes up the sends it
/// held back and how many are owed, so a sending figure above the target does not read as a
/// fault; with nothing owed the line is the target alone.
#[test]
fn catching_up_says_how_fast_and_how_much_is_owed() {
    let text = screen(&fixtures::catching_up(300, 194.0, 830));
    assert!(
        text.contains("target 100 tx/s  catching up 194 tx/s (830 owed)"),
        "{text}"
    );
    insta::assert_snapshot!(text);
    assert!(!screen(&fixtures::running(300)).contains("catching up"));
}

/// Owed sends are made up half a second after the hold that owed them ends: meanwhile the
/// pacer holds the target, and the line says how many are owed without claiming a catch-up.
#[test]
fn owed_before_the_catch_up_starts_is_not_called_catching_up() {
    let text = screen(&fixtures::catching_up(300, 100.0, 22));
    assert!(text.contains("target 100 tx/s  22 owed"), "{text}");
    assert!(!text.contains("catching up"), "{text}");
}

/// Under `--rate max`, sends ahead of a later leader's turn come on top of the pace the closed
/// loop holds, and the line says how many went, so a sending figure above the pace does not
/// read as a fault; with none sent ahead the line is the pace alone.
#[test]
fn max_rate_says_what_was_sent_ahead_on_top_of_the_pace() {
    let text = screen(&fixtures::max_rate_ahead(300, 194.0, 728));
    assert!(
        text.contains("target max  pacing 194 tx/s + 728 sent ahead"),
        "{text}"
    );
    insta::assert_snapshot!(text);
    assert!(!screen(&fixtures::max_rate(300, 194.0)).contains("sent ahead"));
}
