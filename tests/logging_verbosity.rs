//! `-q`/`-v` shift what `RUST_LOG` sets, on the dashboard as in a headless run (one logger, one
//! filter). Its own test binary, since a process has one logger.

use txpace::logging::{Output, init, set_verbosity};

#[test]
fn quiet_lowers_every_level_rust_log_sets() {
    // SAFETY: the only test in this binary, so no other thread reads the environment yet.
    unsafe { std::env::set_var("RUST_LOG", "info,txpace::engine=debug") };
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
}
