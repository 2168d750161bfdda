//! Sends that passed the current leader by while its first handshake was under way: once it
//! takes sends, in its own turn, they go to it too, as copies beside the pace once the sends
//! that waited for the handshake have gone (see `copies`).
//!
//! A new leader's first streams wait for its handshake, up to
//! [`HANDSHAKE_RIDERS`](crate::engine::liveness::HANDSHAKE_RIDERS) of them (`engine::liveness`);
//! a send made while that many wait goes only to the leaders after it. When that leader is the
//! current one, they hold such sends until their own turns: on the relay's `apac` links a lost
//! datagram of the current leader's first handshake held 40–80 of a run's first sends past it,
//! and they landed 3.7–5 s after they were sent, two turns later — the whole of the run's p99.
//! The leader's turn is not over when its handshake ends, so they go to it then. Only sends
//! made in the current leader's turn are kept, and the list is dropped when the turn ends:
//! sends a later leader holds are its to land.

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::Dispatcher;
use crate::engine::leaders::{LeaderBook, Target};

/// The sends that passed one leader by in its turn.
#[derive(Debug, Default)]
pub(super) struct Missed {
    leader: Option<Pubkey>,
    ids: Vec<u32>,
}

impl Dispatcher {
    /// A send of `id` to `targets` was made now: noted when it passed the current leader by
    /// for its handshake.
    pub(super) fn note_missed(&mut self, id: u32, targets: &[Target], leaders: &LeaderBook) {
        let Some(current) = leaders.current_awaiting_handshake() else {
            return;
        };
        if targets.iter().any(|(l, _)| *l == current) {
            return;
        }
        if self.missed.leader != Some(current) {
            self.missed = Missed {
                leader: Some(current),
                ids: Vec::new(),
            };
        }
        self.missed.ids.push(id);
    }

    /// The current leader answers now: the sends that passed it by in its turn are due now.
    /// Returns how many. Sends that passed a leader whose turn is over are forgotten; those
    /// that passed one whose handshake failed wait for it to answer a probe (a dark leader
    /// never does, and its turn ends).
    pub(super) fn release_missed(&mut self, leaders: &LeaderBook, now: Instant) -> usize {
        let Some(leader) = self.missed.leader else {
            return 0;
        };
        match leaders.current_answering(now) {
            Some((current, true)) if current == leader => {}
            Some((current, _)) if current == leader => return 0,
            _ => {
                self.missed = Missed::default();
                return 0;
            }
        }
        let ids = std::mem::take(&mut self.missed).ids;
        let n = ids.len();
        for id in ids {
            self.copy_beside_riders(id, now);
        }
        if n > 0 {
            log::debug!(
                "{n} sends made while {leader}'s first handshake was under way go to it now: \
                 its turn is on"
            );
        }
        n
    }
}
