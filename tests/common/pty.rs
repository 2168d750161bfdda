//! The real `txpace` in a pseudo-terminal (160×48), read back as the screen a user would see.

use std::{
    io::{Read, Write},
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

pub use portable_pty::ExitStatus;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

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
    /// The terminal's side of the pseudo-terminal; `None` once [`Terminal::hang_up`] closed it.
    master: Option<Box<dyn MasterPty + Send>>,
    writer: Option<Box<dyn Write + Send>>,
    /// Tells the reader thread to let go of its copy of the master.
    stop_reading: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
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
        let master = pty.master;
        // Non-blocking (the flag is shared by every copy of the descriptor), so the reader
        // thread can look at its stop flag and let its copy go: the terminal hangs up only when
        // the last copy of the master closes.
        let fd = master.as_raw_fd().expect("the master's descriptor");
        // SAFETY: fcntl on a descriptor we own, setting one flag.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let mut reader = master.try_clone_reader().expect("reader");
        let writer = master.take_writer().expect("writer");
        let raw = Arc::new(Mutex::new(Vec::new()));
        let sink = raw.clone();
        let stop_reading = Arc::new(AtomicBool::new(false));
        let stop = stop_reading.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while !stop.load(Ordering::SeqCst) {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Ok(mut r) = sink.lock() {
                            r.extend_from_slice(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        });
        Terminal {
            child,
            master: Some(master),
            writer: Some(writer),
            stop_reading,
            reader: Some(reader),
            raw,
            screen: Mutex::new((vt100::Parser::new(ROWS, COLS, 0), 0)),
        }
    }

    /// Closes the terminal under the program, as a dropped SSH connection or a closed terminal
    /// window does (and as `tmux kill-session` does): every copy of the master side is closed,
    /// so the kernel hangs the terminal up — SIGHUP to its foreground process group, and reads
    /// of it end. Nothing is typed or drawn any more.
    pub fn hang_up(&mut self) {
        self.stop_reading.store(true, Ordering::SeqCst);
        if let Some(t) = self.reader.take() {
            let _ = t.join();
        }
        self.writer = None;
        self.master = None;
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a process id")
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
            .as_mut()
            .expect("the terminal is open")
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
                "txpace did not exit within {timeout:?}; where it waits:\n{}",
                where_it_waits(self.pid())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What a process that should have exited is doing: each thread's name, state and kernel
/// wait channel, and its child processes' command lines — enough to tell a blocked call from a
/// child it is waiting for.
pub fn where_it_waits(pid: u32) -> String {
    let mut out = Vec::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    for task in tasks.flatten() {
        let dir = task.path();
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let state = read("stat")
            .rsplit_once(") ")
            .map(|(_, rest)| rest.chars().take(1).collect::<String>())
            .unwrap_or_default();
        out.push(format!("thread {} {state} {}", read("comm"), read("wchan")));
    }
    let children = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    for child in children {
        let stat = std::fs::read_to_string(child.path().join("stat")).unwrap_or_default();
        let parent = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string));
        if parent.as_deref() == Some(pid.to_string().as_str()) {
            let cmd = std::fs::read(child.path().join("cmdline")).unwrap_or_default();
            let state = stat.rsplit_once(") ").map_or("", |(_, r)| &r[..1]);
            out.push(format!(
                "child {state} {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    out.join("\n")
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
