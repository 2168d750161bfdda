//! Every node's relay, sharing one source-address plan and one runtime.

use std::{io, net::SocketAddr, sync::Arc, thread};

use tokio::runtime::Handle;

use crate::{
    relay::Relay,
    sources::{SourceMode, Sources},
    spec::LinkSpec,
    stats::RelayStats,
};

/// The relays of a cluster, in node order.
pub struct Relays {
    runtime: Handle,
    sources: Arc<Sources>,
    seed: u64,
    relays: Vec<Relay>,
}

impl Relays {
    /// Relays whose tasks run on `runtime`.
    pub fn new(runtime: Handle, mode: SourceMode, seed: u64) -> Self {
        Relays {
            runtime,
            sources: Arc::new(Sources::new(mode)),
            seed,
            relays: Vec::new(),
        }
    }

    /// Relays with a runtime of their own on one thread, `tpuRelays`, which lives as long as
    /// the process: for a caller without a runtime (`txpace-localnet`'s main).
    pub fn with_own_runtime(mode: SourceMode, seed: u64) -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        thread::Builder::new()
            .name("tpuRelays".to_string())
            .spawn(move || {
                raise_priority();
                runtime.block_on(std::future::pending::<()>())
            })?;
        Ok(Relays::new(handle, mode, seed))
    }

    /// Starts the next node's relay in front of `target`; returns its address.
    pub fn add(&mut self, target: SocketAddr, link: LinkSpec) -> io::Result<SocketAddr> {
        let relay = Relay::start(
            self.relays.len(),
            target,
            link,
            self.seed,
            self.sources.clone(),
            self.runtime.clone(),
        )?;
        let addr = relay.addr();
        self.relays.push(relay);
        Ok(addr)
    }

    /// The runtime the relays run on (for other tasks of the same kind: [`crate::tcp`]).
    pub fn runtime(&self) -> &Handle {
        &self.runtime
    }

    pub fn get(&self, node: usize) -> Option<&Relay> {
        self.relays.get(node)
    }

    pub fn len(&self) -> usize {
        self.relays.len()
    }

    pub fn is_empty(&self) -> bool {
        self.relays.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Relay> {
        self.relays.iter()
    }

    /// Every relay's counters, in node order.
    pub fn stats(&self) -> Vec<RelayStats> {
        self.relays.iter().map(Relay::stats).collect()
    }

    /// The clients seen so far and the source address each has at every node.
    pub fn sources(&self) -> Vec<(SocketAddr, std::net::IpAddr)> {
        self.sources.given()
    }
}

/// The relay thread's nice value. Its timers are the links' delays: a timer that fires late
/// adds delay nobody asked for (the counters' `late_mean_us`, `stats` on standard input). Seen
/// once by hand, a 3-node `mainnet` cluster on 2 cores under a load average near 100: at nice 0
/// the relays delivered 10–220 ms late on average (per node and direction), at nice -10 14–39
/// ms; it waits behind the validators' threads otherwise. Its work is small, so ahead of them
/// it costs them little.
const RELAY_NICE: libc::c_int = -10;

/// Raises the calling thread's priority to [`RELAY_NICE`]; without the privilege (root or
/// CAP_SYS_NICE) it keeps its own, and says so in the log.
fn raise_priority() {
    // SAFETY: neither call takes a pointer; the thread id is the calling thread's own.
    let done = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, RELAY_NICE)
    };
    if done != 0 {
        log::warn!(
            "the TPU relays run at the process's priority ({}): their deliveries may be late",
            std::io::Error::last_os_error()
        );
    }
}
