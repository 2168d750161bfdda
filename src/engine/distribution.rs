//! A bounded distribution of durations in milliseconds: percentiles from an hdrhistogram and
//! counts in fixed buckets (the dashboard's bars, Prometheus' histogram), with their sum.
//!
//! Both parts are fixed-size, so recording and reading cost the same after a million values as
//! after ten — a long run neither grows memory nor slows its publishes.

use std::{sync::Arc, time::Duration};

use hdrhistogram::Histogram;

use super::snapshot::LatencyView;

/// Largest value the percentiles tell apart; longer ones count as this. A day covers
/// durable-nonce transactions resent over a long run.
const MAX_MS: u64 = 24 * 3_600 * 1_000;
/// Significant figures kept: values are exact below 2048 ms and within 0.1 % above, finer
/// than anything prints them.
const SIGFIG: u8 = 3;

pub struct Distribution {
    /// Upper bounds of the buckets in ms, ascending; the last bucket is open-ended.
    bounds: &'static [u64],
    hist: Histogram<u64>,
    /// `bounds.len() + 1` counts.
    buckets: Vec<u64>,
    sum_ms: u64,
    dirty: bool,
    view: LatencyView,
}

impl Distribution {
    /// `bounds`: ascending upper bounds of the buckets in ms.
    pub fn new(bounds: &'static [u64]) -> Self {
        let buckets = vec![0; bounds.len() + 1];
        Self {
            bounds,
            // The bounds are constants that satisfy the crate's rules (low ≥ 1, high ≥ 2·low,
            // sigfig ≤ 5), so this cannot fail.
            hist: Histogram::new_with_bounds(1, MAX_MS, SIGFIG)
                .expect("constant histogram bounds are valid"),
            view: LatencyView {
                histogram: Arc::new(buckets.clone()),
                bounds_ms: Arc::new(bounds.to_vec()),
                ..LatencyView::default()
            },
            buckets,
            sum_ms: 0,
            dirty: false,
        }
    }

    pub fn record(&mut self, d: Duration) {
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self.hist.saturating_record(ms);
        let b = self
            .bounds
            .iter()
            .position(|&bound| ms < bound)
            .unwrap_or(self.bounds.len());
        self.buckets[b] += 1;
        self.sum_ms = self.sum_ms.saturating_add(ms);
        self.dirty = true;
    }

    /// Percentiles and bucket counts, re-read only when new values arrived.
    pub fn view(&mut self) -> LatencyView {
        if self.dirty {
            self.dirty = false;
            let h = &self.hist;
            let pct = |q: f64| -> Option<Duration> {
                (!h.is_empty()).then(|| Duration::from_millis(h.value_at_quantile(q)))
            };
            self.view = LatencyView {
                p50: pct(0.50),
                p90: pct(0.90),
                p99: pct(0.99),
                histogram: Arc::new(self.buckets.clone()),
                bounds_ms: Arc::new(self.bounds.to_vec()),
                sum_ms: self.sum_ms,
            };
        }
        self.view.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values fall into `[bounds[b-1], bounds[b])`, the last bucket is open-ended, and the
    /// sum and count agree with what was recorded.
    #[test]
    fn buckets_sum_and_percentiles_agree_with_the_values() {
        const BOUNDS: [u64; 3] = [10, 100, 1_000];
        let mut d = Distribution::new(&BOUNDS);
        assert_eq!(d.view().p50, None);
        for ms in [0, 9, 10, 99, 100, 5_000] {
            d.record(Duration::from_millis(ms));
        }
        let v = d.view();
        assert_eq!(*v.histogram, vec![2, 2, 1, 1]);
        assert_eq!(*v.bounds_ms, BOUNDS.to_vec());
        assert_eq!(v.sum_ms, 5_218);
        assert_eq!(v.p50, Some(Duration::from_millis(10)));
        // Above 2048 ms, within the 0.1 % that three significant figures keep.
        let p99 = v.p99.expect("p99").as_millis();
        assert!((5_000..=5_005).contains(&p99), "{p99}");
    }
}
