//! Sends ahead of a leader's turn, under `--rate max` while the leaders give us an unstaked
//! budget. Each leader reads 200 of our streams a second, so sends to the current leader
//! alone land at most that many, however long the queue; and a copy of each to the next
//! leader, the default fan-out, spends the next leader's 200 on transactions the current one
//! lands. So sends are spread (`LeaderBook::set_spread`): the pace's go to the current leader
//! (and to the next near the end of the turn, where a send may arrive after it), and every
//! leader past the current targets whose turn begins within
//! [`AHEAD_SLOTS`](crate::engine::leaders) ([`LeaderBook::ahead`]), the next one included,
//! takes sends of its own and holds them for its turn: one stream each, at most
//! [`PER_WINDOW`] in any 100 ms (the budget at the closed loop's plateau, counting the pace's
//! streams to it too), from the far end of the queue — the transactions the pace would reach
//! only after that turn begins. Those land in its first slots instead of seconds later, and
//! the queue drains at up to one budget per leader within reach.
//!
//! A transaction sent ahead comes due for a resend one resend interval after its leader's
//! turn ends, not after the send; until then it is not part of the closed loop's backlog
//! (see [`Ahead::waiting`]), which would otherwise read a queue held for a later turn as
//! landings falling behind and cut the pace.

use std::{cmp::Reverse, collections::VecDeque, time::Duration};

use futures::future::BoxFuture;
use tokio::time::Instant;

use super::{Dispatcher, Hold, PER_WINDOW, Sent};
use crate::engine::{leaders::LeaderBook, store::TxStore, update::Update};

/// Besides the pace's reach until a leader's first slot, this much more of the queue's head
/// stays the pace's: the pace is not exact, and a transaction is better sent now to the
/// current leader than held for a later one.
const RESERVE: Duration = Duration::from_millis(200);
/// A transaction sent ahead counts as waiting for its leader's turn until this long after the
/// turn ends, its confirmation's time.
const CONFIRM_GRACE: Duration = Duration::from_secs(1);

/// What the sends ahead keep track of.
#[derive(Default)]
pub(super) struct Ahead {
    /// (until, id): transactions sent ahead, and when their leader's turn and confirmation
    /// are over, in the order sent.
    waiting: VecDeque<(Instant, u32)>,
    /// Transactions sent ahead so far.
    sent: u64,
}

impl Ahead {
    /// Transactions sent ahead so far.
    pub(super) fn sent(&self) -> u64 {
        self.sent
    }

    /// Transactions sent ahead whose leader's turn (and its confirmation) is not over yet and
    /// that are not final: held by a leader for later, not a backlog.
    pub(super) fn waiting(&mut self, now: Instant, store: &TxStore) -> u64 {
        while self.waiting.front().is_some_and(|(until, _)| *until <= now) {
            self.waiting.pop_front();
        }
        self.waiting
            .iter()
            .filter(|(until, id)| {
                *until > now && store.record(*id).is_some_and(|r| !r.state.is_final())
            })
            .count() as u64
    }
}

impl Dispatcher {
    /// Sends ahead to each leader that may take them (see the module doc), added to `streams`.
    pub(super) fn send_ahead(
        &mut self,
        store: &mut TxStore,
        leaders: &mut LeaderBook,
        hold: &Hold,
        streams: &mut Vec<BoxFuture<'static, Update>>,
    ) -> Vec<Sent> {
        let mut sent = Vec::new();
        if !self.spreads() || hold.rpc_down || self.fresh.is_empty() {
            return sent;
        }
        let now = Instant::now();
        for l in leaders.ahead(now) {
            let mut room = PER_WINDOW.saturating_sub(leaders.streams_in_window(l.addr, now));
            if !l.answers {
                room = room.min(1);
            }
            // The pace reaches this much of the queue's head before the leader's turn begins.
            let reserve = self.pacer.rate() * (l.starts_in + RESERVE).as_secs_f64();
            while room > 0 && self.fresh.len() as f64 > reserve {
                let Some(id) = self.pick_last(store, hold, l.slots_to_end) else {
                    return sent;
                };
                let Some(s) = self.launch(
                    id,
                    &[(l.leader, Some(l.addr))],
                    now,
                    store,
                    leaders,
                    streams,
                ) else {
                    continue;
                };
                let until = now + l.ends_in;
                self.resends
                    .push(Reverse((until + self.resend_interval, id)));
                self.ahead.waiting.push_back((until + CONFIRM_GRACE, id));
                self.ahead.sent += 1;
                if self.ahead.sent == 1 {
                    log::info!(
                        "sending ahead: {} (turn in {} ms) takes transactions from the end of \
                         the queue at its own budget ({PER_WINDOW} streams per 100 ms), \
                         held for its turn",
                        l.leader,
                        l.starts_in.as_millis()
                    );
                }
                sent.push(s);
                room -= 1;
            }
        }
        sent
    }

    /// Whether sends are spread over the leaders: under `--rate max` while the leaders give us
    /// an unstaked budget (see `LeaderBook::set_spread`).
    pub(super) fn spreads(&self) -> bool {
        self.maxrate.is_some() && self.unstaked
    }

    /// The never-sent transaction at the far end of the queue, dropping those already final;
    /// `None` when the queue is empty, or its last one's blockhash is not taken now or may
    /// not be `slots` blocks on, by the end of the leader's turn (it waits for the pace,
    /// which sends it sooner).
    fn pick_last(&mut self, store: &TxStore, hold: &Hold, slots: u64) -> Option<u32> {
        while let Some(&id) = self.fresh.back() {
            match store.record(id) {
                Some(rec) if !rec.state.is_final() => {
                    if (hold.pointless)(rec) || !(hold.lasts)(rec, slots) {
                        return None;
                    }
                    self.fresh.pop_back();
                    return Some(id);
                }
                _ => {
                    self.fresh.pop_back();
                }
            }
        }
        None
    }
}
