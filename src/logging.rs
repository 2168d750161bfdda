//! The process's one logger, for the dashboard and for headless runs alike: one level policy
//! (`RUST_LOG`, or info with the chatty transport crates at warn, then shifted by `-v`/`-q`),
//! one scrubbing step, one log file format. Only where records are shown differs: the dashboard's log pane (never the
//! terminal it is drawn on), or stderr for warnings and errors in a headless run.
//!
//! Every record's text, txpace's own and other crates' (reqwest, hyper or tungstenite quote URLs
//! when `RUST_LOG` raises them), goes through [`crate::redact::scrub`] before it reaches the
//! pane, stderr or the file.

use std::{
    fs::File,
    io::Write,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicI8, AtomicU64, Ordering},
        mpsc,
    },
    time::Duration,
};

use anyhow::Context;
use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::{private_fs, redact};

/// Transport crates log every packet and request at debug; unless `RUST_LOG` says otherwise
/// they are kept to warnings. Directives match targets by prefix (`hyper` covers `hyper_util`).
pub const DEFAULT_FILTER: &str = "info,quinn=warn,quinn_proto=warn,rustls=warn,h2=warn,hyper=warn,\
    reqwest=warn,tungstenite=warn,tokio_tungstenite=warn,mio=warn";

/// `-v` (positive) and `-q` (negative) steps, set once from the command line before the
/// logger is installed.
static VERBOSITY: AtomicI8 = AtomicI8::new(0);

/// Records `-v`/`-q` for the logger a command installs later.
pub fn set_verbosity(steps: i8) {
    VERBOSITY.store(steps, Ordering::Relaxed);
}

/// How often the dashboard's log pane takes in new records.
const PANE_EVERY: Duration = Duration::from_millis(10);

/// Where records are shown besides the log file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The dashboard's log pane; nothing is written to the terminal.
    Dashboard,
    /// stderr, for warnings and errors.
    Headless,
}

/// Levels by target, read as `env_logger` reads `RUST_LOG`: comma-separated `target=level`
/// directives and at most one bare `level`; the longest matching target prefix wins; a target
/// no directive matches is off unless a bare level is given. A bare target name means all levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    default: LevelFilter,
    /// Longest target first.
    targets: Vec<(String, LevelFilter)>,
}

impl Filter {
    pub fn parse(spec: &str) -> Filter {
        let mut default = None;
        let mut targets = Vec::new();
        // `env_logger` allows a trailing `/regex` message filter; it is not supported and ignored.
        let spec = spec.split('/').next().unwrap_or_default();
        for d in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            match d.split_once('=') {
                Some((target, level)) => {
                    if let Ok(level) = level.trim().parse::<LevelFilter>() {
                        targets.push((target.trim().to_string(), level));
                    }
                }
                None => match d.parse::<LevelFilter>() {
                    Ok(level) => default = Some(level),
                    Err(_) => targets.push((d.to_string(), LevelFilter::Trace)),
                },
            }
        }
        let default = default.unwrap_or(if targets.is_empty() {
            LevelFilter::Error
        } else {
            LevelFilter::Off
        });
        targets.sort_by_key(|t| std::cmp::Reverse(t.0.len()));
        Filter { default, targets }
    }

    /// `RUST_LOG` when set, otherwise [`DEFAULT_FILTER`], shifted by `-v`/`-q`.
    pub fn from_env() -> Filter {
        let filter = match std::env::var("RUST_LOG") {
            Ok(spec) if !spec.trim().is_empty() => Filter::parse(&spec),
            _ => Filter::parse(DEFAULT_FILTER),
        };
        filter.shifted(VERBOSITY.load(Ordering::Relaxed))
    }

    /// Every level `steps` more verbose (fewer when negative), between error and trace: `-v`
    /// turns info into debug and the transport crates' warn into info, `-q` info into warn.
    /// What is off stays off, and errors always show.
    pub fn shifted(mut self, steps: i8) -> Filter {
        let shift = |l: LevelFilter| {
            if l == LevelFilter::Off {
                return l;
            }
            let n = (l as i8 + steps).clamp(LevelFilter::Error as i8, LevelFilter::Trace as i8);
            LevelFilter::iter().find(|f| *f as i8 == n).unwrap_or(l)
        };
        self.default = shift(self.default);
        for (_, l) in &mut self.targets {
            *l = shift(*l);
        }
        self
    }

    pub fn level(&self, target: &str) -> LevelFilter {
        self.targets
            .iter()
            .find(|(t, _)| target.starts_with(t.as_str()))
            .map_or(self.default, |(_, l)| *l)
    }

    /// The most verbose level any target gets.
    pub fn max(&self) -> LevelFilter {
        self.targets
            .iter()
            .map(|(_, l)| *l)
            .fold(self.default, Ord::max)
    }
}

struct Logger {
    filter: Filter,
    output: Output,
    /// Where file lines and headless stderr lines go to be written; `None` when neither is.
    writer: Option<Writer>,
}

/// A line for the writer thread, or a request to report once everything before it is written.
enum Job {
    File(String),
    Stderr(String),
    Flush(mpsc::SyncSender<()>),
}

/// The log's disk and stderr writes happen on a thread of their own: a record logged from the
/// engine's task must never wait on a slow disk or a blocked stderr pipe. The queue is bounded;
/// when the writer falls that far behind, lines are dropped and counted rather than stalling
/// the sender, and the count is written once it catches up.
struct Writer {
    jobs: mpsc::SyncSender<Job>,
    dropped: Arc<AtomicU64>,
}

/// Lines queued for the writer before new ones are dropped. The queue's slots are allocated
/// when it is made, 40 bytes each: 16,384 of them were 0.65 MB of every run's memory.
const WRITER_QUEUE: usize = 4_096;

impl Writer {
    fn start(mut file: Option<File>) -> anyhow::Result<Writer> {
        let (jobs, rx) = mpsc::sync_channel::<Job>(WRITER_QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let seen = dropped.clone();
        std::thread::Builder::new()
            .name("txpace-log-writer".into())
            .spawn(move || {
                for job in rx {
                    let lost = seen.swap(0, Ordering::Relaxed);
                    if lost > 0
                        && let Some(f) = file.as_mut()
                    {
                        let note = format!(
                            "{} WARN  txpace: {lost} log lines dropped (the writer fell behind)\n",
                            unix_time()
                        );
                        let _ = f.write_all(note.as_bytes());
                    }
                    match job {
                        // One write per line, so lines never interleave; a full disk must not
                        // stop the run.
                        Job::File(line) => {
                            if let Some(f) = file.as_mut() {
                                let _ = f.write_all(line.as_bytes());
                            }
                        }
                        Job::Stderr(line) => {
                            let _ = std::io::stderr().write_all(line.as_bytes());
                        }
                        Job::Flush(done) => {
                            if let Some(f) = file.as_mut() {
                                let _ = f.flush();
                            }
                            let _ = done.send(());
                        }
                    }
                }
            })
            .context("starting the log writer's thread")?;
        Ok(Writer { jobs, dropped })
    }

    fn send(&self, job: Job) {
        if self.jobs.try_send(job).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Waits (at most a second) until every line queued before this call is written.
    fn flush(&self) {
        let (done, wait) = mpsc::sync_channel(1);
        if self.jobs.send(Job::Flush(done)).is_ok() {
            let _ = wait.recv_timeout(Duration::from_secs(1));
        }
    }
}

impl Log for Logger {
    fn enabled(&self, m: &Metadata) -> bool {
        m.level() <= self.filter.level(m.target())
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let text = redact::scrub(record.args());
        if let Some(w) = &self.writer {
            w.send(Job::File(format!(
                "{} {:<5} {}: {text}\n",
                unix_time(),
                record.level(),
                record.target()
            )));
        }
        match self.output {
            Output::Headless => {
                if record.level() <= Level::Warn
                    && let Some(w) = &self.writer
                {
                    w.send(Job::Stderr(format!(
                        "{}: {text}\n",
                        record.level().as_str().to_lowercase()
                    )));
                }
            }
            Output::Dashboard => tui_logger::Drain::new().log(
                &Record::builder()
                    .args(format_args!("{text}"))
                    .level(record.level())
                    .target(record.target())
                    .module_path(record.module_path())
                    .file(record.file())
                    .line(record.line())
                    .build(),
            ),
        }
    }

    fn flush(&self) {
        if let Some(w) = &self.writer {
            w.flush();
        }
    }
}

fn unix_time() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:03}", now.as_secs(), now.subsec_millis())
}

/// A new log file for a run of `kind` (`send`, `deploy`) in the data directory's `logs/`:
/// `KIND-UNIXSECONDS-PID.log`, created so that two runs never share one. `None` without a home
/// directory.
pub fn new_log_file(kind: &str) -> anyhow::Result<Option<(PathBuf, File)>> {
    let Some(dir) = private_fs::data_subdir("logs").with_context(|| {
        let dir = private_fs::data_dir().map(|d| d.join("logs"));
        format!(
            "creating the log directory {}",
            dir.map(|d| d.display().to_string()).unwrap_or_default()
        )
    })?
    else {
        return Ok(None);
    };
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let stem = format!("{kind}-{secs}-{}", std::process::id());
    let (path, file) = private_fs::create_unique(&dir, &stem, "log")
        .with_context(|| format!("creating a log file in {}", dir.display()))?;
    Ok(Some((path, file)))
}

/// Installs the logger for a run of `kind` with a new file under the data directory, and returns
/// the file's path. Fails if a logger is already installed.
pub fn start(output: Output, kind: &str) -> anyhow::Result<Option<PathBuf>> {
    let file = new_log_file(kind)?;
    let path = file.as_ref().map(|(p, _)| p.clone());
    install(output, file.map(|(_, f)| f))?;
    Ok(path)
}

/// Installs the logger with `log_file` (appended to, created when missing, mode 0600 either way)
/// as its file. Fails if a logger is already installed.
pub fn init(output: Output, log_file: Option<&Path>) -> anyhow::Result<()> {
    let file = match log_file {
        Some(path) => Some(
            private_fs::open_append(path)
                .with_context(|| format!("opening log file {}", path.display()))?,
        ),
        None => None,
    };
    install(output, file)
}

fn install(output: Output, file: Option<File>) -> anyhow::Result<()> {
    let filter = Filter::from_env();
    let max = filter.max();
    // Headless runs write warnings to stderr through the writer too, so they keep their order
    // with the file's lines and never block the logging task.
    let writer = if file.is_some() || output == Output::Headless {
        Some(Writer::start(file)?)
    } else {
        None
    };
    log::set_boxed_logger(Box::new(Logger {
        filter,
        output,
        writer,
    }))
    .map_err(|e| anyhow::anyhow!("installing the logger: {e}"))?;
    log::set_max_level(max);
    if output == Output::Dashboard {
        // What reaches tui-logger has passed the filter above; the pane shows all of it.
        tui_logger::set_default_level(LevelFilter::Trace);
        std::thread::Builder::new()
            .name("txpace-log-pane".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(PANE_EVERY);
                    tui_logger::move_events();
                }
            })
            .context("starting the log pane's thread")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines reach the file through the writer thread in order, and `flush` returns only once
    /// everything queued before it is on disk: what the process's last words rely on.
    #[test]
    fn the_writer_thread_writes_every_line_in_order_before_flush_returns() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.log");
        let file = File::create(&path).expect("log file");
        let w = Writer::start(Some(file)).expect("writer");
        for i in 0..1_000 {
            w.send(Job::File(format!("line {i}\n")));
        }
        w.flush();
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1_000);
        assert_eq!(lines[0], "line 0");
        assert_eq!(lines[999], "line 999");
        assert_eq!(w.dropped.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_default_keeps_transport_crates_to_warnings() {
        let f = Filter::parse(DEFAULT_FILTER);
        assert_eq!(f.level("txpace::engine::run"), LevelFilter::Info);
        for noisy in [
            "quinn_proto::connection",
            "hyper_util::client",
            "reqwest::connect",
            "tokio_tungstenite",
            "rustls::client",
            "mio::poll",
        ] {
            assert_eq!(f.level(noisy), LevelFilter::Warn, "{noisy}");
        }
        assert_eq!(f.max(), LevelFilter::Info);
    }

    #[test]
    fn v_and_q_shift_every_level() {
        let f = Filter::parse(DEFAULT_FILTER).shifted(1);
        assert_eq!(f.level("txpace::engine"), LevelFilter::Debug);
        assert_eq!(f.level("quinn_proto"), LevelFilter::Info);
        let f = Filter::parse(DEFAULT_FILTER).shifted(-1);
        assert_eq!(f.level("txpace::engine"), LevelFilter::Warn);
        assert_eq!(f.level("hyper"), LevelFilter::Error);
        // Errors always show; what RUST_LOG turned off stays off.
        let f = Filter::parse("txpace=info,mio=off").shifted(-5);
        assert_eq!(f.level("txpace"), LevelFilter::Error);
        assert_eq!(f.level("mio"), LevelFilter::Off);
        assert_eq!(f.level("reqwest"), LevelFilter::Off);
        let f = Filter::parse("info").shifted(5);
        assert_eq!(f.level("anything"), LevelFilter::Trace);
    }

    #[test]
    fn rust_log_is_read_like_env_logger() {
        let f = Filter::parse("debug");
        assert_eq!(f.level("reqwest::connect"), LevelFilter::Debug);
        assert_eq!(f.max(), LevelFilter::Debug);

        let f = Filter::parse("warn, txpace::engine=trace ,txpace=info");
        assert_eq!(f.level("txpace::engine::quic"), LevelFilter::Trace);
        assert_eq!(f.level("txpace::commands"), LevelFilter::Info);
        assert_eq!(f.level("hyper"), LevelFilter::Warn);
        assert_eq!(f.max(), LevelFilter::Trace);

        let f = Filter::parse("txpace");
        assert_eq!(f.level("txpace::x"), LevelFilter::Trace);
        assert_eq!(f.level("reqwest"), LevelFilter::Off);

        let f = Filter::parse("info,quinn=bogus/regex");
        assert_eq!(f.level("quinn"), LevelFilter::Info);
    }
}
