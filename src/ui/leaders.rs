//! Leaders: who gets our sends now and next, how each connection is doing, and the link to
//! each as measured, with its one-word verdict (see `engine::verdict`).
//!
//! ```text
//! ┌ Leaders ─────────────────────────────────────────────────────────────────────────────────┐
//! │ now 7Np41oeYqPefeNQEHSv1UDhYrehxin3NStELsSKCT4K2  tpu 127.0.0.1:8009                       │
//! │     throttled, backing off 800 ms (stream open stalled)                                    │
//! │     far · rtt 320 ±41 ms · loss 0.0% of 1,204 · credit waits 0% · handshake 662 ms · …            │
//! │ Leader        Link     State          Sent  Landed   RTT  Loss  Wait   Thr   T/O  Conn     │
//! │ 7Np41oeY…T4K2 far      backoff 800 ms  812     790   320  0.0%     –    12     0     0     │
//! │ GdnSyH3Y…PWrv ok       connected        40      12     2  0.1%     –     0     0     0     │
//! └──────────────────────────────────────────────────────────────────────────────────────────┘
//! ```
//! The current leader is written out in full (people search for it) with its connection
//! state and its link on lines of their own: "why didn't it land?" is most often answered
//! right there. Each row is a leader's window of four slots. "Link" is the verdict; RTT is
//! quinn's smoothed round trip in ms, Loss the share of datagrams quinn counted lost, Wait the
//! 99th percentile of the streams' waits for stream credit in ms ("–": never measured). "Sent"
//! counts streams (a send to two leaders is one stream each); Thr, T/O and Conn are the
//! streams the leader throttled, that timed out, and that failed to connect — each backs off
//! differently. On a wide terminal the slot and the TPU address join them.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block, Cell, Paragraph, Row},
};

use super::{
    columns::{self, Column, Fit},
    fmt, link,
    theme::Theme,
};
use crate::engine::snapshot::{LeaderView, Snapshot};

/// Display order. On a narrow terminal the verdict and the counts go first, then the link's
/// figures, then the failure counts (the state says what is failing now), and the slot and
/// address last (the header has the slot and the "now" line the address).
const COLUMNS: [Column; 13] = [
    Column::fixed("Slot", 11, 12),
    Column::fixed("Leader", 13, 0),
    Column::fixed("Link", 8, 1),
    Column::fill("State", 14, 2),
    Column::fixed("Sent", 7, 3).right(),
    Column::fixed("Landed", 7, 4).right(),
    Column::fixed("RTT", 5, 5).right(),
    Column::fixed("Loss", 5, 6).right(),
    Column::fixed("Wait", 5, 7).right(),
    Column::fixed("Thr", 5, 8).right(),
    Column::fixed("T/O", 5, 9).right(),
    Column::fixed("Conn", 5, 10).right(),
    Column::fixed("TPU QUIC", 19, 11),
];

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, theme: Theme) {
    let block = Block::bordered()
        .border_style(theme.border())
        .title(Span::styled(" Leaders ", theme.bold()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }

    let Some(now) = snap.leaders.first() else {
        frame.render_widget(
            Paragraph::new(Span::styled("no leader known yet", theme.dim())),
            inner,
        );
        return;
    };

    let addr = |l: &LeaderView| {
        l.tpu_quic
            .map(|a| a.to_string())
            .unwrap_or_else(|| "-".into())
    };
    let full = now.identity.to_string();
    let ident = if inner.width as usize >= 4 + full.len() + 6 + 21 {
        full
    } else {
        fmt::short_key(&now.identity)
    };
    // With --via rpc every send goes to the RPC node, not to a leader's TPU.
    let route = match &snap.cluster.via_rpc {
        Some(url) => vec![
            Span::styled("  via rpc ", theme.dim()),
            Span::raw(url.clone()),
        ],
        None => vec![Span::styled("  tpu ", theme.dim()), Span::raw(addr(now))],
    };
    let mut first = vec![
        Span::styled("now ", theme.dim()),
        Span::styled(ident, theme.bold()),
    ];
    first.extend(route);
    let head = vec![
        Line::from(first),
        Line::from(vec![
            Span::raw("    "),
            Span::styled(now.conn.label(), theme.conn(&now.conn)),
        ]),
        Line::from(vec![
            Span::raw("    "),
            Span::styled(link::summary(&now.link), theme.verdict(now.link.verdict)),
        ]),
    ];
    let head_h = inner.height.min(3);
    frame.render_widget(
        Paragraph::new(head),
        Rect {
            height: head_h,
            ..inner
        },
    );
    let table_area = Rect {
        y: inner.y + head_h,
        height: inner.height - head_h,
        ..inner
    };
    if table_area.height < 2 {
        return;
    }

    let rows_fit = (table_area.height - 1) as usize;
    let fit = Fit::new(&COLUMNS, table_area.width);
    let right = |s: String, style| columns::right(Span::styled(s, style));
    let rows: Vec<Row> = snap
        .leaders
        .iter()
        .take(rows_fit)
        .enumerate()
        .map(|(i, l)| {
            let st = &l.streams;
            let flag = |n: u64, bad| {
                let style = if n == 0 { theme.plain() } else { bad };
                right(fmt::count(n), style)
            };
            let k = &l.link;
            let row = Row::new(fit.pick(vec![
                Cell::from(fmt::count(l.first_slot)),
                Cell::from(fmt::short_key(&l.identity)),
                Cell::from(Span::styled(link::verdict(k), theme.verdict(k.verdict))),
                Cell::from(Span::styled(short_conn(l), theme.conn(&l.conn))),
                right(fmt::count(st.sent), theme.plain()),
                right(fmt::count(l.landed), theme.plain()),
                right(link::ms_cell(k.srtt_ms), theme.plain()),
                right(link::percent(k.loss()), theme.plain()),
                right(link::ms_cell(k.credit_wait_ms_p99), theme.plain()),
                flag(st.throttled, theme.warn()),
                flag(st.timeout, theme.bad()),
                flag(st.connection, theme.bad()),
                Cell::from(addr(l)),
            ]));
            // The current leader's row stands out: it is the one receiving sends.
            if i == 0 { row.style(theme.bold()) } else { row }
        })
        .collect();
    frame.render_widget(fit.table(rows, theme.dim()), table_area);
}

/// The table's state column is narrow; the full label is on the "now" line and in the log.
fn short_conn(l: &LeaderView) -> String {
    use crate::engine::snapshot::ConnState;
    match &l.conn {
        ConnState::BackingOff { remaining_ms, .. } => format!("backoff {remaining_ms} ms"),
        ConnState::Failed { .. } => "failed".into(),
        ConnState::Silent { for_ms } => {
            format!(
                "no answer {}",
                fmt::span(std::time::Duration::from_millis(*for_ms))
            )
        }
        other => other.label(),
    }
}
