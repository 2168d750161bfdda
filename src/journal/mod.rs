//! The run journal: an append-only file that makes `txpace send` resumable after anything —
//! `kill -9`, a crash, a power cut.
//!
//! ```text
//!  engine ── TxFact (mpsc) ──► writer thread ── frames, fsync ≥ 1/s ──► journal file (0600)
//!                                                                           │
//!  txpace send --resume ◄── priors (last fact per transaction) ◄── replay ◄─┘
//! ```
//!
//! A journal starts with [`MAGIC`] and a [`Header`] naming the inputs it belongs to (their files
//! and a hash of every valid transaction's wire bytes, in order), then holds one [`Record`] per
//! state change. Every record is framed with its length and a CRC-32 ([`frame`]), so a record torn
//! by a kill or power cut at the end of the file is recognised and ignored, while damage anywhere
//! else is an error: silently skipping a middle record could forget that a transaction landed.
//!
//! Why each choice:
//! - Facts are journaled when the engine decides them (a send is journaled as it starts), so the
//!   journal can claim a send that never left, never the reverse; a resumed run asks the chain
//!   about every sent, unfinished transaction before sending it again.
//! - Losing the last second (the flush interval) is safe: those transactions look unsent and are
//!   sent again with the same signature, which the chain deduplicates.
//! - The writer runs on its own thread, so an fsync never stalls the engine's loop.
//! - The file is locked while a run writes it: two runs appending to one journal would interleave
//!   their facts.

mod frame;
mod record;
mod replay;
mod writer;

use std::{
    fmt,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::source::LoadedTx;

pub use frame::MAX_RECORD;
pub use record::Record;
pub use replay::{Replay, read, read_records};
pub use writer::{JournalFile, WriterHandle, WriterStats, spawn_writer};

/// The first bytes of every journal.
pub const MAGIC: &[u8] = b"txpace-journal\n";
/// Version of the record format this build writes and reads.
pub const VERSION: u32 = 1;

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The reason is in the message rather than a `source`, so it is printed once however the
    /// error is shown.
    #[error("journal {path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{path} is not a txpace journal (it does not start with the journal marker)")]
    NotAJournal { path: PathBuf },
    #[error(
        "journal {path} has format version {found}; this txpace reads version {supported} only"
    )]
    Version {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("journal {path} is damaged at byte {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error(
        "journal {path} belongs to other inputs: it was written for {theirs}, but this run sends {ours}; \
         pass --journal PATH to keep a separate journal for these inputs"
    )]
    InputsDiffer {
        path: PathBuf,
        theirs: Box<Inputs>,
        ours: Box<Inputs>,
    },
    #[error("journal {path} is in use by another txpace process")]
    Locked { path: PathBuf },
}

impl JournalError {
    pub(crate) fn io(path: &Path, err: std::io::Error) -> Self {
        JournalError::Io {
            path: path.to_path_buf(),
            err,
        }
    }
}

/// One input file as the journal remembers it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    /// Canonical path when it has one (`<stdin>` otherwise).
    pub path: String,
    /// Size in bytes, unknown for standard input.
    pub size: Option<u64>,
}

/// What a journal belongs to. Two runs have the same inputs when they send the same
/// transactions in the same order: the same count and content hash. The paths are shown to
/// people but not compared, so a moved or re-encoded file (base58 → base64) still resumes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs {
    pub files: Vec<InputFile>,
    /// Valid transactions, i.e. the ids the journal's records use.
    pub count: u64,
    /// SHA-256, hex, of every valid transaction's length (u32, little-endian) and wire bytes.
    pub content_hash: String,
}

impl Inputs {
    /// The identity of `txs`, read from `files`.
    pub fn of(files: &[PathBuf], txs: &[LoadedTx]) -> Self {
        let files = files
            .iter()
            .map(|f| {
                if f.as_os_str() == "-" {
                    return InputFile {
                        path: "<stdin>".to_string(),
                        size: None,
                    };
                }
                InputFile {
                    path: std::fs::canonicalize(f)
                        .unwrap_or_else(|_| f.clone())
                        .display()
                        .to_string(),
                    size: std::fs::metadata(f).ok().map(|m| m.len()),
                }
            })
            .collect();
        Inputs {
            files,
            count: txs.len() as u64,
            content_hash: content_hash(txs),
        }
    }

    /// Whether a journal written for `self` may be continued by a run of `other`.
    pub fn same_transactions(&self, other: &Inputs) -> bool {
        self.count == other.count && self.content_hash == other.content_hash
    }
}

impl fmt::Display for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.files.iter().map(|i| i.path.as_str()).collect();
        let short = self.content_hash.get(..12).unwrap_or(&self.content_hash);
        write!(
            f,
            "{} transactions from {} (content {short})",
            self.count,
            if names.is_empty() {
                "no files".to_string()
            } else {
                names.join(", ")
            }
        )
    }
}

/// See [`Inputs::content_hash`].
pub fn content_hash(txs: &[LoadedTx]) -> String {
    let mut h = Sha256::new();
    for tx in txs {
        h.update((tx.wire.len() as u32).to_le_bytes());
        h.update(&tx.wire);
    }
    let digest = h.finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first record of a journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub version: u32,
    pub inputs: Inputs,
    /// Redacted: no user-info, no query string.
    pub rpc_url: String,
    pub created_unix: u64,
    /// The txpace version that created the journal.
    pub txpace: String,
}

impl Header {
    pub fn new(inputs: Inputs, rpc_url_redacted: String) -> Self {
        Header {
            version: VERSION,
            inputs,
            rpc_url: rpc_url_redacted,
            created_unix: unix_now(),
            txpace: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// Where a run's journal goes unless `--journal` says otherwise: the data directory, named after
/// the first input file and the content hash. Naming by content rather than by path and size
/// means a workload regenerated into the same file gets a fresh journal instead of a refusal.
pub fn default_path(inputs: &Inputs) -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "txpace")?;
    let stem = inputs
        .files
        .first()
        .and_then(|f| Path::new(&f.path).file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "stdin".to_string());
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let short = inputs
        .content_hash
        .get(..16)
        .unwrap_or(&inputs.content_hash);
    Some(
        dirs.data_dir()
            .join("journals")
            .join(format!("{stem}-{short}.jnl")),
    )
}

pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
