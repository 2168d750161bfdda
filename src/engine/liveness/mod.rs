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
//! - **silent**: streams handed to the wire have waited [`LinkTiming::silence`] without any
//!   answer from it.
//!
//! A silent address gets a stream only when none of its streams is in flight. A new one —
//! no stream of it has reached the wire, none has failed — takes up to [`HANDSHAKE_RIDERS`]
//! while its first connection's handshake is under way: they wait for that handshake and the
//! leader's admission (its first stream credit), and reach it then, spaced to its budget
//! (`engine::handshakes::Release`). They
//! count on it to deliver only once it answered (see `LeaderBook::targets`), so each also goes
//! to a leader known to answer; and a leader whose TPU is dark, which never completes a
//! handshake, swallows no more than that before its failure says so (the sends waiting behind a failed handshake fail with it:
//! `engine::handshakes::Failed`). Once a stream of it reaches the wire, the leader has
//! answered our handshake, and more streams may go while it is not silent. Holding a new
//! leader to one stream cost the pace of its handshake and admission: on the relay's
//! `mainnet` profile, the sends made meanwhile at a run's start went only to the near leader
//! already connected, whose turn was seconds away, and the run's first 13–20 transactions
//! landed 2.5–5 s after they were due — the whole of its p99 (held until the stream's answer,
//! before, 4.2 s). An address whose stream failed to connect or timed out is held to one
//! stream until it answers again, however its streams reach the wire (and each probe after a
//! backoff goes alone: see `LeaderBook::may_send`).
//!
//! Silence is judged on the measured link, not a loopback figure: each address's answer times
//! feed an [`RttEstimator`], and the wait counts from each stream's hand-off to the wire, so a
//! stream still waiting on our side (a connection, room in the congestion window, stream
//! credit) is no evidence against the leader. On a 320 ms link with 5% loss a fixed second of
//! silence fired against healthy leaders and gave up working connections.

use std::{collections::HashMap, net::SocketAddr, time::Duration};

use tokio::time::Instant;

use super::{
    handshakes::RIDER_GAP,
    link::{LinkTiming, RttEstimator},
    net::{Handoff, StreamOutcome},
};

/// Streams a new address may hold while its first handshake is under way: what the pace
/// makes in 400 ms at 100 tx/s, about what a handshake and the leader's first stream credit
/// take on a 230 ms link (two round trips). They go once the leader admits the connection, a
/// [`RIDER_GAP`](crate::engine::handshakes::RIDER_GAP) apart so that they and the pace stay
/// within the leader's budget (`handshakes::Release`): the last leaves 0.8 s after it.
/// A leader whose TPU is dark takes no more than these before its failure says so, and each
/// also goes to a leader that answers. With 10 (half a 100 ms window's budget, released
/// together), on the relay's `mainnet` profiles the run's transactions 11–20 went only to the
/// near leader two turns away and landed 2–5 s late. With 100, in one round of
/// `txpace-bench wan` at 8eb0447, `apac`'s p99 was 8 slots (2 with 40, one round each) and
/// `mainnet-dark`'s 13 (8); 100 riders take 1.25 s to drain, most of a leader's turn (not
/// traced further).
pub const HANDSHAKE_RIDERS: u32 = 40;

#[derive(Debug, Default)]
struct Link {
    in_flight: u32,
    proven: bool,
    /// Until when the streams that waited for its handshake may still be going out, a rider
    /// gap apart, after its first answer (see [`Liveness::releasing`]).
    releasing_until: Option<Instant>,
    /// A stream of it failed to connect or timed out since it last answered: reaching the
    /// wire (on a connection that may be the one that failed) proves nothing then; only an
    /// answer does.
    failed: bool,
    /// The hand-offs of the streams sent since the last answer: the silence counts from the
    /// earliest that reached the wire. Those that have are folded into `handed_since` now and
    /// then (see [`Link::compact`]), so a check reads a short list however fast we send.
    waiting: Vec<Handoff>,
    /// The earliest hand-off folded out of `waiting` since the last answer.
    handed_since: Option<Instant>,
    /// `waiting`'s length after the last fold: the next comes at twice that.
    compacted_at: usize,
    /// The address's answer times.
    rtt: RttEstimator,
    /// This wait has been reported silent (see [`Liveness::newly_silent`]).
    reported: bool,
}

/// Per TPU address: streams in flight and whether the address answers.
#[derive(Debug, Default)]
pub struct Liveness {
    links: HashMap<SocketAddr, Link>,
    /// The measured link with the longest PTO, and its rules: an address never heard from is
    /// judged by them. Kept up to date on each sample rather than looked for on each check.
    worst: Option<(SocketAddr, LinkTiming)>,
}

impl Liveness {
    /// Whether another stream may go to `addr` now.
    pub fn may_send(&self, addr: SocketAddr, now: Instant) -> bool {
        let Some(link) = self.links.get(&addr) else {
            return true;
        };
        link.in_flight == 0
            || (link.reached() && !self.silent(link, now))
            || (link.connecting() && link.in_flight < HANDSHAKE_RIDERS)
    }

    /// Whether a new address's first streams wait for its handshake (see [`Liveness::may_send`]):
    /// any number may go to it the moment one reaches the wire, which nothing announces.
    pub fn connecting(&self) -> bool {
        self.links.values().any(Link::connecting)
    }

    /// Whether `addr`'s streams wait for its first handshake, as many as may (see
    /// [`HANDSHAKE_RIDERS`]): a send now passes it by.
    pub fn riders_full(&self, addr: SocketAddr) -> bool {
        self.links
            .get(&addr)
            .is_some_and(|l| l.connecting() && l.in_flight >= HANDSHAKE_RIDERS)
    }

    /// Whether the streams that waited for `addr`'s handshake may still be going out to it, a
    /// rider gap apart (`engine::handshakes::Release`): from its first answer, as many gaps as
    /// streams were still in flight then. Sends made for it meanwhile would reach it in the
    /// same 100 ms windows as they do.
    pub fn releasing(&self, addr: SocketAddr, now: Instant) -> bool {
        self.links
            .get(&addr)
            .and_then(|l| l.releasing_until)
            .is_some_and(|t| now < t)
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
            .is_some_and(|l| l.proven && !self.silent(l, now))
    }

    /// How long streams have waited on `addr` without an answer, once that is its
    /// [`LinkTiming::silence`] or more (for the leaders panel: it is not answering).
    pub fn silent_for(&self, addr: SocketAddr, now: Instant) -> Option<Duration> {
        let link = self.links.get(&addr).filter(|l| self.silent(l, now))?;
        waiting_since(link).map(|t| now.saturating_duration_since(t))
    }

    /// The time rules of `addr`'s link: from its own answers once it has answered, else from
    /// the worst link measured so far (a leader never met is as likely to be as far as the
    /// farthest one seen), else QUIC's initial assumption.
    pub fn timing(&self, addr: SocketAddr) -> LinkTiming {
        if let Some(link) = self.links.get(&addr).filter(|l| l.rtt.sampled()) {
            return link.rtt.timing();
        }
        self.worst_timing()
    }

    /// The time rules of `addr`'s own link, once it has answered (for its figures: never
    /// another link's).
    pub fn measured(&self, addr: SocketAddr) -> Option<LinkTiming> {
        let link = self.links.get(&addr).filter(|l| l.rtt.sampled())?;
        Some(link.rtt.timing())
    }

    /// `addr` answered a stream, at `now`, `took` after its hand-off: a round-trip sample of
    /// its link.
    pub fn on_answer_time(&mut self, addr: SocketAddr, took: Duration, now: Instant) {
        let Some(link) = self.links.get_mut(&addr) else {
            return;
        };
        link.rtt.sample(took, now);
        let timing = link.rtt.timing();
        match self.worst {
            Some((_, w)) if w.pto() > timing.pto() => {
                // The worst link got better: another may be the worst now.
                if self.worst.is_some_and(|(a, _)| a == addr) {
                    self.worst = self
                        .links
                        .iter()
                        .filter(|(_, l)| l.rtt.sampled())
                        .map(|(a, l)| (*a, l.rtt.timing()))
                        .max_by_key(|(_, t)| t.pto());
                }
            }
            _ => self.worst = Some((addr, timing)),
        }
    }

    /// Addresses that have turned silent since the last call, each once per wait: their
    /// connections are given up (see `Transport::abandon`), so the next probe reconnects.
    pub fn newly_silent(&mut self, now: Instant) -> Vec<SocketAddr> {
        let mut out = Vec::new();
        for (addr, link) in &self.links {
            if !link.reported && self.silent(link, now) {
                out.push(*addr);
            }
        }
        for addr in &out {
            if let Some(link) = self.links.get_mut(addr) {
                link.reported = true;
            }
        }
        out
    }

    /// A stream went to `addr`; `handoff` says when (if ever) it reaches the wire.
    pub fn on_sent(&mut self, addr: SocketAddr, handoff: Handoff) {
        let link = self.links.entry(addr).or_default();
        link.in_flight += 1;
        link.waiting.push(handoff);
        if link.waiting.len() > (link.compacted_at * 2).max(COMPACT_FROM) {
            link.compact();
        }
    }

    /// A stream to `addr` finished with `outcome`.
    pub fn on_result(&mut self, addr: SocketAddr, outcome: StreamOutcome) {
        let Some(link) = self.links.get_mut(&addr) else {
            return;
        };
        link.in_flight = link.in_flight.saturating_sub(1);
        match outcome {
            StreamOutcome::Accepted | StreamOutcome::Throttled => {
                if !link.proven && link.in_flight > 0 {
                    link.releasing_until = Some(Instant::now() + RIDER_GAP * link.in_flight);
                }
                link.proven = true;
                link.failed = false;
                link.clear_wait();
                link.reported = false;
            }
            StreamOutcome::Connection | StreamOutcome::Timeout => {
                link.proven = false;
                link.failed = true;
            }
            // A failure on our side of the stream says nothing about the server.
            StreamOutcome::Other => {}
        }
        if link.in_flight == 0 {
            link.clear_wait();
            link.reported = false;
        }
    }

    /// Forgets addresses with nothing in flight that are neither proven, failed nor measured:
    /// nothing is known of them that a fresh entry would not also say. A failed one is kept:
    /// fresh, it would take a handshake's riders again at each of its turns (a blackholed
    /// leader of the 3-node cluster took 42 streams in a run so, against a probe a turn). A
    /// measured link is kept: a leader that failed is still as far as it was, and judging its
    /// next probe by the initial RTT instead (three times the loopback silence) slowed finding
    /// it back.
    pub fn forget_idle(&mut self) {
        self.links
            .retain(|_, l| l.in_flight > 0 || l.proven || l.failed || l.rtt.sampled());
    }
}

impl Liveness {
    fn silent(&self, link: &Link, now: Instant) -> bool {
        if link.in_flight == 0 {
            return false;
        }
        let Some(since) = waiting_since(link) else {
            return false;
        };
        // The link's own rules once it has answered; a link that never has is judged like the
        // worst one measured (see `timing`).
        let timing = if link.rtt.sampled() {
            link.rtt.timing()
        } else {
            self.worst_timing()
        };
        now.saturating_duration_since(since) >= timing.silence()
    }

    fn worst_timing(&self) -> LinkTiming {
        self.worst.map(|(_, t)| t).unwrap_or_default()
    }
}

/// `waiting` is folded once it holds this many hand-offs, at the least.
const COMPACT_FROM: usize = 32;

impl Link {
    /// Whether it has shown it takes streams: it answered one, or, short of a failure since
    /// it last answered, one of its streams reached the wire (see [`Liveness::may_send`]).
    fn reached(&self) -> bool {
        self.proven || (!self.failed && waiting_since(self).is_some())
    }

    /// Whether its streams wait for its first handshake: some in flight, none reached the wire
    /// and none failed.
    fn connecting(&self) -> bool {
        self.in_flight > 0 && !self.failed && !self.reached()
    }

    /// Folds the hand-offs that reached the wire into `handed_since`, keeping those that have
    /// not: at twice the length each time, so the work stays proportional to the sends.
    fn compact(&mut self) {
        let folded = self.waiting.iter().filter_map(Handoff::at).min();
        self.handed_since = self.handed_since.into_iter().chain(folded).min();
        self.waiting.retain(|h| h.at().is_none());
        self.compacted_at = self.waiting.len();
    }

    fn clear_wait(&mut self) {
        self.waiting.clear();
        self.handed_since = None;
        self.compacted_at = 0;
    }
}

/// When the earliest stream waiting for an answer reached the wire.
fn waiting_since(link: &Link) -> Option<Instant> {
    let listed = link.waiting.iter().filter_map(Handoff::at).min();
    link.handed_since.into_iter().chain(listed).min()
}

#[cfg(test)]
mod tests;
