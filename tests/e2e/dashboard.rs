//! The real `txpace send` dashboard in a pseudo-terminal (160×48) against a real validator:
//! the screen shows the five queues, the leader's identity and the target pace; `p` pauses,
//! `+` raises the pace 10%, `q` quits with exit 0 and the terminal restored. `--metrics`
//! serves the dashboard's run too, and follows its pause.

use crate::{common, machine};

use std::time::{Duration, Instant};

use common::{
    generate,
    metrics::{announced, get, scrape},
    pty::{Terminal, txpace_in_terminal},
    start_validator,
};
use solana_signer::Signer;
use txpace::validator::ValidatorOptions;

#[test]
fn dashboard_shows_queues_leader_and_pace_and_obeys_keys() {
    let _machine = machine::share();
    let dir = tempfile::tempdir().expect("tempdir");
    let v = start_validator(ValidatorOptions::default());
    let file = generate(&v, dir.path(), "dash.b64", 2000);

    let file_arg = file.to_str().expect("utf-8").to_string();
    let mut screen = Terminal::spawn(txpace_in_terminal(
        dir.path(),
        &[
            "send",
            "--url",
            &v.rpc_url(),
            "--ws",
            &v.ws_url(),
            "--rate",
            "50",
            "--metrics",
            "127.0.0.1:0",
            &file_arg,
        ],
    ));

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
    // The endpoint was announced before the dashboard took the screen.
    let addr = announced(&String::from_utf8_lossy(&screen.raw())).expect("metrics address");
    let during = scrape(addr).expect("a scrape while the dashboard runs");
    assert_eq!(get(&during, r#"txpace_run_state{state="running"}"#), 1.0);
    assert_eq!(get(&during, "txpace_transactions_in_run"), 2000.0);
    assert!(get(&during, "txpace_sends_total") > 0.0);

    screen.keys(b"p");
    screen.wait_for("PAUSED", Duration::from_secs(5), |t| {
        t.to_lowercase().contains("paused")
    });
    let paused = scrape(addr).expect("a scrape while paused");
    assert_eq!(get(&paused, r#"txpace_run_state{state="paused"}"#), 1.0);
    screen.keys(b"+");
    let text = screen.wait_for("55 tx/s", Duration::from_secs(5), |t| t.contains("55 tx/s"));
    eprintln!("after p and +:\n{text}");

    // Transactions are unfinished: q asks first, and y stops.
    screen.keys(b"q");
    screen.wait_for(
        "the question before stopping",
        Duration::from_secs(5),
        |t| t.contains("Stop the run?") && t.contains("transactions are unfinished"),
    );
    let quit = Instant::now();
    screen.keys(b"y");
    let status = screen.wait_exit(Duration::from_secs(10));
    eprintln!("quit took {:.2} s", quit.elapsed().as_secs_f64());
    // Quit with transactions unfinished: exit 4, and the way to continue is printed.
    assert_eq!(status.exit_code(), 4, "exit status {status:?}");
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
    assert!(
        tail.contains("transactions are unfinished; continue with:") && tail.contains("--resume"),
        "no resume hint after quitting early: {tail:?}"
    );
}
