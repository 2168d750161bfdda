//! Copies for a leader change go in a lane of their own, beside the pace: the sends a slow
//! leader still holds when the next one's turn begins (`handover`), and those that passed the
//! current leader by while its first handshake was under way (`missed`).
//!
//! They are extra streams to a leader that has a budget for them: an unstaked peer's 200 a
//! second (counted in 100 ms windows), of which the lane takes what [`COPY_SHARE`] of it the
//! pace (making up owed time included) and a first handshake's riders leave; a staked peer's
//! budget is far larger, and the lane takes the pace's own rate. Through the pace, as resends
//! due now, they took places planned for first sends: on the relay's `hostile+4` the 155
//! copies for a leader whose first handshake had taken 1.5 s held the run's first sends for
//! 1.56 s, and the transactions behind them landed up to 4.7 s after they were sent. For
//! [`CATCH_UP_AFTER`] after a leader's first handshake has ended, the streams that waited for
//! it are released a [`RIDER_GAP`] apart (see `engine::handshakes::Release`), and the lane
//! takes what they leave.
//!
//! The lane is closed when the pace is to be held strictly (`--no-catch-up`), under `--rate
//! max` (whose closed loop sends what the leaders take), and when the pace leaves no room in
//! an unstaked budget: copies then go through the pace, ahead of resends and first sends, and
//! are not owed.

use std::{
    collections::{HashSet, VecDeque},
    time::Duration,
};

use futures::future::BoxFuture;
use tokio::time::Instant;

use super::{CATCH_UP_AFTER, Dispatcher, Hold, RIDER_GAP, Sent};
use crate::engine::{
    leaders::LeaderBook, store::TxStore, update::Update, verdict::UNSTAKED_BUDGET,
};

/// The share of an unstaked peer's budget the pace, a first handshake's riders and the copies
/// may take together: all of it. At nine tenths, the simulator's leader 900 ms away (two
/// turns, the others near) got its missed sends too late for 49 of a run's first 150, which
/// landed in the next leader's turn; all of it, none.
const COPY_SHARE: f64 = 1.0;
/// Copies that may go at once after a quiet spell: one [`SEND_TICK`](super::SEND_TICK)'s
/// worth at 100 a second.
const BURST: f64 = 2.0;

/// The lane: copies due, in order, and the tokens that pace them.
#[derive(Debug)]
pub(super) struct Copies {
    /// Due now, in the order they were made.
    due: VecDeque<u32>,
    /// The same, to make each one copy at most.
    queued: HashSet<u32>,
    tokens: f64,
    at: Instant,
    /// Until when the streams that waited for a first handshake are being released, a
    /// [`RIDER_GAP`] apart: their rate is not the lane's to spend.
    riders_until: Option<Instant>,
}

impl Copies {
    pub(super) fn new(now: Instant) -> Self {
        Self {
            due: VecDeque::new(),
            queued: HashSet::new(),
            tokens: BURST,
            at: now,
            riders_until: None,
        }
    }

    /// When the first copy may go, at `rate` a second: `None` with none due or no rate.
    fn next_at(&self, rate: f64) -> Option<Instant> {
        if self.due.is_empty() || rate <= 0.0 {
            return None;
        }
        let short = (1.0 - self.tokens).max(0.0);
        Some(self.at + Duration::from_secs_f64(short / rate))
    }

    /// Adds the tokens `rate` earned since the last look.
    fn refill(&mut self, rate: f64, now: Instant) {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * rate;
        self.tokens = (self.tokens + earned).min(BURST);
        self.at = now;
    }
}

impl Dispatcher {
    /// `id` goes to the leaders as a copy now, unless it already waits to.
    pub(super) fn copy(&mut self, id: u32) {
        if self.copies.queued.insert(id) {
            self.copies.due.push_back(id);
        }
    }

    /// A copy for the current leader once its first handshake ended: its riders are being
    /// released meanwhile, for [`CATCH_UP_AFTER`], and take their share of its budget.
    pub(super) fn copy_beside_riders(&mut self, id: u32, now: Instant) {
        self.copies.riders_until = Some(now + CATCH_UP_AFTER);
        self.copy(id);
    }

    /// Copies a second the lane may make now: the budget's share the pace leaves, unstaked;
    /// the pace's rate, staked (or not known yet to be unstaked); none under `--rate max` or
    /// `--no-catch-up` (the lane is closed).
    pub(super) fn copy_rate(&self, now: Instant) -> f64 {
        if self.maxrate.is_some() || !self.catch_up {
            return 0.0;
        }
        let pace = self.pacer.pacing(now);
        if !self.unstaked {
            return pace;
        }
        let riders = if self.copies.riders_until.is_some_and(|t| now < t) {
            1.0 / RIDER_GAP.as_secs_f64()
        } else {
            0.0
        };
        (UNSTAKED_BUDGET as f64 * COPY_SHARE - pace - riders).max(0.0)
    }

    /// When the next copy may go (see [`Copies`]).
    pub(super) fn next_copy_at(&self, now: Instant) -> Option<Instant> {
        self.copies.next_at(self.copy_rate(now))
    }

    /// Sends the copies whose time has come in the lane, their streams added to `streams`
    /// (none while it is closed: the pace takes them then, see [`Dispatcher::pop_copy`]).
    pub(super) fn send_copies(
        &mut self,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        hold: &Hold,
        streams: &mut Vec<BoxFuture<'static, Update>>,
    ) -> Vec<Sent> {
        let now = Instant::now();
        let rate = self.copy_rate(now);
        let mut sent = Vec::new();
        if rate <= 0.0 {
            return sent;
        }
        self.copies.refill(rate, now);
        while self.copies.tokens >= 1.0 {
            let targets = leaders.targets(now);
            if targets.is_empty() {
                break;
            }
            let Some(id) = self.pop_copy(store, hold) else {
                break;
            };
            if let Some(s) = self.launch(id, &targets, now, store, leaders, streams) {
                self.copies.tokens -= 1.0;
                self.resend_later(id, now);
                sent.push(s);
            }
        }
        sent
    }

    /// The first copy due, past those whose transaction finished, landed below the
    /// commitment or no longer needs sending (dropped).
    pub(super) fn pop_copy(&mut self, store: &TxStore, hold: &Hold) -> Option<u32> {
        while let Some(id) = self.copies.due.pop_front() {
            self.copies.queued.remove(&id);
            let live = store.record(id).is_some_and(|r| {
                !r.state.is_final() && !r.seen && !(hold.pointless)(r) && !hold.rpc_down
            });
            if live {
                return Some(id);
            }
        }
        None
    }

    /// While the lane is closed and a copy is due, now: the pace takes it.
    pub(super) fn paced_copy_at(&self, now: Instant) -> Option<Instant> {
        (self.copy_rate(now) <= 0.0 && !self.copies.due.is_empty()).then_some(now)
    }
}
