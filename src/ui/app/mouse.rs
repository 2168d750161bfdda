//! The mouse: a click on a queue's tab shows that queue, a click on a row selects it and a
//! click on the selected row opens its details; the wheel moves the selection (over the tabs,
//! it switches queues) and scrolls the detail view. A click outside an overlay closes it.
//! The question before quitting and a find being typed take keys only, so a stray click can
//! neither stop a run nor lose a half-typed find.
//!
//! Where things are comes from the last frame ([`crate::ui::queues::Hits`]): a click lands on
//! what the user saw.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::{App, Overlay};
use crate::engine::lifecycle::Queue;
use crate::engine::snapshot::Snapshot;
use crate::ui::{detail, help};

/// Rows one notch of the wheel moves, as most terminals scroll text.
pub const WHEEL_ROWS: usize = 3;

impl App {
    /// Applies one mouse event; the mouse never sends the engine a command.
    pub fn handle_mouse(&mut self, ev: MouseEvent, snap: &Snapshot) {
        if self.finding.is_some() || self.overlay == Overlay::ConfirmQuit {
            return;
        }
        let (x, y) = (ev.column, ev.row);
        match self.overlay {
            Overlay::Detail(id) => {
                let popup = detail::popup(self.area.get(), snap, id);
                match ev.kind {
                    MouseEventKind::ScrollDown => {
                        self.detail_scroll_by(snap, id, WHEEL_ROWS as i32);
                    }
                    MouseEventKind::ScrollUp => {
                        self.detail_scroll_by(snap, id, -(WHEEL_ROWS as i32));
                    }
                    MouseEventKind::Down(MouseButton::Left) if !contains(popup, x, y) => {
                        self.overlay = Overlay::None;
                    }
                    _ => {}
                }
            }
            Overlay::Help => {
                let popup = help::popup(self.area.get(), &self.keymap);
                if matches!(ev.kind, MouseEventKind::Down(_)) && !contains(popup, x, y) {
                    self.overlay = Overlay::None;
                }
            }
            Overlay::ConfirmQuit => {}
            Overlay::None => self.table_mouse(ev, snap),
        }
    }

    fn table_mouse(&mut self, ev: MouseEvent, snap: &Snapshot) {
        let hits = self.hits.get();
        let (x, y) = (ev.column, ev.row);
        let q = self.queue as usize;
        let len = snap.queue_len(self.queue);
        let sel = self.selected[q].min(len.saturating_sub(1));
        let on_tabs = hits.tabs.height > 0 && y == hits.tabs.y;
        match ev.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp if on_tabs => {
                let step = if ev.kind == MouseEventKind::ScrollDown {
                    1
                } else {
                    4
                };
                self.queue = Queue::ALL[(q + step) % 5];
            }
            MouseEventKind::ScrollDown if contains(hits.panel, x, y) => {
                self.selected[q] = sel.saturating_add(WHEEL_ROWS).min(len.saturating_sub(1));
            }
            MouseEventKind::ScrollUp if contains(hits.panel, x, y) => {
                self.selected[q] = sel.saturating_sub(WHEEL_ROWS);
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(queue) = hits.tab_at(x, y) {
                    self.queue = queue;
                } else if let Some(row) = hits.row_at(x, y, len) {
                    if row == sel {
                        self.open_details(snap, row);
                    }
                    self.selected[q] = row;
                }
            }
            _ => {}
        }
    }

    fn detail_scroll_by(&mut self, snap: &Snapshot, id: u32, by: i32) {
        let max = i32::from(Self::detail_max(snap, id));
        self.detail_scroll = (i32::from(self.detail_scroll) + by).clamp(0, max) as u16;
    }
}

fn contains(r: Rect, x: u16, y: u16) -> bool {
    r.contains(Position { x, y })
}
