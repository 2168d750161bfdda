//! The headless logger follows `RUST_LOG` exactly as the dashboard's does, and scrubs records of
//! other crates too: with `RUST_LOG=debug`, a transport crate's debug record quoting the
//! endpoint reaches the log file without the key. In a process of its own: one logger per process.

use txpace::logging::{Output, init};

use crate::common::own_process;

#[test]
fn rust_log_raises_other_crates_and_their_records_are_scrubbed() {
    own_process::run(&[("RUST_LOG", Some("debug,mio=off"))], || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        txpace::redact::register_url(
            "http://alice:Passw0rd@127.0.0.1:1/Tok3nInPath/?api-key=K3yInQuery",
        );
        init(Output::Headless, Some(&path)).unwrap();

        log::debug!(
            target: "reqwest::connect",
            "starting new connection: http://127.0.0.1:1/Tok3nInPath/?api-key=K3yInQuery"
        );
        log::debug!(target: "tungstenite::handshake::client", "client handshake GET /Tok3nInPath/ HTTP/1.1");
        log::trace!(target: "hyper_util::client", "trace stays out");
        log::debug!(target: "mio::poll", "mio is off");
        log::logger().flush();

        let file = std::fs::read_to_string(&path).unwrap();
        assert!(
            file.contains(
                "DEBUG reqwest::connect: starting new connection: http://***@127.0.0.1:1/***?***"
            ),
            "{file}"
        );
        assert!(
            file.contains("client handshake GET /*** HTTP/1.1"),
            "{file}"
        );
        assert!(!file.contains("trace stays out"), "{file}");
        assert!(!file.contains("mio is off"), "{file}");
        for secret in ["Tok3nInPath", "K3yInQuery", "Passw0rd"] {
            assert!(!file.contains(secret), "{secret} in:\n{file}");
        }
    });
}
