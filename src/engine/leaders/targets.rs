//! Target choice: where the next send goes (the current leader and the next distinct ones that
//! answer, or the pinned `--tpu` address), and which addresses to connect to ahead of their turn.

use std::{collections::HashMap, net::SocketAddr, time::Duration};

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{LeaderBook, SLOTS_PER_LEADER, TARGET_SPARES, Target, WINDOW_EXTRA};
use crate::engine::link::LinkTiming;

/// A slot's length on Solana clusters, for how far ahead a leader's turn is. A cluster whose
/// slots run slower only reaches a turn later than this says, so its connection is never late.
pub(super) const NOMINAL_SLOT: Duration = Duration::from_millis(400);

/// How long before a leader's first slot its connection is started: as long as its handshake
/// may take (`handshake_timeout`: three PTOs of its measured link, a lost Initial and a lost
/// server flight re-sent, never under the server's 2 s) plus one leader's turn, since the
/// list is refreshed about once a slot and a turn's sends begin at its first slot.
pub(super) fn connect_lead(link: &LinkTiming) -> Duration {
    link.handshake_timeout() + NOMINAL_SLOT * SLOTS_PER_LEADER as u32
}

impl LeaderBook {
    /// The first node-list request failed: pinned sends go ahead without a name for the node.
    pub fn nodes_unavailable(&mut self) {
        self.nodes_asked = true;
    }

    pub fn set_addresses(&mut self, addrs: HashMap<Pubkey, SocketAddr>) {
        self.nodes_asked = true;
        self.pinned_identity = self
            .pinned
            .and_then(|p| addrs.iter().find(|(_, a)| **a == p).map(|(k, _)| *k));
        self.addrs = addrs;
    }

    /// Where the next send goes: the current leader and the next distinct ones until
    /// `fanout + 1` of them are known to answer (the fan-out as it stands now: see `fanout`), skipping those without a TPU address, backing
    /// off, or not answering with a stream already waiting (see [`Liveness`]). Empty means
    /// "hold the send".
    ///
    /// A skipped leader is replaced by the one after it, and a leader not known to answer (a
    /// probe after a backoff, the first stream of a new connection) rides along without
    /// filling a place: a send made late in the current leader's turn must still reach a
    /// leader that will take it. With only the current leader behind a blackholed next one, such
    /// a send waited out the silent turn and a resend interval on a 3-node cluster (6.9 s).
    pub fn targets(&self, now: Instant) -> Vec<Target> {
        if let Some(addr) = self.pinned {
            if !self.nodes_asked || !self.may_send(addr, now) {
                return Vec::new();
            }
            return vec![(self.pinned_identity(), Some(addr))];
        }
        let wanted = self.fanout_now(now) + 1;
        let mut out = Vec::with_capacity(wanted + TARGET_SPARES);
        let mut counted = 0;
        for (leader, _, _) in self.upcoming(wanted + TARGET_SPARES) {
            if counted == wanted {
                break;
            }
            let Some(&addr) = self.addrs.get(&leader) else {
                continue;
            };
            if !self.may_send(addr, now) {
                continue;
            }
            out.push((leader, Some(addr)));
            if self.liveness.answers(addr, now) {
                counted += 1;
            }
        }
        out
    }

    /// Whether `addr` is known to answer now (see `Liveness::answers`).
    pub fn answers(&self, addr: SocketAddr, now: Instant) -> bool {
        self.liveness.answers(addr, now)
    }

    pub(super) fn may_send(&self, addr: SocketAddr, now: Instant) -> bool {
        let probing = self
            .backoff
            .get(&addr)
            .is_some_and(|b| !b.answered_since && self.liveness.in_flight(addr) > 0);
        !self.backing_off(addr, now) && !probing && self.liveness.may_send(addr, now)
    }

    /// Addresses worth connecting to ahead of their turn: every leader a send may go to now
    /// (the current one and the fan-out, raised or not: see `fanout`), and each later one whose turn begins within its
    /// [`connect_lead`] — early enough for its handshake to finish before its first slot,
    /// however far the leader is (its measured link, or the defaults before any answer), and
    /// late enough that the connection does not sit idle for long: a 4.0 leader evicts the
    /// least recently active unstaked connection first, and a connection that has carried no
    /// stream is the least active of all.
    pub fn prepare_list(&self) -> Vec<SocketAddr> {
        if let Some(addr) = self.pinned {
            return vec![addr];
        }
        let sent_now = self.paced_fanout();
        self.upcoming(self.fanout + WINDOW_EXTRA)
            .iter()
            .enumerate()
            .filter_map(|(i, (leader, first, _))| {
                let addr = *self.addrs.get(leader)?;
                let starts_in = NOMINAL_SLOT
                    * u32::try_from(first.saturating_sub(self.slot)).unwrap_or(u32::MAX);
                (i <= sent_now || starts_in <= connect_lead(&self.timing(addr))).then_some(addr)
            })
            .collect()
    }

    /// The node behind the pinned address: the one advertising it, else the one named by the
    /// configuration; unknown (the default key) when neither says — never the current leader,
    /// which would credit it with sends it never received.
    pub(super) fn pinned_identity(&self) -> Pubkey {
        self.pinned_identity
            .or(self.pinned_known)
            .unwrap_or_default()
    }

    /// Whether no target takes a send right now (so the pacer should hold): all are backing
    /// off or waiting on an answer.
    pub fn nowhere_to_send(&self, now: Instant) -> bool {
        self.targets(now).is_empty()
    }
}
