//! Following one stream to its answer, and deciding whose a long wait was.
//!
//! A send has two clocks. The transaction's: the send timeout (`--send-timeout`, 5 s by
//! default) bounds how long a stream may take to reach the wire — to get a connection, room
//! in its congestion window and stream credit. Those waits are txpace's side of the stream,
//! and one that runs out says nothing of the leader ([`SendError::Unsent`]: no backoff, not a
//! leader timeout). The leader's: once handed to the wire, the stream is the leader's to
//! answer within its link's [`stream_deadline`](super::link::LinkTiming::stream_deadline),
//! counted from the hand-off. On a far, lossy link that can end after the send timeout: the
//! stream is followed until then, so a late acknowledgement still counts as accepted rather
//! than as a timeout held against a healthy leader. Following it longer holds nothing back:
//! the resend comes due on its own interval, and the pacer never waits for answers.

use std::time::Duration;

use futures::future::BoxFuture;
use tokio::time::{Instant, timeout_at};

use super::net::{Handoff, SendError};

/// Waits for `send`, started now, whose hand-off `handoff` marks: at most `bound` to reach the
/// wire, and `deadline` from its hand-off to be answered (whichever ends later).
pub(super) async fn follow(
    mut send: BoxFuture<'static, Result<(), SendError>>,
    handoff: Handoff,
    bound: Duration,
    deadline: Duration,
) -> Result<(), SendError> {
    let start = Instant::now();
    let mut until = start + bound;
    loop {
        if let Ok(result) = timeout_at(until, &mut send).await {
            return result;
        }
        let Some(handed) = handoff.at() else {
            return Err(SendError::Unsent(bound));
        };
        let leader_end = handed + deadline;
        if leader_end <= until {
            return Err(SendError::Timeout(until.saturating_duration_since(handed)));
        }
        until = leader_end;
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    const BOUND: Duration = Duration::from_secs(5);
    const DEADLINE: Duration = Duration::from_secs(3);

    /// A send handed off after `handed` and answered after `answered` (never when `None`).
    fn send(
        handoff: &Handoff,
        handed: Duration,
        answered: Option<Duration>,
    ) -> BoxFuture<'static, Result<(), SendError>> {
        let handoff = handoff.clone();
        async move {
            tokio::time::sleep(handed).await;
            handoff.mark();
            match answered {
                Some(a) => {
                    tokio::time::sleep(a - handed).await;
                    Ok(())
                }
                None => std::future::pending().await,
            }
        }
        .boxed()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_never_reached_the_wire_is_not_the_leaders_timeout() {
        let h = Handoff::default();
        let never = async { std::future::pending().await }.boxed();
        let start = Instant::now();
        let r = follow(never, h, BOUND, DEADLINE).await;
        assert_eq!(r, Err(SendError::Unsent(BOUND)));
        assert_eq!(start.elapsed(), BOUND);
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_answer_after_a_late_hand_off_counts_as_accepted() {
        let h = Handoff::default();
        let s = send(
            &h,
            Duration::from_millis(4_500),
            Some(Duration::from_millis(6_000)),
        );
        assert_eq!(follow(s, h, BOUND, DEADLINE).await, Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn the_leaders_timeout_runs_from_the_hand_off() {
        let h = Handoff::default();
        let start = Instant::now();
        let s = send(&h, Duration::from_millis(4_000), None);
        let r = follow(s, h, BOUND, DEADLINE).await;
        assert_eq!(r, Err(SendError::Timeout(DEADLINE)));
        assert_eq!(start.elapsed(), Duration::from_millis(7_000));
        // Handed off at once: the send timeout still ends it, as the leader's.
        let h = Handoff::default();
        let s = send(&h, Duration::ZERO, None);
        assert_eq!(
            follow(s, h, BOUND, DEADLINE).await,
            Err(SendError::Timeout(BOUND))
        );
    }
}
