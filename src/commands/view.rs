//! `txpace view REPORT.json|JOURNAL`: the dashboard on a finished run, read-only. The report
//! (or, for a run that wrote none, its journal) is turned into the snapshot the dashboard draws
//! (see `report::load` and `report::load_journal`); nothing runs, so the keys that steer a run
//! (pause, rate) have nobody to tell and are left off the key bar.

use std::{io::IsTerminal, sync::Arc};

use anyhow::Result;
use tokio::sync::{mpsc, watch};

use crate::{cli::ViewArgs, exit, report, settings::Settings, ui};

pub fn run(args: ViewArgs, settings: &Settings) -> Result<u8> {
    let is_journal = is_journal(&args.report);
    let (snapshot, note) = if is_journal {
        if args.phase.is_some() {
            return Err(exit::usage(anyhow::anyhow!(
                "--phase is for a deploy's report; {} is a journal",
                args.report.display()
            )));
        }
        let (snap, note) = report::load_journal(&args.report).map_err(|e| exit::usage(e.into()))?;
        (snap, Some(note))
    } else {
        let (snap, phase) =
            report::load(&args.report, args.phase.as_deref()).map_err(|e| exit::usage(e.into()))?;
        (snap, phase.map(|p| format!("{p} phase")))
    };
    if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
        return Err(exit::usage(anyhow::anyhow!(
            "txpace view draws the dashboard and needs a terminal; for the figures without one, \
             read {} with jq",
            args.report.display()
        )));
    }
    let title = match note {
        Some(n) => format!("view {} ({n}; read-only)", args.report.display()),
        None => format!("view {} (read-only)", args.report.display()),
    };
    let (_keep, snapshots) = watch::channel(Arc::new(snapshot));
    // Nobody listens: a finished run takes no commands.
    let (commands, _ignored) = mpsc::unbounded_channel();
    let theme = args.theme.or(settings.theme).unwrap_or_default();
    let ended = ui::run(
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
    Ok(match ended {
        // A hang-up leaves nobody to read a message; SIGTERM is answered as everywhere.
        ui::UiExit::Interrupted(_) => exit::INTERRUPTED,
        ui::UiExit::Quit | ui::UiExit::Done => exit::OK,
    })
}

/// A journal starts with its magic bytes; anything else is read as a report.
fn is_journal(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; crate::journal::MAGIC.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == *crate::journal::MAGIC)
}
