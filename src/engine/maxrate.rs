//! `--rate max`: a closed-loop pace, shaped like TCP congestion control for the same reason —
//! probe for capacity without overrunning it for long — and like CUBIC in remembering where
//! the limit was.
//!
//! ```text
//!  pace
//!   │        ceiling (the pace the leaders were seen to take) ─ ─ ─ ─ ─ ─ ─
//!   │          ┌──────plateau (97%)─────┐probe ┐  ┌──────────────
//!   │   double │                        └──────┘cut└ (to 92%)
//!   │  ┌───────┘
//!   └──┴──────────────────────────────────────────────────────── time
//! ```
//!
//! Until a limit is known the pace doubles each period while the sends keep up (slow start),
//! then grows by a quarter. A throttled stream — one whose open waited for stream credit longer
//! than the link explains (a 4.0 leader over our budget refuses nothing: it reads late and
//! withholds credit), or one stopped or closed by the leader — cuts the pace at once, not a
//! period later, which at a doubled pace would be hundreds of streams queued unread at the
//! leader, and the period's end sets the
//! ceiling to what the leaders took (the pace they throttled times the share of the period's
//! streams they accepted).
//! Below the ceiling the pace climbs straight back to a plateau just under it, and probes above
//! it by 1% every fourth quiet period in case the limit moved. An unconfirmed backlog cuts to
//! 70%.
//!
//! Unstaked, the limit is known before the first send: Agave 4.0 gives an unstaked peer 200
//! streams a second, counted in 100 ms windows (`MAX_UNSTAKED_TPS` in `solana-streamer`'s
//! `stream_throttle.rs`). Taking it as the first ceiling keeps slow start from overshooting
//! into the throttle, which cost a third more sends than transactions.

use std::time::Duration;

pub const START_RATE: f64 = 100.0;
const MIN_RATE: f64 = 10.0;
const MAX_RATE: f64 = 50_000.0;
/// Evaluate once per period, so each decision sees the effect of the last one.
pub const PERIOD: Duration = Duration::from_millis(1_000);
/// Unconfirmed transactions tolerated, in seconds of sending at the current rate.
const BACKLOG_SECS: f64 = 3.0;
/// Streams per second a leader takes from an unstaked peer (Agave 4.0).
pub const UNSTAKED_BUDGET: f64 = 200.0;
/// The plateau's share of the ceiling: an even pace this far under it keeps every 100 ms window
/// of the server's count under its share, timer jitter included.
pub(super) const PLATEAU: f64 = 0.97;
/// Where the pace goes after a throttled period, as a share of the new ceiling.
const AFTER_THROTTLE: f64 = 0.92;
/// The immediate cut on a throttled stream, as a share of the pace it was sent at.
const CUT: f64 = 0.85;
/// At the plateau the pace rises this share of the ceiling after [`PROBE_AFTER`] quiet periods:
/// each probe that finds the limit costs a few streams read late and a cut.
const PROBE: f64 = 0.01;
const PROBE_AFTER: u32 = 4;

pub struct MaxRate {
    rate: f64,
    /// The pace the leaders were last seen to take; `None` until a limit shows (or is known).
    ceiling: Option<f64>,
    /// Doubling until the first sign of a limit, as TCP's slow start: a healthy staked path
    /// reaches its capacity in a few seconds instead of creeping up for tens of them.
    slow_start: bool,
    /// Streams answered this period, and how many of them were throttled.
    answered: u64,
    throttled: u64,
    /// The pace when this period's first throttled stream came back (and cut it at once).
    throttled_at: Option<f64>,
    /// Quiet periods spent at the plateau or above it since the last probe.
    quiet: u32,
}

impl Default for MaxRate {
    fn default() -> Self {
        Self {
            rate: START_RATE,
            ceiling: None,
            slow_start: true,
            answered: 0,
            throttled: 0,
            throttled_at: None,
            quiet: 0,
        }
    }
}

impl MaxRate {
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// A limit known before any sign of it (unstaked: [`UNSTAKED_BUDGET`]); ignored once a
    /// ceiling has been seen.
    pub fn assume_ceiling(&mut self, limit: f64) {
        if self.ceiling.is_none() {
            self.ceiling = Some(limit);
            self.rate = self.rate.min(limit * PLATEAU);
        }
    }

    /// One stream's answer. The first throttled one of a period cuts the pace at once and
    /// returns it, for the pacer.
    pub fn on_stream(&mut self, throttled: bool) -> Option<f64> {
        self.answered += 1;
        if !throttled {
            return None;
        }
        self.throttled += 1;
        if self.throttled_at.is_some() {
            return None;
        }
        self.throttled_at = Some(self.rate);
        self.slow_start = false;
        let limit = self.ceiling.map_or(self.rate, |c| c.min(self.rate));
        self.ceiling = Some(limit);
        self.rate = (limit * CUT).clamp(MIN_RATE, MAX_RATE);
        Some(self.rate)
    }

    /// One period's verdict: `unconfirmed` is sent-but-not-final; `achieved` the send rate
    /// actually reached (when the pacer cannot keep up, raising the target is pointless).
    pub fn evaluate(&mut self, unconfirmed: u64, achieved: f64) -> f64 {
        let backlog_limit = (self.rate * BACKLOG_SECS).max(200.0);
        if let Some(at) = self.throttled_at {
            // What the leaders took of the pace we were throttled at: their limit, as one
            // period tells it (the achieved pace is lower by the cut that followed). Should the
            // pacer have fallen short of that pace, this overestimates, and the next periods'
            // throttling brings it down.
            let accepted = 1.0 - self.throttled as f64 / self.answered.max(1) as f64;
            let took = at * accepted;
            if took >= MIN_RATE {
                self.ceiling = Some(took);
            }
            let ceiling = self.ceiling.unwrap_or(self.rate);
            self.rate = ceiling * AFTER_THROTTLE;
        } else if unconfirmed as f64 > backlog_limit {
            self.rate *= 0.7;
            self.slow_start = false;
        } else if achieved >= self.rate * 0.9 {
            self.rate = match self.ceiling {
                None if self.slow_start => self.rate * 2.0,
                None => self.rate + (self.rate * 0.25).max(20.0),
                Some(c) if self.rate < c * PLATEAU => (self.rate * 2.0).min(c * PLATEAU),
                Some(c) => {
                    self.quiet += 1;
                    if self.quiet >= PROBE_AFTER {
                        self.quiet = 0;
                        self.rate + c * PROBE
                    } else {
                        self.rate
                    }
                }
            };
        }
        self.answered = 0;
        self.throttled = 0;
        self.throttled_at = None;
        self.rate = self.rate.clamp(MIN_RATE, MAX_RATE);
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn doubles_until_a_limit_then_holds_under_it() {
        let mut m = MaxRate::default();
        assert_eq!(m.evaluate(0, 100.0), 200.0, "slow start doubles");
        assert_eq!(m.evaluate(0, 100.0), 200.0, "no raise while the pacer lags");
        assert_eq!(m.evaluate(0, 200.0), 400.0);
        // At 400 the leader takes half: the first throttled stream cuts at once, once.
        assert_eq!(m.on_stream(false), None);
        assert_eq!(m.on_stream(true), Some(340.0));
        assert_eq!(m.on_stream(true), None);
        m.on_stream(false);
        // Half of the period's streams accepted at 400 achieved: the ceiling is 200.
        assert!(close(m.evaluate(0, 400.0), 200.0 * AFTER_THROTTLE));
        // Back up to the plateau in one quiet period, then a 1% probe every fourth one.
        assert!(close(m.evaluate(0, 184.0), 194.0));
        for _ in 1..PROBE_AFTER {
            assert!(close(m.evaluate(0, 194.0), 194.0));
        }
        assert!(close(m.evaluate(0, 194.0), 196.0));
        assert!(close(m.evaluate(10_000, 196.0), 196.0 * 0.7), "backlog");
        for _ in 0..20 {
            m.evaluate(10_000, 0.0);
        }
        assert_eq!(m.rate(), MIN_RATE);
    }

    #[test]
    fn a_known_budget_stops_slow_start_under_it() {
        let mut m = MaxRate::default();
        m.assume_ceiling(UNSTAKED_BUDGET);
        assert!(
            close(m.evaluate(0, 100.0), 194.0),
            "straight to the plateau"
        );
        for _ in 0..PROBE_AFTER {
            m.evaluate(0, 194.0);
        }
        assert!(close(m.rate(), 196.0));
        // A seen limit is not overridden by an assumed one.
        m.on_stream(true);
        m.evaluate(0, 196.0);
        m.assume_ceiling(1_000.0);
        assert!(close(m.rate(), 196.0 * AFTER_THROTTLE), "{}", m.rate());
    }

    #[test]
    fn no_throttling_no_ceiling() {
        let mut m = MaxRate::default();
        for _ in 0..5 {
            let r = m.rate();
            m.evaluate(0, r);
        }
        assert_eq!(m.rate(), 3_200.0);
    }
}
