//! The banner between the header and the panels when the run is over: the final figures when
//! it is done or stopped, and the engine's error when it failed.
//!
//! ```text
//! ┌ DONE ─────────────────────────────────────────────────────────────────────────┐
//! │ 5,000 transactions final after 00:01:02: 4,990 confirmed, 3 failed, 7 expired  │
//! │ 5,120 sends (1.03 per landed) · p50 1.6 s · p90 3.2 s · p99 7.9 s · q to quit   │
//! └───────────────────────────────────────────────────────────────────────────────┘
//! ┌ ENGINE FAILED ────────────────────────────────────────────────────────────────┐
//! │ getSlotLeaders failed: connection refused                                      │
//! └ nothing more will be sent · the log pane and log file have details · q quits ──┘
//! ```
//! A failure is a panel of its own, not a word in the header: whoever looks at the screen must
//! not mistake a dead engine for a slow cluster.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block, Paragraph, Wrap},
};

use super::{fmt, theme::Theme};
use crate::engine::snapshot::{RunState, Snapshot};

/// Rows the banner wants at `width`, or 0 when there is nothing to say.
pub fn height(snap: &Snapshot, width: u16) -> u16 {
    match &snap.run {
        RunState::Failed(msg) => {
            let inner = width.saturating_sub(2).max(1) as usize;
            let msg_lines = msg
                .lines()
                .map(|l| l.chars().count().div_ceil(inner).max(1))
                .sum::<usize>()
                .max(1);
            (msg_lines.min(6) + 2) as u16
        }
        RunState::Done | RunState::Stopped => 4,
        _ => 0,
    }
}

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, theme: Theme) {
    match &snap.run {
        RunState::Failed(msg) => {
            // The hint sits in the border so a long message can never push it out of view.
            let block = Block::bordered()
                .border_style(theme.bad())
                .title(Span::styled(" ENGINE FAILED ", theme.bad()))
                .title_bottom(Span::styled(
                    " nothing more will be sent · the log pane and log file have details · q quits ",
                    theme.plain(),
                ));
            let lines: Vec<Line> = msg
                .lines()
                .map(|l| Line::from(Span::styled(l, theme.bad())))
                .collect();
            frame.render_widget(
                Paragraph::new(lines)
                    .block(block)
                    .wrap(Wrap { trim: false }),
                area,
            );
        }
        RunState::Done | RunState::Stopped => {
            let done = matches!(snap.run, RunState::Done);
            let c = &snap.counts;
            let title = if done { " DONE " } else { " STOPPED " };
            let style = if done { theme.ok() } else { theme.warn() };
            let block = Block::bordered().border_style(style).title(Span::styled(
                title,
                style.add_modifier(ratatui::style::Modifier::BOLD),
            ));
            let landed = c.confirmed.saturating_add(c.failed);
            let per_landed = if landed > 0 {
                format!("{:.2} per landed", c.sends as f64 / landed as f64)
            } else {
                "none landed".into()
            };
            let line1 = Line::from(vec![
                Span::styled(
                    format!(
                        "{} of {} transactions final after {}: ",
                        fmt::count(fmt::finished(c)),
                        fmt::count(c.total),
                        fmt::clock(snap.elapsed)
                    ),
                    theme.bold(),
                ),
                Span::styled(format!("{} confirmed", fmt::count(c.confirmed)), theme.ok()),
                Span::raw(", "),
                Span::styled(
                    format!("{} failed", fmt::count(c.failed)),
                    if c.failed > 0 {
                        theme.bad()
                    } else {
                        theme.plain()
                    },
                ),
                Span::raw(", "),
                Span::styled(
                    format!("{} expired", fmt::count(c.expired)),
                    if c.expired > 0 {
                        theme.bad()
                    } else {
                        theme.plain()
                    },
                ),
            ]);
            let lat =
                |d: Option<std::time::Duration>| d.map(fmt::span).unwrap_or_else(|| "-".into());
            let line2 = Line::from(vec![
                Span::raw(format!(
                    "{} sends ({per_landed}) · p50 {} · p90 {} · p99 {} · ",
                    fmt::count(c.sends),
                    lat(snap.latency.p50),
                    lat(snap.latency.p90),
                    lat(snap.latency.p99),
                )),
                Span::styled("q to quit", theme.bold()),
            ]);
            frame.render_widget(Paragraph::new(vec![line1, line2]).block(block), area);
        }
        _ => {}
    }
}
