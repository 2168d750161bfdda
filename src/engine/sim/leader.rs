//! A 4.0 leader's TPU QUIC server, as the simulator runs it: the admission and read rules of
//! Agave's `solana-streamer` 4.0.0 (`nonblocking/quic.rs`, `swqos.rs`, `stream_throttle.rs`,
//! `connection_rate_limiter.rs`; see `design.md`, "How a 4.0 leader treats senders").
//!
//! - Senders are keyed by source IP when unstaked (every connection from one address shares one
//!   key) and by their certificate's pubkey when staked. A key's streams are counted in windows
//!   of 100 ms: 20 a window unstaked (`MAX_UNSTAKED_TPS`, 200 a second). Over that the server
//!   does not refuse anything: it stops reading until the window ends, and since it returns
//!   stream credit only as it reads, the sender's opens wait.
//! - Credit: 128 concurrent streams per unstaked connection, 128–512 staked by stake share, both
//!   scaled by the RTT measured at admission (× RTT / 50 ms, RTT clamped to 50–350 ms).
//! - Connections: 8 per unstaked key, 16 per staked; one more is closed with code 4
//!   ("too_many"). When the unstaked table is full, whole keys are evicted, least recently
//!   active first (activity: a finished stream, or the connection's admission), down to 90%,
//!   their connections closed with code 1 ("dropped").
//! - Handshakes: a token bucket per IP (32 a minute in the test validator's configuration, 8 on
//!   mainnet; a new address starts with a minute's worth and saves up to ten): an Initial from
//!   an address with no token is silently ignored (the client sees its handshake time out), and
//!   one admitted when the last token went to a concurrent handshake is closed with code 2. A
//!   handshake not done within 2 s is dropped.
//! - Each connection reads one stream at a time, in order: a stream whose datagram was lost
//!   holds back every stream behind it until the repair arrives; a stream not read within 2 s
//!   of starting on it is given up (stopped, code 0).
//!
//! As in Agave, the stream that waited for a window to end is counted in the window it waited
//! out, and the next one starts a new window: a key over budget is read 21 streams per 100 ms.
//!
//! One departure: Agave starts a new window when *more* than 100 ms have passed; under tokio's
//! paused clock a read can fall exactly on the window's end, where a real clock never does, so
//! here the window is over once 100 ms have passed.

use std::{
    collections::{BTreeMap, HashMap},
    net::IpAddr,
    sync::{Arc, Mutex, atomic::Ordering},
    time::Duration,
};

use solana_pubkey::Pubkey;
use tokio::{sync::Notify, time::Instant};

pub(super) use super::conn::{Conn, Key, Read};

/// Close codes of a 4.0 leader (`nonblocking/quic.rs`).
pub const CLOSE_DROPPED: u64 = 1;
pub const CLOSE_DISALLOWED: u64 = 2;
pub const CLOSE_TOO_MANY: u64 = 4;

/// A leader's limits; [`Rules::default`] is the test validator's and local cluster's
/// configuration, [`Rules::mainnet`] a mainnet node's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Streams read per window from one unstaked key.
    pub unstaked_per_window: u64,
    /// From one staked key while staked load is under 95% of capacity: 500 streams a ms, 80%
    /// of it for staked peers, 100 ms — in effect no limit.
    pub staked_per_window: u64,
    pub window: Duration,
    pub per_unstaked_key: usize,
    pub per_staked_key: usize,
    /// Connections the unstaked table holds before it evicts.
    pub unstaked_table: usize,
    /// New connections per IP a minute; the bucket holds up to ten times that.
    pub new_per_minute: u64,
    pub handshake_timeout: Duration,
    /// How long the server waits for a stream's data once it started reading it.
    pub chunk_timeout: Duration,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            unstaked_per_window: 20,
            staked_per_window: 40_000,
            window: Duration::from_millis(100),
            per_unstaked_key: 8,
            per_staked_key: 16,
            unstaked_table: 2_000,
            new_per_minute: 32,
            handshake_timeout: Duration::from_secs(2),
            chunk_timeout: Duration::from_secs(2),
        }
    }
}

impl Rules {
    /// A mainnet node: 8 new connections a minute per IP.
    pub fn mainnet() -> Self {
        Self {
            new_per_minute: 8,
            ..Self::default()
        }
    }
}

/// Stake below this share of the total counts as unstaked (1 / (500 streams a ms × 100 ms)).
pub const MIN_STAKE_SHARE: f64 = 1.0 / 50_000.0;

/// Who a sender is to a leader: its address and identity, and its share of the stake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peer {
    pub ip: IpAddr,
    pub identity: Pubkey,
    pub stake_share: f64,
}

impl Peer {
    pub fn staked(&self) -> bool {
        self.stake_share >= MIN_STAKE_SHARE
    }

    fn key(&self) -> Key {
        if self.staked() {
            Key::Pubkey(self.identity)
        } else {
            Key::Ip(self.ip)
        }
    }
}

/// Concurrent streams a connection is granted (`compute_max_allowed_uni_streams_with_rtt`).
pub fn max_streams(peer: &Peer, rtt: Duration) -> u64 {
    let base = if peer.staked() {
        let delta = f64::from(100_000u32 - 128);
        ((peer.stake_share.min(1.0) * delta) as u64 + 128).clamp(128, 512)
    } else {
        128
    };
    let rtt_ms = (rtt.as_millis() as u64).clamp(50, 350);
    base * rtt_ms / 50
}

/// What the leader did, as its `StreamerStats` count it: the ground truth tests compare the
/// engine's figures with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaderCounters {
    pub admitted: u64,
    pub streams_read: u64,
    /// Streams whose read waited for the key's window to end (`throttled_streams`).
    pub streams_delayed: u64,
    /// Streams given up because their data did not come within 2 s of starting on them.
    pub read_timeouts: u64,
    /// Connections closed by eviction (code 1).
    pub evicted: u64,
    pub disallowed: u64,
    pub too_many: u64,
    /// Initials ignored for the per-IP rate.
    pub ignored: u64,
    pub handshake_timeouts: u64,
}

struct KeyEntry {
    conns: Vec<Arc<Conn>>,
    staked: bool,
    window_start: Instant,
    count: u64,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

struct State {
    rules: Rules,
    keys: BTreeMap<Key, KeyEntry>,
    buckets: HashMap<IpAddr, Bucket>,
    unstaked_total: usize,
    next_id: u64,
    reading: bool,
    counters: LeaderCounters,
}

/// One leader's server; shared by every sender's connections to it.
pub struct Leader {
    state: Mutex<State>,
    /// Woken when the leader starts reading again.
    resumed: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Leader {
    pub fn new(rules: Rules) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                rules,
                keys: BTreeMap::new(),
                buckets: HashMap::new(),
                unstaked_total: 0,
                next_id: 0,
                reading: true,
                counters: LeaderCounters::default(),
            }),
            resumed: Notify::new(),
        })
    }

    pub fn rules(&self) -> Rules {
        lock(&self.state).rules
    }

    pub fn set_rules(&self, rules: Rules) {
        lock(&self.state).rules = rules;
    }

    pub fn counters(&self) -> LeaderCounters {
        lock(&self.state).counters
    }

    /// While off, the leader reads no stream (a frozen or overloaded node): credit is not
    /// returned, and opens wait.
    pub fn set_reading(&self, on: bool) {
        lock(&self.state).reading = on;
        if on {
            self.resumed.notify_waiters();
        }
    }

    fn refill(rules: &Rules, b: &mut Bucket, now: Instant) {
        let per_sec = rules.new_per_minute as f64 / 60.0;
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * per_sec).min((rules.new_per_minute * 10) as f64);
        b.at = now;
    }

    /// An Initial from `ip` arrives: whether it is answered (`is_allowed`). An address seen
    /// before with no token left is ignored, and only a handshake timeout tells the client.
    pub(super) fn initial(&self, ip: IpAddr) -> bool {
        let now = Instant::now();
        let mut s = lock(&self.state);
        let rules = s.rules;
        let allowed = match s.buckets.get_mut(&ip) {
            None => true,
            Some(b) => {
                Self::refill(&rules, b, now);
                b.tokens >= 1.0
            }
        };
        if !allowed {
            s.counters.ignored += 1;
        }
        allowed
    }

    /// A handshake that took longer than the server waits was dropped by it.
    pub(super) fn handshake_timed_out(&self) {
        lock(&self.state).counters.handshake_timeouts += 1;
    }

    /// A handshake from `peer` finished, its RTT measured at `rtt`: the connection, admitted
    /// or already closed (code 2 out of tokens, 4 too many for its key). Admitting may evict
    /// other keys (code 1).
    pub(super) fn admit(&self, peer: &Peer, rtt: Duration) -> Arc<Conn> {
        let now = Instant::now();
        let mut s = lock(&self.state);
        let rules = s.rules;
        s.next_id += 1;
        let conn = Arc::new(Conn::new(s.next_id, max_streams(peer, rtt), now));
        let b = s.buckets.entry(peer.ip).or_insert(Bucket {
            tokens: rules.new_per_minute as f64,
            at: now,
        });
        Self::refill(&rules, b, now);
        if b.tokens < 1.0 {
            s.counters.disallowed += 1;
            conn.close_by_server(CLOSE_DISALLOWED, b"disallowed");
            return conn;
        }
        b.tokens -= 1.0;
        let staked = peer.staked();
        if !staked && s.unstaked_total >= rules.unstaked_table {
            Self::evict(&mut s, rules.unstaked_table * 9 / 10);
        }
        let key = peer.key();
        let limit = if staked {
            rules.per_staked_key
        } else {
            rules.per_unstaked_key
        };
        let entry = s.keys.entry(key).or_insert(KeyEntry {
            conns: Vec::new(),
            staked,
            window_start: now,
            count: 0,
        });
        if entry.conns.len() >= limit {
            s.counters.too_many += 1;
            conn.close_by_server(CLOSE_TOO_MANY, b"too_many");
            return conn;
        }
        entry.conns.push(conn.clone());
        *lock(&conn.key) = Some(key);
        if !staked {
            s.unstaked_total += 1;
        }
        s.counters.admitted += 1;
        conn
    }

    /// Evicts whole unstaked keys, the least recently active first, until at most `keep`
    /// connections are left (`prune_oldest`).
    fn evict(s: &mut State, keep: usize) {
        while s.unstaked_total > keep {
            let oldest = s
                .keys
                .iter()
                .filter(|(_, e)| !e.staked && !e.conns.is_empty())
                .min_by_key(|(_, e)| e.conns.iter().map(|c| c.last_active()).min())
                .map(|(k, _)| *k);
            let Some(key) = oldest else { return };
            if let Some(e) = s.keys.remove(&key) {
                for c in &e.conns {
                    c.close_by_server(CLOSE_DROPPED, b"dropped");
                }
                s.unstaked_total -= e.conns.len();
                s.counters.evicted += e.conns.len() as u64;
            }
        }
    }

    /// The connection ended (either side closed it): it leaves its key.
    pub(super) fn remove(&self, conn: &Conn) {
        let Some(key) = *lock(&conn.key) else { return };
        let mut s = lock(&self.state);
        let Some(e) = s.keys.get_mut(&key) else {
            return;
        };
        let before = e.conns.len();
        e.conns.retain(|c| c.id != conn.id);
        let removed = before - e.conns.len();
        let (staked, empty) = (e.staked, e.conns.is_empty());
        if empty {
            s.keys.remove(&key);
        }
        if !staked {
            s.unstaked_total -= removed;
        }
    }

    /// Before reading a stream of `key` (`throttle_stream`): how long to wait for the window
    /// to end when its budget is spent, counting the stream as delayed if so.
    fn throttle(&self, key: Key) -> Duration {
        let now = Instant::now();
        let mut s = lock(&self.state);
        let rules = s.rules;
        let Some(e) = s.keys.get_mut(&key) else {
            return Duration::ZERO;
        };
        let elapsed = now.saturating_duration_since(e.window_start);
        if elapsed >= rules.window {
            e.window_start = now;
            e.count = 0;
        }
        let limit = if e.staked {
            rules.staked_per_window
        } else {
            rules.unstaked_per_window
        };
        if e.count < limit {
            return Duration::ZERO;
        }
        let wait = rules
            .window
            .saturating_sub(now.saturating_duration_since(e.window_start));
        if !wait.is_zero() {
            s.counters.streams_delayed += 1;
        }
        wait
    }

    /// A stream of `key` was accepted for reading (`on_stream_accepted`).
    fn count(&self, key: Key) {
        if let Some(e) = lock(&self.state).keys.get_mut(&key) {
            e.count += 1;
        }
    }

    /// Waits until the leader reads.
    async fn reading(&self) {
        loop {
            let resumed = self.resumed.notified();
            tokio::pin!(resumed);
            resumed.as_mut().enable();
            if lock(&self.state).reading {
                return;
            }
            resumed.await;
        }
    }

    /// Reads `conn`'s streams one at a time until it closes (`handle_connection`): each waits
    /// for the leader to read, for its key's budget and for its data; `deliver` gets each
    /// stream and what became of it; the credit it frees reaches the sender after `back()`.
    pub(super) async fn serve(
        self: Arc<Self>,
        conn: Arc<Conn>,
        back: impl Fn() -> Duration + Send + 'static,
        deliver: impl Fn(&[u8], Read) + Send + 'static,
    ) {
        let Some(key) = *lock(&conn.key) else { return };
        loop {
            self.reading().await;
            // `accept_uni`: the next stream, once any frame of it or of a later one came.
            let Some(accept_at) = conn.next_arrival().await else {
                break;
            };
            tokio::time::sleep_until(accept_at).await;
            let wait = self.throttle(key);
            let delayed = !wait.is_zero();
            tokio::time::sleep(wait).await;
            self.count(key);
            let Some(stream) = conn.pop() else { break };
            let chunk_timeout = self.rules().chunk_timeout;
            if stream.arrives > Instant::now() + chunk_timeout {
                tokio::time::sleep(chunk_timeout).await;
                stream.stopped.store(true, Ordering::SeqCst);
                lock(&self.state).counters.read_timeouts += 1;
                deliver(&stream.wire, Read::GaveUp);
            } else {
                tokio::time::sleep_until(stream.arrives).await;
                if conn.closed().is_some() {
                    break;
                }
                deliver(&stream.wire, Read::Read { delayed });
                conn.touch(Instant::now());
                lock(&self.state).counters.streams_read += 1;
            }
            let credit = conn.clone();
            let d = back();
            tokio::spawn(async move {
                tokio::time::sleep(d).await;
                credit.grant();
            });
        }
        self.remove(&conn);
    }
}

#[cfg(test)]
mod tests;
