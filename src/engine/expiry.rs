//! Blockhash expiry: which blockhashes the cluster still accepts, and until which block height.
//!
//! RPC can tell whether a blockhash is valid (`isBlockhashValid`) but not when an arbitrary one
//! was produced, so its last valid height is exact only when the engine saw it as the latest
//! blockhash; otherwise it is bounded from above by the first height at which it was seen valid
//! plus 150. A transaction is never called Expired from the estimate alone: only after the
//! cluster says the blockhash is invalid *and* a later status check shows it did not land.
//!
//! "Invalid" must be said twice, [`CONFIRM_INVALID`] apart, with no "valid" in between: a
//! validator restarted on its ledger answers `false` for a moment before its bank has caught up
//! (seen on `solana-test-validator`), and an expiry is final.

use std::collections::HashMap;

use solana_hash::Hash;
use tokio::time::{Duration, Instant};

/// Blocks a blockhash stays valid after the block that produced it (MAX_PROCESSING_AGE).
pub const BLOCKHASH_VALID_BLOCKS: u64 = 150;
/// How often each live blockhash is re-checked.
const CHECK_EVERY: Duration = Duration::from_millis(1_000);
/// How long a first "invalid" answer must stand before it counts.
pub const CONFIRM_INVALID: Duration = Duration::from_millis(2_000);

#[derive(Default)]
struct HashState {
    last_valid: Option<u64>,
    exact: bool,
    invalid_since: Option<Instant>,
    /// When the cluster first said "invalid", not yet confirmed.
    suspect_since: Option<Instant>,
    last_check: Option<Instant>,
    /// Unfinished transactions using it; checks stop when this reaches zero.
    live: u64,
}

#[derive(Default)]
pub struct ExpiryWatch {
    hashes: HashMap<Hash, HashState>,
}

impl ExpiryWatch {
    /// Registers one more unfinished transaction on `hash`.
    pub fn track(&mut self, hash: Hash) {
        self.hashes.entry(hash).or_default().live += 1;
    }

    /// One transaction on `hash` became final.
    pub fn release(&mut self, hash: Hash) {
        if let Some(s) = self.hashes.get_mut(&hash) {
            s.live = s.live.saturating_sub(1);
        }
    }

    /// Blockhashes due for a validity check, soonest-to-expire first, at most `max`.
    pub fn due(&mut self, now: Instant, max: usize) -> Vec<Hash> {
        let mut due: Vec<(Option<u64>, Hash)> = self
            .hashes
            .iter()
            .filter(|(_, s)| {
                s.live > 0
                    && s.invalid_since.is_none()
                    && s.last_check
                        .is_none_or(|t| now.duration_since(t) >= CHECK_EVERY)
            })
            .map(|(h, s)| (s.last_valid, *h))
            .collect();
        due.sort_by_key(|(lv, _)| lv.unwrap_or(0));
        due.truncate(max);
        for (_, h) in &due {
            if let Some(s) = self.hashes.get_mut(h) {
                s.last_check = Some(now);
            }
        }
        due.into_iter().map(|(_, h)| h).collect()
    }

    /// A validity answer for `hash`, asked at `asked` when the block height was `height`.
    /// Returns the new last-valid height estimate when it changed.
    pub fn on_validity(
        &mut self,
        hash: Hash,
        valid: bool,
        height: u64,
        asked: Instant,
    ) -> Option<u64> {
        let s = self.hashes.entry(hash).or_default();
        if !valid {
            if s.invalid_since.is_some() {
                return None;
            }
            let first = *s.suspect_since.get_or_insert(asked);
            if asked.saturating_duration_since(first) < CONFIRM_INVALID {
                return None;
            }
            s.invalid_since = Some(first);
            if s.last_valid.is_none() {
                s.last_valid = Some(height.saturating_sub(1));
                return s.last_valid;
            }
            return None;
        }
        s.suspect_since = None;
        if s.exact {
            return None;
        }
        let bound = height + BLOCKHASH_VALID_BLOCKS;
        match s.last_valid {
            Some(lv) if lv <= bound => None,
            _ => {
                s.last_valid = Some(bound);
                s.last_valid
            }
        }
    }

    /// The cluster's latest blockhash and its exact last valid height.
    pub fn on_latest(&mut self, hash: Hash, last_valid: u64) -> Option<u64> {
        let s = self.hashes.entry(hash).or_default();
        if s.exact && s.last_valid == Some(last_valid) {
            return None;
        }
        s.exact = true;
        s.last_valid = Some(last_valid);
        (s.live > 0).then_some(last_valid)
    }

    /// The cluster said `hash` is invalid, confirmed or not yet: resends wait (they would most
    /// likely be wasted) until it is confirmed or withdrawn.
    pub fn said_invalid(&self, hash: &Hash) -> bool {
        self.hashes
            .get(hash)
            .is_some_and(|s| s.invalid_since.is_some() || s.suspect_since.is_some())
    }

    /// When the cluster first said `hash` is invalid, once confirmed.
    pub fn invalid_since(&self, hash: &Hash) -> Option<Instant> {
        self.hashes.get(hash).and_then(|s| s.invalid_since)
    }

    pub fn last_valid(&self, hash: &Hash) -> Option<u64> {
        self.hashes.get(hash).and_then(|s| s.last_valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn estimates_tighten_and_invalidity_is_remembered() {
        let mut w = ExpiryWatch::default();
        let h = Hash::new_from_array([3; 32]);
        w.track(h);
        let now = Instant::now();
        assert_eq!(w.due(now, 8), vec![h]);
        assert!(w.due(now, 8).is_empty(), "checked at most once a second");
        assert_eq!(w.on_validity(h, true, 1000, now), Some(1150));
        assert_eq!(
            w.on_validity(h, true, 1010, now),
            None,
            "upper bound only tightens"
        );
        assert_eq!(w.on_latest(h, 1140), Some(1140));
        assert_eq!(w.last_valid(&h), Some(1140));
        assert_eq!(w.on_validity(h, false, 1141, now), None);
        assert_eq!(w.invalid_since(&h), None, "said once: not yet");
        tokio::time::advance(CONFIRM_INVALID).await;
        assert_eq!(w.due(Instant::now(), 8), vec![h], "rechecked");
        assert_eq!(w.on_validity(h, false, 1143, Instant::now()), None);
        assert_eq!(w.invalid_since(&h), Some(now));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(
            w.due(Instant::now(), 8).is_empty(),
            "invalid hashes are not rechecked"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_passing_invalid_answer_is_forgotten() {
        // What a validator restarted on its ledger says for a moment.
        let mut w = ExpiryWatch::default();
        let h = Hash::new_from_array([4; 32]);
        w.track(h);
        let t0 = Instant::now();
        assert_eq!(w.on_validity(h, true, 100, t0), Some(250));
        w.on_validity(h, false, 101, t0);
        tokio::time::advance(Duration::from_secs(1)).await;
        w.on_validity(h, true, 102, Instant::now());
        tokio::time::advance(CONFIRM_INVALID).await;
        w.on_validity(h, false, 104, Instant::now());
        assert_eq!(w.invalid_since(&h), None);
        assert_eq!(w.last_valid(&h), Some(250));
    }
}
