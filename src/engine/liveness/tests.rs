//! `Liveness` on its own: riders for a handshake, silence on near and far links, what is forgotten.

use super::*;
/// The silence of a near link: the floor (see `LinkTiming::silence`).
const SILENCE: Duration = crate::engine::link::SILENCE_FLOOR;

fn addr() -> SocketAddr {
    "127.0.0.1:8009".parse().unwrap()
}

/// A stream handed to the wire at `t`.
fn h(t: Instant) -> Handoff {
    Handoff::marked(t)
}

/// Liveness that has measured one near link (1 ms), so addresses not heard from yet are
/// judged by the loopback floors, as on a local cluster.
fn near() -> Liveness {
    let mut l = Liveness::default();
    let other: SocketAddr = "127.0.0.1:9999".parse().unwrap();
    l.on_sent(other, h(Instant::now()));
    l.on_result(other, StreamOutcome::Accepted);
    l.on_answer_time(other, Duration::from_millis(1), Instant::now());
    l
}

#[test]
fn a_new_address_gets_its_riders_until_its_connection_is_up() {
    let mut l = near();
    let t = Instant::now();
    assert!(l.may_send(addr(), t));
    let first = Handoff::default();
    l.on_sent(addr(), first.clone());
    for _ in 1..HANDSHAKE_RIDERS {
        assert!(l.may_send(addr(), t), "riders wait for the same handshake");
        l.on_sent(addr(), Handoff::default());
    }
    assert!(
        !l.may_send(addr(), t),
        "one more than {HANDSHAKE_RIDERS} before the handshake"
    );
    assert!(l.connecting());
    first.mark();
    assert!(!l.connecting());
    assert!(l.may_send(addr(), t), "its handshake was answered");
    assert!(!l.answers(addr(), t), "not yet known to answer a stream");
    l.on_result(addr(), StreamOutcome::Accepted);
    assert!(l.may_send(addr(), t));
    assert!(l.answers(addr(), t));
    l.on_sent(addr(), h(t));
    assert!(l.may_send(addr(), t), "proven: streams overlap");
}

/// A dark TPU never completes the handshake: its riders fail with it, and from then on it
/// gets a probe at a time, never riders again until it answers.
#[test]
fn riders_behind_a_failed_handshake_leave_a_probe_at_a_time() {
    let mut l = near();
    let t = Instant::now();
    for _ in 0..HANDSHAKE_RIDERS {
        l.on_sent(addr(), Handoff::default());
    }
    l.on_result(addr(), StreamOutcome::Connection);
    assert!(
        !l.may_send(addr(), t),
        "failed, with riders still in flight"
    );
    assert!(!l.connecting(), "a failed handshake is not under way");
    for _ in 1..HANDSHAKE_RIDERS {
        l.on_result(addr(), StreamOutcome::Connection);
    }
    assert!(l.may_send(addr(), t), "nothing in flight: a probe");
    l.on_sent(addr(), Handoff::default());
    assert!(!l.may_send(addr(), t), "the probe goes alone");
}

#[test]
fn a_throttled_stream_is_an_answer() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Throttled);
    l.on_sent(addr(), h(t));
    assert!(l.may_send(addr(), t));
}

#[test]
fn a_proven_address_that_stops_answering_gets_no_more_streams() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Accepted);
    l.on_sent(addr(), h(t));
    l.on_sent(addr(), h(t + SILENCE / 2));
    assert!(l.may_send(addr(), t + SILENCE - Duration::from_millis(1)));
    assert!(
        !l.may_send(addr(), t + SILENCE),
        "silent since its oldest stream"
    );
    assert_eq!(l.silent_for(addr(), t + SILENCE), Some(SILENCE));
    assert!(!l.answers(addr(), t + SILENCE));
    // An answer from it ends the silence.
    l.on_result(addr(), StreamOutcome::Accepted);
    assert!(l.may_send(addr(), t + SILENCE));
}

#[test]
fn a_silent_address_is_reported_once_per_wait() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    assert!(l.newly_silent(t + SILENCE / 2).is_empty());
    assert_eq!(l.newly_silent(t + SILENCE), vec![addr()]);
    assert!(l.newly_silent(t + SILENCE * 3).is_empty(), "once per wait");
    // Its streams fail (the connection was given up): the next wait is reported again.
    l.on_result(addr(), StreamOutcome::Connection);
    let t2 = t + SILENCE * 4;
    l.on_sent(addr(), h(t2));
    assert_eq!(l.newly_silent(t2 + SILENCE), vec![addr()]);
    // An answer ends the wait.
    l.on_result(addr(), StreamOutcome::Accepted);
    assert!(l.newly_silent(t2 + SILENCE * 5).is_empty());
}

#[test]
fn a_timed_out_stream_unproves_the_address_until_it_answers_again() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Accepted);
    l.on_sent(addr(), h(t));
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Timeout);
    assert!(!l.may_send(addr(), t), "one still in flight, and unproven");
    l.on_result(addr(), StreamOutcome::Connection);
    assert!(l.may_send(addr(), t), "nothing in flight: a probe");
    l.on_sent(addr(), h(t));
    assert!(!l.may_send(addr(), t));
}

#[test]
fn idle_addresses_that_neither_answered_nor_failed_are_forgotten() {
    let mut l = near();
    let t = Instant::now();
    let (other, ours) = (
        "127.0.0.1:8010".parse().unwrap(),
        "127.0.0.1:8011".parse().unwrap(),
    );
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Connection);
    l.on_sent(other, h(t));
    l.on_result(other, StreamOutcome::Accepted);
    l.on_sent(ours, h(t));
    l.on_result(ours, StreamOutcome::Other);
    l.forget_idle();
    assert_eq!(
        l.links.len(),
        3,
        "the near link, `other` and the failed one"
    );
    assert!(
        !l.links.contains_key(&ours),
        "a failure on our side says nothing"
    );
    l.on_sent(addr(), Handoff::default());
    assert!(
        !l.may_send(addr(), t),
        "the failed one gets a probe, no riders"
    );
}

/// On a 320 ms link whose answers now and then come a PTO late, a second without an answer
/// is nothing: the address is silent only after three of its PTOs.
#[test]
fn a_far_lossy_link_is_silent_only_after_three_of_its_ptos() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Accepted);
    for i in 0..100u32 {
        let took = Duration::from_millis(if i % 20 == 0 { 770 } else { 320 });
        l.on_answer_time(addr(), took, t + Duration::from_millis(10) * i);
    }
    let silence = l.timing(addr()).silence();
    assert!(silence > SILENCE * 2, "{silence:?}");
    l.on_sent(addr(), h(t));
    assert!(l.may_send(addr(), t + SILENCE), "a second is nothing there");
    assert!(l.newly_silent(t + SILENCE).is_empty());
    assert!(!l.may_send(addr(), t + silence));
    assert_eq!(l.newly_silent(t + silence), vec![addr()]);
    // A leader never heard from is judged like the worst link measured.
    let unknown: SocketAddr = "127.0.0.1:8011".parse().unwrap();
    assert_eq!(l.timing(unknown), l.timing(addr()));
}

/// Many streams without an answer: the silence still counts from the earliest hand-off,
/// once the list of waits has been folded.
#[test]
fn the_silence_counts_from_the_earliest_hand_off_among_many() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Accepted);
    l.on_sent(addr(), h(t));
    let unsent: Vec<Handoff> = (0..500).map(|_| Handoff::default()).collect();
    for (i, u) in unsent.iter().enumerate() {
        l.on_sent(addr(), u.clone());
        l.on_sent(addr(), h(t + Duration::from_millis(i as u64)));
    }
    assert!(l.links[&addr()].waiting.len() < 600, "never folded");
    assert!(
        l.newly_silent(t + SILENCE - Duration::from_millis(1))
            .is_empty()
    );
    assert_eq!(l.newly_silent(t + SILENCE), vec![addr()]);
    assert_eq!(l.silent_for(addr(), t + SILENCE), Some(SILENCE));
}

/// A stream that has not reached the wire (it waits for a connection, congestion window or
/// stream credit on our side) is no evidence against the leader.
#[test]
fn streams_not_handed_off_do_not_count_toward_silence() {
    let mut l = near();
    let t = Instant::now();
    l.on_sent(addr(), h(t));
    l.on_result(addr(), StreamOutcome::Accepted);
    let waiting = Handoff::default();
    l.on_sent(addr(), waiting.clone());
    assert!(l.newly_silent(t + SILENCE * 10).is_empty());
    assert!(l.answers(addr(), t + SILENCE * 10));
    // Once on the wire, its wait counts from its hand-off.
    let handed = Handoff::marked(t + SILENCE * 10);
    l.on_sent(addr(), handed);
    assert!(
        l.newly_silent(t + SILENCE * 11 - Duration::from_millis(1))
            .is_empty()
    );
    assert_eq!(l.newly_silent(t + SILENCE * 11), vec![addr()]);
}

/// The streams still in flight when a new address first answers are its riders going out a
/// rider gap apart: it is `releasing` for as many gaps, and not before its first answer, nor
/// at a later one.
#[tokio::test(start_paused = true)]
async fn a_first_answer_with_riders_in_flight_starts_their_release() {
    let mut l = near();
    for _ in 0..5 {
        l.on_sent(addr(), h(Instant::now()));
    }
    assert!(!l.releasing(addr(), Instant::now()), "no answer yet");
    l.on_result(addr(), StreamOutcome::Accepted);
    let t = Instant::now();
    assert!(l.releasing(addr(), t));
    assert!(l.releasing(addr(), t + RIDER_GAP * 4 - Duration::from_millis(1)));
    assert!(
        !l.releasing(addr(), t + RIDER_GAP * 4),
        "four were left in flight"
    );
    tokio::time::advance(RIDER_GAP * 5).await;
    l.on_result(addr(), StreamOutcome::Accepted);
    assert!(
        !l.releasing(addr(), Instant::now()),
        "a later answer starts no release"
    );
}
