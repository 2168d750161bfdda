//! Who leads now and next, where their TPUs are, and how each has treated our sends.
//!
//! Backoff lives here, per address, rather than in the transport: the engine decides where to
//! send, so the engine must know which leaders to spare — and the simulator exercises the same
//! logic as the real QUIC path.
//!
//! A leader is judged by its recent window of outcomes, not by the last one: a server that
//! takes only part of our streams (Agave gives an unstaked peer 200 streams a second, counted
//! in 100 ms windows) accepts some and stops or stalls the rest of the same window, so one
//! accepted stream must not erase the backoff. A backoff deepens when failures of its kind come
//! back within [`JUDGE_WINDOW`] of the previous one ending, and is forgotten only after a window
//! without them.

use std::{
    collections::{BTreeMap, HashMap},
    net::SocketAddr,
    time::Duration,
};

use hdrhistogram::Histogram;
use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{
    liveness::Liveness,
    net::{LinkState, SendError, StreamOutcome},
    snapshot::{ConnState, LeaderStats, LeaderView, StreamCounts, millis},
};

/// Slots per leader rotation on Solana clusters.
pub const SLOTS_PER_LEADER: u64 = 4;
/// How many slots of schedule to fetch at a time, at most.
const SCHEDULE_FETCH: u64 = 400;
/// The fewest: one leader's turn. A node knows the schedule up to the end of the epoch after
/// its root's, and the root trails the tip by 32 slots or more (the tower's depth): on a
/// cluster with short epochs the tip can be a few slots from the end of what is known, or
/// past it for a while after an epoch begins (nothing can be fetched then; the requests go on
/// each slot until the root catches up).
const SCHEDULE_FETCH_MIN: u64 = SLOTS_PER_LEADER;
/// Refetch when fewer than this many slots of schedule remain ahead.
const SCHEDULE_MARGIN: u64 = 100;
/// Schedule kept behind the current slot, to attribute landings to leaders.
const SCHEDULE_KEEP_BEHIND: u64 = 2_000;
/// How far back a leader's outcomes are judged: failures within this span of a backoff's end
/// deepen the next one; a span without them forgets the level.
pub const JUDGE_WINDOW: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// How long the first backoff of each kind lasts (each repeat doubles it, up to 5 s). A
/// throttle is brief by nature (the server's budget refills every 100 ms); a failed connection
/// costs a handshake per retry; a timed-out send held a stream for the whole send timeout.
fn backoff_base(kind: StreamOutcome) -> Option<Duration> {
    match kind {
        StreamOutcome::Throttled => Some(Duration::from_millis(100)),
        StreamOutcome::Connection => Some(Duration::from_millis(500)),
        StreamOutcome::Timeout => Some(Duration::from_secs(1)),
        StreamOutcome::Accepted | StreamOutcome::Other => None,
    }
}

/// A destination for one send.
pub type Target = (Pubkey, Option<SocketAddr>);

/// Largest acknowledgement time a leader's median tells apart (the longest send timeout).
const ACK_MAX_MS: u64 = 600_000;

#[derive(Default)]
struct Stats {
    streams: StreamCounts,
    landed: u64,
    /// Acknowledgement times in ms, for the median. Two significant figures keep it a few
    /// kilobytes per leader, whatever the run's length; made on the first answer.
    acks: Option<Histogram<u32>>,
}

impl Stats {
    fn record_ack(&mut self, took: Duration) {
        let acks = self.acks.get_or_insert_with(|| {
            // Constant bounds that satisfy the crate's rules: cannot fail.
            Histogram::new_with_bounds(1, ACK_MAX_MS, 2).expect("constant histogram bounds")
        });
        acks.saturating_record(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
    }

    fn ack_median_ms(&self) -> Option<u64> {
        self.acks
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(0.5))
    }
}

struct Backoff {
    until: Instant,
    level: u32,
    kind: StreamOutcome,
    reason: String,
    /// The address answered a stream since the backoff ended. Until it has, it gets one stream
    /// at a time — the probe — even where it answered before (a throttling leader does):
    /// sends that fall due together must not all go to it at the end of its backoff.
    answered_since: bool,
}

pub struct LeaderBook {
    slot: u64,
    schedule: BTreeMap<u64, Pubkey>,
    /// The current and next distinct leaders with their slot ranges, as many as any caller
    /// asks for ([`WINDOW_EXTRA`] past the fan-out): worked out when the slot or the schedule
    /// changes rather than on every send, where walking the schedule showed in profiles (a
    /// single validator leads all 400 slots fetched, so each walk read them all).
    window: Vec<(Pubkey, u64, u64)>,
    addrs: HashMap<Pubkey, SocketAddr>,
    stats: HashMap<Pubkey, Stats>,
    /// Last TPU address each leader was sent to (for the report).
    last_addr: HashMap<Pubkey, SocketAddr>,
    backoff: HashMap<SocketAddr, Backoff>,
    /// Which addresses answer: one that does not gets a stream at a time.
    liveness: Liveness,
    /// Slots asked for per schedule request: halved when the node refuses a range (its
    /// schedule ends with the next epoch, and a short-epoch cluster's next epoch ends well
    /// within [`SCHEDULE_FETCH`]), doubled back after each answer.
    fetch: u64,
    /// `--tpu`: every send goes here, whoever leads.
    pinned: Option<SocketAddr>,
    /// The node advertising the pinned address, looked up once per address refresh rather
    /// than per send.
    pinned_identity: Option<Pubkey>,
    /// Who is behind the pinned address when no node advertises it (an RPC node).
    pinned_known: Option<Pubkey>,
    /// The node list has been asked for once (answered or failed): pinned sends wait for it so
    /// that even the first ones are attributed to the right node.
    nodes_asked: bool,
    fanout: usize,
}

/// Leaders listed past the fan-out: the leaders panel shows the next few.
const WINDOW_EXTRA: usize = 4;
/// Leaders past the fan-out a send may reach for when nearer ones are skipped or unproven
/// (see [`LeaderBook::targets`]): at most this many extra streams per send.
const TARGET_SPARES: usize = 2;

impl LeaderBook {
    pub fn new(fanout: usize, pinned: Option<SocketAddr>) -> Self {
        Self {
            slot: 0,
            schedule: BTreeMap::new(),
            window: Vec::new(),
            addrs: HashMap::new(),
            stats: HashMap::new(),
            last_addr: HashMap::new(),
            backoff: HashMap::new(),
            liveness: Liveness::default(),
            fetch: SCHEDULE_FETCH,
            pinned,
            pinned_identity: None,
            pinned_known: None,
            nodes_asked: false,
            fanout,
        }
    }

    /// Names the node behind the pinned address when the node list cannot.
    pub fn with_pinned_identity(mut self, identity: Option<Pubkey>) -> Self {
        self.pinned_known = identity;
        self
    }

    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// Moves the current slot forward (slot feeds may repeat or arrive out of order).
    pub fn set_slot(&mut self, slot: u64) {
        if slot > self.slot {
            self.slot = slot;
            let keep_from = slot.saturating_sub(SCHEDULE_KEEP_BEHIND);
            self.schedule = self.schedule.split_off(&keep_from);
            self.window = self.walk(self.fanout + WINDOW_EXTRA);
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
        self.window = self.walk(self.fanout + WINDOW_EXTRA);
    }

    /// The first node-list request failed: pinned sends go ahead without a name for the node.
    pub fn nodes_unavailable(&mut self) {
        self.nodes_asked = true;
    }

    pub fn set_addresses(&mut self, addrs: HashMap<Pubkey, SocketAddr>) {
        self.nodes_asked = true;
        self.pinned_identity = self
            .pinned
            .and_then(|p| addrs.iter().find(|(_, a)| **a == p).map(|(k, _)| *k));
        self.addrs = addrs;
    }

    pub fn leader_at(&self, slot: u64) -> Option<Pubkey> {
        self.schedule.get(&slot).copied()
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

    /// Where the next send goes: the current leader and the next distinct ones until
    /// `fanout + 1` of them are known to answer, skipping those without a TPU address, backing
    /// off, or not answering with a stream already waiting (see [`Liveness`]). Empty means
    /// "hold the send".
    ///
    /// A skipped leader is replaced by the one after it, and a leader not known to answer (a
    /// probe after a backoff, the first stream of a new connection) rides along without
    /// filling a place: a send made late in the current leader's turn must still reach a
    /// leader that will take it. With only the current leader behind a blackholed next one, such
    /// a send waited out the silent turn and a resend interval on a 3-node cluster (6.9 s).
    pub fn targets(&self, now: Instant) -> Vec<Target> {
        if let Some(addr) = self.pinned {
            if !self.nodes_asked || !self.may_send(addr, now) {
                return Vec::new();
            }
            return vec![(self.pinned_identity(), Some(addr))];
        }
        let wanted = self.fanout + 1;
        let mut out = Vec::with_capacity(wanted + TARGET_SPARES);
        let mut counted = 0;
        for (leader, _, _) in self.upcoming(wanted + TARGET_SPARES) {
            if counted == wanted {
                break;
            }
            let Some(&addr) = self.addrs.get(&leader) else {
                continue;
            };
            if !self.may_send(addr, now) {
                continue;
            }
            out.push((leader, Some(addr)));
            if self.liveness.answers(addr, now) {
                counted += 1;
            }
        }
        out
    }

    fn may_send(&self, addr: SocketAddr, now: Instant) -> bool {
        let probing = self
            .backoff
            .get(&addr)
            .is_some_and(|b| !b.answered_since && self.liveness.in_flight(addr) > 0);
        !self.backing_off(addr, now) && !probing && self.liveness.may_send(addr, now)
    }

    /// Addresses worth connecting to ahead of their turn.
    pub fn prepare_list(&self) -> Vec<SocketAddr> {
        if let Some(addr) = self.pinned {
            return vec![addr];
        }
        self.upcoming(self.fanout + 2)
            .iter()
            .filter_map(|(l, _, _)| self.addrs.get(l).copied())
            .collect()
    }

    /// Who is behind the pinned address: the node advertising it, else the current leader.
    /// The node behind the pinned address: the one advertising it, else the one named by the
    /// configuration; unknown (the default key) when neither says — never the current leader,
    /// which would credit it with sends it never received.
    fn pinned_identity(&self) -> Pubkey {
        self.pinned_identity
            .or(self.pinned_known)
            .unwrap_or_default()
    }

    fn backing_off(&self, addr: SocketAddr, now: Instant) -> bool {
        self.backoff.get(&addr).is_some_and(|b| b.until > now)
    }

    /// Whether no target takes a send right now (so the pacer should hold): all are backing
    /// off or waiting on an answer.
    pub fn nowhere_to_send(&self, now: Instant) -> bool {
        self.targets(now).is_empty()
    }

    /// The earliest moment a backed-off address may be tried again.
    pub fn next_backoff_end(&self, now: Instant) -> Option<Instant> {
        self.backoff
            .values()
            .map(|b| b.until)
            .filter(|u| *u > now)
            .min()
    }

    /// Addresses whose streams have just turned silent (see [`Liveness::newly_silent`]).
    pub fn newly_silent(&mut self, now: Instant) -> Vec<SocketAddr> {
        self.liveness.newly_silent(now)
    }

    pub fn on_sent(&mut self, leader: Pubkey, addr: SocketAddr, now: Instant) {
        self.stats.entry(leader).or_default().streams.sent += 1;
        self.last_addr.insert(leader, addr);
        self.liveness.on_sent(addr, now);
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
        self.liveness.on_result(addr, outcome);
        if matches!(outcome, StreamOutcome::Accepted | StreamOutcome::Throttled)
            && let Some(b) = self.backoff.get_mut(&addr)
            && b.until <= now
        {
            b.answered_since = true;
        }
        let (Err(err), Some(base)) = (result, backoff_base(outcome)) else {
            // Success does not end a backoff: other streams of the same window may still be
            // stopped. An unused backoff is forgotten after a clean window (below).
            return outcome;
        };
        let level = match self.backoff.get(&addr) {
            // Streams already in flight when the backoff began fail together: one signal.
            Some(b) if b.until > now => return outcome,
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
                kind: outcome,
                reason: err.to_string(),
                answered_since: false,
            },
        );
        outcome
    }

    /// Forgets backoffs that ended a whole window ago, so the map does not grow with every
    /// leader ever met.
    pub fn expire_backoffs(&mut self, now: Instant) {
        self.backoff
            .retain(|_, b| now.saturating_duration_since(b.until) < JUDGE_WINDOW);
        self.liveness.forget_idle();
    }

    /// Forgets every leader's figures for a new batch (see `engine::host`); the schedule, the
    /// addresses and the backoffs stay, since they are about the cluster, not the batch.
    pub fn reset_stats(&mut self) {
        self.stats.clear();
        self.last_addr.clear();
    }

    /// Every leader sent to in this run, with its figures, most streams first.
    pub fn all_stats(&self, now: Instant) -> Vec<LeaderStats> {
        let mut all: Vec<LeaderStats> = self
            .stats
            .iter()
            .map(|(identity, s)| {
                let tpu_quic = self.last_addr.get(identity).copied();
                LeaderStats {
                    identity: *identity,
                    tpu_quic,
                    streams: s.streams,
                    landed: s.landed,
                    ack_ms_p50: s.ack_median_ms(),
                    backoff_level: tpu_quic
                        .and_then(|a| self.backoff.get(&a))
                        .filter(|b| b.until > now)
                        .map_or(0, |b| b.level + 1),
                }
            })
            .collect();
        all.sort_by(|a, b| {
            b.streams
                .sent
                .cmp(&a.streams.sent)
                .then(a.identity.cmp(&b.identity))
        });
        all
    }

    /// Counts a landing for the leader of `slot` and names it; `None` when that slot's
    /// schedule is not known.
    pub fn on_landed(&mut self, slot: u64) -> Option<Pubkey> {
        let leader = self.leader_at(slot)?;
        self.stats.entry(leader).or_default().landed += 1;
        Some(leader)
    }

    /// The leaders panel: current first, then upcoming, with per-leader figures.
    pub fn views(&self, now: Instant, link: impl Fn(SocketAddr) -> LinkState) -> Vec<LeaderView> {
        let rows: Vec<(Pubkey, u64, u64)> = match self.pinned {
            Some(_) => vec![(self.pinned_identity(), self.slot, self.slot)],
            None => self.upcoming(self.fanout + WINDOW_EXTRA),
        };
        rows.into_iter()
            .map(|(identity, first_slot, last_slot)| {
                let tpu_quic = match self.pinned {
                    Some(a) => Some(a),
                    None => self.addrs.get(&identity).copied(),
                };
                let (streams, landed) = self
                    .stats
                    .get(&identity)
                    .map_or((StreamCounts::default(), 0), |s| (s.streams, s.landed));
                let conn = match tpu_quic {
                    None => ConnState::NoAddress,
                    Some(addr) => match self.backoff.get(&addr) {
                        Some(b) if b.until > now => ConnState::BackingOff {
                            remaining_ms: millis(b.until - now),
                            kind: b.kind,
                            reason: b.reason.clone(),
                        },
                        _ => match self.liveness.silent_for(addr, now) {
                            Some(waited) => ConnState::Silent {
                                for_ms: millis(waited),
                            },
                            None => match link(addr) {
                                LinkState::Idle => ConnState::Idle,
                                LinkState::Connecting => ConnState::Connecting,
                                LinkState::Connected => ConnState::Connected,
                                LinkState::Failed(reason) => ConnState::Failed { reason },
                            },
                        },
                    },
                };
                LeaderView {
                    identity,
                    tpu_quic,
                    first_slot,
                    last_slot,
                    conn,
                    streams,
                    landed,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_follows_the_slot_and_the_schedule() {
        let ls: Vec<Pubkey> = (0..8).map(|_| Pubkey::new_unique()).collect();
        let mut b = book_with(&ls);
        let five = b.upcoming(5);
        assert_eq!(
            b.upcoming(2),
            five[..2].to_vec(),
            "a prefix of the longer list"
        );
        assert_eq!(five[0], (ls[0], 100, 103));
        assert_eq!(five[1], (ls[1], 104, 107));
        b.set_slot(106);
        assert_eq!(b.upcoming(1), vec![(ls[1], 106, 107)]);
        // The last turn known; a schedule learned later joins the window.
        b.set_slot(128);
        assert_eq!(b.upcoming(3), vec![(ls[7], 128, 131)]);
        b.add_schedule(132, &[ls[6], ls[6], ls[5]]);
        assert_eq!(
            b.upcoming(3),
            vec![(ls[7], 128, 131), (ls[6], 132, 133), (ls[5], 134, 134)]
        );
    }

    fn book_with(leaders: &[Pubkey]) -> LeaderBook {
        let mut b = LeaderBook::new(1, None);
        b.set_slot(100);
        let sched: Vec<Pubkey> = leaders
            .iter()
            .flat_map(|l| std::iter::repeat_n(*l, 4))
            .collect();
        b.add_schedule(100, &sched);
        b.set_addresses(
            leaders
                .iter()
                .enumerate()
                .map(|(i, l)| (*l, SocketAddr::from(([127, 0, 0, 1], 9000 + i as u16))))
                .collect(),
        );
        b
    }

    #[tokio::test(start_paused = true)]
    async fn fanout_follows_the_schedule_and_skips_backed_off_leaders() {
        let (a, b, c) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let mut book = book_with(&[a, b, c, a]);
        let now = Instant::now();
        prove(&mut book, &[a, b, c], now);
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(t, vec![a, b]);
        book.set_slot(104);
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(t, vec![b, c]);

        let addr_b = SocketAddr::from(([127, 0, 0, 1], 9001));
        let stop = || Err(SendError::Throttled("stop".into()));
        assert_eq!(
            book.on_result(b, addr_b, &stop(), Duration::ZERO, now),
            StreamOutcome::Throttled
        );
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(
            t,
            vec![c, a],
            "the leader after the skipped one takes its place"
        );
        let views = book.views(now, |_| LinkState::Connected);
        assert_eq!(
            views[0].conn.label(),
            "throttled, backing off 100 ms (throttled: stop)"
        );
        // Failures of streams already in flight do not deepen it.
        book.on_result(b, addr_b, &stop(), Duration::ZERO, now);
        assert_eq!(
            book.next_backoff_end(now),
            Some(now + Duration::from_millis(100))
        );
        // An accepted stream from the same window does not erase it...
        let later = now + Duration::from_millis(150);
        book.on_result(b, addr_b, &Ok(()), Duration::ZERO, later);
        // ...so the next throttle soon after it ended doubles it.
        book.on_result(b, addr_b, &stop(), Duration::ZERO, later);
        assert_eq!(
            book.next_backoff_end(later),
            Some(later + Duration::from_millis(200))
        );
        // A clean window after the backoff forgets the level.
        let much_later = later + Duration::from_millis(200) + JUDGE_WINDOW;
        book.expire_backoffs(much_later);
        assert_eq!(book.targets(much_later).len(), 2);
        book.on_result(b, addr_b, &stop(), Duration::ZERO, much_later);
        assert_eq!(
            book.next_backoff_end(much_later),
            Some(much_later + Duration::from_millis(100))
        );
    }

    /// A leader that throttled answers, so it is trusted with several streams at once — but
    /// not at the end of its backoff: sends that fall due together go to it one at a time
    /// until it answers again.
    #[tokio::test(start_paused = true)]
    async fn the_first_stream_after_a_backoff_goes_alone() {
        let a = Pubkey::new_unique();
        let mut book = LeaderBook::new(0, None);
        book.set_slot(100);
        book.add_schedule(100, &[a; 8]);
        let addr = SocketAddr::from(([127, 0, 0, 1], 9000));
        book.set_addresses(HashMap::from([(a, addr)]));
        let now = Instant::now();
        prove(&mut book, &[a], now);
        let leaders_now = |book: &LeaderBook, t| book.targets(t).len();
        book.on_sent(a, addr, now);
        assert_eq!(leaders_now(&book, now), 1, "proven: a second stream may go");
        let stop = Err(SendError::Throttled("stop".into()));
        book.on_result(a, addr, &stop, Duration::ZERO, now);
        assert_eq!(leaders_now(&book, now), 0, "backing off");
        let after = now + Duration::from_millis(150);
        assert_eq!(leaders_now(&book, after), 1, "the probe");
        book.on_sent(a, addr, after);
        assert_eq!(leaders_now(&book, after), 0, "the probe goes alone");
        book.on_result(a, addr, &Ok(()), Duration::ZERO, after);
        book.on_sent(a, addr, after);
        assert_eq!(leaders_now(&book, after), 1, "answered: the pace again");
    }

    /// Each leader's address answers one stream: known to answer from then on.
    fn prove(book: &mut LeaderBook, leaders: &[Pubkey], now: Instant) {
        for l in leaders {
            let addr = book.addrs[l];
            book.on_sent(*l, addr, now);
            book.on_result(*l, addr, &Ok(()), Duration::ZERO, now);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_not_known_to_answer_rides_along_without_taking_a_place() {
        let (a, b, c, d) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let mut book = book_with(&[a, b, c, d]);
        let now = Instant::now();
        let all: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(
            all,
            vec![a, b, c, d],
            "nobody proven yet: the fan-out and both spares"
        );
        prove(&mut book, &[a, c], now);
        // b is new: its first stream goes, and the send still reaches two leaders that answer.
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(t, vec![a, b, c]);
        // With that stream unanswered, b is skipped and c takes its place.
        let addr_b = SocketAddr::from(([127, 0, 0, 1], 9001));
        book.on_sent(b, addr_b, now);
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(t, vec![a, c]);
        // Once b answers it fills its place again.
        book.on_result(b, addr_b, &Ok(()), Duration::ZERO, now);
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(t, vec![a, b]);
    }

    #[tokio::test(start_paused = true)]
    async fn each_failure_kind_backs_off_on_its_own_scale_and_is_counted_apart() {
        let a = Pubkey::new_unique();
        let mut book = book_with(&[a]);
        let addr = SocketAddr::from(([127, 0, 0, 1], 9000));
        let now = Instant::now();
        book.on_sent(a, addr, now);
        book.on_sent(a, addr, now);
        book.on_sent(a, addr, now);
        let ms = Duration::from_millis;
        book.on_result(
            a,
            addr,
            &Err(SendError::Connection("refused".into())),
            ms(3),
            now,
        );
        assert_eq!(book.all_stats(now)[0].backoff_level, 1, "backing off now");
        assert_eq!(
            book.next_backoff_end(now),
            Some(now + Duration::from_millis(500))
        );
        let t1 = now + Duration::from_secs(3);
        book.on_result(
            a,
            addr,
            &Err(SendError::Timeout(Duration::from_secs(5))),
            ms(5_000),
            t1,
        );
        assert_eq!(book.next_backoff_end(t1), Some(t1 + Duration::from_secs(1)));
        let t2 = t1 + Duration::from_secs(3);
        book.on_result(a, addr, &Err(SendError::Stream("reset".into())), ms(7), t2);
        assert_eq!(
            book.next_backoff_end(t2),
            None,
            "other stream errors do not back off"
        );
        let stats = book.all_stats(t2);
        assert_eq!(stats.len(), 1);
        assert_eq!(
            stats[0].ack_ms_p50,
            Some(7),
            "the median of 3, 5000 and 7 ms"
        );
        assert_eq!(stats[0].backoff_level, 0, "no backoff at t2");
        let s = stats[0].streams;
        assert_eq!(
            (
                s.sent,
                s.accepted,
                s.throttled,
                s.connection,
                s.timeout,
                s.other
            ),
            (3, 0, 0, 1, 1, 1)
        );
        assert_eq!(stats[0].tpu_quic, Some(addr));
    }
}
