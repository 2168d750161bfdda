//! What every engine-driving command (`send`, `demo`, `deploy`) sets up around its run: the
//! QUIC identity, the dashboard or progress lines, the log, the async runtime, and the ways a
//! run is watched from outside (`--metrics`, `--events`), all refused up front when they cannot
//! work. The engine itself is started by each command; the session shows it and waits for it.

use std::{
    io::IsTerminal,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{Context, Result};
use solana_keypair::Keypair;
use tokio::{
    sync::{mpsc, watch},
    task::JoinHandle,
};

use crate::{
    cli::{OutputMode, SendOpts},
    engine::{command::Command, snapshot::Snapshot},
    events::{EventStream, EventTap, EventsTarget},
    exit, headless, interrupt, logging,
    metrics::MetricsListener,
    signer::read_keypair_signer,
    ui,
};

/// Threads that run the engine, its QUIC connections and RPC calls. One: the engine is one task
/// and a send costs a fraction of a millisecond, so a second worker only added wake-ups between
/// the two — a futex call and a context switch for most streams — which cost more CPU than
/// the parallelism gave (see the CPU figures in docs/performance.md). The dashboard draws on
/// the main thread and the journal writes on its own, so neither waits for this one.
const ENGINE_WORKERS: usize = 1;

/// What every engine-driving command sets up first: the QUIC identity, whether the dashboard
/// runs, the log, and the async runtime.
pub struct Session {
    pub identity: Keypair,
    pub tui: bool,
    pub log_file: Option<PathBuf>,
    pub rt: tokio::runtime::Runtime,
    /// Set when the run was stopped by Ctrl-C (headless), SIGTERM, or a hang-up (exit 130).
    pub interrupted: Arc<std::sync::atomic::AtomicBool>,
    /// From the start of the session to its end, the signals only ask the run to stop (see
    /// [`crate::interrupt`]): the journal, the report and the validators are seen to first.
    _signals: interrupt::Handling,
    /// `--metrics`: bound before anything is sent, served once the run's snapshots exist.
    metrics: Mutex<Option<MetricsListener>>,
    metrics_addr: Option<std::net::SocketAddr>,
    /// `--events`, until the run has ended.
    events: Mutex<Option<EventStream>>,
    events_on_stdout: bool,
}

impl Session {
    /// `kind` names the log file (`send-…log`, `deploy-…log`). Every output the run promises —
    /// `--report`, `--events`, the log file, the `--metrics` address — is opened or bound here,
    /// before anything is sent, so a taken port or an unwritable path is refused up front
    /// (exit 2), naming it.
    pub fn start(opts: &SendOpts, kind: &str, output: OutputMode) -> Result<Self> {
        let signals = interrupt::handle();
        let identity = match &opts.identity {
            Some(path) => read_keypair_signer(
                path,
                "identity",
                "its private key signs the QUIC connection's TLS certificate",
            )
            .map_err(exit::usage)?,
            None => Keypair::new(),
        };
        let tui = !opts.no_tui && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
        let events_target = opts.events.as_deref().map(EventsTarget::parse);
        if events_target == Some(EventsTarget::Stdout) {
            if tui {
                return Err(exit::usage(anyhow::anyhow!(
                    "--events - writes to standard output, where the dashboard is drawn: \
                     pass --no-tui, or give --events a file path"
                )));
            }
            if output.is_json() {
                return Err(exit::usage(anyhow::anyhow!(
                    "--events - and --output json both want standard output: give --events a \
                     file path"
                )));
            }
        }
        if let Some(path) = &opts.report {
            crate::report::check_writable(path).map_err(exit::usage)?;
        }
        let metrics = opts
            .metrics
            .map(MetricsListener::bind)
            .transpose()
            .map_err(exit::usage)?;
        if let Some(m) = &metrics {
            say!("metrics: http://{}/metrics", m.local_addr());
        }
        let events = events_target
            .map(EventStream::open)
            .transpose()
            .map_err(exit::usage)?;
        let output = if tui {
            logging::Output::Dashboard
        } else {
            logging::Output::Headless
        };
        let log_file = logging::start(output, kind).map_err(exit::usage)?;
        if let Some(f) = &log_file {
            log::info!("log file {}", f.display());
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(ENGINE_WORKERS)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        Ok(Self {
            identity,
            tui,
            log_file,
            rt,
            interrupted: Arc::default(),
            _signals: signals,
            events_on_stdout: events
                .as_ref()
                .is_some_and(|e| *e.target() == EventsTarget::Stdout),
            metrics_addr: metrics.as_ref().map(MetricsListener::local_addr),
            metrics: Mutex::new(metrics),
            events: Mutex::new(events),
        })
    }

    /// `--metrics-linger`: keeps serving the final figures for `secs` after the run, so a
    /// scraper collects them; Ctrl-C, SIGTERM or a hang-up ends the wait (one that stopped the
    /// run already ends it at once).
    pub fn linger_metrics(&self, secs: f64) {
        let Some(addr) = self.metrics_addr else {
            return;
        };
        if secs <= 0.0 {
            return;
        }
        say!(
            "metrics: serving the final figures at http://{addr}/metrics for {secs} s (Ctrl-C ends it)"
        );
        let wait = Duration::from_secs_f64(secs.clamp(0.0, 3_600.0));
        self.rt.block_on(async {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = interrupt::wait() => {}
            }
        });
    }

    /// What makes `--events` channels for engines, when the run streams events.
    pub fn event_tap(&self) -> Option<EventTap> {
        lock(&self.events).as_ref().map(EventStream::tap)
    }

    /// `--events -`: standard output carries the event lines, so lines for people go to
    /// standard error.
    pub fn events_on_stdout(&self) -> bool {
        self.events_on_stdout
    }

    /// Waits for the `--events` writer (every engine must have ended) and names the file for
    /// the closing lines. A failure is a warning: the run's outcome does not depend on it.
    pub fn finish_events(&self) -> Option<String> {
        let events = lock(&self.events).take()?;
        let target = events.target().clone();
        match (events.finish(), target) {
            (Err(e), _) => {
                say!("warning: {e:#}");
                None
            }
            (Ok(n), EventsTarget::File(path)) => {
                log::info!("events: {n} lines to {}", path.display());
                Some(format!("events: {}", path.display()))
            }
            (Ok(n), EventsTarget::Stdout) => {
                log::info!("events: {n} lines to standard output");
                None
            }
        }
    }

    /// Shows `snapshots` on the dashboard or as progress lines until `task` ends, and returns
    /// its result. Quitting the dashboard, Ctrl-C, SIGTERM and a hang-up (SIGHUP, or the
    /// terminal's input ending) send `Command::Stop`; whatever way it ends, the task is awaited
    /// so its outcome is never lost. After any of them, standard output and error that lead to a
    /// terminal that hung up are pointed at `/dev/null` (see [`interrupt::detach_dead_outputs`])
    /// so the closing lines cannot fail; the log file has them.
    pub fn watch<T: Send + 'static>(
        &self,
        opts: &SendOpts,
        title: String,
        snapshots: watch::Receiver<Arc<Snapshot>>,
        commands: mpsc::UnboundedSender<Command>,
        task: JoinHandle<T>,
    ) -> Result<T> {
        if let Some(m) = lock(&self.metrics).take() {
            let _entered = self.rt.enter();
            m.serve(snapshots.clone())?;
        }
        let rt = &self.rt;
        if self.tui {
            let ui_opts = ui::UiOptions {
                exit_when_done: opts.exit_when_done,
                title,
                theme: ui::theme::Theme::from_env(opts.theme.unwrap_or_default()),
                log_file: self.log_file.clone(),
                mouse: !opts.no_mouse,
                keymap: opts.keymap.clone(),
            };
            let ui_result = ui::run(snapshots, commands.clone(), ui_opts);
            let _ = commands.send(Command::Stop);
            if let Ok(ui::UiExit::Interrupted(_)) = &ui_result {
                self.mark_interrupted();
            }
            let out = rt.block_on(task).context("engine task")?;
            ui_result?;
            Ok(out)
        } else {
            let progress = rt.spawn(headless::print_progress(snapshots, Duration::from_secs(1)));
            let interrupted = self.interrupted.clone();
            let on_signal = rt.spawn(async move {
                let reason = interrupt::wait().await;
                interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
                interrupt::detach_dead_outputs();
                log::warn!("{}: stopping", reason.describe());
                let _ = commands.send(Command::Stop);
            });
            let out = rt.block_on(task).context("engine task");
            // A signal after the run (ending --metrics-linger, say) interrupts nothing.
            on_signal.abort();
            let out = out?;
            let _ = rt.block_on(progress);
            Ok(out)
        }
    }

    /// The run was stopped from outside; nothing more goes to a terminal that hung up —
    /// whatever the stop was called: a SIGTERM before the hang-up was noticed names it.
    fn mark_interrupted(&self) {
        self.interrupted
            .store(true, std::sync::atomic::Ordering::SeqCst);
        interrupt::detach_dead_outputs();
    }

    /// Says how to continue an interrupted run in the log as well as on standard error: after a
    /// hang-up the log is the only place anyone will read it.
    pub fn log_resume_hint(&self, unfinished: u64, hint: &str) {
        if self.interrupted.load(std::sync::atomic::Ordering::SeqCst) {
            log::warn!("{unfinished} transactions are unfinished; continue with: {hint}");
        }
    }
}

/// A poisoned lock still holds a usable value: nothing here is left half-changed.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A line for people: on standard output, or on standard error when standard output carries
/// data (`--output json`, or `--events -`).
pub fn print_aside(stdout_is_data: bool, line: &str) {
    if stdout_is_data {
        say!("{line}");
    } else {
        out!("{line}");
    }
}
