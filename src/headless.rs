//! Headless mode (`--no-tui`, or no terminal): the same engine, with a progress line each second
//! on stderr, warnings on stderr, everything in the log file, and a summary on stdout.

use std::{
    fs::File,
    io::Write,
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use log::{Level, LevelFilter, Log, Metadata, Record};
use tokio::sync::watch;

use crate::{
    engine::snapshot::{RateTarget, Snapshot},
    report::Report,
};

/// Shortens a base58 key or signature to its first and last 4 characters.
pub fn short(s: &str) -> String {
    if s.len() <= 12 {
        return s.to_string();
    }
    format!("{}…{}", &s[..4], &s[s.len() - 4..])
}

pub fn target_label(target: RateTarget, pacing: f64) -> String {
    match target {
        RateTarget::Fixed(r) => format!("target {r:.0} tx/s"),
        RateTarget::Max => format!("target max (pacing {pacing:.0} tx/s)"),
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
                short(&l.identity.to_string()),
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
        "[{:>7.1}s] {:<8} {phase}sends {} | pending {} resent {} confirmed {} failed {} expired {} of {} | {} achieved {:.1} landing {:.1} | slot {} | {}{}",
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
        eprintln!("{}", progress_line(&snap));
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

/// A logger for headless runs: warnings and errors to stderr, everything from `info` to the
/// log file. Transport crates are kept to warnings: they log every packet.
struct HeadlessLogger {
    file: Option<Mutex<File>>,
}

impl Log for HeadlessLogger {
    fn enabled(&self, m: &Metadata) -> bool {
        let noisy = [
            "quinn",
            "rustls",
            "h2",
            "hyper",
            "reqwest",
            "tungstenite",
            "mio",
        ]
        .iter()
        .any(|p| m.target().starts_with(p));
        m.level() <= if noisy { Level::Warn } else { Level::Info }
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        if record.level() <= Level::Warn {
            eprintln!(
                "{}: {}",
                record.level().as_str().to_lowercase(),
                record.args()
            );
        }
        if let Some(f) = &self.file
            && let Ok(mut f) = f.lock()
        {
            let _ = writeln!(
                f,
                "{} {:<5} {}: {}",
                unix_time(),
                record.level(),
                record.target(),
                record.args()
            );
        }
    }

    fn flush(&self) {
        if let Some(f) = &self.file
            && let Ok(mut f) = f.lock()
        {
            let _ = f.flush();
        }
    }
}

fn unix_time() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:03}", now.as_secs(), now.subsec_millis())
}

/// Installs the headless logger; the file is created readable by the owner only.
pub fn init_logging(log_file: Option<&Path>) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::os::unix::fs::OpenOptionsExt;
    let file = match log_file {
        Some(path) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating log directory {}", dir.display()))?;
            }
            Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o600)
                    .open(path)
                    .with_context(|| format!("opening log file {}", path.display()))?,
            ))
        }
        None => None,
    };
    log::set_boxed_logger(Box::new(HeadlessLogger { file }))
        .map_err(|e| anyhow::anyhow!("installing the logger: {e}"))?;
    log::set_max_level(LevelFilter::Info);
    Ok(())
}
