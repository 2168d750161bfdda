//! The engine's side of the journal: every [`TxFact`] goes to its writer as it happens, and a
//! writer that can no longer write is noticed, because a run that carried on would not be
//! resumable — and the user would not know.

use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

use super::{config::EngineConfig, fact::TxFact};

/// The journal writer's channel and its health flag; both absent when the run keeps no journal.
pub(super) struct FactSink {
    facts: Option<mpsc::UnboundedSender<TxFact>>,
    /// Set by the journal writer when it can no longer write.
    failure: Option<Arc<OnceLock<String>>>,
}

impl FactSink {
    pub(super) fn new(cfg: &EngineConfig) -> Self {
        Self {
            facts: cfg.facts.clone(),
            failure: cfg.journal_failure.clone(),
        }
    }

    /// Hands `fact` to the journal; `Err` says why the run must stop.
    pub(super) fn record(&self, fact: TxFact) -> Result<(), String> {
        if self.facts.as_ref().is_none_or(|tx| tx.send(fact).is_ok()) {
            Ok(())
        } else {
            Err(self.failed())
        }
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
