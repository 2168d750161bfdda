//! Measuring a child process the same way for every contender: wall time, CPU time (user +
//! system) and peak resident memory, from `wait4`'s rusage — so txpace and Agave's client are
//! both run as separate processes and compared on equal terms.

use std::{
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

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
/// instant it is given). Its error, if any, is the run's.
pub fn run_during<F>(cmd: &mut Command, during: F) -> Result<Finished>
where
    F: FnOnce(Instant) -> Result<()> + Send,
{
    let started = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawning {cmd:?}"))?;
    std::thread::scope(|scope| {
        let side = scope.spawn(move || during(started));
        let done = wait(child, started);
        let side = side
            .join()
            .map_err(|_| anyhow::anyhow!("the fault thread panicked"))?;
        side.and(done)
    })
}

/// Waits for `child` and measures it; its standard output and error, where piped, are read to
/// the end (on threads, so a chatty child never blocks on a full pipe).
pub(crate) fn wait(mut child: Child, started: Instant) -> Result<Finished> {
    use std::io::Read;
    let pid = child.id() as libc::pid_t;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
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

/// Sends per landed transaction, counted the same way for every contender; `None` when the
/// sends were not counted or nothing landed.
pub fn per_landed(sends: Option<u64>, landed: u64) -> Option<f64> {
    sends
        .filter(|_| landed > 0)
        .map(|s| s as f64 / landed as f64)
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
