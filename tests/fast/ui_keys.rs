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
fn q_asks_first_while_transactions_are_unfinished() {
    let snap = fixtures::running(10);
    assert!(snap.counts.pending + snap.counts.resent > 0);
    let mut a = app();
    assert_eq!(a.handle_key(ch('q'), &snap), None);
    assert_eq!(a.overlay(), Overlay::ConfirmQuit);
    assert!(!a.should_quit());
    // Any key but y or q keeps running, and is not acted on otherwise.
    assert_eq!(a.handle_key(ch('p'), &snap), None);
    assert_eq!(a.overlay(), Overlay::None);
    assert!(!a.should_quit());
    for yes in [ch('y'), ch('Y'), ch('q'), key(KeyCode::Enter)] {
        let mut a = app();
        a.handle_key(ch('q'), &snap);
        assert_eq!(a.handle_key(yes, &snap), Some(Command::Stop), "{yes:?}");
        assert!(a.should_quit());
    }
    for no in [ch('n'), key(KeyCode::Esc), ch(' ')] {
        let mut a = app();
        a.handle_key(ch('q'), &snap);
        assert_eq!(a.handle_key(no, &snap), None, "{no:?}");
        assert!(!a.should_quit());
    }
}

#[test]
fn q_quits_at_once_when_nothing_is_unfinished() {
    let mut all_final = fixtures::running(10);
    all_final.counts.pending = 0;
    all_final.counts.resent = 0;
    for snap in [fixtures::done(10), fixtures::failed(10, "boom"), all_final] {
        let mut a = app();
        assert_eq!(a.handle_key(ch('q'), &snap), Some(Command::Stop));
        assert!(a.should_quit());
    }
}

#[test]
fn ctrl_c_never_asks() {
    let snap = fixtures::running(10);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut b = app();
    assert_eq!(b.handle_key(ctrl_c, &snap), Some(Command::Stop));
    assert!(b.should_quit());
    // Not from the question, nor from a find being typed.
    let mut b = app();
    b.handle_key(ch('q'), &snap);
    assert_eq!(b.handle_key(ctrl_c, &snap), Some(Command::Stop));
    let mut b = app();
    b.handle_key(ch('/'), &snap);
    assert_eq!(b.handle_key(ctrl_c, &snap), Some(Command::Stop));

    // A plain `c` is not Ctrl-C.
    let mut c = app();
    assert_eq!(c.handle_key(ch('c'), &snap), None);
    assert!(!c.should_quit());
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

fn type_text(a: &mut App, snap: &Snapshot, text: &str) {
    for c in text.chars() {
        assert_eq!(a.handle_key(ch(c), snap), None);
    }
}

/// The id, queue and row of a transaction in `queue`, and a prefix of its signature that no
/// other transaction of the snapshot shares.
fn unique_prefix(snap: &Snapshot, queue: Queue, row: usize) -> (u32, String) {
    let tx = snap.queue_row(queue, row).unwrap();
    let sig = tx.signature.to_string();
    let others: Vec<String> = snap
        .txs
        .iter()
        .filter(|t| t.id != tx.id)
        .map(|t| t.signature.to_string())
        .collect();
    let n = (1..sig.len())
        .find(|&n| !others.iter().any(|o| o.starts_with(&sig[..n])))
        .unwrap();
    (tx.id, sig[..n].to_string())
}

#[test]
fn slash_finds_a_transaction_in_any_queue_as_you_type() {
    let snap = fixtures::running(300);
    let (id, prefix) = unique_prefix(&snap, Queue::Confirmed, 7);
    let mut a = app();
    a.handle_key(ch('/'), &snap);
    assert_eq!(a.find_query(), Some(""));
    type_text(&mut a, &snap, &prefix);
    assert_eq!(a.find_query(), Some(prefix.as_str()));
    assert_eq!(a.queue(), Queue::Confirmed);
    assert_eq!(a.selected(&snap), 7);
    // Enter keeps the match; the keys are the dashboard's again.
    a.handle_key(key(KeyCode::Enter), &snap);
    assert_eq!(a.find_query(), None);
    assert_eq!(a.queue(), Queue::Confirmed);
    a.handle_key(key(KeyCode::Enter), &snap);
    assert_eq!(a.overlay(), Overlay::Detail(id));
}

#[test]
fn esc_and_a_failed_find_go_back_to_where_the_find_started() {
    let snap = fixtures::running(300);
    let (_, prefix) = unique_prefix(&snap, Queue::Resent, 3);
    let mut a = app();
    a.handle_key(key(KeyCode::Down), &snap);
    a.handle_key(ch('/'), &snap);
    type_text(&mut a, &snap, &prefix);
    assert_eq!(a.queue(), Queue::Resent);
    a.handle_key(key(KeyCode::Esc), &snap);
    assert_eq!((a.queue(), a.selected(&snap)), (Queue::Pending, 1));

    // A character base58 lacks matches nothing: back at the start, prompt still open.
    a.handle_key(ch('/'), &snap);
    type_text(&mut a, &snap, &prefix);
    type_text(&mut a, &snap, "0");
    assert_eq!((a.queue(), a.selected(&snap)), (Queue::Pending, 1));
    assert_eq!(a.find_query(), Some(format!("{prefix}0").as_str()));
    // Backspace edits; past the start it closes the prompt.
    a.handle_key(key(KeyCode::Backspace), &snap);
    assert_eq!(a.queue(), Queue::Resent);
    for _ in 0..=prefix.len() {
        a.handle_key(key(KeyCode::Backspace), &snap);
    }
    assert_eq!(a.find_query(), None);
    assert_eq!((a.queue(), a.selected(&snap)), (Queue::Pending, 1));
    // Keys typed into the prompt never reach the engine or quit.
    a.handle_key(ch('/'), &snap);
    type_text(&mut a, &snap, "pq+");
    assert!(!a.should_quit());
}

#[test]
fn n_and_shift_n_step_through_the_matches_of_the_last_find() {
    let snap = fixtures::running(300);
    // A one-character prefix that several transactions share.
    let first = snap.txs.get(0).unwrap().signature.to_string();
    let prefix = &first[..1];
    let ids: Vec<u32> = snap
        .txs
        .iter()
        .filter(|t| t.signature.to_string().starts_with(prefix))
        .map(|t| t.id)
        .collect();
    assert!(ids.len() >= 3, "{ids:?}");
    let shown = |a: &App| {
        snap.queue_row(a.queue(), a.selected(&snap))
            .map(|t| t.id)
            .unwrap()
    };
    let mut a = app();
    // Without a find, n does nothing.
    a.handle_key(ch('n'), &snap);
    assert_eq!(shown(&a), snap.queue_row(Queue::Pending, 0).unwrap().id);
    a.handle_key(ch('/'), &snap);
    type_text(&mut a, &snap, prefix);
    a.handle_key(key(KeyCode::Enter), &snap);
    let start = shown(&a);
    let i = ids.iter().position(|&id| id == start).unwrap();
    a.handle_key(ch('n'), &snap);
    assert_eq!(shown(&a), ids[(i + 1) % ids.len()]);
    a.handle_key(ch('n'), &snap);
    assert_eq!(shown(&a), ids[(i + 2) % ids.len()]);
    a.handle_key(ch('N'), &snap);
    assert_eq!(shown(&a), ids[(i + 1) % ids.len()]);
    a.handle_key(ch('N'), &snap);
    a.handle_key(ch('N'), &snap);
    assert_eq!(shown(&a), ids[(i + ids.len() - 1) % ids.len()]);
}

#[test]
fn the_docs_key_table_is_the_key_map() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/dashboard.md"))
        .expect("reading docs/dashboard.md");
    let rows: Vec<(String, String)> = page
        .split("\n## Keys\n")
        .nth(1)
        .expect("docs/dashboard.md has a Keys section")
        .lines()
        .skip_while(|l| !l.starts_with("| key |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            (cells[0].to_string(), cells[1].to_string())
        })
        .collect();
    let map: Vec<(String, String)> = txpace::ui::keymap::BINDINGS
        .iter()
        .map(|b| (b.label.to_string(), b.help.to_string()))
        .collect();
    assert_eq!(rows, map);
}

#[test]
fn keys_rebound_in_txpace_toml_drive_the_dashboard_and_its_help() {
    use txpace::ui::keymap::Keymap;
    let rebound = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (pause, quit) = (rebound(&["x"]), rebound(&["Q"]));
    let keymap = Keymap::with_overrides([("pause", &pause[..]), ("quit", &quit[..])]).unwrap();
    let snap = fixtures::running(300);
    let mut a = App::new("t", false).with_keymap(keymap);
    assert_eq!(a.handle_key(ch('x'), &snap), Some(Command::TogglePause));
    assert_eq!(a.handle_key(ch('p'), &snap), None);
    assert_eq!(a.handle_key(ch('q'), &snap), None);
    assert_eq!(a.overlay(), Overlay::None);
    // The rebound quit asks, and answers its own question.
    assert_eq!(a.handle_key(ch('Q'), &snap), None);
    assert_eq!(a.overlay(), Overlay::ConfirmQuit);
    assert_eq!(a.handle_key(ch('Q'), &snap), Some(Command::Stop));

    let b = App::new("t", false)
        .with_keymap(Keymap::with_overrides([("pause", &pause[..]), ("quit", &quit[..])]).unwrap());
    let text = fixtures::render_text(&b, &snap, 160, 48);
    let bar = text.lines().last().unwrap();
    assert!(
        bar.contains(" x  pause") && bar.contains(" Q  quit"),
        "{bar}"
    );
    let mut b = b;
    b.handle_key(ch('?'), &snap);
    let help = fixtures::render_text(&b, &snap, 160, 48);
    assert!(help.contains("│x           pause / resume"), "{help}");
    assert!(
        help.contains("│Q           stop the run and quit"),
        "{help}"
    );
}
