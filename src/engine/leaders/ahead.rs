//! Leaders a send may reach ahead of their turn. A leader reads our streams whoever leads, and
//! holds the transactions it reads for its own turn when that begins within 20 slots (Agave
//! 4.0's banking stage: `BufferedPacketsDecision::Hold` and `ForwardAndHold`, the latter no
//! longer forwarding; `HOLD_TRANSACTIONS_SLOT_OFFSET` in `solana-clock`). Each leader reads
//! 200 streams a second from an unstaked address, so a sender whose every send goes to the
//! current leader and a copy to the next lands at most 200 transactions a second, however
//! long its queue. Under `--rate max`, unstaked, sends are spread (see `fanout`): the next leader and
//! those after it take sends of their own (see `engine::dispatch::ahead`).
//!
//! ```text
//!  slot      s         s+4        s+8
//!            │ current  │ next     │ after      the pace's sends: the current leader (and
//!            │──────────│──────────│──────────  the next near the turn's end); sent ahead:
//!            ▲ now      ▲ first slots within AHEAD_SLOTS (16)      each later leader, at its
//!                                                                  own budget, from the
//!                                                                  queue's far end
//! ```

use std::{net::SocketAddr, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{LeaderBook, targets::NOMINAL_SLOT};

/// How far ahead a leader's first slot may be for it to take a send ahead: inside the 20 slots
/// an Agave 4.0 leader holds transactions for (the simulator's `HOLD_SLOTS`), with a turn's
/// margin for a slot we hear of late. On a slower cluster the slots are longer, not more.
pub const AHEAD_SLOTS: u64 = 16;
/// Leaders past the current one whose turn may begin within [`AHEAD_SLOTS`]: the schedule's
/// window lists at least these (`LeaderBook::window_len`), whatever `--fanout` says.
pub(super) const AHEAD_TURNS: usize = AHEAD_SLOTS.div_ceil(super::SLOTS_PER_LEADER) as usize;
/// The span a 4.0 leader counts an unstaked address's streams over (see `engine::link`). The
/// leader that joins the pace's targets at the current turn's end takes no send ahead from
/// this long before the pace's sends reach it (`LeaderBook::turn_end_reach`), so that the two
/// never share one of its windows and go over its budget: with the sends ahead going on until
/// 150 ms before the turn's end, the pace's copies to the next leader on a 230 ms link met
/// them, and 9 of 2,000 reads were delayed.
pub use crate::engine::link::BUDGET_WINDOW;

/// A leader that may take a send ahead of its turn, and when that turn is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AheadLeader {
    pub leader: Pubkey,
    pub addr: SocketAddr,
    /// Until its first slot, at the nominal slot length.
    pub starts_in: Duration,
    /// Until its last slot ends, at the nominal slot length.
    pub ends_in: Duration,
    /// Slots from the current one to the end of its turn: a transaction sent to it must
    /// still be valid that many blocks on (fewer blocks than slots, if any is skipped).
    pub slots_to_end: u64,
    /// Known to answer (`Liveness::answers`). One that is not takes a single send, which
    /// opens its connection, until it does: the streams that waited for a handshake go out
    /// together after it, a rider gap apart, and more sends ahead made meanwhile would reach
    /// the leader in the same 100 ms windows, over its budget.
    pub answers: bool,
}

impl LeaderBook {
    /// The leaders past the current targets ([`LeaderBook::targets`]) whose turn begins within
    /// [`AHEAD_SLOTS`], nearest first: each one a send may go to now (no backoff, not silent),
    /// with room on the wire (our streams to it did not wait on our side). None with
    /// `--tpu` or before the slot is known; not one with a stream of ours in flight and not
    /// yet known to answer (see [`AheadLeader::answers`]), nor one the streams that waited for
    /// its handshake are still going out to (`Liveness::releasing`); not the leader that joins the
    /// pace's targets at the current turn's end once the pace's sends are about to reach it
    /// (see [`BUDGET_WINDOW`]).
    pub fn ahead(&self, now: Instant) -> Vec<AheadLeader> {
        let (Some(at), None) = (self.slot_at, self.pinned) else {
            return Vec::new();
        };
        let elapsed = now.saturating_duration_since(at);
        let until = |slot: u64| {
            let slots = u32::try_from(slot.saturating_sub(self.slot)).unwrap_or(u32::MAX);
            (NOMINAL_SLOT.saturating_mul(slots)).saturating_sub(elapsed)
        };
        let Some(&(current, _, current_last)) = self.window.first() else {
            return Vec::new();
        };
        let handing_over = until(current_last + 1) < self.turn_end_reach(&current) + BUDGET_WINDOW;
        // The pace's sends reach `paced_fanout` leaders past the current one; the leader
        // after those joins at the turn's end: near it, when the fan-out is 0, or when it
        // becomes the next leader otherwise.
        let sent_now = self.paced_fanout();
        let joining = self.window.get(sent_now + 1).map(|(leader, _, _)| *leader);
        let head = self.targets(now);
        if head.is_empty() {
            return Vec::new();
        }
        self.window
            .iter()
            .copied()
            .filter(|(_, first, _)| *first > self.slot && first - self.slot < AHEAD_SLOTS)
            .filter(|(leader, _, _)| head.iter().all(|(l, _)| l != leader))
            .filter(|(leader, _, _)| !(handing_over && joining == Some(*leader)))
            .filter_map(|(leader, first, last)| {
                let addr = *self.addrs.get(&leader)?;
                // Not yet known to answer, it takes one send (see `AheadLeader::answers`; on a
                // large cluster a leader this far ahead is seldom one sent to before).
                let answers = self.liveness.answers(addr, now);
                let opening = self.liveness.in_flight(addr) == 0;
                let ready = self.may_send(addr, now)
                    && !self.own_waited(&addr, now)
                    && !self.liveness.releasing(addr, now)
                    && (opening || answers);
                ready.then(|| AheadLeader {
                    leader,
                    addr,
                    starts_in: until(first),
                    ends_in: until(last + 1),
                    slots_to_end: last + 1 - self.slot,
                    answers,
                })
            })
            .collect()
    }
}
