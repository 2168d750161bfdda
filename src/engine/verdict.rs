//! One word on a leader's link, for an operator asking "why is this leader slow?": the rule
//! that decides it from what the transport and the engine measured, and nothing else.
//!
//! The rule is one function, [`verdict`], over the figures in [`Evidence`]. The verdicts are
//! tried in this order and the first that holds wins (the ones that stop transactions first,
//! then the ones that explain the rest: a lost datagram holds the stream credit of every stream
//! behind it, so loss is named before the budget):
//!
//! | verdict    | holds when                                                                  |
//! | ---------- | --------------------------------------------------------------------------- |
//! | `dark`     | streams on the wire have waited the link's silence span with no answer (see `liveness`), or the last [`DARK_STREAMS`] streams to it all failed for want of an answer (no connection, or no acknowledgement by the link's deadline) |
//! | `evicted`  | it closed one of our connections with code 1, "dropped", within [`RECENT`]   |
//! | `ignoring` | a handshake to it timed out within [`RECENT`] while it was plainly there — it had answered a stream of ours within a PTO before the handshake's start and, if another connection to it was up when the handshake began or ended, answered on it meanwhile — and loss cannot explain it (a clean link, or the second such timeout in a row): it does not take new connections (a 4.0 leader silently drops Initials over 8 a minute per address); the transport starts none to it for a while (`engine::handshakes`) and the leader is backed off meanwhile |
//! | `lossy`    | quinn counted at least [`LOSSY_SHARE`] of the datagrams sent to it lost, over at least [`LOSS_SAMPLE`] sent, and more than chance on a clean path explains (see [`clearly_lossy`]) |
//! | `budget`   | at least [`BUDGET_SHARE`] of the streams it was given waited for stream credit, over at least [`CREDIT_SAMPLE`] streams: it delays reading us |
//! | `far`      | quinn's smoothed round trip is at least [`FAR_RTT`]                          |
//! | `ok`       | a round trip was measured and none of the above holds                       |
//!
//! Without a measured round trip and with none of the others holding there is no verdict
//! (`None`, shown as "–"): nothing was measured to judge by.
//!
//! A leader named `far` or `lossy` keeps the name until its figure falls clearly below the
//! line — under [`FAR_RTT_LEAVE`], under [`LOSSY_SHARE_LEAVE`] — ([`verdict_after`]): a round
//! trip hovering at 200 ms (a loaded machine, a link at the threshold) otherwise flips the
//! name, and logs the flip, every second.
//!
//! This module is a leaf: it imports nothing of the engine.

use std::time::Duration;

use serde::Serialize;

/// A leader this far (quinn's smoothed RTT) is `far`: half a 400 ms slot. A stream then spends
/// a quarter of a slot reaching the leader, and repairing one lost datagram (9/8 of a round
/// trip, RFC 9002's time threshold) costs more than half a slot. Transatlantic links (75–90 ms)
/// stay `ok`; Asia-Pacific from Europe (200–250 ms) and Agave's largest legitimate RTT
/// (320 ms) are `far`.
pub const FAR_RTT: Duration = Duration::from_millis(200);
/// Share of datagrams lost (quinn's `lost_packets / sent_packets`) from which a link is
/// `lossy`, as a fraction: at 2% one stream in 25 waits a repair of 9/8 of a round trip, and
/// the streams behind it on its connection wait with it (a leader reads a connection's streams
/// one at a time). A clean path loses well under 1%.
pub const LOSSY_SHARE: f64 = 0.02;
/// A `far` leader stays `far` until its smoothed round trip is under this: four fifths of
/// [`FAR_RTT`].
pub const FAR_RTT_LEAVE: Duration = Duration::from_millis(160);
/// A `lossy` leader stays `lossy` until its loss share is under this: half of [`LOSSY_SHARE`]
/// (the fan-out's own line back, `leaders::fanout`).
pub const LOSSY_SHARE_LEAVE: f64 = LOSSY_SHARE / 2.0;
/// Datagrams sent before a loss share is judged: with fewer, a single loss would be 2%.
pub const LOSS_SAMPLE: u64 = 200;
/// The normal quantile of the one-sided test in [`clearly_lossy`]: 1.96, a 2.5% chance that a
/// path losing [`LOSSY_SHARE_LEAVE`] is named `lossy` at one look.
const CHANCE_Z: f64 = 1.96;

/// Whether `lost` of `sent` datagrams says the path loses more than a clean one: the share's
/// lower Wilson bound ([`CHANCE_Z`]) is at least [`LOSSY_SHARE_LEAVE`]. At the 200 datagrams
/// of [`LOSS_SAMPLE`], a path losing 0.5% — the relay's `na` link — loses 4 (2%) about one time
/// in fifty, and the verdict looks at every snapshot while the counts grow: in one run of the
/// `mainnet-dark` scenario such a leader was named `lossy` for the rest of the run at 6 of 376
/// (the relay's own count 0.71%). Over the line by chance, 4 of 200 has a lower bound of 0.8%;
/// 6 of 200 (3%), 1.4%; 20 of 1,000 (2%), 1.3%; the relay's 5% links clear it within their
/// first 200 datagrams and its 2% links within 400.
pub fn clearly_lossy(sent: u64, lost: u64) -> bool {
    if sent == 0 {
        return false;
    }
    let n = sent as f64;
    let p = lost as f64 / n;
    let z2 = CHANCE_Z * CHANCE_Z;
    let centre = p + z2 / (2.0 * n);
    let spread = CHANCE_Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    (centre - spread) / (1.0 + z2 / n) >= LOSSY_SHARE_LEAVE
}
/// Share of streams that waited for credit from which the leader is named `budget`: one in
/// ten. A leader within our budget grants credit before we ask for it (128 streams per
/// unstaked connection, far above what a round trip carries at the pace), so on a clean link
/// streams never wait; a 4.0 leader over our budget withholds credit until its 100 ms window
/// ends, and then every stream of the window's tail waits.
pub const BUDGET_SHARE: f64 = 0.1;
/// Streams given credit before the share of waits is judged.
pub const CREDIT_SAMPLE: u64 = 20;
/// Consecutive streams failing for want of an answer (connection failed or lost, or no
/// acknowledgement by the link's deadline) with no answer between them that make a leader
/// `dark`: one such failure is a lost handshake or a torn connection on a live link, three in
/// a row with nothing answered is a leader not answering at all.
pub const DARK_STREAMS: u32 = 3;
/// How long a close or an ignored handshake counts: a minute, the span of the leader's
/// per-address connection limit.
pub const RECENT: Duration = Duration::from_secs(60);

/// A 4.0 leader's budget for an unstaked sender, per source address: 200 streams a second
/// (`MAX_UNSTAKED_TPS`, counted in 100 ms windows).
pub const UNSTAKED_BUDGET: u64 = 200;
/// Our own streams to a leader in the second before a credit wait, under which the wait is
/// not ours to have caused: three quarters of [`UNSTAKED_BUDGET`]. Two senders on one address
/// at the same pace each wait at half of it.
pub const SHARED_BELOW: u64 = UNSTAKED_BUDGET * 3 / 4;

/// The one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Far,
    Lossy,
    Budget,
    Evicted,
    Ignoring,
    Dark,
}

impl Verdict {
    pub const ALL: [Verdict; 7] = [
        Verdict::Ok,
        Verdict::Far,
        Verdict::Lossy,
        Verdict::Budget,
        Verdict::Evicted,
        Verdict::Ignoring,
        Verdict::Dark,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Far => "far",
            Verdict::Lossy => "lossy",
            Verdict::Budget => "budget",
            Verdict::Evicted => "evicted",
            Verdict::Ignoring => "ignoring",
            Verdict::Dark => "dark",
        }
    }
}

/// What the verdict is decided from; every figure as measured (see `snapshot::LinkView`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evidence {
    /// Quinn's smoothed round trip; `None` before a handshake finished.
    pub srtt: Option<Duration>,
    /// Datagrams quinn sent to it, and counted lost.
    pub sent_packets: u64,
    pub lost_packets: u64,
    /// Streams that got (or waited for) stream credit, and those of them that waited.
    pub credit_streams: u64,
    pub credit_waited: u64,
    /// Of those, the waits that came while we had sent it fewer than [`SHARED_BELOW`] streams
    /// in the second before.
    pub credit_waited_slow: u64,
    /// How long ago it last closed a connection of ours with code 1; `None`: never.
    pub evicted_ago: Option<Duration>,
    /// How long ago a handshake to it was read as ignored (`engine::handshakes`: it timed out
    /// while the leader was plainly there, and loss cannot explain it).
    pub ignored_ago: Option<Duration>,
    /// Streams on the wire have waited its silence span without an answer (`liveness`).
    pub silent: bool,
    /// Streams that failed for want of an answer since its last answer.
    pub unanswered: u32,
}

impl Evidence {
    /// Quinn's loss share, once [`LOSS_SAMPLE`] datagrams were sent.
    pub fn loss(&self) -> Option<f64> {
        (self.sent_packets >= LOSS_SAMPLE)
            .then(|| self.lost_packets as f64 / self.sent_packets as f64)
    }

    /// The share of streams that waited for credit, once [`CREDIT_SAMPLE`] streams had it.
    pub fn credit_share(&self) -> Option<f64> {
        (self.credit_streams >= CREDIT_SAMPLE)
            .then(|| self.credit_waited as f64 / self.credit_streams as f64)
    }
}

/// The rule (see the module's table).
pub fn verdict(e: &Evidence) -> Option<Verdict> {
    let recent = |ago: Option<Duration>| ago.is_some_and(|a| a < RECENT);
    if e.silent || e.unanswered >= DARK_STREAMS {
        Some(Verdict::Dark)
    } else if recent(e.evicted_ago) {
        Some(Verdict::Evicted)
    } else if recent(e.ignored_ago) {
        Some(Verdict::Ignoring)
    } else if e.loss().is_some_and(|l| l >= LOSSY_SHARE)
        && clearly_lossy(e.sent_packets, e.lost_packets)
    {
        Some(Verdict::Lossy)
    } else if e.credit_share().is_some_and(|s| s >= BUDGET_SHARE) {
        Some(Verdict::Budget)
    } else if e.srtt.is_some_and(|r| r >= FAR_RTT) {
        Some(Verdict::Far)
    } else if e.srtt.is_some() {
        Some(Verdict::Ok)
    } else {
        None
    }
}

/// The rule, for a leader whose last verdict was `previous`: a `far` or `lossy` leader keeps
/// its name while its figure stays above the line back ([`FAR_RTT_LEAVE`],
/// [`LOSSY_SHARE_LEAVE`]) and nothing graver holds.
pub fn verdict_after(e: &Evidence, previous: Option<Verdict>) -> Option<Verdict> {
    let fresh = verdict(e);
    let milder = matches!(fresh, Some(Verdict::Ok | Verdict::Far | Verdict::Budget));
    match previous {
        Some(Verdict::Lossy) if milder && e.loss().is_some_and(|l| l >= LOSSY_SHARE_LEAVE) => {
            Some(Verdict::Lossy)
        }
        Some(Verdict::Far)
            if fresh == Some(Verdict::Ok) && e.srtt.is_some_and(|r| r >= FAR_RTT_LEAVE) =>
        {
            Some(Verdict::Far)
        }
        _ => fresh,
    }
}

/// Whether the budget a `budget` leader holds us to is shared with another sender on our
/// source address: we are unstaked (a staked key's budget is its own), and at least half of
/// its credit waits came while we sent it under [`SHARED_BELOW`] streams a second — a budget
/// of 200 a second spent by us alone would not make us wait there. The cure is to send from
/// another address (`--bind`).
pub fn shared_budget(e: &Evidence, unstaked: bool) -> bool {
    unstaked && verdict(e) == Some(Verdict::Budget) && e.credit_waited_slow * 2 >= e.credit_waited
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// A near, clean, well-behaved leader: 20 ms, 1,000 datagrams with one lost, 500 streams
    /// of which none waited for credit.
    fn healthy() -> Evidence {
        Evidence {
            srtt: Some(ms(20)),
            sent_packets: 1_000,
            lost_packets: 1,
            credit_streams: 500,
            ..Evidence::default()
        }
    }

    #[test]
    fn each_verdict_has_its_rule() {
        assert_eq!(verdict(&healthy()), Some(Verdict::Ok));
        let far = Evidence {
            srtt: Some(FAR_RTT),
            ..healthy()
        };
        assert_eq!(verdict(&far), Some(Verdict::Far));
        let lossy = Evidence {
            lost_packets: 20,
            ..healthy()
        };
        assert_eq!(verdict(&lossy), Some(Verdict::Lossy));
        let budget = Evidence {
            credit_waited: 50,
            ..healthy()
        };
        assert_eq!(verdict(&budget), Some(Verdict::Budget));
        let evicted = Evidence {
            evicted_ago: Some(ms(59_000)),
            ..healthy()
        };
        assert_eq!(verdict(&evicted), Some(Verdict::Evicted));
        let ignoring = Evidence {
            ignored_ago: Some(ms(1_000)),
            ..healthy()
        };
        assert_eq!(verdict(&ignoring), Some(Verdict::Ignoring));
        let silent = Evidence {
            silent: true,
            ..healthy()
        };
        assert_eq!(verdict(&silent), Some(Verdict::Dark));
        let unanswered = Evidence {
            unanswered: DARK_STREAMS,
            ..Evidence::default()
        };
        assert_eq!(verdict(&unanswered), Some(Verdict::Dark));
    }

    #[test]
    fn far_and_lossy_keep_their_name_until_clearly_below_the_line() {
        let at = |rtt: u64, lost: u64| Evidence {
            srtt: Some(ms(rtt)),
            sent_packets: 1_000,
            lost_packets: lost,
            ..healthy()
        };
        // Over the line: named; hovering just under it: kept; clearly under: released.
        assert_eq!(
            verdict_after(&at(200, 0), Some(Verdict::Ok)),
            Some(Verdict::Far)
        );
        assert_eq!(
            verdict_after(&at(180, 0), Some(Verdict::Far)),
            Some(Verdict::Far)
        );
        assert_eq!(
            verdict_after(&at(180, 0), Some(Verdict::Ok)),
            Some(Verdict::Ok)
        );
        assert_eq!(
            verdict_after(&at(150, 0), Some(Verdict::Far)),
            Some(Verdict::Ok)
        );
        assert_eq!(
            verdict_after(&at(50, 15), Some(Verdict::Lossy)),
            Some(Verdict::Lossy)
        );
        assert_eq!(
            verdict_after(&at(50, 15), Some(Verdict::Ok)),
            Some(Verdict::Ok)
        );
        assert_eq!(
            verdict_after(&at(250, 15), Some(Verdict::Lossy)),
            Some(Verdict::Lossy)
        );
        assert_eq!(
            verdict_after(&at(50, 5), Some(Verdict::Lossy)),
            Some(Verdict::Ok)
        );
        // A graver verdict is never held back.
        let dark = Evidence {
            silent: true,
            ..at(180, 15)
        };
        assert_eq!(
            verdict_after(&dark, Some(Verdict::Lossy)),
            Some(Verdict::Dark)
        );
    }

    /// Over the share by chance is not lossy: a 0.5% path's 4 of 200; clearly over is.
    #[test]
    fn a_share_over_the_line_by_chance_is_not_lossy() {
        let at = |sent: u64, lost: u64| {
            verdict(&Evidence {
                sent_packets: sent,
                lost_packets: lost,
                ..healthy()
            })
        };
        assert_eq!(at(200, 4), Some(Verdict::Ok));
        assert_eq!(at(250, 5), Some(Verdict::Ok));
        assert_eq!(at(200, 6), Some(Verdict::Lossy));
        assert_eq!(at(1_000, 20), Some(Verdict::Lossy));
        assert_eq!(at(400, 8), Some(Verdict::Lossy));
        assert!(!clearly_lossy(0, 0));
        assert!(!clearly_lossy(376, 6));
        assert!(clearly_lossy(200, 10));
    }

    #[test]
    fn nothing_measured_is_no_verdict() {
        assert_eq!(verdict(&Evidence::default()), None);
        // Failures short of dark, with no round trip, are no verdict either.
        let e = Evidence {
            unanswered: DARK_STREAMS - 1,
            ..Evidence::default()
        };
        assert_eq!(verdict(&e), None);
    }

    #[test]
    fn thresholds_are_edges() {
        let below = |e: Evidence| verdict(&e) == Some(Verdict::Ok);
        assert!(below(Evidence {
            srtt: Some(FAR_RTT - ms(1)),
            ..healthy()
        }));
        assert!(below(Evidence {
            lost_packets: 19,
            ..healthy()
        }));
        assert!(below(Evidence {
            credit_waited: 49,
            ..healthy()
        }));
        assert!(below(Evidence {
            evicted_ago: Some(RECENT),
            ignored_ago: Some(RECENT),
            ..healthy()
        }));
        // Too few datagrams or streams to judge a share by.
        assert!(below(Evidence {
            sent_packets: LOSS_SAMPLE - 1,
            lost_packets: 100,
            credit_streams: CREDIT_SAMPLE - 1,
            credit_waited: CREDIT_SAMPLE - 1,
            ..healthy()
        }));
    }

    #[test]
    fn a_budget_is_shared_when_we_wait_under_its_rate_unstaked() {
        let budget = Evidence {
            credit_waited: 50,
            credit_waited_slow: 25,
            ..healthy()
        };
        assert!(shared_budget(&budget, true));
        // Staked: its budget is its own.
        assert!(!shared_budget(&budget, false));
        // Most waits came while we sent it near the budget ourselves.
        let ours = Evidence {
            credit_waited_slow: 24,
            ..budget
        };
        assert!(!shared_budget(&ours, true));
        // Not a budget verdict at all.
        let lossy = Evidence {
            lost_packets: 100,
            ..budget
        };
        assert!(!shared_budget(&lossy, true));
    }

    /// The order: what stops transactions first, loss before the budget it explains, and
    /// distance last.
    #[test]
    fn the_first_rule_that_holds_wins() {
        let all = Evidence {
            srtt: Some(ms(320)),
            sent_packets: 1_000,
            lost_packets: 100,
            credit_streams: 100,
            credit_waited: 100,
            credit_waited_slow: 0,
            evicted_ago: Some(ms(1)),
            ignored_ago: Some(ms(1)),
            silent: true,
            unanswered: 10,
        };
        let mut e = all;
        let mut seen = Vec::new();
        let steps: [fn(&mut Evidence); 6] = [
            |e| (e.silent, e.unanswered) = (false, 0),
            |e| e.evicted_ago = None,
            |e| e.ignored_ago = None,
            |e| e.lost_packets = 0,
            |e| e.credit_waited = 0,
            |e| e.srtt = Some(ms(10)),
        ];
        seen.push(verdict(&e));
        for step in steps {
            step(&mut e);
            seen.push(verdict(&e));
        }
        let expected: Vec<_> = [
            Verdict::Dark,
            Verdict::Evicted,
            Verdict::Ignoring,
            Verdict::Lossy,
            Verdict::Budget,
            Verdict::Far,
            Verdict::Ok,
        ]
        .into_iter()
        .map(Some)
        .collect();
        assert_eq!(seen, expected);
    }
}
