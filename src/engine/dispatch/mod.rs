//! Deciding what to send when: the pacer (and the closed-loop [`MaxRate`] above it) sets the
//! pace, never-sent transactions go in input order, resends come due on a heap, and each send
//! goes to the leaders' current targets as one stream per leader, off the loop: the streams of
//! one wake-up together in one spawned task, so they are all written before QUIC sends (see
//! [`SEND_TICK`]).
//!
//! The dispatcher is split at its seams: the pace (`rate`), which transaction goes next
//! (`queue`), its streams to the leaders, grouped per wake-up (`streams`), the sends a
//! slow leader still holds when the next one's turn begins (`handover`), and those that passed
//! the current leader by while its first handshake was under way (`missed`), both copied in a
//! lane beside the pace (`copies`), the resends that leave out a later leader holding the
//! transaction for its turn (`holders`), and the sends that go ahead of a later leader's turn
//! under `--rate max` (`ahead`).

mod ahead;
mod copies;
mod handover;
mod holders;
mod missed;
mod queue;
mod rate;
mod streams;

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap, VecDeque},
    sync::Arc,
    time::Duration,
};

use tokio::{sync::mpsc, time::Instant};

use super::{
    config::EngineConfig,
    handshakes::RIDER_GAP,
    liveness::HANDSHAKE_RIDERS,
    maxrate::{self, MaxRate},
    net::Transport,
    pacer::Pacer,
    snapshot::RateTarget,
    store::TxRecord,
    update::Update,
};

/// Sends made in one wake-up at most; with the pacer's 50 ms catch-up this bounds a burst.
const SENDS_PER_WAKE: usize = 64;
/// Sends fall due at most this often: those due in between go out together on the next
/// wake-up (the pacer keeps its deadlines, so the rate holds). Their streams leave in one
/// datagram, acknowledged in one: at 100 tx/s that halves the packets each way and the
/// engine's wake-ups, which were most of its CPU time, for 10 ms more on the wire on average.
/// Well under the 100 ms windows a leader counts a peer's streams in.
const SEND_TICK: Duration = Duration::from_millis(20);
/// Never-sent transactions looked at per pick, at most, past those whose blockhash the node
/// does not take now (they keep their place): bounds the work of a pick on a long queue.
const FRESH_SCAN: usize = 256;
/// How soon queued transactions the node refused (blockhash not taken now) are looked at again.
const REFUSED_RECHECK: Duration = Duration::from_millis(100);
/// How long after a hold ends its owed sends start being made up: the time the streams that
/// waited for a first handshake take to go ([`HANDSHAKE_RIDERS`] of them, a [`RIDER_GAP`]
/// apart), so that making up does not add to them in the leader's first budget windows.
const CATCH_UP_AFTER: Duration = RIDER_GAP.saturating_mul(HANDSHAKE_RIDERS);
/// How much faster than the pace owed sends are made up (see [`Pacer::owe_after`]), at most: twice
/// the pace, so an outage's backlog clears in as long as the outage lasted.
const CATCH_UP: f64 = 2.0;

/// Streams one leader takes from us in any [`BUDGET_WINDOW`](super::leaders::BUDGET_WINDOW),
/// at most, while sends go ahead to it (see `ahead`) and the leaders give us an unstaked
/// budget: a window's share of that budget at the closed loop's plateau, rounded down (19 of
/// 20), the pace's streams to it counted too. A 4.0 leader delays the reads past 20.
const PER_WINDOW: usize = (maxrate::UNSTAKED_BUDGET * maxrate::PLATEAU / 10.0) as usize;

/// Sends due that could not go — no leader would take them, or the node took none of their
/// blockhashes — since an outage began. It ends when a leader accepts a stream again, not when
/// a probe goes out: the probes of a long outage must not each start a catch-up that nothing
/// takes. What is owed then is the time sends were held, not the whole outage: from the moment
/// sending resumed to the first answer, a round trip later, sends went at the pace (at
/// e04bbe2 that round trip was owed too, and a run on far links ran 0.7 s ahead of its pace).
#[derive(Default)]
struct Held {
    /// Since when sends are held, while they are.
    since: Option<Instant>,
    /// Sends held before `since`: spells a send (a probe) ended.
    before: Duration,
    /// A leader throttled us meanwhile: nothing is owed, it told us its limit.
    throttled: bool,
}

impl Held {
    /// Sends are due and none can go.
    fn hold(&mut self, now: Instant) {
        self.since.get_or_insert(now);
    }

    /// A send went out: the spell of held sends ends here.
    fn sent(&mut self, now: Instant) {
        if let Some(since) = self.since.take() {
            self.before += now.saturating_duration_since(since);
        }
    }

    /// The time sends were held, to `now`.
    fn total(&self, now: Instant) -> Duration {
        self.before
            + self
                .since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }
}

/// What holds a send back, as the rest of the engine knows it.
pub(super) struct Hold<'a> {
    /// The transaction's blockhash is no longer taken: a send would be wasted.
    pub pointless: &'a dyn Fn(&TxRecord) -> bool,
    /// The RPC is out, so nobody knows whether earlier sends landed.
    pub rpc_down: bool,
    /// The transaction's blockhash is still taken this many blocks past the tip, as far as
    /// is known: a send held by a leader for a later turn must not outlive it.
    pub lasts: &'a dyn Fn(&TxRecord, u64) -> bool,
}

/// One send of a transaction while its streams are in flight.
struct Round {
    /// Streams not ended yet.
    left: usize,
    /// One was accepted.
    accepted: bool,
    /// The leaders it went to.
    leaders: Vec<solana_pubkey::Pubkey>,
}

/// A send that went out.
pub(super) struct Sent {
    pub id: u32,
    /// How many times it has been sent now.
    pub sends: u32,
    pub at: Instant,
}

/// Owns the pace and the send queues; the loop asks it when to wake and what went out.
pub(super) struct Dispatcher {
    /// The batch whose transactions it sends (see `host`); its streams carry it back.
    batch: u32,
    transport: Arc<dyn Transport>,
    updates: mpsc::UnboundedSender<Update>,
    send_timeout: Duration,
    resend_interval: Duration,
    target: RateTarget,
    pacer: Pacer,
    /// The closed loop, when the target is [`RateTarget::Max`].
    maxrate: Option<MaxRate>,
    /// Whether owed sends are made up (`--no-catch-up` says not).
    catch_up: bool,
    /// The leaders give us an unstaked peer's budget (as the last control step heard).
    unstaked: bool,
    /// An outage under way: sends due that could not go (see [`Held`]).
    held: Option<Held>,
    /// Until when the queue's head is not looked at again: the node took none of its
    /// blockhashes at the last look.
    refused_until: Option<Instant>,
    /// Never-sent transactions, in input order.
    fresh: VecDeque<u32>,
    /// (due, id): the next resend of each sent, unfinished transaction.
    resends: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Each transaction send with streams still in flight, by (id, round): a send reached no
    /// leader only when every stream failed.
    rounds: HashMap<(u32, usize), Round>,
    /// The copy lane (see `copies`).
    copies: copies::Copies,
    /// Transactions a later leader holds for its turn (see `holders`).
    holders: holders::Holders,
    /// The sends that passed the current leader by while its first handshake was under way.
    missed: missed::Missed,
    /// The last wake-up that sent (see [`SEND_TICK`]).
    last_sent_at: Option<Instant>,
    /// Sends ahead of a later leader's turn (see `ahead`).
    ahead: ahead::Ahead,
}

impl Dispatcher {
    pub(super) fn new(
        cfg: &EngineConfig,
        txs: usize,
        transport: Arc<dyn Transport>,
        updates: mpsc::UnboundedSender<Update>,
        start: Instant,
        batch: u32,
    ) -> Self {
        let (rate, maxrate) = match cfg.rate {
            RateTarget::Fixed(r) => (r, None),
            RateTarget::Max => (maxrate::START_RATE, Some(MaxRate::default())),
        };
        let mut dispatcher = Self {
            batch,
            transport,
            updates,
            send_timeout: cfg.send_timeout,
            resend_interval: cfg.resend_interval,
            target: cfg.rate,
            pacer: Pacer::new(rate, start),
            maxrate,
            catch_up: cfg.catch_up,
            unstaked: false,
            held: None,
            refused_until: None,
            fresh: (0..txs as u32).collect(),
            resends: BinaryHeap::new(),
            rounds: HashMap::new(),
            copies: copies::Copies::new(start),
            holders: holders::Holders::default(),
            missed: missed::Missed::default(),
            last_sent_at: None,
            ahead: ahead::Ahead::default(),
        };
        dispatcher.apply_catch_up();
        dispatcher
    }

    /// Every transaction has gone out at least once: what is left is waiting on the chain.
    pub(super) fn all_sent(&self) -> bool {
        self.fresh.is_empty()
    }
}
