//! What every metric family is made of: a run's snapshot with its labels, and the series
//! read from it. A leaf of `metrics`, shared by the families (`families`, `link`).

use crate::engine::snapshot::Snapshot;

/// Labels of one series. Counter names are given without `_total`: the encoder adds it.
pub(super) type Labels = Vec<(&'static str, String)>;

/// A family's series and their values.
pub(super) type Points = Vec<(Labels, Value)>;

/// One engine run's latest snapshot, with the labels that tell it from the others.
pub struct Series<'a> {
    pub base: Labels,
    pub snap: &'a Snapshot,
}

/// One series' value, as the encoder takes it.
#[derive(Debug)]
pub(super) enum Value {
    Counter(u64),
    Gauge(f64),
    /// Sum in seconds, count, and buckets as (upper bound in seconds, count in that bucket).
    Histogram(f64, u64, Vec<(f64, u64)>),
}

/// `base`'s labels with `more` after them.
pub(super) fn with(base: &Labels, more: &[(&'static str, String)]) -> Labels {
    let mut l = base.clone();
    l.extend(more.iter().cloned());
    l
}
