//! The engine's side of the journal: every [`TxFact`] goes to its writer, and a writer that
//! can no longer write is noticed, because a run that carried on would not be resumable — and
//! the user would not know.
//!
//! Facts are handed over in bunches ([`FactSink::flush`], at every snapshot: ten a second on
//! the dashboard, two headless), not one by one: each hand-over wakes the writer's thread, and
//! a wake-up per fact (several per transaction) cost more CPU than writing them. The writer
//! buffers until its sync, once a second, so the bunching loses nothing a crash would not have
//! lost anyway — but for a re-signing, which is handed over, and synced, at once: the new
//! signature must not be forgotten.

use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

use super::{
    config::EngineConfig,
    fact::{JournalFact, TxFact, TxIdent},
};

/// The journal writer's channel and its health flag; both absent when the run keeps no journal.
pub(super) struct FactSink {
    facts: Option<mpsc::UnboundedSender<JournalFact>>,
    /// Set by the journal writer when it can no longer write.
    failure: Option<Arc<OnceLock<String>>>,
    /// Facts not yet handed over.
    pending: Vec<JournalFact>,
    /// Which transactions the journal names (an identity went, or its replay had one).
    named: Vec<bool>,
}

impl FactSink {
    pub(super) fn new(cfg: &EngineConfig) -> Self {
        Self {
            facts: cfg.facts.clone(),
            failure: cfg.journal_failure.clone(),
            pending: Vec::new(),
            named: if cfg.facts.is_some() {
                cfg.journal_named.clone()
            } else {
                Vec::new()
            },
        }
    }

    /// Queues `fact` for the journal (a re-signing goes at once), with the transaction's
    /// identity (`ident`, asked only then) if the journal does not name it yet; `Err` says why
    /// the run must stop.
    pub(super) fn record(
        &mut self,
        fact: TxFact,
        ident: impl FnOnce() -> Option<TxIdent>,
    ) -> Result<(), String> {
        if self.facts.is_none() {
            return Ok(());
        }
        let i = fact.id() as usize;
        if self.named.len() <= i {
            self.named.resize(i + 1, false);
        }
        let ident = if self.named[i] {
            None
        } else {
            self.named[i] = true;
            ident()
        };
        let urgent = matches!(fact, TxFact::Resigned { .. });
        self.pending.push(JournalFact { fact, ident });
        if urgent { self.flush() } else { Ok(()) }
    }

    /// Hands the queued facts to the writer; `Err` says why the run must stop.
    pub(super) fn flush(&mut self) -> Result<(), String> {
        let Some(tx) = &self.facts else {
            return Ok(());
        };
        let sent = std::mem::take(&mut self.pending)
            .into_iter()
            .try_for_each(|fact| tx.send(fact).map_err(drop));
        sent.map_err(|_| self.failed())
    }

    /// The writer's health (it may fail on a sync with no new fact to send); `Err` says why
    /// the run must stop.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.failure.as_ref().is_some_and(|f| f.get().is_some()) {
            Err(self.failed())
        } else {
            Ok(())
        }
    }

    fn failed(&self) -> String {
        let why = self
            .failure
            .as_ref()
            .and_then(|f| f.get().cloned())
            .unwrap_or_else(|| "its writer stopped".to_string());
        format!(
            "the journal can no longer be written ({why}); stopped sending so that the run stays \
             resumable from what is on disk"
        )
    }
}

impl Drop for FactSink {
    /// A run or batch that ends hands over what it has left.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use solana_pubkey::Pubkey;
    use solana_signature::Signature;

    use super::*;
    use crate::source::Origin;

    fn ident(n: u8) -> Option<TxIdent> {
        Some(TxIdent {
            signature: Signature::from([n; 64]),
            origin: Origin::from(format!("in.b64:{n}")),
        })
    }

    #[test]
    fn each_transaction_is_named_once_and_not_again_when_the_replay_named_it() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut cfg = EngineConfig::new(Pubkey::new_unique(), String::new());
        cfg.facts = Some(tx);
        cfg.journal_named = vec![false, true];
        let mut sink = FactSink::new(&cfg);
        let mut asked = 0;
        for (id, sends) in [(0, 1), (1, 1), (0, 2), (2, 1)] {
            let fact = TxFact::Sent { id, sends };
            sink.record(fact, || {
                asked += 1;
                ident(id as u8)
            })
            .unwrap();
        }
        sink.flush().unwrap();
        let got: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|f| (f.fact.id(), f.ident.map(|i| i.signature)))
            .collect();
        let sig = |n: u8| Some(Signature::from([n; 64]));
        // 1 was named by the replay; 0's second fact and 2 past the replay's list.
        assert_eq!(got, vec![(0, sig(0)), (1, None), (0, None), (2, sig(2))]);
        assert_eq!(asked, 2, "identities are looked up only when sent");
    }

    #[test]
    fn without_a_journal_nothing_is_looked_up() {
        let cfg = EngineConfig::new(Pubkey::new_unique(), String::new());
        let mut sink = FactSink::new(&cfg);
        let fact = TxFact::Expired { id: 0 };
        sink.record(fact, || panic!("looked up")).unwrap();
    }
}
