//! Headless mode (`--no-tui`, or no terminal): the same engine, with a progress line each second
//! on stderr, warnings on stderr, everything in the log file (see [`crate::logging`]), and a
//! summary on stdout.

use std::{sync::Arc, time::Duration};

use tokio::sync::watch;

use crate::{
    engine::snapshot::{RateTarget, RateView, Snapshot},
    report::Report,
};

pub fn target_label(target: RateTarget, pacing: f64) -> String {
    match target {
        RateTarget::Fixed(r) => format!("target {r:.0} tx/s"),
        RateTarget::Max => format!("target max (pacing {pacing:.0} tx/s)"),
    }
}

/// While owed sends (an outage's, a first handshake's hold) are made up: how many, at
/// what pace (owed alone before the making up starts).
fn catch_up_label(rate: &RateView) -> String {
    let above = matches!(rate.target, RateTarget::Fixed(t) if rate.pacing > t);
    match rate.owed {
        0 => String::new(),
        owed if above => format!(" (catching up {owed} owed at {:.0} tx/s)", rate.pacing),
        owed => format!(" ({owed} owed)"),
    }
}

/// Under `--rate max`, the transactions sent ahead of a later leader's turn on top of the pace.
fn ahead_label(rate: &RateView) -> String {
    if rate.sent_ahead > 0 {
        format!(" (+{} sent ahead)", rate.sent_ahead)
    } else {
        String::new()
    }
}

/// One progress line, as printed each second.
pub fn progress_line(s: &Snapshot) -> String {
    let c = &s.counts;
    let leader = s.leaders.first().map_or_else(
        || "leader unknown".to_string(),
        |l| {
            format!(
                "leader {} {}",
                crate::ui::fmt::short_key(&l.identity),
                l.conn.label()
            )
        },
    );
    let health = s
        .cluster
        .health
        .as_deref()
        .map(|h| format!(" | {h}"))
        .unwrap_or_default();
    let phase = s
        .phase
        .as_ref()
        .map(|p| format!("{} | ", p.label()))
        .unwrap_or_default();
    format!(
        "[{:>7.1}s] {:<8} {phase}sends {} | pending {} resent {} confirmed {} failed {} expired {} of {} | {}{}{} achieved {:.1} landing {:.1} | slot {} | {}{}",
        s.elapsed.as_secs_f64(),
        s.run.label(),
        c.sends,
        c.pending,
        c.resent,
        c.confirmed,
        c.failed,
        c.expired,
        c.total,
        target_label(s.rate.target, s.rate.pacing),
        catch_up_label(&s.rate),
        ahead_label(&s.rate),
        s.rate.achieved,
        s.rate.landing,
        s.cluster.slot,
        leader,
        health,
    )
}

/// Prints a progress line every `every` until the run is over.
pub async fn print_progress(mut rx: watch::Receiver<Arc<Snapshot>>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        // A line each tick, and the run's end as soon as it is published rather than at the
        // next tick: a headless run (and a benchmark timing it) should not idle for a second.
        let (print, closed) = tokio::select! {
            _ = tick.tick() => (true, false),
            changed = rx.changed() => match changed {
                Ok(()) => (rx.borrow().run.is_over(), false),
                Err(_) => (true, true),
            },
        };
        if !print {
            continue;
        }
        let snap = rx.borrow_and_update().clone();
        // The health text quotes RPC errors: scrubbed like every other output.
        say!("{}", crate::redact::scrub(progress_line(&snap)));
        if closed || snap.run.is_over() {
            break;
        }
    }
}

/// The closing lines for a person.
pub fn summary_text(r: &Report) -> String {
    let s = &r.summary;
    let lat = |v: Option<u64>| v.map_or("-".to_string(), |ms| format!("{ms} ms"));
    let mut out = format!(
        "{}: {} transactions in {:.1} s — {} confirmed, {} failed, {} expired, {} unfinished",
        s.outcome, s.total, s.elapsed_s, s.confirmed, s.failed, s.expired, s.unfinished
    );
    out.push_str(&format!(
        "\nsends {} ({} per landed), {} reached no leader, achieved {:.1} tx/s{}",
        s.sends,
        s.sends_per_landed
            .map_or("-".to_string(), |v| format!("{v:.2}")),
        s.send_errors,
        s.achieved_rate,
        s.target_rate
            .map_or(" (target max)".to_string(), |t| format!(" (target {t:.0})")),
    ));
    let st = &s.streams;
    out.push_str(&format!(
        "\nstreams to leaders {}: {} accepted, {} throttled, {} connection failures, {} timed out, {} other errors",
        st.sent, st.accepted, st.throttled, st.connection, st.timeout, st.other
    ));
    if let Some(why) = &s.error {
        out.push_str(&format!("\nfailed: {why}"));
    }
    out.push_str(&format!(
        "\ntime to land p50 {} p90 {} p99 {}",
        lat(s.latency_ms.p50),
        lat(s.latency_ms.p90),
        lat(s.latency_ms.p99)
    ));
    if s.skipped_invalid > 0 {
        out.push_str(&format!(
            "\n{} invalid transactions skipped",
            s.skipped_invalid
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::fixtures;

    /// Under `--rate max` the line names what went ahead of a later leader's turn on top of the
    /// pace, once anything has, so an achieved rate above the pace is explained.
    #[test]
    fn the_progress_line_says_what_was_sent_ahead_on_top_of_the_pace() {
        let line = progress_line(&fixtures::max_rate_ahead(300, 194.0, 728));
        assert!(
            line.contains("target max (pacing 194 tx/s) (+728 sent ahead) achieved"),
            "{line}"
        );
        let line = progress_line(&fixtures::max_rate(300, 194.0));
        assert!(!line.contains("sent ahead"), "{line}");
    }

    /// Owed sends are named with the faster pace that makes them up, and alone during the half
    /// second before that starts, when the pace is still the target.
    #[test]
    fn the_progress_line_says_what_is_owed_and_whether_it_is_being_made_up() {
        let line = progress_line(&fixtures::catching_up(300, 194.0, 830));
        assert!(
            line.contains("target 100 tx/s (catching up 830 owed at 194 tx/s)"),
            "{line}"
        );
        let line = progress_line(&fixtures::catching_up(300, 100.0, 22));
        assert!(line.contains("target 100 tx/s (22 owed)"), "{line}");
        assert!(!line.contains("catching up"), "{line}");
    }
}
