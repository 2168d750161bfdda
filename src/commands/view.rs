//! `txpace view REPORT.json`: the dashboard on a finished run, read-only. The report is turned
//! into the snapshot the dashboard draws (see `report::load`); nothing runs, so the keys that
//! steer a run (pause, rate) have nobody to tell and do nothing.

use std::{io::IsTerminal, sync::Arc};

use anyhow::Result;
use tokio::sync::{mpsc, watch};

use crate::{cli::ViewArgs, exit, report, settings::Settings, ui};

pub fn run(args: ViewArgs, settings: &Settings) -> Result<u8> {
    let (snapshot, phase) =
        report::load(&args.report, args.phase.as_deref()).map_err(|e| exit::usage(e.into()))?;
    if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
        return Err(exit::usage(anyhow::anyhow!(
            "txpace view draws the dashboard and needs a terminal; for the figures without one, \
             read {} with jq",
            args.report.display()
        )));
    }
    let title = match phase {
        Some(p) => format!("view {} ({p} phase, read-only)", args.report.display()),
        None => format!("view {} (read-only)", args.report.display()),
    };
    let (_keep, snapshots) = watch::channel(Arc::new(snapshot));
    // Nobody listens: a finished run takes no commands.
    let (commands, _ignored) = mpsc::unbounded_channel();
    let theme = args.theme.or(settings.theme).unwrap_or_default();
    ui::run(
        snapshots,
        commands,
        ui::UiOptions {
            exit_when_done: false,
            title,
            theme: ui::theme::Theme::from_env(theme),
            log_file: None,
            mouse: !args.no_mouse && settings.mouse != Some(false),
            keymap: settings.keymap.clone(),
        },
    )?;
    Ok(exit::OK)
}
