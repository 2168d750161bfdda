//! How a run behaves ([`EngineConfig`]), what each batch of an engine host brings ([`Batch`]),
//! and the re-signer a deploy lends the engine.

use std::{
    net::SocketAddr,
    sync::{Arc, OnceLock},
    time::Duration,
};

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::sync::mpsc;

use super::{event::RunEvent, fact::JournalFact, snapshot::RateTarget};
use crate::{config::Commitment, source::LoadedTx};

/// How a run behaves: most fields come from `txpace send`'s flags, the rest from what the
/// command learned (the batch's most-written accounts, the RPC node behind `--via rpc`).
#[derive(Clone)]
pub struct EngineConfig {
    pub rate: RateTarget,
    /// Make up, at up to twice a fixed pace, the sends an outage held back (time when sends
    /// were due and no leader would take them); `false` holds the pace strictly.
    pub catch_up: bool,
    /// Bound on every network send.
    pub send_timeout: Duration,
    /// Upcoming distinct leaders that get each send besides the current one.
    pub fanout: usize,
    /// One leader more while the link toward them loses datagrams, and the next one near the
    /// end of a turn (`engine::leaders::fanout`); `false` keeps `fanout` fixed (for
    /// comparisons).
    pub fanout_by_link: bool,
    /// How long after a send an unconfirmed transaction is sent again.
    pub resend_interval: Duration,
    pub commitment: Commitment,
    /// Send only here instead of following the leader schedule (`--tpu`, or the RPC node's
    /// address with `--via rpc`).
    pub pinned_tpu: Option<SocketAddr>,
    /// Who is behind the pinned address when the node list cannot say (an RPC node's own
    /// identity, from `getIdentity`).
    pub pinned_identity: Option<Pubkey>,
    /// `--via rpc`: the RPC URL the sends go to (redacted), for the leaders panel and the
    /// report; `None` sends over QUIC.
    pub via_rpc: Option<String>,
    /// When durable-nonce transactions that have not landed are given up.
    pub deadline: Option<Duration>,
    /// Our QUIC identity, for the header's staked/unstaked.
    pub identity: Pubkey,
    /// RPC URL already redacted, for the header.
    pub rpc_url_display: String,
    /// Status, height and validity polls: about once a slot.
    pub poll_interval: Duration,
    /// Snapshot publishes: about ten a second.
    pub publish_interval: Duration,
    /// Start paused (the dashboard's user may want to look first).
    pub start_paused: bool,
    /// Every state change, as it happens, for the journal.
    pub facts: Option<mpsc::UnboundedSender<JournalFact>>,
    /// The transactions (by id) the journal names already, from its replay: their facts go
    /// without an identity. Shorter than the run: the rest are not named yet.
    pub journal_named: Vec<bool>,
    /// Set by the journal writer when it can no longer write: the engine then stops.
    pub journal_failure: Option<Arc<OnceLock<String>>>,
    /// `--events`: every state change and stream outcome, as it happens.
    pub events: Option<mpsc::UnboundedSender<RunEvent>>,
    /// The accounts the batch writes most (at most 128): recent fees for them are watched
    /// during the run. Empty: not watched.
    pub fee_accounts: Vec<Pubkey>,
    /// Signs expired transactions again (deploys, where txpace holds the signers).
    pub resigner: Option<Arc<dyn Resigner>>,
}

/// What differs from one batch to the next; everything else is the host's [`EngineConfig`] (see `engine::host`).
pub struct Batch {
    pub txs: Vec<LoadedTx>,
    /// Signs its transactions again when their blockhash runs out.
    pub resigner: Option<Arc<dyn Resigner>>,
    /// `--events`, labelled for this batch.
    pub events: Option<mpsc::UnboundedSender<RunEvent>>,
    /// The accounts it writes most, whose recent fees are watched while it runs.
    pub fee_accounts: Vec<Pubkey>,
}

/// Signs a transaction again when its blockhash ran out.
pub trait Resigner: Send + Sync + 'static {
    /// A new signing of transaction `id` against `blockhash` as (first signature, wire bytes), or
    /// `None` to let it expire. `attempt` counts from 1.
    fn resign(&self, id: u32, attempt: u32, blockhash: Hash) -> Option<(Signature, Arc<[u8]>)>;
}

impl EngineConfig {
    pub fn new(identity: Pubkey, rpc_url_display: String) -> Self {
        Self {
            rate: RateTarget::Fixed(100.0),
            catch_up: true,
            send_timeout: Duration::from_secs(5),
            fanout: 1,
            fanout_by_link: true,
            resend_interval: Duration::from_millis(4_000),
            commitment: Commitment::Confirmed,
            pinned_tpu: None,
            pinned_identity: None,
            via_rpc: None,
            deadline: None,
            identity,
            rpc_url_display,
            poll_interval: Duration::from_millis(400),
            publish_interval: Duration::from_millis(100),
            start_paused: false,
            facts: None,
            journal_named: Vec::new(),
            journal_failure: None,
            events: None,
            fee_accounts: Vec::new(),
            resigner: None,
        }
    }
}
