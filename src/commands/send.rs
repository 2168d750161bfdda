//! `txpace send FILE...`: validate everything, then pace it onto the cluster over QUIC, with the
//! dashboard on a terminal or progress lines without one, and a JSON report at the end.

use std::{net::IpAddr, sync::Arc, time::Duration};

use anyhow::{Context, Result};
use solana_keypair::Keypair;
use solana_signer::Signer;

use super::session::{Session, print_aside};
use crate::{
    cli::{GlobalOpts, OutputMode, RateArg, Route, SendArgs, SendOpts},
    config::{self, Resolved},
    engine::{
        self, EngineConfig, Prior, RunOutcome,
        net::Transport,
        quic::{QuicOptions, QuicSetupError, QuicTransport},
        rpc::RpcChain,
        rpc_send::RpcSend,
        slots::spawn_slot_feed,
        snapshot::RateTarget,
    },
    exit, headless,
    journal::{self, Header, Inputs, JournalFile, WriterHandle},
    redact::redact_url,
    report::{self, Report},
    source::{self, LoadedTx, Problem, Progress},
};

/// Inputs this large get a "loading…" line while they are read and verified.
const PROGRESS_FROM: usize = 20_000;
/// A `kill -9` loses at most this much of the journal.
const JOURNAL_SYNC: Duration = Duration::from_secs(1);

pub fn run(global: &GlobalOpts, args: SendArgs) -> Result<u8> {
    let files = &args.input.files;
    let show = |p: Progress| {
        if p.decoded >= PROGRESS_FROM {
            say_part!(
                "\rloading: {} read, {} verified{}",
                p.decoded,
                p.verified,
                p.total.map(|t| format!(" of {t}")).unwrap_or_default()
            );
        }
    };
    let loaded = source::load_with_progress(files, args.input.format, &show)?;
    if loaded.valid.len() + loaded.invalid.len() >= PROGRESS_FROM {
        say!();
    }
    if !loaded.invalid.is_empty() {
        for p in &loaded.invalid {
            say!("{p}");
        }
        if !args.skip_invalid {
            say!(
                "{} of {} transactions are invalid: nothing was sent (--skip-invalid sends the rest)",
                loaded.invalid.len(),
                loaded.invalid.len() + loaded.valid.len()
            );
            return Ok(exit::USAGE);
        }
    }
    if loaded.valid.is_empty() {
        say!("no valid transactions to send");
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
            say!("error: {refusal:#}");
            return Ok(super::exit_code::for_error(&refusal));
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
    say_part!(
        "{}",
        crate::redact::scrub(crate::preflight::table(&findings))
    );
    if crate::preflight::worst(&findings) < crate::preflight::Severity::Fatal {
        return Ok(None);
    }
    if args.force {
        say!("preflight: sending anyway (--force)");
        return Ok(None);
    }
    say!(
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
        say!(
            "journal {}: ignoring its last {bytes} bytes ({why}), written as the run was interrupted",
            path.display()
        );
    }
    if args.resume {
        let never = txs
            .len()
            .saturating_sub(confirmed + failed + expired + sent);
        say!(
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
            Err(e) => say!("warning: {e}"),
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
    cfg.catch_up = !o.no_catch_up;
    cfg.resend_interval = o.resend_interval.0;
    cfg.commitment = resolved.commitment;
    cfg.pinned_tpu = o.tpu;
    cfg.deadline = o
        .deadline
        .map(|d| Duration::from_secs_f64(d.clamp(0.0, 1e9)));
    cfg.start_paused = o.paused;
    cfg
}

/// Where sends go (`--via`). For the RPC route, the engine is pinned to the RPC node's address
/// and told who that node is (`getIdentity`, asked before any runtime is entered, as Agave's
/// blocking client needs); the transport is made later, inside the runtime.
pub fn route(resolved: &Resolved, o: &SendOpts, cfg: &mut EngineConfig) -> Result<Option<RpcSend>> {
    let url = match o.route().map_err(|e| exit::usage(anyhow::anyhow!(e)))? {
        Route::Tpu => return Ok(None),
        Route::Rpc(url) => url.unwrap_or_else(|| resolved.rpc_url.clone()),
    };
    let send = RpcSend::new(&url).map_err(|e| exit::usage(e.into()))?;
    cfg.pinned_tpu = Some(send.addr());
    cfg.via_rpc = Some(redact_url(&url));
    cfg.pinned_identity =
        solana_rpc_client::rpc_client::RpcClient::new_with_timeout(url, PREFLIGHT_RPC_TIMEOUT)
            .get_identity()
            .ok();
    Ok(Some(send))
}

/// The transport for `route`'s answer: the RPC node's sendTransaction, or QUIC to the leaders.
/// Inside the runtime. QUIC sends from `bind` when given (`--bind`).
pub fn transport(
    via_rpc: Option<RpcSend>,
    identity: &Keypair,
    bind: Option<IpAddr>,
) -> Result<Arc<dyn Transport>> {
    Ok(match via_rpc {
        Some(send) => Arc::new(send),
        None => {
            let mut options = QuicOptions::default();
            if let Some(ip) = bind {
                options.bind = ip;
            }
            // An address this host does not have is the user's to fix (exit 2), like a
            // `--metrics` address in use.
            let quic = QuicTransport::with_options(identity, options).map_err(|e| match e {
                QuicSetupError::Bind(_) => {
                    exit::usage(anyhow::anyhow!("--bind {}: {e}", options.bind))
                }
                other => anyhow::anyhow!("setting up QUIC: {other}"),
            })?;
            Arc::new(quic)
        }
    })
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
    let via_rpc = route(&spec.resolved, &spec.opts, &mut cfg)?;
    let entered = session.rt.enter();
    cfg.events = session.event_tap().map(|t| t.engine_channel(None));
    cfg.fee_accounts = crate::fees::most_written(&spec.txs);
    let transport = transport(via_rpc, identity, spec.opts.bind)?;
    let chain = RpcChain::new(&spec.resolved.rpc_url);
    let feed = spawn_slot_feed(spec.resolved.ws_url.clone());
    let journal_path = journal.as_ref().map(|j| j.file.path().to_path_buf());
    let (writer, priors) = match journal {
        Some(j) => {
            log::info!("journal {}", j.file.path().display());
            let (facts, writer) = journal::spawn_writer(j.file, JOURNAL_SYNC)?;
            cfg.facts = Some(facts);
            cfg.journal_named = j.identified;
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
        transport,
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
        report.add_streams();
    }
    let report_path = match &spec.opts.report {
        Some(path) => {
            let kept = report::write_or_keep(path, &report, journal_path.as_deref())?;
            log::info!("report written to {}", kept.display());
            Some(kept)
        }
        None => None,
    };
    // Standard output carries data (the report, or the event lines): people's lines go aside.
    let json = spec.output.is_json();
    let aside = json || session.events_on_stdout();
    if json {
        report::print_json(&report, spec.output == OutputMode::JsonCompact)?;
    } else {
        print_aside(aside, &headless::summary_text(&report));
    }
    let files = [
        ("report", report_path.as_deref()),
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
        say!("error: {why}");
    }
    let unfinished = report.summary.unfinished;
    if unfinished > 0
        && let Some(hint) = &spec.resume_hint
    {
        say!("{unfinished} transactions are unfinished; continue with:\n  {hint}");
        session.log_resume_hint(unfinished, hint);
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
