//! What a terminal too small for the dashboard shows instead of a mangled one.
//!
//! ```text
//! txpace: terminal 40×10 is too small
//! need at least 60×16
//! RUNNING · 1,450 of 5,000 final · q quits
//! ```
//! The run goes on while the terminal is small, so the one line of state still tells the truth.

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Paragraph, Wrap},
};

use super::{fmt, theme::Theme};
use crate::engine::snapshot::Snapshot;

pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;

pub fn too_small(area: Rect) -> bool {
    area.width < MIN_WIDTH || area.height < MIN_HEIGHT
}

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, theme: Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let lines = vec![
        Line::from(Span::styled(
            format!(
                "txpace: terminal {}×{} is too small",
                area.width, area.height
            ),
            theme.bold(),
        )),
        Line::from(format!("need at least {MIN_WIDTH}×{MIN_HEIGHT}")),
        Line::from(vec![
            Span::styled(snap.run.label(), theme.run_state(&snap.run)),
            Span::raw(format!(
                " · {} of {} final · q quits",
                fmt::count(fmt::finished(&snap.counts)),
                fmt::count(snap.counts.total)
            )),
        ]),
    ];
    let h = (lines.len() as u16).min(area.height);
    let target = area.centered_vertically(Constraint::Length(h));
    frame.render_widget(
        Paragraph::new(lines).centered().wrap(Wrap { trim: true }),
        target,
    );
}
