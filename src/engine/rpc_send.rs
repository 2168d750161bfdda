//! `--via rpc`: the engine's sends through an RPC node's `sendTransaction` (`skipPreflight`,
//! `maxRetries: 0`) instead of QUIC streams to the leaders — the route for users without stake
//! and what staked-forwarding services offer. The pacer, resends, backoff, journal and report
//! are the engine's own either way; only the last hop changes.
//!
//! Each send is one POST, never retried here (Agave's RPC client waits out HTTP 429 by itself,
//! which would hide throttling from the backoff and hold a pacer slot for seconds): 429 counts
//! as throttled, a refused or dropped connection and 5xx as connection failures, a JSON-RPC
//! error (the node refused the transaction) as another stream failure.

use std::{
    net::{SocketAddr, ToSocketAddrs},
    sync::{Arc, Mutex},
    time::Duration,
};

use base64::Engine as _;
use futures::{FutureExt, future::BoxFuture};

use super::net::{Handoff, LinkState, SendError, Transport};
use crate::redact::Scrubber;

/// Bound on opening a connection to the RPC node; the engine bounds the whole send.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum RpcSendError {
    #[error("--via rpc: {0} is not an http(s) URL with a host")]
    BadUrl(String),
    #[error("--via rpc: cannot resolve {host}: {reason}")]
    Resolve { host: String, reason: String },
    #[error("--via rpc: cannot set up the HTTP client: {0}")]
    Client(String),
}

pub struct RpcSend {
    http: reqwest::Client,
    url: String,
    addr: SocketAddr,
    scrub: Arc<Scrubber>,
    link: Arc<Mutex<LinkState>>,
}

impl RpcSend {
    pub fn new(url: &str) -> Result<Self, RpcSendError> {
        let scrub = Scrubber::new(url);
        let shown = || scrub.text(url);
        let parsed = url::Url::parse(url).map_err(|_| RpcSendError::BadUrl(shown()))?;
        let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
            return Err(RpcSendError::BadUrl(shown()));
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(RpcSendError::BadUrl(shown()));
        }
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| RpcSendError::Resolve {
                host: host.to_string(),
                reason: e.to_string(),
            })?
            .next()
            .ok_or_else(|| RpcSendError::Resolve {
                host: host.to_string(),
                reason: "no address".into(),
            })?;
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| RpcSendError::Client(scrub.text(e)))?;
        Ok(Self {
            http,
            url: url.to_string(),
            addr,
            scrub: Arc::new(scrub),
            link: Arc::new(Mutex::new(LinkState::Idle)),
        })
    }

    /// The address every send is attributed to: the RPC node's, where the leaders panel and
    /// the backoff keep its figures.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

fn set(link: &Mutex<LinkState>, state: LinkState) {
    *link.lock().unwrap_or_else(|p| p.into_inner()) = state;
}

/// What one answer means for the engine.
fn judge(status: reqwest::StatusCode, body: &serde_json::Value) -> Result<(), SendError> {
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(SendError::Throttled("HTTP 429 Too Many Requests".into()));
    }
    if status.is_server_error() {
        return Err(SendError::Connection(format!("HTTP {status}")));
    }
    if let Some(err) = body.get("error") {
        let message = err
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or("refused");
        return Err(SendError::Stream(format!("sendTransaction: {message}")));
    }
    if !status.is_success() || body.get("result").is_none() {
        return Err(SendError::Stream(format!("sendTransaction: HTTP {status}")));
    }
    Ok(())
}

impl Transport for RpcSend {
    fn send(
        &self,
        _addr: SocketAddr,
        wire: Arc<[u8]>,
        handoff: Handoff,
    ) -> BoxFuture<'static, Result<(), SendError>> {
        let request = serde_json::json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "sendTransaction",
            "params": [
                base64::engine::general_purpose::STANDARD.encode(&wire),
                {"encoding": "base64", "skipPreflight": true, "maxRetries": 0},
            ],
        });
        let (http, url, scrub, link) = (
            self.http.clone(),
            self.url.clone(),
            self.scrub.clone(),
            self.link.clone(),
        );
        async move {
            handoff.mark();
            let sent = http.post(&url).json(&request).send().await;
            let response = match sent {
                Ok(r) => r,
                Err(e) => {
                    let why = scrub.text(&e);
                    set(&link, LinkState::Failed(why.clone()));
                    return Err(if e.is_timeout() {
                        SendError::Timeout(CONNECT_TIMEOUT)
                    } else {
                        SendError::Connection(why)
                    });
                }
            };
            let status = response.status();
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            let verdict = judge(status, &body).map_err(|e| match e {
                SendError::Stream(m) => SendError::Stream(scrub.text(m)),
                other => other,
            });
            set(
                &link,
                match &verdict {
                    Err(SendError::Connection(why)) => LinkState::Failed(why.clone()),
                    _ => LinkState::Connected,
                },
            );
            verdict
        }
        .boxed()
    }

    fn prepare(&self, _addrs: &[SocketAddr]) {}

    fn link_state(&self, _addr: SocketAddr) -> LinkState {
        self.link.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::StatusCode;
    use serde_json::json;

    /// The node's answers map onto the engine's outcomes: a signature is accepted, 429 is
    /// throttling, 5xx a connection failure, a JSON-RPC error a refusal.
    #[test]
    fn answers_become_stream_outcomes() {
        assert_eq!(judge(StatusCode::OK, &json!({"result": "5VER…"})), Ok(()));
        assert!(matches!(
            judge(StatusCode::TOO_MANY_REQUESTS, &json!({})),
            Err(SendError::Throttled(_))
        ));
        assert!(matches!(
            judge(StatusCode::SERVICE_UNAVAILABLE, &json!({})),
            Err(SendError::Connection(_))
        ));
        let refused = judge(
            StatusCode::OK,
            &json!({"error": {"code": -32002, "message": "Transaction signature verification failure"}}),
        );
        assert_eq!(
            refused,
            Err(SendError::Stream(
                "sendTransaction: Transaction signature verification failure".into()
            ))
        );
    }

    #[test]
    fn only_http_urls_with_a_host_are_taken() {
        assert!(RpcSend::new("ws://127.0.0.1:8900").is_err());
        assert!(RpcSend::new("not a url").is_err());
        let ok = RpcSend::new("http://127.0.0.1:8899/").expect("loopback");
        assert_eq!(ok.addr(), SocketAddr::from(([127, 0, 0, 1], 8899)));
    }
}
