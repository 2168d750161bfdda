//! Which source address a node sees for each client of the relays.
//!
//! A 4.0 leader keys an unstaked sender's budget (200 streams a second, 8 connections) by its
//! source IP. On loopback every client is 127.0.0.1, so without this all senders of a test would
//! share one budget, which no two senders on the internet do. Each client (a client socket, as
//! the relay sees it: address and port) gets an address of its own in 127.1.0.0/16 — Linux
//! routes all of 127.0.0.0/8 to the loopback interface — and keeps it at every node, since one
//! host has one address on the internet. [`SourceMode::Host`] gives one address per client
//! *address* instead (two processes of one host share it, as they share a budget on the
//! internet); [`SourceMode::Shared`] puts every client on 127.0.0.1, as before.

use std::{
    collections::HashMap,
    fmt,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    str::FromStr,
    sync::Mutex,
};

/// How clients map to the source addresses the nodes see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceMode {
    /// One address per client socket.
    #[default]
    Client,
    /// One address per client address: the sockets of one host share it.
    Host,
    /// Everyone on 127.0.0.1: one budget for all.
    Shared,
}

impl FromStr for SourceMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "client" => Ok(SourceMode::Client),
            "host" => Ok(SourceMode::Host),
            "shared" => Ok(SourceMode::Shared),
            _ => Err(format!("{text:?}: client, host or shared")),
        }
    }
}

impl fmt::Display for SourceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceMode::Client => "client",
            SourceMode::Host => "host",
            SourceMode::Shared => "shared",
        })
    }
}

/// Addresses per /24 used: .1 to .254 (no network or broadcast-looking ends).
const PER_BLOCK: u32 = 254;
/// 127.1.0.0/16 holds this many.
pub const CAPACITY: u32 = PER_BLOCK * 256;

/// The addresses given out so far, shared by every relay of a cluster.
#[derive(Debug, Default)]
pub struct Sources {
    mode: SourceMode,
    given: Mutex<HashMap<SocketAddr, Ipv4Addr>>,
}

impl Sources {
    pub fn new(mode: SourceMode) -> Self {
        Sources {
            mode,
            given: Mutex::default(),
        }
    }

    pub fn mode(&self) -> SourceMode {
        self.mode
    }

    /// The address the nodes see `client` from; `None` once 127.1.0.0/16 is used up.
    pub fn of(&self, client: SocketAddr) -> Option<Ipv4Addr> {
        let key = match self.mode {
            SourceMode::Shared => return Some(Ipv4Addr::LOCALHOST),
            SourceMode::Client => client,
            SourceMode::Host => SocketAddr::new(client.ip(), 0),
        };
        let mut given = self.given.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ip) = given.get(&key) {
            return Some(*ip);
        }
        let ip = nth(u32::try_from(given.len()).ok()?)?;
        given.insert(key, ip);
        Some(ip)
    }

    /// Every client seen so far and its address (for `host` mode the port is 0).
    pub fn given(&self) -> Vec<(SocketAddr, IpAddr)> {
        let given = self.given.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<(SocketAddr, IpAddr)> = given
            .iter()
            .map(|(client, ip)| (*client, IpAddr::V4(*ip)))
            .collect();
        all.sort_by_key(|(_, ip)| *ip);
        all
    }
}

/// The `k`-th address, from 127.1.0.1.
fn nth(k: u32) -> Option<Ipv4Addr> {
    (k < CAPACITY).then(|| {
        let (block, host) = (k / PER_BLOCK, k % PER_BLOCK + 1);
        Ipv4Addr::new(127, 1, block as u8, host as u8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_keeps_an_address_of_its_own() {
        let sources = Sources::new(SourceMode::Client);
        let a: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:4001".parse().unwrap();
        assert_eq!(sources.of(a), Some(Ipv4Addr::new(127, 1, 0, 1)));
        assert_eq!(sources.of(b), Some(Ipv4Addr::new(127, 1, 0, 2)));
        assert_eq!(sources.of(a), Some(Ipv4Addr::new(127, 1, 0, 1)));
        assert_eq!(nth(254), Some(Ipv4Addr::new(127, 1, 1, 1)));
        assert_eq!(nth(CAPACITY - 1), Some(Ipv4Addr::new(127, 1, 255, 254)));
        assert_eq!(nth(CAPACITY), None);
    }

    #[test]
    fn host_mode_gives_one_address_per_client_address() {
        let sources = Sources::new(SourceMode::Host);
        let a = sources.of("127.0.0.1:4000".parse().unwrap());
        assert_eq!(a, sources.of("127.0.0.1:4001".parse().unwrap()));
        assert_ne!(a, sources.of("127.0.0.2:4000".parse().unwrap()));
        let shared = Sources::new(SourceMode::Shared);
        assert_eq!(
            shared.of("127.0.0.1:4000".parse().unwrap()),
            Some(Ipv4Addr::LOCALHOST)
        );
    }
}
