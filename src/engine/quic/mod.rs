//! [`Transport`] over QUIC, following the TPU's conventions: ALPN `solana-tpu`, a self-signed
//! certificate whose key is our ed25519 identity, no CA verification of the server, one
//! transaction per unidirectional stream, one reused connection per leader address.
//!
//! Every stream is followed until the server acknowledged its data or stopped it, so each send
//! has a real outcome: accepted, throttled (opens stall, stream stopped, connection closed by
//! the server) or failed — which is what per-leader backoff and the dashboard need.
//!
//! Resources stay bounded on a long run: a handshake is abandoned after
//! [`QuicOptions::connect_timeout`], and a leader address neither prepared nor sent to for
//! [`QuicOptions::evict_after`] has its connection closed and its entry forgotten, so the map
//! holds the upcoming leaders, not every leader met since the start.

use std::{
    collections::HashMap,
    net::{Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::{FutureExt, future::BoxFuture};
use quinn::{
    ClientConfig, Connection, ConnectionError, Endpoint, IdleTimeout, TransportConfig, VarInt,
    WriteError, crypto::rustls::QuicClientConfig,
};
use solana_keypair::Keypair;
use solana_tls_utils::{QuicClientCertificate, tls_client_config_builder};

use super::net::{ABANDONED, Handoff, LinkState, SendError, Transport};

/// ALPN of the Solana TPU's QUIC server.
pub const ALPN_TPU: &[u8] = b"solana-tpu";
/// Idle timeout negotiated with the server; keep-alives keep a quiet connection open.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
const KEEP_ALIVE: Duration = Duration::from_secs(1);
/// An `open_uni` waiting longer than this means the server withholds stream credit: throttling.
const OPEN_STALL: Duration = Duration::from_millis(1_000);
/// Application close code sent when an idle connection is evicted: "no error", we just leave.
const CLOSE_IDLE: u32 = 0;
/// Application close code sent when a connection is given up because the leader stopped
/// answering on it (see [`Transport::abandon`]).
const CLOSE_SILENT: u32 = 1;

/// Bounds on how long the transport waits for, and holds on to, a leader's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuicOptions {
    /// Longest a QUIC handshake may take, for a send's connect as for a pre-connect. A
    /// handshake is one or two round trips (well under a second anywhere on Earth); two
    /// seconds leave room for a retransmitted Initial, and a leader whose handshake takes
    /// longer has mostly finished its four-slot (~1.6 s) window anyway.
    pub connect_timeout: Duration,
    /// A leader address neither prepared nor sent to for this long is closed and forgotten.
    /// The engine prepares the next few leaders about once a slot, and each leads for ~1.6 s,
    /// so ten seconds (the QUIC idle timeout, ~25 slots) is several leader windows past the
    /// last time it was upcoming: it won't be needed soon, while keep-alives would hold its
    /// connection (and one of the few connection slots a validator grants an unstaked client)
    /// open for ever. Should it come back, `prepare` reconnects it ahead of its slot.
    pub evict_after: Duration,
}

impl Default for QuicOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(2),
            evict_after: IDLE_TIMEOUT,
        }
    }
}

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
    /// When the address was last prepared or sent to; eviction judges idleness by it.
    touched: Mutex<Instant>,
    /// Sends under way; a peer with any is never evicted.
    in_flight: AtomicUsize,
}

impl Peer {
    fn touch(&self, now: Instant) {
        *lock(&self.touched) = now;
    }
}

/// Counts a send as under way until dropped (whatever way the send ends), and marks the peer
/// used at both ends so a long send does not look idle.
struct InFlight(Arc<Peer>);

impl InFlight {
    fn new(peer: Arc<Peer>) -> Self {
        peer.in_flight.fetch_add(1, Ordering::SeqCst);
        peer.touch(Instant::now());
        Self(peer)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch(Instant::now());
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A poisoned lock still holds usable plain data (states, instants, the peer map).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

struct Inner {
    endpoint: Endpoint,
    peers: Mutex<HashMap<SocketAddr, Arc<Peer>>>,
    options: QuicOptions,
}

#[derive(Clone)]
pub struct QuicTransport {
    inner: Arc<Inner>,
}

impl QuicTransport {
    /// A client endpoint presenting `identity`; must be called inside a tokio runtime.
    pub fn new(identity: &Keypair) -> Result<Self, QuicSetupError> {
        Self::with_options(identity, QuicOptions::default())
    }

    /// [`QuicTransport::new`] with explicit bounds.
    pub fn with_options(identity: &Keypair, options: QuicOptions) -> Result<Self, QuicSetupError> {
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
                options,
            }),
        })
    }

    /// The entry for `addr`, created if new, marked used now.
    fn peer(&self, addr: SocketAddr, now: Instant) -> Arc<Peer> {
        let mut peers = lock(&self.inner.peers);
        let peer = peers.entry(addr).or_insert_with(|| {
            Arc::new(Peer {
                state: Mutex::new(LinkState::Idle),
                conn: tokio::sync::Mutex::new(None),
                touched: Mutex::new(now),
                in_flight: AtomicUsize::new(0),
            })
        });
        peer.touch(now);
        peer.clone()
    }

    /// Closes and forgets every peer untouched for [`QuicOptions::evict_after`] with no send
    /// under way and no handshake in progress (a handshake is bounded, so it is only
    /// postponed to a later call). Returns how many were evicted.
    fn evict_idle(&self, now: Instant) -> usize {
        let evict_after = self.inner.options.evict_after;
        let mut peers = lock(&self.inner.peers);
        let before = peers.len();
        peers.retain(|addr, peer| {
            let idle = now.saturating_duration_since(*lock(&peer.touched)) >= evict_after;
            if !idle || peer.in_flight.load(Ordering::SeqCst) > 0 {
                return true;
            }
            let Ok(mut conn) = peer.conn.try_lock() else {
                return true;
            };
            if let Some(conn) = conn.take() {
                conn.close(VarInt::from_u32(CLOSE_IDLE), b"idle");
            }
            log::debug!("closed the idle connection to {addr}");
            false
        });
        before - peers.len()
    }

    /// Leader addresses the transport currently holds an entry for.
    pub fn peer_count(&self) -> usize {
        lock(&self.inner.peers).len()
    }
}

fn set_state(peer: &Peer, state: LinkState) {
    *lock(&peer.state) = state;
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
        // Only an abandoned connection has streams left when we close it (eviction waits
        // for none).
        ConnectionError::LocallyClosed => SendError::Connection(ABANDONED.into()),
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
    let bound = inner.options.connect_timeout;
    let result = match connecting {
        // Dropping the unfinished handshake abandons it; quinn closes its state.
        Ok(c) => match tokio::time::timeout(bound, c).await {
            Ok(done) => done.map_err(|e| classify(&e)),
            Err(_) => Err(SendError::Connection(format!(
                "handshake timed out after {} ms",
                bound.as_millis()
            ))),
        },
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

/// A connection-level failure ends this connection: the next send reconnects. Only `conn`
/// itself is forgotten: a late failure of a connection already replaced must not drop its
/// successor.
async fn drop_connection(peer: &Peer, conn: &Connection, err: &SendError) {
    let mut slot = peer.conn.lock().await;
    if slot.as_ref().map(Connection::stable_id) == Some(conn.stable_id()) {
        *slot = None;
        set_state(peer, LinkState::Failed(err.to_string()));
    }
}

async fn send_on(
    inner: Arc<Inner>,
    peer: Arc<Peer>,
    addr: SocketAddr,
    wire: Arc<[u8]>,
    handoff: Handoff,
) -> Result<(), SendError> {
    let _in_flight = InFlight::new(peer.clone());
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
            drop_connection(&peer, &conn, &err).await;
            return Err(err);
        }
        Ok(Ok(s)) => s,
    };
    handoff.mark();
    if let Err(e) = stream.write_all(&wire).await {
        let err = match e {
            WriteError::Stopped(code) => {
                SendError::Throttled(format!("stream stopped by server (code {code})"))
            }
            WriteError::ConnectionLost(c) => {
                let err = classify(&c);
                drop_connection(&peer, &conn, &err).await;
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
            drop_connection(&peer, &conn, &err).await;
            Err(err)
        }
        Err(other) => Err(SendError::Stream(other.to_string())),
    }
}

impl Transport for QuicTransport {
    fn send(
        &self,
        addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> BoxFuture<'static, Result<(), SendError>> {
        let peer = self.peer(addr, Instant::now());
        send_on(self.inner.clone(), peer, addr, wire, handoff).boxed()
    }

    /// Pre-connects the upcoming leaders, then evicts the peers that have been neither
    /// prepared nor used for a while: called about once a slot, it is the transport's clock.
    fn prepare(&self, addrs: &[SocketAddr]) {
        let now = Instant::now();
        for &addr in addrs {
            let peer = self.peer(addr, now);
            let idle = matches!(*lock(&peer.state), LinkState::Idle);
            if idle {
                let inner = self.inner.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection(&inner, &peer, addr).await {
                        log::debug!("pre-connect to {addr} failed: {e}");
                    }
                });
            }
        }
        self.evict_idle(now);
    }

    fn link_state(&self, addr: SocketAddr) -> LinkState {
        let peers = lock(&self.inner.peers);
        peers
            .get(&addr)
            .map(|p| lock(&p.state).clone())
            .unwrap_or(LinkState::Idle)
    }

    /// Closes the address's connection; its waiting streams end with a connection error. A
    /// handshake under way is left alone: it is the fresh attempt, and is bounded anyway.
    fn abandon(&self, addr: SocketAddr) {
        let Some(peer) = lock(&self.inner.peers).get(&addr).cloned() else {
            return;
        };
        let Ok(mut slot) = peer.conn.try_lock() else {
            return;
        };
        if let Some(conn) = slot.take() {
            conn.close(VarInt::from_u32(CLOSE_SILENT), b"no answer");
            set_state(&peer, LinkState::Failed("no answer: reconnecting".into()));
            log::debug!("gave up the silent connection to {addr}");
        }
    }
}

#[cfg(test)]
mod tests;
