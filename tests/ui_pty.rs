//! `ui::run` in a real pseudo-terminal (util-linux `script`): keys reach the engine as
//! commands, `q` and SIGTERM end it with the terminal restored (alternate screen left, cursor
//! shown, canonical mode and echo back on), and `exit_when_done` closes it by itself.
//!
//! The test binary re-runs itself as the program inside the terminal: the `child` test does the
//! dashboard's side when `TXPACE_UI_PTY_CHILD` is set, and nothing otherwise.

mod common;

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

const CHILD: &str = "TXPACE_UI_PTY_CHILD";

#[test]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    let snap = match mode.as_str() {
        "done" => fixtures::done(50),
        _ => fixtures::running(300),
    };
    let (_tx, rx) = watch::channel(Arc::new(snap));
    let (ctx, mut crx) = mpsc::unbounded_channel();
    println!("PID {}", std::process::id());
    let exit = ui::run(
        rx,
        ctx,
        UiOptions {
            exit_when_done: mode == "done",
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
    println!("EXIT {exit:?} COMMANDS {cmds:?}");
}

struct Session {
    child: std::process::Child,
    out: Arc<Mutex<Vec<u8>>>,
}

impl Session {
    /// Starts the `child` test in a 160×48 pseudo-terminal, then prints the terminal's modes.
    fn start(mode: &str) -> Session {
        common::tool::require(
            "script",
            &["--version"],
            "bsdutils",
            "to run the dashboard in a pseudo-terminal",
        );
        let exe = std::env::current_exe().unwrap();
        let inner = format!(
            "stty cols 160 rows 48; {} --exact child --nocapture --test-threads=1; echo RC=$?; stty -a",
            exe.display()
        );
        let mut child = Process::new("script")
            .args(["-q", "-f", "-e", "-c", &inner, "/dev/null"])
            .env(CHILD, mode)
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
    assert!(out.contains("RC=0"), "child test passed:\n{out}");
    let modes = &out[out.rfind("RC=0").unwrap()..];
    let flags: Vec<&str> = modes.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig"] {
        assert!(flags.contains(&flag), "{flag} not restored:\n{modes}");
    }
}

#[test]
fn keys_become_commands_and_q_restores_the_terminal() {
    let mut s = Session::start("running");
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
}

#[test]
fn sigterm_quits_and_restores_the_terminal() {
    let s = Session::start("running");
    let out = s.wait_for("Expired");
    let pid: u32 = out
        .split("PID ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .expect("child pid");
    let killed = Process::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = s.finish();
    assert!(out.contains("EXIT Quit COMMANDS [Stop]"), "{out}");
    assert_restored(&out);
}

#[test]
fn exit_when_done_closes_by_itself() {
    assert_eq!(fixtures::done(1).run, RunState::Done);
    let s = Session::start("done");
    let out = s.finish();
    assert!(out.contains("EXIT Done COMMANDS []"), "{out}");
    assert_restored(&out);
}
