//! The loop's clocks and its wait on the websocket feed, shared by a lone run and a host's
//! batches.

use std::time::Duration;

use tokio::{
    sync::mpsc,
    time::{Instant, Interval, MissedTickBehavior, interval},
};

use super::TAIL_POLL;
use crate::engine::{maxrate, slots::FeedEvent};

/// The loop's clocks, made once and kept across batches.
pub(super) struct Timers {
    /// Chain polls, about once a slot.
    pub(super) poll: Interval,
    /// Status lookups in the run's tail.
    pub(super) tail: Interval,
    /// Snapshots for the UI.
    pub(super) publish: Interval,
    /// The closed loop of `--rate max`.
    pub(super) control: Interval,
}

impl Timers {
    pub(super) fn new(poll_every: Duration, publish_every: Duration) -> Self {
        let mut poll = interval(poll_every);
        poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut publish = interval(publish_every);
        publish.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut control = interval(maxrate::PERIOD);
        control.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut tail = interval(TAIL_POLL);
        tail.set_missed_tick_behavior(MissedTickBehavior::Skip);
        Self {
            poll,
            tail,
            publish,
            control,
        }
    }
}

pub(super) fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400)
}

pub(super) async fn recv_opt(
    feed: &mut Option<mpsc::UnboundedReceiver<FeedEvent>>,
) -> Option<FeedEvent> {
    match feed {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
