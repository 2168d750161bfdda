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

use super::{config::EngineConfig, fact::TxFact};

/// The journal writer's channel and its health flag; both absent when the run keeps no journal.
pub(super) struct FactSink {
    facts: Option<mpsc::UnboundedSender<TxFact>>,
    /// Set by the journal writer when it can no longer write.
    failure: Option<Arc<OnceLock<String>>>,
    /// Facts not yet handed over.
    pending: Vec<TxFact>,
}

impl FactSink {
    pub(super) fn new(cfg: &EngineConfig) -> Self {
        Self {
            facts: cfg.facts.clone(),
            failure: cfg.journal_failure.clone(),
            pending: Vec::new(),
        }
    }

    /// Queues `fact` for the journal (a re-signing goes at once); `Err` says why the run must
    /// stop.
    pub(super) fn record(&mut self, fact: TxFact) -> Result<(), String> {
        if self.facts.is_none() {
            return Ok(());
        }
        let urgent = matches!(fact, TxFact::Resigned { .. });
        self.pending.push(fact);
        if urgent { self.flush() } else { Ok(()) }
    }

    /// Hands the queued facts to the writer; `Err` says why the run must stop.
    pub(super) fn flush(&mut self) -> Result<(), String> {
        let Some(tx) = &self.facts else {
            return Ok(());
        };
        let sent = std::mem::take(&mut self.pending)
            .into_iter()
            .try_for_each(|fact| tx.send(fact));
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
