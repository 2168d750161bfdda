//! Deciding each sent transaction's fate from what the chain says: confirmed or failed at the
//! requested commitment, seen below it, or not found — and expired only when its blockhash (or
//! deadline) is past for good *and* a lookup with history, asked after that, still finds
//! nothing. The [`Confirmer`] is the only part of the engine that reads chain answers about
//! transactions; it says which lookups it needs, and what its decisions mean for the rest of the
//! engine ([`Decided`]).

use std::{collections::BTreeSet, time::Duration};

use solana_hash::Hash;
use solana_signature::Signature;
use tokio::time::Instant;

use super::{
    blockhashes::Blockhashes,
    config::EngineConfig,
    fact::TxFact,
    lifecycle::TxEvent,
    net::{ChainStatus, STATUS_BATCH},
    resign::Resigning,
    store::{TxRecord, TxStore},
    update::ChainFact,
};
use crate::{config::Commitment, source::LoadedTx};

/// Status batches per round; beyond that, the next round continues where this stopped.
const STATUS_BATCHES_PER_ROUND: usize = 8;
/// History lookups are slower for the node (they read its ledger): fewer per round.
const HISTORY_BATCHES_PER_ROUND: usize = 2;

/// What a decision here means elsewhere; the run loop hands each to its owner, in order.
pub(super) enum Decided {
    /// For the journal.
    Fact(TxFact),
    /// Transaction `id` landed at `slot` (for the leaders' landings); `latency` is for the
    /// meter when it landed without error.
    Landed {
        id: u32,
        slot: u64,
        ok: bool,
        latency: Option<Duration>,
    },
    /// Signed again: it goes to the front of the send queue as a new transaction, and `fact`
    /// to the journal (`previous`: the signature the journal may not have named yet).
    Resigned {
        id: u32,
        fact: TxFact,
        previous: Signature,
    },
}

/// When and how a batch of statuses was asked, and when its answer came.
#[derive(Clone, Copy)]
struct Answer {
    asked: Instant,
    /// The lookup searched the ledger too.
    history: bool,
    now: Instant,
}

/// The lookups one poll round needs: ids, and whether to search the ledger too.
pub(super) type Lookup = (Vec<u32>, bool);

/// Watches sent, unfinished transactions and the blockhashes they ride on, and decides their
/// fates.
pub(super) struct Confirmer {
    commitment: Commitment,
    /// Sent unfinished transactions whose statuses are asked of the status cache.
    watch: BTreeSet<u32>,
    /// Transactions whose next lookup must search the ledger too: resumed ones, and those
    /// whose blockhash or deadline is past (the last word before Expired).
    history_watch: BTreeSet<u32>,
    /// Where the next round of `watch` lookups starts, so big runs are asked in turn.
    status_cursor: u32,
    blockhashes: Blockhashes,
    /// Highest commitment each transaction was seen at, by id.
    commitments: Vec<Option<Commitment>>,
    start: Instant,
    deadline: Option<Duration>,
    deadline_passed: Option<Instant>,
    resigning: Resigning,
}

impl Confirmer {
    pub(super) fn new(cfg: &EngineConfig, txs: &[LoadedTx], start: Instant) -> Self {
        Self {
            commitment: cfg.commitment,
            watch: BTreeSet::new(),
            history_watch: BTreeSet::new(),
            status_cursor: 0,
            blockhashes: Blockhashes::new(txs),
            commitments: vec![None; txs.len()],
            start,
            deadline: cfg.deadline,
            deadline_passed: None,
            resigning: Resigning::new(cfg.resigner.clone()),
        }
    }

    /// Highest commitment each transaction was seen at, by id.
    pub(super) fn commitments(&self) -> &[Option<Commitment>] {
        &self.commitments
    }

    /// Sent transactions not yet final (the closed-loop rate control's backlog).
    pub(super) fn unconfirmed(&self) -> usize {
        self.watch.len()
    }

    /// `id` went out: watch for it.
    pub(super) fn on_sent(&mut self, id: u32) {
        self.watch.insert(id);
    }

    /// `id` was sent by an earlier run: its landing may be older than the status cache
    /// reaches, so its first lookup searches the ledger too.
    pub(super) fn look_up_with_history(&mut self, id: u32) {
        self.history_watch.insert(id);
    }

    /// `id` became final outside a chain answer (from the journal), at `commitment` if known.
    pub(super) fn settled(&mut self, id: u32, commitment: Option<Commitment>, store: &TxStore) {
        if commitment.is_some() {
            self.commitments[id as usize] = commitment;
        }
        self.finish(id, store);
    }

    /// Whether sending `rec` now would be wasted: its blockhash is no longer taken at the tip.
    pub(super) fn resend_pointless(&self, rec: &TxRecord, tip_height: u64) -> bool {
        !rec.durable_nonce
            && self
                .blockhashes
                .resend_pointless(&rec.blockhash, tip_height)
    }

    /// Whether `rec` may still land `blocks` past the tip at `tip_height` (a durable nonce does
    /// not expire).
    pub(super) fn lasts_to(&self, rec: &TxRecord, tip_height: u64, blocks: u64) -> bool {
        rec.durable_nonce
            || self
                .blockhashes
                .taken_at(&rec.blockhash, tip_height.saturating_add(blocks))
    }

    /// Once the deadline is past, every unfinished durable-nonce transaction gets a last lookup
    /// with history before it expires.
    pub(super) fn check_deadline(&mut self, now: Instant, store: &TxStore) {
        let Some(deadline) = self.deadline else {
            return;
        };
        if self.deadline_passed.is_some() || now - self.start < deadline {
            return;
        }
        self.deadline_passed = Some(now);
        for id in 0..store.len() as u32 {
            if let Some(rec) = store.record(id)
                && rec.durable_nonce
                && !rec.state.is_final()
            {
                self.history_watch.insert(id);
            }
        }
    }

    /// This round's status lookups: those with history first (they decide expiries and
    /// resumed transactions), then the watched ones from where the last round stopped.
    pub(super) fn status_lookups(&mut self) -> Vec<Lookup> {
        let history: Vec<u32> = self
            .history_watch
            .iter()
            .take(STATUS_BATCH * HISTORY_BATCHES_PER_ROUND)
            .copied()
            .collect();
        let mut lookups = vec![(history, true)];
        if self.watch.is_empty() {
            return lookups;
        }
        let cap = STATUS_BATCH * STATUS_BATCHES_PER_ROUND;
        let mut ids: Vec<u32> = self
            .watch
            .range(self.status_cursor..)
            .take(cap)
            .copied()
            .collect();
        if ids.len() < cap {
            let more = cap - ids.len();
            ids.extend(self.watch.range(..self.status_cursor).take(more).copied());
        }
        self.status_cursor = ids.last().map_or(0, |l| l.wrapping_add(1));
        lookups.push((ids, false));
        lookups
    }

    /// This round's blockhash validity checks: (at the tip, at finalized).
    pub(super) fn validity_checks(
        &mut self,
        now: Instant,
        final_height: u64,
    ) -> (Vec<Hash>, Vec<Hash>) {
        self.blockhashes.validity_checks(now, final_height)
    }

    /// Takes in one chain fact; what it decided is returned for the loop to pass on.
    pub(super) fn on_fact(
        &mut self,
        fact: ChainFact,
        store: &mut TxStore,
        now: Instant,
    ) -> Vec<Decided> {
        let mut out = Vec::new();
        match fact {
            ChainFact::FinalHeight(height) => {
                // Also re-judged when the height stands still: a bound learned since (a latest
                // blockhash, a first validity answer) may already be behind it.
                let dead = self.blockhashes.on_finalized_height(height, now, store);
                self.look_up_once_more(dead);
            }
            ChainFact::Latest { hash, last_valid } => {
                self.resigning.on_latest(hash, last_valid);
                self.blockhashes.on_latest(hash, last_valid, store);
            }
            ChainFact::Statuses {
                asked,
                ids,
                history,
                statuses,
            } => {
                let answer = Answer {
                    asked,
                    history,
                    now,
                };
                for (id, st) in ids.into_iter().zip(statuses) {
                    self.on_status(id, st, answer, store, &mut out);
                }
            }
            ChainFact::TipValidity {
                hash,
                height,
                valid,
            } => self.blockhashes.on_tip_validity(hash, valid, height, store),
            ChainFact::FinalValidity {
                hash,
                final_height,
                valid,
            } => {
                let dead =
                    self.blockhashes
                        .on_final_validity(hash, valid, final_height, now, store);
                self.look_up_once_more(dead);
            }
        }
        out
    }

    /// Applies one status answer.
    fn on_status(
        &mut self,
        id: u32,
        status: Option<ChainStatus>,
        answer: Answer,
        store: &mut TxStore,
        out: &mut Vec<Decided>,
    ) {
        let Answer {
            asked,
            history,
            now,
        } = answer;
        let Some(rec) = store.record(id) else {
            return;
        };
        if rec.state.is_final() {
            self.watch.remove(&id);
            self.history_watch.remove(&id);
            return;
        }
        if history {
            self.history_watch.remove(&id);
        }
        match status {
            Some(st) if st.commitment >= self.commitment => {
                self.on_landed(id, &st, store, now, out)
            }
            Some(st) => {
                store.record_seen(id, st.slot, now);
                // Below the commitment: keep asking (the cache has it now).
                self.watch.insert(id);
            }
            None => {
                let (durable_nonce, seen) = (rec.durable_nonce, rec.seen);
                if rec.first_sent().is_some() {
                    // A resumed transaction's first lookup was with history; from here on the
                    // status cache is enough.
                    self.watch.insert(id);
                }
                let past_since = if durable_nonce {
                    self.deadline_passed
                } else {
                    self.blockhashes.dead_since(&rec.blockhash)
                };
                match past_since {
                    Some(t) if t <= asked && history => {
                        self.on_never_landed(id, durable_nonce, store, now, out)
                    }
                    // Past for good, but the status cache may have forgotten a landing: ask the
                    // ledger before calling it expired.
                    Some(_) => {
                        self.history_watch.insert(id);
                    }
                    None if seen => {
                        // Seen earlier on a fork that did not survive: send it again.
                        store.record_seen_cleared(id);
                    }
                    None => {}
                }
            }
        }
    }

    fn on_landed(
        &mut self,
        id: u32,
        st: &ChainStatus,
        store: &mut TxStore,
        now: Instant,
        out: &mut Vec<Decided>,
    ) {
        let event = match &st.err {
            Some(err) => TxEvent::LandedWithError(err.clone()),
            None => TxEvent::Landed,
        };
        let note = Some(format!("{} at slot {}", st.commitment.as_str(), st.slot));
        let latency = store.record_landed(id, st.slot, now);
        if store.apply(id, event, now, note).is_err() {
            return;
        }
        self.finish(id, store);
        self.commitments[id as usize] = Some(st.commitment);
        out.push(Decided::Fact(match &st.err {
            Some(error) => TxFact::Failed {
                id,
                slot: st.slot,
                error: error.clone(),
            },
            None => TxFact::Confirmed {
                id,
                slot: st.slot,
                commitment: st.commitment,
            },
        }));
        out.push(Decided::Landed {
            id,
            slot: st.slot,
            ok: st.err.is_none(),
            latency,
        });
    }

    /// Its blockhash or deadline is past and the ledger does not have it: re-sign it when the
    /// engine holds the signer, otherwise it expired.
    fn on_never_landed(
        &mut self,
        id: u32,
        durable_nonce: bool,
        store: &mut TxStore,
        now: Instant,
        out: &mut Vec<Decided>,
    ) {
        if !durable_nonce && let Some(r) = self.resigning.resign(id, store, now) {
            self.blockhashes.moved(id, r.old, r.hash, r.last_valid);
            self.watch.remove(&id);
            self.history_watch.remove(&id);
            out.push(Decided::Resigned {
                id,
                fact: r.fact,
                previous: r.previous,
            });
            return;
        }
        let note = Some(if durable_nonce {
            "deadline passed before it landed".to_string()
        } else {
            "blockhash past its last valid block height at finalized; not on chain".to_string()
        });
        if store.apply(id, TxEvent::Expired, now, note).is_ok() {
            self.finish(id, store);
            out.push(Decided::Fact(TxFact::Expired { id }));
        }
    }

    /// No bank that can still come accepts these transactions' blockhash: each gets one last
    /// status lookup, with history (the status cache may have forgotten an old landing), and
    /// only then expires.
    fn look_up_once_more(&mut self, ids: Vec<u32>) {
        self.history_watch.extend(ids);
    }

    /// `id` is final: stop watching it, and forget its blockhash when nobody else uses it.
    fn finish(&mut self, id: u32, store: &TxStore) {
        self.watch.remove(&id);
        self.history_watch.remove(&id);
        if let Some(rec) = store.record(id)
            && !rec.durable_nonce
        {
            self.blockhashes.release(rec.blockhash);
        }
    }
}
