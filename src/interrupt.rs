//! Stop requests from outside the dashboard's keys: Ctrl-C (SIGINT), SIGTERM, and a hang-up —
//! SIGHUP, or the terminal's input ending or failing, which is what a dropped SSH connection or
//! a closed terminal window looks like from inside.
//!
//! A run that is sending treats each of them as the dashboard's `q`: sending stops, the journal
//! is synced and released, the report is written, and the process exits with
//! [`crate::exit::INTERRUPTED`]. Outside such a run (loading the input, preflight) nothing has
//! been sent and nothing is owed, so the signals keep their default action and end the process
//! at once, as they always did.
//!
//! How: [`install`] (first thing in `main`) registers one handler per signal that sets a flag,
//! plus signal-hook's "conditional default", which performs the signal's default action while
//! no [`Handling`] guard is alive. A phase that stops cleanly holds a [`Handling`] and checks
//! [`requested`] (or awaits [`wait`]). Ctrl-C pressed a second time takes the default action,
//! so a user who asks twice is never kept waiting.
//!
//! A hang-up is final: once one is recorded, later SIGHUPs (a hang-up brings one from the kernel
//! and another as the session's shell exits) are ignored even after the phase let go, so the
//! process finishes its stop instead of dying halfway through its report.
//!
//! SIGHUP is left alone when the process started with it ignored (`nohup`): the user chose to
//! outlive the terminal, and a headless run then carries on as before.

use std::{
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, AtomicU8, Ordering},
    },
    time::Duration,
};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// Why a run was asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Ctrl-C outside the dashboard (SIGINT).
    CtrlC,
    /// SIGTERM: `kill`, a service manager, a container runtime.
    Terminate,
    /// SIGHUP, or the terminal's input ended or failed: the terminal is gone.
    HangUp,
}

impl Reason {
    /// For the log: what happened, in the user's words.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::CtrlC => "interrupted (Ctrl-C)",
            Reason::Terminate => "terminated (SIGTERM)",
            Reason::HangUp => "the terminal hung up (SIGHUP or its input closed)",
        }
    }

    fn code(self) -> u8 {
        match self {
            Reason::CtrlC => 1,
            Reason::Terminate => 2,
            Reason::HangUp => 3,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Reason::CtrlC),
            2 => Some(Reason::Terminate),
            3 => Some(Reason::HangUp),
            _ => None,
        }
    }
}

/// The first reason given, 0 while none has been.
static REASON: AtomicU8 = AtomicU8::new(0);
/// True while no phase handles the signals: they then act as if txpace had no handler.
static UNHANDLED: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// How many [`Handling`] guards are alive.
static HOLDERS: Mutex<usize> = Mutex::new(0);
/// Whether SIGHUP was ignored when the process started (`nohup`).
static HANGUP_IGNORED: AtomicBool = AtomicBool::new(false);

/// Whether the terminal has hung up (a SIGHUP came, or the dashboard found it gone).
static HUNG_UP: AtomicBool = AtomicBool::new(false);
/// True while a SIGHUP would take its default action: no phase handles the signals and the
/// terminal has not hung up yet. Once it has, later SIGHUPs carry no news — a hang-up delivers
/// one from the kernel and another when the shell that led the session exits — and must not end
/// a process that is finishing its stop (writing the report) after its phase let go.
static HANGUP_DEFAULT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn unhandled() -> &'static Arc<AtomicBool> {
    UNHANDLED.get_or_init(|| Arc::new(AtomicBool::new(true)))
}

fn hangup_default() -> &'static Arc<AtomicBool> {
    HANGUP_DEFAULT.get_or_init(|| Arc::new(AtomicBool::new(true)))
}

/// Records the hang-up; from now on SIGHUP never takes its default action.
fn note_hang_up() {
    HUNG_UP.store(true, Ordering::SeqCst);
    hangup_default().store(false, Ordering::SeqCst);
}

/// Registers the handlers, once: call it first thing in `main`. Whether SIGHUP is ignored is
/// read from the disposition the process inherited, before a handler overwrites it. [`handle`]
/// installs them too, for programs (tests) that start the dashboard without txpace's `main`.
pub fn install() -> std::io::Result<()> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| register().map_err(|e| e.to_string()))
        .clone()
        .map_err(std::io::Error::other)
}

fn register() -> std::io::Result<()> {
    let hangup_ignored = inherited_ignored(SIGHUP);
    HANGUP_IGNORED.store(hangup_ignored, Ordering::SeqCst);
    let mut signals = vec![(SIGINT, Reason::CtrlC), (SIGTERM, Reason::Terminate)];
    if !hangup_ignored {
        signals.push((SIGHUP, Reason::HangUp));
    }
    for (sig, reason) in signals {
        // Order matters: signal-hook runs a signal's actions in the order they were registered,
        // so each conditional default sees the flags as they were before this signal.
        let default = if sig == SIGHUP {
            hangup_default()
        } else {
            unhandled()
        };
        signal_hook::flag::register_conditional_default(sig, Arc::clone(default))?;
        // Ctrl-C pressed again while a stop is under way ends the process: the user asked
        // twice. Not SIGHUP, which a hang-up can deliver twice (the kernel, then again as the
        // shell that led the session exits; see `HANGUP_DEFAULT`), nor SIGTERM, which changes
        // nothing a stop is not already doing.
        let again = Arc::new(AtomicBool::new(false));
        if sig == SIGINT {
            signal_hook::flag::register_conditional_default(sig, Arc::clone(&again))?;
        }
        // SAFETY: the action only stores into atomics, which is async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                let _ =
                    REASON.compare_exchange(0, reason.code(), Ordering::SeqCst, Ordering::SeqCst);
                if reason == Reason::HangUp {
                    note_hang_up();
                }
                again.store(true, Ordering::SeqCst);
            })?;
        }
    }
    Ok(())
}

/// Whether `sig` was set to be ignored when the process started.
fn inherited_ignored(sig: libc::c_int) -> bool {
    // SAFETY: a query only (null new action); `old` is a plain C struct we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Whether a hang-up is ignored by the user's choice (`nohup`): a headless run carries on.
pub fn hangup_ignored() -> bool {
    HANGUP_IGNORED.load(Ordering::SeqCst)
}

/// Why a stop was asked for, if it was.
pub fn requested() -> Option<Reason> {
    Reason::from_code(REASON.load(Ordering::SeqCst))
}

/// Records a stop that no signal brought: the dashboard found its terminal gone.
pub fn request(reason: Reason) {
    let _ = REASON.compare_exchange(0, reason.code(), Ordering::SeqCst, Ordering::SeqCst);
    if reason == Reason::HangUp {
        note_hang_up();
    }
}

/// Resolves once a stop is requested. Polled: a signal handler may not wake a task, and 50 ms
/// is well inside the "within a second or two" a stop promises.
pub async fn wait() -> Reason {
    loop {
        if let Some(r) = requested() {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// While alive, the signals only request a stop; the phase holding it must act on
/// [`requested`]. Guards nest.
pub struct Handling(());

/// Takes the signals over until the returned guard is dropped.
pub fn handle() -> Handling {
    if let Err(e) = install() {
        log::warn!("installing the signal handlers: {e}; signals end the process at once");
    }
    let mut n = HOLDERS.lock().unwrap_or_else(|p| p.into_inner());
    *n += 1;
    unhandled().store(false, Ordering::SeqCst);
    hangup_default().store(false, Ordering::SeqCst);
    Handling(())
}

impl Drop for Handling {
    fn drop(&mut self) {
        let mut n = HOLDERS.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        if *n == 0 {
            unhandled().store(true, Ordering::SeqCst);
            hangup_default().store(!HUNG_UP.load(Ordering::SeqCst), Ordering::SeqCst);
            // A hang-up recorded between the load and the store must still win.
            if HUNG_UP.load(Ordering::SeqCst) {
                hangup_default().store(false, Ordering::SeqCst);
            }
        }
    }
}

/// Points standard input, output and error at `/dev/null` where they lead to a terminal that
/// hung up (or a pipe nobody reads any more). Every later `println!` would otherwise fail with
/// EIO and panic, in the middle of writing the report; the log file keeps the run's account.
/// Descriptors that still work (a file, a live terminal after a plain `kill -HUP`) are kept.
pub fn detach_dead_outputs() {
    let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    else {
        return;
    };
    use std::os::fd::AsRawFd;
    for fd in 0..=2 {
        if is_dead(fd) {
            // SAFETY: dup2 onto a standard descriptor from one we own; both stay valid.
            unsafe {
                libc::dup2(null.as_raw_fd(), fd);
            }
        }
    }
}

/// Whether `fd` reports a hang-up or an error: a terminal whose other side closed, a pipe whose
/// reader left.
pub fn is_dead(fd: libc::c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    };
    // SAFETY: one pollfd we own, no waiting.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_round_trip_through_their_codes() {
        for r in [Reason::CtrlC, Reason::Terminate, Reason::HangUp] {
            assert_eq!(Reason::from_code(r.code()), Some(r));
        }
        assert_eq!(Reason::from_code(0), None);
    }

    #[test]
    fn a_pipe_whose_reader_left_is_dead_and_a_file_is_not() {
        let (reader, writer) = std::io::pipe().expect("pipe");
        use std::os::fd::AsRawFd;
        assert!(!is_dead(writer.as_raw_fd()));
        drop(reader);
        assert!(is_dead(writer.as_raw_fd()));
        let file = tempfile::tempfile().expect("temp file");
        assert!(!is_dead(file.as_raw_fd()));
    }
}
