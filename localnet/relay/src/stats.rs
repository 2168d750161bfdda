//! The relay's counters: what it received, delivered and dropped each way and why, and how late
//! it delivered — so a run's report can say the wire was as stated.

use std::{
    collections::BTreeMap,
    sync::atomic::{AtomicU64, Ordering::Relaxed},
};

use serde::Serialize;

use crate::link::Cause;

/// One direction's counters, updated by the relay's tasks.
#[derive(Debug, Default)]
pub struct Counters {
    received: AtomicU64,
    delivered: AtomicU64,
    dropped: [AtomicU64; Cause::ALL.len()],
    /// Microseconds the delivered datagrams left after their scheduled time, summed, and the
    /// largest: the relay's own error on top of the link it was asked to be.
    late_us: AtomicU64,
    late_max_us: AtomicU64,
}

impl Counters {
    pub fn received(&self) {
        self.received.fetch_add(1, Relaxed);
    }

    pub fn dropped(&self, cause: Cause) {
        self.dropped[cause.index()].fetch_add(1, Relaxed);
    }

    /// A datagram handed to the kernel `late_us` microseconds after it was due.
    pub fn delivered(&self, late_us: u64) {
        self.delivered.fetch_add(1, Relaxed);
        self.late_us.fetch_add(late_us, Relaxed);
        self.late_max_us.fetch_max(late_us, Relaxed);
    }

    pub fn snapshot(&self) -> DirectionStats {
        let delivered = self.delivered.load(Relaxed);
        let dropped = Dropped {
            loss: self.count(Cause::Loss),
            burst: self.count(Cause::Burst),
            queue: self.count(Cause::Queue),
            blackhole: self.count(Cause::Blackhole),
            send_failed: self.count(Cause::SendFailed),
            no_upstream: self.count(Cause::NoUpstream),
        };
        let received = self.received.load(Relaxed);
        DirectionStats {
            received,
            delivered,
            in_flight: received.saturating_sub(delivered + dropped.total()),
            dropped,
            late_mean_us: self
                .late_us
                .load(Relaxed)
                .checked_div(delivered)
                .unwrap_or(0),
            late_max_us: self.late_max_us.load(Relaxed),
        }
    }

    fn count(&self, cause: Cause) -> u64 {
        self.dropped[cause.index()].load(Relaxed)
    }
}

/// One direction at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DirectionStats {
    pub received: u64,
    pub delivered: u64,
    /// Received, neither delivered nor dropped yet: inside the link's delay.
    pub in_flight: u64,
    pub dropped: Dropped,
    pub late_mean_us: u64,
    pub late_max_us: u64,
}

/// Drops by cause; see [`Cause`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dropped {
    pub loss: u64,
    pub burst: u64,
    pub queue: u64,
    pub blackhole: u64,
    pub send_failed: u64,
    pub no_upstream: u64,
}

impl Dropped {
    pub fn total(&self) -> u64 {
        self.loss + self.burst + self.queue + self.blackhole + self.send_failed + self.no_upstream
    }

    /// What the link model dropped (loss, bursts and the cap's queue), not the relay itself.
    pub fn by_link(&self) -> u64 {
        self.loss + self.burst + self.queue
    }
}

/// One relay (one node) at one moment; `ok stats N` prints it as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct RelayStats {
    pub node: usize,
    /// The relay's address (what the node advertises) and the node's TPU it forwards to.
    pub relay: String,
    pub target: String,
    pub link: String,
    pub blackholed: bool,
    /// Clients seen by this relay and still active.
    pub clients: usize,
    /// Each active client and the address the node sees it from (its upstream socket), so a
    /// node's own per-address counters can be matched to the client they count.
    pub upstreams: BTreeMap<String, String>,
    /// Client → node.
    pub to_node: DirectionStats,
    /// Node → clients.
    pub to_clients: DirectionStats,
    /// What the kernel dropped at full receive buffers: at the relay's sockets, and at the
    /// node's TPU socket; `null` when `/proc/net/udp` cannot be read.
    pub kernel_drops_relay: Option<u64>,
    pub kernel_drops_node: Option<u64>,
    /// The receive and send buffers of the relay's listening socket, in bytes.
    pub buffers: (usize, usize),
}
