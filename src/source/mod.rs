//! Reading users' signed transactions: every command's input.
//!
//! Files of base64 or base58 lines, JSON arrays of such strings, raw binary transactions and
//! standard input are accepted, detected per file ([`format`] explains how and why it is safe).
//! Every transaction is checked before anything is sent ([`validate`]); a bad one becomes a
//! [`Problem`] naming its position, and only a failure to read the input at all is a
//! [`SourceError`]. Large inputs stream through in chunks verified on every core, and results
//! come back in input order.

mod error;
mod format;
mod origin;
mod pipeline;
mod read;
mod sigverify;
mod summary;
mod validate;

use std::{fmt, path::PathBuf, sync::Arc};

use solana_hash::Hash;
use solana_signature::Signature;

pub use error::SourceError;
pub use format::{InputFormat, encode_base58, encode_base64};
pub use origin::Origin;
pub use summary::{ComputeBudget, TxSummary, compute_budget, summarize};
pub use validate::{decode_wire, parse_wire};

/// The largest transaction a validator accepts, in bytes (Solana's `PACKET_DATA_SIZE`).
pub const PACKET_DATA_SIZE: usize = 1232;

/// One valid transaction, kept light (no decoded form, no input text) so that a million of
/// them fit in memory at well under 2 KB each.
#[derive(Clone, Debug)]
pub struct LoadedTx {
    /// `FILE:LINE` (1-based) for line files, `FILE[INDEX]` (0-based) for JSON arrays, `FILE`
    /// for a binary file; standard input is named `<stdin>`.
    pub origin: Origin,
    /// The first signature: the transaction's id on the chain.
    pub signature: Signature,
    /// The exact wire bytes, as read.
    pub wire: Arc<[u8]>,
    pub recent_blockhash: Hash,
    /// The first instruction advances a nonce account, so the blockhash does not expire.
    pub durable_nonce: bool,
    /// Its compute-unit price and limit, for the report and the fee diagnostics.
    pub budget: ComputeBudget,
}

/// Why one input item is not a transaction txpace will send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub origin: String,
    pub reason: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.reason)
    }
}

/// Everything read, split by outcome; each list is in input order.
#[derive(Debug, Default)]
pub struct Loaded {
    pub valid: Vec<LoadedTx>,
    pub invalid: Vec<Problem>,
}

/// One input item's outcome, for callers that need valid and invalid items interleaved in input
/// order (`inspect` shows one row per item).
#[derive(Clone, Debug)]
pub enum Entry {
    Valid(LoadedTx),
    Invalid {
        problem: Problem,
        /// The bytes when they are at least a well-formed transaction (it failed a later check,
        /// such as a signature or being a duplicate), so it can still be described.
        wire: Option<Arc<[u8]>>,
    },
}

/// How far loading has got. `decoded` counts items read, `verified` items fully checked;
/// `total` is known once the whole input has been read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub decoded: usize,
    pub verified: usize,
    pub total: Option<usize>,
}

/// Reads and checks every transaction in `files`, in order.
pub fn load(files: &[PathBuf], format: InputFormat) -> Result<Loaded, SourceError> {
    load_with_progress(files, format, &|_| {})
}

/// [`load`], calling `progress` every couple of thousand items (for a "loading…" line).
pub fn load_with_progress(
    files: &[PathBuf],
    format: InputFormat,
    progress: &dyn Fn(Progress),
) -> Result<Loaded, SourceError> {
    let mut loaded = Loaded::default();
    for_each_entry(files, format, progress, &mut |entry| match entry {
        Entry::Valid(tx) => loaded.valid.push(tx),
        Entry::Invalid { problem, .. } => loaded.invalid.push(problem),
    })?;
    Ok(loaded)
}

/// [`load_with_progress`], keeping valid and invalid items interleaved in input order.
pub fn load_entries(
    files: &[PathBuf],
    format: InputFormat,
    progress: &dyn Fn(Progress),
) -> Result<Vec<Entry>, SourceError> {
    let mut entries = Vec::new();
    for_each_entry(files, format, progress, &mut |entry| entries.push(entry))?;
    Ok(entries)
}

/// The streaming core: each item's outcome goes to `sink` in input order as soon as its chunk
/// is checked, so callers keep only what they need.
pub fn for_each_entry(
    files: &[PathBuf],
    format: InputFormat,
    progress: &dyn Fn(Progress),
    sink: &mut dyn FnMut(Entry),
) -> Result<(), SourceError> {
    if files.is_empty() {
        return Err(SourceError::NoInput);
    }
    // Standard input can only be read once; refuse before reading anything.
    if files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(SourceError::StdinTwice);
    }
    let mut pipeline = pipeline::Pipeline::new(progress, sink);
    for file in files {
        read::read_input(file, format, &mut pipeline)?;
    }
    pipeline.finish();
    Ok(())
}
