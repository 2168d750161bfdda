//! Connecting to a leader: the first connection, shared by the sends that wait for it; more
//! as its link needs (see `pool`); never more handshakes than the leader's limit (see
//! `engine::handshakes`); and forgetting the ones that failed.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use quinn::Connection;

use super::{FirstWaiters, Inner, Peer, classify, lock, pool::Pooled, set_state};
use crate::engine::{
    handshakes::Reading,
    net::{LinkState, SendError},
};

/// A connection to `addr` for one more stream: the pool's pick (see `Pool::pick`), else a new
/// one (a handshake concurrent sends share: one that failed fails them all, see
/// `engine::handshakes::Failed`; with others beside it as more wait, see `first`).
pub(super) async fn connection(
    inner: &Arc<Inner>,
    peer: &Arc<Peer>,
    addr: SocketAddr,
) -> Result<Arc<Pooled>, SendError> {
    if let Some(p) = peer.pool.pick() {
        return Ok(p);
    }
    let _waiting = FirstWaiters::wait(inner, peer, addr);
    let ticket = lock(&peer.failed).ticket();
    let _one = peer.connecting.lock().await;
    if let Some(p) = peer.pool.pick() {
        return Ok(p);
    }
    if let Some(err) = lock(&peer.failed).since(ticket) {
        return Err(err);
    }
    let result = connect(inner, peer, addr).await;
    // A refusal to start one (the leader's allowance) is no handshake: each send reads the
    // wait left itself.
    if let Err(err) = &result
        && !matches!(err, SendError::HandshakeHeld(_))
    {
        lock(&peer.failed).note(err);
    }
    result
}

/// One handshake to `addr`, its connection added to the pool. The caller holds
/// `peer.connecting`, or starts it beside the first one (see `first`).
async fn connect(inner: &Inner, peer: &Peer, addr: SocketAddr) -> Result<Arc<Pooled>, SendError> {
    let first = peer.pool.is_empty();
    let started = tokio::time::Instant::now();
    let answered_before = peer.pool.last_answer();
    if let Some(wait) = peer.pool.handshake_wait(started) {
        return Err(SendError::HandshakeHeld(wait));
    }
    if first {
        set_state(peer, LinkState::Connecting);
    }
    peer.pool.note_handshake(started);
    let server_name = solana_tls_utils::socket_addr_to_quic_server_name(addr);
    let connecting = inner
        .endpoint
        .connect_with(inner.client_config(peer), addr, &server_name)
        .map_err(|e| SendError::Connection(e.to_string()));
    let bound = inner.handshake_bound(peer);
    let result = match connecting {
        // Dropping the unfinished handshake abandons it; quinn closes its state.
        Ok(c) => match tokio::time::timeout(bound, c).await {
            Ok(done) => done.map_err(|e| classify(&e)),
            Err(_) => {
                let now = tokio::time::Instant::now();
                let reading = peer
                    .pool
                    .handshake_timed_out(started, answered_before, !first, now);
                let named = reading == Reading::Ignored { named: true };
                lock(&peer.pool.book).handshake_timed_out(now, named);
                match reading {
                    Reading::Ignored { named: true } => {
                        log::debug!("{addr} ignored our handshake: none to it for a while")
                    }
                    Reading::Ignored { named: false } => log::debug!(
                        "a handshake to {addr} timed out, the leader perhaps there (on a link \
                         that loses datagrams, or going dark or back): none to it for a while"
                    ),
                    Reading::Unanswered => {}
                }
                Err(SendError::handshake_timed_out(bound))
            }
        },
        Err(e) => Err(e),
    };
    match result {
        Ok(conn) => {
            peer.pool.handshake_finished();
            lock(&peer.pool.book).handshake_done(started.elapsed());
            let pooled = peer.pool.add(conn);
            set_state(peer, LinkState::Connected);
            if !first {
                log::debug!("{} connections to {addr}", peer.pool.len());
            }
            Ok(pooled)
        }
        Err(err) => {
            if peer.pool.is_empty() {
                set_state(peer, LinkState::Failed(err.to_string()));
            }
            Err(err)
        }
    }
}

/// A stream to `addr` had to wait on its connection (for room in the congestion window or
/// for stream credit): opens one more in the background, if the pool may grow and no
/// handshake is under way. Streams waiting for credit move to it once it joins (see `send_on`).
pub(super) fn grow(inner: &Arc<Inner>, peer: &Arc<Peer>, addr: SocketAddr) {
    if !peer.pool.may_grow(tokio::time::Instant::now()) {
        return;
    }
    let (inner, peer) = (inner.clone(), peer.clone());
    tokio::spawn(async move {
        let Ok(_one) = peer.connecting.try_lock() else {
            return;
        };
        if !peer.pool.may_grow(tokio::time::Instant::now()) {
            return;
        }
        if let Err(e) = join_pool(&inner, &peer, addr).await {
            log::debug!("one more connection to {addr} failed: {e}");
        }
    });
}

/// One more connection to `addr` beside those the streams are on: a handshake, and then the
/// leader's admission, which wakes the streams waiting for credit (they may move to it).
pub(super) async fn join_pool(
    inner: &Inner,
    peer: &Peer,
    addr: SocketAddr,
) -> Result<(), SendError> {
    let pooled = connect(inner, peer, addr).await?;
    announce_admission(peer, &pooled).await;
    Ok(())
}

/// How often a new connection is looked at until the leader has admitted it.
pub(super) const ADMISSION_POLL: Duration = Duration::from_millis(5);

/// Waits until the leader has admitted `pooled` (see [`Pooled::admitted`]: at most two round
/// trips) and wakes the streams waiting for credit, which may move to it.
async fn announce_admission(peer: &Peer, pooled: &Pooled) {
    while !pooled.admitted() {
        if pooled.conn.close_reason().is_some() {
            return;
        }
        tokio::time::sleep(ADMISSION_POLL).await;
    }
    peer.pool.announce();
}

/// A connection-level failure ends this connection: later sends take another, or reconnect.
/// Only `conn` itself is forgotten: a late failure of a connection already replaced must not
/// drop its successors.
pub(super) fn drop_connection(peer: &Peer, conn: &Connection, err: &SendError) {
    peer.pool.remove(conn);
    if peer.pool.is_empty() {
        set_state(peer, LinkState::Failed(err.to_string()));
    }
}
