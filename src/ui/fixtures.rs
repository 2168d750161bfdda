//! Hand-built snapshots for the dashboard's tests and render benchmark. Deterministic: the same
//! arguments give the same snapshot, byte for byte, so rendered screens can be compared.
//!
//! Not part of the API; public only so integration tests and benches can share it.

use std::{
    net::{Ipv4Addr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use imbl::Vector;
use solana_pubkey::Pubkey;
use solana_signature::Signature;

use crate::engine::lifecycle::{Queue, TxState};
use crate::engine::net::StreamOutcome;
use crate::engine::snapshot::{
    ClusterView, ConnState, Counts, FeeView, LatencyView, LeaderStats, LeaderView, RatePoint,
    RateTarget, RateView, RunState, SendRecord, Snapshot, StatusRecord, StreamCounts, TxView,
};

/// splitmix64: a good enough stream of bits from a seed, with no dependency.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn bytes<const N: usize>(seed: u64) -> [u8; N] {
    let mut out = [0u8; N];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let v = mix(seed.wrapping_mul(31).wrapping_add(i as u64)).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    out
}

pub fn pubkey(seed: u64) -> Pubkey {
    Pubkey::new_from_array(bytes(seed ^ 0x5eed_0000))
}

pub fn signature(seed: u64) -> Signature {
    Signature::from(bytes::<64>(seed ^ 0x516e_0000))
}

const SLOT: u64 = 1_234;
const BLOCK_HEIGHT: u64 = 1_200;
const ELAPSED_MS: u64 = 62_500;

fn leaders() -> Vec<LeaderView> {
    (0..5u64)
        .map(|i| LeaderView {
            identity: pubkey(1_000 + i),
            tpu_quic: Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 8009 + i as u16))),
            first_slot: SLOT - SLOT % 4 + 4 * i,
            last_slot: SLOT - SLOT % 4 + 4 * i + 3,
            conn: if i < 3 {
                ConnState::Connected
            } else {
                ConnState::Connecting
            },
            streams: StreamCounts {
                sent: 4_000 / (i + 1),
                accepted: 4_000 / (i + 1) - if i == 0 { 3 } else { 0 },
                connection: if i == 0 { 3 } else { 0 },
                ..StreamCounts::default()
            },
            landed: 3_800 / (i + 1),
        })
        .collect()
}

fn cluster() -> ClusterView {
    ClusterView {
        rpc_url: "http://127.0.0.1:8899/".into(),
        commitment: "confirmed",
        slot: SLOT,
        block_height: BLOCK_HEIGHT,
        identity: pubkey(7),
        staked: Some(false),
        health: None,
        slot_feed_live: true,
        via_rpc: None,
        fees: Some(FeeView {
            recent: Arc::new((0..150u64).map(|i| i * 20_000).collect()),
            batch_price: 1_000_000,
        }),
    }
}

fn history(seconds: u64, rate: u32) -> Vec<RatePoint> {
    let start = seconds.saturating_sub(60);
    (start..seconds)
        .map(|s| {
            let wobble = (mix(s) % 9) as u32;
            RatePoint {
                second: s,
                sent: (rate + wobble).saturating_sub(4),
                confirmed: if s < start + 2 {
                    0
                } else {
                    (rate + wobble / 2).saturating_sub(8)
                },
            }
        })
        .collect()
}

fn latency(landed: bool) -> LatencyView {
    if !landed {
        return LatencyView {
            histogram: Arc::new(vec![0; 7]),
            bounds_ms: Arc::new(vec![400, 800, 1_600, 3_200, 6_400, 12_800]),
            ..LatencyView::default()
        };
    }
    LatencyView {
        p50: Some(Duration::from_millis(1_600)),
        p90: Some(Duration::from_millis(3_200)),
        p99: Some(Duration::from_millis(7_900)),
        histogram: Arc::new(vec![120, 900, 1_400, 610, 180, 22, 3]),
        bounds_ms: Arc::new(vec![400, 800, 1_600, 3_200, 6_400, 12_800]),
        sum_ms: 6_230_000,
    }
}

/// Stream acknowledgement times of a loopback leader: a few ms each.
fn acks(streams: u64) -> LatencyView {
    LatencyView {
        p50: (streams > 0).then(|| Duration::from_millis(2)),
        p90: (streams > 0).then(|| Duration::from_millis(4)),
        p99: (streams > 0).then(|| Duration::from_millis(9)),
        histogram: Arc::new(vec![
            0,
            streams / 4,
            streams / 2,
            streams - streams / 4 - streams / 2,
        ]),
        bounds_ms: Arc::new(vec![1, 2, 5]),
        sum_ms: streams * 3,
    }
}

/// The whole run's figures of the leaders on the panel.
fn totals(leaders: &[LeaderView]) -> Vec<LeaderStats> {
    leaders
        .iter()
        .filter(|l| l.streams.sent > 0)
        .map(|l| LeaderStats {
            identity: l.identity,
            tpu_quic: l.tpu_quic,
            streams: l.streams,
            landed: l.landed,
            ack_ms_p50: Some(2),
            backoff_level: u32::from(matches!(l.conn, ConnState::BackingOff { .. })),
        })
        .collect()
}

/// The state transaction `id` is in, out of 100 buckets: (running mix, finished mix).
fn state_for(id: u64, finished: bool) -> TxState {
    let r = mix(id ^ 0xabcd) % 100;
    if finished {
        match r {
            0..=94 => TxState::Confirmed,
            95..=96 => TxState::Failed,
            _ => TxState::Expired,
        }
    } else {
        match r {
            0..=34 => TxState::Confirmed,
            35..=54 => TxState::Sent,
            55..=69 => TxState::Queued,
            70..=84 => TxState::Resent,
            85..=91 => TxState::Failed,
            _ => TxState::Expired,
        }
    }
}

fn tx(id: u64, n: u64, state: TxState, leaders: &[LeaderView], elapsed: Duration) -> TxView {
    // Final transactions were first sent anywhere in the run; live ones recently, as a
    // blockhash lasts about a minute.
    let span = elapsed.as_millis() as u64 * 8 / 10;
    let first = match state {
        TxState::Sent => elapsed.saturating_sub(Duration::from_millis(300 + mix(id) % 9_000)),
        TxState::Resent => elapsed.saturating_sub(Duration::from_millis(8_500 + mix(id) % 20_000)),
        _ => Duration::from_millis(span * id / n.max(1)),
    };
    let sends: u32 = match state {
        TxState::Queued => 0,
        TxState::Sent => 1,
        TxState::Resent => 2 + (mix(id) % 3) as u32,
        _ => 1 + (mix(id) % 2) as u32,
    };
    let err_every = 4;
    let send_log: Vec<SendRecord> = (0..sends)
        .map(|k| {
            let leader = &leaders[(id as usize + k as usize) % leaders.len()];
            let throttled = (id + k as u64).is_multiple_of(err_every) && k + 1 < sends;
            SendRecord {
                at: first + Duration::from_millis(2_000 * k as u64),
                leader: leader.identity,
                addr: leader.tpu_quic,
                slot: Some(1_000 + k as u64),
                outcome: Some(if throttled {
                    StreamOutcome::Throttled
                } else {
                    StreamOutcome::Accepted
                }),
                ack_ms: Some(2 + mix(id + k as u64) % 5),
                error: throttled.then(|| "stream stopped by peer (throttled)".to_string()),
            }
        })
        .collect();
    let mut sent_to: Vec<Pubkey> = Vec::new();
    for s in &send_log {
        if !sent_to.contains(&s.leader) {
            sent_to.push(s.leader);
        }
    }
    let mut hist = vec![StatusRecord {
        at: Duration::ZERO,
        state: TxState::Queued,
        note: None,
    }];
    if sends >= 1 {
        hist.push(StatusRecord {
            at: first,
            state: TxState::Sent,
            note: None,
        });
    }
    if sends >= 2 {
        hist.push(StatusRecord {
            at: first + Duration::from_millis(2_000),
            state: TxState::Resent,
            note: Some("not seen after 2.0 s".into()),
        });
    }
    let landed_ms = 400 + mix(id ^ 77) % 3_000;
    let final_at = first + Duration::from_millis(landed_ms);
    let (landed_slot, time_to_land, last_error) = match state {
        TxState::Confirmed => (
            Some(SLOT - 100 + id % 100),
            Some(Duration::from_millis(landed_ms)),
            None,
        ),
        TxState::Failed => (
            Some(SLOT - 100 + id % 100),
            None,
            Some(Arc::from("InstructionError(0, Custom(1))")),
        ),
        TxState::Expired => (None, None, Some(Arc::from("blockhash expired"))),
        _ => (
            None,
            None,
            send_log
                .iter()
                .rev()
                .find_map(|s| s.error.as_deref().map(Arc::from)),
        ),
    };
    if state.is_final() {
        hist.push(StatusRecord {
            at: final_at,
            state,
            note: last_error.as_deref().map(str::to_string),
        });
    }
    TxView {
        id: id as u32,
        signature: signature(id),
        origin: Arc::from(format!("txs.b64:{}", id + 1)),
        state,
        sends,
        resigns: 0,
        first_sent: (sends > 0).then_some(first),
        last_sent: send_log.last().map(|s| s.at),
        landed_slot,
        time_to_land,
        // A blockhash fetched about when the transaction was first sent (or just now, for one
        // still queued), at ~2.5 blocks a second.
        last_valid_block_height: Some(
            BLOCK_HEIGHT + 150
                - match (state, first_sent_for(state, first)) {
                    (TxState::Queued, _) | (_, None) => id % 20,
                    (_, Some(f)) => ((elapsed.saturating_sub(f)).as_millis() as u64 / 400).min(150),
                },
        ),
        // Every fifth is a blockhash from a file the cluster never named: an upper bound.
        last_valid_exact: id % 5 != 4,
        durable_nonce: false,
        cu_price: Some(1_000_000),
        cu_limit: Some(1_000),
        last_leader: send_log.last().map(|s| s.leader),
        landed_leader: landed_slot.and_then(|_| send_log.last().map(|s| s.leader)),
        last_error,
        sent_to: Arc::new(sent_to),
        send_log: Arc::new(send_log),
        send_log_dropped: 0,
        history: Arc::new(hist),
    }
}

fn first_sent_for(state: TxState, first: Duration) -> Option<Duration> {
    (state != TxState::Queued).then_some(first)
}

fn build(n: usize, finished: bool, run: RunState) -> Snapshot {
    let leaders = leaders();
    let elapsed = Duration::from_millis(ELAPSED_MS);
    let mut txs = Vector::new();
    let mut queues: [Vector<u32>; 5] = Default::default();
    let mut counts = Counts {
        total: n as u64,
        ..Counts::default()
    };
    for id in 0..n as u64 {
        let state = state_for(id, finished);
        let t = tx(id, n as u64, state, &leaders, elapsed);
        counts.sends += t.sends as u64;
        let failed = t.send_log.iter().filter(|s| s.error.is_some()).count() as u64;
        counts.send_errors += failed;
        counts.streams.sent += t.send_log.len() as u64;
        counts.streams.accepted += t.send_log.len() as u64 - failed;
        counts.streams.throttled += failed;
        let q = state.queue();
        match q {
            Queue::Pending => counts.pending += 1,
            Queue::Resent => counts.resent += 1,
            Queue::Confirmed => counts.confirmed += 1,
            Queue::Failed => counts.failed += 1,
            Queue::Expired => counts.expired += 1,
        }
        queues[q as usize].push_back(id as u32);
        txs.push_back(t);
    }
    Snapshot {
        seq: 42,
        run,
        elapsed,
        cluster: cluster(),
        rate: RateView {
            target: RateTarget::Fixed(100.0),
            pacing: 100.0,
            owed: 0,
            achieved: if finished { 0.0 } else { 98.7 },
            landing: if finished { 0.0 } else { 95.1 },
            history: Arc::new(history(ELAPSED_MS / 1_000, 100)),
        },
        counts,
        acks: acks(counts.streams.sent),
        leader_totals: Arc::new(totals(&leaders)),
        finished_phases: Arc::default(),
        leaders: Arc::new(leaders),
        txs,
        queues,
        latency: latency(n > 0),
        phase: None,
    }
}

/// Before anything happened: no leaders, no transactions, no history.
pub fn empty() -> Snapshot {
    Snapshot {
        seq: 0,
        run: RunState::Starting,
        elapsed: Duration::ZERO,
        cluster: ClusterView {
            staked: None,
            ..cluster()
        },
        rate: RateView {
            target: RateTarget::Fixed(100.0),
            pacing: 100.0,
            owed: 0,
            achieved: 0.0,
            landing: 0.0,
            history: Arc::new(Vec::new()),
        },
        counts: Counts::default(),
        leaders: Arc::new(Vec::new()),
        txs: Vector::new(),
        queues: Default::default(),
        latency: LatencyView::default(),
        acks: LatencyView::default(),
        leader_totals: Arc::new(Vec::new()),
        finished_phases: Arc::default(),
        phase: None,
    }
}

/// Mid-run with `n` transactions spread over every queue.
pub fn running(n: usize) -> Snapshot {
    build(n, false, RunState::Running)
}

pub fn paused(n: usize) -> Snapshot {
    let mut s = running(n);
    s.run = RunState::Paused;
    s.rate.achieved = 0.0;
    s
}

/// The current leader throttles us and we back off; the cluster reports a hiccup too.
pub fn throttled(n: usize) -> Snapshot {
    let mut s = running(n);
    let mut leaders = (*s.leaders).clone();
    leaders[0].conn = ConnState::BackingOff {
        remaining_ms: 800,
        kind: StreamOutcome::Throttled,
        reason: "throttled: stream open stalled over 300 ms".into(),
    };
    leaders[0].streams.throttled = 12;
    leaders[0].streams.timeout = 2;
    leaders[1].conn = ConnState::Failed {
        reason: "connection refused".into(),
    };
    s.leaders = Arc::new(leaders);
    s.rate.achieved = 61.2;
    s.cluster.health = Some("getSignatureStatuses timed out, retrying".into());
    s
}

/// The current leader stopped answering (a blackholed TPU): streams have waited 1.6 s with no
/// answer and it gets one probe at a time; the pace goes to the next leader.
pub fn silent_leader(n: usize) -> Snapshot {
    let mut s = running(n);
    let mut leaders = (*s.leaders).clone();
    leaders[0].conn = ConnState::Silent { for_ms: 1_600 };
    leaders[0].streams.sent = 6;
    leaders[0].streams.connection = 5;
    leaders[0].streams.accepted = 0;
    leaders[0].landed = 0;
    s.leaders = Arc::new(leaders);
    s
}

/// Every transaction final.
pub fn done(n: usize) -> Snapshot {
    build(n, true, RunState::Done)
}

/// The engine gave up with `msg`.
pub fn failed(n: usize, msg: &str) -> Snapshot {
    let mut s = running(n);
    s.run = RunState::Failed(msg.into());
    s
}

/// Closed-loop pacing at whatever rate the search holds now.
pub fn max_rate(n: usize, pacing: f64) -> Snapshot {
    let mut s = running(n);
    s.rate.target = RateTarget::Max;
    s.rate.pacing = pacing;
    s
}

/// A fixed pace making up what an outage held back.
pub fn catching_up(n: usize, pacing: f64, owed: u64) -> Snapshot {
    let mut s = running(n);
    s.rate.pacing = pacing;
    s.rate.owed = owed;
    s
}

/// A program deploy in its write phase, half the program's bytes in the buffer.
pub fn deploying(n: usize) -> Snapshot {
    let mut s = running(n);
    s.phase = Some(crate::engine::snapshot::PhaseView {
        name: "writes".into(),
        step: 2,
        steps: 3,
        bytes_done: 307_968,
        bytes_total: 615_936,
    });
    s
}

/// Every number at its largest, to prove nothing overflows or panics.
pub fn extreme() -> Snapshot {
    let mut s = running(3);
    s.elapsed = Duration::from_secs(u32::MAX as u64);
    s.cluster.slot = u64::MAX;
    s.cluster.block_height = u64::MAX;
    s.counts = Counts {
        total: u64::MAX,
        pending: u64::MAX,
        resent: u64::MAX,
        confirmed: u64::MAX,
        failed: u64::MAX,
        expired: u64::MAX,
        sends: u64::MAX,
        send_errors: u64::MAX,
        streams: StreamCounts {
            sent: u64::MAX,
            accepted: u64::MAX,
            throttled: u64::MAX,
            connection: u64::MAX,
            timeout: u64::MAX,
            other: u64::MAX,
        },
    };
    s.rate = RateView {
        target: RateTarget::Fixed(f64::MAX),
        pacing: f64::NAN,
        owed: u64::MAX,
        achieved: f64::INFINITY,
        landing: -1.0,
        history: Arc::new(vec![
            RatePoint {
                second: u64::MAX,
                sent: u32::MAX,
                confirmed: u32::MAX,
            };
            3
        ]),
    };
    s.latency = LatencyView {
        p50: Some(Duration::MAX),
        p90: Some(Duration::MAX),
        p99: Some(Duration::MAX),
        histogram: Arc::new(vec![u64::MAX; 40]),
        bounds_ms: Arc::new(vec![u64::MAX]),
        sum_ms: u64::MAX,
    };
    let mut leaders = (*s.leaders).clone();
    for l in &mut leaders {
        l.first_slot = u64::MAX;
        l.last_slot = u64::MAX;
        l.streams.sent = u64::MAX;
        l.streams.throttled = u64::MAX;
        l.streams.connection = u64::MAX;
        l.streams.timeout = u64::MAX;
        l.landed = u64::MAX;
        l.conn = ConnState::BackingOff {
            remaining_ms: u64::MAX,
            kind: StreamOutcome::Timeout,
            reason: "x".repeat(500),
        };
    }
    s.leaders = Arc::new(leaders);
    s.run = RunState::Failed("e".repeat(5_000));
    s
}

/// One frame of `app` over `snap` in a `width`×`height` test terminal, as the buffer.
pub fn render_buffer(
    app: &super::App,
    snap: &Snapshot,
    width: u16,
    height: u16,
) -> ratatui::buffer::Buffer {
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("a test backend cannot fail");
    term.draw(|f| app.render(f, snap))
        .expect("a test backend cannot fail");
    term.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing blanks trimmed: what a snapshot test compares.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        for x in area.left()..area.right() {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// [`render_buffer`] then [`buffer_text`].
pub fn render_text(app: &super::App, snap: &Snapshot, width: u16, height: u16) -> String {
    buffer_text(&render_buffer(app, snap, width, height))
}
