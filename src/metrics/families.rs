//! The metric families, read from the engine's snapshots at scrape time.
//!
//! Nothing is counted twice: every figure is the snapshot's own (the numbers the dashboard and
//! the report show), so a scrape and the final report cannot disagree. A deploy runs one
//! engine batch per phase; each phase's series carry a `phase` label and keep their last values once
//! the phase is over, so every series only ever grows.

use prometheus_client::{
    encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder},
    metrics::MetricType,
};

pub use super::series::Series;
use super::series::{Labels, Points, Value, with};
use crate::engine::snapshot::{LatencyView, StreamCounts};

/// Writes every family, in Prometheus' text format, for the given runs.
pub fn encode(runs: &[Series<'_>], out: &mut String) -> std::fmt::Result {
    let mut registry = prometheus_client::registry::Registry::default();
    registry.register_collector(Box::new(Frozen(encode_families(runs))));
    prometheus_client::encoding::prometheus_text::encode(out, &registry)
}

/// The families already rendered: prometheus-client's collector interface is synchronous and
/// owns nothing of ours, so the text is built first and replayed through it.
#[derive(Debug)]
struct Frozen(Vec<Family>);

#[derive(Debug)]
struct Family {
    name: &'static str,
    help: &'static str,
    kind: MetricType,
    points: Points,
}

impl prometheus_client::collector::Collector for Frozen {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        for f in &self.0 {
            if f.points.is_empty() {
                continue;
            }
            let mut metric = encoder.encode_descriptor(f.name, f.help, None, f.kind)?;
            for (labels, value) in &f.points {
                let series = metric.encode_family(labels)?;
                Point(value).encode(series)?;
            }
        }
        Ok(())
    }
}

struct Point<'a>(&'a Value);

impl EncodeMetric for Point<'_> {
    fn encode(&self, mut encoder: MetricEncoder) -> std::fmt::Result {
        match self.0 {
            Value::Counter(v) => encoder.encode_counter::<Labels, _, f64>(v, None),
            Value::Gauge(v) => encoder.encode_gauge(v),
            Value::Histogram(sum, count, buckets) => {
                encoder.encode_histogram::<Labels>(*sum, *count, buckets, None)
            }
        }
    }

    fn metric_type(&self) -> MetricType {
        match self.0 {
            Value::Counter(_) => MetricType::Counter,
            Value::Gauge(_) => MetricType::Gauge,
            Value::Histogram(..) => MetricType::Histogram,
        }
    }
}

/// A distribution's buckets with their upper bounds in seconds (the encoder accumulates them).
fn histogram(l: &LatencyView) -> Value {
    let buckets: Vec<(f64, u64)> = l
        .histogram
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let bound = l
                .bounds_ms
                .get(i)
                .map_or(f64::INFINITY, |ms| *ms as f64 / 1000.0);
            (bound, *n)
        })
        .collect();
    let count = l.histogram.iter().fold(0u64, |a, n| a.saturating_add(*n));
    Value::Histogram(l.sum_ms as f64 / 1000.0, count, buckets)
}

fn outcomes(s: &StreamCounts) -> [(&'static str, u64); 5] {
    [
        ("accepted", s.accepted),
        ("throttled", s.throttled),
        ("connection", s.connection),
        ("timeout", s.timeout),
        ("other", s.other),
    ]
}

const RUN_STATES: [&str; 6] = ["starting", "running", "paused", "done", "stopped", "failed"];

fn encode_families(runs: &[Series<'_>]) -> Vec<Family> {
    use MetricType::{Counter, Gauge, Histogram};
    let mut fams: Vec<Family> = Vec::new();
    let mut family = |name, help, kind, f: &dyn Fn(&Series<'_>, &mut Points)| {
        let mut points = Vec::new();
        for run in runs {
            f(run, &mut points);
        }
        fams.push(Family {
            name,
            help,
            kind,
            points,
        });
    };
    family(
        "txpace_info",
        "The run: 1, labelled with the RPC endpoint (secrets redacted), commitment and QUIC identity",
        Gauge,
        &|r, p| {
            let c = &r.snap.cluster;
            let labels = with(
                &r.base,
                &[
                    ("version", env!("CARGO_PKG_VERSION").to_string()),
                    ("rpc_url", c.rpc_url.clone()),
                    ("commitment", c.commitment.to_string()),
                    ("identity", c.identity.to_string()),
                ],
            );
            p.push((labels, Value::Gauge(1.0)));
        },
    );
    family(
        "txpace_run_state",
        "1 for the engine's current state (starting, running, paused, done, stopped, failed), 0 for the others",
        Gauge,
        &|r, p| {
            let now = r.snap.run.label().to_ascii_lowercase();
            for state in RUN_STATES {
                let v = if now == state { 1.0 } else { 0.0 };
                p.push((with(&r.base, &[("state", state.into())]), Value::Gauge(v)));
            }
        },
    );
    family(
        "txpace_elapsed_seconds",
        "Time since the engine started",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.elapsed.as_secs_f64()))),
    );
    family(
        "txpace_transactions",
        "Transactions of the run by queue: pending (sent at most once, or never), resent, confirmed, failed, expired",
        Gauge,
        &|r, p| {
            let c = &r.snap.counts;
            for (state, n) in [
                ("pending", c.pending),
                ("resent", c.resent),
                ("confirmed", c.confirmed),
                ("failed", c.failed),
                ("expired", c.expired),
            ] {
                p.push((
                    with(&r.base, &[("state", state.into())]),
                    Value::Gauge(n as f64),
                ));
            }
        },
    );
    family(
        "txpace_transactions_in_run",
        "Transactions in the run",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.counts.total as f64))),
    );
    family(
        "txpace_sends",
        "Transaction sends (first sends and resends, however many leaders each went to)",
        Counter,
        &|r, p| p.push((r.base.clone(), Value::Counter(r.snap.counts.sends))),
    );
    family(
        "txpace_send_errors",
        "Transaction sends that reached no leader (every stream of the send failed)",
        Counter,
        &|r, p| p.push((r.base.clone(), Value::Counter(r.snap.counts.send_errors))),
    );
    family(
        "txpace_streams_sent",
        "Streams handed to QUIC, one per send per leader it went to",
        Counter,
        &|r, p| p.push((r.base.clone(), Value::Counter(r.snap.counts.streams.sent))),
    );
    family(
        "txpace_streams",
        "Streams by outcome: accepted, throttled, connection (failed or lost), timeout, other",
        Counter,
        &|r, p| {
            for (outcome, n) in outcomes(&r.snap.counts.streams) {
                p.push((
                    with(&r.base, &[("outcome", outcome.into())]),
                    Value::Counter(n),
                ));
            }
        },
    );
    family(
        "txpace_leader_streams_sent",
        "Streams handed to QUIC for each leader",
        Counter,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                let labels = with(&r.base, &[("leader", l.identity.to_string())]);
                p.push((labels, Value::Counter(l.streams.sent)));
            }
        },
    );
    family(
        "txpace_leader_streams",
        "Streams for each leader by outcome: accepted, throttled, connection, timeout, other",
        Counter,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                for (outcome, n) in outcomes(&l.streams) {
                    let labels = with(
                        &r.base,
                        &[
                            ("leader", l.identity.to_string()),
                            ("outcome", outcome.into()),
                        ],
                    );
                    p.push((labels, Value::Counter(n)));
                }
            }
        },
    );
    family(
        "txpace_leader_landed",
        "Transactions that landed in each leader's slots (by the cluster's schedule)",
        Counter,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                let labels = with(&r.base, &[("leader", l.identity.to_string())]);
                p.push((labels, Value::Counter(l.landed)));
            }
        },
    );
    family(
        "txpace_leader_backoff_level",
        "How deep each leader's backoff is now: 0 when it gets sends, 1 for a first backoff, one more for each repeat (the pause doubles)",
        Gauge,
        &|r, p| {
            for l in r.snap.leader_totals.iter() {
                let labels = with(&r.base, &[("leader", l.identity.to_string())]);
                p.push((labels, Value::Gauge(f64::from(l.backoff_level))));
            }
        },
    );
    super::link::add(&mut family);
    family(
        "txpace_stream_ack_seconds",
        "Time from handing a stream to QUIC to the leader's answer (accepted or not)",
        Histogram,
        &|r, p| p.push((r.base.clone(), histogram(&r.snap.acks))),
    );
    family(
        "txpace_time_to_land_seconds",
        "Time from a transaction's first send to seeing it at the run's commitment",
        Histogram,
        &|r, p| p.push((r.base.clone(), histogram(&r.snap.latency))),
    );
    family(
        "txpace_rate_target_tps",
        "The pace asked for, in transactions per second (absent under --rate max)",
        Gauge,
        &|r, p| {
            if let crate::engine::snapshot::RateTarget::Fixed(t) = r.snap.rate.target {
                p.push((r.base.clone(), Value::Gauge(t)));
            }
        },
    );
    family(
        "txpace_rate_pacing_tps",
        "The pace the pacer holds now (the search's current value under --rate max)",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.rate.pacing))),
    );
    family(
        "txpace_rate_owed_sends",
        "Sends an outage held back (no leader took them while due), or copies sent to a new leader took the place of, being made up above the pace",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.rate.owed as f64))),
    );
    family(
        "txpace_rate_achieved_tps",
        "Transaction sends per second over the last few seconds",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.rate.achieved))),
    );
    family(
        "txpace_rate_landing_tps",
        "Confirmations per second over the last few seconds",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.rate.landing))),
    );
    family(
        "txpace_slot",
        "The cluster's current slot as the engine last saw it",
        Gauge,
        &|r, p| p.push((r.base.clone(), Value::Gauge(r.snap.cluster.slot as f64))),
    );
    family(
        "txpace_block_height",
        "The cluster's block height as the engine last saw it",
        Gauge,
        &|r, p| {
            p.push((
                r.base.clone(),
                Value::Gauge(r.snap.cluster.block_height as f64),
            ))
        },
    );
    family(
        "txpace_rpc_up",
        "1 while the RPC answers, 0 while the engine is retrying it (the dashboard's header says why)",
        Gauge,
        &|r, p| {
            let up = if r.snap.cluster.health.is_none() {
                1.0
            } else {
                0.0
            };
            p.push((r.base.clone(), Value::Gauge(up)));
        },
    );
    family(
        "txpace_slot_feed_up",
        "1 while slots arrive over the websocket subscription, 0 while the engine polls getSlot instead",
        Gauge,
        &|r, p| {
            let up = if r.snap.cluster.slot_feed_live {
                1.0
            } else {
                0.0
            };
            p.push((r.base.clone(), Value::Gauge(up)));
        },
    );
    family(
        "txpace_fees_recent_median",
        "Median of what recent slots charged for the batch's most-written accounts, micro-lamports per CU (absent until the cluster answered)",
        Gauge,
        &|r, p| {
            if let Some(f) = &r.snap.cluster.fees {
                p.push((r.base.clone(), Value::Gauge(f.median() as f64)));
            }
        },
    );
    family(
        "txpace_fees_batch_percentile",
        "Share of recent slots (percent) the batch's median price pays at least as much as",
        Gauge,
        &|r, p| {
            if let Some(f) = &r.snap.cluster.fees {
                p.push((
                    r.base.clone(),
                    Value::Gauge(f64::from(f.rank(f.batch_price))),
                ));
            }
        },
    );
    family(
        "txpace_staked",
        "1 when the QUIC identity has stake, 0 when not, absent until known",
        Gauge,
        &|r, p| {
            if let Some(staked) = r.snap.cluster.staked {
                p.push((r.base.clone(), Value::Gauge(if staked { 1.0 } else { 0.0 })));
            }
        },
    );
    fams
}
