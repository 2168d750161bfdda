//! Key handling: each key's effect on the dashboard's state and the command it sends.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use txpace::engine::command::Command;
use txpace::engine::lifecycle::Queue;
use txpace::engine::snapshot::{RateTarget, RunState, Snapshot};
use txpace::ui::{App, Overlay, fixtures};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

fn app() -> App {
    App::new("test", false)
}

fn at_rate(rate: f64) -> Snapshot {
    let mut s = fixtures::running(300);
    s.rate.target = RateTarget::Fixed(rate);
    s.rate.pacing = rate;
    s
}

#[test]
fn p_and_space_toggle_pause() {
    let snap = fixtures::running(300);
    let mut app = app();
    assert_eq!(app.handle_key(ch('p'), &snap), Some(Command::TogglePause));
    assert_eq!(app.handle_key(ch(' '), &snap), Some(Command::TogglePause));
    // Resuming from a paused snapshot is the same toggle.
    assert_eq!(
        app.handle_key(ch('p'), &fixtures::paused(300)),
        Some(Command::TogglePause)
    );
}

#[test]
fn plus_raises_50_to_55() {
    let mut app = app();
    assert_eq!(
        app.handle_key(ch('+'), &at_rate(50.0)),
        Some(Command::SetRate(RateTarget::Fixed(55.0)))
    );
    // Terminals report `+` with Shift; it is the same key.
    assert_eq!(
        app.handle_key(
            KeyEvent::new(KeyCode::Char('+'), KeyModifiers::SHIFT),
            &at_rate(50.0)
        ),
        Some(Command::SetRate(RateTarget::Fixed(55.0)))
    );
}

#[test]
fn minus_lowers_50_to_45_and_never_below_1() {
    let mut app = app();
    assert_eq!(
        app.handle_key(ch('-'), &at_rate(50.0)),
        Some(Command::SetRate(RateTarget::Fixed(45.0)))
    );
    assert_eq!(
        app.handle_key(ch('-'), &at_rate(1.0)),
        Some(Command::SetRate(RateTarget::Fixed(1.0)))
    );
}

#[test]
fn rate_keys_under_max_start_from_current_pacing() {
    let mut app = app();
    let snap = fixtures::max_rate(300, 240.0);
    assert_eq!(
        app.handle_key(ch('+'), &snap),
        Some(Command::SetRate(RateTarget::Fixed(264.0)))
    );
    assert_eq!(
        app.handle_key(ch('-'), &snap),
        Some(Command::SetRate(RateTarget::Fixed(216.0)))
    );
}

#[test]
fn q_and_ctrl_c_stop_and_quit() {
    let snap = fixtures::running(10);
    let mut a = app();
    assert!(!a.should_quit());
    assert_eq!(a.handle_key(ch('q'), &snap), Some(Command::Stop));
    assert!(a.should_quit());

    let mut b = app();
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(b.handle_key(ctrl_c, &snap), Some(Command::Stop));
    assert!(b.should_quit());

    // A plain `c` is not Ctrl-C.
    let mut c = app();
    assert_eq!(c.handle_key(ch('c'), &snap), None);
    assert!(!c.should_quit());
}

#[test]
fn q_quits_from_an_overlay_too() {
    let snap = fixtures::running(10);
    let mut a = app();
    a.handle_key(ch('?'), &snap);
    assert_eq!(a.overlay(), Overlay::Help);
    assert_eq!(a.handle_key(ch('q'), &snap), Some(Command::Stop));
    assert!(a.should_quit());
}

#[test]
fn over_runs_take_no_pace_commands_but_still_quit() {
    let mut a = app();
    for snap in [fixtures::done(50), fixtures::failed(50, "boom"), {
        let mut s = fixtures::running(50);
        s.run = RunState::Stopped;
        s
    }] {
        assert_eq!(a.handle_key(ch('p'), &snap), None);
        assert_eq!(a.handle_key(ch('+'), &snap), None);
        assert_eq!(a.handle_key(ch('-'), &snap), None);
        assert_eq!(a.handle_key(ch('q'), &snap), Some(Command::Stop));
    }
}

#[test]
fn enter_opens_details_of_the_selected_row_and_esc_closes() {
    let snap = fixtures::running(300);
    let mut a = app();
    a.handle_key(key(KeyCode::Down), &snap);
    a.handle_key(key(KeyCode::Down), &snap);
    let expected = snap.queue_row(Queue::Pending, 2).unwrap().id;
    assert_eq!(a.handle_key(key(KeyCode::Enter), &snap), None);
    assert_eq!(a.overlay(), Overlay::Detail(expected));
    // Navigation scrolls the overlay, not the table.
    a.handle_key(key(KeyCode::Down), &snap);
    assert_eq!(a.selected(&snap), 2);
    assert_eq!(a.handle_key(key(KeyCode::Esc), &snap), None);
    assert_eq!(a.overlay(), Overlay::None);
    // Esc with nothing open does nothing (in particular, does not quit).
    assert_eq!(a.handle_key(key(KeyCode::Esc), &snap), None);
    assert!(!a.should_quit());
}

#[test]
fn enter_on_an_empty_queue_opens_nothing() {
    let snap = fixtures::empty();
    let mut a = app();
    a.handle_key(key(KeyCode::Enter), &snap);
    assert_eq!(a.overlay(), Overlay::None);
}

#[test]
fn question_mark_toggles_help() {
    let snap = fixtures::running(10);
    let mut a = app();
    a.handle_key(ch('?'), &snap);
    assert_eq!(a.overlay(), Overlay::Help);
    a.handle_key(ch('?'), &snap);
    assert_eq!(a.overlay(), Overlay::None);
    a.handle_key(ch('?'), &snap);
    a.handle_key(key(KeyCode::Esc), &snap);
    assert_eq!(a.overlay(), Overlay::None);
}

#[test]
fn tab_cycles_queues_and_digits_jump() {
    let snap = fixtures::running(300);
    let mut a = app();
    let mut seen = vec![a.queue()];
    for _ in 0..5 {
        a.handle_key(key(KeyCode::Tab), &snap);
        seen.push(a.queue());
    }
    assert_eq!(
        seen,
        [
            Queue::Pending,
            Queue::Resent,
            Queue::Confirmed,
            Queue::Failed,
            Queue::Expired,
            Queue::Pending
        ]
    );
    a.handle_key(key(KeyCode::BackTab), &snap);
    assert_eq!(a.queue(), Queue::Expired);
    for (c, q) in ['1', '2', '3', '4', '5'].into_iter().zip(Queue::ALL) {
        a.handle_key(ch(c), &snap);
        assert_eq!(a.queue(), q);
    }
}

#[test]
fn selection_clamps_at_both_ends() {
    let snap = fixtures::running(300);
    let len = snap.queue_len(Queue::Pending);
    assert!(len > 20, "fixture should fill the Pending queue");
    let mut a = app();
    a.handle_key(key(KeyCode::Up), &snap);
    a.handle_key(ch('k'), &snap);
    a.handle_key(key(KeyCode::PageUp), &snap);
    assert_eq!(a.selected(&snap), 0);
    a.handle_key(key(KeyCode::End), &snap);
    assert_eq!(a.selected(&snap), len - 1);
    a.handle_key(key(KeyCode::Down), &snap);
    a.handle_key(ch('j'), &snap);
    a.handle_key(key(KeyCode::PageDown), &snap);
    assert_eq!(a.selected(&snap), len - 1);
    a.handle_key(key(KeyCode::Home), &snap);
    assert_eq!(a.selected(&snap), 0);
    a.handle_key(key(KeyCode::PageDown), &snap);
    assert!(a.selected(&snap) > 0);
}

#[test]
fn selection_is_per_queue_and_follows_a_shrinking_queue() {
    let snap = fixtures::running(300);
    let mut a = app();
    a.handle_key(key(KeyCode::End), &snap);
    let end = a.selected(&snap);
    a.handle_key(key(KeyCode::Tab), &snap);
    assert_eq!(a.selected(&snap), 0);
    a.handle_key(key(KeyCode::BackTab), &snap);
    assert_eq!(a.selected(&snap), end);
    // The same app over a smaller run: the selection is clamped, not out of range.
    let small = fixtures::running(20);
    let len = small.queue_len(Queue::Pending);
    assert_eq!(a.selected(&small), len - 1);
    a.handle_key(key(KeyCode::Up), &small);
    assert_eq!(a.selected(&small), len - 2);
    // And over an empty run, row 0 of nothing.
    assert_eq!(a.selected(&fixtures::empty()), 0);
}

#[test]
fn key_releases_are_ignored() {
    let snap = fixtures::running(10);
    let mut a = app();
    let mut release = ch('q');
    release.kind = KeyEventKind::Release;
    assert_eq!(a.handle_key(release, &snap), None);
    assert!(!a.should_quit());
}
