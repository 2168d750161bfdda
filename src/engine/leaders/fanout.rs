//! How many leaders past the current one a send goes to now: `--fanout K`, one more while the
//! link toward the leaders is losing datagrams, and at least the next leader near the end of
//! the current one's turn.
//!
//! - **Spread.** Under `--rate max`, unstaked, `K` is 0 whatever `--fanout` says: a copy of
//!   every send to the next leader spends its budget (200 of our streams a second) on
//!   transactions the current one lands, while sends of its own, held for its turn, add to
//!   what lands (see `ahead`). The next leader still gets the sends of a turn's end.
//!
//! - **End of a turn.** A stream sent to the current leader shortly before its turn ends is
//!   read after it: on a 320 ms link, a stream takes 160 ms to arrive, and one whose datagram
//!   is lost a probe timeout more. So once what is left of the turn is shorter than that
//!   reach (half the current leader's round trip and one PTO of its measured link), the next
//!   leader gets the send too, whatever `K` (with the default `K = 1` it does anyway). Sending
//!   to the current and the next leader at the hand-over is what Agave's own measurements
//!   found as good as RTT-aware targeting (agave #7516).
//! - **Loss.** While the datagrams sent to the current or the next leader over the last
//!   [`LOSS_SPAN`] are lost at the verdict's `lossy` share or more ([`LOSSY_SHARE`] of at
//!   least [`LOSS_SAMPLE`]: one stream in 25 then waits a repair of 9/8 of a round trip, and
//!   the streams behind it on its connection wait with it), each send goes to one leader more
//!   than `K`: a copy delayed past its leader's turn still has a leader that holds it. The
//!   threshold is the verdict's share, over this shorter span and without the verdict's test
//!   against chance (`verdict::clearly_lossy`): a copy too many costs one stream of a budget,
//!   where naming a clean leader `lossy` misleads the operator. It is lowered once the recent
//!   loss falls under half of it — below the share the verdict rule calls a clean path's — so
//!   that a share hovering at the edge does not flap it. A clean link keeps `K`: more leaders only spend
//!   more of every leader's unstaked budget (200 streams a second per address).
//!
//! Not while our own streams to those leaders wait on our side for the wire (for room in
//! the congestion window, longer than a handshake may take on the link): the link then carries no more, and
//! another copy of every send would only queue behind the first.
//!
//! Each change is said once in the log, with the figures behind it.

use std::{collections::VecDeque, net::SocketAddr, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{LeaderBook, targets::NOMINAL_SLOT};
use crate::engine::verdict::{LOSS_SAMPLE, LOSSY_SHARE};

/// How far back the loss toward a leader is judged for the fan-out: long enough for
/// [`LOSS_SAMPLE`] datagrams at a modest pace, short enough that the fan-out comes back down
/// within seconds of the loss ending.
pub(super) const LOSS_SPAN: Duration = Duration::from_secs(10);

/// An address's recent datagram counts (quinn's, as read at each snapshot).
#[derive(Default)]
pub(super) struct LossWindow(VecDeque<(Instant, u64, u64)>);

impl LossWindow {
    /// Notes the cumulative counts `sent` and `lost` read at `now`.
    pub(super) fn note(&mut self, now: Instant, sent: u64, lost: u64) {
        // Counts start over when the transport forgets the address: start over too.
        if self.0.back().is_some_and(|&(_, s, l)| sent < s || lost < l) {
            self.0.clear();
        }
        self.0.push_back((now, sent, lost));
        while self.0.len() > 2
            && self
                .0
                .get(1)
                .is_some_and(|(t, _, _)| now.saturating_duration_since(*t) >= LOSS_SPAN)
        {
            self.0.pop_front();
        }
    }

    /// Datagrams sent and lost over the span, once at least [`LOSS_SAMPLE`] were sent.
    fn recent(&self) -> Option<(u64, u64)> {
        let (first, last) = (self.0.front()?, self.0.back()?);
        let sent = last.1 - first.1;
        (sent >= LOSS_SAMPLE).then_some((sent, last.2 - first.2))
    }
}

/// Why the fan-out is raised: the address whose loss raised it, and its figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Raised {
    pub(super) addr: SocketAddr,
    pub(super) sent: u64,
    pub(super) lost: u64,
}

impl LeaderBook {
    /// Leaders past the current one a send made now goes to (see the module doc).
    pub(super) fn fanout_now(&self, now: Instant) -> usize {
        let k = self.paced_fanout();
        if (self.fanout_by_link || self.spread) && k == 0 && self.turn_ending(now) {
            1
        } else {
            k
        }
    }

    /// `K`: `--fanout`, or 0 while sends are spread.
    pub(super) fn base_fanout(&self) -> usize {
        if self.spread { 0 } else { self.fanout }
    }

    /// Leaders past the current one every send of the pace reaches, whatever the time in the
    /// turn: `K`, and one more while the loss rule raised it.
    pub(super) fn paced_fanout(&self) -> usize {
        self.base_fanout() + usize::from(self.raised.is_some())
    }

    /// Spreads sends over the leaders (`--rate max`, unstaked: see the module doc) or stops,
    /// said in the log when it changes.
    pub fn set_spread(&mut self, on: bool) {
        if on != self.spread && self.pinned.is_none() {
            self.spread = on;
            log::info!(
                "{}",
                if on {
                    "spreading sends: the next leader gets the pace's sends only near the end \
                     of the current leader's turn, and sends of its own ahead of its own turn"
                } else {
                    "no longer spreading sends: the fan-out is --fanout's again"
                }
            );
        }
    }

    /// Whether what is left of the current leader's turn is shorter than a stream's reach to
    /// it: half its round trip and one PTO (a lost datagram's repair).
    fn turn_ending(&self, now: Instant) -> bool {
        let (Some((leader, _, last)), Some(at)) = (self.window.first(), self.slot_at) else {
            return false;
        };
        let slots_left = u32::try_from(last + 1 - self.slot.min(*last)).unwrap_or(u32::MAX);
        let left = (NOMINAL_SLOT * slots_left).saturating_sub(now.saturating_duration_since(at));
        left < self.turn_end_reach(leader)
    }

    /// How long before the end of `leader`'s turn a stream sent to it may be read after it
    /// (see [`LeaderBook::turn_ending`]): half its round trip and one PTO.
    pub(super) fn turn_end_reach(&self, leader: &Pubkey) -> Duration {
        let timing = self
            .addrs
            .get(leader)
            .map(|a| self.timing(*a))
            .unwrap_or_default();
        timing.srtt / 2 + timing.pto()
    }

    /// Reconsiders the loss rule from the figures just read (`refresh_paths`), and says a
    /// change in the log.
    pub(super) fn judge_fanout(&mut self) {
        if !self.fanout_by_link || self.pinned.is_some() {
            return;
        }
        let watched: Vec<SocketAddr> = self
            .upcoming(self.fanout.max(1) + 1)
            .iter()
            .filter_map(|(l, _, _)| self.addrs.get(l).copied())
            .collect();
        let share = |(sent, lost): (u64, u64)| lost as f64 / sent as f64;
        let worst = watched
            .iter()
            .filter_map(|a| {
                let (sent, lost) = self.links.get(a).and_then(|l| l.loss.recent())?;
                Some(Raised {
                    addr: *a,
                    sent,
                    lost,
                })
            })
            .max_by(|x, y| share((x.sent, x.lost)).total_cmp(&share((y.sent, y.lost))));
        let worst_share = worst.map_or(0.0, |w| share((w.sent, w.lost)));
        let now = Instant::now();
        let full = watched.iter().find(|a| self.own_waited(a, now));
        if let (Some(r), Some(a)) = (self.raised, full) {
            log::info!(
                "fan-out back to {}: our streams to {a} wait on our side for the wire (the \
                 link carries no more), though {} lost {:.1}%",
                self.base_fanout(),
                r.addr,
                share((r.sent, r.lost)) * 100.0
            );
            self.raised = None;
            return;
        }
        match (self.raised, worst) {
            (None, Some(w)) if worst_share >= LOSSY_SHARE && full.is_none() => {
                log::info!(
                    "fan-out raised to {}: {} loses {:.1}% of our datagrams ({} of {} in the \
                     last {} s); each send goes to one more upcoming leader until it is under \
                     {:.1}%",
                    self.base_fanout() + 1,
                    w.addr,
                    worst_share * 100.0,
                    w.lost,
                    w.sent,
                    LOSS_SPAN.as_secs(),
                    LOSSY_SHARE * 50.0
                );
                self.raised = Some(w);
            }
            (Some(r), _) if worst_share < LOSSY_SHARE / 2.0 => {
                log::info!(
                    "fan-out back to {}: the loss toward the leaders is under {:.1}% (it was \
                     {} at {:.1}%)",
                    self.base_fanout(),
                    LOSSY_SHARE * 50.0,
                    r.addr,
                    share((r.sent, r.lost)) * 100.0
                );
                self.raised = None;
            }
            _ => {}
        }
    }

    /// Whether our own streams to `leader` waited on our side for the wire lately (longer than
    /// a handshake may take, within [`LOSS_SPAN`]): its link carries no more than we send it,
    /// and more copies — a raised fan-out, a hand-over's resends — would only queue.
    pub fn link_full(&self, leader: &solana_pubkey::Pubkey, now: Instant) -> bool {
        self.addrs
            .get(leader)
            .is_some_and(|a| self.own_waited(a, now))
    }

    pub(super) fn own_waited(&self, addr: &SocketAddr, now: Instant) -> bool {
        self.links
            .get(addr)
            .and_then(|l| l.own_wait_at)
            .is_some_and(|t| now.saturating_duration_since(t) < LOSS_SPAN)
    }

    /// Whether the loss rule has raised the fan-out now.
    pub fn fanout_raised(&self) -> bool {
        self.raised.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_loss_window_keeps_the_last_span() {
        let mut w = LossWindow::default();
        let t = Instant::now();
        w.note(t, 0, 0);
        w.note(t + Duration::from_secs(1), 100, 10);
        assert_eq!(w.recent(), None, "too few datagrams to judge");
        w.note(t + Duration::from_secs(2), 300, 12);
        assert_eq!(w.recent(), Some((300, 12)));
        w.note(t + Duration::from_secs(15), 1_300, 12);
        w.note(t + Duration::from_secs(16), 1_500, 12);
        // The readings older than the span are gone but the one that starts it.
        assert_eq!(w.recent(), Some((1_200, 0)));
        // The transport started over.
        w.note(t + Duration::from_secs(17), 5, 0);
        assert_eq!(w.recent(), None);
    }
}
