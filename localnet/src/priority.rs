//! Keeping the cluster from starving what it is there to serve, on a small machine.
//!
//! Measured on 2 cores with three nodes (per-thread `/proc` samples, `setsid` runs of one
//! sender), two effects, two remedies:
//!
//! - **Polling threads.** Two threads of every Agave node poll instead of waiting while their
//!   node leads or is about to: the banking stage's transaction scheduler (`solBnkTxSched`)
//!   and its vote thread (`solBanknStgVote`) spin so a leader picks up work within
//!   microseconds. With three nodes they kept ~1 core of an idle cluster busy and slots ran at
//!   0.75 s instead of 0.4 s. [`lower_pollers`] moves them to nice 19: they still get every
//!   cycle nobody else wants, and the same idle cluster made 2.0 slots a second instead of 1.34.
//! - **The session's share.** Linux gives each session (autogroup) an equal share of the CPU
//!   before thread priorities count, and the cluster's session is always runnable. A sender
//!   in another session (a terminal of its own, or the pseudo-terminal of a dashboard test)
//!   waited for the CPU on every wake-up: 300 transactions at 100 tx/s went out at 19.5 tx/s,
//!   against 83 tx/s from the cluster's own session. [`SessionShare`] lowers the session's
//!   share to nice 10 while the cluster runs (the same run: 98 tx/s) and puts the old value
//!   back when it stops.

use std::path::Path;

/// Thread-name prefixes of Agave 4.0's polling loops (names are cut at 15 bytes by Linux).
const POLLERS: [&str; 2] = ["solBnkTxSched", "solBanknStgVote"];
/// The lowest priority Linux gives a normal thread.
const LOWEST: libc::c_int = 19;
/// The session's priority while the cluster runs: below interactive work, above batch jobs.
const SESSION_NICE: i32 = 10;
const AUTOGROUP: &str = "/proc/self/autogroup";

/// Lowers every polling thread of this process that is not lowered yet; returns how many
/// threads were changed. Threads that end while this runs are skipped.
pub fn lower_pollers() -> std::io::Result<usize> {
    let mut changed = 0;
    for task in std::fs::read_dir("/proc/self/task")? {
        let task = task?;
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<libc::id_t>().ok())
        else {
            continue;
        };
        if is_poller(&task.path()) && set_nice(tid) {
            changed += 1;
        }
    }
    Ok(changed)
}

fn is_poller(task: &Path) -> bool {
    std::fs::read_to_string(task.join("comm"))
        .is_ok_and(|name| POLLERS.iter().any(|p| name.starts_with(p)))
}

/// Sets one thread's nice value (Linux applies `PRIO_PROCESS` to a single thread id); false
/// when it already had it or is gone.
fn set_nice(tid: libc::id_t) -> bool {
    // SAFETY: getpriority/setpriority take plain integers and touch no memory of ours.
    unsafe {
        if libc::getpriority(libc::PRIO_PROCESS, tid) == LOWEST {
            return false;
        }
        libc::setpriority(libc::PRIO_PROCESS, tid, LOWEST) == 0
    }
}

/// The session's CPU share lowered for as long as this value lives.
pub struct SessionShare {
    /// The nice value found, to put back; `None` when nothing was changed.
    previous: Option<i32>,
}

impl SessionShare {
    /// Lowers the session's share unless it is already at least as low. Without autogroups
    /// (`/proc/self/autogroup` missing or not writable) there is no session share and nothing
    /// to do.
    pub fn lower() -> Self {
        let previous = read_session_nice().filter(|&n| n < SESSION_NICE);
        let changed = previous.filter(|_| write_session_nice(SESSION_NICE).is_ok());
        if let Some(old) = changed {
            log::info!("session CPU share lowered from nice {old} to {SESSION_NICE}");
        }
        Self { previous: changed }
    }
}

impl Drop for SessionShare {
    fn drop(&mut self) {
        // Only if nobody changed it since: another cluster of this session may have.
        if let Some(old) = self.previous
            && read_session_nice() == Some(SESSION_NICE)
        {
            let _ = write_session_nice(old);
        }
    }
}

/// `/proc/self/autogroup` reads `/autogroup-N nice K`.
fn read_session_nice() -> Option<i32> {
    let text = std::fs::read_to_string(AUTOGROUP).ok()?;
    text.split_whitespace().last()?.parse().ok()
}

fn write_session_nice(nice: i32) -> std::io::Result<()> {
    std::fs::write(AUTOGROUP, nice.to_string())
}
