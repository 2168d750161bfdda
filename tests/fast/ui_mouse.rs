//! The mouse: clicks and the wheel on what the last frame drew.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use txpace::engine::lifecycle::Queue;
use txpace::engine::snapshot::Snapshot;
use txpace::ui::{App, Overlay, fixtures};

const W: u16 = 160;
const H: u16 = 48;

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

fn click(app: &mut App, snap: &Snapshot, (x, y): (u16, u16)) {
    app.handle_mouse(mouse(MouseEventKind::Down(MouseButton::Left), x, y), snap);
    // What the event loop does after each event.
    fixtures::render_buffer(app, snap, W, H);
}

fn wheel(app: &mut App, snap: &Snapshot, down: bool, (x, y): (u16, u16)) {
    let kind = if down {
        MouseEventKind::ScrollDown
    } else {
        MouseEventKind::ScrollUp
    };
    app.handle_mouse(mouse(kind, x, y), snap);
    fixtures::render_buffer(app, snap, W, H);
}

/// Where `needle` first appears on screen, as (column, row).
fn find(app: &App, snap: &Snapshot, needle: &str) -> (u16, u16) {
    let text = fixtures::render_text(app, snap, W, H);
    for (y, line) in text.lines().enumerate() {
        if let Some(i) = line.find(needle) {
            return (line[..i].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{text}");
}

fn row_sig(snap: &Snapshot, queue: Queue, row: usize) -> String {
    txpace::ui::fmt::short_sig(&snap.queue_row(queue, row).unwrap().signature)
}

fn drawn() -> (App, Snapshot) {
    let snap = fixtures::running(300);
    let app = App::new("mouse", false);
    fixtures::render_buffer(&app, &snap, W, H);
    (app, snap)
}

#[test]
fn clicking_a_tab_shows_its_queue() {
    let (mut app, snap) = drawn();
    for (label, queue) in [
        ("3 Confirmed", Queue::Confirmed),
        ("2 Resent", Queue::Resent),
        ("5 Expired", Queue::Expired),
        ("1 Pending", Queue::Pending),
    ] {
        let (x, y) = find(&app, &snap, label);
        // Anywhere on the tab, its last column included.
        click(&mut app, &snap, (x + label.len() as u16 - 1, y));
        assert_eq!(app.queue(), queue, "{label}");
    }
    // The bar between two tabs is no tab.
    let (x, y) = find(&app, &snap, " │ 2 Resent");
    click(&mut app, &snap, (x + 1, y));
    assert_eq!(app.queue(), Queue::Pending);
}

#[test]
fn clicking_a_row_selects_it_and_clicking_it_again_opens_it() {
    let (mut app, snap) = drawn();
    let at = find(&app, &snap, &row_sig(&snap, Queue::Pending, 5));
    click(&mut app, &snap, at);
    assert_eq!(app.selected(&snap), 5);
    assert_eq!(app.overlay(), Overlay::None);
    click(&mut app, &snap, at);
    let id = snap.queue_row(Queue::Pending, 5).unwrap().id;
    assert_eq!(app.overlay(), Overlay::Detail(id));
    // A click outside the detail view closes it; the selection stays.
    click(&mut app, &snap, (0, H - 1));
    assert_eq!(app.overlay(), Overlay::None);
    assert_eq!(app.selected(&snap), 5);
    // The header row and the panel's border select nothing.
    let header = find(&app, &snap, "Signature");
    click(&mut app, &snap, header);
    assert_eq!(app.selected(&snap), 5);
}

#[test]
fn clicking_a_row_of_a_scrolled_table_selects_that_row() {
    let (mut app, snap) = drawn();
    app.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE), &snap);
    fixtures::render_buffer(&app, &snap, W, H);
    let len = snap.queue_len(Queue::Pending);
    let at = find(&app, &snap, &row_sig(&snap, Queue::Pending, len - 3));
    click(&mut app, &snap, at);
    assert_eq!(app.selected(&snap), len - 3);
}

#[test]
fn the_wheel_moves_the_selection_and_over_the_tabs_switches_queues() {
    let (mut app, snap) = drawn();
    let over_rows = find(&app, &snap, &row_sig(&snap, Queue::Pending, 2));
    wheel(&mut app, &snap, true, over_rows);
    wheel(&mut app, &snap, true, over_rows);
    assert_eq!(app.selected(&snap), 6);
    wheel(&mut app, &snap, false, over_rows);
    assert_eq!(app.selected(&snap), 3);
    for _ in 0..5 {
        wheel(&mut app, &snap, false, over_rows);
    }
    assert_eq!(app.selected(&snap), 0);

    let tabs = find(&app, &snap, "1 Pending");
    wheel(&mut app, &snap, true, tabs);
    assert_eq!(app.queue(), Queue::Resent);
    wheel(&mut app, &snap, false, tabs);
    wheel(&mut app, &snap, false, tabs);
    assert_eq!(app.queue(), Queue::Expired);

    // Over the header panel, the wheel does nothing.
    let before = (app.queue(), app.selected(&snap));
    wheel(&mut app, &snap, true, (5, 1));
    assert_eq!((app.queue(), app.selected(&snap)), before);
}

#[test]
fn the_wheel_scrolls_the_detail_view() {
    let (mut app, snap) = drawn();
    app.handle_key(KeyEvent::new(KeyCode::Char('2'), KeyModifiers::NONE), &snap);
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &snap);
    let before = fixtures::render_text(&app, &snap, W, 16);
    app.handle_mouse(mouse(MouseEventKind::ScrollDown, W / 2, 8), &snap);
    let after = fixtures::render_text(&app, &snap, W, 16);
    assert_ne!(before, after, "scrolled");
    app.handle_mouse(mouse(MouseEventKind::ScrollUp, W / 2, 8), &snap);
    assert_eq!(fixtures::render_text(&app, &snap, W, 16), before);
    assert!(matches!(app.overlay(), Overlay::Detail(_)));
}

#[test]
fn a_click_closes_help_but_neither_answers_the_question_nor_ends_a_find() {
    let (mut app, snap) = drawn();
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    app.handle_key(key('?'), &snap);
    click(&mut app, &snap, (W / 2, H / 2));
    assert_eq!(app.overlay(), Overlay::Help, "a click on the help keeps it");
    click(&mut app, &snap, (0, H - 1));
    assert_eq!(app.overlay(), Overlay::None);

    app.handle_key(key('q'), &snap);
    let tab = find(&app, &snap, "3 Confirmed");
    click(&mut app, &snap, tab);
    assert_eq!(app.overlay(), Overlay::ConfirmQuit);
    assert_eq!(app.queue(), Queue::Pending);
    assert!(!app.should_quit());
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), &snap);

    app.handle_key(key('/'), &snap);
    click(&mut app, &snap, tab);
    assert_eq!(app.find_query(), Some(""));
    assert_eq!(app.queue(), Queue::Pending);
}

#[test]
fn before_the_first_frame_and_on_a_tiny_terminal_clicks_do_nothing() {
    let snap = fixtures::running(300);
    let mut app = App::new("mouse", false);
    for (x, y) in [(0, 0), (10, 20), (W - 1, H - 1)] {
        app.handle_mouse(mouse(MouseEventKind::Down(MouseButton::Left), x, y), &snap);
        app.handle_mouse(mouse(MouseEventKind::ScrollDown, x, y), &snap);
    }
    assert_eq!((app.queue(), app.selected(&snap)), (Queue::Pending, 0));
    fixtures::render_buffer(&app, &snap, 40, 10);
    app.handle_mouse(mouse(MouseEventKind::Down(MouseButton::Left), 5, 5), &snap);
    assert_eq!((app.queue(), app.selected(&snap)), (Queue::Pending, 0));
}
