//! Queues: five tabs with their counts and a table of the selected queue.
//!
//! ```text
//! ┌ Queues · 5,000 txs · 5,120 sends · 12 send errors ──────────────── row 12 of 3,400 ┐
//! │ 1 Pending 3,400 │ 2 Resent 120 │ 3 Confirmed 1,450 │ 4 Failed 3 │ 5 Expired 27        │
//! │      # Signature      State     Sends Age     Blocks left Landed in Last leader  Last error│
//! │     11 5VERv8NM…SkQU  sent          1 2.1 s           148           GdnSyH3Y…PWrv         ▲│
//! │     12 3xq5cM2a…9Lwd  resent        3 6.0 s           131           7Np41oeY…T4K2 timeout █│
//! └─────────────────────────────────────────────────────────────────────────────────────┘
//! ```
//! Only the rows on screen are fetched (`Snapshot::queue_row`, O(log n) each) and the tab
//! counts come from the engine's counters, so a frame costs the same at 1,000 and 1,000,000
//! transactions.

use std::{cell::Cell, time::Duration};

use ratatui::{
    Frame,
    layout::{Margin, Rect},
    text::{Line, Span},
    widgets::{
        Block, Cell as TCell, Paragraph, Row, Scrollbar, ScrollbarOrientation, ScrollbarState,
        TableState,
    },
};

use super::{
    columns::{self, Column, Fit},
    fmt,
    theme::Theme,
};
use crate::engine::lifecycle::Queue;
use crate::engine::snapshot::{Snapshot, TxView};

/// Display order: #, Signature, State, Sends, Age, Blocks left, Landed in, Last leader, Last
/// error. On a narrow terminal the signature, state, sends and error stay longest: they are
/// what tells a stuck transaction from a lost one.
const COLUMNS: [Column; 9] = [
    Column::fixed("#", 7, 6).right(),
    Column::fixed("Signature", 13, 0),
    Column::fixed("State", 9, 1),
    Column::fixed("Sends", 5, 2).right(),
    Column::fixed("Age", 8, 4).right(),
    Column::fixed("Blocks left", 11, 5).right(),
    Column::fixed("Landed in", 9, 8).right(),
    Column::fixed("Last leader", 13, 7),
    Column::fill("Last error", 10, 3),
];

/// What the table needs from the app: the selection it keeps, and where it scrolled to last
/// frame (kept so scrolling is smooth instead of paging).
pub struct TableView<'a> {
    pub queue: Queue,
    pub selected: usize,
    pub offset: &'a Cell<usize>,
    /// Rows visible last frame, for PgUp/PgDn.
    pub page: &'a Cell<usize>,
    /// Where the tabs and rows were drawn, for the mouse.
    pub hits: &'a Cell<Hits>,
}

/// Where the last frame drew what a click can pick: each queue's tab and the table's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hits {
    /// The line of tabs; empty when the table had no room for it.
    pub tabs: Rect,
    /// Each queue's tab as a column range `[start, end)` on that line.
    pub tab_columns: [(u16, u16); 5],
    /// The whole queue panel, border included: scrolling over it moves the selection.
    pub panel: Rect,
    /// The rows of transactions, header excluded, and the queue row drawn on the first.
    pub rows: Rect,
    pub offset: usize,
}

impl Hits {
    /// The queue whose tab is at (x, y).
    pub fn tab_at(&self, x: u16, y: u16) -> Option<Queue> {
        if y != self.tabs.y || self.tabs.height == 0 {
            return None;
        }
        let i = self
            .tab_columns
            .iter()
            .position(|&(a, b)| (a..b).contains(&x))?;
        Some(Queue::ALL[i])
    }

    /// The queue row at (x, y), if a row is drawn there.
    pub fn row_at(&self, x: u16, y: u16, len: usize) -> Option<usize> {
        let r = self.rows;
        if !(r.x..r.x + r.width).contains(&x) || !(r.y..r.y + r.height).contains(&y) {
            return None;
        }
        let row = self.offset + (y - r.y) as usize;
        (row < len).then_some(row)
    }
}

pub fn render(frame: &mut Frame, area: Rect, snap: &Snapshot, view: TableView, theme: Theme) {
    let len = snap.queue_len(view.queue);
    let sel = view.selected.min(len.saturating_sub(1));
    let position = if len == 0 {
        "empty".to_string()
    } else {
        format!(
            "row {} of {}",
            fmt::count(sel as u64 + 1),
            fmt::count(len as u64)
        )
    };
    let c = &snap.counts;
    let errs = if c.send_errors > 0 {
        theme.bad()
    } else {
        theme.dim()
    };
    let block = Block::bordered()
        .border_style(theme.border())
        .title(Line::from(vec![
            Span::styled(" Queues ", theme.bold()),
            Span::styled(
                format!(
                    "· {} txs · {} sends · ",
                    fmt::count(c.total),
                    fmt::count(c.sends)
                ),
                theme.dim(),
            ),
            Span::styled(
                format!("{} reached no leader ", fmt::count(c.send_errors)),
                errs,
            ),
        ]))
        .title_top(Line::from(format!(" {position} ")).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut hits = Hits {
        panel: area,
        ..Hits::default()
    };
    view.hits.set(hits);
    if inner.height == 0 || inner.width == 0 {
        return;
    }

    hits.tabs = Rect { height: 1, ..inner };
    hits.tab_columns = render_tabs(frame, hits.tabs, snap, view.queue, theme);
    view.hits.set(hits);
    let table_area = Rect {
        y: inner.y + 1,
        height: inner.height - 1,
        ..inner
    };
    if table_area.height < 2 {
        return;
    }
    let visible = (table_area.height - 1) as usize;
    view.page.set(visible);

    let mut offset = view.offset.get();
    if sel < offset {
        offset = sel;
    } else if sel >= offset + visible {
        offset = sel + 1 - visible;
    }
    offset = offset.min(len.saturating_sub(visible));
    view.offset.set(offset);
    hits.rows = Rect {
        y: table_area.y + 1,
        height: table_area.height - 1,
        ..table_area
    };
    hits.offset = offset;
    view.hits.set(hits);

    if len == 0 {
        let msg = format!("no {} transactions", view.queue.name().to_lowercase());
        frame.render_widget(
            Paragraph::new(Span::styled(msg, theme.dim())),
            Rect {
                y: table_area.y + 1,
                height: 1,
                ..table_area
            },
        );
    }

    let fit = Fit::new(&COLUMNS, table_area.width);
    let block_height = snap.cluster.block_height;
    let rows: Vec<Row> = (offset..(offset + visible).min(len))
        .filter_map(|row| snap.queue_row(view.queue, row).map(|tx| (row, tx)))
        .map(|(row, tx)| Row::new(fit.pick(tx_cells(row, tx, snap.elapsed, block_height, theme))))
        .collect();

    let table = fit
        .table(rows, theme.dim())
        .row_highlight_style(theme.selected());
    let mut state = TableState::default();
    if len > 0 {
        state.select(Some(sel - offset));
    }
    frame.render_stateful_widget(table, table_area, &mut state);

    if len > visible {
        let mut sb = ScrollbarState::new(len).position(sel);
        frame.render_stateful_widget(
            Scrollbar::new(ScrollbarOrientation::VerticalRight),
            area.inner(Margin {
                vertical: 2,
                horizontal: 0,
            }),
            &mut sb,
        );
    }
}

/// Draws the tabs and returns each one's column range.
fn render_tabs(
    frame: &mut Frame,
    area: Rect,
    snap: &Snapshot,
    current: Queue,
    theme: Theme,
) -> [(u16, u16); 5] {
    let full = tabs(snap, current, theme, true);
    // Drop the digits and bars before cutting a queue name off.
    let line = if full.width() <= area.width as usize {
        full
    } else {
        tabs(snap, current, theme, false)
    };
    // Tabs are the even spans, separators the odd ones.
    let mut columns = [(0, 0); 5];
    let mut x = area.x;
    let right = area.x.saturating_add(area.width);
    for (i, span) in line.spans.iter().enumerate() {
        let end = x.saturating_add(span.width() as u16).min(right);
        if i % 2 == 0 {
            columns[i / 2] = (x, end);
        }
        x = end;
    }
    frame.render_widget(Paragraph::new(line), area);
    columns
}

fn tabs(snap: &Snapshot, current: Queue, theme: Theme, numbered: bool) -> Line<'static> {
    let mut spans = Vec::with_capacity(10);
    for (i, q) in Queue::ALL.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(
                if numbered { " │ " } else { " " },
                theme.dim(),
            ));
        }
        let n = fmt::count(snap.counts.of(q));
        let text = if numbered {
            format!("{} {} {n}", i + 1, q.name())
        } else {
            format!("{} {n}", q.name())
        };
        let style = if q == current {
            theme.selected()
        } else {
            match q {
                Queue::Failed | Queue::Expired if snap.counts.of(q) > 0 => theme.bad(),
                Queue::Confirmed => theme.ok(),
                _ => theme.plain(),
            }
        };
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

/// Time since the first send; for a final transaction, frozen at the moment it became final so
/// the column doesn't keep growing for things that are over.
pub fn age(tx: &TxView, elapsed: Duration) -> Option<Duration> {
    let first = tx.first_sent?;
    let end = if tx.state.is_final() {
        tx.history.last().map(|h| h.at).unwrap_or(elapsed)
    } else {
        elapsed
    };
    Some(end.saturating_sub(first))
}

/// Every column of a row, in display order; [`Fit`] decides which are shown.
fn tx_cells(
    row: usize,
    tx: &TxView,
    elapsed: Duration,
    block_height: u64,
    theme: Theme,
) -> Vec<TCell<'static>> {
    let dash = || "-".to_string();
    let blocks = if tx.state.is_final() {
        None
    } else {
        tx.blocks_left(block_height)
    };
    let blocks_style = match blocks {
        Some(b) if b < 20 => theme.warn(),
        _ => theme.plain(),
    };
    vec![
        columns::right(fmt::count(row as u64 + 1)),
        TCell::from(fmt::short_sig(&tx.signature)),
        TCell::from(Span::styled(tx.state.label(), theme.tx_state(tx.state))),
        columns::right(tx.sends.to_string()),
        columns::right(age(tx, elapsed).map(fmt::span).unwrap_or_else(dash)),
        columns::right(Span::styled(
            match (blocks, tx.durable_nonce) {
                // An upper bound, not the cluster's own figure: marked as an estimate.
                (Some(b), _) if !tx.last_valid_exact => format!("≤{}", fmt::count(b)),
                (Some(b), _) => fmt::count(b),
                (None, true) => "nonce".to_string(),
                (None, false) => dash(),
            },
            blocks_style,
        )),
        columns::right(tx.time_to_land.map(fmt::span).unwrap_or_else(dash)),
        TCell::from(
            tx.last_leader
                .as_deref()
                .map(fmt::short_key)
                .unwrap_or_else(dash),
        ),
        TCell::from(Span::styled(
            tx.last_error.as_deref().unwrap_or("").to_string(),
            theme.bad(),
        )),
    ]
}
