//! Rate: the pace asked for next to the pace achieved, and the last minute as a chart.
//!
//! ```text
//! ┌ Rate ────────────────────────────────── ⠶ sent/s  ⠶ confirmed/s ┐
//! │ target 100 tx/s   sending 98.7 tx/s   landing 95.1 tx/s     │
//! │120│        ⢀⡠⠤⠒⠉⠉⠒⠤⣀ ⢀⡠⠔⠒⠒⠤⣀                                 │
//! │   │⣀⡠⠔⠊⠁              ⠉⠁      ⠑⠢⢄⣀                         │
//! │0  └────────────────────────────────────────────────────      │
//! │   -60s                                               now    │
//! └────────────────────────────────────────────────────────────┘
//! ```
//! Target and achieved always appear together: a target alone hides throttling, an achieved
//! rate alone hides that the user asked for more. Under `--rate max` the target reads "max" and
//! the pace the closed loop currently holds is shown as `pacing`, followed by
//! `+ N sent ahead` once transactions have gone ahead of a later leader's turn on top of it.
//! After an outage (no leader took sends for a while, or a first handshake held them), a fixed
//! target is followed by `catching up R tx/s (N owed)`: the faster pace that makes up the sends
//! it held back (`N owed` alone for the half second before it starts).

use ratatui::{
    Frame,
    layout::Rect,
    symbols::Marker,
    text::{Line, Span},
    widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph},
};

use super::{fmt, theme::Theme};
use crate::engine::snapshot::{RateTarget, RunState, Snapshot};

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, theme: Theme) {
    // Without color the series differ by marker; the legend in the border says which is which.
    let (m_sent, m_conf, g_sent, g_conf) = if theme.has_color() {
        (Marker::Braille, Marker::Braille, "⠶", "⠶")
    } else {
        (Marker::Braille, Marker::Dot, "⠶", "•")
    };
    let legend = Line::from(vec![
        Span::styled(format!(" {g_sent} sent/s"), theme.series_sent()),
        Span::raw("  "),
        Span::styled(format!("{g_conf} confirmed/s "), theme.series_confirmed()),
    ]);
    let block = Block::bordered()
        .border_style(theme.border())
        .title(Span::styled(" Rate ", theme.bold()))
        .title_top(legend.right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }

    let r = &snap.rate;
    let mut target = vec![Span::styled("target ", theme.dim())];
    match r.target {
        RateTarget::Fixed(t) => {
            target.push(Span::styled(fmt::rate(t), theme.bold()));
            // Above the target on purpose: say so, or the sending figure reads as a fault.
            if r.owed > 0 && r.pacing > t {
                target.push(Span::styled("  catching up ", theme.dim()));
                target.push(Span::styled(fmt::rate(r.pacing.round()), theme.warn()));
                target.push(Span::styled(format!(" ({} owed)", r.owed), theme.dim()));
            } else if r.owed > 0 {
                // Owed, made up once the sends a leader kept waiting have reached it.
                target.push(Span::styled(format!("  {} owed", r.owed), theme.dim()));
            }
        }
        RateTarget::Max => {
            target.push(Span::styled("max", theme.bold()));
            target.push(Span::styled("  pacing ", theme.dim()));
            target.push(Span::styled(fmt::rate(r.pacing.round()), theme.bold()));
            // Sends ahead of a later leader's turn come on top of the pace: say so, or the
            // sending figure above the pace reads as a fault.
            if r.sent_ahead > 0 {
                target.push(Span::styled(" + ", theme.dim()));
                target.push(Span::styled(fmt::count(r.sent_ahead), theme.bold()));
                target.push(Span::styled(" sent ahead", theme.dim()));
            }
        }
    }
    // While paused the measured rate only decays; say what is happening instead.
    let sending = if snap.run == RunState::Paused {
        vec![
            Span::styled("sending ", theme.dim()),
            Span::styled("paused", theme.warn()),
        ]
    } else {
        vec![
            Span::styled("sending ", theme.dim()),
            Span::styled(fmt::measured(r.achieved), theme.series_sent()),
        ]
    };
    let landing = vec![
        Span::styled("landing ", theme.dim()),
        Span::styled(fmt::measured(r.landing), theme.series_confirmed()),
    ];
    // One line when it fits, else two or three: target and achieved must both stay readable.
    let w = |spans: &[Span]| spans.iter().map(|s| s.width()).sum::<usize>();
    let gap = || Span::raw("   ");
    let avail = inner.width as usize;
    let lines = if w(&target) + w(&sending) + w(&landing) + 6 <= avail {
        vec![Line::from(
            [target, vec![gap()], sending, vec![gap()], landing].concat(),
        )]
    } else if w(&sending) + w(&landing) + 3 <= avail {
        vec![
            Line::from(target),
            Line::from([sending, vec![gap()], landing].concat()),
        ]
    } else {
        vec![Line::from(target), Line::from(sending), Line::from(landing)]
    };
    let text_h = (lines.len() as u16).min(inner.height);
    frame.render_widget(
        Paragraph::new(lines),
        Rect {
            height: text_h,
            ..inner
        },
    );

    let chart_area = Rect {
        y: inner.y + text_h,
        height: inner.height - text_h,
        ..inner
    };
    if chart_area.height < 3 || chart_area.width < 20 {
        return;
    }
    // The engine gives complete seconds only (a second still filling would draw as a dip),
    // so the chart's "now" is the last second that ended, and the first second has no point.
    let hist = &r.history;
    if hist.is_empty() {
        let note = if snap.counts.sends == 0 {
            "no sends yet"
        } else {
            "first second under way"
        };
        frame.render_widget(Paragraph::new(Span::styled(note, theme.dim())), chart_area);
        return;
    }

    let last = hist.last().map(|p| p.second).unwrap_or(0);
    let x0 = last.saturating_sub(59);
    let sent: Vec<(f64, f64)> = hist
        .iter()
        .filter(|p| p.second >= x0)
        .map(|p| ((p.second - x0) as f64, p.sent as f64))
        .collect();
    let confirmed: Vec<(f64, f64)> = hist
        .iter()
        .filter(|p| p.second >= x0)
        .map(|p| ((p.second - x0) as f64, p.confirmed as f64))
        .collect();
    let peak = hist
        .iter()
        .map(|p| p.sent.max(p.confirmed))
        .max()
        .unwrap_or(0)
        .max(1);
    // Round the axis up to a figure that reads well, so it doesn't jitter every second.
    let top = nice_ceiling(peak as u64);

    let datasets = vec![
        Dataset::default()
            .name("sent/s")
            .marker(m_sent)
            .graph_type(GraphType::Line)
            .style(theme.series_sent())
            .data(&sent),
        Dataset::default()
            .name("confirmed/s")
            .marker(m_conf)
            .graph_type(GraphType::Line)
            .style(theme.series_confirmed())
            .data(&confirmed),
    ];
    let chart = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .bounds([0.0, 59.0])
                .labels(["-60s", "now"])
                .style(theme.dim()),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top as f64])
                .labels(["0".to_string(), top.to_string()])
                .style(theme.dim()),
        )
        .legend_position(None);
    frame.render_widget(chart, chart_area);
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k at or above `n`: a round axis top
/// that doesn't waste half the chart.
fn nice_ceiling(n: u64) -> u64 {
    const STEPS: [u64; 10] = [10, 12, 15, 20, 25, 30, 40, 50, 60, 80];
    if n <= 10 {
        return n.max(1);
    }
    let mut base = 1u64; // the axis top is STEPS[i] * base / 10
    loop {
        for s in STEPS {
            let v = s.saturating_mul(base) / 10;
            if v >= n {
                return v;
            }
        }
        if base > u64::MAX / 10 {
            return n;
        }
        base *= 10;
    }
}
