//! The QUIC transport against a TPU-like server on loopback.

use quinn::{ServerConfig, VarInt, crypto::rustls::QuicServerConfig};
use solana_tls_utils::{new_dummy_x509_certificate, tls_server_config_builder};
use tokio::sync::mpsc;

use std::sync::atomic::AtomicUsize;

use super::*;

/// A TPU-like QUIC server on loopback that accepts connections and reads every stream.
/// Each accepted connection is reported, then how it ended once it does.
pub(super) fn tpu_server() -> (SocketAddr, mpsc::UnboundedReceiver<Event>) {
    let endpoint = server_endpoint();
    let addr = endpoint.local_addr().expect("server address");
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(serve(endpoint, tx));
    (addr, rx)
}

/// [`tpu_server`] on a runtime of its own, on one thread, that can be frozen: each duration
/// sent on the returned channel blocks that thread for that long, so nothing reads the socket,
/// acknowledges or answers — a stopped (SIGSTOPped) leader, as its clients see it.
fn freezable_server() -> (
    SocketAddr,
    mpsc::UnboundedReceiver<Event>,
    mpsc::UnboundedSender<Duration>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (freeze_tx, mut freeze_rx) = mpsc::unbounded_channel::<Duration>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("server runtime");
        rt.block_on(async move {
            let endpoint = server_endpoint();
            let _ = addr_tx.send(endpoint.local_addr().expect("server address"));
            tokio::spawn(serve(endpoint, tx));
            while let Some(d) = freeze_rx.recv().await {
                std::thread::sleep(d);
            }
        });
    });
    let addr = addr_rx.recv().expect("the server's address");
    (addr, rx, freeze_tx)
}

pub(super) fn server_endpoint() -> Endpoint {
    server_endpoint_granting(None)
}

/// A TPU server's endpoint on loopback; `uni_streams`: the concurrent streams it grants a
/// connection in the handshake, when not quinn's default.
pub(super) fn server_endpoint_granting(uni_streams: Option<u32>) -> Endpoint {
    Endpoint::server(
        server_config(uni_streams),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .expect("bind the loopback server")
}

/// A TPU server's configuration (see [`server_endpoint_granting`]).
pub(super) fn server_config(uni_streams: Option<u32>) -> ServerConfig {
    let (cert, key) = new_dummy_x509_certificate(&Keypair::new());
    let mut crypto = tls_server_config_builder()
        .with_single_cert(vec![cert], key)
        .expect("server certificate");
    crypto.alpn_protocols = vec![ALPN_TPU.to_vec()];
    let quic = QuicServerConfig::try_from(crypto).expect("QUIC server config");
    let mut config = ServerConfig::with_crypto(Arc::new(quic));
    if let Some(n) = uni_streams {
        let mut transport = TransportConfig::default();
        transport.max_concurrent_uni_streams(VarInt::from_u32(n));
        config.transport_config(Arc::new(transport));
    }
    config
}

async fn serve(endpoint: Endpoint, tx: mpsc::UnboundedSender<Event>) {
    while let Some(incoming) = endpoint.accept().await {
        let tx = tx.clone();
        tokio::spawn(async move {
            let Ok(conn) = incoming.await else { return };
            let _ = tx.send(Event::Accepted);
            while let Ok(mut stream) = conn.accept_uni().await {
                let _ = stream.read_to_end(1232).await;
            }
            let _ = tx.send(Event::Closed(conn.close_reason()));
        });
    }
}

#[derive(Debug)]
pub(super) enum Event {
    Accepted,
    Closed(Option<ConnectionError>),
}

async fn next(events: &mut mpsc::UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("a server event within 10 s")
        .expect("the server runs")
}

async fn wait_connected(t: &QuicTransport, addr: SocketAddr) {
    for _ in 0..200 {
        if t.link_state(addr) == LinkState::Connected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not connected to {addr}: {:?}", t.link_state(addr));
}

pub(super) fn transport(evict_after: Duration) -> QuicTransport {
    QuicTransport::with_options(
        &Keypair::new(),
        QuicOptions {
            connect_timeout: Duration::from_secs(2),
            evict_after,
            ..QuicOptions::default()
        },
    )
    .expect("client endpoint")
}

/// A leader that stops being prepared and sent to has its connection closed (the server
/// sees our "idle" close) and its entry dropped, so the map shrinks back to empty.
#[tokio::test]
async fn a_connection_no_longer_prepared_or_used_is_closed_and_forgotten() {
    let (addr, mut events) = tpu_server();
    let t = transport(Duration::from_millis(300));
    t.prepare(&[addr]);
    assert!(matches!(next(&mut events).await, Event::Accepted));
    wait_connected(&t, addr).await;
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("a send on the prepared connection");
    assert_eq!(t.peer_count(), 1);

    // Still within the bound: kept.
    tokio::time::sleep(Duration::from_millis(100)).await;
    t.prepare(&[]);
    assert_eq!(t.peer_count(), 1, "evicted before the bound");

    tokio::time::sleep(Duration::from_millis(400)).await;
    t.prepare(&[]);
    assert_eq!(t.peer_count(), 0, "the idle peer is still held");
    assert_eq!(t.link_state(addr), LinkState::Idle);
    match next(&mut events).await {
        Event::Closed(Some(ConnectionError::ApplicationClosed(close))) => {
            assert_eq!(close.error_code, VarInt::from_u32(CLOSE_IDLE));
            assert_eq!(&close.reason[..], b"idle");
        }
        other => panic!("expected our idle close, got {other:?}"),
    }
}

/// Being prepared, or being sent to, keeps a connection: one handshake serves the whole
/// time, well past the eviction bound.
#[tokio::test]
async fn prepared_or_used_connections_are_kept() {
    let (prepared, mut prepared_events) = tpu_server();
    let (used, mut used_events) = tpu_server();
    let t = transport(Duration::from_millis(300));
    t.prepare(&[prepared, used]);
    assert!(matches!(next(&mut prepared_events).await, Event::Accepted));
    assert!(matches!(next(&mut used_events).await, Event::Accepted));
    wait_connected(&t, prepared).await;
    wait_connected(&t, used).await;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        t.send(used, Arc::from(&b"tx"[..]), Handoff::default())
            .await
            .expect("a send on the kept connection");
        t.prepare(&[prepared]);
    }
    assert_eq!(t.peer_count(), 2);
    assert_eq!(t.link_state(prepared), LinkState::Connected);
    assert_eq!(t.link_state(used), LinkState::Connected);
    assert!(
        prepared_events.try_recv().is_err(),
        "prepared peer reconnected"
    );
    assert!(used_events.try_recv().is_err(), "used peer reconnected");
}

/// A pre-connect to an address that never answers the handshake gives up after the
/// connect bound, instead of hanging, and the peer reads as failed.
#[tokio::test]
async fn a_pre_connect_to_a_silent_address_times_out() {
    // A bound UDP socket that never reads: the Initial packets go nowhere.
    let silent = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let addr = silent.local_addr().expect("address");
    let t = QuicTransport::with_options(
        &Keypair::new(),
        QuicOptions {
            connect_timeout: Duration::from_millis(300),
            evict_after: Duration::from_secs(60),
            ..QuicOptions::default()
        },
    )
    .expect("client endpoint");
    t.prepare(&[addr]);
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    match t.link_state(addr) {
        LinkState::Failed(reason) => {
            assert!(reason.contains("handshake timed out"), "{reason}")
        }
        other => panic!("pre-connect still {other:?} after its bound"),
    }
}

/// A leader that stops answering (frozen): once its connection is given up, the stream waiting
/// on it ends with a connection error at once (not at the send timeout), and when the leader is
/// back the next send connects afresh — and sees our "no answer" close arrive on the old one.
#[tokio::test]
async fn an_abandoned_connection_ends_its_waiting_streams_and_the_next_send_reconnects() {
    let (addr, mut events, freeze) = freezable_server();
    let t = transport(Duration::from_secs(60));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("a send before the freeze");
    assert!(matches!(next(&mut events).await, Event::Accepted));
    freeze.send(Duration::from_millis(1_500)).expect("freeze");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let waiting = tokio::spawn(t.send(addr, Arc::from(&b"tx"[..]), Handoff::default()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "a frozen server answered");
    t.abandon(addr);
    let err = tokio::time::timeout(Duration::from_millis(500), waiting)
        .await
        .expect("the waiting stream ends once its connection is given up")
        .expect("the send task")
        .expect_err("no answer came");
    assert!(
        matches!(&err, SendError::Connection(r) if r.contains("given up")),
        "{err}"
    );
    // Back from the freeze: a new connection, and the old one's close read at last.
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("a send after the freeze, on a new connection");
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(next(&mut events).await);
    }
    assert!(
        seen.iter().any(|e| matches!(e, Event::Accepted)),
        "no new connection: {seen:?}"
    );
    assert!(
        seen.iter().any(|e| matches!(
            e,
            Event::Closed(Some(ConnectionError::ApplicationClosed(c)))
                if c.error_code == VarInt::from_u32(CLOSE_SILENT)
        )),
        "the old connection was not closed with our no-answer code: {seen:?}"
    );
}

/// A TPU-like server granting 2 concurrent streams per connection and reading each stream
/// `read_after` late, as a 4.0 leader short of budget or stalled by a lost datagram returns
/// credit late. When `too_many` is set, every connection but the first is closed with code 4.
pub(super) fn stingy_server(
    read_after: Duration,
    too_many: bool,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let endpoint = server_endpoint_granting(Some(2));
    let addr = endpoint.local_addr().expect("server address");
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Some(incoming) = endpoint.accept().await {
            let n = count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                if too_many && n > 0 {
                    conn.close(VarInt::from_u32(4), b"too_many");
                    return;
                }
                while let Ok(mut stream) = conn.accept_uni().await {
                    tokio::time::sleep(read_after).await;
                    let _ = stream.read_to_end(1232).await;
                }
            });
        }
    });
    (addr, accepted)
}

/// Streams at once to `addr`, each to its end; how many were accepted.
async fn burst(t: &QuicTransport, addr: SocketAddr, n: usize) -> usize {
    let sends: Vec<_> = (0..n)
        .map(|_| tokio::spawn(t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())))
        .collect();
    let mut accepted = 0;
    for s in sends {
        // Past the link's bound a credit wait is read as throttling; nothing else may fail.
        match s.await.expect("send task") {
            Ok(()) => accepted += 1,
            Err(SendError::Throttled(_) | SendError::Stalled(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
    accepted
}

/// Twenty streams at once to a leader that grants two at a time and reads them late, through
/// a link losing 10% each way: the credit is held by the loss as much as by the leader, so
/// the pool opens more connections (never more than 8) and the streams move to them.
#[tokio::test]
async fn credit_held_on_a_lossy_link_gets_more_connections() {
    let (server, accepted) = stingy_server(Duration::from_millis(150), false);
    let addr = super::relay::start(server, Duration::from_millis(40), 0.1).await;
    let t = transport(Duration::from_secs(60));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("the first send");
    for _ in 0..3 {
        burst(&t, addr, 20).await;
    }
    let n = accepted.load(Ordering::SeqCst);
    assert!(n >= 2, "one connection carried it all: {n}");
    assert!(n <= pool::MAX_CONNECTIONS, "{n} connections");
}

/// The same leader on a clean link: credit withheld there is its budget, which a 4.0 leader
/// counts per source address across our connections, so no connection is added — more would
/// only queue more streams it has not read.
#[tokio::test]
async fn credit_withheld_on_a_clean_link_gets_no_more_connections() {
    let (addr, accepted) = stingy_server(Duration::from_millis(150), false);
    let t = transport(Duration::from_secs(60));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("the first send");
    let carried = burst(&t, addr, 12).await;
    assert!(carried > 0);
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "connections added");
}

/// A leader that closes every connection past the first with code 4 ("too many"): the pool
/// takes that as its limit and stops opening more, however long streams wait for credit on
/// a lossy link.
#[tokio::test]
async fn a_close_with_code_4_caps_the_pool_at_what_the_leader_allows() {
    let (server, accepted) = stingy_server(Duration::from_millis(150), true);
    let addr = super::relay::start(server, Duration::from_millis(40), 0.1).await;
    let t = transport(Duration::from_secs(60));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("the first send");
    for _ in 0..4 {
        // A stream given the closed connection moves to the first; none fails for the close.
        burst(&t, addr, 20).await;
    }
    let peer = lock(&t.inner.peers).get(&addr).cloned().expect("the peer");
    assert_eq!(peer.pool.len(), 1);
    assert_eq!(
        peer.pool.cap(),
        1,
        "the leader's code 4 did not lower the cap"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "kept opening connections"
    );
}

/// A TPU server that, as a 4.0 leader, grants no stream credit in the handshake and raises it
/// to 128 once it has admitted the connection, `admit_after` later.
fn admitting_server(admit_after: Duration) -> SocketAddr {
    let endpoint = server_endpoint_granting(Some(0));
    let addr = endpoint.local_addr().expect("server address");
    tokio::spawn(async move {
        while let Some(incoming) = endpoint.accept().await {
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                tokio::time::sleep(admit_after).await;
                conn.set_max_concurrent_uni_streams(VarInt::from_u32(128));
                while let Ok(mut stream) = conn.accept_uni().await {
                    let _ = stream.read_to_end(1232).await;
                }
            });
        }
    });
    addr
}

/// The first stream on a connection waits for the leader's admission of it (a 4.0 leader
/// grants credit only then): that is not a wait for credit, which the engine reads as the
/// leader's budget — on a far link every new connection would otherwise call its leader
/// `budget`. A stream sent once the connection is admitted opens at once.
#[tokio::test]
async fn a_leaders_admission_is_not_a_credit_wait() {
    let addr = admitting_server(Duration::from_millis(150));
    let t = transport(Duration::from_secs(60));
    let first = Handoff::default();
    t.send(addr, Arc::from(&b"tx"[..]), first.clone())
        .await
        .expect("the first stream");
    assert!(first.at().is_some(), "handed to the wire");
    assert_eq!(
        first.credit_wait(),
        None,
        "its admission read as a credit wait"
    );
    let second = Handoff::default();
    t.send(addr, Arc::from(&b"tx"[..]), second.clone())
        .await
        .expect("the second stream");
    assert_eq!(second.credit_wait(), None);
}
