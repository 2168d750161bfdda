//! What the transport measured of each leader's link, for the operator (see
//! [`PathFigures`]): quinn's path statistics summed over the pool's connections, closed ones
//! included, the handshakes' times and timeouts, and the close codes the leader sent.
//!
//! A closed connection's statistics are folded into the pool's totals when it leaves the pool,
//! and a peer's into the transport's when it is evicted, so a leader's loss counts stay whole
//! across reconnections and idle spells.

use std::{
    collections::{BTreeMap, HashMap},
    net::SocketAddr,
    time::Duration,
};

use quinn::{Connection, ConnectionError};
use tokio::time::Instant;

use crate::engine::net::PathFigures;

/// Close code of a 4.0 leader to a connection it evicted ("dropped").
const CLOSE_DROPPED: u64 = 1;

/// A pool's own record of its connections' lives.
#[derive(Default)]
pub(super) struct PathBook {
    /// Quinn's counts of the connections that left the pool: sent, lost, congestion events.
    retired: [u64; 3],
    /// The smoothed round trip of the last connection that left the pool, as it left.
    last_rtt: Option<Duration>,
    handshake: Option<Duration>,
    timeouts: u64,
    ignored_at: Option<Instant>,
    closes: BTreeMap<u64, u64>,
    evicted_at: Option<Instant>,
}

fn counts(conn: &Connection) -> [u64; 3] {
    let p = conn.stats().path;
    [p.sent_packets, p.lost_packets, p.congestion_events]
}

impl PathBook {
    /// `conn` leaves the pool: its counts are kept, and the leader's close code noted.
    pub(super) fn retire(&mut self, conn: &Connection, now: Instant) {
        for (sum, n) in self.retired.iter_mut().zip(counts(conn)) {
            *sum += n;
        }
        self.last_rtt = Some(conn.rtt());
        if let Some(ConnectionError::ApplicationClosed(c)) = conn.close_reason() {
            let code = c.error_code.into_inner();
            *self.closes.entry(code).or_default() += 1;
            if code == CLOSE_DROPPED {
                self.evicted_at = Some(now);
            }
        }
    }

    /// Whether a connection that left the pool had lost a datagram.
    pub(super) fn lost_before(&self) -> bool {
        self.retired[1] > 0
    }

    /// A handshake finished after `took`.
    pub(super) fn handshake_done(&mut self, took: Duration) {
        self.handshake = Some(took);
    }

    /// A handshake timed out at `now`; `ignored`: the leader was plainly there and loss
    /// cannot explain it (see `engine::handshakes`), so it ignored this one.
    pub(super) fn handshake_timed_out(&mut self, now: Instant, ignored: bool) {
        self.timeouts += 1;
        if ignored {
            self.ignored_at = Some(now);
        }
    }

    /// The figures, with `live` the pool's connections now and `new_last_minute` its
    /// handshakes of the last minute.
    pub(super) fn figures(
        &self,
        live: &[Connection],
        new_last_minute: usize,
        now: Instant,
    ) -> PathFigures {
        let mut totals = self.retired;
        for c in live {
            for (sum, n) in totals.iter_mut().zip(counts(c)) {
                *sum += n;
            }
        }
        // With none live, the last one's as it closed: the link was measured, and a leader
        // whose connections were closed between its turns is not unjudged (a near node of the
        // relay's `eu` run ended with no round trip and no verdict, its 829 streams accepted).
        let srtt = if live.is_empty() {
            self.last_rtt
        } else {
            let sum: Duration = live.iter().map(Connection::rtt).sum();
            Some(sum / live.len() as u32)
        };
        let ago = |t: Option<Instant>| t.map(|t| now.saturating_duration_since(t));
        PathFigures {
            srtt,
            sent_packets: totals[0],
            lost_packets: totals[1],
            congestion_events: totals[2],
            handshake: self.handshake,
            new_last_minute: u32::try_from(new_last_minute).unwrap_or(u32::MAX),
            handshake_timeouts: self.timeouts,
            ignored_ago: ago(self.ignored_at),
            closes: self.closes.iter().map(|(&c, &n)| (c, n)).collect(),
            evicted_ago: ago(self.evicted_at),
            connections: u32::try_from(live.len()).unwrap_or(u32::MAX),
        }
    }
}

/// The figures of peers the transport evicted (idle), by address, as of their eviction: a
/// leader's counts carry on from them when it comes back.
#[derive(Default)]
pub(super) struct Gone(HashMap<SocketAddr, (PathFigures, Instant)>);

impl Gone {
    /// A peer evicted at `now` with `figures`.
    pub(super) fn keep(&mut self, addr: SocketAddr, figures: PathFigures, now: Instant) {
        let merged = match self.0.get(&addr) {
            Some(old) => add(old, figures, now),
            None => figures,
        };
        self.0.insert(addr, (merged, now));
    }

    /// `live`'s figures (the peer's now, if any) added to what was kept of it.
    pub(super) fn with(
        &self,
        addr: SocketAddr,
        live: Option<PathFigures>,
        now: Instant,
    ) -> Option<PathFigures> {
        match (self.0.get(&addr), live) {
            (Some(old), Some(new)) => Some(add(old, new, now)),
            (Some((old, at)), None) => {
                let since = now.saturating_duration_since(*at);
                Some(PathFigures {
                    connections: 0,
                    new_last_minute: 0,
                    ignored_ago: old.ignored_ago.map(|a| a + since),
                    evicted_ago: old.evicted_ago.map(|a| a + since),
                    ..old.clone()
                })
            }
            (None, new) => new,
        }
    }
}

/// A returning peer's figures `new` on top of those kept of it (`old`, as of `old.1`).
fn add(old: &(PathFigures, Instant), new: PathFigures, now: Instant) -> PathFigures {
    let (old, at) = old;
    let since = now.saturating_duration_since(*at);
    let mut closes: BTreeMap<u64, u64> = old.closes.iter().copied().collect();
    for (code, n) in new.closes {
        *closes.entry(code).or_default() += n;
    }
    let older = |a: Option<Duration>| a.map(|a| a + since);
    PathFigures {
        srtt: new.srtt,
        sent_packets: old.sent_packets + new.sent_packets,
        lost_packets: old.lost_packets + new.lost_packets,
        congestion_events: old.congestion_events + new.congestion_events,
        handshake: new.handshake.or(old.handshake),
        new_last_minute: new.new_last_minute,
        handshake_timeouts: old.handshake_timeouts + new.handshake_timeouts,
        ignored_ago: new.ignored_ago.or(older(old.ignored_ago)),
        closes: closes.into_iter().collect(),
        evicted_ago: new.evicted_ago.or(older(old.evicted_ago)),
        connections: new.connections,
    }
}
