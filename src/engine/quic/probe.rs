//! Tail-loss probes: on a connection of a lossy pool, a stream written with nothing written
//! after it is followed by two small ack-eliciting packets, so that a loss of its datagram is
//! found from their acknowledgment, as QUIC finds a loss followed by other traffic.
//!
//! QUIC declares a datagram lost once one sent after it is acknowledged and it is 9/8 of a
//! round trip old (RFC 9002 §6.1). The last datagram a connection sends has nothing after it:
//! its loss is found only by the probe timeout, the smoothed round trip plus four times its
//! variation — on the relay's `hostile` link (320 ms, jitter, bursts of loss) 0.7–1.2 s in
//! quinn's own figures. On a lossy pool every connection's stream run (`runs`) ends that way,
//! the run's last streams held past their leader's turn: in `txpace-bench wan`'s `hostile`
//! runs the transactions that ended the run took 1.3–1.9 s to land where the median took 0.7.
//!
//! quinn gives an application no PING, and a stream would count against the leader's budget.
//! The cheapest ack-eliciting frame it lets an application cause is MAX_DATA: the leader never
//! sends us data, and raising our receive window by one byte makes quinn send one
//! ([`Probe::send`]; raising the peer's stream limits would send MAX_STREAMS, but quinn only
//! announces those past an eighth of the limit, and allocates for each). Two, at the
//! [`PROBE_AFTER`] moments after the stream's hand-off, since a burst of loss that took the
//! stream may take the first.
//!
//! Measured by `wan_tests::through_bursts_of_loss_the_pool_spreads_and_every_stream_is_accepted`
//! (320 ms, 5% lost in bursts of 4, 1,000 streams at 100/s, a server reading as a 4.0 leader),
//! four runs each way: the streams' p99 time to the server's acknowledgment 772–844 ms with
//! the probes, 976–1,035 ms without (the median 332 ms both ways). The streams the server
//! delayed for its budget were 13–25 with them and 8–15 without: a repair that comes sooner
//! releases the streams it held nearer the pace's own.
//! Clean links carry no probes: the pool is not lossy there.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use quinn::{Connection, VarInt};

/// When the probes go after a stream that nothing followed: the first past the datagrams one
/// wake-up sends together, the second past a burst of the relay's `hostile` losses (four
/// datagrams on average, tens of milliseconds of our traffic).
pub(super) const PROBE_AFTER: [Duration; 2] =
    [Duration::from_millis(30), Duration::from_millis(100)];

/// The receive window a connection starts with (quinn's default is unbounded, which cannot be
/// raised): a leader sends us no stream data, so any size is never reached.
pub(super) const RECEIVE_WINDOW: u32 = 1 << 20;

/// A connection's writes and receive window, for its probes.
#[derive(Debug)]
pub(super) struct Probe {
    /// Streams written on it so far.
    writes: AtomicU64,
    /// Its receive window as last set.
    window: AtomicU64,
}

impl Default for Probe {
    fn default() -> Self {
        Self {
            writes: AtomicU64::new(0),
            window: AtomicU64::new(u64::from(RECEIVE_WINDOW)),
        }
    }
}

impl Probe {
    /// A stream was written: returns its mark, for [`Probe::followed`].
    pub(super) fn wrote(&self) -> u64 {
        self.writes.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether a stream was written after the one marked `mark`.
    pub(super) fn followed(&self, mark: u64) -> bool {
        self.writes.load(Ordering::SeqCst) > mark
    }

    /// Makes `conn` send an ack-eliciting MAX_DATA frame now.
    pub(super) fn send(&self, conn: &Connection) {
        let window = self.window.fetch_add(1, Ordering::SeqCst) + 1;
        conn.set_receive_window(VarInt::from_u64(window).unwrap_or(VarInt::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_followed_only_by_a_later_one() {
        let p = Probe::default();
        let first = p.wrote();
        assert!(!p.followed(first));
        let second = p.wrote();
        assert!(p.followed(first));
        assert!(!p.followed(second));
    }
}
