//! `ui::run` in a real pseudo-terminal (util-linux `script`): keys reach the engine as
//! commands, `q` and SIGTERM end it with the terminal restored (alternate screen left, cursor
//! shown, canonical mode and echo back on), and `exit_when_done` closes it by itself.
//!
//! Each test re-runs itself (`common::own_process`) as the program inside the terminal: that copy
//! shows the dashboard, the test judges what the terminal received.

use crate::common::{self, own_process};

use std::{
    io::{Read, Write},
    process::{Command as Process, Stdio},
    sync::{Arc, Mutex},
    thread,
    time::{Duration, Instant},
};

use tokio::sync::{mpsc, watch};
use txpace::engine::snapshot::RunState;
use txpace::ui::{self, UiOptions, fixtures};

/// What the dashboard inside the terminal shows.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// A run in progress, 300 transactions.
    Running,
    /// A finished run, with `exit_when_done`.
    Done,
}

/// Runs the current test's check: in the copy of the test binary inside the terminal, the
/// dashboard (`mode`); in the test itself, `check` on that terminal's session.
fn in_terminal(mode: Mode, check: impl FnOnce(Session)) {
    in_terminal_after(mode, "", check);
}

/// As [`in_terminal`], the shell inside the terminal running `setup` (shell words, `;`-ended)
/// before the copy.
fn in_terminal_after(mode: Mode, setup: &str, check: impl FnOnce(Session)) {
    if own_process::is_child() {
        dashboard(mode);
    } else {
        check(Session::start(setup));
    }
}

/// The program inside the terminal: `ui::run` on a fixed snapshot; prints its pid, and how it
/// ended with the commands it sent.
fn dashboard(mode: Mode) {
    let snap = match mode {
        Mode::Done => fixtures::done(50),
        Mode::Running => fixtures::running(300),
    };
    // As txpace's `main` does first: SIGTERM and SIGHUP then ask the dashboard to stop.
    txpace::interrupt::install().expect("installing the signal handlers");
    let (_tx, rx) = watch::channel(Arc::new(snap));
    let (ctx, mut crx) = mpsc::unbounded_channel();
    println!("PID {}", std::process::id());
    let exit = ui::run(
        rx,
        ctx,
        UiOptions {
            exit_when_done: mode == Mode::Done,
            title: "pty test".into(),
            theme: txpace::ui::theme::Theme::new(true),
            log_file: None,
            mouse: true,
            keymap: Default::default(),
        },
    )
    .expect("ui::run");
    let mut cmds = Vec::new();
    while let Ok(c) = crx.try_recv() {
        cmds.push(c);
    }
    let line = format!("EXIT {exit:?} COMMANDS {cmds:?}");
    // A stop from outside may have pointed standard output (a dead terminal) at /dev/null: the
    // line goes to a file too.
    if matches!(exit, ui::UiExit::Interrupted(_)) {
        let _ = std::fs::write(result_file(std::process::id()), &line);
    }
    // After a hang-up standard output is a dead terminal: printing must not fail the copy.
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{line}");
}

struct Session {
    child: std::process::Child,
    out: Arc<Mutex<Vec<u8>>>,
}

impl Session {
    /// Starts the current test's copy in a 160×48 pseudo-terminal, after `setup`, then prints
    /// the terminal's modes.
    fn start(setup: &str) -> Session {
        common::tool::require(
            "script",
            &["--version"],
            "bsdutils",
            "to run the dashboard in a pseudo-terminal",
        );
        let copy = own_process::command();
        let words: Vec<String> = std::iter::once(copy.get_program())
            .chain(copy.get_args())
            .map(|w| format!("'{}'", w.to_string_lossy()))
            .collect();
        let inner = format!(
            "stty cols 160 rows 48; {setup} {}; echo RC=$?; stty -a",
            words.join(" ")
        );
        let mut child = Process::new("script")
            .args(["-q", "-f", "-e", "-c", &inner, "/dev/null"])
            .envs(copy.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env_remove("NO_COLOR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn script");
        let mut stdout = child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Session { child, out }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = self.text();
            if t.contains(needle) {
                return t;
            }
            assert!(Instant::now() < deadline, "no {needle:?} in:\n{t}");
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&mut self, keys: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(keys).unwrap();
        stdin.flush().unwrap();
    }

    fn finish(mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "script exited {status}: {}", self.text());
                break;
            }
            assert!(Instant::now() < deadline, "did not exit:\n{}", self.text());
            thread::sleep(Duration::from_millis(20));
        }
        // Let the reader drain what is left.
        thread::sleep(Duration::from_millis(100));
        self.text()
    }
}

/// The terminal was handed back as it was found.
fn assert_restored(out: &str) {
    let enter = out
        .find("\x1b[?1049h")
        .expect("entered the alternate screen");
    let leave = out.rfind("\x1b[?1049l").expect("left the alternate screen");
    assert!(enter < leave);
    assert!(out[leave..].contains("\x1b[?25h"), "cursor shown again");
    // Mouse reporting (presses and the wheel, SGR encoded) on while the dashboard is up, off
    // when it is gone.
    let mouse_on = out
        .find("\x1b[?1000h\x1b[?1006h")
        .expect("mouse reporting on");
    let mouse_off = out
        .rfind("\x1b[?1006l\x1b[?1000l")
        .expect("mouse reporting off");
    assert!(enter < mouse_on && mouse_on < mouse_off && mouse_off <= leave);
    assert!(out.contains("RC=0"), "the copy's test passed:\n{out}");
    let modes = &out[out.rfind("RC=0").unwrap()..];
    let flags: Vec<&str> = modes.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig"] {
        assert!(flags.contains(&flag), "{flag} not restored:\n{modes}");
    }
}

#[test]
fn keys_become_commands_and_q_restores_the_terminal() {
    in_terminal(Mode::Running, |mut s| {
        // Ratatui skips blank cells, so words arrive separated by cursor moves, not spaces.
        let screen = s.wait_for("Expired");
        for word in [
            "Pending",
            "Resent",
            "Confirmed",
            "Failed",
            "target",
            "tx/s",
            "RUNNING",
        ] {
            assert!(screen.contains(word), "{word} not on screen");
        }
        s.send(b"p");
        thread::sleep(Duration::from_millis(150));
        // A click on the Confirmed tab, a release and a wheel notch: the mouse sends no commands.
        s.send(b"\x1b[<0;30;20M\x1b[<0;30;20m\x1b[<65;30;30M");
        thread::sleep(Duration::from_millis(150));
        s.send(b"+");
        thread::sleep(Duration::from_millis(150));
        // Transactions are unfinished: q asks instead of quitting, and the p that answers the
        // question keeps the run going without pausing it; then q and y stop.
        s.send(b"q");
        thread::sleep(Duration::from_millis(300));
        assert!(
            s.child.try_wait().unwrap().is_none(),
            "q quit without asking"
        );
        assert!(!s.text().contains("EXIT"), "q quit without asking");
        s.send(b"p");
        thread::sleep(Duration::from_millis(150));
        s.send(b"q");
        thread::sleep(Duration::from_millis(150));
        s.send(b"y");
        let out = s.finish();
        assert!(
            out.contains("EXIT Quit COMMANDS [TogglePause, SetRate(Fixed(110.0)), Stop]"),
            "{out}"
        );
        assert_restored(&out);
    });
}

#[test]
fn sigterm_quits_and_restores_the_terminal() {
    in_terminal(Mode::Running, |s| {
        let out = s.wait_for("Expired");
        let pid = copy_pid(&out);
        signal(pid, "-TERM");
        let out = s.finish();
        assert!(
            out.contains("EXIT Interrupted(Terminate) COMMANDS [Stop]"),
            "{out}"
        );
        assert_restored(&out);
    });
}

/// The terminal goes away under the dashboard (`script`, which holds its master side, is
/// killed: the kernel hangs the terminal up, as for a dropped SSH connection). The dashboard
/// ends within seconds, saying why, instead of spinning in a reader of a dead terminal. (It
/// takes well under a second; the bound leaves room for a busy machine, and an ended copy whose
/// new parent has not reaped it yet counts as ended.)
#[test]
fn a_hang_up_ends_the_dashboard_promptly() {
    in_terminal(Mode::Running, |mut s| {
        let out = s.wait_for("Expired");
        let pid = copy_pid(&out);
        let closed = Instant::now();
        s.child
            .kill()
            .expect("killing script, which holds the terminal");
        let _ = s.child.wait();
        let (ended, said) = until_ended(pid, closed);
        assert!(
            !running(pid),
            "the dashboard was still running {ended:?} after its terminal hung up; it said {said:?}"
        );
        assert_eq!(
            said.trim(),
            "EXIT Interrupted(HangUp) COMMANDS [Stop]",
            "ended {ended:?} after the hang-up"
        );
    });
}

/// SIGTERM comes before the dashboard sees its terminal hang up — as in the end-to-end test,
/// which sends SIGTERM 300 ms after a hang-up a busy machine had not let the dashboard see yet.
/// The copy ignores SIGHUP (so the hang-up is seen only as a dead terminal) and is stopped
/// while both happen. The stop is named `Terminate`, the terminal is as dead, and the dashboard
/// lets go of it without printing there: ratatui's failure to show the cursor, printed to the
/// dead terminal, ended such a run with a panic (exit 101).
#[test]
fn sigterm_before_a_hang_up_is_seen_still_ends_cleanly() {
    in_terminal_after(Mode::Running, "trap '' HUP;", |mut s| {
        let out = s.wait_for("Expired");
        let pid = copy_pid(&out);
        signal(pid, "-STOP");
        signal(pid, "-TERM");
        s.child
            .kill()
            .expect("killing script, which holds the terminal");
        let _ = s.child.wait();
        signal(pid, "-CONT");
        let closed = Instant::now();
        let (_, said) = until_ended(pid, closed);
        assert!(!running(pid), "still running; it said {said:?}");
        assert_eq!(said.trim(), "EXIT Interrupted(Terminate) COMMANDS [Stop]");
    });
}

/// A hang-up brings SIGHUP twice: from the kernel, and again as the shell that led the session
/// exits — which can be after the dashboard has returned and let the signals go. The second must
/// not end a process that is finishing its stop (the copy above once died that way before it
/// could write its result).
#[test]
fn a_second_hang_up_after_the_dashboard_let_go_does_not_end_the_process() {
    use txpace::interrupt::{self, Reason};
    own_process::run(&[], || {
        interrupt::install().expect("installing the signal handlers");
        let raise_hang_up = || {
            // SAFETY: raising a signal at this process, whose handler is installed above.
            assert_eq!(unsafe { libc::raise(libc::SIGHUP) }, 0);
            thread::sleep(Duration::from_millis(50));
        };
        {
            let _handled = interrupt::handle();
            raise_hang_up();
            assert_eq!(interrupt::requested(), Some(Reason::HangUp));
        }
        // The phase let go: Ctrl-C or SIGTERM would now take their default action, but a second
        // SIGHUP carries no news and leaves the process running to here.
        raise_hang_up();
        println!("still running after the second SIGHUP");
    });
}

/// The copy's process id, which it printed first.
fn copy_pid(out: &str) -> u32 {
    out.split("PID ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .expect("child pid")
}

/// Sends the copy `pid` a signal (`kill`'s `-TERM`, `-STOP`, …).
fn signal(pid: u32, sig: &str) {
    let sent = Process::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill {sig} {pid}");
}

/// Waits (up to 10 s) for the copy `pid` to end; how long after `since` it had, and the line
/// it left in its result file ("" if none).
fn until_ended(pid: u32, since: Instant) -> (Duration, String) {
    while running(pid) && since.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(20));
    }
    let ended = since.elapsed();
    let result = result_file(pid);
    let said = std::fs::read_to_string(&result).unwrap_or_default();
    let _ = std::fs::remove_file(&result);
    (ended, said)
}

/// Process `pid` still runs: it exists and is not a zombie (ended, waiting for a parent to
/// collect it).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command's name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| !matches!(state, "Z" | "X")),
        Err(_) => false,
    }
}

/// Where the copy inside the terminal with process id `pid` writes how its dashboard ended:
/// after a hang-up its terminal can no longer carry it.
fn result_file(pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("txpace-ui-pty-{pid}.txt"))
}

#[test]
fn exit_when_done_closes_by_itself() {
    in_terminal(Mode::Done, |s| {
        assert_eq!(fixtures::done(1).run, RunState::Done);
        let out = s.finish();
        assert!(out.contains("EXIT Done COMMANDS []"), "{out}");
        assert_restored(&out);
    });
}
