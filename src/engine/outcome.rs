//! What a finished engine hands back.

use std::sync::Arc;

use super::snapshot::{LeaderStats, Snapshot};
use crate::config::Commitment;

/// The last snapshot, with what the report needs besides it.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub snapshot: Arc<Snapshot>,
    /// Highest commitment each transaction was seen at, by id.
    pub commitments: Vec<Option<Commitment>>,
    /// Every leader sent to, with its stream outcomes and landings.
    pub leaders: Vec<LeaderStats>,
}
