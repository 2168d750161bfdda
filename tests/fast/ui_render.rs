//! The dashboard rendered into a `TestBackend` from scripted snapshots, compared as text with
//! insta snapshots, plus properties that must hold at any size.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier};
use std::sync::Arc;

use solana_hash::Hash;
use txpace::engine::{
    self, EngineConfig,
    sim::SimCluster,
    snapshot::{RateTarget, RunState, Snapshot},
};
use txpace::ui::{App, fixtures, keymap};

const W: u16 = 160;
const H: u16 = 48;

fn screen(snap: &Snapshot) -> String {
    fixtures::render_text(&App::new("send 300 txs from txs.b64", false), snap, W, H)
}

fn press(app: &mut App, snap: &Snapshot, codes: &[KeyCode]) {
    for &c in codes {
        app.handle_key(KeyEvent::new(c, KeyModifiers::NONE), snap);
    }
}

#[test]
fn empty() {
    insta::assert_snapshot!(screen(&fixtures::empty()));
}

#[test]
fn running() {
    let snap = fixtures::running(300);
    let text = screen(&snap);
    // What the acceptance check looks for on a real run.
    for name in ["Pending", "Resent", "Confirmed", "Failed", "Expired"] {
        assert!(text.contains(name), "queue {name} missing");
    }
    let leader = snap.leaders[0].identity.to_string();
    assert!(text.contains(&leader[..8]));
    assert!(text.contains("target 100 tx/s"));
    assert!(text.contains("RUNNING"));
    insta::assert_snapshot!(text);
}

#[test]
fn paused() {
    let text = screen(&fixtures::paused(300));
    assert!(text.contains("PAUSED"));
    assert!(text.contains("sending paused"));
    insta::assert_snapshot!(text);
}

#[test]
fn throttled_leader() {
    let text = screen(&fixtures::throttled(300));
    assert!(text.contains("throttled, backing off 800 ms"));
    insta::assert_snapshot!(text);
}

/// A leader whose TPU stopped answering: the "now" line says so and that it gets probes, the
/// table's state column says how long it has been silent, its link column that it is dark.
#[test]
fn a_leader_that_stopped_answering() {
    let text = screen(&fixtures::silent_leader(300));
    assert!(text.contains("no answer 1.6 s"));
    assert!(text.contains(" dark "));
    insta::assert_snapshot!(text);
}

#[test]
fn deploy_phase_and_bytes_in_the_header() {
    let app = App::new("deploy spl_token_2022.so (615,936 bytes)", false);
    let text = fixtures::render_text(&app, &fixtures::deploying(300), W, H);
    assert!(text.contains("phase 2/3 writes"));
    assert!(text.contains("307,968 of 615,936 bytes (50%)"));
    insta::assert_snapshot!(text);
}

#[test]
fn max_rate_shows_pacing() {
    let text = screen(&fixtures::max_rate(300, 240.0));
    assert!(text.contains("target max  pacing 240 tx/s"));
}

#[test]
fn done() {
    let text = screen(&fixtures::done(300));
    assert!(text.contains("DONE"));
    insta::assert_snapshot!(text);
}

/// The reason the engine itself gives when its RPC never answers: the simulated cluster with its
/// RPC down, under tokio's paused clock, so the FAILED banner is checked against the engine's
/// own wording rather than a hand-written sentence.
fn engine_failure_text() -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        let cluster = SimCluster::new(vec![fixtures::pubkey(1)]);
        cluster.set_rpc_down(true);
        let txs = cluster.transactions(3, Hash::new_from_array([7; 32]));
        let mut cfg = EngineConfig::new(fixtures::pubkey(2), "http://127.0.0.1:8899/".into());
        cfg.rate = RateTarget::Fixed(100.0);
        let chain = Arc::new(cluster.clone());
        let out = engine::spawn(cfg, txs, chain.clone(), chain, None)
            .task
            .await
            .expect("the engine task ends");
        match &out.snapshot.run {
            RunState::Failed(why) => why.clone(),
            other => panic!("an RPC that never answers ended the run {other:?}"),
        }
    })
}

#[test]
fn engine_failed() {
    let why = engine_failure_text();
    let text = screen(&fixtures::failed(300, &why));
    assert!(text.contains("ENGINE FAILED"));
    assert!(text.contains("has not answered in 20 s"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn tiny_terminal_shows_a_message() {
    let app = App::new("t", false);
    let text = fixtures::render_text(&app, &fixtures::running(300), 40, 10);
    assert!(text.contains("too small"));
    insta::assert_snapshot!(text);
}

#[test]
fn smallest_dashboard() {
    let app = App::new("send 300 txs from txs.b64", false);
    let text = fixtures::render_text(&app, &fixtures::running(300), 60, 16);
    assert!(!text.contains("too small"));
    assert!(text.contains("Pending"));
    insta::assert_snapshot!(text);
}

#[test]
fn eighty_by_twenty_four() {
    let app = App::new("send 300 txs from txs.b64", false);
    insta::assert_snapshot!(fixtures::render_text(&app, &fixtures::running(300), 80, 24));
}

#[test]
fn resent_queue_scrolled_to_the_end() {
    let snap = fixtures::running(300);
    let mut app = App::new("send 300 txs from txs.b64", false);
    press(&mut app, &snap, &[KeyCode::Tab, KeyCode::End]);
    let text = fixtures::render_text(&app, &snap, W, H);
    let len = snap.queue_len(txpace::engine::lifecycle::Queue::Resent);
    assert!(text.contains(&format!("row {len} of {len}")));
    insta::assert_snapshot!(text);
}

#[test]
fn detail_overlay() {
    let snap = fixtures::running(300);
    let mut app = App::new("send 300 txs from txs.b64", false);
    press(
        &mut app,
        &snap,
        &[KeyCode::Char('2'), KeyCode::Down, KeyCode::Enter],
    );
    let text = fixtures::render_text(&app, &snap, W, H);
    let tx = snap
        .queue_row(txpace::engine::lifecycle::Queue::Resent, 1)
        .unwrap();
    assert!(text.contains(&tx.signature.to_string()), "full signature");
    assert!(text.contains(&format!("Sends ({})", tx.sends)));
    insta::assert_snapshot!(text);
}

/// A transaction whose send log dropped its older entries says how many streams it had and
/// how many are listed.
#[test]
fn detail_of_a_long_resent_transaction_says_what_the_log_left_out() {
    let mut snap = fixtures::running(300);
    let (id, kept) = {
        let tx = snap
            .queue_row(txpace::engine::lifecycle::Queue::Resent, 1)
            .unwrap();
        (tx.id as usize, tx.send_log.len())
    };
    snap.txs
        .get_mut(id)
        .expect("the row's transaction")
        .send_log_dropped = 1_000;
    let mut app = App::new("send 300 txs from txs.b64", false);
    press(
        &mut app,
        &snap,
        &[KeyCode::Char('2'), KeyCode::Down, KeyCode::Enter],
    );
    let text = fixtures::render_text(&app, &snap, W, H);
    let total = txpace::ui::fmt::count(1_000 + kept as u64);
    let want = format!("Sends ({total} streams; the last {kept} shown)");
    assert!(text.contains(&want), "{want} missing:\n{text}");
}

#[test]
fn help_overlay_lists_every_binding() {
    let snap = fixtures::running(300);
    let mut app = App::new("send 300 txs from txs.b64", false);
    press(&mut app, &snap, &[KeyCode::Char('?')]);
    let text = fixtures::render_text(&app, &snap, W, H);
    for b in keymap::BINDINGS {
        assert!(text.contains(b.label), "help lacks {}", b.label);
        assert!(text.contains(b.help), "help lacks {}", b.help);
    }
    insta::assert_snapshot!(text);
}

#[test]
fn q_asks_before_stopping_a_run_with_unfinished_transactions() {
    let snap = fixtures::running(300);
    let mut app = App::new("send 300 txs from txs.b64", false);
    press(&mut app, &snap, &[KeyCode::Char('q')]);
    let text = fixtures::render_text(&app, &snap, W, H);
    let c = &snap.counts;
    assert!(text.contains("Stop the run?"));
    let unfinished = format!("{} transactions are unfinished", c.pending + c.resent);
    assert!(text.contains(&unfinished), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn find_prompt_replaces_the_key_bar_and_shows_the_match() {
    let snap = fixtures::running(300);
    let tx = snap
        .queue_row(txpace::engine::lifecycle::Queue::Confirmed, 4)
        .unwrap();
    let sig = tx.signature.to_string();
    let mut app = App::new("send 300 txs from txs.b64", false);
    let mut keys = vec![KeyCode::Char('/')];
    keys.extend(sig[..6].chars().map(KeyCode::Char));
    press(&mut app, &snap, &keys);
    let text = fixtures::render_text(&app, &snap, W, H);
    let last = text.lines().last().unwrap();
    assert!(last.starts_with(&format!(" / {}▏", &sig[..6])), "{last}");
    assert!(last.contains("match 1 of 1"), "{last}");
    assert!(text.contains("row 5 of"), "the match is selected:\n{text}");
    insta::assert_snapshot!(text);
}

/// Each cell's foreground as one letter: the colors of a frame, reviewable as text.
fn color_map(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            line.push(match c.fg {
                _ if c.symbol() == " " && c.bg == Color::Reset => ' ',
                Color::Reset => '.',
                Color::Indexed(28) => 'g',
                Color::Indexed(130) => 'o',
                Color::Indexed(160) => 'r',
                Color::Indexed(25) => 'b',
                Color::Indexed(242) => 'd',
                Color::Indexed(246) => '-',
                Color::Indexed(231) => 'w',
                _ => '?',
            });
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn light_theme_uses_only_colors_readable_on_white() {
    use txpace::ui::theme::{Theme, ThemeName};
    let light = Theme::pick(ThemeName::Light, false, None);
    assert!(light.is_light());
    let snap = fixtures::throttled(300);
    let mut app = App::new("send 300 txs from txs.b64", false).with_theme(light);
    let buf = fixtures::render_buffer(&app, &snap, 100, 30);
    let map = color_map(&buf);
    assert!(
        !map.contains('?'),
        "a color outside the light palette:\n{map}"
    );
    for washed_out in [Color::Yellow, Color::Cyan, Color::Gray, Color::White] {
        assert!(
            buf.content()
                .iter()
                .all(|c| c.fg != washed_out && c.bg != washed_out)
        );
    }
    insta::assert_snapshot!(map);
    // The overlays too.
    for keys in [
        &[KeyCode::Char('?')][..],
        &[KeyCode::Enter],
        &[KeyCode::Char('q')],
    ] {
        press(&mut app, &snap, keys);
        let map = color_map(&fixtures::render_buffer(&app, &snap, 100, 30));
        assert!(!map.contains('?'), "{keys:?}:\n{map}");
        press(&mut app, &snap, &[KeyCode::Esc]);
    }
}

#[test]
fn auto_theme_follows_colorfgbg_and_no_color_wins() {
    use txpace::ui::theme::{Theme, ThemeName};
    assert!(Theme::pick(ThemeName::Auto, false, Some("0;15")).is_light());
    assert!(Theme::pick(ThemeName::Auto, false, Some("0;default;7")).is_light());
    assert!(!Theme::pick(ThemeName::Auto, false, Some("15;0")).is_light());
    assert!(!Theme::pick(ThemeName::Auto, false, None).is_light());
    assert!(!Theme::pick(ThemeName::Light, true, None).has_color());
    assert!(!Theme::pick(ThemeName::Dark, false, Some("0;15")).is_light());
}

#[test]
fn log_pane_names_the_log_file() {
    let app = App::new("t", false).with_log_file(Some(std::path::Path::new("/tmp/txpace.log")));
    let text = fixtures::render_text(&app, &fixtures::running(10), W, H);
    assert!(text.contains("also in /tmp/txpace.log"));
}

#[test]
fn key_bar_is_always_visible() {
    let snap = fixtures::running(300);
    let app = App::new("t", false);
    for (w, h) in [(60, 16), (80, 24), (160, 48), (250, 70)] {
        let text = fixtures::render_text(&app, &snap, w, h);
        let last = text.lines().last().unwrap_or("");
        assert!(last.contains("q  quit"), "{w}x{h}: {last:?}");
        assert!(!last.contains("find") || w >= 80, "{w}x{h}: {last:?}");
        assert!(last.contains("?  help"), "{w}x{h}: {last:?}");
    }
}

#[test]
fn no_color_means_no_color_and_the_selection_still_shows() {
    let snap = fixtures::throttled(300);
    let app = App::new("t", true);
    let buf = fixtures::render_buffer(&app, &snap, W, H);
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "fg color on {:?}", cell.symbol());
        assert_eq!(cell.bg, Color::Reset, "bg color on {:?}", cell.symbol());
    }
    // The selected row (first of Pending) is drawn reversed.
    let text = fixtures::buffer_text(&buf);
    let sig = txpace::ui::fmt::short_sig(
        &snap
            .queue_row(txpace::engine::lifecycle::Queue::Pending, 0)
            .unwrap()
            .signature,
    );
    let y = text
        .lines()
        .position(|l| l.contains(&sig))
        .expect("selected row on screen") as u16;
    let x = text.lines().nth(y as usize).unwrap().find(&sig).unwrap();
    let x = text.lines().nth(y as usize).unwrap()[..x].chars().count() as u16;
    assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn color_is_used_when_allowed() {
    let buf = fixtures::render_buffer(&App::new("t", false), &fixtures::throttled(300), W, H);
    assert!(buf.content().iter().any(|c| c.fg != Color::Reset));
}

#[test]
fn never_panics_at_any_size_or_content() {
    let snaps = [
        fixtures::empty(),
        fixtures::running(1),
        fixtures::running(300),
        fixtures::throttled(5),
        fixtures::done(3),
        fixtures::failed(0, ""),
        fixtures::failed(2, "line one\nline two\n\n"),
        fixtures::max_rate(2, f64::NAN),
        fixtures::extreme(),
    ];
    let sizes = [
        (0, 0),
        (1, 1),
        (0, 30),
        (30, 0),
        (59, 15),
        (59, 48),
        (160, 15),
        (60, 16),
        (61, 17),
        (70, 20),
        (80, 24),
        (100, 30),
        (160, 48),
        (300, 100),
    ];
    let keysets: [&[KeyCode]; 6] = [
        &[],
        &[KeyCode::End, KeyCode::Enter],
        &[KeyCode::Char('?')],
        &[KeyCode::Char('q')],
        &[KeyCode::Char('/'), KeyCode::Char('2'), KeyCode::Char('0')],
        &[
            KeyCode::Char('3'),
            KeyCode::Enter,
            KeyCode::End,
            KeyCode::PageDown,
        ],
    ];
    for snap in &snaps {
        for keys in keysets {
            let mut app = App::new("x".repeat(300), false);
            press(&mut app, snap, keys);
            for &(w, h) in &sizes {
                fixtures::render_text(&app, snap, w, h);
            }
            // The same app over another run: stale selection and overlay ids must not panic.
            fixtures::render_text(&app, &fixtures::empty(), 160, 48);
        }
    }
}

/// `txpace view`: a finished run's report, read back, draws as the run did when it ended.
#[test]
fn viewed_report() {
    let run = fixtures::done(300);
    let outcome = txpace::engine::RunOutcome {
        commitments: vec![None; run.txs.len()],
        snapshot: Arc::new(run.clone()),
    };
    let report = txpace::report::Report::new(&outcome, &[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("report.json");
    report.write(&path).expect("write");
    let (back, _) = txpace::report::load(&path, None).expect("load");
    let text = fixtures::render_text(
        &App::new("view report.json (read-only)", false),
        &back,
        W,
        H,
    );
    assert!(text.contains("DONE"));
    assert!(
        text.contains(&format!("Confirmed {}", run.counts.confirmed)),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

/// `--via rpc`: the leaders panel names the RPC node the sends go to, not a TPU.
#[test]
fn via_rpc() {
    let mut snap = fixtures::running(300);
    snap.cluster.via_rpc = Some("https://rpc.example.com/***".into());
    let text = screen(&snap);
    assert!(
        text.contains("via rpc https://rpc.example.com/***"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}
