//! The one pacer every send goes through — first sends and resends alike — so the wire sees a
//! steady stream at the target rate and never a burst of retries.
//!
//! Deadlines are absolute (`next += interval`), so timer lateness does not drift the average
//! rate; but credit is capped at [`MAX_LAG`] worth of sends, so an idle or paused pacer never
//! "saves up" and then bursts.

use std::time::Duration;

use tokio::time::Instant;

/// How far behind schedule the pacer may fall and still make up the missed sends. On a busy
/// machine (a local validator shares the cores) the engine task is descheduled for tens of
/// milliseconds now and then; forgetting those sends cost 3% of the pace at 100 tx/s. Longer
/// gaps (an idle queue, a pause) are forgotten so they never turn into a burst.
const MAX_LAG: Duration = Duration::from_millis(50);

pub struct Pacer {
    interval: Duration,
    next: Instant,
}

impl Pacer {
    pub fn new(rate: f64, now: Instant) -> Self {
        Self {
            interval: interval_of(rate),
            next: now,
        }
    }

    pub fn rate(&self) -> f64 {
        1.0 / self.interval.as_secs_f64()
    }

    /// Changes the pace; a faster pace takes effect at once, not after the old interval.
    pub fn set_rate(&mut self, rate: f64, now: Instant) {
        self.interval = interval_of(rate);
        if self.next > now + self.interval {
            self.next = now + self.interval;
        }
    }

    /// When the next send may go out.
    pub fn next_at(&self) -> Instant {
        self.next
    }

    /// Takes the send slot at `now` (call only when `now >= next_at()`).
    pub fn consume(&mut self, now: Instant) {
        let lag = MAX_LAG.max(self.interval * 2);
        let base = if now.saturating_duration_since(self.next) > lag {
            now
        } else {
            self.next
        };
        self.next = base + self.interval;
    }

    /// After a pause or an idle spell, start from now rather than from a stale deadline.
    pub fn restart(&mut self, now: Instant) {
        if self.next < now {
            self.next = now;
        }
    }
}

fn interval_of(rate: f64) -> Duration {
    let rate = if rate.is_finite() {
        rate.clamp(1.0, 1_000_000.0)
    } else {
        1.0
    };
    Duration::from_secs_f64(1.0 / rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn holds_rate_exactly_under_a_late_timer() {
        let start = Instant::now();
        let mut p = Pacer::new(1000.0, start);
        let mut sent = 0;
        let end = start + Duration::from_secs(10);
        while p.next_at() < end {
            // Wake up to 1 ms late, as tokio's timer does.
            tokio::time::sleep_until(p.next_at() + Duration::from_micros(700)).await;
            let now = Instant::now();
            while p.next_at() <= now && p.next_at() < end {
                p.consume(now);
                sent += 1;
            }
        }
        assert_eq!(sent, 10_000);
    }

    #[tokio::test(start_paused = true)]
    async fn short_stalls_are_made_up_long_gaps_are_not() {
        let start = Instant::now();
        let mut p = Pacer::new(100.0, start);
        p.consume(start);
        // Descheduled for 40 ms: the 4 missed sends go out now, then the pace resumes.
        let now = start + Duration::from_millis(40);
        let mut caught_up = 0;
        while p.next_at() <= now {
            p.consume(now);
            caught_up += 1;
        }
        assert_eq!(caught_up, 4);
        assert_eq!(p.next_at(), start + Duration::from_millis(50));
    }

    #[tokio::test(start_paused = true)]
    async fn idle_time_is_not_saved_up() {
        let start = Instant::now();
        let mut p = Pacer::new(100.0, start);
        p.consume(start);
        tokio::time::advance(Duration::from_secs(2)).await;
        let now = Instant::now();
        let mut burst = 0;
        while p.next_at() <= now {
            p.consume(now);
            burst += 1;
        }
        assert_eq!(burst, 1);
        assert_eq!(p.next_at(), now + Duration::from_millis(10));
    }

    #[test]
    fn rate_is_clamped() {
        let now = Instant::now();
        assert_eq!(Pacer::new(0.0, now).rate(), 1.0);
        assert_eq!(Pacer::new(f64::NAN, now).rate(), 1.0);
        let mut p = Pacer::new(1.0, now);
        p.consume(now);
        p.set_rate(100.0, now);
        assert_eq!(p.next_at(), now + Duration::from_millis(10));
    }
}
