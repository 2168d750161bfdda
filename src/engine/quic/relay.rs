//! A lossy, far UDP relay for the transport's tests: every datagram each way is delayed by
//! half a round trip, and lost with a given probability (drawn from a seeded generator, so a
//! run loses the same datagrams). `tc netem` is not available on the project's machines; this
//! puts a real QUIC connection through the link the simulator models (`sim_link`).

use std::{
    net::{Ipv4Addr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::net::UdpSocket;

/// Starts a relay to `server`; returns the address clients send to.
pub(super) async fn start(server: SocketAddr, rtt: Duration, loss: f64) -> SocketAddr {
    start_losing_first(server, rtt, loss, 0).await
}

/// [`start`], also losing the first `first` datagrams clients send (a handshake's Initial).
pub(super) async fn start_losing_first(
    server: SocketAddr,
    rtt: Duration,
    loss: f64,
    first: usize,
) -> SocketAddr {
    let front = Arc::new(
        UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the relay's front"),
    );
    let back = Arc::new(
        UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the relay's back"),
    );
    let addr = front.local_addr().expect("relay address");
    let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
    let rng = Arc::new(Mutex::new(0x5eed_u64));
    let one_way = rtt / 2;
    // Client → server.
    tokio::spawn({
        let (front, back, client, rng) = (front.clone(), back.clone(), client.clone(), rng.clone());
        async move {
            let mut buf = vec![0u8; 65_536];
            let mut seen = 0;
            while let Ok((n, from)) = front.recv_from(&mut buf).await {
                *client.lock().expect("relay lock") = Some(from);
                seen += 1;
                if seen <= first || lost(&rng, loss) {
                    continue;
                }
                let (back, datagram) = (back.clone(), buf[..n].to_vec());
                tokio::spawn(async move {
                    tokio::time::sleep(one_way).await;
                    let _ = back.send_to(&datagram, server).await;
                });
            }
        }
    });
    // Server → client.
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok((n, _)) = back.recv_from(&mut buf).await {
            let Some(to) = *client.lock().expect("relay lock") else {
                continue;
            };
            if lost(&rng, loss) {
                continue;
            }
            let (front, datagram) = (front.clone(), buf[..n].to_vec());
            tokio::spawn(async move {
                tokio::time::sleep(one_way).await;
                let _ = front.send_to(&datagram, to).await;
            });
        }
    });
    addr
}

/// Whether the next datagram is lost (splitmix64 draw).
fn lost(rng: &Mutex<u64>, loss: f64) -> bool {
    let mut state = rng.lock().expect("relay lock");
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 11) as f64 / (1u64 << 53) as f64) < loss
}
