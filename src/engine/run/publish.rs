//! What the loop publishes: a snapshot of every part after each turn that changed something
//! (the journal handed what happened first), and the run's outcome at its end.

use std::{net::SocketAddr, sync::Arc};

use tokio::time::Instant;

use super::Engine;
use crate::engine::{
    outcome::RunOutcome,
    snapshot::{ClusterView, RateView, Snapshot, Verdict, WireView},
};

impl Engine {
    pub(super) fn outcome(&self) -> RunOutcome {
        RunOutcome {
            snapshot: self.snapshot_tx.borrow().clone(),
            commitments: self.confirmer.commitments().to_vec(),
        }
    }

    /// Publishes a snapshot, and hands the journal what happened since the last one.
    pub(super) fn publish(&mut self) {
        if let Err(why) = self.facts.flush() {
            self.fail(why);
        }
        let snap = self.build_snapshot();
        self.snapshot_tx.send_replace(Arc::new(snap));
    }

    pub(super) fn build_snapshot(&mut self) -> Snapshot {
        self.seq += 1;
        let now = Instant::now();
        let elapsed = now - self.start;
        let (achieved, landing) = self.meter.rates(elapsed);
        let transport = self.transport.clone();
        // Over QUIC, an unstaked identity gets Agave's unstaked budget per source address.
        let unstaked = self.sync.staked() == Some(false) && self.cfg.via_rpc.is_none();
        self.leaders
            .refresh_paths(now, |a: SocketAddr| transport.path_figures(a));
        for (leader, tpu, link) in self.leaders.verdict_changes(now) {
            if let Some(v) = link.verdict {
                // A leader that takes nothing from us is named louder than one that is slow.
                let level = match v {
                    Verdict::Dark | Verdict::Evicted | Verdict::Ignoring => log::Level::Warn,
                    _ => log::Level::Info,
                };
                let at = tpu.map_or_else(|| "no address".to_string(), |a| a.to_string());
                log::log!(
                    level,
                    "leader {leader} ({at}): {} — {}",
                    v.label(),
                    link.figures()
                );
            }
            self.store.record_link(leader, tpu, link, now);
        }
        Snapshot {
            seq: self.seq,
            run: self.run.clone(),
            elapsed,
            cluster: ClusterView {
                rpc_url: self.cfg.rpc_url_display.clone(),
                commitment: self.cfg.commitment.as_str(),
                slot: self.leaders.slot(),
                block_height: self.sync.tip_height(),
                identity: self.cfg.identity,
                staked: self.sync.staked(),
                health: self.sync.health().cloned(),
                slot_feed_live: self.sync.feed_live(now),
                fees: self.sync.fees(),
                via_rpc: self.cfg.via_rpc.clone(),
            },
            rate: RateView {
                target: self.dispatcher.target(),
                pacing: self.dispatcher.pacing(now),
                sent_ahead: self.dispatcher.sent_ahead(),
                owed: self.dispatcher.owed_sends(),
                achieved,
                landing,
                history: Arc::new(self.meter.history(elapsed)),
            },
            counts: self.store.counts(),
            leaders: Arc::new(
                self.leaders
                    .views(now, |a: SocketAddr| transport.link_state(a)),
            ),
            txs: self.store.views().clone(),
            queues: self.store.queues().clone(),
            latency: self.meter.latency(),
            wire: WireView {
                shared_budget: self.leaders.shared_budget(now, unstaked),
                ..self.wire.view(elapsed)
            },
            acks: self.meter.acks(),
            leader_totals: Arc::new(self.leaders.all_stats(now)),
            finished_phases: Arc::default(),
            phase: None,
        }
    }
}
