//! Blockhash expiry, decided by block height at `finalized`, where no fork can bring a
//! blockhash back.
//!
//! A transaction can land only in a bank whose block height is at most its blockhash's last
//! valid height (the height that produced the blockhash + 150). Once the finalized bank is
//! past that height, every bank that can still come descends from it, so the transaction can
//! never land any more; a final status lookup (with history) then tells whether it did.
//!
//! The last valid height is *exact* when the engine saw the blockhash as the cluster's latest
//! (`getLatestBlockhash` names it). For a blockhash from a file it is bounded from above: when
//! the tip first calls it valid at height `h`, it was produced at or below `h`, so it is valid
//! through `h + 150` at most. Where neither is known yet, the finalized bank is asked directly:
//! if a finalized bank at or above a height where the tip once called the blockhash valid now
//! calls it invalid, the blockhash is too old there or its block is on an abandoned fork —
//! dead either way. Wall-clock time decides nothing here: a validator restarted on its ledger
//! calls live blockhashes invalid at its tip for a moment, and no expiry may follow from that.

use std::collections::HashMap;

use solana_hash::Hash;
use tokio::time::{Duration, Instant};

/// Blocks a blockhash stays valid after the block that produced it (MAX_PROCESSING_AGE).
pub const BLOCKHASH_VALID_BLOCKS: u64 = 150;
/// How often each live blockhash is re-checked at the tip.
const CHECK_EVERY: Duration = Duration::from_millis(1_000);

/// What is known of one blockhash's life.
#[derive(Default)]
struct HashState {
    /// The last block height at which it is valid: exact, or an upper bound.
    last_valid: Option<u64>,
    exact: bool,
    /// The lowest tip height at which the cluster called it valid.
    valid_at: Option<u64>,
    /// The tip height when it was first checked (bounds a blockhash never seen valid).
    first_checked_at: Option<u64>,
    /// The tip calls it invalid now: resends wait, they would most likely be wasted.
    tip_invalid: bool,
    /// When it was found dead for good (finalized height past it).
    dead_since: Option<Instant>,
    last_check: Option<Instant>,
    /// Unfinished transactions using it; it is forgotten when this reaches zero.
    live: u64,
}

impl HashState {
    /// The highest block height at which a transaction on this blockhash could still land,
    /// when one is known.
    fn bound(&self) -> Option<u64> {
        if self.last_valid.is_some() {
            return self.last_valid;
        }
        // Never seen valid: had it been in the chain and valid when first checked, the check
        // would have said so; so if it is real at all, it was produced below that height.
        self.first_checked_at
            .map(|h| h.saturating_add(BLOCKHASH_VALID_BLOCKS))
    }
}

/// The last valid height of a blockhash as the dashboard shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastValid {
    pub height: u64,
    /// False: an upper bound (shown as an estimate).
    pub exact: bool,
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

    /// One transaction on `hash` became final; a blockhash nobody uses is forgotten, so a long
    /// run does not accumulate them.
    pub fn release(&mut self, hash: Hash) {
        if let Some(s) = self.hashes.get_mut(&hash) {
            s.live = s.live.saturating_sub(1);
            if s.live == 0 {
                self.hashes.remove(&hash);
            }
        }
    }

    /// Whether any unfinished transaction uses `hash`.
    pub fn tracks(&self, hash: &Hash) -> bool {
        self.hashes.contains_key(hash)
    }

    /// Blockhashes being watched (for tests of the bound on long runs).
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Live, not-yet-dead blockhashes due for a check at the tip, soonest-to-expire first, at
    /// most `max`.
    pub fn due(&mut self, now: Instant, max: usize) -> Vec<Hash> {
        let mut due: Vec<(u64, Hash)> = self
            .hashes
            .iter()
            .filter(|(_, s)| {
                s.dead_since.is_none()
                    && s.last_check
                        .is_none_or(|t| now.duration_since(t) >= CHECK_EVERY)
            })
            .map(|(h, s)| (s.bound().unwrap_or(0), *h))
            .collect();
        due.sort_unstable();
        due.truncate(max);
        for (_, h) in &due {
            if let Some(s) = self.hashes.get_mut(h) {
                s.last_check = Some(now);
            }
        }
        due.into_iter().map(|(_, h)| h).collect()
    }

    /// The tip's answer for `hash`, asked when the highest tip height seen was `tip_height`.
    /// Returns the last-valid height when this answer changed it.
    pub fn on_tip_validity(
        &mut self,
        hash: Hash,
        valid: bool,
        tip_height: u64,
    ) -> Option<LastValid> {
        let s = self.hashes.get_mut(&hash)?;
        s.first_checked_at.get_or_insert(tip_height);
        s.tip_invalid = !valid;
        if !valid || s.exact {
            return None;
        }
        s.valid_at = Some(s.valid_at.map_or(tip_height, |v| v.min(tip_height)));
        let bound = tip_height.saturating_add(BLOCKHASH_VALID_BLOCKS);
        match s.last_valid {
            Some(lv) if lv <= bound => None,
            _ => {
                s.last_valid = Some(bound);
                Some(LastValid {
                    height: bound,
                    exact: false,
                })
            }
        }
    }

    /// The cluster's latest blockhash and its exact last valid height; only blockhashes that
    /// transactions use are remembered. Returns it when it changed what was known.
    pub fn on_latest(&mut self, hash: Hash, last_valid: u64) -> Option<LastValid> {
        let s = self.hashes.get_mut(&hash)?;
        if s.exact && s.last_valid == Some(last_valid) {
            return None;
        }
        s.exact = true;
        s.last_valid = Some(last_valid);
        Some(LastValid {
            height: last_valid,
            exact: true,
        })
    }

    /// The finalized block height moved to `height`: every blockhash whose last valid height
    /// it has passed is dead. Returns the newly dead ones.
    pub fn on_finalized_height(&mut self, height: u64, now: Instant) -> Vec<Hash> {
        let mut dead = Vec::new();
        for (h, s) in &mut self.hashes {
            if s.dead_since.is_none() && s.bound().is_some_and(|lv| height > lv) {
                s.dead_since = Some(now);
                dead.push(*h);
            }
        }
        dead
    }

    /// Blockhashes worth asking the finalized bank about: the tip calls them invalid, nothing
    /// bounds them by height yet, and the finalized bank (at `final_height`) is at or above a
    /// height where the tip once called them valid, so its "invalid" would be final.
    pub fn final_check_candidates(&self, final_height: u64, max: usize) -> Vec<Hash> {
        self.hashes
            .iter()
            .filter(|(_, s)| {
                s.dead_since.is_none()
                    && s.tip_invalid
                    && !s.exact
                    && s.valid_at.is_some_and(|v| final_height >= v)
            })
            .map(|(h, _)| *h)
            .take(max)
            .collect()
    }

    /// The finalized bank's answer for `hash`, asked when the finalized height was at least
    /// `final_height`. Returns true when this made it dead.
    pub fn on_final_validity(
        &mut self,
        hash: Hash,
        valid: bool,
        final_height: u64,
        now: Instant,
    ) -> bool {
        let Some(s) = self.hashes.get_mut(&hash) else {
            return false;
        };
        let final_answer = s.valid_at.is_some_and(|v| final_height >= v);
        if valid || !final_answer || s.dead_since.is_some() {
            return false;
        }
        s.dead_since = Some(now);
        true
    }

    /// Resends of transactions on `hash` would most likely be wasted: the tip calls it invalid,
    /// the tip is past its last valid height, or it is dead.
    pub fn resend_pointless(&self, hash: &Hash, tip_height: u64) -> bool {
        self.hashes.get(hash).is_some_and(|s| {
            s.tip_invalid
                || s.dead_since.is_some()
                || (s.exact && s.last_valid.is_some_and(|lv| tip_height > lv))
        })
    }

    /// When `hash` was found dead for good.
    pub fn dead_since(&self, hash: &Hash) -> Option<Instant> {
        self.hashes.get(hash).and_then(|s| s.dead_since)
    }

    pub fn last_valid(&self, hash: &Hash) -> Option<LastValid> {
        let s = self.hashes.get(hash)?;
        s.last_valid.map(|height| LastValid {
            height,
            exact: s.exact,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(b: u8) -> Hash {
        Hash::new_from_array([b; 32])
    }

    #[tokio::test(start_paused = true)]
    async fn an_estimate_tightens_and_death_waits_for_the_finalized_height() {
        let mut w = ExpiryWatch::default();
        let h = hash(3);
        w.track(h);
        let now = Instant::now();
        assert_eq!(w.due(now, 8), vec![h]);
        assert!(w.due(now, 8).is_empty(), "checked at most once a second");
        let est = w.on_tip_validity(h, true, 1000);
        assert_eq!(
            est,
            Some(LastValid {
                height: 1150,
                exact: false
            })
        );
        assert_eq!(
            w.on_tip_validity(h, true, 1010),
            None,
            "bound only tightens"
        );
        // The tip says invalid (a restarted node, say): resends wait, nothing expires.
        w.on_tip_validity(h, false, 1020);
        assert!(w.resend_pointless(&h, 1020));
        assert!(w.on_finalized_height(1100, now).is_empty());
        assert_eq!(w.dead_since(&h), None);
        w.on_tip_validity(h, true, 1021);
        assert!(!w.resend_pointless(&h, 1021));
        assert!(
            w.on_finalized_height(1150, now).is_empty(),
            "valid through 1150"
        );
        assert_eq!(w.on_finalized_height(1151, now), vec![h]);
        assert_eq!(w.dead_since(&h), Some(now));
    }

    #[tokio::test(start_paused = true)]
    async fn an_exact_height_beats_the_estimate() {
        let mut w = ExpiryWatch::default();
        let h = hash(4);
        w.track(h);
        w.on_tip_validity(h, true, 1000);
        let exact = w.on_latest(h, 1120);
        assert_eq!(
            exact,
            Some(LastValid {
                height: 1120,
                exact: true
            })
        );
        assert_eq!(w.on_tip_validity(h, true, 1005), None);
        assert!(w.resend_pointless(&h, 1121), "the tip is past it");
        assert_eq!(w.on_finalized_height(1121, Instant::now()), vec![h]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_finalized_bank_decides_an_unbounded_blockhash() {
        let mut w = ExpiryWatch::default();
        let h = hash(5);
        w.track(h);
        w.on_tip_validity(h, true, 500);
        w.on_tip_validity(h, false, 560);
        let now = Instant::now();
        // Below the height where it was seen valid, the finalized bank may not know it yet.
        assert!(w.final_check_candidates(499, 8).is_empty());
        assert!(!w.on_final_validity(h, false, 499, now));
        assert_eq!(w.final_check_candidates(528, 8), vec![h]);
        assert!(!w.on_final_validity(h, true, 528, now));
        assert!(w.on_final_validity(h, false, 528, now));
        assert_eq!(w.dead_since(&h), Some(now));
    }

    #[tokio::test(start_paused = true)]
    async fn a_blockhash_never_seen_valid_dies_150_blocks_after_its_first_check() {
        let mut w = ExpiryWatch::default();
        let h = hash(6);
        w.track(h);
        w.on_tip_validity(h, false, 700);
        assert_eq!(w.last_valid(&h), None);
        assert!(w.on_finalized_height(850, Instant::now()).is_empty());
        assert_eq!(w.on_finalized_height(851, Instant::now()), vec![h]);
    }

    #[test]
    fn released_blockhashes_are_forgotten_and_unused_latest_ones_never_kept() {
        let mut w = ExpiryWatch::default();
        let (a, b) = (hash(7), hash(8));
        w.track(a);
        w.track(a);
        assert_eq!(w.on_latest(b, 900), None, "no transaction uses it");
        assert_eq!(w.len(), 1);
        w.release(a);
        assert_eq!(w.len(), 1);
        w.release(a);
        assert!(w.is_empty());
    }
}
