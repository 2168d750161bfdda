//! Achieved send and landing rates, the last minute's chart, and the time-to-land and
//! stream-acknowledgement distributions.
//!
//! Everything here is bounded on a long run: rates come from per-100 ms buckets of the last
//! minute, and time to land from a fixed-size histogram, so neither memory nor the cost of a
//! publish grows with the number of transactions.

use std::{collections::VecDeque, time::Duration};

use super::{
    distribution::Distribution,
    snapshot::{LatencyView, RatePoint},
};

/// Window over which "achieved" rates are averaged: long enough to smooth 100 ms ticks, short
/// enough to show a pause within a few seconds.
const RATE_WINDOW_SECS: u64 = 3;
const HISTORY_SECS: u64 = 60;
/// Upper bounds of the time-to-land histogram buckets, in ms; the last bucket is open-ended.
const LATENCY_BOUNDS_MS: [u64; 8] = [250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000];
/// Upper bounds of the stream-acknowledgement buckets, in ms: a leader on loopback answers in
/// about a millisecond, one across the world in a few hundred; a timed-out stream counts as
/// the time it had (the send timeout, or its link's deadline when that is longer).
const ACK_BOUNDS_MS: [u64; 11] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 5_000];

pub struct Meter {
    /// Per-100 ms buckets, newest last: (tick, sent, confirmed).
    ticks: VecDeque<(u64, u32, u32)>,
    /// Time from first send to landing.
    land: Distribution,
    /// Time from handing a stream to QUIC to the leader's acknowledgement (or its failure).
    ack: Distribution,
}

impl Default for Meter {
    fn default() -> Self {
        Self {
            ticks: VecDeque::new(),
            land: Distribution::new(&LATENCY_BOUNDS_MS),
            ack: Distribution::new(&ACK_BOUNDS_MS),
        }
    }
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
            self.land.record(l);
        }
    }

    /// One stream finished `took` after it was handed to QUIC.
    pub fn on_ack(&mut self, took: Duration) {
        self.ack.record(took);
    }

    /// (sent per second, confirmed per second) over the last few seconds.
    pub fn rates(&self, elapsed: Duration) -> (f64, f64) {
        self.rates_over(elapsed, RATE_WINDOW_SECS * 10)
    }

    /// (sent per second, confirmed per second) over the last `window` complete 100 ms ticks.
    /// The tick still filling is left out: counting it would read as a dip that isn't there.
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
        // Early in a run, average over the complete ticks there are.
        let secs = (now_tick.min(window) as f64 / 10.0).max(0.1);
        (s as f64 / secs, c as f64 / secs)
    }

    /// Per-second points of the last minute's complete seconds, oldest first. The second still
    /// filling is left out: drawn, it would dip for no reason; so the first second of a run
    /// has no points yet.
    pub fn history(&self, elapsed: Duration) -> Vec<RatePoint> {
        // Seconds before `end` are complete.
        let end = elapsed.as_secs();
        let first = end.saturating_sub(HISTORY_SECS);
        let mut points: Vec<RatePoint> = (first..end)
            .map(|second| RatePoint {
                second,
                ..RatePoint::default()
            })
            .collect();
        for &(t, sent, conf) in &self.ticks {
            let sec = t / 10;
            if sec >= first && sec < end {
                let p = &mut points[(sec - first) as usize];
                p.sent += sent;
                p.confirmed += conf;
            }
        }
        points
    }

    /// Time to land: percentiles and bucket counts.
    pub fn latency(&mut self) -> LatencyView {
        self.land.view()
    }

    /// Stream acknowledgement times: percentiles and bucket counts.
    pub fn acks(&mut self) -> LatencyView {
        self.ack.view()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A steady 100 tx/s: the achieved rate is 100, and the chart holds one point per second
    /// that has ended.
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
        assert_eq!(h.len(), 5);
        assert!(h.iter().all(|p| p.sent == 100), "{h:?}");
        assert_eq!(h.last().map(|p| p.second), Some(4));
    }

    /// Halfway through a second of a steady 100 tx/s, neither the chart nor the figures show
    /// the half-filled second as a dip to 50: the chart ends at the last complete second and
    /// the rates count complete ticks only.
    #[test]
    fn a_half_finished_second_is_not_a_dip() {
        let mut m = Meter::default();
        let now = Duration::from_millis(5_550);
        // 100 tx/s since the start, one send every 10 ms, up to now.
        for i in 0..555u64 {
            m.on_send(Duration::from_millis(i * 10));
            m.on_confirmed(Duration::from_millis(i * 10), None);
        }
        let h = m.history(now);
        assert_eq!(h.last().map(|p| p.second), Some(4), "{h:?}");
        assert!(
            h.iter().all(|p| p.sent == 100 && p.confirmed == 100),
            "{h:?}"
        );
        let (sent, landed) = m.rates(now);
        assert_eq!((sent, landed), (100.0, 100.0));
        // Not even a tenth of a second into the run: nothing complete, nothing drawn.
        assert!(m.history(Duration::from_millis(900)).is_empty());
    }

    /// Percentiles come from a histogram: exact below 2048 ms, and within its precision
    /// (0.1 %) above; the published bucket counts are exact.
    #[test]
    fn percentiles_are_within_the_histograms_precision() {
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

        let mut m = Meter::default();
        for _ in 0..10 {
            m.on_confirmed(Duration::ZERO, Some(Duration::from_millis(45_678)));
        }
        let l = m.latency();
        let p50 = l.p50.map(|d| d.as_millis() as f64).unwrap_or(0.0);
        assert!((p50 - 45_678.0).abs() <= 45_678.0 * 0.001, "p50 {p50}");
        assert_eq!(l.histogram.last(), Some(&10));
    }

    /// Nothing landed: no percentiles, and empty buckets with their bounds.
    #[test]
    fn no_landings_no_percentiles() {
        let l = Meter::default().latency();
        assert_eq!((l.p50, l.p90, l.p99), (None, None, None));
        assert_eq!(l.histogram.len(), l.bounds_ms.len() + 1);
        assert!(l.histogram.iter().all(|&c| c == 0));
    }

    /// Publishing is not O(landings): after a million landings, re-reading the percentiles
    /// a hundred times (each after a new landing, so none is cached) takes about as long as
    /// it would after ten. A sort of every latency per publish (what this replaced) needs
    /// seconds here even optimized; the histogram needs milliseconds. The bound leaves a wide
    /// margin for a loaded machine and a debug build.
    #[test]
    fn publishing_is_not_linear_in_landings() {
        let mut m = Meter::default();
        for i in 0..1_000_000u64 {
            m.on_confirmed(Duration::ZERO, Some(Duration::from_millis(i % 60_000)));
        }
        let started = Instant::now();
        for i in 0..100u64 {
            m.on_confirmed(Duration::ZERO, Some(Duration::from_millis(i)));
            let l = m.latency();
            assert!(l.p99.is_some());
        }
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "100 publishes after 1M landings took {took:?}"
        );
        assert_eq!(
            m.latency().histogram.iter().sum::<u64>(),
            1_000_100,
            "every landing counted once"
        );
    }
}
