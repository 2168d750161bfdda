//! The sending side of the simulator: a sender with a source address and an identity,
//! connecting to each leader as the QUIC transport does, so that the engine sees what a 4.0
//! leader (`leader`) makes a real client see:
//!
//! - one connection per leader, its handshake a round trip of the link, bounded as the
//!   transport bounds it (2 s until the link is measured, then three of its PTOs): an ignored
//!   handshake ends as a handshake timeout, nothing else; never more than 8 handshakes a
//!   minute to one leader, and none for a while after one it ignored (`engine::handshakes`);
//! - a stream waits for room in the link's window (`sim_link`), then for stream credit, at
//!   most the link's [`open_stall`](crate::engine::link::LinkTiming::open_stall), and is
//!   handed off once opened;
//! - it is answered once its data is acknowledged, a round trip after the hand-off (plus
//!   repairs) — whether or not the leader has read it yet: reading late only withholds credit;
//! - a connection the leader closed fails its streams with the leader's close code, and the
//!   next send connects again.
//!
//! Waiting for credit and failing the same way as `quic` keeps the engine's reading of a leader
//! the same against the simulator and against a real one.

use std::net::IpAddr;

use super::{
    leader::{Conn, Peer},
    *,
};
use crate::engine::{
    handshakes::{Failed, HandshakeLimit, Reading, Release, TimedOut},
    link::RttEstimator,
    net::PathFigures,
};

/// The transport's handshake bound before a link is measured (`QuicOptions::connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the simulated engine sends from unless told otherwise.
pub const DEFAULT_SENDER_IP: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// Our side of one leader: the connection, the handshake under way, the measured link.
#[derive(Default)]
struct PeerLink {
    conn: Mutex<Option<Arc<Conn>>>,
    connecting: tokio::sync::Mutex<()>,
    /// The handshakes that failed: a send that waited for one fails with it, as the
    /// transport's do.
    failed: Mutex<Failed<SendError>>,
    /// When each send that waited for a handshake goes once it ends, as the transport spaces
    /// them.
    release: Mutex<Release>,
    rtt: Mutex<RttEstimator>,
    state: Mutex<Option<LinkState>>,
    /// Handshakes under the leader's limit, as the transport keeps them.
    limit: Mutex<HandshakeLimit>,
    /// When a stream of ours was last answered (see `quic::pool::Pool::handshake_timed_out`).
    last_answer: Mutex<Option<Instant>>,
    /// What the handshakes measured, for the operator: the last one's time, the timeouts and
    /// when the leader last ignored one.
    handshakes: Mutex<(Option<Duration>, u64, Option<Instant>)>,
}

pub(super) struct SenderInner {
    ip: IpAddr,
    identity: Pubkey,
    /// Its share of the stake; `None`: the cluster's `set_staked` decides (10% when staked).
    stake_share: Option<f64>,
    /// Keeps its handshakes under the leaders' limit as the transport does (the engine's
    /// sender); the senders tests script connect whenever told, to drive the leader's rules.
    limited: bool,
    peers: Mutex<HashMap<SocketAddr, Arc<PeerLink>>>,
}

/// A sender on the simulated cluster: a [`Transport`] of its own, with its own address,
/// identity and connections. Clones share them.
#[derive(Clone)]
pub struct SimSender {
    pub(super) cluster: SimCluster,
    pub(super) inner: Arc<SenderInner>,
}

fn guard<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl SenderInner {
    pub(super) fn new(
        ip: IpAddr,
        identity: Pubkey,
        stake_share: Option<f64>,
        limited: bool,
    ) -> Arc<Self> {
        Arc::new(Self {
            ip,
            identity,
            stake_share,
            limited,
            peers: Mutex::default(),
        })
    }
}

impl SimSender {
    pub fn ip(&self) -> IpAddr {
        self.inner.ip
    }

    fn who(&self) -> Peer {
        let share = self
            .inner
            .stake_share
            .unwrap_or(if self.cluster.lock().staked { 0.1 } else { 0.0 });
        Peer {
            ip: self.inner.ip,
            identity: self.inner.identity,
            stake_share: share,
        }
    }

    fn peer(&self, addr: SocketAddr) -> Arc<PeerLink> {
        guard(&self.inner.peers).entry(addr).or_default().clone()
    }

    /// The open connection to `addr`, if any.
    pub fn connection(&self, addr: SocketAddr) -> Option<Arc<Conn>> {
        let peer = guard(&self.inner.peers).get(&addr)?.clone();
        let conn = guard(&peer.conn).clone()?;
        conn.closed().is_none().then_some(conn)
    }

    /// The link's time rules as the transport would derive them (see `quic::Inner::timing`).
    fn timing(peer: &PeerLink) -> Option<crate::engine::link::LinkTiming> {
        let rtt = guard(&peer.rtt);
        rtt.sampled().then(|| rtt.timing())
    }

    /// The open connection to `addr`, or a new one (one handshake at a time).
    pub async fn connect(&self, addr: SocketAddr) -> Result<Arc<Conn>, SendError> {
        let peer = self.peer(addr);
        if let Some(c) = self.connection(addr) {
            return Ok(c);
        }
        let ticket = guard(&peer.failed).ticket();
        let _one = peer.connecting.lock().await;
        if let Some(c) = self.connection(addr) {
            return Ok(c);
        }
        if let Some(err) = guard(&peer.failed).since(ticket) {
            return Err(err);
        }
        let now = Instant::now();
        if self.inner.limited
            && let Some(wait) = guard(&peer.limit).wait(now)
        {
            return Err(SendError::HandshakeHeld(wait));
        }
        guard(&peer.limit).start(now);
        *guard(&peer.state) = Some(LinkState::Connecting);
        let result = self.handshake(addr, &peer).await;
        *guard(&peer.state) = Some(match &result {
            Ok(_) => LinkState::Connected,
            Err(e) => {
                guard(&peer.failed).note(e);
                LinkState::Failed(e.to_string())
            }
        });
        result
    }

    async fn handshake(&self, addr: SocketAddr, peer: &PeerLink) -> Result<Arc<Conn>, SendError> {
        let Some(leader) = self.cluster.server(addr) else {
            tokio::time::sleep(SEND_LATENCY).await;
            return Err(SendError::Connection("no such node".into()));
        };
        let link = self.cluster.link(addr);
        let bound = Self::timing(peer).map_or(CONNECT_TIMEOUT, |t| {
            t.handshake_timeout().max(CONNECT_TIMEOUT)
        });
        let start = Instant::now();
        let answered_before = *guard(&peer.last_answer);
        let (there, back) = draw(&link);
        tokio::time::sleep(there).await;
        let who = self.who();
        let answered = leader.initial(who.ip);
        let took = there + back;
        if !answered || took > leader.rules().handshake_timeout || took > bound {
            if answered {
                leader.handshake_timed_out();
            }
            tokio::time::sleep_until(start + bound).await;
            // Read as the transport reads it (a single connection is never up beside its own
            // handshake here).
            let measured = self.cluster.lock().links.get(&addr).map(|l| l.figures());
            let timed_out = TimedOut {
                started: start,
                answered_before,
                answered_since: guard(&peer.last_answer).is_some_and(|t| t > start),
                others_up: false,
                others_up_at_start: false,
                pto: Self::timing(peer).unwrap_or_default().pto(),
                sent: measured.as_ref().map_or(0, |f| f.sent_packets),
                lost: measured.as_ref().map_or(0, |f| f.lost_packets),
            };
            let now = Instant::now();
            let reading = guard(&peer.limit).timed_out(&timed_out, now);
            let mut figures = guard(&peer.handshakes);
            figures.1 += 1;
            if reading == (Reading::Ignored { named: true }) {
                figures.2 = Some(now);
            }
            return Err(SendError::handshake_timed_out(bound));
        }
        tokio::time::sleep(back).await;
        guard(&peer.limit).finished();
        guard(&peer.handshakes).0 = Some(start.elapsed());
        let rtt = link.as_ref().map_or(took, |l| l.rtt());
        let conn = leader.admit(&who, rtt);
        if conn.closed().is_none() {
            let back_link = link.clone();
            let cluster = self.cluster.clone();
            let from = who.ip;
            tokio::spawn(leader.clone().serve(
                conn.clone(),
                move || draw(&back_link).1,
                move |wire, read| cluster.deliver(addr, from, wire, read),
            ));
        }
        guard(&peer.rtt).floor(rtt);
        *guard(&peer.conn) = Some(conn.clone());
        Ok(conn)
    }

    /// Sends `wire` to `addr` on its own stream (see the module doc).
    pub(super) async fn send(
        self,
        addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> Result<(), SendError> {
        let peer = self.peer(addr);
        let conn = match self.connection(addr) {
            Some(conn) => conn,
            None => {
                let conn = self.connect(addr).await?;
                let at = guard(&peer.release).slot(Instant::now());
                tokio::time::sleep_until(at).await;
                conn
            }
        };
        let link = self.cluster.link(addr);
        let _place = match &link {
            Some(l) => Some(l.enter().await),
            None => None,
        };
        let stall = Self::timing(&peer).unwrap_or_default().open_stall();
        let (there, back) = draw(&link);
        let hanging = self.cluster.lock().hanging.contains(&addr);
        let opening = Instant::now();
        let stopped = if hanging {
            None
        } else {
            let opened = conn
                .open(stall, || (Instant::now() + there, wire.clone()))
                .await;
            Some(opened.inspect_err(|_| self.forget_if_closed(&peer, &conn))?)
        };
        // A stream that never waited has no wait (see `Handoff::credit_waited`).
        let waited = opening.elapsed();
        if !waited.is_zero() {
            handoff.credit_waited(waited);
        }
        handoff.mark();
        let handed = Instant::now();
        tokio::time::sleep(there).await;
        if hanging || self.cluster.lock().hanging.contains(&addr) {
            return Err(self.cluster.hang(addr).await);
        }
        tokio::time::sleep(back).await;
        if let Some(c) = conn.closed()
            && c.at <= handed + there
        {
            self.forget_if_closed(&peer, &conn);
            return Err(c.error());
        }
        if stopped.is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst)) {
            return Err(SendError::stopped_by_server(0));
        }
        let now = Instant::now();
        guard(&peer.rtt).sample(now.saturating_duration_since(handed), now);
        *guard(&peer.last_answer) = Some(now);
        Ok(())
    }

    /// What the handshakes to `addr` measured, on top of `link`'s figures (`None`: loopback),
    /// as the transport's [`PathFigures`] carry them; `None` when neither has anything.
    pub(super) fn path_figures(
        &self,
        addr: SocketAddr,
        link: Option<PathFigures>,
    ) -> Option<PathFigures> {
        let peer = guard(&self.inner.peers).get(&addr).cloned();
        let Some(peer) = peer else { return link };
        let (handshake, timeouts, ignored_at) = *guard(&peer.handshakes);
        if link.is_none() && timeouts == 0 {
            return None;
        }
        let now = Instant::now();
        Some(PathFigures {
            handshake,
            handshake_timeouts: timeouts,
            ignored_ago: ignored_at.map(|t| now.saturating_duration_since(t)),
            new_last_minute: u32::try_from(guard(&peer.limit).last_minute(now)).unwrap_or(u32::MAX),
            ..link.unwrap_or_default()
        })
    }

    fn forget_if_closed(&self, peer: &PeerLink, conn: &Arc<Conn>) {
        let mut held = guard(&peer.conn);
        if let Some(c) = held.as_ref()
            && Arc::ptr_eq(c, conn)
            && c.closed().is_some()
        {
            if let Some(reason) = c.closed() {
                *guard(&peer.state) = Some(LinkState::Failed(reason.error().to_string()));
            }
            *held = None;
        }
    }

    /// Starts connecting to `addrs` never tried yet, as the transport pre-connects the
    /// upcoming leaders: one whose connection failed or was given up is connected again by
    /// its next send, not by the list.
    pub(super) fn prepare(&self, addrs: &[SocketAddr]) {
        for &addr in addrs {
            let tried = guard(&self.peer(addr).state).is_some();
            if tried || self.cluster.server(addr).is_none() {
                continue;
            }
            let me = self.clone();
            tokio::spawn(async move {
                let _ = me.connect(addr).await;
            });
        }
    }

    /// Closes our connection to `addr`; its waiting streams fail, the next send reconnects.
    pub(super) fn abandon(&self, addr: SocketAddr) {
        let peer = self.peer(addr);
        let conn = guard(&peer.conn).take();
        if let Some(c) = conn {
            c.close_by_client();
            if let Some(leader) = self.cluster.server(addr) {
                leader.remove(&c);
            }
            *guard(&peer.state) = Some(LinkState::Failed("no answer: reconnecting".into()));
        }
    }

    pub(super) fn link_state(&self, addr: SocketAddr) -> LinkState {
        let peer = guard(&self.inner.peers).get(&addr).cloned();
        peer.and_then(|p| guard(&p.state).clone())
            .unwrap_or(LinkState::Idle)
    }
}

/// How long a datagram sent now takes to the leader and back: the link's draw, or loopback's
/// [`SEND_LATENCY`] there and nothing back.
fn draw(link: &Option<Arc<LinkModel>>) -> (Duration, Duration) {
    match link {
        Some(l) => l.draw(),
        None => (SEND_LATENCY, Duration::ZERO),
    }
}
