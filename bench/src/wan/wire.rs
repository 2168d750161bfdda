//! What the wire and the chain say of one contender's run in `txpace-bench wan`, the same way
//! for every contender: the slot each transaction was due to be sent in (from the node's
//! processed slot, sampled by the harness through the run) beside the slot it landed in; the
//! relays' counters over the run; and the nodes' own TPU server counters over the run.

use std::{
    collections::HashSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;
use solana_client::rpc_client::RpcClient;
use solana_commitment_config::CommitmentConfig;
use txpace::validator::Localnet;

/// How often the harness reads the node's slot while a contender runs.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// How often each node's TPU server reports its counters, and how often the metrics agent
/// writes the points it collected (`txpace_relay::counters`).
const NODE_REPORTS_EVERY: Duration = Duration::from_secs(5);
const AGENT_WRITES_EVERY: Duration = Duration::from_secs(10);
/// How long after a run's last stream the nodes' counters may still miss some of it: a
/// node's report interval, then the agent's, and a margin. Two readings that agree prove
/// nothing sooner — at 6 s apart both can fall between two of the agent's writes — and the
/// run after took the rest: `txpace-bench wan`'s first run after `hostile+4` (whose
/// competitors had thousands of streams delayed) was `mainnet`'s txpace, alone on the wire,
/// charged 1,196 and 2,857 delayed streams while it handed at most 29 to a leader in any
/// 100 ms (its trace at 11fd06a), where the nodes allow 20 without delay.
const COUNTERS_TRAIL: Duration = NODE_REPORTS_EVERY
    .saturating_add(AGENT_WRITES_EVERY)
    .saturating_add(Duration::from_secs(1));
/// How long past [`COUNTERS_TRAIL`] the counters may keep changing before they are read as
/// they stand (a sender still running: said `settled: false` beside the run).
const COUNTERS_SETTLE: Duration = Duration::from_secs(30);

/// The node's processed slot, read every [`SAMPLE_EVERY`] on a thread of its own.
pub struct SlotClock {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<(Instant, u64)>>>,
    thread: Option<JoinHandle<()>>,
}

impl SlotClock {
    pub fn start(rpc_url: String) -> SlotClock {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (s, out) = (stop.clone(), samples.clone());
        let thread = std::thread::spawn(move || {
            let rpc = RpcClient::new_with_commitment(rpc_url, CommitmentConfig::processed());
            while !s.load(Ordering::Relaxed) {
                if let Ok(slot) = rpc.get_slot() {
                    out.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((Instant::now(), slot));
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
        });
        SlotClock {
            stop,
            samples,
            thread: Some(thread),
        }
    }

    /// Seconds a slot took over the samples taken so far (`slot_seconds`).
    pub fn slot_seconds_so_far(&self) -> Option<f64> {
        slot_seconds(&self.samples.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Stops sampling; the samples taken, in time order.
    pub fn stop(mut self) -> Vec<(Instant, u64)> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        std::mem::take(&mut *self.samples.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The slot at `t`: the last sample taken at or before it (the first sample for a moment
/// before any).
pub fn slot_at(samples: &[(Instant, u64)], t: Instant) -> Option<u64> {
    let after = samples.partition_point(|(at, _)| *at <= t);
    samples.get(after.saturating_sub(1)).map(|(_, slot)| *slot)
}

/// Slots from each landed transaction's send to its landing: transaction `i` (in the order
/// the contender sends them) is due `i / rate` seconds after the contender's start (`rate`
/// `None`: at `--rate max`, the start itself), and its slots to land are its landed slot less
/// the slot at that moment. Every contender is counted so: its start-up counts against it.
pub fn slots_to_land(
    landed: &[Option<u64>],
    start: Instant,
    rate: Option<f64>,
    samples: &[(Instant, u64)],
) -> Vec<u64> {
    landed
        .iter()
        .zip(dues(landed.len(), start, rate))
        .filter_map(|(slot, due)| {
            let sent = slot_at(samples, due)?;
            Some(slot.as_ref()?.saturating_sub(sent))
        })
        .collect()
}

/// When each of `n` transactions is due: transaction `i` `i / rate` seconds after `start`, or
/// at `start` itself at `--rate max` (`rate` `None`).
pub fn dues(n: usize, start: Instant, rate: Option<f64>) -> Vec<Instant> {
    (0..n)
        .map(|i| start + rate.map_or(Duration::ZERO, |r| Duration::from_secs_f64(i as f64 / r)))
        .collect()
}

/// Seconds a slot took over `samples`: the slots they span over the time they span; `None`
/// when they span no slot.
pub fn slot_seconds(samples: &[(Instant, u64)]) -> Option<f64> {
    let ((t0, s0), (t1, s1)) = (samples.first()?, samples.last()?);
    (s1 > s0).then(|| t1.duration_since(*t0).as_secs_f64() / (s1 - s0) as f64)
}

/// The `p`th percentile (0–100) of `v`, nearest rank; `None` for none.
pub fn percentile(v: &[u64], p: f64) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_unstable();
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v.get(rank.clamp(1, v.len()) - 1).copied()
}

/// The relays over a run, every node summed: datagrams delivered each way and what the links
/// dropped (loss, bursts, the cap's queue) — every sender's on the wire, the load's included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RelayDelta {
    pub to_nodes: u64,
    pub to_nodes_dropped: u64,
    pub to_clients: u64,
    pub to_clients_dropped: u64,
}

impl RelayDelta {
    /// `after` less `before`, both `Localnet::relay_stats` answers.
    pub fn between(before: &Value, after: &Value) -> RelayDelta {
        let sum = |v: &Value, dir: &str, dropped: bool| -> u64 {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|relay| {
                    let d = &relay[dir];
                    if dropped {
                        ["loss", "burst", "queue"]
                            .iter()
                            .filter_map(|k| d["dropped"][k].as_u64())
                            .sum()
                    } else {
                        d["delivered"].as_u64().unwrap_or(0)
                    }
                })
                .sum()
        };
        let delta =
            |dir, dropped| sum(after, dir, dropped).saturating_sub(sum(before, dir, dropped));
        RelayDelta {
            to_nodes: delta("to_node", false),
            to_nodes_dropped: delta("to_node", true),
            to_clients: delta("to_clients", false),
            to_clients_dropped: delta("to_clients", true),
        }
    }

    /// The cell: "14210/11 · 9302/7" (delivered/dropped by the links, to the nodes · back).
    pub fn show(&self) -> String {
        format!(
            "{}/{} · {}/{}",
            self.to_nodes, self.to_nodes_dropped, self.to_clients, self.to_clients_dropped
        )
    }
}

/// The source addresses (IPs) the nodes see the relays' clients from, over every relay (a
/// `Localnet::relay_stats` answer): each sender has its own.
pub fn sources(stats: &Value) -> HashSet<String> {
    stats
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|relay| relay["upstreams"].as_object())
        .flat_map(|up| up.values())
        .filter_map(Value::as_str)
        .filter_map(|a| a.rsplit_once(':').map(|(ip, _)| ip.to_string()))
        .collect()
}

/// The nodes' own TPU server counters over a run, summed over the nodes (they share one
/// metrics agent): the load's streams are in them as much as the contender's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CounterDelta {
    /// Streams whose read a node delayed for an unstaked sender's budget.
    pub delayed: i64,
    pub evicted: i64,
    /// Connections refused for too many open ones from one key.
    pub refused: i64,
    /// Handshakes ignored by the per-address connection rate limit.
    pub ignored: i64,
    pub new_connections: i64,
    /// Whether the counters stopped changing before they were read (if not, they may miss the
    /// end of the run).
    pub settled: bool,
}

impl CounterDelta {
    /// `after` less `before`, both `Localnet::server_counters` answers.
    pub fn between(before: &Value, after: &Value, settled: bool) -> CounterDelta {
        let d = |k: &str| {
            after["totals"][k].as_i64().unwrap_or(0) - before["totals"][k].as_i64().unwrap_or(0)
        };
        CounterDelta {
            delayed: d("throttled_unstaked_streams"),
            evicted: d("evictions_unstaked"),
            refused: d("refused_connections_too_many_open_connections"),
            ignored: d("connection_rate_limited_per_ipaddr"),
            new_connections: d("new_connections"),
            settled,
        }
    }

    /// New connections per node over the run (the nodes lead in turn, so per leader).
    pub fn connections_per_leader(&self, nodes: usize) -> f64 {
        self.new_connections as f64 / nodes.max(1) as f64
    }
}

/// The nodes' counters once they cover what came before `quiet_since` (when the run's last
/// sender stopped): first read [`COUNTERS_TRAIL`] after it, then again every 6 s until two
/// readings agree (at most [`COUNTERS_SETTLE`] more); the last reading, and whether it settled.
pub fn settled_counters(cluster: &mut Localnet, quiet_since: Instant) -> Result<(Value, bool)> {
    let err = |e| anyhow::anyhow!("{e}");
    std::thread::sleep(counters_cover_at(quiet_since).saturating_duration_since(Instant::now()));
    let deadline = Instant::now() + COUNTERS_SETTLE;
    let mut last = cluster.server_counters().map_err(err)?;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(6));
        let now = cluster.server_counters().map_err(err)?;
        if now["totals"] == last["totals"] && now["reports"].as_u64() > Some(0) {
            return Ok((now, true));
        }
        last = now;
    }
    Ok((last, false))
}

/// The first moment the nodes' counters hold every stream sent before `quiet_since`.
fn counters_cover_at(quiet_since: Instant) -> Instant {
    quiet_since + COUNTERS_TRAIL
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream just before the run's end is in a node's next report (at most 5 s on), which
    /// reaches the sink with the agent's next write (at most 10 s after that).
    #[test]
    fn the_counters_are_read_only_once_a_report_and_a_write_have_passed() {
        let end = Instant::now();
        let covered = counters_cover_at(end);
        assert!(covered >= end + NODE_REPORTS_EVERY + AGENT_WRITES_EVERY);
        assert!(
            covered <= end + Duration::from_secs(20),
            "no longer than needed"
        );
    }

    #[test]
    fn the_slot_at_a_moment_is_the_last_sample_before_it() {
        let t0 = Instant::now();
        let ms = |m| t0 + Duration::from_millis(m);
        let samples = [(ms(0), 10), (ms(400), 11), (ms(800), 12)];
        assert_eq!(slot_at(&samples, ms(0)), Some(10));
        assert_eq!(slot_at(&samples, ms(399)), Some(10));
        assert_eq!(slot_at(&samples, ms(500)), Some(11));
        assert_eq!(slot_at(&samples, ms(5000)), Some(12));
        assert_eq!(slot_at(&[], ms(5)), None);
    }

    /// At 2 tx/s the third transaction is due 1 s in (slot 12 here); one that did not land has
    /// no figure; at max every transaction is counted from the start.
    #[test]
    fn slots_to_land_count_from_each_transaction_s_due_moment() {
        let t0 = Instant::now();
        let ms = |m| t0 + Duration::from_millis(m);
        let samples = [(ms(0), 10), (ms(500), 11), (ms(1000), 12)];
        let landed = [Some(12), None, Some(15)];
        assert_eq!(slots_to_land(&landed, t0, Some(2.0), &samples), vec![2, 3]);
        assert_eq!(slots_to_land(&landed, t0, None, &samples), vec![2, 5]);
    }

    #[test]
    fn the_sources_are_the_distinct_addresses_the_nodes_see() {
        let stats = serde_json::json!([
            {"upstreams": {"127.0.0.1:5000": "127.1.0.2:40001", "127.0.0.1:5001": "127.1.0.3:40002"}},
            {"upstreams": {"127.0.0.1:5000": "127.1.0.2:40003"}},
            {"upstreams": {}}
        ]);
        let mut got: Vec<String> = sources(&stats).into_iter().collect();
        got.sort();
        assert_eq!(got, ["127.1.0.2", "127.1.0.3"]);
        assert!(sources(&serde_json::json!({})).is_empty());
    }

    #[test]
    fn a_slot_s_length_is_the_time_over_the_slots_spanned() {
        let t0 = Instant::now();
        let samples = [(t0, 10), (t0 + Duration::from_millis(900), 12)];
        assert_eq!(slot_seconds(&samples), Some(0.45));
        assert_eq!(slot_seconds(&samples[..1]), None);
        assert_eq!(slot_seconds(&[]), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[3, 1, 2], 50.0), Some(2));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn relay_and_counter_deltas_are_after_less_before() {
        let relay = |delivered: u64, loss: u64| {
            serde_json::json!({
                "to_node": {"delivered": delivered, "dropped": {"loss": loss, "burst": 1, "queue": 0, "blackhole": 50}},
                "to_clients": {"delivered": delivered / 2, "dropped": {"loss": 0, "burst": 0, "queue": 0}}
            })
        };
        let before = serde_json::json!([relay(100, 2), relay(10, 0)]);
        let after = serde_json::json!([relay(300, 5), relay(20, 1)]);
        let d = RelayDelta::between(&before, &after);
        // The blackhole's drops are the fault's, not the link's.
        assert_eq!(
            d,
            RelayDelta {
                to_nodes: 210,
                to_nodes_dropped: 4,
                to_clients: 105,
                to_clients_dropped: 0,
            }
        );
        assert_eq!(d.show(), "210/4 · 105/0");
        let counters = |delayed: i64, new: i64| serde_json::json!({"reports": 3, "totals": {"throttled_unstaked_streams": delayed, "new_connections": new}});
        let c = CounterDelta::between(&counters(5, 10), &counters(9, 40), true);
        assert_eq!((c.delayed, c.evicted, c.new_connections), (4, 0, 30));
        // 30 new connections on 3 nodes: 10 per leader.
        assert_eq!(c.connections_per_leader(3), 10.0);
    }
}
