//! The dashboard's logger: `log` records reach the pane and the log file, scrubbed of the
//! endpoint's secrets, and the file is the owner's alone. In a process of its own, since a
//! process has one logger.

use std::{os::unix::fs::PermissionsExt, time::Duration};

use txpace::{
    logging::{Output, init},
    ui::{App, fixtures},
};

use crate::common::own_process;

#[test]
fn records_reach_the_pane_and_a_private_file_scrubbed() {
    own_process::run(&[("RUST_LOG", None)], || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/run.log");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        txpace::redact::register_url("https://rpc.example.com/PathKey0123/?api-key=QueryKey456");
        init(Output::Dashboard, Some(&path)).unwrap();
        assert!(
            init(Output::Dashboard, None).is_err(),
            "a second logger is refused"
        );

        log::info!(target: "txpace::engine", "leader connected to 127.0.0.1:8009");
        log::warn!(
            target: "txpace::engine",
            "RPC unreachable (error sending request for url (https://rpc.example.com/PathKey0123/?api-key=QueryKey456))"
        );
        log::debug!(target: "quinn_proto::connection", "packet noise");

        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "an existing log file is made private");

        // Records reach the pane from the logger's thread every 10 ms.
        let app = App::new("t", false).with_log_file(Some(&path));
        let mut text = String::new();
        for _ in 0..200 {
            text = fixtures::render_text(&app, &fixtures::running(10), 160, 48);
            if text.contains("leader connected") && text.contains("RPC unreachable") {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            text.contains("leader connected to 127.0.0.1:8009"),
            "{text}"
        );
        assert!(text.contains("(https://rpc.example.com/***?***)"), "{text}");
        assert!(!text.contains("packet noise"));

        let file = std::fs::read_to_string(&path).unwrap();
        assert!(
            file.contains("leader connected to 127.0.0.1:8009"),
            "{file}"
        );
        assert!(
            file.contains("error sending request for url (https://rpc.example.com/***?***)"),
            "{file}"
        );
        assert!(!file.contains("packet noise"));
        for secret in ["PathKey0123", "QueryKey456"] {
            assert!(!text.contains(secret), "{secret} on the pane:\n{text}");
            assert!(!file.contains(secret), "{secret} in the file:\n{file}");
        }
    });
}
