//! The live dashboard for `txpace send` and `txpace demo`.
//!
//! It only reads the engine's published [`Snapshot`]s and sends [`Command`]s back; it never
//! holds engine state, so a slow terminal cannot slow the pacer. The state and drawing live in
//! [`app::App`], which has no terminal and no clock; this module adds the terminal, the event
//! loop and the logger.
//!
//! One module per panel, each with its layout in its doc comment: [`header`], [`banner`],
//! [`leaders`], [`rate`], [`queues`], [`latency`], [`logs`], [`keybar`], and the overlays
//! [`help`], [`detail`] and [`confirm`], and the [`find`] prompt.

pub mod app;
pub mod banner;
mod columns;
pub mod confirm;
pub mod detail;
pub mod find;
/// Test support: built for txpace's own tests and benches only (the `test-support` feature,
/// which the dev-dependency on itself turns on), never into the release binary.
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod fixtures;
pub mod fmt;
pub mod header;
pub mod help;
mod input;
pub mod keybar;
pub mod keymap;
pub mod latency;
pub mod leaders;
pub mod link;
pub mod logs;
pub mod queues;
pub mod rate;
pub mod small;
mod terminal;
pub mod theme;

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use crossterm::event::{Event, MouseEventKind};
use tokio::sync::{mpsc, watch};

pub use app::{App, Overlay};

use crate::engine::command::Command;
use crate::engine::snapshot::Snapshot;
use crate::interrupt::{self, Reason};
use input::{Input, InputThread};

/// About 10 frames per second: smooth enough for counters that change every second, cheap
/// enough to leave the cores to the sender.
const FRAME: Duration = Duration::from_millis(100);
/// The longest the loop waits for input before looking at the snapshot and the stop requests
/// again; keys are answered as soon as they arrive, this only bounds how late a new snapshot is
/// noticed.
const POLL: Duration = Duration::from_millis(20);
/// A new snapshot is drawn at once if the last frame is at least this old, so a pause or rate
/// change shows within about 50 ms of the engine publishing it.
const MIN_FRAME: Duration = Duration::from_millis(40);

pub struct UiOptions {
    /// Close the dashboard by itself once the run is over (done, stopped or failed).
    pub exit_when_done: bool,
    /// What this run is, for the header, e.g. "send 5000 txs from x.b64".
    pub title: String,
    /// The colors: dark or light, or none at all under `NO_COLOR`.
    pub theme: theme::Theme,
    /// Where the logs are copied, for the log pane's title (see [`crate::logging`]).
    pub log_file: Option<PathBuf>,
    /// Take the mouse: clicks and the wheel act on the dashboard. Off, the terminal keeps it
    /// for selecting text (most terminals also give it back while Shift is held).
    pub mouse: bool,
    /// The keys: the defaults with txpace.toml's `[keys]` applied.
    pub keymap: keymap::Keymap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiExit {
    /// The user quit (q, Ctrl-C); `Command::Stop` was sent. The run may have been over already:
    /// the caller reads the last snapshot for that.
    Quit,
    /// Asked to stop from outside — SIGTERM, SIGHUP — or the terminal went away (its input
    /// ended or failed, or drawing on it failed); `Command::Stop` was sent. After a hang-up the
    /// terminal is gone: the caller must not expect anyone to read what it prints there.
    Interrupted(Reason),
    /// `exit_when_done` and the run is over.
    Done,
}

/// Runs the dashboard on the current thread until the user quits (q / Ctrl-C), a stop is
/// requested from outside (SIGTERM, SIGHUP; see [`crate::interrupt`]), the terminal goes away,
/// or, with `exit_when_done`, the run is over. The terminal is restored on every way out,
/// including a panic.
///
/// Must not run on a tokio worker thread (it blocks on terminal input); call it from the main
/// thread with the engine on a runtime, or inside `spawn_blocking`.
pub fn run(
    mut snapshots: watch::Receiver<Arc<Snapshot>>,
    commands: mpsc::UnboundedSender<Command>,
    opts: UiOptions,
) -> anyhow::Result<UiExit> {
    let mut guard = terminal::TerminalGuard::enter(opts.mouse)?;
    let input = InputThread::spawn()?;
    let mut app = App::new(opts.title, false)
        .with_theme(opts.theme)
        .with_keymap(opts.keymap)
        .with_log_file(opts.log_file.as_deref());
    let mut snap = snapshots.borrow_and_update().clone();
    let mut last_draw: Option<Instant> = None;
    let mut dirty = true;
    // Only the engine can refuse a command; once it is gone there is nobody to tell.
    let interrupted = |reason: Reason| {
        let _ = commands.send(Command::Stop);
        // Before the terminal is let go: ratatui's `Drop` reports a failure to show the cursor
        // with `eprintln!`, which panics on a dead terminal. Whatever the stop's name: a
        // SIGTERM that came before the hang-up was noticed names it `Terminate`, and the
        // terminal is as dead (only dead descriptors are detached).
        interrupt::detach_dead_outputs();
        Ok(UiExit::Interrupted(reason))
    };

    loop {
        if let Some(reason) = interrupt::requested() {
            log::warn!("{}: stopping", reason.describe());
            return interrupted(reason);
        }
        // A closed channel means the engine is gone; keep showing its last word.
        if let Some(newer) = newer(&mut snapshots, &snap) {
            snap = newer;
            dirty = true;
        }
        let due = last_draw.is_none_or(|t| {
            let age = t.elapsed();
            age >= FRAME || (dirty && age >= MIN_FRAME)
        });
        if due {
            if let Err(e) = guard.terminal.draw(|f| app.render(f, &snap)) {
                return interrupted(terminal_gone(&format!("drawing failed: {e}")));
            }
            last_draw = Some(Instant::now());
            dirty = false;
        }
        if opts.exit_when_done && snap.run.is_over() {
            return Ok(UiExit::Done);
        }

        let ev = match input.next(POLL) {
            None => continue,
            Some(Input::Gone(why)) => return interrupted(terminal_gone(&why)),
            Some(Input::Event(ev)) => ev,
        };
        let drawn = match ev {
            Event::Mouse(ev)
                if !matches!(ev.kind, MouseEventKind::Moved | MouseEventKind::Up(_)) =>
            {
                app.handle_mouse(ev, &snap);
                guard.terminal.draw(|f| app.render(f, &snap))
            }
            Event::Key(key) => {
                // Act on the newest picture, not the one drawn up to a frame ago.
                if let Some(newer) = newer(&mut snapshots, &snap) {
                    snap = newer;
                }
                if let Some(cmd) = app.handle_key(key, &snap) {
                    let _ = commands.send(cmd);
                }
                if app.should_quit() {
                    return Ok(UiExit::Quit);
                }
                // Answer the key now rather than at the next frame.
                guard.terminal.draw(|f| app.render(f, &snap))
            }
            // `draw` picks up the new size itself; just draw now.
            Event::Resize(..) => {
                last_draw = None;
                continue;
            }
            _ => continue,
        };
        if let Err(e) = drawn {
            return interrupted(terminal_gone(&format!("drawing failed: {e}")));
        }
        last_draw = Some(Instant::now());
        dirty = false;
    }
}

/// The terminal cannot be read or drawn on any more: a hang-up, whatever the kernel said. The
/// stop is recorded for the rest of the process (the command's closing lines must not go to
/// the dead terminal either).
fn terminal_gone(why: &str) -> Reason {
    interrupt::request(Reason::HangUp);
    // A stop asked for before (Ctrl-C, SIGTERM) keeps its own name.
    let reason = interrupt::requested().unwrap_or(Reason::HangUp);
    log::warn!("{why}: {}; stopping", reason.describe());
    reason
}

/// A picture newer than `shown`, if any — including the last one an engine published just
/// before it ended: a closed channel answers `has_changed` with an error even when its final
/// value (the DONE state) was never read.
fn newer(rx: &mut watch::Receiver<Arc<Snapshot>>, shown: &Snapshot) -> Option<Arc<Snapshot>> {
    match rx.has_changed() {
        Ok(true) => Some(rx.borrow_and_update().clone()),
        Ok(false) => None,
        Err(_) => {
            let last = rx.borrow().clone();
            (last.seq != shown.seq).then_some(last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_picture_before_the_engine_ends_is_not_lost() {
        let first = Arc::new(fixtures::running(3));
        let (tx, mut rx) = watch::channel(first.clone());
        assert!(newer(&mut rx, &first).is_none());
        let mut done = fixtures::done(3);
        done.seq = first.seq + 1;
        tx.send_replace(Arc::new(done));
        drop(tx);
        let got = newer(&mut rx, &first).expect("the final snapshot");
        assert_eq!(got.run, crate::engine::snapshot::RunState::Done);
        assert!(newer(&mut rx, &got).is_none());
    }
}
