//! The pace: a fixed target or the closed loop ([`MaxRate`]) sets the pacer's rate, and owed
//! sends (an outage's, the copies' for a leader change: see `engine::pacer`) are made up at
//! most [`CATCH_UP`] times faster.

use tokio::time::Instant;

use super::{CATCH_UP, Dispatcher};
use crate::engine::{
    maxrate::{self, MaxRate},
    snapshot::RateTarget,
    store::TxStore,
};

impl Dispatcher {
    /// The rate asked for.
    pub(in crate::engine) fn target(&self) -> RateTarget {
        self.target
    }

    /// The rate the pacer is sending at: above a fixed target while owed sends are made up,
    /// and the target itself otherwise (not the pacer's interval read back, which rounds).
    pub(in crate::engine) fn pacing(&self, now: Instant) -> f64 {
        match self.target {
            RateTarget::Fixed(t) if !self.pacer.catching_up(now) => t,
            _ => self.pacer.pacing(now),
        }
    }

    /// Transactions sent ahead of a later leader's turn so far (see `ahead`).
    pub(in crate::engine) fn sent_ahead(&self) -> u64 {
        self.ahead.sent()
    }

    /// Sends owed (to an outage, or to copies for a leader change) and not made up yet.
    pub(in crate::engine) fn owed_sends(&self) -> u64 {
        self.pacer.owed_sends()
    }

    pub(in crate::engine) fn set_target(&mut self, target: RateTarget, now: Instant) {
        match target {
            RateTarget::Fixed(r) => {
                let r = if r.is_finite() { r.max(1.0) } else { 1.0 };
                self.target = RateTarget::Fixed(r);
                self.maxrate = None;
                self.pacer.set_rate(r, now);
                self.apply_catch_up();
                log::info!("target rate set to {r} tx/s");
            }
            RateTarget::Max => {
                self.target = RateTarget::Max;
                let m = MaxRate::default();
                self.pacer.set_rate(m.rate(), now);
                self.maxrate = Some(m);
                self.apply_catch_up();
                log::info!("target rate set to max (closed loop)");
            }
        }
    }

    /// Starts pacing afresh from `now` (after a pause, so no catch-up burst follows; a pause is
    /// the user's, not an outage, so nothing is owed for it).
    pub(in crate::engine) fn restart(&mut self, now: Instant) {
        self.pacer.restart(now);
        self.held = None;
    }

    /// One closed-loop step: `achieved` is the send rate over the last period alone, and
    /// `unconfirmed` the sent transactions not yet final, less those sent ahead to a leader
    /// whose turn has not come (see `ahead`). `unstaked_quic`: the leaders are known to give
    /// us an unstaked peer's budget, which caps the search from the start.
    pub(in crate::engine) fn control(
        &mut self,
        unconfirmed: u64,
        achieved: f64,
        unstaked_quic: bool,
        store: &TxStore,
        now: Instant,
    ) {
        let held_ahead = self.ahead.waiting(now, store);
        if let Some(m) = self.maxrate.as_mut() {
            if unstaked_quic {
                m.assume_ceiling(maxrate::UNSTAKED_BUDGET);
            }
            let rate = m.evaluate(unconfirmed.saturating_sub(held_ahead), achieved);
            self.pacer.set_rate(rate, now);
        }
        self.unstaked = unstaked_quic;
        self.apply_catch_up();
    }

    /// The leaders give us an unstaked peer's budget, as the node's stake says before the first
    /// closed-loop period ends: sends may go ahead of a leader's turn (see `ahead`) from the
    /// first. The pace still starts at [`maxrate::START_RATE`] and reaches the plateau at the
    /// period's end: a first connection's riders (see `liveness`) go out together once its
    /// handshake is done, and at the plateau from the start they overran the leader's first
    /// windows (32 reads delayed on three simulated leaders).
    pub(in crate::engine) fn unstaked_known(&mut self) {
        if self.unstaked {
            return;
        }
        self.unstaked = true;
        if let Some(m) = self.maxrate.as_mut() {
            m.assume_ceiling(maxrate::UNSTAKED_BUDGET);
        }
        self.apply_catch_up();
    }

    /// Tells the pacer how much faster than the pace owed sends are made up now: not at all
    /// under `--no-catch-up` or the closed loop (which sends as fast as the leaders take
    /// anyway), else [`CATCH_UP`] — for an unstaked peer no faster than the plateau the closed
    /// loop keeps under a leader's budget, above which catching up would only queue streams the
    /// leader reads late (a 4.0 leader delays them and withholds credit; it refuses none).
    pub(super) fn apply_catch_up(&mut self) {
        let factor = if !self.catch_up || self.maxrate.is_some() {
            1.0
        } else if self.unstaked {
            let ceiling = maxrate::UNSTAKED_BUDGET * maxrate::PLATEAU;
            CATCH_UP.min(ceiling / self.pacer.rate())
        } else {
            CATCH_UP
        };
        self.pacer.set_catch_up(factor);
    }
}
