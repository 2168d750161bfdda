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

use super::{keymap::Keymap, theme::Theme};

/// Where the help is drawn over `area`: a click elsewhere closes it.
pub fn popup(area: Rect, keymap: &Keymap) -> Rect {
    let h = (keymap.rows().len() as u16 + 2).min(area.height);
    let w = 84.min(area.width);
    area.centered(Constraint::Length(w), Constraint::Length(h))
}

pub fn render(frame: &mut Frame, area: Rect, keymap: &Keymap, theme: Theme) {
    let popup = popup(area, keymap);
    frame.render_widget(Clear, popup);
    let block = Block::bordered()
        .border_style(theme.accent())
        .title(Span::styled(" Keys ", theme.bold()))
        .title_bottom(Span::styled(" Esc or ? closes this help ", theme.dim()));
    let rows = keymap.rows().iter().map(|b| {
        Row::new(vec![
            Cell::from(Span::styled(b.label.as_str(), theme.bold())),
            Cell::from(b.help),
        ])
    });
    let table = Table::new(rows, [Constraint::Length(10), Constraint::Fill(1)])
        .column_spacing(2)
        .block(block);
    frame.render_widget(table, popup);
}
