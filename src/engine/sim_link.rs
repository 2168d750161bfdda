//! Link conditions for the simulated cluster, per leader address: a round trip, random loss
//! each way, and a window of streams a sender may have on the link at once.
//!
//! Without them the simulator answers every stream 2 ms after it is sent — loopback, where
//! the engine's time rules were tuned and where none of them can misfire. On a [`SimLink`] a
//! stream:
//!
//! 1. waits, before it is handed to the wire, until fewer than `window` of our streams are in
//!    flight on the link: the sender's own congestion window — a wait on our side, which the
//!    engine must not hold against the leader (stream credit, the leader's say, is modelled by
//!    the leader itself: `sim::leader`);
//! 2. reaches the leader half a round trip after its hand-off, plus one repair for each time
//!    its datagram is lost;
//! 3. is answered half a round trip later, plus one repair for each lost acknowledgement.
//!
//! A repair is 9/8 of the round trip: QUIC declares a datagram lost once it is that much
//! older than one acknowledged after it (RFC 9002 §6.1.2, the time threshold), and its
//! retransmission then takes the path again. Each attempt is lost with probability `loss`,
//! drawn from a generator seeded per link, so a run is deterministic.
//!
//! Loss can also come in bursts (`burst`), as on a congested or flapping route: the link is
//! then dark both ways for `burst` at a time, often enough that `loss` of the time is dark,
//! and a datagram is lost exactly when it is sent in the dark. Nothing being acknowledged
//! then, QUIC repairs on its probe timer, which doubles at each probe lost in a row.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::{sync::Notify, time::Instant};

use super::net::PathFigures;

/// Conditions of one simulated link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimLink {
    pub rtt: Duration,
    /// Probability that a datagram is lost, each way, each attempt.
    pub loss: f64,
    /// Streams of ours in flight on the link at most; the rest wait before their hand-off.
    pub window: Option<u32>,
    /// Loss in dark spells of this length rather than datagram by datagram.
    pub burst: Option<Duration>,
}

impl SimLink {
    /// A link of `rtt_ms` round trip losing `loss` each way, with no window of its own.
    pub fn new(rtt_ms: u64, loss: f64) -> Self {
        Self {
            rtt: Duration::from_millis(rtt_ms),
            loss,
            window: None,
            burst: None,
        }
    }

    /// The same link, its loss in dark spells of `burst` each.
    pub fn in_bursts(self, burst: Duration) -> Self {
        Self {
            burst: Some(burst),
            ..self
        }
    }

    /// The same link, carrying at most `streams` of ours at once.
    pub fn with_window(self, streams: u32) -> Self {
        Self {
            window: Some(streams),
            ..self
        }
    }
}

/// A link while the simulation runs: its conditions, its random draws and our streams on it.
pub(super) struct LinkModel {
    link: SimLink,
    /// When the link's dark spells are counted from.
    origin: Instant,
    rng: Mutex<u64>,
    in_flight: AtomicU32,
    room: Notify,
    /// Our datagrams sent on it and lost (the streams' and their repairs', our way only: what
    /// a QUIC sender counts lost), for its path figures.
    sent: AtomicU64,
    lost: AtomicU64,
}

/// A stream's place in the link's window, given back when it drops.
pub(super) struct Place(Arc<LinkModel>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.room.notify_waiters();
    }
}

impl LinkModel {
    pub(super) fn new(link: SimLink, seed: u64) -> Arc<Self> {
        Arc::new(Self {
            link,
            origin: Instant::now(),
            rng: Mutex::new(seed),
            in_flight: AtomicU32::new(0),
            room: Notify::new(),
            sent: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        })
    }

    /// The link's round trip without loss.
    pub(super) fn rtt(&self) -> Duration {
        self.link.rtt
    }

    /// Waits for a place in the window (at once without one).
    pub(super) async fn enter(self: &Arc<Self>) -> Place {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let limit = self.link.window.unwrap_or(u32::MAX);
            let taken = self
                .in_flight
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                    (n < limit).then_some(n + 1)
                });
            if taken.is_ok() {
                return Place(self.clone());
            }
            notified.await;
        }
    }

    /// How long a stream handed off now takes to reach the leader, and its answer to come
    /// back.
    pub(super) fn draw(&self) -> (Duration, Duration) {
        let half = self.link.rtt / 2;
        let repair = self.link.rtt * 9 / 8;
        if let Some(burst) = self.link.burst {
            let now = Instant::now();
            let (wait, lost) = self.through(now, burst, repair);
            self.count(lost);
            let there = wait + half;
            let back = self.through(now + there, burst, repair).0 + half;
            return (there, back);
        }
        let lost = self.losses();
        self.count(lost);
        (half + repair * lost, half + repair * self.losses())
    }

    /// One stream's datagram went out, and was lost `lost` times on the way.
    fn count(&self, lost: u32) {
        self.sent.fetch_add(1 + u64::from(lost), Ordering::SeqCst);
        self.lost.fetch_add(u64::from(lost), Ordering::SeqCst);
    }

    /// The link as a QUIC sender would have measured it: its round trip (a repaired loss is a
    /// new datagram, so it adds no RTT sample), and the datagrams sent and lost our way.
    pub(super) fn figures(&self) -> PathFigures {
        PathFigures {
            srtt: Some(self.link.rtt),
            sent_packets: self.sent.load(Ordering::SeqCst),
            lost_packets: self.lost.load(Ordering::SeqCst),
            connections: 1,
            ..PathFigures::default()
        }
    }

    /// How long after `at` a datagram first sent then leaves outside a dark spell: each probe
    /// lost in the dark waits twice as long as the one before.
    /// Returns the wait and the probes lost in it.
    fn through(&self, at: Instant, burst: Duration, repair: Duration) -> (Duration, u32) {
        let mut sent = at;
        let mut wait = repair;
        let mut lost = 0;
        for _ in 0..16 {
            if !self.dark(sent, burst) {
                break;
            }
            sent += wait;
            wait *= 2;
            lost += 1;
        }
        (sent - at, lost)
    }

    /// Whether `at` falls in a dark spell: `burst` of every `burst / loss`, the first one
    /// halfway through the first period (not at the start, where nothing is sent yet).
    fn dark(&self, at: Instant, burst: Duration) -> bool {
        if self.link.loss <= 0.0 {
            return false;
        }
        let period = burst.div_f64(self.link.loss).as_nanos().max(1);
        let since = at.saturating_duration_since(self.origin).as_nanos() + period / 2;
        since % period < burst.as_nanos()
    }

    /// How many attempts in a row are lost before one gets through.
    fn losses(&self) -> u32 {
        let mut n = 0;
        while n < 16 && self.uniform() < self.link.loss {
            n += 1;
        }
        n
    }

    /// A uniform draw in [0, 1) (splitmix64).
    fn uniform(&self) -> f64 {
        let mut state = match self.rng.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod ahead;
#[cfg(test)]
mod fanout;
#[cfg(test)]
mod handover;
#[cfg(test)]
mod start;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod verdicts;
