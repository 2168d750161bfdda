//! What a finished engine hands back.

use std::sync::Arc;

use super::snapshot::Snapshot;
use crate::config::Commitment;

/// The last snapshot (every leader's figures are in its `leader_totals`), with what the report
/// needs besides it.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub snapshot: Arc<Snapshot>,
    /// Highest commitment each transaction was seen at, by id.
    pub commitments: Vec<Option<Commitment>>,
}
