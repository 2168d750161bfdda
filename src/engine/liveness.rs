//! Whether a leader's TPU is answering, so that a leader that stopped answering gets a probe at a
//! time rather than the pace.
//!
//! Backoff alone reacts to a failed stream, and a stream to a dead address fails only when its
//! handshake or the send timeout gives up — seconds, during which every send of the pace went
//! to that address as well: at 100 tx/s, a blackholed leader swallowed a couple of hundred
//! streams per turn before its first failure said so. Here an address is trusted with more than
//! one stream in flight only while it answers:
//!
//! - **proven**: the server answered a stream (accepted it, or stopped it: a throttled stream is
//!   still an answer) since the last time one of its streams failed to connect or timed out;
//! - **silent**: streams have waited [`SILENCE`] without any answer from it.
//!
//! An unproven or silent address gets a stream only when none of its streams is in flight: the
//! first stream to a new connection, and each probe after a backoff, goes alone, and the pace
//! goes to the other targets meanwhile. A healthy leader answers within a round trip, so this
//! costs it one round trip per connection.

use std::{collections::HashMap, net::SocketAddr, time::Duration};

use tokio::time::Instant;

use super::net::StreamOutcome;

/// How long streams may wait on an address without any answer before it counts as silent: two
/// and a half slots. Above a distant leader's round trip and a busy one's slow reads (a QUIC
/// server answers a stream once it has read it, and a leader short of CPU reads late: on a
/// 2-core machine running three validators, answers took hundreds of ms), well below the send
/// timeout.
pub const SILENCE: Duration = Duration::from_millis(1_000);

#[derive(Debug, Default)]
struct Link {
    in_flight: u32,
    proven: bool,
    /// When the oldest stream sent since the last answer went out.
    waiting_since: Option<Instant>,
    /// This wait has been reported silent (see [`Liveness::newly_silent`]).
    reported: bool,
}

/// Per TPU address: streams in flight and whether the address answers.
#[derive(Debug, Default)]
pub struct Liveness {
    links: HashMap<SocketAddr, Link>,
}

impl Liveness {
    /// Whether another stream may go to `addr` now.
    pub fn may_send(&self, addr: SocketAddr, now: Instant) -> bool {
        let Some(link) = self.links.get(&addr) else {
            return true;
        };
        link.in_flight == 0 || (link.proven && !silent(link, now))
    }

    /// Streams to `addr` waiting for an answer.
    pub fn in_flight(&self, addr: SocketAddr) -> u32 {
        self.links.get(&addr).map_or(0, |l| l.in_flight)
    }

    /// Whether `addr` is known to answer: it answered a stream since its last failure and is
    /// not silent now. A send whose other targets are not known to answer is not counted on to
    /// reach anyone (see `LeaderBook::targets`).
    pub fn answers(&self, addr: SocketAddr, now: Instant) -> bool {
        self.links
            .get(&addr)
            .is_some_and(|l| l.proven && !silent(l, now))
    }

    /// How long streams have waited on `addr` without an answer, once that is [`SILENCE`] or
    /// more (for the leaders panel: it is not answering).
    pub fn silent_for(&self, addr: SocketAddr, now: Instant) -> Option<Duration> {
        let link = self.links.get(&addr).filter(|l| silent(l, now))?;
        link.waiting_since.map(|t| now.saturating_duration_since(t))
    }

    /// Addresses that have turned silent since the last call, each once per wait: their
    /// connections are given up (see `Transport::abandon`), so the next probe reconnects.
    pub fn newly_silent(&mut self, now: Instant) -> Vec<SocketAddr> {
        let mut out = Vec::new();
        for (addr, link) in &mut self.links {
            if !link.reported && silent(link, now) {
                link.reported = true;
                out.push(*addr);
            }
        }
        out
    }

    pub fn on_sent(&mut self, addr: SocketAddr, now: Instant) {
        let link = self.links.entry(addr).or_default();
        link.in_flight += 1;
        link.waiting_since.get_or_insert(now);
    }

    /// A stream to `addr` finished with `outcome`.
    pub fn on_result(&mut self, addr: SocketAddr, outcome: StreamOutcome) {
        let Some(link) = self.links.get_mut(&addr) else {
            return;
        };
        link.in_flight = link.in_flight.saturating_sub(1);
        match outcome {
            StreamOutcome::Accepted | StreamOutcome::Throttled => {
                link.proven = true;
                link.waiting_since = None;
                link.reported = false;
            }
            StreamOutcome::Connection | StreamOutcome::Timeout => {
                link.proven = false;
            }
            // A failure on our side of the stream says nothing about the server.
            StreamOutcome::Other => {}
        }
        if link.in_flight == 0 {
            link.waiting_since = None;
            link.reported = false;
        }
    }

    /// Forgets addresses with nothing in flight that are not proven: nothing is known of them
    /// that a fresh entry would not also say.
    pub fn forget_idle(&mut self) {
        self.links.retain(|_, l| l.in_flight > 0 || l.proven);
    }
}

fn silent(link: &Link, now: Instant) -> bool {
    link.in_flight > 0
        && link
            .waiting_since
            .is_some_and(|t| now.saturating_duration_since(t) >= SILENCE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "127.0.0.1:8009".parse().unwrap()
    }

    #[test]
    fn a_new_address_gets_one_stream_until_it_answers() {
        let mut l = Liveness::default();
        let t = Instant::now();
        assert!(l.may_send(addr(), t));
        l.on_sent(addr(), t);
        assert!(!l.may_send(addr(), t), "a second stream before any answer");
        assert!(!l.answers(addr(), t), "not yet known to answer");
        l.on_result(addr(), StreamOutcome::Accepted);
        assert!(l.may_send(addr(), t));
        assert!(l.answers(addr(), t));
        l.on_sent(addr(), t);
        assert!(l.may_send(addr(), t), "proven: streams overlap");
    }

    #[test]
    fn a_throttled_stream_is_an_answer() {
        let mut l = Liveness::default();
        let t = Instant::now();
        l.on_sent(addr(), t);
        l.on_result(addr(), StreamOutcome::Throttled);
        l.on_sent(addr(), t);
        assert!(l.may_send(addr(), t));
    }

    #[test]
    fn a_proven_address_that_stops_answering_gets_no_more_streams() {
        let mut l = Liveness::default();
        let t = Instant::now();
        l.on_sent(addr(), t);
        l.on_result(addr(), StreamOutcome::Accepted);
        l.on_sent(addr(), t);
        l.on_sent(addr(), t + SILENCE / 2);
        assert!(l.may_send(addr(), t + SILENCE - Duration::from_millis(1)));
        assert!(
            !l.may_send(addr(), t + SILENCE),
            "silent since its oldest stream"
        );
        assert_eq!(l.silent_for(addr(), t + SILENCE), Some(SILENCE));
        assert!(!l.answers(addr(), t + SILENCE));
        // An answer from it ends the silence.
        l.on_result(addr(), StreamOutcome::Accepted);
        assert!(l.may_send(addr(), t + SILENCE));
    }

    #[test]
    fn a_silent_address_is_reported_once_per_wait() {
        let mut l = Liveness::default();
        let t = Instant::now();
        l.on_sent(addr(), t);
        assert!(l.newly_silent(t + SILENCE / 2).is_empty());
        assert_eq!(l.newly_silent(t + SILENCE), vec![addr()]);
        assert!(l.newly_silent(t + SILENCE * 3).is_empty(), "once per wait");
        // Its streams fail (the connection was given up): the next wait is reported again.
        l.on_result(addr(), StreamOutcome::Connection);
        let t2 = t + SILENCE * 4;
        l.on_sent(addr(), t2);
        assert_eq!(l.newly_silent(t2 + SILENCE), vec![addr()]);
        // An answer ends the wait.
        l.on_result(addr(), StreamOutcome::Accepted);
        assert!(l.newly_silent(t2 + SILENCE * 5).is_empty());
    }

    #[test]
    fn a_timed_out_stream_unproves_the_address_until_it_answers_again() {
        let mut l = Liveness::default();
        let t = Instant::now();
        l.on_sent(addr(), t);
        l.on_result(addr(), StreamOutcome::Accepted);
        l.on_sent(addr(), t);
        l.on_sent(addr(), t);
        l.on_result(addr(), StreamOutcome::Timeout);
        assert!(!l.may_send(addr(), t), "one still in flight, and unproven");
        l.on_result(addr(), StreamOutcome::Connection);
        assert!(l.may_send(addr(), t), "nothing in flight: a probe");
        l.on_sent(addr(), t);
        assert!(!l.may_send(addr(), t));
    }

    #[test]
    fn idle_unproven_addresses_are_forgotten() {
        let mut l = Liveness::default();
        let t = Instant::now();
        let other: SocketAddr = "127.0.0.1:8010".parse().unwrap();
        l.on_sent(addr(), t);
        l.on_result(addr(), StreamOutcome::Connection);
        l.on_sent(other, t);
        l.on_result(other, StreamOutcome::Accepted);
        l.forget_idle();
        assert_eq!(l.links.len(), 1);
        assert!(l.links.contains_key(&other));
    }
}
