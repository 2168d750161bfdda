//! The dashboard as a pure state machine: keys in, commands out, and a frame drawn from the
//! state and one snapshot. Nothing here touches a terminal or a clock, so tests drive it with
//! scripted snapshots and key events and render it into a `TestBackend`.
//!
//! ```text
//! ┌ header (run state, cluster, slot, identity) ─────────────────────────────────┐
//! ├ banner (DONE figures / ENGINE FAILED), only when the run is over ─────────────┤
//! ├ leaders ─────────────────────────────────┬ rate ──────────────────────────────┤
//! ├ queues: tabs + table of the selected queue ───────────────────────────────────┤
//! ├ time to land ───────────────────┬ logs ────────────────────────────────────────┤
//! └ key bar ──────────────────────────────────────────────────────────────────────┘
//! ```
//! Panels drop from the bottom up as the terminal shrinks (logs and latency first, then
//! leaders and rate); the header, queues and key bar stay, and below 60×16 a message replaces
//! the whole.

mod keys;
mod mouse;

use std::cell::Cell;

use ratatui::{
    Frame,
    layout::{Constraint, Layout},
};

use super::{
    banner, confirm, detail,
    find::{self, SigIndex},
    header, help, keybar,
    keymap::Keymap,
    latency, leaders, logs, queues, rate, small,
    theme::Theme,
};
use crate::engine::lifecycle::Queue;
use crate::engine::snapshot::Snapshot;

/// What is drawn over the dashboard, if anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    /// The detail view of the transaction with this id.
    Detail(u32),
    /// "Stop the run?": `q` while transactions are unfinished.
    ConfirmQuit,
}

/// A find being typed, and where to go back to when it is abandoned.
#[derive(Debug)]
struct Finding {
    prompt: find::Prompt,
    queue: Queue,
    selected: [usize; 5],
    /// The id of the transaction selected when `/` was pressed: matches are looked for from it.
    from: u32,
}

/// The dashboard's own state: which queue, which row, which overlay. Everything else comes
/// from the snapshot on each frame.
#[derive(Debug)]
pub struct App {
    title: String,
    /// Shown on the log pane so the user knows where the full log is.
    log_file: Option<String>,
    theme: Theme,
    queue: Queue,
    /// Selected row per queue, so switching tabs and back keeps your place.
    selected: [usize; 5],
    /// First visible row per queue; render keeps it so the selection scrolls smoothly.
    offsets: [Cell<usize>; 5],
    /// Rows the queue table showed last frame, for PgUp/PgDn.
    page: Cell<usize>,
    /// Where the last frame drew tabs and rows, and its size, for the mouse.
    hits: Cell<queues::Hits>,
    area: Cell<ratatui::layout::Rect>,
    overlay: Overlay,
    detail_scroll: u16,
    quit: bool,
    /// The find being typed, if any; it takes every key until Enter or Esc.
    finding: Option<Finding>,
    /// The last find kept with Enter, for `n` and `N`.
    last_find: Option<String>,
    sig_index: SigIndex,
    keymap: Keymap,
}

impl App {
    pub fn new(title: impl Into<String>, no_color: bool) -> Self {
        App {
            title: title.into(),
            log_file: None,
            theme: Theme::new(no_color),
            queue: Queue::Pending,
            selected: [0; 5],
            offsets: Default::default(),
            page: Cell::new(10),
            hits: Cell::default(),
            area: Cell::default(),
            overlay: Overlay::None,
            detail_scroll: 0,
            quit: false,
            finding: None,
            last_find: None,
            sig_index: SigIndex::default(),
            keymap: Keymap::default(),
        }
    }

    /// Uses `keymap` (txpace.toml's `[keys]`) instead of the default keys.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.keymap = keymap;
        self
    }

    /// Draws with `theme` instead of the dark default.
    pub fn with_theme(mut self, theme: Theme) -> Self {
        self.theme = theme;
        self
    }

    /// Names the file the logs are copied to, for the log pane's border.
    pub fn with_log_file(mut self, path: Option<&std::path::Path>) -> Self {
        self.log_file = path.map(|p| p.display().to_string());
        self
    }

    pub fn queue(&self) -> Queue {
        self.queue
    }

    /// The selected row of the current queue, clamped to the queue as `snap` has it.
    pub fn selected(&self, snap: &Snapshot) -> usize {
        self.selected[self.queue as usize].min(snap.queue_len(self.queue).saturating_sub(1))
    }

    pub fn overlay(&self) -> Overlay {
        self.overlay
    }

    /// The find being typed: its query, or `None` when no prompt is open.
    pub fn find_query(&self) -> Option<&str> {
        self.finding.as_ref().map(|f| f.prompt.query.as_str())
    }

    /// The user asked to quit; the caller restores the terminal and returns.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Draws one frame. Costs the same whatever the number of transactions: only visible
    /// rows are read from the snapshot.
    pub fn render(&self, frame: &mut Frame, snap: &Snapshot) {
        let area = frame.area();
        let theme = self.theme;
        self.area.set(area);
        self.hits.set(queues::Hits::default());
        if small::too_small(area) {
            small::render(frame, area, snap, theme);
            return;
        }

        let banner_h = banner::height(snap, area.width).min(area.height / 4);
        let rest = area.height.saturating_sub(header::HEIGHT + 1 + banner_h);
        let bottom_h = if rest >= 9 + 11 + 8 { 9 } else { 0 };
        // The leaders panel: three lines on the current leader, the table's header and five
        // leaders (the fan-out and the next few).
        let mid_h = if rest - bottom_h >= 11 + 8 {
            11
        } else if rest - bottom_h >= 7 + 7 {
            7
        } else {
            0
        };
        let [head, banner_area, mid, table, bottom, bar] = Layout::vertical([
            Constraint::Length(header::HEIGHT),
            Constraint::Length(banner_h),
            Constraint::Length(mid_h),
            Constraint::Fill(1),
            Constraint::Length(bottom_h),
            Constraint::Length(1),
        ])
        .areas(area);

        header::render(frame, head, snap, &self.title, theme);
        if banner_h > 0 {
            banner::render(frame, banner_area, snap, theme);
        }
        if mid_h > 0 {
            let [l, r] =
                Layout::horizontal([Constraint::Percentage(58), Constraint::Fill(1)]).areas(mid);
            leaders::render(frame, l, snap, theme);
            rate::render(frame, r, snap, theme);
        }
        let q = self.queue as usize;
        queues::render(
            frame,
            table,
            snap,
            queues::TableView {
                queue: self.queue,
                selected: self.selected[q],
                offset: &self.offsets[q],
                page: &self.page,
                hits: &self.hits,
            },
            theme,
        );
        if bottom_h > 0 {
            let [l, r] =
                Layout::horizontal([Constraint::Percentage(40), Constraint::Fill(1)]).areas(bottom);
            latency::render(frame, l, snap, theme);
            logs::render(frame, r, self.log_file.as_deref(), theme);
        }
        match &self.finding {
            Some(f) => find::render_prompt(frame, bar, &f.prompt, theme),
            None => keybar::render(frame, bar, &self.keymap, theme, !snap.run.is_over()),
        }

        match self.overlay {
            Overlay::None => {}
            Overlay::Help => help::render(frame, area, &self.keymap, theme),
            Overlay::Detail(id) => detail::render(frame, area, snap, id, self.detail_scroll, theme),
            Overlay::ConfirmQuit => confirm::render(frame, area, snap, theme),
        }
    }
}
