//! The key bar: the bottom line, always there, so nobody has to guess how to quit.
//!
//! ```text
//!  p  pause   +/-  rate   Tab/1-5  queue   ↑/↓  select   Enter  details   ?  help   q  quit
//! ```
//! Built from the key map, so it cannot drift from what the keys do. On a narrow terminal the
//! least needed items go first; help and quit always stay. Once the run is over (or when a
//! finished run's report is viewed) pause and rate steer nothing and are left out.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::Paragraph,
};

use super::{
    keymap::{BAR, Keymap},
    theme::Theme,
};

/// `steerable`: the run still takes pause and pace changes.
pub fn render(frame: &mut Frame, area: Rect, keymap: &Keymap, theme: Theme, steerable: bool) {
    let items: Vec<(String, &str, u8)> = keymap
        .bar_items()
        .into_iter()
        .zip(BAR)
        .filter(|(_, (actions, _, _))| steerable || !actions.iter().any(|a| a.steers_the_run()))
        .map(|(item, _)| item)
        .collect();
    let width = |(keys, word, _): &(String, &str, u8)| keys.chars().count() + word.len() + 5;
    // Drop the least needed items until the rest fit on the line.
    let mut keep: Vec<bool> = vec![true; items.len()];
    let mut total: usize = items.iter().map(width).sum();
    let mut by_prio: Vec<usize> = (0..items.len()).collect();
    by_prio.sort_by_key(|&i| std::cmp::Reverse(items[i].2));
    for i in by_prio {
        if total <= area.width as usize || items[i].2 <= 1 {
            break;
        }
        keep[i] = false;
        total -= width(&items[i]);
    }
    let mut spans = Vec::new();
    for (item, _) in items.iter().zip(&keep).filter(|(_, k)| **k) {
        spans.push(Span::styled(format!(" {} ", item.0), theme.key()));
        spans.push(Span::styled(format!(" {}  ", item.1), theme.plain()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
