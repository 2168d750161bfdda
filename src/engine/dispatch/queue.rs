//! Which transaction goes next: due resends first (a heap by due time), then never-sent ones
//! in input order, past those whose blockhash the node does not take now; and when the next
//! send is due, given the pace and whether any leader takes a send.

use std::cmp::Reverse;

use tokio::time::Instant;

use super::{Dispatcher, FRESH_SCAN, Held, Hold, REFUSED_RECHECK, SEND_TICK, holders};
use crate::engine::{
    leaders::{LeaderBook, Target},
    lifecycle::TxState,
    store::TxStore,
};

/// What the pace sends next (see [`Dispatcher::pick`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Picked {
    /// A copy for a leader change, while the copy lane is closed: not owed (see `copies`).
    Copy,
    /// A resend due: its place is owed (see `Pacer::owe_place`).
    Resend,
    /// A never-sent transaction.
    First,
}

impl Dispatcher {
    /// `id` was sent by an earlier run: it is due again one resend interval from now.
    pub(in crate::engine) fn resend_later(&mut self, id: u32, now: Instant) {
        self.resends.push(Reverse((now + self.resend_interval, id)));
    }

    /// `id` was signed again: it goes first, as a new transaction.
    pub(in crate::engine) fn send_first(&mut self, id: u32) {
        self.fresh.push_front(id);
    }

    /// Forgets never-sent transactions that are no longer queued (final from the journal).
    pub(in crate::engine) fn keep_queued(&mut self, store: &TxStore) {
        self.fresh.retain(|id| {
            store
                .record(*id)
                .is_some_and(|r| r.state == TxState::Queued)
        });
    }

    /// When the next send is due, or `None` when there is nothing to send or nowhere to send.
    pub(in crate::engine) fn next_send_at(
        &mut self,
        now: Instant,
        store: &TxStore,
        leaders: &LeaderBook,
    ) -> Option<Instant> {
        let resend = self
            .next_resend_due(store)
            .into_iter()
            .chain(self.paced_copy_at(now))
            .min();
        let work_at = if self.fresh.is_empty() {
            resend
        } else {
            // Queued transactions the node refused a moment ago are looked at again shortly,
            // not on every turn of the loop; a due resend goes meanwhile.
            match self.refused_until.filter(|t| *t > now) {
                None => Some(now),
                Some(t) => Some(resend.map_or(t, |r| r.min(t))),
            }
        };
        let paced = work_at.map(|w| w.max(self.pacer.next_at()));
        // Copies go in their own lane, beside the pace (see `copies`).
        let due = paced.into_iter().chain(self.next_copy_at(now)).min()?;
        if leaders.nowhere_to_send(now) {
            // Sends are due and no leader takes them: an outage, owed once it ends.
            if paced.is_some_and(|p| p <= now) {
                self.held.get_or_insert_with(Held::default).hold(now);
            }
            // Nowhere to send: wake when a backoff ends or a handshake may have finished (or
            // on the next update).
            let until = leaders.next_look(now)?;
            return Some(until.max(due));
        }
        Some(self.last_sent_at.map_or(due, |t| due.max(t + SEND_TICK)))
    }

    /// Drops stale heap entries and returns the earliest due resend.
    fn next_resend_due(&mut self, store: &TxStore) -> Option<Instant> {
        while let Some(Reverse((due, id))) = self.resends.peek().copied() {
            let live = store.record(id).is_some_and(|r| !r.state.is_final());
            if live {
                return Some(due);
            }
            self.resends.pop();
            self.holders.forget(id);
        }
        None
    }

    /// The transaction to send now at the pace to `targets`: a copy for a leader change while
    /// the copy lane is closed (see `copies`), else a resend due with a leader to go to that
    /// does not hold it already (see `holders`), else the next never-sent one; with which of
    /// the three it is (a resend's place is owed: see `streams`).
    pub(super) fn pick(
        &mut self,
        now: Instant,
        store: &TxStore,
        hold: &Hold,
        targets: &[Target],
        leaders: &LeaderBook,
    ) -> Option<(u32, Picked)> {
        if self.copy_rate(now) <= 0.0
            && let Some(id) = self.pop_copy(store, hold)
        {
            return Some((id, Picked::Copy));
        }
        // Resends first: they are older and closer to expiry.
        while let Some(Reverse((due, id))) = self.resends.peek().copied() {
            if due > now {
                break;
            }
            self.resends.pop();
            let Some(rec) = store.record(id) else {
                continue;
            };
            if rec.state.is_final() {
                self.holders.forget(id);
                continue;
            }
            // An entry younger than its interval is one a later send (a copy) replaced.
            if rec
                .last_sent()
                .is_some_and(|t| store.since_start(now).saturating_sub(t) < self.resend_interval)
            {
                continue;
            }
            // Landed below the commitment, about to be declared expired, or the RPC is out so
            // nobody knows whether it landed: wait, and let first sends have the pace.
            if rec.seen || (hold.pointless)(rec) || hold.rpc_down {
                self.resend_later(id, now);
                continue;
            }
            // Every leader it would go to that answers holds it for its turn already.
            let lasts = |blocks| (hold.lasts)(rec, blocks);
            if self
                .holders
                .resend_targets(id, targets, leaders, now, lasts)
                .is_none()
            {
                self.resends.push(Reverse((now + holders::RECHECK, id)));
                continue;
            }
            return Some((id, Picked::Resend));
        }
        // A never-sent transaction may have finished already (expired, or landed through
        // someone else): drop it. One whose blockhash the node does not take now keeps its
        // place without spending the pace: a node that restarted says so of every blockhash
        // while it replays its ledger, and moving the whole queue behind a resend interval
        // then cost seconds; one whose blockhash is gone for good expires once that is final.
        let mut refused = false;
        let mut i = 0;
        while i < self.fresh.len() && i < FRESH_SCAN {
            let id = self.fresh[i];
            match store.record(id) {
                Some(rec) if !rec.state.is_final() => {
                    if (hold.pointless)(rec) {
                        refused = true;
                        i += 1;
                        continue;
                    }
                    self.fresh.remove(i);
                    return Some((id, Picked::First));
                }
                _ => {
                    self.fresh.remove(i);
                }
            }
        }
        // Sends were due and the node took none of their blockhashes. If a leader takes sends
        // again afterwards, that was an outage like any other (see `held`).
        if refused {
            self.held.get_or_insert_with(Held::default).hold(now);
            self.refused_until = Some(now + REFUSED_RECHECK);
        }
        None
    }
}
