//! The `?` overlay: every binding of the key map with what it does.
//!
//! ```text
//!        ┌ Keys ─────────────────────────────────────────────┐
//!        │ p, Space   pause / resume sending                   │
//!        │ +          raise the target pace by 10%             │
//!        │ ...                                                 │
//!        │ Esc or ? closes this help                           │
//!        └─────────────────────────────────────────────────────┘
//! ```

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    text::Span,
    widgets::{Block, Cell, Clear, Row, Table},
};

use super::{keymap::BINDINGS, theme::Theme};

pub fn render(frame: &mut Frame, area: Rect, theme: Theme) {
    let h = (BINDINGS.len() as u16 + 2).min(area.height);
    let w = 84.min(area.width);
    let popup = area.centered(Constraint::Length(w), Constraint::Length(h));
    frame.render_widget(Clear, popup);
    let block = Block::bordered()
        .border_style(theme.accent())
        .title(Span::styled(" Keys ", theme.bold()))
        .title_bottom(Span::styled(" Esc or ? closes this help ", theme.dim()));
    let rows = BINDINGS.iter().map(|b| {
        Row::new(vec![
            Cell::from(Span::styled(b.label, theme.bold())),
            Cell::from(b.help),
        ])
    });
    let table = Table::new(rows, [Constraint::Length(10), Constraint::Fill(1)])
        .column_spacing(2)
        .block(block);
    frame.render_widget(table, popup);
}
