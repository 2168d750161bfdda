//! `DIR/cluster.json`: what a client needs to reach the running cluster.
//!
//! ```json
//! {"nodes":[{"identity":"…","rpc":"http://127.0.0.1:…","ws":"ws://127.0.0.1:…",
//!            "tpu_quic":"127.0.0.1:…","identity_keypair":"DIR/node-0.json",
//!            "link":"rtt:20ms,jitter:2ms,loss:0.1%"}],
//!  "mint":"DIR/mint.json"}
//! ```
//!
//! With `--rpc-rtt`, `rpc` and `ws` are delaying proxies in front of the node's own ports.
//! `link` is there only with relays: the link the node's relay was started with (`off` for
//! none; a `link` command changes it later, and `stats` tells the current one).
//!
//! It is written to a temporary name and renamed, so a reader that sees the file sees all of it:
//! its appearance is the cluster's "ready".

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};
use serde::Serialize;

pub const FILE_NAME: &str = "cluster.json";

#[derive(Debug, Serialize)]
pub struct Manifest {
    pub nodes: Vec<NodeEntry>,
    /// A keypair file holding the genesis mint's lamports: the cluster has no faucet.
    pub mint: PathBuf,
}

#[derive(Debug, Serialize)]
pub struct NodeEntry {
    pub identity: String,
    pub rpc: String,
    pub ws: String,
    pub tpu_quic: SocketAddr,
    /// The node's identity keypair: a staked QUIC identity for clients (`txpace --identity`).
    pub identity_keypair: PathBuf,
    /// The link of the node's TPU relay at the start, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl NodeEntry {
    pub fn new(
        identity: String,
        rpc: SocketAddr,
        ws: SocketAddr,
        tpu_quic: SocketAddr,
        identity_keypair: PathBuf,
    ) -> Self {
        NodeEntry {
            identity,
            rpc: format!("http://{rpc}"),
            ws: format!("ws://{ws}"),
            tpu_quic,
            identity_keypair,
            link: None,
        }
    }
}

/// Writes the manifest into `dir` all at once.
pub fn write(dir: &Path, manifest: &Manifest) -> Result<PathBuf> {
    let path = dir.join(FILE_NAME);
    let partial = dir.join(format!("{FILE_NAME}.partial"));
    let text = serde_json::to_string_pretty(manifest).context("encoding the cluster manifest")?;
    std::fs::write(&partial, text + "\n")
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, &path)
        .with_context(|| format!("renaming {} to {}", partial.display(), path.display()))?;
    Ok(path)
}
