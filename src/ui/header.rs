//! The header: where we send, how far the chain is, and whether we are sending at all.
//!
//! ```text
//! ┌ txpace · send 5000 txs from x.b64 ─────────────────────────────────────── RUNNING ┐
//! │ cluster http://127.0.0.1:8899/  commitment confirmed  slot 1,234  height 1,200  price 1,000 µL/CU = p35 of recent fees │
//! │ elapsed 00:01:02  identity 7Np41oeY…T4K2 (unstaked)  ⚠ getSlot timed out, retrying  │
//! └─────────────────────────────────────────────────────────────────────────────────────┘
//! ┌ txpace · deploy x.so · phase 2/3 writes · 312,000 of 615,936 bytes (50%) ───── RUNNING ┐
//! ```
//! The run state sits in the border so it stays visible at any width; cluster health is only
//! shown when the engine reports a problem, since silence is the healthy case.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block, Paragraph},
};

use super::{fmt, theme::Theme};
use crate::engine::snapshot::Snapshot;

pub const HEIGHT: u16 = 4;

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, title: &str, theme: Theme) {
    let c = &snap.cluster;
    let state = Span::styled(
        format!(" {} ", snap.run.label()),
        theme.run_state(&snap.run),
    );
    let mut title_spans = vec![
        Span::styled(" txpace ", theme.bold()),
        Span::styled(format!("· {title} "), theme.plain()),
    ];
    // A deploy's phase sits in the border with the title, where the eye goes first.
    if let Some(p) = &snap.phase {
        title_spans.push(Span::styled(
            format!("· phase {}/{} {} ", p.step, p.steps, p.name),
            theme.bold(),
        ));
        title_spans.push(Span::styled(
            format!(
                "· {} of {} bytes ({}%) ",
                fmt::count(p.bytes_done),
                fmt::count(p.bytes_total),
                p.percent()
            ),
            theme.accent(),
        ));
    }
    let block = Block::bordered()
        .border_style(theme.border())
        .title_top(Line::from(title_spans))
        .title_top(Line::from(state).right_aligned());

    // Below ~110 columns the full identity and the long labels don't fit next to the rest.
    let compact = area.width < 112;
    let label = |s: &'static str| Span::styled(s, theme.dim());
    let line1 = Line::from(vec![
        label("cluster "),
        Span::styled(c.rpc_url.clone(), theme.accent()),
        label(if compact { "  " } else { "  commitment " }),
        Span::raw(c.commitment),
        label("  slot "),
        Span::styled(fmt::count(c.slot), theme.bold()),
        label(if compact {
            "  height "
        } else {
            "  block height "
        }),
        Span::styled(fmt::count(c.block_height), theme.bold()),
    ]);
    let mut line1 = line1;
    // Where the batch's price sits among recent fees: in warning colors below their median.
    if let Some(f) = &c.fees {
        let style = if f.below_median() {
            theme.warn()
        } else {
            theme.bold()
        };
        line1.push_span(label("  price "));
        line1.push_span(Span::styled(
            if compact {
                format!("p{}", f.rank(f.batch_price))
            } else {
                format!(
                    "{} µL/CU = p{} of recent fees",
                    fmt::count(f.batch_price),
                    f.rank(f.batch_price)
                )
            },
            style,
        ));
    }
    let staked = match c.staked {
        Some(true) => Span::styled(" (staked)", theme.ok()),
        Some(false) => Span::styled(" (unstaked)", theme.plain()),
        None => Span::styled(" (stake unknown)", theme.dim()),
    };
    let mut l2 = vec![
        label("elapsed "),
        Span::styled(fmt::clock(snap.elapsed), theme.bold()),
        label("  identity "),
        Span::raw(if compact {
            fmt::short_key(&c.identity)
        } else {
            c.identity.to_string()
        }),
        staked,
    ];
    if let Some(h) = &c.health {
        l2.push(Span::styled("  ⚠ ", theme.warn()));
        l2.push(Span::styled(h.clone(), theme.warn()));
    }
    frame.render_widget(
        Paragraph::new(vec![line1, Line::from(l2)]).block(block),
        area,
    );
}
