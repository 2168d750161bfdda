//! A measured child in a pseudo-terminal of its own, as a user's terminal runs it: the dashboard
//! draws for real into a screen of a fixed size, and this side reads what it draws (as a
//! terminal would) and counts it. The child's CPU is measured like every other contender's
//! ([`measure::wait`]), so the dashboard's cost is the difference to the same run headless.

use std::{
    io::Read,
    os::{
        fd::{FromRawFd, OwnedFd},
        unix::process::CommandExt,
    },
    process::{Command, Stdio},
    time::Instant,
};

use anyhow::{Context, Result};

use crate::measure::{self, Finished};

/// The screen the dashboard draws on: a common terminal window.
pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;

/// What a run in the terminal left: the measured child and how much it drew.
pub struct Drawn {
    pub finished: Finished,
    /// Bytes the child wrote to its terminal.
    pub bytes: u64,
}

/// Runs `cmd` with a pseudo-terminal of [`COLS`] × [`ROWS`] as its controlling terminal,
/// standard input and standard output (standard error stays a pipe, for its messages), and
/// measures it.
pub fn run_in_terminal(cmd: &mut Command) -> Result<Drawn> {
    let (master, slave) = open_pty()?;
    let started = Instant::now();
    let stdin = slave.try_clone().context("duplicating the terminal")?;
    // SAFETY: setsid and ioctl are async-signal-safe; between fork and exec the child only
    // makes itself a session leader and takes its standard input (the terminal) as its
    // controlling terminal.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawning {cmd:?} in a terminal"))?;
    // The child's copies of the terminal are now its only ones: once it exits, reading the
    // master side ends (EIO).
    cmd.stdin(Stdio::null());
    cmd.stdout(Stdio::null());
    let reader = std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let mut buf = [0u8; 16 * 1024];
        let mut total = 0u64;
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        total
    });
    let finished = measure::wait(child, started)?;
    let bytes = reader.join().unwrap_or_default();
    Ok(Drawn { finished, bytes })
}

/// A pseudo-terminal pair, [`COLS`] × [`ROWS`].
fn open_pty() -> Result<(OwnedFd, OwnedFd)> {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: master and slave are written by openpty; name and termios may be null; size is
    // a valid winsize.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("openpty");
    }
    for fd in [master, slave] {
        // SAFETY: fd is open (openpty succeeded). Not inherited by other children: the one
        // child gets the terminal through its standard input and output alone.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: openpty succeeded, so both are open descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) })
}
