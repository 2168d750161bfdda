//! `txpace send FILE...`: validate everything, then pace it onto the cluster over QUIC, with the
//! dashboard on a terminal or progress lines without one, and a JSON report at the end.

use std::{
    io::IsTerminal,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{Context, Result};
use solana_keypair::Keypair;
use solana_signer::Signer;
use tokio::{
    sync::{mpsc, watch},
    task::JoinHandle,
};

use crate::{
    cli::{GlobalOpts, OutputMode, RateArg, SendArgs, SendOpts},
    config::{self, Resolved},
    engine::{
        self, EngineConfig, Prior, RunOutcome,
        command::Command,
        quic::QuicTransport,
        rpc::RpcChain,
        slots::spawn_slot_feed,
        snapshot::{RateTarget, Snapshot},
    },
    events::{EventStream, EventTap, EventsTarget},
    exit, headless,
    journal::{self, Header, Ident, Inputs, JournalFile, WriterHandle},
    logging,
    metrics::MetricsListener,
    redact::redact_url,
    report::{self, Report},
    signer::read_signer,
    source::{self, LoadedTx, Problem, Progress},
    ui,
};

/// Inputs this large get a "loading…" line while they are read and verified.
const PROGRESS_FROM: usize = 20_000;
/// A `kill -9` loses at most this much of the journal.
const JOURNAL_SYNC: Duration = Duration::from_secs(1);

pub fn run(global: &GlobalOpts, args: SendArgs) -> Result<u8> {
    let files = &args.input.files;
    let show = |p: Progress| {
        if p.decoded >= PROGRESS_FROM {
            eprint!(
                "\rloading: {} read, {} verified{}",
                p.decoded,
                p.verified,
                p.total.map(|t| format!(" of {t}")).unwrap_or_default()
            );
        }
    };
    let loaded = source::load_with_progress(files, args.input.format, &show)?;
    if loaded.valid.len() + loaded.invalid.len() >= PROGRESS_FROM {
        eprintln!();
    }
    if !loaded.invalid.is_empty() {
        for p in &loaded.invalid {
            eprintln!("{p}");
        }
        if !args.skip_invalid {
            eprintln!(
                "{} of {} transactions are invalid: nothing was sent (--skip-invalid sends the rest)",
                loaded.invalid.len(),
                loaded.invalid.len() + loaded.valid.len()
            );
            return Ok(exit::USAGE);
        }
    }
    if loaded.valid.is_empty() {
        eprintln!("no valid transactions to send");
        return Ok(exit::USAGE);
    }
    let resolved = config::resolve(&global.to_args(None)).map_err(exit::usage)?;
    if !args.no_preflight
        && let Some(code) = preflight(&args, &resolved, &loaded.valid)?
    {
        return Ok(code);
    }
    let journal = match open_journal(&args, &loaded.valid, &redact_url(&resolved.rpc_url)) {
        Ok(j) => j,
        Err(refusal) => {
            eprintln!("error: {refusal:#}");
            return Ok(exit::for_error(&refusal));
        }
    };
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let title = format!("send {} txs from {}", loaded.valid.len(), names.join(", "));
    let resume_hint = format!(
        "txpace send {} --resume --journal {} (with the same -u/--url and options)",
        names.join(" "),
        journal.file.path().display()
    );
    run_engine_journaled(
        RunSpec {
            resolved,
            opts: args.opts,
            txs: loaded.valid,
            skipped: loaded.invalid,
            title,
            resume_hint: Some(resume_hint),
            output: global.output,
        },
        Some(journal),
    )
}

/// How long one preflight RPC call may take.
const PREFLIGHT_RPC_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs the preflight checks and prints their table on standard error; `Some(exit code)` when
/// a fatal finding refuses the run. An RPC that does not answer is a runtime error (exit 3).
fn preflight(args: &SendArgs, resolved: &Resolved, txs: &[LoadedTx]) -> Result<Option<u8>> {
    let rpc = solana_rpc_client::rpc_client::RpcClient::new_with_timeout(
        resolved.rpc_url.clone(),
        PREFLIGHT_RPC_TIMEOUT,
    );
    let findings = crate::preflight::check(&rpc, txs, args.resume)?;
    eprint!(
        "{}",
        crate::redact::scrub(crate::preflight::table(&findings))
    );
    if crate::preflight::worst(&findings) < crate::preflight::Severity::Fatal {
        return Ok(None);
    }
    if args.force {
        eprintln!("preflight: sending anyway (--force)");
        return Ok(None);
    }
    eprintln!(
        "preflight: nothing was sent: transactions cannot land as signed (--force sends anyway, \
         --no-preflight skips the checks)"
    );
    Ok(Some(exit::USAGE))
}

/// The journal a run writes, and what it already knew when the run resumes one.
pub struct RunJournal {
    file: JournalFile,
    priors: Vec<Option<Prior>>,
    identified: Vec<bool>,
}

/// Opens (or creates) the run's journal. Every error is a refusal to run: a journal of other
/// inputs, a damaged one, one in use, `--resume` with nothing to resume, or an earlier run of the
/// same batch without `--resume` (starting it over could only duplicate work, and a user who
/// means it can name another journal) exit 2; a journal that cannot be written exits 3.
fn open_journal(args: &SendArgs, txs: &[LoadedTx], rpc_shown: &str) -> Result<RunJournal> {
    let inputs = Inputs::of(&args.input.files, txs);
    let path = match &args.journal {
        Some(p) => p.clone(),
        None => journal::default_path(&inputs).context(
            "no data directory for the journal (no home directory?): pass --journal PATH",
        )?,
    };
    if args.resume && !path.exists() {
        return Err(exit::usage(anyhow::anyhow!(
            "nothing to resume: there is no journal at {} (pass the --journal PATH of the interrupted run)",
            path.display()
        )));
    }
    let (mut file, replay) = JournalFile::open(&path, &inputs, txs)?;
    if replay.header.is_none() {
        if args.resume {
            return Err(exit::usage(anyhow::anyhow!(
                "nothing to resume: journal {} records no run",
                path.display()
            )));
        }
        file.start(&Header::new(inputs, rpc_shown.to_string()))?;
        return Ok(RunJournal {
            file,
            priors: Vec::new(),
            identified: Vec::new(),
        });
    }
    let (confirmed, failed, expired, sent) = replay.tally();
    if replay.facts > 0 && !args.resume {
        return Err(exit::usage(anyhow::anyhow!(
            "journal {} exists: it records an earlier run of these transactions ({confirmed} confirmed, \
             {failed} failed, {expired} expired, {sent} sent without an outcome); \
             pass --resume to continue it, or --journal PATH to start another",
            path.display()
        )));
    }
    if let Some((bytes, why)) = replay.torn {
        eprintln!(
            "journal {}: ignoring its last {bytes} bytes ({why}), written as the run was interrupted",
            path.display()
        );
    }
    if args.resume {
        let never = txs
            .len()
            .saturating_sub(confirmed + failed + expired + sent);
        eprintln!(
            "resuming {} (session {}{}): {confirmed} confirmed, {failed} failed, {expired} expired before; \
             {sent} sent without an outcome (looked up on chain before any resend); {never} never sent",
            path.display(),
            replay.sessions + 1,
            if replay.closed {
                ""
            } else {
                ", the last one was interrupted"
            }
        );
    }
    file.resume(&replay, rpc_shown)?;
    Ok(RunJournal {
        file,
        priors: replay.priors,
        identified: replay.identified,
    })
}

/// Waits until the journal holds everything the engine reported. A failure is reported but does
/// not change the exit code: the transactions' fate does not depend on it.
fn finish_journal(writer: Option<WriterHandle>) {
    if let Some(w) = writer {
        let path = w.path().to_path_buf();
        match w.finish() {
            Ok(stats) => log::info!(
                "journal {}: {} records, {} syncs",
                path.display(),
                stats.records,
                stats.syncs
            ),
            Err(e) => eprintln!("warning: {e}"),
        }
    }
}

/// A run of the engine with everything decided; `send` and `demo` both end here.
pub struct RunSpec {
    pub resolved: Resolved,
    pub opts: SendOpts,
    pub txs: Vec<LoadedTx>,
    pub skipped: Vec<Problem>,
    pub title: String,
    /// How to continue this run when it ends unfinished (runs with a journal).
    pub resume_hint: Option<String>,
    /// `--output`: the summary as lines, or the report as JSON.
    pub output: OutputMode,
}

/// The engine settings `SendOpts` and the cluster decide; `deploy` adds its re-signer on top.
pub fn engine_config(resolved: &Resolved, o: &SendOpts, identity: &Keypair) -> EngineConfig {
    let mut cfg = EngineConfig::new(identity.pubkey(), redact_url(&resolved.rpc_url));
    cfg.rate = match o.rate {
        RateArg::Fixed(r) => RateTarget::Fixed(r),
        RateArg::Max => RateTarget::Max,
    };
    cfg.send_timeout = Duration::from_secs_f64(o.send_timeout.clamp(0.05, 600.0));
    cfg.fanout = o.fanout;
    cfg.resend_interval = o.resend_interval.0;
    cfg.commitment = resolved.commitment;
    cfg.pinned_tpu = o.tpu;
    cfg.deadline = o
        .deadline
        .map(|d| Duration::from_secs_f64(d.clamp(0.0, 1e9)));
    cfg.start_paused = o.paused;
    cfg
}

/// What every engine-driving command sets up first: the QUIC identity, whether the dashboard
/// runs, the log, and the async runtime.
pub struct Session {
    pub identity: Keypair,
    pub tui: bool,
    pub log_file: Option<PathBuf>,
    pub rt: tokio::runtime::Runtime,
    /// Set when a headless run was ended by Ctrl-C or SIGTERM (exit 130).
    pub interrupted: Arc<std::sync::atomic::AtomicBool>,
    /// `--metrics`: bound before anything is sent, served once the run's snapshots exist.
    metrics: Mutex<Option<MetricsListener>>,
    metrics_addr: Option<std::net::SocketAddr>,
    /// `--events`, until the run has ended.
    events: Mutex<Option<EventStream>>,
    events_on_stdout: bool,
}

impl Session {
    /// `kind` names the log file (`send-…log`, `deploy-…log`). `--metrics` and `--events` are
    /// set up here, before anything is sent, so a taken port or an unwritable path is refused
    /// up front (exit 2).
    pub fn start(opts: &SendOpts, kind: &str, output: OutputMode) -> Result<Self> {
        let identity = match &opts.identity {
            Some(path) => read_signer(path, "identity").map_err(exit::usage)?,
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
        let metrics = opts
            .metrics
            .map(MetricsListener::bind)
            .transpose()
            .map_err(exit::usage)?;
        if let Some(m) = &metrics {
            eprintln!("metrics: http://{}/metrics", m.local_addr());
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
        let log_file = logging::start(output, kind)?;
        if let Some(f) = &log_file {
            log::info!("log file {}", f.display());
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        Ok(Self {
            identity,
            tui,
            log_file,
            rt,
            interrupted: Arc::default(),
            events_on_stdout: events
                .as_ref()
                .is_some_and(|e| *e.target() == EventsTarget::Stdout),
            metrics_addr: metrics.as_ref().map(MetricsListener::local_addr),
            metrics: Mutex::new(metrics),
            events: Mutex::new(events),
        })
    }

    /// `--metrics-linger`: keeps serving the final figures for `secs` after the run, so a
    /// scraper collects them; Ctrl-C or SIGTERM ends the wait.
    pub fn linger_metrics(&self, secs: f64) {
        let Some(addr) = self.metrics_addr else {
            return;
        };
        if secs <= 0.0 {
            return;
        }
        eprintln!(
            "metrics: serving the final figures at http://{addr}/metrics for {secs} s (Ctrl-C ends it)"
        );
        let wait = Duration::from_secs_f64(secs.clamp(0.0, 3_600.0));
        self.rt.block_on(async {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop_on_signal() => {}
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
                eprintln!("warning: {e:#}");
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
    /// its result. Quitting the dashboard, Ctrl-C and SIGTERM send `Command::Stop`; whatever
    /// way it ends, the task is awaited so its outcome is never lost.
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
            let out = rt.block_on(task).context("engine task")?;
            ui_result?;
            Ok(out)
        } else {
            let progress = rt.spawn(headless::print_progress(snapshots, Duration::from_secs(1)));
            let interrupted = self.interrupted.clone();
            let on_signal = rt.spawn(async move {
                stop_on_signal().await;
                interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
                log::warn!("interrupted: stopping");
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
}

pub fn run_engine(spec: RunSpec) -> Result<u8> {
    run_engine_journaled(spec, None)
}

/// [`run_engine`], journaling every fact and starting from what `journal` already knew.
pub fn run_engine_journaled(spec: RunSpec, journal: Option<RunJournal>) -> Result<u8> {
    let session = Session::start(&spec.opts, "send", spec.output)?;
    let identity = &session.identity;
    let mut cfg = engine_config(&spec.resolved, &spec.opts, identity);
    if !session.tui {
        // Progress lines come once a second; ten snapshots a second would be built for nobody.
        cfg.publish_interval = Duration::from_millis(500);
    }
    log::info!(
        "sending {} transactions to {} as {} ({})",
        spec.txs.len(),
        cfg.rpc_url_display,
        identity.pubkey(),
        headless::target_label(cfg.rate, 0.0)
    );
    let entered = session.rt.enter();
    cfg.events = session.event_tap().map(|t| t.engine_channel(None));
    cfg.fee_accounts = crate::fees::most_written(&spec.txs);
    let transport = QuicTransport::new(identity).context("setting up QUIC")?;
    let chain = RpcChain::new(&spec.resolved.rpc_url);
    let feed = spawn_slot_feed(spec.resolved.ws_url.clone());
    let journal_path = journal.as_ref().map(|j| j.file.path().to_path_buf());
    let (writer, priors) = match journal {
        Some(j) => {
            log::info!("journal {}", j.file.path().display());
            let idents = spec.txs.iter().map(Ident::from).collect();
            let (facts, writer) =
                journal::spawn_writer(j.file, idents, j.identified, JOURNAL_SYNC)?;
            cfg.facts = Some(facts);
            cfg.journal_failure = Some(writer.failure());
            (Some(writer), j.priors)
        }
        None => (None, Vec::new()),
    };
    let handle = engine::spawn_resumed(
        cfg,
        spec.txs,
        priors,
        Arc::new(chain),
        Arc::new(transport),
        Some(feed),
    );
    let watched = session.watch(
        &spec.opts,
        spec.title,
        handle.snapshots,
        handle.commands,
        handle.task,
    );
    // `watch` returns once the engine has ended, dropping its fact and event senders: the
    // journal and the event stream get the last ones even when the dashboard or the engine
    // failed.
    finish_journal(writer);
    let events_file = session.finish_events();
    let outcome: RunOutcome = watched?;
    drop(entered);
    let mut report = Report::new(&outcome, &spec.skipped);
    if spec.opts.report_sends {
        report.add_streams(&outcome);
    }
    if let Some(path) = &spec.opts.report {
        report.write(path)?;
        log::info!("report written to {}", path.display());
    }
    // Standard output carries data (the report, or the event lines): people's lines go aside.
    let json = spec.output.is_json();
    let aside = json || session.events_on_stdout();
    if json {
        report::print_json(&report, spec.output == OutputMode::JsonCompact)?;
    } else {
        print_aside(aside, &headless::summary_text(&report));
    }
    let files = [
        ("report", spec.opts.report.as_deref()),
        ("log", session.log_file.as_deref()),
        ("journal", journal_path.as_deref()),
    ];
    for (name, path) in files {
        if let Some(path) = path {
            print_aside(aside, &format!("{name}: {}", path.display()));
        }
    }
    if let Some(line) = events_file {
        print_aside(aside, &line);
    }
    if let Some(why) = &report.summary.error {
        eprintln!("error: {why}");
    }
    let unfinished = report.summary.unfinished;
    if unfinished > 0
        && let Some(hint) = &spec.resume_hint
    {
        eprintln!("{unfinished} transactions are unfinished; continue with:\n  {hint}");
    }
    session.linger_metrics(spec.opts.metrics_linger);
    log::logger().flush();
    session.rt.shutdown_timeout(Duration::from_millis(200));
    if session
        .interrupted
        .load(std::sync::atomic::Ordering::SeqCst)
        && report.summary.error.is_none()
    {
        return Ok(exit::INTERRUPTED);
    }
    Ok(report.exit_code())
}

/// A poisoned lock still holds a usable value: nothing here is left half-changed.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A line for people: on standard output, or on standard error when standard output carries
/// `--output json`.
pub fn print_aside(json: bool, line: &str) {
    if json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// Ctrl-C or SIGTERM.
pub async fn stop_on_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
