//! Freezing and thawing the validator process (SIGSTOP/SIGCONT), which is what a hung leader
//! looks like to a client, and knowing when the freeze has really taken hold.

use std::{
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use super::{LocalValidator, ValidatorError};

/// How long [`LocalValidator::pause`] waits for every thread to stop.
const SIGNAL_SETTLE: Duration = Duration::from_secs(10);

impl LocalValidator {
    /// Freezes the process (SIGSTOP): its sockets stay bound but nothing answers, which is what a
    /// hung leader looks like to a client.
    ///
    /// Returns once every thread has stopped. kill(2) only wakes one thread to take the signal,
    /// and the others keep serving until that thread has run and stopped the group, which on a
    /// loaded machine was observed to take long enough for an RPC request to be answered after
    /// `kill -STOP` had returned.
    pub fn pause(&mut self) -> Result<(), ValidatorError> {
        self.signal("STOP")?;
        self.paused = true;
        let pid = self.pid().ok_or(ValidatorError::NotRunning)?;
        let deadline = Instant::now() + SIGNAL_SETTLE;
        loop {
            match all_threads_stopped(pid) {
                Ok(true) => return Ok(()),
                Ok(false) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
                Ok(false) => {
                    return Err(ValidatorError::Signal {
                        signal: "STOP",
                        pid,
                        reason: format!(
                            "some threads were still running after {} s",
                            SIGNAL_SETTLE.as_secs()
                        ),
                    });
                }
                Err(e) => {
                    return Err(ValidatorError::Signal {
                        signal: "STOP",
                        pid,
                        reason: format!("reading /proc/{pid}/task: {e}"),
                    });
                }
            }
        }
    }

    /// Undoes [`pause`](Self::pause) (SIGCONT, which the kernel applies to all threads at once).
    pub fn resume(&mut self) -> Result<(), ValidatorError> {
        self.signal("CONT")?;
        self.paused = false;
        Ok(())
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Uses kill(1) rather than a libc binding to keep the dependency list as it is.
    fn signal(&mut self, signal: &'static str) -> Result<(), ValidatorError> {
        let pid = self.pid().ok_or(ValidatorError::NotRunning)?;
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| ValidatorError::Signal {
                signal,
                pid,
                reason: e.to_string(),
            })?;
        if status.success() {
            Ok(())
        } else {
            Err(ValidatorError::Signal {
                signal,
                pid,
                reason: format!("kill exited with {status}"),
            })
        }
    }
}

/// Whether every live thread of `pid` is in a stopped state, from `/proc/<pid>/task/*/stat`
/// (field 3: `T` stopped, `t` tracing stop; `Z`/`X` are exiting threads and do not count).
fn all_threads_stopped(pid: u32) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let stat = match std::fs::read_to_string(entry?.path().join("stat")) {
            Ok(s) => s,
            // The thread exited between listing and reading.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        // The command name may contain spaces and parentheses; the state follows the last ')'.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        if !matches!(state, Some('T' | 't' | 'Z' | 'X')) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_threads_are_seen_in_proc() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(!all_threads_stopped(pid).unwrap());
        let status = Command::new("kill")
            .args(["-STOP", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(5);
        while !all_threads_stopped(pid).unwrap() {
            assert!(
                Instant::now() < deadline,
                "sleep(1) never showed as stopped"
            );
            thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
