//! txpace as a measured child process: `txpace send` headless (its report read back) or with
//! its dashboard in a terminal.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::{
    child,
    measure::{self, Usage},
    terminal,
    workload::Endpoint,
};

/// Runs `txpace send --no-tui`: its measured usage, exit and report.
pub(crate) fn txpace_send(v: &Endpoint, file: &Path, extra: &[&str]) -> Result<TxpaceRun> {
    txpace_run(v, file, extra, |_| Ok(()))
}

/// txpace's exit codes for a run it finished: 0 (every transaction landed) and 1 (some failed
/// on chain or expired, which the chain's count shows). Any other exit is a failed child.
const FINISHED: [i32; 2] = [0, 1];

/// One measured `txpace send --no-tui`.
pub(crate) struct TxpaceRun {
    pub usage: Usage,
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Why it failed, when it did (see [`FINISHED`]): its exit and the tail of its standard
    /// error.
    pub failure: Option<String>,
    pub report: Value,
}

/// Runs `txpace send --no-tui` with `during` beside it (see [`measure::run_during`]).
pub(crate) fn txpace_run<F>(
    v: &Endpoint,
    file: &Path,
    extra: &[&str],
    during: F,
) -> Result<TxpaceRun>
where
    F: FnOnce(measure::Started) -> Result<()> + Send,
{
    let (mut cmd, report) = send_command(v, file, "--no-tui", extra)?;
    let done = measure::run_during(&mut cmd, during)?;
    eprintln!("{}", done.stdout.trim_end());
    Ok(TxpaceRun {
        usage: done.usage,
        code: done.status.code(),
        failure: measure::failure(done.status, &done.stderr, &FINISHED),
        report: read_report(&report, &done)?,
    })
}

/// `txpace send FILE` to `v` in `mode` (`--no-tui`, or `--exit-when-done` for the dashboard)
/// with `extra`, and where its report goes.
fn send_command(
    v: &Endpoint,
    file: &Path,
    mode: &str,
    extra: &[&str],
) -> Result<(Command, PathBuf)> {
    let report = file.with_extension("report.json");
    let mut cmd = child::txpace()?;
    cmd.args(["send", mode, "--url", &v.rpc, "--ws", &v.ws])
        .arg(file)
        .arg("--report")
        .arg(&report)
        .args(extra);
    Ok((cmd, report))
}

/// The report a finished `txpace send` wrote, or why there is none (its exit and the tail of
/// its messages): a run without a report cannot be counted, so the benchmark stops there rather
/// than show it as a run that landed nothing.
fn read_report(path: &Path, done: &measure::Finished) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "no report from txpace send ({})",
            measure::failure(done.status, &done.stderr, &[]).unwrap_or_default()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Runs `txpace send` with its dashboard in a terminal (see [`terminal`]) until the run is
/// done; returns the measured run and the bytes it drew.
pub(crate) fn txpace_dashboard(
    v: &Endpoint,
    file: &Path,
    extra: &[&str],
) -> Result<(TxpaceRun, u64)> {
    let (mut cmd, report) = send_command(v, file, "--exit-when-done", extra)?;
    cmd.env("TERM", "xterm-256color");
    let drawn = terminal::run_in_terminal(&mut cmd)?;
    let done = &drawn.finished;
    let run = TxpaceRun {
        usage: done.usage,
        code: done.status.code(),
        failure: measure::failure(done.status, &done.stderr, &FINISHED),
        report: read_report(&report, done)?,
    };
    Ok((run, drawn.bytes))
}

#[cfg(test)]
mod tests {
    use std::{os::unix::process::ExitStatusExt, process::ExitStatus};

    use super::*;

    /// A txpace that left no report is an error naming its exit and its last messages — the
    /// run is not read as one that landed nothing.
    #[test]
    fn a_child_without_a_report_is_an_error_with_its_exit_and_stderr_tail() {
        let done = measure::Finished {
            status: ExitStatus::from_raw(3 << 8),
            usage: Usage {
                wall_s: 1.0,
                cpu_s: 0.1,
                peak_rss_mb: 10.0,
            },
            stdout: String::new(),
            stderr: "starting\nerror: the RPC at http://127.0.0.1:8899 was never reachable\n"
                .into(),
        };
        let err = read_report(Path::new("/nonexistent/run.report.json"), &done).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no report from txpace send (exit 3: starting / error: the RPC at \
             http://127.0.0.1:8899 was never reachable)"
        );
    }

    #[test]
    fn only_exit_0_and_1_are_finished_runs() {
        let status = |c: i32| ExitStatus::from_raw(c << 8);
        assert_eq!(measure::failure(status(0), "", &FINISHED), None);
        assert_eq!(measure::failure(status(1), "", &FINISHED), None);
        for c in [2, 3, 4, 130] {
            assert!(measure::failure(status(c), "", &FINISHED).is_some());
        }
    }
}
