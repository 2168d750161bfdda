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

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::{
    Frame,
    layout::{Constraint, Layout},
};

use super::{
    banner, detail, header, help, keybar,
    keymap::{self, Action},
    latency, leaders, logs, queues, rate, small,
    theme::Theme,
};
use crate::engine::command::{Command, step_rate};
use crate::engine::lifecycle::Queue;
use crate::engine::snapshot::{RateTarget, Snapshot};

/// What is drawn over the dashboard, if anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    /// The detail view of the transaction with this id.
    Detail(u32),
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
    overlay: Overlay,
    detail_scroll: u16,
    quit: bool,
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
            overlay: Overlay::None,
            detail_scroll: 0,
            quit: false,
        }
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

    /// The user asked to quit; the caller restores the terminal and returns.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Applies one key. Returns the command to send to the engine, if the key asks for one.
    pub fn handle_key(&mut self, key: KeyEvent, snap: &Snapshot) -> Option<Command> {
        let binding = keymap::lookup(&key)?;
        let over = snap.run.is_over();
        match binding.action {
            Action::Quit => {
                self.quit = true;
                return Some(Command::Stop);
            }
            Action::Close => {
                self.overlay = Overlay::None;
                return None;
            }
            Action::Help => {
                self.overlay = match self.overlay {
                    Overlay::Help => Overlay::None,
                    _ => Overlay::Help,
                };
                return None;
            }
            // A finished engine takes no more pace commands; saying nothing beats a command
            // that silently does nothing.
            Action::TogglePause => return (!over).then_some(Command::TogglePause),
            Action::RateUp | Action::RateDown => {
                if over {
                    return None;
                }
                let current = match snap.rate.target {
                    RateTarget::Fixed(r) => r,
                    RateTarget::Max => snap.rate.pacing,
                };
                let up = binding.action == Action::RateUp;
                return Some(Command::SetRate(RateTarget::Fixed(step_rate(current, up))));
            }
            _ => {}
        }

        match self.overlay {
            Overlay::Detail(id) => self.detail_key(binding.action, id, snap),
            Overlay::Help => {
                if binding.action == Action::Details {
                    self.overlay = Overlay::None;
                }
            }
            Overlay::None => self.table_key(binding.action, key, snap),
        }
        None
    }

    fn detail_key(&mut self, action: Action, id: u32, snap: &Snapshot) {
        let max = snap
            .txs
            .get(id as usize)
            .map(detail::line_count)
            .unwrap_or(0)
            .saturating_sub(1)
            .min(u16::MAX as usize) as u16;
        let page = self.page.get().max(1).min(u16::MAX as usize) as u16;
        self.detail_scroll = match action {
            Action::Up => self.detail_scroll.saturating_sub(1),
            Action::Down => self.detail_scroll.saturating_add(1),
            Action::PageUp => self.detail_scroll.saturating_sub(page),
            Action::PageDown => self.detail_scroll.saturating_add(page),
            Action::Home => 0,
            Action::End => max,
            Action::Details => {
                self.overlay = Overlay::None;
                0
            }
            _ => self.detail_scroll,
        }
        .min(max);
    }

    fn table_key(&mut self, action: Action, key: KeyEvent, snap: &Snapshot) {
        let q = self.queue as usize;
        let len = snap.queue_len(self.queue);
        let last = len.saturating_sub(1);
        let sel = self.selected[q].min(last);
        let page = self.page.get().max(1);
        let next = match action {
            Action::NextQueue => {
                self.queue = Queue::ALL[(q + 1) % 5];
                return;
            }
            Action::PrevQueue => {
                self.queue = Queue::ALL[(q + 4) % 5];
                return;
            }
            Action::JumpQueue => {
                if let KeyCode::Char(c @ '1'..='5') = key.code {
                    self.queue = Queue::ALL[(c as u8 - b'1') as usize];
                }
                return;
            }
            Action::Up => sel.saturating_sub(1),
            Action::Down => sel.saturating_add(1),
            Action::PageUp => sel.saturating_sub(page),
            Action::PageDown => sel.saturating_add(page),
            Action::Home => 0,
            Action::End => last,
            Action::Details => {
                if let Some(tx) = snap.queue_row(self.queue, sel) {
                    self.overlay = Overlay::Detail(tx.id);
                    self.detail_scroll = 0;
                }
                sel
            }
            _ => sel,
        };
        self.selected[q] = next.min(last);
    }

    /// Draws one frame. Costs the same whatever the number of transactions: only visible
    /// rows are read from the snapshot.
    pub fn render(&self, frame: &mut Frame, snap: &Snapshot) {
        let area = frame.area();
        let theme = self.theme;
        if small::too_small(area) {
            small::render(frame, area, snap, theme);
            return;
        }

        let banner_h = banner::height(snap, area.width).min(area.height / 4);
        let rest = area.height.saturating_sub(header::HEIGHT + 1 + banner_h);
        let bottom_h = if rest >= 9 + 10 + 8 { 9 } else { 0 };
        let mid_h = if rest - bottom_h >= 10 + 8 {
            10
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
            },
            theme,
        );
        if bottom_h > 0 {
            let [l, r] =
                Layout::horizontal([Constraint::Percentage(40), Constraint::Fill(1)]).areas(bottom);
            latency::render(frame, l, snap, theme);
            logs::render(frame, r, self.log_file.as_deref(), theme);
        }
        keybar::render(frame, bar, theme);

        match self.overlay {
            Overlay::None => {}
            Overlay::Help => help::render(frame, area, theme),
            Overlay::Detail(id) => detail::render(frame, area, snap, id, self.detail_scroll, theme),
        }
    }
}
