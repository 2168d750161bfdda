//! `txpace-localnet`'s TPU relay: what stands between a client and a node's TPU QUIC port, so
//! that a cluster on one machine has the wire of the internet — far and lossy links, and
//! senders with addresses of their own.
//!
//! - [`spec`]: a link as typed (`rtt:85ms,jitter:5ms,loss:0.5%`) and the named profiles;
//! - [`link`]: one direction's fate for each datagram — [`bottleneck`] (bandwidth cap and
//!   tail-drop queue), [`loss`] (independent or Gilbert–Elliott bursts), [`jitter`]
//!   (independent or queueing), and the one-way delay; pure and seeded;
//! - [`relay`]: the UDP relay of one node on tokio, with its counters ([`stats`]);
//! - [`sources`]: the distinct source address each client gets in 127.0.0.0/8;
//! - [`sockets`]: enlarged socket buffers and the kernel's own drop counts;
//! - [`relays`] and [`control`]: a cluster's relays and the commands that change them;
//! - [`tcp`]: a delaying TCP proxy for a node's RPC and websocket (a remote provider);
//! - [`counters`]: the nodes' own TPU server counters, from the metrics they report.
//!
//! No Agave crate here: the tests build and run in seconds.

pub mod bottleneck;
pub mod control;
pub mod counters;
pub mod jitter;
pub mod link;
pub mod loss;
pub mod relay;
pub mod relays;
pub mod sockets;
pub mod sources;
pub mod spec;
pub mod stats;
pub mod tcp;

pub use relay::Relay;
pub use relays::Relays;
pub use sources::SourceMode;
pub use spec::LinkSpec;
