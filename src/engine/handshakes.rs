//! New connections to one leader, kept under its per-address limit.
//!
//! A 4.0 leader admits new connections from one source address through a token bucket: 8 a
//! minute on mainnet (32 in the test validator's configuration), and it silently ignores an
//! Initial that finds no token — the client sees only its handshake time out, two seconds
//! later, and a retry spends nothing but its own time (`design.md`, "How a 4.0 leader treats
//! senders"). So the transport (QUIC, and the simulator's client alike) keeps the same bucket
//! for each leader at the mainnet figures, whatever the leader's own configuration: a minute's
//! worth ([`NEW_PER_MINUTE`]) to start, one more every [`TOKEN`], saved up to ten minutes'
//! worth — so we never start a handshake the leader would ignore, and a leader we have
//! reconnected to often waits a token's time at most, never a whole minute. A send that would
//! need one more waits for a connection already open, or is refused at once
//! ([`HandshakeLimit::wait`]) and the leader is spared meanwhile.
//!
//! A handshake the leader ignored (it timed out while the leader was plainly there: another
//! connection to it was up, or it had answered a stream a moment before) says its bucket is
//! empty — another sender on our address spent it, or its limit is lower than we count. No
//! handshake then goes to it for a token's time at the mainnet rate ([`TOKEN`]).
//!
//! This module is a leaf: it imports nothing of the engine.

use std::{collections::VecDeque, time::Duration};

use tokio::time::Instant;

/// Handshakes to one leader per minute at most: a mainnet leader's bucket admits 8 new
/// connections a minute per source address.
pub const NEW_PER_MINUTE: usize = 8;
/// The span the operator's figure of new connections counts over.
pub const MINUTE: Duration = Duration::from_secs(60);
/// How long a mainnet leader's bucket takes to earn one token (a minute over
/// [`NEW_PER_MINUTE`]): no handshake to a leader that ignored one before this has passed.
pub const TOKEN: Duration = Duration::from_millis(7_500);

/// Tokens the bucket saves up at most: ten minutes' worth, as the leader's does.
const SAVED: f64 = (NEW_PER_MINUTE * 10) as f64;

/// One leader's bucket of handshakes, the starts of the last minute (for the operator's
/// figures), and a hold after an ignored one.
#[derive(Debug)]
pub struct HandshakeLimit {
    tokens: f64,
    at: Option<Instant>,
    starts: VecDeque<Instant>,
    held_until: Option<Instant>,
}

impl Default for HandshakeLimit {
    fn default() -> Self {
        Self {
            tokens: NEW_PER_MINUTE as f64,
            at: None,
            starts: VecDeque::new(),
            held_until: None,
        }
    }
}

impl HandshakeLimit {
    fn refill(&mut self, now: Instant) {
        if let Some(at) = self.at {
            let earned = now.saturating_duration_since(at).as_secs_f64() / TOKEN.as_secs_f64();
            self.tokens = (self.tokens + earned).min(SAVED);
        }
        self.at = Some(now);
        while self
            .starts
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= MINUTE)
        {
            self.starts.pop_front();
        }
    }

    /// `None` when a handshake may start now; else how long until one may.
    pub fn wait(&mut self, now: Instant) -> Option<Duration> {
        self.refill(now);
        let held = self
            .held_until
            .map(|u| u.saturating_duration_since(now))
            .filter(|d| !d.is_zero());
        let empty = (self.tokens < 1.0).then(|| TOKEN.mul_f64(1.0 - self.tokens));
        match (held, empty) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// A handshake starts now: it spends a token whether it finishes or not (the leader
    /// counts Initials).
    pub fn start(&mut self, now: Instant) {
        self.refill(now);
        self.tokens = (self.tokens - 1.0).max(0.0);
        self.starts.push_back(now);
    }

    /// A handshake started at or before `now` was ignored: the leader's bucket is empty, so
    /// ours is too, and none goes for a [`TOKEN`].
    pub fn ignored(&mut self, now: Instant) {
        self.refill(now);
        self.tokens = 0.0;
        self.held_until = Some(now + TOKEN);
    }

    /// Handshakes started in the last minute.
    pub fn last_minute(&mut self, now: Instant) -> usize {
        self.refill(now);
        self.starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_minutes_worth_then_one_a_token_saved_up_to_ten_minutes() {
        let mut l = HandshakeLimit::default();
        let t = Instant::now();
        for _ in 0..NEW_PER_MINUTE {
            assert_eq!(l.wait(t), None);
            l.start(t);
        }
        assert_eq!(l.wait(t), Some(TOKEN));
        assert_eq!(l.last_minute(t), NEW_PER_MINUTE);
        assert_eq!(l.wait(t + TOKEN), None, "a token earned");
        l.start(t + TOKEN);
        l.ignored(t + TOKEN);
        assert_eq!(l.wait(t + TOKEN), Some(TOKEN));
        assert_eq!(l.wait(t + TOKEN * 2), None);
        // Idle for a quarter of an hour: ten minutes' worth saved, no more.
        let later = t + Duration::from_secs(900);
        for i in 0..NEW_PER_MINUTE * 10 {
            assert_eq!(l.wait(later), None, "{i}");
            l.start(later);
        }
        assert!(l.wait(later).is_some());
    }
}
