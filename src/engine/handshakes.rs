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
//! A handshake that timed out while the leader may have been there — another connection to it
//! up, or a stream of ours answered a moment before — says its bucket may be empty: another
//! sender on our address spent it, or its limit is lower than we count. No handshake then goes
//! to it for a token's time at the mainnet rate ([`TOKEN`]): more would only spend what it has
//! not earned, and a pool that kept growing into a lossy link's leader filled its budget (at
//! 90459b4, without this hold after the first such timeout, txpace alone had 1,005 streams
//! delayed by the nodes through the relay's `hostile` link, against 120 with it).
//!
//! The leader is *named* as ignoring us ([`HandshakeLimit::timed_out`]) only when it was
//! plainly there ([`TimedOut::leader_there`]: answering just before the handshake and, over
//! other connections, during it) and loss cannot explain the timeout: on a clean link at once,
//! on one that loses datagrams at the second such timeout in a row, since there an Initial and
//! its retransmission may both have been lost (the relay's `apac` link once made one leader
//! look ignoring while its own count of ignored handshakes stayed 0). A connection merely up is
//! no sign: a leader gone dark leaves ours up until they time out (the node darkened in the
//! `mainnet-dark` scenario was named ignoring so, its own count 0). Nor is a connection gone
//! by the timeout: a leader going dark makes our streams wait, so a handshake starts to grow
//! the pool a moment after its last answer, and a second later our silent connections are given
//! up (`liveness`); read at the timeout alone, that looked like our only connection lost while
//! the leader was taking our sends, and named the dark node ignoring again. So the connections
//! up at the handshake's start count as well.
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
/// Datagrams sent per one lost under which a link is clean enough that a timed-out handshake
/// is not loss (0.5%): a handshake fails only if a datagram of its first flight and of the
/// retransmission both go, under one in ten thousand there; at `apac`'s 2% nearer one in two
/// hundred, over the tens of handshakes a lossy link needs.
const CLEAN_SENT_PER_LOST: u64 = 200;

/// What was known of a leader when a handshake to it timed out.
#[derive(Clone, Copy, Debug)]
pub struct TimedOut {
    pub started: Instant,
    /// When a stream of ours to it was last answered before the handshake started.
    pub answered_before: Option<Instant>,
    /// A stream of ours to it was answered after the handshake started.
    pub answered_since: bool,
    /// Another connection to it was up when the handshake timed out.
    pub others_up: bool,
    /// Another connection to it was up when the handshake started. One up then and gone by
    /// the timeout was given up meanwhile, most often for silence: the leader could have
    /// answered on it and did not.
    pub others_up_at_start: bool,
    /// The link's probe timeout.
    pub pto: Duration,
    /// Datagrams sent to it and counted lost, over every connection so far.
    pub sent: u64,
    pub lost: u64,
}

impl TimedOut {
    fn answered_just_before(&self) -> bool {
        self.answered_before
            .is_some_and(|t| self.started.saturating_duration_since(t) <= self.pto)
    }

    /// Whether the leader may have ignored the handshake, as opposed to not being reached at
    /// all: another connection to it is up, or it answered us within a PTO of the start.
    pub fn maybe_ignored(&self) -> bool {
        self.others_up || self.answered_since || self.answered_just_before()
    }

    /// Whether the leader was plainly there while it let the handshake time out: it answered
    /// a stream of ours within a PTO before the start and — when other connections to it were
    /// up at the start or the end — answered on them after the start as well (with none up,
    /// there was nothing to answer on: a connection of ours lost while it was taking our
    /// sends). A leader going dark answers before and not after, and our connections to it are
    /// often given up for silence before the handshake times out; one coming back from dark
    /// answers after and not before.
    pub fn leader_there(&self) -> bool {
        let could_answer = self.others_up || self.others_up_at_start;
        self.answered_just_before() && (self.answered_since || !could_answer)
    }

    fn clean(&self) -> bool {
        self.lost.saturating_mul(CLEAN_SENT_PER_LOST) < self.sent.max(1)
    }
}

/// How a timed-out handshake was read (see [`HandshakeLimit::timed_out`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Nothing says the leader was there: the link is down. Nothing is held.
    Unanswered,
    /// It may have ignored the handshake: no handshake to it for a token's time. `named`
    /// when it was plainly there and loss cannot explain the timeout.
    Ignored { named: bool },
}

/// One leader's bucket of handshakes, the starts of the last minute (for the operator's
/// figures), and a hold after an ignored one.
#[derive(Debug)]
pub struct HandshakeLimit {
    tokens: f64,
    at: Option<Instant>,
    starts: VecDeque<Instant>,
    held_until: Option<Instant>,
    /// Handshakes in a row that timed out while the leader was plainly there.
    ignored_in_row: u32,
}

impl Default for HandshakeLimit {
    fn default() -> Self {
        Self {
            tokens: NEW_PER_MINUTE as f64,
            at: None,
            starts: VecDeque::new(),
            held_until: None,
            ignored_in_row: 0,
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

    /// A handshake finished: the leader takes them again.
    pub fn finished(&mut self) {
        self.ignored_in_row = 0;
    }

    /// A handshake timed out at `now`. If the leader may have ignored it its bucket is read
    /// as empty, so ours is too and none goes for a [`TOKEN`]; it is named ignoring when it
    /// was plainly there, at once on a clean link, on a lossy one at the second in a row.
    pub fn timed_out(&mut self, t: &TimedOut, now: Instant) -> Reading {
        if !t.maybe_ignored() {
            self.ignored_in_row = 0;
            return Reading::Unanswered;
        }
        self.refill(now);
        self.tokens = 0.0;
        self.held_until = Some(now + TOKEN);
        if !t.leader_there() {
            self.ignored_in_row = 0;
            return Reading::Ignored { named: false };
        }
        self.ignored_in_row += 1;
        Reading::Ignored {
            named: self.ignored_in_row >= 2 || t.clean(),
        }
    }

    /// Handshakes started in the last minute.
    pub fn last_minute(&mut self, now: Instant) -> usize {
        self.refill(now);
        self.starts.len()
    }
}

/// The failed handshakes to one leader, as the sends waiting for its connection see them: a
/// send that waited behind a handshake that failed fails with it ([`Failed::since`]) rather
/// than starting another. Several streams wait for a new leader's first handshake (see
/// `liveness`); behind a dark TPU each would otherwise wait out one more handshake of its own,
/// in turn, spending the leader's per-minute allowance on a leader that answers none.
#[derive(Debug)]
pub struct Failed<E> {
    count: u64,
    last: Option<E>,
}

impl<E> Default for Failed<E> {
    fn default() -> Self {
        Self {
            count: 0,
            last: None,
        }
    }
}

impl<E: Clone> Failed<E> {
    /// Taken before waiting for the handshake under way: what [`Failed::since`] compares with.
    pub fn ticket(&self) -> u64 {
        self.count
    }

    /// A handshake failed with `err`.
    pub fn note(&mut self, err: &E) {
        self.count += 1;
        self.last = Some(err.clone());
    }

    /// The error of the last handshake that failed since `ticket` was taken, if any did.
    pub fn since(&self, ticket: u64) -> Option<E> {
        (self.count > ticket).then(|| self.last.clone()).flatten()
    }
}

/// Between two streams that waited for a leader's handshake and admission, as they go once it
/// grants the connection its first stream credit: 50 a second, so that these and the pace's
/// own streams (100 a second at the default pace) take three quarters of a 4.0 leader's
/// unstaked budget (200 a second, counted in 100 ms windows), and the quarter left takes what
/// a repair releases at once (a lost datagram holds back the later streams of its connection
/// until it is repaired: see `engine::quic::first`). Released at once they reached the leader
/// together and over a window's budget, and it read those past the 20th a window later
/// (counted as delayed). At 12.5 ms (80 a second, nine tenths of the budget with the pace) a
/// repair among them went over it all the same: through `apac`'s 230 ms and 2% loss, with the
/// first connections side by side, streams were delayed in one or two of four patterns of
/// losses, at 20 ms in none of sixteen
/// (`quic::wan_tests::the_streams_that_waited_for_admission_leave_room_for_a_repair`).
pub const RIDER_GAP: Duration = Duration::from_millis(20);

/// When each stream that waited for one leader's handshake and admission goes: the first at
/// once, each next [`RIDER_GAP`] after the one before (see `liveness` for how many wait).
#[derive(Debug, Default)]
pub struct Release {
    next: Option<Instant>,
}

impl Release {
    /// The time the stream asking at `now` may go, its place taken.
    pub fn slot(&mut self, now: Instant) -> Instant {
        let at = self.next.map_or(now, |n| n.max(now));
        self.next = Some(at + RIDER_GAP);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_that_waited_for_a_handshake_go_a_gap_apart_and_a_later_one_at_once() {
        let mut r = Release::default();
        let t = Instant::now();
        assert_eq!(r.slot(t), t);
        assert_eq!(r.slot(t), t + RIDER_GAP);
        assert_eq!(r.slot(t + Duration::from_millis(1)), t + RIDER_GAP * 2);
        let later = t + Duration::from_secs(1);
        assert_eq!(
            r.slot(later),
            later,
            "the gap is kept from the last, not owed"
        );
    }

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
        let there = TimedOut {
            started: t + TOKEN,
            answered_before: Some(t + TOKEN),
            answered_since: true,
            others_up: true,
            others_up_at_start: true,
            pto: Duration::from_millis(100),
            sent: 0,
            lost: 0,
        };
        l.timed_out(&there, t + TOKEN);
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

    /// A handshake started at `started`, the leader's last answer before it `before`.
    fn timed_out_at(
        started: Instant,
        before: Option<Instant>,
        since: bool,
        others_up: bool,
    ) -> TimedOut {
        TimedOut {
            started,
            answered_before: before,
            answered_since: since,
            others_up,
            others_up_at_start: others_up,
            pto: Duration::from_millis(300),
            sent: 1_000,
            lost: 0,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_is_there_when_it_answered_before_the_handshake_and_during_it_if_it_could() {
        let t = Instant::now() + Duration::from_secs(10);
        let just_before = Some(t - Duration::from_millis(200));
        let long_before = Some(t - Duration::from_millis(400));
        // Answering before and, on another connection, during the handshake.
        let there = timed_out_at(t, just_before, true, true);
        assert!(there.leader_there() && there.maybe_ignored());
        // Our only connection lost a moment after its last answer.
        let lost = timed_out_at(t, just_before, false, false);
        assert!(lost.leader_there() && lost.maybe_ignored());
        // Going dark: our other connections are still up, nothing answered since the start.
        let going = timed_out_at(t, just_before, false, true);
        assert!(!going.leader_there() && going.maybe_ignored());
        // Going dark, our silent connections given up before the handshake timed out: they
        // were there to answer on and stayed silent.
        let given_up = TimedOut {
            others_up_at_start: true,
            ..timed_out_at(t, just_before, false, false)
        };
        assert!(!given_up.leader_there() && given_up.maybe_ignored());
        // Back from dark: answering during the handshake, silent before it.
        let back = timed_out_at(t, long_before, true, true);
        assert!(!back.leader_there() && back.maybe_ignored());
        // Silent for longer than a PTO with nothing up, or never answered: not reached.
        let gone = timed_out_at(t, long_before, false, false);
        assert!(!gone.leader_there() && !gone.maybe_ignored());
        assert!(!timed_out_at(t, None, false, false).maybe_ignored());
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_the_link_could_have_lost_is_held_at_once_and_named_at_the_second_in_a_row() {
        let t = Instant::now() + Duration::from_secs(10);
        let before = Some(t - Duration::from_millis(100));
        let lossy = TimedOut {
            sent: 1_000,
            lost: 20,
            ..timed_out_at(t, before, true, true)
        };
        let mut l = HandshakeLimit::default();
        assert_eq!(l.timed_out(&lossy, t), Reading::Ignored { named: false });
        assert_eq!(l.wait(t), Some(TOKEN), "held all the same");
        assert_eq!(
            l.timed_out(&lossy, t + TOKEN),
            Reading::Ignored { named: true }
        );
        // A handshake that finishes starts the count again.
        l.finished();
        assert_eq!(
            l.timed_out(&lossy, t + TOKEN * 2),
            Reading::Ignored { named: false }
        );
        // On a clean link the first is named.
        let clean = timed_out_at(t, before, true, true);
        assert_eq!(
            HandshakeLimit::default().timed_out(&clean, t),
            Reading::Ignored { named: true }
        );
        // A leader going dark is held but not named, and breaks the row.
        let going = timed_out_at(t, before, false, true);
        assert_eq!(
            l.timed_out(&going, t + TOKEN * 3),
            Reading::Ignored { named: false }
        );
        assert_eq!(l.wait(t + TOKEN * 3), Some(TOKEN));
        assert_eq!(
            l.timed_out(&lossy, t + TOKEN * 4),
            Reading::Ignored { named: false }
        );
        // One not reached is not held.
        let mut fresh = HandshakeLimit::default();
        let gone = timed_out_at(t, None, false, false);
        assert_eq!(fresh.timed_out(&gone, t), Reading::Unanswered);
        assert_eq!(fresh.wait(t), None);
    }

    #[test]
    fn a_send_that_waited_behind_a_failed_handshake_gets_its_error_and_a_later_one_none() {
        let mut failed = Failed::<&str>::default();
        let waited = failed.ticket();
        assert_eq!(failed.since(waited), None, "nothing failed yet");
        failed.note(&"timed out");
        assert_eq!(failed.since(waited), Some("timed out"));
        let later = failed.ticket();
        assert_eq!(failed.since(later), None, "a send after it starts its own");
        failed.note(&"refused");
        assert_eq!(
            failed.since(waited),
            Some("refused"),
            "the last one's error"
        );
    }
}
