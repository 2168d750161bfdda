//! What a finished engine hands back, also when its task ended without finishing.

use std::sync::Arc;

use tokio::sync::watch;

use super::snapshot::{RunState, Snapshot};
use crate::config::Commitment;

/// The last snapshot (every leader's figures are in its `leader_totals`), with what the report
/// needs besides it.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub snapshot: Arc<Snapshot>,
    /// Highest commitment each transaction was seen at, by id.
    pub commitments: Vec<Option<Commitment>>,
}

/// Why an engine task ended without an outcome: its panic's message, or a cancellation.
pub(super) fn crash_reason(err: tokio::task::JoinError) -> String {
    let reason = if err.is_panic() {
        let payload = err.into_panic();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        format!("the engine crashed: {msg}")
    } else {
        "the engine task was cancelled".to_string()
    };
    log::error!("{reason}");
    reason
}

/// The last picture published again as FAILED with `reason`, as the run's outcome.
pub(super) fn failed(publisher: &watch::Sender<Arc<Snapshot>>, reason: String) -> RunOutcome {
    let mut snap = (**publisher.borrow()).clone();
    snap.seq += 1;
    snap.run = RunState::Failed(reason);
    let snapshot = Arc::new(snap);
    publisher.send_replace(snapshot.clone());
    RunOutcome {
        commitments: vec![None; snapshot.txs.len()],
        snapshot,
    }
}
