//! A leader's link in words and short cells, shared by the leaders panel, the transaction
//! detail and the header: every figure as measured, "–" where nothing was.
//!
//! ```text
//! far · rtt 320 ±41 ms · loss 0.0% of 1,204 · credit waits 0% · handshake 662 ms · 1 new/min · most 12/100 ms · closes –
//! ```
//!
//! "most 12/100 ms" is the most streams txpace sent the leader within any 100 ms, against the
//! 20 a 4.0 leader reads of an unstaked peer in one: delays for the budget with it well under
//! 20 were the link's bunching, not our pace.

use std::time::Duration;

use crate::engine::snapshot::{LinkView, WireView};

/// What stands for a figure never measured.
pub const UNKNOWN: &str = "–";

/// The verdict's word, or "–".
pub fn verdict(l: &LinkView) -> &'static str {
    l.verdict.map_or(UNKNOWN, |v| v.label())
}

/// Milliseconds for a narrow cell: "320", "1,234", "12 s"; "–" when unknown.
pub fn ms_cell(ms: Option<u64>) -> String {
    match ms {
        None => UNKNOWN.into(),
        Some(ms) if ms < 10_000 => super::fmt::count(ms),
        Some(ms) => format!("{} s", ms / 1_000),
    }
}

/// A share as a percentage, with one decimal below 10%: "5.0%", "34%"; "–" when unknown.
pub fn percent(share: Option<f64>) -> String {
    match share {
        None => UNKNOWN.into(),
        Some(s) if s < 0.1 => format!("{:.1}%", s * 100.0),
        Some(s) => format!("{:.0}%", s * 100.0),
    }
}

/// Every figure of the link on one line (see the module's doc).
pub fn summary(l: &LinkView) -> String {
    let rtt = match (l.srtt_ms, l.rttvar_ms) {
        (Some(s), Some(v)) => format!("rtt {s} ±{v} ms"),
        (Some(s), None) => format!("rtt {s} ms"),
        (None, _) => format!("rtt {UNKNOWN}"),
    };
    let loss = match l.loss() {
        Some(_) => format!(
            "loss {} of {}",
            percent(l.loss()),
            super::fmt::count(l.sent_packets)
        ),
        None => format!("loss {UNKNOWN}"),
    };
    let handshake = match l.handshake_ms {
        Some(ms) => format!("handshake {ms} ms"),
        None => format!("handshake {UNKNOWN}"),
    };
    let timeouts = match l.handshake_timeouts {
        0 => String::new(),
        n => format!(" ({n} timed out)"),
    };
    let credit = match l.credit_share() {
        None => format!("credit waits {UNKNOWN}"),
        Some(_) if l.credit_waited == 0 => "credit waits 0%".into(),
        Some(share) => format!(
            "credit waits {} (p50 {} p99 {} ms)",
            percent(Some(share)),
            ms_cell(l.credit_wait_ms_p50),
            ms_cell(l.credit_wait_ms_p99)
        ),
    };
    let closes = match l.closes_label() {
        c if c.is_empty() => UNKNOWN.to_string(),
        c => c,
    };
    format!(
        "{} · {rtt} · {loss} · {credit} · {handshake}{timeouts} · {} new/min · most {}/100 ms · \
         closes {closes}",
        verdict(l),
        l.new_connections_per_minute,
        l.most_streams_per_100ms
    )
}

/// The header's last minute: the share of streams that waited for credit and where the time
/// to land went, in seconds; `None` before anything was measured.
pub fn wire_summary(w: &WireView, compact: bool) -> Option<String> {
    let credit = w.credit_share().map(|s| percent(Some(s)));
    let s = |ms: u64| format!("{:.1}", Duration::from_millis(ms).as_secs_f64());
    let land = w.parts.map(|p| {
        let total = p.queue_ms + p.wire_ms + p.leader_ms + p.confirmation_ms;
        if compact {
            format!(
                "land {} s: q {} w {} l {} c {}",
                s(total),
                s(p.queue_ms),
                s(p.wire_ms),
                s(p.leader_ms),
                s(p.confirmation_ms)
            )
        } else {
            format!(
                "land {} s = queue {} + wire {} + leader {} + confirmation {}",
                s(total),
                s(p.queue_ms),
                s(p.wire_ms),
                s(p.leader_ms),
                s(p.confirmation_ms)
            )
        }
    });
    if credit.is_none() && land.is_none() {
        return None;
    }
    let credit = credit.as_deref().unwrap_or(UNKNOWN);
    let head = if compact {
        format!("1 min: credit {credit}")
    } else {
        format!("last min: credit waits {credit}")
    };
    Some(match land {
        Some(land) => format!("{head}  {land}"),
        None => head,
    })
}
