//! A moment of a run in 8 bytes: a transaction's record holds five of them (first and last
//! sent, and the first stream handed over, acknowledged and seen), and `Option<Instant>` is 16
//! bytes — at a million transactions held, 40 MB more.

use std::{num::NonZeroU64, time::Duration};

use tokio::time::Instant;

/// Nanoseconds after the store's start, plus one (so `Option<Stamp>` needs no tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(NonZeroU64);

impl Stamp {
    /// `now` as a stamp of the run that started at `start` (a moment before it counts as its
    /// start; 584 years after it, as the last moment a stamp holds).
    pub fn at(now: Instant, start: Instant) -> Stamp {
        let nanos = u64::try_from(now.saturating_duration_since(start).as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        Stamp(NonZeroU64::new(nanos).unwrap_or(NonZeroU64::MAX))
    }

    /// Time since the run's start.
    pub fn since_start(self) -> Duration {
        Duration::from_nanos(self.0.get() - 1)
    }

    /// The moment itself, given the run's start.
    pub fn instant(self, start: Instant) -> Instant {
        start + self.since_start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_eight_bytes_and_gives_back_its_moment_to_the_nanosecond() {
        assert_eq!(std::mem::size_of::<Option<Stamp>>(), 8);
        let start = Instant::now();
        for after in [0, 1, 999, 1_000_000_007, 86_400_000_000_000] {
            let now = start + Duration::from_nanos(after);
            let stamp = Stamp::at(now, start);
            assert_eq!(stamp.instant(start), now);
            assert_eq!(stamp.since_start(), Duration::from_nanos(after));
        }
        // Before the start: the start. Order follows time.
        assert_eq!(
            Stamp::at(start, start + Duration::from_secs(1)).since_start(),
            Duration::ZERO
        );
        assert!(Stamp::at(start + Duration::from_nanos(2), start) > Stamp::at(start, start));
    }
}
