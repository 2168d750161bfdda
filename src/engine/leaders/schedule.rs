//! The leader schedule the book follows: fetched ahead of the current slot in windows that
//! shrink when a node refuses a range and grow back after each answer, kept a little behind the
//! slot to attribute landings, and walked once per slot or schedule change for the current and
//! next distinct leaders.

use solana_pubkey::Pubkey;

use super::{LeaderBook, WINDOW_EXTRA};

/// Slots per leader rotation on Solana clusters.
pub const SLOTS_PER_LEADER: u64 = 4;
/// How many slots of schedule to fetch at a time, at most.
pub(super) const SCHEDULE_FETCH: u64 = 400;
/// The fewest: one leader's turn. A node knows the schedule up to the end of the epoch after
/// its root's, and the root trails the tip by 32 slots or more (the tower's depth): on a
/// cluster with short epochs the tip can be a few slots from the end of what is known, or
/// past it for a while after an epoch begins (nothing can be fetched then; the requests go on
/// each slot until the root catches up).
const SCHEDULE_FETCH_MIN: u64 = SLOTS_PER_LEADER;
/// Refetch when fewer than this many slots of schedule remain ahead.
const SCHEDULE_MARGIN: u64 = 100;
/// How far ahead of its turn a 4.0 leader holds what it reads (`HOLD_TRANSACTIONS_SLOT_OFFSET`
/// in `solana-clock`; the simulator's `HOLD_SLOTS`): past it, it drops them.
const HOLDS_FOR_SLOTS: u64 = 20;
/// Schedule kept behind the current slot, to attribute landings to leaders.
const SCHEDULE_KEEP_BEHIND: u64 = 2_000;

impl LeaderBook {
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// Moves the current slot forward (slot feeds may repeat or arrive out of order).
    pub fn set_slot(&mut self, slot: u64) {
        if slot > self.slot {
            self.slot = slot;
            self.slot_at = Some(tokio::time::Instant::now());
            let keep_from = slot.saturating_sub(SCHEDULE_KEEP_BEHIND);
            self.schedule = self.schedule.split_off(&keep_from);
            self.window = self.walk(self.window_len());
            log::trace!(
                "slot {slot}: {:?}",
                self.window.iter().take(3).collect::<Vec<_>>()
            );
        }
    }

    /// The schedule window to fetch next, if the known one runs out soon.
    pub fn schedule_request(&self) -> Option<(u64, u64)> {
        if self.slot == 0 {
            return None;
        }
        let known_until = self
            .schedule
            .range(self.slot..)
            .next_back()
            .map_or(self.slot, |(s, _)| *s);
        let margin = SCHEDULE_MARGIN.min(self.fetch / 2);
        (known_until < self.slot + margin).then_some((self.slot, self.fetch))
    }

    /// The node would not give the schedule asked for: ask for half as much next time.
    /// Returns whether the request is smaller now (at the least already, it is not).
    pub fn schedule_refused(&mut self) -> bool {
        let before = self.fetch;
        self.fetch = (self.fetch / 2).max(SCHEDULE_FETCH_MIN);
        self.fetch < before
    }

    pub fn add_schedule(&mut self, start: u64, leaders: &[Pubkey]) {
        self.fetch = (self.fetch * 2).min(SCHEDULE_FETCH);
        for (i, leader) in leaders.iter().enumerate() {
            self.schedule.insert(start + i as u64, *leader);
        }
        self.window = self.walk(self.window_len());
    }

    /// The new current leader, when another's turn has begun since the last call (the first
    /// leader seen is no hand-over): see `dispatch::handover`.
    pub fn take_handover(&mut self) -> Option<Pubkey> {
        if self.pinned.is_some() {
            return None;
        }
        let now = self.window.first().map(|w| w.0)?;
        let before = self.current_seen.replace(now);
        before.filter(|b| *b != now).map(|_| now)
    }

    /// The current leader while its first handshake holds as many of our sends as may wait
    /// for it: the sends made now pass it by (see `dispatch::missed`).
    pub fn current_awaiting_handshake(&self) -> Option<Pubkey> {
        if self.pinned.is_some() {
            return None;
        }
        let leader = self.window.first()?.0;
        let addr = self.addrs.get(&leader)?;
        self.liveness.riders_full(*addr).then_some(leader)
    }

    /// The current leader, and whether it is known to answer and a send to it may go now
    /// (see [`LeaderBook::targets`]): a leader whose handshake failed takes a probe, which
    /// proves nothing yet.
    pub fn current_answering(&self, now: tokio::time::Instant) -> Option<(Pubkey, bool)> {
        let leader = self.window.first()?.0;
        let answering = self
            .addrs
            .get(&leader)
            .is_some_and(|a| self.liveness.answers(*a, now) && self.may_send(*a, now));
        Some((leader, answering))
    }

    pub fn leader_at(&self, slot: u64) -> Option<Pubkey> {
        self.schedule.get(&slot).copied()
    }

    /// The first slot of `leader`'s next turn while that turn has yet to begin and begins
    /// within the 20 slots a 4.0 leader holds what it reads for (see `ahead`): a transaction it
    /// takes now waits in it for that slot. `None` with `--tpu`, where the address is not a
    /// leader's, and for a leader the window does not list.
    pub fn turn_ahead(&self, leader: &Pubkey) -> Option<u64> {
        if self.pinned.is_some() || self.slot == 0 {
            return None;
        }
        let (_, first, _) = self.window.iter().find(|(l, _, _)| l == leader)?;
        (*first > self.slot && *first < self.slot + HOLDS_FOR_SLOTS).then_some(*first)
    }

    /// Distinct leaders the window lists, the current one included: the fan-out and
    /// [`WINDOW_EXTRA`] more, and at least every one whose turn may begin within
    /// [`AHEAD_SLOTS`](super::ahead::AHEAD_SLOTS) (a send may go ahead to it).
    fn window_len(&self) -> usize {
        (self.fanout + WINDOW_EXTRA).max(super::ahead::AHEAD_TURNS + 1)
    }

    /// The current leader and the next distinct ones, with their slot ranges, up to `count`
    /// (at most the fan-out and [`WINDOW_EXTRA`] more).
    pub fn upcoming(&self, count: usize) -> Vec<(Pubkey, u64, u64)> {
        self.window.iter().take(count).copied().collect()
    }

    /// Walks the schedule from the current slot for the first `count` distinct leaders: a
    /// shorter walk's answer is a prefix of a longer one's.
    fn walk(&self, count: usize) -> Vec<(Pubkey, u64, u64)> {
        let mut out: Vec<(Pubkey, u64, u64)> = Vec::new();
        for (&slot, &leader) in self.schedule.range(self.slot..) {
            if let Some(last) = out.last_mut()
                && last.0 == leader
                && last.2 + 1 == slot
            {
                last.2 = slot;
                continue;
            }
            if out.iter().any(|(l, _, _)| *l == leader) {
                continue;
            }
            if out.len() == count {
                break;
            }
            out.push((leader, slot, slot));
        }
        out
    }
}
