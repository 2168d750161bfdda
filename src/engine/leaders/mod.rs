//! Who leads now and next, where their TPUs are, and how each has treated our sends.
//!
//! Backoff lives here, per address, rather than in the transport: the engine decides where to
//! send, so the engine must know which leaders to spare — and the simulator exercises the same
//! logic as the real QUIC path.
//!
//! A leader is judged by its recent window of outcomes, not by the last one: a server that
//! takes only part of our streams (Agave gives an unstaked peer 200 streams a second, counted
//! in 100 ms windows) accepts some and stops or stalls the rest of the same window, so one
//! accepted stream must not erase the backoff. A backoff deepens when failures of its kind come
//! back within [`JUDGE_WINDOW`] of the previous one ending, and is forgotten only after a window
//! without them.
//!
//! The book is split at its seams: the schedule it follows (`schedule`), where each send goes
//! (`targets`), how each address has answered (`backoff`), each leader's figures and panel
//! row (`figures`), its link as measured with the verdict on it (`link`), how many leaders
//! past the current one a send goes to now (`fanout`), and which leaders past those may take
//! sends ahead of their turn (`ahead`).

mod ahead;
mod backoff;
mod fanout;
mod figures;
mod link;
mod schedule;
mod targets;
#[cfg(test)]
mod tests;

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    net::SocketAddr,
};

use solana_pubkey::Pubkey;

pub use self::{
    ahead::{AheadLeader, BUDGET_WINDOW},
    backoff::JUDGE_WINDOW,
    schedule::SLOTS_PER_LEADER,
};
use self::{backoff::Backoff, figures::Stats, link::AddrLink, schedule::SCHEDULE_FETCH};
use super::{liveness::Liveness, verdict::Verdict};

/// A destination for one send.
pub type Target = (Pubkey, Option<SocketAddr>);

pub struct LeaderBook {
    slot: u64,
    schedule: BTreeMap<u64, Pubkey>,
    /// The current and next distinct leaders with their slot ranges, as many as any caller
    /// asks for ([`WINDOW_EXTRA`] past the fan-out): worked out when the slot or the schedule
    /// changes rather than on every send, where walking the schedule showed in profiles (a
    /// single validator leads all 400 slots fetched, so each walk read them all).
    window: Vec<(Pubkey, u64, u64)>,
    addrs: HashMap<Pubkey, SocketAddr>,
    stats: HashMap<Pubkey, Stats>,
    /// Last TPU address each leader was sent to (for the report).
    last_addr: HashMap<Pubkey, SocketAddr>,
    backoff: HashMap<SocketAddr, Backoff>,
    /// Which addresses answer: one that does not gets a stream at a time.
    liveness: Liveness,
    /// Each address's link as the transport measured it, and its answers.
    links: HashMap<SocketAddr, AddrLink>,
    /// Each leader's verdict as last reported (see [`LeaderBook::verdict_changes`]).
    verdicts: HashMap<Pubkey, Option<Verdict>>,
    /// Leaders whose shared budget the log has named (see [`LeaderBook::shared_budget`]).
    shared_said: HashSet<Pubkey>,
    /// Slots asked for per schedule request: halved when the node refuses a range (its
    /// schedule ends with the next epoch, and a short-epoch cluster's next epoch ends well
    /// within [`SCHEDULE_FETCH`]), doubled back after each answer.
    fetch: u64,
    /// `--tpu`: every send goes here, whoever leads.
    pinned: Option<SocketAddr>,
    /// The node advertising the pinned address, looked up once per address refresh rather
    /// than per send.
    pinned_identity: Option<Pubkey>,
    /// Who is behind the pinned address when no node advertises it (an RPC node).
    pinned_known: Option<Pubkey>,
    /// The node list has been asked for once (answered or failed): pinned sends wait for it so
    /// that even the first ones are attributed to the right node.
    nodes_asked: bool,
    /// `--fanout K`: upcoming leaders that get every send besides the current one.
    fanout: usize,
    /// Whether the fan-out follows the link (see `fanout`); off, it is `K` at all times.
    fanout_by_link: bool,
    /// Sends spread over the leaders (see `fanout` and `ahead`): the next leader gets no copy
    /// of the pace's sends but near the current turn's end, and takes sends of its own.
    spread: bool,
    /// The loss that raised the fan-out by one, while it does (see `fanout`).
    raised: Option<fanout::Raised>,
    /// When the current slot began, as far as we know: when it was first heard of.
    slot_at: Option<tokio::time::Instant>,
    /// The current leader at the last [`LeaderBook::take_handover`].
    current_seen: Option<Pubkey>,
}

/// Leaders listed past the fan-out: the leaders panel shows the next few.
const WINDOW_EXTRA: usize = 4;
/// Leaders past the fan-out a send may reach for when nearer ones are skipped or unproven
/// (see [`LeaderBook::targets`]): at most this many extra streams per send.
const TARGET_SPARES: usize = 2;

impl LeaderBook {
    pub fn new(fanout: usize, pinned: Option<SocketAddr>) -> Self {
        Self {
            slot: 0,
            schedule: BTreeMap::new(),
            window: Vec::new(),
            addrs: HashMap::new(),
            stats: HashMap::new(),
            last_addr: HashMap::new(),
            backoff: HashMap::new(),
            liveness: Liveness::default(),
            links: HashMap::new(),
            verdicts: HashMap::new(),
            shared_said: HashSet::new(),
            fetch: SCHEDULE_FETCH,
            pinned,
            pinned_identity: None,
            pinned_known: None,
            nodes_asked: false,
            fanout,
            fanout_by_link: false,
            spread: false,
            raised: None,
            slot_at: None,
            current_seen: None,
        }
    }

    /// Lets the fan-out follow the link (see `fanout`): the engine's default, off in the
    /// book's own tests and where a fixed fan-out is compared against.
    pub fn with_fanout_by_link(mut self, on: bool) -> Self {
        self.fanout_by_link = on;
        self
    }

    /// Names the node behind the pinned address when the node list cannot.
    pub fn with_pinned_identity(mut self, identity: Option<Pubkey>) -> Self {
        self.pinned_known = identity;
        self
    }
}
