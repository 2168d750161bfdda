use std::time::Duration;

use tokio::time::Instant;

use super::{backoff::HANDSHAKE_POLL, *};
use crate::engine::liveness::HANDSHAKE_RIDERS;
use crate::engine::net::{Handoff, LinkState, SendError, StreamOutcome};

#[test]
fn the_window_follows_the_slot_and_the_schedule() {
    let ls: Vec<Pubkey> = (0..8).map(|_| Pubkey::new_unique()).collect();
    let mut b = book_with(&ls);
    let five = b.upcoming(5);
    assert_eq!(
        b.upcoming(2),
        five[..2].to_vec(),
        "a prefix of the longer list"
    );
    assert_eq!(five[0], (ls[0], 100, 103));
    assert_eq!(five[1], (ls[1], 104, 107));
    b.set_slot(106);
    assert_eq!(b.upcoming(1), vec![(ls[1], 106, 107)]);
    // The last turn known; a schedule learned later joins the window.
    b.set_slot(128);
    assert_eq!(b.upcoming(3), vec![(ls[7], 128, 131)]);
    b.add_schedule(132, &[ls[6], ls[6], ls[5]]);
    assert_eq!(
        b.upcoming(3),
        vec![(ls[7], 128, 131), (ls[6], 132, 133), (ls[5], 134, 134)]
    );
}

/// A leader holds what it reads for its turn while that turn has yet to begin and is fewer
/// than 20 slots away: not the current leader, nor one whose turn is farther.
#[test]
fn a_turn_ahead_is_one_yet_to_begin_within_the_slots_a_leader_holds_for() {
    let ls: Vec<Pubkey> = (0..8).map(|_| Pubkey::new_unique()).collect();
    let mut b = book_with(&ls);
    b.set_slot(101);
    assert_eq!(b.turn_ahead(&ls[0]), None, "the current leader");
    assert_eq!(b.turn_ahead(&ls[1]), Some(104));
    assert_eq!(b.turn_ahead(&ls[4]), Some(116));
    assert_eq!(b.turn_ahead(&ls[5]), None, "20 slots away");
    b.set_slot(104);
    assert_eq!(b.turn_ahead(&ls[1]), None, "its turn has begun");
    assert_eq!(b.turn_ahead(&ls[5]), Some(120));
    let mut pinned = LeaderBook::new(1, Some(SocketAddr::from(([127, 0, 0, 1], 9000))));
    pinned.set_slot(100);
    pinned.add_schedule(100, &[ls[0], ls[0], ls[0], ls[0], ls[1]]);
    assert_eq!(pinned.turn_ahead(&ls[1]), None, "--tpu");
}

fn book_with(leaders: &[Pubkey]) -> LeaderBook {
    let mut b = LeaderBook::new(1, None);
    b.set_slot(100);
    let sched: Vec<Pubkey> = leaders
        .iter()
        .flat_map(|l| std::iter::repeat_n(*l, 4))
        .collect();
    b.add_schedule(100, &sched);
    b.set_addresses(
        leaders
            .iter()
            .enumerate()
            .map(|(i, l)| (*l, SocketAddr::from(([127, 0, 0, 1], 9000 + i as u16))))
            .collect(),
    );
    b
}

#[tokio::test(start_paused = true)]
async fn fanout_follows_the_schedule_and_skips_backed_off_leaders() {
    let (a, b, c) = (
        Pubkey::new_unique(),
        Pubkey::new_unique(),
        Pubkey::new_unique(),
    );
    let mut book = book_with(&[a, b, c, a]);
    let now = Instant::now();
    prove(&mut book, &[a, b, c], now);
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(t, vec![a, b]);
    book.set_slot(104);
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(t, vec![b, c]);

    let addr_b = SocketAddr::from(([127, 0, 0, 1], 9001));
    let stop = || Err(SendError::Throttled("stop".into()));
    assert_eq!(
        book.on_result(b, addr_b, &stop(), Duration::ZERO, now),
        StreamOutcome::Throttled
    );
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(
        t,
        vec![c, a],
        "the leader after the skipped one takes its place"
    );
    let views = book.views(now, |_| LinkState::Connected);
    assert_eq!(
        views[0].conn.label(),
        "throttled, backing off 100 ms (throttled: stop)"
    );
    // Failures of streams already in flight do not deepen it.
    book.on_result(b, addr_b, &stop(), Duration::ZERO, now);
    assert_eq!(
        book.next_backoff_end(now),
        Some(now + Duration::from_millis(100))
    );
    // An accepted stream from the same window does not erase it...
    let later = now + Duration::from_millis(150);
    book.on_result(b, addr_b, &Ok(()), Duration::ZERO, later);
    // ...so the next throttle soon after it ended doubles it.
    book.on_result(b, addr_b, &stop(), Duration::ZERO, later);
    assert_eq!(
        book.next_backoff_end(later),
        Some(later + Duration::from_millis(200))
    );
    // A clean window after the backoff forgets the level.
    let much_later = later + Duration::from_millis(200) + JUDGE_WINDOW;
    book.expire_backoffs(much_later);
    assert_eq!(book.targets(much_later).len(), 2);
    book.on_result(b, addr_b, &stop(), Duration::ZERO, much_later);
    assert_eq!(
        book.next_backoff_end(much_later),
        Some(much_later + Duration::from_millis(100))
    );
}

/// A leader that throttled answers, so it is trusted with several streams at once — but
/// not at the end of its backoff: sends that fall due together go to it one at a time
/// until it answers again.
#[tokio::test(start_paused = true)]
async fn the_first_stream_after_a_backoff_goes_alone() {
    let a = Pubkey::new_unique();
    let mut book = LeaderBook::new(0, None);
    book.set_slot(100);
    book.add_schedule(100, &[a; 8]);
    let addr = SocketAddr::from(([127, 0, 0, 1], 9000));
    book.set_addresses(HashMap::from([(a, addr)]));
    let now = Instant::now();
    prove(&mut book, &[a], now);
    let leaders_now = |book: &LeaderBook, t| book.targets(t).len();
    book.on_sent(a, addr, Handoff::marked(now));
    assert_eq!(leaders_now(&book, now), 1, "proven: a second stream may go");
    let stop = Err(SendError::Throttled("stop".into()));
    book.on_result(a, addr, &stop, Duration::ZERO, now);
    assert_eq!(leaders_now(&book, now), 0, "backing off");
    let after = now + Duration::from_millis(150);
    assert_eq!(leaders_now(&book, after), 1, "the probe");
    book.on_sent(a, addr, Handoff::marked(after));
    assert_eq!(leaders_now(&book, after), 0, "the probe goes alone");
    book.on_result(a, addr, &Ok(()), Duration::ZERO, after);
    book.on_sent(a, addr, Handoff::marked(after));
    assert_eq!(leaders_now(&book, after), 1, "answered: the pace again");
}

/// Each leader's address answers one stream: known to answer from then on.
fn prove(book: &mut LeaderBook, leaders: &[Pubkey], now: Instant) {
    for l in leaders {
        let addr = book.addrs[l];
        book.on_sent(*l, addr, Handoff::marked(now));
        book.on_result(*l, addr, &Ok(()), Duration::ZERO, now);
    }
}

#[tokio::test(start_paused = true)]
async fn a_leader_not_known_to_answer_rides_along_without_taking_a_place() {
    let (a, b, c, d) = (
        Pubkey::new_unique(),
        Pubkey::new_unique(),
        Pubkey::new_unique(),
        Pubkey::new_unique(),
    );
    let mut book = book_with(&[a, b, c, d]);
    let now = Instant::now();
    let all: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(
        all,
        vec![a, b, c, d],
        "nobody proven yet: the fan-out and both spares"
    );
    prove(&mut book, &[a, c], now);
    // b is new: its first stream goes, and the send still reaches two leaders that answer.
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(t, vec![a, b, c]);
    // While that stream waits for b's handshake, b takes riders for it, up to
    // `HANDSHAKE_RIDERS` in all; then it is skipped, c in its place either way.
    let addr_b = SocketAddr::from(([127, 0, 0, 1], 9001));
    let first = Handoff::default();
    book.on_sent(b, addr_b, first.clone());
    for _ in 1..HANDSHAKE_RIDERS {
        let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
        assert_eq!(t, vec![a, b, c]);
        book.on_sent(b, addr_b, Handoff::default());
    }
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(t, vec![a, c]);
    // Once a stream reached the wire (b answered the handshake) b rides along again, its
    // place still taken by c until it answers a stream.
    first.mark();
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(t, vec![a, b, c]);
    // Once b answers it fills its place again.
    book.on_result(b, addr_b, &Ok(()), Duration::ZERO, now);
    let t: Vec<Pubkey> = book.targets(now).iter().map(|t| t.0).collect();
    assert_eq!(t, vec![a, b]);
}

#[tokio::test(start_paused = true)]
async fn each_failure_kind_backs_off_on_its_own_scale_and_is_counted_apart() {
    let a = Pubkey::new_unique();
    let mut book = book_with(&[a]);
    let addr = SocketAddr::from(([127, 0, 0, 1], 9000));
    let now = Instant::now();
    book.on_sent(a, addr, Handoff::marked(now));
    book.on_sent(a, addr, Handoff::marked(now));
    book.on_sent(a, addr, Handoff::marked(now));
    let ms = Duration::from_millis;
    book.on_result(
        a,
        addr,
        &Err(SendError::Connection("refused".into())),
        ms(3),
        now,
    );
    assert_eq!(book.all_stats(now)[0].backoff_level, 1, "backing off now");
    assert_eq!(
        book.next_backoff_end(now),
        Some(now + Duration::from_millis(500))
    );
    let t1 = now + Duration::from_secs(3);
    book.on_result(
        a,
        addr,
        &Err(SendError::Timeout(Duration::from_secs(5))),
        ms(5_000),
        t1,
    );
    assert_eq!(book.next_backoff_end(t1), Some(t1 + Duration::from_secs(1)));
    let t2 = t1 + Duration::from_secs(3);
    book.on_result(a, addr, &Err(SendError::Stream("reset".into())), ms(7), t2);
    assert_eq!(
        book.next_backoff_end(t2),
        None,
        "other stream errors do not back off"
    );
    let stats = book.all_stats(t2);
    assert_eq!(stats.len(), 1);
    assert_eq!(
        stats[0].ack_ms_p50,
        Some(7),
        "the median of 3, 5000 and 7 ms"
    );
    assert_eq!(stats[0].backoff_level, 0, "no backoff at t2");
    let s = stats[0].streams;
    assert_eq!(
        (
            s.sent,
            s.accepted,
            s.throttled,
            s.connection,
            s.timeout,
            s.other
        ),
        (3, 0, 0, 1, 1, 1)
    );
    assert_eq!(stats[0].tpu_quic, Some(addr));
}

/// A frozen leader stalls stream opens as one over budget does: the stall is counted and
/// backed off as throttling, but is no answer, so the wait of the streams already on the wire
/// goes on and the leader still turns silent.
#[tokio::test(start_paused = true)]
async fn a_stalled_open_is_no_answer() {
    let a = Pubkey::new_unique();
    let mut book = LeaderBook::new(0, None);
    book.set_slot(100);
    book.add_schedule(100, &[a; 8]);
    let addr = SocketAddr::from(([127, 0, 0, 1], 9000));
    book.set_addresses(HashMap::from([(a, addr)]));
    let now = Instant::now();
    prove(&mut book, &[a], now);
    book.on_sent(a, addr, Handoff::marked(now));
    book.on_sent(a, addr, Handoff::default());
    let silence = book.timing(addr).silence();
    let stalled = Err(SendError::Stalled("stream open stalled".into()));
    let later = now + silence / 2;
    let outcome = book.on_result(a, addr, &stalled, Duration::ZERO, later);
    assert_eq!(outcome, StreamOutcome::Throttled, "counted as throttling");
    assert!(book.newly_silent(later).is_empty());
    assert_eq!(
        book.newly_silent(now + silence),
        vec![addr],
        "the stall must not end the wait"
    );
}

/// A stream accepted after its open waited for credit: within what the link explains (the
/// next budget window and the credit's way back), nothing; longer, the leader is behind on our
/// streams and is backed off as a throttling one, with the wait as its reason.
#[tokio::test(start_paused = true)]
async fn a_long_wait_for_credit_backs_the_leader_off_as_throttling() {
    let a = Pubkey::new_unique();
    let mut book = book_with(&[a]);
    let addr = SocketAddr::from(([127, 0, 0, 1], 9000));
    let now = Instant::now();
    let bound = book.timing(addr).credit_wait_bound();
    assert!(!book.on_credit_wait(addr, bound, now));
    assert_eq!(book.next_backoff_end(now), None);
    assert!(book.on_credit_wait(addr, bound + Duration::from_millis(1), now));
    assert_eq!(
        book.next_backoff_end(now),
        Some(now + Duration::from_millis(100)),
        "a throttle's backoff"
    );
    let b = book.backoff.get(&addr).expect("backing off");
    assert_eq!(b.kind, StreamOutcome::Throttled);
    assert!(b.reason.contains("stream credit withheld"), "{}", b.reason);
}

/// Connections are started by time, not by a count of leaders: a near leader's once its turn
/// is within its handshake floor (2 s) and a turn, a far and jittery one's earlier, in
/// proportion to its measured link — and none a long way ahead, where it would sit idle for a
/// 4.0 leader to evict.
#[tokio::test(start_paused = true)]
async fn leaders_are_connected_ahead_by_their_measured_link() {
    let ls: Vec<Pubkey> = (0..8).map(|_| Pubkey::new_unique()).collect();
    let mut book = book_with(&ls);
    let addr = |i: usize| SocketAddr::from(([127, 0, 0, 1], 9000 + i as u16));
    let now = Instant::now();
    // Turns begin every 1.6 s: leader i's in i × 1.6 s.
    for (i, leader) in ls.iter().enumerate() {
        book.on_sent(*leader, addr(i), Handoff::marked(now));
        book.liveness
            .on_answer_time(addr(i), Duration::from_millis(2), now);
    }
    let near_lead = super::targets::connect_lead(&book.timing(addr(1)));
    assert_eq!(near_lead, Duration::from_millis(3_600));
    assert_eq!(book.prepare_list(), vec![addr(0), addr(1), addr(2)]);

    // Leader 3 turns out far and jittery: its turn, 4.8 s away, is within its lead now.
    for rtt in [320, 900, 400, 1_100] {
        book.liveness
            .on_answer_time(addr(3), Duration::from_millis(rtt), now);
    }
    let far_lead = super::targets::connect_lead(&book.timing(addr(3)));
    assert!(far_lead > Duration::from_millis(4_800), "{far_lead:?}");
    assert_eq!(
        book.prepare_list(),
        vec![addr(0), addr(1), addr(2), addr(3)]
    );

    // The slot moves on a turn: what was 6.4 s away (leader 4) is now 4.8 s, still beyond a
    // near link's lead; leader 3's turn is 3.2 s away.
    book.set_slot(104);
    assert_eq!(book.prepare_list(), vec![addr(1), addr(2), addr(3)]);
}

/// At a run's start every leader's first streams wait for its handshake, and once each has
/// its riders nothing else may go: the pace holds, and looks again every couple of
/// milliseconds rather than waiting for an answer, since the leader takes the pace as soon as
/// a stream reaches the wire.
#[tokio::test(start_paused = true)]
async fn a_held_pace_looks_again_while_a_handshake_is_under_way() {
    let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
    let mut book = book_with(&[a, b]);
    let now = Instant::now();
    assert_eq!(book.next_look(now), None, "nothing under way");
    let first = [Handoff::default(), Handoff::default()];
    for (l, h) in [a, b].iter().zip(&first) {
        let addr = book.addrs[l];
        book.on_sent(*l, addr, h.clone());
        for _ in 1..HANDSHAKE_RIDERS {
            book.on_sent(*l, addr, Handoff::default());
        }
    }
    assert!(book.nowhere_to_send(now), "each handshake has its riders");
    assert_eq!(book.next_look(now), Some(now + HANDSHAKE_POLL));
    first[0].mark();
    assert_eq!(
        book.targets(now).iter().map(|t| t.0).collect::<Vec<_>>(),
        vec![a],
        "a's handshake is done"
    );
}

/// The link view keeps the most streams sent to a leader's address within any 100 ms (the
/// span a 4.0 leader counts an unstaked budget in), sliding, not in fixed windows: a burst
/// split across a window boundary still counts whole.
#[test]
fn the_most_streams_within_100_ms_slides_over_the_sends() {
    let ls: Vec<Pubkey> = (0..2).map(|_| Pubkey::new_unique()).collect();
    let mut b = book_with(&ls);
    let addr = b.addrs.get(&ls[0]).copied().expect("an address");
    let t0 = Instant::now();
    // The pace: one every 10 ms, ten in any 100 ms.
    for i in 0..50 {
        b.note_sent(addr, t0 + Duration::from_millis(10 * i));
    }
    assert_eq!(
        b.link_view(&ls[0], Some(addr), t0).most_streams_per_100ms,
        10
    );
    // Then 16 in 60 ms across the 600 ms mark (5 before it, 11 after): fixed windows would
    // count 11 at most, the sliding span all 16.
    let burst = t0 + Duration::from_millis(580);
    for i in 0..16 {
        b.note_sent(addr, burst + Duration::from_millis(4 * i));
    }
    assert_eq!(
        b.link_view(&ls[0], Some(addr), t0).most_streams_per_100ms,
        16
    );
}

/// Our streams to an address within the last 100 ms, the count the sends ahead hold to a
/// leader's budget: a stream leaves the count 100 ms after it went.
#[test]
fn the_streams_in_the_window_are_those_of_the_last_100_ms() {
    let ls: Vec<Pubkey> = (0..2).map(|_| Pubkey::new_unique()).collect();
    let mut b = book_with(&ls);
    let addr = b.addrs.get(&ls[0]).copied().expect("an address");
    let t = Instant::now();
    for i in 0..10u64 {
        b.note_sent(addr, t + Duration::from_millis(i * 5));
    }
    let at = |ms| t + Duration::from_millis(ms);
    assert_eq!(b.streams_in_window(addr, at(50)), 10);
    // The first five (0–20 ms) are out of the window at 120 ms; the rest are not.
    assert_eq!(b.streams_in_window(addr, at(120)), 5);
    assert_eq!(b.streams_in_window(addr, at(200)), 0);
    let other = b.addrs.get(&ls[1]).copied().expect("an address");
    assert_eq!(b.streams_in_window(other, at(50)), 0);
}
