//! When each step towards landing first happened to a transaction — its first stream handed to
//! the transport, the first acknowledged, the first status lookup that found it — so its time
//! to land can be cut into its parts (see `snapshot::LandParts`); and the link events of the
//! `--events` stream, which the store emits like every other.

use std::net::SocketAddr;

use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{TxStore, stamp::Stamp};
use crate::engine::{event::RunEvent, snapshot::LinkView};

/// The first time each step happened, over all of a transaction's sends: as moments, or as a
/// record holds them ([`Stamp`]s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marks<T = Instant> {
    /// A stream of it was handed to the transport.
    pub handed: Option<T>,
    /// A leader acknowledged a stream of it.
    pub acked: Option<T>,
    /// A status lookup found it in a slot (at any commitment).
    pub seen: Option<T>,
}

impl<T> Default for Marks<T> {
    fn default() -> Self {
        Marks {
            handed: None,
            acked: None,
            seen: None,
        }
    }
}

impl<T> Marks<T> {
    fn map<U>(self, f: impl Fn(T) -> U) -> Marks<U> {
        Marks {
            handed: self.handed.map(&f),
            acked: self.acked.map(&f),
            seen: self.seen.map(&f),
        }
    }
}

impl TxStore {
    /// A stream of `id` ended: handed to the transport at `handed` (if it was), and
    /// acknowledged at `acked` (if it was).
    pub fn note_stream(&mut self, id: u32, handed: Option<Instant>, acked: Option<Instant>) {
        let start = self.start;
        let Some(rec) = self.records.get_mut(id as usize) else {
            return;
        };
        let stamp = |t: Option<Instant>| t.map(|t| Stamp::at(t, start));
        let m = &mut rec.marks;
        m.handed = m.handed.into_iter().chain(stamp(handed)).min();
        m.acked = m.acked.into_iter().chain(stamp(acked)).min();
    }

    /// When `id` was first sent, and the first time each later step happened.
    pub fn marks(&self, id: u32) -> Option<(Instant, Marks)> {
        let rec = self.records.get(id as usize)?;
        let marks = rec.marks.map(|s| s.instant(self.start));
        Some((rec.first_sent?.instant(self.start), marks))
    }

    /// A leader's verdict changed: the event for `--events`.
    pub fn record_link(
        &self,
        leader: Pubkey,
        tpu: Option<SocketAddr>,
        link: LinkView,
        now: Instant,
    ) {
        self.emit(|| RunEvent::Link {
            at_ms: crate::engine::snapshot::millis(self.since_start(now)),
            leader,
            tpu,
            link,
        });
    }
}
