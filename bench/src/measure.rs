//! Measuring a child process the same way for every contender: wall time, CPU time (user +
//! system) and peak resident memory, from `wait4`'s rusage — so txpace and Agave's client are
//! both run as separate processes and compared on equal terms.

use std::{
    io::{BufRead, BufReader, Read},
    process::{Child, Command, ExitStatus, Stdio},
    sync::mpsc::{self, Sender},
    time::{Duration, Instant},
};

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::first_send;
pub use crate::first_send::Started;

#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Usage {
    pub wall_s: f64,
    pub cpu_s: f64,
    pub peak_rss_mb: f64,
}

pub struct Finished {
    pub status: ExitStatus,
    pub usage: Usage,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion, capturing its output, and measures it.
pub fn run(cmd: &mut Command) -> Result<Finished> {
    run_during(cmd, |_| Ok(()))
}

/// [`run`], with `during` run on a thread of its own while the child runs, from the child's
/// start (a fault injected into the run: `during` sleeps until its moment, counted from the
/// child's spawn or its first send, see [`Started`]). Its error, if any, is the run's.
pub fn run_during<F>(cmd: &mut Command, during: F) -> Result<Finished>
where
    F: FnOnce(Started) -> Result<()> + Send,
{
    let started = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawning {cmd:?}"))?;
    let (first, said) = mpsc::channel();
    std::thread::scope(|scope| {
        let side = scope.spawn(move || during(Started::new(started, said)));
        let done = watch(child, started, Some(first));
        let side = side
            .join()
            .map_err(|_| anyhow::anyhow!("the fault thread panicked"))?;
        side.and(done)
    })
}

/// Waits for `child` and measures it; its standard output and error, where piped, are read to
/// the end (on threads, so a chatty child never blocks on a full pipe).
pub(crate) fn wait(child: Child, started: Instant) -> Result<Finished> {
    watch(child, started, None)
}

/// [`wait`], telling `first` when the child's output first says it sent (see `first_send`);
/// txpace's `--events` lines are read for that and not kept.
fn watch(mut child: Child, started: Instant, first: Option<Sender<Instant>>) -> Result<Finished> {
    let pid = child.id() as libc::pid_t;
    let drain = |pipe: Option<Box<dyn Read + Send>>, first: Option<Sender<Instant>>| {
        std::thread::spawn(move || pipe.map(|p| read_lines(p, first)).unwrap_or_default())
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        first.clone(),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        first,
    );
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data, filled in by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child; status and usage point to valid memory.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if rc != pid {
        bail!("wait4 on {pid} failed: {}", std::io::Error::last_os_error());
    }
    let wall = started.elapsed();
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    use std::os::unix::process::ExitStatusExt;
    Ok(Finished {
        status: ExitStatus::from_raw(status),
        usage: Usage {
            wall_s: wall.as_secs_f64(),
            cpu_s: (tv(usage.ru_utime) + tv(usage.ru_stime)).as_secs_f64(),
            // Linux reports ru_maxrss in KiB.
            peak_rss_mb: usage.ru_maxrss as f64 / 1024.0,
        },
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// A pipe's text to its end, without txpace's events; the first line that says the child sent
/// goes to `first` (once).
fn read_lines(pipe: Box<dyn Read + Send>, mut first: Option<Sender<Instant>>) -> String {
    let mut reader = BufReader::new(pipe);
    let (mut text, mut line) = (String::new(), Vec::new());
    while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        let l = String::from_utf8_lossy(&line);
        if first.is_some() && first_send::is_first_send(&l) {
            let _ = first.take().map(|f| f.send(Instant::now()));
        }
        if !first_send::is_event(&l) {
            text.push_str(&l);
        }
        line.clear();
    }
    text
}

/// Sends in the one unit every contender is counted in: transactions handed to a QUIC
/// connection, one per transaction per leader address — txpace's streams (its report's
/// `streams.sent`), the Agave TpuClient's sends counted where it makes them (`agave_sends`),
/// Agave's deploy path's connection-cache packets (`agave_metrics`, a lower bound).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sends {
    pub count: u64,
    /// The count is a lower bound: Agave's connection cache counts a send when the send
    /// finishes (delivered or failed), and Agave's clients drop a send still unfinished after
    /// their own 5 s timeout, so such a send is never counted. Shown with "≥".
    pub at_least: bool,
}

impl Sends {
    /// txpace's streams, from the `summary` of its report.
    pub fn txpace(summary: &serde_json::Value) -> Option<Sends> {
        summary["streams"]["sent"].as_u64().map(Sends::counted)
    }

    /// Every send made, counted where it was made.
    pub fn counted(count: u64) -> Sends {
        Sends {
            count,
            at_least: false,
        }
    }

    /// Agave's connection-cache packets (a lower bound, see [`Sends::at_least`]).
    pub fn lower_bound(count: u64) -> Sends {
        Sends {
            count,
            at_least: true,
        }
    }

    fn mark(self) -> &'static str {
        if self.at_least { "≥" } else { "" }
    }

    /// The count for a table cell: "n/a" when not counted, "≥" before a lower bound.
    pub fn show(sends: Option<Sends>) -> String {
        sends.map_or("n/a".into(), |s| format!("{}{}", s.mark(), s.count))
    }

    /// Sends per landed transaction for a table cell, as [`Sends::show`] marks it.
    pub fn show_per_landed(sends: Option<Sends>, landed: u64) -> String {
        match (sends, per_landed(sends, landed)) {
            (Some(s), Some(v)) => format!("{}{v:.3}", s.mark()),
            _ => "n/a".into(),
        }
    }
}

/// Sends per landed transaction; `None` when the sends were not counted or nothing landed.
pub fn per_landed(sends: Option<Sends>, landed: u64) -> Option<f64> {
    sends
        .filter(|_| landed > 0)
        .map(|s| s.count as f64 / landed as f64)
}

/// `a / b`, a contender's figure over another's (a zero `b` taken as 1 ms / 1 ms of CPU / …,
/// so a ratio is never infinite).
pub fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(0.001)
}

/// Transactions landed per second of the process's wall time: the one clock every contender's
/// rate is taken from.
pub fn landed_per_s(landed: u64, usage: &Usage) -> f64 {
    landed as f64 / usage.wall_s.max(0.001)
}

/// The lowest and the highest of `v` (infinite both ways when it is empty).
pub fn spread(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// Why a child counts as failed, or `None` when it finished its run: an exit code outside
/// `finished` (txpace finishes with 0, or 1 when some transactions failed or expired; Agave's
/// contenders with 0) or a signal, with the last lines of its standard error. A failed child is
/// shown as failed beside whatever the chain holds of its run, never as a run that landed
/// nothing.
pub fn failure(status: ExitStatus, stderr: &str, finished: &[i32]) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.code(), status.signal()) {
        (Some(c), _) if finished.contains(&c) => return None,
        (Some(c), _) => format!("exit {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "ended without an exit code".to_string(),
    };
    Some(format!("{how}: {}", stderr_tail(stderr, 3)))
}

/// What a table row says after its figures: that its process failed and why, and how many
/// re-signed copies of its messages landed besides the ones counted. Empty for a run that
/// finished with each message landed at most once.
pub fn row_note(failure: Option<&str>, duplicates: u64) -> String {
    let mut note = String::new();
    if duplicates > 0 {
        note += &format!("  (+{duplicates} re-signed copies landed, each message counted once)");
    }
    if let Some(f) = failure {
        note += &format!("  FAILED: {f}");
    }
    note
}

/// The last `lines` non-empty lines of a child's standard error, joined with " / ", or
/// "no output".
pub fn stderr_tail(stderr: &str, lines: usize) -> String {
    let tail: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if tail.is_empty() {
        return "no output".into();
    }
    tail[tail.len().saturating_sub(lines)..].join(" / ")
}

/// How a goal line says whether its goal held, the same in every benchmark.
pub fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// The `txpace` binary built beside this bench (same target directory and profile): the
/// contender is measured as the program users run.
pub fn txpace_bin() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the bench binary")?;
    let bin = exe
        .parent()
        .map(|d| d.join("txpace"))
        .context("bench binary has no directory")?;
    if !bin.exists() {
        bail!(
            "{} not found: build txpace in the same profile first (cargo build --release)",
            bin.display()
        );
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    /// An exit status as `wait` reports it: `code` for an exit, or killed by `signal`.
    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    /// A child that prints, says it sent (as txpace's events do), waits, and ends: `during`
    /// learns of the send as it is said, long before the child ends, and the event line is
    /// not in the output kept.
    #[test]
    fn during_learns_the_first_send_as_the_child_says_it_and_events_are_not_kept() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            r#"echo starting; echo '{"t_ms":1,"event":"state","to":"sent"}'; sleep 1; echo done >&2"#,
        ]);
        let seen = std::sync::Mutex::new(None);
        let done = run_during(&mut cmd, |s| {
            let first = s.first_send().expect("said");
            *seen.lock().expect("lock") = Some(first.duration_since(s.spawned));
            Ok(())
        })
        .expect("run");
        let after = seen.lock().expect("lock").expect("seen");
        assert!(
            after < Duration::from_millis(800),
            "seen {after:?} after the spawn"
        );
        assert!(done.usage.wall_s >= 1.0);
        assert_eq!(done.stdout, "starting\n");
        assert_eq!(done.stderr, "done\n");
    }

    #[test]
    fn a_child_that_never_says_it_sent_has_no_first_send() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo nothing sent"]);
        let done = run_during(&mut cmd, |s| {
            assert_eq!(s.first_send(), None);
            Ok(())
        })
        .expect("run");
        assert_eq!(done.stdout, "nothing sent\n");
    }

    #[test]
    fn a_finished_exit_is_no_failure_and_any_other_is_one_with_its_stderr_tail() {
        assert_eq!(failure(exited(0), "", &[0]), None);
        assert_eq!(failure(exited(1), "lost some", &[0, 1]), None);
        assert_eq!(
            failure(exited(3), "starting\n\nrpc unreachable\n", &[0, 1]).as_deref(),
            Some("exit 3: starting / rpc unreachable")
        );
        assert_eq!(
            failure(ExitStatus::from_raw(9), "", &[0]).as_deref(),
            Some("killed by signal 9: no output")
        );
    }

    #[test]
    fn the_stderr_tail_is_its_last_non_empty_lines() {
        assert_eq!(stderr_tail("a\nb\n\nc\nd\n", 3), "b / c / d");
        assert_eq!(stderr_tail("  only  \n", 3), "only");
        assert_eq!(stderr_tail("\n \n", 3), "no output");
    }

    #[test]
    fn sends_per_landed_is_sends_over_landed_and_marks_a_lower_bound() {
        let txpace = Sends::txpace(&serde_json::json!({"streams": {"sent": 3000}}));
        assert_eq!(
            txpace,
            Some(Sends {
                count: 3000,
                at_least: false
            })
        );
        assert_eq!(per_landed(txpace, 1500), Some(2.0));
        assert_eq!(Sends::show(txpace), "3000");
        assert_eq!(Sends::show_per_landed(txpace, 1500), "2.000");
        let agave = Some(Sends::lower_bound(3015));
        assert_eq!(Sends::show(agave), "≥3015");
        assert_eq!(Sends::show_per_landed(agave, 1500), "≥2.010");
        // Nothing landed, or nothing counted: no figure.
        assert_eq!(per_landed(agave, 0), None);
        assert_eq!(Sends::show_per_landed(agave, 0), "n/a");
        assert_eq!(Sends::show(None), "n/a");
        assert_eq!(Sends::txpace(&serde_json::json!({"sends": 5})), None);
    }

    #[test]
    fn ratios_divide_and_never_by_zero() {
        assert_eq!(ratio(50.4, 50.0), 50.4 / 50.0);
        assert_eq!(ratio(1.0, 0.0), 1000.0);
    }

    /// The `--rate max` figure: landed over the process's wall time (5,000 in 6.3 s is 794/s,
    /// not the 811/s of the report's shorter elapsed time).
    #[test]
    fn a_landed_rate_is_over_the_process_wall_time() {
        let usage = Usage {
            wall_s: 6.3,
            cpu_s: 1.0,
            peak_rss_mb: 30.0,
        };
        assert_eq!(landed_per_s(5000, &usage), 5000.0 / 6.3);
        assert_eq!(format!("{:.0}", landed_per_s(5000, &usage)), "794");
    }

    #[test]
    fn the_spread_is_the_lowest_and_highest() {
        assert_eq!(spread(&[1.02, 0.98, 1.0]), (0.98, 1.02));
        assert_eq!(spread(&[]), (f64::INFINITY, f64::NEG_INFINITY));
    }

    #[test]
    fn a_verdict_says_met_or_not_met() {
        assert_eq!(verdict(true), "met");
        assert_eq!(verdict(false), "NOT met");
    }

    #[test]
    fn a_row_note_names_a_failure_and_re_signed_copies() {
        assert_eq!(row_note(None, 0), "");
        assert_eq!(
            row_note(Some("exit 3: rpc unreachable"), 0),
            "  FAILED: exit 3: rpc unreachable"
        );
        assert_eq!(
            row_note(None, 14),
            "  (+14 re-signed copies landed, each message counted once)"
        );
    }
}
