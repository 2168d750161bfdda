//! A leader's first connections, opened side by side while the streams waiting for the first
//! handshake pile up.
//!
//! A 4.0 leader reads a connection's streams one at a time, so a lost datagram holds back
//! every later stream of its connection until the repair, about one and a half round trips,
//! and then reads them at once, counted against the 100 ms window they are read in (20
//! streams for an unstaked address). The pool spreads a lossy link's streams over
//! connections (see `pool`), but it grows one handshake at a time, and only once the link has
//! lost something: at a run's start one connection carried the streams that waited for the
//! first handshake and the pace, and its first repair released 20 or more of them at once.
//! The leaders of the relay's `apac` profile delayed 9–12 of a run's streams (at 55d4ac4 and
//! 1b954fc); their own log of them, in a run with the first connections opened one per six
//! waiting streams, put all of its 11 in the first 1.7 s, 9 from one connection.
//!
//! How many streams wait for the first handshake is itself the measure that matters: the pace
//! times the handshake's time, about what one connection would hold back in a repair. So for
//! every [`WAITING_PER_HANDSHAKE`] streams waiting, another handshake starts beside the first,
//! up to [`FIRST_CONNECTIONS`]; on a near link the first handshake ends before more than a
//! few wait, and one or two connections it stays. The streams that waited then go on the
//! least loaded connection the leader has admitted when their turn to go comes (see
//! `stream::stream_on`), and so do the pace's.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use super::{Inner, Peer, connect};

/// Connections opened together at most while the first handshake is under way. A repair on
/// one of n releases about 1/n of what went over a repair's time (a quarter of a second on
/// `apac`) beside the others' streams of its window: at 150 streams a second, the riders' and
/// the pace's, within a window's 20 from about five on. More come, one at a time, as the
/// link's loss asks (see `pool`); each counts against the leader's handshake allowance (8 at
/// once on mainnet, see `engine::handshakes`).
pub(super) const FIRST_CONNECTIONS: usize = 6;

/// Streams waiting for the first handshake per handshake under way. Each joins the pool as
/// early as it can: one connection alone until the others are admitted carries all that goes
/// meanwhile, and one of its repairs releases that at once. With one handshake more for every
/// six waiting (the pool's `SPREAD_STREAMS`), the sixth began 300 ms after the first on a
/// 230 ms link losing 2%, and the first connection's repairs still went over a window's budget
/// in one or two of four patterns of losses; with one for every three, in none of sixteen
/// (`wan_tests::the_streams_that_waited_for_admission_leave_room_for_a_repair`).
const WAITING_PER_HANDSHAKE: usize = 3;

/// The streams waiting for a leader's first handshake, and the handshakes started beside it.
#[derive(Debug, Default)]
pub(super) struct FirstWaiters {
    waiting: AtomicUsize,
    beside: AtomicUsize,
}

impl FirstWaiters {
    /// One more stream waits for the first handshake to `addr` (until the guard drops);
    /// starts another handshake beside it if as many wait as that asks for.
    pub(super) fn wait(inner: &Arc<Inner>, peer: &Arc<Peer>, addr: SocketAddr) -> Waiting {
        let first = &peer.first;
        let waiting = first.waiting.fetch_add(1, Ordering::SeqCst) + 1;
        let beside = first.beside.load(Ordering::SeqCst);
        if peer.pool.is_empty()
            && wanted(waiting) > beside + 1
            && first
                .beside
                .compare_exchange(beside, beside + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            let (inner, peer) = (inner.clone(), peer.clone());
            tokio::spawn(async move {
                if let Err(e) = connect::join_pool(&inner, &peer, addr).await {
                    log::debug!("a connection to {addr} beside the first failed: {e}");
                }
            });
        }
        Waiting(peer.clone())
    }
}

/// Connections wanted for `waiting` streams waiting for the first handshake, that one included.
fn wanted(waiting: usize) -> usize {
    waiting
        .div_ceil(WAITING_PER_HANDSHAKE)
        .clamp(1, FIRST_CONNECTIONS)
}

/// A stream waiting for a first handshake; when the last stops waiting, the count of
/// handshakes started beside it starts over for the next time the pool is empty.
pub(super) struct Waiting(Arc<Peer>);

impl Drop for Waiting {
    fn drop(&mut self) {
        let first = &self.0.first;
        if first.waiting.fetch_sub(1, Ordering::SeqCst) == 1 {
            first.beside.store(0, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_more_handshake_for_every_few_waiting_streams_up_to_the_most() {
        assert_eq!(wanted(0), 1);
        assert_eq!(wanted(WAITING_PER_HANDSHAKE), 1);
        assert_eq!(wanted(WAITING_PER_HANDSHAKE + 1), 2);
        assert_eq!(wanted(40), FIRST_CONNECTIONS);
    }
}
