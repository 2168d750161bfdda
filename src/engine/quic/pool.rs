//! A leader's connections: as many as its link needs and the leader allows.
//!
//! One QUIC connection carries at most its congestion window per round trip, and at most its
//! stream credit: 128 concurrent streams for an unstaked peer on a 4.0 leader, which returns
//! credit only as it reads — one stream at a time per connection, so a lost datagram holds the
//! credit of every stream behind it until it is repaired, a PTO later. On a 320 ms link losing
//! 5% each way one connection carries less than the pace asks; streams waited for room, and
//! the wait was read as the leader's. Agave's legacy client, with a pool of connections per
//! leader, stays on the pace there. So a leader gets a pool here too:
//!
//! - a connection is added only once every other has answered a stream (the first ones aside,
//!   see `first`): a leader that closes the newest as one too many says so before the next;
//! - a stream goes on the live connection with the fewest of our streams (waiting or
//!   unanswered) — on a link that loses datagrams, for a run of five consecutive streams, so
//!   that a burst of losses holds back one connection's streams, not every connection's (see
//!   `runs`);
//! - when it must wait there for room in the congestion window, or for stream credit while
//!   the connection is losing datagrams, another connection is opened in the background (one
//!   handshake at a time), and streams waiting for credit move to it: the loss decides how
//!   many there are, and none of this happens on a clean link. Credit withheld on a clean
//!   link is the leader's budget (a 4.0 leader counts it per source address, across all our
//!   connections): more connections would only queue more streams it has not read;
//! - on a link that loses datagrams, another connection is opened whenever one carries more
//!   than [`SPREAD_STREAMS`] of our streams: the leader reads each connection's streams one at
//!   a time, and what a repair holds back on one connection reaches it at once, over its
//!   budget for the window if there were many;
//! - never more than [`MAX_CONNECTIONS`], the 4.0 leader's limit for an unstaked key, and
//!   fewer once the leader closed one of them with code 4 ("too many": another sender on our
//!   address holds the rest); and never more handshakes than a mainnet leader's per-address
//!   bucket admits (8 a minute, saved up to 80), over which it silently ignores them — the
//!   first connection included (see `engine::handshakes`).
//!
//! Those waits are txpace's side of a stream: its [`Handoff`](crate::engine::net::Handoff) is
//! marked only once its connection has room for it and credit was granted, so neither wait is
//! counted as the leader's time (see `engine::follow`). The pool also keeps the link's
//! measured round trips ([`RttEstimator`]), from which the transport's own time rules — the
//! handshake bound, the credit wait read as throttling — are derived.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use quinn::{Connection, ConnectionError, VarInt};
use tokio::{sync::Notify, time::Instant};

use super::{
    figures::PathBook,
    lock,
    probe::Probe,
    runs::{self, Candidate, Runs},
};
use crate::engine::{
    handshakes::{HandshakeLimit, Reading, TimedOut},
    link::{LinkTiming, RttEstimator},
    net::PathFigures,
};

/// Connections a 4.0 leader lets an unstaked key hold (`solana-streamer` 4.0.0, `swqos.rs`:
/// `DEFAULT_MAX_QUIC_CONNECTIONS_PER_UNSTAKED_PEER`, 8); a staked key may hold 16, but 8
/// already carry several times the pace on the worst legitimate link.
pub const MAX_CONNECTIONS: usize = 8;
/// Close code of a 4.0 leader to a key holding more connections than it allows.
const CLOSE_TOO_MANY: u32 = 4;
/// Most of our streams one connection carries at once on a link that loses datagrams: a
/// 4.0 leader reads a connection's streams one at a time, so a lost datagram holds back every
/// later stream of its connection until the repair, about one and a half round trips, and then
/// reads them at once. Those count against the budget of the window they are read in (20
/// streams per 100 ms for an unstaked address, across all its connections) beside the streams
/// other connections bring meanwhile (10 at 100 tx/s); past it the leader delays the reading.
/// A connection holds about a round trip's worth of our streams, and a repair holds back about
/// one and a half times that: at six, what one repair releases stays under the window's share
/// the pace leaves free. On a clean link one connection carries any number.
pub(super) const SPREAD_STREAMS: usize = 6;
/// What one stream adds to its transaction's bytes on the wire: a QUIC short header, the
/// STREAM frame's header and the AEAD tag (the congestion window counts UDP payloads).
const STREAM_OVERHEAD: u64 = 48;

/// One connection of the pool and our bytes on it.
pub(super) struct Pooled {
    pub(super) conn: Connection,
    /// Its id among every connection this process opened (see `runs`).
    id: u64,
    /// Our streams on it, from the moment one is given it until it ends: what picking the
    /// least loaded connection compares.
    streams: AtomicUsize,
    /// Bytes of our streams handed to it and still on the network: until answered, or for at
    /// most twice the path's round trip (the leader's reading queue is not the network's; see
    /// `send_on`).
    bytes: AtomicU64,
    /// The leader answered a stream on it.
    answered: AtomicBool,
    /// Datagrams quinn had counted lost on it when [`Pooled::losing`] last looked.
    lost_seen: AtomicU64,
    /// Its writes, for the probes after the last one (see `probe`).
    pub(super) probe: Probe,
    /// When it joined the pool, and whether the leader has granted it stream credit yet (see
    /// [`Pooled::admitted`]).
    joined: Instant,
    admitted: AtomicBool,
    /// Woken whenever one of its streams ends: room may have come.
    room: Notify,
}

impl Pooled {
    /// Whether its congestion window has room for a stream of `len` bytes besides ours in
    /// flight. An empty connection always has: a stream must be able to go somewhere.
    pub(super) fn has_room(&self, len: usize) -> bool {
        let in_flight = self.bytes.load(Ordering::SeqCst);
        in_flight == 0 || in_flight + cost(len) <= self.conn.stats().path.cwnd
    }

    /// Whether the leader has granted it stream credit. A 4.0 leader grants none in the
    /// handshake: it admits the connection once its side of the handshake is done and only
    /// then raises the limit (a MAX_STREAMS frame, about a round trip after ours is done);
    /// other servers grant credit in the handshake itself. Known from that frame, from a stream
    /// opened on it, or — a server that granted credit up front sends no frame — once two of
    /// its round trips have passed. A stream waiting for that first grant waits for the
    /// leader's admission, not for its budget: it is not a credit wait.
    pub(super) fn admitted(&self) -> bool {
        if self.admitted.load(Ordering::SeqCst) {
            return true;
        }
        let granted = self.conn.stats().frame_rx.max_streams_uni > 0
            || self.joined.elapsed() > 2 * self.conn.rtt();
        if granted {
            self.admitted.store(true, Ordering::SeqCst);
        }
        granted
    }

    /// A stream was opened on it: it had credit.
    pub(super) fn opened(&self) {
        self.admitted.store(true, Ordering::SeqCst);
    }

    /// Whether quinn counted datagrams of it lost since the last look (`stats().path`): a
    /// wait for credit is then the loss holding it (the leader reads a connection's streams
    /// one at a time, so one lost datagram holds the credit of those behind it).
    pub(super) fn losing(&self) -> bool {
        let lost = self.conn.stats().path.lost_packets;
        lost > self.lost_seen.swap(lost, Ordering::SeqCst)
    }

    /// Our streams on it now (see [`Pooled::claim`]).
    pub(super) fn load(&self) -> usize {
        self.streams.load(Ordering::SeqCst)
    }

    /// Waits until [`Pooled::has_room`] (or the connection closed: opening on it then fails).
    pub(super) async fn wait_room(&self, len: usize) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.has_room(len) || self.conn.close_reason().is_some() {
                return;
            }
            notified.await;
        }
    }

    /// The leader answered a stream on it: it is kept, and the pool may grow past it.
    pub(super) fn answered(&self) {
        self.answered.store(true, Ordering::SeqCst);
    }

    /// Whether the leader has answered a stream on it (see [`Pooled::answered`]).
    pub(super) fn heard(&self) -> bool {
        self.answered.load(Ordering::SeqCst)
    }

    /// Counts a stream as given this connection until the guard drops.
    pub(super) fn claim(self: &Arc<Self>) -> Claim {
        self.streams.fetch_add(1, Ordering::SeqCst);
        Claim(self.clone())
    }

    /// Counts a stream of `len` bytes as ours on the wire until the guard drops.
    pub(super) fn carry(self: &Arc<Self>, len: usize) -> Carried {
        let cost = cost(len);
        self.bytes.fetch_add(cost, Ordering::SeqCst);
        Carried {
            pooled: self.clone(),
            cost,
        }
    }
}

fn cost(len: usize) -> u64 {
    len as u64 + STREAM_OVERHEAD
}

/// A stream given a connection (see [`Pooled::claim`]).
pub(super) struct Claim(Arc<Pooled>);

impl Drop for Claim {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A stream on the wire; its bytes leave the connection's count when it ends, however.
pub(super) struct Carried {
    pooled: Arc<Pooled>,
    cost: u64,
}

impl Drop for Carried {
    fn drop(&mut self) {
        self.pooled.bytes.fetch_sub(self.cost, Ordering::SeqCst);
        self.pooled.room.notify_waiters();
    }
}

/// A leader's connections, how many it allows, and its link's round trips.
pub(super) struct Pool {
    conns: Mutex<Vec<Arc<Pooled>>>,
    /// Most connections the leader allows us: [`MAX_CONNECTIONS`] until it closes one with code 4.
    cap: AtomicUsize,
    /// The handshakes of the last minute, under the leader's limit (see `engine::handshakes`).
    handshakes: Mutex<HandshakeLimit>,
    /// When a stream on one of its connections was last answered: a handshake timing out
    /// soon after was ignored by a leader that is there.
    last_answer: Mutex<Option<Instant>>,
    rtt: Mutex<RttEstimator>,
    /// Woken when a connection joins or is admitted: streams waiting for credit look again.
    grew: Notify,
    /// What the connections measured, for the operator (see `figures`).
    pub(super) book: Mutex<PathBook>,
    /// Which connection takes the next stream (see `runs`).
    runs: Mutex<Runs>,
    /// The link lost a datagram of ours once (see [`Pool::lossy`]): it stays so (the counts only
    /// grow), and the connections' statistics need not be read again on each stream.
    lost: AtomicBool,
}

impl Default for Pool {
    fn default() -> Self {
        Self {
            conns: Mutex::default(),
            cap: AtomicUsize::new(MAX_CONNECTIONS),
            handshakes: Mutex::default(),
            last_answer: Mutex::default(),
            rtt: Mutex::default(),
            grew: Notify::new(),
            book: Mutex::default(),
            runs: Mutex::default(),
            lost: AtomicBool::new(false),
        }
    }
}

impl Pool {
    /// The live connection with the fewest of our streams among those the leader has admitted
    /// (a new one takes streams once it has credit to carry them: see [`Pooled::admitted`]),
    /// else among all — on a lossy link, for a run of consecutive streams (see `runs`). Closed
    /// ones are dropped first; one the leader closed with code 4 lowers the cap to those left.
    pub(super) fn pick(&self) -> Option<Arc<Pooled>> {
        let mut conns = lock(&self.conns);
        self.prune(&mut conns);
        let lossy = self.lossy_locked(&conns);
        let i = lock(&self.runs).pick(&candidates(&conns), lossy)?;
        conns.get(i).cloned()
    }

    /// The live connection with the fewest of our streams among those admitted, else among
    /// all, leaving the run under way as it is: where a stream waiting for credit moves when a
    /// connection joins (see `runs`).
    pub(super) fn least_loaded(&self) -> Option<Arc<Pooled>> {
        let mut conns = lock(&self.conns);
        self.prune(&mut conns);
        let i = runs::least_loaded(&candidates(&conns))?;
        conns.get(i).cloned()
    }

    /// Wakes the streams waiting for credit: a connection was admitted, and may take them.
    pub(super) fn announce(&self) {
        self.grew.notify_waiters();
    }

    /// Resolves when a connection next joins the pool (see [`Pool::add`]).
    pub(super) fn grew(&self) -> tokio::sync::futures::Notified<'_> {
        self.grew.notified()
    }

    fn prune(&self, conns: &mut Vec<Arc<Pooled>>) {
        let before = conns.len();
        let mut too_many = false;
        let now = Instant::now();
        let mut book = lock(&self.book);
        conns.retain(|p| match p.conn.close_reason() {
            None => true,
            Some(reason) => {
                too_many |= closed_too_many(&reason);
                book.retire(&p.conn, now);
                false
            }
        });
        drop(book);
        if too_many {
            let cap = conns.len().max(1);
            self.cap.store(cap, Ordering::SeqCst);
            log::info!(
                "a leader closed one of our {before} connections as too many: at most {cap} now"
            );
        }
    }

    /// Whether the link lost a datagram of ours: quinn counted one lost on a connection of
    /// the pool, live or since gone.
    pub(super) fn lossy(&self) -> bool {
        let mut conns = lock(&self.conns);
        self.prune(&mut conns);
        self.lossy_locked(&conns)
    }

    fn lossy_locked(&self, conns: &[Arc<Pooled>]) -> bool {
        if self.lost.load(Ordering::SeqCst) {
            return true;
        }
        let live = conns.iter().any(|p| p.conn.stats().path.lost_packets > 0);
        let lost = live || lock(&self.book).lost_before();
        if lost {
            self.lost.store(true, Ordering::SeqCst);
        }
        lost
    }

    /// Live connections.
    pub(super) fn len(&self) -> usize {
        let mut conns = lock(&self.conns);
        self.prune(&mut conns);
        conns.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Most connections the leader allows us now.
    pub(super) fn cap(&self) -> usize {
        self.cap.load(Ordering::SeqCst)
    }

    /// A finished handshake's connection joins the pool; its RTT (measured by the handshake)
    /// is the link's estimate until streams have answered.
    pub(super) fn add(&self, conn: Connection) -> Arc<Pooled> {
        lock(&self.rtt).floor(conn.rtt());
        static IDS: AtomicU64 = AtomicU64::new(0);
        let pooled = Arc::new(Pooled {
            conn,
            id: IDS.fetch_add(1, Ordering::Relaxed),
            streams: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            answered: AtomicBool::new(false),
            lost_seen: AtomicU64::new(0),
            probe: Probe::default(),
            joined: Instant::now(),
            admitted: AtomicBool::new(false),
            room: Notify::new(),
        });
        lock(&self.conns).push(pooled.clone());
        self.grew.notify_waiters();
        pooled
    }

    /// Forgets `conn` (it failed); the others carry on. Pruned first, so that a close with
    /// code 4 is read from it before it goes.
    pub(super) fn remove(&self, conn: &Connection) {
        let mut conns = lock(&self.conns);
        self.prune(&mut conns);
        let mut book = lock(&self.book);
        conns.retain(|p| {
            let keep = p.conn.stable_id() != conn.stable_id();
            if !keep {
                book.retire(&p.conn, Instant::now());
            }
            keep
        });
    }

    /// Closes every connection with `code` and forgets them; returns how many there were.
    pub(super) fn close_all(&self, code: u32, reason: &[u8]) -> usize {
        let conns = std::mem::take(&mut *lock(&self.conns));
        let mut book = lock(&self.book);
        for p in &conns {
            p.conn.close(VarInt::from_u32(code), reason);
            book.retire(&p.conn, Instant::now());
        }
        conns.len()
    }

    /// Whether another connection may be opened now: fewer than the leader allows, every one
    /// answered on already, and a token in the leader's handshake bucket (see `engine::handshakes`).
    pub(super) fn may_grow(&self, now: Instant) -> bool {
        {
            let mut conns = lock(&self.conns);
            self.prune(&mut conns);
            let unproven = conns.iter().any(|p| !p.heard());
            if conns.len() >= self.cap() || unproven {
                return false;
            }
        }
        self.handshake_wait(now).is_none()
    }

    /// `None` when a handshake may start now; else how long until one may (see
    /// `engine::handshakes`).
    pub(super) fn handshake_wait(&self, now: Instant) -> Option<Duration> {
        lock(&self.handshakes).wait(now)
    }

    /// A handshake starts now: it counts against the leader's per-minute limit whether it
    /// succeeds or not (the leader counts Initials).
    pub(super) fn note_handshake(&self, now: Instant) {
        lock(&self.handshakes).start(now);
    }

    /// When a stream of ours was last answered, on any connection.
    pub(super) fn last_answer(&self) -> Option<Instant> {
        *lock(&self.last_answer)
    }

    /// A handshake that started at `started` — the leader's last answer then `answered_before`,
    /// another connection to it up then `others_up_at_start` — timed out at `now`: how it is
    /// read (see `engine::handshakes`), from the answers, whether another connection to it is
    /// up, and what the link has lost.
    pub(super) fn handshake_timed_out(
        &self,
        started: Instant,
        answered_before: Option<Instant>,
        others_up_at_start: bool,
        now: Instant,
    ) -> Reading {
        let figures = self.figures(now);
        let timed_out = TimedOut {
            started,
            answered_before,
            answered_since: self.last_answer().is_some_and(|t| t > started),
            others_up: !self.is_empty(),
            others_up_at_start,
            pto: self.timing().unwrap_or_default().pto(),
            sent: figures.sent_packets,
            lost: figures.lost_packets,
        };
        lock(&self.handshakes).timed_out(&timed_out, now)
    }

    /// A handshake finished: the leader takes them.
    pub(super) fn handshake_finished(&self) {
        lock(&self.handshakes).finished();
    }

    /// A stream on `conn` was answered `took` after its hand-off.
    pub(super) fn sample(&self, took: Duration, conn: &Connection, now: Instant) -> LinkTiming {
        *lock(&self.last_answer) = Some(now);
        let mut rtt = lock(&self.rtt);
        rtt.floor(conn.rtt());
        rtt.sample(took, now);
        rtt.timing()
    }

    /// What the pool's connections measured (see `figures`).
    pub(super) fn figures(&self, now: Instant) -> PathFigures {
        let live: Vec<quinn::Connection> = {
            let mut conns = lock(&self.conns);
            self.prune(&mut conns);
            conns.iter().map(|p| p.conn.clone()).collect()
        };
        let recent = lock(&self.handshakes).last_minute(now);
        lock(&self.book).figures(&live, recent, now)
    }

    /// The link's time rules, once anything was measured on it.
    pub(super) fn timing(&self) -> Option<LinkTiming> {
        let rtt = lock(&self.rtt);
        rtt.sampled().then(|| rtt.timing())
    }
}

/// The pool's connections as `runs` sees them.
fn candidates(conns: &[Arc<Pooled>]) -> Vec<Candidate> {
    conns
        .iter()
        .map(|p| Candidate {
            id: p.id,
            streams: p.streams.load(Ordering::SeqCst),
            admitted: p.admitted(),
        })
        .collect()
}

fn closed_too_many(reason: &ConnectionError) -> bool {
    matches!(reason, ConnectionError::ApplicationClosed(c)
        if c.error_code == VarInt::from_u32(CLOSE_TOO_MANY))
}
