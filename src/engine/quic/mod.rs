//! [`Transport`] over QUIC, following the TPU's conventions: ALPN `solana-tpu`, a self-signed
//! certificate whose key is our ed25519 identity, no CA verification of the server, one
//! transaction per unidirectional stream, reused connections per leader address — one, or as
//! many as a lossy link needs and the leader allows (see `pool`); each stream's way through
//! them is `stream`.
//!
//! Every stream is followed until the server acknowledged its data or stopped it, so each send
//! has a real outcome: accepted, throttled (opens stall, stream stopped, connection closed by
//! the server) or failed — which is what per-leader backoff and the dashboard need.
//!
//! Resources stay bounded on a long run: a handshake is abandoned after its bound (see
//! [`QuicOptions::connect_timeout`]), and a leader address neither prepared nor sent to for
//! [`QuicOptions::evict_after`] has its connections closed and its entry forgotten, so the map
//! holds the upcoming leaders, not every leader met since the start.
//!
//! What the connections to each leader measured — quinn's path statistics, the handshakes,
//! the close codes the leader sent — is kept for the operator (see `figures`).
//!
//! Congestion control is BBR with a large initial window (see [`INITIAL_WINDOW`]): the
//! streams are one datagram each and the pace is known, so the loss-based controllers' answer
//! to a 5% lossy link — halving the window at each loss — only queued the pace behind a window
//! of a few datagrams a round trip.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::{FutureExt, future::BoxFuture};
use quinn::{
    ClientConfig, ConnectionError, Endpoint, IdleTimeout, TransportConfig, congestion::BbrConfig,
    crypto::rustls::QuicClientConfig,
};
use solana_keypair::Keypair;
use solana_tls_utils::{QuicClientCertificate, tls_client_config_builder};

use super::{
    handshakes::{Failed, Release},
    link::LinkTiming,
    net::{ABANDONED, Handoff, LinkState, PathFigures, SendError, Transport},
};
use connect::connection;
use figures::Gone;
use pool::Pool;
use stream::send_on;

mod connect;
mod figures;
mod first;
mod pool;
mod probe;
mod runs;
mod stream;

use first::FirstWaiters;

/// ALPN of the Solana TPU's QUIC server.
pub const ALPN_TPU: &[u8] = b"solana-tpu";
/// Idle timeout negotiated with the server; keep-alives keep a quiet connection open.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
const KEEP_ALIVE: Duration = Duration::from_secs(1);
/// Largest transaction on the wire (`PACKET_DATA_SIZE`): one stream, one datagram.
const PACKET_DATA_SIZE: u64 = 1_232;
/// The congestion window a connection starts with: 128 transactions, a 4.0 leader's stream
/// credit for an unstaked connection, as `solana-tpu-client-next` 4.0.0 sets it
/// (`INITIAL_CONGESTION_WINDOW`). QUIC's default (about 10 datagrams) is made for bulk
/// transfers that probe for bandwidth; our streams are small and paced, and at 320 ms ten
/// datagrams a round trip is a third of 100 tx/s.
const INITIAL_WINDOW: u64 = 128 * PACKET_DATA_SIZE;
/// Application close code sent when an idle connection is evicted: "no error", we just leave.
const CLOSE_IDLE: u32 = 0;
/// Application close code sent when a connection is given up because the leader stopped
/// answering on it (see [`Transport::abandon`]), or never admitted it (see `send_on`).
const CLOSE_SILENT: u32 = 1;

/// Bounds on how long the transport waits for, and holds on to, a leader's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuicOptions {
    /// Longest a QUIC handshake may take to a leader nothing has been measured of, for a
    /// send's connect as for a pre-connect, and the least it may take to any. A handshake is
    /// one or two round trips (well under a second anywhere on Earth); two seconds — the
    /// server's own bound — leave room for a retransmitted Initial. On a measured link the
    /// bound is three of its PTOs when longer ([`LinkTiming::handshake_timeout`]): a lossy
    /// far link needs them, and giving up sooner only repeats the handshake through the same
    /// loss.
    pub connect_timeout: Duration,
    /// A leader address neither prepared nor sent to for this long is closed and forgotten.
    /// The engine prepares the next few leaders about once a slot, and each leads for ~1.6 s,
    /// so ten seconds (the QUIC idle timeout, ~25 slots) is several leader windows past the
    /// last time it was upcoming: it won't be needed soon, while keep-alives would hold its
    /// connection (and one of the few connection slots a validator grants an unstaked client)
    /// open for ever. Should it come back, `prepare` reconnects it ahead of its slot.
    pub evict_after: Duration,
    /// The local address QUIC sends from (`--bind`): a 4.0 leader counts an unstaked
    /// sender's budget per source address, so two senders on one host share it unless one
    /// sends from another address.
    pub bind: IpAddr,
}

impl Default for QuicOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(2),
            evict_after: IDLE_TIMEOUT,
            bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
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
    /// Held across a handshake: concurrent sends share one, and the pool grows by one at a
    /// time (but for the first connections, see `first`).
    connecting: tokio::sync::Mutex<()>,
    /// The streams waiting for the first handshake, and the handshakes started beside it.
    first: FirstWaiters,
    /// The handshakes that failed: a send that waited for one fails with it.
    failed: Mutex<Failed<SendError>>,
    /// When each send that waited for a handshake goes once it ends (spaced to the leader's
    /// budget).
    release: Mutex<Release>,
    pool: Pool,
    /// When the address was last prepared or sent to; eviction judges idleness by it.
    touched: Mutex<Instant>,
    /// Sends under way; a peer with any is never evicted.
    in_flight: AtomicUsize,
    /// Streams moved off a connection the leader closed before it answered anything on it
    /// (see `send_on`).
    moved: AtomicUsize,
}

impl Peer {
    fn touch(&self, now: Instant) {
        *lock(&self.touched) = now;
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
    /// The TLS side of every connection; each handshake gets its own transport settings
    /// (see [`Inner::client_config`]).
    quic: Arc<QuicClientConfig>,
    /// The idle timeout and congestion controller every connection shares (see
    /// [`transport_config`]): checked and built once, at setup.
    idle: IdleTimeout,
    congestion: Arc<BbrConfig>,
    peers: Mutex<HashMap<SocketAddr, Arc<Peer>>>,
    options: QuicOptions,
    /// The measured link with the longest PTO: a leader not measured yet is given its rules.
    worst: Mutex<Option<LinkTiming>>,
    /// The figures of evicted peers (see `figures`).
    gone: Mutex<Gone>,
}

impl Inner {
    /// `peer`'s time rules: its own link's once measured, else the worst link's seen.
    fn timing(&self, peer: &Peer) -> Option<LinkTiming> {
        peer.pool.timing().or(*lock(&self.worst))
    }

    /// How long a handshake to `peer` may take (see [`QuicOptions::connect_timeout`]).
    fn handshake_bound(&self, peer: &Peer) -> Duration {
        let floor = self.options.connect_timeout;
        self.timing(peer)
            .map_or(floor, |t| t.handshake_timeout().max(floor))
    }

    /// The settings of one handshake to `peer`: the transport's (see [`transport_config`]),
    /// started from the round trip [`handshake_rtt`] expects of it.
    fn client_config(&self, peer: &Peer) -> ClientConfig {
        let mut config = ClientConfig::new(self.quic.clone());
        config.transport_config(Arc::new(transport_config(
            handshake_rtt(self.timing(peer)),
            self.idle,
            self.congestion.clone(),
        )));
        config
    }

    /// A link was measured anew: it may be the worst now.
    fn measured(&self, timing: LinkTiming) {
        let mut worst = lock(&self.worst);
        if worst.is_none_or(|w| timing.pto() > w.pto()) {
            *worst = Some(timing);
        }
    }
}

/// The round trip a handshake starts from before it has measured its own: quinn re-sends a
/// lost Initial three of these later, and its default (RFC 9002's 333 ms) made one lost
/// datagram of a handshake cost a second. On the relay's `apac` link (230 ms, 2% loss) a
/// current leader's first handshake once took 1.2 s that way, while the sends made meanwhile
/// went past it to the next leaders, which held them for their own turns: 3.7–4.8 s to land,
/// the whole of the run's p99. So a handshake starts from the link measured to this leader,
/// or the worst measured to any (a leader farther than that only sees its Initial re-sent
/// early, a duplicate the server ignores), never under [`HANDSHAKE_RTT_FLOOR`]; before any
/// measurement, from [`UNMEASURED_HANDSHAKE_RTT`].
fn handshake_rtt(measured: Option<LinkTiming>) -> Duration {
    measured.map_or(UNMEASURED_HANDSHAKE_RTT, |t| {
        t.srtt.max(HANDSHAKE_RTT_FLOOR)
    })
}

/// A first handshake's round trip before anything is measured: Chromium's QUIC starts from the
/// same 100 ms. A lost Initial is re-sent after 300 ms, and one on a link slower than that is
/// re-sent once for nothing.
const UNMEASURED_HANDSHAKE_RTT: Duration = Duration::from_millis(100);
/// The least round trip a handshake starts from: a loopback leader answers in well under a
/// millisecond, but its side of the handshake (a signature, on a busy machine) takes longer,
/// and re-sending Initials every few milliseconds would only load it.
const HANDSHAKE_RTT_FLOOR: Duration = Duration::from_millis(50);

/// The transport settings of one connection, its handshake starting from `initial_rtt`.
fn transport_config(
    initial_rtt: Duration,
    idle: IdleTimeout,
    congestion: Arc<BbrConfig>,
) -> TransportConfig {
    let mut transport = TransportConfig::default();
    transport.max_idle_timeout(Some(idle));
    transport.keep_alive_interval(Some(KEEP_ALIVE));
    transport.initial_rtt(initial_rtt);
    transport.congestion_controller_factory(congestion);
    // Finish a started stream before starting the next: one transaction should not wait
    // behind fragments of many.
    transport.send_fairness(false);
    // Bounded, so that it can be raised: each raise is a tail-loss probe (see `probe`).
    transport.receive_window(quinn::VarInt::from_u32(probe::RECEIVE_WINDOW));
    transport
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
        let quic = Arc::new(
            QuicClientConfig::try_from(crypto).map_err(|e| QuicSetupError::Tls(e.to_string()))?,
        );
        let idle =
            IdleTimeout::try_from(IDLE_TIMEOUT).map_err(|e| QuicSetupError::Tls(e.to_string()))?;
        // BBR paces at the bandwidth it measures and does not halve its window at each loss,
        // which on a lossy link held the pace to a few datagrams a round trip (see the module
        // doc); tpu-client-next keeps Cubic with the same large initial window.
        let mut bbr = BbrConfig::default();
        bbr.initial_window(INITIAL_WINDOW);
        let endpoint = Endpoint::client(SocketAddr::new(options.bind, 0))?;
        Ok(Self {
            inner: Arc::new(Inner {
                endpoint,
                quic,
                idle,
                congestion: Arc::new(bbr),
                peers: Mutex::new(HashMap::new()),
                options,
                worst: Mutex::new(None),
                gone: Mutex::default(),
            }),
        })
    }

    /// The entry for `addr`, created if new, marked used now.
    fn peer(&self, addr: SocketAddr, now: Instant) -> Arc<Peer> {
        let mut peers = lock(&self.inner.peers);
        let peer = peers.entry(addr).or_insert_with(|| {
            Arc::new(Peer {
                state: Mutex::new(LinkState::Idle),
                connecting: tokio::sync::Mutex::new(()),
                first: FirstWaiters::default(),
                failed: Mutex::default(),
                release: Mutex::default(),
                pool: Pool::default(),
                touched: Mutex::new(now),
                in_flight: AtomicUsize::new(0),
                moved: AtomicUsize::new(0),
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
            let Ok(_no_handshake) = peer.connecting.try_lock() else {
                return true;
            };
            let closed = peer.pool.close_all(CLOSE_IDLE, b"idle");
            log::debug!("closed the {closed} idle connection(s) to {addr}");
            let t = tokio::time::Instant::now();
            lock(&self.inner.gone).keep(*addr, peer.pool.figures(t), t);
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
        ConnectionError::ApplicationClosed(close) => {
            SendError::closed_by_server(close.error_code.into_inner(), &close.reason)
        }
        ConnectionError::ConnectionClosed(close) => {
            SendError::Connection(format!("closed by server: {close}"))
        }
        ConnectionError::Reset => SendError::Connection("reset by server".into()),
        ConnectionError::TimedOut => SendError::Connection("timed out".into()),
        // Only an abandoned connection has streams left as we close it: eviction waits for none.
        ConnectionError::LocallyClosed => SendError::Connection(ABANDONED.into()),
        other => SendError::Connection(other.to_string()),
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

    fn path_figures(&self, addr: SocketAddr) -> Option<PathFigures> {
        let now = tokio::time::Instant::now();
        let live = lock(&self.inner.peers).get(&addr).cloned();
        let live = live.map(|p| p.pool.figures(now));
        lock(&self.inner.gone).with(addr, live, now)
    }

    fn link_state(&self, addr: SocketAddr) -> LinkState {
        let peers = lock(&self.inner.peers);
        peers
            .get(&addr)
            .map(|p| lock(&p.state).clone())
            .unwrap_or(LinkState::Idle)
    }

    /// Closes the address's connections; their waiting streams end with a connection error.
    /// A handshake under way is left alone: it is the fresh attempt, and is bounded anyway.
    fn abandon(&self, addr: SocketAddr) {
        let Some(peer) = lock(&self.inner.peers).get(&addr).cloned() else {
            return;
        };
        let closed = peer.pool.close_all(CLOSE_SILENT, b"no answer");
        if closed > 0 {
            set_state(&peer, LinkState::Failed("no answer: reconnecting".into()));
            log::debug!("gave up the {closed} silent connection(s) to {addr}");
        }
    }
}

#[cfg(test)]
mod figures_tests;
#[cfg(test)]
mod relay;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unheard_tests;
#[cfg(test)]
mod wan_tests;
