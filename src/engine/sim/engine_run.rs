//! The engine on the simulated cluster, the cluster being both its chain and its transport.

use std::sync::Arc;

use super::SimCluster;
use crate::{
    engine::{self, EngineConfig, EngineHandle, snapshot::Snapshot},
    source::LoadedTx,
};

impl SimCluster {
    /// Starts the engine with `cfg` on `txs` against this cluster.
    pub fn start_engine(&self, cfg: EngineConfig, txs: Vec<LoadedTx>) -> EngineHandle {
        engine::spawn(
            cfg,
            txs,
            Arc::new(self.clone()),
            Arc::new(self.clone()),
            None,
        )
    }

    /// [`SimCluster::start_engine`], and the engine's last snapshot once every transaction is
    /// final.
    pub async fn run_engine(&self, cfg: EngineConfig, txs: Vec<LoadedTx>) -> Arc<Snapshot> {
        self.start_engine(cfg, txs)
            .task
            .await
            .expect("engine")
            .snapshot
    }
}
