//! Getting the terminal into raw mode and, above all, back out of it: on return, on error
//! (the guard's `Drop`), on a panic of the dashboard's thread (a hook that restores before the
//! panic message is printed, so the message is readable). While the dashboard is up it holds
//! [`crate::interrupt::handle`], so SIGTERM and SIGHUP request a stop the event loop acts on
//! rather than ending the process with the terminal left raw.

use std::{
    io::{self, Stdout},
    sync::{
        Mutex, Once,
        atomic::{AtomicBool, Ordering},
    },
    thread::ThreadId,
};

use crossterm::{
    cursor, execute,
    style::Print,
    terminal::{
        Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode,
        enable_raw_mode,
    },
};
use ratatui::{Terminal, backend::CrosstermBackend};

/// Whether the terminal is ours right now; the panic hook only acts when it is, so a panic
/// after the dashboard closed prints normally.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The thread drawing the dashboard. Only its panic ends the dashboard.
static UI_THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Mouse reporting of presses, releases and the wheel (1000) in SGR encoding (1006), which has
/// no column limit. Not crossterm's `EnableMouseCapture`: that adds every pointer motion (1003),
/// a stream of events the dashboard has no use for.
const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1006h";
const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1000l";

fn restore() {
    let _ = disable_raw_mode();
    // Turning mouse reporting off when it was never on is harmless, and a panic hook does not
    // know whether it was.
    let _ = execute!(
        io::stdout(),
        Print(MOUSE_OFF),
        LeaveAlternateScreen,
        cursor::Show
    );
}

/// A panic on the dashboard's thread restores the terminal before the message is printed, so
/// the message is readable and the shell usable. A panic on another thread (a tokio task, which
/// tokio catches) does not end the dashboard: restoring the terminal then would leave the
/// dashboard drawing over the shell, and printing would scribble over the dashboard, so the
/// message goes to the log pane and log file instead.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_ui = UI_THREAD
                .lock()
                .map(|t| *t == Some(std::thread::current().id()))
                .unwrap_or(true);
            if ACTIVE.load(Ordering::SeqCst) && !on_ui {
                let name = std::thread::current()
                    .name()
                    .unwrap_or("unnamed")
                    .to_string();
                log::error!("panic in thread {name}: {info}");
                return;
            }
            if ACTIVE.swap(false, Ordering::SeqCst) {
                restore();
            }
            previous(info);
        }));
    });
}

/// The dashboard's hold on the terminal; dropping it gives the terminal back.
pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
    _signals: crate::interrupt::Handling,
}

impl TerminalGuard {
    pub fn enter(mouse: bool) -> anyhow::Result<Self> {
        install_panic_hook();
        let signals = crate::interrupt::handle();
        if let Ok(mut t) = UI_THREAD.lock() {
            *t = Some(std::thread::current().id());
        }
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        // From here on, an early return drops a guard that restores.
        let guard = TerminalGuard {
            terminal: Terminal::new(CrosstermBackend::new(io::stdout()))?,
            _signals: signals,
        };
        // Not `Terminal::clear`: it asks the terminal where the cursor is and fails when no
        // answer comes (some multiplexers, serial consoles); a plain clear needs no answer.
        execute!(
            io::stdout(),
            EnterAlternateScreen,
            cursor::Hide,
            Clear(ClearType::All)
        )?;
        if mouse {
            execute!(io::stdout(), Print(MOUSE_ON))?;
        }
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        if ACTIVE.swap(false, Ordering::SeqCst) {
            restore();
        }
    }
}
