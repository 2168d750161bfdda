//! Backoff, per address: a failure of a kind that calls for one (a throttle, a failed
//! connection, a timed-out send) spares the address for a while, deeper when failures come back
//! within [`JUDGE_WINDOW`] of the last backoff ending; an address past its backoff gets one
//! stream at a time until it answers.

use std::{net::SocketAddr, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::LeaderBook;
use crate::engine::{
    link::LinkTiming,
    net::{Handoff, SendError, StreamOutcome},
};

/// How far back a leader's outcomes are judged: failures within this span of a backoff's end
/// deepen the next one; a span without them forgets the level.
pub const JUDGE_WINDOW: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// How often a held pace looks whether a new leader's handshake has finished (see
/// [`LeaderBook::next_look`]): a tenth of the nearest mainnet leader's round trip.
pub(super) const HANDSHAKE_POLL: Duration = Duration::from_millis(2);

/// How long the first backoff of each kind lasts (each repeat doubles it, up to 5 s). A
/// throttle is brief by nature (the server's budget refills every 100 ms); a failed connection
/// costs a handshake per retry; a timed-out send held a stream for its whole deadline.
fn backoff_base(kind: StreamOutcome) -> Option<Duration> {
    match kind {
        StreamOutcome::Throttled => Some(Duration::from_millis(100)),
        StreamOutcome::Connection => Some(Duration::from_millis(500)),
        StreamOutcome::Timeout => Some(Duration::from_secs(1)),
        StreamOutcome::Accepted | StreamOutcome::Other => None,
    }
}

pub(super) struct Backoff {
    pub(super) until: Instant,
    pub(super) level: u32,
    pub(super) kind: StreamOutcome,
    pub(super) reason: String,
    /// The address answered a stream since the backoff ended. Until it has, it gets one stream
    /// at a time — the probe — even where it answered before (a throttling leader does):
    /// sends that fall due together must not all go to it at the end of its backoff.
    pub(super) answered_since: bool,
}

impl LeaderBook {
    pub(super) fn backing_off(&self, addr: SocketAddr, now: Instant) -> bool {
        self.backoff.get(&addr).is_some_and(|b| b.until > now)
    }

    /// The earliest moment a backed-off address may be tried again.
    pub fn next_backoff_end(&self, now: Instant) -> Option<Instant> {
        self.backoff
            .values()
            .map(|b| b.until)
            .filter(|u| *u > now)
            .min()
    }

    /// With nowhere to send, when to look again: when a backoff ends, and every
    /// [`HANDSHAKE_POLL`] while a new leader's handshake is under way — it takes the pace once
    /// its first stream reaches the wire, which sends no update; waiting for the stream's
    /// answer instead held a run's start for two round trips of its farthest leader (496 ms on
    /// the `apac` profile).
    pub fn next_look(&self, now: Instant) -> Option<Instant> {
        let poll = self.liveness.connecting().then(|| now + HANDSHAKE_POLL);
        self.next_backoff_end(now).into_iter().chain(poll).min()
    }

    /// Addresses whose streams have just turned silent (see [`Liveness::newly_silent`]).
    pub fn newly_silent(&mut self, now: Instant) -> Vec<SocketAddr> {
        self.liveness.newly_silent(now)
    }

    /// A stream went to `leader` at `addr`; `handoff` will say when it reached the wire.
    pub fn on_sent(&mut self, leader: Pubkey, addr: SocketAddr, handoff: Handoff) {
        self.stats.entry(leader).or_default().streams.sent += 1;
        self.last_addr.insert(leader, addr);
        self.liveness.on_sent(addr, handoff);
        self.note_sent(addr, Instant::now());
    }

    /// The time rules of `addr`'s measured link (see `engine::link`).
    pub fn timing(&self, addr: SocketAddr) -> LinkTiming {
        self.liveness.timing(addr)
    }

    /// Feeds one stream's outcome, which came `took` after the stream was handed to QUIC, into
    /// the leader's figures and backoff. Returns the outcome's kind, so the caller can react to
    /// throttling.
    pub fn on_result(
        &mut self,
        leader: Pubkey,
        addr: SocketAddr,
        result: &Result<(), SendError>,
        took: Duration,
        now: Instant,
    ) -> StreamOutcome {
        let outcome = StreamOutcome::of(result);
        let stats = self.stats.entry(leader).or_default();
        stats.streams.record(outcome);
        stats.record_ack(took);
        if outcome == StreamOutcome::Accepted {
            // An accepted stream was handed off: `took` is a round trip of its link.
            self.liveness.on_answer_time(addr, took, now);
        }
        self.on_address_result(addr, result, now)
    }

    /// A stream of an earlier batch finished (see `engine::host`): its figures belong to that
    /// batch, but what it says of the address — answering or not, backing off — still holds.
    pub fn on_stale_result(
        &mut self,
        addr: SocketAddr,
        result: &Result<(), SendError>,
        now: Instant,
    ) {
        self.on_address_result(addr, result, now);
    }

    fn on_address_result(
        &mut self,
        addr: SocketAddr,
        result: &Result<(), SendError>,
        now: Instant,
    ) -> StreamOutcome {
        let outcome = StreamOutcome::of(result);
        // A stalled open is throttling to the figures and the backoff, but the leader said
        // nothing: a frozen one stalls opens too, and must still turn silent.
        let answered = !matches!(result, Err(SendError::Stalled(_)));
        let heard = if answered {
            outcome
        } else {
            StreamOutcome::Other
        };
        self.liveness.on_result(addr, heard);
        self.note_heard(addr, heard);
        if matches!(heard, StreamOutcome::Accepted | StreamOutcome::Throttled)
            && let Some(b) = self.backoff.get_mut(&addr)
            && b.until <= now
        {
            b.answered_since = true;
        }
        if let Err(SendError::HandshakeHeld(wait)) = result {
            self.hold_handshakes(addr, *wait, now);
        }
        let (Err(err), Some(_)) = (result, backoff_base(outcome)) else {
            // Success does not end a backoff: other streams of the same window may still be
            // held back. An unused backoff is forgotten after a clean window (below).
            return outcome;
        };
        self.back_off(addr, outcome, err.to_string(), now);
        outcome
    }

    /// A stream to `addr` was accepted after its open waited `waited` for stream credit.
    /// Longer than the link explains ([`LinkTiming::credit_wait_bound`]), the leader is behind
    /// on our streams — a 4.0 leader over our budget reads late and returns credit late,
    /// refusing nothing — and it is backed off as a throttling one, before opens stall
    /// altogether (a second later, with a second's sends queued behind them). Returns whether
    /// it was.
    pub fn on_credit_wait(&mut self, addr: SocketAddr, waited: Duration, now: Instant) -> bool {
        let bound = self.liveness.timing(addr).credit_wait_bound();
        if waited <= bound {
            return false;
        }
        let reason = format!(
            "stream credit withheld {} ms: the leader is behind on our streams",
            waited.as_millis()
        );
        self.back_off(addr, StreamOutcome::Throttled, reason, now);
        true
    }

    /// No connection to `addr` is open and the transport may start none for `wait` (the
    /// leader's limit of new connections, or a hold after it ignored a handshake: see
    /// `engine::handshakes`): it is spared until then, as a failing connection is, so the pace
    /// goes to the other leaders rather than to sends refused at once.
    fn hold_handshakes(&mut self, addr: SocketAddr, wait: Duration, now: Instant) {
        if self
            .backoff
            .get(&addr)
            .is_some_and(|b| b.until >= now + wait)
        {
            return;
        }
        let level = self.backoff.get(&addr).map_or(0, |b| b.level);
        self.backoff.insert(
            addr,
            Backoff {
                until: now + wait,
                level,
                kind: StreamOutcome::Connection,
                reason: format!(
                    "no new connection for {} ms: the leader admits 8 a minute, none for 7.5 s \
                     after an ignored handshake",
                    wait.as_millis()
                ),
                answered_since: false,
            },
        );
    }

    /// Backs `addr` off for a failure of `kind`: deeper when it comes soon after the last
    /// backoff ended.
    fn back_off(&mut self, addr: SocketAddr, kind: StreamOutcome, reason: String, now: Instant) {
        let Some(base) = backoff_base(kind) else {
            return;
        };
        let level = match self.backoff.get(&addr) {
            // Streams already in flight when the backoff began fail together: one signal.
            Some(b) if b.until > now => return,
            // Failing again soon after the last backoff ended: deeper.
            Some(b) if now.saturating_duration_since(b.until) < JUDGE_WINDOW => b.level + 1,
            _ => 0,
        };
        let delay = base.saturating_mul(1u32 << level.min(16)).min(BACKOFF_MAX);
        self.backoff.insert(
            addr,
            Backoff {
                until: now + delay,
                level,
                kind,
                reason,
                answered_since: false,
            },
        );
    }

    /// Forgets backoffs that ended a whole window ago, so the map does not grow with every
    /// leader ever met.
    pub fn expire_backoffs(&mut self, now: Instant) {
        self.backoff
            .retain(|_, b| now.saturating_duration_since(b.until) < JUDGE_WINDOW);
        self.liveness.forget_idle();
    }
}
