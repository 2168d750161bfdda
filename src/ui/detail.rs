//! The Enter overlay: everything known about one transaction, to answer "why didn't it land?".
//!
//! ```text
//!   ┌ Transaction #12 ── sent 3 times ──────────────────────────────────────────┐
//!   │ Signature   5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgm…      │
//!   │ Origin      txs.b64:13                                                     │
//!   │ State       resent   first sent +1.200 s   last sent +9.400 s              │
//!   │ Landed      not yet                                                        │
//!   │ Price       1,000 µL/CU, limit 1,000 CU · p35 of recent fees (median 800)   │
//!   │ Expiry      valid through block height 1,350 (150 blocks left)             │
//!   │ Last error  stream stopped by peer                                         │
//!   │                                                                            │
//!   │ Sends (3)                                                                  │
//!   │   +1.200 s  7Np41oeY…T4K2  127.0.0.1:8009  ok in 2 ms                      │
//!   │   +5.300 s  GdnSyH3Y…PWrv  127.0.0.1:8010  stream stopped by peer (3 ms)   │
//!   │ Links to its leaders (2)                                                   │
//!   │   7Np41oeY…T4K2  far · rtt 320 ±41 ms · loss 0.0% of 1,204 · credit waits 0% …    │
//!   │   GdnSyH3Y…PWrv  ok · rtt 2 ±1 ms · loss 0.1% of 2,310 · credit waits 0% · … │
//!   │ Status history (2)                                                         │
//!   │   +1.200 s  sent                                                           │
//!   └──────────────────────────────────────────── ↑↓ scroll · Esc close ────────┘
//! ```
//! The overlay follows the transaction by id, not by row, so it stays on the same transaction
//! while it moves between queues under it.

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Block, Clear, Paragraph, Wrap},
};

use super::{fmt, link, theme::Theme};
use crate::engine::snapshot::{Snapshot, TxView};

/// Lines before the send log: fields, a blank line and the "Sends" heading.
const FIXED_LINES: usize = 9;

/// How many lines the overlay's text has, so scrolling can stop at its end.
pub fn line_count(tx: &TxView) -> usize {
    FIXED_LINES
        + tx.send_log.len().max(1)
        + 1
        + tx.sent_to.len().max(1)
        + 1
        + tx.history.len().max(1)
}

/// Where the overlay of transaction `id` is drawn over `area`.
pub fn popup(area: Rect, snap: &Snapshot, id: u32) -> Rect {
    let w = (area.width.saturating_sub(4)).min(120);
    let content = snap.txs.get(id as usize).map(line_count).unwrap_or(1);
    let h = (content.min(u16::MAX as usize - 2) as u16 + 2).min(area.height.saturating_sub(2));
    area.centered(Constraint::Length(w), Constraint::Length(h))
}

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, id: u32, scroll: u16, theme: Theme) {
    let popup = popup(area, snap, id);
    frame.render_widget(Clear, popup);

    let Some(tx) = snap.txs.get(id as usize) else {
        let block = Block::bordered().border_style(theme.accent());
        frame.render_widget(
            Paragraph::new(format!("transaction #{id} is not in this snapshot")).block(block),
            popup,
        );
        return;
    };

    let sends = match tx.sends {
        1 => "sent once".to_string(),
        n => format!("sent {n} times"),
    };
    let block = Block::bordered()
        .border_style(theme.accent())
        .title(Span::styled(
            format!(" Transaction #{} ", tx.id),
            theme.bold(),
        ))
        .title(Span::styled(format!(" {sends} "), theme.plain()))
        .title_bottom(
            Line::from(Span::styled(" ↑↓ scroll · Esc close ", theme.dim())).right_aligned(),
        );

    let lines = lines(tx, snap, theme);
    let inner_h = block.inner(popup).height as usize;
    let max_scroll = lines.len().saturating_sub(inner_h) as u16;
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((scroll.min(max_scroll), 0)),
        popup,
    );
}

fn lines<'a>(tx: &'a TxView, snap: &Snapshot, theme: Theme) -> Vec<Line<'a>> {
    let field = |name: &'static str, value: Vec<Span<'a>>| {
        let mut spans = vec![Span::styled(format!("{name:<12}"), theme.dim())];
        spans.extend(value);
        Line::from(spans)
    };
    let opt_at = |d: Option<std::time::Duration>| d.map(fmt::at).unwrap_or_else(|| "-".into());
    let mut out = Vec::with_capacity(line_count(tx));
    out.push(field(
        "Signature",
        vec![Span::styled(tx.signature.to_string(), theme.bold())],
    ));
    out.push(field("Origin", vec![Span::raw(tx.origin.to_string())]));
    out.push(field(
        "State",
        vec![
            Span::styled(tx.state.label(), theme.tx_state(tx.state)),
            Span::styled("   first sent ", theme.dim()),
            Span::raw(opt_at(tx.first_sent)),
            Span::styled("   last sent ", theme.dim()),
            Span::raw(opt_at(tx.last_sent)),
        ],
    ));
    let mut landed = match (tx.landed_slot, tx.time_to_land) {
        (Some(slot), Some(t)) => format!("slot {} after {}", fmt::count(slot), fmt::span(t)),
        (Some(slot), None) => format!("slot {}", fmt::count(slot)),
        (None, _) => "not yet".into(),
    };
    if let Some(leader) = tx
        .landed_leader
        .as_deref()
        .filter(|_| tx.landed_slot.is_some())
    {
        landed.push_str(&format!(", leader {}", fmt::short_key(leader)));
    }
    out.push(field("Landed", vec![Span::raw(landed)]));
    out.push(field("Price", price(tx, snap, theme)));
    let expiry = match tx.last_valid_block_height {
        Some(h) if tx.last_valid_exact => {
            let left = h.saturating_sub(snap.cluster.block_height);
            format!(
                "valid through block height {} ({} blocks left)",
                fmt::count(h),
                fmt::count(left)
            )
        }
        Some(h) => {
            let left = h.saturating_sub(snap.cluster.block_height);
            format!(
                "valid through block height {} at most (≤{} blocks left; an estimate: the \
                 cluster has not named this blockhash's height)",
                fmt::count(h),
                fmt::count(left)
            )
        }
        None if tx.durable_nonce => "durable nonce: does not expire by blockhash".into(),
        None => "not learned yet (the first validity check is pending)".into(),
    };
    out.push(field("Expiry", vec![Span::raw(expiry)]));
    out.push(field(
        "Last error",
        vec![match tx.last_error.as_deref() {
            Some(e) => Span::styled(e, theme.bad()),
            None => Span::styled("none", theme.dim()),
        }],
    ));
    out.push(Line::default());

    let streams = tx.send_log_dropped + tx.send_log.len() as u64;
    let title = if tx.send_log_dropped == 0 {
        format!("Sends ({streams})")
    } else {
        format!(
            "Sends ({} streams; the last {} shown)",
            fmt::count(streams),
            tx.send_log.len()
        )
    };
    out.push(Line::from(Span::styled(title, theme.bold())));
    if tx.send_log.is_empty() {
        out.push(Line::from(Span::styled("  never sent", theme.dim())));
    }
    for s in tx.send_log.iter() {
        let addr = s.addr.map(|a| a.to_string()).unwrap_or_else(|| "-".into());
        out.push(Line::from(vec![
            Span::raw(format!("  {:>12}  ", fmt::at(s.at))),
            Span::raw(s.leader.to_string()),
            Span::raw(format!("  {addr:<21}  ")),
            match (s.outcome, &s.error, s.ack_ms) {
                (None, _, _) => Span::styled("in flight", theme.dim()),
                (Some(_), Some(e), Some(ms)) => Span::styled(format!("{e} ({ms} ms)"), theme.bad()),
                (Some(_), Some(e), None) => Span::styled(e.clone(), theme.bad()),
                (Some(_), None, Some(ms)) => Span::styled(format!("ok in {ms} ms"), theme.ok()),
                (Some(_), None, None) => Span::styled("ok", theme.ok()),
            },
        ]));
    }

    links(&mut out, tx, snap, theme);

    out.push(Line::from(Span::styled(
        format!("Status history ({})", tx.history.len()),
        theme.bold(),
    )));
    if tx.history.is_empty() {
        out.push(Line::from(Span::styled("  no changes yet", theme.dim())));
    }
    for h in tx.history.iter() {
        let mut spans = vec![
            Span::raw(format!("  {:>12}  ", fmt::at(h.at))),
            Span::styled(format!("{:<10}", h.state.label()), theme.tx_state(h.state)),
        ];
        if let Some(note) = &h.note {
            spans.push(Span::raw(note.clone()));
        }
        out.push(Line::from(spans));
    }
    out
}

/// The links to the leaders it was sent to, as measured over the run, with their verdicts.
fn links<'a>(out: &mut Vec<Line<'a>>, tx: &TxView, snap: &Snapshot, theme: Theme) {
    out.push(Line::from(Span::styled(
        format!("Links to its leaders ({})", tx.sent_to.len()),
        theme.bold(),
    )));
    if tx.sent_to.is_empty() {
        out.push(Line::from(Span::styled("  none yet", theme.dim())));
    }
    for leader in tx.sent_to.iter() {
        let measured = snap.leader_totals.iter().find(|l| l.identity == *leader);
        let (text, style) = match measured {
            Some(l) => (link::summary(&l.link), theme.verdict(l.link.verdict)),
            None => (link::UNKNOWN.to_string(), theme.dim()),
        };
        out.push(Line::from(vec![
            Span::raw(format!("  {}  ", fmt::short_key(leader))),
            Span::styled(text, style),
        ]));
    }
}

/// Its compute budget, and where its price sits among recent fees for the batch's accounts.
fn price<'a>(tx: &TxView, snap: &Snapshot, theme: Theme) -> Vec<Span<'a>> {
    let limit = tx
        .cu_limit
        .map(|l| format!(", limit {} CU", fmt::count(u64::from(l))))
        .unwrap_or_default();
    let Some(price) = tx.cu_price else {
        return vec![Span::raw(format!("none set (no priority fee){limit}"))];
    };
    let mut spans = vec![Span::raw(format!("{} µL/CU{limit}", fmt::count(price)))];
    if let Some(f) = &snap.cluster.fees {
        let rank = f.rank(price);
        let style = if price < f.median() {
            theme.warn()
        } else {
            theme.plain()
        };
        spans.push(Span::styled(
            format!(
                " · p{rank} of recent fees (median {})",
                fmt::count(f.median())
            ),
            style,
        ));
    }
    spans
}
