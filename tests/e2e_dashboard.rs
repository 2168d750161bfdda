//! The real `txpace send` dashboard in a pseudo-terminal (160×48) against a real validator:
//! the screen shows the five queues, the leader's identity and the target pace; `p` pauses,
//! `+` raises the pace 10%, `q` quits with exit 0 and the terminal restored.

mod common;

use std::{
    io::{Read, Write},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use common::{generate, start_validator};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use solana_signer::Signer;
use txpace::validator::ValidatorOptions;

const ROWS: u16 = 48;
const COLS: u16 = 160;

/// Everything the program wrote, and the screen it amounts to.
struct Screen {
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Screen {
    fn text(&self) -> String {
        let raw = self.raw.lock().map(|r| r.clone()).unwrap_or_default();
        let mut parser = vt100::Parser::new(ROWS, COLS, 0);
        parser.process(&raw);
        parser.screen().contents()
    }

    fn raw(&self) -> Vec<u8> {
        self.raw.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Waits until `pred` holds for the screen, or fails showing the screen.
    fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
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
}

#[test]
fn dashboard_shows_queues_leader_and_pace_and_obeys_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let file = generate(&v, dir.path(), "dash.b64", 2000);

    let pty = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let config = dir.path().join("empty-cli-config.yml");
    std::fs::write(&config, "").expect("config");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_txpace"));
    cmd.args(["--config", config.to_str().expect("utf-8")]);
    cmd.args([
        "send",
        "--url",
        &v.rpc_url(),
        "--ws",
        &v.ws_url(),
        "--rate",
        "50",
    ]);
    cmd.arg(file.to_str().expect("utf-8"));
    cmd.env("XDG_DATA_HOME", dir.path());
    cmd.env("TERM", "xterm-256color");
    cmd.cwd(dir.path());
    let mut child = pty.slave.spawn_command(cmd).expect("spawn txpace");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().expect("reader");
    let mut writer = pty.master.take_writer().expect("writer");
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
    let screen = Screen { raw };

    let leader = v.identity_keypair().pubkey().to_string();
    let first8 = leader[..8].to_string();
    let text = screen.wait_for("the dashboard", Duration::from_secs(60), |t| {
        ["Pending", "Resent", "Confirmed", "Failed", "Expired"]
            .iter()
            .all(|q| t.contains(q))
            && t.contains(&first8)
            && t.contains("target 50 tx/s")
    });
    eprintln!("dashboard:\n{text}");

    writer.write_all(b"p").expect("p");
    screen.wait_for("PAUSED", Duration::from_secs(5), |t| {
        t.to_lowercase().contains("paused")
    });
    writer.write_all(b"+").expect("+");
    let text = screen.wait_for("55 tx/s", Duration::from_secs(5), |t| t.contains("55 tx/s"));
    eprintln!("after p and +:\n{text}");

    let quit = Instant::now();
    writer.write_all(b"q").expect("q");
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            quit.elapsed() < Duration::from_secs(10),
            "txpace did not quit within 10 s of q"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("quit took {:.2} s", quit.elapsed().as_secs_f64());
    assert_eq!(status.exit_code(), 0, "exit status {status:?}");
    // The terminal was given back: alternate screen left and the cursor shown again.
    std::thread::sleep(Duration::from_millis(300));
    let raw = screen.raw();
    let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(4096)..]).to_string();
    assert!(tail.contains("\x1b[?1049l"), "alternate screen not left");
    assert!(tail.contains("\x1b[?25h"), "cursor not shown again");
    assert!(
        tail.contains("stopped: 2000 transactions"),
        "no summary after the dashboard: {tail:?}"
    );
}
