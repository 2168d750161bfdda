//! `--events PATH|-`: the run as NDJSON while it goes on — one line per state change of a
//! transaction and one per stream to a leader (its leader, TPU, outcome and acknowledgement
//! time), for piping into other tools.
//!
//! The engine hands [`RunEvent`]s to a channel; a writer thread turns them into lines, so a
//! slow disk or a slow reader never holds up a send. Each engine run (one batch per phase of a
//! deploy) gets its own channel from [`EventTap::engine_channel`], whose forwarder puts the
//! engine's times on the command's clock and names the phase; the lines are flushed whenever
//! the channel runs dry, so a reader sees each event within moments of it happening.
//!
//! ```text
//!  engine ─► forwarder (+phase, run clock) ─┐
//!  engine ─► forwarder ─────────────────────┼─► writer thread ─► file or stdout
//! ```

use std::{
    fs::File,
    io::{self, BufWriter, Write},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    thread::JoinHandle,
    time::{Instant, SystemTime, UNIX_EPOCH},
};

use serde::Serialize;
use tokio::sync::mpsc;

use crate::{
    engine::{RunEvent, snapshot::millis},
    private_fs,
};

/// Where the lines go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventsTarget {
    Stdout,
    File(PathBuf),
}

impl EventsTarget {
    /// `-` is standard output, anything else a file path.
    pub fn parse(arg: &Path) -> Self {
        if arg == Path::new("-") {
            EventsTarget::Stdout
        } else {
            EventsTarget::File(arg.to_path_buf())
        }
    }
}

/// One line: the event with the command's clock and the deploy phase it belongs to.
#[derive(Serialize)]
struct Line<'a> {
    /// Milliseconds since the Unix epoch.
    unix_ms: u64,
    /// Milliseconds since the command started sending (across a deploy's phases).
    t_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'static str>,
    #[serde(flatten)]
    event: &'a RunEvent,
}

struct Stamped {
    unix_ms: u64,
    t_ms: u64,
    phase: Option<&'static str>,
    event: RunEvent,
}

/// The writer thread; [`EventStream::finish`] waits for it once every [`EventTap`] and engine
/// channel is gone.
pub struct EventStream {
    tap: EventTap,
    writer: JoinHandle<io::Result<u64>>,
    target: EventsTarget,
}

/// What makes engine channels: the way to the writer and the command's clock. Cheap to clone
/// into whatever starts engines (a deploy's driver).
#[derive(Clone)]
pub struct EventTap {
    lines: mpsc::UnboundedSender<Stamped>,
    started: Instant,
    started_unix_ms: u64,
}

impl EventStream {
    /// Opens `target` (a file is created or truncated, readable by the owner only: events name
    /// the accounts' transactions and the leaders) and starts the writer thread.
    pub fn open(target: EventsTarget) -> anyhow::Result<Self> {
        use anyhow::Context;
        let out: Box<dyn Write + Send> = match &target {
            EventsTarget::Stdout => Box::new(io::stdout()),
            EventsTarget::File(path) => Box::new(
                create_private(path)
                    .with_context(|| format!("creating events file {}", path.display()))?,
            ),
        };
        let (lines, rx) = mpsc::unbounded_channel();
        let writer = std::thread::Builder::new()
            .name("txpace-events".into())
            .spawn(move || write_lines(rx, out))
            .context("starting the events writer")?;
        Ok(Self {
            tap: EventTap {
                lines,
                started: Instant::now(),
                started_unix_ms: unix_ms(SystemTime::now()),
            },
            writer,
            target,
        })
    }

    pub fn tap(&self) -> EventTap {
        self.tap.clone()
    }

    pub fn target(&self) -> &EventsTarget {
        &self.target
    }

    /// Waits until every event of every finished engine is written, and says how many lines
    /// were. Engines must have ended (their channels dropped) and every tap be gone first.
    pub fn finish(self) -> anyhow::Result<u64> {
        let Self {
            tap,
            writer,
            target,
        } = self;
        drop(tap);
        let name = match &target {
            EventsTarget::Stdout => "standard output".to_string(),
            EventsTarget::File(p) => p.display().to_string(),
        };
        match writer.join() {
            Ok(Ok(n)) => Ok(n),
            Ok(Err(e)) => Err(anyhow::anyhow!("writing events to {name}: {e}")),
            Err(_) => Err(anyhow::anyhow!("the events writer for {name} crashed")),
        }
    }
}

impl EventTap {
    /// A channel for one engine's events (`EngineConfig::events`), to be made right before
    /// the engine starts so that its times line up with the command's clock; `phase` names
    /// a deploy's phase. Needs a tokio runtime: the forwarder is a task.
    pub fn engine_channel(&self, phase: Option<&'static str>) -> mpsc::UnboundedSender<RunEvent> {
        let (tx, mut rx) = mpsc::unbounded_channel::<RunEvent>();
        let offset_ms = millis(self.started.elapsed());
        let base_unix_ms = self.started_unix_ms + offset_ms;
        let lines = self.lines.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                let at = event.at_ms();
                let stamped = Stamped {
                    unix_ms: base_unix_ms.saturating_add(at),
                    t_ms: offset_ms.saturating_add(at),
                    phase,
                    event,
                };
                if lines.send(stamped).is_err() {
                    break;
                }
            }
        });
        tx
    }
}

fn create_private(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(private_fs::FILE_MODE)
        .open(path)?;
    private_fs::restrict(&file)?;
    Ok(file)
}

/// The writer thread: a line per event, flushed whenever no more are waiting. A reader that
/// went away (`| head`) ends the stream quietly; other write errors end it with the error.
fn write_lines(
    mut rx: mpsc::UnboundedReceiver<Stamped>,
    out: Box<dyn Write + Send>,
) -> io::Result<u64> {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let mut written = 0u64;
    while let Some(first) = rx.blocking_recv() {
        let mut next = Some(first);
        while let Some(s) = next {
            let line = Line {
                unix_ms: s.unix_ms,
                t_ms: s.t_ms,
                phase: s.phase,
                event: &s.event,
            };
            let text = serde_json::to_string(&line).map_err(io::Error::other)?;
            // Notes and errors quote what the cluster said: scrubbed like every other output.
            let result = writeln!(out, "{}", crate::redact::scrub(text));
            if let Err(e) = result {
                return quiet_on_broken_pipe(e, written);
            }
            written += 1;
            next = rx.try_recv().ok();
        }
        if let Err(e) = out.flush() {
            return quiet_on_broken_pipe(e, written);
        }
    }
    match out.flush() {
        Err(e) => quiet_on_broken_pipe(e, written),
        Ok(()) => Ok(written),
    }
}

fn quiet_on_broken_pipe(e: io::Error, written: u64) -> io::Result<u64> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(written)
    } else {
        Err(e)
    }
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_signature::Signature;

    use crate::engine::lifecycle::TxState;

    /// Every event becomes one JSON line with the command's clock, in the order sent, and the
    /// file is private.
    #[tokio::test]
    async fn events_become_ordered_private_json_lines() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.ndjson");
        let stream = EventStream::open(EventsTarget::File(path.clone())).expect("open");
        let tx = stream.tap().engine_channel(Some("writes"));
        for id in 0..3 {
            tx.send(RunEvent::State {
                at_ms: u64::from(id) * 10,
                id,
                signature: Signature::from([id as u8; 64]),
                from: TxState::Queued,
                to: TxState::Sent,
                note: None,
            })
            .expect("send");
        }
        drop(tx);
        // The forwarder ends once it has passed every event on.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert_eq!(stream.finish().expect("finish"), 3);
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 3);
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l["event"], "state");
            assert_eq!(l["id"], i as u64);
            assert_eq!(l["phase"], "writes");
            assert_eq!(l["from"], "queued");
            assert_eq!(l["to"], "sent");
            assert!(l["unix_ms"].as_u64().expect("unix_ms") > 1_700_000_000_000);
        }
        let t: Vec<u64> = lines
            .iter()
            .map(|l| l["t_ms"].as_u64().expect("t"))
            .collect();
        assert_eq!(t[1] - t[0], 10);
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
