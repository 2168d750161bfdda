//! The current slot pushed by the validator's websocket (`slotSubscribe`), and on the same
//! connection the moments slots reach a commitment (`slotsUpdatesSubscribe`), so the run's last
//! statuses are asked as soon as they can have changed instead of at the next poll. When the
//! websocket is down the feed goes quiet and the engine falls back to polling `getSlot` (and
//! statuses on its timer); this task keeps reconnecting in the background. A server without
//! slot updates costs only that speed-up.
//!
//! Every wait is bounded ([`FeedTimeouts`]): a server that accepts the TCP connection and never
//! answers, or a feed that stops sending slots (a half-dead connection, a stalled provider),
//! is dropped and reconnected rather than holding the task forever.

use std::time::Duration;

use futures::{StreamExt, stream::BoxStream};
use solana_pubsub_client::nonblocking::pubsub_client::PubsubClient;
use solana_rpc_client_api::response::SlotUpdate;
use tokio::{
    sync::mpsc,
    time::{Instant, sleep, timeout},
};

use crate::{
    config::Commitment,
    redact::{Scrubber, redact_url},
};

/// What the feed pushes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedEvent {
    /// A slot began: the tip moved.
    Slot(u64),
    /// `slot` reached `commitment`: statuses at that commitment of transactions landed up to it
    /// can be read now (frozen for processed, optimistically confirmed, rooted).
    Reached { slot: u64, commitment: Commitment },
}

impl FeedEvent {
    /// The event a slot update is, if it is one the engine uses.
    fn of_update(update: &SlotUpdate) -> Option<Self> {
        let (slot, commitment) = match *update {
            SlotUpdate::Frozen { slot, .. } => (slot, Commitment::Processed),
            SlotUpdate::OptimisticConfirmation { slot, .. } => (slot, Commitment::Confirmed),
            SlotUpdate::Root { slot, .. } => (slot, Commitment::Finalized),
            _ => return None,
        };
        Some(FeedEvent::Reached { slot, commitment })
    }
}

/// How long the feed waits on the websocket before giving up on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedTimeouts {
    /// For the websocket handshake, and again for the `slotSubscribe` answer.
    pub connect: Duration,
    /// Between two slots once subscribed. Slots come every ~400 ms, so a feed this quiet has
    /// missed a dozen: it is dead even if its socket is not.
    pub silence: Duration,
    /// Pause between a failed or dropped connection and the next attempt.
    pub retry: Duration,
}

impl Default for FeedTimeouts {
    /// A handshake is a round trip or two; five seconds forgives a slow provider without
    /// leaving the engine on `getSlot` polling for long when a retry would succeed.
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(5),
            silence: Duration::from_secs(5),
            retry: Duration::from_secs(2),
        }
    }
}

/// Why one connection of the feed ended.
#[derive(Debug, thiserror::Error)]
enum FeedEnd {
    #[error("no answer to the websocket handshake within {0:?}")]
    ConnectTimeout(Duration),
    #[error("unreachable ({0})")]
    Unreachable(String),
    #[error("no answer to slotSubscribe within {0:?}")]
    SubscribeTimeout(Duration),
    #[error("slotSubscribe failed ({0})")]
    SubscribeFailed(String),
    #[error("no slot for {0:?}")]
    Silent(Duration),
    #[error("closed by the server")]
    Closed,
    /// The engine dropped the receiver: the feed stops.
    #[error("receiver gone")]
    ReceiverGone,
}

impl FeedEnd {
    /// Whether the connection got as far as delivering slots.
    fn was_subscribed(&self) -> bool {
        matches!(self, FeedEnd::Silent(_) | FeedEnd::Closed)
    }
}

/// Subscribes to slots at `ws_url` until the receiver is dropped.
pub fn spawn_slot_feed(ws_url: String) -> mpsc::UnboundedReceiver<FeedEvent> {
    spawn_slot_feed_with(ws_url, FeedTimeouts::default())
}

/// [`spawn_slot_feed`] with explicit bounds.
pub fn spawn_slot_feed_with(ws_url: String, t: FeedTimeouts) -> mpsc::UnboundedReceiver<FeedEvent> {
    let (tx, rx) = mpsc::unbounded_channel();
    let shown = redact_url(&ws_url);
    let scrub = Scrubber::new(&ws_url);
    tokio::spawn(async move {
        // Set once a failure has been reported, so a dead endpoint warns once, not every retry.
        let mut warned = false;
        loop {
            let end = tokio::select! {
                end = follow(&ws_url, &tx, t, &scrub, &mut warned, &shown) => end,
                () = tx.closed() => FeedEnd::ReceiverGone,
            };
            if matches!(end, FeedEnd::ReceiverGone) {
                return;
            }
            if end.was_subscribed() {
                log::warn!(
                    "websocket {shown} dropped: {end}; polling getSlot, reconnecting in {} s",
                    t.retry.as_secs_f64()
                );
                warned = true;
            } else if !warned {
                log::warn!(
                    "websocket {shown}: {end}; polling getSlot, retrying every {} s",
                    t.retry.as_secs_f64()
                );
                warned = true;
            } else {
                log::debug!("websocket {shown}: {end}");
            }
            tokio::time::sleep(t.retry).await;
        }
    });
    rx
}

/// One connection: connect, subscribe, and forward slots and slot updates until something ends
/// it. Slot updates are asked for once slots flow, and are not waited for: a server that does not
/// answer, or refuses, leaves the slots as they were.
async fn follow(
    ws_url: &str,
    tx: &mpsc::UnboundedSender<FeedEvent>,
    t: FeedTimeouts,
    scrub: &Scrubber,
    warned: &mut bool,
    shown: &str,
) -> FeedEnd {
    let client = match timeout(t.connect, PubsubClient::new(ws_url)).await {
        Err(_) => return FeedEnd::ConnectTimeout(t.connect),
        Ok(Err(e)) => return FeedEnd::Unreachable(scrub.text(e)),
        Ok(Ok(client)) => client,
    };
    let (mut slots, _unsubscribe) = match timeout(t.connect, client.slot_subscribe()).await {
        Err(_) => return FeedEnd::SubscribeTimeout(t.connect),
        Ok(Err(e)) => return FeedEnd::SubscribeFailed(scrub.text(e)),
        Ok(Ok(sub)) => sub,
    };
    if *warned {
        log::info!("websocket {shown} reconnected");
        *warned = false;
    }
    let subscribe_updates = timeout(t.connect, client.slot_updates_subscribe());
    tokio::pin!(subscribe_updates);
    let mut subscribing = true;
    let mut updates: Option<BoxStream<'_, SlotUpdate>> = None;
    let silent = sleep(t.silence);
    tokio::pin!(silent);
    loop {
        let event = tokio::select! {
            () = &mut silent => return FeedEnd::Silent(t.silence),
            next = slots.next() => match next {
                None => return FeedEnd::Closed,
                Some(info) => {
                    silent.as_mut().reset(Instant::now() + t.silence);
                    Some(FeedEvent::Slot(info.slot))
                }
            },
            answer = &mut subscribe_updates, if subscribing => {
                subscribing = false;
                match answer {
                    Ok(Ok((stream, _unsubscribe))) => updates = Some(stream),
                    Ok(Err(e)) => log::debug!(
                        "websocket {shown}: slotsUpdatesSubscribe refused ({}); statuses are polled",
                        scrub.text(e)
                    ),
                    Err(_) => log::debug!(
                        "websocket {shown}: no answer to slotsUpdatesSubscribe; statuses are polled"
                    ),
                }
                None
            },
            update = next_update(&mut updates) => FeedEvent::of_update(&update),
        };
        if let Some(event) = event
            && tx.send(event).is_err()
        {
            return FeedEnd::ReceiverGone;
        }
    }
}

/// The next slot update, or never when there are none (not subscribed, or the stream ended).
async fn next_update(updates: &mut Option<BoxStream<'_, SlotUpdate>>) -> SlotUpdate {
    if let Some(stream) = updates {
        if let Some(update) = stream.next().await {
            return update;
        }
        *updates = None;
    }
    std::future::pending().await
}

#[cfg(test)]
mod tests {
    use tokio::{net::TcpListener, time::Instant};

    use super::*;

    /// A server that accepts the TCP connection and never answers the websocket handshake:
    /// the connect times out and the feed tries again after its pause, instead of waiting on
    /// the first connection forever. Runs on tokio's paused clock, so the bounds pass in no
    /// real time.
    #[tokio::test(start_paused = true)]
    async fn a_websocket_that_never_answers_times_out_and_is_retried() {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback listener");
        let addr = listener.local_addr().expect("listener address");
        let (accepted_tx, mut accepted) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            // Hold every socket open and silent.
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
                if accepted_tx.send(Instant::now()).is_err() {
                    return;
                }
            }
        });
        let t = FeedTimeouts {
            connect: Duration::from_secs(5),
            silence: Duration::from_secs(5),
            retry: Duration::from_secs(2),
        };
        let mut slots = spawn_slot_feed_with(format!("ws://{addr}/"), t);

        let mut next_accept = async || {
            timeout(Duration::from_secs(60), accepted.recv())
                .await
                .expect("the feed connects within a minute")
                .expect("the listener task runs")
        };
        let first = next_accept().await;
        let second = next_accept().await;
        let gap = second - first;
        assert!(
            gap >= t.retry && gap <= t.connect + t.retry + Duration::from_secs(1),
            "reconnected {gap:?} after the first attempt; expected the connect bound plus the pause"
        );
        assert!(slots.try_recv().is_err(), "no slot came from a mute server");
    }

    /// A websocket server that completes the handshake, answers `slotSubscribe`, sends the
    /// next slot of `slots` and then goes silent while keeping the connection open. With
    /// `confirmed`, it also answers the next request (`slotsUpdatesSubscribe`) and sends that
    /// slot's optimistic confirmation, and a slot update the feed does not forward before it.
    async fn fading_server(
        mut slots: Vec<u64>,
        confirmed: Option<u64>,
    ) -> (String, mpsc::UnboundedReceiver<Instant>) {
        use futures::SinkExt;
        use tokio_tungstenite::tungstenite::Message;

        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback listener");
        let url = format!("ws://{}/", listener.local_addr().expect("address"));
        let (accepted_tx, accepted) = mpsc::unbounded_channel();
        slots.reverse();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                let _ = accepted_tx.send(Instant::now());
                let Ok(mut ws) = tokio_tungstenite::accept_async(socket).await else {
                    continue;
                };
                let answer = async |ws: &mut tokio_tungstenite::WebSocketStream<_>, sub| {
                    let id = match ws.next().await {
                        Some(Ok(Message::Text(text))) => {
                            serde_json::from_str::<serde_json::Value>(&text)
                                .ok()
                                .and_then(|v| v.get("id").and_then(|id| id.as_u64()))
                                .unwrap_or(1)
                        }
                        _ => return false,
                    };
                    let answer = serde_json::json!({"jsonrpc": "2.0", "result": sub, "id": id});
                    ws.send(Message::Text(answer.to_string().into()))
                        .await
                        .is_ok()
                };
                let send = async |ws: &mut tokio_tungstenite::WebSocketStream<_>, note| {
                    let note: serde_json::Value = note;
                    let _ = ws.send(Message::Text(note.to_string().into())).await;
                };
                if !answer(&mut ws, 7).await {
                    continue;
                }
                if let Some(slot) = slots.pop() {
                    let note = serde_json::json!({
                        "jsonrpc": "2.0",
                        "method": "slotNotification",
                        "params": {
                            "result": {"slot": slot, "parent": slot - 1, "root": slot - 32},
                            "subscription": 7
                        }
                    });
                    send(&mut ws, note).await;
                }
                if let Some(slot) = confirmed
                    && answer(&mut ws, 8).await
                {
                    for kind in ["completed", "optimisticConfirmation"] {
                        let note = serde_json::json!({
                            "jsonrpc": "2.0",
                            "method": "slotsUpdatesNotification",
                            "params": {
                                "result": {"type": kind, "slot": slot, "timestamp": 1},
                                "subscription": 8
                            }
                        });
                        send(&mut ws, note).await;
                    }
                }
                held.push(ws);
            }
        });
        (url, accepted)
    }

    /// Slot updates ride on the same connection: a slot's optimistic confirmation comes out
    /// of the feed as that slot reaching `confirmed`, and updates the engine does not use
    /// (a completed slot) do not come out at all.
    #[tokio::test]
    async fn a_confirmed_slot_comes_out_of_the_feed() {
        let (url, _accepted) = fading_server(vec![100], Some(99)).await;
        let mut feed = spawn_slot_feed_with(url, FeedTimeouts::default());
        let mut next = async || {
            timeout(Duration::from_secs(10), feed.recv())
                .await
                .expect("an event within 10 s")
                .expect("the feed runs")
        };
        assert_eq!(next().await, FeedEvent::Slot(100));
        assert_eq!(
            next().await,
            FeedEvent::Reached {
                slot: 99,
                commitment: Commitment::Confirmed
            }
        );
    }

    /// A feed that delivers a slot and then goes silent (its connection still open) is
    /// dropped after the silence bound and reconnected, and slots flow again.
    #[tokio::test]
    async fn a_silent_feed_is_dropped_and_reconnected() {
        let (url, mut accepted) = fading_server(vec![100, 200], None).await;
        let t = FeedTimeouts {
            connect: Duration::from_secs(5),
            silence: Duration::from_millis(400),
            retry: Duration::from_millis(100),
        };
        let mut slots = spawn_slot_feed_with(url, t);
        let mut next_slot = async || {
            timeout(Duration::from_secs(10), slots.recv())
                .await
                .expect("a slot within 10 s")
                .expect("the feed runs")
        };
        assert_eq!(next_slot().await, FeedEvent::Slot(100));
        let first_slot_at = Instant::now();
        assert_eq!(
            next_slot().await,
            FeedEvent::Slot(200),
            "no slot after the feed went silent"
        );
        let waited = first_slot_at.elapsed();
        assert!(
            waited >= t.silence,
            "reconnected after {waited:?}, before the silence bound"
        );
        let first = accepted.recv().await.expect("first connection");
        let second = accepted.recv().await.expect("second connection");
        assert!(second > first);
    }
}
