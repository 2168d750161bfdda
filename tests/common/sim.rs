//! The engine on the simulated cluster (`txpace::engine::sim`, paused tokio clock): the setup
//! every engine test starts from.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use futures::future::BoxFuture;
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use txpace::engine::{
    self, EngineConfig, EngineHandle,
    net::{Handoff, LinkState, SendError, Transport},
    sim::{SimCluster, SimSend},
    snapshot::RateTarget,
};
use txpace::source::LoadedTx;

/// A run at a fixed `rate`, with a throwaway identity.
pub fn config(rate: f64) -> EngineConfig {
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(rate);
    cfg
}

/// The most of `sends` a leader finished with within any `span` (a 4.0 leader counts an
/// unstaked peer's streams in 100 ms windows): what "no burst" is judged by.
pub fn most_within(sends: &[SimSend], span: Duration) -> usize {
    let mut at: Vec<Duration> = sends.iter().map(|s| s.at).collect();
    at.sort_unstable();
    let (mut most, mut j) = (0, 0);
    for i in 0..at.len() {
        while j < at.len() && at[j] < at[i] + span {
            j += 1;
        }
        most = most.max(j - i);
    }
    most
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
    cluster.start_engine(cfg, txs)
}

/// [`start`], with the cluster's websocket feed (slots and slot commitments) as well.
pub fn start_with_feed(
    cluster: &SimCluster,
    cfg: EngineConfig,
    txs: Vec<LoadedTx>,
) -> EngineHandle {
    engine::spawn(
        cfg,
        txs,
        Arc::new(cluster.clone()),
        Arc::new(cluster.clone()),
        Some(cluster.slot_feed()),
    )
}

/// The simulated cluster's transport, except that it panics on the engine's own task (its
/// `prepare` is called from the loop) the sixth time it is asked to prepare, a few polls in.
pub struct PanickingTransport {
    inner: SimCluster,
    calls: AtomicUsize,
}

/// What the panic says.
pub const TRANSPORT_PANIC: &str = "boom: the transport lost its mind";

impl PanickingTransport {
    pub fn new(cluster: &SimCluster) -> Self {
        Self {
            inner: cluster.clone(),
            calls: AtomicUsize::new(0),
        }
    }
}

impl Transport for PanickingTransport {
    fn send(
        &self,
        addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> BoxFuture<'static, Result<(), SendError>> {
        self.inner.send(addr, wire, handoff)
    }

    fn prepare(&self, _addrs: &[SocketAddr]) {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 5 {
            panic!("{TRANSPORT_PANIC}");
        }
    }

    fn link_state(&self, addr: SocketAddr) -> LinkState {
        self.inner.link_state(addr)
    }
}

/// Another sender's load on `addr`: `connections` senders on `ip` (one connection each), each
/// sending `per_second` streams until the task is aborted. On the engine's address
/// ([`txpace::engine::sim::DEFAULT_SENDER_IP`]) they share the engine's budget with it.
pub fn flood(
    cluster: &SimCluster,
    ip: std::net::IpAddr,
    addr: SocketAddr,
    connections: usize,
    per_second: f64,
) -> tokio::task::JoinHandle<()> {
    let senders: Vec<_> = (0..connections).map(|_| cluster.sender(ip, 0.0)).collect();
    let cluster = cluster.clone();
    tokio::spawn(async move {
        let gap = std::time::Duration::from_secs_f64(1.0 / per_second);
        loop {
            let wires: Vec<_> = cluster
                .transactions(senders.len(), unique_hash())
                .into_iter()
                .map(|t| t.wire)
                .collect();
            for (s, w) in senders.iter().zip(wires) {
                tokio::spawn(s.send(addr, w, Handoff::default()));
            }
            tokio::time::sleep(gap).await;
        }
    })
}
