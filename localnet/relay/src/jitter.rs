//! How far each datagram's delay strays from the link's fixed one-way delay.
//!
//! Two kinds, because they do different things to a QUIC connection:
//! - **independent**: every datagram draws its own offset, uniform within ±amplitude; datagrams
//!   closer together than the spread overtake each other (reordering);
//! - **queueing**: the offset is one slowly varying value, as a router's queue fills and drains:
//!   it moves in straight lines between random levels within ±amplitude, one every
//!   [`QUEUE_PERIOD`], so it changes by at most 2·amplitude per period — far slower than time
//!   passes, so a later datagram is never delivered before an earlier one.

use std::time::{Duration, Instant};

use rand::{Rng, rngs::StdRng};

/// How long the queueing delay takes to move from one level to the next.
pub const QUEUE_PERIOD: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub enum Jitter {
    None,
    Independent {
        amplitude: f64,
    },
    Queueing {
        amplitude: f64,
        /// The current segment: offsets (seconds) at its start and end, and when it started.
        from: f64,
        to: f64,
        start: Instant,
    },
}

impl Jitter {
    /// `amplitude` is the largest offset either way; `reorder` picks independent jitter.
    pub fn new(amplitude: Duration, reorder: bool, now: Instant, rng: &mut StdRng) -> Self {
        let amplitude = amplitude.as_secs_f64();
        if amplitude == 0.0 {
            Jitter::None
        } else if reorder {
            Jitter::Independent { amplitude }
        } else {
            Jitter::Queueing {
                amplitude,
                from: level(amplitude, rng),
                to: level(amplitude, rng),
                start: now,
            }
        }
    }

    /// The offset (seconds, either sign) for a datagram that enters the link at `now`.
    pub fn offset(&mut self, now: Instant, rng: &mut StdRng) -> f64 {
        match self {
            Jitter::None => 0.0,
            Jitter::Independent { amplitude } => level(*amplitude, rng),
            Jitter::Queueing {
                amplitude,
                from,
                to,
                start,
            } => {
                let mut elapsed = now.saturating_duration_since(*start);
                if elapsed >= 2 * QUEUE_PERIOD {
                    // Idle for a while: begin a new segment from where the last one ended.
                    *from = *to;
                    *to = level(*amplitude, rng);
                    *start = now;
                    elapsed = Duration::ZERO;
                }
                while elapsed >= QUEUE_PERIOD {
                    *from = *to;
                    *to = level(*amplitude, rng);
                    *start += QUEUE_PERIOD;
                    elapsed -= QUEUE_PERIOD;
                }
                let t = elapsed.as_secs_f64() / QUEUE_PERIOD.as_secs_f64();
                *from + (*to - *from) * t
            }
        }
    }
}

fn level(amplitude: f64, rng: &mut StdRng) -> f64 {
    rng.random_range(-amplitude..=amplitude)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn queueing_jitter_moves_slower_than_time_and_stays_in_range() {
        let mut rng = StdRng::seed_from_u64(3);
        let t0 = Instant::now();
        let amplitude = Duration::from_millis(15);
        let mut jitter = Jitter::new(amplitude, false, t0, &mut rng);
        let mut last: Option<f64> = None;
        let (mut low, mut high) = (f64::MAX, f64::MIN);
        for ms in 0..20_000u64 {
            let now = t0 + Duration::from_millis(ms);
            let offset = jitter.offset(now, &mut rng);
            assert!(offset.abs() <= amplitude.as_secs_f64() + 1e-9);
            if let Some(previous) = last {
                // One millisecond later, the offset moved by far less than a millisecond.
                assert!((offset - previous).abs() < 0.1e-3, "jumped at {ms} ms");
            }
            last = Some(offset);
            low = low.min(offset);
            high = high.max(offset);
        }
        // Over 40 segments it visits most of its range.
        assert!(high - low > 1.5 * amplitude.as_secs_f64(), "{low}..{high}");
    }

    #[test]
    fn independent_jitter_draws_anew_for_each_datagram() {
        let mut rng = StdRng::seed_from_u64(3);
        let now = Instant::now();
        let mut jitter = Jitter::new(Duration::from_millis(10), true, now, &mut rng);
        let offsets: Vec<f64> = (0..1000).map(|_| jitter.offset(now, &mut rng)).collect();
        let mean = offsets.iter().sum::<f64>() / 1000.0;
        assert!(mean.abs() < 1e-3, "mean {mean}");
        assert!(offsets.iter().all(|o| o.abs() <= 0.010));
        assert!(offsets.windows(2).filter(|w| w[0] > w[1]).count() > 300);
    }
}
