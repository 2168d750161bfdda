//! The current slot pushed by the validator's websocket (`slotSubscribe`). When the websocket is
//! down the feed goes quiet and the engine falls back to polling `getSlot`; this task keeps
//! reconnecting in the background.

use std::time::Duration;

use futures::StreamExt;
use solana_pubsub_client::nonblocking::pubsub_client::PubsubClient;
use tokio::sync::mpsc;

use crate::redact::{Scrubber, redact_url};

const RECONNECT_EVERY: Duration = Duration::from_secs(2);

/// Subscribes to slots at `ws_url` until the receiver is dropped.
pub fn spawn_slot_feed(ws_url: String) -> mpsc::UnboundedReceiver<u64> {
    let (tx, rx) = mpsc::unbounded_channel();
    let shown = redact_url(&ws_url);
    let scrub = Scrubber::new(&ws_url);
    tokio::spawn(async move {
        let mut warned = false;
        while !tx.is_closed() {
            match PubsubClient::new(&ws_url).await {
                Ok(client) => match client.slot_subscribe().await {
                    Ok((mut stream, _unsubscribe)) => {
                        if warned {
                            log::info!("websocket {shown} reconnected");
                            warned = false;
                        }
                        while let Some(info) = stream.next().await {
                            if tx.send(info.slot).is_err() {
                                return;
                            }
                        }
                        // Fell out of the stream: report the drop below.
                        log::warn!(
                            "websocket {shown} dropped; polling getSlot, reconnecting in {} s",
                            RECONNECT_EVERY.as_secs()
                        );
                    }
                    Err(e) => {
                        if !warned {
                            let msg = scrub.text(e);
                            log::warn!("slotSubscribe on {shown} failed ({msg}); polling getSlot");
                            warned = true;
                        }
                    }
                },
                Err(e) => {
                    if !warned {
                        let msg = scrub.text(e);
                        log::warn!(
                            "websocket {shown} unreachable ({msg}); polling getSlot, retrying every {} s",
                            RECONNECT_EVERY.as_secs()
                        );
                        warned = true;
                    }
                }
            }
            tokio::time::sleep(RECONNECT_EVERY).await;
        }
    });
    rx
}
