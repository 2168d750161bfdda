//! Transactions a later leader holds for its turn. A 4.0 leader reads what it is sent before
//! its turn and holds it while that turn is fewer than 20 slots away, to include it in the
//! turn's first slot (see `engine::leaders::ahead`). When the leaders in between are dark or
//! skipped, a transaction's resend, due a resend interval (4 s) after its send, comes before
//! that turn and goes to the same leader again: nobody needs it, and it takes a place of the
//! pace from a first send. In `txpace-bench wan`'s `mainnet-dark`, whose dark node can lead
//! three turns in a row, the resends of what the next live leader held took every place of the
//! pace for 2.15 s, and the run ended that much later.
//!
//! So a resend leaves out a leader that took the transaction ahead of its turn, until
//! [`LANDS_WITHIN`] slots into that turn (it lands in the first, and is heard of by the next),
//! as long as its blockhash lasts until then; when no leader known to answer is left, the
//! resend waits [`RECHECK`] without spending the pace and is looked at again.
//!
//! ```text
//!  slot   s        s+4       s+8       s+12      s+16
//!         │ dark   │ dark    │ dark    │ holder  │
//!         ▲ sent, taken by the holder  ▲         ▲ s+12+LANDS_WITHIN: resent if not landed
//!                             ▲ due (4 s): the holder left out, nobody else answers: waits
//! ```

use std::{borrow::Cow, collections::HashMap, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use crate::engine::leaders::{LeaderBook, Target};

/// Slots into the holder's turn by which what it held has landed and been heard of.
const LANDS_WITHIN: u64 = 2;
/// How soon a resend held back for a holder's turn is looked at again: a slot or so, which is
/// all the turn can move by.
pub(super) const RECHECK: Duration = Duration::from_millis(200);

/// Which leaders hold each transaction for a turn of their own, and each turn's first slot.
#[derive(Default)]
pub(super) struct Holders {
    by_id: HashMap<u32, Vec<(Pubkey, u64)>>,
}

impl Holders {
    /// `leader` took `id`'s stream: when its turn is still ahead, it holds `id` for it. A send
    /// goes to the next leaders too, near a turn's end or past a dark one, so several may.
    pub(super) fn taken(&mut self, id: u32, leader: Pubkey, leaders: &LeaderBook) {
        if let Some(first) = leaders.turn_ahead(&leader) {
            let holders = self.by_id.entry(id).or_default();
            holders.retain(|(l, _)| *l != leader);
            holders.push((leader, first));
        }
    }

    /// `id` is final: nothing holds it any more that matters.
    pub(super) fn forget(&mut self, id: u32) {
        self.by_id.remove(&id);
    }

    /// `targets` for a resend of `id`: less each leader holding it whose turn's landing slot
    /// (its first slot and [`LANDS_WITHIN`]) is still to come, and for which its blockhash
    /// `lasts` (the slots from now to that one); `None` when no leader known to answer is
    /// left, and the resend should wait.
    pub(super) fn resend_targets<'t>(
        &self,
        id: u32,
        targets: &'t [Target],
        leaders: &LeaderBook,
        now: Instant,
        lasts: impl Fn(u64) -> bool,
    ) -> Option<Cow<'t, [Target]>> {
        let slot = leaders.slot();
        let holding = |leader: &Pubkey| {
            self.by_id.get(&id).is_some_and(|holders| {
                holders.iter().any(|(l, first)| {
                    let until = first + LANDS_WITHIN;
                    l == leader && slot < until && lasts(until - slot)
                })
            })
        };
        if !targets.iter().any(|(l, _)| holding(l)) {
            return Some(Cow::Borrowed(targets));
        }
        let others: Vec<Target> = targets
            .iter()
            .filter(|(l, _)| !holding(l))
            .copied()
            .collect();
        others
            .iter()
            .any(|(_, a)| a.is_some_and(|a| leaders.answers(a, now)))
            .then_some(Cow::Owned(others))
    }
}
