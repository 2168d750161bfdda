//! The link to each leader as measured, with its one-word verdict, and the header's view of the
//! last minute on the wire: the share of streams that waited for stream credit and where the
//! time to land went.

use serde::{Deserialize, Serialize};
use solana_pubkey::Pubkey;

use super::ser::ser_opt_display;

pub use crate::engine::verdict::Verdict;

/// What was measured of the link to one leader, and the verdict on it (see
/// `engine::verdict`). Durations are whole milliseconds; a figure never measured is `null`
/// (shown as "–"), a count never incremented 0. The QUIC figures are quinn's, over every
/// connection txpace opened to the leader's address since it first did; the credit waits are
/// this run's streams to the leader.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkView {
    /// `ok`, `far`, `lossy`, `budget`, `evicted`, `ignoring` or `dark`; `null` when nothing
    /// was measured to judge by.
    pub verdict: Option<Verdict>,
    /// Quinn's smoothed round trip (mean over the live connections; with none, as it was when
    /// txpace closed them for idleness).
    pub srtt_ms: Option<u64>,
    /// The variation of the streams' answer times (RFC 6298's `rttvar` over the time from each
    /// stream's hand-off to its acknowledgement, see `engine::link`): quinn keeps its own
    /// variation private.
    pub rttvar_ms: Option<u64>,
    /// Datagrams quinn sent to it and counted lost, and its congestion events.
    pub sent_packets: u64,
    pub lost_packets: u64,
    pub congestion_events: u64,
    /// How long the last finished handshake took.
    pub handshake_ms: Option<u64>,
    /// Handshakes started in the last minute.
    pub new_connections_per_minute: u32,
    /// The most streams txpace sent to its address within any 100 ms, the span a 4.0 leader
    /// counts an unstaked peer's budget in (20): over 20 we overran the budget ourselves; at
    /// or under it, a stream the leader delayed for the budget was bunched on the way (a
    /// repair releasing a connection's held-back streams at once).
    pub most_streams_per_100ms: u32,
    /// Handshakes that timed out.
    pub handshake_timeouts: u64,
    /// Live connections.
    pub connections: u32,
    /// Streams that got or waited for stream credit, and those that waited.
    pub credit_streams: u64,
    pub credit_waited: u64,
    /// Of those, the waits that came while we had sent it under 150 streams in the second
    /// before (three quarters of an unstaked budget: see `verdict::shared_budget`).
    pub credit_waited_slow: u64,
    /// Median and 99th percentile of the waits of the streams that waited.
    pub credit_wait_ms_p50: Option<u64>,
    pub credit_wait_ms_p99: Option<u64>,
    /// Close codes the leader closed our connections with, and how often.
    pub closes: Vec<CloseCount>,
}

/// One application close code received from a leader, and how many connections it closed so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloseCount {
    pub code: u64,
    pub count: u64,
}

impl LinkView {
    /// Quinn's loss share, once anything was sent.
    pub fn loss(&self) -> Option<f64> {
        (self.sent_packets > 0).then(|| self.lost_packets as f64 / self.sent_packets as f64)
    }

    /// The share of streams that waited for credit, once any had credit.
    pub fn credit_share(&self) -> Option<f64> {
        (self.credit_streams > 0).then(|| self.credit_waited as f64 / self.credit_streams as f64)
    }

    /// The figures behind the verdict, for the log: `rtt 320 ms, loss 3 of 845 datagrams,
    /// credit waits 0 of 799 streams, 0 handshake timeouts, closes 1×2`.
    pub fn figures(&self) -> String {
        let rtt = self
            .srtt_ms
            .map_or_else(|| "rtt unknown".to_string(), |ms| format!("rtt {ms} ms"));
        let closes = match self.closes_label() {
            c if c.is_empty() => "none".to_string(),
            c => c,
        };
        format!(
            "{rtt}, loss {} of {} datagrams, credit waits {} of {} streams, {} handshake \
             timeouts, closes {closes}",
            self.lost_packets,
            self.sent_packets,
            self.credit_waited,
            self.credit_streams,
            self.handshake_timeouts
        )
    }

    /// The codes received, as `1×3 4×1` (code × count); empty when none.
    pub fn closes_label(&self) -> String {
        let parts: Vec<String> = self
            .closes
            .iter()
            .map(|c| format!("{}×{}", c.code, c.count))
            .collect();
        parts.join(" ")
    }
}

/// The last minute on the wire, all leaders together, for the header.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WireView {
    /// Streams that got or waited for stream credit in the last minute, and those that waited.
    pub credit_streams: u64,
    pub credit_waited: u64,
    /// Transactions that landed in the last minute, and the mean of each part of their time
    /// to land (see [`LandParts`]); `None` with none landed.
    pub landed: u64,
    pub parts: Option<LandParts>,
    /// A leader on the panel whose budget we share with another sender on our source address
    /// (see `verdict::shared_budget`), if any.
    #[serde(serialize_with = "ser_opt_display")]
    pub shared_budget: Option<Pubkey>,
}

impl WireView {
    /// The share of streams that waited for credit, once any had credit.
    pub fn credit_share(&self) -> Option<f64> {
        (self.credit_streams > 0).then(|| self.credit_waited as f64 / self.credit_streams as f64)
    }
}

/// Where a transaction's time to land (first send to confirmation) went, in ms; the four add
/// up to it. Cut at the first time each step happened to any of its sends:
///
/// - `queue`: from the first send to its first stream's hand-off to QUIC (waiting for a
///   connection, room in the congestion window, stream credit);
/// - `wire`: from there to the first acknowledgement of a stream by a leader;
/// - `leader`: from there to the first status lookup that found it in a slot (the leader
///   holding it before producing the block, and the lookup's interval);
/// - `confirmation`: from there to the lookup that found it at the run's commitment.
///
/// A step that did not happen (no stream acknowledged, or found at the commitment at the first
/// lookup) is a part of 0, and a step that came before the one ahead of it (found in a slot
/// before any acknowledgement came back) is moved up to it: the parts add up to the whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LandParts {
    pub queue_ms: u64,
    pub wire_ms: u64,
    pub leader_ms: u64,
    pub confirmation_ms: u64,
}
