//! Port blocks for local validators that run side by side.
//!
//! A validator binds an RPC port, the pubsub port after it, a faucet port, a gossip port and
//! about twenty dynamic ports (TPU, TPU-forwards, TVU, repair, ... each over UDP and QUIC). Tests
//! start several validators at once, from threads of one process and from separate test binaries,
//! so each validator gets a whole block of ports for itself:
//!
//! ```text
//! base+0 RPC   base+1 pubsub   base+2 faucet   base+3 gossip   base+4 ..= base+63 dynamic range
//! ```
//!
//! Blocks are chosen at random (so concurrent starters rarely contend), claimed with an exclusive
//! `flock` on a file in the temp directory (so two txpace processes never pick the same block; the
//! lock dies with its holder, so a crashed test leaves nothing to clean up), and then checked free
//! by binding every port over TCP and UDP (so ports held by anything else are skipped). The range
//! stays below Linux's default ephemeral range (32768–60999), where the kernel hands out client
//! ports that no lock can reserve.

use std::{
    fs::{File, OpenOptions, TryLockError},
    hash::{BuildHasher, RandomState},
    net::{Ipv4Addr, TcpListener, UdpSocket},
    path::PathBuf,
};

use super::ValidatorError;

/// Ports per validator.
pub const BLOCK_SIZE: u16 = 64;
/// First port of the first block.
pub const RANGE_LOW: u16 = 20_000;
/// End (exclusive) of the last block.
pub const RANGE_HIGH: u16 = 32_000;
/// solana-net-utils' MINIMUM_VALIDATOR_PORT_RANGE_WIDTH; the validator refuses narrower ranges.
const MIN_DYNAMIC_WIDTH: u16 = 25;
const ATTEMPTS: u32 = 200;

const _: () = assert!(BLOCK_SIZE - 5 >= MIN_DYNAMIC_WIDTH);

/// A claimed block of ports; the claim lasts as long as this value.
#[derive(Debug)]
pub struct PortBlock {
    base: u16,
    _lock: File,
}

impl PortBlock {
    /// Claims a free block.
    pub fn claim() -> Result<Self, ValidatorError> {
        let dir = lock_dir();
        std::fs::create_dir_all(&dir).map_err(|source| ValidatorError::Io {
            path: dir.clone(),
            source,
        })?;
        let blocks = (RANGE_HIGH - RANGE_LOW) / BLOCK_SIZE;
        let random = RandomState::new();
        for attempt in 0..ATTEMPTS {
            let pick = random.hash_one((attempt, std::process::id())) % u64::from(blocks);
            // `pick < blocks`, which fits in u16.
            let base = RANGE_LOW + (pick as u16) * BLOCK_SIZE;
            let path = dir.join(format!("block-{base}.lock"));
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|source| ValidatorError::Io {
                    path: path.clone(),
                    source,
                })?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Error(source)) => {
                    return Err(ValidatorError::Io { path, source });
                }
            }
            if (base..base + BLOCK_SIZE).all(port_is_free) {
                return Ok(PortBlock { base, _lock: file });
            }
        }
        Err(ValidatorError::NoFreePorts {
            size: BLOCK_SIZE,
            low: RANGE_LOW,
            high: RANGE_HIGH,
            attempts: ATTEMPTS,
        })
    }

    pub fn rpc(&self) -> u16 {
        self.base
    }

    /// The validator always puts pubsub right after RPC.
    pub fn pubsub(&self) -> u16 {
        self.base + 1
    }

    pub fn faucet(&self) -> u16 {
        self.base + 2
    }

    pub fn gossip(&self) -> u16 {
        self.base + 3
    }

    /// The `--dynamic-port-range` value. The last port is left out in case the validator treats
    /// the end as inclusive, which would reach into the next block.
    pub fn dynamic_range(&self) -> (u16, u16) {
        (self.base + 4, self.base + BLOCK_SIZE - 1)
    }
}

fn lock_dir() -> PathBuf {
    std::env::temp_dir().join("txpace-validator-ports")
}

/// Binding the wildcard address conflicts with a socket bound to any address on that port, so it
/// also catches the faucet, which binds 0.0.0.0 whatever `--bind-address` says.
fn port_is_free(port: u16) -> bool {
    TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok()
        && UdpSocket::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_claimed_together_are_disjoint() {
        let blocks: Vec<_> = (0..8).map(|_| PortBlock::claim().unwrap()).collect();
        let mut bases: Vec<_> = blocks.iter().map(|b| b.rpc()).collect();
        bases.sort_unstable();
        bases.dedup();
        assert_eq!(bases.len(), blocks.len());
        for b in &blocks {
            assert!(b.rpc() >= RANGE_LOW && b.rpc() + BLOCK_SIZE <= RANGE_HIGH);
            assert_eq!(b.rpc() % BLOCK_SIZE, RANGE_LOW % BLOCK_SIZE);
            let (lo, hi) = b.dynamic_range();
            assert!(hi - lo >= MIN_DYNAMIC_WIDTH);
            assert!(b.gossip() < lo);
        }
    }

    #[test]
    fn a_claimed_block_is_skipped_by_others() {
        let held = PortBlock::claim().unwrap();
        let held_path = lock_dir().join(format!("block-{}.lock", held.rpc()));
        let again = OpenOptions::new().write(true).open(held_path).unwrap();
        assert!(matches!(again.try_lock(), Err(TryLockError::WouldBlock)));
    }
}
