//! From raw items to checked entries: chunks verified on every core, a batch of signatures at a
//! time, results kept in input order, duplicates found in one sequential pass.
//!
//! Items are processed a chunk at a time so that a million-line file never has more than one
//! chunk of text and decoded transactions in memory besides the light results.

use std::{
    collections::{HashMap, hash_map},
    mem,
    sync::Arc,
};

use rayon::prelude::*;
use solana_signature::Signature;

use super::{
    Entry, LoadedTx, Origin, Problem, Progress,
    format::{self, Encoding, TextDecoding},
    validate,
};

/// Items per parallel round: big enough to keep both cores busy, small enough for frequent
/// progress reports.
const CHUNK: usize = 2048;
/// Items whose signatures are verified together (see `sigverify`): about where a bigger batch
/// stops being cheaper per signature, and small enough that a chunk feeds every core.
const BATCH: usize = 256;

/// Text items of a file looked at before its majority encoding is decided.
const VOTE_SAMPLE: usize = 64;

/// One input item, before any decoding.
pub(crate) enum Raw {
    /// Trimmed text of one transaction (a line or a JSON string).
    Text(String),
    /// The bytes of a binary file.
    Bytes(Vec<u8>),
    /// Known bad while reading (an overlong line, a JSON value that is not a string).
    Bad(String),
}

struct Job {
    origin: Origin,
    raw: Raw,
    decoding: TextDecoding,
}

/// What the duplicate check keys a signature by: 16 bytes of its second half, the scalar
/// S = r + H(R, A, M)·a. A signer picks its nonce point R (the first half) freely, so R alone
/// could be made to collide; S it cannot choose without breaking SHA-512, so two different
/// signatures share these bytes with probability 2^-128 per pair. The map's entries are 32
/// bytes where whole signatures made them 80 (a million transactions' map: 170 MB, and 250 MB
/// while it grew).
fn seen_key(signature: &Signature) -> u128 {
    let bytes: &[u8] = signature.as_ref();
    let mut key = [0u8; 16];
    key.copy_from_slice(&bytes[32..48]);
    u128::from_le_bytes(key)
}

/// Takes every file's items, in order, and hands their outcomes to a sink in the same order.
pub(crate) struct Pipeline<'a> {
    chunk: Vec<Job>,
    sink: &'a mut dyn FnMut(Entry),
    /// The first origin of each signature, by [`seen_key`].
    seen: HashMap<u128, Origin>,
    read: usize,
    verified: usize,
    progress: &'a dyn Fn(Progress),
}

impl<'a> Pipeline<'a> {
    pub(crate) fn new(progress: &'a dyn Fn(Progress), sink: &'a mut dyn FnMut(Entry)) -> Self {
        Self {
            chunk: Vec::new(),
            sink,
            seen: HashMap::new(),
            read: 0,
            verified: 0,
            progress,
        }
    }

    /// Starts a file whose text is decoded as `forced`, or by majority vote when `None`.
    pub(crate) fn file(&mut self, forced: Option<Encoding>) -> FileFeed<'_, 'a> {
        FileFeed {
            pipeline: self,
            mode: match forced {
                Some(encoding) => Mode::Decided(TextDecoding::Only(encoding)),
                None => Mode::Voting(Vec::new()),
            },
        }
    }

    fn push(&mut self, job: Job) {
        self.read += 1;
        self.chunk.push(job);
        if self.chunk.len() >= CHUNK {
            self.flush();
        }
    }

    fn report(&self, done: bool) {
        (self.progress)(Progress {
            decoded: self.read,
            verified: self.verified,
            total: done.then_some(self.read),
        });
    }

    fn flush(&mut self) {
        if self.chunk.is_empty() {
            return;
        }
        self.report(false);
        let batches: Vec<Vec<Entry>> = mem::take(&mut self.chunk)
            .into_par_iter()
            .chunks(BATCH)
            .map(run)
            .collect();
        let results: Vec<Entry> = batches.into_iter().flatten().collect();
        self.verified += results.len();
        for entry in results {
            let entry = match entry {
                Entry::Valid(tx) => match self.seen.entry(seen_key(&tx.signature)) {
                    hash_map::Entry::Occupied(first) => Entry::Invalid {
                        problem: Problem {
                            origin: tx.origin.to_string(),
                            reason: format!("duplicate of {}", first.get()),
                        },
                        wire: Some(tx.wire),
                    },
                    hash_map::Entry::Vacant(slot) => {
                        slot.insert(tx.origin.clone());
                        Entry::Valid(tx)
                    }
                },
                invalid => invalid,
            };
            (self.sink)(entry);
        }
        self.report(false);
    }

    pub(crate) fn finish(mut self) {
        self.flush();
        self.report(true);
    }
}

/// One item's bytes, or why its text is no transaction's encoding.
struct Decoded {
    origin: Origin,
    bytes: Result<Vec<u8>, String>,
}

/// Decodes and checks a batch of items, their signatures together (runs on the rayon pool).
fn run(jobs: Vec<Job>) -> Vec<Entry> {
    let decoded: Vec<Decoded> = jobs
        .into_iter()
        .map(|job| Decoded {
            origin: job.origin,
            bytes: match job.raw {
                Raw::Text(text) => format::decode_text(&text, job.decoding),
                Raw::Bytes(bytes) => Ok(bytes),
                Raw::Bad(reason) => Err(reason),
            },
        })
        .collect();
    let wires: Vec<&[u8]> = decoded
        .iter()
        .filter_map(|d| d.bytes.as_deref().ok())
        .collect();
    // One answer per decoded item, in order.
    let mut checked = validate::check_all(&wires).into_iter();
    decoded
        .into_iter()
        .map(|Decoded { origin, bytes }| {
            let invalid = |reason: String, wire: Option<Arc<[u8]>>| Entry::Invalid {
                problem: Problem {
                    origin: origin.to_string(),
                    reason,
                },
                wire,
            };
            let bytes = match bytes {
                Ok(bytes) => bytes,
                Err(reason) => return invalid(reason, None),
            };
            match checked.next() {
                Some(Ok(checked)) => Entry::Valid(LoadedTx {
                    origin: origin.clone(),
                    signature: checked.signature,
                    wire: Arc::from(bytes),
                    recent_blockhash: checked.recent_blockhash,
                    durable_nonce: checked.durable_nonce,
                    budget: checked.budget,
                }),
                Some(Err(rejection)) => {
                    let wire = rejection.parsed.then(|| Arc::from(bytes));
                    invalid(rejection.reason, wire)
                }
                // `check_all` answers every wire it is given; never taken.
                None => invalid("was not checked".to_string(), None),
            }
        })
        .collect()
}

enum Mode {
    Decided(TextDecoding),
    /// Items held back until the file's majority encoding is known.
    Voting(Vec<(Origin, Raw)>),
}

/// One file's items on their way into the [`Pipeline`].
pub(crate) struct FileFeed<'p, 'a> {
    pipeline: &'p mut Pipeline<'a>,
    mode: Mode,
}

impl FileFeed<'_, '_> {
    pub(crate) fn push(&mut self, origin: Origin, raw: Raw) {
        match &mut self.mode {
            Mode::Decided(decoding) => {
                let decoding = *decoding;
                self.pipeline.push(Job {
                    origin,
                    raw,
                    decoding,
                });
            }
            Mode::Voting(held) => {
                held.push((origin, raw));
                if held.len() >= VOTE_SAMPLE {
                    self.decide();
                }
            }
        }
    }

    fn decide(&mut self) {
        let Mode::Voting(held) = &mut self.mode else {
            return;
        };
        let held = mem::take(held);
        let hint = format::vote(held.iter().filter_map(|(_, raw)| match raw {
            Raw::Text(text) => Some(text.as_str()),
            _ => None,
        }));
        self.mode = Mode::Decided(TextDecoding::Auto(hint));
        for (origin, raw) in held {
            self.push(origin, raw);
        }
    }

    /// Ends the file: releases items still held for the vote.
    pub(crate) fn finish(mut self) {
        self.decide();
    }
}
