//! Time to land: percentiles and the shape of the distribution.
//!
//! ```text
//! ┌ Time to land ─────────────────────────────────┐
//! │ p50 1.6 s   p90 3.2 s   p99 7.9 s               │
//! │          ███                                    │
//! │     ███  ███  ███                               │
//! │ ███ ███  ███  ███  ███  ▂▂▂                     │
//! │ 120 900 1400  610  180   22   3                 │
//! │ 400ms 800ms 1.6s 3.2s 6.4s 12s >12s             │
//! └─────────────────────────────────────────────────┘
//! ```
//! Percentiles alone hide a second hump (the transactions that needed a resend); the
//! histogram shows it.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Bar, BarChart, BarGroup, Block, Paragraph},
};

use super::{fmt, theme::Theme};
use crate::engine::snapshot::Snapshot;

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, theme: Theme) {
    let block = Block::bordered()
        .border_style(theme.border())
        .title(Span::styled(" Time to land ", theme.bold()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let l = &snap.latency;
    let pct = |name: &'static str, v: Option<std::time::Duration>| {
        vec![
            Span::styled(name, theme.dim()),
            Span::styled(v.map(fmt::span).unwrap_or_else(|| "-".into()), theme.bold()),
        ]
    };
    let mut spans = pct("p50 ", l.p50);
    spans.push(Span::raw("   "));
    spans.extend(pct("p90 ", l.p90));
    spans.push(Span::raw("   "));
    spans.extend(pct("p99 ", l.p99));
    frame.render_widget(
        Paragraph::new(Line::from(spans)),
        Rect { height: 1, ..inner },
    );

    let area = Rect {
        y: inner.y + 1,
        height: inner.height - 1,
        ..inner
    };
    let hist = &l.histogram;
    if area.height < 3 || hist.is_empty() {
        return;
    }
    if hist.iter().all(|&c| c == 0) {
        frame.render_widget(
            Paragraph::new(Span::styled("nothing landed yet", theme.dim())),
            area,
        );
        return;
    }

    let n = hist.len() as u16;
    let gap = 1u16;
    // Fit every bucket: bars as wide as the area allows, down to one column each.
    let width = (area.width.saturating_sub(gap * n.saturating_sub(1)) / n.max(1)).clamp(1, 7);
    let bars: Vec<Bar> = hist
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            Bar::default()
                .value(count)
                .text_value(compact(count))
                .label(Line::from(bucket_label(&l.bounds_ms, i)))
        })
        .collect();
    let chart = BarChart::default()
        .data(BarGroup::default().bars(&bars))
        .bar_width(width)
        .bar_gap(gap)
        .bar_style(theme.accent())
        .value_style(theme.selected())
        .label_style(theme.dim());
    frame.render_widget(chart, area);
}

/// Bucket `i` holds `[bounds[i-1], bounds[i])`; past the last bound it is open-ended.
fn bucket_label(bounds: &[u64], i: usize) -> String {
    match bounds.get(i) {
        Some(&b) => format!("<{}", fmt::bound_ms(b)),
        None => match bounds.last() {
            Some(&b) => format!(">{}", fmt::bound_ms(b)),
            None => "all".into(),
        },
    }
}

/// Bar values are printed inside bars only a few columns wide.
fn compact(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{}k", n / 1_000),
        _ => format!("{}M", n / 1_000_000),
    }
}
