//! A leader as the snapshot shows it: its connection, its row in the leaders panel, and its
//! figures over the run.

use std::net::SocketAddr;

use serde::Serialize;
use solana_pubkey::Pubkey;

use super::{LinkView, ser::ser_display};
use crate::engine::net::StreamOutcome;

/// Connection to one leader's TPU, as the transport sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ConnState {
    /// No connection yet and none being made.
    Idle,
    Connecting,
    Connected,
    /// The leader throttled us (withheld stream credit, closed a connection), a connection
    /// failed or sends timed out; no sends to it until the backoff ends.
    BackingOff {
        /// Time left in the backoff when the snapshot was taken.
        remaining_ms: u64,
        /// What started it: throttled, connection or timeout.
        kind: StreamOutcome,
        reason: String,
    },
    /// The last attempt failed; the next send will retry.
    Failed {
        reason: String,
    },
    /// Streams have waited this long with no answer at all: it gets one probe at a time until
    /// it answers (see `engine::liveness`).
    Silent {
        for_ms: u64,
    },
    /// The leader has no TPU QUIC address in `getClusterNodes`.
    NoAddress,
}

impl ConnState {
    pub fn label(&self) -> String {
        match self {
            ConnState::Idle => "idle".into(),
            ConnState::Connecting => "connecting".into(),
            ConnState::Connected => "connected".into(),
            ConnState::BackingOff {
                remaining_ms,
                kind,
                reason,
            } => {
                let why = match kind {
                    StreamOutcome::Connection => "connection failing",
                    StreamOutcome::Timeout => "sends timing out",
                    _ => "throttled",
                };
                format!("{why}, backing off {remaining_ms} ms ({reason})")
            }
            ConnState::Failed { reason } => format!("failed: {reason}"),
            ConnState::Silent { for_ms } => {
                format!("not answering for {for_ms} ms, probing one stream at a time")
            }
            ConnState::NoAddress => "no TPU address".into(),
        }
    }
}

/// A leader in the schedule window the engine sends to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeaderView {
    #[serde(serialize_with = "ser_display")]
    pub identity: Pubkey,
    pub tpu_quic: Option<SocketAddr>,
    /// First and last slot of this leader's window within the tracked range.
    pub first_slot: u64,
    pub last_slot: u64,
    pub conn: ConnState,
    /// Streams sent to it and what became of them.
    pub streams: StreamCounts,
    /// Transactions that landed in its slots.
    pub landed: u64,
    /// Its link as measured, and the verdict on it.
    pub link: LinkView,
}

/// Streams to leaders — one per transaction send per leader it went to — and what became of
/// them. "Sent" minus the outcomes is what is still in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StreamCounts {
    pub sent: u64,
    pub accepted: u64,
    pub throttled: u64,
    /// Connecting failed or the connection was lost.
    pub connection: u64,
    /// No answer within the leader's deadline, counted from the hand-off.
    pub timeout: u64,
    /// Any other stream failure.
    pub other: u64,
}

impl StreamCounts {
    pub fn record(&mut self, outcome: StreamOutcome) {
        let n = match outcome {
            StreamOutcome::Accepted => &mut self.accepted,
            StreamOutcome::Throttled => &mut self.throttled,
            StreamOutcome::Connection => &mut self.connection,
            StreamOutcome::Timeout => &mut self.timeout,
            StreamOutcome::Other => &mut self.other,
        };
        *n += 1;
    }

    /// Streams that did not reach the leader, whatever the reason.
    pub fn failed(&self) -> u64 {
        self.throttled + self.connection + self.timeout + self.other
    }
}

/// One leader's figures over the whole run, for the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeaderStats {
    #[serde(serialize_with = "ser_display")]
    pub identity: Pubkey,
    /// The TPU address it was last sent to.
    pub tpu_quic: Option<SocketAddr>,
    pub streams: StreamCounts,
    /// Transactions that landed in its slots.
    pub landed: u64,
    /// Median time from handing a stream to QUIC to the leader's answer (accepted or not), in
    /// ms; null before any answer.
    pub ack_ms_p50: Option<u64>,
    /// How deep its backoff is now: 0 when it gets sends, 1 for a first backoff, each
    /// repeat within the judging window one more (the pause doubles with each).
    pub backoff_level: u32,
    /// Its link as measured, and the verdict on it.
    pub link: LinkView,
}
