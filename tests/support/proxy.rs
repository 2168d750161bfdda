//! Loopback proxies that can cut a link and restore it: TCP for RPC and the websocket, UDP for
//! QUIC. They put a fault between txpace and a real validator without touching either.
//!
//! Each proxy runs on its own small tokio runtime, so tests stay plain blocking code. They only
//! ever listen on 127.0.0.1.

use std::{
    collections::HashMap,
    net::{Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use tokio::{
    net::{TcpListener, TcpStream, UdpSocket},
    runtime::Runtime,
    task::AbortHandle,
};

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a proxy runtime")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Default)]
struct TcpState {
    cut: AtomicBool,
    live: Mutex<Vec<AbortHandle>>,
    /// Connections accepted and forwarded.
    forwarded: AtomicU64,
    /// Connections refused while cut.
    refused: AtomicU64,
}

/// Forwards every TCP connection to `target`. While cut, live connections are dropped and new
/// ones are closed as soon as they are accepted: to a client, the server is unreachable.
pub struct TcpProxy {
    addr: SocketAddr,
    state: Arc<TcpState>,
    rt: Option<Runtime>,
}

impl TcpProxy {
    pub fn start(target: SocketAddr) -> Self {
        let rt = runtime();
        let state = Arc::new(TcpState::default());
        let listener = rt
            .block_on(TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
            .expect("binding the TCP proxy");
        let addr = listener.local_addr().expect("proxy address");
        let st = state.clone();
        rt.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                if st.cut.load(Ordering::SeqCst) {
                    st.refused.fetch_add(1, Ordering::SeqCst);
                    drop(client);
                    continue;
                }
                st.forwarded.fetch_add(1, Ordering::SeqCst);
                let task = tokio::spawn(pipe(client, target));
                let mut live = lock(&st.live);
                live.retain(|h| !h.is_finished());
                live.push(task.abort_handle());
            }
        });
        TcpProxy {
            addr,
            state,
            rt: Some(rt),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` of the proxy.
    pub fn http_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `ws://127.0.0.1:PORT` of the proxy.
    pub fn ws_url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// Drops every live connection and refuses new ones until [`restore`](Self::restore).
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        for h in lock(&self.state.live).drain(..) {
            h.abort();
        }
    }

    pub fn restore(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
    }

    /// (connections forwarded, connections refused while cut)
    pub fn counts(&self) -> (u64, u64) {
        (
            self.state.forwarded.load(Ordering::SeqCst),
            self.state.refused.load(Ordering::SeqCst),
        )
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn pipe(mut client: TcpStream, target: SocketAddr) {
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

#[derive(Default)]
struct UdpState {
    cut: AtomicBool,
    /// Client address → the socket that carries its datagrams to the target, and the task
    /// carrying the target's answers back.
    flows: Mutex<HashMap<SocketAddr, (Arc<UdpSocket>, AbortHandle)>>,
    forwarded: AtomicU64,
    dropped: AtomicU64,
}

/// Forwards UDP datagrams to `target` and back, with one upstream socket per client address.
/// While cut, every datagram is dropped; the flows are forgotten, so after
/// [`restore`](Self::restore) the target sees the client's packets come from a new address, as
/// after a NAT rebinding: an old QUIC connection is lost, not merely paused.
pub struct UdpProxy {
    addr: SocketAddr,
    state: Arc<UdpState>,
    rt: Option<Runtime>,
}

impl UdpProxy {
    pub fn start(target: SocketAddr) -> Self {
        let rt = runtime();
        let state = Arc::new(UdpState::default());
        let front = Arc::new(
            rt.block_on(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)))
                .expect("binding the UDP proxy"),
        );
        let addr = front.local_addr().expect("proxy address");
        let st = state.clone();
        rt.spawn(async move {
            let mut buf = vec![0u8; 65_536];
            loop {
                let Ok((n, client)) = front.recv_from(&mut buf).await else {
                    continue;
                };
                if st.cut.load(Ordering::SeqCst) {
                    st.dropped.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
                let Some(up) = flow(&st, &front, client, target).await else {
                    continue;
                };
                if up.send(&buf[..n]).await.is_ok() {
                    st.forwarded.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        UdpProxy {
            addr,
            state,
            rt: Some(rt),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops all traffic, both ways, until [`restore`](Self::restore).
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        for (_, (_, task)) in lock(&self.state.flows).drain() {
            task.abort();
        }
    }

    pub fn restore(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
    }

    /// (datagrams forwarded to the target, datagrams dropped while cut)
    pub fn counts(&self) -> (u64, u64) {
        (
            self.state.forwarded.load(Ordering::SeqCst),
            self.state.dropped.load(Ordering::SeqCst),
        )
    }
}

impl Drop for UdpProxy {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The upstream socket for `client`, creating it (and its return path) on first use.
async fn flow(
    st: &Arc<UdpState>,
    front: &Arc<UdpSocket>,
    client: SocketAddr,
    target: SocketAddr,
) -> Option<Arc<UdpSocket>> {
    if let Some((up, _)) = lock(&st.flows).get(&client) {
        return Some(up.clone());
    }
    let up = Arc::new(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.ok()?);
    up.connect(target).await.ok()?;
    let (back_up, back_front, back_st) = (up.clone(), front.clone(), st.clone());
    let task = tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok(n) = back_up.recv(&mut buf).await {
            if back_st.cut.load(Ordering::SeqCst) {
                back_st.dropped.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            let _ = back_front.send_to(&buf[..n], client).await;
        }
    });
    lock(&st.flows).insert(client, (up.clone(), task.abort_handle()));
    Some(up)
}
