//! A relay between real UDP sockets on loopback, under tokio's paused clock.
//!
//! The clock moves only when [`Wire::step`] moves it, one millisecond (the timer's resolution) at
//! a time; between steps every task runs until the datagrams sent so far have reached their
//! sockets (loopback delivers inside `send_to`, and each hop is one task waking on its socket).
//! So a datagram's measured delay is exactly what the relay's timers made of it, and a run of
//! seconds of traffic takes a fraction of a second.
//!
//! The node is a socket that records each datagram (its sequence number, when it arrived and
//! from which address) and echoes it back; the clients record the echoes the same way. Every
//! datagram carries its client's sequence number, the time it was sent and the client's index.

#![allow(dead_code)]

use std::{
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{net::UdpSocket, time::Instant};
use txpace_relay::{Relays, SourceMode, control};

/// One datagram as a receiver saw it.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// The client that sent it.
    pub client: u8,
    pub seq: u32,
    pub sent: Duration,
    pub at: Duration,
    pub from: SocketAddr,
}

impl Seen {
    pub fn delay(&self) -> Duration {
        self.at - self.sent
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

pub struct Wire {
    pub relays: Relays,
    pub t0: Instant,
    pub node: SocketAddr,
    /// What the node received, in arrival order.
    pub at_node: Log,
    pub clients: Vec<Client>,
}

pub struct Client {
    socket: std::net::UdpSocket,
    /// The echoes this client received, in arrival order.
    pub echoes: Log,
    next: u32,
}

impl Wire {
    /// One node behind a relay with `link`, and `clients` clients of it.
    pub async fn new(link: &str, clients: usize, mode: SourceMode) -> Wire {
        let t0 = Instant::now();
        let node = bind().await;
        let node_addr = node.local_addr().unwrap();
        let at_node = Log::default();
        tokio::spawn(record(node, at_node.clone(), t0, true));
        let mut relays = Relays::new(tokio::runtime::Handle::current(), mode, 7);
        relays
            .add(node_addr, link.parse().expect("a link spec"))
            .expect("a relay");
        let mut wire = Wire {
            relays,
            t0,
            node: node_addr,
            at_node,
            clients: Vec::new(),
        };
        for _ in 0..clients {
            wire.add_client().await;
        }
        wire
    }

    pub async fn add_client(&mut self) {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        let receiver = UdpSocket::from_std(socket.try_clone().unwrap()).unwrap();
        let echoes = Log::default();
        tokio::spawn(record(receiver, echoes.clone(), self.t0, false));
        self.clients.push(Client {
            socket,
            echoes,
            next: 0,
        });
    }

    /// Sends `count` datagrams of `len` bytes from client `k` to node `node`'s relay, now.
    pub fn send(&mut self, k: usize, node: usize, count: usize, len: usize) {
        let relay = self.relays.get(node).expect("a relay").addr();
        let now = Instant::now() - self.t0;
        let client = &mut self.clients[k];
        for _ in 0..count {
            let mut data = vec![0u8; len.max(13)];
            data[12] = k as u8;
            data[..4].copy_from_slice(&client.next.to_le_bytes());
            data[4..12].copy_from_slice(&(now.as_nanos() as u64).to_le_bytes());
            client
                .socket
                .send_to(&data, relay)
                .expect("a send on loopback");
            client.next += 1;
        }
    }

    /// Moves the clock by `time`, a millisecond at a time, letting everything due happen.
    pub async fn step(&self, time: Duration) {
        for _ in 0..time.as_millis() {
            tokio::time::advance(Duration::from_millis(1)).await;
            settle().await;
        }
    }

    /// Sends `per_ms` datagrams of `len` bytes from client `k` every millisecond for `time`.
    pub async fn stream(&mut self, k: usize, per_ms: usize, len: usize, time: Duration) {
        for _ in 0..time.as_millis() {
            self.send(k, 0, per_ms, len);
            settle().await;
            self.step(Duration::from_millis(1)).await;
        }
    }

    pub fn at_node(&self) -> Vec<Seen> {
        self.at_node.lock().unwrap().clone()
    }

    pub fn echoes(&self, k: usize) -> Vec<Seen> {
        self.clients[k].echoes.lock().unwrap().clone()
    }

    /// A command to the relays, as `txpace-localnet` reads them on standard input.
    pub fn command(&self, line: &str) -> String {
        let mut out = Vec::new();
        control::serve(&self.relays, None, line.as_bytes(), &mut out);
        String::from_utf8(out).unwrap().trim_end().to_string()
    }

    /// Node 0's relay counters, as `stats 0` prints them.
    pub fn stats(&self) -> serde_json::Value {
        let answer = self.command("stats 0");
        let json = answer
            .strip_prefix("ok stats 0 ")
            .unwrap_or_else(|| panic!("stats answered {answer:?}"));
        serde_json::from_str(json).unwrap()
    }
}

/// Lets every task run until nothing is left to do at this instant: a few rounds, since each
/// hop of a datagram is one task woken by the I/O driver on the next round.
pub async fn settle() {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
}

async fn bind() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").await.unwrap()
}

async fn record(socket: UdpSocket, log: Log, t0: Instant, echo: bool) {
    let mut buf = vec![0u8; 4096];
    loop {
        let Ok((len, from)) = socket.recv_from(&mut buf).await else {
            return;
        };
        let seq = u32::from_le_bytes(buf[..4].try_into().unwrap());
        let sent = Duration::from_nanos(u64::from_le_bytes(buf[4..12].try_into().unwrap()));
        log.lock().unwrap().push(Seen {
            client: buf[12],
            seq,
            sent,
            at: Instant::now() - t0,
            from,
        });
        if echo {
            // Straight to the kernel: tokio's own send would wait for a readiness event.
            let _ = socket2::SockRef::from(&socket).send_to(&buf[..len], &from.into());
        }
    }
}

/// The sequence numbers of `sent` datagrams that never arrived, in order.
pub fn missing(seen: &[Seen], sent: u32) -> Vec<u32> {
    let mut got = vec![false; sent as usize];
    for s in seen {
        got[s.seq as usize] = true;
    }
    (0..sent).filter(|&i| !got[i as usize]).collect()
}

pub fn mean(delays: impl Iterator<Item = Duration>) -> Duration {
    let all: Vec<Duration> = delays.collect();
    all.iter().sum::<Duration>() / all.len().max(1) as u32
}

/// `measured` within `share` (0.1 = 10%) of `set`.
pub fn within(measured: f64, set: f64, share: f64) -> bool {
    (measured - set).abs() <= share * set
}

pub fn source_ips(seen: &[Seen]) -> Vec<IpAddr> {
    let mut ips: Vec<IpAddr> = seen.iter().map(|s| s.from.ip()).collect();
    ips.sort();
    ips.dedup();
    ips
}
