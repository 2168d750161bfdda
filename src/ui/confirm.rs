//! The question `q` asks while transactions are unfinished: a stray key must not end a run
//! that is still landing transactions. Ctrl-C does not ask.
//!
//! ```text
//!        ┌ Stop the run? ────────────────────────────────────────────┐
//!        │ 1,234 transactions are unfinished (1,000 pending, 234       │
//!        │ resent). Stopping ends sending and tracking them; the       │
//!        │ summary and report say where each stood.                    │
//!        │                                                             │
//!        │  y  stop and quit    any other key  keep running            │
//!        └─────────────────────────────────────────────────────────────┘
//! ```

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Block, Clear, Paragraph, Wrap},
};

use super::{fmt, theme::Theme};
use crate::engine::snapshot::Snapshot;

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, theme: Theme) {
    let w = 64.min(area.width);
    let h = 8.min(area.height);
    let popup = area.centered(Constraint::Length(w), Constraint::Length(h));
    frame.render_widget(Clear, popup);
    let c = &snap.counts;
    let block = Block::bordered()
        .border_style(theme.warn())
        .title(Span::styled(" Stop the run? ", theme.warn()));
    let text = vec![
        Line::from(format!(
            "{} transactions are unfinished ({} pending, {} resent). Stopping ends sending \
             and tracking them; the summary and report say where each stood, and a send \
             with a journal continues with --resume.",
            fmt::count(c.pending.saturating_add(c.resent)),
            fmt::count(c.pending),
            fmt::count(c.resent),
        )),
        Line::from(""),
        Line::from(vec![
            Span::styled(" y ", theme.key()),
            Span::raw(" stop and quit    "),
            Span::styled(" any other key ", theme.key()),
            Span::raw(" keep running"),
        ]),
    ];
    frame.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: true }).block(block),
        popup,
    );
}
