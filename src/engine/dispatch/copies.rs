//! Copies for a leader change go in a lane of their own, beside the pace: the sends a slow
//! leader still holds when the next one's turn begins (`handover`), and those that passed the
//! current leader by while its first handshake was under way (`missed`).
//!
//! They are extra streams to a leader that has a budget for them: an unstaked peer's 200 a
//! second (counted in 100 ms windows), of which the lane takes what [`COPY_SHARE`] of it leaves
//! beside the pace (making up owed time included) and a first handshake's riders; a staked
//! peer's budget is far larger, and the lane takes the pace's own rate. Through the pace, as resends due now, they took places
//! planned for first sends: on the relay's `hostile+4` the 155 copies for a leader whose first
//! handshake had taken 1.5 s held the run's first sends for 1.56 s, and the transactions behind
//! them landed up to 4.7 s after they were sent. For [`CATCH_UP_AFTER`] after a leader's first
//! handshake has ended, the streams that waited for it are released a [`RIDER_GAP`] apart
//! (see `engine::handshakes::Release`), and the lane takes what they leave. When the pace
//! leaves no room — an unstaked pace at or
//! above the share, `--rate max` — no copy is made: the leader would only delay reading them,
//! and the pace's own streams with them.

use std::{collections::VecDeque, time::Duration};

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
    /// (not before, id).
    due: VecDeque<(Instant, u32)>,
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
            tokens: BURST,
            at: now,
            riders_until: None,
        }
    }

    /// When the first copy may go, at `rate` a second: `None` with none due or no rate.
    fn next_at(&self, rate: f64) -> Option<Instant> {
        let &(not_before, _) = self.due.front()?;
        if rate <= 0.0 {
            return None;
        }
        let short = (1.0 - self.tokens).max(0.0);
        let refill = self.at + Duration::from_secs_f64(short / rate);
        Some(not_before.max(refill))
    }

    /// Adds the tokens `rate` earned since the last look.
    fn refill(&mut self, rate: f64, now: Instant) {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * rate;
        self.tokens = (self.tokens + earned).min(BURST);
        self.at = now;
    }
}

impl Dispatcher {
    /// `id` goes to the leaders as a copy, from `not_before` on, unless it already waits to.
    pub(super) fn copy_at(&mut self, id: u32, not_before: Instant) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.handed_over.entry(id) {
            e.insert(not_before);
            self.copies.due.push_back((not_before, id));
        }
    }

    /// A copy for the current leader once its first handshake ended: its riders are being
    /// released meanwhile, for [`CATCH_UP_AFTER`], and take their share of its budget.
    pub(super) fn copy_beside_riders(&mut self, id: u32, now: Instant) {
        self.copies.riders_until = Some(now + CATCH_UP_AFTER);
        self.copy_at(id, now);
    }

    /// Copies a second the lane may make now: the budget's share the pace leaves, unstaked;
    /// the pace's rate, staked (or not known yet to be unstaked); none under `--rate max`.
    pub(super) fn copy_rate(&self, now: Instant) -> f64 {
        let pace = self.pacer.pacing(now);
        let riders = if self.copies.riders_until.is_some_and(|t| now < t) {
            1.0 / RIDER_GAP.as_secs_f64()
        } else {
            0.0
        };
        if self.maxrate.is_some() {
            0.0
        } else if self.unstaked {
            (UNSTAKED_BUDGET as f64 * COPY_SHARE - pace - riders).max(0.0)
        } else {
            pace
        }
    }

    /// When the next copy may go (see [`Copies`]).
    pub(super) fn next_copy_at(&self, now: Instant) -> Option<Instant> {
        self.copies.next_at(self.copy_rate(now))
    }

    /// Sends the copies whose time has come, their streams added to `streams`. A copy whose
    /// transaction finished, landed below the commitment or no longer needs sending is
    /// dropped; with no room in the budget every copy is.
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
            for (_, id) in self.copies.due.drain(..) {
                self.handed_over.remove(&id);
            }
            return sent;
        }
        self.copies.refill(rate, now);
        while let Some(&(not_before, id)) = self.copies.due.front() {
            if not_before > now || self.copies.tokens < 1.0 {
                break;
            }
            let targets = leaders.targets(now);
            if targets.is_empty() {
                break;
            }
            self.copies.due.pop_front();
            self.handed_over.remove(&id);
            let live = store.record(id).is_some_and(|r| {
                !r.state.is_final() && !r.seen && !(hold.pointless)(r) && !hold.rpc_down
            });
            if !live {
                continue;
            }
            if let Some(s) = self.launch(id, &targets, now, store, leaders, streams) {
                self.copies.tokens -= 1.0;
                self.resend_later(id, now);
                sent.push(s);
            }
        }
        sent
    }
}
