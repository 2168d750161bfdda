//! Logs: the engine's `log` records, in the dashboard rather than under it.
//!
//! ```text
//! ┌ Logs ──────────────────────────────────────────────────────┐
//! │ 12:00:01 INFO  leader 7Np41oeY… connected (127.0.0.1:8009)   │
//! │ 12:00:03 WARN  leader 7Np41oeY… throttled, backing off 800 ms │
//! └─────────────────────────────── also in ~/.local/share/txpace/logs/… ┘
//! ```
//! Records reach the pane through tui-logger (see [`crate::logging`]); with no logger
//! installed, as in tests, the pane is simply empty.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::Block,
};
use tui_logger::{TuiLoggerLevelOutput, TuiLoggerWidget};

use super::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, log_file: Option<&str>, theme: Theme) {
    let mut block = Block::bordered()
        .border_style(theme.border())
        .title(Span::styled(" Logs ", theme.bold()));
    if let Some(path) = log_file {
        block = block.title_bottom(
            Line::from(Span::styled(format!(" also in {path} "), theme.dim())).right_aligned(),
        );
    }
    let w = TuiLoggerWidget::default()
        .block(block)
        .output_timestamp(Some("%H:%M:%S".into()))
        .output_level(Some(TuiLoggerLevelOutput::Abbreviated))
        .output_target(false)
        .output_file(false)
        .output_line(false)
        .style(theme.plain())
        .style_error(theme.bad())
        .style_warn(theme.warn())
        .style_info(theme.plain())
        .style_debug(theme.dim())
        .style_trace(theme.dim());
    frame.render_widget(w, area);
}
