//! The UDP relay in front of one node's TPU QUIC port, carrying each direction through its
//! [`Direction`] of the link.
//!
//! Clients send to the relay's socket; each client gets an upstream socket of its own, bound to
//! the source address [`Sources`] gives it, which carries the client's datagrams to the node and
//! the node's answers back. Every datagram, handshakes included, is given its fate the moment it
//! arrives (under the link's lock, so fates follow arrival order) and waits in a delivery queue
//! until its time; one task per direction sends what is due. Sends go straight to the kernel
//! without waiting: a full send buffer is a drop, counted as the relay's (`send_failed`), never
//! a stall that would delay everything behind it.

use std::{
    cmp::Reverse,
    collections::{BTreeMap, BinaryHeap, HashMap, HashSet},
    io::{self, ErrorKind},
    net::{Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use tokio::{
    net::UdpSocket,
    runtime::Handle,
    sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel},
    time::Instant,
};

use crate::{
    link::{Cause, Direction, Fate},
    sockets,
    sources::Sources,
    spec::LinkSpec,
    stats::{Counters, RelayStats},
};

/// A client's upstream socket is dropped after this long without an answer from the node.
const IDLE: Duration = Duration::from_secs(60);
const MAX_DATAGRAM: usize = 2048;

/// The relay of one node; it runs as long as its runtime.
pub struct Relay {
    shared: Arc<Shared>,
}

struct Shared {
    node: usize,
    addr: SocketAddr,
    target: SocketAddr,
    seed: u64,
    runtime: Handle,
    sources: Arc<Sources>,
    blackholed: AtomicBool,
    link: Mutex<Link>,
    to_node: Counters,
    to_clients: Counters,
    clients: Mutex<HashMap<SocketAddr, Arc<UdpSocket>>>,
    buffers: (usize, usize),
}

struct Link {
    spec: LinkSpec,
    /// How many times the link was set; part of each new direction's seed.
    generation: u64,
    to_node: Direction,
    to_clients: Direction,
}

#[derive(Clone, Copy)]
enum Way {
    ToNode,
    ToClients,
}

/// A datagram waiting for its time; ordered by time, then by arrival.
struct Pending {
    at: Instant,
    seq: u64,
    data: Vec<u8>,
    socket: Arc<UdpSocket>,
    to: SocketAddr,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl Relay {
    /// Listens on an ephemeral 127.0.0.1 port and forwards to `target` (node `node`) through
    /// `link`, on `runtime`. `seed` fixes the link's random choices.
    pub fn start(
        node: usize,
        target: SocketAddr,
        link: LinkSpec,
        seed: u64,
        sources: Arc<Sources>,
        runtime: Handle,
    ) -> io::Result<Relay> {
        let listener = sockets::bind(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0))?;
        let addr = listener.local_addr()?;
        let buffers = sockets::buffers(&listener);
        let now = {
            let _inside = runtime.enter();
            Instant::now().into_std()
        };
        let link = Link {
            to_node: Direction::new(&link, direction_seed(seed, node, 0, 0), now),
            to_clients: Direction::new(&link, direction_seed(seed, node, 0, 1), now),
            spec: link,
            generation: 0,
        };
        let shared = Arc::new(Shared {
            node,
            addr,
            target,
            seed,
            runtime: runtime.clone(),
            sources,
            blackholed: AtomicBool::new(false),
            link: Mutex::new(link),
            to_node: Counters::default(),
            to_clients: Counters::default(),
            clients: Mutex::default(),
            buffers,
        });
        let (to_node, queued_to_node) = unbounded_channel();
        let (to_clients, queued_to_clients) = unbounded_channel();
        runtime.spawn(deliver(queued_to_node, shared.clone(), Way::ToNode));
        runtime.spawn(deliver(queued_to_clients, shared.clone(), Way::ToClients));
        runtime.spawn(from_clients(listener, shared.clone(), to_node, to_clients));
        Ok(Relay { shared })
    }

    /// The address clients send to: what the node advertises.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// Drops every datagram both ways (true) or carries them again (false).
    pub fn set_blackholed(&self, on: bool) {
        self.shared.blackholed.store(on, Ordering::Relaxed);
    }

    /// Puts a new link in place for the datagrams that arrive from now on; those already on
    /// their way keep their times.
    pub fn set_link(&self, spec: LinkSpec) {
        let shared = &self.shared;
        let now = {
            let _inside = shared.runtime.enter();
            Instant::now().into_std()
        };
        let mut link = shared.link();
        let generation = link.generation + 1;
        let seed = |way| direction_seed(shared.seed, shared.node, generation, way);
        *link = Link {
            to_node: Direction::replacing(&spec, seed(0), now, &link.to_node),
            to_clients: Direction::replacing(&spec, seed(1), now, &link.to_clients),
            spec,
            generation,
        };
    }

    pub fn link(&self) -> LinkSpec {
        self.shared.link().spec.clone()
    }

    /// The counters now, with the kernel's drops at this relay's sockets and the node's.
    pub fn stats(&self) -> RelayStats {
        let shared = &self.shared;
        let clients = shared.clients.lock().unwrap_or_else(|p| p.into_inner());
        let upstreams: BTreeMap<String, String> = clients
            .iter()
            .filter_map(|(client, s)| Some((client.to_string(), s.local_addr().ok()?.to_string())))
            .collect();
        let mut ports: HashSet<u16> = clients
            .values()
            .filter_map(|s| s.local_addr().ok())
            .map(|a| a.port())
            .collect();
        ports.insert(shared.addr.port());
        let count = clients.len();
        drop(clients);
        RelayStats {
            node: shared.node,
            relay: shared.addr.to_string(),
            target: shared.target.to_string(),
            link: self.link().to_string(),
            blackholed: shared.blackholed.load(Ordering::Relaxed),
            clients: count,
            upstreams,
            to_node: shared.to_node.snapshot(),
            to_clients: shared.to_clients.snapshot(),
            kernel_drops_relay: sockets::kernel_drops(&ports),
            kernel_drops_node: sockets::kernel_drops(&HashSet::from([shared.target.port()])),
            buffers: shared.buffers,
        }
    }
}

impl Shared {
    fn link(&self) -> MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn counters(&self, way: Way) -> &Counters {
        match way {
            Way::ToNode => &self.to_node,
            Way::ToClients => &self.to_clients,
        }
    }

    /// Gives a datagram that just arrived its fate and queues it for delivery when it has one.
    fn forward(
        &self,
        way: Way,
        data: &[u8],
        socket: &Arc<UdpSocket>,
        to: SocketAddr,
        queue: &UnboundedSender<Pending>,
    ) {
        let counters = self.counters(way);
        counters.received();
        if self.blackholed.load(Ordering::Relaxed) {
            counters.dropped(Cause::Blackhole);
            return;
        }
        let now = Instant::now();
        // Queued under the lock, so the delivery queue sees datagrams in the order of their
        // fates (equal times keep that order).
        let mut link = self.link();
        let direction = match way {
            Way::ToNode => &mut link.to_node,
            Way::ToClients => &mut link.to_clients,
        };
        match direction.admit(now.into_std(), data.len()) {
            Fate::Deliver(at) => {
                let pending = Pending {
                    at: Instant::from_std(at),
                    seq: 0,
                    data: data.to_vec(),
                    socket: socket.clone(),
                    to,
                };
                // Closed only when the delivery task is gone, i.e. the runtime is stopping.
                let _ = queue.send(pending);
            }
            Fate::Drop(cause) => counters.dropped(cause),
        }
    }
}

/// A seed of its own for each node, each setting of its link and each direction.
fn direction_seed(seed: u64, node: usize, generation: u64, way: u64) -> u64 {
    let mut x = seed ^ (node as u64).rotate_left(48) ^ generation.rotate_left(8) ^ way;
    // splitmix64's finaliser: nearby inputs give unrelated seeds.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

async fn from_clients(
    listener: std::net::UdpSocket,
    shared: Arc<Shared>,
    to_node: UnboundedSender<Pending>,
    to_clients: UnboundedSender<Pending>,
) {
    let listener = match UdpSocket::from_std(listener) {
        Ok(socket) => Arc::new(socket),
        Err(e) => {
            log::error!("TPU relay for {} did not start: {e}", shared.target);
            return;
        }
    };
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let (len, client) = match listener.recv_from(&mut buf).await {
            Ok(got) => got,
            Err(e) => {
                log::warn!("TPU relay for {}: {e}", shared.target);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Some(upstream) = upstream_of(&shared, client, &listener, &to_clients) else {
            shared.to_node.received();
            shared.to_node.dropped(Cause::NoUpstream);
            continue;
        };
        shared.forward(Way::ToNode, &buf[..len], &upstream, shared.target, &to_node);
    }
}

/// The client's upstream socket, opened (with the task carrying answers back) on its first
/// datagram, from the client's own source address.
fn upstream_of(
    shared: &Arc<Shared>,
    client: SocketAddr,
    listener: &Arc<UdpSocket>,
    to_clients: &UnboundedSender<Pending>,
) -> Option<Arc<UdpSocket>> {
    let mut clients = shared.clients.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(socket) = clients.get(&client) {
        return Some(socket.clone());
    }
    let Some(source) = shared.sources.of(client) else {
        log::warn!("TPU relay: no source address left for {client}");
        return None;
    };
    let socket = sockets::bind(SocketAddr::new(source.into(), 0))
        .and_then(UdpSocket::from_std)
        .map_err(|e| log::warn!("TPU relay: no upstream socket from {source} for {client}: {e}"))
        .ok()?;
    let socket = Arc::new(socket);
    clients.insert(client, socket.clone());
    tokio::spawn(to_client(
        socket.clone(),
        client,
        listener.clone(),
        shared.clone(),
        to_clients.clone(),
    ));
    Some(socket)
}

async fn to_client(
    upstream: Arc<UdpSocket>,
    client: SocketAddr,
    listener: Arc<UdpSocket>,
    shared: Arc<Shared>,
    to_clients: UnboundedSender<Pending>,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        match tokio::time::timeout(IDLE, upstream.recv(&mut buf)).await {
            Ok(Ok(len)) => {
                shared.forward(Way::ToClients, &buf[..len], &listener, client, &to_clients);
            }
            Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
            // Idle (or broken): forget the client; its next datagram opens a new upstream.
            Ok(Err(_)) | Err(_) => break,
        }
    }
    shared
        .clients
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&client);
}

/// Sends each queued datagram of one direction when its time comes.
async fn deliver(mut queue: UnboundedReceiver<Pending>, shared: Arc<Shared>, way: Way) {
    let counters = shared.counters(way);
    let mut waiting = BinaryHeap::new();
    let mut seq = 0u64;
    let timer = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(timer);
    loop {
        let now = Instant::now();
        while waiting
            .peek()
            .is_some_and(|Reverse(p): &Reverse<Pending>| p.at <= now)
        {
            let Some(Reverse(pending)) = waiting.pop() else {
                break;
            };
            let socket = socket2::SockRef::from(pending.socket.as_ref());
            match socket.send_to(&pending.data, &pending.to.into()) {
                Ok(_) => {
                    let late = now.saturating_duration_since(pending.at);
                    counters.delivered(u64::try_from(late.as_micros()).unwrap_or(u64::MAX));
                }
                Err(e) => {
                    log::debug!("TPU relay: a datagram to {} dropped: {e}", pending.to);
                    counters.dropped(Cause::SendFailed);
                }
            }
        }
        if let Some(Reverse(next)) = waiting.peek() {
            timer.as_mut().reset(next.at);
        }
        tokio::select! {
            biased;
            received = queue.recv() => match received {
                Some(mut pending) => {
                    pending.seq = seq;
                    seq += 1;
                    waiting.push(Reverse(pending));
                }
                None => return,
            },
            () = &mut timer, if !waiting.is_empty() => {}
        }
    }
}
