//! `--rate max`: a closed-loop pace, shaped like TCP congestion control for the same reason —
//! probe for capacity without overrunning it for long. Each period: while leaders accept our
//! streams and the pace is reached, double (slow start, until the first sign of a limit) and
//! then grow by a quarter (at least 20 tx/s); on throttling or a growing unconfirmed backlog,
//! cut to 70%.

use std::time::Duration;

pub const START_RATE: f64 = 100.0;
const MIN_RATE: f64 = 10.0;
const MAX_RATE: f64 = 50_000.0;
/// Evaluate once per period, so each decision sees the effect of the last one.
pub const PERIOD: Duration = Duration::from_millis(1_000);
/// Unconfirmed transactions tolerated, in seconds of sending at the current rate.
const BACKLOG_SECS: f64 = 3.0;

pub struct MaxRate {
    rate: f64,
    throttles: u64,
    /// Doubling until the first sign of a limit, as TCP's slow start: a healthy staked path
    /// reaches its capacity in a few seconds instead of creeping up for tens of them.
    slow_start: bool,
}

impl Default for MaxRate {
    fn default() -> Self {
        Self {
            rate: START_RATE,
            throttles: 0,
            slow_start: true,
        }
    }
}

impl MaxRate {
    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn on_throttle(&mut self) {
        self.throttles += 1;
    }

    /// One period's verdict: `unconfirmed` is sent-but-not-final; `achieved` the send rate
    /// actually reached (when the pacer cannot keep up, raising the target is pointless).
    pub fn evaluate(&mut self, unconfirmed: u64, achieved: f64) -> f64 {
        let backlog_limit = (self.rate * BACKLOG_SECS).max(200.0);
        if self.throttles > 0 || unconfirmed as f64 > backlog_limit {
            self.rate *= 0.7;
            self.slow_start = false;
        } else if achieved >= self.rate * 0.9 {
            self.rate = if self.slow_start {
                self.rate * 2.0
            } else {
                self.rate + (self.rate * 0.25).max(20.0)
            };
        }
        self.throttles = 0;
        self.rate = self.rate.clamp(MIN_RATE, MAX_RATE);
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_up_and_backs_off() {
        let mut m = MaxRate::default();
        assert_eq!(m.evaluate(0, 100.0), 200.0, "slow start doubles");
        assert_eq!(m.evaluate(0, 100.0), 200.0, "no raise while the pacer lags");
        m.on_throttle();
        assert_eq!(m.evaluate(0, 200.0), 140.0);
        assert_eq!(m.evaluate(0, 140.0), 175.0, "after a limit: +25%");
        assert!((m.evaluate(10_000, 175.0) - 122.5).abs() < 1e-9, "backlog");
        for _ in 0..20 {
            m.evaluate(10_000, 0.0);
        }
        assert_eq!(m.rate(), 10.0);
    }
}
