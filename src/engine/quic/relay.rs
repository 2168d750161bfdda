//! A lossy, far UDP relay for the transport's tests: every datagram each way is delayed by
//! half a round trip, and lost with a given probability (drawn from a seeded generator shared
//! by both directions), independently or in bursts (Gilbert–Elliott, as `txpace-localnet`'s
//! relay loses them in its `hostile` profile). `tc netem` is not available on the project's
//! machines; this puts a real QUIC connection through the link the simulator models
//! (`sim_link`).

use std::{
    net::{Ipv4Addr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::net::UdpSocket;

/// Starts a relay to `server`; returns the address clients send to.
pub(super) async fn start(server: SocketAddr, rtt: Duration, loss: f64) -> SocketAddr {
    start_with(server, rtt, Loss::independent(loss), 0).await
}

/// [`start`], also losing the first `first` datagrams clients send (a handshake's Initial).
pub(super) async fn start_losing_first(
    server: SocketAddr,
    rtt: Duration,
    loss: f64,
    first: usize,
) -> SocketAddr {
    start_with(server, rtt, Loss::independent(loss), first).await
}

/// How a direction loses datagrams: each with the same chance, or in bursts — a two-state
/// (Gilbert–Elliott) chain that loses every datagram in its bad state and none in its good one.
#[derive(Clone, Copy, Debug)]
pub(super) enum Loss {
    Independent(f64),
    Bursty {
        /// Chance to enter the bad state after a datagram in the good one.
        enter: f64,
        /// Chance to leave it after a datagram in the bad one: 1 / the mean burst length.
        leave: f64,
    },
}

impl Loss {
    pub(super) fn independent(loss: f64) -> Self {
        Self::Independent(loss)
    }

    /// Losing `loss` of the datagrams in bursts of `burst` on average; `loss` at most
    /// `burst / (burst + 1)`, past which the chain cannot lose that much.
    pub(super) fn bursty(loss: f64, burst: f64) -> Self {
        let leave = 1.0 / burst.max(1.0);
        let loss = loss.clamp(0.0, 0.99);
        Self::Bursty {
            enter: loss * leave / (1.0 - loss),
            leave,
        }
    }
}

/// Starts a relay to `server` losing datagrams each way as `loss` says, and the first `first`
/// datagrams clients send; returns the address clients send to.
pub(super) async fn start_with(
    server: SocketAddr,
    rtt: Duration,
    loss: Loss,
    first: usize,
) -> SocketAddr {
    start_seeded(server, rtt, loss, first, 0x5eed).await
}

/// [`start_with`], its losses drawn from a generator seeded with `seed`: another seed,
/// another pattern of losses through the same link.
pub(super) async fn start_seeded(
    server: SocketAddr,
    rtt: Duration,
    loss: Loss,
    first: usize,
    seed: u64,
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
    let rng = Arc::new(Mutex::new(seed));
    let (up, down) = (
        Arc::new(Mutex::new(Chain::new(loss))),
        Arc::new(Mutex::new(Chain::new(loss))),
    );
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
                if seen <= first || lost(&rng, &up) {
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
            if lost(&rng, &down) {
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

/// One direction's loss chain and whether it is in its bad state.
struct Chain {
    loss: Loss,
    bad: bool,
}

impl Chain {
    fn new(loss: Loss) -> Self {
        Self { loss, bad: false }
    }
}

/// Whether the next datagram of a direction is lost: its chain steps once.
fn lost(rng: &Mutex<u64>, chain: &Mutex<Chain>) -> bool {
    let mut chain = chain.lock().expect("relay lock");
    let draw = uniform(rng);
    chain.bad = match chain.loss {
        Loss::Independent(loss) => draw < loss,
        Loss::Bursty { leave, .. } if chain.bad => draw >= leave,
        Loss::Bursty { enter, .. } => draw < enter,
    };
    chain.bad
}

/// A uniform draw in [0, 1) (splitmix64).
fn uniform(rng: &Mutex<u64>) -> f64 {
    let mut state = rng.lock().expect("relay lock");
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}
