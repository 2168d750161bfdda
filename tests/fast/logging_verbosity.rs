//! `-q`/`-v` shift what `RUST_LOG` sets, on the dashboard as in a headless run (one logger, one
//! filter). In a process of its own, since a process has one logger.

use txpace::logging::{Output, init, set_verbosity};

use crate::common::own_process;

#[test]
fn quiet_lowers_every_level_rust_log_sets() {
    own_process::run(&[("RUST_LOG", Some("info,txpace::engine=debug"))], || {
        set_verbosity(-1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        init(Output::Dashboard, Some(&path)).unwrap();

        log::debug!(target: "txpace::engine", "engine debug goes");
        log::info!(target: "txpace::engine", "engine info stays");
        log::info!(target: "txpace::commands", "command info goes");
        log::warn!(target: "txpace::commands", "command warning stays");
        log::logger().flush();

        let file = std::fs::read_to_string(&path).unwrap();
        assert!(file.contains("engine info stays"), "{file}");
        assert!(file.contains("command warning stays"), "{file}");
        assert!(!file.contains("goes"), "{file}");
    });
}
