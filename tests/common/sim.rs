//! The engine on the simulated cluster (`txpace::engine::sim`, paused tokio clock): the setup
//! every engine test starts from.

use std::sync::Arc;

use solana_hash::Hash;
use solana_pubkey::Pubkey;
use txpace::engine::{self, EngineConfig, EngineHandle, sim::SimCluster, snapshot::RateTarget};
use txpace::source::LoadedTx;

/// A run at a fixed `rate`, with a throwaway identity.
pub fn config(rate: f64) -> EngineConfig {
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(rate);
    cfg
}

/// A blockhash no other test uses.
pub fn unique_hash() -> Hash {
    Hash::new_from_array(Pubkey::new_unique().to_bytes())
}

pub fn leaders(n: usize) -> Vec<Pubkey> {
    (0..n).map(|_| Pubkey::new_unique()).collect()
}

/// Starts the engine on the simulated cluster (both its chain and its transport).
pub fn start(cluster: &SimCluster, cfg: EngineConfig, txs: Vec<LoadedTx>) -> EngineHandle {
    engine::spawn(
        cfg,
        txs,
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        None,
    )
}
