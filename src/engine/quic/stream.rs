//! One stream's life on a leader's pool: a connection (the least loaded the leader has
//! admitted — on a lossy link the run's, see `runs` — or a new one), room in its congestion
//! window, stream credit, the write, and the leader's answer — each wait on our side kept out
//! of the leader's time (see `Handoff`).

use std::{
    net::SocketAddr,
    sync::{Arc, atomic::Ordering},
    time::Instant,
};

use futures::FutureExt;
use quinn::{VarInt, WriteError};

use super::{
    CLOSE_SILENT, Inner, Peer, classify,
    connect::{ADMISSION_POLL, connection, drop_connection, grow},
    lock,
    pool::{MAX_CONNECTIONS, Pooled, SPREAD_STREAMS},
    probe::PROBE_AFTER,
};
use crate::engine::net::{Handoff, SendError};

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

/// How a stream's attempt on one connection failed.
enum Attempt {
    /// Its connection was closed before the leader answered any stream on it — refused as one
    /// too many, rate-limited, or (on a lossy link) dropped by the leader's 2 s handshake
    /// timeout after our side of the handshake was done — or gave it no credit for the link's
    /// bound: the leader never read the stream.
    Unheard(SendError),
    /// Anything else: the leader's or the link's say on this stream.
    Send(SendError),
}

impl From<SendError> for Attempt {
    fn from(e: SendError) -> Self {
        Attempt::Send(e)
    }
}

/// Sends `wire` to the leader at `addr` on one of its pool's connections. A stream whose
/// connection the leader closed before answering anything on it moves to another of the
/// leader's connections, or to a new one when none is left (at most [`MAX_CONNECTIONS`] times,
/// each within the leader's handshake allowance). On the relay's `hostile` link (320 ms, 5%
/// lost in bursts) a 4.0 leader's 2 s handshake timeout closed 3 and 1 of the 24 connections
/// of two runs, whose handshakes had ended on our side but whose last flight it never got:
/// once a fifth one while four others answered — its four streams failed, held the leader,
/// the current one, to a probe for 0.9 s of its turn, and 85 transactions landed two turns
/// later, 2.5–3.4 s after they were sent — and in each run a leader's first, failing the 40
/// sends that waited for it.
pub(super) async fn send_on(
    inner: Arc<Inner>,
    peer: Arc<Peer>,
    addr: SocketAddr,
    wire: Arc<[u8]>,
    handoff: Handoff,
) -> Result<(), SendError> {
    let _in_flight = InFlight::new(peer.clone());
    let mut pooled = pick_or_connect(&inner, &peer, addr).await?;
    let mut moves = 0;
    loop {
        match stream_on(&inner, &peer, addr, &wire, &handoff, pooled).await {
            Ok(()) => return Ok(()),
            Err(Attempt::Unheard(e)) if moves < MAX_CONNECTIONS => {
                log::debug!(
                    "a connection to {addr} was closed before it carried anything ({e}): its \
                     stream moves to another of the leader's connections"
                );
                moves += 1;
                peer.moved.fetch_add(1, Ordering::SeqCst);
                pooled = pick_or_connect(&inner, &peer, addr).await?;
            }
            Err(Attempt::Unheard(e) | Attempt::Send(e)) => return Err(e),
        }
    }
}

/// The pool's pick for a stream; else a new connection, which the stream waits for (and then
/// for the leader to admit it: see `stream_on`).
async fn pick_or_connect(
    inner: &Arc<Inner>,
    peer: &Arc<Peer>,
    addr: SocketAddr,
) -> Result<Arc<Pooled>, SendError> {
    if let Some(pooled) = peer.pool.pick() {
        return Ok(pooled);
    }
    connection(inner, peer, addr).await
}

/// One attempt of a stream, on `pooled` (or on a connection that joins the pool while it
/// waits there for credit).
async fn stream_on(
    inner: &Arc<Inner>,
    peer: &Arc<Peer>,
    addr: SocketAddr,
    wire: &Arc<[u8]>,
    handoff: &Handoff,
    mut pooled: Arc<Pooled>,
) -> Result<(), Attempt> {
    let mut claim = pooled.claim();
    // Waiting for room in the congestion window is our side of the stream: it is not handed
    // off before it has room. Having to wait, or a crowded connection on a lossy link, asks
    // for another connection (see `pool`).
    let roomy = pooled.has_room(wire.len());
    if !roomy || (pooled.load() > SPREAD_STREAMS && peer.pool.lossy()) {
        grow(inner, peer, addr);
    }
    if !roomy {
        pooled.wait_room(wire.len()).await;
    }
    // Waiting for credit is the leader's say, but only past what the link itself explains;
    // when the connection is losing datagrams, another connection is asked for meanwhile,
    // and the stream moves to it when it comes (see `pool`).
    let stall = inner.timing(peer).unwrap_or_default().open_stall();
    // A wait for the leader's first grant is its admission of the connection, not credit.
    let mut admitted = pooled.admitted();
    let asked = tokio::time::Instant::now();
    let until = asked + stall;
    if !admitted {
        admission(peer, &pooled, until).await;
        // The first connections were opened side by side (see `first`): at its turn, a
        // stream that waited goes on the least loaded one the leader has admitted.
        if let Some(other) = peer.pool.least_loaded()
            && other.admitted()
            && other.load() + 1 < pooled.load()
        {
            claim = other.claim();
            admitted = true;
            pooled = other;
        }
    }
    // Set once `open_uni` had to wait: the stream's wait for credit (see `Handoff`).
    let mut waited = None;
    let opened = loop {
        let grew = peer.pool.grew();
        tokio::pin!(grew);
        grew.as_mut().enable();
        let conn = pooled.conn.clone();
        let open = conn.open_uni();
        tokio::pin!(open);
        if let Some(opened) = (&mut open).now_or_never() {
            break opened;
        }
        waited.get_or_insert(asked);
        if pooled.losing() {
            grow(inner, peer, addr);
        }
        tokio::select! {
            opened = &mut open => break opened,
            () = grew => {
                if let Some(other) = peer.pool.least_loaded()
                    && !Arc::ptr_eq(&other, &pooled)
                {
                    claim = other.claim();
                    admitted = other.admitted();
                    pooled = other;
                }
            }
            () = tokio::time::sleep_until(until) => {
                handoff.credit_waited(stall);
                let err = SendError::open_stalled(stall);
                if pooled.heard() {
                    return Err(err.into());
                }
                // No credit ever on a connection that never answered: the leader has not
                // admitted it (a 4.0 leader grants credit as it admits; its close may have
                // been lost on the way), which is not its budget. It is given up, so that the
                // stream and those waiting with it move to another.
                pooled.conn.close(VarInt::from_u32(CLOSE_SILENT), b"not admitted");
                drop_connection(peer, &pooled.conn, &err);
                return Err(Attempt::Unheard(err));
            }
        }
    };
    let conn = pooled.conn.clone();
    let mut stream = match opened {
        Err(e) => return Err(lost(peer, &pooled, &e)),
        Ok(s) => s,
    };
    pooled.opened();
    let carried = pooled.carry(wire.len());
    let _claim = claim;
    // How long the open waited for credit: the engine's sign of a leader behind on our streams.
    if let Some(waited) = waited.filter(|_| admitted) {
        handoff.credit_waited(waited.elapsed());
    }
    handoff.mark();
    let handed = tokio::time::Instant::now();
    if let Err(e) = stream.write_all(wire).await {
        let err = match e {
            WriteError::Stopped(code) => SendError::stopped_by_server(code.into_inner()),
            WriteError::ConnectionLost(c) => return Err(lost(peer, &pooled, &c)),
            other => SendError::Stream(other.to_string()),
        };
        return Err(err.into());
    }
    // Finishing twice or after a reset is harmless; the outcome comes from `stopped`.
    let _ = stream.finish();
    // Our bytes count against the congestion window while the network carries them: about a
    // round trip of the path as quinn measures it from its acknowledgments (twice that, for
    // the acknowledgment's delay and jitter) — not until the leader's answer, which also waits
    // for the leader to read the connection's streams one at a time, where a lost datagram
    // holds every stream behind it for a PTO. Held to the answer, they made a far, lossy link
    // look full while the network carried little, and the pace fell behind.
    let on_network = handed + 2 * conn.rtt();
    let stopped = stream.stopped();
    tokio::pin!(stopped);
    let mut carried = Some(carried);
    // On a lossy pool, probes follow it while nothing else is written on the connection.
    let mark = pooled.probe.wrote();
    let mut probe = peer.pool.lossy().then_some(0);
    let answer = loop {
        let probe_at = probe.map(|i: usize| handed + PROBE_AFTER[i]);
        tokio::select! {
            answer = &mut stopped => break answer,
            () = tokio::time::sleep_until(on_network), if carried.is_some() => carried = None,
            () = tokio::time::sleep_until(probe_at.unwrap_or(on_network)), if probe_at.is_some() => {
                let i = probe.unwrap_or_default();
                probe = if pooled.probe.followed(mark) {
                    None
                } else {
                    pooled.probe.send(&conn);
                    (i + 1 < PROBE_AFTER.len()).then_some(i + 1)
                };
            }
        }
    };
    drop(carried);
    match answer {
        Ok(None) => {
            pooled.answered();
            let now = tokio::time::Instant::now();
            let timing = peer
                .pool
                .sample(now.saturating_duration_since(handed), &conn, now);
            inner.measured(timing);
            Ok(())
        }
        Ok(Some(code)) => Err(SendError::stopped_by_server(code.into_inner()).into()),
        Err(quinn::StoppedError::ConnectionLost(c)) => Err(lost(peer, &pooled, &c)),
        Err(other) => Err(SendError::Stream(other.to_string()).into()),
    }
}

/// Waits for the leader to admit `pooled` (its first stream credit: see [`Pooled::admitted`]),
/// until `until` at the latest, and then for this stream's turn among those that waited so
/// (see `Release`). A 4.0 leader grants a new connection credit a round trip after our side
/// of its handshake ended; spaced at the handshake's end but opened as the credit came, the
/// 40 streams sent during a first handshake on the relay's `apac` link went within a
/// millisecond, twice a window's budget. Spaced once opened, the first ones to wait left the
/// leader reading nothing while later streams queued behind them (it accepts a connection's
/// streams in order, one at a time), and it read those late.
async fn admission(peer: &Peer, pooled: &Pooled, until: tokio::time::Instant) {
    while !pooled.admitted() {
        if pooled.conn.close_reason().is_some() || tokio::time::Instant::now() >= until {
            return;
        }
        tokio::time::sleep(ADMISSION_POLL).await;
    }
    let at = lock(&peer.release).slot(tokio::time::Instant::now());
    tokio::time::sleep_until(at).await;
}

/// `pooled`'s connection was lost with `reason`: it leaves the pool, and the stream's failure
/// says whether the leader had answered anything on it.
fn lost(peer: &Peer, pooled: &Pooled, reason: &quinn::ConnectionError) -> Attempt {
    let err = classify(reason);
    drop_connection(peer, &pooled.conn, &err);
    if pooled.heard() {
        Attempt::Send(err)
    } else {
        Attempt::Unheard(err)
    }
}
