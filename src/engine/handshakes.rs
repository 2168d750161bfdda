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
//! A handshake the leader ignored says its bucket is empty — another sender on our address
//! spent it, or its limit is lower than we count. No handshake then goes to it for a token's
//! time at the mainnet rate ([`TOKEN`]). It is read as ignored when it is the
//! [`IGNORED_AFTER`]th in a row to time out while the leader was plainly there (another
//! connection to it was up, or it had answered a stream a moment before): one alone is as
//! likely the link's — on a link losing 2% each way an Initial and its one retransmission
//! within the bound are both lost now and then — while a leader whose bucket is empty ignores
//! every handshake until it refills, so it is found out one handshake later.
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

/// Handshakes timed out in a row, the leader there, before they are read as ignored.
pub const IGNORED_AFTER: u32 = 2;

/// One leader's bucket of handshakes, the starts of the last minute (for the operator's
/// figures), and a hold after an ignored one.
#[derive(Debug)]
pub struct HandshakeLimit {
    tokens: f64,
    at: Option<Instant>,
    starts: VecDeque<Instant>,
    held_until: Option<Instant>,
    /// Handshakes timed out since the last one that finished, and whether the leader was
    /// there when one of them timed out.
    timed_out_in_a_row: u32,
    there_meanwhile: bool,
}

impl Default for HandshakeLimit {
    fn default() -> Self {
        Self {
            tokens: NEW_PER_MINUTE as f64,
            at: None,
            starts: VecDeque::new(),
            held_until: None,
            timed_out_in_a_row: 0,
            there_meanwhile: false,
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

    /// A handshake timed out at `now`; `there`: the leader was plainly there (another
    /// connection to it up, or a stream answered a moment before). Returns whether the leader
    /// ignored it (see the module's documentation), in which case none goes for a [`TOKEN`].
    pub fn timed_out(&mut self, now: Instant, there: bool) -> bool {
        self.timed_out_in_a_row += 1;
        self.there_meanwhile |= there;
        let ignored = self.there_meanwhile && self.timed_out_in_a_row >= IGNORED_AFTER;
        if ignored {
            self.ignored(now);
        }
        ignored
    }

    /// A handshake finished: the leader took it.
    pub fn finished(&mut self) {
        self.timed_out_in_a_row = 0;
        self.there_meanwhile = false;
    }

    /// A handshake started at or before `now` was ignored: the leader's bucket is empty, so
    /// ours is too, and none goes for a [`TOKEN`].
    fn ignored(&mut self, now: Instant) {
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
        assert!(!l.timed_out(t + TOKEN, true), "one alone may be the link's");
        assert!(
            l.timed_out(t + TOKEN, false),
            "the second in a row, the leader there"
        );
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

    /// One handshake timed out is not an ignored one, however plainly the leader was there;
    /// two in a row are, if it was there for either; one that finishes starts the count over;
    /// and timeouts at a leader never seen there (dark) are never read as ignored.
    #[tokio::test(start_paused = true)]
    async fn two_timeouts_in_a_row_with_the_leader_there_are_an_ignored_handshake() {
        let t = Instant::now();
        let mut l = HandshakeLimit::default();
        assert!(!l.timed_out(t, true));
        assert_eq!(l.wait(t), None, "no hold after one");
        l.finished();
        assert!(!l.timed_out(t, true), "the count started over");
        assert!(l.timed_out(t, false), "there for the first of the two");
        assert_eq!(l.wait(t), Some(TOKEN));
        let mut dark = HandshakeLimit::default();
        for _ in 0..5 {
            assert!(!dark.timed_out(t, false));
        }
    }
}
