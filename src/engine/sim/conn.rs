//! One QUIC connection between a simulated sender and a 4.0 leader (`leader`), seen from both
//! ends: the sender opens streams on it as stream credit allows, the leader's reader takes
//! them in order, and either side can close it.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, atomic::AtomicBool},
    time::Duration,
};

use solana_pubkey::Pubkey;
use tokio::{sync::Notify, time::Instant};

use crate::engine::net::{ABANDONED, SendError};

/// A sender's key in a leader's table: its source address when unstaked, its identity when
/// staked (see `leader`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Key {
    Ip(std::net::IpAddr),
    Pubkey(Pubkey),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// What the leader did with a stream it started on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Read, after waiting for the key's window to end when `delayed`.
    Read { delayed: bool },
    /// Given up: its data did not come within the chunk timeout.
    GaveUp,
}

/// How a connection ended, and when.
#[derive(Clone, Debug)]
pub(super) struct Closed {
    pub at: Instant,
    /// The server's close code and reason; `None` when we closed it.
    pub by_server: Option<(u64, &'static [u8])>,
}

impl Closed {
    pub(super) fn error(&self) -> SendError {
        match self.by_server {
            Some((code, reason)) => SendError::closed_by_server(code, reason),
            None => SendError::Connection(ABANDONED.into()),
        }
    }
}

/// A stream on its way: when its data reaches the leader, and whether the leader gave it up.
pub(super) struct Stream {
    pub(super) arrives: Instant,
    pub(super) wire: Arc<[u8]>,
    pub(super) stopped: Arc<AtomicBool>,
}

#[derive(Default)]
struct ConnState {
    opened: u64,
    /// Streams whose credit the sender got back.
    granted: u64,
    queue: VecDeque<Stream>,
    closed: Option<Closed>,
}

/// One QUIC connection between a sender and a leader, seen from both ends.
pub struct Conn {
    pub(super) id: u64,
    /// Its key in the leader's table once admitted.
    pub(super) key: Mutex<Option<Key>>,
    pub(super) max_streams: u64,
    state: Mutex<ConnState>,
    last_active: Mutex<Instant>,
    /// Woken when a stream is queued, credit returns, or the connection closes.
    changed: Notify,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("id", &self.id)
            .field("max_streams", &self.max_streams)
            .field("closed", &self.closed())
            .finish()
    }
}

impl Conn {
    pub(super) fn new(id: u64, max_streams: u64, now: Instant) -> Self {
        Self {
            id,
            key: Mutex::new(None),
            max_streams,
            state: Mutex::default(),
            last_active: Mutex::new(now),
            changed: Notify::new(),
        }
    }

    pub(super) fn last_active(&self) -> Instant {
        *lock(&self.last_active)
    }

    pub(super) fn touch(&self, now: Instant) {
        *lock(&self.last_active) = now;
    }

    pub(super) fn closed(&self) -> Option<Closed> {
        lock(&self.state).closed.clone()
    }

    fn close(&self, by_server: Option<(u64, &'static [u8])>) {
        let mut s = lock(&self.state);
        if s.closed.is_none() {
            s.closed = Some(Closed {
                at: Instant::now(),
                by_server,
            });
            s.queue.clear();
        }
        drop(s);
        self.changed.notify_waiters();
    }

    pub(super) fn close_by_server(&self, code: u64, reason: &'static [u8]) {
        self.close(Some((code, reason)));
    }

    /// We give the connection up; the leader's reader sees it closed.
    pub(super) fn close_by_client(&self) {
        self.close(None);
    }

    pub(super) fn grant(&self) {
        lock(&self.state).granted += 1;
        self.changed.notify_waiters();
    }

    /// Opens a stream once the leader grants credit for it, waiting at most `stall`; the
    /// stream reaches the leader at `arrives`. Returns the flag the leader sets when it gives
    /// the stream up.
    pub(super) async fn open(
        &self,
        stall: Duration,
        arrives: impl FnOnce() -> (Instant, Arc<[u8]>),
    ) -> Result<Arc<AtomicBool>, SendError> {
        let until = Instant::now() + stall;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut s = lock(&self.state);
                if let Some(c) = &s.closed {
                    return Err(c.error());
                }
                if s.opened < self.max_streams + s.granted {
                    s.opened += 1;
                    let (at, wire) = arrives();
                    let stopped = Arc::new(AtomicBool::new(false));
                    s.queue.push_back(Stream {
                        arrives: at,
                        wire,
                        stopped: stopped.clone(),
                    });
                    drop(s);
                    self.changed.notify_waiters();
                    return Ok(stopped);
                }
            }
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(until) => return Err(SendError::open_stalled(stall)),
            }
        }
    }

    /// The earliest arrival among the queued streams, once one is queued; `None` once closed.
    pub(super) async fn next_arrival(&self) -> Option<Instant> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let s = lock(&self.state);
                if s.closed.is_some() {
                    return None;
                }
                if let Some(at) = s.queue.iter().map(|q| q.arrives).min() {
                    return Some(at);
                }
            }
            changed.await;
        }
    }

    pub(super) fn pop(&self) -> Option<Stream> {
        let mut s = lock(&self.state);
        if s.closed.is_some() {
            return None;
        }
        s.queue.pop_front()
    }
}
