//! The one pacer every send goes through — first sends and resends alike — so the wire sees a
//! steady stream at the target rate (up to twice it while owed time is made up) and never a
//! burst of retries.
//!
//! Deadlines are absolute (`next += interval`), so timer lateness does not drift the average
//! rate; but credit is capped at [`MAX_LAG`] worth of sends, so an idle or paused pacer never
//! "saves up" and then bursts.
//!
//! The one exception is time the pace lost: sends due while no leader would take them (an
//! outage: frozen, unreachable, or a far leader's first handshake, [`Pacer::owe_after`]) and
//! the places resends took from first sends ([`Pacer::owe_place`]). (Copies for a leader change
//! go beside the pace, and through it only when nothing is made up: `dispatch::copies`.) That
//! time is *owed* and made up afterwards at a faster pace ([`Pacer::set_catch_up`]) rather than
//! added to the run's length — stepped up, never a burst. Time owed with [`Pacer::owe_after`] waits until the moment the caller names (the
//! streams a leader kept waiting go to it first) while what is owed already goes on being made
//! up. Without that, a 10 s freeze cost a paced run 10 s more than a client that sends blindly
//! into the frozen leader and lets its buffers drain when the leader is back.

use std::time::Duration;

use tokio::time::Instant;

/// How far behind schedule the pacer may fall and still make up the missed sends. On a busy
/// machine (a local validator shares the cores) the engine task is descheduled for tens of
/// milliseconds now and then; forgetting those sends cost 3% of the pace at 100 tx/s. Longer
/// gaps (an idle queue, a pause) are forgotten so they never turn into a burst.
const MAX_LAG: Duration = Duration::from_millis(50);

/// The most time owed at once: a blockhash lives about a minute, so an outage longer than
/// this has expired what it held up anyway.
const MAX_OWED: Duration = Duration::from_secs(60);

pub struct Pacer {
    interval: Duration,
    next: Instant,
    /// Owed time being made up (see the module doc).
    owed: Duration,
    /// Owed time not to be made up before `pending_from`, and that moment.
    pending: Duration,
    pending_from: Option<Instant>,
    /// How much faster than the pace owed time is made up (1: not at all).
    catch_up: f64,
}

impl Pacer {
    pub fn new(rate: f64, now: Instant) -> Self {
        Self {
            interval: interval_of(rate),
            next: now,
            owed: Duration::ZERO,
            pending: Duration::ZERO,
            pending_from: None,
            catch_up: 1.0,
        }
    }

    /// The pace asked for.
    pub fn rate(&self) -> f64 {
        1.0 / self.interval.as_secs_f64()
    }

    /// The pace sends go at now: faster than [`Pacer::rate`] while owed time is made up.
    pub fn pacing(&self, now: Instant) -> f64 {
        if self.catching_up(now) {
            self.rate() * self.catch_up
        } else {
            self.rate()
        }
    }

    /// Sends still owed (being made up, or waiting to be), at the pace asked for.
    pub fn owed_sends(&self) -> u64 {
        if self.catch_up > 1.0 {
            ((self.owed + self.pending).as_secs_f64() * self.rate()).ceil() as u64
        } else {
            0
        }
    }

    /// How far behind schedule sends may fall and still go out at once when they can (see
    /// [`MAX_LAG`]): a hold no longer than this needs nothing owed.
    pub fn slack(&self) -> Duration {
        MAX_LAG.max(self.interval * 2)
    }

    /// Owes `held`, made up from now on.
    fn owe(&mut self, held: Duration) {
        self.owed = (self.owed + held).min(MAX_OWED);
    }

    /// Owes the place a send took from the pace that was not the pace's to spend (a resend),
    /// made up from now on.
    pub fn owe_place(&mut self) {
        self.owe(self.interval);
    }

    /// Owes `held` (sends were due while no leader would take them), made up from `from` on and
    /// not before. What is being made up already goes on; time still pending from an earlier
    /// call waits for the later of the two moments.
    pub fn owe_after(&mut self, held: Duration, from: Instant) {
        self.pending = (self.pending + held).min(MAX_OWED);
        self.pending_from = Some(self.pending_from.map_or(from, |f| f.max(from)));
    }

    /// Owes no more than `sends` at the pace asked for: what is left to send.
    pub fn cap_owed(&mut self, sends: usize) {
        let sends = u32::try_from(sends).unwrap_or(u32::MAX);
        let cap = self.interval.saturating_mul(sends);
        self.owed = self.owed.min(cap);
        self.pending = self.pending.min(cap - self.owed);
    }

    /// How much faster than the pace owed time is made up; 1 or less forgets what is owed.
    pub fn set_catch_up(&mut self, factor: f64) {
        self.catch_up = if factor.is_finite() { factor } else { 1.0 };
        if self.catch_up <= 1.0 {
            self.catch_up = 1.0;
            self.forgive();
        }
    }

    /// Forgets what is owed: the leaders said they take no more (a throttled stream).
    pub fn forgive(&mut self) {
        self.owed = Duration::ZERO;
        self.pending = Duration::ZERO;
        self.pending_from = None;
    }

    /// Whether the pace is above the one asked for at `now`, making up owed time.
    pub fn catching_up(&self, now: Instant) -> bool {
        self.catch_up > 1.0
            && (!self.owed.is_zero() || (!self.pending.is_zero() && self.pending_due(now)))
    }

    /// Whether the moment pending time waits for has come.
    fn pending_due(&self, now: Instant) -> bool {
        self.pending_from.is_some_and(|f| now >= f)
    }

    /// Moves what is pending to what is made up once its moment has come.
    fn settle(&mut self, now: Instant) {
        if self.pending_due(now) {
            let pending = std::mem::take(&mut self.pending);
            self.owe(pending);
            self.pending_from = None;
        }
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
        self.settle(now);
        let lag = self.slack();
        let base = if now.saturating_duration_since(self.next) > lag {
            now
        } else {
            self.next
        };
        let step = if self.catching_up(now) {
            // Each send a step early repays the rest of an interval of the owed time.
            let step = self.interval.div_f64(self.catch_up);
            self.owed = self.owed.saturating_sub(self.interval - step);
            step
        } else {
            self.interval
        };
        self.next = base + step;
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

    #[tokio::test(start_paused = true)]
    async fn owed_time_is_made_up_at_the_catch_up_pace_then_the_pace_resumes() {
        let start = Instant::now();
        let mut p = Pacer::new(100.0, start);
        p.set_catch_up(2.0);
        p.owe(Duration::from_secs(2));
        assert_eq!(p.owed_sends(), 200);
        assert_eq!(p.pacing(start), 200.0);
        // Every send on time: 2 s of owed time at twice the pace takes 2 s and 400 sends,
        // 200 on the pace and the 200 owed, never two in one 5 ms step.
        let mut sent = 0;
        let mut at = start;
        while p.owed_sends() > 0 {
            assert!(p.next_at() >= at);
            at = p.next_at();
            p.consume(at);
            sent += 1;
        }
        assert_eq!(sent, 400);
        assert_eq!(at - start, Duration::from_millis(1_995));
        assert_eq!(p.pacing(at), 100.0);
        p.consume(p.next_at());
        assert_eq!(
            p.next_at() - at,
            Duration::from_millis(15),
            "one catch-up step, then the pace"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn owed_after_a_moment_is_made_up_from_then_and_not_before() {
        let start = Instant::now();
        let mut p = Pacer::new(100.0, start);
        p.set_catch_up(2.0);
        let from = start + Duration::from_millis(500);
        p.owe_after(Duration::from_millis(200), from);
        p.owe_after(
            Duration::from_millis(10),
            start + Duration::from_millis(100),
        );
        assert_eq!(p.owed_sends(), 21, "the hold's 20 and one send's 10 ms");
        assert_eq!(p.pacing(start), 100.0, "not before the later moment");
        // At the pace until then: 50 sends in 500 ms.
        let mut at = start;
        while at < from {
            p.consume(at);
            at = p.next_at();
        }
        assert_eq!(at, from);
        assert_eq!(p.owed_sends(), 21);
        assert_eq!(p.pacing(at), 200.0);
        p.consume(at);
        assert_eq!(
            p.next_at() - at,
            Duration::from_millis(5),
            "made up from then"
        );
    }

    /// Time owed for later does not hold back what is owed already: that goes on being made
    /// up, and the later time joins it at its moment.
    #[tokio::test(start_paused = true)]
    async fn what_is_owed_for_later_does_not_hold_back_what_is_owed_now() {
        let start = Instant::now();
        let mut p = Pacer::new(100.0, start);
        p.set_catch_up(2.0);
        p.owe(Duration::from_millis(100));
        p.owe_after(Duration::from_millis(10), start + Duration::from_secs(1));
        assert_eq!(p.owed_sends(), 11);
        assert_eq!(p.pacing(start), 200.0, "the 100 ms owed now");
        p.consume(start);
        assert_eq!(p.next_at() - start, Duration::from_millis(5));
        p.forgive();
        assert_eq!(p.owed_sends(), 0, "forgiving forgets both");
        assert_eq!(p.pacing(start + Duration::from_secs(2)), 100.0);
    }

    #[test]
    fn no_catch_up_forgets_what_is_owed() {
        let now = Instant::now();
        let mut p = Pacer::new(100.0, now);
        p.owe(Duration::from_secs(3));
        assert_eq!(p.owed_sends(), 0, "catch-up is off until set");
        p.set_catch_up(2.0);
        assert_eq!(p.owed_sends(), 300);
        p.set_catch_up(f64::NAN);
        assert_eq!(p.owed_sends(), 0);
        p.set_catch_up(2.0);
        assert_eq!(p.owed_sends(), 0, "forgotten, not held back");
        p.owe(Duration::from_secs(600));
        assert_eq!(p.owed_sends(), 6_000, "at most a minute is owed");
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
