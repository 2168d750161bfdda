//! The link to each leader on screen: the leaders panel with a leader of each verdict, the
//! "now" line's figures, the transaction detail's links, and the header's last minute on the
//! wire.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::{Terminal, backend::TestBackend, layout::Rect};
use txpace::{
    engine::snapshot::{Snapshot, Verdict},
    ui::{App, fixtures, leaders, theme::Theme},
};

/// The leaders panel alone in a `width`×`height` area.
fn panel(snap: &Snapshot, width: u16, height: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(width, height)).expect("a test backend");
    term.draw(|f| leaders::render(f, Rect::new(0, 0, width, height), snap, Theme::new(false)))
        .expect("a test backend");
    fixtures::buffer_text(term.backend().buffer())
}

/// One leader of each verdict and one not measured yet ("–" in every measured column), the
/// current one far with its figures on the "now" line.
#[test]
fn the_leaders_panel_names_each_verdict() {
    let snap = fixtures::link_verdicts(300);
    let text = panel(&snap, 120, 14);
    for v in Verdict::ALL {
        assert!(text.contains(&format!(" {} ", v.label())), "{v:?}:\n{text}");
    }
    assert!(
        text.contains("far · rtt 320 ±41 ms · loss 0.1% of 2,310 · credit waits 0%"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

/// On the dashboard's own panel (58% of 160 columns) the verdict and the link's figures come
/// before the failure counts and the address.
#[test]
fn the_verdict_and_figures_fit_the_dashboards_panel() {
    let snap = fixtures::link_verdicts(300);
    let text = panel(&snap, 92, 11);
    let header = text
        .lines()
        .find(|l| l.contains("Sent"))
        .expect("the table's header");
    for title in ["Link", "State", "Sent", "Landed", "RTT", "Loss", "Wait"] {
        assert!(header.contains(title), "{title} missing: {header}");
    }
    insta::assert_snapshot!(text);
}

/// The header's last minute: the share of streams that waited for credit and the time to land
/// cut into its parts, which add up to it.
#[test]
fn the_header_shows_the_last_minute_on_the_wire() {
    let app = App::new("send 300 txs from txs.b64", false);
    let text = fixtures::render_text(&app, &fixtures::running(300), 160, 48);
    assert!(
        text.contains(
            "last min: credit waits 3.0%  land 1.9 s = queue 0.0 + wire 0.3 + leader 1.1 + \
             confirmation 0.5"
        ),
        "{text}"
    );
    let narrow = fixtures::render_text(&app, &fixtures::running(300), 110, 30);
    assert!(
        narrow.contains("1 min: credit 3.0%  land 1.9 s: q 0.0 w 0.3 l 1.1 c 0.5"),
        "{narrow}"
    );
    // Nothing measured yet: nothing said.
    let empty = fixtures::render_text(&app, &fixtures::empty(), 160, 48);
    assert!(!empty.contains("last min"), "{empty}");
}

/// The transaction detail lists the links to the leaders it was sent to, with their verdicts.
#[test]
fn the_detail_lists_the_links_to_its_leaders() {
    let snap = fixtures::link_verdicts(300);
    let mut app = App::new("send 300 txs from txs.b64", false);
    for c in [KeyCode::Char('2'), KeyCode::Down, KeyCode::Enter] {
        app.handle_key(KeyEvent::new(c, KeyModifiers::NONE), &snap);
    }
    let text = fixtures::render_text(&app, &snap, 160, 48);
    assert!(text.contains("Links to its leaders"), "{text}");
    assert!(text.contains(" · rtt "), "{text}");
    insta::assert_snapshot!(text);
}

/// A leader whose budget another sender on our address shares is named in the header with the
/// way out.
#[test]
fn the_header_names_a_shared_budget_and_the_way_out() {
    let app = App::new("send 300 txs from txs.b64", false);
    let snap = fixtures::shared_budget(300);
    let text = fixtures::render_text(&app, &snap, 160, 48);
    let key = txpace::ui::fmt::short_key(&snap.leaders[3].identity);
    assert!(
        text.contains(&format!(
            "⚠ {key} delays us: budget shared on this address, --bind another"
        )),
        "{text}"
    );
}
