//! The real `txpace` in a pseudo-terminal (160×48), read back as the screen a user would see.

use std::{
    io::{Read, Write},
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

pub use portable_pty::ExitStatus;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub const ROWS: u16 = 48;
pub const COLS: u16 = 160;

/// `txpace ARGS` for a terminal, with an empty Solana CLI config and its data directory
/// (logs, default journals) in `dir`.
pub fn txpace_in_terminal(dir: &Path, args: &[&str]) -> CommandBuilder {
    let config = dir.join("empty-cli-config.yml");
    std::fs::write(&config, "").expect("config");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_txpace"));
    cmd.args(["--config", config.to_str().expect("utf-8")]);
    cmd.args(args);
    cmd.env("XDG_DATA_HOME", dir);
    cmd.env("TERM", "xterm-256color");
    cmd.cwd(dir);
    cmd
}

/// A program running in a pseudo-terminal, everything it wrote kept.
pub struct Terminal {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    raw: Arc<Mutex<Vec<u8>>>,
    /// The screen so far and how many bytes of `raw` it has taken in: reading the screen
    /// parses only what arrived since, so a long run is not re-parsed from its first byte on
    /// every look (which starved the programs under test of CPU).
    screen: Mutex<(vt100::Parser, usize)>,
}

impl Terminal {
    pub fn spawn(cmd: CommandBuilder) -> Terminal {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let child = pty.slave.spawn_command(cmd).expect("spawn txpace");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let writer = pty.master.take_writer().expect("writer");
        let raw = Arc::new(Mutex::new(Vec::new()));
        let sink = raw.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut r) = sink.lock() {
                    r.extend_from_slice(&buf[..n]);
                }
            }
        });
        Terminal {
            child,
            writer,
            raw,
            screen: Mutex::new((vt100::Parser::new(ROWS, COLS, 0), 0)),
        }
    }

    /// The screen now.
    pub fn text(&self) -> String {
        let Ok(mut screen) = self.screen.lock() else {
            return String::new();
        };
        let (parser, done) = &mut *screen;
        if let Ok(raw) = self.raw.lock() {
            parser.process(&raw[*done..]);
            *done = raw.len();
        }
        parser.screen().contents()
    }

    /// Every byte written so far.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Waits until `pred` holds for the screen, or fails showing the screen.
    pub fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if pred(&text) {
                return text;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what}; screen:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Types `keys`.
    pub fn keys(&mut self, keys: &[u8]) {
        self.writer
            .write_all(keys)
            .expect("writing to the terminal");
    }

    /// The exit status if the program has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// Waits for the program to exit, failing after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                start.elapsed() < timeout,
                "txpace did not exit within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
