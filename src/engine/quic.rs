//! [`Transport`] over QUIC, following the TPU's conventions: ALPN `solana-tpu`, a self-signed
//! certificate whose key is our ed25519 identity, no CA verification of the server, one
//! transaction per unidirectional stream, one reused connection per leader address.
//!
//! Every stream is followed until the server acknowledged its data or stopped it, so each send
//! has a real outcome: accepted, throttled (opens stall, stream stopped, connection closed by
//! the server) or failed — which is what per-leader backoff and the dashboard need.

use std::{
    collections::HashMap,
    net::{Ipv4Addr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use quinn::{
    ClientConfig, Connection, ConnectionError, Endpoint, IdleTimeout, TransportConfig, WriteError,
    crypto::rustls::QuicClientConfig,
};
use solana_keypair::Keypair;
use solana_tls_utils::{QuicClientCertificate, tls_client_config_builder};

use super::net::{LinkState, SendError, Transport};

/// ALPN of the Solana TPU's QUIC server.
pub const ALPN_TPU: &[u8] = b"solana-tpu";
/// Idle timeout negotiated with the server; keep-alives keep a quiet connection open.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
const KEEP_ALIVE: Duration = Duration::from_secs(1);
/// An `open_uni` waiting longer than this means the server withholds stream credit: throttling.
const OPEN_STALL: Duration = Duration::from_millis(1_000);

#[derive(Debug, thiserror::Error)]
pub enum QuicSetupError {
    #[error("building the QUIC TLS config: {0}")]
    Tls(String),
    #[error("binding the QUIC client socket: {0}")]
    Bind(#[from] std::io::Error),
}

struct Peer {
    state: Mutex<LinkState>,
    /// Held across a connect so concurrent sends share one handshake.
    conn: tokio::sync::Mutex<Option<Connection>>,
}

struct Inner {
    endpoint: Endpoint,
    peers: Mutex<HashMap<SocketAddr, Arc<Peer>>>,
}

#[derive(Clone)]
pub struct QuicTransport {
    inner: Arc<Inner>,
}

impl QuicTransport {
    /// A client endpoint presenting `identity`; must be called inside a tokio runtime.
    pub fn new(identity: &Keypair) -> Result<Self, QuicSetupError> {
        let cert = QuicClientCertificate::new(Some(identity));
        let mut crypto = tls_client_config_builder()
            .with_client_auth_cert(vec![cert.certificate.clone()], cert.key.clone_key())
            .map_err(|e| QuicSetupError::Tls(e.to_string()))?;
        crypto.enable_early_data = true;
        crypto.alpn_protocols = vec![ALPN_TPU.to_vec()];
        let mut transport = TransportConfig::default();
        let idle =
            IdleTimeout::try_from(IDLE_TIMEOUT).map_err(|e| QuicSetupError::Tls(e.to_string()))?;
        transport.max_idle_timeout(Some(idle));
        transport.keep_alive_interval(Some(KEEP_ALIVE));
        // Finish a started stream before starting the next: one transaction should not wait
        // behind fragments of many.
        transport.send_fairness(false);
        let quic =
            QuicClientConfig::try_from(crypto).map_err(|e| QuicSetupError::Tls(e.to_string()))?;
        let mut config = ClientConfig::new(Arc::new(quic));
        config.transport_config(Arc::new(transport));
        let mut endpoint = Endpoint::client(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)))?;
        endpoint.set_default_client_config(config);
        Ok(Self {
            inner: Arc::new(Inner {
                endpoint,
                peers: Mutex::new(HashMap::new()),
            }),
        })
    }

    fn peer(&self, addr: SocketAddr) -> Arc<Peer> {
        let mut peers = match self.inner.peers.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        peers
            .entry(addr)
            .or_insert_with(|| {
                Arc::new(Peer {
                    state: Mutex::new(LinkState::Idle),
                    conn: tokio::sync::Mutex::new(None),
                })
            })
            .clone()
    }
}

fn set_state(peer: &Peer, state: LinkState) {
    match peer.state.lock() {
        Ok(mut s) => *s = state,
        Err(poisoned) => *poisoned.into_inner() = state,
    }
}

/// Names a connection-level failure; a server that closes on us is throttling.
fn classify(err: &ConnectionError) -> SendError {
    match err {
        ConnectionError::ApplicationClosed(close) => SendError::Throttled(format!(
            "connection closed by server (code {}{})",
            close.error_code,
            if close.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", String::from_utf8_lossy(&close.reason))
            }
        )),
        ConnectionError::ConnectionClosed(close) => {
            SendError::Connection(format!("closed by server: {close}"))
        }
        ConnectionError::Reset => SendError::Connection("reset by server".into()),
        ConnectionError::TimedOut => SendError::Connection("timed out".into()),
        other => SendError::Connection(other.to_string()),
    }
}

async fn connection(inner: &Inner, peer: &Peer, addr: SocketAddr) -> Result<Connection, SendError> {
    let mut slot = peer.conn.lock().await;
    if let Some(conn) = slot.as_ref()
        && conn.close_reason().is_none()
    {
        return Ok(conn.clone());
    }
    *slot = None;
    set_state(peer, LinkState::Connecting);
    let server_name = solana_tls_utils::socket_addr_to_quic_server_name(addr);
    let connecting = inner
        .endpoint
        .connect(addr, &server_name)
        .map_err(|e| SendError::Connection(e.to_string()));
    let result = match connecting {
        Ok(c) => c.await.map_err(|e| classify(&e)),
        Err(e) => Err(e),
    };
    match result {
        Ok(conn) => {
            set_state(peer, LinkState::Connected);
            *slot = Some(conn.clone());
            Ok(conn)
        }
        Err(err) => {
            set_state(peer, LinkState::Failed(err.to_string()));
            Err(err)
        }
    }
}

/// A connection-level failure ends this connection: the next send reconnects.
async fn drop_connection(peer: &Peer, err: &SendError) {
    *peer.conn.lock().await = None;
    set_state(peer, LinkState::Failed(err.to_string()));
}

async fn send_on(
    inner: Arc<Inner>,
    peer: Arc<Peer>,
    addr: SocketAddr,
    wire: Arc<[u8]>,
) -> Result<(), SendError> {
    let conn = connection(&inner, &peer, addr).await?;
    let mut stream = match tokio::time::timeout(OPEN_STALL, conn.open_uni()).await {
        Err(_) => {
            return Err(SendError::Throttled(format!(
                "stream open stalled over {} ms",
                OPEN_STALL.as_millis()
            )));
        }
        Ok(Err(e)) => {
            let err = classify(&e);
            drop_connection(&peer, &err).await;
            return Err(err);
        }
        Ok(Ok(s)) => s,
    };
    if let Err(e) = stream.write_all(&wire).await {
        let err = match e {
            WriteError::Stopped(code) => {
                SendError::Throttled(format!("stream stopped by server (code {code})"))
            }
            WriteError::ConnectionLost(c) => {
                let err = classify(&c);
                drop_connection(&peer, &err).await;
                err
            }
            other => SendError::Stream(other.to_string()),
        };
        return Err(err);
    }
    // Finishing twice or after a reset is harmless; the outcome comes from `stopped`.
    let _ = stream.finish();
    match stream.stopped().await {
        Ok(None) => Ok(()),
        Ok(Some(code)) => Err(SendError::Throttled(format!(
            "stream stopped by server (code {code})"
        ))),
        Err(quinn::StoppedError::ConnectionLost(c)) => {
            let err = classify(&c);
            drop_connection(&peer, &err).await;
            Err(err)
        }
        Err(other) => Err(SendError::Stream(other.to_string())),
    }
}

impl Transport for QuicTransport {
    fn send(&self, addr: SocketAddr, wire: Arc<[u8]>) -> BoxFuture<'static, Result<(), SendError>> {
        let peer = self.peer(addr);
        send_on(self.inner.clone(), peer, addr, wire).boxed()
    }

    fn prepare(&self, addrs: &[SocketAddr]) {
        for &addr in addrs {
            let peer = self.peer(addr);
            let idle = matches!(peer.state.lock().map(|s| s.clone()), Ok(LinkState::Idle));
            if idle {
                let inner = self.inner.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection(&inner, &peer, addr).await {
                        log::debug!("pre-connect to {addr} failed: {e}");
                    }
                });
            }
        }
    }

    fn link_state(&self, addr: SocketAddr) -> LinkState {
        let peers = match self.inner.peers.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        peers
            .get(&addr)
            .and_then(|p| p.state.lock().ok().map(|s| s.clone()))
            .unwrap_or(LinkState::Idle)
    }
}
