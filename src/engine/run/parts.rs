//! The parts that belong to one run's transactions, for a lone run and each batch of a host.

use std::sync::Arc;

use tokio::{sync::mpsc, time::Instant};

use crate::{
    engine::{
        config::EngineConfig, confirm::Confirmer, dispatch::Dispatcher, net::Transport,
        store::TxStore, update::Update,
    },
    source::LoadedTx,
};

/// What belongs to one run's transactions (a lone run's, or one batch's of a host), built the
/// same way for both.
pub(super) struct BatchParts {
    pub(super) store: TxStore,
    pub(super) confirmer: Confirmer,
    pub(super) dispatcher: Dispatcher,
    /// The median compute-unit price, for where it sits among recent fees.
    pub(super) batch_price: u64,
}

impl BatchParts {
    pub(super) fn new(
        cfg: &EngineConfig,
        txs: Vec<LoadedTx>,
        transport: &Arc<dyn Transport>,
        updates: &mpsc::UnboundedSender<Update>,
        now: Instant,
        batch: u32,
    ) -> Self {
        let confirmer = Confirmer::new(cfg, &txs, now);
        let dispatcher = Dispatcher::new(
            cfg,
            txs.len(),
            transport.clone(),
            updates.clone(),
            now,
            batch,
        );
        let batch_price = crate::fees::median_price(&txs);
        let mut store = TxStore::new(txs, now);
        if let Some(events) = cfg.events.clone() {
            store.set_events(events);
        }
        Self {
            store,
            confirmer,
            dispatcher,
            batch_price,
        }
    }
}
