//! A simulated cluster and transport for engine tests under tokio's paused clock: slots advance
//! every 400 ms of virtual time, leaders rotate every 4 slots, and each transaction's fate
//! (dropped sends, an execution error, never landing) and each leader's behaviour is scripted.
//! Deterministic, and a minute of chain time runs in milliseconds.
//!
//! Every leader is a 4.0 leader (`leader`): it keys unstaked senders by source address and
//! reads 200 streams a second from each key, in 100 ms windows; over that it never refuses a
//! stream but stops reading until the window ends, so credit is withheld and the sender's
//! opens wait. It limits connections per key and handshakes per address, evicts the least
//! recently active keys when its table is full, and reads each connection's streams one at a
//! time. The engine sends through a sender of its own (`client`), which connects and waits for
//! credit as the QUIC transport does; tests can add other senders, on the engine's address or
//! on others ([`SimCluster::sender`]).
//!
//! It is as unkind as real servers otherwise: a leader can stop reading altogether, a send can
//! hang until the engine's timeout, the status cache can forget landings older than a number
//! of slots (only a history search still finds them), and the finalized bank trails the tip by
//! [`FINALITY_LAG`] blocks, so a fresh blockhash is not yet valid there. A leader only
//! includes what it read in its own slots: a transaction read by a leader whose turn is yet to
//! come lands in that turn's first slot, and one read by a leader that does not lead within
//! [`HOLD_SLOTS`] is dropped — so a landing always belongs to a leader the transaction was
//! sent to, as on a real cluster without forwarding. A leader can also sit behind a far, lossy
//! link with a window of its own (`sim_link`): its streams then wait for a place, take the
//! round trip, and are repaired when lost.

use std::{
    collections::{HashMap, HashSet},
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use solana_hash::Hash;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use tokio::{sync::mpsc, time::Instant};

use super::{
    net::{ABANDONED, Chain, ChainError, ChainStatus, Handoff, LinkState, SendError, Transport},
    sim_link::{LinkModel, SimLink},
    slots::FeedEvent,
};
use crate::{config::Commitment, source::LoadedTx};

mod chain;
mod client;
mod conn;
mod engine_run;
#[cfg(test)]
mod handshake_tests;
pub mod leader;
mod leaders;
mod transport;

use client::SenderInner;
pub use client::{DEFAULT_SENDER_IP, SimSender};
use leader::{Leader, LeaderCounters, Read, Rules};

pub const SLOT: Duration = Duration::from_millis(400);
/// Network latency of a simulated send.
const SEND_LATENCY: Duration = Duration::from_millis(2);
/// Blocks between the tip and the finalized bank (a root trails by about 32 slots).
pub const FINALITY_LAG: u64 = 32;
/// How far ahead a leader holds a transaction for its own slots: Agave 4.0's banking stage
/// holds what it reads while its next slot is fewer than 20 slots away
/// (`HOLD_TRANSACTIONS_SLOT_OFFSET`) and drops it otherwise, forwarding nothing.
pub const HOLD_SLOTS: u64 = 20;

/// Scripted fate of one transaction.
#[derive(Clone, Debug, Default)]
pub struct Fate {
    /// This many sends are lost before one lands.
    pub drop_sends: u32,
    /// Lands with this execution error.
    pub fails_with: Option<String>,
    /// Never lands, however often sent.
    pub never_lands: bool,
}

/// One stream a leader finished with, for assertions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimSend {
    /// When the leader read it (or gave it up), from the cluster's start.
    pub at: Duration,
    pub addr: SocketAddr,
    /// The sender's source address.
    pub from: IpAddr,
    pub signature: Signature,
    /// The leader read it; `false` when it gave the stream up (its data came too late).
    pub accepted: bool,
    /// Its read waited for the sender's key's budget window to end.
    pub delayed: bool,
}

#[derive(Default)]
struct State {
    fates: HashMap<Signature, Fate>,
    sends_seen: HashMap<Signature, u32>,
    landed: HashMap<Signature, (u64, Option<String>)>,
    /// What `getRecentPrioritizationFees` answers, one figure per slot.
    recent_fees: Vec<u64>,
    /// Blockhash → last valid block height; hashes not listed never expire.
    blockhashes: HashMap<Hash, u64>,
    tx_hash: HashMap<Signature, Hash>,
    /// What `getLatestBlockhash` answers: the last added blockhash.
    latest: Option<(Hash, u64)>,
    /// Each leader's server, made on first contact with the rules set for it, if any.
    servers: HashMap<SocketAddr, Arc<Leader>>,
    rules: HashMap<SocketAddr, Rules>,
    /// Leaders whose sends never complete.
    hanging: HashSet<SocketAddr>,
    /// Far or lossy links (see `sim_link`); loopback's 2 ms elsewhere.
    links: HashMap<SocketAddr, Arc<LinkModel>>,
    /// The node replays its ledger after a restart: its tip takes no blockhash.
    replaying: bool,
    /// How many times each address's connection was given up (`Transport::abandon`): sends
    /// hanging on it then fail, as streams do on a closed QUIC connection.
    abandoned: HashMap<SocketAddr, u32>,
    /// Landings older than this many slots are gone from the status cache.
    status_cache_slots: Option<u64>,
    rpc_down: bool,
    /// How long every RPC call takes to answer; 1 ms unless set.
    rpc_latency: Option<Duration>,
    /// Whether `getVoteAccounts` names our identity; unstaked unless set.
    staked: bool,
    /// Slots per epoch when set: `getSlotLeaders` then refuses ranges past the end of the next
    /// epoch, whose schedule a real node does not have yet.
    epoch_slots: Option<u64>,
    log: Vec<SimSend>,
}

/// The simulated cluster; clone freely, all clones share state.
#[derive(Clone)]
pub struct SimCluster {
    start: Instant,
    start_slot: u64,
    leaders: Arc<Vec<Pubkey>>,
    state: Arc<Mutex<State>>,
    /// Wakes hanging sends when a connection is given up.
    abandon_signal: Arc<tokio::sync::Notify>,
    /// The sender the engine uses when the cluster itself is its transport.
    me: Arc<SenderInner>,
}

impl SimCluster {
    /// A cluster whose leaders take turns in `leaders` order, 4 slots each.
    pub fn new(leaders: Vec<Pubkey>) -> Self {
        Self {
            start: Instant::now(),
            start_slot: 1_000,
            leaders: Arc::new(leaders),
            state: Arc::default(),
            abandon_signal: Arc::default(),
            me: SenderInner::new(DEFAULT_SENDER_IP, Pubkey::new_unique(), None, true),
        }
    }

    /// While on, the node's tip takes no blockhash (isBlockhashValid says false below
    /// finalized), as a restarted node's does while it replays its ledger.
    pub fn set_replaying(&self, on: bool) {
        self.lock().replaying = on;
    }

    /// How many times `addr`'s connection was given up.
    pub fn abandons(&self, addr: SocketAddr) -> u32 {
        self.lock().abandoned.get(&addr).copied().unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub fn slot_now(&self) -> u64 {
        self.start_slot + (Instant::now() - self.start).as_millis() as u64 / SLOT.as_millis() as u64
    }

    /// Block height tracks the slot one-to-one (no skipped slots).
    pub fn height_now(&self) -> u64 {
        self.slot_now()
    }

    fn height_at(&self, commitment: Commitment) -> u64 {
        match commitment {
            Commitment::Finalized => self.height_now().saturating_sub(FINALITY_LAG),
            _ => self.height_now(),
        }
    }

    pub fn leader_at(&self, slot: u64) -> Pubkey {
        let n = self.leaders.len().max(1) as u64;
        self.leaders
            .get(((slot / 4) % n) as usize)
            .copied()
            .unwrap_or_default()
    }

    pub fn addr_of(&self, leader: &Pubkey) -> Option<SocketAddr> {
        let i = self.leaders.iter().position(|l| l == leader)?;
        Some(SocketAddr::from(([127, 0, 0, 1], 10_000 + i as u16)))
    }

    fn leader_of_addr(&self, addr: SocketAddr) -> Option<Pubkey> {
        self.leaders
            .iter()
            .copied()
            .find(|l| self.addr_of(l) == Some(addr))
    }

    pub fn set_fate(&self, sig: Signature, fate: Fate) {
        self.lock().fates.insert(sig, fate);
    }

    /// A blockhash valid up to and including `last_valid` block height.
    pub fn add_blockhash(&self, hash: Hash, last_valid: u64) {
        let mut s = self.lock();
        s.blockhashes.insert(hash, last_valid);
        s.latest = Some((hash, last_valid));
    }

    /// Lands a transaction as if someone else had sent it.
    pub fn land(&self, sig: Signature) {
        let slot = self.slot_now();
        self.lock().landed.insert(sig, (slot, None));
    }

    /// Registers a transaction made outside [`Self::transactions`] (a re-signing) on `hash`.
    pub fn register(&self, sig: Signature, hash: Hash) {
        self.lock().tx_hash.insert(sig, hash);
    }

    /// Scripts what recent slots charged (`getRecentPrioritizationFees`).
    pub fn set_recent_fees(&self, fees: Vec<u64>) {
        self.lock().recent_fees = fees;
    }

    /// Sends to `addr` never complete while on (the engine's send timeout must end them).
    pub fn set_hanging(&self, addr: SocketAddr, on: bool) {
        let mut s = self.lock();
        if on {
            s.hanging.insert(addr);
        } else {
            s.hanging.remove(&addr);
        }
    }

    /// Puts `addr` behind `link` (see `sim_link`); `None` puts it back on loopback.
    pub fn set_link(&self, addr: SocketAddr, link: Option<SimLink>) {
        let mut s = self.lock();
        match link {
            Some(l) => {
                let seed = u64::from(addr.port());
                s.links.insert(addr, LinkModel::new(l, seed));
            }
            None => {
                s.links.remove(&addr);
            }
        }
    }

    /// The status cache keeps landings for `slots` slots; older ones are found only by a
    /// history search, as on a real node (about 300 slots there).
    pub fn set_status_cache_slots(&self, slots: u64) {
        self.lock().status_cache_slots = Some(slots);
    }

    /// The landed slot of a signature, as a history search would find it.
    pub fn landed_slot(&self, sig: &Signature) -> Option<u64> {
        self.lock().landed.get(sig).map(|(slot, _)| *slot)
    }

    pub fn set_rpc_down(&self, down: bool) {
        self.lock().rpc_down = down;
    }

    /// Makes our identity staked (or not) as the cluster's vote accounts tell it.
    pub fn set_staked(&self, staked: bool) {
        self.lock().staked = staked;
    }

    /// Gives the cluster epochs of `slots` slots: schedules are known up to the end of the
    /// next epoch only, as on a real node.
    pub fn set_epoch_slots(&self, slots: u64) {
        self.lock().epoch_slots = Some(slots);
    }

    /// Makes every RPC call take `latency` to answer, as a distant node or a large answer
    /// (`getClusterNodes` on mainnet) does.
    pub fn set_rpc_latency(&self, latency: Duration) {
        self.lock().rpc_latency = Some(latency);
    }

    /// The cluster's websocket: at each slot's start, that slot, the one before it reaching
    /// `confirmed` and the one [`FINALITY_LAG`] back reaching `finalized` — when its statuses
    /// start saying so.
    pub fn slot_feed(&self) -> mpsc::UnboundedReceiver<FeedEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let c = self.clone();
        tokio::spawn(async move {
            loop {
                let slot = c.slot_now();
                let events = [
                    FeedEvent::Slot(slot),
                    FeedEvent::Reached {
                        slot: slot - 1,
                        commitment: Commitment::Confirmed,
                    },
                    FeedEvent::Reached {
                        slot: slot - FINALITY_LAG,
                        commitment: Commitment::Finalized,
                    },
                ];
                if events.into_iter().any(|e| tx.send(e).is_err()) {
                    return;
                }
                let next_slot = u32::try_from(slot + 1 - c.start_slot).unwrap_or(u32::MAX);
                tokio::time::sleep_until(c.start + SLOT * next_slot).await;
            }
        });
        rx
    }

    pub fn sends(&self) -> Vec<SimSend> {
        self.lock().log.clone()
    }

    /// `n` unique transactions on `hash`, each with a made-up (unverifiable) signature: the
    /// simulator reads only the first signature from the wire bytes.
    pub fn transactions(&self, n: usize, hash: Hash) -> Vec<LoadedTx> {
        let base = self.lock().tx_hash.len() as u64;
        let txs: Vec<LoadedTx> = (base..base + n as u64)
            .map(|i| {
                let mut sig = [0u8; 64];
                sig[..8].copy_from_slice(&(i + 1).to_le_bytes());
                sig[63] = 0xa5;
                let signature = Signature::from(sig);
                let mut wire = vec![1u8];
                wire.extend_from_slice(&sig);
                wire.extend_from_slice(&[0u8; 100]);
                LoadedTx {
                    origin: format!("sim:{}", i + 1).into(),
                    signature,
                    wire: wire.into(),
                    recent_blockhash: hash,
                    durable_nonce: false,
                    budget: Default::default(),
                }
            })
            .collect();
        let mut s = self.lock();
        for tx in &txs {
            s.tx_hash.insert(tx.signature, hash);
        }
        drop(s);
        txs
    }

    fn rpc<T: Send + 'static>(
        &self,
        call: &'static str,
        f: impl FnOnce(&SimCluster) -> T,
    ) -> BoxFuture<'static, Result<T, ChainError>> {
        let (down, latency) = {
            let s = self.lock();
            (s.rpc_down, s.rpc_latency)
        };
        let result = if down {
            Err(ChainError::new(call, "connection refused"))
        } else {
            Ok(f(self))
        };
        async move {
            tokio::time::sleep(latency.unwrap_or(Duration::from_millis(1))).await;
            result
        }
        .boxed()
    }

    fn status_of(&self, sig: &Signature, slot_now: u64, history: bool) -> Option<ChainStatus> {
        let s = self.lock();
        let (slot, err) = s.landed.get(sig)?;
        if *slot > slot_now {
            // Held by a leader whose slot has not come yet.
            return None;
        }
        if !history && s.status_cache_slots.is_some_and(|n| slot_now > slot + n) {
            return None;
        }
        let commitment = if slot_now >= slot + 32 {
            Commitment::Finalized
        } else if slot_now > *slot {
            Commitment::Confirmed
        } else {
            Commitment::Processed
        };
        Some(ChainStatus {
            slot: *slot,
            commitment,
            err: err.clone(),
        })
    }

    /// The leader at `addr` finished with `wire`, sent from `from`: logged, and when read,
    /// landed as its fate and the leader's turn say.
    fn deliver(&self, addr: SocketAddr, from: IpAddr, wire: &[u8], read: Read) {
        let at = Instant::now() - self.start;
        let slot = self.slot_now();
        let height = self.height_now();
        let mut s = self.lock();
        let Some(sig) = wire.get(1..65).and_then(|b| Signature::try_from(b).ok()) else {
            return;
        };
        s.log.push(SimSend {
            at,
            addr,
            from,
            signature: sig,
            accepted: read != Read::GaveUp,
            delayed: read == Read::Read { delayed: true },
        });
        if read == Read::GaveUp {
            return;
        }
        let seen = {
            let n = s.sends_seen.entry(sig).or_default();
            *n += 1;
            *n
        };
        let fate = s.fates.get(&sig).cloned().unwrap_or_default();
        let expired = s
            .tx_hash
            .get(&sig)
            .and_then(|h| s.blockhashes.get(h))
            .is_some_and(|lv| height > *lv);
        if fate.never_lands || seen <= fate.drop_sends || expired {
            return;
        }
        let Some(receiver) = self.leader_of_addr(addr) else {
            return;
        };
        // The receiver's first slot from now on, if it leads soon enough to hold it.
        let Some(lands_at) = (slot..slot + HOLD_SLOTS).find(|x| self.leader_at(*x) == receiver)
        else {
            return;
        };
        match s.landed.get(&sig) {
            // Already in a block, or held for an earlier slot than this leader's.
            Some((at, _)) if *at <= slot || *at <= lands_at => {}
            _ => {
                s.landed.insert(sig, (lands_at, fate.fails_with));
            }
        }
    }
}
