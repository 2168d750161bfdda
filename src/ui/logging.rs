//! Logging for a full-screen program: records go to the dashboard's pane and to a file, never
//! to the terminal the dashboard is drawn on.

use std::{
    fs::{self, OpenOptions},
    os::unix::fs::{OpenOptionsExt, PermissionsExt},
    path::Path,
};

use anyhow::Context;
use log::LevelFilter;
use tui_logger::TuiLoggerFile;

/// Chatty transport crates log every packet at debug; keep them to warnings.
const DEFAULT_DIRECTIVES: &str = "info,quinn=warn,quinn_proto=warn,rustls=warn,h2=warn,hyper=warn,\
    reqwest=warn,tungstenite=warn,tokio_tungstenite=warn";

/// Installs tui-logger as the process's `log` logger, with `log_file` (created or appended to,
/// readable by the owner only, since it can name the RPC endpoint and accounts) as a copy.
/// `RUST_LOG` refines the levels; the default is `info`, with chatty transport crates at `warn`.
/// Fails if a logger is already installed.
pub fn init_logging(log_file: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = log_file {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)
                .with_context(|| format!("creating log directory {}", dir.display()))?;
        }
        // tui-logger opens the file itself and panics if it can't; open it first so a bad path
        // is an error here, and so it is created with mode 0600.
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("opening log file {}", path.display()))?;
        file.set_permissions(fs::Permissions::from_mode(0o600))
            .with_context(|| format!("restricting log file {}", path.display()))?;
        drop(file);
        let name = path
            .to_str()
            .with_context(|| format!("log file path {} is not UTF-8", path.display()))?;
        tui_logger::set_log_file(
            TuiLoggerFile::new(name)
                .output_target(true)
                .output_file(false)
                .output_line(false)
                .output_timestamp(Some("%Y-%m-%dT%H:%M:%S%.3f".into())),
        );
    }
    tui_logger::init_logger(LevelFilter::Trace).context("installing the logger")?;
    tui_logger::set_default_level(LevelFilter::Info);
    // Targets are matched by module prefix through the env filter, so one directive quietens a
    // whole transport crate.
    let directives = std::env::var("RUST_LOG").unwrap_or_else(|_| DEFAULT_DIRECTIVES.into());
    tui_logger::set_env_filter_from_string(&directives);
    Ok(())
}
