//! The link families: each leader's link as measured and its verdict (see
//! `engine::verdict`), and the last minute on the wire. Every figure is the snapshot's
//! (`LeaderStats::link`, `Snapshot::wire`); a figure never measured has no series.

use prometheus_client::metrics::MetricType;

use super::series::{Points, Series, Value, with};
use crate::engine::snapshot::{LeaderStats, Verdict};

/// Adds one family through `family(name, help, kind, points)`.
pub(super) type AddFamily<'a> =
    dyn FnMut(&'static str, &'static str, MetricType, &dyn Fn(&Series<'_>, &mut Points)) + 'a;

fn seconds(ms: u64) -> Value {
    Value::Gauge(ms as f64 / 1000.0)
}

/// One series per leader of `r` with `value`'s figure, when it has one.
fn per_leader(r: &Series<'_>, p: &mut Points, value: impl Fn(&LeaderStats) -> Option<Value>) {
    for l in r.snap.leader_totals.iter() {
        if let Some(v) = value(l) {
            p.push((with(&r.base, &[("leader", l.identity.to_string())]), v));
        }
    }
}

pub(super) fn add(family: &mut AddFamily<'_>) {
    use MetricType::{Counter, Gauge};
    family(
        "txpace_leader_link_verdict",
        "1 for each leader's link verdict now (ok, far, lossy, budget, evicted, ignoring, dark), 0 for the others; absent while nothing was measured",
        Gauge,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                let Some(now) = l.link.verdict else { continue };
                for v in Verdict::ALL {
                    let labels = with(
                        &r.base,
                        &[
                            ("leader", l.identity.to_string()),
                            ("verdict", v.label().into()),
                        ],
                    );
                    p.push((labels, Value::Gauge(if v == now { 1.0 } else { 0.0 })));
                }
            }
        },
    );
    family(
        "txpace_leader_rtt_seconds",
        "Quinn's smoothed round trip to each leader",
        Gauge,
        &|r, p| per_leader(r, p, |l| l.link.srtt_ms.map(seconds)),
    );
    family(
        "txpace_leader_rtt_variation_seconds",
        "Variation of each leader's stream answer times (RFC 6298 rttvar)",
        Gauge,
        &|r, p| per_leader(r, p, |l| l.link.rttvar_ms.map(seconds)),
    );
    family(
        "txpace_leader_packets_sent",
        "Datagrams quinn sent to each leader",
        Counter,
        &|r, p| per_leader(r, p, |l| Some(Value::Counter(l.link.sent_packets))),
    );
    family(
        "txpace_leader_packets_lost",
        "Datagrams to each leader quinn counted lost",
        Counter,
        &|r, p| per_leader(r, p, |l| Some(Value::Counter(l.link.lost_packets))),
    );
    family(
        "txpace_leader_congestion_events",
        "Congestion events on the connections to each leader",
        Counter,
        &|r, p| per_leader(r, p, |l| Some(Value::Counter(l.link.congestion_events))),
    );
    family(
        "txpace_leader_handshake_seconds",
        "How long the last finished handshake to each leader took",
        Gauge,
        &|r, p| per_leader(r, p, |l| l.link.handshake_ms.map(seconds)),
    );
    family(
        "txpace_leader_handshake_timeouts",
        "Handshakes to each leader that timed out",
        Counter,
        &|r, p| per_leader(r, p, |l| Some(Value::Counter(l.link.handshake_timeouts))),
    );
    family(
        "txpace_leader_new_connections_per_minute",
        "Handshakes to each leader started in the last minute",
        Gauge,
        &|r, p| {
            per_leader(r, p, |l| {
                Some(Value::Gauge(f64::from(l.link.new_connections_per_minute)))
            })
        },
    );
    family(
        "txpace_leader_most_streams_per_100ms",
        "The most streams sent to each leader within any 100 ms (a 4.0 leader's unstaked budget is 20)",
        Gauge,
        &|r, p| {
            per_leader(r, p, |l| {
                Some(Value::Gauge(f64::from(l.link.most_streams_per_100ms)))
            })
        },
    );
    family(
        "txpace_leader_credit_streams",
        "Streams to each leader that got or waited for stream credit",
        Counter,
        &|r, p| per_leader(r, p, |l| Some(Value::Counter(l.link.credit_streams))),
    );
    family(
        "txpace_leader_credit_waited",
        "Streams to each leader that waited for stream credit",
        Counter,
        &|r, p| per_leader(r, p, |l| Some(Value::Counter(l.link.credit_waited))),
    );
    family(
        "txpace_leader_credit_wait_seconds",
        "Median and 99th percentile of the waits for stream credit of each leader's streams that waited",
        Gauge,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                for (q, v) in [
                    ("0.5", l.link.credit_wait_ms_p50),
                    ("0.99", l.link.credit_wait_ms_p99),
                ] {
                    if let Some(ms) = v {
                        let labels = with(
                            &r.base,
                            &[("leader", l.identity.to_string()), ("quantile", q.into())],
                        );
                        p.push((labels, seconds(ms)));
                    }
                }
            }
        },
    );
    family(
        "txpace_leader_closes",
        "Connections each leader closed, by application close code (1 evicted, 2 rate-limited, 4 too many)",
        Counter,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                for c in &l.link.closes {
                    let labels = with(
                        &r.base,
                        &[
                            ("leader", l.identity.to_string()),
                            ("code", c.code.to_string()),
                        ],
                    );
                    p.push((labels, Value::Counter(c.count)));
                }
            }
        },
    );
    family(
        "txpace_credit_waited_share",
        "Share of the last minute's streams (all leaders) that waited for stream credit; absent before any",
        Gauge,
        &|r, p| {
            if let Some(s) = r.snap.wire.credit_share() {
                p.push((r.base.clone(), Value::Gauge(s)));
            }
        },
    );
    family(
        "txpace_time_to_land_part_seconds",
        "Mean of each part of the last minute's times to land: queue, wire, leader, confirmation",
        Gauge,
        &|r, p| {
            if let Some(w) = r.snap.wire.parts {
                for (part, ms) in [
                    ("queue", w.queue_ms),
                    ("wire", w.wire_ms),
                    ("leader", w.leader_ms),
                    ("confirmation", w.confirmation_ms),
                ] {
                    p.push((with(&r.base, &[("part", part.into())]), seconds(ms)));
                }
            }
        },
    );
}
