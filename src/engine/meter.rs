//! Achieved send and landing rates, the last minute's chart, and time-to-land percentiles.

use std::{collections::VecDeque, sync::Arc, time::Duration};

use super::snapshot::{LatencyView, RatePoint};

/// Window over which "achieved" rates are averaged: long enough to smooth 100 ms ticks, short
/// enough to show a pause within a few seconds.
const RATE_WINDOW_SECS: u64 = 3;
const HISTORY_SECS: u64 = 60;
/// Upper bounds of the time-to-land histogram buckets, in ms.
const LATENCY_BOUNDS_MS: [u64; 9] = [
    250,
    500,
    1_000,
    2_000,
    4_000,
    8_000,
    16_000,
    32_000,
    u64::MAX,
];

/// The bounds as the snapshot documents them: the last bucket is open-ended, so its sentinel
/// bound is not published.
fn published_bounds() -> Vec<u64> {
    LATENCY_BOUNDS_MS[..LATENCY_BOUNDS_MS.len() - 1].to_vec()
}

#[derive(Default)]
pub struct Meter {
    /// Per-100 ms buckets, newest last: (tick, sent, confirmed).
    ticks: VecDeque<(u64, u32, u32)>,
    latencies_ms: Vec<u32>,
    latency_dirty: bool,
    latency: LatencyView,
}

impl Meter {
    fn bucket(&mut self, elapsed: Duration) -> &mut (u64, u32, u32) {
        let tick = (elapsed.as_millis() / 100) as u64;
        if self.ticks.back().is_none_or(|b| b.0 != tick) {
            self.ticks.push_back((tick, 0, 0));
            while self
                .ticks
                .front()
                .is_some_and(|b| b.0 + HISTORY_SECS * 10 + 10 < tick)
            {
                self.ticks.pop_front();
            }
        }
        // The deque is non-empty here.
        let last = self.ticks.len() - 1;
        &mut self.ticks[last]
    }

    pub fn on_send(&mut self, elapsed: Duration) {
        self.bucket(elapsed).1 += 1;
    }

    pub fn on_confirmed(&mut self, elapsed: Duration, latency: Option<Duration>) {
        self.bucket(elapsed).2 += 1;
        if let Some(l) = latency {
            self.latencies_ms
                .push(u32::try_from(l.as_millis()).unwrap_or(u32::MAX));
            self.latency_dirty = true;
        }
    }

    /// (sent per second, confirmed per second) over the last few seconds.
    pub fn rates(&self, elapsed: Duration) -> (f64, f64) {
        self.rates_over(elapsed, RATE_WINDOW_SECS * 10)
    }

    /// (sent per second, confirmed per second) over the last `window` 100 ms ticks.
    pub fn rates_over(&self, elapsed: Duration, window: u64) -> (f64, f64) {
        let now_tick = (elapsed.as_millis() / 100) as u64;
        let from = now_tick.saturating_sub(window);
        let (mut s, mut c) = (0u64, 0u64);
        for &(t, sent, conf) in self.ticks.iter().rev() {
            if t < from {
                break;
            }
            if t < now_tick {
                s += u64::from(sent);
                c += u64::from(conf);
            }
        }
        // Early in a run, average over the time that has passed.
        let secs = (now_tick.min(window) as f64 / 10.0).max(0.1);
        (s as f64 / secs, c as f64 / secs)
    }

    /// Per-second points of the last minute, oldest first.
    pub fn history(&self, elapsed: Duration) -> Vec<RatePoint> {
        let now_sec = elapsed.as_secs();
        let first = now_sec.saturating_sub(HISTORY_SECS - 1);
        let mut points: Vec<RatePoint> = (first..=now_sec)
            .map(|second| RatePoint {
                second,
                ..RatePoint::default()
            })
            .collect();
        for &(t, sent, conf) in &self.ticks {
            let sec = t / 10;
            if sec >= first && sec <= now_sec {
                let p = &mut points[(sec - first) as usize];
                p.sent += sent;
                p.confirmed += conf;
            }
        }
        points
    }

    /// Percentiles and histogram, recomputed only when new landings arrived.
    pub fn latency(&mut self) -> LatencyView {
        if self.latency_dirty {
            self.latency_dirty = false;
            let mut sorted = self.latencies_ms.clone();
            sorted.sort_unstable();
            let pct = |p: f64| -> Option<Duration> {
                if sorted.is_empty() {
                    return None;
                }
                let idx = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
                Some(Duration::from_millis(u64::from(sorted[idx])))
            };
            let mut hist = vec![0u64; LATENCY_BOUNDS_MS.len()];
            let mut b = 0;
            for &ms in &sorted {
                while u64::from(ms) >= LATENCY_BOUNDS_MS[b] && b + 1 < hist.len() {
                    b += 1;
                }
                hist[b] += 1;
            }
            self.latency = LatencyView {
                p50: pct(0.50),
                p90: pct(0.90),
                p99: pct(0.99),
                histogram: Arc::new(hist),
                bounds_ms: Arc::new(published_bounds()),
            };
        } else if self.latency.bounds_ms.is_empty() {
            self.latency.bounds_ms = Arc::new(published_bounds());
            self.latency.histogram = Arc::new(vec![0; LATENCY_BOUNDS_MS.len()]);
        }
        self.latency.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_average_over_the_window() {
        let mut m = Meter::default();
        for i in 0..500u64 {
            m.on_send(Duration::from_millis(i * 10));
        }
        let (s, c) = m.rates(Duration::from_secs(5));
        assert_eq!(s, 100.0);
        assert_eq!(c, 0.0);
        let h = m.history(Duration::from_secs(5));
        assert_eq!(h.len(), 6);
        assert_eq!(h[0].sent, 100);
        assert_eq!(h[5].sent, 0);
    }

    #[test]
    fn percentiles_are_exact() {
        let mut m = Meter::default();
        for ms in 1..=100u64 {
            m.on_confirmed(Duration::ZERO, Some(Duration::from_millis(ms * 10)));
        }
        let l = m.latency();
        assert_eq!(l.p50, Some(Duration::from_millis(500)));
        assert_eq!(l.p90, Some(Duration::from_millis(900)));
        assert_eq!(l.p99, Some(Duration::from_millis(990)));
        assert_eq!(l.histogram.iter().sum::<u64>(), 100);
        assert_eq!(l.histogram[0], 24);
        assert_eq!(l.histogram.len(), l.bounds_ms.len() + 1);
        assert_eq!(l.bounds_ms.last(), Some(&32_000));
    }
}
