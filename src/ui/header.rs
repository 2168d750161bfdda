//! The header: where we send, how far the chain is, and whether we are sending at all.
//!
//! ```text
//! ┌ txpace · send 5000 txs from x.b64 ─────────────────────────────────────── RUNNING ┐
//! │ cluster http://127.0.0.1:8899/  commitment confirmed  slot 1,234  height 1,200  price 1,000 µL/CU = p35 of recent fees │
//! │ elapsed 00:01:02  identity 7Np41oeY…T4K2 (unstaked)  ⚠ getSlot timed out, retrying  last min: credit waits 3.0%  land 1.9 s = queue 0.0 + wire 0.3 + leader 1.1 + confirmation 0.5 │
//! └─────────────────────────────────────────────────────────────────────────────────────┘
//! ┌ txpace · deploy x.so · phase 2/3 writes · 312,000 of 615,936 bytes (50%) ───── RUNNING ┐
//! ```
//! The run state sits in the border so it stays visible at any width; cluster health is only
//! shown when the engine reports a problem, since silence is the healthy case; so is a leader
//! whose budget another sender on our address shares (see `verdict::shared_budget`), with the
//! way out (`--bind`), when the cluster has no problem to report. The last
//! minute on the wire (see `snapshot::WireView`) follows the identity (shortened for it when
//! both do not fit) and any health warning: the share of streams
//! that waited for stream credit, and the mean time to land cut into its parts — waiting on
//! our side, on the wire to the leader's acknowledgement, at the leader until a lookup found
//! it in a slot, and confirmation.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block, Paragraph},
};

use super::{fmt, link, theme::Theme};
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
    // The last minute on the wire goes after the identity and any health warning; the full
    // identity gives way to it when both do not fit, its long form to the short one, and the
    // short one to nothing.
    let room = usize::from(area.width.saturating_sub(2));
    // Another sender on our address spends the budget a leader holds us to: say what to do.
    let shared = snap.wire.shared_budget.map(|leader| {
        format!(
            "{} delays us: budget shared on this address, --bind another",
            fmt::short_key(&leader)
        )
    });
    let warning = c.health.clone().or(shared);
    let health = warning.as_ref().map_or(0, |h| h.chars().count() + 4);
    let base = |identity: usize| 27 + identity + staked.content.chars().count() + health;
    let full_id = c.identity.to_string();
    let wire_long = link::wire_summary(&snap.wire, false);
    let wire_len = |w: &Option<String>| w.as_ref().map_or(0, |w| w.chars().count() + 2);
    let short_id = compact || base(full_id.len()) + wire_len(&wire_long) > room;
    let wire = if short_id && base(13) + wire_len(&wire_long) > room {
        // The short form, and only whole: a cut figure would be a wrong one.
        link::wire_summary(&snap.wire, true).filter(|w| base(13) + w.chars().count() + 2 <= room)
    } else {
        wire_long
    };
    let mut l2 = vec![
        label("elapsed "),
        Span::styled(fmt::clock(snap.elapsed), theme.bold()),
        label("  identity "),
        Span::raw(if short_id {
            fmt::short_key(&c.identity)
        } else {
            full_id
        }),
        staked,
    ];
    if let Some(h) = warning {
        l2.push(Span::styled("  ⚠ ", theme.warn()));
        l2.push(Span::styled(h, theme.warn()));
    }
    if let Some(w) = wire {
        l2.push(Span::raw("  "));
        l2.push(Span::styled(w, theme.plain()));
    }
    frame.render_widget(
        Paragraph::new(vec![line1, Line::from(l2)]).block(block),
        area,
    );
}
