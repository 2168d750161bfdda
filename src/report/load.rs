//! Reading a report back (`txpace view`): the JSON `--report` wrote, as it is on disk; `replay`
//! turns it into the snapshot the dashboard draws, so a run from a headless server can be
//! looked at later.
//!
//! A report holds each transaction's fate, sends, first send and time to land, its leaders
//! and (with `--report-sends`) every stream; the rate chart and the latency histogram are
//! rebuilt from those times through the engine's own [`Meter`], so they are drawn as the
//! live run drew them. What a report does not hold (resends' times without
//! `--report-sends`, the slot each leader's window began) is left out, not made up.

use std::path::Path;

use super::{
    replay::to_snapshot,
    schema::{DeployReport, RunReport},
};
use crate::engine::snapshot::Snapshot;

/// Why a report could not be read: the file, and the line and column of the problem.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read it: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}:{line}:{column}: not a txpace report: {reason}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Phase { path: String, reason: String },
    #[error("{path}: transaction {index}: {reason}")]
    Field {
        path: String,
        index: usize,
        reason: String,
    },
}

/// Reads the report at `path` as a finished run's snapshot. A deploy's report holds one run
/// per phase: `phase` names the one to show (default: the writes, else the last); the name
/// shown comes back with the snapshot.
pub fn load(path: &Path, phase: Option<&str>) -> Result<(Snapshot, Option<String>), LoadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::Read {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let (file, name) = match serde_json::from_str::<DeployReport>(&text) {
        Ok(deploy) => {
            let names: Vec<String> = deploy.phases.iter().map(|p| p.name.clone()).collect();
            let wanted = phase.map(str::to_string).or_else(|| {
                names
                    .iter()
                    .find(|n| *n == "writes")
                    .or(names.last())
                    .cloned()
            });
            let Some(p) = deploy
                .phases
                .into_iter()
                .find(|p| Some(&p.name) == wanted.as_ref())
            else {
                return Err(LoadError::Phase {
                    path: shown,
                    reason: format!(
                        "no phase {:?} in this deploy report; it has: {}",
                        wanted.unwrap_or_default(),
                        names.join(", ")
                    ),
                });
            };
            (p.report, Some(p.name))
        }
        Err(_) => {
            let file: RunReport = serde_json::from_str(&text).map_err(|e| {
                // The position is given in front, as FILE:LINE:COLUMN.
                let text = e.to_string();
                let reason = text
                    .rsplit_once(" at line ")
                    .map_or(text.as_str(), |(r, _)| r)
                    .to_string();
                LoadError::Parse {
                    path: shown.clone(),
                    line: e.line(),
                    column: e.column(),
                    reason,
                }
            })?;
            if phase.is_some() {
                return Err(LoadError::Phase {
                    path: shown,
                    reason: "--phase is for a deploy's report; this is a run's".into(),
                });
            }
            (file, None)
        }
    };
    let snap = to_snapshot(file).map_err(|(index, reason)| LoadError::Field {
        path: shown,
        index,
        reason,
    })?;
    Ok((snap, name))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{
        engine::{RunOutcome, lifecycle::TxState, snapshot::RunState},
        report::Report,
        ui::fixtures,
    };

    fn written(snap: Snapshot, sends: bool) -> tempfile::NamedTempFile {
        let outcome = RunOutcome {
            commitments: vec![None; snap.txs.len()],
            snapshot: Arc::new(snap),
        };
        let mut report = Report::new(&outcome, &[]);
        if sends {
            report.add_streams();
        }
        let file = tempfile::NamedTempFile::new().expect("temp file");
        report.write(file.path()).expect("write");
        file
    }

    /// What a report holds comes back as the run had it: every transaction's fate, sends,
    /// times, leaders and streams, the queues and counts, and each leader's figures.
    #[test]
    fn a_report_reads_back_as_the_run_it_describes() {
        let run = fixtures::done(200);
        let file = written(run.clone(), true);
        let (back, phase) = load(file.path(), None).expect("load");
        assert_eq!(phase, None);
        assert_eq!(back.run, RunState::Done);
        assert_eq!(back.counts, run.counts);
        assert_eq!(back.queues, run.queues);
        assert_eq!(*back.leader_totals, *run.leader_totals);
        for (b, r) in back.txs.iter().zip(run.txs.iter()) {
            assert_eq!(
                (
                    b.signature,
                    b.state,
                    b.sends,
                    b.first_sent,
                    b.landed_slot,
                    b.time_to_land
                ),
                (
                    r.signature,
                    r.state,
                    r.sends,
                    r.first_sent,
                    r.landed_slot,
                    r.time_to_land
                ),
                "tx {}",
                r.id
            );
            assert_eq!(
                (b.cu_price, b.cu_limit, b.landed_leader.as_deref()),
                (r.cu_price, r.cu_limit, r.landed_leader.as_deref())
            );
            assert_eq!(b.send_log, r.send_log);
            let mut sent_to = r.sent_to.to_vec();
            sent_to.sort_by_key(|k| k.to_string());
            assert_eq!(*b.sent_to, sent_to, "the report lists leaders by name");
        }
        let landed = run
            .txs
            .iter()
            .filter(|v| v.state == TxState::Confirmed)
            .count() as u64;
        assert_eq!(back.latency.histogram.iter().sum::<u64>(), landed);
    }

    /// Bad input names the file and where: a truncated file, a field of the wrong kind, a
    /// missing phase; huge figures load without a panic.
    #[test]
    fn a_broken_report_is_refused_with_file_line_and_reason() {
        let file = written(fixtures::done(3), false);
        let text = std::fs::read_to_string(file.path()).expect("read");
        std::fs::write(file.path(), &text[..text.len() / 2]).expect("truncate");
        let err = load(file.path(), None).expect_err("truncated").to_string();
        assert!(
            err.starts_with(&format!("{}:", file.path().display())),
            "{err}"
        );
        assert!(err.contains("not a txpace report"), "{err}");
        std::fs::write(
            file.path(),
            text.replacen("\"sends\":", "\"sends\": \"x\", \"_\":", 1),
        )
        .expect("write");
        let err = load(file.path(), None).expect_err("wrong kind").to_string();
        assert!(err.contains("not a txpace report"), "{err}");
        // Figures at the edge of what the fields hold load as figures, never a panic.
        let mut huge: serde_json::Value = serde_json::from_str(&text).expect("json");
        huge["summary"]["elapsed_s"] = serde_json::json!(1e308);
        for t in huge["transactions"].as_array_mut().expect("transactions") {
            t["first_sent_ms"] = serde_json::json!(u64::MAX);
            t["latency_ms"] = serde_json::json!(u64::MAX);
        }
        std::fs::write(file.path(), huge.to_string()).expect("write");
        load(file.path(), None).expect("huge figures load");
        std::fs::write(file.path(), &text).expect("write");
        let err = load(file.path(), Some("writes"))
            .expect_err("not a deploy")
            .to_string();
        assert!(err.contains("--phase is for a deploy's report"), "{err}");
    }
}
