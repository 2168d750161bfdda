//! A switchable UDP relay in front of a node's TPU QUIC port: the "one bad leader" fault.
//!
//! With `--tpu-relay` each node advertises the relay's address as its TPU QUIC address (in gossip,
//! so `getClusterNodes` hands it to every client); the relay carries each client's datagrams to
//! the node from a socket of its own and the node's answers back. Blackholed, it drops both
//! directions: the node keeps producing blocks and voting (votes do not use this port) while no
//! client can reach its TPU, which is what an overloaded or firewalled leader looks like from
//! outside. Forwarding from the node's own QUIC port is what the node would see anyway: every
//! client is on 127.0.0.1.

use std::{
    collections::HashMap,
    io::ErrorKind,
    net::{Ipv4Addr, SocketAddr, UdpSocket},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread,
    time::Duration,
};

use anyhow::{Context, Result};

/// A client's upstream socket is dropped after this long without traffic either way.
const IDLE: Duration = Duration::from_secs(60);
const MAX_DATAGRAM: usize = 2048;

/// The relay of one node; it runs until the process exits.
pub struct Relay {
    addr: SocketAddr,
    blackholed: Arc<AtomicBool>,
}

impl Relay {
    /// Listens on an ephemeral loopback port and forwards to `target`.
    pub fn start(target: SocketAddr) -> Result<Relay> {
        let listener = Arc::new(
            UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).context("binding a TPU relay socket")?,
        );
        let addr = listener
            .local_addr()
            .context("reading the relay's address")?;
        let blackholed = Arc::new(AtomicBool::new(false));
        let relay = Relay {
            addr,
            blackholed: blackholed.clone(),
        };
        thread::Builder::new()
            .name(format!("tpuRelay{}", addr.port()))
            .spawn(move || from_clients(listener, target, blackholed))
            .context("starting a TPU relay thread")?;
        Ok(relay)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops every datagram both ways (true) or carries them again (false).
    pub fn set_blackholed(&self, on: bool) {
        self.blackholed.store(on, Ordering::Relaxed);
    }
}

type Upstreams = Arc<Mutex<HashMap<SocketAddr, Arc<UdpSocket>>>>;

fn from_clients(listener: Arc<UdpSocket>, target: SocketAddr, blackholed: Arc<AtomicBool>) {
    let upstreams: Upstreams = Arc::default();
    let mut buf = [0u8; MAX_DATAGRAM];
    loop {
        let (len, client) = match listener.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                log::error!("TPU relay for {target} stopped: {e}");
                return;
            }
        };
        if blackholed.load(Ordering::Relaxed) {
            continue;
        }
        let Some(upstream) = upstream_of(&upstreams, client, &listener, &blackholed) else {
            continue;
        };
        // A full socket buffer drops the datagram, as the network would.
        let _ = upstream.send_to(&buf[..len], target);
    }
}

/// The client's upstream socket, opened (with the thread carrying answers back) on its first
/// datagram.
fn upstream_of(
    upstreams: &Upstreams,
    client: SocketAddr,
    listener: &Arc<UdpSocket>,
    blackholed: &Arc<AtomicBool>,
) -> Option<Arc<UdpSocket>> {
    let mut map = upstreams.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(socket) = map.get(&client) {
        return Some(socket.clone());
    }
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|s| s.set_read_timeout(Some(IDLE)).map(|()| Arc::new(s)))
        .map_err(|e| log::warn!("TPU relay: no upstream socket for {client}: {e}"))
        .ok()?;
    map.insert(client, socket.clone());
    let (back, listener, blackholed, upstreams) = (
        socket.clone(),
        listener.clone(),
        blackholed.clone(),
        upstreams.clone(),
    );
    let spawned = thread::Builder::new()
        .name("tpuRelayBack".to_string())
        .spawn(move || to_client(back, client, listener, blackholed, upstreams));
    if let Err(e) = spawned {
        log::warn!("TPU relay: no thread for {client}: {e}");
        map.remove(&client);
        return None;
    }
    Some(socket)
}

fn to_client(
    upstream: Arc<UdpSocket>,
    client: SocketAddr,
    listener: Arc<UdpSocket>,
    blackholed: Arc<AtomicBool>,
    upstreams: Upstreams,
) {
    let mut buf = [0u8; MAX_DATAGRAM];
    loop {
        match upstream.recv(&mut buf) {
            Ok(len) if !blackholed.load(Ordering::Relaxed) => {
                let _ = listener.send_to(&buf[..len], client);
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Idle (or broken): forget the client; its next datagram opens a new upstream.
            Err(_) => break,
        }
    }
    upstreams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&client);
}
