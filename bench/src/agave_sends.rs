//! Counting every send of Agave's TpuClient where the client makes it: its QUIC connection
//! cache built as `ConnectionCache::new` builds it (`solana-client` 4.0.0: a random client
//! certificate, 4 connections per address), with each connection wrapped so that a call to
//! send counts its transactions before the send starts. Agave's own counter (the cache's
//! `num_packets`) grows only when a send finishes, so it misses a send its client's 5 s timeout
//! dropped; this count has every attempt, in the unit txpace's streams are counted in: one per
//! transaction per leader address. An empty send (the cache warmer's) is not a transaction and
//! is not counted, as the cache does not count it either.

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use anyhow::{Result, anyhow};
use solana_connection_cache::{
    client_connection::ClientConnection as BlockingConnection,
    connection_cache::{
        BaseClientConnection, ConnectionCache, ConnectionManager, ConnectionPool,
        ConnectionPoolError, NewConnectionConfig, Protocol,
    },
    connection_cache_stats::ConnectionCacheStats,
    nonblocking::client_connection::ClientConnection as NonblockingConnection,
};
use solana_keypair::Keypair;
use solana_quic_client::{QuicConfig, QuicConnectionManager, QuicPool};
use solana_transaction_error::TransportResult;

/// Connections per address, as `ConnectionCache::new` sets it.
const POOL_SIZE: usize = 4;

/// The sends counted, shared by every connection of a cache.
pub type SendCount = Arc<AtomicU64>;

/// Agave's QUIC connection cache with every send counted.
pub type CountingCache = ConnectionCache<CountingPool, CountingManager, QuicConfig>;

/// A QUIC connection cache named `name`, configured as `ConnectionCache::new(name)` configures
/// one, whose sends are counted in the returned [`SendCount`].
pub fn counting_cache(name: &'static str) -> Result<(Arc<CountingCache>, SendCount)> {
    let mut config = QuicConfig::new().map_err(|e| anyhow!("QUIC client config: {e}"))?;
    config.update_client_certificate(&Keypair::new(), IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let sent = SendCount::default();
    let manager = CountingManager {
        inner: QuicConnectionManager::new_with_connection_config(config),
        sent: sent.clone(),
    };
    let cache = ConnectionCache::new(name, manager, POOL_SIZE)
        .map_err(|e| anyhow!("QUIC connection cache: {e}"))?;
    Ok((Arc::new(cache), sent))
}

/// Agave's `QuicConnectionManager`, its pools' connections counting their sends.
pub struct CountingManager {
    inner: QuicConnectionManager,
    sent: SendCount,
}

impl ConnectionManager for CountingManager {
    type ConnectionPool = CountingPool;
    type NewConnectionConfig = QuicConfig;

    const PROTOCOL: Protocol = Protocol::QUIC;

    fn new_connection_pool(&self) -> CountingPool {
        CountingPool {
            inner: self.inner.new_connection_pool(),
            sent: self.sent.clone(),
        }
    }

    fn new_connection_config(&self) -> QuicConfig {
        self.inner.new_connection_config()
    }

    fn update_key(&self, key: &Keypair) -> Result<(), Box<dyn std::error::Error>> {
        self.inner.update_key(key)
    }
}

/// Agave's `QuicPool`, handing out counting connections.
pub struct CountingPool {
    inner: QuicPool,
    sent: SendCount,
}

type QuicBase = <QuicPool as ConnectionPool>::BaseClientConnection;

impl ConnectionPool for CountingPool {
    type NewConnectionConfig = QuicConfig;
    type BaseClientConnection = CountingBase;

    fn add_connection(&mut self, config: &QuicConfig, addr: &SocketAddr) -> usize {
        self.inner.add_connection(config, addr)
    }

    fn num_connections(&self) -> usize {
        self.inner.num_connections()
    }

    fn get(&self, index: usize) -> Result<Arc<CountingBase>, ConnectionPoolError> {
        Ok(Arc::new(CountingBase {
            inner: self.inner.get(index)?,
            sent: self.sent.clone(),
        }))
    }

    fn create_pool_entry(&self, config: &QuicConfig, addr: &SocketAddr) -> Arc<CountingBase> {
        Arc::new(CountingBase {
            inner: self.inner.create_pool_entry(config, addr),
            sent: self.sent.clone(),
        })
    }
}

/// A pooled QUIC connection whose blocking and non-blocking handles count their sends.
pub struct CountingBase {
    inner: Arc<QuicBase>,
    sent: SendCount,
}

impl BaseClientConnection for CountingBase {
    type BlockingClientConnection =
        Counting<<QuicBase as BaseClientConnection>::BlockingClientConnection>;
    type NonblockingClientConnection =
        Counting<<QuicBase as BaseClientConnection>::NonblockingClientConnection>;

    fn new_blocking_connection(
        &self,
        addr: SocketAddr,
        stats: Arc<ConnectionCacheStats>,
    ) -> Arc<Self::BlockingClientConnection> {
        Arc::new(Counting {
            inner: self.inner.new_blocking_connection(addr, stats),
            sent: self.sent.clone(),
        })
    }

    fn new_nonblocking_connection(
        &self,
        addr: SocketAddr,
        stats: Arc<ConnectionCacheStats>,
    ) -> Arc<Self::NonblockingClientConnection> {
        Arc::new(Counting {
            inner: self.inner.new_nonblocking_connection(addr, stats),
            sent: self.sent.clone(),
        })
    }
}

/// A connection handle that counts each transaction it is asked to send, then sends it.
pub struct Counting<T> {
    inner: Arc<T>,
    sent: SendCount,
}

impl<T> Counting<T> {
    /// Counts the non-empty buffers of a send.
    fn count<'a>(&self, buffers: impl IntoIterator<Item = &'a [u8]>) {
        let n = buffers.into_iter().filter(|b| !b.is_empty()).count();
        if n > 0 {
            crate::first_send::note(self.sent.fetch_add(n as u64, Ordering::Relaxed));
        }
    }
}

impl<T: BlockingConnection> BlockingConnection for Counting<T> {
    fn server_addr(&self) -> &SocketAddr {
        self.inner.server_addr()
    }

    fn send_data(&self, buffer: &[u8]) -> TransportResult<()> {
        self.count([buffer]);
        self.inner.send_data(buffer)
    }

    fn send_data_async(&self, buffer: Arc<Vec<u8>>) -> TransportResult<()> {
        self.count([buffer.as_slice()]);
        self.inner.send_data_async(buffer)
    }

    fn send_data_batch(&self, buffers: &[Vec<u8>]) -> TransportResult<()> {
        self.count(buffers.iter().map(Vec::as_slice));
        self.inner.send_data_batch(buffers)
    }

    fn send_data_batch_async(&self, buffers: Vec<Vec<u8>>) -> TransportResult<()> {
        self.count(buffers.iter().map(Vec::as_slice));
        self.inner.send_data_batch_async(buffers)
    }
}

#[async_trait::async_trait]
impl<T: NonblockingConnection + Send + Sync> NonblockingConnection for Counting<T> {
    fn server_addr(&self) -> &SocketAddr {
        self.inner.server_addr()
    }

    async fn send_data(&self, buffer: &[u8]) -> TransportResult<()> {
        self.count([buffer]);
        self.inner.send_data(buffer).await
    }

    async fn send_data_batch(&self, buffers: &[Vec<u8>]) -> TransportResult<()> {
        self.count(buffers.iter().map(Vec::as_slice));
        self.inner.send_data_batch(buffers).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A connection whose sends succeed at once (`pending: false`) or never finish.
    struct Fake {
        addr: SocketAddr,
        pending: bool,
    }

    impl BlockingConnection for Fake {
        fn server_addr(&self) -> &SocketAddr {
            &self.addr
        }
        fn send_data(&self, _: &[u8]) -> TransportResult<()> {
            Ok(())
        }
        fn send_data_async(&self, _: Arc<Vec<u8>>) -> TransportResult<()> {
            Ok(())
        }
        fn send_data_batch(&self, _: &[Vec<u8>]) -> TransportResult<()> {
            Ok(())
        }
        fn send_data_batch_async(&self, _: Vec<Vec<u8>>) -> TransportResult<()> {
            Ok(())
        }
    }

    #[async_trait::async_trait]
    impl NonblockingConnection for Fake {
        fn server_addr(&self) -> &SocketAddr {
            &self.addr
        }
        async fn send_data(&self, _: &[u8]) -> TransportResult<()> {
            if self.pending {
                std::future::pending::<()>().await;
            }
            Ok(())
        }
        async fn send_data_batch(&self, _: &[Vec<u8>]) -> TransportResult<()> {
            Ok(())
        }
    }

    fn counting(pending: bool) -> (Counting<Fake>, SendCount) {
        let sent = SendCount::default();
        let fake = Fake {
            addr: "127.0.0.1:8009".parse().expect("an address"),
            pending,
        };
        (
            Counting {
                inner: Arc::new(fake),
                sent: sent.clone(),
            },
            sent,
        )
    }

    /// One per transaction of each call; the cache warmer's empty sends are not transactions.
    #[test]
    fn every_transaction_handed_to_a_connection_is_counted_once() {
        let (c, sent) = counting(false);
        BlockingConnection::send_data(&c, b"tx").unwrap();
        BlockingConnection::send_data(&c, b"").unwrap();
        c.send_data_async(Arc::new(b"tx".to_vec())).unwrap();
        BlockingConnection::send_data_batch(&c, &[b"a".to_vec(), vec![], b"b".to_vec()]).unwrap();
        c.send_data_batch_async(vec![b"a".to_vec()]).unwrap();
        assert_eq!(sent.load(Ordering::Relaxed), 5);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            NonblockingConnection::send_data(&c, b"tx").await.unwrap();
            NonblockingConnection::send_data_batch(&c, &[b"a".to_vec(), b"b".to_vec()])
                .await
                .unwrap();
        });
        assert_eq!(sent.load(Ordering::Relaxed), 8);
    }

    /// A send its client's timeout drops before it finishes is counted: it was made (Agave's
    /// own counter, which grows when a send finishes, would miss it).
    #[test]
    fn a_send_dropped_by_a_timeout_is_counted() {
        let (c, sent) = counting(true);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let done = rt.block_on(async {
            tokio::time::timeout(
                Duration::from_millis(10),
                NonblockingConnection::send_data(&c, b"tx"),
            )
            .await
        });
        assert!(done.is_err(), "the send was to time out");
        assert_eq!(sent.load(Ordering::Relaxed), 1);
    }
}
