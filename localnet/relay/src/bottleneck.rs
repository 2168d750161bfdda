//! A bandwidth cap with a tail-drop queue: the slowest hop of a path.
//!
//! The link sends one datagram at a time at `rate`; a datagram that arrives while the link is
//! busy waits behind the ones already queued, and one that would take the queue past its limit
//! is dropped (tail drop). The queue is not kept as a list: the time at which the link finishes
//! what it holds says how many bytes are still waiting (`rate × (busy_until − now)`).

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Bottleneck {
    /// Bits per second.
    rate: u64,
    limit: u64,
    busy_until: Option<Instant>,
}

const NANOS: u128 = 1_000_000_000;

impl Bottleneck {
    /// `rate` in bits per second (above 0), `limit` in bytes.
    pub fn new(rate: u64, limit: u64) -> Self {
        Bottleneck {
            rate: rate.max(1),
            limit,
            busy_until: None,
        }
    }

    /// When a datagram of `len` bytes arriving at `now` has left the link, or `None` when the
    /// queue has no room for it (the queue is then unchanged). Integer arithmetic, so a queue
    /// of exactly ten datagrams takes ten.
    pub fn admit(&mut self, now: Instant, len: usize) -> Option<Instant> {
        let start = self.busy_until.filter(|&t| t > now).unwrap_or(now);
        let waiting = (start - now).as_nanos() * u128::from(self.rate) / (8 * NANOS);
        if waiting + len as u128 > u128::from(self.limit) {
            return None;
        }
        let send = (len as u128 * 8 * NANOS).div_ceil(u128::from(self.rate));
        let done = start + Duration::from_nanos(u64::try_from(send).unwrap_or(u64::MAX));
        self.busy_until = Some(done);
        Some(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_fills_the_queue_and_the_rest_is_dropped() {
        let now = Instant::now();
        // 1 Mbit/s: a 1000-byte datagram takes 8 ms; 10 fit in the queue.
        let mut link = Bottleneck::new(1_000_000, 10_000);
        let done: Vec<Option<Instant>> = (0..15).map(|_| link.admit(now, 1000)).collect();
        assert!(done[..10].iter().all(Option::is_some));
        assert!(done[10..].iter().all(Option::is_none));
        assert_eq!(done[9], Some(now + Duration::from_millis(80)));
        // 8 ms later one datagram has left: room for exactly one more.
        let later = now + Duration::from_millis(8);
        assert_eq!(
            link.admit(later, 1000),
            Some(now + Duration::from_millis(88))
        );
        assert_eq!(link.admit(later, 1000), None);
    }
}
