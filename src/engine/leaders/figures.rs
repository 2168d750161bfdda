//! Per-leader figures: streams and their outcomes, landings, the median acknowledgement time,
//! and the leaders panel's rows built from them (with each leader's link, see `link`).

use std::{net::SocketAddr, time::Duration};

use hdrhistogram::Histogram;
use solana_pubkey::Pubkey;
use tokio::time::Instant;

use super::{LeaderBook, WINDOW_EXTRA, link::Credit};
use crate::engine::{
    net::LinkState,
    snapshot::{ConnState, LeaderStats, LeaderView, StreamCounts, millis},
};

/// Largest acknowledgement time a leader's median tells apart (the longest send timeout).
const ACK_MAX_MS: u64 = 600_000;

#[derive(Default)]
pub(super) struct Stats {
    pub(super) streams: StreamCounts,
    pub(super) landed: u64,
    /// Acknowledgement times in ms, for the median. Two significant figures keep it a few
    /// kilobytes per leader, whatever the run's length; made on the first answer.
    acks: Option<Histogram<u32>>,
    /// Its streams' waits for stream credit.
    pub(super) credit: Credit,
}

impl Stats {
    pub(super) fn record_ack(&mut self, took: Duration) {
        let acks = self.acks.get_or_insert_with(|| {
            // Constant bounds that satisfy the crate's rules: cannot fail.
            Histogram::new_with_bounds(1, ACK_MAX_MS, 2).expect("constant histogram bounds")
        });
        acks.saturating_record(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
    }

    fn ack_median_ms(&self) -> Option<u64> {
        self.acks
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(0.5))
    }
}

impl LeaderBook {
    /// Forgets every leader's figures for a new batch (see `engine::host`); the schedule, the
    /// addresses and the backoffs stay, since they are about the cluster, not the batch.
    pub fn reset_stats(&mut self) {
        self.stats.clear();
        self.last_addr.clear();
        self.verdicts.clear();
    }

    /// Every leader sent to in this run, with its figures, most streams first.
    pub fn all_stats(&self, now: Instant) -> Vec<LeaderStats> {
        let mut all: Vec<LeaderStats> = self
            .stats
            .iter()
            .map(|(identity, s)| {
                let tpu_quic = self.last_addr.get(identity).copied();
                LeaderStats {
                    identity: *identity,
                    tpu_quic,
                    streams: s.streams,
                    landed: s.landed,
                    ack_ms_p50: s.ack_median_ms(),
                    backoff_level: tpu_quic
                        .and_then(|a| self.backoff.get(&a))
                        .filter(|b| b.until > now)
                        .map_or(0, |b| b.level + 1),
                    link: self.link_view(identity, tpu_quic, now),
                }
            })
            .collect();
        all.sort_by(|a, b| {
            b.streams
                .sent
                .cmp(&a.streams.sent)
                .then(a.identity.cmp(&b.identity))
        });
        all
    }

    /// Counts a landing for the leader of `slot` and names it; `None` when that slot's
    /// schedule is not known.
    pub fn on_landed(&mut self, slot: u64) -> Option<Pubkey> {
        let leader = self.leader_at(slot)?;
        self.stats.entry(leader).or_default().landed += 1;
        Some(leader)
    }

    /// The leaders panel: current first, then upcoming, with per-leader figures.
    pub fn views(&self, now: Instant, link: impl Fn(SocketAddr) -> LinkState) -> Vec<LeaderView> {
        let rows: Vec<(Pubkey, u64, u64)> = match self.pinned {
            Some(_) => vec![(self.pinned_identity(), self.slot, self.slot)],
            None => self.upcoming(self.fanout + WINDOW_EXTRA),
        };
        rows.into_iter()
            .map(|(identity, first_slot, last_slot)| {
                let tpu_quic = match self.pinned {
                    Some(a) => Some(a),
                    None => self.addrs.get(&identity).copied(),
                };
                let (streams, landed) = self
                    .stats
                    .get(&identity)
                    .map_or((StreamCounts::default(), 0), |s| (s.streams, s.landed));
                let conn = match tpu_quic {
                    None => ConnState::NoAddress,
                    Some(addr) => match self.backoff.get(&addr) {
                        Some(b) if b.until > now => ConnState::BackingOff {
                            remaining_ms: millis(b.until - now),
                            kind: b.kind,
                            reason: b.reason.clone(),
                        },
                        _ => match self.liveness.silent_for(addr, now) {
                            Some(waited) => ConnState::Silent {
                                for_ms: millis(waited),
                            },
                            None => match link(addr) {
                                LinkState::Idle => ConnState::Idle,
                                LinkState::Connecting => ConnState::Connecting,
                                LinkState::Connected => ConnState::Connected,
                                LinkState::Failed(reason) => ConnState::Failed { reason },
                            },
                        },
                    },
                };
                LeaderView {
                    identity,
                    tpu_quic,
                    first_slot,
                    last_slot,
                    conn,
                    streams,
                    landed,
                    link: self.link_view(&identity, tpu_quic, now),
                }
            })
            .collect()
    }
}
