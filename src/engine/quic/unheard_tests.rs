//! Streams on a connection the leader closes before answering anything on it (see
//! `stream::send_on`): they move to another of its connections, or to a new one.

use std::sync::atomic::AtomicUsize;

use quinn::VarInt;

use super::{
    tests::{server_config, server_endpoint, transport},
    *,
};

/// A server that reads the first connection's streams at once and drops every later
/// connection `after` it was accepted, having granted it no stream credit — as a 4.0 leader's
/// 2 s handshake timeout drops one whose handshake it has not finished while ours has (it
/// reads no stream on it, and the client sees it admitted once two round trips have passed).
/// Counts the connections it dropped. With `first_too`, the first connection is dropped
/// as well, and only the later ones are read.
fn dropping_server(after: Duration, first_too: bool) -> (SocketAddr, Arc<AtomicUsize>) {
    let endpoint = server_endpoint();
    let addr = endpoint.local_addr().expect("server address");
    let stingy = Arc::new(server_config(Some(0)));
    let dropped = Arc::new(AtomicUsize::new(0));
    let count = dropped.clone();
    tokio::spawn(async move {
        let mut first = true;
        while let Some(incoming) = endpoint.accept().await {
            let keep = std::mem::take(&mut first) != first_too;
            let count = count.clone();
            let accepting = if keep {
                incoming.accept()
            } else {
                incoming.accept_with(stingy.clone())
            };
            let Ok(connecting) = accepting else { continue };
            tokio::spawn(async move {
                let Ok(conn) = connecting.await else { return };
                if !keep {
                    tokio::time::sleep(after).await;
                    conn.close(VarInt::from_u32(0), b"");
                    count.fetch_add(1, Ordering::SeqCst);
                    return;
                }
                while let Ok(mut stream) = conn.accept_uni().await {
                    let _ = stream.read_to_end(1232).await;
                }
            });
        }
    });
    (addr, dropped)
}

/// Through a link losing 10%, the pool grows, and the leader drops each new connection 300 ms
/// after accepting it, unread: the streams given one move to the first connection, so every
/// send is accepted (the first connection reads all it gets at once).
#[tokio::test]
async fn a_stream_on_a_connection_dropped_before_it_answered_moves_to_another() {
    let (server, dropped) = dropping_server(Duration::from_millis(300), false);
    let addr = super::relay::start(server, Duration::from_millis(40), 0.1).await;
    let t = transport(Duration::from_secs(60));
    // Until a stream has moved: the pool grows once the link has lost a datagram of ours.
    for round in 0..100 {
        let sends: Vec<_> = (0..20)
            .map(|_| tokio::spawn(t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())))
            .collect();
        for s in sends {
            if let Err(e) = s.await.expect("send task") {
                panic!("round {round}: a send failed: {e}");
            }
        }
        let peer = lock(&t.inner.peers).get(&addr).cloned().expect("the peer");
        if peer.moved.load(Ordering::SeqCst) > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "no stream went on a connection the leader dropped ({} dropped): nothing was tested",
        dropped.load(Ordering::SeqCst)
    );
}

/// A leader that drops our first connection 300 ms after accepting it, unread, and reads the
/// next: the send that waited on the first is accepted on a new connection.
#[tokio::test]
async fn a_stream_whose_only_connection_is_dropped_before_it_answered_goes_on_a_new_one() {
    let (addr, dropped) = dropping_server(Duration::from_millis(300), true);
    let t = transport(Duration::from_secs(60));
    t.send(addr, Arc::from(&b"tx"[..]), Handoff::default())
        .await
        .expect("the send, on the second connection");
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "connections dropped");
    let peer = lock(&t.inner.peers).get(&addr).cloned().expect("the peer");
    assert_eq!(peer.moved.load(Ordering::SeqCst), 1, "streams moved");
}
