//! Writing a journal: creating or continuing the file, and the thread that turns the engine's
//! facts into records on disk.

use std::{
    fs::{File, OpenOptions},
    io::{Seek, SeekFrom, Write},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
    thread::JoinHandle,
    time::Duration,
};

use tokio::sync::mpsc;

use super::{Header, Inputs, JournalError, MAGIC, Record, Replay, frame, replay::replay, unix_now};
use crate::{
    engine::{JournalFact, TxFact},
    private_fs,
    source::LoadedTx,
};

/// Buffered records beyond this are written out at once (still synced on the clock).
const WRITE_AT: usize = 1 << 20;

/// A journal opened by this run: readable by the owner only (its directory too when txpace made
/// it), and locked so no other txpace appends to it at the same time.
pub struct JournalFile {
    file: File,
    path: PathBuf,
}

impl JournalFile {
    /// Opens the journal at `path`, creating it and its directory when missing, locks it and
    /// replays it, refusing one written for other inputs than `inputs` / `txs`.
    pub fn open(
        path: &Path,
        inputs: &Inputs,
        txs: &[LoadedTx],
    ) -> Result<(JournalFile, Replay), JournalError> {
        let io = |e| JournalError::io(path, e);
        if let Some(dir) = path.parent() {
            private_fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(private_fs::FILE_MODE)
            .open(path)
            .map_err(io)?;
        // The journal may predate this run with a looser mode.
        private_fs::restrict(&file).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(JournalError::Locked {
                    path: path.to_path_buf(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let replay = replay(&mut file, path, Some(inputs), Some(txs))?;
        Ok((
            JournalFile {
                file,
                path: path.to_path_buf(),
            },
            replay,
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts the journal afresh (it was empty, or torn before its header): marker and header,
    /// on disk before anything is sent.
    pub fn start(&mut self, header: &Header) -> Result<(), JournalError> {
        let io = |e| JournalError::io(&self.path, e);
        self.file.set_len(0).map_err(io)?;
        self.file.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut buf = MAGIC.to_vec();
        push(&mut buf, &Record::Header(header.clone()), &self.path)?;
        self.file.write_all(&buf).map_err(io)?;
        self.file.sync_all().map_err(io)?;
        // The new directory entry must survive a power cut too.
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Continues a journal after its last good record, cutting off a torn tail so the new
    /// records do not follow garbage, and marks the new session.
    pub fn resume(&mut self, replay: &Replay, rpc_url_redacted: &str) -> Result<(), JournalError> {
        let io = |e| JournalError::io(&self.path, e);
        self.file.set_len(replay.good_len).map_err(io)?;
        self.file.seek(SeekFrom::End(0)).map_err(io)?;
        let mut buf = Vec::new();
        let session = Record::Session {
            started_unix: unix_now(),
            rpc_url: rpc_url_redacted.to_string(),
        };
        push(&mut buf, &session, &self.path)?;
        self.file.write_all(&buf).map_err(io)?;
        self.file.sync_all().map_err(io)?;
        Ok(())
    }
}

/// What the writer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Records written, identity and closing records included.
    pub records: u64,
    /// fsyncs.
    pub syncs: u64,
}

/// The writer thread; [`finish`](Self::finish) waits for it after the engine has stopped.
pub struct WriterHandle {
    thread: JoinHandle<Result<WriterStats, JournalError>>,
    path: PathBuf,
    failure: Arc<OnceLock<String>>,
}

impl WriterHandle {
    /// Waits until every fact the engine sent is on disk (the engine must have stopped, or the
    /// sender otherwise been dropped) and the session is marked closed.
    pub fn finish(self) -> Result<WriterStats, JournalError> {
        match self.thread.join() {
            Ok(result) => result,
            Err(_) => Err(JournalError::io(
                &self.path,
                std::io::Error::other("the journal writer panicked"),
            )),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Set, with the reason, once the writer can no longer write; give it to the engine
    /// ([`crate::engine::EngineConfig::journal_failure`]) so the run stops instead of carrying
    /// on unresumable.
    pub fn failure(&self) -> Arc<OnceLock<String>> {
        self.failure.clone()
    }
}

/// Starts the writer thread on `file`: give the returned sender to the engine
/// ([`crate::engine::EngineConfig::facts`], with the replay's `identified` as
/// [`crate::engine::EngineConfig::journal_named`]: the engine sends each transaction's identity
/// with the first fact of it the journal keeps). Records are synced to disk at least every
/// `sync_every` while facts arrive, at once for a re-signing (a new signature must not be
/// forgotten), and when the sender is dropped.
pub fn spawn_writer(
    file: JournalFile,
    sync_every: Duration,
) -> Result<(mpsc::UnboundedSender<JournalFact>, WriterHandle), JournalError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let path = file.path.clone();
    let thread_path = path.clone();
    let failure = Arc::new(OnceLock::new());
    let failed = failure.clone();
    let thread = std::thread::Builder::new()
        .name("txpace-journal".into())
        .spawn(move || {
            let result = write_loop(file, sync_every, rx);
            if let Err(e) = &result {
                let _ = failed.set(e.to_string());
                log::error!("{e}; this run can no longer be resumed from its journal");
            }
            result
        })
        .map_err(|e| JournalError::io(&thread_path, e))?;
    Ok((
        tx,
        WriterHandle {
            thread,
            path,
            failure,
        },
    ))
}

struct Batch {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    stats: WriterStats,
    /// Bytes written since the last fsync.
    unsynced: bool,
}

impl Batch {
    fn record(&mut self, rec: &Record) -> Result<(), JournalError> {
        push(&mut self.buf, rec, &self.path)?;
        self.stats.records += 1;
        Ok(())
    }

    /// Writes `fact`, after the identity record of its transaction if it came with one.
    fn fact(&mut self, JournalFact { fact, ident }: JournalFact) -> Result<(), JournalError> {
        if let Some(ident) = ident {
            let tx = Record::Tx {
                id: fact.id(),
                signature: ident.signature.to_string(),
                origin: ident.origin.to_string(),
            };
            self.record(&tx)?;
        }
        self.record(&Record::Fact(fact))?;
        if self.buf.len() >= WRITE_AT {
            self.write()?;
        }
        Ok(())
    }

    fn write(&mut self) -> Result<(), JournalError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.file
            .write_all(&self.buf)
            .map_err(|e| JournalError::io(&self.path, e))?;
        self.buf.clear();
        self.unsynced = true;
        Ok(())
    }

    fn sync(&mut self) -> Result<(), JournalError> {
        self.write()?;
        if self.unsynced {
            self.file
                .sync_data()
                .map_err(|e| JournalError::io(&self.path, e))?;
            self.unsynced = false;
            self.stats.syncs += 1;
        }
        Ok(())
    }
}

fn write_loop(
    file: JournalFile,
    sync_every: Duration,
    mut rx: mpsc::UnboundedReceiver<JournalFact>,
) -> Result<WriterStats, JournalError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| JournalError::io(&file.path, e))?;
    let mut b = Batch {
        path: file.path,
        file: file.file,
        buf: Vec::with_capacity(64 * 1024),
        stats: WriterStats::default(),
        unsynced: false,
    };
    rt.block_on(async {
        let mut tick = tokio::time::interval(sync_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                fact = rx.recv() => match fact {
                    Some(fact) => {
                        let resigned = matches!(fact.fact, TxFact::Resigned { .. });
                        b.fact(fact)?;
                        if resigned {
                            b.sync()?;
                        }
                    }
                    None => break,
                },
                _ = tick.tick() => b.sync()?,
            }
        }
        b.record(&Record::Closed { unix: unix_now() })?;
        b.sync()?;
        Ok(b.stats)
    })
}

/// Appends `rec`, framed, to `buf`.
fn push(buf: &mut Vec<u8>, rec: &Record, path: &Path) -> Result<(), JournalError> {
    let payload = serde_json::to_vec(rec).map_err(|e| JournalError::io(path, e.into()))?;
    frame::encode(&payload, buf);
    Ok(())
}
