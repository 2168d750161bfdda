//! The fan-out on simulated links (tokio's paused clock, 4.0 leaders): it rises while the link
//! toward the leaders loses datagrams and stays put on clean ones, and the next leader gets
//! the sends made near the end of the current one's turn (`engine::leaders::fanout`) —
//! against the same runs with the fan-out fixed.

use std::time::Duration;

use solana_hash::Hash;
use solana_pubkey::Pubkey;

use super::SimLink;
use crate::engine::{EngineConfig, sim::SimCluster, snapshot::RateTarget};

const N: usize = 2_000;

/// What one run showed.
#[derive(Debug)]
struct Run {
    sends: u64,
    streams: u64,
    confirmed: u64,
    p90: Duration,
    p99: Duration,
}

impl Run {
    fn streams_per_send(&self) -> f64 {
        self.streams as f64 / self.sends as f64
    }

    fn sends_per_landed(&self) -> f64 {
        self.sends as f64 / self.confirmed as f64
    }
}

/// `N` transactions at 100 tx/s to three leaders, each behind `link`, with `--fanout k`,
/// following the link or not.
async fn run(link: SimLink, k: usize, by_link: bool) -> Run {
    let ls: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let cluster = SimCluster::new(ls.clone());
    for l in &ls {
        let addr = cluster.addr_of(l).expect("an address");
        cluster.set_link(addr, Some(link));
    }
    let mut cfg = EngineConfig::new(Pubkey::new_unique(), "http://sim/".into());
    cfg.rate = RateTarget::Fixed(100.0);
    cfg.fanout = k;
    cfg.fanout_by_link = by_link;
    let hash = Hash::new_from_array(Pubkey::new_unique().to_bytes());
    let s = cluster.run_engine(cfg, cluster.transactions(N, hash)).await;
    let r = Run {
        sends: s.counts.sends,
        streams: s.counts.streams.sent,
        confirmed: s.counts.confirmed,
        p90: s.latency.p90.unwrap_or_default(),
        p99: s.latency.p99.unwrap_or_default(),
    };
    eprintln!(
        "{}ms {}% fanout {k}{}: {r:?}, {:.2} streams a send, {:.3} sends per landed",
        link.rtt.as_millis(),
        link.loss * 100.0,
        if by_link { " by link" } else { " fixed" },
        r.streams_per_send(),
        r.sends_per_landed()
    );
    assert_eq!(r.confirmed, N as u64);
    r
}

/// `--fanout 0` on a 320 ms link losing 5% each way: fixed, a copy held up by a repair misses
/// its leader's turn and waits for a resend; following the link, every send also goes to the
/// next leader (the loss is over the `lossy` share), and the transactions land seconds sooner
/// with fewer sends.
#[tokio::test(start_paused = true)]
async fn on_a_lossy_link_the_fanout_rises_and_transactions_land_sooner() {
    let lossy = SimLink::new(320, 0.05);
    let fixed = run(lossy, 0, false).await;
    let by_link = run(lossy, 0, true).await;
    assert!(
        by_link.streams_per_send() > 1.9,
        "the fan-out did not rise: {by_link:?}"
    );
    assert!(by_link.sends_per_landed() <= 1.2, "{by_link:?}");
    assert!(
        by_link.sends_per_landed() < fixed.sends_per_landed(),
        "{by_link:?} against {fixed:?}"
    );
    assert!(by_link.p99 * 2 < fixed.p99, "{by_link:?} against {fixed:?}");
}

/// With the default `--fanout 1` the loss adds the leader after next: sends per landed stay
/// within 1.2 and the time to land is no worse than with the fan-out fixed.
#[tokio::test(start_paused = true)]
async fn on_a_lossy_link_the_default_fanout_rises_by_one() {
    let lossy = SimLink::new(320, 0.05);
    let fixed = run(lossy, 1, false).await;
    let by_link = run(lossy, 1, true).await;
    assert!(
        by_link.streams_per_send() > 2.5,
        "the fan-out did not rise: {by_link:?}"
    );
    assert!(by_link.sends_per_landed() <= 1.2, "{by_link:?}");
    assert!(
        by_link.p99 <= fixed.p99 + Duration::from_millis(100),
        "{by_link:?} against {fixed:?}"
    );
}

/// On clean links the fan-out does not rise: every send goes to the current and the next
/// leader (`--fanout 1`), near or far — and, while a new leader's handshake is under way, to
/// that leader as well (it rides along: see `liveness`), up to `HANDSHAKE_RIDERS` streams
/// more for each of the first two (65 of 4,065 on the far link).
#[tokio::test(start_paused = true)]
async fn on_clean_links_the_fanout_does_not_rise() {
    let riders = 2 * u64::from(crate::engine::liveness::HANDSHAKE_RIDERS);
    for link in [SimLink::new(20, 0.0), SimLink::new(320, 0.0)] {
        let r = run(link, 1, true).await;
        assert!(r.streams <= 2 * r.sends + riders, "{r:?}");
        assert!(r.sends_per_landed() <= 1.01, "{r:?}");
    }
}

/// `--fanout 0` on a clean 320 ms link: a send made in the last 160 ms of a turn reaches its
/// leader after the turn. Fixed, each such transaction is sent again to the next leader once
/// its turn begins (`dispatch::handover`: one in ten sent twice); following the link, the
/// sends of a turn's end also go to the next leader in the first place — a third more
/// streams, not twice as many — with one send each, and every transaction lands within its
/// round trip and a slot.
#[tokio::test(start_paused = true)]
async fn near_the_end_of_a_turn_the_next_leader_gets_the_send_too() {
    let far = SimLink::new(320, 0.0);
    let fixed = run(far, 0, false).await;
    let by_link = run(far, 0, true).await;
    assert!(fixed.sends_per_landed() > 1.05, "{fixed:?}");
    assert!(by_link.p90 <= fixed.p90, "{by_link:?} against {fixed:?}");
    assert!(by_link.p99 < Duration::from_secs(1), "{by_link:?}");
    assert!(by_link.streams_per_send() < 1.5, "{by_link:?}");
    assert!(by_link.sends_per_landed() <= 1.01, "{by_link:?}");
}
