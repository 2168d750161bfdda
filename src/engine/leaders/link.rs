//! Each leader's link as measured — the transport's path figures (quinn's), the streams'
//! waits for credit, whether it answers — and the verdict on it (`engine::verdict`).
//!
//! The transport's figures are read for the leaders on the panel at each snapshot and kept
//! per address, so a leader's row in the report still has them once the transport has
//! forgotten its connections.

use std::{collections::VecDeque, net::SocketAddr, time::Duration};

use hdrhistogram::Histogram;
use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{BUDGET_WINDOW, LeaderBook, fanout::LossWindow};
use crate::engine::{
    net::{PathFigures, StreamOutcome},
    snapshot::{CloseCount, LinkView, millis},
    verdict::{Evidence, SHARED_BELOW, UNSTAKED_BUDGET, Verdict, shared_budget, verdict_after},
};

/// Longest credit wait told apart, in ms (the longest send timeout).
const CREDIT_MAX_MS: u64 = 600_000;
/// The span our rate to a leader is counted over, as the leader counts its budget.
const SECOND: Duration = Duration::from_secs(1);

/// One leader's streams and their waits for stream credit, over the run.
#[derive(Default)]
pub(super) struct Credit {
    /// Streams that got credit or waited for it (those handed to the wire, and those whose
    /// wait ran out).
    streams: u64,
    /// The waits of those that waited, in ms; made at the first wait.
    waits: Option<Histogram<u32>>,
    /// Waits that came while we sent it under `verdict::SHARED_BELOW` streams a second.
    slow: u64,
}

impl Credit {
    fn record(&mut self, handed: bool, waited: Option<Duration>, slow: bool) {
        if !handed && waited.is_none() {
            return;
        }
        self.streams += 1;
        self.slow += u64::from(waited.is_some() && slow);
        if let Some(w) = waited {
            let h = self.waits.get_or_insert_with(|| {
                // Constant bounds that satisfy the crate's rules: cannot fail.
                Histogram::new_with_bounds(1, CREDIT_MAX_MS, 2).expect("constant histogram bounds")
            });
            h.saturating_record(millis(w).max(1));
        }
    }

    fn waited(&self) -> u64 {
        self.waits.as_ref().map_or(0, Histogram::len)
    }

    fn quantile(&self, q: f64) -> Option<u64> {
        self.waits
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(q))
    }
}

/// What is known of one address's link beyond its figures' owner.
#[derive(Default)]
pub(super) struct AddrLink {
    /// The transport's figures at their last reading, and when that was.
    path: Option<(PathFigures, Instant)>,
    /// Streams that failed for want of an answer since its last answer.
    unanswered: u32,
    /// When we sent it each stream of the last second.
    sent: VecDeque<Instant>,
    /// The most streams we sent it within any [`BUDGET_WINDOW`]: above a leader's 20 we
    /// overran its budget ourselves; under it, a stream it delayed was bunched on the way.
    most_per_window: u32,
    /// Its datagram counts over the last few seconds, for the fan-out (see `fanout`).
    pub(super) loss: LossWindow,
    /// When a stream to it last waited on our side for the wire longer than a handshake may
    /// take on its link (see [`LeaderBook::on_own_wait`]).
    pub(super) own_wait_at: Option<Instant>,
}

impl AddrLink {
    /// The sends within the [`BUDGET_WINDOW`] up to `now`.
    fn in_window(&self, now: Instant) -> usize {
        self.sent
            .iter()
            .rev()
            .take_while(|t| now.saturating_duration_since(**t) < BUDGET_WINDOW)
            .count()
    }

    /// Forgets the sends more than a second before `now`; how many are left.
    fn last_second(&mut self, now: Instant) -> u64 {
        while self
            .sent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) > SECOND)
        {
            self.sent.pop_front();
        }
        self.sent.len() as u64
    }
}

impl LeaderBook {
    /// A stream went to `addr` at `now`: counted for our rate to it.
    pub(super) fn note_sent(&mut self, addr: SocketAddr, now: Instant) {
        let link = self.links.entry(addr).or_default();
        link.last_second(now);
        link.sent.push_back(now);
        let in_window = link.in_window(now);
        link.most_per_window = link
            .most_per_window
            .max(u32::try_from(in_window).unwrap_or(u32::MAX));
    }

    /// Our streams to `addr` within the [`BUDGET_WINDOW`] up to `now`: what a 4.0 leader has
    /// counted of ours in a window that began with the oldest of them.
    pub fn streams_in_window(&self, addr: SocketAddr, now: Instant) -> usize {
        self.links.get(&addr).map_or(0, |link| link.in_window(now))
    }

    /// A stream to `leader` at `addr` ended at `now`: it was handed to the wire (or not),
    /// after waiting `waited` for stream credit (or not at all) — while we sent it how many
    /// streams in the second before.
    pub fn on_credit(
        &mut self,
        leader: Pubkey,
        addr: SocketAddr,
        handed: bool,
        waited: Option<Duration>,
        now: Instant,
    ) {
        let ours = self.links.entry(addr).or_default().last_second(now);
        self.stats
            .entry(leader)
            .or_default()
            .credit
            .record(handed, waited, ours < SHARED_BELOW);
    }

    /// The first leader on the panel whose budget another sender on our address shares (see
    /// `verdict::shared_budget`), said once per leader in the log.
    pub fn shared_budget(&mut self, now: Instant, unstaked: bool) -> Option<Pubkey> {
        let rows: Vec<(Pubkey, Option<SocketAddr>)> = self
            .upcoming(self.fanout + super::WINDOW_EXTRA)
            .into_iter()
            .map(|(l, _, _)| (l, self.addrs.get(&l).copied()))
            .collect();
        let shared = rows
            .into_iter()
            .find(|(leader, addr)| shared_budget(&self.evidence(leader, *addr, now).0, unstaked))?;
        if self.shared_said.insert(shared.0) {
            log::warn!(
                "leader {} delays reading our streams while we send it under {SHARED_BELOW} a \
                 second: another sender shares this host's address and its budget of \
                 {UNSTAKED_BUDGET} a second; --bind ADDR sends from another local address",
                shared.0
            );
        }
        Some(shared.0)
    }

    /// A stream to `addr` waited `waited` on our side before it reached the wire (a
    /// connection, room in the congestion window; not stream credit, the leader's say). Longer
    /// than a handshake may take on its link, it waited for room: the link carries no more
    /// than we send it, and the fan-out is not raised onto it (see `fanout`).
    pub fn on_own_wait(&mut self, addr: SocketAddr, waited: Duration, now: Instant) {
        if waited > self.timing(addr).handshake_timeout() {
            self.links.entry(addr).or_default().own_wait_at = Some(now);
        }
    }

    /// Counts `addr`'s answers and the failures for want of one (see `verdict::DARK_STREAMS`).
    pub(super) fn note_heard(&mut self, addr: SocketAddr, heard: StreamOutcome) {
        let link = self.links.entry(addr).or_default();
        match heard {
            StreamOutcome::Accepted | StreamOutcome::Throttled => link.unanswered = 0,
            StreamOutcome::Connection | StreamOutcome::Timeout => link.unanswered += 1,
            StreamOutcome::Other => {}
        }
    }

    /// Reads the transport's figures of the addresses on the panel, and reconsiders the
    /// fan-out by them.
    pub fn refresh_paths(
        &mut self,
        now: Instant,
        figures: impl Fn(SocketAddr) -> Option<PathFigures>,
    ) {
        let addrs: Vec<SocketAddr> = match self.pinned {
            Some(a) => vec![a],
            None => self
                .upcoming(self.fanout + super::WINDOW_EXTRA)
                .iter()
                .filter_map(|(l, _, _)| self.addrs.get(l).copied())
                .collect(),
        };
        for addr in addrs {
            if let Some(f) = figures(addr) {
                let link = self.links.entry(addr).or_default();
                link.loss.note(now, f.sent_packets, f.lost_packets);
                link.path = Some((f, now));
            }
        }
        self.judge_fanout();
    }

    /// `leader`'s link as measured at `addr`, with its verdict.
    pub(super) fn link_view(
        &self,
        leader: &Pubkey,
        addr: Option<SocketAddr>,
        now: Instant,
    ) -> LinkView {
        let (evidence, path) = self.evidence(leader, addr, now);
        let credit = self.stats.get(leader).map(|s| &s.credit);
        let timing = addr.and_then(|a| self.liveness.measured(a));
        LinkView {
            verdict: verdict_after(&evidence, self.verdicts.get(leader).copied().flatten()),
            srtt_ms: evidence.srtt.map(millis),
            rttvar_ms: timing.map(|t| millis(t.rttvar)),
            sent_packets: evidence.sent_packets,
            lost_packets: evidence.lost_packets,
            congestion_events: path.map_or(0, |p| p.congestion_events),
            handshake_ms: path.and_then(|p| p.handshake).map(millis),
            new_connections_per_minute: path.map_or(0, |p| p.new_last_minute),
            most_streams_per_100ms: addr
                .and_then(|a| self.links.get(&a))
                .map_or(0, |l| l.most_per_window),
            handshake_timeouts: path.map_or(0, |p| p.handshake_timeouts),
            connections: path.map_or(0, |p| p.connections),
            credit_streams: evidence.credit_streams,
            credit_waited: evidence.credit_waited,
            credit_waited_slow: evidence.credit_waited_slow,
            credit_wait_ms_p50: credit.and_then(|c| c.quantile(0.5)),
            credit_wait_ms_p99: credit.and_then(|c| c.quantile(0.99)),
            closes: path.map_or_else(Vec::new, |p| {
                p.closes
                    .iter()
                    .map(|&(code, count)| CloseCount { code, count })
                    .collect()
            }),
        }
    }

    /// What `leader`'s verdict is decided from, and the transport's figures of `addr`.
    fn evidence(
        &self,
        leader: &Pubkey,
        addr: Option<SocketAddr>,
        now: Instant,
    ) -> (Evidence, Option<&PathFigures>) {
        let credit = self.stats.get(leader).map(|s| &s.credit);
        let link = addr.and_then(|a| self.links.get(&a));
        let (path, read_at) = match link.and_then(|l| l.path.as_ref()) {
            Some((p, at)) => (Some(p), *at),
            None => (None, now),
        };
        // "How long ago", as of now rather than of the reading.
        let since = now.saturating_duration_since(read_at);
        let ago = |d: Option<Duration>| d.map(|d| d + since);
        let evidence = Evidence {
            srtt: path.and_then(|p| p.srtt),
            sent_packets: path.map_or(0, |p| p.sent_packets),
            lost_packets: path.map_or(0, |p| p.lost_packets),
            credit_streams: credit.map_or(0, |c| c.streams),
            credit_waited: credit.map_or(0, Credit::waited),
            credit_waited_slow: credit.map_or(0, |c| c.slow),
            evicted_ago: ago(path.and_then(|p| p.evicted_ago)),
            ignored_ago: ago(path.and_then(|p| p.ignored_ago)),
            silent: addr.is_some_and(|a| self.liveness.silent_for(a, now).is_some()),
            unanswered: link.map_or(0, |l| l.unanswered),
        };
        (evidence, path)
    }

    /// The leaders on the panel whose verdict changed since the last call, with their link:
    /// for the events stream and the log.
    pub fn verdict_changes(&mut self, now: Instant) -> Vec<(Pubkey, Option<SocketAddr>, LinkView)> {
        let rows: Vec<(Pubkey, Option<SocketAddr>)> = match self.pinned {
            Some(a) => vec![(self.pinned_identity(), Some(a))],
            None => self
                .upcoming(self.fanout + super::WINDOW_EXTRA)
                .into_iter()
                .map(|(l, _, _)| (l, self.addrs.get(&l).copied()))
                .collect(),
        };
        let mut out = Vec::new();
        for (leader, addr) in rows {
            let view = self.link_view(&leader, addr, now);
            let last: &mut Option<Verdict> = self.verdicts.entry(leader).or_default();
            if *last != view.verdict && view.verdict.is_some() {
                *last = view.verdict;
                out.push((leader, addr, view));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::net::Handoff;

    /// A credit wait counts as slow when we had sent the leader under `SHARED_BELOW` streams in
    /// the second before it, whatever we sent it earlier.
    #[tokio::test(start_paused = true)]
    async fn a_wait_is_slow_when_we_sent_the_leader_little_in_the_second_before() {
        let mut book = LeaderBook::new(1, None);
        let leader = Pubkey::new_unique();
        let addr: SocketAddr = "127.0.0.1:8009".parse().unwrap();
        let wait = Some(Duration::from_millis(40));
        let send = |book: &mut LeaderBook, n: u64| {
            for _ in 0..n {
                book.on_sent(leader, addr, Handoff::default());
            }
        };
        send(&mut book, 100);
        book.on_credit(leader, addr, true, wait, Instant::now());
        send(&mut book, SHARED_BELOW);
        book.on_credit(leader, addr, true, wait, Instant::now());
        book.on_credit(leader, addr, true, None, Instant::now());
        tokio::time::advance(Duration::from_millis(1_001)).await;
        book.on_credit(leader, addr, true, wait, Instant::now());
        let v = book.link_view(&leader, Some(addr), Instant::now());
        assert_eq!((v.credit_streams, v.credit_waited), (4, 3));
        assert_eq!(v.credit_waited_slow, 2, "{v:?}");
        assert_eq!(v.credit_wait_ms_p50, Some(40));
    }
}
