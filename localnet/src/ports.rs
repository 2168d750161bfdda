//! Which loopback ports a cluster gets, so that clusters run side by side.
//!
//! Agave's test nodes do not take a port range from their caller: every node takes 25 ports, and
//! every helper socket one more, from a per-process slice of a global plan,
//! `2000 + slot × 992 ..`, where `slot` is read from the `NEXTEST_TEST_GLOBAL_SLOT` environment
//! variable (`solana_net_utils::sockets::unique_port_range_for_tests`). Two clusters in the same
//! slice would collide, so each `txpace-localnet` claims a slice with an exclusive `flock` on a
//! file in the temp directory (the lock dies with its holder, so a crashed cluster leaves nothing
//! to clean up) and checks its first ports free before handing the slice to Agave.
//!
//! Slices 0–17 end below 19,856, under the 20,000–32,000 blocks txpace's single validators claim
//! (`txpace::validator::ports`) and under Linux's ephemeral range, where the kernel hands out
//! client ports no lock can reserve.

use std::{
    fs::{File, OpenOptions, TryLockError},
    net::{Ipv4Addr, TcpListener, UdpSocket},
    path::PathBuf,
};

use anyhow::{Context, Result, bail};

/// Agave's first port of slice 0.
const BASE: u16 = 2000;
/// Ports per slice: `(u16::MAX - BASE) / 64` in Agave.
pub const SLICE_PORTS: u16 = (u16::MAX - BASE) / 64;
/// Slices whose ports stay below txpace's single-validator blocks.
pub const SLICES: u16 = 18;
/// Ports checked free at the start of a slice: more than a node, its RPC pair and the helper
/// sockets of eight nodes take.
const CHECKED_PORTS: u16 = 400;

const _: () = assert!(BASE + SLICES * SLICE_PORTS <= 20_000);

/// A claimed slice; the claim lasts as long as this value.
#[derive(Debug)]
pub struct PortSlice {
    pub index: u16,
    _lock: File,
}

impl PortSlice {
    /// First port of the slice.
    pub fn first_port(&self) -> u16 {
        BASE + self.index * SLICE_PORTS
    }
}

/// Claims `wanted` if given, else the first free slice.
pub fn claim(wanted: Option<u16>) -> Result<PortSlice> {
    let dir = std::env::temp_dir().join("txpace-localnet-ports");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let candidates: Vec<u16> = match wanted {
        Some(index) if index >= SLICES => {
            bail!(
                "--port-slice {index} is out of range: slices 0 to {} exist",
                SLICES - 1
            )
        }
        Some(index) => vec![index],
        None => (0..SLICES).collect(),
    };
    for index in candidates {
        let path = lock_path(&dir, index);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => continue,
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        let slice = PortSlice { index, _lock: file };
        if ports_free(slice.first_port(), CHECKED_PORTS) {
            return Ok(slice);
        }
    }
    match wanted {
        Some(index) => bail!("port slice {index} is in use (by another cluster or program)"),
        None => bail!("every port slice (0 to {}) is in use", SLICES - 1),
    }
}

fn lock_path(dir: &std::path::Path, index: u16) -> PathBuf {
    dir.join(format!("slice-{index}.lock"))
}

fn ports_free(first: u16, count: u16) -> bool {
    (first..first + count).all(|port| {
        UdpSocket::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
            && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
    })
}
