//! Leaders: who gets our sends now and next, and how each connection is doing.
//!
//! ```text
//! ┌ Leaders ─────────────────────────────────────────────────────────────────┐
//! │ now 7Np41oeYqPefeNQEHSv1UDhYrehxin3NStELsSKCT4K2  tpu 127.0.0.1:8009       │
//! │     throttled, backing off 800 ms (stream open stalled)                    │
//! │ Slot        Leader        State           Sent   Thr  Conn   T/O  Landed TPU QUIC       │
//! │ 1,232       7Np41oeY…T4K2 backoff 800 ms   812    12     0     0     790 127.0.0.1:8009 │
//! │ 1,236       GdnSyH3Y…PWrv connected         40     0     0     0      12 127.0.0.1:8010 │
//! └──────────────────────────────────────────────────────────────────────────┘
//! ```
//! The current leader is written out in full (people search for it) with its connection
//! state on a line of its own: "why didn't it land?" is most often answered right there. Each
//! row is a leader's window of four slots, named by its first slot. "Sent" counts streams (a
//! send to two leaders is one stream each); Thr, Conn and T/O are the streams the leader
//! throttled, that failed to connect, and that timed out — each backs off differently.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block, Cell, Paragraph, Row, Table},
};

use super::{
    columns::{self, Column},
    fmt,
    theme::Theme,
};
use crate::engine::snapshot::{LeaderView, Snapshot};

/// Display order: Slot, Leader, State, Sent, Thr, Conn, T/O, Landed, TPU QUIC. On a narrow
/// terminal the slot and address go first (the header has the slot and the "now" line the
/// address), then the failure counts (the state says what is failing now).
const COLUMNS: [Column; 9] = [
    Column::fixed(11, 8),
    Column::fixed(13, 0),
    Column::fill(14, 1),
    Column::fixed(7, 2),
    Column::fixed(5, 4),
    Column::fixed(5, 6),
    Column::fixed(5, 5),
    Column::fixed(7, 3),
    Column::fixed(19, 7),
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
    ];
    let head_h = inner.height.min(2);
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
    let (keep, widths) = columns::fit(&COLUMNS, table_area.width, 1);
    let pick = |cells: Vec<Cell<'static>>| -> Vec<Cell<'static>> {
        let mut cells: Vec<Option<Cell>> = cells.into_iter().map(Some).collect();
        keep.iter().filter_map(|&i| cells[i].take()).collect()
    };
    let right = |s: String, style| Cell::from(Line::from(Span::styled(s, style)).right_aligned());
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
            let row = Row::new(pick(vec![
                Cell::from(fmt::count(l.first_slot)),
                Cell::from(fmt::short_key(&l.identity)),
                Cell::from(Span::styled(short_conn(l), theme.conn(&l.conn))),
                right(fmt::count(st.sent), theme.plain()),
                flag(st.throttled, theme.warn()),
                flag(st.connection, theme.bad()),
                flag(st.timeout, theme.bad()),
                right(fmt::count(l.landed), theme.plain()),
                Cell::from(addr(l)),
            ]));
            // The current leader's row stands out: it is the one receiving sends.
            if i == 0 { row.style(theme.bold()) } else { row }
        })
        .collect();
    let h = |s: &'static str| Cell::from(s);
    let hr = |s: &'static str| Cell::from(Line::from(s).right_aligned());
    let header = Row::new(pick(vec![
        h("Slot"),
        h("Leader"),
        h("State"),
        hr("Sent"),
        hr("Thr"),
        hr("Conn"),
        hr("T/O"),
        hr("Landed"),
        h("TPU QUIC"),
    ]))
    .style(theme.dim());
    let table = Table::new(rows, widths).header(header).column_spacing(1);
    frame.render_widget(table, table_area);
}

/// The table's state column is narrow; the full label is on the "now" line and in the log.
fn short_conn(l: &LeaderView) -> String {
    use crate::engine::snapshot::ConnState;
    match &l.conn {
        ConnState::BackingOff { remaining_ms, .. } => format!("backoff {remaining_ms} ms"),
        ConnState::Failed { .. } => "failed".into(),
        ConnState::Silent { for_ms } => format!("no answer {for_ms} ms"),
        other => other.label(),
    }
}
