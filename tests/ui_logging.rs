//! The logger: `log` records reach the dashboard's pane and the log file, and the file is the
//! owner's alone. Its own test binary, since a process has one logger.

use std::{os::unix::fs::PermissionsExt, time::Duration};

use txpace::ui::{App, fixtures, init_logging};

#[test]
fn records_reach_the_pane_and_a_private_file() {
    // SAFETY: the only test in this binary, so no other thread reads the environment yet.
    unsafe { std::env::remove_var("RUST_LOG") };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs/run.log");
    init_logging(Some(&path)).unwrap();
    assert!(init_logging(None).is_err(), "a second logger is refused");

    log::info!(target: "txpace::engine", "leader connected to 127.0.0.1:8009");
    log::debug!(target: "quinn_proto::connection", "packet noise");

    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // tui-logger hands records to the pane and the file from its own thread every 10 ms.
    let app = App::new("t", false).with_log_file(Some(&path));
    let mut text = String::new();
    for _ in 0..200 {
        text = fixtures::render_text(&app, &fixtures::running(10), 160, 48);
        if text.contains("leader connected") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        text.contains("leader connected to 127.0.0.1:8009"),
        "{text}"
    );
    assert!(!text.contains("packet noise"));

    let file = std::fs::read_to_string(&path).unwrap();
    assert!(
        file.contains("leader connected to 127.0.0.1:8009"),
        "{file}"
    );
    assert!(!file.contains("packet noise"));
}
