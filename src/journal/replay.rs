//! Reading a journal back: every good record in order, folded into what a resumed run needs to
//! know of each transaction ([`Prior`]).

use std::{
    collections::HashMap,
    fs::File,
    io::{BufReader, Read, Seek, SeekFrom},
    path::Path,
    str::FromStr,
};

use solana_signature::Signature;

use super::{
    Header, Inputs, JournalError, MAGIC, Record, VERSION,
    frame::{Next, Reader},
};
use crate::{
    engine::{Prior, TxFact},
    source::LoadedTx,
};

/// What a journal says, as of its last good record.
#[derive(Debug, Default)]
pub struct Replay {
    /// `None` for an empty file, or one cut short before its header was complete.
    pub header: Option<Header>,
    /// Runs that wrote to it: 1 plus one per `--resume`.
    pub sessions: u32,
    /// State-change records (sent, confirmed, failed, expired, re-signed).
    pub facts: u64,
    /// What each transaction was at, by id: final states stay final, `Sent` carries the most
    /// sends journaled.
    pub priors: Vec<Option<Prior>>,
    /// Transactions whose identity record is written.
    pub identified: Vec<bool>,
    /// The latest re-signing of each re-signed transaction: (its new signature, attempt).
    pub resigned: HashMap<u32, (Signature, u32)>,
    /// The last session ended with a `closed` record (it was not killed).
    pub closed: bool,
    /// Bytes up to the end of the last good record; appending continues here.
    pub good_len: u64,
    /// Bytes after `good_len` that are a torn record, and why; ignored (and cut off on resume).
    pub torn: Torn,
}

impl Replay {
    /// Counts of the priors: (confirmed, failed, expired, sent and unfinished).
    pub fn tally(&self) -> (usize, usize, usize, usize) {
        let mut t = (0, 0, 0, 0);
        for p in self.priors.iter().flatten() {
            match p {
                Prior::Confirmed { .. } => t.0 += 1,
                Prior::Failed { .. } => t.1 += 1,
                Prior::Expired { .. } => t.2 += 1,
                Prior::Sent { .. } => t.3 += 1,
            }
        }
        t
    }

    /// Refuses a journal written for other transactions than `ours`.
    pub fn check_inputs(&self, path: &Path, ours: &Inputs) -> Result<(), JournalError> {
        match &self.header {
            Some(h) if !h.inputs.same_transactions(ours) => Err(JournalError::InputsDiffer {
                path: path.to_path_buf(),
                theirs: Box::new(h.inputs.clone()),
                ours: Box::new(ours.clone()),
            }),
            _ => Ok(()),
        }
    }

    fn apply(&mut self, rec: Record, at: u64, ctx: &Ctx<'_>) -> Result<(), JournalError> {
        let corrupt = |reason: String| JournalError::Corrupt {
            path: ctx.path.to_path_buf(),
            offset: at,
            reason,
        };
        let header_seen = self.header.is_some();
        match (&rec, header_seen) {
            (Record::Header(h), false) => {
                if h.version != VERSION {
                    return Err(JournalError::Version {
                        path: ctx.path.to_path_buf(),
                        found: h.version,
                        supported: VERSION,
                    });
                }
                if let Some(ours) = ctx.inputs
                    && !h.inputs.same_transactions(ours)
                {
                    return Err(JournalError::InputsDiffer {
                        path: ctx.path.to_path_buf(),
                        theirs: Box::new(h.inputs.clone()),
                        ours: Box::new(ours.clone()),
                    });
                }
                let n = usize::try_from(h.inputs.count)
                    .map_err(|_| corrupt(format!("{} transactions", h.inputs.count)))?;
                self.priors = vec![None; n];
                self.identified = vec![false; n];
                self.sessions = 1;
                self.header = Some(h.clone());
                return Ok(());
            }
            (Record::Header(_), true) => return Err(corrupt("a second header".to_string())),
            (_, false) => return Err(corrupt("the first record is not a header".to_string())),
            _ => {}
        }
        let n = self.priors.len();
        if let Some(id) = rec.id()
            && id as usize >= n
        {
            return Err(corrupt(format!(
                "a record for transaction {id}, but the journal has {n}"
            )));
        }
        let parse_sig = |s: &str| {
            Signature::from_str(s).map_err(|_| corrupt(format!("{s:?} is not a signature")))
        };
        let prior = |priors: &mut Vec<Option<Prior>>, id: u32| -> Option<Prior> {
            priors.get_mut(id as usize).and_then(Option::take)
        };
        self.closed = false;
        match rec {
            Record::Header(_) => {}
            Record::Session { .. } => self.sessions += 1,
            Record::Closed { .. } => self.closed = true,
            Record::Tx { id, signature, .. } => {
                let sig = parse_sig(&signature)?;
                if let Some(tx) = ctx.txs.and_then(|t| t.get(id as usize))
                    && tx.signature != sig
                {
                    return Err(corrupt(format!(
                        "transaction {id} is {sig} in the journal but {} in the inputs",
                        tx.signature
                    )));
                }
                self.identified[id as usize] = true;
            }
            Record::Fact(TxFact::Sent { id, sends }) => {
                self.facts += 1;
                let next = match prior(&mut self.priors, id) {
                    Some(Prior::Sent { sends: before }) => Prior::Sent {
                        sends: before.max(sends),
                    },
                    // Final states stay final.
                    Some(done) => done,
                    None => Prior::Sent { sends },
                };
                self.priors[id as usize] = Some(next);
            }
            Record::Fact(TxFact::Confirmed {
                id,
                slot,
                commitment,
            }) => {
                self.facts += 1;
                let sends = sends_so_far(&self.priors, id);
                self.priors[id as usize] = Some(Prior::Confirmed {
                    slot,
                    commitment,
                    sends,
                });
            }
            Record::Fact(TxFact::Failed { id, slot, error }) => {
                self.facts += 1;
                let sends = sends_so_far(&self.priors, id);
                self.priors[id as usize] = Some(Prior::Failed { slot, error, sends });
            }
            Record::Fact(TxFact::Expired { id }) => {
                self.facts += 1;
                // The chain's word that it landed outranks a later "expired".
                let landed = matches!(
                    self.priors[id as usize],
                    Some(Prior::Confirmed { .. } | Prior::Failed { .. })
                );
                if !landed {
                    let sends = sends_so_far(&self.priors, id);
                    self.priors[id as usize] = Some(Prior::Expired { sends });
                }
            }
            Record::Fact(TxFact::Resigned {
                id,
                signature,
                attempt,
            }) => {
                self.facts += 1;
                self.resigned.insert(id, (signature, attempt));
            }
        }
        Ok(())
    }
}

/// What the reader checks records against.
struct Ctx<'a> {
    path: &'a Path,
    inputs: Option<&'a Inputs>,
    txs: Option<&'a [LoadedTx]>,
}

/// Reads the journal at `path` without changing or locking it.
pub fn read(path: &Path) -> Result<Replay, JournalError> {
    let mut file = File::open(path).map_err(|e| JournalError::io(path, e))?;
    replay(&mut file, path, None, None)
}

/// Every good record of the journal at `path`, in order (for tests and tools).
pub fn read_records(path: &Path) -> Result<Vec<Record>, JournalError> {
    let mut file = File::open(path).map_err(|e| JournalError::io(path, e))?;
    let mut out = Vec::new();
    scan(&mut file, path, &mut |rec, _| {
        out.push(rec);
        Ok(())
    })?;
    Ok(out)
}

/// Replays `file`, checking its header against `inputs` and its identity records against `txs`
/// when given.
pub(super) fn replay(
    file: &mut File,
    path: &Path,
    inputs: Option<&Inputs>,
    txs: Option<&[LoadedTx]>,
) -> Result<Replay, JournalError> {
    let ctx = Ctx { path, inputs, txs };
    let mut replay = Replay::default();
    let (good_len, torn) = scan(file, path, &mut |rec, at| replay.apply(rec, at, &ctx))?;
    replay.good_len = good_len;
    replay.torn = torn;
    if replay.header.is_none() {
        // Cut short before the header was whole: as good as empty.
        replay.good_len = 0;
    }
    Ok(replay)
}

type Sink<'a> = dyn FnMut(Record, u64) -> Result<(), JournalError> + 'a;
/// Bytes ignored at the end and why.
type Torn = Option<(u64, &'static str)>;

/// Feeds every good record and its offset to `sink`; returns the length up to the last good
/// record and the torn tail, if any.
fn scan(file: &mut File, path: &Path, sink: &mut Sink<'_>) -> Result<(u64, Torn), JournalError> {
    let io = |e| JournalError::io(path, e);
    let total = file.metadata().map_err(io)?.len();
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut input = BufReader::with_capacity(256 * 1024, file);
    let mut magic = Vec::with_capacity(MAGIC.len());
    (&mut input)
        .take(MAGIC.len() as u64)
        .read_to_end(&mut magic)
        .map_err(io)?;
    if magic.as_slice() != MAGIC {
        if magic.len() < MAGIC.len() && MAGIC.starts_with(&magic) {
            // Empty, or created by a run killed while writing the marker.
            return Ok((
                0,
                (total > 0).then_some((total, "an unfinished journal marker")),
            ));
        }
        return Err(JournalError::NotAJournal {
            path: path.to_path_buf(),
        });
    }
    let mut reader = Reader::new(input, MAGIC.len() as u64, total);
    loop {
        let at = reader.offset();
        match reader.next().map_err(io)? {
            Next::Record(payload) => {
                let rec: Record =
                    serde_json::from_slice(payload).map_err(|e| JournalError::Corrupt {
                        path: path.to_path_buf(),
                        offset: at,
                        reason: format!("unreadable record: {e}"),
                    })?;
                sink(rec, at)?;
            }
            Next::End => return Ok((at, None)),
            Next::Torn(why) => return Ok((at, Some((total - at, why)))),
            Next::Corrupt(reason) => {
                return Err(JournalError::Corrupt {
                    path: path.to_path_buf(),
                    offset: at,
                    reason,
                });
            }
        }
    }
}

/// How often a transaction was sent before its final record, so a resumed report keeps it.
fn sends_so_far(priors: &[Option<Prior>], id: u32) -> u32 {
    match priors.get(id as usize) {
        Some(Some(Prior::Sent { sends })) => *sends,
        _ => 0,
    }
}
