//! Leaders a send may reach ahead of their turn. A leader reads our streams whoever leads, and
//! holds the transactions it reads for its own turn when that begins within 20 slots (Agave
//! 4.0's banking stage: `BufferedPacketsDecision::Hold` and `ForwardAndHold`, the latter no
//! longer forwarding; `HOLD_TRANSACTIONS_SLOT_OFFSET` in `solana-clock`). Each leader reads
//! 200 streams a second from an unstaked address, so a sender that sends only to the current
//! and the next leader lands at most 200 transactions a second, however long its queue; the
//! leaders after them read the same 200 each, unused. Under `--rate max` those leaders take
//! sends of their own (see `engine::dispatch::ahead`).
//!
//! ```text
//!  slot      s         s+4        s+8
//!            │ current  │ next     │ after      the pace's sends: current and next
//!            │──────────│──────────│──────────  sent ahead: the one after, at its own
//!            ▲ now                 ▲ first slot within AHEAD_SLOTS (16) budget, from the
//!                                                                       queue's far end
//! ```

use std::{net::SocketAddr, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{LeaderBook, WINDOW_EXTRA, targets::NOMINAL_SLOT};

/// How far ahead a leader's first slot may be for it to take a send ahead: inside the 20 slots
/// an Agave 4.0 leader holds transactions for (the simulator's `HOLD_SLOTS`), with a turn's
/// margin for a slot we hear of late. On a slower cluster the slots are longer, not more.
pub const AHEAD_SLOTS: u64 = 16;
/// No send goes ahead to a leader this close to the end of the current turn: it is about to
/// become the next leader, which every send of the pace reaches, and the streams sent ahead
/// must not share a 100 ms window of the leader's count with those.
const HANDOVER_QUIET: Duration = Duration::from_millis(150);

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
}

impl LeaderBook {
    /// The leaders past the current targets ([`LeaderBook::targets`]) whose turn begins within
    /// [`AHEAD_SLOTS`], nearest first: each one a send may go to now (no backoff, not silent),
    /// with room on the wire (our streams to it did not wait on our side). None with
    /// `--tpu`, before the slot is known, or near the end of the current turn.
    pub fn ahead(&self, now: Instant) -> Vec<AheadLeader> {
        let (Some(at), None) = (self.slot_at, self.pinned) else {
            return Vec::new();
        };
        let elapsed = now.saturating_duration_since(at);
        let until = |slot: u64| {
            let slots = u32::try_from(slot.saturating_sub(self.slot)).unwrap_or(u32::MAX);
            (NOMINAL_SLOT.saturating_mul(slots)).saturating_sub(elapsed)
        };
        let Some(&(_, _, current_last)) = self.window.first() else {
            return Vec::new();
        };
        if until(current_last + 1) < HANDOVER_QUIET {
            return Vec::new();
        }
        let head = self.targets(now);
        if head.is_empty() {
            return Vec::new();
        }
        self.upcoming(self.fanout + WINDOW_EXTRA)
            .into_iter()
            .filter(|(_, first, _)| *first > self.slot && first - self.slot < AHEAD_SLOTS)
            .filter(|(leader, _, _)| head.iter().all(|(l, _)| l != leader))
            .filter_map(|(leader, first, last)| {
                let addr = *self.addrs.get(&leader)?;
                // Not yet known to answer is fine (on a large cluster the leader after next is
                // seldom one sent to before): a new connection carries a handshake's riders,
                // and one that does not answer takes no more (see `Liveness`).
                let ready = self.may_send(addr, now) && !self.own_waited(&addr, now);
                ready.then(|| AheadLeader {
                    leader,
                    addr,
                    starts_in: until(first),
                    ends_in: until(last + 1),
                    slots_to_end: last + 1 - self.slot,
                })
            })
            .collect()
    }
}
