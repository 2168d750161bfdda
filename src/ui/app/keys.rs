//! Keys in, commands out. The key map ([`crate::ui::keymap`]) names what each key does; this
//! is where it is done. Two states take keys before the map: a find being typed (every key is
//! text until Enter or Esc) and the "stop the run?" question (y, Enter or the quit key again
//! stops, any other key keeps running).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{App, Finding, Overlay};
use crate::engine::command::{Command, step_rate};
use crate::engine::lifecycle::Queue;
use crate::engine::snapshot::{RateTarget, Snapshot};
use crate::ui::{
    detail,
    find::{self, Prompt},
    keymap::Action,
};

impl App {
    /// Applies one key. Returns the command to send to the engine, if the key asks for one.
    pub fn handle_key(&mut self, key: KeyEvent, snap: &Snapshot) -> Option<Command> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        // The force-quit key (Ctrl-C) works everywhere; typed into a find, a plain key is
        // text, whatever the key map says.
        let binding = self.keymap.lookup(&key).map(|b| b.action);
        let force =
            binding == Some(Action::ForceQuit) && key.modifiers.contains(KeyModifiers::CONTROL);
        if force {
            return self.stop();
        }
        if self.finding.is_some() {
            self.find_key(key, snap);
            return None;
        }
        if self.overlay == Overlay::ConfirmQuit {
            self.overlay = Overlay::None;
            // Yes is y, Enter, or the quit key again.
            let yes = matches!(key.code, KeyCode::Char('y' | 'Y') | KeyCode::Enter)
                || binding == Some(Action::Quit);
            return if yes { self.stop() } else { None };
        }
        let action = binding?;
        let over = snap.run.is_over();
        match action {
            Action::ForceQuit => return self.stop(),
            Action::Quit => {
                let unfinished = snap.counts.pending.saturating_add(snap.counts.resent);
                if over || unfinished == 0 {
                    return self.stop();
                }
                self.overlay = Overlay::ConfirmQuit;
                return None;
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
                let up = action == Action::RateUp;
                return Some(Command::SetRate(RateTarget::Fixed(step_rate(current, up))));
            }
            _ => {}
        }

        match self.overlay {
            Overlay::Detail(id) => self.detail_key(action, id, snap),
            Overlay::Help => {
                if action == Action::Details {
                    self.overlay = Overlay::None;
                }
            }
            Overlay::ConfirmQuit => {}
            Overlay::None => self.table_key(action, key, snap),
        }
        None
    }

    fn stop(&mut self) -> Option<Command> {
        self.quit = true;
        Some(Command::Stop)
    }

    /// The furthest the detail view of `id` scrolls.
    pub(super) fn detail_max(snap: &Snapshot, id: u32) -> u16 {
        snap.txs
            .get(id as usize)
            .map(detail::line_count)
            .unwrap_or(0)
            .saturating_sub(1)
            .min(u16::MAX as usize) as u16
    }

    fn detail_key(&mut self, action: Action, id: u32, snap: &Snapshot) {
        let max = Self::detail_max(snap, id);
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
            Action::Find => {
                self.finding = Some(Finding {
                    prompt: Prompt::default(),
                    queue: self.queue,
                    selected: self.selected,
                    from: self.selected_id(snap).unwrap_or(0),
                });
                return;
            }
            Action::FindNext | Action::FindPrev => {
                self.find_again(snap, action == Action::FindNext);
                return;
            }
            Action::Up => sel.saturating_sub(1),
            Action::Down => sel.saturating_add(1),
            Action::PageUp => sel.saturating_sub(page),
            Action::PageDown => sel.saturating_add(page),
            Action::Home => 0,
            Action::End => last,
            Action::Details => {
                self.open_details(snap, sel);
                sel
            }
            _ => sel,
        };
        self.selected[q] = next.min(last);
    }

    /// Opens the detail view of row `row` of the current queue, if there is such a row.
    pub(super) fn open_details(&mut self, snap: &Snapshot, row: usize) {
        if let Some(tx) = snap.queue_row(self.queue, row) {
            self.overlay = Overlay::Detail(tx.id);
            self.detail_scroll = 0;
        }
    }

    /// The id of the selected transaction, if the current queue has any.
    fn selected_id(&self, snap: &Snapshot) -> Option<u32> {
        snap.queue_row(self.queue, self.selected(snap))
            .map(|tx| tx.id)
    }

    /// Shows transaction `id`: its queue, and its row selected there.
    fn show(&mut self, snap: &Snapshot, id: u32) {
        if let Some((queue, row)) = find::locate(snap, id) {
            self.queue = queue;
            self.selected[queue as usize] = row;
        }
    }

    /// A key while a find is typed: text edits the query and jumps to its first match from
    /// where the find started; Enter keeps the match, Esc (or deleting past the start) goes
    /// back to where the find started.
    fn find_key(&mut self, key: KeyEvent, snap: &Snapshot) {
        let Some(f) = self.finding.as_mut() else {
            return;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => {
                let query = std::mem::take(&mut f.prompt.query);
                self.finding = None;
                if !query.is_empty() {
                    self.last_find = Some(query);
                }
                return;
            }
            KeyCode::Esc => return self.abandon_find(),
            KeyCode::Backspace if f.prompt.query.is_empty() => return self.abandon_find(),
            KeyCode::Backspace => {
                f.prompt.query.pop();
            }
            KeyCode::Char('u') if ctrl => f.prompt.query.clear(),
            KeyCode::Char(c) if !ctrl && !c.is_whitespace() => f.prompt.query.push(c),
            _ => return,
        }
        let (query, from) = (f.prompt.query.clone(), f.from);
        let matches = self.sig_index.find_all(snap, &query);
        let shown = find::pick(&matches, from, true);
        if let Some(f) = self.finding.as_mut() {
            f.prompt.found = matches.len();
            f.prompt.shown = shown;
            // Back where the find started until something matches, as `less` and vim do.
            self.queue = f.queue;
            self.selected = f.selected;
        }
        if let Some(i) = shown {
            self.show(snap, matches[i]);
        }
    }

    fn abandon_find(&mut self) {
        if let Some(f) = self.finding.take() {
            self.queue = f.queue;
            self.selected = f.selected;
        }
    }

    /// `n` / `N`: the next or previous match of the last find after the selected transaction.
    fn find_again(&mut self, snap: &Snapshot, forward: bool) {
        let Some(query) = self.last_find.clone() else {
            return;
        };
        let matches = self.sig_index.find_all(snap, &query);
        let current = self.selected_id(snap);
        let from = match (current, forward) {
            (Some(id), true) => id.saturating_add(1),
            (Some(id), false) => id.saturating_sub(1),
            (None, _) => 0,
        };
        // Going back from the first transaction wraps to the last match.
        let from = if !forward && current == Some(0) {
            u32::MAX
        } else {
            from
        };
        if let Some(i) = find::pick(&matches, from, forward) {
            self.show(snap, matches[i]);
        }
    }
}
