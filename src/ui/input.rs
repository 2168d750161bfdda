//! The dashboard's keys, mouse and resizes, read on a thread of their own that never spins on a
//! dead terminal.
//!
//! Why not crossterm's `event::poll` on the drawing thread, as before: when the terminal hangs
//! up (a dropped SSH connection, a closed window), its input reads end (0 bytes) or fail (EIO)
//! at once and forever, and crossterm's reader retries them in a loop that neither returns nor
//! looks at its timeout. The dashboard then spun at most of a core, never saw the signals it
//! had flagged, never stopped the run and never wrote its report.
//!
//! Here the thread first asks the kernel about the terminal itself (`poll(2)`): a hang-up or an
//! error, or input that is readable but holds no bytes (end of file), ends the thread with
//! [`Input::Gone`]. Only a terminal that is alive is handed to crossterm to parse.

use std::{
    io::IsTerminal,
    os::fd::{AsRawFd, OwnedFd},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    thread::JoinHandle,
    time::Duration,
};

use crossterm::event::{self, Event};

/// How long one wait for the terminal lasts before the thread looks at its stop flag and at
/// crossterm's resize signal again.
const WAIT_MS: libc::c_int = 50;

/// What the input thread passes on.
#[derive(Debug)]
pub enum Input {
    /// A key, a click, a resize.
    Event(Event),
    /// The terminal hung up, its input ended, or reading it failed: nothing will come any more.
    Gone(String),
}

/// The running input thread; dropping it stops the thread (within [`WAIT_MS`]) unless the
/// terminal is gone.
pub struct InputThread {
    rx: mpsc::Receiver<Input>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl InputThread {
    pub fn spawn() -> std::io::Result<Self> {
        // crossterm reads standard input when it is a terminal, else /dev/tty: watch the same.
        let tty = if std::io::stdin().is_terminal() {
            None
        } else {
            Some(OwnedFd::from(std::fs::File::open("/dev/tty")?))
        };
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("txpace-input".into())
            .spawn(move || {
                let fd = tty.as_ref().map_or(0, AsRawFd::as_raw_fd);
                read_loop(fd, &tx, &thread_stop);
            })?;
        Ok(Self {
            rx,
            stop,
            thread: Some(thread),
        })
    }

    /// The next input, waiting at most `timeout`. `None` when nothing came.
    pub fn next(&self, timeout: Duration) -> Option<Input> {
        match self.rx.recv_timeout(timeout) {
            Ok(input) => Some(input),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Some(Input::Gone("the terminal input reader ended".into()))
            }
        }
    }
}

/// How long dropping the input thread waits for it to see its stop flag: a few of its waits.
const JOIN_WITHIN: Duration = Duration::from_millis(4 * WAIT_MS as u64);

impl Drop for InputThread {
    /// A thread that saw its terminal go has ended already; one that is still running is at
    /// most [`WAIT_MS`] from seeing the flag — unless crossterm is stuck inside a read of a
    /// terminal that died a moment ago, spinning, and that one is left behind after
    /// [`JOIN_WITHIN`], never joined. Not decided by asking whether standard input is dead:
    /// after a hang-up it has been pointed at `/dev/null` (`interrupt::detach_dead_outputs`),
    /// which looks alive, and the join then waited for the spinning thread forever — a
    /// hung-up dashboard that never exited.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let deadline = std::time::Instant::now() + JOIN_WITHIN;
            while !t.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

fn read_loop(fd: libc::c_int, tx: &mpsc::Sender<Input>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        if let Err(why) = wait_readable(fd) {
            let _ = tx.send(Input::Gone(why));
            return;
        }
        // Whatever crossterm can parse now: keys and clicks, or a resize it caught (SIGWINCH).
        loop {
            match event::poll(Duration::ZERO).and_then(|ready| {
                if ready {
                    event::read().map(Some)
                } else {
                    Ok(None)
                }
            }) {
                Ok(Some(ev)) => {
                    if tx.send(Input::Event(ev)).is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Input::Gone(format!("reading the terminal failed: {e}")));
                    return;
                }
            }
        }
    }
}

/// Waits up to [`WAIT_MS`] for the terminal to have input. `Err` when it never will again: it
/// hung up, reports an error, or is readable with nothing to read (end of file).
fn wait_readable(fd: libc::c_int) -> Result<(), String> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd we own.
    let n = unsafe { libc::poll(&mut p, 1, WAIT_MS) };
    if n < 0 {
        let err = std::io::Error::last_os_error();
        return if err.kind() == std::io::ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(format!("waiting for terminal input failed: {err}"))
        };
    }
    if p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return Err("the terminal hung up".into());
    }
    if p.revents & libc::POLLIN != 0 && pending_bytes(fd) == Some(0) {
        return Err("the terminal's input ended".into());
    }
    Ok(())
}

/// How many bytes wait to be read (`FIONREAD`), if the descriptor says.
fn pending_bytes(fd: libc::c_int) -> Option<libc::c_int> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer we pass.
    let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
    (r == 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_input_is_gone_not_waited_on() {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(writer);
        let fd = OwnedFd::from(reader);
        let err = wait_readable(fd.as_raw_fd()).expect_err("end of file is the end");
        assert!(err.contains("hung up") || err.contains("ended"), "{err}");
    }

    #[test]
    fn an_open_input_with_nothing_to_read_is_waited_on() {
        let (reader, _writer) = std::io::pipe().expect("pipe");
        let fd = OwnedFd::from(reader);
        assert_eq!(wait_readable(fd.as_raw_fd()), Ok(()));
    }
}
